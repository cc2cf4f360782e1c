//! How a scenario ends shows in the trace: exceptions thrown, filtered, rethrown and caught
//! keep the stacks balanced (unwound frames counted); `Environment.Exit(42)` passes its exit
//! code through and leaves its chain of frames open; an unhandled exception aborts with 134,
//! every frame of its chain open or unwound.

use super::{MAIN, assert_normal_end, map, record_to_the_end};
use crate::common::exports::check_chrome;
use crate::common::recording::{Mode, record_in};
use crate::common::report::{string, uint};
use crate::modes;

modes!(
    exceptions_keep_stacks_balanced,
    exit_code_and_open_chain_survive_environment_exit,
    unhandled_exception_aborts_with_134,
);

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
