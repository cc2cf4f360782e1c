//! The trace's records as the analysis reads them: thread records, tick conversion,
//! truncated and corrupt traces, unknown and huge function indices.

use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::{ThreadRecord, TraceInfo};

use super::build::*;
use crate::*;

#[test]
fn thread_records_update() {
    let t = b(&["A"]).thread(0, 42).thread_record(ThreadRecord {
        managed_id: 1,
        name: "Main".into(),
        ..ThreadRecord::new(ThreadIdx(0), 42)
    });
    let a = run(&t.thread(1, 43).end(0));
    let r = a.tables.threads.get(ThreadIdx(0)).unwrap();
    assert_eq!((r.os_tid, r.managed_id, r.name.as_str()), (42, 1, "Main"));
    assert_eq!(a.tables.threads.len(), 2);
    // Threads without events are listed, with zero statistics.
    assert_eq!(a.threads().count(), 2);
}

#[test]
fn ticks_are_converted_from_the_origin() {
    let info = TraceInfo {
        ns_per_tick: 2.5,
        start_ticks: 1000,
        ..TraceInfo::new(3)
    };
    let t = b_with(&["A"], info)
        .thread(0, 1)
        .events(0, &[(1100, Enter, 0), (1500, Leave, 0)]);
    let mut sink = Collect::default();
    let a = analyze_with(&t.end(0)[..], &Options::default(), &mut sink).unwrap();
    assert_eq!(fs(&a, 0).inclusive_ns, 1000);
    assert_eq!((sink.0[0].1.start_ns, sink.0[0].1.end_ns), (250, 1250));
}

#[test]
fn truncated_and_corrupt_traces() {
    let t = b(&["A"])
        .thread(0, 1)
        .events(0, &[(0, Enter, 0), (10, Leave, 0)]);
    let full = t.end(0);
    // No end record.
    let t = b(&["A"]).thread(0, 1).events(0, &[(0, Enter, 0)]);
    let a = run(&t.cut());
    assert!(a.truncated);
    assert_eq!(a.end_reason(), "none");
    assert_eq!(a.totals.open_frames_at_end, 1);
    // Cut in the middle of the last chunk.
    let a = run(&full[..full.len() - 3]);
    assert!(a.truncated);
    assert_eq!(fs(&a, 0).calls, 1);
    // A flipped byte in the events chunk is corruption.
    let mut bad = full.clone();
    let n = bad.len();
    bad[n - 40] ^= 0x55;
    let err = analyze(&bad[..], &Options::default()).unwrap_err();
    assert!(matches!(err, AnalysisError::Read(_)), "{err}");
    assert!(err.to_string().contains("corrupt"), "{err}");
    // Not a trace at all.
    let err = analyze(&b"hello world, not a trace"[..], &Options::default()).unwrap_err();
    assert!(err.to_string().contains("not an eltrace trace"), "{err}");
}

#[test]
fn unknown_and_huge_function_indices() {
    let t = b(&["A"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 4_000_000_000),
            (5, Enter, 0),
            (6, Leave, 0),
            (10, Leave, 4_000_000_000),
        ],
    );
    let a = run(&t.end(0));
    assert_eq!(fs(&a, 4_000_000_000).inclusive_ns, 10);
    assert_eq!(
        a.tables.functions.name(FunctionIdx(4_000_000_000)),
        "<unknown function 4000000000>"
    );
    assert_eq!(a.tables.functions.name(FunctionIdx(0)), "Ns.T.A");
    assert_eq!(a.functions().count(), 2);
}

#[test]
fn waits_replace_each_threads_earlier_totals() {
    let t = b(&["A"])
        .thread(0, 42)
        .thread(1, 43)
        .waits(0, 2, 500)
        .waits(1, 1, 70)
        .waits(0, 5, 1200); // thread 0's totals now
    let a = run(&t.events(0, &[(0, Enter, 0), (10, Leave, 0)]).end(20));
    assert_eq!((a.totals.waits, a.totals.wait_ns), (6, 1270));
    let t0 = a.threads().find(|(i, _)| i.0 == 0).unwrap().1;
    assert_eq!((t0.waits, t0.wait_ns), (5, 1200));
    // A thread filter keeps the trace's totals but only the selected threads' own.
    let opts = Options {
        threads: Some(vec![43]),
        ..Options::default()
    };
    let t = b(&["A"])
        .thread(0, 42)
        .thread(1, 43)
        .waits(0, 2, 500)
        .waits(1, 1, 70);
    let a = analyze(&t.end(0)[..], &opts).unwrap();
    assert_eq!(a.totals.waits, 3);
    let t1 = a.threads().find(|(i, _)| i.0 == 1).unwrap().1;
    assert_eq!(t1.waits, 1);
}
