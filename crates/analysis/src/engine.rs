//! The replay: feeds records one by one into per-thread shadow stacks and statistics
//! (docs/design.md "Analysis semantics" and "Async methods: segments and logical calls").

use std::collections::HashSet;
use std::io::Read;

use eltrace_trace::{Event, EventKind, FunctionIdx, Record, ThreadIdx, TraceReader};

use crate::analysis::Analysis;
use crate::asyncs::{self, CallState, Calls, Role, Roles};
use crate::fxmap::DenseMap;
use crate::model::{EndKind, Frame, ROOT, SegmentRef, Tables};
use crate::reorder::{Ahead, Batch, Item, Reorder};
use crate::sink::{AnalysisError, FrameSink, NullSink};
use crate::stack::{Completed, Open, ThreadState};
use crate::stats::{Count, Stats, shown};

/// What to analyse and what to build.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Analyse only the threads with these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    /// Build the [`CallTree`] (needed for folded stacks; costs a hash lookup per call).
    pub call_tree: bool,
}

/// Diagnostics kept at most; more are counted in the last message.
const MAX_DIAGNOSTICS: usize = 1000;

/// How many dispatch stack pointers a thread remembers.
const DISPATCH_SPS: usize = 8;

/// Remembers a dispatch stack pointer of a thread, and its distances to the others in `calls`.
fn note_dispatch_sp(st: &mut ThreadState, sp: u64, calls: &mut Calls) {
    if sp == 0 || st.dispatch_sps.contains(&sp) {
        return;
    }
    for &other in &st.dispatch_sps {
        calls.note_dispatch_delta(other.abs_diff(sp));
    }
    if st.dispatch_sps.len() == DISPATCH_SPS {
        st.dispatch_sps.remove(0);
    }
    st.dispatch_sps.push(sp);
}

/// Whether `sp` is one of a thread's dispatch stack pointers, seen there or at a distance
/// from one that another thread showed between two of its own.
fn is_dispatch_sp(st: &ThreadState, sp: u64, calls: &Calls) -> bool {
    st.dispatch_sps.iter().any(|&d| {
        d == sp
            || calls
                .dispatch_deltas
                .iter()
                .any(|&delta| d.abs_diff(sp) == delta)
    })
}

/// The lowest frame that is a runtime-async segment whose logical call went on in a later
/// segment (on another thread): it suspended, and everything above it is gone too. Only
/// runtime-async variants suspend without a Leave: a state machine's `MoveNext` always
/// returns with one, and its continuation may start on another thread before it has (the
/// segment that scheduled it is still returning).
fn lowest_stale(
    st: &ThreadState,
    calls: &Calls,
    roles: &mut Roles,
    tables: &Tables,
) -> Option<usize> {
    if st.open_segments == 0 {
        return None;
    }
    st.stack.iter().position(|o| {
        roles.get(&tables.functions, o.func) == Role::Variant
            && o.segment.is_some_and(|s| {
                calls
                    .live
                    .get(&s.call)
                    .is_none_or(|l| l.started > s.index + 1)
            })
    })
}

/// What the frame-closing functions need besides the thread's state.
struct Ctx<'a, S: ?Sized> {
    stats: &'a mut Stats,
    tables: &'a mut Tables,
    roles: &'a mut Roles,
    calls: &'a mut Calls,
    /// The runtime reports a Leave when a runtime-async method suspends.
    suspend_leaves: bool,
    thread: ThreadIdx,
    sink: &'a mut S,
}

/// A streaming analysis: feed it records with [`Analyzer::record`], then call
/// [`Analyzer::finish`]. [`analyze_with`] does this for a reader.
pub struct Analyzer {
    tables: Tables,
    stats: Stats,
    states: DenseMap<ThreadState>,
    roles: Roles,
    calls: Calls,
    suspend_leaves: bool,
    reorder: Reorder,
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
            stats: Stats::new(opts.call_tree),
            states: DenseMap::default(),
            roles: Roles::default(),
            calls: Calls::default(),
            suspend_leaves: false,
            reorder: Reorder::default(),
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

    /// Capacity (in events) of all the threads' reorder queues, and how many threads are
    /// waiting to be analysed (tests: memory stays bounded by what is queued).
    #[cfg(test)]
    pub(crate) fn queued_capacity(&self) -> (usize, usize) {
        self.reorder.queued_capacity()
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
                self.suspend_leaves = asyncs::runtime_reports_suspend_leaves(&info);
                self.tables.info = info;
            }
            Record::Function(f) => {
                self.roles.record_read(&f);
                self.tables.functions.insert(f);
            }
            Record::Thread(t) => self.tables.threads.insert(t),
            Record::Events { thread, events } => self.enqueue(thread, &events, sink)?,
            Record::Dropped { thread, count } => {
                let selected = self.selected(thread);
                self.stats.dropped(thread, count, selected);
                if selected {
                    self.reorder.push_dropped(thread);
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

    /// Takes a chunk of a thread's events into the reorder queue, then analyses what is
    /// old enough (see [`Reorder`]).
    fn enqueue<S: FrameSink + ?Sized>(
        &mut self,
        thread: ThreadIdx,
        events: &[Event],
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return Ok(());
        };
        let (first, last) = (self.to_ns(first.ts), self.to_ns(last.ts));
        let n = events.len() as u64;
        self.stats.chunk_read(n, first, last, !self.seen_events);
        self.seen_events = true;
        if !self.selected(thread) {
            return Ok(());
        }
        self.stats.chunk_analysed(thread, n, first);
        let (info, origin) = (&self.tables.info, self.origin_ticks);
        let limit = self.reorder.push_events(thread, events, |ts| {
            info.ticks_to_ns(ts.saturating_sub(origin))
        });
        self.drain(limit, sink)
    }

    /// Analyses the queued events up to time `limit`, in time order across threads.
    fn drain<S: FrameSink + ?Sized>(
        &mut self,
        limit: u64,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let Analyzer {
            reorder,
            states,
            stats,
            tables,
            roles,
            calls,
            suspend_leaves,
            ..
        } = self;
        reorder.drain(limit, |thread, batch| {
            let st = states.entry(thread.0, ThreadState::default);
            let mut cx = Ctx {
                stats: &mut *stats,
                tables: &mut *tables,
                roles: &mut *roles,
                calls: &mut *calls,
                suspend_leaves: *suspend_leaves,
                thread,
                sink: &mut *sink,
            };
            run_thread(st, &mut cx, batch)
        })
    }
}

/// Analyses a batch of one thread's queued items.
fn run_thread<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    batch: &mut Batch<'_>,
) -> Result<(), AnalysisError> {
    while let Some((ns, item)) = batch.next_item() {
        match item {
            Item::Event(e) => step(st, cx, &e, ns, batch.ahead())?,
            Item::Dropped => {
                let at = st.last_ns;
                let lost = close_all(st, cx, at, EndKind::Lost)?;
                st.after_completion = None;
                st.last_left = None;
                cx.stats.count(cx.thread, Count::Lost, lost);
            }
        }
    }
    if let Some(ts) = cx.stats.threads.get_mut(cx.thread.0) {
        ts.last_ns = st.last_ns;
    }
    Ok(())
}

/// One event of a thread, at `ns`; `ahead` holds the thread's next events already read.
fn step<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    e: &Event,
    ns: u64,
    ahead: Ahead<'_>,
) -> Result<(), AnalysisError> {
    let next = ahead.events().next().copied();
    let thread = cx.thread;
    if e.kind == EventKind::Value {
        if !std::mem::take(&mut st.skip_value) {
            attach_value(st, cx, e.func.0);
        }
        return Ok(());
    }
    st.skip_value = false;
    // The activity before this event: when this event shows frames gone without a Leave,
    // they ended no later than that.
    let before = st.last_ns;
    st.last_ns = ns;
    if st.stack.last().is_some_and(|o| o.unresolved) {
        resolve_top(st, cx, e);
    }
    let after_completion = st.after_completion.take();
    st.last_left = None;
    match e.kind {
        EventKind::Enter => {
            if let Some(i) = lowest_stale(st, cx.calls, &mut *cx.roles, cx.tables) {
                reveal_above(st, cx, i, before)?;
            }
            if dispatched_below_segments(st, cx, e, ahead) {
                reveal_above(st, cx, 0, before)?;
            }
            if e.sp != 0 {
                reveal(st, cx, |sp| sp <= e.sp, before)?;
            }
            let prefer = stale_below(st, cx, e.func.0, before)?;
            enter(st, cx, e, ns, after_completion, prefer);
        }
        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
            if e.sp != 0 {
                reveal(st, cx, |sp| sp < e.sp, ns)?;
            }
            let kind = match e.kind {
                EventKind::Leave => EndKind::Leave,
                EventKind::Tailcall => EndKind::Tailcall,
                _ => EndKind::Unwind,
            };
            // A return value follows its Leave directly (record --values).
            let value = next
                .filter(|v| v.kind == EventKind::Value)
                .map(|v| v.func.0);
            st.skip_value = value.is_some();
            leave(st, cx, e.func, ns, kind, value)?;
        }
        EventKind::Catch => {
            if st.has_frame_of(e.func.0) {
                while st.stack.last().is_some_and(|o| o.func != e.func.0) {
                    close_top(st, cx, ns, EndKind::Catch, None)?;
                }
            }
        }
        EventKind::Throw => {
            cx.stats.count(thread, Count::Throws, 1);
        }
        EventKind::Value => {}
    }
    Ok(())
}

impl Analyzer {
    /// Closes the frames still open (at the trace's last timestamp) and returns the result.
    pub fn finish<S: FrameSink + ?Sized>(
        mut self,
        truncated: bool,
        sink: &mut S,
    ) -> Result<Analysis, AnalysisError> {
        self.drain(u64::MAX, sink)?;
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
            let mut cx = Ctx {
                stats: &mut self.stats,
                tables: &mut self.tables,
                roles: &mut self.roles,
                calls: &mut self.calls,
                suspend_leaves: self.suspend_leaves,
                thread: ThreadIdx(k),
                sink,
            };
            if st.stack.last().is_some_and(|o| o.unresolved) {
                // No event followed: a thunk would have been followed by its variant.
                let f = st.stack.last().map_or(0, |o| o.func);
                cx.roles.learn(&mut cx.tables.functions, f, Role::Variant);
                classify_top(st, &mut cx, 0, None, None);
            }
            // A segment whose call went on elsewhere suspended: it and the frames above it
            // ended with the thread's last activity.
            if let Some(i) = lowest_stale(st, cx.calls, &mut *cx.roles, cx.tables) {
                let at = st.last_ns;
                reveal_above(st, &mut cx, i, at)?;
            }
            let open = close_all(st, &mut cx, last, EndKind::OpenAtEnd)?;
            self.stats.count(ThreadIdx(k), Count::OpenAtEnd, open);
        }
        // Logical calls still waiting for a resume: suspended ones stay pending; one that
        // left with a Leave that may have been a suspension completed there.
        for (id, l) in self.calls.drain() {
            let pending = l.state == CallState::Suspended;
            self.stats.settle(&self.tables, l.summary(id), pending);
        }
        // Threads with a record but no events are listed too (if selected).
        let idxs: Vec<ThreadIdx> = self.tables.threads.iter().map(|t| t.idx).collect();
        for t in idxs {
            if self.selected(t) {
                self.stats.thread(t);
            }
        }
        if self.extra_diagnostics > 0 {
            self.diagnostics
                .push(format!("… and {} more diagnostics", self.extra_diagnostics));
        }
        Ok(self
            .stats
            .into_analysis(self.tables, self.end, truncated, self.diagnostics))
    }
}

/// A Value event: arguments of the frame just entered, or the return value of the frame the
/// previous event closed.
fn attach_value<S: ?Sized>(st: &mut ThreadState, cx: &mut Ctx<'_, S>, id: u32) {
    if let Some((func, call)) = st.last_left.take() {
        // Shown only at a completion: on a runtime that reports suspension Leaves a later
        // resume of the call takes it back (see `link_resume`).
        if let Some(c) = call {
            if let Some(l) = cx.calls.live.get_mut(&c) {
                l.leave_value = Some(id);
            } else {
                // Already settled (a completion on .NET 10): patch its sample.
                cx.stats.patch_leave_sample(func, c, id);
            }
        } else {
            cx.stats.patch_leave_sample(func, u64::MAX, id);
        }
        return;
    }
    if let Some(top) = st.stack.last_mut() {
        if top.enter_value.is_none() {
            top.enter_value = Some(id);
            if let Some(seg) = top.segment {
                if seg.index == 0 {
                    if let Some(l) = cx.calls.live.get_mut(&seg.call) {
                        l.enter_value = Some(id);
                    }
                }
            }
        }
    }
}

/// The top frame is a runtime-async function whose role was unknown: the event after its
/// Enter decides. A thunk's next event is the Enter of its own variant.
fn resolve_top<S: ?Sized>(st: &mut ThreadState, cx: &mut Ctx<'_, S>, e: &Event) {
    let Some(top) = st.stack.last() else {
        return;
    };
    let f = top.func;
    let thunk = e.kind == EventKind::Enter
        && match (
            cx.tables.functions.get(FunctionIdx(f)),
            cx.tables.functions.get(e.func),
        ) {
            (Some(a), Some(b)) => asyncs::same_async_method(a, b),
            _ => false,
        };
    if thunk {
        cx.roles.learn(&mut cx.tables.functions, f, Role::Thunk);
        cx.roles
            .learn(&mut cx.tables.functions, e.func.0, Role::Variant);
        if let Some(top) = st.stack.last_mut() {
            top.unresolved = false;
        }
        // A thunk is an ordinary frame: its call was not counted yet.
    } else {
        cx.roles.learn(&mut cx.tables.functions, f, Role::Variant);
        classify_top(st, cx, e.sp, None, None);
    }
}

/// Pops the frames that `gone(frame sp)` says the stack has left behind, as ended without a
/// Leave at `ns`: segments of async methods suspended, other frames vanished.
fn reveal<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    gone: impl Fn(u64) -> bool,
    ns: u64,
) -> Result<(), AnalysisError> {
    let keep = st
        .stack
        .iter()
        .rposition(|o| o.sp == 0 || !gone(o.sp))
        .map_or(0, |i| i + 1);
    reveal_above(st, cx, keep, ns)
}

/// Pops the frames at `keep` and above as ended without a Leave at `ns`.
fn reveal_above<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    keep: usize,
    ns: u64,
) -> Result<(), AnalysisError> {
    while st.stack.len() > keep {
        let Some(top) = st.stack.last() else {
            break;
        };
        let role = cx.roles.get(&cx.tables.functions, top.func);
        if top.segment.is_some() && role == Role::Variant {
            close_top(st, cx, ns, EndKind::Suspend, None)?;
            cx.stats.count(cx.thread, Count::Suspended, 1);
        } else {
            close_top(st, cx, ns, EndKind::Vanished, None)?;
            cx.stats.count(cx.thread, Count::Vanished, 1);
        }
    }
    Ok(())
}

fn enter<S: ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    e: &Event,
    ns: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) {
    let f = e.func.0;
    let stats = &mut *cx.stats;
    let parent_node = st.stack.last().and_then(|o| o.node);
    let node = stats.tree.as_mut().map(|t| t.child(parent_node, e.func));
    st.push(f, ns, e.sp, node);
    stats.reached_depth(cx.thread, st.stack.len() as u32);
    match cx.roles.get(&cx.tables.functions, f) {
        Role::Variant | Role::StateMachine => classify_top(st, cx, e.sp, after_completion, prefer),
        Role::Unresolved => {
            if let Some(top) = st.stack.last_mut() {
                top.unresolved = true;
            }
        }
        Role::Plain | Role::Thunk => {}
    }
}

/// Decides whether the top frame (a segment of an async method) starts a logical call or
/// resumes one, and which.
fn classify_top<S: ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    sp: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) {
    let n = st.stack.len();
    let Some(top) = st.stack.last() else {
        return;
    };
    let f = top.func;
    let start = top.start;
    let top_sp = top.sp;
    let role = cx.roles.get(&cx.tables.functions, f);
    let parent = n.checked_sub(2).map(|i| st.stack[i]);
    if parent.is_none() && role == Role::Variant {
        note_dispatch_sp(st, top_sp, cx.calls);
    }
    let initial_caller = initial_evidence(cx, f, role, parent.as_ref());
    let resumed = match initial_caller {
        Some(_) => None,
        None => link_resume(cx, f, sp, after_completion, prefer)
            .or_else(|| cx.calls.pick_running_elsewhere(f, cx.thread.0)),
    };
    if initial_caller.is_some() && role == Role::Variant {
        if let Some(p) = parent.filter(|p| p.func == f && p.sp > top_sp && top_sp != 0) {
            let unknown = cx
                .calls
                .call_deltas(f)
                .is_none_or(|d| !d.contains(&(p.sp - top_sp)));
            let only_segments = st.stack[..n - 1].iter().all(|o| o.segment.is_some());
            if unknown && only_segments && !cx.calls.has_waiting(f) {
                cx.stats.function(f).ambiguous_calls += 1;
            }
        }
    }
    let (call, index, inferred) = match (initial_caller, resumed) {
        (Some(caller), _) => (new_call(cx, f, caller, start), 0, false),
        (None, Some((id, inferred))) => {
            // A call resumes once the callee it awaited is over, also when that callee never
            // resumed (an exception passed it) or its last segment is still open on another
            // thread (its thread not analysed that far). For every way a resume is linked.
            for (cid, c) in cx.calls.finish_callees(id) {
                cx.stats.settle(cx.tables, c.summary(cid), false);
            }
            let l = cx.calls.live.get_mut(&id).expect("picked calls are live");
            let index = l.started;
            l.inferred |= inferred;
            let fs = cx.stats.function(f);
            fs.resumes += 1;
            if inferred {
                fs.inferred_resumes += 1;
            }
            (id, index, inferred)
        }
        // A resume that continues nothing seen (the trace began later, or its first call was
        // not recorded): counted as a call of its own.
        (None, None) => (new_call(cx, f, None, start), 0, false),
    };
    if let Some(l) = cx.calls.live.get_mut(&call) {
        l.started += 1;
        l.thread = cx.thread.0;
    }
    st.mark_segment(SegmentRef {
        call,
        index,
        inferred,
    });
}

/// Whether entering `f` (of segmented `role`) on top of `parent` is a first call, and then
/// the caller's logical call. The evidence: the variant's own thunk, or an async caller
/// (runtime-async methods call each other's variants directly); for a state machine, its
/// kickoff method.
fn initial_evidence<S: ?Sized>(
    cx: &mut Ctx<'_, S>,
    f: u32,
    role: Role,
    parent: Option<&Open>,
) -> Option<Option<u64>> {
    let p = parent?;
    let record = cx.tables.functions.get(FunctionIdx(f));
    let prec = cx.tables.functions.get(FunctionIdx(p.func));
    match role {
        Role::StateMachine => match (record, prec) {
            (Some(r), Some(pr)) if asyncs::is_kickoff(r, pr) => Some(None),
            _ => None,
        },
        _ => {
            let prole = cx.roles.get(&cx.tables.functions, p.func);
            match (record, prec) {
                (Some(r), Some(pr)) if prole == Role::Thunk && asyncs::same_async_method(pr, r) => {
                    Some(None)
                }
                _ if prole == Role::Variant && p.segment.is_some() => {
                    Some(p.segment.map(|s| s.call))
                }
                _ => None,
            }
        }
    }
}

/// Whether Enter `e` is a resume of runtime-async variant `f` by one of this thread's
/// dispatchers, reached below segments that suspended: the stack holds only runtime-async
/// segments, all above `e`'s stack pointer, and either `e` comes at one of the thread's
/// dispatch stack pointers (where a variant was resumed before with nothing below it, or at a
/// distance from one that separates two dispatch stack pointers on some thread) and a call
/// of `f` could be resumed, or the top segment is `f`'s own and `e` is not a direct call from
/// it (see below). A dispatcher runs
/// continuations from the bottom of the thread's stack, not from inside a segment: the thread
/// has left those segments (they suspended) and reached its dispatcher by a deeper path than
/// before (e.g. the timer queue, which resumes a `Task.Delay` 0x490 bytes below the thread
/// pool's dispatch on .NET 10), so the stack pointer alone does not show them gone.
fn dispatched_below_segments<S: ?Sized>(
    st: &ThreadState,
    cx: &mut Ctx<'_, S>,
    e: &Event,
    ahead: Ahead<'_>,
) -> bool {
    let f = e.func.0;
    let Some(top) = st.stack.last() else {
        return false;
    };
    if e.sp == 0 || top.sp <= e.sp || cx.roles.get(&cx.tables.functions, f) != Role::Variant {
        return false;
    }
    let all_segments = st.stack.iter().all(|o| {
        o.sp > e.sp
            && o.segment.is_some()
            && cx.roles.get(&cx.tables.functions, o.func) == Role::Variant
    });
    if !all_segments {
        return false;
    }
    let waiting = cx.calls.has_waiting(f);
    if is_dispatch_sp(st, e.sp, cx.calls) {
        // Something to resume: a waiting call of f, or one whose segment is on this stack.
        return waiting || st.stack.iter().any(|o| o.func == f);
    }
    // The top segment is of f itself, and f enters deeper than any direct call from f goes
    // (f's frame size, known from a direct callee that returned): it came through frames
    // without probes, so it is not a recursive call but a resume, and the segment suspended
    // (a dispatcher below it, as above; e.g. the timer queue resuming one of several waiting
    // Workers on a pool thread). An inline continuation inside a still running segment would
    // be misread here; .NET 10's runtime-async dispatch was not seen to make one.
    // Where no call from f has returned yet, the thread's next events may show one (f's
    // frame size is the same in every frame of f of one compilation).
    if top.func != f {
        return false;
    }
    if cx.calls.call_deltas(f).is_none() {
        if let Some(d) = call_delta_ahead(e, ahead, f) {
            cx.calls.note_call_delta(f, d);
        }
    }
    cx.calls
        .call_deltas(f)
        .is_some_and(|d| !d.contains(&(top.sp - e.sp)))
}

/// How many queued events [`call_delta_ahead`] looks at.
const LOOK_AHEAD: usize = 4096;

/// In a thread's event `e` and its next events: a frame of `f` (an Enter of `f` at P) whose
/// next event is an Enter of another method at Q below P, and that callee's Leave at Q before
/// anything comes back up to P: a direct call from `f` that returned, `P - Q` below `f`'s
/// stack pointer.
fn call_delta_ahead(e: &Event, ahead: Ahead<'_>, f: u32) -> Option<u64> {
    let events: Vec<&Event> = std::iter::once(e)
        .chain(ahead.events().take(LOOK_AHEAD))
        .collect();
    for (i, e) in events.iter().enumerate() {
        if e.kind != EventKind::Enter || e.func.0 != f || e.sp == 0 {
            continue;
        }
        let Some(callee) = events.get(i + 1) else {
            break;
        };
        // A deeper Enter of f itself is what is in question (a recursion or a resume).
        if callee.kind != EventKind::Enter
            || callee.sp == 0
            || callee.sp >= e.sp
            || callee.func.0 == f
        {
            continue;
        }
        for later in &events[i + 2..] {
            if later.kind == EventKind::Leave && later.sp == callee.sp && later.func == callee.func
            {
                return Some(e.sp - callee.sp);
            }
            if later.sp >= e.sp {
                break;
            }
        }
    }
    None
}

/// Before a resume of runtime-async `f` is pushed: a segment of a running call of `f` lower
/// on this very stack cannot be running (a call does not resume inside itself): it
/// suspended, and the thread came back deeper than it (e.g. a timer callback), so the stack
/// pointer did not show it gone. Pops it and what is above it; returns its call.
fn stale_below<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    f: u32,
    before: u64,
) -> Result<Option<u64>, AnalysisError> {
    if st.open_segments == 0 || cx.roles.get(&cx.tables.functions, f) != Role::Variant {
        return Ok(None);
    }
    if initial_evidence(cx, f, Role::Variant, st.stack.last()).is_some() {
        return Ok(None);
    }
    let found = st.stack.iter().rposition(|o| {
        o.func == f
            && o.segment.is_some_and(|s| {
                cx.calls
                    .live
                    .get(&s.call)
                    .is_some_and(|l| l.state == CallState::Running && l.started == s.index + 1)
            })
    });
    let Some(i) = found else {
        return Ok(None);
    };
    let call = st.stack[i].segment.map(|s| s.call);
    reveal_above(st, cx, i, before)?;
    Ok(call)
}

fn new_call<S: ?Sized>(cx: &mut Ctx<'_, S>, f: u32, caller: Option<u64>, start: u64) -> u64 {
    cx.stats.function(f).calls += 1;
    cx.stats.totals.logical_calls += 1;
    cx.calls.start(f, caller, start)
}

/// The waiting logical call of `f` that a resume at `sp` continues, and whether only order
/// chose it.
fn link_resume<S: ?Sized>(
    cx: &mut Ctx<'_, S>,
    f: u32,
    sp: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) -> Option<(u64, bool)> {
    // A dispatcher that completed a call resumes that call's caller next, at the same sp.
    let chained = after_completion.filter(|c| {
        c.sp == sp
            && sp != 0
            && cx.calls.live.get(&c.caller).is_some_and(|l| l.func == f)
            && cx.calls.waiting(c.caller)
    });
    let prefer = prefer.filter(|&p| cx.calls.waiting(p));
    let (id, inferred, prev) = match chained {
        _ if prefer.is_some() => {
            let p = prefer?;
            (p, false, cx.calls.take(p)?)
        }
        Some(c) => {
            // That also proves the completed call complete (where its Leave could have been
            // a suspension).
            if let Some(done) = c.done {
                if let Some(l) = cx.calls.finish(done) {
                    cx.stats.settle(cx.tables, l.summary(done), false);
                }
            }
            (c.caller, false, cx.calls.take(c.caller)?)
        }
        None => cx.calls.pick(f)?,
    };
    if prev == CallState::LeftOpen {
        // The Leave that ended its last segment was a suspension after all: no completion
        // value either.
        cx.stats.function(f).suspensions += 1;
        if let Some(l) = cx.calls.live.get_mut(&id) {
            l.leave_value = None;
        }
        prove_callers_suspended(cx, id);
    }
    Some((id, inferred))
}

/// Call `id`'s last Leave was just proven a suspension. A runtime-async method whose callee
/// suspends suspends too, right away: its segment that was running below that callee ended
/// by suspending. So a caller whose latest segment ended with a Leave after the callee's, and
/// that is still waiting, suspended there too (also when it is never resumed, e.g. when an
/// exception passes it by), and so on up the chain of callers.
fn prove_callers_suspended<S: ?Sized>(cx: &mut Ctx<'_, S>, id: u64) {
    let mut child = id;
    while let Some(l) = cx.calls.live.get(&child) {
        let (child_end, caller) = (l.last_end, l.caller);
        let Some(p) = caller else {
            break;
        };
        let proven = cx
            .calls
            .live
            .get(&p)
            .is_some_and(|pl| pl.state == CallState::LeftOpen && pl.last_end >= child_end);
        if !proven {
            break;
        }
        let _ = cx.calls.take(p);
        cx.calls.park_suspended(p);
        if let Some(pl) = cx.calls.live.get_mut(&p) {
            pl.leave_value = None;
            let func = pl.func;
            cx.stats.function(func).suspensions += 1;
        }
        child = p;
    }
}

#[allow(clippy::too_many_arguments)]
fn leave<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    func: FunctionIdx,
    ns: u64,
    kind: EndKind,
    value: Option<u32>,
) -> Result<(), AnalysisError> {
    if !st.has_frame_of(func.0) {
        cx.stats.count(cx.thread, Count::UnmatchedLeaves, 1);
        return Ok(());
    }
    while let Some(top) = st.stack.last() {
        if top.func == func.0 {
            let closed = close_top(st, cx, ns, kind, value)?;
            if kind == EndKind::Leave {
                if value.is_none() {
                    st.last_left = Some((func.0, closed.segment.map(|s| s.call)));
                }
                if let (Some(seg), Some(caller)) = (closed.segment, closed.caller) {
                    st.after_completion = Some(Completed {
                        done: closed.live.then_some(seg.call),
                        caller,
                        sp: closed.sp,
                    });
                }
            }
            break;
        }
        close_top(st, cx, ns, EndKind::Mismatched, None)?;
        cx.stats.count(cx.thread, Count::Mismatched, 1);
    }
    Ok(())
}

/// Closes every open frame of a thread at `ns`; returns how many.
fn close_all<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    ns: u64,
    kind: EndKind,
) -> Result<u64, AnalysisError> {
    let mut n = 0;
    while !st.stack.is_empty() {
        close_top(st, cx, ns, kind, None)?;
        n += 1;
    }
    Ok(n)
}

/// What [`close_top`] closed.
struct Closed {
    sp: u64,
    segment: Option<SegmentRef>,
    /// The caller of the segment's logical call.
    caller: Option<u64>,
    /// The logical call is still waiting (its Leave may have been a suspension).
    live: bool,
}

/// Pops the top frame (the stack must not be empty), ends it at `ns`, updates the statistics
/// and hands it to the sink.
fn close_top<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_, S>,
    ns: u64,
    kind: EndKind,
    leave_value: Option<u32>,
) -> Result<Closed, AnalysisError> {
    let Some(o) = st.pop() else {
        return Ok(Closed {
            sp: 0,
            segment: None,
            caller: None,
            live: false,
        });
    };
    let end = ns.max(o.start);
    let dur = end - o.start;
    let caller = match st.stack.last_mut() {
        Some(p) => {
            p.children += dur;
            if kind == EndKind::Leave && p.sp > o.sp && o.sp != 0 && p.func != o.func {
                // A call that returned: how far below its caller's stack pointer a direct
                // call of that caller enters. (Not from a frame of the same method: that may
                // be a resume below a suspended segment taken for a recursion.)
                cx.calls.note_call_delta(p.func, p.sp - o.sp);
            }
            Some(p.func)
        }
        None => None,
    };
    cx.stats.frame_closed(cx.thread, &o, caller, dur, kind);
    let caller = caller.unwrap_or(ROOT);
    let stats = &mut *cx.stats;

    // Segments: account the logical call; decide what its end means.
    let mut closed = Closed {
        sp: o.sp,
        segment: o.segment,
        caller: None,
        live: false,
    };
    let role = cx.roles.get(&cx.tables.functions, o.func);
    let mut show_leave = kind == EndKind::Leave;
    if let Some(seg) = o.segment {
        let stale;
        if let Some(l) = cx.calls.live.get_mut(&seg.call) {
            l.segments += 1;
            l.cpu_ns += dur;
            l.last_end = l.last_end.max(end);
            closed.caller = l.caller;
            // The call already went on in a later segment: this one suspended, and the call's
            // state belongs to the later one.
            stale = l.started > seg.index + 1;
        } else {
            stale = true;
        }
        if stale {
            show_leave = false;
        }
        match kind {
            // A later segment of its call already began (e.g. a resume on another thread
            // analysed before this Leave): whatever ended it, it suspended.
            _ if stale => {
                if kind != EndKind::Suspend {
                    stats.function(o.func).suspensions += 1;
                }
            }
            EndKind::Suspend => {
                cx.calls.park_suspended(seg.call);
                closed.live = true;
                show_leave = false;
            }
            EndKind::Leave if role == Role::Variant && !cx.suspend_leaves => {
                // .NET 10 reports no Leave at a suspension: this Leave completes the call.
                if let Some(l) = cx.calls.live.get_mut(&seg.call) {
                    l.leave_value = leave_value;
                }
                if let Some(l) = cx.calls.finish(seg.call) {
                    stats.settle(cx.tables, l.summary(seg.call), false);
                }
            }
            EndKind::Leave => {
                // A suspension or the completion: a later resume of the call tells.
                if let Some(l) = cx.calls.live.get_mut(&seg.call) {
                    l.leave_value = leave_value;
                }
                cx.calls.park_left_open(seg.call);
                closed.live = true;
                show_leave = false;
            }
            _ => {
                if let Some(l) = cx.calls.finish(seg.call) {
                    stats.settle(cx.tables, l.summary(seg.call), false);
                }
            }
        }
    } else if o.enter_value.is_some() || leave_value.is_some() {
        let args = shown(cx.tables, o.enter_value);
        let ret = shown(cx.tables, leave_value.filter(|_| show_leave));
        stats.push_sample(o.func, u64::MAX, args, ret);
    }

    let first_segment = o.segment.is_none_or(|s| s.index == 0);
    let frame = Frame {
        func: FunctionIdx(o.func),
        start_ns: o.start,
        end_ns: end,
        depth: st.stack.len() as u32,
        parent: (caller != ROOT).then_some(FunctionIdx(caller)),
        children_ns: o.children,
        end: kind,
        node: o.node,
        sp: o.sp,
        segment: o.segment,
        enter_value: shown(cx.tables, o.enter_value.filter(|_| first_segment)),
        leave_value: shown(cx.tables, leave_value.filter(|_| show_leave)),
    };
    cx.sink
        .frame(cx.tables, cx.thread, &frame)
        .map_err(AnalysisError::Sink)?;
    Ok(closed)
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
