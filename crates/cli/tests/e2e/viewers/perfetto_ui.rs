//! The Perfetto UI (its trace_processor queried with SQL) on synthetic traces: the Perfetto
//! export and the Chrome JSON show every frame as a slice with its exact times, threads named
//! under their process, flow arrows between async segments, drops as instants; a recording
//! session of two processes exported as one trace shows each process under its pid, on one
//! timeline, with its writer-wait counters.

use eltrace_trace::testing::traces;
use serde_json::Value;

use super::PERFETTO_BENIGN;
use crate::viewer_support::perfetto_ui::PerfettoUi;
use crate::viewer_support::queries::{
    Slice, dir, export_file, export_with, frames, import_errors, s, u, ui_flows, ui_slices,
    ui_threads,
};
use crate::viewer_support::viewers;

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
