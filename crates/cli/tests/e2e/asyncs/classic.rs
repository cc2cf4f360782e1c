//! A classic async method (a C# compiler's state machine, tests/apps/Scenarios' `classic-work`):
//! its `MoveNext` row counts the logical calls, segments and suspensions of the user method it
//! names; the classic builds of `queues` and `queues-pool`, resumes linked by their boxes.

use super::assert_balanced;
use crate::common::recording::{Mode, record_in};
use crate::common::report::{string, uint};
use crate::modes;

modes!(classic_work);

fn classic_work(mode: Mode) {
    let rec = record_in(mode, "classic-work", &[]);
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    assert_balanced(&r);
    let mn = r
        .functions()
        .iter()
        .find(|f| {
            string(f, "name").ends_with("+<Work>d__4.MoveNext") || {
                let n = string(f, "name");
                n.contains("<Work>d__") && n.ends_with(".MoveNext")
            }
        })
        .expect("Work's state machine");
    // 5 calls, each 1 + 4 segments; the row names the user method.
    assert_eq!(uint(mn, "calls"), 5, "{mn}");
    assert_eq!(uint(mn, "segments"), 25, "{mn}");
    assert_eq!(uint(mn, "suspensions"), 20, "{mn}");
    assert_eq!(mn["async"]["kind"].as_str(), Some("state_machine"), "{mn}");
    assert!(
        mn["async"]["method"]
            .as_str()
            .is_some_and(|m| m.ends_with(".Work")),
        "{mn}"
    );
}

modes!(classic_queues, classic_queues_pool);

fn classic_queues(mode: Mode) {
    queues(mode, "classic-queues");
}

fn classic_queues_pool(mode: Mode) {
    queues(mode, "classic-queues-pool");
}

/// tests/apps/Async's `queues` and `queues-pool` compiled as classic state machines: four
/// threads, 8 concurrent Workers each, on their own queues or the thread pool. Every resume
/// is linked to its call by the box its suspension put the state machine in (the builder's
/// `GetStateMachineBox`, recorded, and the resumed `MoveNext`'s `this`: docs/abi.md "State
/// machines by `this`"), none by order; counts exact.
fn queues(mode: Mode, scenario: &str) {
    let rec = record_in(mode, scenario, &[]);
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    assert_balanced(&r);
    let machine = |m: &str| {
        r.functions()
            .iter()
            .find(|f| {
                let n = string(f, "name");
                n.contains(&format!("QueuesScenario+<{m}>d__")) && n.ends_with(".MoveNext")
            })
            .unwrap_or_else(|| panic!("{m}'s state machine"))
            .clone()
    };
    // Step awaits Task.Yield, which always suspends. On the thread pool a Worker's Step may
    // complete on another thread before the Worker looks at its task, and then the Worker
    // goes on without suspending; on its own queue it cannot.
    let step = machine("Step");
    let css = |f: &serde_json::Value| {
        (
            uint(f, "calls"),
            uint(f, "segments"),
            uint(f, "suspensions"),
        )
    };
    assert_eq!(css(&step), (160, 320, 160), "{step}");
    let worker = machine("Worker");
    if scenario == "classic-queues" {
        assert_eq!(css(&worker), (32, 192, 160), "{worker}");
    }
    for (m, calls) in [("Batch", 4), ("Worker", 32), ("Step", 160)] {
        let f = machine(m);
        let a = &f["async"];
        let (c, segments, suspensions) = css(&f);
        assert_eq!((c, segments), (calls, calls + suspensions), "{f}");
        assert_eq!(uint(a, "resumes"), suspensions, "{f}");
        assert_eq!(uint(a, "identity_resumes"), suspensions, "{f}");
        assert_eq!(uint(a, "inferred_resumes"), 0, "{f}");
        assert_eq!(uint(a, "pending_at_end"), 0, "{f}");
    }
}
