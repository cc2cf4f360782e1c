//! Signals sent to `eltrace record` (issue 28), as `perf record`, `time` and `strace` treat
//! them: SIGTERM and SIGHUP are passed on to the program, `record` waits for it, prints its
//! summary and exits with the program's status; a SIGINT is passed on too, and a second one
//! stops the wait. The program is the `signals` scenario (tests/apps/Scenarios/Signals.cs),
//! which handles the signals and says which it got. The signals are sent to `record` alone
//! (`kill PID`), as a supervisor or a user in another terminal sends them.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::apps::scenarios_dll;
use crate::common::processes::{
    ChildGuard, TIMEOUT, TempDir, eltrace, profiler_library, shell_status,
};

/// `eltrace record -o DIR/x.eltrace -- dotnet Scenarios.dll signals`, its output in files.
struct Run {
    guard: ChildGuard,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Run {
    fn start(dir: &Path) -> Run {
        profiler_library();
        let (stdout, stderr) = (dir.join("record.stdout"), dir.join("record.stderr"));
        let mut cmd = Command::new(eltrace());
        cmd.env_remove("ELTRACE_HOOKS")
            .arg("record")
            .arg("-o")
            .arg(dir.join("x.eltrace"))
            .arg("--")
            .arg("dotnet")
            .arg(scenarios_dll())
            .arg("signals")
            .current_dir(dir)
            .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
            .env("DOTNET_NOLOGO", "1")
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap());
        Run {
            guard: ChildGuard::spawn(&mut cmd),
            stdout,
            stderr,
        }
    }

    fn out(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    fn err(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits until the program has printed `line` (a guard against a hang, not a timing).
    fn wait_for(&self, line: &str) {
        let start = Instant::now();
        while !self.out().lines().any(|l| l == line) {
            assert!(
                start.elapsed() < TIMEOUT,
                "the program never printed {line:?}; stdout:\n{}\nstderr:\n{}",
                self.out(),
                self.err()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `sig` (`TERM`, `HUP`, `INT`) to `eltrace record` alone.
    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.guard.id().to_string())
            .status()
            .unwrap();
        assert!(ok.success(), "kill -{sig}");
    }
}

#[test]
fn sigterm_and_sighup_are_passed_on_and_waited_for() {
    for (sig, code) in [("TERM", 115), ("HUP", 101)] {
        let dir = TempDir::new(&format!("signal-{sig}"));
        let run = Run::start(dir.path());
        run.wait_for("signals: ready");
        run.signal(sig);
        let (stdout, stderr) = (run.stdout.clone(), run.stderr.clone());
        let status = run.guard.wait(TIMEOUT, &format!("record after SIG{sig}"));
        let out = std::fs::read_to_string(stdout).unwrap();
        let err = std::fs::read_to_string(stderr).unwrap();
        assert!(
            out.lines().any(|l| l == format!("signals: got SIG{sig}")),
            "the program got SIG{sig}: stdout:\n{out}\nstderr:\n{err}"
        );
        assert_eq!(
            shell_status(status),
            code,
            "record exits with the program's status; stderr:\n{err}"
        );
        assert!(
            err.contains(&format!("eltrace: SIG{sig} passed on to the program")),
            "{err}"
        );
        assert!(
            err.contains("eltrace: trace written to"),
            "the summary: {err}"
        );
        assert!(err.contains(" 0 dropped events"), "{err}");
        let report = Command::new(eltrace())
            .args(["report", "--json"])
            .arg(dir.path().join("x.eltrace"))
            .output()
            .unwrap();
        assert!(report.status.success());
        let json = String::from_utf8_lossy(&report.stdout);
        assert!(
            json.contains("Scenarios.SignalsScenario.Received"),
            "{json}"
        );
    }
}

#[test]
fn a_second_sigint_stops_the_wait() {
    let dir = TempDir::new("signal-INT");
    let run = Run::start(dir.path());
    run.wait_for("signals: ready");
    run.signal("INT");
    // The program handles SIGINT and runs on; record waits for it.
    run.wait_for("signals: got SIGINT");
    run.signal("INT");
    let group = run.guard.id();
    let (stdout, stderr) = (run.stdout.clone(), run.stderr.clone());
    let status = run.guard.wait(TIMEOUT, "record after a second SIGINT");
    let out = std::fs::read_to_string(stdout).unwrap();
    let err = std::fs::read_to_string(stderr).unwrap();
    // The program is left running (in record's process group): end it.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    assert_eq!(shell_status(status), 130, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains("eltrace: interrupted: waiting for the program"),
        "{err}"
    );
    assert!(err.contains("eltrace: interrupted again"), "{err}");
    assert!(err.contains("still runs"), "{err}");
    assert!(!out.contains("signals: none"), "{out}");
}
