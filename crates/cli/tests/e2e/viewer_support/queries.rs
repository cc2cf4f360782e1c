//! What the viewer tests of the `viewers` module ask of files and viewers: exports made with the CLI,
//! the analysis' own frames of a trace as slices (what a viewer should show), and the Perfetto
//! UI's trace_processor queried for slices, flows, threads and import errors.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use eltrace_analysis::{Frame, FrameSink, Options, Tables, ThreadIdx, analyze_with};
use serde_json::Value;

use super::artifacts;
use super::perfetto_ui::PerfettoUi;

/// Exports `trace` with the CLI to the format's default name under `dir`; returns the file
/// and its bytes.
pub fn export_with(dir: &Path, trace: &[u8], format: &str, extra: &[&str]) -> (PathBuf, Vec<u8>) {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("t.eltrace");
    std::fs::write(&p, trace).unwrap();
    export_file(&p, format, extra)
}

pub fn export_file(trace: &Path, format: &str, extra: &[&str]) -> (PathBuf, Vec<u8>) {
    let o = Command::new(env!("CARGO_BIN_EXE_eltrace"))
        .args(["export", trace.to_str().unwrap(), "--format", format])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let path = err
        .split("wrote ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no output named in: {err}"));
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

pub fn dir(name: &str) -> PathBuf {
    let d = artifacts().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A slice as a viewer should show it: (tid, start ns, duration ns, name).
pub type Slice = (u64, u64, u64, String);

/// The analysis' frames of `trace` as slices, sorted.
pub fn frames(trace: &[u8]) -> Vec<Slice> {
    struct Collect(Vec<Slice>);
    impl FrameSink for Collect {
        fn frame(&mut self, t: &Tables, thread: ThreadIdx, f: &Frame) -> io::Result<()> {
            let tid = t.threads.os_tid(thread).unwrap();
            self.0
                .push((tid, f.start_ns, f.duration_ns(), t.functions.name(f.func)));
            Ok(())
        }
    }
    let mut c = Collect(Vec::new());
    analyze_with(trace, &Options::default(), &mut c).unwrap();
    c.0.sort();
    c.0
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn s(v: &Value) -> String {
    v.as_str().unwrap_or("").to_owned()
}

/// The slices on thread tracks (instants left out), sorted.
pub fn ui_slices(ui: &mut PerfettoUi) -> Vec<Slice> {
    let mut out: Vec<Slice> = ui
        .query(
            "select t.tid as tid, s.ts as ts, s.dur as dur, s.name as name from slice s \
             join thread_track tt on s.track_id = tt.id join thread t using(utid) \
             where s.name != 'events dropped'",
        )
        .iter()
        .map(|r| (u(&r["tid"]), u(&r["ts"]), u(&r["dur"]), s(&r["name"])))
        .collect();
    out.sort();
    out
}

/// trace_processor's import problems: stats of severity error or data loss.
pub fn import_errors(ui: &mut PerfettoUi) -> Vec<Value> {
    ui.query(
        "select name, idx, severity, value from stats \
         where (severity = 'error' or severity = 'data_loss') and value > 0",
    )
}

/// Flow arrows as (from name, from ts, to name, to ts), sorted.
pub fn ui_flows(ui: &mut PerfettoUi) -> Vec<(String, u64, String, u64)> {
    let mut f: Vec<_> = ui
        .query(
            "select so.name as a, so.ts as ats, si.name as b, si.ts as bts from flow f \
             join slice so on f.slice_out = so.id join slice si on f.slice_in = si.id",
        )
        .iter()
        .map(|r| (s(&r["a"]), u(&r["ats"]), s(&r["b"]), u(&r["bts"])))
        .collect();
    f.sort();
    f
}

pub fn ui_threads(ui: &mut PerfettoUi) -> Vec<(u64, String, String)> {
    let mut t: Vec<_> = ui
        .query(
            "select t.tid as tid, t.name as name, p.name as process from thread t \
             join process p using(upid) where p.pid = 4242 or t.tid != 0",
        )
        .iter()
        .map(|r| (u(&r["tid"]), s(&r["name"]), s(&r["process"])))
        .collect();
    t.sort();
    t
}

/// Sums of slice counts by name.
pub fn counts(slices: &[Slice]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for s in slices {
        *m.entry(s.3.clone()).or_default() += 1;
    }
    m
}
