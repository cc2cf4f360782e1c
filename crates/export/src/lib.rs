//! Exports of an eltrace analysis, one file per format behind the [`Exporter`] trait.
//!
//! Every exporter works in the analysis' single pass: it is the [`FrameSink`] of the replay
//! (streaming what it can as frames close) and gets the finished [`Analysis`] at the end.
//! [`Format`] carries the facts about each format (name, file extension, help) and makes
//! its exporter; [`export`] runs the whole thing over a trace.

mod chrome;
mod folded;
mod html;

use std::io::{self, Read, Write};

use eltrace_analysis::{Analysis, AnalysisError, FrameSink, Options, analyze_with};

pub use chrome::Chrome;
pub use folded::Folded;
pub use html::{Html, MAX_FUNCTIONS as HTML_MAX_FUNCTIONS, MAX_NODES as HTML_MAX_NODES};

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
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Chrome,
    Folded,
    Html,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Chrome, Format::Folded, Format::Html];

    /// The name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Chrome => "chrome",
            Format::Folded => "folded",
            Format::Html => "html",
        }
    }

    /// The usual file extension (without the dot).
    pub const fn extension(self) -> &'static str {
        match self {
            Format::Chrome => "json",
            Format::Folded => "folded",
            Format::Html => "html",
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
            Format::Chrome => Box::new(Chrome::new(out)),
            Format::Folded => Box::new(Folded::new(out, opts.folded_value)),
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
