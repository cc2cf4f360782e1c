//! Runtime-async patterns of the oracle's `runtime-async` program, continued from
//! `oracle_async`: a frame size learnt from a dispatcher's resume taken for a call, and a
//! resume at a dispatch stack pointer of a call still open on another thread.

use eltrace_trace::EventKind::{Enter, Leave};

use super::build::*;

/// The runtime-async patterns' traces all end at 100_000.
fn trace(funcs: &[(&str, u32, u32, u32)], threads: &[&[Ev]]) -> Vec<u8> {
    flagged_trace(funcs, threads, 100_000)
}

/// `Run` (main) calls `Throttled`, which starts 3 `One`s through their thunks, and `Shapes`,
/// which awaits `GetAsync`; all suspend. T1's timer queue resumes a One at 0x7350 with nothing
/// below (0x…350 is where the timer resumes on pool threads). On T2 the thread pool resumes a
/// One at 0x6820, the timer another 0x4d0 below it (One calls nothing probed: frame size
/// unknown), then a One at 0x6820 again, and the timer `GetAsync` 0x4d0 below that One's
/// suspended segment, which returns: read ahead as a call from One, it taught One a frame
/// size of 0x4d0, and the timer's resumes of One at that distance became recursive calls.
/// A callee at a dispatch page offset teaches its caller no frame size. (Before: `One` 5
/// calls instead of 3, 2 pending at the end; .NET 11.0.0, slow path: One 13 of 10.)
#[test]
fn no_frame_size_from_a_timer_resume_of_another_method() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Throttled", 0x0600_0002, 0x2000, THUNK),
        ("Throttled", 0x0600_0002, 0x2000, VARIANT),
        ("One", 0x0600_0003, 0x2000, THUNK),
        ("One", 0x0600_0003, 0x2000, VARIANT),
        ("Shapes", 0x0600_0004, 0x2000, THUNK),
        ("Shapes", 0x0600_0004, 0x2000, VARIANT),
        ("GetAsync", 0x0600_0010, 0x2000, VARIANT),
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
    main.extend([
        (60, Leave, 1, 0x8f00),
        (70, Enter, 5, 0x8f00),
        (71, Enter, 6, 0x8ec0),
        (72, Enter, 7, 0x8da0),
        (73, Leave, 5, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ]);
    let t1: &[Ev] = &[(100, Enter, 4, 0x7350), (110, Leave, 4, 0x7350)];
    let t2: &[Ev] = &[
        (200, Enter, 4, 0x6820),
        (210, Enter, 4, 0x6350),
        (220, Leave, 4, 0x6350),
        (230, Enter, 4, 0x6820),
        (240, Enter, 7, 0x6350),
        (250, Leave, 7, 0x6350),
        (260, Enter, 6, 0x6350),
        (270, Leave, 6, 0x6350),
        (280, Enter, 4, 0x6350),
        (290, Leave, 4, 0x6350),
        (300, Enter, 2, 0x6820),
        (310, Leave, 2, 0x6820),
    ];
    let a = run(&trace(&funcs, &[&main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 4, "One", (3, 8, 5, 0));
    assert_async(&a, 2, "Throttled", (1, 2, 1, 0));
    assert_async(&a, 6, "Shapes", (1, 2, 1, 0));
    assert_async(&a, 7, "GetAsync", (1, 2, 1, 0));
}

/// .NET 10, slow path (1 run of 152): main calls `Throttled` (2 `One`s through their thunks)
/// and `Shapes`, which awaits `Pre`; all suspend. T2 resumes Shapes after Pre, which calls
/// `GetAsync`; both suspend, unseen (T2 shows nothing more). T1's timer queue resumes a One at
/// 0x63b0 with nothing below, which completes; the pool resumes the other at 0x6820, which
/// suspends; then the timer resumes GetAsync at 0x63b0, a dispatch sp of T1, below that One
/// segment: the only GetAsync call is still open on T2, and it is the one resumed (then
/// Shapes after it, at the same sp). (Before: rule (a) asked only for suspended or left-open
/// calls, and the Enter was taken for a first call from One: GetAsync 2 calls instead of 1,
/// and Shapes 2 calls instead of 1.)
#[test]
fn resume_at_a_dispatch_sp_of_a_call_open_on_another_thread() {
    let funcs = [
        ("Run", 0x0600_0001, 0, 0),
        ("Throttled", 0x0600_0002, 0x2000, THUNK),
        ("Throttled", 0x0600_0002, 0x2000, VARIANT),
        ("One", 0x0600_0003, 0x2000, THUNK),
        ("One", 0x0600_0003, 0x2000, VARIANT),
        ("Shapes", 0x0600_0004, 0x2000, THUNK),
        ("Shapes", 0x0600_0004, 0x2000, VARIANT),
        ("GetAsync", 0x0600_0010, 0x2000, VARIANT),
        ("Pre", 0x0600_0005, 0x2000, VARIANT),
    ];
    let main: &[Ev] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8ec0),
        (30, Enter, 3, 0x8c00),
        (31, Enter, 4, 0x8bb0),
        (32, Leave, 3, 0x8c00),
        (40, Enter, 3, 0x8c00),
        (41, Enter, 4, 0x8bb0),
        (42, Leave, 3, 0x8c00),
        (50, Leave, 1, 0x8f00),
        (60, Enter, 5, 0x8f00),
        (61, Enter, 6, 0x8ec0),
        (62, Enter, 8, 0x8da0),
        (63, Leave, 5, 0x8f00),
        (9_000, Leave, 0, 0x9000),
    ];
    let t2: &[Ev] = &[
        (100, Enter, 8, 0x5840),
        (110, Leave, 8, 0x5840),
        (120, Enter, 6, 0x5840),
        (130, Enter, 7, 0x5700),
    ];
    let t1: &[Ev] = &[
        (200, Enter, 4, 0x63b0),
        (210, Leave, 4, 0x63b0),
        (220, Enter, 4, 0x6820),
        (300, Enter, 7, 0x63b0),
        (310, Leave, 7, 0x63b0),
        (320, Enter, 6, 0x63b0),
        (330, Leave, 6, 0x63b0),
        (340, Enter, 4, 0x63b0),
        (350, Leave, 4, 0x63b0),
        (360, Enter, 2, 0x6820),
        (370, Leave, 2, 0x6820),
    ];
    let a = run(&trace(&funcs, &[main, t1, t2]));
    assert_exact(&a);
    assert_async(&a, 7, "GetAsync", (1, 2, 1, 0));
    assert_async(&a, 6, "Shapes", (1, 3, 2, 0));
    assert_async(&a, 4, "One", (2, 5, 3, 0));
    assert_async(&a, 2, "Throttled", (1, 2, 1, 0));
    assert_async(&a, 8, "Pre", (1, 2, 1, 0));
}
