//! Exact calls per function, per edge and per call path, from the scenarios' code: naive
//! recursion (`fib`), a call tree over several classes (`calltree`), named threads, recursion
//! 10,000 deep, small callees the JIT would inline, the folded export's stacks, and `eltrace
//! diff` gating two recordings on their counts.

use std::collections::BTreeMap;

use super::{MAIN, map, record_to_the_end};
use crate::common::exports::{check_chrome, check_folded};
use crate::common::recording::{Mode, record_correct, record_in};
use crate::common::report::uint;
use crate::modes;

modes!(
    fib_exact_call_count,
    calltree_counts_and_edges,
    threads_are_named_and_counted,
    deep_recursion_keeps_every_frame,
    folded_export_lists_the_call_stacks,
    inlinable_selected_callees_are_counted,
);

/// F(n) with F(0) = 0, F(1) = 1.
fn fibonacci(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// Calls made by the naive Fib(n): C(0) = C(1) = 1, C(n) = 1 + C(n-1) + C(n-2) = 2F(n+1) - 1.
fn fib_calls(n: u64) -> u64 {
    2 * fibonacci(n + 1) - 1
}

fn fib_exact_call_count(mode: Mode) {
    let (_, r) = record_to_the_end(mode, "fib", Some("fib(22) = 17711"));

    let fib = "Scenarios.FibScenario.Fib";
    let run = "Scenarios.FibScenario.Run";
    assert_eq!(fib_calls(22), 57_313);
    assert_eq!(r.calls(fib), fib_calls(22));
    assert_eq!(r.calls(run), 1);
    assert_eq!(r.calls(MAIN), 1);
    // Nothing else of Scenarios.dll runs in this scenario, and no framework code is selected.
    let names: Vec<String> = r.names().into_iter().collect();
    assert_eq!(names, [fib, run, MAIN], "functions in the report");

    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
    assert_eq!(r.edge_calls(MAIN, run), 1);
    assert_eq!(r.edge_calls(run, fib), 1);
    assert_eq!(r.edge_calls(fib, fib), fib_calls(22) - 1);

    // One Enter and one Leave per call, all on one thread, 2 + 22 frames deep at most.
    let calls = fib_calls(22) + 2;
    assert_eq!(r.trace_uint("events"), 2 * calls);
    let active = r.active_threads();
    assert_eq!(active.len(), 1, "threads with events: {active:?}");
    assert_eq!(uint(active[0], "events"), 2 * calls);
    assert_eq!(uint(active[0], "max_depth"), 24);

    // Fib is recursive: its inclusive time counts the outermost frame only, so it cannot
    // exceed Run's, which contains that frame.
    let fib_inclusive = uint(r.function(fib), "inclusive_ns");
    assert!(fib_inclusive <= uint(r.function(run), "inclusive_ns"));
    assert!(fib_inclusive > 0);
}

fn calltree_counts_and_edges(mode: Mode) {
    let (_, r) = record_to_the_end(mode, "calltree", Some("calltree total = 1724"));

    let run = "Scenarios.CallTreeScenario.Run";
    let step = "Scenarios.Alpha.Step";
    let twice = "Scenarios.Beta.Twice";
    let length = "Scenarios.Point.LengthSquared";
    let leaf = "Scenarios.Outer+Inner.Leaf";
    let describe = "Scenarios.Box`1.Describe";

    assert_eq!(r.calls(MAIN), 1);
    assert_eq!(r.calls(run), 1);
    assert_eq!(r.calls(step), 10);
    assert_eq!(r.calls(twice), 20);
    assert_eq!(r.calls(length), 20);
    assert_eq!(r.calls(leaf), 17);
    // Box<int> and Box<string> are two instantiations (two FunctionIDs) of one method: the
    // report has one entry for the name in the module.
    assert_eq!(r.calls(describe), 5);

    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
    assert_eq!(r.edge_calls(MAIN, run), 1);
    assert_eq!(r.edge_calls(run, step), 10);
    assert_eq!(r.edge_calls(step, twice), 20);
    assert_eq!(r.edge_calls(twice, length), 20);
    assert_eq!(r.callers_of(leaf), map(&[(run, 7), (step, 10)]));
    assert_eq!(r.callers_of(describe), map(&[(run, 5)]));

    // A leaf's inclusive time is its exclusive time.
    for name in [length, leaf, describe] {
        let f = r.function(name);
        assert_eq!(
            uint(f, "inclusive_ns"),
            uint(f, "exclusive_ns"),
            "{name}: {f}"
        );
    }
}

fn threads_are_named_and_counted(mode: Mode) {
    let (rec, r) = record_to_the_end(mode, "threads", None);

    let worker = "Scenarios.ThreadsScenario.Worker";
    let step = "Scenarios.ThreadsScenario.Step";
    let mut total_steps = 0;
    let mut total_sum = 0;
    for i in 0..8u64 {
        let steps = 100 * (i + 1);
        total_steps += steps;
        let sum: u64 = (0..steps).map(|k| (31 * i + k) % 7).sum();
        total_sum += sum;
        assert!(
            rec.stdout.contains(&format!("worker-{i}: {sum}\n")),
            "stdout: {}",
            rec.stdout
        );

        let t = r.thread(&format!("worker-{i}"));
        // Worker once, Step (i + 1) * 100 times: an Enter and a Leave each.
        assert_eq!(uint(t, "events"), 2 * (1 + steps), "worker-{i}: {t}");
        assert_eq!(uint(t, "max_depth"), 2, "worker-{i}: {t}");
        assert_eq!(uint(t, "open_frames_at_end"), 0, "worker-{i}: {t}");
        assert!(uint(t, "inclusive_ns") > 0, "worker-{i}: {t}");
    }
    assert_eq!(total_steps, 3600);
    assert!(
        rec.stdout
            .contains(&format!("threads total = {total_sum}\n"))
    );
    assert_eq!(r.calls(worker), 8);
    assert_eq!(r.calls(step), total_steps);
    assert_eq!(r.calls("Scenarios.ThreadsScenario.Run"), 1);
    assert_eq!(r.roots(), map(&[(MAIN, 1), (worker, 8)]));
    assert_eq!(r.edge_calls(worker, step), total_steps);
    assert!(r.trace_uint("threads") >= 9, "trace: {}", r.trace());

    // The Chrome export has one thread_name per thread, the workers' among them (with their
    // tids: `worker-0 (4321)`).
    let chrome = check_chrome(&rec.export("chrome"));
    for i in 0..8 {
        let name = format!("worker-{i} (");
        assert_eq!(
            chrome
                .thread_names
                .iter()
                .filter(|n| n.starts_with(&name))
                .count(),
            1,
            "thread names in the Chrome export: {:?}",
            chrome.thread_names
        );
    }
    assert_eq!(chrome.x_by_name.get(step), Some(&total_steps));
    assert_eq!(chrome.x_by_name.get(worker), Some(&8));
}

fn deep_recursion_keeps_every_frame(mode: Mode) {
    let (_, r) = record_to_the_end(mode, "deep", Some("deep = 9999"));

    let body = "Scenarios.DeepScenario.Body";
    let recurse = "Scenarios.DeepScenario.Recurse";
    assert_eq!(r.calls(recurse), 10_000);
    assert_eq!(r.calls(body), 1);
    assert_eq!(r.calls("Scenarios.DeepScenario.Run"), 1);
    assert_eq!(r.roots(), map(&[(MAIN, 1), (body, 1)]));
    assert_eq!(r.edge_calls(body, recurse), 1);
    assert_eq!(r.edge_calls(recurse, recurse), 9_999);

    let t = r.thread("deep");
    assert_eq!(uint(t, "max_depth"), 10_001, "thread deep: {t}");
    assert_eq!(uint(t, "events"), 2 * 10_001, "thread deep: {t}");
}

fn folded_export_lists_the_call_stacks(mode: Mode) {
    let rec = record_in(mode, "calltree", &[]);
    assert_eq!(rec.exit(), 0, "exit status; stderr:\n{}", rec.stderr);
    let r = rec.report();
    let known = r.names();

    // With --value calls, each call path's count follows from the code.
    let stacks = check_folded(&rec.export_with("folded", &["--value", "calls"]));
    let run = "Scenarios.CallTreeScenario.Run";
    let step = "Scenarios.Alpha.Step";
    let twice = "Scenarios.Beta.Twice";
    let expected: BTreeMap<String, u64> = [
        (vec![MAIN], 1),
        (vec![MAIN, run], 1),
        (vec![MAIN, run, step], 10),
        (vec![MAIN, run, step, twice], 20),
        (
            vec![MAIN, run, step, twice, "Scenarios.Point.LengthSquared"],
            20,
        ),
        (vec![MAIN, run, step, "Scenarios.Outer+Inner.Leaf"], 10),
        (vec![MAIN, run, "Scenarios.Outer+Inner.Leaf"], 7),
        (vec![MAIN, run, "Scenarios.Box`1.Describe"], 5),
    ]
    .into_iter()
    .map(|(path, n)| (path.join(";"), n))
    .collect();
    let mut got = BTreeMap::new();
    for (frames, n) in &stacks {
        for f in frames {
            assert!(known.contains(f), "unknown frame {f:?} in {frames:?}");
        }
        let path = frames.join(";");
        if expected.contains_key(&path) {
            got.insert(path, *n);
        } else {
            // Constructors are the only other calls; the JIT may inline them or not.
            assert!(
                frames.last().unwrap().ends_with("..ctor"),
                "unexpected stack {path} {n}"
            );
        }
    }
    assert_eq!(got, expected);

    // With the default value (exclusive ns), the stacks add up to the functions' time.
    let stacks = check_folded(&rec.export("folded"));
    let folded_ns: u64 = stacks.iter().map(|(_, n)| n).sum();
    let exclusive_ns: u64 = r.functions().iter().map(|f| uint(f, "exclusive_ns")).sum();
    assert_eq!(folded_ns, exclusive_ns);
}

/// Small selected methods called from a loop optimized from its first call: the JIT would
/// inline them, but eltrace refuses the inlining of callees it records (the JITInlining
/// callback), so every call is counted, in every hook mode and runtime.
fn inlinable_selected_callees_are_counted(mode: Mode) {
    let (_, r) = record_correct(mode, "inline", &[]);
    let n = 100_000;
    assert_eq!(r.calls("Scenarios.InlineScenario.Small"), n + n);
    assert_eq!(r.calls("Scenarios.Getter.get_Value"), n);
    assert_eq!(r.calls("Scenarios.InlineScenario.Twice"), n / 2);
    assert_eq!(r.calls("Scenarios.InlineScenario.Loop"), 1);
    assert_eq!(
        r.edge_calls(
            "Scenarios.InlineScenario.Twice",
            "Scenarios.InlineScenario.Small"
        ),
        n
    );
    assert_eq!(
        r.edge_calls(
            "Scenarios.InlineScenario.Loop",
            "Scenarios.InlineScenario.Small"
        ),
        n
    );
}

/// `eltrace diff` as a CI gate (README "Gate on call counts in CI"): two recordings of the
/// same program whose second run sorts one element more (`tail-loop 10`, `tail-loop 11`)
/// pass a gate on an unrelated function and break `calls>+0%`, which names the functions that
/// were called more.
#[test]
fn diff_gates_a_recording_that_calls_more() {
    use crate::common::apps::scenarios_dll;
    use crate::common::recording::record_program;
    use std::process::Command;
    let record = |n: &str| {
        let rec = record_program(Mode::Fast, scenarios_dll(), &["tail-loop", n], &[], &[]);
        assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
        rec
    };
    let (base, new) = (record("10"), record("11"));
    let diff = |gate: &str| {
        Command::new(crate::common::processes::eltrace())
            .arg("diff")
            .arg(&base.trace)
            .arg(&new.trace)
            .args(["--fail-on", gate])
            .output()
            .unwrap()
    };
    let o = diff("calls>+0%:Scenarios.Check.*");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = diff("calls>+0%");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("calls>+0% broken by Scenarios.TailLoopScenario.Partition: 13 -> 14"),
        "{err}"
    );
    assert!(!err.contains("different programs"), "{err}");
}
