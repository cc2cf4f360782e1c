//! The synchronous replay: nesting, recursion, exceptions, tail calls, mismatched and
//! unmatched Leaves, drops, frames open at the end, the sink's order and the call tree.

use eltrace_trace::EventKind::{Catch, Enter, Leave, Tailcall, Throw, Unwind};

use super::build::*;
use crate::*;

#[test]
fn balanced_nesting() {
    // A 0..100 { B 10..40 { C 20..30 }, B 50..70 }
    let t = b(&["A", "B", "C"]).thread(0, 500).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 2),
            (30, Leave, 2),
            (40, Leave, 1),
            (50, Enter, 1),
            (70, Leave, 1),
            (100, Leave, 0),
        ],
    );
    let a = run(&t.end(100));
    assert!(!a.truncated);
    assert_eq!(a.end_reason(), "shutdown");
    let (fa, fb, fc) = (fs(&a, 0), fs(&a, 1), fs(&a, 2));
    assert_eq!((fa.calls, fa.inclusive_ns, fa.exclusive_ns), (1, 100, 50));
    assert_eq!((fb.calls, fb.inclusive_ns, fb.exclusive_ns), (2, 50, 40));
    assert_eq!((fc.calls, fc.inclusive_ns, fc.exclusive_ns), (1, 10, 10));
    assert_eq!(fb.max_ns, 30);
    let th = a.thread_stats(ThreadIdx(0)).unwrap();
    assert_eq!(
        (th.events, th.inclusive_ns, th.max_depth, th.frames),
        (8, 100, 3, 4)
    );
    assert_eq!(a.totals.events, 8);
    assert_eq!(a.totals.root_ns, 100);
    assert_eq!(a.duration_ns(), 100);
    assert_eq!(a.totals.open_frames_at_end + a.totals.mismatched_frames, 0);
    assert_eq!(
        edge(&a, None, 0),
        EdgeStats {
            calls: 1,
            inclusive_ns: 100
        }
    );
    assert_eq!(
        edge(&a, Some(0), 1),
        EdgeStats {
            calls: 2,
            inclusive_ns: 50
        }
    );
    assert_eq!(
        edge(&a, Some(1), 2),
        EdgeStats {
            calls: 1,
            inclusive_ns: 10
        }
    );
    assert_eq!(a.edges().len(), 3);
}

#[test]
fn recursion_is_not_double_counted() {
    // F 0..100 { F 10..90 { F 20..80 } }
    let t = b(&["F"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 0),
            (20, Enter, 0),
            (80, Leave, 0),
            (90, Leave, 0),
            (100, Leave, 0),
        ],
    );
    let a = run(&t.end(0));
    let f = fs(&a, 0);
    assert_eq!((f.calls, f.inclusive_ns, f.exclusive_ns), (3, 100, 100));
    assert_eq!(
        edge(&a, Some(0), 0),
        EdgeStats {
            calls: 2,
            inclusive_ns: 80
        }
    );
    assert_eq!(
        edge(&a, None, 0),
        EdgeStats {
            calls: 1,
            inclusive_ns: 100
        }
    );
}

#[test]
fn mutual_recursion() {
    // A 0..100 { B 10..90 { A 20..80 { B 30..70 } } }
    let t = b(&["A", "B"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 0),
            (30, Enter, 1),
            (70, Leave, 1),
            (80, Leave, 0),
            (90, Leave, 1),
            (100, Leave, 0),
        ],
    );
    let a = run(&t.end(0));
    let (fa, fb) = (fs(&a, 0), fs(&a, 1));
    assert_eq!((fa.calls, fa.inclusive_ns, fa.exclusive_ns), (2, 100, 40));
    assert_eq!((fb.calls, fb.inclusive_ns, fb.exclusive_ns), (2, 80, 60));
    assert_eq!(
        edge(&a, Some(0), 1),
        EdgeStats {
            calls: 2,
            inclusive_ns: 80
        }
    );
    assert_eq!(
        edge(&a, Some(1), 0),
        EdgeStats {
            calls: 1,
            inclusive_ns: 60
        }
    );
}

#[test]
fn exceptions_unwind_and_catch() {
    // A 0.. { B 10.. { C 20.. throw@25 unwind C@30 } unwind B@35 } catch A@36, leave A@50
    let t = b(&["A", "B", "C"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 2),
            (25, Throw, 2),
            (30, Unwind, 2),
            (35, Unwind, 1),
            (36, Catch, 0),
            (50, Leave, 0),
        ],
    );
    let a = run(&t.end(0));
    assert_eq!(fs(&a, 2).unwound, 1);
    assert_eq!(fs(&a, 1).unwound, 1);
    assert_eq!((fs(&a, 1).inclusive_ns, fs(&a, 2).inclusive_ns), (25, 10));
    assert_eq!(fs(&a, 0).unwound, 0);
    assert_eq!(fs(&a, 0).inclusive_ns, 50);
    assert_eq!(a.totals.throws, 1);
    assert_eq!(a.totals.mismatched_frames + a.totals.unmatched_leaves, 0);

    // A catch with frames still above the catcher closes them.
    let t = b(&["A", "B", "C"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 2),
            (25, Throw, u32::MAX),
            (40, Catch, 0),
            (60, Leave, 0),
        ],
    );
    let mut sink = Collect::default();
    let a = analyze_with(&t.end(0)[..], &Options::default(), &mut sink).unwrap();
    assert_eq!((fs(&a, 1).unwound, fs(&a, 2).unwound), (1, 1));
    assert_eq!(fs(&a, 1).inclusive_ns, 30);
    assert_eq!(fs(&a, 0).inclusive_ns, 60);
    let kinds: Vec<EndKind> = sink.0.iter().map(|(_, f)| f.end).collect();
    assert_eq!(kinds, [EndKind::Catch, EndKind::Catch, EndKind::Leave]);
    // A catch in a function that is not on the stack changes nothing.
    let t = b(&["A", "B"])
        .thread(0, 1)
        .events(0, &[(0, Enter, 0), (5, Catch, 1), (10, Leave, 0)]);
    let a = run(&t.end(0));
    assert_eq!(fs(&a, 0).unwound, 0);
    assert_eq!(a.totals.frames, 1);
}

#[test]
fn tail_calls() {
    // A 0..40 { B 10..20 tailcalls C 20..30 }
    let t = b(&["A", "B", "C"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Tailcall, 1),
            (20, Enter, 2),
            (30, Leave, 2),
            (40, Leave, 0),
        ],
    );
    let a = run(&t.end(0));
    assert_eq!((fs(&a, 1).tailcalls, fs(&a, 1).inclusive_ns), (1, 10));
    assert_eq!(fs(&a, 2).inclusive_ns, 10);
    assert_eq!(fs(&a, 0).exclusive_ns, 20);
    assert_eq!(edge(&a, Some(0), 2).calls, 1);
    assert_eq!(a.totals.mismatched_frames, 0);
}

#[test]
fn leave_mismatch_and_unmatched() {
    // A 0.. { B 10.. { C 20.. } } Leave A @50: B and C close as mismatched. Then Leave D.
    let t = b(&["A", "B", "C", "D"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 2),
            (50, Leave, 0),
            (60, Leave, 3),
            (70, Leave, 0),
        ],
    );
    let mut sink = Collect::default();
    let a = analyze_with(&t.end(0)[..], &Options::default(), &mut sink).unwrap();
    assert_eq!(a.totals.mismatched_frames, 2);
    assert_eq!(a.totals.unmatched_leaves, 2);
    assert_eq!((fs(&a, 1).mismatched, fs(&a, 2).mismatched), (1, 1));
    assert_eq!((fs(&a, 1).inclusive_ns, fs(&a, 2).inclusive_ns), (40, 30));
    assert_eq!(fs(&a, 0).inclusive_ns, 50);
    assert!(a.function_stats(FunctionIdx(3)).is_none());
    let th = a.thread_stats(ThreadIdx(0)).unwrap();
    assert_eq!((th.mismatched_frames, th.unmatched_leaves), (2, 2));
    let order: Vec<(u32, u32, EndKind)> = sink
        .0
        .iter()
        .map(|(_, f)| (f.func.0, f.depth, f.end))
        .collect();
    assert_eq!(
        order,
        [
            (2, 2, EndKind::Mismatched),
            (1, 1, EndKind::Mismatched),
            (0, 0, EndKind::Leave)
        ]
    );
}

#[test]
fn drops_close_the_stack() {
    let t = b(&["A", "B"])
        .thread(0, 1)
        .events(
            0,
            &[
                (0, Enter, 0),
                (10, Enter, 1),
                (15, Leave, 1),
                (20, Enter, 1),
            ],
        )
        .dropped(0, 1000)
        .events(
            0,
            &[
                (500, Leave, 1),
                (600, Leave, 0),
                (700, Enter, 0),
                (800, Leave, 0),
            ],
        );
    let a = run(&t.end(0));
    assert_eq!(a.totals.dropped_events, 1000);
    assert_eq!(a.dropped_events(), 1000);
    assert_eq!(a.totals.lost_frames, 2);
    assert_eq!(a.totals.unmatched_leaves, 2);
    let (fa, fb) = (fs(&a, 0), fs(&a, 1));
    assert_eq!((fa.calls, fa.lost, fa.inclusive_ns), (2, 1, 20 + 100));
    assert_eq!((fb.calls, fb.lost, fb.inclusive_ns), (2, 1, 5));
    let th = a.thread_stats(ThreadIdx(0)).unwrap();
    assert_eq!((th.lost_frames, th.dropped_events), (2, 1000));
    assert_eq!(th.inclusive_ns, 120);
}

#[test]
fn open_frames_run_to_the_end() {
    let t = b(&["A", "B", "C"])
        .thread(0, 1)
        .thread(1, 2)
        .events(0, &[(10, Enter, 0), (20, Enter, 1)])
        .events(1, &[(30, Enter, 2), (100, Leave, 2)]);
    let bytes = t.end(0);
    let a = run(&bytes);
    assert_eq!(a.totals.open_frames_at_end, 2);
    let (fa, fb) = (fs(&a, 0), fs(&a, 1));
    assert_eq!(
        (fa.calls, fa.open_at_end, fa.inclusive_ns, fa.exclusive_ns),
        (1, 1, 90, 10)
    );
    assert_eq!((fb.calls, fb.open_at_end, fb.inclusive_ns), (1, 1, 80));
    assert_eq!(a.thread_stats(ThreadIdx(0)).unwrap().open_frames_at_end, 2);
    assert_eq!(a.thread_stats(ThreadIdx(1)).unwrap().open_frames_at_end, 0);
    assert_eq!(a.duration_ns(), 90);

    // The end record's timestamp is the trace's last timestamp when it is later.
    let t = b(&["A"]).thread(0, 1).events(0, &[(10, Enter, 0)]);
    let a = run(&t.end(250));
    assert_eq!(fs(&a, 0).inclusive_ns, 240);
    assert_eq!(a.duration_ns(), 240);
}

#[test]
fn sink_sees_children_before_parents_and_call_tree() {
    let t = b(&["A", "B", "C"]).thread(0, 1).events(
        0,
        &[
            (0, Enter, 0),
            (10, Enter, 1),
            (20, Enter, 2),
            (30, Leave, 2),
            (40, Leave, 1),
            (50, Enter, 2),
            (55, Leave, 2),
            (100, Leave, 0),
        ],
    );
    let mut sink = Collect::default();
    let opts = Options {
        call_tree: true,
        ..Options::default()
    };
    let a = analyze_with(&t.end(0)[..], &opts, &mut sink).unwrap();
    let seen: Vec<(u32, u32, Option<u32>)> = sink
        .0
        .iter()
        .map(|(_, f)| (f.func.0, f.depth, f.parent.map(|p| p.0)))
        .collect();
    assert_eq!(
        seen,
        [
            (2, 2, Some(1)),
            (1, 1, Some(0)),
            (2, 1, Some(0)),
            (0, 0, None)
        ]
    );
    let tree = a.call_tree().unwrap();
    assert_eq!(tree.len(), 4);
    let mut paths: Vec<(Vec<u32>, u64, u64)> = tree
        .nodes()
        .map(|(id, n)| {
            (
                tree.path(id).iter().map(|f| f.0).collect(),
                n.calls,
                n.exclusive_ns,
            )
        })
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            (vec![0], 1, 65),
            (vec![0, 1], 1, 20),
            (vec![0, 1, 2], 1, 10),
            (vec![0, 2], 1, 5)
        ]
    );
}
