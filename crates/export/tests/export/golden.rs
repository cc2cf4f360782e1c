//! Golden-file tests of the exporters: synthetic traces built with `TraceBuilder`, exported,
//! written to a temp file and compared with `tests/results/<case>.<ext>`. Run with
//! `ELTRACE_BLESS=1` to rewrite the expected files. Also checks that the Chrome JSON parses
//! and that each thread's slices nest.

use eltrace_export::{ExportOptions, FoldedValue, Format, TimeWindow};
use eltrace_trace::testing::traces::{
    basic, drops, nested_async, prefixes, recursion, runtime_async,
};
use serde_json::Value;

use crate::support::{check_golden, run};

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
    check_golden(
        "nested-async",
        Format::Chrome,
        &run(Format::Chrome, &nested_async(), &ExportOptions::default()),
    );
    check_golden(
        "drops",
        Format::Chrome,
        &run(Format::Chrome, &drops(), &ExportOptions::default()),
    );
}

/// A time window keeps the frames that overlap it, cut at its edges.
#[test]
fn golden_window() {
    let window = ExportOptions {
        window: TimeWindow {
            from: 1_600,
            to: 5_200,
        },
        ..ExportOptions::default()
    };
    for format in [Format::Chrome, Format::Folded] {
        check_golden("basic-window", format, &run(format, &basic(), &window));
    }
}

/// The three segments of the logical call share one `bind_id`: the first flows out, the
/// second in and out, the last in; only the initial Enter's argument and the completion value
/// are shown. The two ends of each flow share no argument name (chrome://tracing warns
/// `arg_merge_error` at each shared one): each segment's facts are under `segment N`.
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
    for pair in segs.windows(2) {
        let keys =
            |e: &Value| -> Vec<String> { e["args"].as_object().unwrap().keys().cloned().collect() };
        let (a, b) = (keys(pair[0]), keys(pair[1]));
        assert!(
            a.iter().all(|k| !b.contains(k)),
            "{a:?} and {b:?} share a name"
        );
    }
    let flags: Vec<(bool, bool)> = segs
        .iter()
        .map(|e| {
            assert_eq!(&e["bind_id"], id, "{e}");
            (e["flow_in"] == true, e["flow_out"] == true)
        })
        .collect();
    assert_eq!(flags, vec![(false, true), (true, true), (true, true)]);
    assert_eq!(segs[0]["args"]["segment 0"], "suspend");
    assert_eq!(segs[1]["args"]["segment 1"], "suspend");
    assert_eq!(segs[2]["args"]["segment 2"], "leave");
    assert_eq!(segs[0]["args"]["args"], "n=2");
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
    let thread_root = ExportOptions {
        thread_root: true,
        ..ExportOptions::default()
    };
    check_golden(
        "nested-async-threads",
        Format::Folded,
        &run(Format::Folded, &nested_async(), &thread_root),
    );
    check_golden(
        "drops-threads",
        Format::Folded,
        &run(Format::Folded, &drops(), &thread_root),
    );
}

/// Folded totals equal the root frames' time, and lines are sorted and distinct; also with
/// a root per thread, which splits the same totals by thread.
#[test]
fn folded_adds_up() {
    for (trace, thread_root) in [basic(), recursion(), prefixes(), nested_async(), drops()]
        .into_iter()
        .flat_map(|t| [(t.clone(), false), (t, true)])
    {
        let opts = ExportOptions {
            thread_root,
            ..ExportOptions::default()
        };
        let out = String::from_utf8(run(Format::Folded, &trace, &opts)).unwrap();
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
    for trace in [
        basic(),
        recursion(),
        prefixes(),
        runtime_async(),
        nested_async(),
        drops(),
    ] {
        let out = run(Format::Chrome, &trace, &ExportOptions::default());
        let v: Value = serde_json::from_slice(&out).unwrap();
        // Perfetto reads `"displayTimeUnit":"ns"` as "ts and dur are ns" (they are µs).
        assert!(v.get("displayTimeUnit").is_none());
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
                    // Only a frame cut by a drop as it started is empty here.
                    assert!(dur > 0 || e["args"]["ended_by"] == "lost", "{e}");
                    let last = last_start.entry(tid).or_insert(0);
                    assert!(*last <= ts, "slices not sorted by start: {e}");
                    *last = ts;
                    let st = stacks.entry(tid).or_default();
                    // Pop the slices that ended before this one starts.
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
                "i" => {
                    assert_eq!(
                        (&e["s"], &e["name"]),
                        (&"t".into(), &"events dropped".into())
                    );
                    assert!(e["args"]["thread_dropped_events"].as_u64().unwrap() > 0);
                }
                other => panic!("unexpected phase {other}"),
            }
        }
        let a = eltrace_analysis::analyze(&trace[..], &Default::default()).unwrap();
        assert_eq!(slices, a.totals.frames);
    }
}
