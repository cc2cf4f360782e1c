//! The rules that link an async method's segments into logical calls and tell when a segment
//! suspended (docs/design.md "Async methods: segments and logical calls"). Each takes a
//! thread's stack and an `Env` (`env`: roles, calls, tables, and the statistics behind
//! `AsyncStats`); the replay calls them at a few points:
//!
//! - before an Enter is pushed: [`resolve_elsewhere`] decides other threads' frames of its
//!   function whose role waits; [`lowest_stale`] (with [`suspended_callers`]),
//!   [`dispatched_below_segments`] and [`stale_below`] find segments that suspended although
//!   the stack pointer did not show it (the evidence is in `evidence`, re-exported here);
//! - after the push: [`entered`] decides whether the segment starts a call or resumes one
//!   (and which), [`resolve_top`] when the role of a runtime-async function waits for the
//!   next event;
//! - when a frame closes: [`ended_without_leave`] (suspended or vanished),
//!   [`note_returned_call`] (a method's frame size) and [`end_segment`] (what the end of a
//!   segment means for its call, in `ending`, re-exported here);
//! - at the end of the trace: [`resolve_at_end`] and [`settle_remaining`].
//!
//! Samples show each thread's events as `T<thread> <kind> <function> sp=<stack pointer>`;
//! `L3 [thunk]` is a runtime-async method's Task-returning thunk, `L3` its variant.
//!
//! ```text
//! T0 enter  L3 [thunk]  sp=0x8f00
//! T0 enter  L3          sp=0x8eb0    a first call: segment 0 of call 0
//! T0 leave  L3 [thunk]  sp=0x8f00    (.NET 10: no Leave at a suspension) segment 0 suspended
//! T1 enter  L3          sp=0x840     a resume: segment 1 of call 0
//! ```

use eltrace_trace::{Event, EventKind, FunctionIdx};

use super::calls::CallState;
use super::env::{Counted, Env};
use super::evidence::{initial_evidence, note_dispatch_sp};
use super::roles::{Role, same_async_method};
use crate::model::SegmentRef;
use crate::reorder::Ahead;
use crate::stack::{Completed, ThreadState};

pub(crate) use super::ending::{end_segment, settle_remaining};
pub(crate) use super::evidence::{
    dispatched_below_segments, ended_without_leave, lowest_stale, note_returned_call, stale_below,
    suspended_callers,
};

// ---- Roles decided by the next event ----

/// The top frame is a runtime-async function whose role was unknown: the event after its
/// Enter (`e`, followed by `rest`) decides. A thunk's next event is the Enter of its own
/// variant, which the thunk calls (below its stack pointer), and when the thunk's next events
/// are known, the first of them at or above its stack pointer is its own Leave there (the
/// variant returned, by suspending or completing, and so did the thunk). Another FunctionID
/// of the same method entered next is not always the thunk's variant: e.g. the variants of
/// two instantiations of a generic type's method (`AsyncBox<int>.GetAsync` and
/// `AsyncBox<string>.GetAsync`, both awaited directly, so neither thunk is ever called), the
/// one resumed by the timer queue after the other suspended, at or below it. A variant's
/// segment starts or resumes a call; `after_completion` and `prefer` as for [`entered`]
/// (none when `e` is the event being replayed).
///
/// ```text
/// T0 enter  X  sp=0x8f00     impl 0x2000, no role flag: unresolved
/// T0 enter  X  sp=0x8eb0     the same method's other half: the first X is the thunk,
///                            this one the variant (a first call)
/// T0 leave  X  sp=0x8f00     (had anything else come next, the first X was the variant)
/// ```
pub(crate) fn resolve_top<'e>(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    e: &Event,
    rest: impl Iterator<Item = &'e Event>,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) {
    let Some(top) = st.stack.last() else {
        return;
    };
    let f = top.func;
    let top_sp = top.sp;
    let thunk = calls_own_variant(cx, f, top_sp, e, rest);
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
        classify_top(st, cx, top_sp, after_completion, prefer);
    }
}

/// Whether a frame of runtime-async `f` at `sp` of unknown role is its thunk, by the events
/// that follow its Enter: `e`, then `rest` (see [`resolve_top`]).
pub(crate) fn calls_own_variant<'e>(
    cx: &Env<'_>,
    f: u32,
    sp: u64,
    e: &Event,
    rest: impl Iterator<Item = &'e Event>,
) -> bool {
    let below = e.sp == 0 || sp == 0 || e.sp < sp;
    e.kind == EventKind::Enter
        && below
        && match (
            cx.tables.functions.get(FunctionIdx(f)),
            cx.tables.functions.get(e.func),
        ) {
            (Some(a), Some(b)) => same_async_method(a, b),
            _ => false,
        }
        && match thunk_leaves_first(f, sp, rest) {
            Some(leaves) => leaves,
            // The events that would tell are not read yet: a thunk enters its variant at one
            // of the distances thunks were seen to use, not e.g. 0x3b0 below like a timer's
            // resume of another instantiation.
            None => sp == 0 || e.sp == 0 || cx.calls.thunk_delta_seen(sp - e.sp) != Some(false),
        }
}

/// Another thread enters runtime-async `f` (Enter `e`, then that thread's queued events
/// `ahead`) while thread `st`'s top frame is one of `f` whose role waits for `st`'s next
/// event. When this Enter shows `f` to be a variant, `st`'s frame is a variant segment as
/// well, and it came first: it is classified now, so that a resume here finds its call.
/// Measured on .NET 10: `AsyncBox<string>.GetAsync` (no role flag) called on T2, which had no
/// further event for a while, and resumed by the timer queue on T1: counted as a call of its
/// own, and T2's segment as another.
///
/// ```text
/// T2 enter  GetAsync  sp=0x5140   unresolved, T2's next event not read yet
/// T1 enter  GetAsync  sp=0x53b0   its next event is its Leave: a variant, so T2's frame too;
/// T1 leave  GetAsync  sp=0x53b0   this resumes the call T2's segment started
/// ```
pub(crate) fn resolve_elsewhere(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    e: &Event,
    ahead: Ahead<'_>,
) -> bool {
    let f = e.func.0;
    let Some(top) = st.stack.last().filter(|o| o.unresolved && o.func == f) else {
        return false;
    };
    let top_sp = top.sp;
    let variant = match cx.roles.get(&cx.tables.functions, f) {
        Role::Variant => true,
        Role::Unresolved => {
            let mut events = ahead.events().filter(|n| !n.kind.is_annotation());
            match events.next() {
                Some(next) => !calls_own_variant(cx, f, e.sp, next, events),
                None => false,
            }
        }
        _ => false,
    };
    if variant {
        cx.roles.learn(&mut cx.tables.functions, f, Role::Variant);
        classify_top(st, cx, top_sp, None, None);
    }
    variant
}

/// At the end of the trace, a top frame whose role is still unknown: no event followed, and
/// a thunk would have been followed by its variant.
pub(crate) fn resolve_at_end(st: &mut ThreadState, cx: &mut Env<'_>) {
    if st.stack.last().is_some_and(|o| o.unresolved) {
        let f = st.stack.last().map_or(0, |o| o.func);
        cx.roles.learn(&mut cx.tables.functions, f, Role::Variant);
        classify_top(st, cx, 0, None, None);
    }
}

/// Whether the first of a frame's next events (`rest`) at or above its stack pointer `sp` is
/// its own Leave there, as a thunk's is; `None` when the known events do not reach one.
fn thunk_leaves_first<'e>(f: u32, sp: u64, rest: impl Iterator<Item = &'e Event>) -> Option<bool> {
    if sp == 0 {
        return None;
    }
    let next = rest
        .take(LOOK_AHEAD)
        .find(|n| !n.kind.is_annotation() && n.sp != 0 && n.sp >= sp)?;
    Some(next.kind == EventKind::Leave && next.func.0 == f && next.sp == sp)
}

/// How many queued events [`thunk_leaves_first`] looks at.
const LOOK_AHEAD: usize = 4096;

// ---- Initial call or resume, and which call ----

/// A frame of `e`'s function was just pushed for Enter `e`: a segment of an async method
/// starts a logical call or resumes one (see [`classify_top`]); a runtime-async function of
/// unknown role is decided by the thread's next event (in `ahead`, else when it comes).
/// Returns true when the frame's role waits for that event, which is not read yet (the
/// replay notes the frame: another thread's Enter may decide it first, see
/// [`resolve_elsewhere`]).
#[inline(always)]
pub(crate) fn entered(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    e: &Event,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
    ahead: Ahead<'_>,
) -> bool {
    match cx.roles.get(&cx.tables.functions, e.func.0) {
        Role::Variant | Role::StateMachine => {
            classify_top(st, cx, e.sp, after_completion, prefer);
            false
        }
        Role::Unresolved => {
            if let Some(top) = st.stack.last_mut() {
                top.unresolved = true;
            }
            // The thread's next event, when already read, decides at once: a resume of this
            // segment's call on another thread, analysed before that event, finds the call.
            let mut events = ahead.events().filter(|n| !n.kind.is_annotation());
            match events.next() {
                Some(next) => {
                    resolve_top(st, cx, next, events, after_completion, prefer);
                    false
                }
                None => true,
            }
        }
        Role::Plain | Role::Thunk | Role::Allocator | Role::Boxer => false,
    }
}

/// Decides whether the top frame (a segment of an async method) starts a logical call or
/// resumes one, and which.
///
/// ```text
/// T0 enter  L3 [thunk]  sp=0x8f00
/// T0 enter  L3          sp=0x8eb0    below it its own thunk: a first call
/// T0 enter  A4          sp=0x8d90    (async) below it a segment of L3: a first call, which
///                                    L3's call awaits
/// T1 enter  L3          sp=0x840     nothing probed below (the dispatcher): a resume
/// ```
fn classify_top(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    sp: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) {
    let n = st.stack.len();
    let Some(top) = st.stack.last() else {
        return;
    };
    let (f, start, top_sp) = (top.func, top.start, top.sp);
    let role = cx.roles.get(&cx.tables.functions, f);
    let parent = n.checked_sub(2).map(|i| st.stack[i]);
    if parent.is_none() && role == Role::Variant {
        note_dispatch_sp(st, top_sp, cx.calls);
    }
    let initial_caller = match st.cont.filter(|_| role == Role::Variant) {
        // The runtime's continuation argument: null at a first call, the call's continuation
        // at a resume (docs/abi.md, "The async continuation argument").
        Some(0) => {
            cx.stats.count(f, Counted::KnownStart);
            Some(initial_evidence(cx, f, role, parent.as_ref()).flatten())
        }
        Some(_) => {
            cx.stats.count(f, Counted::KnownStart);
            None
        }
        None => initial_evidence(cx, f, role, parent.as_ref()),
    };
    let (call, index, inferred) = match initial_caller {
        Some(caller) => {
            note_first_call(st, cx, role, caller);
            let call = new_call(cx, f, caller, start);
            // A class state machine (a debug build's) is the object every resume receives; a
            // struct's first `this` is on the stack, its resumes' in the box.
            if let Some(this) = st
                .cont
                .filter(|&c| role == Role::StateMachine && !on_stack(c, sp))
            {
                cx.calls.note_resumed_with(call, this);
            }
            (call, 0, false)
        }
        None => match resumed_call(st, cx, role, sp, after_completion, prefer) {
            Some((id, inferred)) => resume(cx, f, id, inferred),
            // A resume that continues nothing seen (the trace began later, or its first
            // call was not recorded): counted as a call of its own.
            None => (new_call(cx, f, None, start), 0, false),
        },
    };
    place_segment(st, cx, call, index, inferred);
}

/// Whether `this` (a recorded object address, its low bits the GC epoch) lies on the stack of
/// a frame entered at `sp`: within 1 MiB above it (a struct state machine's first `MoveNext`
/// runs on its kickoff's local).
fn on_stack(this: u64, sp: u64) -> bool {
    this >= sp && this - sp < 1 << 20
}

/// The top frame, a segment of `role`, starts a call of `caller`'s (if any): what that
/// shows of frame sizes, and a first call that could have been a resume (counted).
fn note_first_call(st: &ThreadState, cx: &mut Env<'_>, role: Role, caller: Option<u64>) {
    let n = st.stack.len();
    let Some(top) = st.stack.last() else {
        return;
    };
    let (f, top_sp) = (top.func, top.sp);
    let Some(p) = n.checked_sub(2).map(|i| st.stack[i]) else {
        return;
    };
    if role == Role::Variant && st.cont.is_none() && p.func == f && p.sp > top_sp && top_sp != 0 {
        let unknown = cx
            .calls
            .call_deltas(f)
            .is_none_or(|d| !d.contains(&(p.sp - top_sp)));
        let only_segments = st.stack[..n - 1].iter().all(|o| o.segment.is_some());
        if unknown && only_segments && !cx.calls.has_waiting(f) {
            cx.stats.count(f, Counted::AmbiguousCall);
        }
    }
    if caller.is_none() && role == Role::Variant {
        // Below it its own thunk: the thunk's frame size.
        if p.sp > top_sp && top_sp != 0 {
            cx.calls.note_thunk_delta(p.sp - top_sp);
        }
    }
    if caller.is_some() {
        // A variant with no call that could be resumed is entered by a call: a direct call
        // from the variant segment below, whose frame size it shows (see
        // `dispatched_below_segments`). Not from a frame of the same method (a resume of a
        // call lower on this stack is the case in question there).
        if p.func != f && p.sp > top_sp && top_sp != 0 && cx.calls.none_live(f) {
            cx.calls.note_call_delta(p.func, p.sp - top_sp);
        }
    }
}

/// The waiting call that the top frame, a segment of `role` entered at `sp`, resumes (see
/// [`link_resume`]), and whether only order chose it; notes the continuation it received.
fn resumed_call(
    st: &ThreadState,
    cx: &mut Env<'_>,
    role: Role,
    sp: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
) -> Option<(u64, bool)> {
    let f = st.stack.last()?.func;
    // The same continuation as an earlier resume of a waiting call: that call (.NET 11). A
    // state machine's `MoveNext` receives its box (the struct inside it) or its class object
    // as `this`, the same at every resume of one call.
    let cont = st
        .cont
        .filter(|&c| c != 0 && matches!(role, Role::Variant | Role::StateMachine));
    // A state machine's box, from its call's latest suspension, first: a pooled box serves
    // another call once its call completed.
    let this = cont.filter(|_| role == Role::StateMachine);
    let identity = this
        .and_then(|c| cx.calls.by_box(c, f))
        .or_else(|| cont.and_then(|c| cx.calls.by_continuation(c, f)));
    let (linked, inferred, by_identity) =
        link_resume(cx, f, sp, after_completion, prefer, identity, this)?;
    if by_identity {
        cx.stats.count(f, Counted::IdentityResume);
    }
    if let Some(c) = cont {
        cx.calls.note_resumed_with(linked, c);
    }
    Some((linked, inferred))
}

/// A segment of `f` resumes call `id` (`inferred`: chosen by order alone): the calls it
/// awaited are over; returns `(call, segment index, inferred)`.
fn resume(cx: &mut Env<'_>, f: u32, id: u64, inferred: bool) -> (u64, u32, bool) {
    // A call resumes once the callee it awaited is over, also when that callee never
    // resumed (an exception passed it) or its last segment is still open on another
    // thread (its thread not analysed that far). For every way a resume is linked.
    for (cid, c) in cx.calls.finish_callees(id) {
        cx.stats.settle(cx.tables, c.summary(cid), false);
    }
    let l = cx.calls.live.get_mut(&id).expect("picked calls are live");
    let index = l.started;
    l.inferred |= inferred;
    cx.stats.count(f, Counted::Resume);
    if inferred {
        cx.stats.count(f, Counted::InferredResume);
    }
    (id, index, inferred)
}

/// Makes the top frame segment `index` of `call`: the call's running segment, on this
/// thread, at its node of the logical call tree.
fn place_segment(st: &mut ThreadState, cx: &mut Env<'_>, call: u64, index: u32, inferred: bool) {
    let n = st.stack.len();
    let Some(top) = st.stack.last() else {
        return;
    };
    let (f, start) = (top.func, top.start);
    let mut bound = false;
    if let Some(l) = cx.calls.live.get_mut(&call) {
        // The segment before this one has not been seen to end (its thread is not analysed
        // that far): it suspended before this resume began.
        bound = index > 0 && l.segments < index;
        l.started += 1;
        l.thread = cx.thread;
    }
    if bound {
        cx.calls.note_resume_bound(call, index - 1, start);
    }
    // The logical tree: a call's first segment under the frame below it (its caller),
    // its resumes at the same node, wherever they run.
    let lparent = n.checked_sub(2).and_then(|i| st.stack[i].lnode);
    let lnode = match cx.calls.live.get_mut(&call) {
        Some(l) if index > 0 && l.lnode.is_some() => l.lnode,
        Some(l) => {
            l.lnode = cx.stats.logical_child(lparent, f);
            l.lnode
        }
        None => cx.stats.logical_child(lparent, f),
    };
    if let Some(top) = st.stack.last_mut() {
        top.lnode = lnode;
    }
    st.mark_segment(SegmentRef {
        call,
        index,
        inferred,
    });
}

fn new_call(cx: &mut Env<'_>, f: u32, caller: Option<u64>, start: u64) -> u64 {
    cx.stats.count(f, Counted::Call);
    cx.calls.start(f, caller, start)
}

/// The waiting logical call of `f` that a resume at `sp` continues, whether only order chose
/// it, and whether its continuation did: the call the resume's continuation names
/// (`identity`: allocated at that call's suspension, or received by its earlier resume), else
/// the call whose stale segment lay below it (`prefer`, see [`stale_below`]), else the caller
/// of the call that the thread's previous event completed, else by order
/// ([`Calls::pick`](super::calls::Calls::pick)).
///
/// ```text
/// T1 enter  E3  sp=0x840    a resume of E3's call, which E2's call awaits
/// T1 leave  E3  sp=0x840    E3's call completes
/// T1 enter  E2  sp=0x840    the dispatcher resumes the completed call's caller next, at the
///                           same sp: E2's call, by evidence even while other E2 calls wait
/// ```
fn link_resume(
    cx: &mut Env<'_>,
    f: u32,
    sp: u64,
    after_completion: Option<Completed>,
    prefer: Option<u64>,
    identity: Option<(u64, bool)>,
    this: Option<u64>,
) -> Option<(u64, bool, bool)> {
    // A dispatcher that completed a call resumes that call's caller next, at the same sp.
    let chained = after_completion.filter(|c| {
        c.sp == sp
            && sp != 0
            && cx.calls.live.get(&c.caller).is_some_and(|l| l.func == f)
            && cx.calls.waiting(c.caller)
    });
    let prefer = prefer.filter(|&p| cx.calls.waiting(p));
    let allocated = identity.filter(|&(_, a)| a).map(|(i, _)| i);
    let identity = identity.map(|(i, _)| i);
    let (id, inferred, prev) = match chained {
        // The call whose suspension allocated the continuation. Where the chained rule names
        // the same call, it goes on below (it also settles the completed callee).
        _ if allocated.is_some() && chained.is_none_or(|c| Some(c.caller) != allocated) => {
            let i = allocated?;
            (i, false, cx.calls.take(i)?)
        }
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
        // The call an earlier resume received the same continuation in (.NET 11, without
        // allocations in the trace), where otherwise only the order would choose.
        None if identity.is_some() => {
            let i = identity?;
            (i, false, cx.calls.take(i)?)
        }
        None => cx.calls.pick(f, cx.thread, this)?,
    };
    // However it was chosen, the continuation confirms it.
    let by_identity = identity == Some(id);
    if prev == CallState::LeftOpen {
        // The Leave that ended its last segment was a suspension after all: no completion
        // value either.
        cx.stats.count(f, Counted::Suspension);
        cx.calls.set_leave_value(id, None);
        prove_callers_suspended(cx, id);
    }
    Some((id, inferred, by_identity))
}

/// Call `id`'s last Leave was just proven a suspension. A runtime-async method whose callee
/// suspends suspends too, right away: its segment that was running below that callee ended
/// by suspending. So a caller whose latest segment ended with a Leave after the callee's, and
/// that is still waiting, suspended there too (also when it is never resumed, e.g. when an
/// exception passes it by), and so on up the chain of callers.
///
/// ```text
/// T0 leave  E2  sp=0x8e00    (a runtime with suspension Leaves) E2's call left open
/// T0 leave  E1  sp=0x8f00    E1's call, E2's caller, left open after it
/// T1 enter  E2  sp=0x840     E2's call resumes: its Leave was a suspension, so was E1's
/// T1 unwind E2  sp=0x840     (E1's call may never resume: its suspension still counts)
/// ```
fn prove_callers_suspended(cx: &mut Env<'_>, id: u64) {
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
            cx.stats.count(func, Counted::Suspension);
        }
        child = p;
    }
}
