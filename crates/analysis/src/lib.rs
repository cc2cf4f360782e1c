//! Turns an eltrace trace into frames and statistics.
//!
//! The analysis reads a trace once, as a stream, and replays each thread's events against a
//! shadow stack exactly as docs/design.md "Analysis semantics" says. It keeps statistics on the
//! fly (per function, per thread, per caller→callee edge, in total, and optionally a call tree),
//! and hands every frame as it closes to a [`FrameSink`], so exporters can work in the same
//! single pass without the analysis storing frames.
//!
//! ```
//! use eltrace_analysis::{analyze, Options};
//! use eltrace_trace::{Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
//!     TraceInfo, TraceWriter, EndRecord};
//!
//! let mut bytes = Vec::new();
//! let mut w = TraceWriter::new(&mut bytes, &TraceInfo::new(1)).unwrap();
//! w.write_function(&FunctionRecord { method: "Main".into(), ..FunctionRecord::new(FunctionIdx(0)) }).unwrap();
//! w.write_thread(&ThreadRecord::new(ThreadIdx(0), 100)).unwrap();
//! let ev = |ts, kind| Event { ts, kind, func: FunctionIdx(0), sp: 0 };
//! w.write_events(ThreadIdx(0), &[ev(10, EventKind::Enter), ev(30, EventKind::Leave)]).unwrap();
//! w.write_end(&EndRecord::default()).unwrap();
//! drop(w);
//!
//! let a = analyze(&bytes[..], &Options::default()).unwrap();
//! let main = a.function_stats(FunctionIdx(0)).unwrap();
//! assert_eq!((main.calls, main.inclusive_ns), (1, 20));
//! assert!(!a.truncated);
//! ```

mod asyncs;
mod calltree;
mod engine;
mod fxmap;
mod model;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io::{self, Read};

use eltrace_trace::{EndRecord, ReadError, TraceInfo, TraceReader};

pub use asyncs::{IMPL_ASYNC, Role, role_of, state_machine_method};
pub use calltree::{CallNode, CallTree};
pub use eltrace_trace::{FunctionIdx, ThreadIdx};
pub use engine::{Analyzer, MAX_SAMPLES as MAX_VALUE_SAMPLES, runtime_reports_suspend_leaves};
pub use model::{
    CallNodeId, EdgeStats, EndKind, Frame, FunctionStats, FunctionTable, SegmentRef, Tables,
    ThreadStats, ThreadTable, Totals, ValueTable,
};

use fxmap::{DenseMap, FxHashMap};

/// What to analyse and what to build.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Analyse only the threads with these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    /// Build the [`CallTree`] (needed for folded stacks; costs a hash lookup per call).
    pub call_tree: bool,
}

/// Receives every frame once, when it closes (children before their parents), during the pass.
pub trait FrameSink {
    /// `tables` holds the function and thread records read so far.
    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()>;
}

/// A sink that ignores frames.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl FrameSink for NullSink {
    fn frame(&mut self, _: &Tables, _: ThreadIdx, _: &Frame) -> io::Result<()> {
        Ok(())
    }
}

/// Why an analysis failed.
#[derive(Debug)]
pub enum AnalysisError {
    /// The trace could not be read (not a trace, corrupt, I/O error).
    Read(ReadError),
    /// The frame sink failed (an exporter could not write its output).
    Sink(io::Error),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Read(e) => write!(f, "{e}"),
            AnalysisError::Sink(e) => write!(f, "writing the output failed: {e}"),
        }
    }
}

impl std::error::Error for AnalysisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalysisError::Read(e) => Some(e),
            AnalysisError::Sink(e) => Some(e),
        }
    }
}

impl From<ReadError> for AnalysisError {
    fn from(e: ReadError) -> Self {
        AnalysisError::Read(e)
    }
}

/// The result of analysing a trace.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub tables: Tables,
    /// The end record, `None` when the trace has none (it was cut short).
    pub end: Option<EndRecord>,
    /// The trace stopped part-way (no end record or a partial chunk).
    pub truncated: bool,
    /// Diagnostic messages from the profiler (the first few thousand).
    pub diagnostics: Vec<String>,
    pub totals: Totals,
    pub(crate) functions: DenseMap<FunctionStats>,
    pub(crate) threads: DenseMap<ThreadStats>,
    pub(crate) edges: FxHashMap<u64, EdgeStats>,
    pub(crate) samples: DenseMap<Vec<ValueSample>>,
    pub(crate) call_tree: Option<CallTree>,
}

/// The values of one call (`record --values`): ids of [`Tables::values`] records, only those
/// that hold a value (arguments at the call's start, the return value at its completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueSample {
    /// The logical call of an async method, `u64::MAX` for an ordinary call.
    pub call: u64,
    pub args: Option<u32>,
    pub ret: Option<u32>,
}

const ROOT: u32 = u32::MAX;

pub(crate) fn edge_key(caller: u32, callee: u32) -> u64 {
    (u64::from(caller) << 32) | u64::from(callee)
}

impl Analysis {
    pub fn info(&self) -> &TraceInfo {
        &self.tables.info
    }

    /// Statistics of a function, `None` if it has no calls.
    pub fn function_stats(&self, idx: FunctionIdx) -> Option<&FunctionStats> {
        self.functions.get(idx.0)
    }

    /// Every function with at least one call, in index order.
    pub fn functions(&self) -> impl Iterator<Item = (FunctionIdx, &FunctionStats)> {
        self.functions.iter().map(|(i, s)| (FunctionIdx(i), s))
    }

    /// Statistics of an analysed thread.
    pub fn thread_stats(&self, idx: ThreadIdx) -> Option<&ThreadStats> {
        self.threads.get(idx.0)
    }

    /// Every analysed thread (with events or a record), in index order.
    pub fn threads(&self) -> impl Iterator<Item = (ThreadIdx, &ThreadStats)> {
        self.threads.iter().map(|(i, s)| (ThreadIdx(i), s))
    }

    /// Caller→callee edges (caller `None` for root frames), sorted by (caller, callee) index.
    pub fn edges(&self) -> Vec<(Option<FunctionIdx>, FunctionIdx, EdgeStats)> {
        let mut v: Vec<_> = self
            .edges
            .iter()
            .map(|(k, s)| {
                let caller = (k >> 32) as u32;
                let caller = (caller != ROOT).then_some(FunctionIdx(caller));
                (caller, FunctionIdx(*k as u32), *s)
            })
            .collect();
        v.sort_unstable_by_key(|(c, f, _)| (c.map_or(-1, |c| i64::from(c.0)), f.0));
        v
    }

    /// The first few calls' values of a function (`record --values`), in the order the calls
    /// finished.
    pub fn value_samples(&self, idx: FunctionIdx) -> &[ValueSample] {
        self.samples.get(idx.0).map_or(&[], Vec::as_slice)
    }

    /// The call tree, if [`Options::call_tree`] asked for it.
    pub fn call_tree(&self) -> Option<&CallTree> {
        self.call_tree.as_ref()
    }

    /// From the first event to the last timestamp of the trace, in ns.
    pub fn duration_ns(&self) -> u64 {
        self.totals.last_ns - self.totals.first_ns
    }

    /// Events lost to full buffers: the larger of the dropped records' sum and the end
    /// record's count.
    pub fn dropped_events(&self) -> u64 {
        let end = self.end.as_ref().map_or(0, |e| e.events_dropped);
        self.totals.dropped_events.max(end)
    }

    /// The end record's reason (`shutdown`, `exit`, `abort`, `other`), `none` without one.
    pub fn end_reason(&self) -> &'static str {
        self.end.as_ref().map_or("none", |e| e.reason.name())
    }
}

/// Analyses a whole trace.
pub fn analyze<R: Read>(input: R, opts: &Options) -> Result<Analysis, AnalysisError> {
    analyze_with(input, opts, &mut NullSink)
}

/// Analyses a whole trace, handing every frame to `sink` as it closes.
pub fn analyze_with<R: Read, S: FrameSink + ?Sized>(
    input: R,
    opts: &Options,
    sink: &mut S,
) -> Result<Analysis, AnalysisError> {
    let mut reader = TraceReader::new(input)?;
    let mut an = Analyzer::new(opts);
    while let Some(rec) = reader.next_record()? {
        an.record(rec, sink)?;
    }
    an.finish(reader.truncated(), sink)
}
