//! Which functions are recorded: `--include` globs (a `Module!` one and a plain one) record
//! only what they name, `--exclude` globs drop what they name; the counts of the rest stay
//! exact.

use super::{MAIN, map};
use crate::common::recording::{Mode, record_in};
use crate::modes;

modes!(
    selection_include_globs_pick_functions,
    selection_exclude_globs_drop_functions,
);

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
