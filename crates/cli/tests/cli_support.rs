//! Shared helpers of the `cli_*` tests: synthetic traces written with `TraceWriter` into the
//! target's temp directory, and running the built `eltrace` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
    TraceInfo, TraceWriter,
};

pub use EventKind::{Enter, Leave, Throw, Unwind};

/// A fresh, empty directory for one test (`name` is unique over the cli tests).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Events of one thread: (thread index, [(ts, kind, function index)]).
pub type Chunk = (u32, Vec<(u64, EventKind, u32)>);

pub fn write_trace(
    funcs: &[(&str, &str, &str)],
    threads: &[(u32, u64, &str)],
    chunks: &[Chunk],
    end: bool,
) -> Vec<u8> {
    let info = TraceInfo {
        runtime: "CoreCLR test".into(),
        command: "dotnet App.dll".into(),
        hook_mode: "slow-path".into(),
        ..TraceInfo::new(4242)
    };
    let mut w = TraceWriter::new(Vec::new(), &info).unwrap();
    for (i, (module, ty, method)) in funcs.iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: (*module).into(),
            type_name: (*ty).into(),
            method: (*method).into(),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    for &(idx, tid, name) in threads {
        w.write_thread(&ThreadRecord {
            managed_id: u64::from(idx) + 1,
            name: name.into(),
            ..ThreadRecord::new(ThreadIdx(idx), tid)
        })
        .unwrap();
    }
    for (t, evs) in chunks {
        let evs: Vec<Event> = evs
            .iter()
            .map(|&(ts, kind, f)| Event {
                ts,
                kind,
                func: FunctionIdx(f),
                sp: 0,
            })
            .collect();
        w.write_events(ThreadIdx(*t), &evs).unwrap();
    }
    if end {
        w.write_end(&EndRecord {
            reason: EndReason::Shutdown,
            ..EndRecord::default()
        })
        .unwrap();
    }
    w.into_inner()
}

/// The standard test trace: two threads. Main thread (tid 1001): Main 0..10ms { Work 1..5ms
/// { Leaf 2..3ms }, Work 6..8ms, Boom 8..9ms unwound }. Worker (tid 1002): Loop 0..4ms.
pub fn sample_trace(end: bool) -> Vec<u8> {
    const MS: u64 = 1_000_000;
    write_trace(
        &[
            ("App.dll", "App.Program", "Main"),
            ("App.dll", "App.Program", "Work"),
            ("Lib.dll", "Lib.Util", "Leaf"),
            ("App.dll", "App.Program", "Boom"),
            ("App.dll", "App.Worker", "Loop"),
        ],
        &[(0, 1001, "Main"), (1, 1002, "Worker")],
        &[
            (
                0,
                vec![
                    (0, Enter, 0),
                    (MS, Enter, 1),
                    (2 * MS, Enter, 2),
                    (3 * MS, Leave, 2),
                    (5 * MS, Leave, 1),
                    (6 * MS, Enter, 1),
                    (8 * MS, Leave, 1),
                ],
            ),
            (1, vec![(0, Enter, 4), (4 * MS, Leave, 4)]),
            (
                0,
                vec![
                    (8 * MS, Enter, 3),
                    (8 * MS + 500, Throw, 3),
                    (9 * MS, Unwind, 3),
                    (10 * MS, Leave, 0),
                ],
            ),
        ],
        end,
    )
}

pub fn save(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

pub fn eltrace() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_eltrace"));
    c.env_remove("ELTRACE_PROFILER_PATH").stdin(Stdio::null());
    c
}

pub fn run(args: &[&str]) -> Output {
    eltrace().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a failure with exit `code` and exactly one `eltrace: error:` line containing `msg`.
pub fn assert_error(o: &Output, code: i32, msg: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {err:?}");
    assert!(lines[0].starts_with("eltrace: error: "), "{err}");
    assert!(lines[0].contains(msg), "{err:?} does not mention {msg:?}");
    assert!(o.stdout.is_empty(), "stdout: {}", stdout(o));
}
