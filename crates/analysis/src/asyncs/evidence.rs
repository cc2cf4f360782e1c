//! What a thread's stack and events show about async segments, for the rules in `link`: the
//! evidence that an Enter is a first call ([`initial_evidence`]), and that segments on a
//! stack are gone although no event of the thread showed it: a segment whose call went on
//! elsewhere ([`lowest_stale`]), a dispatcher's resume below suspended segments
//! ([`dispatched_below_segments`], from the thread's dispatch stack pointers and the methods'
//! frame sizes), a resume above a segment of its own call ([`stale_below`]); and how a frame
//! left behind without its Leave ended ([`ended_without_leave`]).
//!
//! Samples show each thread's events as `T<thread> <kind> <function> sp=<stack pointer>`.
//!
//! ```text
//! T1 enter  L3  sp=0x840     a resume with nothing below: 0x840 is a dispatch sp of T1
//! T1 enter  L4  sp=0x720     a direct call from L3, 0x120 below it
//! T1 leave  L4  sp=0x720     it returned: L3's direct calls enter 0x120 deep
//! T1 enter  L3  sp=0x3b0     0x490 below: no call from L3 but a resume; that segment suspended
//! ```

use eltrace_trace::{Event, EventKind, FunctionIdx};

use super::calls::{CallState, Calls};
use super::env::Env;
use super::roles::{Role, is_kickoff, same_async_method};
use crate::model::EndKind;
use crate::reorder::Ahead;
use crate::stack::{Open, ThreadState};

/// How many dispatch stack pointers a thread remembers.
const DISPATCH_SPS: usize = 8;

/// How many queued events [`call_delta_ahead`] looks at.
const LOOK_AHEAD: usize = 4096;

// ---- Whether an Enter is a first call ----

/// Whether entering `f` (of segmented `role`) on top of `parent` is a first call, and then
/// the caller's logical call. The evidence: the variant's own thunk, or an async caller
/// (runtime-async methods call each other's variants directly); for a state machine, its
/// kickoff method.
pub(crate) fn initial_evidence(
    cx: &mut Env<'_>,
    f: u32,
    role: Role,
    parent: Option<&Open>,
) -> Option<Option<u64>> {
    let p = parent?;
    let record = cx.tables.functions.get(FunctionIdx(f));
    let prec = cx.tables.functions.get(FunctionIdx(p.func));
    match role {
        Role::StateMachine => match (record, prec) {
            (Some(r), Some(pr)) if is_kickoff(r, pr) => Some(None),
            _ => None,
        },
        _ => {
            let prole = cx.roles.get(&cx.tables.functions, p.func);
            match (record, prec) {
                (Some(r), Some(pr)) if prole == Role::Thunk && same_async_method(pr, r) => {
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

// ---- Segments gone although the stack pointer did not show it ----

/// The lowest frame that is a runtime-async segment whose logical call went on in a later
/// segment (on another thread): it suspended, and everything above it is gone too. Only
/// runtime-async variants suspend without a Leave: a state machine's `MoveNext` always
/// returns with one, and its continuation may start on another thread before it has (the
/// segment that scheduled it is still returning).
///
/// ```text
/// T0 enter  L3  sp=0x8eb0    segment 0 of call 0
/// T1 enter  L3  sp=0x840     segment 1 of call 0 (T1's events analysed first)
/// T0 enter  X   sp=0x8f10    T0's segment 0 is stale: it suspended, with the frames above it
/// ```
#[inline(always)]
pub(crate) fn lowest_stale(st: &ThreadState, cx: &mut Env<'_>) -> Option<usize> {
    // The frames' roles were decided at their Enter: asking again decides nothing new.
    if !cx.roles.any_variant() {
        return None;
    }
    st.segment_frames().find(|&i| {
        let o = &st.stack[i];
        cx.roles.get(&cx.tables.functions, o.func) == Role::Variant
            && o.segment.is_some_and(|s| {
                cx.calls
                    .live
                    .get(&s.call)
                    .is_none_or(|l| l.started > s.index + 1)
            })
    })
}

/// Whether Enter `e` is a resume of runtime-async variant `f` by one of this thread's
/// dispatchers, reached below segments that suspended: the stack holds only runtime-async
/// segments, all above `e`'s stack pointer, and either `e` comes at one of the thread's
/// dispatch stack pointers (where a variant was resumed before with nothing below it, or at a
/// distance from one that separates two dispatch stack pointers on some thread) and a call
/// of `f` could be resumed, or the top segment is `f`'s own and `e` is not a direct call from
/// it (see below). A dispatcher runs continuations from the bottom of the thread's stack, not
/// from inside a segment: the thread has left those segments (they suspended) and reached its
/// dispatcher by a deeper path than before (e.g. the timer queue, which resumes a
/// `Task.Delay` 0x490 bytes below the thread pool's dispatch on .NET 10), so the stack
/// pointer alone does not show them gone.
///
/// ```text
/// T1 enter  L3  sp=0x840     a resume with nothing below: 0x840 is a dispatch sp of T1
/// T1 enter  L4  sp=0x720     (L4 returns: L3's direct calls enter 0x120 below it)
/// T1 enter  L3  sp=0x3b0     0x490 below L3's segment, not 0x120: not a call from it but the
///                            timer queue's resume; the L3 segment above suspended
/// ```
#[inline(always)]
pub(crate) fn dispatched_below_segments(
    st: &ThreadState,
    cx: &mut Env<'_>,
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
    // Every frame a segment: first by count, then the frames' other conditions.
    let all_segments = st.open_segments() == st.stack.len()
        && st.stack.iter().all(|o| {
            o.sp > e.sp
                && o.segment.is_some()
                && cx.roles.get(&cx.tables.functions, o.func) == Role::Variant
        });
    if !all_segments {
        return false;
    }
    if let Some(cont) = st.cont {
        // The runtime's continuation argument decides: a resume (the dispatcher called it,
        // so the segments above suspended), or a first call (a direct call from the top one).
        // A resume that the top segment ran inline (see `resumed_inline`) left it running.
        return cont != 0 && !resumed_inline(cx.calls, e, top, ahead);
    }
    if is_dispatch_sp(st, e.sp, cx.calls) {
        // Something to resume: a waiting call of f, one still open on another thread, or one
        // whose segment is on this stack.
        return cx.calls.resumable(f, cx.thread) || st.stack.iter().any(|o| o.func == f);
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
        return resumed_below_caller(cx, e, top, ahead);
    }
    if cx.calls.call_deltas(f).is_none() {
        if let Some(d) = call_delta_ahead(cx.calls, e, ahead, f) {
            cx.calls.note_call_delta(f, d);
        }
    }
    match cx.calls.call_deltas(f) {
        Some(d) => !d.contains(&(top.sp - e.sp)),
        None => dispatch_sp_ahead(cx, e, ahead) || cx.calls.at_dispatch_offset(e.sp),
    }
}

/// Whether resume `e`, below the running segment `top` of another method, was run inline by
/// that segment rather than by a dispatcher below segments that suspended: the thread's first
/// event back above `e`'s frame is a direct call from `top` (an Enter at one of its method's
/// known call distances below it) or `top`'s own Leave. That happens when `top` completes a
/// `TaskCompletionSource` made without `RunContinuationsAsynchronously`: the awaiting call
/// resumes inside `SetResult`, suspends or completes, and returns into `top`. Without such an
/// event in the look-ahead, the resume stays a dispatcher's.
///
/// ```text
/// T1 enter  Outer  sp=0xa930    a resume (nothing below)
/// T1 enter  Inner  sp=0xa420    a resume (continuation argument), deeper than Outer's calls
/// T1 enter  Leaf   sp=0xa3b0    Inner calls Leaf, then suspends (no Leave)
/// T1 enter  Leaf   sp=0xa8a0    0x90 below Outer, one of Outer's call distances: Outer runs
/// ```
fn resumed_inline(calls: &Calls, e: &Event, top: &Open, ahead: Ahead<'_>) -> bool {
    if top.func == e.func.0 {
        return false;
    }
    let Some(back) = program_events(ahead).find(|n| {
        matches!(n.kind, EventKind::Enter | EventKind::Leave) && n.sp != 0 && n.sp > e.sp
    }) else {
        return false;
    };
    match back.kind {
        EventKind::Leave => back.func.0 == top.func && back.sp == top.sp,
        _ => {
            back.sp < top.sp
                && calls
                    .call_deltas(top.func)
                    .is_some_and(|d| d.contains(&(top.sp - back.sp)))
        }
    }
}

/// Rule (b) for a top segment of another method `g`: Enter `e` of variant `f` is deeper
/// below it than any direct call from `g` goes (`g`'s frame size, from calls that returned
/// into `g` or variants `g` certainly called, else from the thread's next events), and a
/// call of `f` can be resumed: `e` came through frames without probes, a dispatcher's resume
/// below `g`'s segment, which suspended. Measured on .NET 10 (the oracle's `runtime-async`):
/// `RunAsync` awaits `Task.WhenAll` of 12 `Leaf`s (started through their thunks), and the
/// timer queue resumes the `Leaf`s on the pool thread where `RunAsync`'s segment suspended,
/// 0x490 below it, where `RunAsync`'s direct calls enter 0x430 below it. Without a known
/// frame size of `g` the Enter stays a first call.
///
/// ```text
/// T0 enter  RunAsync  sp=0x3450    (below: its thunk) a first call
/// T0 enter  Chain     sp=0x3020    no Chain call live: a direct call, 0x430 below RunAsync
/// T2 enter  RunAsync  sp=0x5840    a resume; it calls 12 Leaf thunks, awaits them, suspends
/// T2 enter  Leaf      sp=0x53b0    0x490 below RunAsync, 12 Leaf calls suspended: a resume
/// ```
fn resumed_below_caller(cx: &mut Env<'_>, e: &Event, top: &Open, ahead: Ahead<'_>) -> bool {
    let (f, g) = (e.func.0, top.func);
    if !cx.calls.resumable(f, cx.thread) {
        return false;
    }
    if cx.calls.call_deltas(g).is_none() {
        if let Some(d) = call_delta_ahead(cx.calls, e, ahead, g) {
            cx.calls.note_call_delta(g, d);
        }
    }
    match cx.calls.call_deltas(g) {
        Some(d) => !d.contains(&(top.sp - e.sp)),
        None => cx.calls.at_dispatch_offset(e.sp),
    }
}

/// Whether the thread's next events show Enter `e`'s stack pointer to be one where a
/// dispatcher calls continuations: the frame `e` opens ends and the next event at or above
/// its stack pointer is the Enter of a runtime-async variant at that very stack pointer,
/// either at once (the segment suspended and the dispatcher ran the next one) or after the
/// frame's own Leave there (it completed and the dispatcher resumed its caller at the same
/// stack pointer, as it always does). A direct call from the segment below would have left
/// its caller running instead. Measured where a dispatcher first resumed 0x40 deeper than
/// before (the thread pool's dispatch loop moved to OSR code, or the last resume of a loop
/// of `Task.Yield`s), over a suspended segment of the same method whose frame size was not
/// known:
///
/// ```text
/// T1 enter  Leaf    sp=0x840   a resume (nothing below)
/// T1 enter  Leaf    sp=0x800   in question: a recursion or a resume?
/// T1 leave  Leaf    sp=0x800   it completed ...
/// T1 enter  Middle  sp=0x800   ... and its caller resumed at the same sp: a dispatch sp
/// ```
fn dispatch_sp_ahead(cx: &mut Env<'_>, e: &Event, ahead: Ahead<'_>) -> bool {
    let mut left = false;
    for next in program_events(ahead) {
        if next.sp == 0 || next.sp < e.sp {
            continue;
        }
        match next.kind {
            EventKind::Leave if !left && next.sp == e.sp && next.func == e.func => left = true,
            EventKind::Enter => {
                return next.sp == e.sp
                    && cx.roles.get(&cx.tables.functions, next.func.0) == Role::Variant;
            }
            _ => return false,
        }
    }
    false
}

/// In a thread's event `e` and its next events: a frame of `f` (an Enter of `f` at P) whose
/// next event is an Enter of another method at Q below P, and that callee's Leave at Q (or
/// its Unwind) before anything comes back up to P: a direct call from `f` that returned (or
/// threw), `P - Q` below `f`'s stack pointer. Measured: `Fails` resumed by the timer queue
/// 0x50 below its own suspended segment, where it calls `Thrower` 0x70 deep, which throws.
///
/// ```text
/// T1 enter  L3  sp=0x3b0     in question: a recursion or a resume? (no call from L3 seen yet)
/// T1 enter  L4  sp=0x290     queued next: L3 calls another method 0x120 below it
/// T1 leave  L4  sp=0x290     which returns: L3's direct calls go 0x120 deep
/// ```
fn call_delta_ahead(calls: &Calls, e: &Event, ahead: Ahead<'_>, f: u32) -> Option<u64> {
    let events: Vec<&Event> = std::iter::once(e).chain(program_events(ahead)).collect();
    for (i, e) in events.iter().enumerate() {
        if e.kind != EventKind::Enter || e.func.0 != f || e.sp == 0 {
            continue;
        }
        let Some(callee) = events.get(i + 1) else {
            break;
        };
        // A deeper Enter of f itself is what is in question (a recursion or a resume), and
        // so is one where a dispatcher resumes (a timer's resume of another method over a
        // suspended segment of f would teach f a frame size it does not have).
        if callee.kind != EventKind::Enter
            || callee.sp == 0
            || callee.sp >= e.sp
            || callee.func.0 == f
            || calls.at_dispatch_offset(callee.sp)
        {
            continue;
        }
        for later in &events[i + 2..] {
            let returned = later.kind == EventKind::Leave && later.sp == callee.sp;
            // An exception ends the callee's frame too (Unwind events carry no sp).
            let unwound = later.kind == EventKind::Unwind && later.sp == 0;
            if (returned || unwound) && later.func == callee.func {
                return Some(e.sp - callee.sp);
            }
            if later.sp != 0 && later.sp >= e.sp {
                break;
            }
        }
    }
    None
}

/// The thread's next queued events (up to [`LOOK_AHEAD`]) but the captured values, which
/// stand before or after an event depending on the trace (INFO `values_first`) and say
/// nothing about the stack.
fn program_events(ahead: Ahead<'_>) -> impl Iterator<Item = &Event> {
    ahead
        .events()
        .take(LOOK_AHEAD)
        .filter(|n| n.kind != EventKind::Value)
}

/// Remembers a dispatch stack pointer of a thread, and its distances to the others in `calls`.
pub(crate) fn note_dispatch_sp(st: &mut ThreadState, sp: u64, calls: &mut Calls) {
    calls.note_dispatch_offset(sp);
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

/// The frames from `keep` up are gone without their Leave (an Enter reached or passed their
/// stack pointer). Where the lowest of them is a runtime-async segment that thereby
/// suspended and the frame below it is the runtime-async segment that called it (a variant
/// calls its callee's variant only to await it), that caller suspended with it: a
/// runtime-async method whose callee suspends suspends at once. Returns the index from which
/// frames are gone, lowered over such callers.
///
/// This reveals the callers a dispatcher left behind when it resumes deeper than before, e.g.
/// when the thread pool's dispatch loop was moved to on-stack-replacement code in the middle
/// of the run (measured on .NET 10 and 11.0.0 with `tier-both`/`tier-caller`: resumes then
/// come 0x40 deeper, between a suspended caller's frame and its callee's):
///
/// ```text
/// T1 enter  Loop  sp=0x840    a resume (dispatch loop at tier 0)
/// T1 enter  Step  sp=0x6b0    a first call from Loop's segment; Step suspends, so does Loop
/// T1 enter  Leaf  sp=0x800    a resume by the OSR'd dispatch loop 0x40 deeper: Step's
///                             segment is gone (sp), and with it Loop's, which awaited it
/// ```
#[inline]
pub(crate) fn suspended_callers(st: &ThreadState, cx: &mut Env<'_>, keep: usize) -> usize {
    let mut keep = keep;
    while keep > 0 && keep < st.stack.len() {
        let (below, gone) = (&st.stack[keep - 1], &st.stack[keep]);
        let segment = |cx: &mut Env<'_>, o: &Open| {
            o.segment.is_some() && cx.roles.get(&cx.tables.functions, o.func) == Role::Variant
        };
        // Only a call's first segment was called by the frame below it: a resumed one above a
        // running segment was resumed inline by it (see `resumed_inline`), and its
        // suspension returns into that segment.
        let called = gone.segment.is_some_and(|s| s.index == 0);
        if called && segment(cx, gone) && segment(cx, below) {
            keep -= 1;
        } else {
            break;
        }
    }
    keep
}

/// Before a resume of runtime-async `f` is pushed: a segment of a running call of `f` lower
/// on this very stack cannot be running (a call does not resume inside itself): it
/// suspended, and the thread came back deeper than it (e.g. a timer callback), so the stack
/// pointer did not show it gone. Returns its index (the replay pops it and what is above it)
/// and its call, which the resume continues.
///
/// ```text
/// T1 enter  L3  sp=0x840     a resume of call 4; it awaits a timer and suspends, unseen
/// T1 enter  Cb  sp=0x700     a probed method (the timer's callback), deeper
/// T1 enter  L3  sp=0x5a0     a resume (nothing async below it), above a segment of L3's
///                            call 4 that cannot still run: it suspended; this resumes call 4
/// ```
#[inline(always)]
pub(crate) fn stale_below(st: &ThreadState, cx: &mut Env<'_>, f: u32) -> Option<(usize, u64)> {
    if st.open_segments() == 0 || cx.roles.get(&cx.tables.functions, f) != Role::Variant {
        return None;
    }
    // The runtime's continuation argument says a first call: no resume, nothing stale.
    if st.cont == Some(0) || initial_evidence(cx, f, Role::Variant, st.stack.last()).is_some() {
        return None;
    }
    let i = st.segment_frames().rev().find(|&i| {
        let o = &st.stack[i];
        o.func == f
            && o.segment.is_some_and(|s| {
                cx.calls
                    .live
                    .get(&s.call)
                    .is_some_and(|l| l.state == CallState::Running && l.started == s.index + 1)
            })
    })?;
    let call = st.stack[i].segment.map(|s| s.call)?;
    Some((i, call))
}

/// How frame `o`, which the stack left behind without its Leave, ended: a segment of a
/// runtime-async variant suspended (.NET 10 reports no Leave there); any other frame vanished
/// (its Leave never came).
///
/// ```text
/// T0 enter  Run  sp=0x9000
/// T0 enter  L3   sp=0x8eb0
/// T0 enter  Y    sp=0x8f00    at or above L3's sp: L3's frame is gone; a variant segment:
///                             it suspended (any other frame: vanished)
/// ```
#[inline]
pub(crate) fn ended_without_leave(cx: &mut Env<'_>, o: &Open) -> EndKind {
    let role = cx.roles.get(&cx.tables.functions, o.func);
    if o.segment.is_some() && role == Role::Variant {
        EndKind::Suspend
    } else {
        EndKind::Vanished
    }
}

// ---- Frame sizes ----

/// Frame `callee` returned into `caller` (ended by `kind`): where it was a direct call that
/// returned, its distance below its caller's stack pointer is a distance of the caller's
/// direct calls (the caller's frame size). Not from a frame of the same method: that may be
/// a resume below a suspended segment taken for a recursion; nor from a callee where some
/// dispatcher resumes (see [`Calls::at_dispatch_offset`]): it may have been a resume too.
///
/// ```text
/// T0 enter  L3  sp=0x8eb0
/// T0 enter  L4  sp=0x8d90
/// T0 leave  L4  sp=0x8d90    L3's direct calls enter 0x120 below it
/// ```
#[inline(always)]
pub(crate) fn note_returned_call(calls: &mut Calls, caller: &Open, callee: &Open, kind: EndKind) {
    if kind == EndKind::Leave
        && caller.sp > callee.sp
        && callee.sp != 0
        && caller.func != callee.func
        && !calls.at_dispatch_offset(callee.sp)
    {
        calls.note_call_delta(caller.func, caller.sp - callee.sp);
    }
}
