//! A recording session of two processes exported into one output (`traces::session`): golden
//! files of every format (`results/session.*`, `ELTRACE_BLESS=1` rewrites them) and what each
//! must show: every process under its own pid or root, on one timeline, with ids that do not
//! collide, and the same frames as each process exported alone. The Perfetto export of the
//! session is checked in perfetto.rs (with its decoder).

use std::collections::{BTreeMap, BTreeSet};

use eltrace_analysis::{Options, analyze};
use eltrace_export::{ExportOptions, Format};
use eltrace_trace::testing::traces::session;
use serde_json::Value;

use crate::support::{check_golden, check_golden_json, html_data, run, run_session};

/// The csc process starts this much later on the session's timeline.
const CSC_START: u64 = 1_500;

fn thread_root() -> ExportOptions {
    ExportOptions {
        thread_root: true,
        ..ExportOptions::default()
    }
}

#[test]
fn golden_session() {
    let traces = session();
    for format in [Format::Chrome, Format::Speedscope, Format::Folded] {
        let out = run_session(format, &traces, &ExportOptions::default());
        check_golden("session", format, &out);
    }
    let out = run_session(Format::Folded, &traces, &thread_root());
    check_golden("session-threads", Format::Folded, &out);
    let page = String::from_utf8(run_session(
        Format::Html,
        &traces,
        &ExportOptions::default(),
    ))
    .unwrap();
    check_golden_json("html-session.json", &html_data(&page));
}

fn us_to_ns(v: &Value) -> u64 {
    (v.as_f64().unwrap() * 1000.0).round() as u64
}

/// (pid, tid, start ns, duration ns, name) of the complete events, sorted.
type Slice = (u64, u64, u64, u64, String);

fn chrome_slices(json: &Value) -> Vec<Slice> {
    let mut s: Vec<Slice> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
                us_to_ns(&e["ts"]),
                us_to_ns(&e["dur"]),
                e["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    s.sort();
    s
}

/// The Chrome JSON of the session holds each process's export, under its pid, the later
/// process moved by its start; each has its metadata; flow ids differ between processes.
#[test]
fn chrome_session_is_both_processes() {
    let traces = session();
    let v: Value =
        serde_json::from_slice(&run_session(Format::Chrome, &traces, &Default::default())).unwrap();
    let mut expected = Vec::new();
    for (trace, offset) in traces.iter().zip([0, CSC_START]) {
        let alone: Value =
            serde_json::from_slice(&run(Format::Chrome, trace, &Default::default())).unwrap();
        expected.extend(
            chrome_slices(&alone)
                .into_iter()
                .map(|(p, t, ts, d, n)| (p, t, ts + offset, d, n)),
        );
    }
    expected.sort();
    assert_eq!(chrome_slices(&v), expected);
    let evs = v["traceEvents"].as_array().unwrap();
    let meta = |name: &str| -> BTreeSet<(u64, String)> {
        evs.iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name)
            .map(|e| (e["pid"].as_u64().unwrap(), e["args"]["name"].to_string()))
            .collect()
    };
    assert_eq!(
        meta("process_name"),
        BTreeSet::from([
            (4242, "\"App.dll\"".to_owned()),
            (4300, "\"csc.dll\"".to_owned())
        ])
    );
    assert_eq!(meta("thread_name").len(), 4);
    // Each process's logical call 0 has a flow of its own.
    let mut flows: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for e in evs.iter().filter(|e| e.get("bind_id").is_some()) {
        flows
            .entry(e["bind_id"].as_u64().unwrap())
            .or_default()
            .insert(e["pid"].as_u64().unwrap());
    }
    assert_eq!(
        flows,
        BTreeMap::from([(1, BTreeSet::from([4242])), (2, BTreeSet::from([4300]))])
    );
    // csc's drop, after its pool thread's event at 900.
    let drops: Vec<(u64, u64)> = evs
        .iter()
        .filter(|e| e["name"] == "events dropped")
        .map(|e| (e["tid"].as_u64().unwrap(), us_to_ns(&e["ts"])))
        .collect();
    assert_eq!(drops, [(4301, 900 + CSC_START)]);
    let procs = v["otherData"]["processes"].as_array().unwrap();
    let pids: Vec<&Value> = procs.iter().map(|p| &p["pid"]).collect();
    assert_eq!(pids, [4242, 4300]);
    assert_eq!(procs[1]["session"], "s1");
    assert_eq!(v["otherData"]["tool"], "eltrace");
    // csc's threads waited for the trace writer: its totals, and counters per thread from 0
    // at the thread's first event to its totals at its last.
    assert_eq!(
        (&procs[1]["waits"], &procs[1]["wait_ns"]),
        (&4.into(), &14_000.into())
    );
    assert!(procs[0].get("waits").is_none(), "{}", procs[0]);
    let counters: Vec<(String, u64, String)> = evs
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_owned();
            (name, us_to_ns(&e["ts"]), e["args"].to_string())
        })
        .collect();
    let c = |name: &str, ts, args: &str| (name.to_owned(), ts, args.to_owned());
    assert_eq!(
        counters,
        [
            c("writer waits: main (4300)", 1_500, r#"{"count":0}"#),
            c("writer waits: main (4300)", 3_500, r#"{"count":3}"#),
            c("writer wait: main (4300)", 1_500, r#"{"ns":0}"#),
            c("writer wait: main (4300)", 3_500, r#"{"ns":12000}"#),
            c(
                "writer waits: .NET TP Worker (4301)",
                2_200,
                r#"{"count":0}"#
            ),
            c(
                "writer waits: .NET TP Worker (4301)",
                2_800,
                r#"{"count":1}"#
            ),
            c("writer wait: .NET TP Worker (4301)", 2_200, r#"{"ns":0}"#),
            c(
                "writer wait: .NET TP Worker (4301)",
                2_800,
                r#"{"ns":2000}"#
            ),
        ]
    );
}

/// One profile per thread, named with its process; one shared frame per name and module
/// (Shared.Log.Write once for both processes); one time axis.
#[test]
fn speedscope_session_names_the_processes() {
    let v: Value = serde_json::from_slice(&run_session(
        Format::Speedscope,
        &session(),
        &Default::default(),
    ))
    .unwrap();
    assert_eq!(
        v["name"],
        "App.dll (pid 4242), csc.dll (pid 4300), 4 events dropped"
    );
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "App.dll (pid 4242), main (4242)",
            "App.dll (pid 4242), .NET TP Worker (4250)",
            "csc.dll (pid 4300), main (4300)",
            "csc.dll (pid 4300), .NET TP Worker (4301), 4 events dropped",
            "App.dll (pid 4242), logical (async calls under their callers)",
            "csc.dll (pid 4300), logical (async calls under their callers)"
        ]
    );
    let frames: Vec<String> = v["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        frames.iter().filter(|f| *f == "Shared.Log.Write").count(),
        1,
        "{frames:?}"
    );
    // The threads' profiles share one time axis; the logical ones weigh their paths.
    for p in v["profiles"].as_array().unwrap() {
        if p["type"] == "evented" {
            assert_eq!(
                (&p["startValue"], &p["endValue"]),
                (&0.into(), &3_500.into())
            );
        } else {
            let w: u64 = p["weights"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_u64().unwrap())
                .sum();
            assert_eq!(p["endValue"], w, "{p}");
        }
    }
}

/// A root frame per process, the thread roots below it; the values add up to both
/// processes' time; lines sorted and distinct.
#[test]
fn folded_session_has_a_root_per_process() {
    let traces = session();
    let total: u64 = traces
        .iter()
        .map(|t| analyze(&t[..], &Options::default()).unwrap().totals.root_ns)
        .sum();
    for opts in [ExportOptions::default(), thread_root()] {
        let out = String::from_utf8(run_session(Format::Folded, &traces, &opts)).unwrap();
        let mut sum = 0;
        let mut prev = String::new();
        let mut roots = BTreeSet::new();
        for line in out.lines() {
            let (stack, v) = line.rsplit_once(' ').unwrap();
            assert!(*stack > *prev, "not sorted/distinct: {stack}");
            prev = stack.to_owned();
            sum += v.parse::<u64>().unwrap();
            let mut frames = stack.split(';');
            roots.insert(frames.next().unwrap().to_owned());
            if opts.thread_root {
                let thread = frames.next().unwrap();
                assert!(thread.ends_with(')'), "{line}");
            }
        }
        assert_eq!(sum, total);
        assert_eq!(
            roots,
            BTreeSet::from(["App.dll_(pid_4242)".into(), "csc.dll_(pid_4300)".into()])
        );
    }
}

/// The HTML report's tree: an "all" root over one node per process, each over its threads;
/// the thread table says each thread's process and its times on the session's timeline.
#[test]
fn html_session_has_a_node_per_process() {
    let traces = session();
    let page = String::from_utf8(run_session(Format::Html, &traces, &Default::default())).unwrap();
    assert!(
        page.contains(
            "<title>eltrace: 2 processes: App.dll (pid 4242), csc.dll (pid 4300)</title>"
        )
    );
    let d = html_data(&page);
    let t = &d["tree"];
    let col = |name: &str| -> Vec<i64> {
        t[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect()
    };
    let (parent, kind, refs, incl) = (col("parent"), col("kind"), col("ref"), col("incl"));
    assert_eq!((parent[0], kind[0]), (-1, 0));
    let procs: Vec<usize> = (0..parent.len()).filter(|&i| kind[i] == 1).collect();
    assert_eq!(procs.len(), 2);
    let analyses: Vec<_> = traces
        .iter()
        .map(|t| analyze(&t[..], &Options::default()).unwrap())
        .collect();
    for (k, &i) in procs.iter().enumerate() {
        assert_eq!((parent[i], refs[i]), (0, k as i64));
        assert_eq!(incl[i] as u64, analyses[k].totals.root_ns);
    }
    assert_eq!(incl[0], incl[procs[0]] + incl[procs[1]]);
    // Each thread node under its process's node.
    let th = &d["threads"];
    for i in (0..parent.len()).filter(|&i| kind[i] == 2) {
        let process = th["process"][refs[i] as usize].as_i64().unwrap();
        assert_eq!(parent[i], procs[process as usize] as i64);
    }
    assert_eq!(th["process"], serde_json::json!([0, 0, 1, 1]));
    // csc's main thread: its first event at 0, 1.5 µs into the session.
    assert_eq!(th["first"][2], CSC_START);
    let pids: Vec<&Value> = d["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["pid"])
        .collect();
    assert_eq!(pids, [4242, 4300]);
    // Waits: csc's facts and its threads' columns; none for App.
    let csc = &d["processes"][1];
    assert_eq!(
        (&csc["waits"], &csc["wait_ns"]),
        (&4.into(), &14_000.into())
    );
    assert!(d["processes"][0].get("waits").is_none());
    assert_eq!(th["waits"], serde_json::json!([0, 0, 3, 1]));
    assert_eq!(th["wait_ns"], serde_json::json!([0, 0, 12_000, 2_000]));
    // Shared.Log.Write: one row, the calls of both processes.
    let f = &d["functions"];
    let names: Vec<&str> = f["name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| d["strings"][i.as_u64().unwrap() as usize].as_str().unwrap())
        .collect();
    let log = names.iter().position(|n| *n == "Shared.Log.Write").unwrap();
    assert_eq!(f["calls"][log], 5);
}
