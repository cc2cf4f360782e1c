//! Tests of the end-to-end tests' own machinery (the `common` module): a process that
//! hangs is killed with its whole process group when its timeout passes, and exit statuses
//! are reported as a shell reports them.

use std::panic::AssertUnwindSafe;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::processes::{ChildGuard, TempDir, shell_status};

/// Whether the process `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let dir = TempDir::new("guard");
    let pidfile = dir.path().join("grandchild.pid");
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "sleep 60 & echo $! > '{}'; wait",
        pidfile.display()
    ));
    let guard = ChildGuard::spawn(&mut cmd);
    let started = Instant::now();
    while !pidfile.is_file() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "sh did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let grandchild: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!gone(grandchild), "the grandchild runs before the timeout");

    let waited = std::panic::catch_unwind(AssertUnwindSafe(|| {
        guard.wait(Duration::from_millis(300), "sh -c 'sleep 60 & wait'")
    }));
    assert!(waited.is_err(), "wait returned although the child hangs");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(grandchild) {
        assert!(
            Instant::now() < deadline,
            "grandchild {grandchild} survived the kill"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn shell_status_reports_codes_and_signals() {
    let status = |script: &str| {
        let guard = ChildGuard::spawn(Command::new("sh").arg("-c").arg(script));
        shell_status(guard.wait(Duration::from_secs(10), script))
    };
    assert_eq!(status("exit 0"), 0);
    assert_eq!(status("exit 42"), 42);
    assert_eq!(status("kill -ABRT $$"), 134);
}
