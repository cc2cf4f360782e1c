//! `eltrace export`: runs an exporter of `eltrace-export` over the traces given — each one
//! standing for its recording session, kept to the processes `--pid` names — into one output:
//! a file (written beside the target and renamed when complete, see `outfile`) or stdout.
//! An export writes at most 64 times the size of its traces (at least 256 MiB) unless
//! `--max-output` says otherwise: past that it stops with a message. Several processes
//! share the output's timeline by their traces' wall-clock starts. Reading a big trace shows
//! its progress on a terminal (see `util::open_trace`); Chrome JSON past about 1 GB gets a
//! warning that points to `--format perfetto` and the time window.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use eltrace_analysis::AnalysisError;
use eltrace_export::{Export, ExportOptions, FoldedValue, Format, OverBudget, ProcessMeta};

use crate::outfile::OutFile;
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
    /// `--max-output`: the most bytes to write (`Some(0)`: no limit; `None`: the default).
    pub max_output: Option<u64>,
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
    /// Writing past this many bytes fails with [`OverBudget`].
    budget: Option<u64>,
}

/// Without `--max-output`, an export may write this many times the size of its traces…
const BUDGET_FACTOR: u64 = 64;
/// …and at least this much.
const BUDGET_FLOOR: u64 = 256 << 20;

impl<W: Write> Watch<W> {
    fn new(inner: W, format: Format, limit: u64) -> Self {
        Watch {
            inner,
            written: 0,
            limit: (format == Format::Chrome).then_some(limit),
            budget: None,
        }
    }
}

impl<W: Write> Write for Watch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self
            .budget
            .is_some_and(|b| self.written + buf.len() as u64 > b)
        {
            return Err(io::Error::other(OverBudget));
        }
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
/// folded stacks count calls instead of time, the HTML report weighs its graph by calls, the
/// pprof profile has calls (and the sampler's estimates); the timeline formats need
/// per-event times and are refused rather than drawn with made-up ones.
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
    if cmd.format == Format::Html {
        eprintln!(
            "eltrace: {} was recorded with --timing {} (no per-event times): the HTML report \
             weighs its graph by calls and shows no time{}",
            t.path.display(),
            t.info.timing(),
            if t.info.timing() == eltrace_trace::protocol::timing::SAMPLED {
                " (the sampled times: `eltrace report`, `--format pprof`)"
            } else {
                ""
            }
        );
        return Ok(());
    }
    let sampled = |t: &ProcessTrace| t.info.timing() == eltrace_trace::protocol::timing::SAMPLED;
    // Speedscope takes sampled traces (their estimates), not `--timing none` ones.
    if cmd.format == Format::Speedscope
        && traces
            .iter()
            .all(|t| t.info.has_event_times() || sampled(t))
    {
        eprintln!(
            "eltrace: {} was recorded with --timing sampled (no per-event times): speedscope \
             gets the sampler's estimated wall time per call path (all threads together)",
            t.path.display()
        );
        return Ok(());
    }
    if cmd.format == Format::Pprof {
        let what = if t.info.timing() == eltrace_trace::protocol::timing::SAMPLED {
            "its wall time is the sampler's estimate"
        } else {
            "the profile has calls only"
        };
        eprintln!(
            "eltrace: {} was recorded with --timing {} (no per-event times): {what}",
            t.path.display(),
            t.info.timing()
        );
        return Ok(());
    }
    Err(Fail::new(format!(
        "{} was recorded with --timing {}: it has no per-event times, which the {} format \
         needs; `eltrace report` shows its counts{}, `--format html`, `pprof` or `folded` its \
         call paths with their call counts",
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
    let sink = match &cmd.output {
        Output::Stdout => OutFile::stdout(),
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
            OutFile::create(target)?
        }
    };
    let shown = match (&cmd.output, sink.is_stdout()) {
        (Output::File(t), false) => t.display().to_string(),
        _ => "stdout".to_owned(),
    };
    let input: u64 = traces
        .iter()
        .map(|t| std::fs::metadata(&t.path).map_or(0, |m| m.len()))
        .sum();
    let budget = match cmd.max_output {
        Some(0) => None,
        Some(n) => Some(n),
        None => Some((input.saturating_mul(BUDGET_FACTOR)).max(BUDGET_FLOOR)),
    };
    cmd.options.max_output = budget;
    let mut out = Watch::new(
        BufWriter::with_capacity(1 << 20, sink),
        cmd.format,
        CHROME_WARN_BYTES,
    );
    out.budget = budget;
    let result = write_processes(&cmd, &traces, &mut out)
        .and_then(|w| out.flush().map(|()| w).map_err(Stop::Write));
    // Flushed above when all went well; after a failure what is left unwritten is dropped.
    let (sink, _) = out.inner.into_parts();
    let written = match result {
        Ok(w) => w,
        // `| head` closed the pipe: not an error.
        Err(Stop::Write(e)) if sink.is_stdout() && e.kind() == io::ErrorKind::BrokenPipe => {
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => {
            sink.abandon();
            return Err(match e {
                Stop::Write(e) => write_failed(&shown, &e, budget),
                Stop::Fail(f) => f,
            });
        }
    };
    let Some(size) = sink.commit()? else {
        return Ok(ExitCode::SUCCESS);
    };
    let processes = match written.processes {
        1 => String::new(),
        n => format!("{n} processes, "),
    };
    eprintln!(
        "eltrace: wrote {shown} ({}, {processes}{} frames, {}{})",
        cmd.format.name(),
        written.frames,
        fmt_bytes(size),
        value_note(&cmd)
    );
    if written.frames == 0 {
        eprintln!(
            "eltrace: warning: the trace holds no calls (nothing was recorded, or --thread, \
             --from and --to left none): {shown} is an empty {}",
            cmd.format.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The message of a failed write; passing the output budget says how to raise it.
fn write_failed(shown: &str, e: &io::Error, budget: Option<u64>) -> Fail {
    if e.get_ref().is_some_and(|i| i.is::<OverBudget>()) {
        return Fail::new(format!(
            "stopped writing {shown}: the export would pass {} ({BUDGET_FACTOR} times the \
             trace, at least {}); export less (--from/--to, --thread) or raise the limit with \
             --max-output SIZE (0: no limit)",
            fmt_bytes(budget.unwrap_or(0)),
            fmt_bytes(BUDGET_FLOOR)
        ));
    }
    Fail::new(format!("writing {shown} failed: {}", io_msg(e)))
}

/// Parses a size of `--max-output`: a number with an optional `K`, `M` or `G` (binary
/// units, an optional `iB`/`B` after them).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("'{text}' is not a size (e.g. 500M, 2G, 0)")),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 500M, 2G, 0)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("'{text}' is out of range"))
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

    #[test]
    fn budget_stops_the_write() {
        let mut w = Watch::new(Vec::new(), Format::Folded, 10);
        w.budget = Some(8);
        w.write_all(b"12345678").unwrap();
        let e = w.write_all(b"9").unwrap_err();
        assert!(e.get_ref().unwrap().is::<OverBudget>());
        assert!(write_failed("x", &e, Some(8)).msg.contains("--max-output"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("3KiB"), Ok(3 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
