//! The command line as clap derive structs, and their conversion into the plain option
//! structs of the commands and libraries. Nothing here does any work.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use eltrace_export::{ExportOptions, FoldedRecursion, FoldedValue, Format, TimeWindow};

use crate::check::CheckOptions;
use crate::diff::{DiffOptions, Gate};
use crate::dump::DumpOptions;
use crate::export::{ExportCmd, Output, parse_size, parse_time};
use crate::record::RecordOptions;
use crate::report::{ReportOptions, SortBy};

#[derive(Debug, Parser)]
#[command(
    name = "eltrace",
    version,
    about = "Function-level tracing profiler for .NET (CoreCLR) on Linux",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a .NET program under the profiler and record a trace.
    Record(RecordArgs),
    /// Print statistics of a trace: functions, threads, facts.
    Report(ReportArgs),
    /// Convert a trace into another format (Perfetto, Chrome trace JSON, speedscope, folded
    /// stacks, a self-contained HTML report).
    Export(ExportArgs),
    /// Check the runtime's ELT contract with bundled probe programs (one row per check).
    Check(CheckArgs),
    /// Print a trace's raw records and events as text, in file order.
    Dump(DumpArgs),
    /// Compare two recordings function by function (calls, time, their changes); with
    /// --fail-on, exit 1 when a gate is broken (a CI regression check on exact call counts).
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The base trace (a trace `eltrace record` wrote stands for its whole session).
    pub base: PathBuf,
    /// The trace compared with it.
    pub new: PathBuf,
    /// Only the process with this pid (in either session); repeatable.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Only the thread with this OS tid; repeatable.
    #[arg(long = "thread", value_name = "TID")]
    pub threads: Vec<u64>,
    /// Show only the first N changed functions (default: 25 in the table, all in --json).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when a function grew past a limit: `METRIC>+LIMIT[:GLOB]` with METRIC calls,
    /// inclusive or exclusive and LIMIT a share (`5%`), a number of calls or a time (`2ms`);
    /// e.g. 'calls>+0%', 'calls>+5%:MyApp.*', 'exclusive>+20%'. Repeatable.
    #[arg(long = "fail-on", value_name = "GATE", value_parser = parse_gate)]
    pub fail_on: Vec<Gate>,
}

fn parse_gate(s: &str) -> Result<Gate, String> {
    Gate::parse(s)
}

impl From<DiffArgs> for DiffOptions {
    fn from(a: DiffArgs) -> Self {
        DiffOptions {
            base: a.base,
            new: a.new,
            pids: (!a.pids.is_empty()).then_some(a.pids),
            threads: thread_filter(a.threads),
            top: a.top,
            json: a.json,
            gates: a.fail_on,
        }
    }
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Only events of the thread with this OS tid; repeatable.
    #[arg(long = "thread", value_name = "TID")]
    pub threads: Vec<u64>,
    /// Stop after N events.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

impl From<DumpArgs> for DumpOptions {
    fn from(a: DumpArgs) -> Self {
        DumpOptions {
            path: a.file,
            threads: thread_filter(a.threads),
            limit: a.limit,
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Run only the checks whose name contains PATTERN, or, if it has a wildcard, whose whole
    /// name the glob PATTERN matches (`*` any run of characters, `?` one character).
    #[arg(long, value_name = "PATTERN")]
    pub only: Option<String>,
    /// The dotnet executable that builds and runs the probes (default: `dotnet` on PATH).
    /// With --runtime: the SDK's dotnet, which builds the probes and whose host the laid-out
    /// runtimes copy.
    #[arg(long, value_name = "PATH")]
    pub dotnet: Option<PathBuf>,
    /// The profiler library (default: as for `record`).
    #[arg(long, value_name = "PATH")]
    pub profiler: Option<PathBuf>,
    /// Check on these runtimes, one column each: majors (8, 9, 10, 11: the SDK's own, else the
    /// newest X.0.x that NuGet serves), exact versions (11.0.0), comma-separated, or `all`
    /// (8,9,10,11). Runtimes the SDK lacks are laid out into eltrace's cache from the NuGet
    /// runtime pack on first use.
    #[arg(long, value_name = "LIST")]
    pub runtime: Option<String>,
}

impl From<CheckArgs> for CheckOptions {
    fn from(a: CheckArgs) -> Self {
        CheckOptions {
            json: a.json,
            only: a.only,
            dotnet: a.dotnet,
            profiler: a.profiler,
            runtime: a.runtime,
        }
    }
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where the trace goes.
    #[arg(short, long, value_name = "FILE", default_value = "trace.eltrace")]
    pub output: PathBuf,
    /// Trace functions matching GLOB (`Ns.Type.Method`, or `Module!Ns.Type.Method`
    /// if it contains `!`); repeatable. Default: everything outside the framework.
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Do not trace functions matching GLOB; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Use the runtime's slow path (SetEnterLeaveFunctionHooks3WithInfo) instead of the
    /// fast-path assembly stubs (the default).
    #[arg(long)]
    pub slow_path: bool,
    /// Capture arguments (at Enter) and return values (at Leave) of the traced functions;
    /// implies --slow-path and is much slower.
    #[arg(long)]
    pub values: bool,
    /// Drop events (counted and reported) when a thread's buffer is full, instead of making
    /// the thread wait for the trace writer (the default, which loses nothing but may slow a
    /// busy program down further).
    #[arg(long)]
    pub lossy: bool,
    /// How long threads wait in all for a trace writer that makes no progress (a stalled
    /// disk, a full file system) before they drop events instead (counted, marked in the
    /// trace, reported); waiting resumes once the writer moves again. `500ms`, `5s` (the
    /// default), `0` (wait for ever).
    #[arg(long, value_name = "DURATION", value_parser = parse_stall)]
    pub max_stall: Option<u64>,
    /// Per-event timing: `exact` (a timestamp on every event, the default), `none` (no
    /// timestamps: exact counts, call tree and stacks at a fraction of the cost; no times)
    /// or `sampled` (no per-event timestamps; a sampler thread estimates the time of each
    /// function and call-tree node from the exact stacks). See README "Timing modes".
    #[arg(long, value_name = "MODE", value_parser = ["exact", "none", "sampled"])]
    pub timing: Option<String>,
    /// With `--timing sampled`: samples per second on average (default 1000; random intervals).
    #[arg(long, value_name = "HZ")]
    pub sample_hz: Option<u32>,
    /// Let the JIT turn self-recursive tail calls into loops (its default), which the
    /// profiler does not see: such calls are then missing from the counts. Without it,
    /// `record` sets DOTNET_TailCallLoopOpt=0 for the program (unless its environment sets
    /// DOTNET_TailCallLoopOpt or COMPlus_TailCallLoopOpt).
    #[arg(long)]
    pub keep_tail_loops: bool,
    /// The profiler library (default: libeltrace_profiler.so beside this executable, or
    /// $ELTRACE_PROFILER_PATH).
    #[arg(long, value_name = "PATH")]
    pub profiler: Option<PathBuf>,
    /// The program to run and its arguments (put them after `--`).
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The sort key of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    /// Inclusive time (recursion counted once).
    Inclusive,
    /// Exclusive (self) time.
    Exclusive,
    /// Number of calls.
    Calls,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The trace files. A trace `eltrace record` wrote stands for its whole session: the
    /// traces of the other .NET processes of the run beside it (`<stem>.<pid>.eltrace`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Only the process with this pid; repeatable.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Show only the first N functions (default: 25 in the table, all in --json).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Sort functions by this key.
    #[arg(long, value_enum, default_value_t = ByArg::Inclusive)]
    pub by: ByArg,
    /// Only the thread with this OS tid; repeatable.
    #[arg(long = "thread", value_name = "TID")]
    pub threads: Vec<u64>,
    /// Print one JSON object (the schema in docs/design.md) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Add the logical call tree: each async call under the call that awaited it, whatever
    /// thread ran its segments (JSON: `logical_tree`).
    #[arg(long)]
    pub logical: bool,
}

/// An export format on the command line (the facts live on [`Format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            FormatArg(Format::Chrome),
            FormatArg(Format::Perfetto),
            FormatArg(Format::Speedscope),
            FormatArg(Format::Folded),
            FormatArg(Format::Html),
            FormatArg(Format::Pprof),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.help()))
    }
}

/// The value of a folded stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ValueArg {
    /// Exclusive time in ns.
    Time,
    /// Number of calls.
    Calls,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The trace files, shown as one output (a process each). A trace `eltrace record`
    /// wrote stands for its whole session: the traces of the other .NET processes of the run
    /// beside it (`<stem>.<pid>.eltrace`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Only the process with this pid; repeatable.
    #[arg(long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// The output format.
    #[arg(short, long, value_enum)]
    pub format: FormatArg,
    /// The output file (default: the first FILE with the format's extension; `-` for
    /// stdout).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Only the thread with this OS tid; repeatable.
    #[arg(long = "thread", value_name = "TID")]
    pub threads: Vec<u64>,
    /// Folded stacks: what a stack's value is.
    #[arg(long, value_enum, default_value_t = ValueArg::Time)]
    pub value: ValueArg,
    /// Only what overlaps the window from TIME on (since the recording started, as the
    /// exports show it: `250ms`, `1.5s`, `40us`, `900ns`; a plain number is ns). Frames are
    /// cut at the window's edges.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<u64>,
    /// Only what overlaps the window up to TIME (see --from).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<u64>,
    /// Folded stacks: put each thread's stacks under a root frame named after the thread
    /// (`main_(4242);App.Program.Main 1200`) instead of merging the threads.
    #[arg(long)]
    pub thread_root: bool,
    /// Folded stacks: write a run of one function calling itself directly up to N frames
    /// deep; deeper frames of the run count as its N-th (0: write every frame).
    #[arg(long, value_name = "N", default_value_t = FoldedRecursion::DEFAULT.0)]
    pub fold_recursion: u32,
    /// Stop with an error rather than write more than SIZE (`500M`, `2G`; 0: no limit).
    /// The default is 64 times the size of the traces, and at least 256 MiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_output: Option<u64>,
}

fn thread_filter(tids: Vec<u64>) -> Option<Vec<u64>> {
    (!tids.is_empty()).then_some(tids)
}

impl From<RecordArgs> for RecordOptions {
    fn from(a: RecordArgs) -> Self {
        RecordOptions {
            output: a.output,
            include: a.include,
            exclude: a.exclude,
            slow_path: a.slow_path,
            values: a.values,
            lossy: a.lossy,
            max_stall_ms: a.max_stall,
            timing: a.timing,
            sample_hz: a.sample_hz,
            keep_tail_loops: a.keep_tail_loops,
            profiler: a.profiler,
            command: a.command,
        }
    }
}

impl From<ReportArgs> for ReportOptions {
    fn from(a: ReportArgs) -> Self {
        ReportOptions {
            path: a.files.first().cloned().unwrap_or_default(),
            paths: a.files,
            pids: (!a.pids.is_empty()).then_some(a.pids),
            top: a.top,
            by: match a.by {
                ByArg::Inclusive => SortBy::Inclusive,
                ByArg::Exclusive => SortBy::Exclusive,
                ByArg::Calls => SortBy::Calls,
            },
            threads: thread_filter(a.threads),
            json: a.json,
            logical: a.logical,
        }
    }
}

impl From<ExportArgs> for ExportCmd {
    fn from(a: ExportArgs) -> Self {
        let format = a.format.0;
        let first = a.files.first().cloned().unwrap_or_default();
        let output = match a.output {
            Some(p) if p.as_os_str() == "-" => Output::Stdout,
            Some(p) => Output::File(p),
            None => Output::File(first.with_extension(format.extension())),
        };
        ExportCmd {
            paths: a.files,
            pids: (!a.pids.is_empty()).then_some(a.pids),
            format,
            output,
            options: ExportOptions {
                threads: thread_filter(a.threads),
                folded_value: match a.value {
                    ValueArg::Time => FoldedValue::ExclusiveNs,
                    ValueArg::Calls => FoldedValue::Calls,
                },
                window: TimeWindow {
                    from: a.from.unwrap_or(0),
                    to: a.to.unwrap_or(u64::MAX),
                },
                thread_root: a.thread_root,
                folded_recursion: FoldedRecursion(a.fold_recursion),
                max_output: None,
            },
            max_output: a.max_output,
        }
    }
}

/// `--max-stall`: `0`, `<n>ms` or `<n>s` (whole numbers), as milliseconds.
fn parse_stall(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, scale) = if let Some(d) = t.strip_suffix("ms") {
        (d, 1)
    } else if let Some(d) = t.strip_suffix('s') {
        (d, 1000)
    } else if t == "0" {
        (t, 1)
    } else {
        return Err(format!(
            "{s:?}: give a duration such as 500ms, 5s or 0 (wait for ever)"
        ));
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&ms| ms <= 3_600_000)
        .ok_or_else(|| format!("{s:?}: give a duration such as 500ms, 5s or 0, at most 3600s"))
}

#[cfg(test)]
mod stall_tests {
    use super::parse_stall;

    #[test]
    fn max_stall_durations() {
        assert_eq!(parse_stall("500ms"), Ok(500));
        assert_eq!(parse_stall("5s"), Ok(5000));
        assert_eq!(parse_stall("0"), Ok(0));
        for bad in ["5", "soon", "-1s", "1.5s", "3601s", ""] {
            assert!(parse_stall(bad).is_err(), "{bad}");
        }
    }
}
