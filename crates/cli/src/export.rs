//! `eltrace export`: runs an exporter of `eltrace-export` over a trace, into a file (written
//! beside the target and renamed when complete) or stdout.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use eltrace_analysis::AnalysisError;
use eltrace_export::{ExportOptions, Format};

use crate::util::{Fail, analysis_fail, fmt_bytes, io_msg, open_trace, warn_incomplete};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

#[derive(Debug, Clone)]
pub struct ExportCmd {
    pub path: PathBuf,
    pub format: Format,
    pub output: Output,
    pub options: ExportOptions,
}

pub fn export(cmd: ExportCmd) -> Result<ExitCode, Fail> {
    let input = open_trace(&cmd.path)?;
    match &cmd.output {
        Output::Stdout => {
            let stdout = io::stdout();
            let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
            match eltrace_export::export(cmd.format, input, &mut out, &cmd.options) {
                Ok(a) => {
                    warn_incomplete(&cmd.path, &a);
                    Ok(ExitCode::SUCCESS)
                }
                // `| head` closed the pipe: not an error.
                Err(AnalysisError::Sink(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                    Ok(ExitCode::SUCCESS)
                }
                Err(AnalysisError::Sink(e)) => Err(Fail::new(format!(
                    "writing to stdout failed: {}",
                    io_msg(&e)
                ))),
                Err(e) => Err(analysis_fail(&cmd.path, &e)),
            }
        }
        Output::File(target) => {
            let same = match (target.canonicalize(), cmd.path.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if same {
                return Err(Fail::new(format!(
                    "the output {} would overwrite the trace; pass -o OUT",
                    target.display()
                )));
            }
            let mut partial = target.clone().into_os_string();
            partial.push(".partial");
            let partial = PathBuf::from(partial);
            let file = File::create(&partial).map_err(|e| {
                Fail::new(format!(
                    "cannot create {}: {}",
                    partial.display(),
                    io_msg(&e)
                ))
            })?;
            let mut out = BufWriter::with_capacity(1 << 20, file);
            let result = eltrace_export::export(cmd.format, input, &mut out, &cmd.options)
                .and_then(|a| out.flush().map(|()| a).map_err(AnalysisError::Sink));
            drop(out);
            let a = match result {
                Ok(a) => a,
                Err(e) => {
                    let _ = std::fs::remove_file(&partial);
                    return Err(match e {
                        AnalysisError::Sink(e) => Fail::new(format!(
                            "writing {} failed: {}",
                            target.display(),
                            io_msg(&e)
                        )),
                        e => analysis_fail(&cmd.path, &e),
                    });
                }
            };
            std::fs::rename(&partial, target).map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                Fail::new(format!("cannot write {}: {}", target.display(), io_msg(&e)))
            })?;
            warn_incomplete(&cmd.path, &a);
            let size = std::fs::metadata(target).map_or(0, |m| m.len());
            eprintln!(
                "eltrace: wrote {} ({}, {} frames, {})",
                target.display(),
                cmd.format.name(),
                a.totals.frames,
                fmt_bytes(size)
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
