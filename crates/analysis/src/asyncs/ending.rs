//! What the end of an async method's segment means for its logical call ([`end_segment`]):
//! the call completed (settled), suspended (waiting for a resume), or left with a Leave
//! that a later resume may show to have been a suspension; and at the end of the trace, the
//! calls still waiting ([`settle_remaining`]). The replay calls both through `link`.
//!
//! ```text
//! T0 enter  L3  sp=0x8eb0    segment 0 of call 0
//! T0 enter  Y   sp=0x8f00    L3 gone without a Leave: segment 0 suspended, call 0 waits
//! T1 enter  L3  sp=0x840     segment 1 of call 0 (a resume)
//! T1 leave  L3  sp=0x840     .NET 10: the completion; call 0 settled
//! ```

use super::calls::{CallState, Calls};
use super::env::{AsyncStats, Counted, Env};
use super::roles::Role;
use crate::model::{EndKind, SegmentRef, Tables};
use crate::stack::Open;

/// What the end of a segment means for its call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegmentEnd {
    /// The caller of the segment's logical call.
    pub caller: Option<u64>,
    /// The logical call is still waiting (its Leave may have been a suspension).
    pub live: bool,
    /// The Leave's return value belongs to the call's completion.
    pub completion: bool,
}

/// Segment `seg` (frame `o`) ended at `end` by `kind`, with return value `leave_value`:
/// accounts its logical call and decides what its end means.
///
/// ```text
/// T0 enter  L3  sp=0x8eb0    segment 0 of call 0
/// T0 leave  L3  sp=0x8eb0    .NET 10: the completion, call 0 settled; a runtime with
///                            suspension Leaves: left open until a resume or the end tells
/// T0 enter  Y   sp=0x8f00    (had this come first: L3 gone without a Leave, call 0 suspended)
/// ```
pub(crate) fn end_segment(
    cx: &mut Env<'_>,
    o: &Open,
    seg: SegmentRef,
    end: u64,
    kind: EndKind,
    leave_value: Option<u32>,
) -> SegmentEnd {
    let dur = end - o.start;
    let mut out = SegmentEnd {
        caller: None,
        live: false,
        completion: kind == EndKind::Leave,
    };
    let role = cx.roles.get(&cx.tables.functions, o.func);
    let stale;
    if let Some(l) = cx.calls.live.get_mut(&seg.call) {
        l.segments += 1;
        l.cpu_ns += dur;
        l.last_end = l.last_end.max(end);
        out.caller = l.caller;
        // The call already went on in a later segment: this one suspended, and the call's
        // state belongs to the later one.
        stale = l.started > seg.index + 1;
    } else {
        stale = true;
    }
    if stale {
        out.completion = false;
    }
    match kind {
        // A later segment of its call already began (e.g. a resume on another thread
        // analysed before this Leave): whatever ended it, it suspended.
        _ if stale => {
            if kind != EndKind::Suspend {
                cx.stats.count(o.func, Counted::Suspension);
            }
        }
        EndKind::Suspend if seg.index == 0 && cx.calls.tail_awaited(seg.call) => {
            // A first segment that suspended without allocating a continuation tail-awaited
            // (docs/abi.md "Continuations at suspension"): never resumed, the call ends here.
            out.completion = false;
            cx.stats.count(o.func, Counted::TailAwait);
            if let Some(l) = cx.calls.finish(seg.call) {
                cx.stats.settle(cx.tables, l.summary(seg.call), false);
            }
        }
        EndKind::Suspend => {
            cx.calls.park_suspended(seg.call);
            out.live = true;
            out.completion = false;
        }
        EndKind::Leave if role == Role::Variant && !cx.suspend_leaves => {
            // .NET 10 reports no Leave at a suspension: this Leave completes the call.
            cx.calls.set_leave_value(seg.call, leave_value);
            if let Some(l) = cx.calls.finish(seg.call) {
                cx.stats.settle(cx.tables, l.summary(seg.call), false);
            }
        }
        EndKind::Leave => {
            // A suspension or the completion: a later resume of the call tells.
            cx.calls.set_leave_value(seg.call, leave_value);
            cx.calls.park_left_open(seg.call);
            out.live = true;
            out.completion = false;
        }
        _ => {
            if matches!(kind, EndKind::Unwind | EndKind::Catch) {
                cx.calls.note_threw(seg.call);
            }
            if let Some(l) = cx.calls.finish(seg.call) {
                cx.stats.settle(cx.tables, l.summary(seg.call), false);
            }
        }
    }
    out
}

/// At the end of the trace, the logical calls still waiting for a resume: suspended ones stay
/// pending; one that left with a Leave that may have been a suspension completed there.
pub(crate) fn settle_remaining(calls: &mut Calls, stats: &mut dyn AsyncStats, tables: &Tables) {
    for (id, l) in calls.drain() {
        let pending = l.state == CallState::Suspended;
        stats.settle(tables, l.summary(id), pending);
    }
}
