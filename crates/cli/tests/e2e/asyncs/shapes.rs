//! The runtime-async scenarios of tests/apps/Async one at a time, each in every mode on both
//! runtimes: awaits from a runtime-async caller and from a sync one (through the thunk),
//! nesting, exceptions, `ConfigureAwait`, a method that is not async but awaited, a user's
//! `Stream.ReadAsync` override, generic methods and async iterators. Calls, segments and
//! suspensions are exact (where the program's timing may change one, the test says how), and
//! every resume is linked to its call by its continuation.

use serde_json::Value;

use super::{
    W, assert_balanced, assert_no_pending, assert_resumes_by_identity, css, func,
    nested_delays_suspended, record_async, split,
};
use crate::common::recording::{Mode, Recording};
use crate::common::report::{string, uint};
use crate::modes;

modes!(
    work,
    sync_caller,
    nested,
    exception,
    configure_await,
    plain_await,
    stream_read,
    generic,
    async_iter,
    inline_resume
);

fn work(mode: Mode) {
    let rec = record_async(mode, "work");
    chrome_links_segments(&rec, &format!("{W}Work"), 5, 5);
    let r = rec.report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    // Work(4) awaited 5 times from a runtime-async caller: each call runs its first segment,
    // then resumes once per Task.Yield.
    assert_eq!(css(&r, &format!("{W}Work")), (5, 25, 20));
    assert_eq!(css(&r, &format!("{W}WorkVoid")), (2, 6, 4));
    assert_eq!(css(&r, &format!("{W}WorkDouble")), (2, 6, 4));
    assert_eq!(css(&r, &format!("{W}WorkFloat")), (2, 6, 4));
    // The caller resumes after each of its 11 awaits that suspended.
    assert_eq!(css(&r, &format!("{W}RunAsync")), (1, 12, 11));
    // Main calls RunAsync through its thunk (one row for the method: the thunk's frame and
    // the variant's first segment are one call); the callees are called variant to variant.
    assert_eq!(split(&r, &format!("{W}RunAsync")), (0, 1));
    assert!(!r.has_function(&format!("{W}RunAsync [thunk]")));
    assert_eq!(split(&r, &format!("{W}Work")), (5, 0));
    let work = func(&r, &format!("{W}Work"));
    assert_eq!(work["async"]["kind"].as_str(), Some("runtime"), "{work}");
    assert_eq!(uint(&work["async"], "resumes"), 20, "{work}");
    assert_eq!(uint(&work["async"], "pending_at_end"), 0, "{work}");
    // Resumes of a completed callee's caller are linked exactly (the dispatcher resumes it
    // next, at the same stack pointer), so nothing here was attached by order alone.
    assert_eq!(uint(&work["async"], "inferred_resumes"), 0, "{work}");
    assert!(uint(&work["async"], "wall_ns") >= uint(work, "inclusive_ns"));
    assert_eq!(r.trace_uint("logical_calls"), 12);
    assert_eq!(r.trace_uint("suspended_frames"), 20 + 3 * 4 + 11);
}

/// The Chrome export of `rec` shows `calls` logical calls of `name`, each as
/// `segments` slices sharing one `bind_id`: the first flows out, the others flow in.
fn chrome_links_segments(rec: &Recording, name: &str, calls: usize, segments: usize) {
    let json: Value = serde_json::from_str(&rec.export("chrome")).expect("chrome JSON");
    let mut by_call: std::collections::BTreeMap<u64, Vec<(u64, bool)>> = Default::default();
    for e in json["traceEvents"].as_array().expect("traceEvents") {
        if e["ph"] == "X" && e["name"] == name {
            let id = e["bind_id"]
                .as_u64()
                .unwrap_or_else(|| panic!("no bind_id: {e}"));
            // The segment's facts are under `"segment N"` (docs/design.md).
            let index = e["args"]
                .as_object()
                .and_then(|a| a.keys().find_map(|k| k.strip_prefix("segment ")))
                .and_then(|n| n.parse::<u64>().ok())
                .expect("segment index");
            assert_eq!(e["flow_in"] == true, index > 0, "{e}");
            by_call
                .entry(id)
                .or_default()
                .push((index, e["flow_in"] == true));
        }
    }
    assert_eq!(by_call.len(), calls, "{name}: {by_call:?}");
    for (id, mut segs) in by_call {
        segs.sort_unstable();
        let indexes: Vec<u64> = segs.iter().map(|s| s.0).collect();
        assert_eq!(
            indexes,
            (0..segments as u64).collect::<Vec<_>>(),
            "{name} call {id}"
        );
    }
}

fn sync_caller(mode: Mode) {
    let r = record_async(mode, "sync-caller").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let name = "AsyncScenarios.SyncCallerScenario.Work";
    // A call through the thunk is one logical call of Work, and one call of its thunk.
    assert_eq!(css(&r, name), (5, 25, 20));
    assert_eq!(split(&r, name), (0, 5));
    // The thunk calling the variant is one call of Work, not an edge of its own.
    assert_eq!(r.edge_calls(name, name), 0);
}

fn nested(mode: Mode) {
    let r = record_async(mode, "nested").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.NestedScenario.";
    assert_eq!(css(&r, &format!("{n}L1")), (3, 6, 3));
    assert_eq!(split(&r, &format!("{n}L1")), (0, 3));
    assert_eq!(css(&r, &format!("{n}L2")), (3, 6, 3));
    // L4 completes without suspending.
    assert_eq!(css(&r, &format!("{n}L4")), (3, 3, 0));
    // L3: Yield, Delay(1), Yield: 4 segments per call. The timer queue resumes after the
    // Delay deeper than the thread pool does; the first time a thread shows that before any
    // direct call from L3 returned, L3's frame size comes from the thread's next events (L3's
    // last segment calls L4). Without such evidence the Enter may be a recursion as well as a
    // resume: counted as a call and in `ambiguous_calls` (docs/design.md); measured: 0 such
    // in 75 recordings since the look-ahead.
    // 12 segments, unless a delay was over at its await: `nested_delays_suspended` checks
    // them against L3's calls and suspensions.
    let l3 = func(&r, &format!("{n}L3"));
    nested_delays_suspended(&r);
    assert!(uint(&l3["async"], "ambiguous_calls") <= 1, "{l3}");
}

fn exception(mode: Mode) {
    let r = record_async(mode, "exception").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.ExceptionScenario.";
    // E3 throws after its await (its resumed segment is unwound); the exception passes E2
    // without resuming it and is caught in E1's resumed segment.
    assert_eq!(css(&r, &format!("{n}E3")), (3, 6, 3));
    assert_eq!(uint(func(&r, &format!("{n}E3")), "unwound"), 3);
    assert_eq!(css(&r, &format!("{n}E2")), (3, 3, 3));
    assert_eq!(css(&r, &format!("{n}E1")), (3, 6, 3));
    // E2 is over when E1 resumes: nothing stays pending.
    assert_eq!(
        uint(&func(&r, &format!("{n}E2"))["async"], "pending_at_end"),
        0
    );
}

fn configure_await(mode: Mode) {
    let r = record_async(mode, "configureawait").report();
    assert_resumes_by_identity(&r);
    // 8 concurrent Workers, 4 segments each. Which waiting Worker a resume continues is the
    // one whose suspension allocated the continuation the resume receives; a timer resume that
    // comes deeper than a suspended Worker segment is a resume, not a recursive call.
    let n = "AsyncScenarios.ConfigureAwaitScenario.";
    assert_eq!(split(&r, &format!("{n}Worker")), (0, 8));
    let worker = func(&r, &format!("{n}Worker"));
    assert_eq!(css(&r, &format!("{n}Worker")), (8, 32, 24), "{worker}");
    assert_eq!(uint(&worker["async"], "resumes"), 24, "{worker}");
    assert_eq!(uint(&worker["async"], "pending_at_end"), 0, "{worker}");
    assert_eq!(uint(func(&r, &format!("{n}Leaf")), "calls"), 24);
    assert_eq!(css(&r, &format!("{n}RunAsync")), (1, 2, 1));
    assert_eq!(r.trace_uint("mismatched_frames"), 0);
    assert_eq!(r.trace_uint("unmatched_leaves"), 0);
}

fn plain_await(mode: Mode) {
    let r = record_async(mode, "plain-await").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.PlainAwaitScenario.";
    // Plain is not async: the runtime's async variant of it (marked by the profiler's token
    // lookup) is a segment like any other; on .NET 10 it calls the Task-returning Plain
    // (`Plain [thunk]`, an ordinary frame). 3 calls of 2 segments each.
    assert_eq!(css(&r, &format!("{n}Outer")), (3, 6, 3));
    assert_eq!(css(&r, &format!("{n}Plain")), (3, 6, 3));
    // Every call of Plain is awaited, so it comes in at the variant (which on .NET 10 calls
    // the Task-returning Plain: one call, not two).
    assert_eq!(split(&r, &format!("{n}Plain")), (3, 0));
    assert_eq!(css(&r, &format!("{n}Inner")), (3, 6, 3));
    assert_no_pending(&r);
}

/// A `Stream.ReadAsync(Memory<byte>, CancellationToken)` override as users write it (not
/// async, no attributes, inlinable, a ValueTask that completes later) awaited by runtime-async
/// code and read by CoreLib's StreamReader (itself runtime-async on .NET 11). Every call is a
/// call, told from a resume by the continuation the runtime passes the variant (none at a
/// call); the method is one row however it was entered. The stream counts its own reads.
fn stream_read(mode: Mode) {
    let rec = record_async(mode, "stream-read");
    let reads: u64 = rec
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("stream-read reads = "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no read count in:\n{}", rec.stdout));
    let r = rec.report();
    assert_resumes_by_identity(&r);
    // On .NET 11 StreamReader's own calls of ReadAsync come from code that is not recorded,
    // and the runtime never resumes ReadAsync's variant (it returns the task it awaits, a tail
    // await: its caller is resumed instead). Its segment suspends without allocating a
    // continuation, so its call ends there (`tail_awaits`), none pending; a segment that was
    // its thread's last event has no event to show it suspended: open at the end of the trace
    // (docs/design.md, "Known limits").
    let n = "AsyncScenarios.";
    let read = func(&r, &format!("{n}SlowStream.ReadAsync"));
    let open = if mode.net11() {
        uint(read, "open_at_end")
    } else {
        0
    };
    r.check_invariants(open, true);
    assert_eq!(r.trace_uint("vanished_frames"), 0, "{}", r.trace());
    assert_eq!(uint(read, "calls"), reads, "{read}");
    let (variant, thunk) = split(&r, &format!("{n}SlowStream.ReadAsync"));
    assert_eq!(variant + thunk, reads, "{read}");
    // Consume awaits 24 pending reads and a completed one.
    assert!(variant >= 25, "{read}");
    assert_eq!(uint(&read["async"], "ambiguous_calls"), 0, "{read}");
    assert_eq!(uint(&read["async"], "inferred_resumes"), 0, "{read}");
    assert_eq!(uint(&read["async"], "pending_at_end"), 0, "{read}");
    if mode.net11() {
        assert!(uint(&read["async"], "tail_awaits") > 0, "{read}");
    } else {
        assert_eq!(uint(&read["async"], "tail_awaits"), 0, "{read}");
    }
    // Consume suspends at each of its 24 pending reads, unless a read's delay was over before
    // Consume awaited it (its thread held up for over a millisecond in between: a loaded
    // machine), which the program cannot see; its 25th read returns a completed ValueTask.
    let consume = func(&r, &format!("{n}StreamReadScenario.Consume"));
    let (calls, segments, suspended) = css(&r, &format!("{n}StreamReadScenario.Consume"));
    assert!(suspended <= 24, "{consume}");
    assert_eq!((calls, segments), (1, 1 + suspended), "{consume}");
    if suspended < 24 {
        eprintln!(
            "stream-read: {} of 24 reads were over at their await",
            24 - suspended
        );
    }
    assert_eq!(
        uint(&consume["async"], "known_starts"),
        1 + suspended,
        "{consume}"
    );
    assert_eq!(uint(&consume["async"], "pending_at_end"), 0, "{consume}");
}

/// Generic runtime-async code as it is usually written: a generic async method over a value
/// type (its own code) and over a reference type (shared code, whose instantiation argument
/// comes before the continuation), instance and static async methods of generic classes over
/// a reference type and a value type, and a generic method that is not async but returns the
/// Task of one that is. The profiler tells each generic
/// method's variant from its Task-returning entry by the runtime's lookup with the method's
/// own instantiation, and reads the continuation of generic methods' variants.
fn generic(mode: Mode) {
    let r = record_async(mode, "generic").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.GenericScenario.";
    // Delayed awaits Task.Delay(1), which has completed when its thread was held up for over
    // a millisecond before the await (seen under the suite's load with the debug profiler: 2
    // runs in 6): that await then does not suspend, nor RunAsync's await of it. `s` of the 4
    // did suspend.
    let (_, delayed_segments, s) = css(&r, &format!("{n}Delayed``1"));
    assert!(s <= 4, "{s}");
    assert_eq!(css(&r, &format!("{n}Delayed``1")), (4, 4 + s, s));
    assert_eq!(delayed_segments, 4 + s);
    assert_eq!(css(&r, &format!("{n}RunAsync")), (1, 25 + s, 24 + s));
    assert_eq!(css(&r, &format!("{n}Echo``1")), (8, 16, 8));
    for m in ["Box`1.Get", "Box`1.None", "Cell`1.Get", "Cell`1.None"] {
        assert_eq!(
            css(&r, &format!("AsyncScenarios.GenericScenario+{m}")),
            (4, 8, 4),
            "{m}"
        );
    }
    // Pass is not async: on .NET 10 its variant calls the Task-returning Pass and is resumed
    // when that task completes; on .NET 11 it calls Delayed's variant directly and is never
    // resumed (Delayed's completion resumes RunAsync).
    let pass_segments = if mode.net11() { 4 } else { 4 + s };
    assert_eq!(css(&r, &format!("{n}Pass``1")), (4, pass_segments, s));
    // Every segment of the generic methods is a call or a resume by the continuation.
    for (name, starts) in [
        ("GenericScenario.Echo``1", 16),
        ("GenericScenario.Delayed``1", 4 + s),
        ("GenericScenario.Pass``1", pass_segments),
        ("GenericScenario+Box`1.Get", 8),
        ("GenericScenario+Box`1.None", 8),
        ("GenericScenario+Cell`1.Get", 8),
        ("GenericScenario+Cell`1.None", 8),
    ] {
        let f = func(&r, &format!("AsyncScenarios.{name}"));
        assert_eq!(uint(&f["async"], "known_starts"), starts, "{f}");
    }
    assert_no_pending(&r);
}

/// Async iterators consumed with `await foreach` by runtime-async methods: the iterator's
/// `MoveNextAsync` row has the enumerations (one per enumerator: two of one enumerable count
/// twice), its calls, the yields, how the enumerations ended (a `break` abandons one) and the
/// awaits inside the iterator that suspended, on both runtimes (on .NET 10 the awaiting
/// callers reach `MoveNextAsync` through its async variant, whose resumes are not moves).
fn async_iter(mode: Mode) {
    let r = record_async(mode, "async-iter").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    let rows: Vec<&Value> = r
        .functions()
        .iter()
        .filter(|f| string(f, "name").ends_with("MoveNextAsync"))
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let f = rows[0];
    assert_eq!(uint(f, "calls"), 17, "{f}");
    let it = &f["iterator"];
    assert_eq!(
        it["method"].as_str(),
        Some("AsyncScenarios.AsyncIterScenario.Numbers"),
        "{f}"
    );
    assert_eq!(uint(it, "kickoff_calls"), 3, "{f}");
    assert_eq!(uint(it, "enumerations"), 4, "{f}");
    assert_eq!(uint(it, "yields"), 14, "{f}");
    assert_eq!(uint(it, "completed"), 3, "{f}");
    assert_eq!(uint(it, "abandoned"), 1, "{f}");
    assert_eq!(uint(it, "faulted"), 0, "{f}");
    assert_eq!(uint(it, "awaits_suspended"), 14, "{f}");
}

/// Calls resumed inline inside a running runtime-async segment: Producer completes the
/// TaskCompletionSources its Waiters await (no RunContinuationsAsynchronously), so each Waiter
/// resumes inside SetResult, deeper on Producer's stack, suspends again and returns into
/// Producer, which goes on. Producer's segment did not suspend there; before the rules knew
/// that resume from a dispatcher's, it was counted with a suspension per resume's thread and
/// left pending.
fn inline_resume(mode: Mode) {
    let r = record_async(mode, "inline-resume").report();
    assert_resumes_by_identity(&r);
    assert_balanced(&r);
    assert_no_pending(&r);
    let n = "AsyncScenarios.InlineResumeScenario.";
    assert_eq!(css(&r, &format!("{n}Producer")), (1, 2, 1));
    assert_eq!(css(&r, &format!("{n}Waiter")), (4, 12, 8));
}
