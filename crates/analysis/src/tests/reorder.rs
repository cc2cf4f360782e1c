//! Many threads: chunks interleaved in the file, the thread filter, and the reorder queues'
//! memory with thousands of short-lived threads.

use eltrace_trace::EventKind::{Enter, Leave};

use super::build::*;
use crate::*;

#[test]
fn many_threads_interleaved() {
    let mut t = b(&["Main", "Work", "Leaf"]);
    for i in 0..8 {
        t = t.thread(i, 1000 + u64::from(i));
    }
    // Each thread: Main { (Work { Leaf }) x 50 }, written in interleaved chunks.
    for i in 0..8u32 {
        t = t.events(i, &[(u64::from(i), Enter, 0)]);
    }
    for round in 0..50u64 {
        for i in 0..8u32 {
            let b = 100 + round * 100 + u64::from(i);
            t = t.events(
                i,
                &[
                    (b, Enter, 1),
                    (b + 10, Enter, 2),
                    (b + 30, Leave, 2),
                    (b + 50, Leave, 1),
                ],
            );
        }
    }
    for i in 0..8u32 {
        t = t.events(i, &[(10_000 + u64::from(i) * 2, Leave, 0)]);
    }
    let a = run(&t.end(0));
    assert_eq!(a.threads().count(), 8);
    for (idx, th) in a.threads() {
        assert_eq!(th.events, 2 + 50 * 4);
        assert_eq!(th.max_depth, 3);
        assert_eq!(th.inclusive_ns, 10_000 + u64::from(idx.0));
        assert_eq!(a.tables.threads.os_tid(idx), Some(1000 + u64::from(idx.0)));
    }
    assert_eq!(fs(&a, 1).calls, 400);
    assert_eq!(fs(&a, 1).inclusive_ns, 400 * 50);
    assert_eq!(fs(&a, 2).exclusive_ns, 400 * 20);
    assert_eq!(a.totals.events, 8 * 202);
    assert_eq!(a.totals.root_ns, (0..8).map(|i| 10_000 + i).sum::<u64>());

    // Thread filter by OS tid.
    let bytes = {
        let mut t = b(&["Main"]).thread(0, 1).thread(1, 2);
        t = t.events(0, &[(0, Enter, 0), (10, Leave, 0)]);
        t = t.events(1, &[(0, Enter, 0), (30, Leave, 0)]);
        t.end(0)
    };
    let opts = Options {
        threads: Some(vec![2]),
        ..Options::default()
    };
    let a = analyze(&bytes[..], &opts).unwrap();
    assert_eq!(a.threads().count(), 1);
    assert_eq!(fs(&a, 0).inclusive_ns, 30);
    assert_eq!(a.totals.events, 4);
    assert_eq!(a.totals.analysed_events, 2);
}

/// Thousands of short-lived threads, each with a burst of events: a thread's reorder queue
/// gives its memory back once analysed (a 10-minute soak with 10858 threads took over 12 GiB
/// in `eltrace report` before), and the analysis keeps only threads with queued events ready.
#[test]
fn many_short_threads_keep_memory_bounded() {
    const THREADS: u32 = 400;
    const CALLS: u64 = 1_000;
    let mut b = b(&["Run", "Step"]);
    for t in 0..THREADS {
        b = b.thread(t, 1_000 + t as u64);
        let base = t as u64 * 1_000_000_000;
        let mut evs = vec![(base, Enter, 0)];
        for i in 0..CALLS {
            evs.push((base + 10 + 4 * i, Enter, 1));
            evs.push((base + 12 + 4 * i, Leave, 1));
        }
        evs.push((base + 10 + 4 * CALLS, Leave, 0));
        b = b.events(t, &evs);
    }
    let bytes = b.end(THREADS as u64 * 1_000_000_000);
    let mut reader = eltrace_trace::TraceReader::new(&bytes[..]).unwrap();
    let mut an = Analyzer::new(&Options::default());
    let mut sink = NullSink;
    let mut peak = 0;
    while let Some(rec) = reader.next_record().unwrap() {
        an.record(rec, &mut sink).unwrap();
        let (cap, ready) = an.queued_capacity();
        peak = peak.max(cap);
        assert!(ready <= 2, "{ready} threads ready");
    }
    // Threads 1 s apart: at most the current thread and the one before it hold events
    // (a 250 ms reorder window), each at most its burst.
    assert!(
        peak <= 4 * (2 * CALLS as usize + 2),
        "peak queue capacity {peak}"
    );
    let a = an.finish(false, &mut sink).unwrap();
    assert_eq!(fs(&a, 1).calls, THREADS as u64 * CALLS);
    assert_eq!(a.totals.mismatched_frames, 0);
}

/// The reorder queue on its own (the sample atop reorder.rs): two threads' chunks read out of
/// time order are handed on in time order, each thread's run up to the other thread's next
/// item, and a run shows the thread's events queued after it.
#[test]
fn reorder_hands_items_on_in_time_order() {
    use crate::reorder::{Reorder, Taken};
    use eltrace_trace::{Event, FunctionIdx};

    let ev = |ts, kind, f| Event {
        ts,
        kind,
        func: FunctionIdx(f),
        sp: 0,
    };
    let mut r = Reorder::default();
    // Nothing is 250 ms older than the newest event: nothing may be handed on yet.
    let limit = r.push_events(
        ThreadIdx(1),
        vec![ev(100, Enter, 0), ev(300, Leave, 0)],
        300,
    );
    assert_eq!(limit, 0);
    r.push_events(
        ThreadIdx(2),
        vec![ev(200, Enter, 1), ev(250, Leave, 1)],
        250,
    );
    let mut runs: Vec<(u32, Vec<u64>, Option<u64>)> = Vec::new();
    let mut run = |t: ThreadIdx, b: &mut crate::reorder::Batch<'_>| {
        let mut items = Vec::new();
        let mut ahead = None;
        while let Some(taken) = b.take() {
            let Taken::Events { from, to } = taken else {
                panic!("a drop: {taken:?}");
            };
            let events = b.events(from, to);
            items.extend(events.iter().map(|e| e.ts));
            // Ahead of the last event taken: the thread's next one.
            ahead = b.ahead().next_event().map(|e| e.ts);
            // Ahead of the first: the rest of the run, then the same.
            let after_first: Vec<u64> = b
                .ahead()
                .after(&events[1..])
                .events()
                .map(|e| e.ts)
                .collect();
            assert_eq!(
                after_first[..events.len() - 1],
                items[items.len() - events.len() + 1..]
            );
        }
        runs.push((t.0, items, ahead));
        Ok::<(), std::convert::Infallible>(())
    };
    r.drain(limit, &mut run).unwrap();
    r.drain(u64::MAX, &mut run).unwrap();
    assert_eq!(
        runs,
        [
            (1, vec![100], Some(300)),
            (2, vec![200, 250], None),
            (1, vec![300], None)
        ]
    );
    assert_eq!(r.queued_capacity().1, 0);
}

/// What lies ahead of the last event a batch took from a chunk is the thread's next chunk
/// (the spent chunk is dropped only at the next take), up to a drop.
#[test]
fn ahead_of_a_chunks_last_event_is_the_next_chunk() {
    use crate::reorder::{Reorder, Taken};
    use eltrace_trace::{Event, FunctionIdx};

    let ev = |ts| Event {
        ts,
        kind: Enter,
        func: FunctionIdx(0),
        sp: 0,
    };
    let mut r = Reorder::default();
    r.push_events(ThreadIdx(1), vec![ev(100)], 100);
    r.push_events(ThreadIdx(1), vec![ev(150), ev(160)], 160);
    r.push_dropped(ThreadIdx(1), 3);
    r.push_events(ThreadIdx(1), vec![ev(170)], 170);
    r.push_events(ThreadIdx(2), vec![ev(120)], 120);
    let mut seen = Vec::new();
    r.drain(u64::MAX, |t, b| {
        while let Some(taken) = b.take() {
            let ahead = b.ahead();
            let (next, later) = (
                ahead.next_event().map(|e| e.ts),
                ahead.events().map(|e| e.ts).collect::<Vec<_>>(),
            );
            seen.push((t.0, taken, next, later));
        }
        Ok::<(), std::convert::Infallible>(())
    })
    .unwrap();
    let ev_run = |from, to| Taken::Events { from, to };
    assert_eq!(
        seen,
        [
            (1, ev_run(0, 1), Some(150), vec![150, 160]),
            (2, ev_run(0, 1), None, vec![]),
            (1, ev_run(0, 2), None, vec![]),
            (1, Taken::Dropped(3), Some(170), vec![170]),
            (1, ev_run(0, 1), None, vec![]),
        ]
    );
}
