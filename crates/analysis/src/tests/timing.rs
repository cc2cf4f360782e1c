//! Traces recorded without per-event timestamps (`record --timing none|sampled`): counts,
//! edges and stacks stay exact, and the sampled-time estimator credits each sample's interval
//! to the stack at its event index.

use eltrace_trace::protocol::info_key;
use eltrace_trace::testing::timed_info;
use eltrace_trace::{EventKind, FunctionIdx, TraceReader};

use super::build::*;
use crate::*;

use EventKind::{Enter, Leave, Unwind};

/// Main(0) calls A(1) twice and B(2) once; B's frame is unwound by an exception.
fn main_a_a_b(ts: [u64; 8]) -> Vec<(u64, EventKind, u32, u64)> {
    vec![
        (ts[0], Enter, 0, 0x100),
        (ts[1], Enter, 1, 0xF0),
        (ts[2], Leave, 1, 0xF0),
        (ts[3], Enter, 1, 0xF0),
        (ts[4], Leave, 1, 0xF0),
        (ts[5], Enter, 2, 0xF0),
        (ts[6], Unwind, 2, 0xF0),
        (ts[7], Leave, 0, 0x100),
    ]
}

#[test]
fn a_timeless_trace_round_trips_its_events_and_orders_them_by_chunk_times() {
    // The writer keeps each chunk's first and last time and spreads the others evenly.
    let bytes = b_with(&["Main", "A", "B"], timed_info("none", 1000))
        .thread(0, 10)
        .events_sp(0, &main_a_a_b([100, 0, 0, 0, 0, 0, 0, 800]))
        .end(900);
    assert_eq!(
        &bytes[8..10],
        &eltrace_trace::FORMAT_VERSION.to_le_bytes(),
        "the current format version"
    );
    let mut r = TraceReader::new(&bytes[..]).unwrap();
    let mut events = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let eltrace_trace::Record::Events { events: e, .. } = rec {
            events.extend(e);
        }
    }
    let want = main_a_a_b([100, 200, 300, 400, 500, 600, 700, 800]);
    let got: Vec<_> = events
        .iter()
        .map(|e| (e.ts, e.kind, e.func.0, e.sp))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_timeless_trace_has_exact_counts_and_no_times() {
    let bytes = b_with(&["Main", "A", "B"], timed_info("none", 1000))
        .thread(0, 10)
        .events_sp(0, &main_a_a_b([0; 8]))
        .end(0);
    let a = run(&bytes);
    assert!(!a.has_event_times());
    assert!(a.sampled.is_none());
    assert_eq!(fs(&a, 0).calls, 1);
    assert_eq!(fs(&a, 1).calls, 2);
    assert_eq!((fs(&a, 2).calls, fs(&a, 2).unwound), (1, 1));
    assert_eq!(edge(&a, Some(0), 1).calls, 2);
    assert_eq!(edge(&a, Some(0), 2).calls, 1);
    assert_eq!(a.totals.mismatched_frames + a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.open_frames_at_end, 0);
}

/// Main(0) → A(1), leave, → B(2), leave, leave Main; samples at given indices.
fn sampled_trace(samples: &[(u32, u64, u64, Option<u64>)], samples_first: bool) -> Analysis {
    let events = [
        (0, Enter, 0, 0x100),
        (0, Enter, 1, 0xF0),
        (0, Leave, 1, 0xF0),
        (0, Enter, 2, 0xF0),
        (0, Leave, 2, 0xF0),
        (0, Leave, 0, 0x100),
    ];
    let t = b_with(&["Main", "A", "B"], timed_info("sampled", 1000)).thread(0, 10);
    let t = if samples_first {
        t.samples(samples).events_sp(0, &events)
    } else {
        // As the writer orders them: each sample before the events past its index (its
        // index is at least the events written before it).
        t.events_sp(0, &events[..2])
            .samples(&samples[..3])
            .events_sp(0, &events[2..4])
            .samples(&samples[3..4])
            .events_sp(0, &events[4..])
            .samples(&samples[4..])
    };
    run(&t.end(0))
}

#[test]
fn samples_are_credited_to_the_stack_at_their_event_index() {
    let samples = [
        (0, 0, 1_000, Some(50)),  // registration: starts the clock
        (0, 2, 1_100, Some(150)), // [Main, A]
        (0, 2, 1_300, Some(160)), // [Main, A] (waiting: 10 ns of CPU in 200 ns)
        (0, 4, 1_400, Some(260)), // [Main, B]
        (0, 6, 1_500, Some(270)), // [] outside traced code
    ];
    for samples_first in [true, false] {
        let a = sampled_trace(&samples, samples_first);
        let s = a.sampled.as_ref().expect("sampled times");
        let f = |i| *s.function(FunctionIdx(i)).unwrap();
        assert_eq!((s.samples, s.unmatched), (5, 0));
        assert_eq!((s.wall_ns, s.outside_ns), (500, 100));
        assert_eq!((s.cpu_ns, s.outside_cpu_ns), (220, 10));
        assert_eq!((f(0).inclusive_ns, f(0).exclusive_ns), (400, 0));
        assert_eq!((f(1).inclusive_ns, f(1).exclusive_ns), (300, 300));
        assert_eq!((f(2).inclusive_ns, f(2).exclusive_ns), (100, 100));
        assert_eq!((f(1).inclusive_cpu_ns, f(2).inclusive_cpu_ns), (110, 100));
        assert_eq!(
            (f(1).samples, f(1).top_samples, f(0).top_samples),
            (2, 2, 0)
        );
        assert!((s.inclusive_share(FunctionIdx(1)) - 0.6).abs() < 1e-9);
        // The call tree: Main with A and B below it.
        let nodes = s.nodes();
        assert_eq!(nodes.len(), 3);
        assert_eq!((nodes[0].func.0, nodes[0].parent), (0, None));
        assert_eq!(nodes[0].stat.inclusive_ns, 400);
        assert_eq!((nodes[1].func.0, nodes[1].parent), (1, Some(0)));
        assert_eq!((nodes[2].func.0, nodes[2].stat.exclusive_ns), (2, 100));
        // Counts stay exact.
        assert_eq!((fs(&a, 1).calls, fs(&a, 2).calls), (1, 1));
    }
}

#[test]
fn recursion_is_credited_once_and_unreached_samples_are_counted() {
    let bytes = b_with(&["F"], timed_info("sampled", 1000))
        .thread(0, 10)
        .samples(&[(0, 0, 0, None), (0, 3, 100, None), (0, 9, 200, None)])
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x300),
                (0, Enter, 0, 0x200),
                (0, Enter, 0, 0x100),
                (0, Leave, 0, 0x100),
            ],
        )
        .end(0);
    let a = run(&bytes);
    let s = a.sampled.as_ref().unwrap();
    let f = s.function(FunctionIdx(0)).unwrap();
    // One sample with F three deep: 100 ns inclusive, not 300.
    assert_eq!((f.inclusive_ns, f.exclusive_ns, f.samples), (100, 100, 1));
    assert_eq!(s.nodes().len(), 3, "one node per depth");
    assert_eq!((s.samples, s.unmatched, s.has_cpu), (2, 1, false));
}

#[test]
fn a_first_sample_past_registration_stands_for_one_period() {
    let bytes = b_with(&["Main"], timed_info("sampled", 500))
        .thread(0, 10)
        .events_sp(0, &[(0, Enter, 0, 0x100)])
        .samples(&[(0, 1, 7_000_000, None), (0, 1, 9_000_000, None)])
        .end(0);
    let s = run(&bytes).sampled.unwrap();
    assert_eq!(s.function(FunctionIdx(0)).unwrap().inclusive_ns, 4_000_000);
}

#[test]
fn samples_beside_exact_timestamps_are_estimated_too() {
    let mut info = timed_info("exact", 1000);
    info.extra
        .push((info_key::SAMPLING.into(), info_key::YES.into()));
    let bytes = b_with(&["Main"], info)
        .thread(0, 10)
        .samples(&[(0, 0, 0, None), (0, 1, 1_000, None)])
        .events_sp(0, &[(0, Enter, 0, 0x100), (2_000, Leave, 0, 0x100)])
        .end(2_000);
    let a = run(&bytes);
    assert!(a.has_event_times());
    assert_eq!(fs(&a, 0).inclusive_ns, 2_000);
    let s = a.sampled.unwrap();
    assert_eq!(s.function(FunctionIdx(0)).unwrap().inclusive_ns, 1_000);
}
