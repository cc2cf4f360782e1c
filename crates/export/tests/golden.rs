//! Golden-file tests of the exporters: synthetic traces built with `TraceBuilder`, exported,
//! written to a temp file and compared with `tests/results/<case>.<ext>`. Run with
//! `ELTRACE_BLESS=1` to rewrite the expected files. Also checks that the Chrome JSON parses
//! and that each thread's slices nest.

use std::path::PathBuf;

use eltrace_export::{ExportOptions, FoldedValue, Format, export};
use eltrace_trace::testing::{Function, TraceBuilder, app_info};
use eltrace_trace::{EndRecord, EventKind, FunctionFlags, TraceInfo, ValueStatus};
use serde_json::Value;

use EventKind::{Catch, Enter, Leave, Tailcall, Throw, Unwind, Value as Val};

/// A trace of the usual test process whose ticks start at 1000 (event times are relative to
/// that), with `funcs` as functions 0, 1, ….
fn builder(funcs: &[(&str, &str, &str)]) -> TraceBuilder {
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
fn basic() -> Vec<u8> {
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
fn runtime_async() -> Vec<u8> {
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
fn recursion() -> Vec<u8> {
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

/// Names where one is a prefix of another (`A.F` / `A.F.G` / `A.F0`), and two functions of the
/// same name in different modules, whose stacks must merge.
fn prefixes() -> Vec<u8> {
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

fn run(format: Format, trace: &[u8], opts: &ExportOptions) -> Vec<u8> {
    let mut out = Vec::new();
    export(format, trace, &mut out, opts).unwrap();
    out
}

fn check_golden(case: &str, format: Format, actual: &[u8]) {
    let file = format!("{case}.{}", format.extension());
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(&file);
    std::fs::write(&tmp, actual).unwrap();
    let expected_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/results")
        .join(&file);
    if std::env::var_os("ELTRACE_BLESS").is_some() {
        std::fs::write(&expected_path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&expected_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with ELTRACE_BLESS=1)",
            expected_path.display()
        )
    });
    if expected != actual {
        let out = std::process::Command::new("diff")
            .arg("-u")
            .arg(&expected_path)
            .arg(&tmp)
            .output();
        let diff = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        panic!("{file} differs from the expected output:\n{diff}");
    }
}

#[test]
fn golden_chrome() {
    check_golden(
        "basic",
        Format::Chrome,
        &run(Format::Chrome, &basic(), &ExportOptions::default()),
    );
    check_golden(
        "recursion",
        Format::Chrome,
        &run(Format::Chrome, &recursion(), &ExportOptions::default()),
    );
    check_golden(
        "runtime-async",
        Format::Chrome,
        &run(Format::Chrome, &runtime_async(), &ExportOptions::default()),
    );
}

/// The three segments of the logical call share one `bind_id`: the first flows out, the
/// second in and out, the last in; only the initial Enter's argument and the completion value
/// are shown.
#[test]
fn chrome_links_async_segments() {
    let out = run(Format::Chrome, &runtime_async(), &ExportOptions::default());
    let v: Value = serde_json::from_slice(&out).unwrap();
    let mut segs: Vec<&Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "App.P.Work")
        .collect();
    segs.sort_by_key(|e| us_to_ns(&e["ts"]));
    assert_eq!(segs.len(), 3, "{segs:?}");
    let id = &segs[0]["bind_id"];
    assert_eq!(id.as_u64(), segs[0]["args"]["call"].as_u64().map(|c| c + 1));
    let flags: Vec<(bool, bool)> = segs
        .iter()
        .map(|e| {
            assert_eq!(&e["bind_id"], id, "{e}");
            (e["flow_in"] == true, e["flow_out"] == true)
        })
        .collect();
    assert_eq!(flags, vec![(false, true), (true, true), (true, true)]);
    let seg_index: Vec<u64> = segs
        .iter()
        .map(|e| e["args"]["segment"].as_u64().unwrap())
        .collect();
    assert_eq!(seg_index, vec![0, 1, 2]);
    assert_eq!(segs[0]["args"]["args"], "n=2");
    assert_eq!(segs[0]["args"]["ended_by"], "suspend");
    assert!(segs[1]["args"].get("args").is_none(), "{}", segs[1]);
    assert!(segs[1]["args"].get("return").is_none(), "{}", segs[1]);
    assert_eq!(segs[2]["args"]["return"], "6");
    assert!(segs[2]["args"].get("args").is_none(), "{}", segs[2]);
    // The thunk is an ordinary frame, named apart.
    let thunk: Vec<&Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "App.P.Work [thunk]")
        .collect();
    assert_eq!(thunk.len(), 1);
    assert!(thunk[0].get("bind_id").is_none());
}

#[test]
fn golden_folded() {
    check_golden(
        "basic",
        Format::Folded,
        &run(Format::Folded, &basic(), &ExportOptions::default()),
    );
    check_golden(
        "recursion",
        Format::Folded,
        &run(Format::Folded, &recursion(), &ExportOptions::default()),
    );
    let calls = ExportOptions {
        folded_value: FoldedValue::Calls,
        ..ExportOptions::default()
    };
    check_golden(
        "recursion-calls",
        Format::Folded,
        &run(Format::Folded, &recursion(), &calls),
    );
    check_golden(
        "prefixes",
        Format::Folded,
        &run(Format::Folded, &prefixes(), &ExportOptions::default()),
    );
}

/// Folded totals equal the root frames' time, and lines are sorted and distinct.
#[test]
fn folded_adds_up() {
    for trace in [basic(), recursion(), prefixes()] {
        let out =
            String::from_utf8(run(Format::Folded, &trace, &ExportOptions::default())).unwrap();
        let a = eltrace_analysis::analyze(&trace[..], &Default::default()).unwrap();
        let mut total = 0u64;
        let mut prev = String::new();
        for line in out.lines() {
            let (stack, v) = line.rsplit_once(' ').unwrap();
            assert!(*stack > *prev, "not sorted/distinct: {stack}");
            assert!(!stack.contains(' '));
            prev = stack.to_owned();
            total += v.parse::<u64>().unwrap();
        }
        assert_eq!(total, a.totals.root_ns);
    }
}

fn us_to_ns(v: &Value) -> u64 {
    (v.as_f64().unwrap() * 1000.0).round() as u64
}

/// The Chrome JSON parses, has the documented shape, and each thread's slices nest in order.
#[test]
fn chrome_parses_and_nests() {
    for trace in [basic(), recursion(), prefixes(), runtime_async()] {
        let out = run(Format::Chrome, &trace, &ExportOptions::default());
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["displayTimeUnit"], "ns");
        assert_eq!(v["otherData"]["pid"], 4242);
        let evs = v["traceEvents"].as_array().unwrap();
        let mut stacks: std::collections::HashMap<u64, Vec<(u64, u64)>> = Default::default();
        let mut last_start: std::collections::HashMap<u64, u64> = Default::default();
        let mut slices = 0;
        for e in evs {
            match e["ph"].as_str().unwrap() {
                "X" => {
                    slices += 1;
                    assert_eq!(e["pid"], 4242);
                    assert!(e["name"].is_string() && e["cat"].is_string());
                    let tid = e["tid"].as_u64().unwrap();
                    assert!(tid <= i32::MAX as u64);
                    let (ts, dur) = (us_to_ns(&e["ts"]), us_to_ns(&e["dur"]));
                    assert!(dur > 0);
                    let last = last_start.entry(tid).or_insert(0);
                    assert!(*last <= ts, "slices not sorted by start: {e}");
                    *last = ts;
                    let st = stacks.entry(tid).or_default();
                    // Pop the slices that ended before this one starts (no zero-length ones here).
                    while st.last().is_some_and(|&(_, end)| end <= ts) {
                        st.pop();
                    }
                    if let Some(&(ps, pe)) = st.last() {
                        assert!(
                            ps <= ts && ts + dur <= pe,
                            "slice {e} not inside its parent {ps}..{pe}"
                        );
                    }
                    st.push((ts, ts + dur));
                }
                "M" => assert!(e["args"].is_object()),
                other => panic!("unexpected phase {other}"),
            }
        }
        let a = eltrace_analysis::analyze(&trace[..], &Default::default()).unwrap();
        assert_eq!(slices, a.totals.frames);
    }
}
