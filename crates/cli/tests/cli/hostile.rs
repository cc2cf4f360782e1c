//! Crafted traces (issue 16): table indices the file chooses must not choose the reader's
//! memory. Every reader command runs under an address-space limit and must end with a clear
//! error line or a result, never an abort.
//!
//! ```text
//! FUNCTION idx 4,000,000,000          one chunk, a huge index
//! THREAD   idx 4,000,000,000          (the same for the thread table)
//! FUNCTION idx 2^16, 2^17 … 2^31−1    16 chunks, indices doubling
//! ```

use std::path::Path;
use std::time::Duration;

use crate::limits::run_limited;
use crate::support::*;
use eltrace_trace::testing::{TraceBuilder, app_info};
use eltrace_trace::{
    EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord, TraceWriter,
};

/// The address space a reader command may use on these few-KB traces.
const MEM: u64 = 768 << 20;
const OUT_MAX: u64 = 64 << 20;
const TIME: Duration = Duration::from_secs(20);

fn function(idx: u32, name: &str) -> FunctionRecord {
    FunctionRecord {
        module: "App.dll".into(),
        type_name: "App.P".into(),
        method: name.into(),
        flags: eltrace_trace::FunctionFlags(1),
        ..FunctionRecord::new(FunctionIdx(idx))
    }
}

/// A trace whose functions and threads have the given indices; each thread calls each
/// function once.
fn trace_with(functions: &[u32], threads: &[u32]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = TraceWriter::new(&mut bytes, &app_info()).unwrap();
    for (i, &f) in functions.iter().enumerate() {
        w.write_function(&function(f, &format!("M{i}"))).unwrap();
    }
    for (i, &t) in threads.iter().enumerate() {
        w.write_thread(&ThreadRecord::new(ThreadIdx(t), 100 + i as u64))
            .unwrap();
        let mut ts = 1_000;
        let mut evs = Vec::new();
        for &f in functions {
            for kind in [EventKind::Enter, EventKind::Leave] {
                evs.push(Event {
                    ts,
                    kind,
                    func: FunctionIdx(f),
                    sp: 0x7000,
                });
                ts += 10;
            }
        }
        w.write_events(ThreadIdx(t), &evs).unwrap();
    }
    w.write_end(&EndRecord {
        ts: 1_000_000,
        ..EndRecord::default()
    })
    .unwrap();
    drop(w);
    bytes
}

/// Every reader command, with the trace path last.
fn commands(t: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["dump", t],
        vec!["report", t],
        vec!["report", "--json", t],
        vec!["export", "-f", "folded", t],
        vec!["export", "-f", "chrome", t],
        vec!["export", "-f", "perfetto", t],
        vec!["export", "-f", "speedscope", t],
        vec!["export", "-f", "html", t],
    ]
}

/// Runs every command on `bytes` under the limits; each ends cleanly, and reads the
/// trace (exit 0) unless `may_fail`.
fn survives(dir: &Path, bytes: &[u8]) -> Vec<(String, crate::limits::Outcome)> {
    let p = save(dir, "crafted.eltrace", bytes);
    let t = p.to_str().unwrap();
    let mut all = Vec::new();
    for args in commands(t) {
        let o = run_limited(&args, dir, MEM, OUT_MAX, TIME);
        let shown = args.join(" ");
        assert!(o.clean(), "`eltrace {shown}` did not end cleanly: {o:?}");
        if o.code == Some(1) {
            let lines: Vec<&str> = o.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "`{shown}`: one error line: {}", o.stderr);
            assert!(lines[0].starts_with("eltrace: error:"), "{}", o.stderr);
        }
        all.push((shown, o));
    }
    all
}

#[test]
fn a_huge_function_index() {
    let dir = temp_dir("hostile-function");
    let all = survives(&dir, &trace_with(&[0, 4_000_000_000], &[0]));
    for (cmd, o) in all {
        assert_eq!(o.code, Some(0), "`{cmd}` reads the trace: {}", o.stderr);
    }
}

#[test]
fn a_huge_thread_index() {
    let dir = temp_dir("hostile-thread");
    let all = survives(&dir, &trace_with(&[0, 1], &[0, 4_000_000_000]));
    for (cmd, o) in all {
        assert_eq!(o.code, Some(0), "`{cmd}` reads the trace: {}", o.stderr);
    }
}

#[test]
fn sixteen_doubling_indices() {
    let dir = temp_dir("hostile-doubling");
    let mut idx: Vec<u32> = (16..31).map(|b| 1u32 << b).collect();
    idx.push(i32::MAX as u32);
    assert_eq!(idx.len(), 16);
    let all = survives(&dir, &trace_with(&idx, &idx));
    for (cmd, o) in all {
        assert_eq!(o.code, Some(0), "`{cmd}` reads the trace: {}", o.stderr);
    }
}

#[test]
fn dump_shows_the_sparse_functions_by_name() {
    let dir = temp_dir("hostile-dump");
    let p = save(&dir, "t.eltrace", &trace_with(&[3, 4_000_000_000], &[7]));
    let o = run(&["dump", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("function 4000000000 App.P.M1"), "{out}");
    assert!(out.contains("enter    0x000000007000 App.P.M1"), "{out}");
    assert!(out.contains("    100 "), "the thread's tid: {out}");
}

/// Main → Rec ×`depth` (direct recursion) → Leaf, each Rec 10 ticks of its own.
fn deep_recursion(depth: u32) -> Vec<u8> {
    let mut evs = vec![(0, EventKind::Enter, 0)];
    let mut ts = 0;
    for _ in 0..depth {
        ts += 5;
        evs.push((ts, EventKind::Enter, 1));
    }
    evs.push((ts + 1, EventKind::Enter, 2));
    evs.push((ts + 2, EventKind::Leave, 2));
    ts += 6;
    for _ in 0..depth {
        ts += 5;
        evs.push((ts, EventKind::Leave, 1));
    }
    evs.push((ts + 1, EventKind::Leave, 0));
    TraceBuilder::new(app_info())
        .functions([
            ("App.dll", "App.P", "Main"),
            ("App.dll", "App.P", "Rec"),
            ("App.dll", "App.P", "Leaf"),
        ])
        .thread(0, 1001)
        .events(0, &evs)
        .end(ts + 10)
}

/// The issue's 100,000-deep recursion: folded output collapses the run past 64 frames (a few
/// KB, not 60 GB), keeps every call, and writes every frame with `--fold-recursion 0` only
/// up to the output budget.
#[test]
fn folded_export_of_a_100000_deep_recursion_is_bounded() {
    let dir = temp_dir("hostile-deep");
    let bytes = deep_recursion(100_000);
    let p = save(&dir, "deep.eltrace", &bytes);
    let t = p.to_str().unwrap();
    let calls = run_limited(
        &["export", "-f", "folded", "--value", "calls", "-o", "-", t],
        &dir,
        MEM,
        OUT_MAX,
        TIME,
    );
    assert_eq!(calls.code, Some(0), "{calls:?}");
    let text = std::fs::read_to_string(dir.join("stdout")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let rec64 = vec!["App.P.Rec"; 64].join(";");
    assert_eq!(lines.first(), Some(&"App.P.Main 1"));
    for k in 1..64 {
        let want = format!("App.P.Main;{} 1", vec!["App.P.Rec"; k].join(";"));
        assert_eq!(lines.get(k), Some(&want.as_str()), "line {k}");
    }
    // Main, Rec×1…Rec×63 (one call each), Rec×64 (the rest of the run), Leaf below it.
    assert_eq!(lines.len(), 1 + 64 + 1, "{}", &text[..text.len().min(2000)]);
    assert_eq!(lines[64], format!("App.P.Main;{rec64} {}", 100_000 - 63));
    assert_eq!(lines[65], format!("App.P.Main;{rec64};App.P.Leaf 1"));
    assert!(calls.stdout_bytes < 1 << 20, "{}", calls.stdout_bytes);

    // Every frame: the output budget (64 × the trace, at least 256 MiB) stops it, with one
    // error line and no partial output left.
    let out = dir.join("deep.folded");
    let all = run_limited(
        &[
            "export",
            "-f",
            "folded",
            "--fold-recursion",
            "0",
            "--max-output",
            "8M",
            "-o",
            out.to_str().unwrap(),
            t,
        ],
        &dir,
        MEM,
        OUT_MAX,
        Duration::from_secs(120),
    );
    assert_eq!(all.code, Some(1), "{all:?}");
    assert!(all.stderr.contains("--max-output"), "{}", all.stderr);
    assert_eq!(all.stderr.lines().count(), 1, "{}", all.stderr);
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
