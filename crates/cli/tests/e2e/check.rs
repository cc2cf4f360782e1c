//! End-to-end test of `eltrace check --json` on each runtime of the tests (common::runtimes:
//! the SDK's .NET 10, and .NET 11.0.0 through `--dotnet <root>/dotnet`): builds the bundled
//! probe programs (into a cache under the test's temporary directory), runs every experiment
//! with the freshly built profiler, and asserts the verdict of every check for that runtime
//! on Linux x64, the exit status that follows from them, and the shape of the JSON.

use std::process::Command;

use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured, shell_status};
use crate::common::runtimes::Runtime;
use crate::runtimes;
use serde_json::Value;

/// The verdicts on CoreCLR 10.x, Linux x64 (the same list as the unit tests' fixtures).
/// `async.balance` PASSes since eltrace's analysis reconciles runtime-async segments from the
/// stack pointers (the async variant gets no Leave at suspension on .NET 10).
const NET10: &[(&str, &str)] = &[
    ("async.counts", "PASS"),
    ("async.suspension-leave", "DIFFERS"),
    ("async.continuation-arg", "PASS"),
    ("async.continuation-generic", "PASS"),
    ("async.continuation-reuse", "DIFFERS"),
    ("async.continuation-alloc", "PASS"),
    ("async.state-machine-box", "PASS"),
    ("async.iterator-this", "PASS"),
    ("async.balance", "PASS"),
    ("info.enter.initial", "PASS"),
    ("info.enter.resume", "DIFFERS"),
    ("info.leave.suspension", "DIFFERS"),
    ("info.leave.completion", "PASS"),
    ("info.tailcall", "PASS"),
    ("info.async-no-tailcall", "PASS"),
    ("info.undisturbed", "PASS"),
    ("regs.slow.clobber-all", "PASS"),
    ("regs.slow.async-rcx", "DIFFERS"),
    ("regs.slow.async-rcx0", "PASS"),
    ("regs.fast.trash-sets", "PASS"),
    ("regs.fast.parameters", "PASS"),
    ("regs.fast.rax-after-leave", "PASS"),
    ("regs.fast.rdi-after-enter", "PASS"),
    ("regs.fast.r14-after-enter", "PASS"),
    ("hook.stack-snapshot", "DIFFERS"),
    ("hook.force-gc", "PASS"),
    ("flags.inconsistent", "PASS"),
    ("flags.slow-after-startup", "PASS"),
    ("flags.enterleave-after-startup", "PASS"),
    ("pinvoke.stubs", "PASS"),
    ("pinvoke.reverse", "PASS"),
    // With ELT on: unselected callees inlined into probed callers, selected ones refused,
    // tiering on, ReadyToRun code refused (docs/abi.md "Inlining, tiering and ReadyToRun").
    ("jit.inline-unselected", "PASS"),
    ("jit.inline-selected", "PASS"),
    ("jit.tiering", "PASS"),
    ("jit.r2r-unselected", "PASS"),
    ("jit.r2r-selected", "PASS"),
];

/// The verdicts on CoreCLR 11.0.0, Linux x64: as on .NET 10 but for `async.continuation-reuse`
/// (11 passes one continuation object to every resume of a call, 10 a new one each time: PASS)
/// and `regs.slow.async-rcx`.
/// 11 no longer takes a runtime-async callee's continuation from an RCX that the runtime's
/// slow-path Leave stub clobbered (it zeroes the register after a Leave, dotnet/runtime
/// #122490), so the probe stays correct without eltrace's RCX = 0 workaround: PASS. A
/// suspension still reports no Leave in 11.0.0 (dotnet/runtime #122488): DIFFERS as on 10.
const NET11: &[(&str, &str)] = &[
    ("async.counts", "PASS"),
    ("async.suspension-leave", "DIFFERS"),
    ("async.continuation-arg", "PASS"),
    ("async.continuation-generic", "PASS"),
    ("async.continuation-reuse", "PASS"),
    ("async.continuation-alloc", "PASS"),
    ("async.state-machine-box", "PASS"),
    ("async.iterator-this", "PASS"),
    ("async.balance", "PASS"),
    ("info.enter.initial", "PASS"),
    ("info.enter.resume", "DIFFERS"),
    ("info.leave.suspension", "DIFFERS"),
    ("info.leave.completion", "PASS"),
    ("info.tailcall", "PASS"),
    ("info.async-no-tailcall", "PASS"),
    ("info.undisturbed", "PASS"),
    ("regs.slow.clobber-all", "PASS"),
    ("regs.slow.async-rcx", "PASS"),
    ("regs.slow.async-rcx0", "PASS"),
    ("regs.fast.trash-sets", "PASS"),
    ("regs.fast.parameters", "PASS"),
    ("regs.fast.rax-after-leave", "PASS"),
    ("regs.fast.rdi-after-enter", "PASS"),
    ("regs.fast.r14-after-enter", "PASS"),
    ("hook.stack-snapshot", "DIFFERS"),
    ("hook.force-gc", "PASS"),
    ("flags.inconsistent", "PASS"),
    ("flags.slow-after-startup", "PASS"),
    ("flags.enterleave-after-startup", "PASS"),
    // P/Invoke methods get no Enter/Leave on 11 either (dotnet/runtime #130639).
    ("pinvoke.stubs", "PASS"),
    ("pinvoke.reverse", "PASS"),
    // With ELT on: unselected callees inlined into probed callers, selected ones refused,
    // tiering on, ReadyToRun code refused (docs/abi.md "Inlining, tiering and ReadyToRun").
    ("jit.inline-unselected", "PASS"),
    ("jit.inline-selected", "PASS"),
    ("jit.tiering", "PASS"),
    ("jit.r2r-unselected", "PASS"),
    ("jit.r2r-selected", "PASS"),
];

/// `eltrace check --json <args>` on `rt`; returns the exit status, the JSON and stderr.
fn check_json(rt: Runtime, dir: &TempDir, args: &[&str]) -> (i32, Value, String) {
    let mut cmd = Command::new(eltrace());
    cmd.arg("check")
        .arg("--json")
        .args(args)
        .arg("--profiler")
        .arg(profiler_library())
        .env("ELTRACE_CACHE_DIR", dir.path().join("../check-cache"));
    if rt != Runtime::Net10 {
        // A laid-out root has no SDK to build the probes with: the SDK's `dotnet` builds them
        // into the shared cache first (a cheap check; nothing when the cache has them).
        let mut build = Command::new(eltrace());
        build
            .args(["check", "--json", "--only", "pinvoke.stubs", "--profiler"])
            .arg(profiler_library())
            .env("ELTRACE_CACHE_DIR", dir.path().join("../check-cache"));
        let (status, stdout, stderr) = run_captured(&mut build, dir.path(), "check-build");
        assert!(
            status.success(),
            "eltrace check with the SDK's dotnet failed ({status}):\n{stdout}\n{stderr}"
        );
        cmd.arg("--dotnet").arg(rt.dotnet());
        rt.apply_env(&mut cmd);
    }
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "check");
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no JSON from eltrace check ({e}):\n{stdout}\n{stderr}"));
    (shell_status(status), json, stderr)
}

runtimes!(
    check_gives_the_verdicts_of_the_runtime,
    only_runs_the_selected_checks_and_exits_0_without_fails
);

fn check_gives_the_verdicts_of_the_runtime(rt: Runtime) {
    let dir = TempDir::new("check");
    let (code, json, stderr) = check_json(rt, &dir, &[]);
    let runtime = json["runtime"].as_str().unwrap_or("");
    assert!(
        runtime.starts_with(&rt.description_prefix()),
        "runtime {runtime:?}, not {rt}; stderr:\n{stderr}"
    );
    let checks = json["checks"].as_array().expect("checks array");
    let got: Vec<(String, String)> = checks
        .iter()
        .map(|c| {
            for k in ["expected", "observed"] {
                assert!(c[k].as_str().is_some_and(|s| !s.is_empty()), "{k} of {c}");
            }
            (
                c["name"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let verdicts = match rt {
        Runtime::Net10 => NET10,
        Runtime::Net11 => NET11,
    };
    let want: Vec<(String, String)> = verdicts
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        got,
        want,
        "check rows:\n{}",
        serde_json::to_string_pretty(checks).unwrap()
    );
    let fails = got.iter().filter(|(_, v)| v == "FAIL").count();
    assert_eq!(json["summary"]["fail"].as_u64(), Some(fails as u64));
    assert_eq!(
        code,
        if fails == 0 { 0 } else { 1 },
        "exit status; stderr:\n{stderr}"
    );
}

fn only_runs_the_selected_checks_and_exits_0_without_fails(rt: Runtime) {
    let dir = TempDir::new("check-only");
    let (code, json, stderr) = check_json(rt, &dir, &["--only", "regs.fast"]);
    let names: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "regs.fast.trash-sets",
            "regs.fast.parameters",
            "regs.fast.rax-after-leave",
            "regs.fast.rdi-after-enter",
            "regs.fast.r14-after-enter"
        ]
    );
    assert_eq!(code, 0, "stderr:\n{stderr}\n{json}");
}

/// `check --runtime 10,11`: one column per runtime, each with every check, and the measured
/// .NET 11 difference: `regs.slow.async-rcx` PASSes on 11.0 (the slow-path Leave stub no longer
/// hands a clobbered RCX to a runtime-async caller) and DIFFERS on 10. Every other verdict is
/// the same on both. Uses eltrace's own cache (not a temporary one): scripts/setup.sh lays out
/// 11.0.0 there, and a missing one is laid out on first use (from the NuGet global packages
/// folder, or downloaded).
#[test]
fn check_runtime_10_11_gives_one_column_per_runtime() {
    let dir = TempDir::new("check-runtimes");
    let mut cmd = Command::new(eltrace());
    cmd.args(["check", "--json", "--runtime", "10,11", "--profiler"])
        .arg(profiler_library());
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "check-runtimes");
    let json: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no JSON from eltrace check ({e}):\n{stdout}\n{stderr}"));
    let runtimes = json["runtimes"].as_array().expect("runtimes array");
    let versions: Vec<&str> = runtimes
        .iter()
        .map(|r| r["version"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(versions.len(), 2, "{versions:?}; stderr:\n{stderr}");
    assert!(
        versions[0].starts_with("10.0.") && versions[1].starts_with("11.0."),
        "{versions:?}"
    );
    for (rt, v) in runtimes.iter().zip(&versions) {
        let major = &v[..v.find('.').unwrap() + 1];
        assert!(
            rt["runtime"]
                .as_str()
                .is_some_and(|r| r.starts_with(&format!("CoreCLR {major}"))),
            "column {v} ran on {}",
            rt["runtime"]
        );
        assert_eq!(rt["probes"], "net10.0");
    }
    let column = |i: usize| -> Vec<(String, String)> {
        runtimes[i]["checks"]
            .as_array()
            .expect("checks array")
            .iter()
            .map(|c| {
                assert!(c["observed"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // The rows that differ between the two: DIFFERS on 10, PASS on 11.
    const VARY: [&str; 2] = ["async.continuation-reuse", "regs.slow.async-rcx"];
    let want = |on11: bool| -> Vec<(String, String)> {
        NET10
            .iter()
            .map(|(n, v)| {
                let v = if on11 && VARY.contains(n) { "PASS" } else { v };
                (n.to_string(), v.to_string())
            })
            .collect()
    };
    let pretty = || serde_json::to_string_pretty(&json).unwrap();
    assert_eq!(column(0), want(false), "10:\n{}", pretty());
    assert_eq!(column(1), want(true), "11:\n{}", pretty());
    let varies: Vec<&Value> = json["matrix"]
        .as_array()
        .expect("matrix array")
        .iter()
        .filter(|m| m["varies"] == true)
        .collect();
    assert_eq!(varies.len(), VARY.len(), "{varies:?}");
    for (m, name) in varies.iter().zip(VARY) {
        assert_eq!(m["name"], name);
        assert_eq!(m["verdicts"][versions[0]], "DIFFERS");
        assert_eq!(m["verdicts"][versions[1]], "PASS");
    }
    assert_eq!(json["summary"]["fail"], 0);
    assert_eq!(shell_status(status), 0, "exit status; stderr:\n{stderr}");
}
