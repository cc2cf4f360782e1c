//! `eltrace record` of a C# program under test, in each [`Mode`] (hook path and runtime): the
//! [`Recording`] it leaves (trace, exit status, output), and `report --json` and `export` of
//! that trace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use serde_json::Value;

use super::apps::scenarios_dll;
use super::processes::{TempDir, eltrace, profiler_library, run_captured, shell_status};
use super::report::{Report, string};
use super::runtimes::Runtime;

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

/// The hook path a scenario is recorded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hooks {
    /// The default: the fast-path assembly stubs.
    Fast,
    /// `record --slow-path`.
    Slow,
    /// The fast path with `ELTRACE_TEST_TRASH_REGISTERS=1` and `ELTRACE_PRESERVE_RCX=0`: the
    /// stubs overwrite every register the probe contract lets them, RCX included.
    FastTrash,
    /// As `FastTrash`, with raw records instead of streams (`ELTRACE_STREAM=0`): the path the
    /// exact and sampled recordings of the other modes do not take (`--timing none` takes it in
    /// every mode).
    RecordsTrash,
}

/// How a scenario is recorded: the hook path, and the runtime the program runs on. Every e2e
/// test runs in each hook path on each runtime (see [`modes!`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub hooks: Hooks,
    pub runtime: Runtime,
}

// The hook paths on the SDK's runtime (.NET 10), for the tests that run once; named like the
// variants of `Hooks`, as they were when `Mode` had no runtime.
#[allow(non_upper_case_globals)]
impl Mode {
    pub const Fast: Mode = Mode::new(Hooks::Fast, Runtime::Net10);
    pub const Slow: Mode = Mode::new(Hooks::Slow, Runtime::Net10);
    pub const FastTrash: Mode = Mode::new(Hooks::FastTrash, Runtime::Net10);
}

impl Mode {
    pub const fn new(hooks: Hooks, runtime: Runtime) -> Mode {
        Mode { hooks, runtime }
    }

    /// The same hook path on `runtime`.
    pub const fn on(self, runtime: Runtime) -> Mode {
        Mode::new(self.hooks, runtime)
    }

    /// The trace's `hook_mode` in this mode.
    pub fn hook_mode(self) -> &'static str {
        match self.hooks {
            Hooks::Fast => "fast-path",
            Hooks::Slow => "slow-path",
            Hooks::FastTrash | Hooks::RecordsTrash => "fast-path (trash registers)",
        }
    }

    /// Whether the program runs on .NET 11.
    pub fn net11(self) -> bool {
        self.runtime == Runtime::Net11
    }
}

/// Generates a module per test function `f(mode: Mode)` with one `#[test]` per hook path and
/// runtime: `f::fast::net10`, `f::fast::net11`, `f::slow::net10`, … (the tests on a runtime
/// that `ELTRACE_TEST_RUNTIMES` leaves out are ignored, see `common::runtimes`).
///
/// `modes!(net11: #[ignore = "why"]; f, g)` puts the attributes on the .NET 11 tests of `f`
/// and `g` only: for a result that is known to differ there, with the reason.
#[macro_export]
macro_rules! modes {
    (@hooks $name:ident, $module:ident, $hooks:ident, [$(#[$net11:meta])*]) => {
        mod $module {
            use $crate::common::recording::{Hooks, Mode};
            use $crate::common::runtimes::Runtime;
            #[test]
            #[cfg_attr(eltrace_skip_net10, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 10 out")]
            fn net10() {
                super::super::$name(Mode::new(Hooks::$hooks, Runtime::Net10));
            }
            #[test]
            #[cfg_attr(eltrace_skip_net11, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 11 out")]
            $(#[$net11])*
            fn net11() {
                super::super::$name(Mode::new(Hooks::$hooks, Runtime::Net11));
            }
        }
    };
    (@each $net11:tt $($name:ident)*) => {
        $(
            mod $name {
                $crate::modes!(@hooks $name, fast, Fast, $net11);
                $crate::modes!(@hooks $name, slow, Slow, $net11);
                $crate::modes!(@hooks $name, fast_trash, FastTrash, $net11);
                $crate::modes!(@hooks $name, records_trash, RecordsTrash, $net11);
            }
        )*
    };
    (net11: $(#[$net11:meta])*; $($name:ident),* $(,)?) => {
        $crate::modes!(@each [$(#[$net11])*] $($name)*);
    };
    ($($name:ident),* $(,)?) => {
        $crate::modes!(net11: ; $($name),*);
    };
}

/// Runs `eltrace record [record_args] -o <tmp>/x.eltrace -- dotnet Scenarios.dll <scenario>`
/// in `mode` (its hook path, with the `dotnet` and environment of its runtime); checks that the trace says it was recorded in that mode.
pub fn record_in(mode: Mode, scenario: &str, record_args: &[&str]) -> Recording {
    record_app(mode, scenarios_dll(), scenario, record_args, &[])
}

/// Records `scenario` of tests/apps/Scenarios in `mode`: the program must exit 0 and print
/// `<scenario>: all results correct` (a probe that broke a register or a value makes it
/// compute wrong results); returns the recording and its report, whose invariants (balanced
/// stacks, complete trace) are checked.
pub fn record_correct(mode: Mode, scenario: &str, record_args: &[&str]) -> (Recording, Report) {
    record_correct_with(mode, scenario, record_args, &[])
}

/// [`record_correct`] with environment variables for the program (and the profiler in it).
pub fn record_correct_with(
    mode: Mode,
    scenario: &str,
    record_args: &[&str],
    env: &[(&str, &str)],
) -> (Recording, Report) {
    let rec = record_app(mode, scenarios_dll(), scenario, record_args, env);
    assert_eq!(
        rec.exit(),
        0,
        "exit status; stdout:\n{}\nstderr:\n{}",
        rec.stdout,
        rec.stderr
    );
    assert!(
        rec.stdout
            .contains(&format!("{scenario}: all results correct")),
        "stdout: {}",
        rec.stdout
    );
    let r = rec.report();
    r.check_invariants(0, true);
    (rec, r)
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
    record_program(mode, dll, &[scenario], record_args, env)
}

/// [`record_app`] with the program's arguments (`program_args[0]`: the scenario).
pub fn record_program(
    mode: Mode,
    dll: &Path,
    program_args: &[&str],
    record_args: &[&str],
    env: &[(&str, &str)],
) -> Recording {
    let scenario = program_args.first().copied().unwrap_or("app");
    profiler_library();
    let dir = TempDir::new(scenario);
    let trace = dir.path().join("x.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.arg("record");
    match mode.hooks {
        Hooks::Fast => {}
        Hooks::Slow => {
            cmd.arg("--slow-path");
        }
        Hooks::FastTrash | Hooks::RecordsTrash => {
            cmd.env("ELTRACE_TEST_TRASH_REGISTERS", "1")
                .env("ELTRACE_PRESERVE_RCX", "0");
        }
    }
    // The mode comes from the arguments above, not from the test runner's environment.
    cmd.env_remove("ELTRACE_HOOKS");
    if mode.hooks == Hooks::RecordsTrash {
        cmd.env("ELTRACE_STREAM", "0");
    } else {
        cmd.env_remove("ELTRACE_STREAM");
    }
    mode.runtime.apply_env(&mut cmd);
    cmd.envs(env.iter().copied());
    cmd.args(record_args)
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(mode.runtime.dotnet())
        .arg(dll)
        .args(program_args)
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
    // The program ran on the runtime the test is about (not rolled to another one).
    let runtime = string(r.trace(), "runtime");
    assert!(
        runtime.starts_with(&mode.runtime.description_prefix()),
        "the trace's runtime is {runtime:?}, not {}; stderr:\n{}",
        mode.runtime,
        recording.stderr
    );
    recording
}
