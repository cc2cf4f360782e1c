//! Exports of eltrace analyses, one file per format behind the [`Exporter`] trait.
//!
//! One export shows one process or several (the traces of a recording session) in one output.
//! [`Export`] drives it: for each process's trace in turn, the exporter hears
//! [`Exporter::begin_process`], is the [`FrameSink`] of that trace's single analysis pass
//! (streaming what it can as frames close) and gets the finished [`Analysis`] in
//! [`Exporter::end_process`]; [`Exporter::finish`] writes the end of the output. Only one
//! analysis is alive at a time.
//!
//! ```text
//! Export::new(format, out)     the exporter of the format
//! .process(app.eltrace)        begin_process(App.dll 101) · frames, drops · end_process(analysis)
//! .process(app.130.eltrace)    begin_process(csc.dll 130) · frames, drops · end_process(analysis)
//! .finish()                    the end of the file
//! ```
//!
//! [`Format`] carries the facts about each format (name, file extension, help) and makes its
//! exporter; [`export`] exports a single trace.

mod chrome;
mod exporter;
mod folded;
mod html;
mod labels;
mod nest;
mod perfetto;
mod pprof;
mod proto;
mod speedscope;
mod window;

use std::io::{self, Read, Write};

use eltrace_analysis::{
    Analysis, AnalysisError, Frame, FrameSink, Options, Tables, ThreadIdx, analyze_with,
};
use eltrace_trace::TraceInfo;

pub use chrome::Chrome;
pub use exporter::{ExportOptions, Exporter, FoldedRecursion, FoldedValue, OverBudget};
pub use folded::Folded;
pub use html::{Html, MAX_FUNCTIONS as HTML_MAX_FUNCTIONS, MAX_NODES as HTML_MAX_NODES};
pub use labels::ProcessMeta;
pub use perfetto::Perfetto;
pub use pprof::Pprof;
pub use speedscope::Speedscope;
pub use window::TimeWindow;

/// An export of one or more processes into one output: [`Export::process`] for each trace,
/// in the order they are to be shown, then [`Export::finish`].
pub struct Export<'w> {
    exporter: Box<dyn Exporter + 'w>,
    analysis: Options,
}

impl<'w> Export<'w> {
    /// An export in `format` to `out`.
    pub fn new(format: Format, out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Self::with_exporter(format.exporter(out, opts), opts)
    }

    /// An export through `exporter` (made with options of its own, e.g. [`Html::max_nodes`]).
    pub fn with_exporter(exporter: Box<dyn Exporter + 'w>, opts: &ExportOptions) -> Self {
        let mut analysis = Options {
            threads: opts.threads.clone(),
            ..Options::default()
        };
        exporter.configure(&mut analysis);
        Export { exporter, analysis }
    }

    /// Analyses a process's trace into the output and returns its analysis, on the same
    /// pipeline as `report` (the trace read and decoded on a second thread:
    /// [`analyze_with`]). `process` is how it is shown (`None`: the pid and program of the
    /// trace's INFO, at the start of the export's timeline).
    pub fn process<R: Read + Send>(
        &mut self,
        input: R,
        process: Option<ProcessMeta>,
    ) -> Result<Analysis, AnalysisError> {
        let mut sink = Begin {
            exporter: &mut *self.exporter,
            process,
            begun: false,
        };
        let a = analyze_with(input, &self.analysis, &mut sink)?;
        // A trace with no INFO record: the process begins (unnamed) before it ends.
        sink.begin(&TraceInfo::default())
            .map_err(AnalysisError::Sink)?;
        sink.exporter.end_process(&a).map_err(AnalysisError::Sink)?;
        Ok(a)
    }

    /// Writes the end of the output.
    pub fn finish(mut self) -> io::Result<()> {
        self.exporter.finish()
    }
}

/// The exporter as the analysis' sink: the process begins when the trace's INFO record names
/// it (or at the first frame or drop of a trace without one), before any of its frames.
struct Begin<'e, 'w> {
    exporter: &'e mut (dyn Exporter + 'w),
    process: Option<ProcessMeta>,
    begun: bool,
}

impl Begin<'_, '_> {
    fn begin(&mut self, info: &TraceInfo) -> io::Result<()> {
        if self.begun {
            return Ok(());
        }
        self.begun = true;
        let process = self
            .process
            .take()
            .unwrap_or_else(|| ProcessMeta::from_info(info));
        self.exporter.begin_process(&process)
    }
}

impl FrameSink for Begin<'_, '_> {
    fn info(&mut self, info: &TraceInfo) -> io::Result<()> {
        self.begin(info)
    }

    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        self.begin(&TraceInfo::default())?;
        self.exporter.frame(tables, thread, frame)
    }

    fn dropped(
        &mut self,
        tables: &Tables,
        thread: ThreadIdx,
        at_ns: u64,
        count: u64,
    ) -> io::Result<()> {
        self.begin(&TraceInfo::default())?;
        self.exporter.dropped(tables, thread, at_ns, count)
    }

    fn ordered(&self) -> bool {
        self.exporter.ordered()
    }
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Chrome,
    Folded,
    Html,
    Perfetto,
    Pprof,
    Speedscope,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Chrome,
        Format::Folded,
        Format::Html,
        Format::Perfetto,
        Format::Pprof,
        Format::Speedscope,
    ];

    /// The name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Chrome => "chrome",
            Format::Folded => "folded",
            Format::Html => "html",
            Format::Perfetto => "perfetto",
            Format::Pprof => "pprof",
            Format::Speedscope => "speedscope",
        }
    }

    /// The usual file extension (without the dot), also the suffix of the default output
    /// name. Chrome JSON is `trace.json`: speedscope reads `*.chrome.json` as a DevTools
    /// profile and fails on it, and sniffs the format of any other `*.json`.
    pub const fn extension(self) -> &'static str {
        match self {
            Format::Chrome => "trace.json",
            Format::Folded => "folded",
            Format::Html => "html",
            Format::Perfetto => "pftrace",
            Format::Pprof => "pb.gz",
            Format::Speedscope => "speedscope.json",
        }
    }

    /// One line about the format.
    pub const fn help(self) -> &'static str {
        match self {
            Format::Chrome => {
                "Chrome Trace Event JSON: open in ui.perfetto.dev or chrome://tracing"
            }
            Format::Folded => "folded stacks (exclusive ns) for flamegraph.pl or inferno",
            Format::Html => {
                "one self-contained HTML report (flame graph, tables) for any browser, no network"
            }
            Format::Perfetto => {
                "Perfetto protobuf trace: open in ui.perfetto.dev (compact, for big traces)"
            }
            Format::Pprof => {
                "gzipped pprof profile.proto (calls and exclusive time per call path) for go tool \
                 pprof and continuous-profiling backends"
            }
            Format::Speedscope => "speedscope JSON (evented, one profile per thread)",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The exporter of this format, writing to `out`.
    pub fn exporter<'w>(
        self,
        out: &'w mut dyn Write,
        opts: &ExportOptions,
    ) -> Box<dyn Exporter + 'w> {
        match self {
            Format::Chrome => Box::new(Chrome::new(out, opts)),
            Format::Folded => Box::new(Folded::new(out, opts)),
            Format::Perfetto => Box::new(Perfetto::new(out, opts)),
            Format::Pprof => Box::new(Pprof::new(out, opts)),
            Format::Speedscope => Box::new(Speedscope::new(out, opts)),
            Format::Html => Box::new(Html::new(out)),
        }
    }
}

/// Analyses the trace in `input` and writes it to `out` in `format`, as the process its INFO
/// names; returns the analysis.
pub fn export<R: Read + Send>(
    format: Format,
    input: R,
    out: &mut dyn Write,
    opts: &ExportOptions,
) -> Result<Analysis, AnalysisError> {
    let mut e = Export::new(format, out, opts);
    let a = e.process(input, None)?;
    e.finish().map_err(AnalysisError::Sink)?;
    Ok(a)
}
