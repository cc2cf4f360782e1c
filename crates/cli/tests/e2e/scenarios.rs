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

use std::collections::BTreeMap;

use crate::common::exports::{check_chrome, check_folded};
use crate::common::recording::{Hooks, Mode, Recording, record_correct, record_in};
use crate::common::report::{Report, string, uint};
use crate::modes;

modes!(
    fib_exact_call_count,
    calltree_counts_and_edges,
    exceptions_keep_stacks_balanced,
    threads_are_named_and_counted,
    deep_recursion_keeps_every_frame,
    exit_code_and_open_chain_survive_environment_exit,
    unhandled_exception_aborts_with_134,
    folded_export_lists_the_call_stacks,
    selection_include_globs_pick_functions,
    selection_exclude_globs_drop_functions,
    fp_results_survive_the_probes,
    many_arguments_survive_the_probes,
    struct_returns_survive_the_probes,
    async_tasks_keep_results_and_balance,
    inlinable_selected_callees_are_counted,
);

const MAIN: &str = "Scenarios.Program.Main";

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

fn exceptions_keep_stacks_balanced(mode: Mode) {
    let printed = "caught=5 cleanups=5 even=3 odd=3 rethrown=4 logged=4";
    let (rec, r) = record_to_the_end(mode, "exceptions", Some(printed));

    // (function, calls, unwound)
    let expected = [
        ("Scenarios.ExceptionsScenario.Run", 1, 0),
        ("Scenarios.Thrower.Level1", 5, 5),
        ("Scenarios.Thrower.Level2", 5, 5),
        ("Scenarios.Thrower.Level3", 5, 5),
        ("Scenarios.Thrower.Cleanup", 5, 0),
        ("Scenarios.Filter.Raise", 6, 6),
        ("Scenarios.Filter.IsEven", 6, 0),
        ("Scenarios.Rethrow.Outer", 4, 4),
        ("Scenarios.Rethrow.Middle", 4, 4),
        ("Scenarios.Rethrow.Inner", 4, 4),
        ("Scenarios.Rethrow.Log", 4, 0),
    ];
    for (name, calls, unwound) in expected {
        let f = r.function(name);
        assert_eq!(uint(f, "calls"), calls, "calls of {name}: {f}");
        assert_eq!(uint(f, "unwound"), unwound, "unwound frames of {name}: {f}");
    }
    assert_eq!(r.calls(MAIN), 1);
    assert_eq!(uint(r.function(MAIN), "unwound"), 0);
    // The stack stays balanced through the exceptions: Main is the only root.
    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
    assert_eq!(
        r.edge_calls("Scenarios.Thrower.Level1", "Scenarios.Thrower.Level2"),
        5
    );
    assert_eq!(
        r.edge_calls("Scenarios.Thrower.Level2", "Scenarios.Thrower.Level3"),
        5
    );
    assert_eq!(
        r.edge_calls("Scenarios.Rethrow.Outer", "Scenarios.Rethrow.Middle"),
        4
    );
    assert_eq!(
        r.edge_calls("Scenarios.Rethrow.Middle", "Scenarios.Rethrow.Inner"),
        4
    );
    let active = r.active_threads();
    assert_eq!(active.len(), 1, "threads with events: {active:?}");
    // Main -> Run -> Level1 -> Level2 -> Level3, or -> Level2 -> Cleanup once Level3 is
    // unwound (the runtime unwinds a frame before it runs the finally of the next one).
    assert_eq!(uint(active[0], "max_depth"), 5);

    let chrome = check_chrome(&rec.export("chrome"));
    assert_eq!(chrome.x_by_name.get("Scenarios.Filter.IsEven"), Some(&6));
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

fn exit_code_and_open_chain_survive_environment_exit(mode: Mode) {
    let rec = record_in(mode, "exit", &[]);
    assert_eq!(rec.exit(), 42, "exit status; stderr:\n{}", rec.stderr);
    assert!(
        rec.stdout.contains("exit: leaving from depth 4"),
        "stdout: {}",
        rec.stdout
    );
    let r = rec.report();
    let chain = [
        MAIN,
        "Scenarios.ExitScenario.Run",
        "Scenarios.ExitScenario.Level1",
        "Scenarios.ExitScenario.Level2",
        "Scenarios.ExitScenario.Level3",
        "Scenarios.ExitScenario.Level4",
    ];
    // Exactly the chain down to Environment.Exit is open at the end.
    r.check_invariants(chain.len() as u64, true);
    assert_normal_end(&r);
    for name in chain {
        let f = r.function(name);
        assert_eq!(uint(f, "calls"), 1, "{name}: {f}");
        assert_eq!(uint(f, "open_at_end"), 1, "{name}: {f}");
    }
    for pair in chain.windows(2) {
        assert_eq!(
            r.edge_calls(pair[0], pair[1]),
            1,
            "{} -> {}",
            pair[0],
            pair[1]
        );
    }
    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
    let open: Vec<_> = r
        .threads()
        .iter()
        .filter(|t| uint(t, "open_frames_at_end") > 0)
        .collect();
    assert_eq!(open.len(), 1, "threads with open frames: {open:?}");
    assert_eq!(uint(open[0], "open_frames_at_end"), 6);
    assert_eq!(uint(open[0], "max_depth"), 6);
}

fn unhandled_exception_aborts_with_134(mode: Mode) {
    let rec = record_in(mode, "unhandled", &[]);
    assert_eq!(rec.exit(), 134, "exit status; stderr:\n{}", rec.stderr);
    assert!(
        rec.stderr.contains("unhandled by design"),
        "the runtime's report of the exception reaches stderr:\n{}",
        rec.stderr
    );
    let r = rec.report();
    let chain = [
        MAIN,
        "Scenarios.UnhandledScenario.Run",
        "Scenarios.UnhandledScenario.Level1",
        "Scenarios.UnhandledScenario.Level2",
        "Scenarios.UnhandledScenario.Level3",
    ];
    // No handler runs, so no frame of the chain returns: each is open at the end or was
    // unwound by the runtime.
    let mut open = 0;
    for name in chain {
        let f = r.function(name);
        assert_eq!(uint(f, "calls"), 1, "{name}: {f}");
        assert_eq!(
            uint(f, "open_at_end") + uint(f, "unwound"),
            1,
            "{name} neither open at the end nor unwound: {f}"
        );
        open += uint(f, "open_at_end");
    }
    r.check_invariants(open, true);
    assert_eq!(
        string(r.trace(), "end_reason"),
        "abort",
        "trace: {}",
        r.trace()
    );
    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
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

fn selection_include_globs_pick_functions(mode: Mode) {
    // One `Module!…` glob and one plain glob.
    let rec = record_in(
        mode,
        "calltree",
        &[
            "--include",
            "Scenarios!Scenarios.Alpha.*",
            "--include",
            "Scenarios.Beta.Twi?e",
        ],
    );
    assert_eq!(rec.exit(), 0, "exit status; stderr:\n{}", rec.stderr);
    let r = rec.report();
    r.check_invariants(0, true);
    let step = "Scenarios.Alpha.Step";
    let twice = "Scenarios.Beta.Twice";
    let names: Vec<String> = r.names().into_iter().collect();
    assert_eq!(names, [step, twice], "functions in the report");
    assert_eq!(r.calls(step), 10);
    assert_eq!(r.calls(twice), 20);
    // Main and Run are not selected, so each Step is a root.
    assert_eq!(r.roots(), map(&[(step, 10)]));
    assert_eq!(r.edge_calls(step, twice), 20);
}

fn selection_exclude_globs_drop_functions(mode: Mode) {
    let rec = record_in(
        mode,
        "calltree",
        &[
            "--exclude",
            "Scenarios.Outer+Inner.*",
            "--exclude",
            "*.Describe",
        ],
    );
    assert_eq!(rec.exit(), 0, "exit status; stderr:\n{}", rec.stderr);
    let r = rec.report();
    r.check_invariants(0, true);
    for gone in ["Scenarios.Outer+Inner.Leaf", "Scenarios.Box`1.Describe"] {
        assert!(
            !r.has_function(gone),
            "{gone} was excluded: {:?}",
            r.names()
        );
    }
    assert_eq!(r.calls(MAIN), 1);
    assert_eq!(r.calls("Scenarios.CallTreeScenario.Run"), 1);
    assert_eq!(r.calls("Scenarios.Alpha.Step"), 10);
    assert_eq!(r.calls("Scenarios.Beta.Twice"), 20);
    assert_eq!(r.calls("Scenarios.Point.LengthSquared"), 20);
    assert_eq!(r.roots(), map(&[(MAIN, 1)]));
}

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
