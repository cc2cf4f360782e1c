//! Captured values (`record --values`) on the replay's frames: the arguments on the frame an
//! Enter opens, the return value on the frame a Leave closes (docs/trace-format.md, Value).
//! Since INFO `values_first` a Value event comes just before the Enter or Leave it belongs to:
//! the thread's state holds it ([`read`]) and that event takes it (`replay::step`), with no
//! look at later events. A trace without the key has it just after: a frame-ending event
//! looks one event ahead for its return value ([`ahead`]), and a Value read after its Leave
//! was replayed (the Leave's look-ahead ended at a chunk not read yet) is attached to what
//! that Leave closed, patching its value sample if the call was settled ([`read`]).
//!
//! ```text
//! values_first            older traces
//! value  #0  (args)       enter  F             F's frame: args #0
//! enter  F                value  #0  (args)
//! value  #1  (return)     leave  F             F's frame closed with return #1
//! leave  F                value  #1  (return)
//! ```

use eltrace_trace::EventKind;

use super::context::Ctx;
use crate::reorder::Ahead;
use crate::stack::ThreadState;

/// A Value event `id`: held for the thread's next Enter or Leave, or (older traces) attached
/// to the event before it, unless that event's look-ahead took it.
#[inline]
pub(super) fn read(st: &mut ThreadState, cx: &mut Ctx<'_>, id: u32) {
    if cx.values_first {
        // One value per event: a second one before the event (never written) is ignored.
        st.pending_value.get_or_insert(id);
    } else if !std::mem::take(&mut st.skip_value) {
        attach_after(st, cx, id);
    }
}

/// Older traces: the return value that directly follows a frame-ending event, if the thread's
/// next event is read already; the Value event is then skipped when it comes.
#[inline]
pub(super) fn ahead(st: &mut ThreadState, ahead: Ahead<'_>) -> Option<u32> {
    let value = ahead
        .next_event()
        .filter(|v| v.kind == EventKind::Value)
        .map(|v| v.func.0);
    st.skip_value = value.is_some();
    value
}

/// The arguments `id` of the frame just entered (the top frame), also on its logical call
/// when the frame is a call's first segment.
pub(super) fn args(st: &mut ThreadState, cx: &mut Ctx<'_>, id: u32) {
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

/// Older traces: a Value event after an event that did not take it: the return value of the
/// frame the previous event closed, else the arguments of the frame just entered.
fn attach_after(st: &mut ThreadState, cx: &mut Ctx<'_>, id: u32) {
    if let Some((func, call)) = st.last_left.take() {
        // Shown only at a completion: on a runtime that reports suspension Leaves a later
        // resume of the call takes it back (see `link::link_resume`).
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
    args(st, cx, id);
}
