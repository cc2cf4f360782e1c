//! Async methods: segments linked into logical calls, resumes below suspended segments,
//! state machines, calls suspended and never resumed.

use eltrace_trace::EventKind::{self, Enter, Leave, Unwind};
use eltrace_trace::{FunctionIdx, ThreadIdx};

use super::build::*;
use crate::*;

/// A classic state machine's continuation may start on another thread before the segment
/// that scheduled it has returned: that segment is still running (its Leave comes), not
/// stale. (Seen under load: the segment was closed as vanished and its Leave unmatched.)
#[test]
fn state_machine_continuation_overlapping_its_scheduler() {
    let trace = typed_trace(
        &[
            ("Ns.T", "Main"),
            ("Ns.T", "Work"),
            ("Ns.T+<Work>d__1", "MoveNext"),
            ("Ns.T", "Leaf"),
        ],
        &[
            &[
                (0, Enter, 0, 0x9000),
                (10, Enter, 1, 0x8f00),
                (20, Enter, 2, 0x8e00),
                // The continuation has started on thread 1 (t=50) when this Leaf runs.
                (90, Enter, 3, 0x8d00),
                (95, Leave, 3, 0x8d00),
                (100, Leave, 2, 0x8e00),
                (110, Leave, 1, 0x8f00),
                (500, Leave, 0, 0x9000),
            ],
            &[
                (50, Enter, 2, 0x5000),
                (60, Enter, 3, 0x4f00),
                (70, Leave, 3, 0x4f00),
                (80, Leave, 2, 0x5000),
            ],
        ],
    );
    let a = run(&trace);
    assert_eq!(a.totals.vanished_frames, 0);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    let mn = fs(&a, 2);
    assert_eq!((mn.calls, mn.segments, mn.resumes), (1, 2, 1), "{mn:?}");
    assert_eq!(fs(&a, 3).calls, 2);
    // The first segment ran its whole length.
    let mut frames = Collect::default();
    analyze_with(&trace[..], &Options::default(), &mut frames).unwrap();
    let first = frames
        .0
        .iter()
        .find(|(t, f)| *t == ThreadIdx(0) && f.func == FunctionIdx(2))
        .unwrap();
    assert_eq!((first.1.start_ns, first.1.end_ns), (20, 100));
}

/// Two calls of L3, each: first segment on thread 0 (suspends), a pool resume at 0x840 on
/// thread 1 (suspends), a timer resume 0x490 deeper at 0x3b0 on thread 1 (no event shows the
/// 0x840 segment gone), which completes, after calling L4 if `calls_l4`.
fn timer_resumes(first_timer_sp: u64, calls_l4: bool) -> Vec<u8> {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Leave, 1, 0x8f00),
        (2_000, Enter, 1, 0x8f00),
        (2_010, Enter, 2, 0x8eb0),
        (2_020, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let pool: Vec<(u64, EventKind, u32, u64)> = [
        (100, Enter, 2, 0x840),
        (200, Enter, 2, first_timer_sp),
        (210, Enter, 3, first_timer_sp - 0x120),
        (220, Leave, 3, first_timer_sp - 0x120),
        (230, Leave, 2, first_timer_sp),
        (2_100, Enter, 2, 0x840),
        (2_200, Enter, 2, 0x3b0),
        (2_210, Enter, 3, 0x290),
        (2_220, Leave, 3, 0x290),
        (2_230, Leave, 2, 0x3b0),
    ]
    .into_iter()
    .filter(|&(_, _, f, _)| calls_l4 || f != 3)
    .collect();
    async_trace(&[main, &pool])
}

/// The timer resume comes at a distance below the top L3 segment that no direct call from L3
/// uses (L3 → L4 is 0x120): a resume, not a recursion. Before any call from L3 returned, the
/// thread's next events show that distance (L4 called from the resumed segment). Without any
/// such evidence the first one is ambiguous: counted as a call, and flagged.
#[test]
fn timer_resume_below_a_suspended_segment() {
    let exact = |a: &Analysis| {
        let l3 = fs(a, 2);
        assert_eq!(a.totals.unmatched_leaves, 0);
        assert_eq!(a.totals.mismatched_frames, 0);
        assert_eq!(a.totals.vanished_frames, 0);
        assert_eq!(
            (
                l3.calls,
                l3.segments,
                l3.resumes,
                l3.suspensions,
                l3.ambiguous_calls
            ),
            (2, 6, 4, 4, 0),
            "{l3:?}"
        );
    };
    // L3's frame size from the look-ahead (L4 called at 0x290 from the segment at 0x3b0).
    exact(&run(&timer_resumes(0x3b0, true)));
    // The thread's dispatch stack pointer is known at the second timer resume.
    exact(&run(&timer_resumes(0x840, true)));
    // No call from L3 at all: the first timer resume may be a recursion.
    let a = run(&timer_resumes(0x3b0, false));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(l3.segments, 6);
    // Flagged: the count of calls may be off (here the bogus call leaves the first one
    // waiting, and the second call's resume is attached to it by order).
    assert_eq!(l3.ambiguous_calls, 1, "{l3:?}");
}

/// A call that suspends and is never resumed: one suspension, pending at the end (counted
/// once, not again when the pending call is settled).
#[test]
fn suspended_and_never_resumed() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let a = run(&async_trace(&[main]));
    let l3 = fs(&a, 2);
    assert_eq!(
        (l3.calls, l3.segments, l3.suspensions, l3.pending_at_end),
        (1, 1, 1, 1),
        "{l3:?}"
    );
}

/// E1 → E2 → E3 (runtime-async variants 1, 2, 3 called from Run 0). E3 resumes on thread 1
/// and throws; the exception passes E2 and E1 resumes and catches it, all before thread 0's
/// next event shows the three first segments gone (a preempted thread). E2 suspended once and
/// is over when E1 resumes: nothing pending, one suspension each.
#[test]
fn caller_resumes_before_its_callee_segment_is_seen_to_end() {
    use eltrace_trace::FunctionFlags;
    let funcs = [
        ("Run", 0x0600_0010, 0, 0),
        ("E1", 0x0600_0011, 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("E2", 0x0600_0012, 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("E3", 0x0600_0013, 0x2000, FunctionFlags::ASYNC_VARIANT),
    ];
    let main = [
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8e00),
        (30, Enter, 3, 0x8d00),
        (500, Leave, 0, 0x9000),
    ];
    let pool = [
        (100, Enter, 3, 0x840),
        (110, Unwind, 3, 0),
        (200, Enter, 1, 0x840),
        (210, Leave, 1, 0x840),
    ];
    let a = run(&flagged_trace(&funcs, &[&main, &pool], 1_000));
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    let row = |f| {
        let s = fs(&a, f);
        (s.calls, s.segments, s.suspensions, s.pending_at_end)
    };
    assert_eq!(row(1), (1, 2, 1, 0), "E1 {:?}", fs(&a, 1));
    assert_eq!(row(2), (1, 1, 1, 0), "E2 {:?}", fs(&a, 2));
    assert_eq!(row(3), (1, 2, 1, 0), "E3 {:?}", fs(&a, 3));
    // A first segment seen gone only at 500 suspended by the time its call resumed on the
    // pool: E1's ends at 200, E3's at 100, so no call's segments add up to more than its wall
    // time. E2 never resumed: nothing bounds its segment before 500.
    assert_eq!(fs(&a, 1).inclusive_ns, (200 - 10) + (210 - 200));
    assert_eq!(fs(&a, 3).inclusive_ns, (100 - 30) + (110 - 100));
    assert_eq!(fs(&a, 2).inclusive_ns, 500 - 20);
    for f in [1, 3] {
        assert!(
            fs(&a, f).wall_ns >= fs(&a, f).inclusive_ns,
            "{:?}",
            fs(&a, f)
        );
    }
}

/// Two calls of L3 suspend on thread 0 (A, then B). On thread 1, A resumes at the pool's
/// dispatch (0x840) and suspends with no event showing it; then a timer resume comes 0x150
/// deeper, on top of A's segment, while B waits. L3's direct calls go 0x120 deeper (L4): this
/// Enter did not come from A's segment, it is B's resume, not a recursive call.
#[test]
fn deeper_resume_over_a_segment_while_others_wait() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (22, Enter, 3, 0x8d90),
        (24, Leave, 3, 0x8d90),
        (30, Leave, 1, 0x8f00),
        (40, Enter, 1, 0x8f00),
        (50, Enter, 2, 0x8eb0),
        (60, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let pool: &[(u64, EventKind, u32, u64)] = &[
        (100, Enter, 2, 0x840),
        (200, Enter, 2, 0x6f0),
        (210, Enter, 3, 0x5d0),
        (220, Leave, 3, 0x5d0),
        (230, Leave, 2, 0x6f0),
        (300, Enter, 2, 0x840),
        (310, Enter, 3, 0x720),
        (320, Leave, 3, 0x720),
        (330, Leave, 2, 0x840),
    ];
    let a = run(&async_trace(&[main, pool]));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(a.totals.vanished_frames, 0);
    assert_eq!(
        (
            l3.calls,
            l3.segments,
            l3.resumes,
            l3.suspensions,
            l3.pending_at_end
        ),
        (2, 5, 3, 3, 0),
        "{l3:?}"
    );
}

/// A runtime-async method that awaits itself directly (a recursion) before any call from it
/// returned: the look-ahead finds its frame size from a later direct call (L4 from the inner
/// frame) equal to the recursion's distance, so the inner Enter is a new call, not a resume.
#[test]
fn direct_async_recursion_is_a_call() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 2, 0x8e30),
        (40, Enter, 3, 0x8db0),
        (50, Leave, 3, 0x8db0),
        (60, Leave, 2, 0x8e30),
        (70, Leave, 2, 0x8eb0),
        (80, Leave, 1, 0x8f00),
        (90, Leave, 0, 0x9000),
    ];
    let a = run(&async_trace(&[main]));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(
        (l3.calls, l3.segments, l3.resumes, l3.ambiguous_calls),
        (2, 2, 0, 0),
        "{l3:?}"
    );
}

/// Functions of the continuation-allocation tests: Run (plain), Step (a runtime-async
/// variant), and the runtime's continuation allocator.
const ALLOC_FUNCS: [(&str, u32, u32, u32); 4] = [
    ("Run", 0x0600_0010, 0, 0),
    ("Step", 0x0600_0011, 0x2000, VARIANT),
    (
        "AllocContinuation",
        0x0600_0012,
        0,
        eltrace_trace::FunctionFlags::CONT_ALLOCATOR,
    ),
    ("Alloc", 0x0600_0013, 0, 0),
];

/// A trace of [`ALLOC_FUNCS`] whose continuation values carry GC epochs.
fn alloc_trace(threads: &[&[Ev]]) -> Vec<u8> {
    epoch_trace(&ALLOC_FUNCS, threads)
}

/// A trace of `funcs` whose continuation values carry GC epochs.
fn epoch_trace(funcs: &[(&str, u32, u32, u32)], threads: &[&[Ev]]) -> Vec<u8> {
    let mut info = eltrace_trace::TraceInfo::new(7);
    info.extra.push((
        eltrace_trace::protocol::info_key::GC_EPOCHS.into(),
        "1".into(),
    ));
    flagged_trace_with(info, funcs, threads, 1_000)
}

/// Two calls of Step suspend on thread 0, A then B, each allocating its continuation (the
/// allocator's Leave at an SP inside the suspending frame; B's Enter at A's SP shows A gone).
/// The pool resumes A before thread 0's next event shows A's segment gone (it still looks
/// running), then B: each resume goes to the call its continuation names.
#[test]
fn a_resume_continues_the_call_that_allocated_its_continuation() {
    use eltrace_trace::EventKind::Continuation;
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Continuation, 1, 0),
        (11, Enter, 1, 0x8f00),
        (20, Continuation, 2, 0xA000),
        (21, Leave, 2, 0x8e80),
        (30, Continuation, 1, 0),
        (31, Enter, 1, 0x8f00),
        (40, Continuation, 2, 0xB000),
        (41, Leave, 2, 0x8e80),
        (500, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (25, Continuation, 1, 0xA000),
        (26, Enter, 1, 0x840),
        (28, Leave, 1, 0x840),
        (100, Continuation, 1, 0xB000),
        (101, Enter, 1, 0x840),
        (110, Leave, 1, 0x840),
    ];
    let (a, frames) = analyse_records(&alloc_trace(&[main, pool]), &Options::default(), true);
    assert_exact(&a);
    let step = fs(&a, 1);
    assert_eq!(
        (step.calls, step.segments, step.suspensions, step.resumes),
        (2, 4, 2, 2),
        "{step:?}"
    );
    assert_eq!((step.identity_resumes, step.inferred_resumes), (2, 0));
    assert_eq!(step.pending_at_end, 0);
    // The allocator is no frame and no call.
    assert!(frames.iter().all(|(_, f)| f.func.0 != 2));
    assert_eq!(a.function_stats(FunctionIdx(2)).map_or(0, |s| s.calls), 0);
    let call_at = |start: u64| segment_call(&frames, 1, start);
    assert_eq!(call_at(26), call_at(11), "the first resume continues A");
    assert_eq!(call_at(101), call_at(31), "the second resume continues B");
}

/// A first segment that suspends without allocating a continuation (the frame below it
/// allocates at its SP: it tail-awaited) is never resumed: its call ends there, not pending.
#[test]
fn a_first_segment_gone_without_allocating_tail_awaited() {
    use eltrace_trace::EventKind::Continuation;
    let main: &[Ev] = &[
        (0, Continuation, 1, 0),
        (1, Enter, 1, 0x9000),
        (10, Continuation, 1, 0),
        (11, Enter, 1, 0x8f00),
        // Run's Step (0x9000) allocates at the inner Step's SP: the inner one is gone and
        // allocated nothing.
        (20, Continuation, 2, 0xA000),
        (21, Leave, 2, 0x8f00),
        (500, Enter, 0, 0x9100),
        (510, Leave, 0, 0x9100),
    ];
    let a = run(&alloc_trace(&[main]));
    let step = fs(&a, 1);
    assert_eq!((step.calls, step.suspensions), (2, 2), "{step:?}");
    assert_eq!(step.tail_awaits, 1, "{step:?}");
    // The outer Step allocated: it waits for its resume.
    assert_eq!(step.pending_at_end, 1, "{step:?}");
}

/// Selected as well (`--include '*'`), the allocator's Enter is recorded and it is a frame of
/// its own, with what it calls nested under it: the frames gone show at its Enter, the frame
/// below it gets the continuation, and the resumes go to their calls as without it.
#[test]
fn a_selected_allocator_is_a_frame_and_still_names_the_call() {
    use eltrace_trace::EventKind::Continuation;
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Continuation, 1, 0),
        (11, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8e80),
        (21, Enter, 3, 0x8e40),
        (22, Leave, 3, 0x8e40),
        (23, Continuation, 2, 0xA000),
        (24, Leave, 2, 0x8e80),
        (30, Continuation, 1, 0),
        (31, Enter, 1, 0x8f00),
        (40, Enter, 2, 0x8e80),
        (41, Enter, 3, 0x8e40),
        (42, Leave, 3, 0x8e40),
        (43, Continuation, 2, 0xB000),
        (44, Leave, 2, 0x8e80),
        (500, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (100, Continuation, 1, 0xB000),
        (101, Enter, 1, 0x840),
        (110, Leave, 1, 0x840),
        (200, Continuation, 1, 0xA000),
        (201, Enter, 1, 0x840),
        (210, Leave, 1, 0x840),
    ];
    for quick in [true, false] {
        let (a, frames) = analyse_records(&alloc_trace(&[main, pool]), &Options::default(), quick);
        assert_exact(&a);
        let step = fs(&a, 1);
        assert_eq!(
            (step.calls, step.segments, step.resumes),
            (2, 4, 2),
            "{step:?}"
        );
        assert_eq!((step.identity_resumes, step.inferred_resumes), (2, 0));
        // The allocator and its callee are frames, the callee under the allocator.
        assert_eq!(fs(&a, 2).calls, 2);
        assert_eq!(edge(&a, Some(2), 3).calls, 2);
        let call_at = |start: u64| segment_call(&frames, 1, start);
        assert_eq!(call_at(101), call_at(31), "quick {quick}");
        assert_eq!(call_at(201), call_at(11), "quick {quick}");
    }
}

/// Functions of the inline-resume test: Run (plain), Outer and Inner (runtime-async
/// variants), Inner's thunk, the runtime's continuation allocator, and Leaf (plain).
const INLINE_FUNCS: [(&str, u32, u32, u32); 6] = [
    ("Run", 0x0600_0010, 0, 0),
    ("Outer", 0x0600_0011, 0x2000, VARIANT),
    ("Inner", 0x0600_0012, 0x2000, VARIANT),
    ("Inner", 0x0600_0012, 0x2000, THUNK),
    (
        "AllocContinuation",
        0x0600_0013,
        0,
        eltrace_trace::FunctionFlags::CONT_ALLOCATOR,
    ),
    ("Leaf", 0x0600_0014, 0, 0),
];

/// Outer's resumed segment completes a TaskCompletionSource that Inner awaits (no
/// RunContinuationsAsynchronously): Inner resumes inline, deeper on Outer's stack, calls Leaf,
/// suspends again (no Leave, no new continuation on .NET 11) and returns into Outer, which
/// calls Leaf at its own call distance, resumes Inner inline once more (Inner completes) and
/// completes. Outer's segment never suspended there. (The rules took every resume below
/// runtime-async segments alone as a dispatcher's: Outer got 2 suspensions and stayed
/// pending.) The events are those of the .NET 11.0.0 recording of such a program.
#[test]
fn a_resume_run_inline_inside_a_running_segment_leaves_it_running() {
    use eltrace_trace::EventKind::Continuation;
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Continuation, 1, 0),
        (11, Enter, 1, 0x8f00),
        // Outer calls Inner through its thunk, 0x90 below it; Inner allocates 0xA000 and
        // suspends; the thunk returns.
        (20, Enter, 3, 0x8e70),
        (21, Continuation, 2, 0),
        (22, Enter, 2, 0x8df0),
        (30, Continuation, 4, 0xA000),
        (31, Leave, 4, 0x8d80),
        (32, Leave, 3, 0x8e70),
        // Outer allocates 0xB000 and suspends.
        (40, Continuation, 4, 0xB000),
        (41, Leave, 4, 0x8e70),
        (500, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (100, Continuation, 1, 0xB000),
        (101, Enter, 1, 0x5930),
        (110, Continuation, 2, 0xA000),
        (111, Enter, 2, 0x5420),
        (112, Enter, 5, 0x53b0),
        (113, Leave, 5, 0x53b0),
        (120, Enter, 5, 0x58a0),
        (121, Leave, 5, 0x58a0),
        (130, Continuation, 2, 0xA000),
        (131, Enter, 2, 0x5420),
        (132, Leave, 2, 0x5420),
        (140, Leave, 1, 0x5930),
    ];
    let a = run(&epoch_trace(&INLINE_FUNCS, &[main, pool]));
    assert_exact(&a);
    let outer = fs(&a, 1);
    assert_eq!(
        (
            outer.calls,
            outer.segments,
            outer.suspensions,
            outer.pending_at_end
        ),
        (1, 2, 1, 0),
        "{outer:?}"
    );
    let inner = fs(&a, 2);
    assert_eq!(
        (
            inner.calls,
            inner.segments,
            inner.suspensions,
            inner.pending_at_end
        ),
        (1, 3, 2, 0),
        "{inner:?}"
    );
    assert_eq!(inner.identity_resumes, 2, "{inner:?}");
}
