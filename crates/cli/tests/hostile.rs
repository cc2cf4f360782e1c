//! Crafted traces (issue 16): table indices the file chooses must not choose the reader's
//! memory. Every reader command runs under an address-space limit and must end with a clear
//! error line or a result, never an abort.
//!
//! ```text
//! FUNCTION idx 4,000,000,000          one chunk, a huge index
//! THREAD   idx 4,000,000,000          (the same for the thread table)
//! FUNCTION idx 2^16, 2^17 … 2^31−1    16 chunks, indices doubling
//! ```

mod cli_support;
mod limits;

use std::path::Path;
use std::time::Duration;

use cli_support::*;
use eltrace_trace::testing::app_info;
use eltrace_trace::{
    EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord, TraceWriter,
};
use limits::run_limited;

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
fn survives(dir: &Path, bytes: &[u8]) -> Vec<(String, limits::Outcome)> {
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
