//! `eltrace export` of a recording session: a trace stands for its session's traces (the
//! process traces beside it that name the same session), several traces go into one output,
//! `--pid` picks processes, and one process exports exactly as its trace alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::*;
use eltrace_trace::protocol::info_key;
use eltrace_trace::testing::{TraceBuilder, app_info, traces};
use serde_json::Value;

/// The session of `traces::session` as `record` leaves it in `dir` (`app.eltrace`, the
/// compiler's `app.4300.eltrace`), and a trace of an older run beside it
/// (`app.77.eltrace`, another session).
fn session_dir(name: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let [app, csc] = traces::session();
    let main = save(&dir, "app.eltrace", &app);
    save(&dir, "app.4300.eltrace", &csc);
    let mut info = app_info();
    info.pid = 77;
    info.extra.push((info_key::SESSION.into(), "s0".into()));
    let old = TraceBuilder::new(info)
        .methods("App.dll", "Old.P", &["Main"])
        .thread(0, 77)
        .events(0, &[(0, Enter, 0), (10, Leave, 0)])
        .end(10);
    save(&dir, "app.77.eltrace", &old);
    (dir, main)
}

fn pids(chrome: &Value) -> BTreeSet<u64> {
    chrome["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["pid"].as_u64())
        .collect()
}

fn export(args: &[&str]) -> (String, String) {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    (stdout(&o), stderr(&o))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_trace_exports_its_session() {
    let (dir, main) = session_dir("export-session");
    let (_, err) = export(&[s(&main), "--format", "chrome"]);
    let out = dir.join("app.trace.json");
    assert!(
        err.contains(&format!("wrote {} (chrome, 2 processes, ", out.display())),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(pids(&v), BTreeSet::from([4242, 4300]));
    assert_eq!(v["otherData"]["processes"].as_array().unwrap().len(), 2);

    // --pid picks one: the same bytes as that trace exported alone.
    let (picked, _) = export(&[s(&main), "-f", "perfetto", "--pid", "4300", "-o", "-"]);
    let (alone, _) = export(&[
        s(&dir.join("app.4300.eltrace")),
        "-f",
        "perfetto",
        "-o",
        "-",
    ]);
    assert!(!picked.is_empty());
    assert_eq!(picked, alone);
    assert_error(
        &run(&["export", s(&main), "-f", "chrome", "--pid", "5"]),
        1,
        "no trace of process 5 (processes: 4242, 4300)",
    );

    // Traces named one by one: the older run's process too, under a root of its own.
    let (folded, _) = export(&[
        s(&dir.join("app.77.eltrace")),
        s(&main),
        "-f",
        "folded",
        "-o",
        "-",
    ]);
    let roots: BTreeSet<&str> = folded
        .lines()
        .map(|l| l.split(';').next().unwrap())
        .collect();
    assert_eq!(
        roots,
        BTreeSet::from([
            "App.dll_(pid_4242)",
            "App.dll_(pid_77)",
            "csc.dll_(pid_4300)"
        ]),
        "{folded}"
    );

    // The command's own process wrote no trace (a shell ran the .NET programs): its name
    // stands for the process traces beside it (all of them: `session::select` cannot tell
    // which session is meant, so the older run's is removed first).
    std::fs::remove_file(&main).unwrap();
    std::fs::remove_file(dir.join("app.77.eltrace")).unwrap();
    let (_, err) = export(&[s(&main), "-f", "speedscope"]);
    assert!(
        err.contains("app.speedscope.json (speedscope, 7 frames"),
        "{err}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("app.speedscope.json")).unwrap()).unwrap();
    assert_eq!(v["name"], "csc.dll (pid 4300), 4 events dropped");
}

/// Two traces of one pid (from two runs) would show as one process: a warning says so.
#[test]
fn traces_of_one_pid_are_warned_about() {
    let dir = temp_dir("export-same-pid");
    let a = save(&dir, "a.eltrace", &sample_trace(true));
    let b = save(&dir, "b.eltrace", &sample_trace(true));
    let (_, err) = export(&[s(&a), s(&b), "-f", "chrome", "-o", s(&dir.join("x.json"))]);
    assert!(
        err.contains("are both of process 4242: viewers show them as one process"),
        "{err}"
    );
    // --thread that no process has: one warning, not one per process.
    let (_, err) = export(&[
        s(&dir.join("a.eltrace")),
        s(&b),
        "-f",
        "chrome",
        "--thread",
        "5",
        "-o",
        s(&dir.join("y.json")),
    ]);
    assert_eq!(
        err.matches("no process has a thread that --thread selects")
            .count(),
        1,
        "{err}"
    );
}
