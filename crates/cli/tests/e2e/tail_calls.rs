//! End-to-end tests of tail calls (README "Tail calls"): the `tailcalls` and `tail-loop`
//! scenarios of tests/apps/Scenarios recorded by the real profiler. `eltrace record` sets
//! `DOTNET_TailCallLoopOpt=0` for the program, so the JIT makes a self-recursive call in tail
//! position a tail call (a Tailcall event, then the callee's Enter) instead of a jump back to
//! the method's start, which calls no probe: every call is counted, with tiered compilation
//! on (the method optimized mid-run) and off (optimized from the first call).
//! `--keep-tail-loops` leaves the loops on, and the calls they make are missing.

use std::process::Command;

use crate::common::apps::scenarios_dll;
use crate::common::processes::{eltrace, run_captured};
use crate::common::recording::{Mode, Recording, record_app, record_in};
use crate::common::report::{Report, string, uint};
use crate::common::runtimes::Runtime;
use crate::{modes, runtimes};

const TL: &str = "Scenarios.TailLoopScenario";
const TC: &str = "Scenarios.TailCallsScenario";

/// Sort's and Partition's invocations in `tail-loop` (the program counts them itself).
const SORT_CALLS: u64 = 53_074;
const PARTITION_CALLS: u64 = 26_536;

fn record_ok(
    mode: Mode,
    scenario: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Recording, Report) {
    let rec = record_app(mode, scenarios_dll(), scenario, args, env);
    assert_eq!(
        rec.exit(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        rec.stdout,
        rec.stderr
    );
    let r = rec.report();
    r.check_invariants(0, true);
    (rec, r)
}

fn calls_and_tailcalls(r: &Report, name: &str) -> (u64, u64) {
    let f = r.function(name);
    (uint(f, "calls"), uint(f, "tailcalls"))
}

/// `tail-loop` with tiered compilation as it comes, with Sort tiered up early
/// (`TC_CallCountingDelayMs=0`: optimized while the sort runs, measured: 25057 of its calls
/// then tail calls) and with tiering off (optimized from the first call: every tail-position
/// call is one, 26536).
/// Environment variables for the program.
type Env = &'static [(&'static str, &'static str)];

fn tail_loop_exact(mode: Mode) {
    let tierings: [(Env, Option<u64>); 3] = [
        (&[], None),
        (&[("DOTNET_TC_CallCountingDelayMs", "0")], None),
        (&[("DOTNET_TieredCompilation", "0")], Some(PARTITION_CALLS)),
    ];
    for (env, tailcalls) in tierings {
        let (rec, r) = record_ok(mode, "tail-loop", &[], env);
        assert!(
            rec.stdout.contains("tail-loop: all results correct"),
            "{}",
            rec.stdout
        );
        assert_eq!(string(r.trace(), "tail_call_loop_opt"), "0", "{env:?}");
        let (sort, sort_tail) = calls_and_tailcalls(&r, &format!("{TL}.Sort"));
        assert_eq!(sort, SORT_CALLS, "Sort with {env:?}");
        if let Some(t) = tailcalls {
            assert_eq!(sort_tail, t, "Sort's tail calls with {env:?}");
        }
        assert_eq!(
            calls_and_tailcalls(&r, &format!("{TL}.Partition")),
            (PARTITION_CALLS, 0),
            "{env:?}"
        );
        assert_eq!(r.calls(&format!("{TL}.Run")), 1);
    }
}

/// `--keep-tail-loops`, tiering off: Sort's calls in tail position are jumps, missing from
/// the trace (one Sort call per outer call and per call not in tail position: 2 + 26536),
/// and the report says why.
fn keep_tail_loops_loses_the_self_tail_calls(rt: Runtime) {
    let (rec, r) = record_ok(
        Mode::Fast.on(rt),
        "tail-loop",
        &["--keep-tail-loops"],
        &[("DOTNET_TieredCompilation", "0")],
    );
    assert_eq!(string(r.trace(), "tail_call_loop_opt"), "default");
    assert_eq!(
        calls_and_tailcalls(&r, &format!("{TL}.Sort")),
        (2 + PARTITION_CALLS, 0)
    );
    assert_eq!(r.calls(&format!("{TL}.Partition")), PARTITION_CALLS);
    let mut cmd = Command::new(eltrace());
    cmd.arg("report").arg(&rec.trace);
    let (status, text, stderr) = run_captured(&mut cmd, rec.dir.path(), "report");
    assert!(status.success(), "{stderr}");
    assert!(
        text.contains("self-tail-call loops were on (TailCallLoopOpt default)"),
        "{text}"
    );
}

/// The program's own setting wins: `DOTNET_TailCallLoopOpt=1` in its environment.
fn a_tail_call_loop_setting_of_the_program_stands(rt: Runtime) {
    let (_, r) = record_ok(
        Mode::Fast.on(rt),
        "tail-loop",
        &[],
        &[
            ("DOTNET_TieredCompilation", "0"),
            ("DOTNET_TailCallLoopOpt", "1"),
        ],
    );
    assert_eq!(string(r.trace(), "tail_call_loop_opt"), "1");
    assert_eq!(r.calls(&format!("{TL}.Sort")), 2 + PARTITION_CALLS);
}

/// `tailcalls` (its header has the counts): mutual recursion, a self-recursive accumulator
/// (SumTo: 3 × 101 calls, 100 of each chain tail calls), a mutual pair, a tail call to
/// another method. A tail call ends the caller's frame: the stack stays shallow.
fn tail_calls_exact(mode: Mode) {
    let rec = record_in(mode, "tailcalls", &[]);
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    r.check_invariants(0, true);
    for (name, want) in [
        ("IsEven", (30, 25)),
        ("IsOdd", (25, 20)),
        ("SumTo", (303, 300)),
        ("SumA", (153, 150)),
        ("SumB", (150, 150)),
        ("Outer", (5, 5)),
        ("Inner", (5, 0)),
    ] {
        assert_eq!(
            calls_and_tailcalls(&r, &format!("{TC}.{name}")),
            want,
            "{name}: (calls, tailcalls)"
        );
    }
    let deepest = r
        .threads()
        .iter()
        .map(|t| uint(t, "max_depth"))
        .max()
        .unwrap_or(0);
    assert!(
        deepest < 20,
        "max depth {deepest}: tail calls did not end frames"
    );
}

modes!(tail_loop_exact, tail_calls_exact);
runtimes!(
    keep_tail_loops_loses_the_self_tail_calls,
    a_tail_call_loop_setting_of_the_program_stands,
);
