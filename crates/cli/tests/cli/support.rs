//! Shared helpers of the `cli` tests: the standard synthetic trace (built with
//! `eltrace_trace::testing`), saved into the target's temp directory, and running the built
//! `eltrace` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use eltrace_trace::EventKind;
use eltrace_trace::testing::{TraceBuilder, app_info};

pub use EventKind::{Enter, Leave, Throw, Unwind};

/// A fresh, empty directory for one test (`name` is unique over the cli tests).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The standard test trace: two threads. Main thread (tid 1001): Main 0..10ms { Work 1..5ms
/// { Leaf 2..3ms }, Work 6..8ms, Boom 8..9ms unwound }. Worker (tid 1002): Loop 0..4ms.
/// Without `end` the trace is cut short before its End record.
pub fn sample_trace(end: bool) -> Vec<u8> {
    const MS: u64 = 1_000_000;
    let b = TraceBuilder::new(app_info())
        .functions([
            ("App.dll", "App.Program", "Main"),
            ("App.dll", "App.Program", "Work"),
            ("Lib.dll", "Lib.Util", "Leaf"),
            ("App.dll", "App.Program", "Boom"),
            ("App.dll", "App.Worker", "Loop"),
        ])
        .named_thread(0, 1001, 1, "Main")
        .named_thread(1, 1002, 2, "Worker")
        .events(
            0,
            &[
                (0, Enter, 0),
                (MS, Enter, 1),
                (2 * MS, Enter, 2),
                (3 * MS, Leave, 2),
                (5 * MS, Leave, 1),
                (6 * MS, Enter, 1),
                (8 * MS, Leave, 1),
            ],
        )
        .events(1, &[(0, Enter, 4), (4 * MS, Leave, 4)])
        .events(
            0,
            &[
                (8 * MS, Enter, 3),
                (8 * MS + 500, Throw, 3),
                (9 * MS, Unwind, 3),
                (10 * MS, Leave, 0),
            ],
        );
    if end { b.end(0) } else { b.cut() }
}

/// The standard trace, complete, with one byte flipped inside its last events chunk (60 bytes
/// before the end; the End chunk is 17): a checksum mismatch, not a truncation.
pub fn corrupt_sample_trace() -> Vec<u8> {
    let mut bytes = sample_trace(true);
    let n = bytes.len();
    bytes[n - 60] ^= 0xFF;
    bytes
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
