//! Exports loaded in the real viewers (the `viewer_support` module says how): the Perfetto export
//! and the Chrome JSON in the Perfetto UI (its trace_processor queried with SQL), the
//! speedscope export and the Chrome JSON in speedscope, the Chrome JSON in chrome://tracing's
//! viewer. Each test checks what the viewer shows (threads, functions, durations, nesting,
//! flow arrows, drops), that the page logged no error and, where a defect of an earlier
//! export showed there, that it is gone. Synthetic traces first, then a real recording.
//! Screenshots: target/tmp/viewers/*.png.

use std::time::Instant;

use eltrace_trace::testing::traces;
use serde_json::Value;

use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app};
use crate::viewer_support::perfetto_ui::PerfettoUi;
use crate::viewer_support::queries::{
    Slice, counts, dir, export_file, export_with, frames, import_errors, s, u, ui_flows, ui_slices,
    ui_threads,
};
use crate::viewer_support::speedscope::Speedscope;
use crate::viewer_support::{catapult, viewers};

/// The Perfetto UI probes for a native trace_processor on 127.0.0.1:9001 and logs the
/// refused connection (it says itself that this is safe to ignore).
const PERFETTO_BENIGN: &[&str] = &["127.0.0.1:9001"];
/// The trace viewer warns that it runs on a polyfill.
const CATAPULT_BENIGN: &[&str] = &["WebComponentsV0 polyfill"];

/// The Perfetto export in the Perfetto UI: every frame a slice on its thread's track with
/// its exact times, threads named and grouped under the process, equal ends nested, flow
/// arrows from each async segment to the next, drops as instants, no import error.
#[test]
fn perfetto_ui_shows_the_perfetto_export() {
    let Some(v) = viewers("perfetto_ui_shows_the_perfetto_export") else {
        return;
    };
    let d = dir("perfetto-ui");
    let trace = traces::nested_async();
    let (path, bytes) = export_with(&d, &trace, "perfetto", &[]);
    assert_eq!(path.file_name().unwrap(), "t.pftrace");
    let mut ui = PerfettoUi::load(&v, "nested-async.pftrace", bytes);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), frames(&trace));
    assert_eq!(
        ui_threads(&mut ui),
        vec![
            (4242, "main".into(), "App.dll".into()),
            (4250, ".NET TP Worker".into(), "App.dll".into())
        ]
    );
    let (tracks, groups) = ui.tracks();
    assert!(groups.contains(&"App.dll 4242".to_owned()), "{groups:?}");
    for t in ["main 4242", ".NET TP Worker 4250"] {
        assert!(tracks.iter().any(|(n, _)| n == t), "{t} not in {tracks:?}");
    }
    // Outer's and Inner's segments end together at 300: Inner stays inside Outer.
    let depth = ui.query("select depth from slice where name = 'App.Q.Inner' and ts = 250");
    assert_eq!(u(&depth[0]["depth"]), 3);
    assert_eq!(
        ui_flows(&mut ui),
        vec![
            ("App.P.Outer".into(), 200, "App.P.Outer".into(), 1_600),
            ("App.Q.Inner".into(), 250, "App.Q.Inner".into(), 1_000),
        ]
    );
    ui.browser.screenshot("perfetto-ui-nested-async");
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
    drop(ui);

    let trace = traces::drops();
    let (_, bytes) = export_with(&d.join("drops"), &trace, "perfetto", &[]);
    let mut ui = PerfettoUi::load(&v, "drops.pftrace", bytes);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), frames(&trace));
    let instants = ui.query(
        "select t.tid as tid, s.ts as ts from slice s join thread_track tt on s.track_id = tt.id \
         join thread t using(utid) where s.name = 'events dropped' and s.dur = 0 order by ts",
    );
    let instants: Vec<(u64, u64)> = instants
        .iter()
        .map(|r| (u(&r["tid"]), u(&r["ts"])))
        .collect();
    assert_eq!(instants, vec![(5000, 80), (4242, 100)]);
    ui.browser.screenshot("perfetto-ui-drops");
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
}

/// The Chrome JSON in the Perfetto UI: durations in ns as recorded. The export used to say
/// `"displayTimeUnit":"ns"`, which made Perfetto read every µs as a ns (1000× too short;
/// this 2021 build fails to draw such a file at all).
#[test]
fn perfetto_ui_reads_chrome_json_durations_right() {
    let Some(v) = viewers("perfetto_ui_reads_chrome_json_durations_right") else {
        return;
    };
    let trace = traces::nested_async();
    let (path, bytes) = export_with(&dir("perfetto-ui-json"), &trace, "chrome", &[]);
    assert_eq!(path.file_name().unwrap(), "t.trace.json");
    let mut ui = PerfettoUi::load(&v, "t.trace.json", bytes.clone());
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), frames(&trace));
    assert_eq!(ui_flows(&mut ui).len(), 2);
    ui.browser.screenshot("perfetto-ui-chrome-json");
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
    drop(ui);
    // Drops show as instants here too.
    let trace = traces::drops();
    let (_, bytes) = export_with(&dir("perfetto-ui-json-drops"), &trace, "chrome", &[]);
    let mut ui = PerfettoUi::load(&v, "drops.trace.json", bytes);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), frames(&trace));
    let instants = ui.query(
        "select t.tid as tid, s.ts as ts from slice s join thread_track tt on s.track_id = tt.id \
         join thread t using(utid) where s.name = 'events dropped' order by ts",
    );
    let instants: Vec<(u64, u64)> = instants
        .iter()
        .map(|r| (u(&r["tid"]), u(&r["ts"])))
        .collect();
    assert_eq!(instants, vec![(5000, 80), (4242, 100)]);
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
}

/// The speedscope export in speedscope: one profile per thread, named with its tid, every
/// function in the sandwich view once (an async method's segments merged), equal ends
/// nested without a warning from speedscope's importer.
#[test]
fn speedscope_shows_the_speedscope_export() {
    let Some(v) = viewers("speedscope_shows_the_speedscope_export") else {
        return;
    };
    let (path, bytes) = export_with(
        &dir("speedscope"),
        &traces::nested_async(),
        "speedscope",
        &[],
    );
    assert_eq!(path.file_name().unwrap(), "t.speedscope.json");
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(ss.title(), "App.dll (pid 4242) - speedscope");
    let rows = ss.sandwich();
    let names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "App.P.Main",
            "App.P.Outer [thunk]",
            "App.Q.Inner",
            "App.P.Outer"
        ],
        "{rows:?}"
    );
    ss.browser.screenshot("speedscope-nested-async-main");
    assert_eq!(
        ss.profile_lines(),
        vec![
            "main (4242) (1/3)",
            ".NET TP Worker (4250) (2/3)",
            "logical (async calls under their callers) (3/3)"
        ]
    );
    // The logical call tree (the last profile): every function, resumes included, under the
    // call that awaited it.
    let mut logical: Vec<String> = ss.sandwich().into_iter().map(|r| r.2).collect();
    logical.sort();
    assert_eq!(
        logical,
        vec![
            "App.P.Main",
            "App.P.Outer",
            "App.P.Outer [thunk]",
            "App.Q.Inner",
            "App.Q.Leaf"
        ]
    );
    ss.key("p");
    // On the worker: Inner's resume (500 ns, Leaf 100 of it) and Outer's (200 ns).
    let rows = ss.sandwich();
    assert_eq!(
        rows,
        vec![
            (
                "500.00ns (71%)".into(),
                "400.00ns (57%)".into(),
                "App.Q.Inner".into()
            ),
            (
                "200.00ns (29%)".into(),
                "200.00ns (29%)".into(),
                "App.P.Outer".into()
            ),
            (
                "100.00ns (14%)".into(),
                "100.00ns (14%)".into(),
                "App.Q.Leaf".into()
            ),
        ]
    );
    ss.browser.screenshot("speedscope-nested-async-worker");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);

    // Frames ended by an exception, a tail call, a mismatched Leave or the end of the trace
    // open and close in balance: speedscope's importer would throw otherwise.
    let (_, bytes) = export_with(
        &dir("speedscope-basic"),
        &traces::basic(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "time-ordered");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(
        ss.profile_lines(),
        vec![
            "Main (1001) (1/3)",
            "thread (1002) (2/3)",
            "logical (async calls under their callers) (3/3)"
        ]
    );
    ss.browser.screenshot("speedscope-basic");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);

    let (_, bytes) = export_with(
        &dir("speedscope-drops"),
        &traces::drops(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "time-ordered");
    assert_eq!(
        ss.title(),
        "App.dll (pid 4242), 10 events dropped - speedscope"
    );
    assert_eq!(
        ss.profile_line(),
        "main (4242), 7 events dropped (1/4)",
        "{}",
        ss.text()
    );
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// The pprof export opens in speedscope (its pprof importer, gzipped) with the numbers of the
/// analysis (`report`'s): a timed trace's sandwich view shows every function's exclusive
/// ("Self") and inclusive ("Total") time, a timeless trace's its calls.
#[test]
fn speedscope_imports_the_pprof_export() {
    let Some(v) = viewers("speedscope_imports_the_pprof_export") else {
        return;
    };
    for (case, trace) in [
        ("timed", traces::recursion()),
        ("timeless", traces::timeless()),
    ] {
        let (path, bytes) = export_with(
            &dir(&format!("speedscope-pprof-{case}")),
            &trace,
            "pprof",
            &[],
        );
        assert_eq!(path.file_name().unwrap(), "t.pb.gz");
        let mut ss = Speedscope::load(&v, &format!("{case}.pb.gz"), &bytes, "sandwich");
        assert!(!ss.failed(), "{}", ss.text());
        let mut rows = ss.sandwich();
        rows.sort_by(|a, b| a.2.cmp(&b.2));
        // What report says of each function, in speedscope's own spelling.
        let a = eltrace_analysis::analyze(&trace[..], &eltrace_analysis::Options::default())
            .expect("the trace reads");
        let mut expected: Vec<(String, String, String)> = a
            .functions()
            .map(|(idx, s)| {
                let (total, own) = if a.has_event_times() {
                    (
                        format!("{}.00ns", s.inclusive_ns),
                        format!("{}.00ns", s.exclusive_ns),
                    )
                } else {
                    // Calls: a function's self value is its calls (its total holds its
                    // callees' calls too).
                    (String::new(), s.calls.to_string())
                };
                (total, own, a.tables.functions.name(idx))
            })
            .collect();
        expected.sort_by(|x, y| x.2.cmp(&y.2));
        // speedscope writes `130.00ns (52%)`: the value before the share.
        let value = |cell: &str| cell.split(" (").next().unwrap_or("").to_string();
        let got: Vec<(String, String, String)> = rows
            .iter()
            .map(|(total, own, name)| {
                let total = if a.has_event_times() {
                    value(total)
                } else {
                    String::new()
                };
                (total, value(own), name.clone())
            })
            .collect();
        assert_eq!(got, expected, "{case}: speedscope {rows:?}");
        assert_eq!(rows.len(), expected.len(), "{rows:?}");
        ss.browser.screenshot(&format!("speedscope-pprof-{case}"));
        assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    }
}

/// A `--timing sampled` trace's speedscope export (one sampled profile of the estimates)
/// opens in speedscope with its functions in the sandwich view.
#[test]
fn speedscope_shows_a_sampled_trace() {
    let Some(v) = viewers("speedscope_shows_a_sampled_trace") else {
        return;
    };
    let (_, bytes) = export_with(
        &dir("speedscope-sampled"),
        &traces::sampled(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "sampled.speedscope.json", &bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    let rows = ss.sandwich();
    let mut names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["App.P.Main", "App.P.Work"], "{rows:?}");
    ss.browser.screenshot("speedscope-sampled");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// The Chrome JSON's default name opens in speedscope; `*.chrome.json`, the old name, makes
/// speedscope take it for a DevTools profile and fail (the control).
#[test]
fn speedscope_opens_the_chrome_json_by_its_default_name() {
    let Some(v) = viewers("speedscope_opens_the_chrome_json_by_its_default_name") else {
        return;
    };
    let (path, bytes) = export_with(&dir("speedscope-json"), &traces::basic(), "chrome", &[]);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert_eq!(name, "t.trace.json");
    let mut ss = Speedscope::load(&v, name, &bytes, "time-ordered");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(
        ss.profile_lines(),
        vec![
            "App.dll (pid 4242), Main (1001) (tid 1001) (1/2)",
            "App.dll (pid 4242), thread (1002) (tid 1002) (2/2)"
        ]
    );
    ss.browser.screenshot("speedscope-chrome-json");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);
    let mut ss = Speedscope::load(&v, "t.chrome.json", &bytes, "time-ordered");
    assert!(ss.failed(), "the control no longer fails: {}", ss.text());
}

/// chrome://tracing's viewer imports the Chrome JSON without a warning; the flow arrows are
/// there. The control: with the same arguments on both ends of each flow, as the export
/// used to write them, it warns `arg_merge_error`.
#[test]
fn trace_viewer_imports_chrome_json_without_warnings() {
    let Some(v) = viewers("trace_viewer_imports_chrome_json_without_warnings") else {
        return;
    };
    let (_, bytes) = export_with(&dir("catapult"), &traces::nested_async(), "chrome", &[]);
    let m = catapult::import(&v, "t.trace.json", bytes.clone());
    assert_eq!(m.warnings, Vec::<String>::new());
    assert_eq!(m.flows, 2);
    let threads: Vec<(String, String, u64, u64)> = m.threads.clone();
    assert_eq!(
        threads,
        vec![
            ("App.dll".into(), "main (4242)".into(), 4242, 4),
            ("App.dll".into(), ".NET TP Worker (4250)".into(), 4250, 3),
        ]
    );
    let mut browser = m.browser;
    browser.screenshot("trace-viewer-nested-async");
    assert_eq!(
        browser.problems_except(CATAPULT_BENIGN),
        Vec::<String>::new()
    );
    drop(browser);
    let old = String::from_utf8(bytes)
        .unwrap()
        .replace("\"segment 1\"", "\"call\":1,\"segment\"")
        .replace("\"segment 0\"", "\"segment\"");
    let m = catapult::import(&v, "old.json", old.into_bytes());
    assert!(
        m.warnings.iter().any(|w| w.starts_with("arg_merge_error")),
        "the control no longer warns: {:?}",
        m.warnings
    );
}

/// A real recording (runtime async `nested`, pool threads, async calls resumed on other
/// threads) in all three viewers.
#[test]
fn real_async_recording_in_the_viewers() {
    let Some(v) = viewers("real_async_recording_in_the_viewers") else {
        return;
    };
    let rec = record_app(
        Mode::Fast,
        async_dll(),
        "nested",
        &[],
        &[("DOTNET_RuntimeAsync", "1")],
    );
    let trace = std::fs::read(&rec.trace).unwrap();
    let expected = frames(&trace);

    // Perfetto export in the Perfetto UI.
    let (_, pf) = export_file(&rec.trace, "perfetto", &[]);
    let mut ui = PerfettoUi::load(&v, "nested.pftrace", pf);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), expected);
    let flows = ui_flows(&mut ui);
    ui.browser.screenshot("perfetto-ui-real-nested");
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
    drop(ui);

    // The Chrome JSON: the same slices and flows in the Perfetto UI, no warning in
    // chrome://tracing's viewer (which counted 36 arg_merge_errors on this scenario).
    let (_, json) = export_file(&rec.trace, "chrome", &[]);
    let mut ui = PerfettoUi::load(&v, "nested.trace.json", json.clone());
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), expected);
    assert_eq!(ui_flows(&mut ui), flows);
    assert!(!flows.is_empty());
    drop(ui);
    let m = catapult::import(&v, "nested.trace.json", json);
    assert_eq!(m.warnings, Vec::<String>::new());
    assert_eq!(m.flows as usize, flows.len());
    drop(m);

    // The speedscope export: every function once per thread, no importer warning.
    let (_, ss_bytes) = export_file(&rec.trace, "speedscope", &[]);
    let mut ss = Speedscope::load(&v, "nested.speedscope.json", &ss_bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    let lines = ss.profile_lines();
    let threads: std::collections::BTreeSet<u64> = expected.iter().map(|s| s.0).collect();
    // One profile per thread, and the logical call tree's.
    assert_eq!(lines.len(), threads.len() + 1, "{lines:?}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("logical (async calls")),
        "{lines:?}"
    );
    ss.browser.screenshot("speedscope-real-nested");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    let names = counts(&expected);
    assert!(names.keys().any(|n| n.contains("Nested")), "{names:?}");
}

/// Big traces: the Perfetto export of a million calls loads in the Perfetto UI (its Chrome
/// JSON took up to a minute for 600 000 and failed at ten million), and speedscope's own
/// format of 200 000 calls (its Chrome JSON import took 28 s for 100 000). Seen on the 2-core
/// VM: 48 s and 9-13 s (100 000 calls as Chrome JSON: 38 s in speedscope). No time is
/// asserted: a load that does not end within `viewer_support::LOAD_TIMEOUT` fails as "did not
/// load"; the times are printed.
#[test]
fn big_exports_load() {
    let Some(v) = viewers("big_exports_load") else {
        return;
    };
    let trace = many_calls(1_000_000);
    let (_, pf) = export_with(&dir("big"), &trace, "perfetto", &[]);
    let start = Instant::now();
    let mut ui = PerfettoUi::load(&v, "big.pftrace", pf);
    eprintln!(
        "Perfetto UI: 1 000 000 calls loaded in {:?}",
        start.elapsed()
    );
    let n = ui.query("select count(*) as n from slice");
    assert_eq!(u(&n[0]["n"]), 1_000_001);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    drop(ui);

    let trace = many_calls(200_000);
    let (_, ss_bytes) = export_with(&dir("big-ss"), &trace, "speedscope", &[]);
    let start = Instant::now();
    let mut ss = Speedscope::load(&v, "big.speedscope.json", &ss_bytes, "sandwich");
    eprintln!("speedscope: 200 000 calls loaded in {:?}", start.elapsed());
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// One thread: Main calling Step `n` times (10 ns each, 5 ns apart).
fn many_calls(n: u64) -> Vec<u8> {
    use eltrace_trace::EventKind::{Enter, Leave};
    let mut events = vec![(0, Enter, 0)];
    for i in 0..n {
        events.push((10 + i * 15, Enter, 1));
        events.push((20 + i * 15, Leave, 1));
    }
    events.push((n * 15 + 20, Leave, 0));
    traces::builder(&[("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Step")])
        .thread(0, 4242)
        .events(0, &events)
        .end(0)
}

/// The analysis' frames of each trace of a session as slices, each moved by its process's
/// start on the session's timeline, sorted.
fn session_frames(traces: &[Vec<u8>], starts: &[u64]) -> Vec<Slice> {
    let mut all: Vec<Slice> = traces
        .iter()
        .zip(starts)
        .flat_map(|(t, &start)| {
            frames(t)
                .into_iter()
                .map(move |(tid, ts, dur, name)| (tid, ts + start, dur, name))
        })
        .collect();
    all.sort();
    all
}

/// A recording session of two processes exported as one Perfetto trace (and as one Chrome
/// JSON) in the Perfetto UI: each process under its pid with its threads, every frame a
/// slice at its time on the session's timeline (csc starts 1.5 µs after App), each process's
/// flow arrow on its own (both are logical call 0), csc's drop and its threads' writer-wait
/// counters, no import error.
#[test]
fn perfetto_ui_shows_a_session() {
    let Some(v) = viewers("perfetto_ui_shows_a_session") else {
        return;
    };
    let d = dir("perfetto-ui-session");
    std::fs::create_dir_all(&d).unwrap();
    let traces = traces::session();
    let main = d.join("app.eltrace");
    std::fs::write(&main, &traces[0]).unwrap();
    std::fs::write(d.join("app.4300.eltrace"), &traces[1]).unwrap();
    let expected = session_frames(&traces, &[0, 1_500]);
    for format in ["perfetto", "chrome"] {
        let (path, bytes) = export_file(&main, format, &[]);
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let mut ui = PerfettoUi::load(&v, &name, bytes);
        assert_eq!(import_errors(&mut ui), Vec::<Value>::new(), "{format}");
        assert_eq!(ui_slices(&mut ui), expected, "{format}");
        let threads: Vec<(u64, u64, String)> = ui
            .query(
                "select p.pid as pid, t.tid as tid, p.name as process from thread t \
                 join process p using(upid) where t.tid != 0 order by pid, tid",
            )
            .iter()
            .map(|r| (u(&r["pid"]), u(&r["tid"]), s(&r["process"])))
            .collect();
        let t = |pid, tid, p: &str| (pid, tid, p.to_owned());
        assert_eq!(
            threads,
            [
                t(4242, 4242, "App.dll"),
                t(4242, 4250, "App.dll"),
                t(4300, 4300, "csc.dll"),
                t(4300, 4301, "csc.dll")
            ],
            "{format}"
        );
        assert_eq!(
            ui_flows(&mut ui),
            vec![
                ("App.P.Work".into(), 200, "App.P.Work".into(), 1_000),
                ("Csc.P.Work".into(), 1_560, "Csc.P.Work".into(), 2_200),
            ],
            "{format}"
        );
        let drops = ui.query(
            "select t.tid as tid, s.ts as ts from slice s join thread_track tt \
             on s.track_id = tt.id join thread t using(utid) where s.name = 'events dropped'",
        );
        let drops: Vec<(u64, u64)> = drops.iter().map(|r| (u(&r["tid"]), u(&r["ts"]))).collect();
        assert_eq!(drops, [(4301, 2_400)], "{format}");
        // The writer-wait counters: a thread's in Perfetto's, the process's (one per thread
        // and value, named with both) in the Chrome JSON.
        let sql = if format == "perfetto" {
            "select t.tid || ' ' || ct.name as name, c.ts as ts, c.value as value from counter c \
             join thread_counter_track ct on c.track_id = ct.id join thread t using(utid) \
             order by name, c.ts"
        } else {
            "select ct.name as name, c.ts as ts, c.value as value from counter c \
             join process_counter_track ct on c.track_id = ct.id \
             join process p using(upid) where p.pid = 4300 order by name, c.ts"
        };
        let counters: Vec<(String, u64, u64)> = ui
            .query(sql)
            .iter()
            .map(|r| (s(&r["name"]), u(&r["ts"]), u(&r["value"])))
            .collect();
        let names: [&str; 4] = if format == "perfetto" {
            [
                "4300 writer wait ns: main (4300)",
                "4300 writer waits: main (4300)",
                "4301 writer wait ns: .NET TP Worker (4301)",
                "4301 writer waits: .NET TP Worker (4301)",
            ]
        } else {
            [
                "writer wait: main (4300) ns",
                "writer waits: main (4300) count",
                "writer wait: .NET TP Worker (4301) ns",
                "writer waits: .NET TP Worker (4301) count",
            ]
        };
        // main (4300): 1.5..3.5 µs, 3 waits, 12 µs; the worker: 2.2..2.8 µs, 1 wait, 2 µs.
        let mut expected_counters: Vec<(String, u64, u64)> = [
            (names[0], 1_500, 0),
            (names[0], 3_500, 12_000),
            (names[1], 1_500, 0),
            (names[1], 3_500, 3),
            (names[2], 2_200, 0),
            (names[2], 2_800, 2_000),
            (names[3], 2_200, 0),
            (names[3], 2_800, 1),
        ]
        .into_iter()
        .map(|(n, ts, v)| (n.to_owned(), ts, v))
        .collect();
        expected_counters.sort();
        assert_eq!(counters, expected_counters, "{format}");
        if format == "perfetto" {
            let (_, groups) = ui.tracks();
            for g in ["App.dll 4242", "csc.dll 4300"] {
                assert!(groups.contains(&g.to_owned()), "{g} not in {groups:?}");
            }
        }
        ui.browser
            .screenshot(&format!("perfetto-ui-session-{format}"));
        assert_eq!(
            ui.browser.problems_except(PERFETTO_BENIGN),
            Vec::<String>::new(),
            "{format}"
        );
    }
}
