//! End-to-end tests of async methods: the runtime-async program tests/apps/Async (run with
//! DOTNET_RuntimeAsync=1 on .NET 10) and classic state machines of tests/apps/Scenarios, each
//! recorded by the real profiler and checked for exact logical calls, segments and
//! suspensions (docs/design.md "Async methods: segments and logical calls").
//!
//! Runtime-async programs run in every mode. On .NET 10 the runtime's own slow-path Leave
//! stub does not keep RCX, which carries the async continuation back to a runtime-async
//! caller; eltrace's slow-path Leave hooks return with RCX = 0 (the value .NET 10 has there
//! at every reported Leave), without which the program crashes
//! (docs/async-observations.md).
//!
//! This module owns what the groups share: recording a runtime-async scenario and reading a
//! function's async counts from the report, and the checks every runtime-async recording
//! passes (balance, resumes linked by identity, nothing pending).

use crate::common::apps::async_dll;
use crate::common::recording::{Mode, Recording, record_app};
use crate::common::report::{Report, string, uint};
use serde_json::Value;

/// A classic (C# compiler's) async state machine of tests/apps/Scenarios.
mod classic;
/// .NET 11's CoreLib, itself runtime-async, recorded with `--include '*'`.
mod corelib;
/// Many concurrent calls on several threads: own queues, the thread pool, a timeless trace.
mod queues;
/// The runtime-async scenarios one at a time, in every mode on both runtimes.
mod shapes;
/// Tiering and on-stack replacement move the methods' code while they suspend and resume.
mod tiering;
/// `record --values` on runtime-async methods: values at initial calls and completions only.
mod values;

/// Records a runtime-async scenario. On .NET 10 runtime async needs `DOTNET_RuntimeAsync=1`,
/// and in the trash mode the stubs keep RCX: it carries the async continuation back from a
/// Leave, and trashing it (as the JIT's probe contract allows) crashes runtime-async callers
/// on .NET 10 (measured: exit 134). .NET 11 has runtime async on without the knob (it was
/// removed) and zeroes RCX after a Leave (dotnet/runtime #122490): there the trash mode
/// trashes RCX too, as the contract allows.
fn record_async(mode: Mode, scenario: &str) -> Recording {
    record_async_with(mode, scenario, &[])
}

/// [`record_async`] with further `record` options.
fn record_async_with(mode: Mode, scenario: &str, args: &[&str]) -> Recording {
    let env: &[(&str, &str)] = if mode.net11() {
        &[]
    } else {
        &[("DOTNET_RuntimeAsync", "1"), ("ELTRACE_PRESERVE_RCX", "1")]
    };
    let rec = record_app(mode, async_dll(), scenario, args, env);
    assert_eq!(
        rec.exit(),
        0,
        "exit status; stdout:\n{}\nstderr:\n{}",
        rec.stdout,
        rec.stderr
    );
    rec
}

/// The one function row called `name` (any module).
fn func<'a>(r: &'a Report, name: &str) -> &'a Value {
    let found: Vec<&Value> = r
        .functions()
        .iter()
        .filter(|f| string(f, "name") == name)
        .collect();
    assert_eq!(found.len(), 1, "rows named {name}: {found:?}");
    found[0]
}

/// (calls, segments, suspensions) of a function.
fn css(r: &Report, name: &str) -> (u64, u64, u64) {
    let f = func(r, name);
    (
        uint(f, "calls"),
        uint(f, "segments"),
        uint(f, "suspensions"),
    )
}

/// How many of the `nested` scenario's 3 awaits of `Task.Delay(1)` in L3 suspended: the
/// other 6 of L3's suspensions are at `Task.Yield()`, which always suspends. A delay is over
/// before its await when the thread was held up for over a millisecond between creating and
/// awaiting it (a loaded machine); that await then goes on without suspending, which the
/// program cannot see (`await Task.Delay(1)` calls Delay's async variant: no task to look at).
/// Checks L3's calls, and (when no resume was ambiguous) that its segments are its 3 calls
/// plus its suspensions.
fn nested_delays_suspended(r: &Report) -> u64 {
    let name = "AsyncScenarios.NestedScenario.L3";
    let l3 = func(r, name);
    let (calls, segments, suspensions) = css(r, name);
    let ambiguous = uint(&l3["async"], "ambiguous_calls");
    assert_eq!(calls - ambiguous, 3, "{l3}");
    assert!((9..=12).contains(&segments), "{l3}");
    if ambiguous == 0 {
        assert_eq!(suspensions, segments - 3, "{l3}");
    }
    if segments < 12 {
        eprintln!(
            "nested: {} of 3 delays were over at their await",
            12 - segments
        );
    }
    segments - 9
}

/// (variant_calls, thunk_calls) of a method entered both ways: how its calls came in
/// (docs/design.md "One row per method").
fn split(r: &Report, name: &str) -> (u64, u64) {
    let a = &func(r, name)["async"];
    (uint(a, "variant_calls"), uint(a, "thunk_calls"))
}

fn assert_balanced(r: &Report) {
    r.check_invariants(0, true);
    assert_eq!(r.trace_uint("vanished_frames"), 0, "{}", r.trace());
}

/// The namespace of the `work` scenario's methods.
const W: &str = "AsyncScenarios.WorkScenario.";

/// Every resume of a runtime-async method was linked to its call by the continuation the
/// runtime passed it, which its suspension had allocated (docs/abi.md "Continuations at
/// suspension"): none by evidence or order. (A garbage collection between a suspension and
/// its resume moves the continuation; these small programs make none meanwhile.)
fn assert_resumes_by_identity(r: &Report) {
    for f in r.functions() {
        if let Some(a) = f.get("async").filter(|a| a.is_object()) {
            assert_eq!(uint(a, "identity_resumes"), uint(a, "resumes"), "{f}");
        }
    }
}

/// No resume was linked by order alone (`inferred_resumes`): by its continuation, or where a
/// garbage collection moved that, by evidence.
fn assert_none_inferred(r: &Report) {
    for f in r.functions() {
        if let Some(a) = f.get("async").filter(|a| a.is_object()) {
            assert_eq!(uint(a, "inferred_resumes"), 0, "{f}");
        }
    }
}

/// Every async function's calls completed and none was a guess between a call and a resume.
fn assert_no_pending(r: &Report) {
    for f in r.functions() {
        if let Some(a) = f.get("async").filter(|a| a.is_object()) {
            assert_eq!(uint(a, "pending_at_end"), 0, "{f}");
            assert_eq!(uint(a, "ambiguous_calls"), 0, "{f}");
        }
    }
    assert_eq!(r.trace_uint("open_frames_at_end"), 0, "{}", r.trace());
}
