//! End-to-end tests of `record --timing exact|none|sampled` (issue 17) on real .NET programs:
//! the counts, balance, exceptions, threads and async scenarios of the `scenarios` module
//! recorded in every timing mode (the timeless ones also with the register-trashing
//! contract-test stubs), with exact counts in all of them and times only where the mode has
//! them; and the accuracy of sampled time against exact timing on the CPU-bound `cpu`
//! scenario.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::recording::{Mode, Recording, record_in};
use crate::common::report::{Report, string, uint};

const MAIN: &str = "Scenarios.Program.Main";

/// One test per timing mode and stub set: `exact` (fast path), `none`, `none` with the
/// trashing stubs, `sampled`.
macro_rules! timings {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;
                #[test]
                fn exact() {
                    super::$name(Mode::Fast, "exact");
                }
                #[test]
                fn none() {
                    super::$name(Mode::Fast, "none");
                }
                #[test]
                fn none_trash() {
                    super::$name(Mode::FastTrash, "none");
                }
                #[test]
                fn sampled() {
                    super::$name(Mode::Fast, "sampled");
                }
            }
        )*
    };
}

timings!(
    fib_counts,
    calltree_counts_and_edges,
    exceptions_balance,
    threads_counts,
    async_counts_and_segments,
);

/// Records `scenario` with `--timing timing`, checks exit 0, `printed` in stdout, and the
/// mode-independent invariants; returns the report.
fn record(mode: Mode, timing: &str, scenario: &str, printed: &str) -> (Recording, Report) {
    let rec = record_in(mode, scenario, &["--timing", timing]);
    assert_eq!(rec.exit(), 0, "exit status; stderr:\n{}", rec.stderr);
    assert!(rec.stdout.contains(printed), "stdout: {}", rec.stdout);
    let r = rec.report();
    assert_eq!(
        r.trace()["timing"]["mode"].as_str(),
        Some(timing),
        "{}",
        r.trace()
    );
    check_counts_invariants(&r);
    check_times(&r, timing);
    (rec, r)
}

/// What every complete recording shows whatever its timing: nothing dropped, mismatched or
/// left open, threads' events adding up, every function's frames equal to its incoming edges.
fn check_counts_invariants(r: &Report) {
    let t = r.trace();
    for field in [
        "dropped_events",
        "mismatched_frames",
        "unmatched_leaves",
        "open_frames_at_end",
    ] {
        assert_eq!(uint(t, field), 0, "{field}: {t}");
    }
    assert_eq!(t["truncated"].as_bool(), Some(false), "{t}");
    assert_eq!(r.sum_of_thread_events(), uint(t, "events"));
    let mut incoming: BTreeMap<&str, u64> = BTreeMap::new();
    for e in r.edges() {
        *incoming.entry(string(e, "callee")).or_default() += uint(e, "calls");
    }
    for f in r.functions() {
        let name = string(f, "name");
        assert_eq!(
            incoming.get(name).copied().unwrap_or(0),
            uint(f, "segments"),
            "edges into {name}"
        );
    }
}

/// Times where the mode has them, `null` where it has none.
fn check_times(r: &Report, timing: &str) {
    for f in r.functions() {
        let (incl, excl) = (&f["inclusive_ns"], &f["exclusive_ns"]);
        match timing {
            "none" => {
                assert!(incl.is_null() && excl.is_null(), "{f}");
                assert!(f["share"].is_null() && f["max_ns"].is_null(), "{f}");
            }
            "sampled" => {
                // Estimates (possibly 0 for a function no sample caught); no per-call figures.
                assert!(incl.as_u64().unwrap() >= excl.as_u64().unwrap(), "{f}");
                assert!(
                    f["mean_inclusive_ns"].is_null() && f["max_ns"].is_null(),
                    "{f}"
                );
            }
            _ => assert!(incl.as_u64().unwrap() >= excl.as_u64().unwrap(), "{f}"),
        }
    }
    for e in r.edges() {
        assert_eq!(e["inclusive_ns"].is_null(), timing != "exact", "{e}");
    }
    let timing_facts = &r.trace()["timing"];
    if timing == "sampled" {
        assert!(uint(timing_facts, "samples") >= 1, "{timing_facts}");
        assert_eq!(uint(timing_facts, "unmatched_samples"), 0, "{timing_facts}");
    } else {
        assert!(timing_facts.get("samples").is_none(), "{timing_facts}");
    }
}

fn fib_counts(mode: Mode, timing: &str) {
    let (rec, r) = record(mode, timing, "fib", "fib(22) = 17711");
    let fib = "Scenarios.FibScenario.Fib";
    let run = "Scenarios.FibScenario.Run";
    assert_eq!(r.calls(fib), 57_313);
    assert_eq!(r.calls(run), 1);
    assert_eq!(r.calls(MAIN), 1);
    assert_eq!(r.edge_calls(fib, fib), 57_312);
    assert_eq!(r.edge_calls(run, fib), 1);
    assert_eq!(r.trace_uint("events"), 2 * (57_313 + 2));
    let active = r.active_threads();
    assert_eq!(active.len(), 1);
    assert_eq!(uint(active[0], "max_depth"), 24);
    if timing == "sampled" {
        // Main is on the stack of every sample that has Run or Fib on it.
        let incl = |n: &str| uint(r.function(n), "inclusive_ns");
        assert!(
            incl(MAIN) >= incl(run) && incl(run) >= incl(fib),
            "{:?}",
            r.functions()
        );
    }
    if timing != "exact" {
        let folded = rec.export("folded");
        let line = format!("{MAIN};{run};{fib} 1");
        assert!(folded.lines().any(|l| l == line), "folded:\n{folded}");
    }
}

fn calltree_counts_and_edges(mode: Mode, timing: &str) {
    let (_, r) = record(mode, timing, "calltree", "calltree total = 1724");
    let run = "Scenarios.CallTreeScenario.Run";
    let step = "Scenarios.Alpha.Step";
    let twice = "Scenarios.Beta.Twice";
    let length = "Scenarios.Point.LengthSquared";
    let leaf = "Scenarios.Outer+Inner.Leaf";
    for (name, calls) in [(run, 1), (step, 10), (twice, 20), (length, 20), (leaf, 17)] {
        assert_eq!(r.calls(name), calls, "calls of {name}");
    }
    assert_eq!(r.calls("Scenarios.Box`1.Describe"), 5);
    assert_eq!(r.roots(), BTreeMap::from([(MAIN.to_string(), 1)]));
    assert_eq!(r.edge_calls(step, twice), 20);
    assert_eq!(r.edge_calls(twice, length), 20);
    assert_eq!(
        r.callers_of(leaf),
        BTreeMap::from([(run.to_string(), 7), (step.to_string(), 10)])
    );
}

fn exceptions_balance(mode: Mode, timing: &str) {
    let printed = "caught=5 cleanups=5 even=3 odd=3 rethrown=4 logged=4";
    let (_, r) = record(mode, timing, "exceptions", printed);
    for (name, calls, unwound) in [
        ("Scenarios.Thrower.Level1", 5, 5),
        ("Scenarios.Thrower.Level3", 5, 5),
        ("Scenarios.Thrower.Cleanup", 5, 0),
        ("Scenarios.Filter.Raise", 6, 6),
        ("Scenarios.Filter.IsEven", 6, 0),
        ("Scenarios.Rethrow.Inner", 4, 4),
    ] {
        let f = r.function(name);
        assert_eq!(uint(f, "calls"), calls, "{f}");
        assert_eq!(uint(f, "unwound"), unwound, "{f}");
    }
    assert_eq!(r.roots(), BTreeMap::from([(MAIN.to_string(), 1)]));
    assert_eq!(uint(r.active_threads()[0], "max_depth"), 5);
}

fn threads_counts(mode: Mode, timing: &str) {
    let (_, r) = record(mode, timing, "threads", "threads total = ");
    let worker = "Scenarios.ThreadsScenario.Worker";
    let step = "Scenarios.ThreadsScenario.Step";
    for i in 0..8u64 {
        let t = r.thread(&format!("worker-{i}"));
        assert_eq!(
            uint(t, "events"),
            2 * (1 + 100 * (i + 1)),
            "worker-{i}: {t}"
        );
        assert_eq!(uint(t, "max_depth"), 2, "worker-{i}: {t}");
        assert_eq!(t["inclusive_ns"].is_null(), timing != "exact", "{t}");
    }
    assert_eq!(r.calls(worker), 8);
    assert_eq!(r.calls(step), 3600);
    assert_eq!(
        r.roots(),
        BTreeMap::from([(MAIN.to_string(), 1), (worker.to_string(), 8)])
    );
    assert_eq!(r.edge_calls(worker, step), 3600);
}

fn async_counts_and_segments(mode: Mode, timing: &str) {
    let (_, r) = record(mode, timing, "async", "async: all results correct");
    for (name, calls) in [
        ("Scenarios.AsyncScenario.Run", 1),
        ("Scenarios.AsyncScenario.RunAsync", 1),
        ("Scenarios.AsyncScenario.Worker", 20),
        ("Scenarios.AsyncScenario.Leaf", 200),
        ("Scenarios.AsyncScenario+<Worker>d__4.MoveNext", 20),
    ] {
        assert_eq!(r.calls(name), calls, "calls of {name}");
    }
    let mn = r.function("Scenarios.AsyncScenario+<Worker>d__4.MoveNext");
    assert_eq!(uint(mn, "segments"), 220, "{mn}");
    assert_eq!(uint(mn, "suspensions"), 200, "{mn}");
    assert_eq!(
        r.edge_calls(
            "Scenarios.AsyncScenario+<Worker>d__4.MoveNext",
            "Scenarios.AsyncScenario.Leaf"
        ),
        200
    );
}

// ---- sampled time against exact timing -------------------------------------------------

/// Rounds of the `cpu` scenario (its default): about 2.5-3 s of CPU on a quiet machine.
const CPU_ROUNDS: u64 = 12000;
/// Samples per second in the accuracy tests: ~15,000-19,000 samples a run. The sampler's
/// intervals are random (sampler.rs): with independent samples one estimate's standard error
/// would be at most 0.4 points. Under the e2e suite's load the errors are larger than that
/// (samples are not independent there; docs/timing.md): the largest same-run difference in
/// 10 runs was 1.25 points at 8 kHz, and 1.23 at 4 kHz.
const HZ: &str = "8000";

/// The functions of a report with their exact inclusive share and, if the trace has samples,
/// their sampled one (both of the time in traced code).
fn shares(r: &Report) -> Vec<(String, f64, Option<f64>)> {
    r.functions()
        .iter()
        .map(|f| {
            (
                string(f, "name").to_owned(),
                f["share"].as_f64().unwrap_or(f64::NAN),
                f["sampled"]["share"].as_f64(),
            )
        })
        .collect()
}

fn record_cpu(args: &[&str]) -> Report {
    let mut all = vec!["--sample-hz", HZ];
    all.extend_from_slice(args);
    let rec = crate::common::recording::record_app(
        Mode::Fast,
        crate::common::apps::scenarios_dll(),
        "cpu",
        &all,
        &[],
    );
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    check_counts_invariants(&r);
    assert_eq!(r.calls("Scenarios.CpuScenario.Spin"), 58 * CPU_ROUNDS);
    r
}

/// Sampled time against exact timing on the CPU-bound `cpu` scenario, two recordings:
///
/// 1. `--timing exact` with samples beside the timestamps: the estimator against the
///    timestamps of the same run. Each of the top 10 functions' sampled inclusive share (of
///    wall time in traced code) is within 2 percentage points of its exact one.
/// 2. `--timing sampled` against that exact run: the same counts, and each of the top 10
///    functions' sampled share within 3 points of the exact run's. The shares compared here
///    are of CPU time (the samples carry each thread's CPU time): two runs on a loaded machine
///    are descheduled at different places, which moves wall-time shares by more than the
///    estimator's error, but not CPU-time ones. The bound is 3 points, not 2: two runs carry
///    two independent sampling errors, and the profiler's own cost differs between them (the
///    timed run's hooks cost more, which takes 1-2 points from `Spin`'s share with the debug
///    build the tests load; at 4 kHz, under a load of 30, one of two runs was 2.1 points apart).
///
/// On a loaded machine the sampler runs late: a few intervals of milliseconds, each credited
/// to one stack, carried a fifth of a run's CPU time under three CPU burners, and the shares
/// of two such runs were up to 3.3 points apart, exact run against exact run. Each bound so
/// widens where the runs' effective samples (`report --json`) allow more than its
/// quiet-machine points: to 4 standard errors of the difference, plus, for two runs, 1.5
/// points for what the modes' own costs move.
#[test]
fn sampled_shares_match_exact_timing() {
    let exact = record_cpu(&["--timing", "exact"]);
    let samples = uint(&exact.trace()["timing"], "samples");
    let mut rows = shares(&exact);
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut report = format!("same run, {samples} samples:\n");
    for (name, e, s) in rows.iter().take(10) {
        let s = s.expect("a sampled share");
        report += &format!(
            "  {name:36} exact {:6.2}%  sampled {:6.2}%  diff {:+.2}\n",
            e * 100.0,
            s * 100.0,
            (s - e) * 100.0
        );
    }
    let sampled = record_cpu(&["--timing", "sampled"]);
    for f in exact.functions() {
        assert_eq!(uint(f, "calls"), sampled.calls(string(f, "name")));
    }
    let cpu_shares = |r: &Report| -> BTreeMap<String, f64> {
        let main = uint(&r.function(MAIN)["sampled"], "inclusive_cpu_ns") as f64;
        r.functions()
            .iter()
            .map(|f: &Value| {
                let cpu = uint(&f["sampled"], "inclusive_cpu_ns") as f64;
                (string(f, "name").to_owned(), cpu / main)
            })
            .collect()
    };
    let (e_cpu, s_cpu) = (cpu_shares(&exact), cpu_shares(&sampled));
    report += &format!(
        "two runs (CPU-time shares), sampled run {} samples:\n",
        uint(&sampled.trace()["timing"], "samples")
    );
    for (name, _, _) in rows.iter().take(10) {
        report += &format!(
            "  {name:36} exact run {:6.2}%  sampled run {:6.2}%  diff {:+.2}\n",
            e_cpu[name] * 100.0,
            s_cpu[name] * 100.0,
            (s_cpu[name] - e_cpu[name]) * 100.0
        );
    }
    // The effective numbers of samples (report --json): how far a share may fall from the
    // truth by chance. Long intervals (a sampler that ran late on a loaded machine) lower them.
    let effective = |r: &Report, key: &str| uint(&r.trace()["timing"], key) as f64;
    let (n_wall, n_cpu_e, n_cpu_s) = (
        effective(&exact, "effective_samples"),
        effective(&exact, "effective_cpu_samples"),
        effective(&sampled, "effective_cpu_samples"),
    );
    report += &format!(
        "effective samples: exact run {n_wall:.0} (wall), {n_cpu_e:.0} (CPU); sampled run \
         {n_cpu_s:.0} (CPU)\n"
    );
    eprintln!("{report}");
    assert!(samples >= 500, "too few samples for the check:\n{report}");
    for (name, e, s) in rows.iter().take(10) {
        let d = (s.unwrap() - e).abs() * 100.0;
        let bound = SAME_RUN_POINTS.max(SIGMAS * standard_error(*e, n_wall));
        assert!(
            d <= bound,
            "{name}: {d:.2} points apart in the same run (bound {bound:.2})\n{report}"
        );
        let (a, b) = (e_cpu[name], s_cpu[name]);
        let se = standard_error(a, n_cpu_e).hypot(standard_error(b, n_cpu_s));
        let bound = TWO_RUNS_POINTS.max(MODES_APART_POINTS + SIGMAS * se);
        let d = (b - a).abs() * 100.0;
        assert!(
            d <= bound,
            "{name}: {d:.2} points apart in two runs (bound {bound:.2})\n{report}"
        );
    }
}

/// The bounds of [`sampled_shares_match_exact_timing`] on a quiet machine (points of share).
const SAME_RUN_POINTS: f64 = 2.0;
const TWO_RUNS_POINTS: f64 = 3.0;
/// What the two modes' own costs move the true shares by, beside chance: the exact run's
/// hooks cost more per call, and `Parse` makes the most calls per unit of work (three loaded
/// runs of each mode: the means of their CPU shares of `Parse` and `Matrix` 1.4 and 1.2 points
/// apart).
const MODES_APART_POINTS: f64 = 1.5;
/// Standard errors a difference may reach where the effective samples allow more than the
/// points above: 4 keeps a chance failure of any of the twenty comparisons near 1 in 1,000
/// runs (errors close to normal).
const SIGMAS: f64 = 4.0;

/// The standard error, in points, of a share `p` estimated from `n` effective samples.
fn standard_error(p: f64, n: f64) -> f64 {
    100.0 * (p * (1.0 - p) / n.max(1.0)).sqrt()
}
