//! `eltrace record` without a .NET runtime: the profiler library lookup, the child's
//! environment, exit codes, and the summary of a trace the child leaves behind.
//! (Recording real dotnet programs is tested by the e2e tests.)

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::*;

/// A stand-in file for the profiler library (nothing loads it without a .NET runtime).
fn fake_profiler(dir: &std::path::Path) -> PathBuf {
    save(dir, "libeltrace_profiler.so", b"not really a library")
}

/// `eltrace record --profiler LIB -o OUT -- sh -c SCRIPT`.
fn record_sh(lib: &Path, out: &Path, script: &str) -> std::process::Output {
    run(&[
        "record",
        "--profiler",
        lib.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        script,
    ])
}

#[test]
fn nonexistent_command_exits_127() {
    let dir = temp_dir("rec127");
    let lib = fake_profiler(&dir);
    let o = run(&[
        "record",
        "--profiler",
        lib.to_str().unwrap(),
        "--",
        "/no/such/program",
        "x",
    ]);
    assert_error(&o, 127, "command not found: /no/such/program");
    let o = run(&[
        "record",
        "--profiler",
        lib.to_str().unwrap(),
        "--",
        "no-such-program-eltrace",
    ]);
    assert_error(&o, 127, "no-such-program-eltrace");
}

#[test]
fn missing_profiler_library() {
    let o = run(&[
        "record",
        "--profiler",
        "/nonexistent/libeltrace_profiler.so",
        "--",
        "true",
    ]);
    assert_error(&o, 1, "/nonexistent/libeltrace_profiler.so");
    let o = eltrace()
        .env("ELTRACE_PROFILER_PATH", "/nonexistent/lib.so")
        .args(["record", "--", "true"])
        .output()
        .unwrap();
    assert_error(&o, 1, "ELTRACE_PROFILER_PATH");
}

#[test]
fn child_environment_and_exit_code() {
    let dir = temp_dir("recenv");
    let lib = fake_profiler(&dir);
    let out = dir.join("out.eltrace");
    // A stale trace is removed first.
    std::fs::write(&out, b"stale").unwrap();
    let script = "echo $CORECLR_ENABLE_PROFILING; echo $CORECLR_PROFILER; echo $CORECLR_PROFILER_PATH; \
                  echo $ELTRACE_OUTPUT; echo \"$ELTRACE_INCLUDE\"; echo \"$ELTRACE_EXCLUDE\"; exit 3";
    let o = eltrace()
        .current_dir(&dir)
        .args([
            "record",
            "--profiler",
            lib.to_str().unwrap(),
            "-o",
            "out.eltrace",
            "--include",
            "App!*",
            "--include",
            "*.Run",
            "--exclude",
            "*.get_*",
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(
        lines,
        [
            "1",
            "{7E6BA1DA-44E6-4198-B4E0-A9BCE1DE926B}",
            lib.to_str().unwrap(),
            out.to_str().unwrap(),
            "App!*;*.Run",
            "*.get_*",
        ]
    );
    assert!(!out.exists());
    let err = stderr(&o);
    assert!(err.contains("no trace was written"), "{err}");
    assert!(!err.contains("panicked"));
    // The variables are for the child only.
    assert!(std::env::var_os("CORECLR_ENABLE_PROFILING").is_none());
}

#[test]
fn summary_of_the_trace_the_child_wrote() {
    let dir = temp_dir("recsum");
    let lib = fake_profiler(&dir);
    let prepared = save(&dir, "prepared.bin", &sample_trace(true));
    let out = dir.join("t.eltrace");
    let o = record_sh(
        &lib,
        &out,
        &format!("cp '{}' \"$ELTRACE_OUTPUT\"", prepared.display()),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("trace written to {}", out.display())),
        "{err}"
    );
    assert!(
        err.contains("13 events, 0 functions probed, 2 threads, 0 dropped events, 0 waits"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // A truncated one says so.
    let bytes = sample_trace(false);
    let prepared = save(&dir, "cut.bin", &bytes);
    let o = record_sh(
        &lib,
        &out,
        &format!("cp '{}' \"$ELTRACE_OUTPUT\"; exit 1", prepared.display()),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
}

#[test]
fn signals_and_stdio_pass_through() {
    let dir = temp_dir("recsig");
    let lib = fake_profiler(&dir);
    let out = dir.join("t.eltrace");
    let o = record_sh(&lib, &out, "kill -9 $$");
    assert_eq!(o.status.code(), Some(137));
    assert!(stderr(&o).contains("killed by signal 9"), "{}", stderr(&o));

    let mut child = eltrace()
        .args([
            "record",
            "--profiler",
            lib.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--",
            "cat",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello through\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert_eq!(stdout(&o), "hello through\n");
}

#[test]
fn output_directory_must_exist() {
    let dir = temp_dir("recdir");
    let lib = fake_profiler(&dir);
    let o = run(&[
        "record",
        "--profiler",
        lib.to_str().unwrap(),
        "-o",
        "/nonexistent/dir/t.eltrace",
        "--",
        "true",
    ]);
    assert_error(&o, 1, "does not exist");
}

#[test]
fn tail_call_loops_are_off_for_the_child_unless_kept() {
    let dir = temp_dir("rectail");
    let lib = fake_profiler(&dir);
    let out = dir.join("t.eltrace");
    let script = "echo \"[$DOTNET_TailCallLoopOpt]\"";
    let child_sees = |extra: &[&str], env: &[(&str, &str)]| {
        let mut cmd = eltrace();
        cmd.env_remove("DOTNET_TailCallLoopOpt")
            .env_remove("COMPlus_TailCallLoopOpt")
            .envs(env.iter().copied())
            .arg("record")
            .args(extra)
            .args([
                "--profiler",
                lib.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .args(["--", "sh", "-c", script]);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).trim().to_owned()
    };
    assert_eq!(child_sees(&[], &[]), "[0]");
    assert_eq!(child_sees(&["--keep-tail-loops"], &[]), "[]");
    // The user's own setting stands, under either prefix.
    assert_eq!(child_sees(&[], &[("DOTNET_TailCallLoopOpt", "1")]), "[1]");
    assert_eq!(child_sees(&[], &[("COMPlus_TailCallLoopOpt", "1")]), "[]");
}
