//! The statistics' helpers on their own: each counter of `Stats::count` adds to one field of
//! the totals and the field of the same meaning in the thread's statistics, and to nothing
//! else.

use eltrace_trace::ThreadIdx;

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
        let mut stats = Stats::new(false);
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
