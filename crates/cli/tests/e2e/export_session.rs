//! A real recording session of two .NET processes — `eltrace record -- sh -c 'dotnet
//! Scenarios.dll calltree & dotnet Scenarios.dll exceptions; wait'` — exported from its name
//! to one Perfetto trace and loaded in the Perfetto UI: each process under its pid, every
//! frame of both traces a slice at its time on the session's timeline, the exact call counts
//! of each program, no import error. The shell is no .NET process, so it writes no trace: the
//! name given to `record -o` stands for the two process traces beside it.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use eltrace_analysis::{Frame, FrameSink, Options, Tables, ThreadIdx, analyze_with};
use eltrace_export::ProcessMeta;
use eltrace_trace::{Record, TraceInfo, TraceReader};
use serde_json::Value;

use crate::common::apps::scenarios_dll;
use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured};
use crate::viewer_support::perfetto_ui::PerfettoUi;
use crate::viewer_support::viewers;

/// (pid, tid, start ns, duration ns, name).
type Slice = (u64, u64, u64, u64, String);

fn info(trace: &Path) -> TraceInfo {
    let bytes = std::fs::read(trace).unwrap();
    match TraceReader::new(&bytes[..]).unwrap().next_record().unwrap() {
        Some(Record::Info(info)) => info,
        r => panic!("{} starts with {r:?}", trace.display()),
    }
}

/// The analysis' frames of a process's trace as slices, moved by its start on the session's
/// timeline.
fn frames(trace: &Path, process: &ProcessMeta) -> Vec<Slice> {
    struct Collect(Vec<Slice>, u64, u64);
    impl FrameSink for Collect {
        fn frame(&mut self, t: &Tables, thread: ThreadIdx, f: &Frame) -> io::Result<()> {
            let tid = t.threads.os_tid(thread).unwrap();
            let name = t.functions.name(f.func);
            self.0
                .push((self.1, tid, f.start_ns + self.2, f.duration_ns(), name));
            Ok(())
        }
    }
    let bytes = std::fs::read(trace).unwrap();
    let mut c = Collect(Vec::new(), u64::from(process.pid), process.start_ns);
    analyze_with(&bytes[..], &Options::default(), &mut c).unwrap();
    c.0
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Records Scenarios' `calltree` and `exceptions` at once, as two processes under one shell,
/// into `dir`: the session's trace name and each process's trace (by pid), which name one
/// session.
fn record_session(dir: &Path) -> (PathBuf, Vec<(PathBuf, TraceInfo)>) {
    profiler_library();
    let dll = scenarios_dll();
    let trace = dir.join("s.eltrace");
    let script = format!(
        "dotnet '{0}' calltree & dotnet '{0}' exceptions; wait",
        dll.display()
    );
    let mut cmd = Command::new(eltrace());
    cmd.arg("record")
        .arg("-o")
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .current_dir(dir)
        .env_remove("ELTRACE_HOOKS")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1");
    let (status, stdout, stderr) = run_captured(&mut cmd, dir, "record");
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    assert!(stdout.contains("calltree total = 1724"), "{stdout}");
    assert!(stdout.contains("caught=5 cleanups=5"), "{stdout}");

    // The shell wrote no trace; each dotnet process wrote s.<pid>.eltrace.
    assert!(!trace.exists(), "the shell wrote a trace");
    let mut processes: Vec<(PathBuf, TraceInfo)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("s.") && n.ends_with(".eltrace")
        })
        .map(|p| {
            let i = info(&p);
            (p, i)
        })
        .collect();
    processes.sort_by_key(|(_, i)| i.pid);
    assert_eq!(processes.len(), 2, "{processes:?}\n{stderr}");
    let session = |i: &TraceInfo| i.session().map(str::to_owned);
    assert!(session(&processes[0].1).is_some());
    assert_eq!(session(&processes[0].1), session(&processes[1].1));
    (trace, processes)
}

#[test]
fn a_recorded_session_exports_to_one_perfetto_trace() {
    let Some(v) = viewers("a_recorded_session_exports_to_one_perfetto_trace") else {
        return;
    };
    let dir = TempDir::new("export-session");
    let (trace, processes) = record_session(dir.path());

    // Exported from the session's name: one Perfetto trace of both processes.
    let out = dir.path().join("s.pftrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("export").arg(&trace).args(["--format", "perfetto"]);
    let (status, _, stderr) = run_captured(&mut cmd, dir.path(), "export");
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("wrote {} (perfetto, 2 processes, ", out.display())),
        "{stderr}"
    );

    let metas = ProcessMeta::session(processes.iter().map(|(_, i)| i));
    let mut expected: Vec<Slice> = processes
        .iter()
        .zip(&metas)
        .flat_map(|((p, _), m)| frames(p, m))
        .collect();
    expected.sort();
    let mut ui = PerfettoUi::load(&v, "session.pftrace", std::fs::read(&out).unwrap());
    let errors = ui.query(
        "select name, idx, severity, value from stats \
         where (severity = 'error' or severity = 'data_loss') and value > 0",
    );
    assert_eq!(errors, Vec::<Value>::new());
    let mut slices: Vec<Slice> = ui
        .query(
            "select p.pid as pid, t.tid as tid, s.ts as ts, s.dur as dur, s.name as name \
             from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid) \
             join process p using(upid)",
        )
        .iter()
        .map(|r| {
            (
                u(&r["pid"]),
                u(&r["tid"]),
                u(&r["ts"]),
                u(&r["dur"]),
                r["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    slices.sort();
    assert_eq!(slices.len(), expected.len());
    assert_eq!(slices, expected);

    // Each program's own calls, counted in the UI, under its process.
    let mut calls = |pid: u32, name: &str| -> u64 {
        let r = ui.query(&format!(
            "select count(*) as n from slice s join thread_track tt on s.track_id = tt.id \
             join thread t using(utid) join process p using(upid) \
             where p.pid = {pid} and s.name = '{name}'"
        ));
        u(&r[0]["n"])
    };
    let by_scenario: BTreeMap<&str, u32> = processes
        .iter()
        .map(|(_, i)| {
            let scenario = if i.command.ends_with("calltree") {
                "calltree"
            } else {
                "exceptions"
            };
            (scenario, i.pid)
        })
        .collect();
    let (calltree, exceptions) = (by_scenario["calltree"], by_scenario["exceptions"]);
    assert_ne!(calltree, exceptions);
    assert_eq!(calls(calltree, "Scenarios.Alpha.Step"), 10);
    assert_eq!(calls(calltree, "Scenarios.Outer+Inner.Leaf"), 17);
    assert_eq!(calls(calltree, "Scenarios.Thrower.Level1"), 0);
    assert_eq!(calls(exceptions, "Scenarios.Thrower.Level1"), 5);
    assert_eq!(calls(exceptions, "Scenarios.Filter.Raise"), 6);
    assert_eq!(calls(exceptions, "Scenarios.Alpha.Step"), 0);
    let names = ui.query(&format!(
        "select pid, name from process where pid in ({calltree}, {exceptions}) order by pid"
    ));
    for r in &names {
        assert_eq!(r["name"], "Scenarios.dll", "{names:?}");
    }
    assert_eq!(names.len(), 2);
    ui.browser.screenshot("perfetto-ui-recorded-session");
    assert_eq!(
        ui.browser.problems_except(&["127.0.0.1:9001"]),
        Vec::<String>::new()
    );
}
