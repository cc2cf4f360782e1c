//! Real recordings in the report, used in Chromium: the `calltree` scenario (its exact calls in
//! the functions table, zoom, search, the facts of the recording) and the runtime-async `work`
//! (its calls, segments, resumes and suspensions in the async table).

use super::{strings, use_report};
use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app, record_in};

#[test]
fn recorded_calltree_in_chromium() {
    let rec = record_in(Mode::Fast, "calltree", &[]);
    assert_eq!(rec.exit(), 0, "{}", rec.stderr);
    let seen = use_report(
        rec.dir.path(),
        &rec.trace,
        "calltree",
        "Scenarios.CallTreeScenario.Run",
        "Inner.Leaf",
    );
    let functions = strings(&seen["functions"]);
    let calls = strings(&seen["function_calls"]);
    let calls_of = |name: &str| {
        let i = functions
            .iter()
            .position(|f| *f == name)
            .unwrap_or_else(|| panic!("{name} not in the table: {functions:?}"));
        calls[i]
    };
    for (name, n) in [
        ("Scenarios.Program.Main", "1"),
        ("Scenarios.CallTreeScenario.Run", "1"),
        ("Scenarios.Alpha.Step", "10"),
        ("Scenarios.Beta.Twice", "20"),
        ("Scenarios.Point.LengthSquared", "20"),
        ("Scenarios.Outer+Inner.Leaf", "17"),
        ("Scenarios.Box`1.Describe", "5"),
    ] {
        assert_eq!(calls_of(name), n, "calls of {name}");
    }
    assert_eq!(functions[0], "Scenarios.Program.Main", "{functions:?}");
    // Leaf is called from Run and from Step: two boxes.
    assert_eq!(seen["matches"], 2, "{seen:#}");
    assert_eq!(seen["zoom_boxes"], 1, "{seen:#}");
    let crumbs = seen["crumbs"].as_str().unwrap();
    assert!(
        crumbs.ends_with("› Scenarios.Program.Main › Scenarios.CallTreeScenario.Run"),
        "{crumbs}"
    );
    // By time, Run's own time (its Console.WriteLine, not traced) leaves its callees thinner
    // than a pixel; by calls (97 frames in all), every box is drawn.
    assert!(seen["drawn"].as_u64().unwrap() >= 4, "{seen:#}");
    assert_eq!(seen["flame"][2], seen["nodes"], "{seen:#}");
    assert_eq!(seen["facts"]["Dropped events"], "0");
    assert_eq!(seen["facts"]["Truncated"], "no");
    assert_eq!(seen["facts"]["Hooks"], "fast-path");
    // The program's one thread is its main thread (its tid is the pid), named so.
    let pid = seen["facts"]["Process"]
        .as_str()
        .unwrap()
        .trim_start_matches("pid ");
    assert_eq!(
        strings(&seen["threads"]),
        [format!("main ({pid})")],
        "{seen:#}"
    );
}

#[test]
fn recorded_async_work_in_chromium() {
    let rec = record_app(
        Mode::Fast,
        async_dll(),
        "work",
        &[],
        &[("DOTNET_RuntimeAsync", "1"), ("ELTRACE_PRESERVE_RCX", "1")],
    );
    assert_eq!(rec.exit(), 0, "{}", rec.stderr);
    let w = "AsyncScenarios.WorkScenario.";
    let seen = use_report(
        rec.dir.path(),
        &rec.trace,
        "async-work",
        &format!("{w}RunAsync"),
        "WorkVoid",
    );
    let methods = strings(&seen["async"]);
    let row = |name: &str| {
        let i = methods
            .iter()
            .position(|m| *m == name)
            .unwrap_or_else(|| panic!("{name} not in the async table: {methods:?}"));
        (0..4)
            .map(|k| seen["async_counts"][k][i].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // calls, segments, resumes, suspensions (as asyncs' `work` asserts).
    assert_eq!(row(&format!("{w}Work")), ["5", "25", "20", "20"]);
    assert_eq!(row(&format!("{w}WorkVoid")), ["2", "6", "4", "4"]);
    assert_eq!(row(&format!("{w}RunAsync")), ["1", "12", "11", "11"]);
    // WorkVoid's segments: the first under RunAsync on the main thread, resumes elsewhere.
    assert!(seen["matches"].as_u64().unwrap() >= 2, "{seen:#}");
}
