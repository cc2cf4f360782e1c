//! `eltrace export`: runs an exporter of `eltrace-export` over the traces given — each one
//! standing for its recording session, kept to the processes `--pid` names — into one output:
//! a file (written beside the target and renamed when complete) or stdout. Several processes
//! share the output's timeline by their traces' wall-clock starts. Reading a big trace shows
//! its progress on a terminal (see `util::open_trace`); Chrome JSON past about 1 GB gets a
//! warning that points to `--format perfetto` and the time window.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use eltrace_analysis::AnalysisError;
use eltrace_export::{Export, ExportOptions, FoldedValue, Format, ProcessMeta};

use crate::session::{self, ProcessTrace};
use crate::util::{
    Fail, analysis_fail, fmt_bytes, io_msg, open_trace, warn_incomplete, warn_truncated,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

#[derive(Debug, Clone)]
pub struct ExportCmd {
    /// The traces given (each one expands to its recording session's traces).
    pub paths: Vec<PathBuf>,
    /// Only the processes with these pids (`None`: every process).
    pub pids: Option<Vec<u32>>,
    pub format: Format,
    pub output: Output,
    pub options: ExportOptions,
}

/// Chrome JSON output past this size gets a warning: Perfetto loads such files slowly if at
/// all, chrome://tracing not at all.
const CHROME_WARN_BYTES: u64 = 1_000_000_000;

/// Parses a time of `--from`/`--to`: a number with an optional unit (`ns`, `us`/`µs`, `ms`,
/// `s`; none is ns), in ns.
pub fn parse_time(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        u => return Err(format!("unknown unit '{u}' (use ns, us, ms or s)")),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a time (e.g. 250ms, 1.5s, 900ns)"))?;
    let ns = (v * scale).round();
    if !(0.0..1.8e19).contains(&ns) {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(ns as u64)
}

/// Counts what goes through and warns once on stderr when Chrome JSON passes `limit`.
struct Watch<W> {
    inner: W,
    written: u64,
    /// `None` once warned or when the format is not Chrome JSON.
    limit: Option<u64>,
}

impl<W: Write> Watch<W> {
    fn new(inner: W, format: Format, limit: u64) -> Self {
        Watch {
            inner,
            written: 0,
            limit: (format == Format::Chrome).then_some(limit),
        }
    }
}

impl<W: Write> Write for Watch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        if self.limit.is_some_and(|l| self.written > l) {
            self.limit = None;
            eprintln!(
                "eltrace: warning: the Chrome JSON passes {}; Perfetto loads JSON this big \
                 slowly or not at all (and chrome://tracing not at all): use --format perfetto \
                 (about a quarter of the size), or export less with --from/--to or --thread",
                fmt_bytes(self.written)
            );
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// What the values of the output are, for the line that reports it.
fn value_note(cmd: &ExportCmd) -> &'static str {
    match (cmd.format, cmd.options.folded_value) {
        (Format::Folded, FoldedValue::ExclusiveNs) => "; values: exclusive time in ns",
        (Format::Folded, FoldedValue::Calls) => "; values: calls",
        _ => "",
    }
}

/// Why writing the output stopped.
enum Stop {
    /// A trace could not be opened or read.
    Fail(Fail),
    /// The output could not be written.
    Write(io::Error),
}

/// What was written.
struct Written {
    processes: usize,
    frames: u64,
}

/// Exports every process of `traces` into `out`, in order, on one timeline.
fn write_processes(
    cmd: &ExportCmd,
    traces: &[ProcessTrace],
    out: &mut dyn Write,
) -> Result<Written, Stop> {
    let processes = ProcessMeta::session(traces.iter().map(|t| &t.info));
    let several = traces.len() > 1;
    let mut e = Export::new(cmd.format, out, &cmd.options);
    let mut frames = 0;
    let mut selected = false;
    for (t, process) in traces.iter().zip(processes) {
        let input = open_trace(&t.path).map_err(Stop::Fail)?;
        let a = e.process(input, Some(process)).map_err(|e| match e {
            AnalysisError::Sink(e) => Stop::Write(e),
            e => Stop::Fail(analysis_fail(&t.path, &e)),
        })?;
        frames += a.totals.frames;
        if several {
            selected |= a.threads().next().is_some();
            warn_truncated(&t.path, &a);
        } else {
            warn_incomplete(&t.path, &a);
        }
    }
    if several && !selected && cmd.options.threads.is_some() {
        eprintln!(
            "eltrace: warning: no process has a thread that --thread selects (see `report` \
             for the OS tids)"
        );
    }
    e.finish().map_err(Stop::Write)?;
    Ok(Written {
        processes: traces.len(),
        frames,
    })
}

/// Warns when two traces are of one pid: viewers would show them as one process.
fn warn_same_pids(traces: &[ProcessTrace]) {
    for (i, t) in traces.iter().enumerate() {
        if let Some(o) = traces[..i].iter().find(|o| o.info.pid == t.info.pid) {
            eprintln!(
                "eltrace: warning: {} and {} are both of process {}: viewers show them as one \
                 process (export them apart, or pick one with --pid)",
                o.path.display(),
                t.path.display(),
                t.info.pid
            );
        }
    }
}

/// Traces recorded without per-event timestamps (`record --timing none|sampled`): the
/// folded stacks count calls instead of time; the other formats need per-event times and are
/// refused rather than drawn with made-up ones.
fn timeless_export(cmd: &mut ExportCmd, traces: &[ProcessTrace]) -> Result<(), Fail> {
    let Some(t) = traces.iter().find(|t| !t.info.has_event_times()) else {
        return Ok(());
    };
    if cmd.format == Format::Folded {
        if cmd.options.folded_value == FoldedValue::ExclusiveNs {
            eprintln!(
                "eltrace: {} was recorded with --timing {} (no per-event times): the folded \
                 stacks count calls",
                t.path.display(),
                t.info.timing()
            );
            cmd.options.folded_value = FoldedValue::Calls;
        }
        return Ok(());
    }
    Err(Fail::new(format!(
        "{} was recorded with --timing {}: it has no per-event times, which the {} format \
         needs; `eltrace report` shows its counts{}, `--format folded` its call paths with \
         their call counts",
        t.path.display(),
        t.info.timing(),
        cmd.format.name(),
        if t.info.timing() == eltrace_trace::protocol::timing::SAMPLED {
            " and sampled times"
        } else {
            ""
        }
    )))
}

pub fn export(mut cmd: ExportCmd) -> Result<ExitCode, Fail> {
    let window = cmd.options.window;
    if window.from >= window.to {
        return Err(Fail::with_code(
            2,
            "--from must be before --to (see 'eltrace --help')",
        ));
    }
    let traces = session::select(&cmd.paths, cmd.pids.as_deref())?;
    warn_same_pids(&traces);
    timeless_export(&mut cmd, &traces)?;
    match &cmd.output {
        Output::Stdout => {
            let stdout = io::stdout();
            let mut out = Watch::new(
                BufWriter::with_capacity(1 << 20, stdout.lock()),
                cmd.format,
                CHROME_WARN_BYTES,
            );
            match write_processes(&cmd, &traces, &mut out)
                .and_then(|_| out.flush().map_err(Stop::Write))
            {
                Ok(()) => Ok(ExitCode::SUCCESS),
                // `| head` closed the pipe: not an error.
                Err(Stop::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                    Ok(ExitCode::SUCCESS)
                }
                Err(Stop::Write(e)) => Err(Fail::new(format!(
                    "writing to stdout failed: {}",
                    io_msg(&e)
                ))),
                Err(Stop::Fail(f)) => Err(f),
            }
        }
        Output::File(target) => {
            let same =
                traces
                    .iter()
                    .any(|t| match (target.canonicalize(), t.path.canonicalize()) {
                        (Ok(a), Ok(b)) => a == b,
                        _ => false,
                    });
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
            let mut out = Watch::new(
                BufWriter::with_capacity(1 << 20, file),
                cmd.format,
                CHROME_WARN_BYTES,
            );
            let result = write_processes(&cmd, &traces, &mut out)
                .and_then(|w| out.flush().map(|()| w).map_err(Stop::Write));
            drop(out);
            let written = match result {
                Ok(w) => w,
                Err(e) => {
                    let _ = std::fs::remove_file(&partial);
                    return Err(match e {
                        Stop::Write(e) => Fail::new(format!(
                            "writing {} failed: {}",
                            target.display(),
                            io_msg(&e)
                        )),
                        Stop::Fail(f) => f,
                    });
                }
            };
            std::fs::rename(&partial, target).map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                Fail::new(format!("cannot write {}: {}", target.display(), io_msg(&e)))
            })?;
            let size = std::fs::metadata(target).map_or(0, |m| m.len());
            let processes = match written.processes {
                1 => String::new(),
                n => format!("{n} processes, "),
            };
            eprintln!(
                "eltrace: wrote {} ({}, {processes}{} frames, {}{})",
                target.display(),
                cmd.format.name(),
                written.frames,
                fmt_bytes(size),
                value_note(&cmd)
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("900"), Ok(900));
        assert_eq!(parse_time("900ns"), Ok(900));
        assert_eq!(parse_time("1.5us"), Ok(1500));
        assert_eq!(parse_time("2 µs"), Ok(2000));
        assert_eq!(parse_time("250ms"), Ok(250_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert!(parse_time("1.5h").unwrap_err().contains("unit"));
        assert!(parse_time("ms").is_err());
        assert!(parse_time("-3s").is_err());
    }

    #[test]
    fn chrome_json_warns_once_past_the_limit() {
        let mut sink = Vec::new();
        let mut w = Watch::new(&mut sink, Format::Chrome, 10);
        w.write_all(b"0123456789").unwrap();
        assert!(w.limit.is_some(), "not past the limit yet");
        w.write_all(b"x").unwrap();
        assert!(w.limit.is_none(), "warned");
        assert_eq!(w.written, 11);
        let w = Watch::new(Vec::new(), Format::Perfetto, 10);
        assert!(w.limit.is_none(), "only Chrome JSON is watched");
    }
}
