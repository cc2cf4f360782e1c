//! The benchmark-only hook modes (`ELTRACE_HOOKS=fast-empty`, `fast-clock`, `fast-discard`:
//! what scripts/bench.sh and scripts/bench-web.sh measure each stage's cost with). The program
//! still computes right under each (their stubs keep the probe contract: the scenarios check
//! their arguments and return values in registers), the trace names the mode, and
//! `fast-discard` counts every event it does not encode as dropped: exactly the events a
//! recording of the same program holds.

use std::process::Command;

use crate::common::apps::scenarios_dll;
use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured};
use crate::common::recording::{Mode, record_correct};
use crate::common::report::{Report, string, uint};
use crate::common::runtimes::Runtime;

/// Records `scenario` with `ELTRACE_HOOKS=hooks` on .NET 10; the program must compute right.
fn record_bench_mode(hooks: &str, scenario: &str) -> Report {
    profiler_library();
    let dir = TempDir::new(&format!("{hooks}-{scenario}"));
    let trace = dir.path().join("x.eltrace");
    let runtime = Runtime::Net10;
    let mut cmd = Command::new(eltrace());
    cmd.arg("record").env("ELTRACE_HOOKS", hooks);
    runtime.apply_env(&mut cmd);
    cmd.arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(runtime.dotnet())
        .arg(scenarios_dll())
        .arg(scenario)
        .current_dir(dir.path())
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1");
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "record");
    assert!(
        status.success(),
        "{hooks} {scenario}: {status}\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(&format!("{scenario}: all results correct")),
        "{hooks} {scenario}: the program computed wrong results under the stubs:\n{stdout}\n{stderr}"
    );
    let mut report = Command::new(eltrace());
    report.arg("report").arg("--json").arg(&trace);
    let (status, out, err) = run_captured(&mut report, dir.path(), "report");
    assert!(status.success(), "report of the {hooks} trace: {err}");
    Report {
        json: serde_json::from_str(&out).expect("report --json"),
    }
}

#[test]
fn benchmark_stubs_keep_the_program_right() {
    for (hooks, mode) in [
        ("fast-empty", "fast-path, empty stubs (benchmark)"),
        (
            "fast-clock",
            "fast-path, stubs that only read the clock (benchmark)",
        ),
    ] {
        for scenario in ["args", "structs", "fp"] {
            let r = record_bench_mode(hooks, scenario);
            assert_eq!(string(r.trace(), "hook_mode"), mode);
            assert_eq!(uint(r.trace(), "events"), 0, "{hooks} {scenario}");
            assert_eq!(uint(r.trace(), "dropped_events"), 0, "{hooks} {scenario}");
        }
    }
}

#[test]
fn discarded_events_are_counted_as_dropped() {
    for scenario in ["args", "structs", "inline"] {
        let (_, recorded) = record_correct(Mode::Fast, scenario, &[]);
        let events = recorded.trace_uint("events");
        assert!(events > 1000, "{scenario}: {events} events");
        let r = record_bench_mode("fast-discard", scenario);
        assert_eq!(
            string(r.trace(), "hook_mode"),
            "fast-path, events dropped instead of encoded (benchmark)"
        );
        assert_eq!(uint(r.trace(), "events"), 0, "{scenario}");
        assert_eq!(uint(r.trace(), "dropped_events"), events, "{scenario}");
    }
}
