//! Closing frames: the top one ([`close_top`], to the statistics and the sink), all of a
//! thread's, and those a later event's stack pointer shows the stack has left behind
//! ([`reveal`]: ended without a Leave, as suspended or vanished).

use eltrace_trace::FunctionIdx;

use super::context::Ctx;
use crate::asyncs::link;
use crate::iterators;
use crate::model::{EndKind, Frame, ROOT, SegmentRef};
use crate::sink::{AnalysisError, FrameSink};
use crate::stack::ThreadState;
use crate::stats::{Count, shown};

/// Pops the frames that `gone(frame sp)` says the stack has left behind, as ended without a
/// Leave at `ns`.
#[inline(always)]
pub(super) fn reveal<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    gone: impl Fn(u64) -> bool,
    ns: u64,
) -> Result<(), AnalysisError> {
    let keep = gone_from(st, gone);
    if keep < st.stack.len() {
        reveal_above(st, cx, sink, keep, ns)?;
    }
    Ok(())
}

/// The index of the lowest frame above every frame that `gone(frame sp)` keeps.
pub(super) fn gone_from(st: &ThreadState, gone: impl Fn(u64) -> bool) -> usize {
    st.stack
        .iter()
        .rposition(|o| o.sp == 0 || !gone(o.sp))
        .map_or(0, |i| i + 1)
}

/// Pops the frames at `keep` and above as ended without a Leave at `ns`: segments of async
/// methods suspended, other frames vanished (see [`link::ended_without_leave`]).
pub(super) fn reveal_above<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    keep: usize,
    ns: u64,
) -> Result<(), AnalysisError> {
    while st.stack.len() > keep {
        let Some(top) = st.stack.last() else {
            break;
        };
        let kind = link::ended_without_leave(&mut cx.asyncs(), top);
        close_top(st, cx, sink, ns, kind, None)?;
        let counter = match kind {
            EndKind::Suspend => Count::Suspended,
            _ => Count::Vanished,
        };
        cx.stats.count(cx.thread, counter, 1);
    }
    Ok(())
}

/// Closes every open frame of a thread at `ns`; returns how many.
pub(super) fn close_all<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    ns: u64,
    kind: EndKind,
) -> Result<u64, AnalysisError> {
    let mut n = 0;
    while !st.stack.is_empty() {
        close_top(st, cx, sink, ns, kind, None)?;
        n += 1;
    }
    Ok(n)
}

/// What [`close_top`] closed.
pub(super) struct Closed {
    pub(super) sp: u64,
    pub(super) segment: Option<SegmentRef>,
    /// The caller of the segment's logical call.
    pub(super) caller: Option<u64>,
    /// The logical call is still waiting (its Leave may have been a suspension).
    pub(super) live: bool,
}

/// Pops the top frame (the stack must not be empty), ends it at `ns` by `kind`, updates the
/// statistics and hands it to the sink.
pub(super) fn close_top<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
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
    let mut end = ns.max(o.start);
    if let (EndKind::Suspend, Some(seg)) = (kind, o.segment) {
        // Seen gone only now, but its call resumed elsewhere already: it suspended by then.
        if let Some(bound) = cx.calls.resume_bound(seg) {
            end = end.min(bound).max(o.start);
        }
    }
    let dur = end - o.start;
    let caller = match st.stack.last_mut() {
        Some(p) => {
            p.children += dur;
            link::note_returned_call(cx.calls, p, &o, kind);
            Some(p.func)
        }
        None => None,
    };
    cx.stats.frame_closed(cx.thread, &o, caller, dur, kind);
    let caller = caller.unwrap_or(ROOT);

    let mut closed = Closed {
        sp: o.sp,
        segment: o.segment,
        caller: None,
        live: false,
    };
    let mut show_leave = kind == EndKind::Leave;
    if let Some(seg) = o.segment {
        let ended = link::end_segment(&mut cx.asyncs(), &o, seg, end, kind, leave_value);
        closed.caller = ended.caller;
        closed.live = ended.live;
        show_leave = ended.completion;
    } else if o.enter_value.is_some() || leave_value.is_some() {
        let args = shown(cx.tables, o.enter_value);
        let ret = shown(cx.tables, leave_value.filter(|_| show_leave));
        cx.stats.push_sample(o.func, u64::MAX, args, ret);
    }

    if o.iter.any() {
        let (mut env, _) = cx.iter_env();
        iterators::closed(st, &mut env, &o, end, kind, leave_value);
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
    sink.frame(cx.tables, cx.thread, &frame)
        .map_err(AnalysisError::Sink)?;
    Ok(closed)
}
