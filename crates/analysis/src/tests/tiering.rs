//! Runtime-async event patterns from real .NET 10 and 11.0.0 traces that broke the linking:
//! dispatchers that resume deeper than before (tiering and on-stack replacement of the
//! thread pool's dispatch loop), .NET 11.0.0's variant Leaves (no suspension Leaves either),
//! and the async variant of a method that is not async.

use eltrace_trace::EventKind::{Catch, Enter, Leave, Throw, Unwind};
use eltrace_trace::TraceInfo;
use eltrace_trace::protocol::info_key;

use super::build::*;
use crate::*;

/// A trace of `funcs` (method, token, impl flags, function flags) of `Ns.T` with `info`.
fn trace_with(info: TraceInfo, funcs: &[(&str, u32, u32, u32)], threads: &[&[Ev]]) -> Vec<u8> {
    flagged_trace_with(info, funcs, threads, 100_000)
}

/// (calls, segments, suspensions, pending_at_end, ambiguous_calls) of function `f`.
fn counts(a: &Analysis, f: u32) -> (u64, u64, u64, u64, u64) {
    let s = fs(a, f);
    (
        s.calls,
        s.segments,
        s.suspensions,
        s.pending_at_end,
        s.ambiguous_calls,
    )
}

/// `tier-caller` (.NET 10 and 11.0.0): Loop awaits Step, Step awaits Leaf, Leaf yields 3
/// times. The pool resumes at 0x840 until its dispatch loop moves to OSR code; then it
/// resumes 0x40 deeper, at 0x800: below the resumed Loop segment (0x840) but above the Step
/// and Leaf frames Loop's second iteration called (0x6b0, 0x5b0). Their sp shows Step and
/// Leaf gone; Loop's segment, which awaited Step, suspended with them. (Before: the Leaf
/// resume at 0x800 was taken for a first call from Loop's segment, and every later call
/// counted again: Loop 6002 calls instead of 1.)
#[test]
fn osr_dispatcher_resumes_below_an_awaiting_caller() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Loop", 0x0600_0002, 0x2000, THUNK),
        ("Loop", 0x0600_0002, 0x2000, VARIANT),
        ("Step", 0x0600_0003, 0x2000, VARIANT),
        ("Leaf", 0x0600_0004, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 3, 0x8d20),
        (40, Enter, 4, 0x8c20),
        (50, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        // Tier-0 dispatch loop: Leaf's resumes, its completion, Step's and Loop's resumes.
        (100, Enter, 4, 0x840),
        (110, Enter, 4, 0x840),
        (120, Enter, 4, 0x840),
        (130, Leave, 4, 0x840),
        (140, Enter, 3, 0x840),
        (150, Leave, 3, 0x840),
        (160, Enter, 2, 0x840),
        // Loop's second iteration: first calls of Step and Leaf, which suspend (no Leave).
        (170, Enter, 3, 0x6b0),
        (180, Enter, 4, 0x5b0),
        // The OSR'd dispatch loop resumes 0x40 deeper.
        (300, Enter, 4, 0x800),
        (310, Enter, 4, 0x800),
        (320, Enter, 4, 0x800),
        (330, Leave, 4, 0x800),
        (340, Enter, 3, 0x800),
        (350, Leave, 3, 0x800),
        (360, Enter, 2, 0x800),
        (370, Leave, 2, 0x800),
    ];
    let a = run(&trace_with(TraceInfo::new(7), &funcs, &[main, pool]));
    assert_exact(&a);
    assert_eq!(counts(&a, 2), (1, 3, 2, 0, 0), "Loop {:?}", fs(&a, 2));
    assert_eq!(counts(&a, 3), (2, 4, 2, 0, 0), "Step {:?}", fs(&a, 3));
    assert_eq!(counts(&a, 4), (2, 8, 6, 0, 0), "Leaf {:?}", fs(&a, 4));
}

/// Outer awaits Spin, which yields in a loop. The pool resumes Spin at 0x840; its last
/// resume comes 0x40 deeper, over Spin's own suspended segment, before any direct call from
/// Spin was seen (Spin calls nothing probed): a recursion or a resume? The thread's next
/// events decide when they show 0x800 to be a dispatch sp: the frame completes and Outer (its
/// caller) resumes at that very sp (`tier-callee`), or it suspends and a variant is resumed
/// there next (`tier-both`). Where the thread instead goes on in the segment below (a real
/// recursion), the Enter stays a call, flagged ambiguous.
#[test]
fn deeper_resume_over_its_own_segment_shown_by_the_next_events() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Outer", 0x0600_0002, 0x2000, THUNK),
        ("Outer", 0x0600_0002, 0x2000, VARIANT),
        ("Spin", 0x0600_0003, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 3, 0x8d90),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let head: &[Ev] = &[(100, Enter, 3, 0x840), (110, Enter, 3, 0x840)];
    // The last resume completes; Outer resumes at the same sp.
    let completes: &[Ev] = &[
        (200, Enter, 3, 0x800),
        (210, Leave, 3, 0x800),
        (220, Enter, 2, 0x800),
        (230, Leave, 2, 0x800),
    ];
    let pool = [head, completes].concat();
    let a = run(&trace_with(TraceInfo::new(7), &funcs, &[main, &pool]));
    assert_exact(&a);
    assert_eq!(counts(&a, 3), (1, 4, 3, 0, 0), "Spin {:?}", fs(&a, 3));
    assert_eq!(counts(&a, 2), (1, 2, 1, 0, 0), "Outer {:?}", fs(&a, 2));
    // It suspends once more, and the dispatcher resumes it at 0x800 again.
    let suspends: &[Ev] = &[
        (200, Enter, 3, 0x800),
        (205, Enter, 3, 0x800),
        (210, Leave, 3, 0x800),
        (220, Enter, 2, 0x800),
        (230, Leave, 2, 0x800),
    ];
    let pool = [head, suspends].concat();
    let a = run(&trace_with(TraceInfo::new(7), &funcs, &[main, &pool]));
    assert_exact(&a);
    assert_eq!(counts(&a, 3), (1, 5, 4, 0, 0), "Spin {:?}", fs(&a, 3));
    // A recursion: the deeper frame returns into the segment below, which goes on and
    // completes at its own sp. No evidence of a dispatcher: a call, flagged.
    let recursion: &[Ev] = &[
        (200, Enter, 3, 0x800),
        (210, Leave, 3, 0x800),
        (220, Leave, 3, 0x840),
        (230, Enter, 2, 0x840),
        (240, Leave, 2, 0x840),
    ];
    let pool = [head, recursion].concat();
    let a = run(&trace_with(TraceInfo::new(7), &funcs, &[main, &pool]));
    assert_eq!(a.totals.unmatched_leaves, 0);
    let spin = fs(&a, 3);
    assert_eq!((spin.calls, spin.ambiguous_calls), (2, 1), "{spin:?}");
}

/// `exception` on .NET 11.0.0: E1 awaits E2 awaits E3; E3 throws after its resume; the
/// exception passes E2 without resuming it and is caught in E1's resume. 11.0.0 reports no
/// Leave at a suspension either, so E1's completing Leave is not a possible suspension (taken
/// for one, E1 counted 4 suspensions and a pending call in 3 calls, and E2 stayed pending).
#[test]
fn exception_on_11_has_no_suspension_leaves() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("E1", 0x0600_0002, 0x2000, THUNK),
        ("E1", 0x0600_0002, 0x2000, VARIANT),
        ("E2", 0x0600_0003, 0x2000, VARIANT),
        ("E3", 0x0600_0004, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 3, 0x8e10),
        (40, Enter, 4, 0x8d90),
        (50, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (100, Enter, 4, 0x840),
        (110, Throw, u32::MAX, 0),
        (120, Unwind, 4, 0),
        (130, Enter, 2, 0x840),
        (140, Throw, u32::MAX, 0),
        (150, Catch, 2, 0),
        (160, Leave, 2, 0x840),
    ];
    let mut info = TraceInfo::new(7);
    info.runtime = "CoreCLR 11.0.0".into();
    assert!(!info.async_suspend_leaves());
    let a = run(&trace_with(info.clone(), &funcs, &[main, pool]));
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(counts(&a, 2), (1, 2, 1, 0, 0), "E1 {:?}", fs(&a, 2));
    assert_eq!(counts(&a, 3), (1, 1, 1, 0, 0), "E2 {:?}", fs(&a, 3));
    assert_eq!(counts(&a, 4), (1, 2, 1, 0, 0), "E3 {:?}", fs(&a, 4));
    // Only the INFO key turns suspension Leaves on.
    info.extra
        .push((info_key::ASYNC_SUSPEND_LEAVE.into(), info_key::YES.into()));
    assert!(info.async_suspend_leaves());
}

/// `plain-await` on .NET 10: Outer awaits Plain, a Task-returning method that is not async.
/// The runtime calls Plain's async variant (no Async impl flag; the profiler marks it by the
/// token lookup), which calls the Task-returning Plain (marked its thunk), which calls Inner's
/// thunk. The variant is a segment like any other: 1 call, 2 segments, 1 suspension; the
/// Task-returning Plain an ordinary frame.
#[test]
fn async_variant_of_a_method_that_is_not_async() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Outer", 0x0600_0002, 0x2000, THUNK),
        ("Outer", 0x0600_0002, 0x2000, VARIANT),
        ("Plain", 0x0600_0003, 0x8, VARIANT),
        ("Plain", 0x0600_0003, 0x8, THUNK),
        ("Inner", 0x0600_0004, 0x2000, THUNK),
        ("Inner", 0x0600_0004, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 3, 0x8db0),
        (40, Enter, 4, 0x8d60),
        (50, Enter, 5, 0x8cf0),
        (60, Enter, 6, 0x8ca0),
        (70, Leave, 5, 0x8cf0),
        (80, Leave, 4, 0x8d60),
        (90, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (100, Enter, 6, 0x840),
        (110, Leave, 6, 0x840),
        (120, Enter, 3, 0x440),
        (130, Leave, 3, 0x440),
        (140, Enter, 2, 0x840),
        (150, Leave, 2, 0x840),
    ];
    let a = run(&trace_with(TraceInfo::new(7), &funcs, &[main, pool]));
    assert_exact(&a);
    assert_eq!(counts(&a, 3), (1, 2, 1, 0, 0), "Plain {:?}", fs(&a, 3));
    assert_eq!((fs(&a, 4).calls, fs(&a, 4).suspensions), (1, 0));
    assert_eq!(counts(&a, 2), (1, 2, 1, 0, 0), "Outer {:?}", fs(&a, 2));
    assert_eq!(counts(&a, 6), (1, 2, 1, 0, 0), "Inner {:?}", fs(&a, 6));
}
