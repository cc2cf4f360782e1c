//! The speedscope export: golden files, and its shape checked as speedscope's importer
//! checks it (balanced events per profile, opened and closed in nesting order, times that
//! never go back), its frames shared (one per function, no per-call data), and its times
//! exact: the same slices as the Chrome export, in integer ns.

use eltrace_export::{ExportOptions, Format};
use eltrace_trace::testing::traces::{
    basic, drops, nested_async, prefixes, recursion, runtime_async, sampled,
};
use serde_json::Value;

use crate::support::{check_golden, run};

fn export(trace: &[u8]) -> Value {
    serde_json::from_slice(&run(Format::Speedscope, trace, &ExportOptions::default())).unwrap()
}

#[test]
fn golden_speedscope() {
    for (case, trace) in [
        ("basic", basic()),
        ("nested-async", nested_async()),
        ("drops", drops()),
    ] {
        check_golden(
            case,
            Format::Speedscope,
            &run(Format::Speedscope, &trace, &ExportOptions::default()),
        );
    }
}

/// (profile name, start, duration, frame name) of every frame, checking the events on the
/// way as speedscope does: a close ends the frame on top, times never go back, nothing is
/// left open.
fn frames(v: &Value) -> Vec<(String, u64, u64, String)> {
    assert_eq!(
        v["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let shared: Vec<&str> = v["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let mut out = Vec::new();
    for p in v["profiles"].as_array().unwrap() {
        if p["type"] == "sampled" {
            // The logical call tree: stacks of known frames, weights adding up to its end.
            let frames = shared.len() as u64;
            for s in p["samples"].as_array().unwrap() {
                assert!(
                    s.as_array()
                        .unwrap()
                        .iter()
                        .all(|f| f.as_u64().unwrap() < frames)
                );
            }
            let total: u64 = p["weights"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_u64().unwrap())
                .sum();
            assert_eq!(p["endValue"], total);
            continue;
        }
        assert_eq!(
            (&p["type"], &p["unit"]),
            (&"evented".into(), &"nanoseconds".into())
        );
        let name = p["name"].as_str().unwrap().to_owned();
        let (start, end) = (
            p["startValue"].as_u64().unwrap(),
            p["endValue"].as_u64().unwrap(),
        );
        let mut stack: Vec<(u64, u64)> = Vec::new();
        let mut last = start;
        for e in p["events"].as_array().unwrap() {
            let (frame, at) = (e["frame"].as_u64().unwrap(), e["at"].as_u64().unwrap());
            assert!(at >= last && at <= end, "time goes back or out: {e}");
            last = at;
            match e["type"].as_str().unwrap() {
                "O" => stack.push((frame, at)),
                "C" => {
                    let (open, since) = stack.pop().expect("a close with nothing open");
                    assert_eq!(open, frame, "closes a frame that is not on top: {e}");
                    out.push((
                        name.clone(),
                        since,
                        at - since,
                        shared[frame as usize].to_owned(),
                    ));
                }
                t => panic!("event type {t}"),
            }
        }
        assert!(stack.is_empty(), "{name}: frames left open");
    }
    out.sort();
    out
}

/// The same slices as the Chrome export, thread by thread.
#[test]
fn speedscope_reads_as_the_chrome_export() {
    for trace in [
        basic(),
        recursion(),
        prefixes(),
        runtime_async(),
        nested_async(),
        drops(),
    ] {
        let ours = frames(&export(&trace));
        let chrome: Value =
            serde_json::from_slice(&run(Format::Chrome, &trace, &ExportOptions::default()))
                .unwrap();
        let evs = chrome["traceEvents"].as_array().unwrap();
        let thread_name = |tid: &Value| {
            evs.iter()
                .find(|e| e["name"] == "thread_name" && &e["tid"] == tid)
                .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
                .unwrap()
        };
        let ns = |v: &Value| (v.as_f64().unwrap() * 1000.0).round() as u64;
        let mut theirs: Vec<(String, u64, u64, String)> = evs
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                (
                    thread_name(&e["tid"]),
                    ns(&e["ts"]),
                    ns(&e["dur"]),
                    e["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        theirs.sort();
        // Profile names carry a note about drops; Chrome's thread names do not.
        let ours: Vec<_> = ours
            .into_iter()
            .map(|(n, s, d, f)| (n.split(',').next().unwrap().to_owned(), s, d, f))
            .collect();
        assert_eq!(ours, theirs);
    }
}

/// One frame per function, whatever each call's segment or values: the segments of an
/// async method share theirs. Equal ends (Outer and Inner suspend together) close in
/// nesting order at one time.
#[test]
fn speedscope_frames_are_shared() {
    let v = export(&nested_async());
    let names: Vec<&Value> = v["shared"]["frames"].as_array().unwrap().iter().collect();
    let outer: Vec<_> = names
        .iter()
        .filter(|f| f["name"] == "App.P.Outer")
        .collect();
    assert_eq!(outer.len(), 1);
    assert!(
        names.iter().all(|f| f.as_object().unwrap().len() <= 2),
        "{names:?}"
    );
    let main = &v["profiles"][0];
    assert_eq!(main["name"], "main (4242)");
    let closes: Vec<u64> = main["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "C" && e["at"] == 300)
        .map(|e| e["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(closes.len(), 3, "Inner, Outer and the thunk end at 300");
}

/// Dropped events are noted in the names.
#[test]
fn speedscope_notes_drops() {
    let v = export(&drops());
    assert_eq!(v["name"], "App.dll (pid 4242), 10 events dropped");
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "evented")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "main (4242), 7 events dropped",
            ".NET TP Worker (5000), 3 events dropped",
            ".NET TP Worker (5001)"
        ]
    );
}

/// A `--timing sampled` trace: a sampled profile of the sampler's estimates per thread (its
/// frames' spans are ordering times, not time), its weights the estimated exclusive wall time
/// per path: on tid 77 Main 1 ms on its own and Work 2 ms, on tid 78 Work 3 ms.
#[test]
fn a_sampled_trace_is_a_sampled_profile_of_its_estimates_per_thread() {
    let v = export(&sampled());
    let frames: Vec<&str> = v["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let profiles = v["profiles"].as_array().unwrap();
    let got: Vec<(String, Vec<(String, u64)>)> = profiles
        .iter()
        .map(|p| {
            assert_eq!(p["type"], "sampled");
            let mut paths: Vec<(String, u64)> = p["samples"]
                .as_array()
                .unwrap()
                .iter()
                .zip(p["weights"].as_array().unwrap())
                .map(|(s, w)| {
                    let stack: Vec<&str> = s
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|i| frames[i.as_u64().unwrap() as usize])
                        .collect();
                    (stack.join(";"), w.as_u64().unwrap())
                })
                .collect();
            paths.sort();
            (p["name"].as_str().unwrap().to_owned(), paths)
        })
        .collect();
    let path = |s: &str, w: u64| (s.to_string(), w);
    assert_eq!(
        got,
        [
            (
                "thread (77), sampled wall time (estimated)".to_string(),
                vec![
                    path("App.P.Main", 1_000_000),
                    path("App.P.Main;App.P.Work", 2_000_000)
                ]
            ),
            (
                "thread (78), sampled wall time (estimated)".to_string(),
                vec![path("App.P.Work", 3_000_000)]
            ),
        ],
        "{v}"
    );
}
