//! End-to-end tests of `eltrace record`, `report --json` and `export` on a real .NET process.
//!
//! Each test records one scenario of the C# program in tests/apps/Scenarios (built once per
//! test run with `dotnet build`), with the profiler library that `cargo build --workspace`
//! puts beside the `eltrace` binary, then checks the report against call counts that follow
//! from the program's code (see the comment at the top of each scenario's file): exact calls
//! per function and per edge, balanced stacks (no dropped events, mismatched frames or
//! unmatched leaves), open frames at the end, exception unwinds, thread names, exit codes
//! passed through, and the Chrome and folded exports. Every test runs three times ([`modes!`]):
//! fast path, `--slow-path`, and fast path with the register-trashing contract-test stubs; the
//! fp/args/structs/async scenarios check their own results, so a broken register shows.
//!
//! This module owns what the groups share: recording a scenario that runs to its end, and the
//! checks of a normal end.
//!
//! [`modes!`]: crate::modes

use std::collections::BTreeMap;

use crate::common::recording::{Mode, Recording, record_in};
use crate::common::report::{Report, string};

/// Exact calls per function, per edge and per call path: recursion, a call tree, threads,
/// deep recursion, inlinable callees, the folded export, `eltrace diff` as a gate.
mod counts;
/// Exceptions caught and unwound, `Environment.Exit` with frames open, an unhandled exception.
mod endings;
/// Scenarios that check their own results (floating point, many arguments, struct returns,
/// tasks): the probes break no register.
mod registers;
/// `--include` and `--exclude` globs pick the functions recorded.
mod selection;

const MAIN: &str = "Scenarios.Program.Main";

fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The recording ended normally: the end record says shutdown or process exit.
fn assert_normal_end(r: &Report) {
    let reason = string(r.trace(), "end_reason");
    assert!(
        reason == "shutdown" || reason == "exit",
        "end_reason {reason:?} for a process that ended normally"
    );
}

/// Records `scenario` in `mode` and checks what a scenario that runs to its end must show:
/// exit status 0, `printed` (if given) in its stdout, the invariants with no frame open at the
/// end, and a normal end. Returns the recording and its report.
fn record_to_the_end(mode: Mode, scenario: &str, printed: Option<&str>) -> (Recording, Report) {
    let rec = record_in(mode, scenario, &[]);
    assert_eq!(rec.exit(), 0, "exit status; stderr:\n{}", rec.stderr);
    if let Some(printed) = printed {
        assert!(rec.stdout.contains(printed), "stdout: {}", rec.stdout);
    }
    let r = rec.report();
    r.check_invariants(0, true);
    assert_normal_end(&r);
    (rec, r)
}
