//! Runtime-async patterns of the oracle's `runtime-async` program (tests/oracle, the corpus's
//! `async` program compiled with runtime async) on .NET 10 and 11.0.0 that broke the linking:
//! a recursion's resumes picked among calls that still await a callee, timer-queue resumes
//! below a suspended caller's segment, two instantiations of a generic method's variant (no
//! role flags), and the caller of a segment that went on elsewhere.

use eltrace_trace::EventKind::{Catch, Enter, Leave, Throw, Unwind};

use super::build::*;

/// The runtime-async patterns' traces all end at 100_000.
fn trace(funcs: &[(&str, u32, u32, u32)], threads: &[&[Ev]]) -> Vec<u8> {
    flagged_trace(funcs, threads, 100_000)
}

/// `Chain(5)` awaits `Chain(4)` … awaits `Chain(0)`, which awaits a `Task.Delay`; each level
/// then awaits a `Task.Yield`. The timer resumes Chain(0) on T1, which completes; Chain(1)
/// resumes after it and suspends on its Yield, which T1 does not show (no later event). T2
/// resumes Chain(1) after the Yield: Chain(2)-(5) certainly suspended, but each awaits a
/// callee that is not over, so none of them can be resumed; Chain(1), still open on T1, is.
/// (Before: Chain(2) was taken, and the chain of resumes went wrong from there: 8 calls
/// instead of 6 in every run.)
#[test]
fn recursive_resume_skips_calls_that_await_a_callee() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("RunAsync", 0x0600_0002, 0x2000, THUNK),
        ("RunAsync", 0x0600_0002, 0x2000, VARIANT),
        ("Chain", 0x0600_0003, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 3, 0x8a90),
        (31, Enter, 3, 0x8990),
        (32, Enter, 3, 0x8890),
        (33, Enter, 3, 0x8790),
        (34, Enter, 3, 0x8690),
        (35, Enter, 3, 0x8590),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let t1: &[Ev] = &[
        (100, Enter, 3, 0x63b0),
        (110, Leave, 3, 0x63b0),
        (120, Enter, 3, 0x63b0),
    ];
    let mut t2: Vec<Ev> = vec![(200, Enter, 3, 0x5840), (210, Leave, 3, 0x5840)];
    // Chain(2)..Chain(5): resumed after its callee completed, then after its Yield.
    for level in 0..4u64 {
        let t = 220 + level * 30;
        t2.extend([
            (t, Enter, 3, 0x5840),
            (t + 10, Enter, 3, 0x5840),
            (t + 20, Leave, 3, 0x5840),
        ]);
    }
    t2.extend([(400, Enter, 2, 0x5840), (410, Leave, 2, 0x5840)]);
    let a = run(&trace(&funcs, &[main, t1, &t2]));
    assert_exact(&a);
    assert_async(&a, 3, "Chain", (6, 17, 11, 0));
    assert_async(&a, 2, "RunAsync", (1, 2, 1, 0));
}

/// `RunAsync` (resumed on a pool thread at 0x5840) starts 3 `Leaf`s through their thunks
/// (from a lambda that `Select` calls) and awaits them all; the timer queue resumes the
/// Leafs on that thread 0x490 below RunAsync's segment, then 0x370 below it, where
/// RunAsync's direct calls go 0x430 deep (its first call of `Chain`, when no Chain call could
/// be resumed). Those Enters are not calls from RunAsync but resumes, and RunAsync's segment
/// suspended. (Before: every timer resume on that thread counted as a call: Leaf 24 calls
/// instead of 12.) A Leaf entered at RunAsync's own call distance stays a call.
#[test]
fn timer_resumes_below_a_suspended_caller() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("RunAsync", 0x0600_0002, 0x2000, THUNK),
        ("RunAsync", 0x0600_0002, 0x2000, VARIANT),
        ("Chain", 0x0600_0003, 0x2000, VARIANT),
        ("Lambda", 0x0600_0004, 0, 0),
        ("Leaf", 0x0600_0005, 0x2000, THUNK),
        ("Leaf", 0x0600_0005, 0x2000, VARIANT),
        ("Square", 0x0600_0006, 0, 0),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 3, 0x8a90),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let mut pool: Vec<Ev> = vec![
        (100, Enter, 3, 0x5840),
        (110, Leave, 3, 0x5840),
        (120, Enter, 2, 0x5840),
    ];
    for i in 0..3u64 {
        let t = 130 + i * 10;
        pool.extend([
            (t, Enter, 4, 0x5240),
            (t + 1, Enter, 5, 0x5200),
            (t + 2, Enter, 6, 0x51b0),
            (t + 3, Leave, 5, 0x5200),
            (t + 4, Leave, 4, 0x5240),
        ]);
    }
    let resumes: Vec<Ev> = [0x53b0u64, 0x54d0, 0x54d0]
        .iter()
        .enumerate()
        .flat_map(|(i, &sp)| {
            let t = 300 + i as u64 * 10;
            [
                (t, Enter, 6, sp),
                (t + 1, Enter, 7, sp - 0x80),
                (t + 2, Leave, 7, sp - 0x80),
                (t + 3, Leave, 6, sp),
            ]
        })
        .collect();
    // RunAsync resumed inline when the last Leaf completes WhenAll's task.
    let tail: &[Ev] = &[(400, Enter, 2, 0x4d90), (410, Leave, 2, 0x4d90)];
    let events = [pool.as_slice(), &resumes, tail].concat();
    let a = run(&trace(&funcs, &[main, &events]));
    assert_exact(&a);
    assert_async(&a, 6, "Leaf", (3, 6, 3, 0));
    assert_async(&a, 2, "RunAsync", (1, 3, 2, 0));
    assert_async(&a, 3, "Chain", (1, 2, 1, 0));

    // RunAsync awaits a fourth Leaf directly, 0x430 below it, while 3 wait: a call.
    let direct: &[Ev] = &[(300, Enter, 6, 0x5410), (310, Leave, 6, 0x5410)];
    let tail: &[Ev] = &[(320, Leave, 2, 0x5840)];
    let events = [pool.as_slice(), direct, tail].concat();
    let a = run(&trace(&funcs, &[main, &events]));
    assert_exact(&a);
    let leaf = fs(&a, 6);
    assert_eq!((leaf.calls, leaf.segments), (4, 4), "Leaf {leaf:?}");
}

/// `Shapes` awaits `new AsyncBox<int>(i).GetAsync()`, then `new AsyncBox<string>(..)
/// .GetAsync()`: two FunctionIDs of one method, both variants, neither flagged (instantiations
/// of a generic type; no thunk is ever called). GetAsync<int> suspends on T1, whose next event
/// is the timer's resume of GetAsync<string> below it, as a thunk's variant would be; but the
/// first event at or above GetAsync<int>'s frame that follows is no Leave of it, as a thunk's
/// would be; where no such event is known, the distance is not one a thunk used. (Before:
/// GetAsync<int> taken for a thunk, its 3 calls lost, in some runs on .NET 11.0.0.)
#[test]
fn two_instantiations_of_a_variant_are_no_thunk_and_variant() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Shapes", 0x0600_0002, 0x2000, THUNK),
        ("Shapes", 0x0600_0002, 0x2000, VARIANT),
        ("GetAsync", 0x0600_0010, 0x2000, 0),
        ("GetAsync", 0x0600_0010, 0x2000, 0),
        ("Echo", 0x0600_0003, 0x2000, VARIANT),
        ("Work", 0x0600_0004, 0, 0),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 5, 0x8da0),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let t1: &[Ev] = &[
        (100, Enter, 5, 0x58f0),
        (110, Leave, 5, 0x58f0),
        (120, Enter, 2, 0x58f0),
        (130, Enter, 3, 0x57d0),
        (300, Enter, 4, 0x5420),
        (310, Leave, 4, 0x5420),
        (320, Enter, 2, 0x5420),
        (330, Leave, 2, 0x5420),
        (340, Enter, 6, 0x58f0),
        (350, Leave, 6, 0x58f0),
    ];
    let t2: &[Ev] = &[
        (200, Enter, 3, 0x6420),
        (210, Leave, 3, 0x6420),
        (220, Enter, 2, 0x6420),
        (230, Enter, 4, 0x6300),
        (400, Enter, 6, 0x68f0),
        (410, Leave, 6, 0x68f0),
    ];
    let a = run(&trace(&funcs, &[main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 3, "GetAsync<int>", (1, 2, 1, 0));
    assert_async(&a, 4, "GetAsync<string>", (1, 2, 1, 0));
    assert_async(&a, 2, "Shapes", (1, 4, 3, 0));
    assert_async(&a, 5, "Echo", (1, 2, 1, 0));

    // T1's later events are not known (the trace ends there): the distance decides. Shapes'
    // thunk entered its variant 0x40 below it; GetAsync<string>'s Enter is 0x3b0 below.
    let t1_short = &t1[..t1.len() - 2];
    let a = run(&trace(&funcs, &[main, t1_short, t2]));
    assert_async(&a, 3, "GetAsync<int>", (1, 2, 1, 0));
    assert_async(&a, 4, "GetAsync<string>", (1, 2, 1, 0));
}

/// .NET 11.0.0: on T2, RunAsync (resumed) awaits Shapes, which awaits Echo; all suspend,
/// unseen. Shapes goes on on T1 (Echo's resume completes, Shapes resumes and awaits Get).
/// The timer resumes Get on T2, below the three frames: Shapes' segment is stale (its call
/// went on elsewhere), Echo's above it too, and RunAsync's below it, which awaited Shapes,
/// suspended with it. (Before: Get's resume was taken for a first call from RunAsync's
/// segment: Shapes 2 calls instead of 1.)
#[test]
fn caller_of_a_segment_that_went_on_elsewhere_suspended_too() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("RunAsync", 0x0600_0002, 0x2000, THUNK),
        ("RunAsync", 0x0600_0002, 0x2000, VARIANT),
        ("Shapes", 0x0600_0003, 0x2000, VARIANT),
        ("Echo", 0x0600_0004, 0x2000, VARIANT),
        ("Get", 0x0600_0005, 0x2000, VARIANT),
        ("Pre", 0x0600_0006, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 6, 0x8da0),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let t2: &[Ev] = &[
        (100, Enter, 6, 0x58f0),
        (110, Leave, 6, 0x58f0),
        (120, Enter, 2, 0x58f0),
        (130, Enter, 3, 0x56e0),
        (140, Enter, 4, 0x55c0),
        (300, Enter, 5, 0x5420),
        (310, Leave, 5, 0x5420),
        (320, Enter, 3, 0x5420),
        (330, Leave, 3, 0x5420),
        (340, Enter, 2, 0x5420),
        (350, Leave, 2, 0x5420),
    ];
    let t1: &[Ev] = &[
        (200, Enter, 4, 0x68f0),
        (210, Leave, 4, 0x68f0),
        (220, Enter, 3, 0x68f0),
        (230, Enter, 5, 0x67d0),
    ];
    let a = run(&trace(&funcs, &[main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 2, "RunAsync", (1, 3, 2, 0));
    assert_async(&a, 3, "Shapes", (1, 3, 2, 0));
    assert_async(&a, 4, "Echo", (1, 2, 1, 0));
    assert_async(&a, 5, "Get", (1, 2, 1, 0));
    assert_async(&a, 6, "Pre", (1, 2, 1, 0));
}

/// `Fails` (called by RunAsync on a pool thread) awaits a `Task.Delay` and suspends; the
/// timer queue resumes it on the same thread 0x50 below its own suspended segment, where it
/// calls `Thrower` 0x70 deep, which throws: Fails' frame size is 0x70 (a callee that ends by
/// an Unwind shows it as well as one that returns), so the Enter 0x50 deep is no recursion
/// but a resume. (Before: taken for a recursive call, `Fails` 4 calls instead of 3 in some
/// runs.)
#[test]
fn timer_resume_just_below_its_own_segment_before_a_throw() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("RunAsync", 0x0600_0002, 0x2000, THUNK),
        ("RunAsync", 0x0600_0002, 0x2000, VARIANT),
        ("Fails", 0x0600_0003, 0x2000, VARIANT),
        ("Thrower", 0x0600_0004, 0, 0),
        ("Pre", 0x0600_0005, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 5, 0x8a90),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let pool: &[Ev] = &[
        (100, Enter, 5, 0x7840),
        (110, Leave, 5, 0x7840),
        (120, Enter, 2, 0x7840),
        (130, Enter, 3, 0x7410),
        (200, Enter, 3, 0x73c0),
        (210, Enter, 4, 0x7350),
        (220, Throw, u32::MAX, 0),
        (230, Unwind, 4, 0),
        (240, Unwind, 3, 0),
        (250, Enter, 2, 0x73b0),
        (260, Throw, u32::MAX, 0),
        (270, Catch, 2, 0),
        (280, Leave, 2, 0x73b0),
    ];
    let a = run(&trace(&funcs, &[main, pool]));
    assert_exact(&a);
    assert_async(&a, 3, "Fails", (1, 2, 1, 0));
    assert_async(&a, 2, "RunAsync", (1, 3, 2, 0));
}

/// `Throttled` starts 3 `One`s (through their thunks); each awaits a semaphore, then a
/// `Task.Delay`. On T2 the thread pool resumes two Ones at 0x6820, and the timer queue a third
/// resume 0x470 below: One calls nothing probed, so its frame size is unknown, and the next
/// events do not show 0x63b0 to be a dispatch sp (after its completion a work item comes at
/// 0x6820). But T1's dispatcher resumed One at 0x73b0 with nothing below it: pool threads'
/// stacks are laid out alike, so 0x…3b0 is where the timer queue resumes on every pool
/// thread. (Before: a recursive call, `One` 12-14 calls instead of 10 in some runs.)
#[test]
fn resume_at_another_pool_threads_dispatch_offset() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Throttled", 0x0600_0002, 0x2000, THUNK),
        ("Throttled", 0x0600_0002, 0x2000, VARIANT),
        ("One", 0x0600_0003, 0x2000, THUNK),
        ("One", 0x0600_0003, 0x2000, VARIANT),
    ];
    let mut main: Vec<Ev> = vec![
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
    ];
    for i in 0..3u64 {
        let t = 30 + i * 10;
        main.extend([
            (t, Enter, 3, 0x8c00),
            (t + 1, Enter, 4, 0x8bb0),
            (t + 2, Leave, 3, 0x8c00),
        ]);
    }
    main.extend([(60, Leave, 1, 0x8f00), (9_000, Leave, 0, 0x9000)]);
    let t1: &[Ev] = &[(100, Enter, 4, 0x73b0), (110, Leave, 4, 0x73b0)];
    let t2: &[Ev] = &[
        (200, Enter, 4, 0x6820),
        (210, Enter, 4, 0x6820),
        (220, Enter, 4, 0x63b0),
        (230, Leave, 4, 0x63b0),
        (240, Enter, 4, 0x6820),
        (250, Leave, 4, 0x6820),
        (260, Enter, 2, 0x6820),
        (270, Leave, 2, 0x6820),
    ];
    let a = run(&trace(&funcs, &[&main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 4, "One", (3, 8, 5, 0));
    assert_async(&a, 2, "Throttled", (1, 2, 1, 0));
}

/// `GetAsync` (no role flag) is called on T2, which has no further event: its role waits
/// for T2's next event. The timer queue resumes it on T1, whose next event is its Leave: a
/// variant, so T2's frame too, and it came first: classified before T1's Enter, which then
/// resumes its call. (Before: T1's Enter counted as a call of its own, and T2's segment,
/// decided at the end, as another: `GetAsync` 7 calls instead of 6, ``Echo``1`` likewise.)
#[test]
fn unresolved_frame_decided_by_another_threads_enter() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Shapes", 0x0600_0002, 0x2000, THUNK),
        ("Shapes", 0x0600_0002, 0x2000, VARIANT),
        ("GetAsync", 0x0600_0010, 0x2000, 0),
        ("Pre", 0x0600_0003, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 4, 0x8da0),
        (40, Leave, 1, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let t1: &[Ev] = &[
        (300, Enter, 3, 0x53b0),
        (310, Leave, 3, 0x53b0),
        (320, Enter, 2, 0x53b0),
        (330, Leave, 2, 0x53b0),
    ];
    let t2: &[Ev] = &[
        (100, Enter, 4, 0x5840),
        (110, Leave, 4, 0x5840),
        (120, Enter, 2, 0x5840),
        (130, Enter, 3, 0x5700),
    ];
    let a = run(&trace(&funcs, &[main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 3, "GetAsync", (1, 2, 1, 0));
    assert_async(&a, 2, "Shapes", (1, 3, 2, 0));
}
