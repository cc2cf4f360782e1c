//! Helpers for the end-to-end tests: building the C# scenario program once, running
//! `eltrace record` on it under a timeout, reading `eltrace report --json` and the exports,
//! and the checks that every recording must pass whatever it ran.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one scenario (or one build) may take before it is killed and the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The module of every function of the scenario program.
pub const MODULE: &str = "Scenarios.dll";

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The `eltrace` binary under test.
pub fn eltrace() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_eltrace"))
}

/// The profiler library that `eltrace record` loads: it must lie beside the binary.
pub fn profiler_library() -> PathBuf {
    let lib = eltrace()
        .parent()
        .expect("eltrace has a directory")
        .join("libeltrace_profiler.so");
    assert!(
        lib.is_file(),
        "{} is missing: run `cargo build --workspace` first (cargo test builds only the \
         eltrace binary, not the profiler cdylib beside it)",
        lib.display()
    );
    lib
}

/// A directory removed (with its contents) when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("e2e")
            .join(format!("{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("ELTRACE_E2E_KEEP").is_none() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A child process started in its own process group; the whole group is killed when the
/// guard is dropped (a test that fails or times out leaves no `dotnet` behind).
pub struct ChildGuard {
    child: Option<Child>,
}

impl ChildGuard {
    pub fn spawn(cmd: &mut Command) -> ChildGuard {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        ChildGuard { child: Some(child) }
    }

    /// Waits for the child; kills its process group and panics after `timeout`.
    pub fn wait(mut self, timeout: Duration, what: &str) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut().expect("child");
        loop {
            match child.try_wait().expect("wait for child") {
                Some(status) => {
                    self.child = None;
                    return status;
                }
                None if Instant::now() >= deadline => {
                    kill_group(child);
                    // Reaped: the drop must not signal a process group id that may be reused.
                    self.child = None;
                    panic!("{what} did not finish within {timeout:?}; killed it");
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

fn kill_group(child: &mut Child) {
    // The group id is the child's pid (process_group(0)); `kill -KILL -- -PGID` ends the
    // group: eltrace and the dotnet process it started.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            kill_group(child);
        }
    }
}

/// The exit status as a shell reports it: the exit code, or 128 + the signal that ended it.
pub fn shell_status(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .expect("exit code or signal")
}

/// Runs a command with stdout and stderr sent to files in `dir`, under [`TIMEOUT`].
/// Returns (status, stdout, stderr).
pub fn run_captured(cmd: &mut Command, dir: &Path, label: &str) -> (ExitStatus, String, String) {
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    cmd.stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"));
    let status = ChildGuard::spawn(cmd).wait(TIMEOUT, label);
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    (status, stdout, stderr)
}

/// Environment for `dotnet`: quiet, and no build servers left running after a build.
pub fn dotnet_command() -> Command {
    let mut cmd = Command::new("dotnet");
    cmd.env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .env("MSBUILDDISABLENODEREUSE", "1")
        .env("DOTNET_CLI_USE_MSBUILD_SERVER", "0")
        .env("UseSharedCompilation", "false");
    cmd
}

/// Builds tests/apps/Scenarios once per test run; returns the path of Scenarios.dll.
pub fn scenarios_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Scenarios")
}

/// Builds tests/apps/Async (runtime-async on) once per test run; returns Async.dll.
pub fn async_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Async")
}

/// Builds tests/apps/NAME once (per `cell`); returns the path of NAME.dll.
fn app_dll(cell: &'static OnceLock<Result<PathBuf, String>>, name: &str) -> &'static Path {
    let built = cell.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dotnet/{name}"));
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet");
        fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        let project = repo_root().join(format!("tests/apps/{name}"));
        let mut cmd = dotnet_command();
        cmd.arg("build")
            .arg("-c")
            .arg("Release")
            .arg("-nodeReuse:false")
            .arg("-o")
            .arg(&out)
            .arg(&project);
        let (status, stdout, stderr) = run_captured(&mut cmd, &logs, "dotnet-build");
        if !status.success() {
            return Err(format!(
                "dotnet build of {} failed ({status}):\n{stdout}\n{stderr}",
                project.display()
            ));
        }
        Ok(out.join(format!("{name}.dll")))
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Builds tests/apps/Probes once per test run; returns the path of Probes.dll.
pub fn probes_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = DLL.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet/Probes");
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet");
        fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        let project = repo_root().join("tests/apps/Probes");
        let mut cmd = dotnet_command();
        cmd.arg("build")
            .arg("-c")
            .arg("Release")
            .arg("-nodeReuse:false")
            .arg("-o")
            .arg(&out)
            .arg(&project);
        let (status, stdout, stderr) = run_captured(&mut cmd, &logs, "dotnet-build-probes");
        if !status.success() {
            return Err(format!(
                "dotnet build of {} failed ({status}):\n{stdout}\n{stderr}",
                project.display()
            ));
        }
        Ok(out.join("Probes.dll"))
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

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
                    super::$name($crate::common::Mode::Fast);
                }
                #[test]
                fn slow() {
                    super::$name($crate::common::Mode::Slow);
                }
                #[test]
                fn fast_trash() {
                    super::$name($crate::common::Mode::FastTrash);
                }
            }
        )*
    };
}

/// Runs `eltrace record [record_args] -o <tmp>/x.eltrace -- dotnet Scenarios.dll <scenario>`
/// in the default (fast) mode.
pub fn record(scenario: &str) -> Recording {
    record_in(Mode::Fast, scenario, &[])
}

/// Like [`record`], with extra arguments for `eltrace record` (before `--`).
pub fn record_with(scenario: &str, record_args: &[&str]) -> Recording {
    record_in(Mode::Fast, scenario, record_args)
}

/// Records `scenario` in `mode` with extra `eltrace record` arguments; checks that the trace
/// says it was recorded in that mode.
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

/// The parsed output of `eltrace report --json`.
pub struct Report {
    pub json: Value,
}

/// Reads a non-negative integer field, failing the test with the field's name otherwise.
pub fn uint(v: &Value, field: &str) -> u64 {
    v.get(field)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("field {field:?} is not a non-negative integer in {v}"))
}

pub fn string<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("field {field:?} is not a string in {v}"))
}

impl Report {
    pub fn trace(&self) -> &Value {
        self.json.get("trace").expect("report has \"trace\"")
    }

    pub fn trace_uint(&self, field: &str) -> u64 {
        uint(self.trace(), field)
    }

    pub fn functions(&self) -> &[Value] {
        self.json
            .get("functions")
            .and_then(Value::as_array)
            .expect("report has a \"functions\" array")
    }

    pub fn threads(&self) -> &[Value] {
        self.json
            .get("threads")
            .and_then(Value::as_array)
            .expect("report has a \"threads\" array")
    }

    pub fn edges(&self) -> &[Value] {
        self.json
            .get("edges")
            .and_then(Value::as_array)
            .expect("report has an \"edges\" array")
    }

    /// The entry of the function `name` in Scenarios.dll; there must be exactly one.
    pub fn function(&self, name: &str) -> &Value {
        let found: Vec<&Value> = self
            .functions()
            .iter()
            .filter(|f| string(f, "name") == name && string(f, "module") == MODULE)
            .collect();
        match found.as_slice() {
            [one] => one,
            [] => panic!(
                "no function {name:?} of {MODULE} in the report; it has: {:?}",
                self.names()
            ),
            many => panic!(
                "{} entries for {name:?} of {MODULE} (one expected): {many:?}",
                many.len()
            ),
        }
    }

    /// Whether the report lists `name` (in any module).
    pub fn has_function(&self, name: &str) -> bool {
        self.functions().iter().any(|f| string(f, "name") == name)
    }

    pub fn calls(&self, name: &str) -> u64 {
        uint(self.function(name), "calls")
    }

    /// The names of every listed function.
    pub fn names(&self) -> BTreeSet<String> {
        self.functions()
            .iter()
            .map(|f| string(f, "name").to_string())
            .collect()
    }

    /// The calls of the edge caller → callee (caller "" for roots); 0 if there is none.
    pub fn edge_calls(&self, caller: &str, callee: &str) -> u64 {
        let found: Vec<&Value> = self
            .edges()
            .iter()
            .filter(|e| string(e, "caller") == caller && string(e, "callee") == callee)
            .collect();
        assert!(found.len() <= 1, "edge {caller} -> {callee} listed twice");
        found.first().map_or(0, |e| uint(e, "calls"))
    }

    /// The root edges (caller "") as callee → calls.
    pub fn roots(&self) -> BTreeMap<String, u64> {
        self.edges()
            .iter()
            .filter(|e| string(e, "caller").is_empty())
            .map(|e| (string(e, "callee").to_string(), uint(e, "calls")))
            .collect()
    }

    /// Every edge whose callee is `callee`, as (caller, calls).
    pub fn callers_of(&self, callee: &str) -> BTreeMap<String, u64> {
        self.edges()
            .iter()
            .filter(|e| string(e, "callee") == callee)
            .map(|e| (string(e, "caller").to_string(), uint(e, "calls")))
            .collect()
    }

    /// The threads named `name`; there must be exactly one.
    pub fn thread(&self, name: &str) -> &Value {
        let found: Vec<&Value> = self
            .threads()
            .iter()
            .filter(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .collect();
        match found.as_slice() {
            [one] => one,
            _ => panic!(
                "{} threads named {name:?} (one expected); threads: {}",
                found.len(),
                Value::from(self.threads().to_vec())
            ),
        }
    }

    /// The threads that have events (ran selected code).
    pub fn active_threads(&self) -> Vec<&Value> {
        self.threads()
            .iter()
            .filter(|t| uint(t, "events") > 0)
            .collect()
    }

    /// The sum of the threads' events.
    pub fn sum_of_thread_events(&self) -> u64 {
        self.threads().iter().map(|t| uint(t, "events")).sum()
    }

    /// The checks every recording must pass, whatever it ran (`open_expected` frames may be
    /// open at the end; `complete`: the trace must have its end record).
    pub fn check_invariants(&self, open_expected: u64, complete: bool) {
        let t = self.trace();
        assert_eq!(
            self.trace_uint("dropped_events"),
            0,
            "events were dropped: {t}"
        );
        assert_eq!(
            self.trace_uint("mismatched_frames"),
            0,
            "mismatched frames: {t}"
        );
        assert_eq!(
            self.trace_uint("unmatched_leaves"),
            0,
            "unmatched leaves: {t}"
        );
        if complete {
            assert_eq!(
                t.get("truncated").and_then(Value::as_bool),
                Some(false),
                "the trace is truncated: {t}"
            );
        }
        assert_eq!(
            self.trace_uint("open_frames_at_end"),
            open_expected,
            "open frames at end: {t}"
        );

        // Per function: inclusive >= exclusive >= 0, and open_at_end adds up.
        let mut open_sum = 0;
        for f in self.functions() {
            // Frames: `calls` counts logical calls of async methods, `segments` their frames.
            let calls = uint(f, "segments");
            let inclusive = uint(f, "inclusive_ns");
            let exclusive = uint(f, "exclusive_ns");
            assert!(calls > 0, "a listed function has no calls: {f}");
            assert!(
                inclusive >= exclusive,
                "inclusive < exclusive for {}: {f}",
                string(f, "name")
            );
            assert!(
                uint(f, "open_at_end") <= calls,
                "more open frames than calls: {f}"
            );
            assert!(
                uint(f, "unwound") <= calls,
                "more unwound frames than calls: {f}"
            );
            open_sum += uint(f, "open_at_end");
        }
        assert_eq!(
            open_sum, open_expected,
            "functions' open_at_end do not add up"
        );
        let thread_open: u64 = self
            .threads()
            .iter()
            .map(|th| uint(th, "open_frames_at_end"))
            .sum();
        assert_eq!(
            thread_open, open_expected,
            "threads' open frames do not add up"
        );
        assert_eq!(
            self.sum_of_thread_events(),
            self.trace_uint("events"),
            "threads' events do not add up to the trace's"
        );

        self.check_edges();
    }

    /// Edges agree with the functions: every function's calls are the sum of its incoming
    /// edges' calls, and (for functions not in a cycle through other functions) a caller's
    /// inclusive time is at least the sum of its callees' inclusive times.
    fn check_edges(&self) {
        let mut by_name: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for f in self.functions() {
            let e = by_name.entry(string(f, "name")).or_default();
            e.0 += uint(f, "segments");
            e.1 += uint(f, "inclusive_ns");
        }
        let mut incoming: BTreeMap<&str, u64> = BTreeMap::new();
        let mut outgoing: BTreeMap<&str, u64> = BTreeMap::new();
        let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in self.edges() {
            let caller = string(e, "caller");
            let callee = string(e, "callee");
            assert!(uint(e, "calls") > 0, "an edge without calls: {e}");
            *incoming.entry(callee).or_default() += uint(e, "calls");
            if !caller.is_empty() {
                *outgoing.entry(caller).or_default() += uint(e, "inclusive_ns");
                if caller != callee {
                    graph.entry(caller).or_default().insert(callee);
                }
                assert!(by_name.contains_key(caller), "edge from unknown {caller:?}");
            }
            assert!(by_name.contains_key(callee), "edge to unknown {callee:?}");
        }
        for (name, (calls, _)) in &by_name {
            assert_eq!(
                incoming.get(name).copied().unwrap_or(0),
                *calls,
                "the edges into {name} do not add up to its segments (frames)"
            );
        }
        for (caller, callees_ns) in &outgoing {
            if in_cycle(&graph, caller) {
                continue;
            }
            let inclusive = by_name[caller].1;
            assert!(
                inclusive >= *callees_ns,
                "{caller}: inclusive {inclusive} ns < its callees' {callees_ns} ns"
            );
        }
    }
}

/// Whether `start` reaches itself through at least one other function.
fn in_cycle(graph: &BTreeMap<&str, BTreeSet<&str>>, start: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = graph.get(start).into_iter().flatten().copied().collect();
    while let Some(n) = todo.pop() {
        if n == start {
            return true;
        }
        if seen.insert(n) {
            todo.extend(graph.get(n).into_iter().flatten().copied());
        }
    }
    false
}

/// Checks a Chrome trace export: valid JSON; one `thread_name` metadata event per thread
/// that has complete (`X`) events; on every thread the X events nest properly. Returns the
/// X events per name and the thread names.
pub fn check_chrome(text: &str) -> ChromeSummary {
    let json: Value = serde_json::from_str(text).expect("the Chrome export is valid JSON");
    let events = match &json {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .expect("a Chrome trace object has traceEvents")
            .clone(),
        _ => panic!("a Chrome trace is an array or an object"),
    };
    let key = |e: &Value| {
        (
            e.get("pid").and_then(Value::as_u64).unwrap_or(0),
            e.get("tid")
                .and_then(Value::as_u64)
                .expect("event has a tid"),
        )
    };
    let mut names: BTreeMap<(u64, u64), Vec<String>> = BTreeMap::new();
    let mut spans: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut x_by_name: BTreeMap<String, u64> = BTreeMap::new();
    for e in &events {
        match e.get("ph").and_then(Value::as_str) {
            Some("M") if e.get("name").and_then(Value::as_str) == Some("thread_name") => {
                let name = e
                    .pointer("/args/name")
                    .and_then(Value::as_str)
                    .expect("thread_name has args.name");
                names.entry(key(e)).or_default().push(name.to_string());
            }
            Some("X") => {
                let ts = e.get("ts").and_then(Value::as_f64).expect("X has ts");
                let dur = e.get("dur").and_then(Value::as_f64).expect("X has dur");
                assert!(dur >= 0.0, "negative duration: {e}");
                spans.entry(key(e)).or_default().push((ts, ts + dur));
                *x_by_name.entry(string(e, "name").to_string()).or_default() += 1;
            }
            _ => {}
        }
    }
    for (thread, list) in &names {
        assert_eq!(
            list.len(),
            1,
            "thread {thread:?} has {} thread_name events",
            list.len()
        );
    }
    // Timestamps are in µs; allow for their rounding to the ns.
    const EPS: f64 = 0.0015;
    for (thread, list) in spans.iter_mut() {
        assert!(
            names.contains_key(thread),
            "thread {thread:?} has X events but no thread_name"
        );
        // Sort by start, longer first; a span must end within the innermost span that is
        // still open when it starts.
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<(f64, f64)> = Vec::new();
        for &(start, end) in list.iter() {
            while stack
                .last()
                .is_some_and(|&(_, top_end)| top_end <= start + EPS)
            {
                stack.pop();
            }
            if let Some(&(top_start, top_end)) = stack.last() {
                assert!(
                    end <= top_end + EPS,
                    "thread {thread:?}: span [{start}, {end}] overlaps [{top_start}, {top_end}]"
                );
            }
            stack.push((start, end));
        }
    }
    ChromeSummary {
        thread_names: names.into_values().flatten().collect(),
        x_by_name,
    }
}

/// What [`check_chrome`] found.
pub struct ChromeSummary {
    pub thread_names: Vec<String>,
    pub x_by_name: BTreeMap<String, u64>,
}

/// Checks a folded-stacks export: every line is `frame;frame;… N` with N an integer, and no
/// stack is listed twice. Returns the stacks as (frames, N).
pub fn check_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    let stacks = parse_folded(text);
    let mut seen = BTreeSet::new();
    for (frames, _) in &stacks {
        assert!(
            seen.insert(frames.clone()),
            "stack listed twice: {frames:?}"
        );
    }
    stacks
}

fn parse_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    assert!(!text.trim().is_empty(), "the folded export is empty");
    text.lines()
        .map(|line| {
            let (stack, n) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("folded line without a count: {line:?}"));
            let n: u64 = n
                .parse()
                .unwrap_or_else(|_| panic!("folded line's count is not a number: {line:?}"));
            let frames: Vec<String> = stack.split(';').map(str::to_string).collect();
            assert!(
                frames.iter().all(|f| !f.is_empty()),
                "folded line with an empty frame: {line:?}"
            );
            (frames, n)
        })
        .collect()
}
