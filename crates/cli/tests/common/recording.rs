//! `eltrace record` of a C# program under test, in each hook [`Mode`]: the [`Recording`] it
//! leaves (trace, exit status, output), and `report --json` and `export` of that trace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use serde_json::Value;

use super::apps::scenarios_dll;
use super::processes::{TempDir, eltrace, profiler_library, run_captured, shell_status};
use super::report::{Report, string};

/// One `eltrace record` of a scenario.
pub struct Recording {
    pub dir: TempDir,
    pub trace: PathBuf,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Recording {
    /// The exit status as a shell would show it.
    pub fn exit(&self) -> i32 {
        shell_status(self.status)
    }

    /// `eltrace report --json` of the trace, parsed.
    pub fn report(&self) -> Report {
        self.report_with(&[])
    }

    /// `eltrace report --json <extra args>` of the trace, parsed.
    pub fn report_with(&self, extra: &[&str]) -> Report {
        let mut cmd = Command::new(eltrace());
        cmd.arg("report").arg("--json").args(extra).arg(&self.trace);
        let (status, stdout, stderr) = run_captured(&mut cmd, self.dir.path(), "report");
        assert!(
            status.success(),
            "eltrace report --json {} failed ({status}):\n{stderr}",
            self.trace.display()
        );
        let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("eltrace report --json printed no JSON ({e}):\n{stdout}\n{stderr}")
        });
        Report { json }
    }

    /// `eltrace export <trace> --format <format> -o <file>`; returns the file's text.
    pub fn export(&self, format: &str) -> String {
        self.export_with(format, &[])
    }

    /// `eltrace export <trace> --format <format> <extra args> -o <file>`; returns the text.
    pub fn export_with(&self, format: &str, extra: &[&str]) -> String {
        let out = self
            .dir
            .path()
            .join(format!("export-{format}-{}", extra.join("-")));
        let mut cmd = Command::new(eltrace());
        cmd.arg("export")
            .arg(&self.trace)
            .arg("--format")
            .arg(format)
            .args(extra)
            .arg("-o")
            .arg(&out);
        let (status, stdout, stderr) = run_captured(&mut cmd, self.dir.path(), "export");
        assert!(
            status.success(),
            "eltrace export --format {format} failed ({status}):\n{stdout}\n{stderr}"
        );
        fs::read_to_string(&out)
            .unwrap_or_else(|e| panic!("export wrote no {}: {e}", out.display()))
    }
}

/// How a scenario is recorded. Every e2e test runs in each mode (see [`modes!`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The default: the fast-path assembly stubs.
    Fast,
    /// `record --slow-path`.
    Slow,
    /// The fast path with `ELTRACE_TEST_TRASH_REGISTERS=1` and `ELTRACE_PRESERVE_RCX=0`: the
    /// stubs overwrite every register the probe contract lets them, RCX included.
    FastTrash,
}

impl Mode {
    /// The trace's `hook_mode` in this mode.
    pub fn hook_mode(self) -> &'static str {
        match self {
            Mode::Fast => "fast-path",
            Mode::Slow => "slow-path",
            Mode::FastTrash => "fast-path (trash registers)",
        }
    }
}

/// Generates a module per test function `f(mode: Mode)` with one `#[test]` per [`Mode`].
#[macro_export]
macro_rules! modes {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn fast() {
                    super::$name($crate::common::recording::Mode::Fast);
                }
                #[test]
                fn slow() {
                    super::$name($crate::common::recording::Mode::Slow);
                }
                #[test]
                fn fast_trash() {
                    super::$name($crate::common::recording::Mode::FastTrash);
                }
            }
        )*
    };
}

/// Runs `eltrace record [record_args] -o <tmp>/x.eltrace -- dotnet Scenarios.dll <scenario>`
/// in `mode`; checks that the trace says it was recorded in that mode.
pub fn record_in(mode: Mode, scenario: &str, record_args: &[&str]) -> Recording {
    record_app(mode, scenarios_dll(), scenario, record_args, &[])
}

/// Records `dotnet DLL scenario` in `mode` with extra `eltrace record` arguments and
/// environment variables for the program.
pub fn record_app(
    mode: Mode,
    dll: &Path,
    scenario: &str,
    record_args: &[&str],
    env: &[(&str, &str)],
) -> Recording {
    profiler_library();
    let dir = TempDir::new(scenario);
    let trace = dir.path().join("x.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("record");
    match mode {
        Mode::Fast => {}
        Mode::Slow => {
            cmd.arg("--slow-path");
        }
        Mode::FastTrash => {
            cmd.env("ELTRACE_TEST_TRASH_REGISTERS", "1")
                .env("ELTRACE_PRESERVE_RCX", "0");
        }
    }
    // The mode comes from the arguments above, not from the test runner's environment.
    cmd.env_remove("ELTRACE_HOOKS");
    cmd.envs(env.iter().copied());
    cmd.args(record_args)
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("dotnet")
        .arg(dll)
        .arg(scenario)
        .current_dir(dir.path())
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        // Core dumps of the `unhandled` scenario would only fill the disk.
        .env_remove("DOTNET_DbgEnableMiniDump");
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "record");
    assert!(
        trace.is_file(),
        "eltrace record wrote no trace at {} ({status}); stderr:\n{stderr}",
        trace.display()
    );
    let recording = Recording {
        dir,
        trace,
        status,
        stdout,
        stderr,
    };
    let r = recording.report();
    assert_eq!(
        string(r.trace(), "hook_mode"),
        mode.hook_mode(),
        "the trace was not recorded in {mode:?} mode; stderr:\n{}",
        recording.stderr
    );
    recording
}
