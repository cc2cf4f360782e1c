//! End-to-end tests of compiler state machines (docs/design.md "Compiler state machines"):
//!
//! - the iterator model ("Iterators: enumerations"): the `iterators` scenario of
//!   tests/apps/Scenarios (its header has the table of expected counts, which the program
//!   checks against its own tallies) recorded by the real profiler in every mode, and with
//!   `--values` (where each MoveNext's return value decides how an enumeration ended). Each
//!   iterator's MoveNext row must show exact MoveNext calls (its `calls`), the kickoff's calls,
//!   enumerations, yields (`suspensions`), and how the enumerations ended;
//! - async state machines not named after a method (`async-shapes`): async lambdas, async
//!   local functions, a generic async method and an async method of a generic type, each
//!   counted in logical calls and named after its kickoff.

use std::process::Command;

use crate::common::processes::{eltrace, run_captured};
use crate::common::recording::{Mode, Recording, record_correct};
use crate::common::report::{Report, string, uint};
use crate::common::runtimes::Runtime;
use crate::{modes, runtimes};
use serde_json::Value;

const S: &str = "Scenarios.IteratorsScenario";

/// Per iterator (its kickoff, after `S`): kickoff calls, MoveNext calls, enumerations,
/// yields, abandoned, faulted (tests/apps/Scenarios/Iterators.cs).
const EXPECTED: &[(&str, [u64; 6])] = &[
    (".get_Sequence", [3, 1012, 3, 1010, 1, 0]),
    (".CountTo", [2, 18, 3, 16, 1, 0]),
    (".Inner", [4, 10, 4, 6, 0, 0]),
    (".Flatten", [1, 7, 1, 6, 0, 0]),
    (".Walk", [43, 105, 43, 66, 4, 0]),
    (".Squares", [2, 32, 2, 30, 0, 0]),
    (".Cubes", [1, 10, 1, 10, 1, 0]),
    (".Primes", [1, 4, 1, 4, 1, 0]),
    (".Guarded", [2, 14, 2, 13, 1, 0]),
    ("+Bag.GetEnumerator", [2, 7, 2, 6, 1, 0]),
    (".Faulty", [1, 4, 1, 3, 0, 1]),
    (".Numbers", [1, 5, 1, 5, 1, 0]),
    (".Repeat``1", [2, 7, 2, 5, 0, 0]),
    (".Ticks", [1, 5, 1, 4, 0, 0]),
];

fn record(mode: Mode, args: &[&str]) -> (Recording, Report) {
    record_correct(mode, "iterators", args)
}

/// The MoveNext row of the iterator whose kickoff is `method`.
fn iterator_row<'a>(r: &'a Report, method: &str) -> &'a Value {
    let rows: Vec<&Value> = r
        .functions()
        .iter()
        .filter(|f| f["iterator"]["method"].as_str() == Some(method))
        .collect();
    assert_eq!(rows.len(), 1, "iterator rows of {method}: {rows:?}");
    rows[0]
}

fn check_counts(r: &Report) {
    let mut enumerations = 0;
    for (kickoff, want) in EXPECTED {
        let method = format!("{S}{kickoff}");
        let row = iterator_row(r, &method);
        let it = &row["iterator"];
        assert!(string(row, "name").ends_with(".MoveNext"), "{row}");
        assert!(
            row.get("async").is_none(),
            "an iterator is no async method: {row}"
        );
        let got = [
            uint(it, "kickoff_calls"),
            uint(row, "calls"),
            uint(it, "enumerations"),
            uint(it, "yields"),
            uint(it, "abandoned"),
            uint(it, "faulted"),
        ];
        assert_eq!(
            &got, want,
            "{method}: [kickoff calls, MoveNext calls, enumerations, yields, abandoned, faulted]: {row}"
        );
        assert_eq!(r.calls(&method), want[0], "{method}'s own row");
        assert_eq!(uint(row, "segments"), want[1], "{row}");
        assert_eq!(uint(row, "suspensions"), want[3], "{row}");
        assert_eq!(uint(it, "pending_at_end"), 0, "{row}");
        assert_eq!(uint(it, "completed"), want[2] - want[4] - want[5], "{row}");
        enumerations += want[2];
    }
    assert_eq!(r.trace_uint("enumerations"), enumerations);
    // The one async method of the scenario stays one: 1 call, 5 segments (4 awaits).
    let ticks = r
        .functions()
        .iter()
        .find(|f| f["async"]["method"].as_str() == Some(&format!("{S}.RunTicks")))
        .expect("RunTicks' state machine");
    assert_eq!(string(&ticks["async"], "kind"), "state_machine");
    assert_eq!((uint(ticks, "calls"), uint(ticks, "segments")), (1, 5));
    assert_eq!(r.trace_uint("logical_calls"), 1);
}

fn iterators_exact(mode: Mode) {
    let (_, r) = record(mode, &[]);
    check_counts(&r);
}

modes!(iterators_exact);
runtimes!(
    iterators_exact_with_values,
    text_report_has_the_iterators_table
);

/// `record --values`: each MoveNext's return value is known; the counts are the same.
fn iterators_exact_with_values(rt: Runtime) {
    let (_, r) = record(Mode::Slow.on(rt), &["--values"]);
    check_counts(&r);
}

/// The text report lists the iterators: kickoff calls, enumerations and how they ended,
/// MoveNext calls and yields.
fn text_report_has_the_iterators_table(rt: Runtime) {
    let (rec, _) = record(Mode::Fast.on(rt), &[]);
    let mut cmd = Command::new(eltrace());
    cmd.args(["report", "--top", "200"]).arg(&rec.trace);
    let (status, text, stderr) = run_captured(&mut cmd, rec.dir.path(), "report");
    assert!(status.success(), "{stderr}");
    assert!(text.contains("iterators: 67 enumerations"), "{text}");
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("iterator "))
        .find(|l| l.starts_with(&format!("{S}.Walk ")))
        .unwrap_or_else(|| panic!("no Walk row in the iterators table:\n{text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // iterator, calls, enumerations, completed, abandoned, faulted, pending, MoveNext, yields
    assert_eq!(
        cols[1..],
        ["43", "43", "39", "4", "0", "0", "105", "66"],
        "{row}"
    );
}

/// `async-shapes` (its header has the counts): each state machine's row counts logical calls
/// (2 segments, 1 suspension each) and names the method as the trace names it; that method's
/// own row has the same calls.
fn async_shapes_exact(mode: Mode) {
    let (_, r) = record_correct(mode, "async-shapes", &[]);
    let a = "Scenarios.AsyncShapesScenario";
    // (how the kickoff's name ends, logical calls)
    let shapes = [
        ("+<>c.<RunAsync>b__", 3),
        (".<RunAsync>g__Twice|", 2),
        (".<RunAsync>g__AddK|", 2),
        (".Echo``1", 4),
        ("+Box`1.GetAsync", 3),
    ];
    for (kickoff, calls) in shapes {
        let rows: Vec<&Value> = r
            .functions()
            .iter()
            .filter(|f| {
                f["async"]["method"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(a) && m.contains(kickoff))
            })
            .collect();
        assert_eq!(rows.len(), 1, "state machines of {kickoff}: {rows:?}");
        let row = rows[0];
        assert_eq!(string(&row["async"], "kind"), "state_machine", "{row}");
        assert_eq!(
            (
                uint(row, "calls"),
                uint(row, "segments"),
                uint(row, "suspensions")
            ),
            (calls, 2 * calls, calls),
            "{kickoff}: (calls, segments, suspensions): {row}"
        );
        let method = string(&row["async"], "method");
        assert_eq!(r.calls(method), calls, "the kickoff {method}'s own row");
    }
}

modes!(async_shapes_exact);
