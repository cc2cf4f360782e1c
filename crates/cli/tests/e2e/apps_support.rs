//! Helpers of the real-application tests (the `apps` module): the apps built from copies of
//! tests/apps, `eltrace record` of an app or of the SDK (`dotnet build`, `dotnet test`) with
//! long limits, and the reports of a recorded session, one per process.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::apps::dotnet_command;
use crate::common::processes::{ChildGuard, eltrace, profiler_library, repo_root};
use crate::common::recording::{Hooks, Mode};
use crate::common::report::{Report, string, uint};
use crate::common::runtimes::Runtime;

/// How long a `dotnet build` or `dotnet test` under `record` may take: the SDK's processes
/// all run with the profiler loaded, on a machine that runs other tests at the same time.
pub const SDK_TIMEOUT: Duration = Duration::from_secs(400);

/// Builds a copy of tests/apps/NAME once per test process (in a directory of its own, so two
/// test processes never share an `obj/`), under [`SDK_TIMEOUT`]; returns NAME.dll.
pub fn built(cell: &'static OnceLock<Result<PathBuf, String>>, name: &str) -> &'static Path {
    let built = cell.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("apps-build");
        remove_dead_builds(&root);
        let dir = root.join(format!("{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let project = copy_project(name, &dir);
        let out = dir.join(format!("{name}-out"));
        let mut cmd = dotnet_command();
        cmd.args([
            "build",
            "-c",
            "Release",
            "-nodeReuse:false",
            "-nologo",
            "-o",
        ])
        .arg(&out)
        .arg(&project)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(fs::File::create(dir.join(format!("{name}.build.log"))).map_err(|e| e.to_string())?)
        .stderr(Stdio::null());
        let status = ChildGuard::spawn(&mut cmd).wait(SDK_TIMEOUT, &format!("dotnet build {name}"));
        if !status.success() {
            let log = fs::read_to_string(dir.join(format!("{name}.build.log"))).unwrap_or_default();
            return Err(format!("dotnet build of {name} failed ({status}):\n{log}"));
        }
        Ok(out.join(format!("{name}.dll")))
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Removes the build directories of test processes that are gone (the builds of a live one
/// stay: another test process may be running now).
pub fn remove_dead_builds(root: &Path) {
    for entry in fs::read_dir(root).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

pub fn web_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built(&DLL, "Web")
}

pub fn load_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built(&DLL, "Load")
}

/// `eltrace record` with the mode's arguments (no program yet), output in `dir`.
pub fn record_command(mode: Mode) -> Command {
    profiler_library();
    let mut cmd = Command::new(eltrace());
    cmd.arg("record");
    // The apps run with the SDK's `dotnet` (dotnet build, dotnet test need an SDK): .NET 10.
    assert_eq!(
        mode.runtime,
        Runtime::Net10,
        "the app tests run on the SDK's runtime"
    );
    match mode.hooks {
        Hooks::Fast => {}
        Hooks::Slow => {
            cmd.arg("--slow-path");
        }
        Hooks::FastTrash | Hooks::RecordsTrash => {
            panic!("the app tests run in the fast and the slow mode only")
        }
    }
    // The mode comes from the arguments above, not from the test runner's environment.
    cmd.env_remove("ELTRACE_HOOKS")
        .env_remove("ELTRACE_BUFFER_EVENTS")
        .env_remove("ELTRACE_LOSSY")
        .env_remove("ELTRACE_STREAM");
    cmd
}

/// The function `name` of `module` in a process's report; there must be exactly one.
pub fn function<'a>(r: &'a Report, module: &str, name: &str) -> &'a Value {
    let found: Vec<&Value> = r
        .functions()
        .iter()
        .filter(|f| string(f, "name") == name && string(f, "module") == module)
        .collect();
    match found.as_slice() {
        [one] => one,
        [] => panic!(
            "no function {name:?} of {module} in the report of pid {}; it has {} functions",
            r.trace_uint("pid"),
            r.functions().len()
        ),
        many => panic!("{} entries for {name:?} of {module}", many.len()),
    }
}

pub fn calls(r: &Report, module: &str, name: &str) -> u64 {
    uint(function(r, module, name), "calls")
}

/// Runs `cmd` with stdout and stderr in `<dir>/<label>.std{out,err}`, killed (with its
/// process group) after `timeout`; returns (status, stdout, stderr).
pub fn run_for(
    cmd: &mut Command,
    dir: &Path,
    label: &str,
    timeout: Duration,
) -> (ExitStatus, String, String) {
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    cmd.stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("stdout file"))
        .stderr(fs::File::create(&err_path).expect("stderr file"));
    let status = ChildGuard::spawn(cmd).wait(timeout, label);
    (
        status,
        fs::read_to_string(&out_path).unwrap_or_default(),
        fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

/// `eltrace report --json --top 1000000 <args>` (in `dir`, under [`SDK_TIMEOUT`]), parsed.
pub fn report_json(dir: &Path, label: &str, args: &[&std::ffi::OsStr]) -> Value {
    let mut cmd = Command::new(eltrace());
    cmd.args(["report", "--json", "--top", "1000000"])
        .args(args);
    let (status, stdout, stderr) = run_for(&mut cmd, dir, label, SDK_TIMEOUT);
    assert!(
        status.success(),
        "eltrace report {args:?} failed ({status}):\n{stderr}"
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("eltrace report --json printed no JSON ({e}):\n{stderr}"))
}

/// `key=value` from a line of `key=value` words.
pub fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// Waits until `path` holds a line starting with `prefix`; returns the rest of that line.
pub fn wait_for_line(path: &Path, prefix: &str, timeout: Duration, stderr: &Path) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let text = fs::read_to_string(path).unwrap_or_default();
        if let Some(rest) = text.lines().find_map(|l| l.strip_prefix(prefix)) {
            return rest.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no line {prefix:?} in {} within {timeout:?}; stdout:\n{text}\nstderr:\n{}",
            path.display(),
            fs::read_to_string(stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Copies the project tests/apps/NAME (its files, not `obj/` or `bin/`) into `dest`.
pub fn copy_project(name: &str, dest: &Path) -> PathBuf {
    let src = repo_root().join("tests/apps").join(name);
    let to = dest.join(name);
    fs::create_dir_all(&to).expect("project copy");
    for entry in fs::read_dir(&src).expect("project directory") {
        let entry = entry.expect("directory entry");
        if entry.file_type().expect("file type").is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).expect("copy a project file");
        }
    }
    to
}

/// `eltrace record --include <globs> -o <dir>/<stem>.eltrace -- dotnet <args>` in `dir`, with
/// no build server; returns the status, stdout and stderr.
pub fn record_sdk(
    dir: &Path,
    stem: &str,
    includes: &[&str],
    args: &[&str],
) -> (ExitStatus, String, String) {
    let mut cmd = record_command(Mode::Fast);
    for glob in includes {
        cmd.args(["--include", glob]);
    }
    cmd.arg("-o")
        .arg(dir.join(format!("{stem}.eltrace")))
        .arg("--")
        .arg("dotnet")
        .args(args)
        .current_dir(dir)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .env("MSBUILDDISABLENODEREUSE", "1")
        .env("DOTNET_CLI_USE_MSBUILD_SERVER", "0")
        .env("UseSharedCompilation", "false")
        // `dotnet test`: VSTest kills the test host 100 ms after the session ends unless
        // VSTEST_TESTHOST_SHUTDOWN_TIMEOUT says otherwise; on a loaded machine that SIGKILL came
        // before the host's profiler wrote its END record (a truncated trace). `eltrace record`
        // sets it (60 s) unless the environment does: the test relies on that default.
        .env_remove("VSTEST_TESTHOST_SHUTDOWN_TIMEOUT");
    run_for(&mut cmd, dir, stem, SDK_TIMEOUT)
}

/// The traces of the session `<stem>.eltrace` in `dir`: the file itself and every
/// `<stem>.<pid>.eltrace` beside it.
pub fn session_files(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("trace directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name == format!("{stem}.eltrace")
                || name
                    .strip_prefix(&format!("{stem}."))
                    .and_then(|rest| rest.strip_suffix(".eltrace"))
                    .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    files
}

/// `eltrace report --json` of each trace file alone (`--pid` its own process) and of the
/// whole session; checks that every process's trace reads and is whole. Returns one report
/// per process.
pub fn process_reports(dir: &Path, stem: &str) -> Vec<Report> {
    let files = session_files(dir, stem);
    let session = dir.join(format!("{stem}.eltrace"));
    let json = report_json(dir, &format!("{stem}-report"), &[session.as_os_str()]);
    let processes: Vec<Report> = match json.get("processes").and_then(Value::as_array) {
        Some(all) => all.iter().map(|p| Report { json: p.clone() }).collect(),
        None => vec![Report { json }],
    };
    assert_eq!(
        processes.len(),
        files.len(),
        "the session's processes vs its trace files {files:?}"
    );
    let mut pids: Vec<u64> = processes.iter().map(|r| r.trace_uint("pid")).collect();
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(
        pids.len(),
        processes.len(),
        "one trace per process: {pids:?}"
    );
    for r in &processes {
        let t = r.trace();
        let pid = r.trace_uint("pid");
        let path = string(t, "path");
        // A child's trace is `<stem>.<pid>.eltrace`; the command's own process has `-o`.
        assert!(
            path.ends_with(&format!("{stem}.{pid}.eltrace"))
                || path.ends_with(&format!("{stem}.eltrace")),
            "pid {pid} wrote {path}"
        );
        assert_eq!(
            t.get("truncated").and_then(Value::as_bool),
            Some(false),
            "{t}"
        );
        let end = string(t, "end_reason");
        assert!(
            end == "shutdown" || end == "exit",
            "pid {pid}: end_reason {end:?}"
        );
        for field in [
            "dropped_events",
            "unmatched_leaves",
            "mismatched_frames",
            "lost_frames",
        ] {
            assert_eq!(
                uint(t, field),
                0,
                "pid {pid} ({}): {field}",
                string(t, "command")
            );
        }
        assert_eq!(r.sum_of_thread_events(), uint(t, "events"), "pid {pid}");
    }
    // Each file alone reads too (`--pid` picks its process out of the session).
    for pid in &pids {
        let mut one = Command::new(eltrace());
        one.args(["report", "--pid", &pid.to_string()])
            .arg(&session);
        let (status, _, stderr) =
            run_for(&mut one, dir, &format!("{stem}-report-{pid}"), SDK_TIMEOUT);
        assert!(status.success(), "report --pid {pid} failed:\n{stderr}");
    }
    processes
}
