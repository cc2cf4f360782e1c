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
//! let main = FunctionRecord { method: "Main".into(), ..FunctionRecord::new(FunctionIdx(0)) };
//! w.write_function(&main).unwrap();
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

// The modules from the bottom up: each uses only modules listed before it. The replay's hot
// path crosses modules: the small functions it calls per event are #[inline], and
// #[inline(always)] where the replay has one call site, as when they were one file.

// Integer-keyed maps for the hot path.
mod fxmap;

// Frames, end kinds, tables and statistics as plain data.
mod model;

// The calling-context tree.
mod calltree;

// `FrameSink` and `AnalysisError`.
mod sink;

// A thread's shadow stack as data.
mod stack;

// The reorder queue: events in time order across threads.
mod reorder;

// The sampled-time estimator (timing `sampled`): fed by the analyzer, before the reorder queue.
mod sampled;

// The result, `Analysis`, and its queries.
mod analysis;

// The statistics kept on the fly, with `count()` and the value samples.
mod stats;

// Compiler state machines: async or iterator, their kickoff methods, their names.
mod machines;

// Iterators: enumerations of `yield return` state machines.
mod iterators;

// Async methods: roles, logical calls, and the rules that link segments into calls.
mod asyncs;

// The replay of a thread's events against its shadow stack.
mod replay;

// The streaming facade: `Analyzer`, `analyze`, `analyze_with`.
mod analyzer;
/// The report model: one row per method (shared by `report` and the exporters).
pub mod rows;

#[cfg(test)]
mod tests;

pub use analysis::{Analysis, ValueSample};
pub use analyzer::{Analyzer, Options, analyze, analyze_with};
pub use calltree::{CallNode, CallTree};
pub use eltrace_trace::{FunctionIdx, ThreadIdx};
pub use machines::{Kickoffs, MachineKind, machine_kind_from_flags};
pub use model::{
    CallNodeId, EdgeStats, EndKind, Frame, FunctionStats, FunctionTable, SegmentRef, Tables,
    ThreadStats, ThreadTable, Totals, ValueTable,
};
pub use sampled::{SampledNode, SampledStat, SampledTimes};
pub use sink::{AnalysisError, FrameSink, NullSink};
pub use stats::MAX_SAMPLES as MAX_VALUE_SAMPLES;
