//! Hostile outputs of the profiler (issue 28), with the profiling variables set by hand as
//! `eltrace record` sets them (docs/design.md "Process boundary"): whatever is at
//! `ELTRACE_OUTPUT`, the program runs to its end, unprofiled when the output cannot be
//! written, and the profiler says why on stderr.
//!
//! ```text
//! ELTRACE_OUTPUT = a FIFO (swapped in for the reserved file)  → refused, no hang
//! ELTRACE_OUTPUT = an existing directory                      → refused, nothing beside it
//! record -o x, x replaced by a FIFO before dotnet starts      → refused; record: trace lost
//! a file-size limit (ulimit -f) below the trace's size        → the trace stops at the
//!                                                               limit, no SIGXFSZ
//! the trace's I/O stopped for 4 s, --max-stall 300ms          → drops (counted, said)
//!                                                               instead of waits after 300 ms
//! the trace's file system frozen (fsfreeze), --max-stall 500ms → the same, on a real
//!                                                               loop-mounted ext4 (root)
//! the trace's file system full (a 16 MiB loop-mounted ext4)   → the trace stops there (cut
//!                                                               short, said), the program
//!                                                               runs to its end
//! ```

use std::path::Path;
use std::process::Command;

use eltrace_trace::protocol::{self, env};

use crate::common::apps::{dotnet_command, scenarios_dll};
use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured, shell_status};

/// `dotnet Scenarios.dll fib` under the profiler, writing to `output`; with `session`, as
/// the process `eltrace record` started (its parent, this test, is `ELTRACE_PARENT_PID`).
fn fib_profiled(output: &Path, session: Option<&str>) -> Command {
    let mut cmd = dotnet_command();
    cmd.arg(scenarios_dll())
        .arg("fib")
        .env_remove(env::HOOKS)
        .env(env::CORECLR_ENABLE_PROFILING, "1")
        .env(env::CORECLR_PROFILER, protocol::CLSID_BRACED)
        .env(env::CORECLR_PROFILER_PATH, profiler_library())
        .env(env::OUTPUT, output);
    if let Some(s) = session {
        cmd.env(env::SESSION, s)
            .env(env::PARENT_PID, std::process::id().to_string());
    }
    cmd
}

/// `eltrace report --json TRACE`, which must succeed.
fn report_json(trace: &Path) -> serde_json::Value {
    let out = Command::new(eltrace())
        .arg("report")
        .arg("--json")
        .arg(trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every regular `*.eltrace` file under `dir` and its subdirectories.
fn traces_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            found.extend(traces_under(&p));
        } else if p.is_file() && p.extension().is_some_and(|x| x == "eltrace") {
            found.push(p.display().to_string());
        }
    }
    found
}

/// The race of issue 28: `record` reserved the output, and someone replaced it by a FIFO
/// before the profiler opened it. Opening a FIFO for writing waits for a reader for ever;
/// the profiler must refuse it instead, and the program run on.
#[test]
fn a_fifo_at_the_output_is_refused_without_hanging() {
    let dir = TempDir::new("fifo-output");
    let logs = TempDir::new("fifo-output-logs");
    let fifo = dir.path().join("app.eltrace");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo: {made}");
    let mut cmd = fib_profiled(&fifo, Some("fifo-session"));
    // A hang is the failure here: run_captured kills it after its timeout and panics.
    let (status, out, err) = run_captured(&mut cmd, logs.path(), "fib-fifo-hung?");
    assert!(status.success(), "{status}; stderr:\n{err}");
    assert!(out.contains("fib(22) = 17711"), "stdout: {out}");
    let line = err
        .lines()
        .find(|l| l.starts_with("eltrace:") && l.contains("not profiling"))
        .unwrap_or_else(|| panic!("no message from the profiler; stderr:\n{err}"));
    assert!(line.contains("is a FIFO"), "{line}");
    assert!(line.contains(&fifo.display().to_string()), "{line}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .map(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
            .unwrap_or(false),
        "the FIFO is left alone"
    );
    assert_eq!(traces_under(dir.path()), Vec::<String>::new());
}

/// `ELTRACE_OUTPUT` naming an existing directory (set by hand; `record -o DIR` refuses it
/// itself) is an error, not a stem: no `<dir>.<pid>.eltrace` appears beside it.
#[test]
fn a_directory_as_the_output_is_an_error() {
    let dir = TempDir::new("dir-output");
    let logs = TempDir::new("dir-output-logs");
    let out_dir = dir.path().join("traces");
    std::fs::create_dir(&out_dir).unwrap();
    for session in [None, Some("dir-session")] {
        let mut cmd = fib_profiled(&out_dir, session);
        let (status, out, err) = run_captured(&mut cmd, logs.path(), "fib-dir");
        assert!(status.success(), "{status}; stderr:\n{err}");
        assert!(out.contains("fib(22) = 17711"), "stdout: {out}");
        let line = err
            .lines()
            .find(|l| l.starts_with("eltrace:") && l.contains("not profiling"))
            .unwrap_or_else(|| panic!("no message from the profiler ({session:?}):\n{err}"));
        assert!(line.contains("is a directory"), "{line}");
        assert!(line.contains("ELTRACE_OUTPUT"), "{line}");
        assert_eq!(
            traces_under(dir.path()),
            Vec::<String>::new(),
            "{session:?}"
        );
    }
}

/// The whole race through `eltrace record`: the reserved `-o` is replaced by a FIFO before
/// the .NET program (exec'd by the shell `record` started, so it claims `-o`) opens it. The
/// program runs unprofiled to its end, and `record` says the trace is lost and exits 1.
#[test]
fn record_says_a_trace_lost_to_a_fifo_is_lost() {
    profiler_library();
    let dir = TempDir::new("fifo-record");
    let logs = TempDir::new("fifo-record-logs");
    let out = dir.path().join("x.eltrace");
    let script = format!(
        "rm \"$ELTRACE_OUTPUT\" && mkfifo \"$ELTRACE_OUTPUT\" && exec dotnet '{}' fib",
        scenarios_dll().display()
    );
    let mut cmd = Command::new(eltrace());
    cmd.env_remove(env::HOOKS)
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--", "sh", "-c", &script]);
    let (status, stdout, err) = run_captured(&mut cmd, logs.path(), "record-fifo-hung?");
    assert!(stdout.contains("fib(22) = 17711"), "stdout: {stdout}");
    assert_eq!(shell_status(status), 1, "stderr:\n{err}");
    assert!(err.contains("is a FIFO, not a regular file"), "{err}");
    let lost = err
        .lines()
        .find(|l| l.starts_with("eltrace: error: the trace is lost"))
        .unwrap_or_else(|| panic!("record does not say the trace is lost:\n{err}"));
    assert!(lost.contains("replaced by a FIFO"), "{lost}");
    assert!(!err.contains("bad magic"), "{err}");
}

/// At the file-size limit (`RLIMIT_FSIZE`) a write past it raises SIGXFSZ, which killed the
/// program (exit 153; 0 without the profiler). The trace now stops at the limit: the program
/// ends normally, the profiler says why, and the trace reads as cut short.
#[test]
fn a_file_size_limit_ends_the_trace_not_the_program() {
    let dir = TempDir::new("fsize-output");
    let trace = dir.path().join("fib.eltrace");
    // 64 blocks: 32 KiB in dash's 512-byte blocks, 64 KiB in bash's; `Scenarios fib` writes
    // ~400 KB of trace.
    let script = format!(
        "ulimit -f 64 && exec '{}' record -o '{}' -- dotnet '{}' fib",
        eltrace().display(),
        trace.display(),
        scenarios_dll().display()
    );
    let mut cmd = Command::new("sh");
    // The runtime's W^X double mapping sizes a memory file with ftruncate, which so small a
    // limit refuses ("Failed to create CoreCLR, HRESULT: 0x8007000E"); without it the
    // runtime starts, and only the trace meets the limit.
    cmd.arg("-c")
        .arg(&script)
        .env_remove(env::HOOKS)
        .env("DOTNET_EnableWriteXorExecute", "0");
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "fsize");
    assert_eq!(
        status.code(),
        Some(0),
        "the program must end normally (153 = SIGXFSZ):\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("fib("),
        "the program ran to its end: {stdout}"
    );
    assert!(
        stderr.contains("file size limit (RLIMIT_FSIZE"),
        "the profiler says why the trace ends: {stderr}"
    );
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(
        size <= 64 * 1024,
        "the trace stays within the limit: {size} bytes"
    );
    let json = report_json(&trace);
    assert_eq!(
        json["trace"]["truncated"], true,
        "the trace reads as cut short"
    );
}

/// A stalled writer (the trace's file system frozen: here the I/O thread stops 4 s once, 5 MiB
/// into the trace, `ELTRACE_TEST_IO_DELAY_MS`) holds the busy threads at most `--max-stall` in
/// all: then they drop events (counted, marked, said) instead of waiting, and waiting resumes
/// once the writer moves. Before, each wait had its own 10 s clock and nothing was dropped.
#[test]
fn a_stalled_writer_holds_the_program_at_most_max_stall() {
    let dir = TempDir::new("stall-output");
    let trace = dir.path().join("busy.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("record")
        .arg("-o")
        .arg(&trace)
        .args(["--max-stall", "300ms", "--", "dotnet"])
        .arg(scenarios_dll())
        .args(["busy", "4", "1"])
        .env(env::TEST_IO_DELAY_MS, "4000")
        .env_remove(env::HOOKS);
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "stall");
    assert!(
        status.success(),
        "the program ends normally:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("writer-stalled") && stderr.contains("300 ms"),
        "the profiler says the writer stalled: {stderr}"
    );
    let json = report_json(&trace);
    let dropped = json["trace"]["dropped_events"].as_u64().unwrap();
    let events = json["trace"]["events"].as_u64().unwrap();
    assert!(
        dropped > 0,
        "events were dropped during the stall: {}",
        json["trace"]
    );
    assert!(events > 0, "and the rest recorded: {}", json["trace"]);
}

/// A loop-mounted ext4 image of `size` (`truncate -s`) under `dir` (root and loop devices
/// needed), unfrozen and unmounted when dropped, whatever happened.
struct LoopMount {
    mnt: std::path::PathBuf,
}

impl LoopMount {
    fn new(dir: &Path, size: &str) -> LoopMount {
        let img = dir.join("fs.img");
        let mnt = dir.join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let run = |args: &[&str]| {
            let out = Command::new(args[0])
                .args(&args[1..])
                .output()
                .unwrap_or_else(|e| {
                    panic!("{args:?}: {e} (this test needs root, loop devices and e2fsprogs)")
                });
            assert!(
                out.status.success(),
                "{args:?} failed (this test needs root and loop devices): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let (img_s, mnt_s) = (img.to_str().unwrap(), mnt.to_str().unwrap());
        run(&["truncate", "-s", size, img_s]);
        run(&["mkfs.ext4", "-q", "-F", img_s]);
        run(&["mount", "-o", "loop", img_s, mnt_s]);
        LoopMount { mnt }
    }

    fn freeze(&self, on: bool) {
        let status = Command::new("fsfreeze")
            .arg(if on { "-f" } else { "-u" })
            .arg(&self.mnt)
            .status()
            .unwrap();
        assert!(status.success() || !on, "fsfreeze -f failed");
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        self.freeze(false);
        let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
    }
}

/// The issue's case on a real file system: the trace's file system frozen (`fsfreeze`) for
/// 2.5 s while a busy program records. With `--max-stall 500ms` the program is held at most
/// that long in all, then drops (counted, said) until the file system thaws, and ends
/// normally.
#[test]
fn a_frozen_file_system_holds_the_program_at_most_max_stall() {
    let dir = TempDir::new("frozen-output");
    let fs = LoopMount::new(dir.path(), "2G");
    let trace = fs.mnt.join("busy.eltrace");
    let (out_path, err_path) = (
        dir.path().join("frozen.stdout"),
        dir.path().join("frozen.stderr"),
    );
    let mut cmd = Command::new(eltrace());
    cmd.arg("record")
        .arg("-o")
        .arg(&trace)
        .args(["--max-stall", "500ms", "--", "dotnet"])
        .arg(scenarios_dll())
        .args(["busy", "4", "1"])
        .env_remove(env::HOOKS)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap());
    let child = crate::common::processes::ChildGuard::spawn(&mut cmd);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    fs.freeze(true);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    fs.freeze(false);
    let status = child.wait(std::time::Duration::from_secs(120), "frozen");
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(status.success(), "the program ends normally: {stderr}");
    assert!(
        stderr.contains("writer-stalled"),
        "the profiler says the writer stalled: {stderr}"
    );
    let json = report_json(&trace);
    assert!(
        json["trace"]["dropped_events"].as_u64().unwrap() > 0,
        "{}",
        json["trace"]
    );
    assert!(
        json["trace"]["events"].as_u64().unwrap() > 0,
        "{}",
        json["trace"]
    );
    drop(fs);
}

/// Issue 28 point 2: a full disk (a 16 MiB ext4, where a busy program writes far more) ends
/// the trace at its last whole chunk, says so, and leaves the program running to its normal
/// end; `report` reads the trace as cut short.
#[test]
fn a_full_disk_ends_the_trace_not_the_program() {
    let dir = TempDir::new("full-output");
    let fs = LoopMount::new(dir.path(), "16M");
    let trace = fs.mnt.join("busy.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("record")
        .arg("-o")
        .arg(&trace)
        .args(["--", "dotnet"])
        .arg(scenarios_dll())
        .args(["busy", "2", "1"])
        .env_remove(env::HOOKS);
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "full");
    assert!(
        status.success(),
        "the program ends normally:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("the disk is full (ENOSPC)"),
        "the profiler says why the trace ends: {stderr}"
    );
    let json = report_json(&trace);
    assert_eq!(json["trace"]["truncated"], true, "{}", json["trace"]);
    assert!(
        json["trace"]["events"].as_u64().unwrap() > 0,
        "{}",
        json["trace"]
    );
    drop(fs);
}
