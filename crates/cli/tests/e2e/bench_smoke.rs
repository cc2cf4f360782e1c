//! `scripts/bench.sh --quick` runs end to end (tiny iteration counts; not a timed test): both
//! harnesses build, every hook configuration runs and prints a number, and the table, the
//! encoding line, the sustained rows per timing mode and the 1/2-thread rows are printed.

use std::process::Command;
use std::time::Duration;

/// How long the whole script may take before it counts as hung: it builds two harnesses and
/// runs a dozen configurations (about 110 s on the 2-core VM with the machine to itself;
/// other tests of the binary run beside it).
const BENCH_TIMEOUT: Duration = Duration::from_secs(600);

#[test]
fn bench_script_runs_quickly_end_to_end() {
    crate::common::processes::profiler_library();
    let dir = crate::common::processes::TempDir::new("bench");
    let mut cmd = Command::new("bash");
    cmd.arg(crate::common::processes::repo_root().join("scripts/bench.sh"))
        .arg("--quick")
        .env("ELTRACE_BENCH_NO_BUILD", "1")
        .env("ELTRACE_BENCH_BIN", crate::common::processes::eltrace())
        .env("BENCH_OUT", dir.path());
    let (status, stdout, stderr) =
        crate::common::processes::run_captured_within(&mut cmd, dir.path(), "bench", BENCH_TIMEOUT);
    assert!(
        status.success(),
        "bench.sh --quick failed:\n{stdout}\n{stderr}"
    );
    for row in [
        "| no profiler |",
        "| profiler loaded, ELT off |",
        "| slow path, empty hook |",
        "| slow path, recording |",
        "| fast path, empty stub |",
        "| fast path, recording (RCX preserved, default) |",
        "| fast path, recording (RCX not preserved) |",
        "| fast path, function filtered out |",
    ] {
        assert!(stdout.contains(row), "no row {row:?} in:\n{stdout}");
    }
    assert!(stdout.contains("bytes per event"), "{stdout}");
    assert!(stdout.contains("M events/s"), "{stdout}");
    // The sustained rows per timing mode, beside their burst cost, and the threads rows.
    for row in [
        "| exact |",
        "| none |",
        "| sampled |",
        "| exact --lossy |",
        "| 1 |",
        "| 2 |",
    ] {
        assert!(
            stdout.contains(row),
            "no sustained row {row:?} in:\n{stdout}"
        );
    }
    assert!(stdout.contains("| busy threads |"), "{stdout}");
    // Each sustained figure is a median of turns, beside its ratio to the burst figure.
    assert!(stdout.contains("÷ burst"), "{stdout}");
}
