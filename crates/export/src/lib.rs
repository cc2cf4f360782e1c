//! Exports of an eltrace analysis, one file per format behind the [`Exporter`] trait.
//!
//! Every exporter works in the analysis' single pass: it is the [`FrameSink`] of the replay
//! (streaming what it can as frames close) and gets the finished [`Analysis`] at the end.
//! [`Format`] carries the facts about each format (name, file extension, help) and makes
//! its exporter; [`export`] runs the whole thing over a trace.

mod chrome;
mod folded;
mod html;
mod labels;
mod nest;
mod perfetto;
mod speedscope;
mod window;

use std::io::{self, Read, Write};

use eltrace_analysis::{Analysis, AnalysisError, FrameSink, Options, analyze_with};

pub use chrome::Chrome;
pub use folded::Folded;
pub use html::{Html, MAX_FUNCTIONS as HTML_MAX_FUNCTIONS, MAX_NODES as HTML_MAX_NODES};
pub use labels::ProcessMeta;
pub use perfetto::Perfetto;
pub use speedscope::Speedscope;
pub use window::TimeWindow;

/// One output format.
pub trait Exporter: FrameSink {
    /// Asks the analysis for what the format needs (e.g. the call tree).
    fn configure(&self, _opts: &mut Options) {}
    /// Writes whatever remains once the analysis is complete.
    fn finish(&mut self, analysis: &Analysis) -> io::Result<()>;
}

/// What the folded-stacks value of a stack is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FoldedValue {
    /// Exclusive (self) time of the stack's frames in ns.
    #[default]
    ExclusiveNs,
    /// Number of frames (calls) with exactly this stack.
    Calls,
}

/// Options shared by the exporters.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Export only the threads with these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    pub folded_value: FoldedValue,
    /// Export only what overlaps this time window; frames are clipped to it.
    pub window: TimeWindow,
    /// Folded stacks: one root frame per thread (`main (1234);Main;Run 100`).
    pub thread_root: bool,
    /// The process the trace is shown as (`None`: the pid and program of the trace's INFO).
    pub process: Option<ProcessMeta>,
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Chrome,
    Folded,
    Html,
    Perfetto,
    Speedscope,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Chrome,
        Format::Folded,
        Format::Html,
        Format::Perfetto,
        Format::Speedscope,
    ];

    /// The name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Chrome => "chrome",
            Format::Folded => "folded",
            Format::Html => "html",
            Format::Perfetto => "perfetto",
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
            Format::Speedscope => Box::new(Speedscope::new(out, opts)),
            Format::Html => Box::new(Html::new(out)),
        }
    }
}

/// Analyses the trace in `input` and writes it to `out` in `format`; returns the analysis.
pub fn export<R: Read>(
    format: Format,
    input: R,
    out: &mut dyn Write,
    opts: &ExportOptions,
) -> Result<Analysis, AnalysisError> {
    let mut exporter = format.exporter(out, opts);
    let mut aopts = Options {
        threads: opts.threads.clone(),
        ..Options::default()
    };
    exporter.configure(&mut aopts);
    let analysis = analyze_with(input, &aopts, &mut *exporter)?;
    exporter.finish(&analysis).map_err(AnalysisError::Sink)?;
    Ok(analysis)
}
