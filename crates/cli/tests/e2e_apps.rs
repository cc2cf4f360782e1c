//! End-to-end tests on real applications (issue #12, item 5), built during the test run from
//! the sources in tests/apps with no NuGet packages beyond the SDK's and the offline folder
//! /opt/nuget/packages:
//!
//! - the ASP.NET Core minimal API tests/apps/Web, recorded with ASP.NET Core selected and
//!   driven by the load client tests/apps/Load (a fixed number of requests over 16
//!   connections): the endpoint handler's calls equal the requests the client counted as
//!   answered, exactly, with no event dropped and balanced stacks, fast and slow path;
//! - `eltrace record -- dotnet build` of tests/apps/BuildSample: one readable trace per .NET
//!   process (the CLI with MSBuild, the C# compiler), and the compiler's holds Roslyn's
//!   compile methods;
//! - `eltrace record -- dotnet test` of tests/apps/XunitSample: the test host's trace counts
//!   each `[Fact]` once and the `[Theory]` once per case.
//!
//! Every project is copied into a directory of its own before it is built (Web and Load once
//! per test process, the others per test), so no two builds share an `obj/` or `bin/`; no
//! build server is left running (node reuse off, no MSBuild server, no shared compilation).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::apps::dotnet_command;
use common::processes::{ChildGuard, TempDir, eltrace, profiler_library, repo_root, run_captured};
use common::recording::{Mode, Recording};
use common::report::{Report, string, uint};

/// How long a `dotnet build` or `dotnet test` under `record` may take: the SDK's processes
/// all run with the profiler loaded, on a machine that runs other tests at the same time.
const SDK_TIMEOUT: Duration = Duration::from_secs(400);

/// Requests the load client sends to the web app, over [`CONNECTIONS`] keep-alive connections.
/// With ASP.NET Core selected a request makes about 1,200 events (Kestrel, routing, hosting),
/// so 2,000 requests record about 2.4 M events: enough to fill the rings, small enough that
/// the debug build's `report` reads them in seconds.
const REQUESTS: u64 = 2_000;
const CONNECTIONS: u64 = 16;

/// Ring capacity (events per thread) for the web test: small, so that the busy threads'
/// hooks really wait for the writer (the lossless path) instead of the default 2 MiB rings
/// absorbing the whole run.
const WEB_RING_EVENTS: &str = "4096";

/// Builds a copy of tests/apps/NAME once per test process (in a directory of its own, so two
/// test processes never share an `obj/`), under [`SDK_TIMEOUT`]; returns NAME.dll.
fn built(cell: &'static OnceLock<Result<PathBuf, String>>, name: &str) -> &'static Path {
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
fn remove_dead_builds(root: &Path) {
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

fn web_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built(&DLL, "Web")
}

fn load_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built(&DLL, "Load")
}

#[test]
fn web_under_load_fast() {
    web_under_load(Mode::Fast);
}

#[test]
fn web_under_load_slow() {
    web_under_load(Mode::Slow);
}

/// `eltrace record` with the mode's arguments (no program yet), output in `dir`.
fn record_command(mode: Mode) -> Command {
    profiler_library();
    let mut cmd = Command::new(eltrace());
    cmd.arg("record");
    match mode {
        Mode::Fast => {}
        Mode::Slow => {
            cmd.arg("--slow-path");
        }
        Mode::FastTrash => panic!("the app tests run in the fast and the slow mode only"),
    }
    // The mode comes from the arguments above, not from the test runner's environment.
    cmd.env_remove("ELTRACE_HOOKS")
        .env_remove("ELTRACE_BUFFER_EVENTS")
        .env_remove("ELTRACE_LOSSY");
    cmd
}

/// The function `name` of `module` in a process's report; there must be exactly one.
fn function<'a>(r: &'a Report, module: &str, name: &str) -> &'a Value {
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

fn calls(r: &Report, module: &str, name: &str) -> u64 {
    uint(function(r, module, name), "calls")
}

/// `key=value` from a line of `key=value` words.
fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// Waits until `path` holds a line starting with `prefix`; returns the rest of that line.
fn wait_for_line(path: &Path, prefix: &str, timeout: Duration, stderr: &Path) -> String {
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

/// Records the web app with ASP.NET Core selected, sends it [`REQUESTS`] requests over
/// [`CONNECTIONS`] connections, stops it with POST /shutdown, and checks the handler's calls
/// against the requests answered.
fn web_under_load(mode: Mode) {
    let web = web_dll();
    let load = load_dll();
    let dir = TempDir::new(&format!("web-{mode:?}"));
    let trace = dir.path().join("web.eltrace");
    let out = dir.path().join("record.stdout");
    let err = dir.path().join("record.stderr");

    let mut cmd = record_command(mode);
    // The app's own code (Web.dll, the default selection's) and all of ASP.NET Core, so that
    // a request runs through about 1,200 probed frames on pool threads: Kestrel's connection
    // and request loops (async state machines), hosting, routing, the endpoint.
    cmd.args(["--include", "Web!*", "--include", "Microsoft.AspNetCore*!*"])
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("dotnet")
        .arg(web)
        .current_dir(dir.path())
        .env("ELTRACE_BUFFER_EVENTS", WEB_RING_EVENTS)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("stdout file"))
        .stderr(fs::File::create(&err).expect("stderr file"));
    let server = ChildGuard::spawn(&mut cmd);
    let url = wait_for_line(&out, "listening=", common::processes::TIMEOUT, &err);

    let mut client = dotnet_command();
    client
        .arg(load)
        .arg(format!("{url}/"))
        .args(["--requests", &REQUESTS.to_string()])
        .args(["--connections", &CONNECTIONS.to_string()])
        .args(["--expect", "Hello, World!"])
        .arg("--shutdown")
        .arg(format!("{url}/shutdown"));
    let (load_status, load_out, load_err) = run_captured(&mut client, dir.path(), "load");
    let status = server.wait(common::processes::TIMEOUT, "eltrace record of the web app");
    let rec = Recording {
        trace,
        status,
        stdout: fs::read_to_string(&out).unwrap_or_default(),
        stderr: fs::read_to_string(&err).unwrap_or_default(),
        dir,
    };
    assert!(
        load_status.success(),
        "the load client failed ({load_status}):\n{load_out}\n{load_err}\nserver:\n{}",
        rec.stderr
    );
    assert_eq!(rec.exit(), 0, "web app exit; stderr:\n{}", rec.stderr);

    let answered = field(&load_out, "answered").expect("answered= in the client's output");
    assert_eq!(field(&load_out, "failed"), Some(0), "client: {load_out}");
    assert_eq!(answered, REQUESTS, "client: {load_out}");
    assert_eq!(
        field(&load_out, "connections"),
        Some(CONNECTIONS),
        "client: {load_out}"
    );
    // The app counted its own handler runs (Interlocked), independently of the profiler.
    let stopped = rec
        .stdout
        .lines()
        .find(|l| l.starts_with("stopped "))
        .unwrap_or_else(|| panic!("no `stopped` line from the app:\n{}", rec.stdout));
    assert_eq!(field(stopped, "hello"), Some(answered), "app: {stopped}");
    assert_eq!(field(stopped, "shutdown"), Some(1), "app: {stopped}");

    let r = rec.report_with(&["--top", "1000000"]);
    assert_eq!(string(r.trace(), "hook_mode"), mode.hook_mode());
    // No drop, no unmatched Leave, no mismatched or open frame, not truncated; every
    // function's calls are its incoming edges' calls.
    r.check_invariants(0, true);
    assert_eq!(r.trace_uint("lost_frames"), 0, "lost frames: {}", r.trace());
    let end = string(r.trace(), "end_reason");
    assert!(end == "shutdown" || end == "exit", "end_reason {end:?}");

    let hello = calls(&r, "Web.dll", "WebApp.Endpoints.Hello");
    assert_eq!(hello, answered, "Hello's calls vs the requests answered");
    assert_eq!(calls(&r, "Web.dll", "WebApp.Endpoints.Shutdown"), 1);
    assert!(
        !r.has_function("WebApp.Endpoints.Fib"),
        "nobody asked for /fib"
    );
    // Every request (the answered ones and the POST /shutdown) made one hosting context.
    let hosting = "Microsoft.AspNetCore.Hosting.dll";
    assert_eq!(
        calls(
            &r,
            hosting,
            "Microsoft.AspNetCore.Hosting.HostingApplication.CreateContext"
        ),
        answered + 1
    );
    assert_eq!(
        calls(
            &r,
            hosting,
            "Microsoft.AspNetCore.Hosting.HostingApplication.ProcessRequestAsync"
        ),
        answered + 1
    );
    let t = r.trace();
    eprintln!(
        "web {mode:?}: {answered} requests answered ({}), Hello {hello} calls, {} events, \
         {} dropped, {} waits ({} ms waited), {} threads",
        load_out.trim(),
        uint(t, "events"),
        uint(t, "dropped_events"),
        uint(t, "waits"),
        uint(t, "wait_ns") / 1_000_000,
        uint(t, "threads"),
    );
}

/// Copies the project tests/apps/NAME (its files, not `obj/` or `bin/`) into `dest`.
fn copy_project(name: &str, dest: &Path) -> PathBuf {
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
fn record_sdk(
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
        .env("UseSharedCompilation", "false");
    let out_path = dir.join(format!("{stem}.stdout"));
    let err_path = dir.join(format!("{stem}.stderr"));
    cmd.stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("stdout file"))
        .stderr(fs::File::create(&err_path).expect("stderr file"));
    let status = ChildGuard::spawn(&mut cmd).wait(SDK_TIMEOUT, &format!("record {args:?}"));
    (
        status,
        fs::read_to_string(&out_path).unwrap_or_default(),
        fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

/// The traces of the session `<stem>.eltrace` in `dir`: the file itself and every
/// `<stem>.<pid>.eltrace` beside it.
fn session_files(dir: &Path, stem: &str) -> Vec<PathBuf> {
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
fn process_reports(dir: &Path, stem: &str) -> Vec<Report> {
    let files = session_files(dir, stem);
    let session = dir.join(format!("{stem}.eltrace"));
    let mut cmd = Command::new(eltrace());
    cmd.args(["report", "--json", "--top", "1000000"])
        .arg(&session);
    let (status, stdout, stderr) = run_captured(&mut cmd, dir, &format!("{stem}-report"));
    assert!(status.success(), "report of the session failed:\n{stderr}");
    let json: Value = serde_json::from_str(&stdout).expect("report --json prints JSON");
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
        let (status, _, stderr) = run_captured(&mut one, dir, &format!("{stem}-report-{pid}"));
        assert!(status.success(), "report --pid {pid} failed:\n{stderr}");
    }
    processes
}

#[test]
fn dotnet_build_writes_one_readable_trace_per_process() {
    let dir = TempDir::new("dotnet-build");
    let project = copy_project("BuildSample", dir.path());
    let project = project.to_str().expect("UTF-8 path");
    // Roslyn's compile pipeline: CSharpCompilation, MethodCompiler, TypeCompilationState…
    let (status, stdout, stderr) = record_sdk(
        dir.path(),
        "build",
        &["Microsoft.CodeAnalysis.CSharp.*Compil*"],
        &[
            "build",
            project,
            "-c",
            "Release",
            "-nodeReuse:false",
            "-nologo",
        ],
    );
    assert!(
        status.success(),
        "dotnet build under record failed ({status}):\n{stdout}\n{stderr}"
    );
    assert!(
        Path::new(project)
            .join("bin/Release/net10.0/BuildSample.dll")
            .is_file(),
        "the build made no BuildSample.dll:\n{stdout}"
    );

    let processes = process_reports(dir.path(), "build");
    assert!(
        processes.len() >= 2,
        "the CLI and the compiler at least: {stderr}"
    );
    let compilers: Vec<&Report> = processes
        .iter()
        .filter(|r| string(r.trace(), "command").contains("/Roslyn/bincore/csc"))
        .collect();
    assert_eq!(compilers.len(), 1, "one compiler process:\n{stderr}");
    let csc = compilers[0];
    let roslyn = "Microsoft.CodeAnalysis.CSharp.dll";
    // One compilation: one MethodCompiler pass over it, which compiles every method.
    assert_eq!(
        calls(
            csc,
            roslyn,
            "Microsoft.CodeAnalysis.CSharp.MethodCompiler.CompileMethodBodies"
        ),
        1
    );
    assert!(
        calls(
            csc,
            roslyn,
            "Microsoft.CodeAnalysis.CSharp.CSharpCompilation.Create"
        ) >= 1
    );
    assert!(
        calls(
            csc,
            roslyn,
            "Microsoft.CodeAnalysis.CSharp.MethodCompiler.CompileMethod"
        ) >= 10
    );
    csc.check_invariants(0, true);
    eprintln!(
        "dotnet build: {} processes; compiler pid {}: {} events, {} functions called",
        processes.len(),
        csc.trace_uint("pid"),
        csc.trace_uint("events"),
        csc.functions().len()
    );
}

#[test]
fn dotnet_test_counts_facts_once_and_theory_cases() {
    let dir = TempDir::new("dotnet-test");
    let project = copy_project("XunitSample", dir.path());
    let project = project.to_str().expect("UTF-8 path");
    let (status, stdout, stderr) = record_sdk(
        dir.path(),
        "test",
        &["XunitSample!*"],
        &[
            "test",
            project,
            "-c",
            "Release",
            "-nodeReuse:false",
            "-nologo",
        ],
    );
    assert!(
        status.success(),
        "dotnet test under record failed ({status}):\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("Passed:     7"),
        "seven tests passed:\n{stdout}"
    );

    let processes = process_reports(dir.path(), "test");
    let hosts: Vec<&Report> = processes
        .iter()
        .filter(|r| string(r.trace(), "command").contains("testhost.dll"))
        .collect();
    assert_eq!(hosts.len(), 1, "one test host:\n{stderr}");
    let host = hosts[0];
    host.check_invariants(0, true);
    let module = "XunitSample.dll";
    let class = "XunitSample.ArithmeticTests";
    for fact in [
        "Fact_Addition_IsCommutative",
        "Fact_Multiplication_ByZero_IsZero",
        "Fact_Factorial_OfFive_Is120",
    ] {
        assert_eq!(calls(host, module, &format!("{class}.{fact}")), 1, "{fact}");
    }
    // Four [InlineData] cases.
    assert_eq!(
        calls(
            host,
            module,
            &format!("{class}.Theory_IsEven_MatchesModulo")
        ),
        4
    );
    // xunit makes one instance of the class per test (case).
    assert_eq!(calls(host, module, &format!("{class}..ctor")), 7);
    let calc = "XunitSample.Calculator";
    assert_eq!(calls(host, module, &format!("{calc}.Add")), 2);
    assert_eq!(calls(host, module, &format!("{calc}.Multiply")), 1);
    assert_eq!(calls(host, module, &format!("{calc}.Factorial")), 5);
    assert_eq!(calls(host, module, &format!("{calc}.IsEven")), 4);
    assert_eq!(
        host.functions().len(),
        9,
        "nothing else of XunitSample.dll ran"
    );
    // The test host is the only process that runs the tests.
    for r in &processes {
        if r.trace_uint("pid") != host.trace_uint("pid") {
            assert!(
                r.functions().is_empty(),
                "pid {} ({}) ran test code",
                r.trace_uint("pid"),
                string(r.trace(), "command")
            );
        }
    }
    eprintln!(
        "dotnet test: {} processes; test host pid {}: {} events",
        processes.len(),
        host.trace_uint("pid"),
        host.trace_uint("events")
    );
}
