//! The replay of each thread's events against its shadow stack (docs/design.md "Analysis
//! semantics"): Enter pushes a frame; Leave, Tailcall and Unwind close the function's frame
//! (frames above it as mismatched, a Leave without one is unmatched); Catch closes the frames
//! above the catcher; a drop closes the thread's frames as lost; frames that a later event's
//! stack pointer shows gone end without a Leave. Every closed frame goes to the statistics and
//! the sink. Async segments are handed to the rules of `asyncs::link` at named points, each
//! given the async rules' part of the replay's own context (`context`: an `asyncs::Env`).
//!
//! ```text
//! t=0   enter   A  sp=0x9000    stack: A      push
//! t=10  enter   B  sp=0x8f00    stack: A B    push
//! t=20  unwind  B  sp=0x8f00    stack: A      B ends by an exception (unwound)
//! t=30  enter   C  sp=0x9000    stack: C      at A's sp: A's frame is gone (vanished)
//! ```

use eltrace_trace::{Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, TraceInfo};

use crate::asyncs::link;
use crate::asyncs::{Calls, Role, Roles};
use crate::fxmap::DenseMap;
use crate::iterators::{self, Iterators};
use crate::model::{EndKind, Tables};
use crate::reorder::{Ahead, Batch, Taken};
use crate::sink::{AnalysisError, FrameSink};
use crate::stack::{Completed, ThreadState};
use crate::stats::{Count, Stats};

mod ahead;
mod allocations;
mod close;
mod context;
mod quick;
mod values;

use close::{close_all, close_top, gone_from, reveal, reveal_above};
use context::Ctx;

#[cfg(test)]
pub(crate) use ahead::TAKEN_AHEAD;

/// The replay of every thread: their shadow stacks and what the async rules learn across
/// threads. The tables and statistics it writes to belong to the caller.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    states: DenseMap<ThreadState>,
    roles: Roles,
    calls: Calls,
    /// The runtime reports a Leave when a runtime-async method suspends.
    suspend_leaves: bool,
    /// Value events come before their Enter or Leave (INFO `values_first`).
    values_first: bool,
    /// Iterators' enumerations.
    iters: Iterators,
    /// `(thread, function)`: runtime-async frames of unknown role waiting for their thread's
    /// next event (see `link::resolve_elsewhere`).
    unresolved: Vec<(u32, u32)>,
    /// Every event takes the full rules (tests: the quick path gives the same results).
    pub(crate) no_quick_path: bool,
    /// No thread is replayed ahead of the others (tests: the results are the same).
    pub(crate) no_run_ahead: bool,
}

impl Replay {
    /// The trace's INFO record was read.
    pub fn info_read(&mut self, info: &TraceInfo) {
        self.suspend_leaves = info.async_suspend_leaves();
        self.values_first = info.values_first();
        // Continuations name calls across threads only where the threads' events come in
        // time order: in a timeless trace a resume may be replayed before the suspension
        // that allocated its continuation, on another thread.
        self.calls.by_identity =
            info.gc_epochs() && info.timing() == eltrace_trace::protocol::timing::EXACT;
    }

    /// A FUNCTION record was read (before it goes into the function table).
    pub fn function_read(&mut self, f: &FunctionRecord) {
        self.roles.record_read(f);
    }

    /// A thread's state and the replay's context, for one thread.
    fn thread<'a>(
        &'a mut self,
        tables: &'a mut Tables,
        stats: &'a mut Stats,
        thread: ThreadIdx,
    ) -> (&'a mut ThreadState, Ctx<'a>) {
        let st = self.states.entry(thread.0, ThreadState::default);
        let cx = Ctx {
            stats,
            tables,
            roles: &mut self.roles,
            calls: &mut self.calls,
            suspend_leaves: self.suspend_leaves,
            values_first: self.values_first,
            thread,
            iters: &mut self.iters,
            unresolved: &mut self.unresolved,
        };
        (st, cx)
    }

    /// Replays a batch of one thread's queued items.
    pub fn run<S: FrameSink + ?Sized>(
        &mut self,
        tables: &mut Tables,
        stats: &mut Stats,
        thread: ThreadIdx,
        batch: &mut Batch<'_>,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let quick = !self.no_quick_path;
        while let Some(taken) = batch.take() {
            let (from, to) = match taken {
                Taken::Events { from, to } => (from, to),
                Taken::Dropped(count) => {
                    let (st, mut cx) = self.thread(tables, stats, thread);
                    dropped(st, &mut cx, sink, count)?;
                    continue;
                }
            };
            let events = batch.events(from, to);
            let cold = batch.ahead();
            // An Enter that may decide another thread's frame of unknown role (rare) leaves
            // the inner loop, whose borrows of the thread's state end there, and is replayed
            // after.
            let mut i = 0;
            while i < events.len() {
                let (st, mut cx) = self.thread(tables, stats, thread);
                let cx = &mut cx;
                while let Some(e) = events.get(i) {
                    let ahead = cold.after(&events[i + 1..]);
                    if quick && quick::step(st, cx, sink, e, e.ts, ahead)? {
                        i += 1;
                        continue;
                    }
                    let other = |&(t, f): &(u32, u32)| t != thread.0 && f == e.func.0;
                    if e.kind == EventKind::Enter && cx.unresolved.iter().any(other) {
                        break;
                    }
                    step(st, cx, sink, e, e.ts, ahead)?;
                    i += 1;
                }
                if let Some(e) = events.get(i) {
                    let ahead = cold.after(&events[i + 1..]);
                    self.resolve_elsewhere(tables, stats, thread, e, ahead);
                    let (st, mut cx) = self.thread(tables, stats, thread);
                    step(st, &mut cx, sink, e, e.ts, ahead)?;
                    i += 1;
                }
            }
        }
        if self.may_run_ahead(stats, thread, sink) {
            self.run_ahead(tables, stats, thread, batch, sink)?;
        }
        let last_ns = self.states.get(thread.0).map_or(0, |st| st.last_ns);
        if let Some(ts) = stats.threads.get_mut(thread.0) {
            ts.last_ns = last_ns;
        }
        Ok(())
    }

    /// Before thread `thread` replays Enter `e` (its next events `ahead`): other threads'
    /// top frames of `e`'s function whose role waits for their next event are decided by
    /// this one (`link::resolve_elsewhere`). Entries of frames decided since are dropped.
    #[cold]
    fn resolve_elsewhere(
        &mut self,
        tables: &mut Tables,
        stats: &mut Stats,
        thread: ThreadIdx,
        e: &Event,
        ahead: Ahead<'_>,
    ) {
        let waiting = std::mem::take(&mut self.unresolved);
        let mut keep = Vec::with_capacity(waiting.len());
        for (t, f) in waiting {
            let open = self
                .states
                .get(t)
                .and_then(|st| st.stack.last())
                .is_some_and(|o| o.unresolved && o.func == f);
            if !open {
                continue;
            }
            if t == thread.0 || f != e.func.0 {
                keep.push((t, f));
                continue;
            }
            let (st, mut cx) = self.thread(tables, stats, ThreadIdx(t));
            if !link::resolve_elsewhere(st, &mut cx.asyncs(), e, ahead) {
                keep.push((t, f));
            }
        }
        keep.append(&mut self.unresolved);
        self.unresolved = keep;
    }

    /// At the end of the trace (its last timestamp `last`): closes every thread's frames
    /// still open and settles the logical calls still waiting.
    pub fn finish<S: FrameSink + ?Sized>(
        &mut self,
        tables: &mut Tables,
        stats: &mut Stats,
        last: u64,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let keys: Vec<u32> = self.states.iter().map(|(k, _)| k).collect();
        // Enumerations whose holders are still open end with the trace: pending.
        self.iters.ending();
        for k in keys {
            let (st, mut cx) = self.thread(tables, stats, ThreadIdx(k));
            let cx = &mut cx;
            link::resolve_at_end(st, &mut cx.asyncs());
            // A segment whose call went on elsewhere suspended: it, the frames above it and
            // the callers that awaited it ended with the thread's last activity.
            if let Some(i) = link::lowest_stale(st, &mut cx.asyncs()) {
                let at = st.last_ns;
                let keep = link::suspended_callers(st, &mut cx.asyncs(), i);
                reveal_above(st, cx, sink, keep, at)?;
            }
            let open = close_all(st, cx, sink, last, EndKind::OpenAtEnd)?;
            cx.stats.count(ThreadIdx(k), Count::OpenAtEnd, open);
        }
        link::settle_remaining(&mut self.calls, stats, tables);
        iterators::finish(&mut iterators::Env {
            iters: &mut self.iters,
            stats,
            tables,
            thread: 0,
        });
        Ok(())
    }
}

/// `count` events of a thread were dropped after its latest one: its frames are lost.
fn dropped<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    count: u64,
) -> Result<(), AnalysisError> {
    let at = st.last_ns;
    let lost = close_all(st, cx, sink, at, EndKind::Lost)?;
    st.after_completion = None;
    st.last_left = None;
    st.pending_value = None;
    cx.stats.count(cx.thread, Count::Lost, lost);
    sink.dropped(cx.tables, cx.thread, at, count)
        .map_err(AnalysisError::Sink)
}

/// One event of a thread, at `ns`; `ahead` holds the thread's next events already read.
#[inline(always)]
fn step<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    e: &Event,
    ns: u64,
    ahead: Ahead<'_>,
) -> Result<(), AnalysisError> {
    if e.kind == EventKind::Value {
        values::read(st, cx, e.func.0);
        return Ok(());
    }
    if e.kind == EventKind::Continuation {
        st.pending_cont = Some((e.func.0, e.sp));
        return Ok(());
    }
    st.skip_value = false;
    // The value held for this event (INFO `values_first`); other kinds drop it.
    let held = st.pending_value.take();
    // The activity before this event: when this event shows frames gone without a Leave,
    // they ended no later than that.
    let before = st.last_ns;
    st.last_ns = ns;
    if st.stack.last().is_some_and(|o| o.unresolved) {
        link::resolve_top(st, &mut cx.asyncs(), e, ahead.events(), None, None);
    }
    let role = match e.kind {
        EventKind::Enter | EventKind::Leave => cx.roles.get(&cx.tables.functions, e.func.0),
        _ => Role::Plain,
    };
    if role == Role::Allocator {
        if e.kind == EventKind::Enter {
            // Selected (`--include '*'`): a frame of its own, whose callees nest under it.
            allocations::reveal_gone(st, cx, sink, e, before)?;
            enter(st, cx, e, ns, None, None, ahead);
            if let Some(id) = held {
                values::args(st, cx, id);
            }
            return Ok(());
        }
        let framed = st
            .stack
            .last()
            .is_some_and(|o| o.func == e.func.0 && o.sp == e.sp);
        allocations::allocated(st, cx, sink, e, before, framed)?;
        if !framed {
            return Ok(());
        }
    }
    if role == Role::Boxer && e.kind == EventKind::Leave && !allocations::boxed(st, cx, e) {
        return Ok(());
    }
    let after_completion = st.after_completion.take();
    st.last_left = None;
    match e.kind {
        EventKind::Enter => {
            st.cont = st
                .pending_cont
                .take()
                .filter(|&(f, _)| f == e.func.0)
                .map(|(_, c)| c);
            if let Some(i) = link::lowest_stale(st, &mut cx.asyncs()) {
                let keep = link::suspended_callers(st, &mut cx.asyncs(), i);
                reveal_above(st, cx, sink, keep, before)?;
            }
            if link::dispatched_below_segments(st, &mut cx.asyncs(), e, ahead) {
                reveal_above(st, cx, sink, 0, before)?;
            }
            if e.sp != 0 {
                // Usually nothing is gone: the rules below are not asked.
                let gone = gone_from(st, |sp| sp <= e.sp);
                if gone < st.stack.len() {
                    let keep = link::suspended_callers(st, &mut cx.asyncs(), gone);
                    reveal_above(st, cx, sink, keep, before)?;
                }
            }
            let prefer = match link::stale_below(st, &mut cx.asyncs(), e.func.0) {
                Some((i, call)) => {
                    reveal_above(st, cx, sink, i, before)?;
                    Some(call)
                }
                None => None,
            };
            enter(st, cx, e, ns, after_completion, prefer, ahead);
            if let Some(id) = held {
                values::args(st, cx, id);
            }
        }
        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
            if e.sp != 0 {
                reveal(st, cx, sink, |sp| sp < e.sp, ns)?;
            }
            let kind = match e.kind {
                EventKind::Leave => EndKind::Leave,
                EventKind::Tailcall => EndKind::Tailcall,
                _ => EndKind::Unwind,
            };
            // The return value came just before (record --values), or follows in older traces.
            let value = if cx.values_first {
                held
            } else {
                values::ahead(st, ahead)
            };
            leave(st, cx, sink, e.func, ns, kind, value)?;
        }
        EventKind::Catch => {
            if st.has_frame_of(e.func.0) {
                while st.stack.last().is_some_and(|o| o.func != e.func.0) {
                    close_top(st, cx, sink, ns, EndKind::Catch, None)?;
                }
            }
        }
        EventKind::Throw => cx.stats.count(cx.thread, Count::Throws, 1),
        EventKind::Value | EventKind::Continuation => {}
    }
    Ok(())
}

/// Pushes a frame for Enter `e` at `ns`.
#[inline(always)]
fn enter(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    e: &Event,
    ns: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
    ahead: Ahead<'_>,
) {
    let parent_node = st.stack.last().and_then(|o| o.node);
    let lparent = st.stack.last().and_then(|o| o.lnode);
    let node = cx.stats.tree.as_mut().map(|t| t.child(parent_node, e.func));
    st.push(e.func.0, ns, e.sp, node);
    cx.stats.reached_depth(cx.thread, st.stack.len() as u32);
    if link::entered(st, &mut cx.asyncs(), e, after_completion, prefer, ahead) {
        cx.unresolved.push((cx.thread.0, e.func.0));
    }
    if let (Some(t), Some(top)) = (cx.stats.logical.as_mut(), st.stack.last_mut()) {
        // A segment's node was set when it was linked to its call (asyncs/link.rs).
        if top.lnode.is_none() {
            top.lnode = Some(t.child(lparent, e.func));
        }
    }
    let (mut env, roles) = cx.iter_env();
    iterators::entered(st, &mut env, e.func.0, ns, |r| roles.machine_kind(r));
}

/// A Leave, Tailcall or Unwind (`kind`) of `func` at `ns`, with return value `value`: closes
/// its frame, and the frames above it as mismatched.
fn leave<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
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
            let closed = close_top(st, cx, sink, ns, kind, value)?;
            if kind == EndKind::Leave {
                if value.is_none() && !cx.values_first {
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
        close_top(st, cx, sink, ns, EndKind::Mismatched, None)?;
        cx.stats.count(cx.thread, Count::Mismatched, 1);
    }
    Ok(())
}
