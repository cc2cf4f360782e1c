//! The statistics' helpers on their own: each counter of `Stats::count` adds to one field of
//! the totals and the field of the same meaning in the thread's statistics, and to nothing
//! else; frames and root time stay with their thread when the replay switches threads.

use eltrace_trace::EventKind::{self, Enter, Leave};
use eltrace_trace::ThreadIdx;

use super::build::{b, run};
use crate::stats::{Count, Stats};

/// The fields of a `{:?}`-printed struct of numbers that are not 0, as `name=value`.
fn nonzero(debug: &str) -> Vec<String> {
    let inner = debug
        .split_once('{')
        .map_or("", |(_, r)| r.trim_end_matches('}'));
    inner
        .split(',')
        .filter_map(|f| f.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(_, v)| *v != "0")
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

#[test]
fn count_adds_to_the_total_and_the_thread_alike() {
    let cases = [
        (Count::Frames, "frames", "frames"),
        (Count::RootNs, "root_ns", "inclusive_ns"),
        (Count::OpenAtEnd, "open_frames_at_end", "open_frames_at_end"),
        (Count::Lost, "lost_frames", "lost_frames"),
        (Count::Mismatched, "mismatched_frames", "mismatched_frames"),
        (
            Count::UnmatchedLeaves,
            "unmatched_leaves",
            "unmatched_leaves",
        ),
        (Count::Suspended, "suspended_frames", "suspended_frames"),
        (Count::Vanished, "vanished_frames", "vanished_frames"),
        (Count::Throws, "throws", "throws"),
    ];
    for (what, total, per_thread) in cases {
        let mut stats = Stats::new(false, false);
        stats.count(ThreadIdx(3), what, 5);
        stats.count(ThreadIdx(4), what, 2);
        assert_eq!(
            nonzero(&format!("{:?}", stats.totals)),
            [format!("{total}=7")],
            "{what:?}"
        );
        let t3 = stats.threads.get(3).unwrap();
        assert_eq!(
            nonzero(&format!("{t3:?}")),
            [format!("{per_thread}=5")],
            "{what:?}"
        );
    }
}

/// Frames, root time and depth are tallied per thread while its events are replayed: threads
/// handed on in turn, a few events at a time, each get their own.
#[test]
fn frames_and_root_time_stay_with_their_thread_when_threads_alternate() {
    let mut t = b(&["Main", "Work", "Leaf"]);
    for i in 0..3 {
        t = t.thread(i, 100 + u64::from(i));
    }
    // Thread i: Main { Work { Leaf } x (i + 1) }, its events interleaved in time with the
    // others' (one chunk per event), so that the replay switches thread at every event.
    let mut per_thread: Vec<Vec<(u64, EventKind, u32)>> = Vec::new();
    for i in 0..3u64 {
        let mut evs = vec![(i, Enter, 0)];
        for k in 0..=i {
            let at = 10 + k * 40 + i;
            evs.extend([(at, Enter, 1), (at + 10, Enter, 2), (at + 20, Leave, 2)]);
            evs.push((at + 30, Leave, 1));
        }
        evs.push((200 + i, Leave, 0));
        per_thread.push(evs);
    }
    let mut all: Vec<(u64, u32, EventKind, u32)> = per_thread
        .iter()
        .enumerate()
        .flat_map(|(i, evs)| evs.iter().map(move |&(ts, k, f)| (ts, i as u32, k, f)))
        .collect();
    all.sort_by_key(|&(ts, i, _, _)| (ts, i));
    for (ts, i, k, f) in all {
        t = t.events(i, &[(ts, k, f)]);
    }
    let a = run(&t.end(300));
    for (idx, th) in a.threads() {
        let i = u64::from(idx.0);
        assert_eq!(th.frames, 1 + 2 * (i + 1), "thread {i}");
        assert_eq!(th.inclusive_ns, 200, "thread {i}");
        assert_eq!(th.max_depth, 3, "thread {i}");
    }
    assert_eq!(a.totals.frames, 3 + 2 * 6);
    assert_eq!(a.totals.root_ns, 600);
}

/// The edges kept with their callee (and, past four callers, in a hash map) come out as a hash
/// map of every edge filled in the order the edges were first seen would: the same counts,
/// the same iteration order.
#[test]
fn edges_kept_with_their_callee_are_a_hash_map_in_first_seen_order() {
    use super::build::Lcg;
    use crate::fxmap::FxHashMap;
    use crate::model::{EdgeStats, ROOT, edge_key};
    use crate::stats::Edges;

    let mut rng = Lcg(7);
    let mut edges = Edges::default();
    let mut reference: FxHashMap<u64, EdgeStats> = FxHashMap::default();
    for _ in 0..20_000 {
        // Up to 9 callers of a callee (ROOT among them): more than the four kept inline.
        let callee = rng.next(50) as u32;
        let caller = match rng.next(9) {
            0 => ROOT,
            c => (callee + c as u32 * 7) % 60,
        };
        let dur = rng.next(1000);
        let es = edges.get(caller, callee);
        es.calls += 1;
        es.inclusive_ns += dur;
        let r = reference.entry(edge_key(caller, callee)).or_default();
        r.calls += 1;
        r.inclusive_ns += dur;
    }
    let map = edges.into_map();
    assert!(map.len() > 50 * 4, "{} edges", map.len());
    let got: Vec<_> = map.iter().collect();
    let want: Vec<_> = reference.iter().collect();
    assert_eq!(got, want);
}
