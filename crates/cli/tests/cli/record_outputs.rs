//! Two `eltrace record`s on one `-o` (issue 16), and the messages of a run: the second of two
//! at once refuses to start and leaves the first's trace whole; run one after the other, the
//! second replaces the first and says so. A `--include` that matched nothing is warned about.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::*;

fn record_args<'a>(lib: &'a str, out: &'a str, script: &'a str) -> Vec<&'a str> {
    vec![
        "record",
        "--profiler",
        lib,
        "-o",
        out,
        "--",
        "sh",
        "-c",
        script,
    ]
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_second_record_on_the_same_output() {
    let dir = temp_dir("rec-twice");
    let lib = save(&dir, "libeltrace_profiler.so", b"not really a library");
    let lib = lib.to_str().unwrap();
    let prepared = save(&dir, "prepared.bin", &sample_trace(true));
    let out = dir.join("t.eltrace");
    let o = out.to_str().unwrap();
    let gate = dir.join("gate");
    // The first writes its trace once the second has tried.
    let first_script = format!(
        "while [ ! -e '{g}' ]; do sleep 0.05; done; cp '{p}' \"$ELTRACE_OUTPUT\"",
        g = gate.display(),
        p = prepared.display()
    );
    let first = eltrace()
        .args(record_args(lib, o, &first_script))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&out);
    let second = run(&record_args(lib, o, "echo second > \"$ELTRACE_OUTPUT\""));
    assert_error(&second, 1, "is being written by another eltrace record");
    std::fs::write(&gate, b"").unwrap();
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        sample_trace(true),
        "the first trace is whole"
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&out).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    // One after the other: the second replaces the first, and says so.
    let again = run(&record_args(
        lib,
        o,
        &format!("cp '{}' \"$ELTRACE_OUTPUT\"", prepared.display()),
    ));
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(
        err.contains("replac"),
        "says that it replaced the old trace: {err}"
    );
}

#[test]
fn an_include_that_matched_nothing_is_warned_about() {
    let dir = temp_dir("rec-unmatched");
    let lib = save(&dir, "libeltrace_profiler.so", b"not really a library");
    let prepared = save(&dir, "prepared.bin", &sample_trace(true));
    let out = dir.join("t.eltrace");
    let script = format!("cp '{}' \"$ELTRACE_OUTPUT\"", prepared.display());
    let o = run(&[
        "record",
        "--profiler",
        lib.to_str().unwrap(),
        "--include",
        "Nope.*",
        "--include",
        "App!App.Program.*",
        "--exclude",
        "Lib!*",
        "--exclude",
        "Missing!*",
        "-o",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: --include 'Nope.*' matched none of the 5 functions"),
        "{err}"
    );
    assert!(
        err.contains("warning: --exclude 'Missing!*' matched none"),
        "{err}"
    );
    assert!(!err.contains("'App!App.Program.*' matched"), "{err}");
    assert!(!err.contains("'Lib!*' matched"), "{err}");

    // A glob that is not UTF-8 is refused before anything runs.
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"App\xff*");
    let o = eltrace()
        .arg("record")
        .arg("--include")
        .arg(bad)
        .args(["-o", out.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_error(&o, 2, "UTF-8");
}

/// Issue 28: the reserved output replaced while the program runs (a symlink raced in, a
/// FIFO the profiler refuses, the file removed): the trace is lost, and `record` says so
/// and exits non-zero (the program's status when that is not 0) instead of reading what is
/// there now. What was swapped in is left alone.
#[test]
fn a_trace_lost_to_a_swapped_output_is_an_error() {
    let dir = temp_dir("rec-swapped");
    let lib = save(&dir, "libeltrace_profiler.so", b"not really a library");
    let lib = lib.to_str().unwrap();
    let elsewhere = save(&dir, "elsewhere", b"someone else's file");
    let out = dir.join("t.eltrace");
    let o = out.to_str().unwrap();
    let swaps = [
        (
            format!(
                "rm \"$ELTRACE_OUTPUT\"; ln -s '{}' \"$ELTRACE_OUTPUT\"",
                elsewhere.display()
            ),
            "a symlink",
            1,
        ),
        (
            "rm \"$ELTRACE_OUTPUT\"; mkfifo \"$ELTRACE_OUTPUT\"".to_owned(),
            "a FIFO",
            1,
        ),
        ("rm \"$ELTRACE_OUTPUT\"; exit 3".to_owned(), "removed", 3),
    ];
    for (script, what, code) in swaps {
        let r = run(&record_args(lib, o, &script));
        let err = stderr(&r);
        assert_eq!(r.status.code(), Some(code), "{script}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        let line = err
            .lines()
            .find(|l| l.starts_with("eltrace: error: "))
            .unwrap_or_else(|| panic!("{script}: no error line: {err}"));
        assert!(line.contains("trace is lost"), "{line}");
        assert!(line.contains(what), "{what}: {line}");
        assert!(line.contains(o), "{line}");
        assert!(!err.contains("bad magic"), "{err}");
        assert!(!err.contains("trace written to"), "{err}");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"someone else's file");
        if what == "a FIFO" {
            let t = std::fs::symlink_metadata(&out).unwrap().file_type();
            assert!(std::os::unix::fs::FileTypeExt::is_fifo(&t), "left alone");
        }
        let _ = std::fs::remove_file(&out);
    }
}
