//! The statistics as the replay keeps them on the fly: per function, per thread, per
//! caller→callee edge, in total and in the call tree; the counters kept both in total and per
//! thread ([`Stats::count`]); what a closed frame and a finished logical call add; and the
//! captured values shown in the report (the first [`MAX_SAMPLES`] calls of each function).
//!
//! ```text
//! t=0    enter  A       A: calls 1  inclusive 100  exclusive 100 - 40 = 60
//! t=10   enter  B       B: calls 1  inclusive 40   exclusive 40    edge A→B: 1 call, 40 ns
//! t=50   leave  B       thread: frames 2  root 100 ns  max_depth 2
//! t=100  leave  A
//! ```

use eltrace_trace::{EndRecord, ThreadIdx, ValueStatus};

use crate::analysis::{Analysis, ValueSample};
use crate::calltree::CallTree;
use crate::fxmap::{DenseMap, FxHashMap};
use crate::model::{
    CallSummary, EdgeStats, EndKind, FunctionStats, ROOT, Tables, ThreadStats, Totals, edge_key,
};
use crate::stack::Open;

/// Value samples kept per function.
pub const MAX_SAMPLES: usize = 8;

/// Everything counted so far.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub functions: DenseMap<FunctionStats>,
    pub threads: DenseMap<ThreadStats>,
    edges: Edges,
    pub samples: DenseMap<Vec<ValueSample>>,
    pub tree: Option<CallTree>,
    /// The logical call tree: async calls under the call that awaited them, whatever thread
    /// ran their segments (docs/design.md "The logical call tree").
    pub logical: Option<CallTree>,
    pub totals: Totals,
    /// The latest WAITS totals of each thread.
    waits_seen: DenseMap<(u64, u64)>,
    /// What the frames of the thread replayed last added to its statistics, not added yet
    /// (the replay hands on a thread's events in runs: one lookup per run, not per frame).
    tally: Tally,
}

/// Frames closed, root frames' time and the maximum depth of one thread, to be added into
/// its [`ThreadStats`] and the [`Totals`] ([`Stats::flush_tally`]).
#[derive(Debug, Default)]
struct Tally {
    thread: u32,
    frames: u64,
    root_ns: u64,
    max_depth: u32,
}

/// A counter kept in [`Totals`] and in the thread's [`ThreadStats`] alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// Frames closed.
    Frames,
    /// Time of root frames (ns); a thread's `inclusive_ns`.
    RootNs,
    OpenAtEnd,
    Lost,
    Mismatched,
    UnmatchedLeaves,
    /// Async segments that ended by suspending without a Leave.
    Suspended,
    /// Ordinary frames that ended without a Leave.
    Vanished,
    Throws,
}

impl Stats {
    pub fn new(call_tree: bool, logical_tree: bool) -> Self {
        Stats {
            tree: call_tree.then(CallTree::default),
            logical: logical_tree.then(CallTree::default),
            ..Stats::default()
        }
    }

    /// The statistics of function `f`, created empty if new.
    #[inline]
    pub fn function(&mut self, f: u32) -> &mut FunctionStats {
        self.functions.entry(f, FunctionStats::default)
    }

    /// The statistics of a thread, created empty if new.
    #[inline]
    pub fn thread(&mut self, thread: ThreadIdx) -> &mut ThreadStats {
        self.threads.entry(thread.0, ThreadStats::default)
    }

    /// Adds `n` to a counter in total and for `thread`.
    #[inline]
    pub fn count(&mut self, thread: ThreadIdx, what: Count, n: u64) {
        let ts = self.threads.entry(thread.0, ThreadStats::default);
        add(&mut self.totals, ts, what, n);
    }

    /// A chunk of `n` events of any thread, from `first` to `last` ns, read from the trace.
    pub fn chunk_read(&mut self, n: u64, first: u64, last: u64, first_chunk: bool) {
        let t = &mut self.totals;
        t.events += n;
        if first_chunk {
            (t.first_ns, t.last_ns) = (first, last);
        } else {
            t.first_ns = t.first_ns.min(first);
            t.last_ns = t.last_ns.max(last);
        }
    }

    /// A chunk of `n` events of an analysed thread, the first at `first` ns.
    pub fn chunk_analysed(&mut self, thread: ThreadIdx, n: u64, first: u64) {
        self.totals.analysed_events += n;
        let ts = self.thread(thread);
        if ts.events == 0 {
            ts.first_ns = first;
        }
        ts.events += n;
    }

    /// A thread's WAITS record: its totals so far, replacing the earlier ones (`analysed`: the
    /// thread is analysed; the trace's totals count every thread).
    pub fn waits(&mut self, thread: ThreadIdx, waits: u64, wait_ns: u64, analysed: bool) {
        let last = self.waits_seen.entry(thread.0, || (0, 0));
        let (dw, dn) = (waits.saturating_sub(last.0), wait_ns.saturating_sub(last.1));
        *last = (waits.max(last.0), wait_ns.max(last.1));
        self.totals.waits += dw;
        self.totals.wait_ns += dn;
        if analysed {
            let ts = self.thread(thread);
            ts.waits += dw;
            ts.wait_ns += dn;
        }
    }

    /// `count` events of a thread were dropped (`analysed`: the thread is analysed).
    pub fn dropped(&mut self, thread: ThreadIdx, count: u64, analysed: bool) {
        self.totals.dropped_events += count;
        if analysed {
            self.thread(thread).dropped_events += count;
        }
    }

    /// A frame was pushed at `depth` (1 = a root frame).
    #[inline]
    pub fn reached_depth(&mut self, thread: ThreadIdx, depth: u32) {
        let t = self.tally_for(thread);
        t.max_depth = t.max_depth.max(depth);
    }

    /// The tally of the thread whose frames are being counted, `thread` from now on.
    #[inline(always)]
    fn tally_for(&mut self, thread: ThreadIdx) -> &mut Tally {
        if self.tally.thread != thread.0 {
            self.flush_tally();
            self.tally.thread = thread.0;
        }
        &mut self.tally
    }

    /// Adds the tally into its thread's statistics and the totals.
    #[cold]
    fn flush_tally(&mut self) {
        let t = std::mem::take(&mut self.tally);
        if t.frames > 0 || t.root_ns > 0 {
            let ts = self.threads.entry(t.thread, ThreadStats::default);
            add(&mut self.totals, ts, Count::Frames, t.frames);
            add(&mut self.totals, ts, Count::RootNs, t.root_ns);
        }
        // As a thread's maximum depth always was: only for a thread with statistics.
        if let Some(ts) = self.threads.get_mut(t.thread) {
            ts.max_depth = ts.max_depth.max(t.max_depth);
        }
    }

    /// Frame `o` closed after `dur` ns, called by `caller` (`None`: a root frame), ended by
    /// `kind`.
    #[inline(always)]
    pub fn frame_closed(
        &mut self,
        thread: ThreadIdx,
        o: &Open,
        caller: Option<u32>,
        dur: u64,
        kind: EndKind,
    ) {
        let excl = dur.saturating_sub(o.children);
        let fs = self.function(o.func);
        fs.segments += 1;
        if o.segment.is_none() {
            fs.calls += 1;
        }
        if o.outer {
            fs.inclusive_ns += dur;
        }
        fs.exclusive_ns += excl;
        fs.max_ns = fs.max_ns.max(dur);
        match kind {
            EndKind::Leave => {}
            EndKind::Tailcall => fs.tailcalls += 1,
            EndKind::Unwind | EndKind::Catch => fs.unwound += 1,
            EndKind::Mismatched => fs.mismatched += 1,
            EndKind::Lost => fs.lost += 1,
            EndKind::OpenAtEnd => fs.open_at_end += 1,
            EndKind::Suspend => fs.suspensions += 1,
            EndKind::Vanished => {}
        }
        let t = self.tally_for(thread);
        t.frames += 1;
        if caller.is_none() {
            t.root_ns += dur;
        }
        let es = self.edges.get(caller.unwrap_or(ROOT), o.func);
        es.calls += 1;
        if o.edge_outer {
            es.inclusive_ns += dur;
        }
        if let (Some(tree), Some(node)) = (self.tree.as_mut(), o.node) {
            tree.add(node, dur, excl);
        }
        if let (Some(tree), Some(node)) = (self.logical.as_mut(), o.lnode) {
            tree.add_segment(node, dur, excl, o.segment.is_none_or(|s| s.index == 0));
        }
    }

    /// Adds a finished logical call to its function's statistics (`pending`: it suspended and
    /// was never resumed).
    pub fn settle(&mut self, tables: &Tables, c: CallSummary, pending: bool) {
        let fs = self.function(c.func);
        fs.wall_ns += c.wall_ns;
        // A pending call's last segment ended by a suspension that was counted when it was
        // closed or proven (close_top, prove_callers_suspended).
        if pending {
            fs.pending_at_end += 1;
        }
        let args = shown(tables, c.enter_value);
        let ret = if pending {
            None
        } else {
            shown(tables, c.leave_value)
        };
        self.push_sample(c.func, c.call, args, ret);
    }

    /// Keeps a call's values if `func` has fewer than [`MAX_SAMPLES`].
    pub fn push_sample(&mut self, func: u32, call: u64, args: Option<u32>, ret: Option<u32>) {
        let v = self.samples.entry(func, Vec::new);
        if v.len() < MAX_SAMPLES {
            v.push(ValueSample { call, args, ret });
        }
    }

    /// Sets the return value of the newest sample of `func` that belongs to `call` (or, for
    /// an ordinary function, `u64::MAX`) and has none: a return value read after its Leave
    /// was replayed, in a trace without INFO `values_first` (replay/values.rs).
    pub fn patch_leave_sample(&mut self, func: u32, call: u64, id: u32) {
        if let Some(v) = self.samples.get_mut(func) {
            if let Some(s) = v.iter_mut().rev().find(|s| s.call == call) {
                if s.ret.is_none() {
                    s.ret = Some(id);
                }
            }
        }
    }

    /// The result, with what the analysis read besides the statistics.
    pub fn into_analysis(
        mut self,
        tables: Tables,
        end: Option<EndRecord>,
        truncated: bool,
        diagnostics: Vec<String>,
    ) -> Analysis {
        self.flush_tally();
        Analysis {
            tables,
            end,
            truncated,
            diagnostics,
            totals: self.totals,
            functions: self.functions,
            threads: self.threads,
            edges: self.edges.into_map(),
            samples: self.samples,
            call_tree: self.tree,
            logical_tree: self.logical,
            sampled: None,
        }
    }
}

/// Callers kept with their callee in [`Edges`].
const EDGE_WAYS: usize = 4;

/// The caller→callee edges' statistics: each callee's first [`EDGE_WAYS`] callers next to
/// each other, found by the callee's index (a frame's edge is one small lookup, where a hash
/// map of 16 k edges missed the cache), the others in a hash map; and the edges in the order
/// first seen.
#[derive(Debug, Default)]
pub(crate) struct Edges {
    inline: DenseMap<[InlineEdge; EDGE_WAYS]>,
    more: FxHashMap<u64, EdgeStats>,
    order: Vec<u64>,
}

/// An edge kept with its callee.
#[derive(Debug, Clone, Copy, Default)]
struct InlineEdge {
    used: bool,
    caller: u32,
    stats: EdgeStats,
}

impl Edges {
    /// The statistics of edge `caller`→`callee`, created empty if new.
    #[inline(always)]
    pub(crate) fn get(&mut self, caller: u32, callee: u32) -> &mut EdgeStats {
        let ways = self.inline.entry(callee, Default::default);
        let i = match ways.iter().position(|w| w.used && w.caller == caller) {
            Some(i) => i,
            None => return Self::add(ways, &mut self.more, &mut self.order, caller, callee),
        };
        &mut ways[i].stats
    }

    /// An edge not kept with its callee: a new one there, or in the hash map.
    #[inline(never)]
    fn add<'a>(
        ways: &'a mut [InlineEdge; EDGE_WAYS],
        more: &'a mut FxHashMap<u64, EdgeStats>,
        order: &mut Vec<u64>,
        caller: u32,
        callee: u32,
    ) -> &'a mut EdgeStats {
        let key = edge_key(caller, callee);
        if let Some(w) = ways.iter_mut().find(|w| !w.used) {
            order.push(key);
            *w = InlineEdge {
                used: true,
                caller,
                stats: EdgeStats::default(),
            };
            return &mut w.stats;
        }
        more.entry(key).or_insert_with(|| {
            order.push(key);
            EdgeStats::default()
        })
    }

    /// The edges as the analysis keeps them, inserted in the order they were first seen.
    pub(crate) fn into_map(self) -> FxHashMap<u64, EdgeStats> {
        let mut map = FxHashMap::default();
        for key in self.order {
            let (caller, callee) = ((key >> 32) as u32, key as u32);
            let inline = self.inline.get(callee).and_then(|ways| {
                ways.iter()
                    .find(|w| w.used && w.caller == caller)
                    .map(|w| w.stats)
            });
            if let Some(es) = inline.or_else(|| self.more.get(&key).copied()) {
                map.insert(key, es);
            }
        }
        map
    }
}

/// Adds `n` to counter `what` in the totals `t` and in a thread's `ts`.
#[inline]
fn add(t: &mut Totals, ts: &mut ThreadStats, what: Count, n: u64) {
    let (total, per_thread) = match what {
        Count::Frames => (&mut t.frames, &mut ts.frames),
        Count::RootNs => (&mut t.root_ns, &mut ts.inclusive_ns),
        Count::OpenAtEnd => (&mut t.open_frames_at_end, &mut ts.open_frames_at_end),
        Count::Lost => (&mut t.lost_frames, &mut ts.lost_frames),
        Count::Mismatched => (&mut t.mismatched_frames, &mut ts.mismatched_frames),
        Count::UnmatchedLeaves => (&mut t.unmatched_leaves, &mut ts.unmatched_leaves),
        Count::Suspended => (&mut t.suspended_frames, &mut ts.suspended_frames),
        Count::Vanished => (&mut t.vanished_frames, &mut ts.vanished_frames),
        Count::Throws => (&mut t.throws, &mut ts.throws),
    };
    *total += n;
    *per_thread += n;
}

/// A value id if its record says the query gave a value.
#[inline]
pub(crate) fn shown(tables: &Tables, id: Option<u32>) -> Option<u32> {
    id.filter(|&i| {
        tables
            .values
            .get(i)
            .is_some_and(|v| v.status == ValueStatus::Ok)
    })
}
