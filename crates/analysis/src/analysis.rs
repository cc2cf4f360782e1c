//! The result of an analysis ([`Analysis`]): the trace's tables and facts, and the statistics
//! per function, per thread, per caller→callee edge and in total, with the queries the
//! report and the exporters use.
//!
//! ```text
//! t=0    enter  Main      functions():  Main  calls 1  inclusive 100  exclusive 70
//! t=10   enter  Work      functions():  Work  calls 1  inclusive 30
//! t=40   leave  Work      edges():      (root)→Main 1   Main→Work 1
//! t=100  leave  Main      duration_ns(): 100   threads(): max_depth 2
//! ```

use eltrace_trace::{EndRecord, FunctionIdx, ThreadIdx, TraceInfo};

use crate::calltree::CallTree;
use crate::fxmap::{DenseMap, FxHashMap};
use crate::model::{EdgeStats, FunctionStats, ROOT, Tables, ThreadStats, Totals};

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
    pub(crate) logical_tree: Option<CallTree>,
    /// Sampled time estimates (a trace recorded with `--timing sampled`).
    pub sampled: Option<crate::sampled::SampledTimes>,
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

impl Analysis {
    pub fn info(&self) -> &TraceInfo {
        &self.tables.info
    }

    /// Whether the trace's times are measured per event (timing `exact`); otherwise the
    /// statistics' times are not measurements and only counts, stacks and (with
    /// [`Analysis::sampled`]) sampled estimates mean anything.
    pub fn has_event_times(&self) -> bool {
        self.tables.info.has_event_times()
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

    /// The logical call tree, if [`Options::logical_tree`](crate::Options::logical_tree)
    /// asked for it: each async call's segments under the call that awaited it, wherever
    /// they ran; `calls` counts logical calls, times are the segments' (CPU) times.
    pub fn logical_tree(&self) -> Option<&CallTree> {
        self.logical_tree.as_ref()
    }

    /// The call tree, if [`Options::call_tree`](crate::Options::call_tree) asked for it.
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
