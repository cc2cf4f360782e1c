//! Named synthetic traces, one function per case, built with [`TraceBuilder`]: the cases of
//! crates/export's golden tests, which crates/cli's tests (the viewers, `export` of a session)
//! load as well (`eltrace_trace::testing::traces::basic()` is a trace's bytes).

use super::{Function, TraceBuilder, app_info};
use crate::model::{EndRecord, EventKind, FunctionFlags, TraceInfo, ValueStatus};

use EventKind::{Catch, Enter, Leave, Tailcall, Throw, Unwind, Value as Val};

/// A trace of the usual test process whose ticks start at 1000 (event times are relative to
/// that), with `funcs` as functions 0, 1, ….
pub fn builder(funcs: &[(&str, &str, &str)]) -> TraceBuilder {
    let info = TraceInfo {
        start_ticks: 1_000,
        start_unix_ns: 1_700_000_000_000_000_000,
        ..app_info()
    };
    TraceBuilder::new(info)
        .ts_offset(1_000)
        .functions(funcs.iter().copied())
}

/// Two threads: nesting, an exception, a tail call, a mismatch and frames open at the end.
pub fn basic() -> Vec<u8> {
    builder(&[
        ("App.dll", "App.Program", "<Main>$"),     // 0
        ("App.dll", "App.Program", "Compute"),     // 1
        ("App.dll", "App.Program", "Leaf"),        // 2
        ("App.dll", "App.Program", "Thrower"),     // 3
        ("Lib.dll", "Lib.Box`1", "Get"),           // 4
        ("App.dll", "App.Worker", "Loop"),         // 5
        ("App.dll", "App.Worker", "Spin \"x\";y"), // 6: needs escaping / cleaning
    ])
    .thread(0, 1001)
    .thread(1, 1002)
    .events(
        0,
        &[
            (0, Enter, 0),
            (1_000, Enter, 1),
            (1_500, Enter, 2),
            (2_750, Leave, 2),
            (3_000, Enter, 2),
            (3_001, Leave, 2),
            (4_000, Leave, 1),
            (5_000, Enter, 3),
            (5_100, Enter, 4),
            (5_200, Throw, 4),
            (5_300, Unwind, 4),
            (5_400, Unwind, 3),
            (5_500, Catch, 0),
        ],
    )
    .events(
        1,
        &[(2_000, Enter, 5), (2_500, Enter, 6), (2_600, Enter, 4)],
    )
    .events(
        0,
        &[
            (6_000, Enter, 1),
            (6_100, Tailcall, 1),
            (6_100, Enter, 2),
            (6_600, Leave, 2),
            (7_000, Enter, 1),
            (7_200, Enter, 4),
            (7_300, Leave, 1), // mismatched: closes Get
            (9_000, Leave, 0),
        ],
    )
    .events(1, &[(8_000, Leave, 4)])
    // Thread 0 gets its managed id and name later.
    .named_thread(0, 1001, 1, "Main")
    .end_record(EndRecord {
        ts: 11_000,
        events_written: 25,
        ..EndRecord::default()
    })
}

/// A runtime-async method as .NET 10 reports it (`record --values`): Main calls `Work(2)`
/// through its thunk; the variant suspends twice without a Leave (the thunk's Leave shows it
/// gone), resumes on thread 1 (with default arguments, which must not be shown) and calls
/// Leaf, suspends again (the next resume at the same stack pointer shows it gone), then
/// resumes and completes with 6. The Chrome export links the three segments with flow events.
pub fn runtime_async() -> Vec<u8> {
    let info = TraceInfo {
        start_ticks: 1_000,
        runtime: "CoreCLR 10.0.0".into(),
        ..app_info()
    };
    let hooked = |method, token, impl_flags, flags| {
        Function::new("App.dll", "App.P", method)
            .token(token)
            .impl_flags(impl_flags)
            .flags(FunctionFlags::HOOKED | flags)
    };
    let mut b = TraceBuilder::new(info).ts_offset(1_000).functions([
        hooked("Main", 0x0600_0001, 0, 0),
        hooked("Work", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_THUNK),
        hooked("Work", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_VARIANT),
        hooked("Leaf", 0x0600_0003, 0, 0),
    ]);
    for (id, text) in [
        (0, "n=2"),
        (1, "System.Threading.Tasks.Task`1[System.Int64]"),
        (2, "n=0"),
        (3, "n=0"),
        (4, "6"),
    ] {
        b = b.value(id, ValueStatus::Ok, text);
    }
    b.thread(0, 10)
        .thread(1, 11)
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x9000),
                (100, Enter, 1, 0x8f00),
                (200, Enter, 2, 0x8e00),
                (200, Val, 0, 0x8e00),
                (300, Leave, 1, 0x8f00),
                (300, Val, 1, 0x8f00),
            ],
        )
        .events_sp(
            1,
            &[
                (1_000, Enter, 2, 0x5000),
                (1_000, Val, 2, 0x5000),
                (1_200, Enter, 3, 0x4f00),
                (1_300, Leave, 3, 0x4f00),
            ],
        )
        .events_sp(
            1,
            &[
                (2_000, Enter, 2, 0x5000),
                (2_000, Val, 3, 0x5000),
                (2_500, Leave, 2, 0x5000),
                (2_500, Val, 4, 0x5000),
            ],
        )
        .events_sp(0, &[(3_000, Leave, 0, 0x9000)])
        .end(4_000)
}

/// Recursion: Fib(3) with its calls, twice, on one thread.
pub fn recursion() -> Vec<u8> {
    let mut evs = vec![(0, Enter, 0)];
    let mut t = 0;
    fn fib(n: u32, t: &mut u64, evs: &mut Vec<(u64, EventKind, u32)>) {
        *t += 10;
        evs.push((*t, Enter, 1));
        if n > 1 {
            fib(n - 1, t, evs);
            fib(n - 2, t, evs);
        }
        *t += 5;
        evs.push((*t, Leave, 1));
    }
    fib(3, &mut t, &mut evs);
    fib(3, &mut t, &mut evs);
    evs.push((t + 100, Leave, 0));
    builder(&[("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Fib")])
        .thread(0, 77)
        .events(0, &evs)
        .end(0)
}

/// [`recursion`]'s calls recorded with `--timing none`: counts and stacks, no times.
pub fn timeless() -> Vec<u8> {
    let mut evs = vec![(0, Enter, 0)];
    for (i, f) in [1, 1, 2, 1].into_iter().enumerate() {
        evs.push((10 + i as u64 * 10, Enter, f));
        evs.push((15 + i as u64 * 10, Leave, f));
    }
    evs.push((100, Leave, 0));
    let info = TraceInfo {
        start_unix_ns: 1_700_000_000_000_000_000,
        ..super::timed_info("none", 0)
    };
    TraceBuilder::new(info)
        .functions([
            ("App.dll", "App.P", "Main"),
            ("App.dll", "App.P", "Leaf"),
            ("Lib.dll", "Lib.Q", "Other"),
        ])
        .thread(0, 77)
        .events(0, &evs)
        .end(0)
}

/// A `--timing sampled` trace: Main calls Work twice and Leaf once, with samples between
/// the events (each before the events after its index, as the profiler writes them): Main
/// alone for 1 ms, Work on top for 2 ms, then nothing traced; and a second thread (tid 78)
/// in Work for 3 ms (its first sample, past its registration, stands for one period).
pub fn sampled() -> Vec<u8> {
    let info = TraceInfo {
        start_unix_ns: 1_700_000_000_000_000_000,
        ..super::timed_info("sampled", 1000)
    };
    let ms = 1_000_000;
    TraceBuilder::new(info)
        .functions([
            ("App.dll", "App.P", "Main"),
            ("App.dll", "App.P", "Work"),
            ("App.dll", "App.P", "Leaf"),
        ])
        .thread(0, 77)
        .events(0, &[(0, Enter, 0)])
        .samples(&[(0, 1, ms, None)])
        .events(0, &[(10, Enter, 1)])
        .samples(&[(0, 2, 2 * ms, None)])
        .events(0, &[(20, Leave, 1), (30, Enter, 1)])
        .samples(&[(0, 4, 3 * ms, None)])
        .events(
            0,
            &[
                (35, Enter, 2),
                (36, Leave, 2),
                (40, Leave, 1),
                (50, Leave, 0),
            ],
        )
        .samples(&[(0, 8, 4 * ms, None)])
        .thread(1, 78)
        .events(1, &[(60, Enter, 1)])
        .samples(&[(1, 1, 2 * ms, None), (1, 1, 4 * ms, None)])
        .events(1, &[(70, Leave, 1)])
        .end(5 * ms)
}

/// Names where one is a prefix of another (`A.F` / `A.F.G` / `A.F0`), and two functions of the
/// same name in different modules, whose stacks must merge.
pub fn prefixes() -> Vec<u8> {
    builder(&[
        ("App.dll", "A", "F"),    // 0
        ("App.dll", "A.F", "G"),  // 1
        ("App.dll", "A", "F0"),   // 2
        ("Lib.dll", "A", "F"),    // 3: same name as 0
        ("App.dll", "A", "Main"), // 4
    ])
    .thread(0, 5)
    .events(
        0,
        &[
            (0, Enter, 4),
            (10, Enter, 0),
            (20, Enter, 1),
            (30, Leave, 1),
            (40, Leave, 0),
            (50, Enter, 1),
            (60, Enter, 0),
            (65, Leave, 0),
            (70, Leave, 1),
            (80, Enter, 2),
            (90, Enter, 2),
            (95, Leave, 2),
            (99, Leave, 2),
            (100, Enter, 3),
            (110, Enter, 2),
            (120, Leave, 2),
            (130, Leave, 3),
            (200, Leave, 4),
        ],
    )
    .end(0)
}

/// Dropped events: thread 0 is the main thread (its tid is the pid) and loses events while
/// Main and Work are open (both end at the drop, 100 ns in); pool thread 1 (named, like
/// thread 2) loses events while no frame is open. Two pool threads of one name.
pub fn drops() -> Vec<u8> {
    let info = TraceInfo {
        start_ticks: 1_000,
        ..app_info()
    };
    TraceBuilder::new(info)
        .ts_offset(1_000)
        .functions([
            ("App.dll", "App.Program", "Main"), // 0
            ("App.dll", "App.Program", "Work"), // 1
            ("App.dll", "App.Pool", "Item"),    // 2
        ])
        .thread(0, 4242)
        .named_thread(1, 5000, 3, ".NET TP Worker")
        .named_thread(2, 5001, 4, ".NET TP Worker")
        .events(0, &[(0, Enter, 0), (100, Enter, 1)])
        .events(1, &[(50, Enter, 2), (80, Leave, 2)])
        .events(2, &[(60, Enter, 2), (90, Leave, 2)])
        .dropped(0, 7)
        .dropped(1, 3)
        .events(0, &[(500, Enter, 1), (600, Leave, 1)])
        .events(1, &[(200, Enter, 2), (250, Leave, 2)])
        .end_record(EndRecord {
            ts: 1_000,
            events_written: 12,
            events_dropped: 10,
            ..EndRecord::default()
        })
}

/// Two runtime-async methods as .NET 10 reports them (`record --values`): Main calls
/// `Outer(1)` through its thunk; Outer's variant calls Inner's variant directly; both
/// suspend (no Leave: the thunk's Leave at 300 shows both gone, so their segments end
/// together, at 300). On thread 1 Inner resumes, calls Leaf and completes (returns 5), and
/// the dispatcher resumes Outer (the completed call's caller, at the same stack pointer),
/// which completes with 6. Flows link Outer's and Inner's segments across the threads.
pub fn nested_async() -> Vec<u8> {
    let info = TraceInfo {
        start_ticks: 1_000,
        runtime: "CoreCLR 10.0.0".into(),
        ..app_info()
    };
    let hooked = |ty, method, token, impl_flags, flags| {
        Function::new("App.dll", ty, method)
            .token(token)
            .impl_flags(impl_flags)
            .flags(FunctionFlags::HOOKED | flags)
    };
    let mut b = TraceBuilder::new(info).ts_offset(1_000).functions([
        hooked("App.P", "Main", 0x0600_0001, 0, 0), // 0
        hooked(
            "App.P",
            "Outer",
            0x0600_0002,
            0x2000,
            FunctionFlags::ASYNC_THUNK,
        ), // 1
        hooked(
            "App.P",
            "Outer",
            0x0600_0002,
            0x2000,
            FunctionFlags::ASYNC_VARIANT,
        ), // 2
        hooked(
            "App.Q",
            "Inner",
            0x0600_0003,
            0x2000,
            FunctionFlags::ASYNC_VARIANT,
        ), // 3
        hooked("App.Q", "Leaf", 0x0600_0004, 0, 0), // 4
    ]);
    for (id, text) in [
        (0, "n=1"),
        (1, "System.Threading.Tasks.Task`1[System.Int64]"),
        (2, "5"),
        (3, "6"),
    ] {
        b = b.value(id, ValueStatus::Ok, text);
    }
    b.thread(0, 4242)
        .named_thread(1, 4250, 5, ".NET TP Worker")
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x9000),
                (100, Enter, 1, 0x8f00),
                (200, Enter, 2, 0x8e00),
                (200, Val, 0, 0x8e00),
                (250, Enter, 3, 0x8d00),
                (300, Leave, 1, 0x8f00),
                (300, Val, 1, 0x8f00),
            ],
        )
        .events_sp(
            1,
            &[
                (1_000, Enter, 3, 0x5000),
                (1_200, Enter, 4, 0x4f00),
                (1_300, Leave, 4, 0x4f00),
                (1_500, Leave, 3, 0x5000),
                (1_500, Val, 2, 0x5000),
                (1_600, Enter, 2, 0x5000),
                (1_800, Leave, 2, 0x5000),
                (1_800, Val, 3, 0x5000),
            ],
        )
        .events_sp(0, &[(3_000, Leave, 0, 0x9000)])
        .end(4_000)
}

/// A recording session of two processes (INFO `session` = `s1`): `dotnet App.dll` (pid 4242,
/// the process `record` started) and the compiler it ran, `dotnet …/csc.dll` (pid 4300),
/// whose trace started 1.5 µs later by the wall clock. Each runs a runtime-async call that
/// suspends on its main thread and completes on a pool thread (logical call 0 in both: their
/// flows must stay apart) and calls `Shared.Log.Write` of Shared.dll (one function of one
/// name in both). csc's pool thread loses 4 events with no frame open, after its event at
/// 900; its threads waited for the trace writer (3 times, 12 µs, and once, 2 µs).
pub fn session() -> [Vec<u8>; 2] {
    let hooked = |ty, method, token, impl_flags, flags| {
        Function::new("App.dll", ty, method)
            .token(token)
            .impl_flags(impl_flags)
            .flags(FunctionFlags::HOOKED | flags)
    };
    let process = |pid: u32, command: &str, start_unix_ns: u64, program: &'static str, ty| {
        let mut info = TraceInfo {
            pid,
            command: command.into(),
            start_ticks: 1_000,
            start_unix_ns,
            runtime: "CoreCLR 10.0.0".into(),
            ..app_info()
        };
        info.extra.push(("session".into(), "s1".into()));
        let module = |f: Function<'static>| Function {
            module: program,
            ..f
        };
        TraceBuilder::new(info).ts_offset(1_000).functions([
            module(hooked(ty, "Main", 0x0600_0001, 0, 0)),
            module(hooked(
                ty,
                "Work",
                0x0600_0002,
                0x2000,
                FunctionFlags::ASYNC_THUNK,
            )),
            module(hooked(
                ty,
                "Work",
                0x0600_0002,
                0x2000,
                FunctionFlags::ASYNC_VARIANT,
            )),
            Function::new("Shared.dll", "Shared.Log", "Write").flags(FunctionFlags::HOOKED),
        ])
    };
    let (main, thunk, work, log) = (0, 1, 2, 3);
    let app = process(
        4242,
        "dotnet App.dll",
        1_700_000_000_000_000_000,
        "App.dll",
        "App.P",
    )
    .thread(0, 4242)
    .named_thread(1, 4250, 3, ".NET TP Worker")
    .events_sp(
        0,
        &[
            (0, Enter, main, 0x9000),
            (100, Enter, thunk, 0x8f00),
            (200, Enter, work, 0x8e00),
            (300, Leave, thunk, 0x8f00),
            (400, Enter, log, 0x8f00),
            (500, Leave, log, 0x8f00),
        ],
    )
    .events_sp(
        1,
        &[
            (1_000, Enter, work, 0x5000),
            (1_100, Enter, log, 0x4f00),
            (1_200, Leave, log, 0x4f00),
            (1_500, Leave, work, 0x5000),
        ],
    )
    .events_sp(0, &[(3_000, Leave, main, 0x9000)])
    .end(4_000);
    let csc = process(
        4300,
        "/usr/bin/dotnet /sdk/Roslyn/bincore/csc.dll /noconfig @/tmp/x.rsp",
        1_700_000_000_000_001_500,
        "csc.dll",
        "Csc.P",
    )
    .thread(0, 4300)
    .named_thread(1, 4301, 4, ".NET TP Worker")
    .events_sp(
        0,
        &[
            (0, Enter, main, 0x9000),
            (50, Enter, thunk, 0x8f00),
            (60, Enter, work, 0x8e00),
            (150, Leave, thunk, 0x8f00),
            (200, Enter, log, 0x8f00),
            (260, Leave, log, 0x8f00),
        ],
    )
    .events_sp(
        1,
        &[
            (700, Enter, work, 0x5000),
            (750, Enter, log, 0x4f00),
            (800, Leave, log, 0x4f00),
            (900, Leave, work, 0x5000),
        ],
    )
    .dropped(1, 4)
    .events_sp(
        1,
        &[(1_200, Enter, log, 0x5000), (1_300, Leave, log, 0x5000)],
    )
    .waits(0, 3, 12_000)
    .waits(1, 1, 2_000)
    .events_sp(0, &[(2_000, Leave, main, 0x9000)])
    .end_record(EndRecord {
        ts: 2_500,
        events_written: 16,
        events_dropped: 4,
        ..EndRecord::default()
    });
    [app, csc]
}
