//! `eltrace report` on synthetic traces: the text tables and the `--json` schema.

use crate::support::*;
use eltrace_trace::protocol::info_key;
use eltrace_trace::testing::{TraceBuilder, app_info};
use serde_json::Value;

fn json_report(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn text_report() {
    let dir = temp_dir("text");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&["report", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("pid 4242"), "{out}");
    assert!(
        out.contains("events 13, threads 2, functions 5 called of 5, dropped 0, truncated no"),
        "{out}"
    );
    assert!(
        out.contains("open frames at end 0, end shutdown, duration 10.0 ms"),
        "{out}"
    );
    // Sorted by inclusive time: Main first, then Work, Loop.
    let lines: Vec<&str> = out.lines().collect();
    let row = |name: &str| lines.iter().position(|l| l.starts_with(name)).unwrap();
    assert!(row("App.Program.Main") < row("App.Program.Work"));
    assert!(row("App.Program.Work") < row("App.Worker.Loop"));
    let work = lines[row("App.Program.Work")];
    for cell in [
        "App.dll", " 2 ", "6.00 ms", "3.00 ms", "5.00 ms", "2.50 ms", "42.9%",
    ] {
        assert!(work.contains(cell), "{cell:?} missing in {work:?}");
    }
    assert!(out.contains("1001"), "{out}");
    assert!(out.contains("Worker"), "{out}");
}

#[test]
fn waits_line_is_one_sentence() {
    let dir = temp_dir("waits");
    let trace = TraceBuilder::new(app_info())
        .functions([("App.dll", "App.Program", "Main")])
        .thread(0, 1001)
        .events(0, &[(0, Enter, 0), (1_000_000, Leave, 0)])
        .waits(0, 3, 2_000)
        .end(0);
    let p = save(&dir, "t.eltrace", &trace);
    let o = run(&["report", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("waits:")).expect(&out);
    assert_eq!(
        line,
        "waits: hooks waited 3 times for the trace writer, 2.00 µs in all (lossless recording; \
         the waiting time is inside the frames that were running)"
    );
}

/// The thread table has no managed-id column (no profiling API gives the id, so it was 0 on
/// every thread) and names threads as the exports do: the runtime's name, `main` for the
/// thread whose tid is the pid, else `thread`.
#[test]
fn thread_table_names_threads_as_the_exports_do() {
    let dir = temp_dir("threads");
    let pid = u64::from(app_info().pid);
    let trace = TraceBuilder::new(app_info())
        .functions([("App.dll", "App.Program", "Main")])
        .thread(0, pid)
        .named_thread(1, 1002, 0, ".NET TP Worker")
        .thread(2, 1003)
        .events(0, &[(0, Enter, 0), (3_000_000, Leave, 0)])
        .events(1, &[(0, Enter, 0), (2_000_000, Leave, 0)])
        .events(2, &[(0, Enter, 0), (1_000_000, Leave, 0)])
        .end(0);
    let p = save(&dir, "t.eltrace", &trace);
    let o = run(&["report", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.contains("open at end"))
        .expect(&out);
    let cells = |l: &str| {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        cells(lines[header]),
        [
            "tid",
            "thread",
            "events",
            "inclusive",
            "max depth",
            "open at end"
        ]
    );
    let rows: Vec<Vec<String>> = lines[header + 1..header + 4]
        .iter()
        .map(|l| cells(l))
        .collect();
    assert_eq!(rows[0][..2], [pid.to_string(), "main".to_owned()], "{out}");
    assert_eq!(rows[1][..2], ["1002", ".NET TP Worker"], "{out}");
    assert_eq!(rows[2][..2], ["1003", "thread"], "{out}");
    assert!(lines[header + 4].trim_start().starts_with("total"), "{out}");
}

#[test]
fn text_report_top_and_by() {
    let dir = temp_dir("top");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&[
        "report",
        p.to_str().unwrap(),
        "--top",
        "2",
        "--by",
        "exclusive",
    ]);
    let out = stdout(&o);
    assert!(o.status.success());
    // Exclusive: Work 5 ms (6 - 1), Loop 4 ms, Main 3 ms (10 - 6 - 1).
    let fns: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("App.") || l.starts_with("Lib."))
        .collect();
    assert_eq!(fns.len(), 2, "{out}");
    assert!(
        fns[0].starts_with("App.Program.Work") && fns[1].starts_with("App.Worker.Loop"),
        "{out}"
    );
    assert!(out.contains("3 more functions"), "{out}");
}

#[test]
fn json_schema() {
    let dir = temp_dir("json");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let v = json_report(&["report", p.to_str().unwrap(), "--json"]);
    let t = &v["trace"];
    for key in [
        "path",
        "events",
        "threads",
        "functions",
        "dropped_events",
        "truncated",
        "open_frames_at_end",
        "end_reason",
        "mismatched_frames",
        "unmatched_leaves",
        "duration_ns",
    ] {
        assert!(!t[key].is_null(), "trace.{key} missing: {t}");
    }
    assert_eq!(t["path"], p.to_str().unwrap());
    assert_eq!(t["events"], 13);
    assert_eq!(t["threads"], 2);
    assert_eq!(t["functions"], 5);
    assert_eq!(t["truncated"], false);
    assert_eq!(t["end_reason"], "shutdown");
    assert_eq!(t["duration_ns"], 10_000_000);
    let fs = v["functions"].as_array().unwrap();
    assert_eq!(fs.len(), 5);
    for f in fs {
        for key in [
            "name",
            "module",
            "calls",
            "inclusive_ns",
            "exclusive_ns",
            "mean_inclusive_ns",
            "mean_exclusive_ns",
            "open_at_end",
            "unwound",
            "tailcalls",
            "share",
        ] {
            assert!(!f[key].is_null(), "functions[].{key} missing: {f}");
        }
    }
    let main = &fs[0];
    assert_eq!(main["name"], "App.Program.Main");
    assert_eq!(main["module"], "App.dll");
    assert_eq!(main["calls"], 1);
    assert_eq!(main["inclusive_ns"], 10_000_000);
    assert_eq!(main["exclusive_ns"], 3_000_000);
    let total = 14_000_000.0;
    assert!((main["share"].as_f64().unwrap() - 10_000_000.0 / total).abs() < 1e-9);
    let work = fs.iter().find(|f| f["name"] == "App.Program.Work").unwrap();
    assert_eq!(work["calls"], 2);
    assert_eq!(work["mean_inclusive_ns"], 3_000_000);
    assert_eq!(work["mean_exclusive_ns"], 2_500_000);
    let boom = fs.iter().find(|f| f["name"] == "App.Program.Boom").unwrap();
    assert_eq!(boom["unwound"], 1);
    let ths = v["threads"].as_array().unwrap();
    assert_eq!(ths.len(), 2);
    for th in ths {
        for key in [
            "tid",
            "managed_id",
            "name",
            "events",
            "inclusive_ns",
            "max_depth",
            "open_frames_at_end",
        ] {
            assert!(!th[key].is_null(), "threads[].{key} missing: {th}");
        }
    }
    assert_eq!(ths[0]["tid"], 1001);
    assert_eq!(ths[0]["name"], "Main");
    assert_eq!(ths[0]["managed_id"], 1);
    assert_eq!(ths[0]["events"], 11);
    assert_eq!(ths[0]["max_depth"], 3);
    assert_eq!(ths[1]["inclusive_ns"], 4_000_000);
    let edges = v["edges"].as_array().unwrap();
    let edge = |c: &str, d: &str| {
        edges
            .iter()
            .find(|e| e["caller"] == c && e["callee"] == d)
            .cloned()
    };
    let root = edge("", "App.Program.Main").unwrap();
    assert_eq!(
        (root["calls"].as_u64(), root["inclusive_ns"].as_u64()),
        (Some(1), Some(10_000_000))
    );
    let mw = edge("App.Program.Main", "App.Program.Work").unwrap();
    assert_eq!(
        (mw["calls"].as_u64(), mw["inclusive_ns"].as_u64()),
        (Some(2), Some(6_000_000))
    );
    assert!(edge("", "App.Worker.Loop").is_some());
    assert_eq!(edges.len(), 5);
}

#[test]
fn json_top_by_and_thread() {
    let dir = temp_dir("jsontop");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let ps = p.to_str().unwrap();
    let v = json_report(&["report", ps, "--json", "--by", "calls", "--top", "1"]);
    let fs = v["functions"].as_array().unwrap();
    assert_eq!(fs.len(), 1);
    assert_eq!(fs[0]["name"], "App.Program.Work");

    let v = json_report(&["report", ps, "--json", "--thread", "1002"]);
    let names: Vec<&str> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["App.Worker.Loop"]);
    assert_eq!(v["threads"].as_array().unwrap().len(), 1);
    assert_eq!(v["threads"][0]["tid"], 1002);
    assert_eq!(v["functions"][0]["share"], 1.0);

    let o = run(&["report", ps, "--thread", "999"]);
    assert_error(&o, 1, "no thread with OS tid 999");
}

#[test]
fn truncated_trace_is_a_warning() {
    let dir = temp_dir("trunc");
    let bytes = sample_trace(true);
    // Cut inside the end chunk: no end record, the last events chunk is whole.
    let p = save(&dir, "t.eltrace", &bytes[..bytes.len() - 5]);
    let o = run(&["report", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(
        err.starts_with("eltrace: warning: ") && err.contains("truncated"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trace"]["truncated"], true);
    assert_eq!(v["trace"]["end_reason"], "none");

    // Open frames at the end of a cut trace.
    let p = save(
        &dir,
        "open.eltrace",
        &TraceBuilder::new(app_info())
            .functions([("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Run")])
            .named_thread(0, 7, 1, "")
            .events(
                0,
                &[
                    (100, Enter, 0),
                    (200, Enter, 1),
                    (300, Leave, 1),
                    (400, Enter, 1),
                ],
            )
            .cut(),
    );
    let v = json_report(&["report", p.to_str().unwrap(), "--json"]);
    assert_eq!(v["trace"]["open_frames_at_end"], 2);
    assert_eq!(v["threads"][0]["open_frames_at_end"], 2);
    let main = &v["functions"][0];
    assert_eq!(
        (main["name"].as_str(), main["open_at_end"].as_u64()),
        (Some("App.P.Main"), Some(1))
    );
    assert_eq!(main["inclusive_ns"], 300);
    let o = run(&["report", p.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("open frames at end 2"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn empty_trace() {
    let dir = temp_dir("empty");
    let p = save(&dir, "t.eltrace", &TraceBuilder::new(app_info()).end(0));
    let o = run(&["report", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(no calls recorded)"));
    let v = json_report(&["report", p.to_str().unwrap(), "--json"]);
    assert_eq!(v["functions"].as_array().unwrap().len(), 0);
    assert_eq!(v["trace"]["duration_ns"], 0);
}

/// A process trace of a recording session: pid, command, session id, and `calls` calls of
/// `Work`.
fn process_trace(pid: u32, command: &str, session: &str, calls: u64) -> Vec<u8> {
    let mut info = app_info();
    info.pid = pid;
    info.command = command.into();
    info.extra.push((info_key::SESSION.into(), session.into()));
    // The older session started earlier.
    info.start_unix_ns = if session == "s0" { 1_000 } else { 2_000 };
    let evs: Vec<(u64, eltrace_trace::EventKind, u32)> = (0..calls)
        .flat_map(|i| {
            [
                (i * 10, eltrace_trace::EventKind::Enter, 0),
                (i * 10 + 5, eltrace_trace::EventKind::Leave, 0),
            ]
        })
        .collect();
    TraceBuilder::new(info)
        .methods("App.dll", "App.Program", &["Work"])
        .thread(0, u64::from(pid))
        .events(0, &evs)
        .end(1_000)
}

#[test]
fn a_session_is_reported_process_by_process() {
    let dir = temp_dir("session");
    let main = save(
        &dir,
        "app.eltrace",
        &process_trace(100, "dotnet build", "s1", 1),
    );
    save(&dir, "app.130.eltrace", &process_trace(130, "csc", "s1", 3));
    // Another run's process trace beside it is not part of the session.
    save(&dir, "app.77.eltrace", &process_trace(77, "old", "s0", 9));
    let m = main.to_str().unwrap();
    let v = json_report(&["report", m, "--json"]);
    let procs = v["processes"].as_array().unwrap();
    let pids: Vec<u64> = procs
        .iter()
        .map(|p| p["trace"]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids, [100, 130]);
    assert_eq!(procs[1]["functions"][0]["calls"], 3);
    // --pid picks one: the single-process schema.
    let v = json_report(&["report", m, "--json", "--pid", "130"]);
    assert_eq!(v["trace"]["pid"], 130);
    assert_eq!(v["functions"][0]["calls"], 3);
    // The text report has a section per process.
    let o = run(&["report", m]);
    let out = stdout(&o);
    assert!(out.contains("== process 100: dotnet build"), "{out}");
    assert!(out.contains("== process 130: csc"), "{out}");
    assert!(!out.contains("process 77"), "{out}");
    // A process trace given directly is just itself; an unknown pid is an error.
    let v = json_report(&[
        "report",
        dir.join("app.77.eltrace").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["trace"]["pid"], 77);
    assert_error(
        &run(&["report", m, "--pid", "5"]),
        1,
        "no trace of process 5 (processes: 100, 130)",
    );
    // Without the main trace (the command's own process wrote none), its name stands for the
    // process traces of the latest session beside it (not the older run's).
    std::fs::remove_file(&main).unwrap();
    save(&dir, "app.131.eltrace", &process_trace(131, "csc", "s1", 2));
    let v = json_report(&["report", m, "--json"]);
    let pids: Vec<u64> = v["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["trace"]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids, [130, 131]);
}

/// A trace of Main calling Work `work` times and, if `leaf`, Leaf once; `timing` "exact" or
/// "none".
fn calls_trace(work: u64, leaf: bool, timing: &str) -> Vec<u8> {
    use eltrace_trace::testing::timed_info;
    let info = if timing == "exact" {
        app_info()
    } else {
        timed_info(timing, 0)
    };
    let mut ev = vec![(0, Enter, 0)];
    for i in 0..work {
        ev.push((10 + i * 100, Enter, 1));
        ev.push((60 + i * 100, Leave, 1));
    }
    if leaf {
        ev.push((5_000, Enter, 2));
        ev.push((5_010, Leave, 2));
    }
    ev.push((10_000, Leave, 0));
    TraceBuilder::new(info)
        .functions([
            ("App.dll", "App.Program", "Main"),
            ("App.dll", "App.Program", "Work"),
            ("App.dll", "App.Program", "Leaf"),
        ])
        .thread(0, 1001)
        .events(0, &ev)
        .end(10_000)
}

#[test]
fn diff_shows_changes_and_gates_call_counts() {
    let dir = temp_dir("diff");
    let base = save(&dir, "base.eltrace", &calls_trace(2, true, "exact"));
    let new = save(&dir, "new.eltrace", &calls_trace(3, false, "exact"));
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let o = run(&["diff", b, n]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("2 changed, 0 new, 1 gone"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let work = lines
        .iter()
        .find(|l| l.starts_with("App.Program.Work"))
        .expect(&out);
    for cell in [" 2 ", " 3 ", "+1", "+50.0%", "changed"] {
        assert!(work.contains(cell), "{cell:?} in {work:?}");
    }
    let leaf = lines
        .iter()
        .find(|l| l.starts_with("App.Program.Leaf"))
        .expect(&out);
    assert!(leaf.ends_with("gone"), "{leaf}");
    // The same trace twice: nothing changed, every gate holds.
    let o = run(&["diff", b, b, "--fail-on", "calls>+0%"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("no function changed"));
    // Work grew by one call of two: broken by 'calls>+0%' and 'calls>+49%', not by
    // 'calls>+50%', nor by a gate on other functions.
    for (gate, broken) in [
        ("calls>+0%", true),
        ("calls>+49%", true),
        ("calls>+50%", false),
        ("calls>+0", true),
        ("calls>+1", false),
        ("calls>+0%:App.Program.Leaf", false),
        ("calls>+0%:*.Work", true),
    ] {
        let o = run(&["diff", b, n, "--fail-on", gate]);
        assert_eq!(
            o.status.code(),
            Some(if broken { 1 } else { 0 }),
            "{gate}: {}",
            stderr(&o)
        );
        if broken {
            assert!(
                stderr(&o).contains(&format!("{gate} broken by App.Program.Work: 2 -> 3")),
                "{}",
                stderr(&o)
            );
        }
    }
    // A function new in the second trace broke any growth gate.
    let o = run(&["diff", n, b, "--fail-on", "calls>+100%"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("broken by App.Program.Leaf: 0 -> 1 (new)"),
        "{}",
        stderr(&o)
    );
    // JSON: every function, with both sides and the broken gates.
    let o = run(&["diff", b, n, "--json", "--fail-on", "calls>+0%"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["timed"], true);
    let f = v["functions"].as_array().unwrap();
    assert_eq!(f.len(), 3);
    assert_eq!(f[0]["name"], "App.Program.Work");
    assert_eq!(
        (
            f[0]["base"]["calls"].as_u64(),
            f[0]["new"]["calls"].as_u64()
        ),
        (Some(2), Some(3))
    );
    assert_eq!(f[0]["calls_delta"], 1);
    assert_eq!(f[1]["status"], "gone");
    assert_eq!(v["broken"][0]["name"], "App.Program.Work");
}

#[test]
fn diff_of_timeless_traces_compares_counts_only() {
    let dir = temp_dir("diff-none");
    let base = save(&dir, "base.eltrace", &calls_trace(2, false, "none"));
    let new = save(&dir, "new.eltrace", &calls_trace(2, true, "none"));
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let o = run(&["diff", b, n]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("counts only"), "{out}");
    assert!(out.contains("0 changed, 1 new, 0 gone"), "{out}");
    // A gate on time cannot be judged: a usage error, not a pass.
    let o = run(&["diff", b, n, "--fail-on", "exclusive>+20%"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs times"), "{}", stderr(&o));
    let o = run(&["diff", b, n, "--fail-on", "calls>+0%"]);
    assert_eq!(o.status.code(), Some(1));
    // A malformed gate is a usage error naming the form.
    let o = run(&["diff", b, n, "--fail-on", "calls>lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("METRIC>+LIMIT"), "{}", stderr(&o));
}
