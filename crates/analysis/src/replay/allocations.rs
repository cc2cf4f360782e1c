//! The runtime's continuation allocations (`Role::Allocator`; docs/abi.md "Continuations at
//! suspension") and classic async methods' state-machine boxes (`Role::Boxer`; docs/abi.md
//! "State machines by `this`"): which frame suspends with which continuation or box, for the
//! async rules to link that call's resume by identity.

use eltrace_trace::Event;

use super::close::reveal;
use super::context::Ctx;
use crate::asyncs::Role;
use crate::sink::{AnalysisError, FrameSink};
use crate::stack::ThreadState;

/// The Leave `e` of a continuation allocator (`Role::Allocator`), after the thread's activity
/// at `before`: the frames at or above its caller SP are gone (suspended: a method calls the
/// allocator at the same stack pointer at which it called the callee that suspended), and the
/// frame it was called from, which now suspends, gets the continuation the allocator returned
/// (the Continuation event just before), which the runtime passes to that call's next resume.
/// Where the allocating method is not recorded, the recorded frame below it gets its
/// continuation until that frame's own allocation replaces it.
///
/// ```text
/// enter  Step           sp=0x820   a segment of call 7
/// continuation  0x…758 (AllocContinuation)
/// leave  AllocContinuation  sp=0x7a0    Step allocates: call 7's continuation is 0x…758
/// continuation  0x…790 (AllocContinuation)
/// leave  AllocContinuation  sp=0x820    Step is gone (0x820 ≤ 0x820); Worker allocates
/// …
/// continuation  0x…758  Step
/// enter  Step                      resumes call 7, by identity
/// ```
///
/// Where the selection chose the allocator too (`--include '*'`), its Enter is recorded as
/// well and it is a frame (`framed`, at its Leave): the frames gone are revealed at its Enter
/// ([`reveal_gone`]), and the allocating frame is the one below it.
pub(super) fn allocated<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    e: &Event,
    before: u64,
    framed: bool,
) -> Result<(), AnalysisError> {
    if !framed {
        reveal_gone(st, cx, sink, e, before)?;
    }
    let cont = st
        .pending_cont
        .take()
        .filter(|&(f, _)| f == e.func.0)
        .map(|(_, c)| c);
    let below = st.stack.len() - usize::from(framed);
    let call = below
        .checked_sub(1)
        .and_then(|i| st.stack[i].segment)
        .map(|s| s.call);
    if let (Some(call), Some(c)) = (call, cont) {
        cx.calls.note_allocation(call, c);
    }
    Ok(())
}

/// An allocator's event `e` (its Leave, or a selected allocator's Enter), after the thread's
/// activity at `before`: the frames at or above its caller SP are gone. Not the callers of
/// what is gone (`link::suspended_callers`): the frame below it is the one allocating, and
/// its own allocation says when it suspends.
pub(super) fn reveal_gone<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    e: &Event,
    before: u64,
) -> Result<(), AnalysisError> {
    st.after_completion = None;
    st.last_left = None;
    cx.calls.allocations = true;
    if e.sp == 0 {
        return Ok(());
    }
    cx.calls.at_allocation = true;
    let revealed = reveal(st, cx, sink, |sp| sp <= e.sp, before);
    cx.calls.at_allocation = false;
    revealed
}

/// How many frames below a box getter's Leave the search for the suspending segment goes
/// (under `--include '*'` the builder's `AwaitUnsafeOnCompleted` and the getter are frames).
const BOX_SEARCH: usize = 4;

/// The Leave `e` of a state-machine box getter (`Role::Boxer`): the classic async segment
/// nearest below it (its builder called the getter as the segment suspends) gets the box (the
/// Continuation event just before), whose state machine the call's next resume runs with
/// `this` inside the box. Returns whether the Leave closes a frame of its own (the selection
/// chose the getter too: its Enter was recorded).
///
/// ```text
/// enter  <Work>d__3.MoveNext         sp=0x820   a segment of call 7
/// continuation  0x…7000 (GetStateMachineBox)
/// leave  GetStateMachineBox          sp=0x760   call 7's box is 0x…7000
/// …
/// continuation  0x…7040  <Work>d__3.MoveNext
/// enter  <Work>d__3.MoveNext                    resumes call 7 (`this` 0x40 into its box)
/// ```
pub(super) fn boxed(st: &mut ThreadState, cx: &mut Ctx<'_>, e: &Event) -> bool {
    let framed = st
        .stack
        .last()
        .is_some_and(|o| o.func == e.func.0 && o.sp == e.sp);
    let b = st
        .pending_cont
        .take()
        .filter(|&(f, _)| f == e.func.0)
        .map(|(_, c)| c);
    let below = st.stack.len() - usize::from(framed);
    let segment = st.stack[..below]
        .iter()
        .rev()
        .take(BOX_SEARCH)
        .filter(|o| e.sp == 0 || o.sp > e.sp)
        .find(|o| o.segment.is_some())
        .filter(|o| cx.roles.get(&cx.tables.functions, o.func) == Role::StateMachine)
        .and_then(|o| o.segment);
    if let (Some(s), Some(b)) = (segment, b) {
        cx.calls.note_box(s.call, b);
    }
    framed
}
