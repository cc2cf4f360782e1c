//! Unit tests of the async rules (`link`, `evidence`, `ending`) on a hand-built [`Env`]: a
//! function table, the roles and calls, and a recorder of what the rules report
//! ([`Facts`]); each thread's shadow stack is pushed and popped here as the replay would.
//! No trace, no replay (the whole analysis is tested in `crate::tests::asyncs` and others).
//!
//! ```text
//! T0 enter  L3 [thunk]  sp=0x8f00    pushed here, then link::entered
//! T0 enter  L3          sp=0x8eb0    a first call: segment 0 of call 0 (Facts: Call)
//! T0 leave  L3 [thunk]  sp=0x8f00    popped here: link::end_segment(.., Suspend)
//! T1 enter  L3          sp=0x840     a resume of call 0 (Facts: Resume)
//! ```

use eltrace_trace::{Event, EventKind, FunctionFlags, FunctionIdx, FunctionRecord};

use super::calls::{CallState, Calls};
use super::ending::SegmentEnd;
use super::env::{AsyncStats, Counted, Env};
use super::evidence::initial_evidence;
use super::link;
use super::roles::{Role, Roles};
use crate::model::{CallNodeId, CallSummary, EndKind, SegmentRef, Tables};
use crate::reorder::Ahead;
use crate::stack::{Completed, ThreadState};
use eltrace_trace::protocol::IMPL_ASYNC;

/// A runtime-async method `L3`: its thunk and its variant.
const THUNK: u32 = 0;
const L3: u32 = 1;
/// An ordinary method.
const MAIN: u32 = 2;
/// The two halves of a runtime-async method `X` that the records do not tell apart.
const X: u32 = 3;
const X2: u32 = 4;
/// Runtime-async variants: `E2` awaits `E3`.
const E2: u32 = 5;
const E3: u32 = 6;

/// What the rules reported, in order.
#[derive(Debug, Default)]
struct Facts {
    counts: Vec<(u32, Counted)>,
    settled: Vec<(CallSummary, bool)>,
}

impl AsyncStats for Facts {
    fn count(&mut self, f: u32, what: Counted) {
        self.counts.push((f, what));
    }

    fn settle(&mut self, _tables: &Tables, c: CallSummary, pending: bool) {
        self.settled.push((c, pending));
    }

    fn logical_child(&mut self, _parent: Option<CallNodeId>, _f: u32) -> Option<CallNodeId> {
        None
    }
}

/// What an [`Env`] borrows, kept across the threads' events.
struct World {
    tables: Tables,
    roles: Roles,
    calls: Calls,
    facts: Facts,
    suspend_leaves: bool,
}

fn rec(idx: u32, method: &str, token: u32, impl_flags: u32, flags: u32) -> FunctionRecord {
    FunctionRecord {
        idx: FunctionIdx(idx),
        module: "App.dll".into(),
        type_name: "Ns.T".into(),
        method: method.into(),
        token,
        impl_flags,
        flags: FunctionFlags(flags),
        ..FunctionRecord::default()
    }
}

impl World {
    /// The functions above; `suspend_leaves`: the runtime reports a Leave at a suspension.
    fn new(suspend_leaves: bool) -> World {
        let mut tables = Tables::default();
        for r in [
            rec(
                THUNK,
                "L3",
                0x0600_0001,
                IMPL_ASYNC,
                FunctionFlags::ASYNC_THUNK,
            ),
            rec(
                L3,
                "L3",
                0x0600_0001,
                IMPL_ASYNC,
                FunctionFlags::ASYNC_VARIANT,
            ),
            rec(MAIN, "Main", 0x0600_0002, 0, 0),
            rec(X, "X", 0x0600_0003, IMPL_ASYNC, 0),
            rec(X2, "X", 0x0600_0003, IMPL_ASYNC, 0),
            rec(
                E2,
                "E2",
                0x0600_0004,
                IMPL_ASYNC,
                FunctionFlags::ASYNC_VARIANT,
            ),
            rec(
                E3,
                "E3",
                0x0600_0005,
                IMPL_ASYNC,
                FunctionFlags::ASYNC_VARIANT,
            ),
        ] {
            tables.functions.insert(r);
        }
        World {
            tables,
            roles: Roles::default(),
            calls: Calls::default(),
            facts: Facts::default(),
            suspend_leaves,
        }
    }

    fn env(&mut self, thread: u32) -> Env<'_> {
        Env {
            tables: &mut self.tables,
            roles: &mut self.roles,
            calls: &mut self.calls,
            stats: &mut self.facts,
            suspend_leaves: self.suspend_leaves,
            thread,
        }
    }

    fn role(&mut self, f: u32) -> Role {
        self.roles.get(&self.tables.functions, f)
    }
}

fn ev(ts: u64, kind: EventKind, f: u32, sp: u64) -> Event {
    Event {
        ts,
        kind,
        func: FunctionIdx(f),
        sp,
    }
}

fn seg(call: u64, index: u32, inferred: bool) -> Option<SegmentRef> {
    Some(SegmentRef {
        call,
        index,
        inferred,
    })
}

/// Thread `thread` enters `f` at `ts`, `sp` (nothing queued after it): pushed, then the
/// rules; true when its role waits for the thread's next event.
fn enter(w: &mut World, st: &mut ThreadState, thread: u32, f: u32, ts: u64, sp: u64) -> bool {
    enter_after(w, st, thread, ev(ts, EventKind::Enter, f, sp), None, None)
}

/// [`enter`] with what the thread's previous event completed and a call to prefer.
fn enter_after(
    w: &mut World,
    st: &mut ThreadState,
    thread: u32,
    e: Event,
    after: Option<Completed>,
    prefer: Option<u64>,
) -> bool {
    st.push(e.func.0, e.ts, e.sp, None);
    link::entered(st, &mut w.env(thread), &e, after, prefer, Ahead::only(&[]))
}

/// Pops the top frame, a segment, ended at `ns` by `kind` with return value `value`.
fn close(
    w: &mut World,
    st: &mut ThreadState,
    thread: u32,
    ns: u64,
    kind: EndKind,
    value: Option<u32>,
) -> SegmentEnd {
    let o = st.pop().expect("a frame");
    let s = o.segment.expect("a segment");
    link::end_segment(&mut w.env(thread), &o, s, ns, kind, value)
}

/// T0 calls L3 through its thunk (call 0, t=20), L3 suspends (the thunk's Leave at t=30
/// shows it gone), T1 resumes it at t=100: T1's stack.
fn first_call_then_resume(w: &mut World) -> ThreadState {
    let (mut t0, mut t1) = (ThreadState::default(), ThreadState::default());
    assert!(!enter(w, &mut t0, 0, THUNK, 10, 0x8f00));
    assert!(!enter(w, &mut t0, 0, L3, 20, 0x8eb0));
    assert_eq!(t0.stack[0].segment, None, "a thunk is an ordinary frame");
    assert_eq!(t0.stack[1].segment, seg(0, 0, false));
    let top = t0.stack[1];
    assert_eq!(
        link::ended_without_leave(&mut w.env(0), &top),
        EndKind::Suspend
    );
    let end = close(w, &mut t0, 0, 30, EndKind::Suspend, None);
    assert!(end.live && !end.completion, "{end:?}");
    assert!(w.calls.waiting(0));
    assert!(!enter(w, &mut t1, 1, L3, 100, 0x840));
    t1
}

#[test]
fn resume_on_another_thread_continues_the_suspended_call() {
    let mut w = World::new(false);
    let t1 = first_call_then_resume(&mut w);
    assert_eq!(t1.stack[0].segment, seg(0, 1, false));
    assert_eq!(
        w.facts.counts,
        vec![(L3, Counted::Call), (L3, Counted::Resume)]
    );
    let l = &w.calls.live[&0];
    assert_eq!((l.state, l.thread, l.started), (CallState::Running, 1, 2));
    // Nothing probed below the resume: a dispatcher's stack pointer.
    assert_eq!(t1.dispatch_sps, vec![0x840]);
    assert!(w.facts.settled.is_empty());
}

#[test]
fn completion_settles_its_call() {
    let mut w = World::new(false);
    let mut t1 = first_call_then_resume(&mut w);
    // .NET 10 reports no Leave at a suspension: this Leave completes call 0.
    let end = close(&mut w, &mut t1, 1, 130, EndKind::Leave, Some(7));
    assert!(end.completion && !end.live, "{end:?}");
    let summary = CallSummary {
        call: 0,
        func: L3,
        wall_ns: 130 - 20,
        enter_value: None,
        leave_value: Some(7),
    };
    assert_eq!(w.facts.settled, vec![(summary, false)]);
    assert!(w.calls.live.is_empty());
}

#[test]
fn leave_that_may_be_a_suspension_is_told_by_a_resume_or_the_end() {
    let mut w = World::new(true);
    let (mut t0, mut t1) = (ThreadState::default(), ThreadState::default());
    enter(&mut w, &mut t0, 0, THUNK, 10, 0x8f00);
    enter(&mut w, &mut t0, 0, L3, 20, 0x8eb0);
    let end = close(&mut w, &mut t0, 0, 30, EndKind::Leave, Some(5));
    assert!(end.live && !end.completion, "{end:?}");
    assert_eq!(w.calls.live[&0].state, CallState::LeftOpen);
    assert!(w.facts.settled.is_empty());
    // The resume shows that Leave a suspension: no completion value after all.
    enter(&mut w, &mut t1, 1, L3, 100, 0x840);
    assert_eq!(t1.stack[0].segment, seg(0, 1, false));
    assert!(w.facts.counts.contains(&(L3, Counted::Suspension)));
    assert_eq!(w.calls.live[&0].leave_value, None);
    close(&mut w, &mut t1, 1, 130, EndKind::Leave, Some(9));
    // Another call of L3 (call 1) suspends without a Leave and is never resumed.
    enter(&mut w, &mut t0, 0, L3, 140, 0x8eb0);
    assert_eq!(t0.stack[1].segment, seg(1, 0, false));
    close(&mut w, &mut t0, 0, 150, EndKind::Suspend, None);
    link::settle_remaining(&mut w.calls, &mut w.facts, &w.tables);
    let left_open = CallSummary {
        call: 0,
        func: L3,
        wall_ns: 130 - 20,
        enter_value: None,
        leave_value: Some(9),
    };
    let suspended = CallSummary {
        call: 1,
        func: L3,
        wall_ns: 150 - 140,
        enter_value: None,
        leave_value: None,
    };
    // The call left open completed at its last Leave; the suspended one is pending.
    assert_eq!(w.facts.settled, vec![(left_open, false), (suspended, true)]);
}

#[test]
fn resume_chosen_by_order_alone_is_inferred() {
    let mut w = World::new(false);
    let (mut t0, mut t1) = (ThreadState::default(), ThreadState::default());
    for (call, ts) in [(0, 10), (1, 50)] {
        enter(&mut w, &mut t0, 0, THUNK, ts, 0x8f00);
        enter(&mut w, &mut t0, 0, L3, ts + 5, 0x8eb0);
        assert_eq!(t0.stack[1].segment, seg(call, 0, false));
        close(&mut w, &mut t0, 0, ts + 10, EndKind::Suspend, None);
        t0.pop();
    }
    // Two calls wait: nothing tells which one this resumes; the oldest, by order.
    enter(&mut w, &mut t1, 1, L3, 100, 0x840);
    assert_eq!(t1.stack[0].segment, seg(0, 1, true));
    assert!(w.facts.counts.contains(&(L3, Counted::InferredResume)));
    assert!(w.calls.live[&0].inferred);
    close(&mut w, &mut t1, 1, 110, EndKind::Leave, None);
    // One call left to resume: no longer a guess.
    let (mut t2, n) = (ThreadState::default(), w.facts.counts.len());
    enter(&mut w, &mut t2, 2, L3, 120, 0x840);
    assert_eq!(t2.stack[0].segment, seg(1, 1, false));
    assert_eq!(&w.facts.counts[n..], &[(L3, Counted::Resume)]);
}

#[test]
fn completed_callee_leads_to_its_caller_not_the_oldest_waiting_call() {
    let mut w = World::new(false);
    let (mut t0, mut t1) = (ThreadState::default(), ThreadState::default());
    // Call 0 of E2 suspends on its own.
    t0.cont = Some(0);
    enter(&mut w, &mut t0, 0, E2, 10, 0x8f00);
    close(&mut w, &mut t0, 0, 15, EndKind::Suspend, None);
    // Call 1 of E2 awaits call 2 of E3; both suspend.
    enter(&mut w, &mut t0, 0, E2, 20, 0x8f00);
    t0.cont = None;
    enter(&mut w, &mut t0, 0, E3, 25, 0x8e00);
    assert_eq!(t0.stack[0].segment, seg(1, 0, false));
    assert_eq!(t0.stack[1].segment, seg(2, 0, false));
    assert_eq!(w.calls.live[&2].caller, Some(1));
    close(&mut w, &mut t0, 0, 30, EndKind::Suspend, None);
    close(&mut w, &mut t0, 0, 30, EndKind::Suspend, None);
    // T1: E3 resumes and completes; the dispatcher resumes its caller at the same sp.
    enter(&mut w, &mut t1, 1, E3, 100, 0x840);
    assert_eq!(t1.stack[0].segment, seg(2, 1, false));
    let end = close(&mut w, &mut t1, 1, 110, EndKind::Leave, None);
    assert_eq!((end.caller, end.live), (Some(1), false));
    let done = Completed {
        done: None,
        caller: 1,
        sp: 0x840,
    };
    let e = ev(120, EventKind::Enter, E2, 0x840);
    enter_after(&mut w, &mut t1, 1, e, Some(done), None);
    // By evidence, not order: call 0 waits longer, and is free to resume too.
    assert_eq!(t1.stack[0].segment, seg(1, 1, false));
    assert!(w.calls.waiting(0));
    assert!(!w.facts.counts.contains(&(E2, Counted::InferredResume)));
}

#[test]
fn role_that_waits_is_decided_by_the_next_event() {
    let mut w = World::new(false);
    let mut t0 = ThreadState::default();
    assert_eq!(w.role(X), Role::Unresolved);
    // Nothing queued after it: it waits (the replay notes it).
    assert!(enter(&mut w, &mut t0, 0, X, 10, 0x8f00));
    assert!(t0.stack[0].unresolved && t0.stack[0].segment.is_none());
    // Next: the other half of X entered below, and X's first later event at or above its sp
    // is its own Leave there: X is the thunk, X2 the variant.
    let next = ev(20, EventKind::Enter, X2, 0x8eb0);
    let rest = [
        ev(30, EventKind::Leave, X2, 0x8eb0),
        ev(40, EventKind::Leave, X, 0x8f00),
    ];
    link::resolve_top(&mut t0, &mut w.env(0), &next, rest.iter(), None, None);
    assert_eq!((w.role(X), w.role(X2)), (Role::Thunk, Role::Variant));
    assert!(!t0.stack[0].unresolved && t0.stack[0].segment.is_none());
    let flags = |w: &World, f: u32| w.tables.functions.get(FunctionIdx(f)).unwrap().flags;
    assert!(flags(&w, X).async_thunk() && flags(&w, X2).async_variant());
    assert!(w.facts.counts.is_empty(), "a thunk's frame is no call");
    // The variant below its own thunk: a first call.
    assert!(!enter(&mut w, &mut t0, 0, X2, 20, 0x8eb0));
    assert_eq!(t0.stack[1].segment, seg(0, 0, false));
    assert_eq!(w.facts.counts, vec![(X2, Counted::Call)]);
}

#[test]
fn role_still_unknown_at_the_end_is_a_variant() {
    let mut w = World::new(false);
    let mut t0 = ThreadState::default();
    assert!(enter(&mut w, &mut t0, 0, X, 10, 0x8f00));
    link::resolve_at_end(&mut t0, &mut w.env(0));
    assert_eq!(w.role(X), Role::Variant);
    assert_eq!(t0.stack[0].segment, seg(0, 0, false));
    assert_eq!(w.facts.counts, vec![(X, Counted::Call)]);
}

#[test]
fn initial_evidence_is_in_the_frame_below() {
    let mut w = World::new(false);
    let mut st = ThreadState::default();
    enter(&mut w, &mut st, 0, MAIN, 0, 0x9000);
    enter(&mut w, &mut st, 0, THUNK, 10, 0x8f00);
    enter(&mut w, &mut st, 0, L3, 20, 0x8eb0);
    let (main, thunk, l3) = (st.stack[0], st.stack[1], st.stack[2]);
    let cx = &mut w.env(0);
    // Its own thunk below: a first call, by no async caller.
    assert_eq!(
        initial_evidence(cx, L3, Role::Variant, Some(&thunk)),
        Some(None)
    );
    // A variant's segment below: a first call, which that segment's call awaits.
    assert_eq!(
        initial_evidence(cx, E3, Role::Variant, Some(&l3)),
        Some(Some(0))
    );
    // An ordinary frame below, or nothing: no evidence (a resume, unless nothing waits).
    assert_eq!(initial_evidence(cx, L3, Role::Variant, Some(&main)), None);
    assert_eq!(initial_evidence(cx, L3, Role::Variant, None), None);
}

#[test]
fn segment_whose_call_went_on_elsewhere_is_stale() {
    let mut w = World::new(false);
    let (mut t0, mut t1) = (ThreadState::default(), ThreadState::default());
    enter(&mut w, &mut t0, 0, THUNK, 10, 0x8f00);
    enter(&mut w, &mut t0, 0, L3, 20, 0x8eb0);
    // T1 resumes call 0 before T0 is seen to leave its segment (T1 analysed first).
    enter(&mut w, &mut t1, 1, L3, 100, 0x840);
    assert_eq!(t1.stack[0].segment, seg(0, 1, false));
    assert_eq!(link::lowest_stale(&t0, &mut w.env(0)), Some(1));
    assert_eq!(link::lowest_stale(&t1, &mut w.env(1)), None);
    // Below it the thunk, an ordinary frame: no caller suspended with it.
    assert_eq!(link::suspended_callers(&t0, &mut w.env(0), 1), 1);
    // It suspended by the resume's start at the latest.
    assert_eq!(w.calls.resume_bound(seg(0, 0, false).unwrap()), Some(100));
    let thunk = t0.stack[0];
    assert_eq!(
        link::ended_without_leave(&mut w.env(0), &thunk),
        EndKind::Vanished
    );
}

#[test]
fn resume_above_a_segment_of_its_own_call_finds_it_stale() {
    let mut w = World::new(false);
    let mut t1 = first_call_then_resume(&mut w);
    // L3's segment suspends unseen; a timer callback runs deeper and resumes L3 again.
    enter(&mut w, &mut t1, 1, MAIN, 110, 0x700);
    assert_eq!(link::stale_below(&t1, &mut w.env(1), L3), Some((0, 0)));
    // The continuation argument says a first call: nothing stale.
    t1.cont = Some(0);
    assert_eq!(link::stale_below(&t1, &mut w.env(1), L3), None);
    t1.cont = None;
    // The replay pops what is above the stale segment and the segment (suspended), then
    // pushes the resume, preferring that call.
    t1.pop();
    close(&mut w, &mut t1, 1, 120, EndKind::Suspend, None);
    let e = ev(130, EventKind::Enter, L3, 0x5a0);
    enter_after(&mut w, &mut t1, 1, e, None, Some(0));
    assert_eq!(t1.stack[0].segment, seg(0, 2, false));
}
