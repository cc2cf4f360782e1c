//! The scenarios of Registers.cs and Async.cs compute values and check them themselves: floating
//! point, many and mixed arguments (some on the stack), struct returns in registers and in
//! memory, tasks. A probe that broke a register would make them compute wrong results; each
//! must report all results correct with exact counts, in every hook mode, the
//! register-trashing one included.

use super::{MAIN, assert_normal_end};
use crate::common::recording::{Hooks, Mode, record_correct};
use crate::common::report::{Report, uint};
use crate::modes;

modes!(
    fp_results_survive_the_probes,
    many_arguments_survive_the_probes,
    struct_returns_survive_the_probes,
    async_tasks_keep_results_and_balance,
);

/// Records a scenario of Registers.cs/Async.cs: it must report all results correct (a probe
/// that broke a register would make it compute wrong values and exit 1), with balanced
/// stacks, and the given exact call counts.
fn check_computing_scenario(mode: Mode, scenario: &str, calls: &[(&str, u64)]) -> Report {
    let (_, r) = record_correct(mode, scenario, &[]);
    assert_normal_end(&r);
    for (name, n) in calls {
        assert_eq!(r.calls(name), *n, "calls of {name}");
    }
    assert_eq!(r.calls(MAIN), 1);
    r
}

fn fp_results_survive_the_probes(mode: Mode) {
    let mut calls = vec![
        ("Scenarios.FpScenario.Run", 1),
        ("Scenarios.FpScenario.Poly", 1000),
        ("Scenarios.FpScenario.Mix8", 1000),
        ("Scenarios.FpScenario.Scale", 1000),
    ];
    // Dot4 takes Vector128 arguments: on the slow path it gets no probes, because the
    // runtime's slow-path stubs keep only the low 64 bits of a vector register (docs/abi.md
    // "Vector values on the slow path"); the trace says so in its diagnostics.
    let slow = mode.hooks == Hooks::Slow;
    if !slow {
        calls.push(("Scenarios.FpScenario.Dot4", 1000));
    }
    let r = check_computing_scenario(mode, "fp", &calls);
    assert_eq!(
        r.edge_calls("Scenarios.FpScenario.Run", "Scenarios.FpScenario.Mix8"),
        1000
    );
    if slow {
        assert!(!r.has_function("Scenarios.FpScenario.Dot4"));
        let diagnostics = r.trace()["diagnostics"].to_string();
        assert!(
            diagnostics.contains("slow-path-vectors: no probes for Scenarios.FpScenario.Dot4"),
            "{diagnostics}"
        );
    }
}

fn many_arguments_survive_the_probes(mode: Mode) {
    check_computing_scenario(
        mode,
        "args",
        &[
            ("Scenarios.ArgsScenario.Run", 1),
            ("Scenarios.ArgsScenario.Many", 500),
            ("Scenarios.ArgsScenario.Mixed", 500),
            ("Scenarios.ArgsScenario.Stack", 500),
        ],
    );
}

fn struct_returns_survive_the_probes(mode: Mode) {
    let mut calls = vec![("Scenarios.StructsScenario.Run", 1)];
    for f in [
        "MakePair",
        "MakeDoubles",
        "MakeMixed",
        "MakeFlipped",
        "MakeFloats",
        "MakeLarge",
        "SumLarge",
    ] {
        calls.push((
            Box::leak(format!("Scenarios.StructsScenario.{f}").into_boxed_str()),
            300,
        ));
    }
    check_computing_scenario(mode, "structs", &calls);
}

fn async_tasks_keep_results_and_balance(mode: Mode) {
    let r = check_computing_scenario(
        mode,
        "async",
        &[
            ("Scenarios.AsyncScenario.Run", 1),
            ("Scenarios.AsyncScenario.RunAsync", 1),
            ("Scenarios.AsyncScenario.Worker", 20),
            ("Scenarios.AsyncScenario.Leaf", 200),
            // A state machine's MoveNext counts logical calls: one per Worker call.
            ("Scenarios.AsyncScenario+<Worker>d__4.MoveNext", 20),
        ],
    );
    // It runs once to its first await, then once per resume (10 awaits of Task.Yield).
    let mn = r.function("Scenarios.AsyncScenario+<Worker>d__4.MoveNext");
    assert_eq!(uint(mn, "segments"), 20 * 11, "{mn}");
    assert_eq!(uint(mn, "suspensions"), 20 * 10, "{mn}");
    assert_eq!(
        mn["async"]["method"].as_str(),
        Some("Scenarios.AsyncScenario.Worker"),
        "{mn}"
    );
    assert_eq!(
        r.edge_calls(
            "Scenarios.AsyncScenario+<Worker>d__4.MoveNext",
            "Scenarios.AsyncScenario.Leaf"
        ),
        200
    );
}
