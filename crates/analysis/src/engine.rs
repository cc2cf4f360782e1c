//! The replay: feeds records one by one into per-thread shadow stacks and statistics
//! (docs/design.md "Analysis semantics").

use std::collections::HashSet;

use eltrace_trace::{Event, EventKind, FunctionIdx, Record, ThreadIdx};

use crate::calltree::CallTree;
use crate::fxmap::{DenseMap, FxHashMap};
use crate::model::{
    CallNodeId, EdgeStats, EndKind, Frame, FunctionStats, Tables, ThreadStats, Totals,
};
use crate::{Analysis, AnalysisError, FrameSink, Options, ROOT, edge_key};

/// Diagnostics kept at most; more are counted in the last message.
const MAX_DIAGNOSTICS: usize = 1000;

/// An open frame on a shadow stack.
#[derive(Debug, Clone, Copy)]
struct Open {
    func: u32,
    start: u64,
    children: u64,
    /// No other frame of the same function below.
    outer: bool,
    /// No other frame of the same caller→callee pair below.
    edge_outer: bool,
    node: Option<CallNodeId>,
}

#[derive(Debug, Default)]
struct ThreadState {
    stack: Vec<Open>,
    /// Frames of each function on the stack.
    active: FxHashMap<u32, u32>,
    /// Frames of each caller→callee pair on the stack.
    active_edges: FxHashMap<u64, u32>,
    last_ns: u64,
}

#[derive(Debug, Default)]
struct Stats {
    functions: DenseMap<FunctionStats>,
    threads: DenseMap<ThreadStats>,
    edges: FxHashMap<u64, EdgeStats>,
    tree: Option<CallTree>,
    totals: Totals,
}

/// A streaming analysis: feed it records with [`Analyzer::record`], then call
/// [`Analyzer::finish`]. [`crate::analyze_with`] does this for a reader.
pub struct Analyzer {
    tables: Tables,
    stats: Stats,
    states: DenseMap<ThreadState>,
    filter: Option<HashSet<u64>>,
    origin_ticks: u64,
    end: Option<eltrace_trace::EndRecord>,
    diagnostics: Vec<String>,
    extra_diagnostics: u64,
    seen_events: bool,
}

impl Analyzer {
    pub fn new(opts: &Options) -> Self {
        Analyzer {
            tables: Tables::default(),
            stats: Stats {
                tree: opts.call_tree.then(CallTree::default),
                ..Stats::default()
            },
            states: DenseMap::default(),
            filter: opts.threads.as_ref().map(|t| t.iter().copied().collect()),
            origin_ticks: 0,
            end: None,
            diagnostics: Vec::new(),
            extra_diagnostics: 0,
            seen_events: false,
        }
    }

    /// The tables read so far.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    fn selected(&self, thread: ThreadIdx) -> bool {
        match &self.filter {
            None => true,
            Some(set) => self
                .tables
                .threads
                .os_tid(thread)
                .is_some_and(|t| set.contains(&t)),
        }
    }

    fn to_ns(&self, ticks: u64) -> u64 {
        self.tables
            .info
            .ticks_to_ns(ticks.saturating_sub(self.origin_ticks))
    }

    /// Takes one record of the trace, in file order.
    pub fn record<S: FrameSink + ?Sized>(
        &mut self,
        rec: Record,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        match rec {
            Record::Info(info) => {
                self.origin_ticks = info.start_ticks;
                self.tables.info = info;
            }
            Record::Function(f) => self.tables.functions.insert(f),
            Record::Thread(t) => self.tables.threads.insert(t),
            Record::Events { thread, events } => self.events(thread, &events, sink)?,
            Record::Dropped { thread, count } => {
                self.stats.totals.dropped_events += count;
                if self.selected(thread) {
                    let ts = self.stats.threads.entry(thread.0, ThreadStats::default);
                    ts.dropped_events += count;
                    let st = self.states.entry(thread.0, ThreadState::default);
                    let at = st.last_ns;
                    let lost = close_all(
                        st,
                        &mut self.stats,
                        &self.tables,
                        thread,
                        at,
                        EndKind::Lost,
                        sink,
                    )?;
                    self.stats.totals.lost_frames += lost;
                    if let Some(ts) = self.stats.threads.get_mut(thread.0) {
                        ts.lost_frames += lost;
                    }
                }
            }
            Record::End(e) => self.end = Some(e),
            Record::Value(v) => self.tables.values.insert(v.id, v),
            Record::Diagnostic(d) => {
                if self.diagnostics.len() < MAX_DIAGNOSTICS {
                    self.diagnostics.push(d);
                } else {
                    self.extra_diagnostics += 1;
                }
            }
        }
        Ok(())
    }

    fn events<S: FrameSink + ?Sized>(
        &mut self,
        thread: ThreadIdx,
        events: &[Event],
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return Ok(());
        };
        let (first, last) = (self.to_ns(first.ts), self.to_ns(last.ts));
        let totals = &mut self.stats.totals;
        totals.events += events.len() as u64;
        if self.seen_events {
            totals.first_ns = totals.first_ns.min(first);
            totals.last_ns = totals.last_ns.max(last);
        } else {
            (totals.first_ns, totals.last_ns) = (first, last);
            self.seen_events = true;
        }
        if !self.selected(thread) {
            return Ok(());
        }
        self.stats.totals.analysed_events += events.len() as u64;
        let info = &self.tables.info;
        let origin = self.origin_ticks;
        let st = self.states.entry(thread.0, ThreadState::default);
        {
            let ts = self.stats.threads.entry(thread.0, ThreadStats::default);
            if ts.events == 0 {
                ts.first_ns = first.max(st.last_ns);
            }
            ts.events += events.len() as u64;
        }
        for e in events {
            // Time never goes backwards within a thread, also across chunks.
            let ns = info
                .ticks_to_ns(e.ts.saturating_sub(origin))
                .max(st.last_ns);
            st.last_ns = ns;
            match e.kind {
                EventKind::Enter => push(st, &mut self.stats, thread, e.func, ns),
                EventKind::Leave => leave(
                    st,
                    &mut self.stats,
                    &self.tables,
                    thread,
                    e.func,
                    ns,
                    EndKind::Leave,
                    sink,
                )?,
                EventKind::Tailcall => leave(
                    st,
                    &mut self.stats,
                    &self.tables,
                    thread,
                    e.func,
                    ns,
                    EndKind::Tailcall,
                    sink,
                )?,
                EventKind::Unwind => leave(
                    st,
                    &mut self.stats,
                    &self.tables,
                    thread,
                    e.func,
                    ns,
                    EndKind::Unwind,
                    sink,
                )?,
                EventKind::Catch => {
                    if st.active.get(&e.func.0).copied().unwrap_or(0) > 0 {
                        while st.stack.last().is_some_and(|o| o.func != e.func.0) {
                            close_top(
                                st,
                                &mut self.stats,
                                &self.tables,
                                thread,
                                ns,
                                EndKind::Catch,
                                sink,
                            )?;
                        }
                    }
                }
                EventKind::Value => {}
                EventKind::Throw => {
                    self.stats.totals.throws += 1;
                    if let Some(ts) = self.stats.threads.get_mut(thread.0) {
                        ts.throws += 1;
                    }
                }
            }
        }
        if let Some(ts) = self.stats.threads.get_mut(thread.0) {
            ts.last_ns = st.last_ns;
        }
        Ok(())
    }

    /// Closes the frames still open (at the trace's last timestamp) and returns the result.
    pub fn finish<S: FrameSink + ?Sized>(
        mut self,
        truncated: bool,
        sink: &mut S,
    ) -> Result<Analysis, AnalysisError> {
        if self.seen_events {
            if let Some(e) = &self.end {
                let end = self.to_ns(e.ts);
                self.stats.totals.last_ns = self.stats.totals.last_ns.max(end);
            }
        }
        let last = self.stats.totals.last_ns;
        let keys: Vec<u32> = self.states.iter().map(|(k, _)| k).collect();
        for k in keys {
            let Some(st) = self.states.get_mut(k) else {
                continue;
            };
            let open = close_all(
                st,
                &mut self.stats,
                &self.tables,
                ThreadIdx(k),
                last,
                EndKind::OpenAtEnd,
                sink,
            )?;
            self.stats.totals.open_frames_at_end += open;
            if let Some(ts) = self.stats.threads.get_mut(k) {
                ts.open_frames_at_end += open;
            }
        }
        // Threads with a record but no events are listed too (if selected).
        let idxs: Vec<ThreadIdx> = self.tables.threads.iter().map(|t| t.idx).collect();
        for t in idxs {
            if self.selected(t) {
                self.stats.threads.entry(t.0, ThreadStats::default);
            }
        }
        if self.extra_diagnostics > 0 {
            self.diagnostics
                .push(format!("… and {} more diagnostics", self.extra_diagnostics));
        }
        let Stats {
            functions,
            threads,
            edges,
            tree,
            totals,
        } = self.stats;
        Ok(Analysis {
            tables: self.tables,
            end: self.end,
            truncated,
            diagnostics: self.diagnostics,
            totals,
            functions,
            threads,
            edges,
            call_tree: tree,
        })
    }
}

fn push(st: &mut ThreadState, stats: &mut Stats, thread: ThreadIdx, func: FunctionIdx, ns: u64) {
    let f = func.0;
    let c = st.active.entry(f).or_insert(0);
    let outer = *c == 0;
    *c += 1;
    let (caller, parent_node) = st.stack.last().map_or((ROOT, None), |o| (o.func, o.node));
    let ce = st.active_edges.entry(edge_key(caller, f)).or_insert(0);
    let edge_outer = *ce == 0;
    *ce += 1;
    let node = stats.tree.as_mut().map(|t| t.child(parent_node, func));
    st.stack.push(Open {
        func: f,
        start: ns,
        children: 0,
        outer,
        edge_outer,
        node,
    });
    let depth = st.stack.len() as u32;
    if let Some(ts) = stats.threads.get_mut(thread.0) {
        ts.max_depth = ts.max_depth.max(depth);
    }
}

#[allow(clippy::too_many_arguments)]
fn leave<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    stats: &mut Stats,
    tables: &Tables,
    thread: ThreadIdx,
    func: FunctionIdx,
    ns: u64,
    kind: EndKind,
    sink: &mut S,
) -> Result<(), AnalysisError> {
    if st.active.get(&func.0).copied().unwrap_or(0) == 0 {
        stats.totals.unmatched_leaves += 1;
        if let Some(ts) = stats.threads.get_mut(thread.0) {
            ts.unmatched_leaves += 1;
        }
        return Ok(());
    }
    while let Some(top) = st.stack.last() {
        if top.func == func.0 {
            close_top(st, stats, tables, thread, ns, kind, sink)?;
            break;
        }
        close_top(st, stats, tables, thread, ns, EndKind::Mismatched, sink)?;
        stats.totals.mismatched_frames += 1;
        if let Some(ts) = stats.threads.get_mut(thread.0) {
            ts.mismatched_frames += 1;
        }
    }
    Ok(())
}

/// Closes every open frame of a thread at `ns`; returns how many.
fn close_all<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    stats: &mut Stats,
    tables: &Tables,
    thread: ThreadIdx,
    ns: u64,
    kind: EndKind,
    sink: &mut S,
) -> Result<u64, AnalysisError> {
    let mut n = 0;
    while !st.stack.is_empty() {
        close_top(st, stats, tables, thread, ns, kind, sink)?;
        n += 1;
    }
    Ok(n)
}

/// Pops the top frame (the stack must not be empty), ends it at `ns`, updates the statistics
/// and hands it to the sink.
fn close_top<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    stats: &mut Stats,
    tables: &Tables,
    thread: ThreadIdx,
    ns: u64,
    kind: EndKind,
    sink: &mut S,
) -> Result<(), AnalysisError> {
    let Some(o) = st.stack.pop() else {
        return Ok(());
    };
    let end = ns.max(o.start);
    let dur = end - o.start;
    let excl = dur.saturating_sub(o.children);

    let fs = stats.functions.entry(o.func, FunctionStats::default);
    fs.calls += 1;
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
    }
    // Entries are removed at zero so that the maps stay as small as the stack.
    if let Some(c) = st.active.get_mut(&o.func) {
        *c -= 1;
        if *c == 0 {
            st.active.remove(&o.func);
        }
    }

    let ts = stats.threads.entry(thread.0, ThreadStats::default);
    ts.frames += 1;
    stats.totals.frames += 1;
    let caller = match st.stack.last_mut() {
        Some(p) => {
            p.children += dur;
            p.func
        }
        None => {
            ts.inclusive_ns += dur;
            stats.totals.root_ns += dur;
            ROOT
        }
    };
    let key = edge_key(caller, o.func);
    let es = stats.edges.entry(key).or_default();
    es.calls += 1;
    if o.edge_outer {
        es.inclusive_ns += dur;
    }
    if let Some(c) = st.active_edges.get_mut(&key) {
        *c -= 1;
        if *c == 0 {
            st.active_edges.remove(&key);
        }
    }
    if let (Some(tree), Some(node)) = (stats.tree.as_mut(), o.node) {
        tree.add(node, dur, excl);
    }

    let frame = Frame {
        func: FunctionIdx(o.func),
        start_ns: o.start,
        end_ns: end,
        depth: st.stack.len() as u32,
        parent: (caller != ROOT).then_some(FunctionIdx(caller)),
        children_ns: o.children,
        end: kind,
        node: o.node,
    };
    sink.frame(tables, thread, &frame)
        .map_err(AnalysisError::Sink)
}
