//! Unit tests of the replay on synthetic traces written with `TraceWriter`.

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
    TraceInfo, TraceWriter,
};

use crate::*;

use EventKind::{Catch, Enter, Leave, Tailcall, Throw, Unwind};

/// Builds a trace in memory.
struct B {
    w: TraceWriter<Vec<u8>>,
}

impl B {
    fn new(funcs: &[&str]) -> Self {
        Self::with_info(funcs, TraceInfo::new(7))
    }
    fn with_info(funcs: &[&str], info: TraceInfo) -> Self {
        let mut w = TraceWriter::new(Vec::new(), &info).unwrap();
        for (i, f) in funcs.iter().enumerate() {
            w.write_function(&FunctionRecord {
                module: "App.dll".into(),
                type_name: "Ns.T".into(),
                method: (*f).into(),
                ..FunctionRecord::new(FunctionIdx(i as u32))
            })
            .unwrap();
        }
        B { w }
    }
    fn thread(mut self, idx: u32, tid: u64) -> Self {
        self.w
            .write_thread(&ThreadRecord::new(ThreadIdx(idx), tid))
            .unwrap();
        self
    }
    fn ev(mut self, thread: u32, evs: &[(u64, EventKind, u32)]) -> Self {
        let evs: Vec<Event> = evs
            .iter()
            .map(|&(ts, kind, f)| Event {
                ts,
                kind,
                func: FunctionIdx(f),
                sp: 0,
            })
            .collect();
        self.w.write_events(ThreadIdx(thread), &evs).unwrap();
        self
    }
    fn dropped(mut self, thread: u32, n: u64) -> Self {
        self.w.write_dropped(ThreadIdx(thread), n).unwrap();
        self
    }
    fn end(mut self, ts: u64) -> Vec<u8> {
        self.w
            .write_end(&EndRecord {
                reason: EndReason::Shutdown,
                ts,
                ..EndRecord::default()
            })
            .unwrap();
        self.w.into_inner()
    }
    fn cut(self) -> Vec<u8> {
        self.w.into_inner()
    }
}

fn run(bytes: &[u8]) -> Analysis {
    analyze(bytes, &Options::default()).unwrap()
}

fn fs(a: &Analysis, f: u32) -> FunctionStats {
    *a.function_stats(FunctionIdx(f)).unwrap()
}

fn edge(a: &Analysis, caller: Option<u32>, callee: u32) -> EdgeStats {
    a.edges()
        .into_iter()
        .find(|(c, f, _)| *c == caller.map(FunctionIdx) && f.0 == callee)
        .map(|(_, _, s)| s)
        .unwrap()
}

/// Records every frame.
#[derive(Default)]
struct Collect(Vec<(ThreadIdx, Frame)>);

impl FrameSink for Collect {
    fn frame(&mut self, _: &Tables, t: ThreadIdx, f: &Frame) -> std::io::Result<()> {
        self.0.push((t, *f));
        Ok(())
    }
}

#[test]
fn balanced_nesting() {
    // A 0..100 { B 10..40 { C 20..30 }, B 50..70 }
    let t = B::new(&["A", "B", "C"]).thread(0, 500).ev(
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
    let t = B::new(&["F"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B", "C"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B", "C"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B"])
        .thread(0, 1)
        .ev(0, &[(0, Enter, 0), (5, Catch, 1), (10, Leave, 0)]);
    let a = run(&t.end(0));
    assert_eq!(fs(&a, 0).unwound, 0);
    assert_eq!(a.totals.frames, 1);
}

#[test]
fn tail_calls() {
    // A 0..40 { B 10..20 tailcalls C 20..30 }
    let t = B::new(&["A", "B", "C"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B", "C", "D"]).thread(0, 1).ev(
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
    let t = B::new(&["A", "B"])
        .thread(0, 1)
        .ev(
            0,
            &[
                (0, Enter, 0),
                (10, Enter, 1),
                (15, Leave, 1),
                (20, Enter, 1),
            ],
        )
        .dropped(0, 1000)
        .ev(
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
    let t = B::new(&["A", "B", "C"])
        .thread(0, 1)
        .thread(1, 2)
        .ev(0, &[(10, Enter, 0), (20, Enter, 1)])
        .ev(1, &[(30, Enter, 2), (100, Leave, 2)]);
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
    let t = B::new(&["A"]).thread(0, 1).ev(0, &[(10, Enter, 0)]);
    let a = run(&t.end(250));
    assert_eq!(fs(&a, 0).inclusive_ns, 240);
    assert_eq!(a.duration_ns(), 240);
}

#[test]
fn many_threads_interleaved() {
    let mut t = B::new(&["Main", "Work", "Leaf"]);
    for i in 0..8 {
        t = t.thread(i, 1000 + u64::from(i));
    }
    // Each thread: Main { (Work { Leaf }) x 50 }, written in interleaved chunks.
    for i in 0..8u32 {
        t = t.ev(i, &[(u64::from(i), Enter, 0)]);
    }
    for round in 0..50u64 {
        for i in 0..8u32 {
            let b = 100 + round * 100 + u64::from(i);
            t = t.ev(
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
        t = t.ev(i, &[(10_000 + u64::from(i) * 2, Leave, 0)]);
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
        let mut t = B::new(&["Main"]).thread(0, 1).thread(1, 2);
        t = t.ev(0, &[(0, Enter, 0), (10, Leave, 0)]);
        t = t.ev(1, &[(0, Enter, 0), (30, Leave, 0)]);
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

#[test]
fn thread_records_update() {
    let mut t = B::new(&["A"]).thread(0, 42);
    t.w.write_thread(&ThreadRecord {
        managed_id: 1,
        name: "Main".into(),
        ..ThreadRecord::new(ThreadIdx(0), 42)
    })
    .unwrap();
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
    let t = B::with_info(&["A"], info)
        .thread(0, 1)
        .ev(0, &[(1100, Enter, 0), (1500, Leave, 0)]);
    let mut sink = Collect::default();
    let a = analyze_with(&t.end(0)[..], &Options::default(), &mut sink).unwrap();
    assert_eq!(fs(&a, 0).inclusive_ns, 1000);
    assert_eq!((sink.0[0].1.start_ns, sink.0[0].1.end_ns), (250, 1250));
}

#[test]
fn truncated_and_corrupt_traces() {
    let t = B::new(&["A"])
        .thread(0, 1)
        .ev(0, &[(0, Enter, 0), (10, Leave, 0)]);
    let full = t.end(0);
    // No end record.
    let t = B::new(&["A"]).thread(0, 1).ev(0, &[(0, Enter, 0)]);
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
    let t = B::new(&["A"]).thread(0, 1).ev(
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
fn sink_sees_children_before_parents_and_call_tree() {
    let t = B::new(&["A", "B", "C"]).thread(0, 1).ev(
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

/// A small deterministic generator for the invariant test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Frames checked against the invariants as they close.
#[derive(Default)]
struct Check {
    frames: u64,
}

impl FrameSink for Check {
    fn frame(&mut self, _: &Tables, _: ThreadIdx, f: &Frame) -> std::io::Result<()> {
        assert!(f.end_ns >= f.start_ns);
        assert!(f.children_ns <= f.duration_ns(), "{f:?}");
        assert_eq!(f.depth == 0, f.parent.is_none());
        self.frames += 1;
        Ok(())
    }
}

fn random_trace(seed: u64, recursive: bool, messy: bool) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let nf = 12u32;
    let names: Vec<String> = (0..nf).map(|i| format!("F{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut b = B::new(&names);
    for t in 0..4 {
        b = b.thread(t, 100 + u64::from(t));
    }
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); 4];
    let mut ts = [0u64; 4];
    for _ in 0..400 {
        let t = rng.next(4) as usize;
        let mut evs = Vec::new();
        for _ in 0..rng.next(20) + 1 {
            ts[t] += rng.next(50);
            let st = &mut stacks[t];
            let r = rng.next(10);
            if r < 5 && st.len() < 30 {
                // Without recursion, callees have higher indices than callers.
                let lo = if recursive {
                    0
                } else {
                    st.last().map_or(0, |f| f + 1)
                };
                if lo < nf {
                    let f = lo + rng.next(u64::from(nf - lo)) as u32;
                    st.push(f);
                    evs.push((ts[t], Enter, f));
                }
            } else if let Some(&f) = st.last() {
                let kind = match (messy, rng.next(12)) {
                    (true, 0) => Unwind,
                    (true, 1) => Tailcall,
                    (true, 2) if st.len() > 2 => {
                        // Leave of a lower frame: the ones above are mismatched.
                        let i = rng.next(st.len() as u64) as usize;
                        let g = st[i];
                        let pos = st.iter().position(|&x| x == g).unwrap_or(i);
                        st.truncate(pos);
                        evs.push((ts[t], Leave, g));
                        continue;
                    }
                    (true, 3) => {
                        evs.push((ts[t], Leave, nf + 1));
                        continue;
                    }
                    (true, 4) => {
                        evs.push((ts[t], Throw, f));
                        continue;
                    }
                    _ => Leave,
                };
                st.pop();
                evs.push((ts[t], kind, f));
            }
        }
        if !evs.is_empty() {
            b = b.ev(t as u32, &evs);
        }
        if messy && rng.next(40) == 0 {
            b = b.dropped(t as u32, 5);
            stacks[t].clear();
        }
    }
    b.end(0)
}

#[test]
fn invariants_hold_on_random_traces() {
    for seed in 1..40u64 {
        for (recursive, messy) in [(false, false), (true, false), (true, true), (false, true)] {
            let bytes = random_trace(seed, recursive, messy);
            let mut check = Check::default();
            let opts = Options {
                call_tree: true,
                ..Options::default()
            };
            let a = analyze_with(&bytes[..], &opts, &mut check).unwrap();
            assert_eq!(check.frames, a.totals.frames);
            let mut excl_sum = 0;
            let mut calls = 0;
            for (_, s) in a.functions() {
                assert!(s.exclusive_ns <= s.inclusive_ns, "seed {seed}: {s:?}");
                assert!(s.max_ns <= s.inclusive_ns);
                excl_sum += s.exclusive_ns;
                calls += s.calls;
            }
            assert_eq!(calls, a.totals.frames);
            // Exclusive times partition the root frames' time.
            assert_eq!(excl_sum, a.totals.root_ns, "seed {seed}");
            let thread_sum: u64 = a.threads().map(|(_, t)| t.inclusive_ns).sum();
            assert_eq!(thread_sum, a.totals.root_ns);
            // Edge calls add up to function calls.
            let edges = a.edges();
            for (f, s) in a.functions() {
                let into: u64 = edges.iter().filter(|e| e.1 == f).map(|e| e.2.calls).sum();
                assert_eq!(into, s.calls);
            }
            if !recursive {
                // A caller's inclusive time covers the time of all its callees.
                for (f, s) in a.functions() {
                    let out: u64 = edges
                        .iter()
                        .filter(|e| e.0 == Some(f))
                        .map(|e| e.2.inclusive_ns)
                        .sum();
                    assert!(
                        out <= s.inclusive_ns,
                        "seed {seed} f {f:?}: {out} > {}",
                        s.inclusive_ns
                    );
                }
            }
            let tree = a.call_tree().unwrap();
            let tree_excl: u64 = tree.nodes().map(|(_, n)| n.exclusive_ns).sum();
            let tree_calls: u64 = tree.nodes().map(|(_, n)| n.calls).sum();
            assert_eq!((tree_excl, tree_calls), (excl_sum, calls));
        }
    }
}

/// Writes one thread record and the events `(ts, kind, func, sp)` per thread (tid 100 +
/// index), then the End record at `end`; returns the trace.
fn threads_and_end(
    mut w: TraceWriter<Vec<u8>>,
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    for (t, evs) in threads.iter().enumerate() {
        w.write_thread(&ThreadRecord::new(ThreadIdx(t as u32), 100 + t as u64))
            .unwrap();
        let evs: Vec<Event> = evs
            .iter()
            .map(|&(ts, kind, f, sp)| Event {
                ts,
                kind,
                func: FunctionIdx(f),
                sp,
            })
            .collect();
        w.write_events(ThreadIdx(t as u32), &evs).unwrap();
    }
    w.write_end(&EndRecord {
        reason: EndReason::Shutdown,
        ts: end,
        ..EndRecord::default()
    })
    .unwrap();
    w.into_inner()
}

/// A trace of functions `(type, method)` in App.dll and events `(ts, kind, func, sp)`.
fn typed_trace(funcs: &[(&str, &str)], threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    for (i, (ty, m)) in funcs.iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: (*ty).into(),
            method: (*m).into(),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    threads_and_end(w, threads, 1_000)
}

/// A classic state machine's continuation may start on another thread before the segment
/// that scheduled it has returned: that segment is still running (its Leave comes), not
/// stale. (Seen under load: the segment was closed as vanished and its Leave unmatched.)
#[test]
fn state_machine_continuation_overlapping_its_scheduler() {
    let trace = typed_trace(
        &[
            ("Ns.T", "Main"),
            ("Ns.T", "Work"),
            ("Ns.T+<Work>d__1", "MoveNext"),
            ("Ns.T", "Leaf"),
        ],
        &[
            &[
                (0, Enter, 0, 0x9000),
                (10, Enter, 1, 0x8f00),
                (20, Enter, 2, 0x8e00),
                // The continuation has started on thread 1 (t=50) when this Leaf runs.
                (90, Enter, 3, 0x8d00),
                (95, Leave, 3, 0x8d00),
                (100, Leave, 2, 0x8e00),
                (110, Leave, 1, 0x8f00),
                (500, Leave, 0, 0x9000),
            ],
            &[
                (50, Enter, 2, 0x5000),
                (60, Enter, 3, 0x4f00),
                (70, Leave, 3, 0x4f00),
                (80, Leave, 2, 0x5000),
            ],
        ],
    );
    let a = run(&trace);
    assert_eq!(a.totals.vanished_frames, 0);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    let mn = fs(&a, 2);
    assert_eq!((mn.calls, mn.segments, mn.resumes), (1, 2, 1), "{mn:?}");
    assert_eq!(fs(&a, 3).calls, 2);
    // The first segment ran its whole length.
    let mut frames = Collect::default();
    analyze_with(&trace[..], &Options::default(), &mut frames).unwrap();
    let first = frames
        .0
        .iter()
        .find(|(t, f)| *t == ThreadIdx(0) && f.func == FunctionIdx(2))
        .unwrap();
    assert_eq!((first.1.start_ns, first.1.end_ns), (20, 100));
}

/// Runtime-async `L3` (thunk 1, variant 2) called from sync `Run` (0), calling plain `L4`
/// (3) from its last segment; `events` per thread are `(ts, kind, func, sp)`.
fn async_trace(threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    use eltrace_trace::FunctionFlags;
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    let funcs = [
        ("Run", 0, 0),
        ("L3", 0x2000, FunctionFlags::ASYNC_THUNK),
        ("L3", 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("L4", 0, 0),
    ];
    for (i, (m, impl_flags, flags)) in funcs.into_iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: "Ns.T".into(),
            method: m.into(),
            token: 0x0600_0001 + if m == "L3" { 1 } else { i as u32 + 10 },
            impl_flags,
            flags: FunctionFlags(FunctionFlags::HOOKED | flags),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    threads_and_end(w, threads, 10_000)
}

/// Two calls of L3, each: first segment on thread 0 (suspends), a pool resume at 0x840 on
/// thread 1 (suspends), a timer resume 0x490 deeper at 0x3b0 on thread 1 (no event shows the
/// 0x840 segment gone), which completes, after calling L4 if `calls_l4`.
fn timer_resumes(first_timer_sp: u64, calls_l4: bool) -> Vec<u8> {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Leave, 1, 0x8f00),
        (2_000, Enter, 1, 0x8f00),
        (2_010, Enter, 2, 0x8eb0),
        (2_020, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let pool: Vec<(u64, EventKind, u32, u64)> = [
        (100, Enter, 2, 0x840),
        (200, Enter, 2, first_timer_sp),
        (210, Enter, 3, first_timer_sp - 0x120),
        (220, Leave, 3, first_timer_sp - 0x120),
        (230, Leave, 2, first_timer_sp),
        (2_100, Enter, 2, 0x840),
        (2_200, Enter, 2, 0x3b0),
        (2_210, Enter, 3, 0x290),
        (2_220, Leave, 3, 0x290),
        (2_230, Leave, 2, 0x3b0),
    ]
    .into_iter()
    .filter(|&(_, _, f, _)| calls_l4 || f != 3)
    .collect();
    async_trace(&[main, &pool])
}

/// The timer resume comes at a distance below the top L3 segment that no direct call from L3
/// uses (L3 → L4 is 0x120): a resume, not a recursion. Before any call from L3 returned, the
/// thread's next events show that distance (L4 called from the resumed segment). Without any
/// such evidence the first one is ambiguous: counted as a call, and flagged.
#[test]
fn timer_resume_below_a_suspended_segment() {
    let exact = |a: &Analysis| {
        let l3 = fs(a, 2);
        assert_eq!(a.totals.unmatched_leaves, 0);
        assert_eq!(a.totals.mismatched_frames, 0);
        assert_eq!(a.totals.vanished_frames, 0);
        assert_eq!(
            (
                l3.calls,
                l3.segments,
                l3.resumes,
                l3.suspensions,
                l3.ambiguous_calls
            ),
            (2, 6, 4, 4, 0),
            "{l3:?}"
        );
    };
    // L3's frame size from the look-ahead (L4 called at 0x290 from the segment at 0x3b0).
    exact(&run(&timer_resumes(0x3b0, true)));
    // The thread's dispatch stack pointer is known at the second timer resume.
    exact(&run(&timer_resumes(0x840, true)));
    // No call from L3 at all: the first timer resume may be a recursion.
    let a = run(&timer_resumes(0x3b0, false));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(l3.segments, 6);
    // Flagged: the count of calls may be off (here the bogus call leaves the first one
    // waiting, and the second call's resume is attached to it by order).
    assert_eq!(l3.ambiguous_calls, 1, "{l3:?}");
}

/// A call that suspends and is never resumed: one suspension, pending at the end (counted
/// once, not again when the pending call is settled).
#[test]
fn suspended_and_never_resumed() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let a = run(&async_trace(&[main]));
    let l3 = fs(&a, 2);
    assert_eq!(
        (l3.calls, l3.segments, l3.suspensions, l3.pending_at_end),
        (1, 1, 1, 1),
        "{l3:?}"
    );
}

/// E1 → E2 → E3 (runtime-async variants 1, 2, 3 called from Run 0). E3 resumes on thread 1
/// and throws; the exception passes E2 and E1 resumes and catches it, all before thread 0's
/// next event shows the three first segments gone (a preempted thread). E2 suspended once and
/// is over when E1 resumes: nothing pending, one suspension each.
#[test]
fn caller_resumes_before_its_callee_segment_is_seen_to_end() {
    use eltrace_trace::FunctionFlags;
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    let funcs = [
        ("Run", 0, 0),
        ("E1", 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("E2", 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("E3", 0x2000, FunctionFlags::ASYNC_VARIANT),
    ];
    for (i, (m, impl_flags, flags)) in funcs.into_iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: "Ns.T".into(),
            method: m.into(),
            token: 0x0600_0010 + i as u32,
            impl_flags,
            flags: FunctionFlags(FunctionFlags::HOOKED | flags),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    let main = [
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8e00),
        (30, Enter, 3, 0x8d00),
        (500, Leave, 0, 0x9000),
    ];
    let pool = [
        (100, Enter, 3, 0x840),
        (110, Unwind, 3, 0),
        (200, Enter, 1, 0x840),
        (210, Leave, 1, 0x840),
    ];
    let a = run(&threads_and_end(w, &[&main, &pool], 1_000));
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    let row = |f| {
        let s = fs(&a, f);
        (s.calls, s.segments, s.suspensions, s.pending_at_end)
    };
    assert_eq!(row(1), (1, 2, 1, 0), "E1 {:?}", fs(&a, 1));
    assert_eq!(row(2), (1, 1, 1, 0), "E2 {:?}", fs(&a, 2));
    assert_eq!(row(3), (1, 2, 1, 0), "E3 {:?}", fs(&a, 3));
}

/// Two calls of L3 suspend on thread 0 (A, then B). On thread 1, A resumes at the pool's
/// dispatch (0x840) and suspends with no event showing it; then a timer resume comes 0x150
/// deeper, on top of A's segment, while B waits. L3's direct calls go 0x120 deeper (L4): this
/// Enter did not come from A's segment, it is B's resume, not a recursive call.
#[test]
fn deeper_resume_over_a_segment_while_others_wait() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (22, Enter, 3, 0x8d90),
        (24, Leave, 3, 0x8d90),
        (30, Leave, 1, 0x8f00),
        (40, Enter, 1, 0x8f00),
        (50, Enter, 2, 0x8eb0),
        (60, Leave, 1, 0x8f00),
        (5_000, Leave, 0, 0x9000),
    ];
    let pool: &[(u64, EventKind, u32, u64)] = &[
        (100, Enter, 2, 0x840),
        (200, Enter, 2, 0x6f0),
        (210, Enter, 3, 0x5d0),
        (220, Leave, 3, 0x5d0),
        (230, Leave, 2, 0x6f0),
        (300, Enter, 2, 0x840),
        (310, Enter, 3, 0x720),
        (320, Leave, 3, 0x720),
        (330, Leave, 2, 0x840),
    ];
    let a = run(&async_trace(&[main, pool]));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(a.totals.vanished_frames, 0);
    assert_eq!(
        (
            l3.calls,
            l3.segments,
            l3.resumes,
            l3.suspensions,
            l3.pending_at_end
        ),
        (2, 5, 3, 3, 0),
        "{l3:?}"
    );
}

/// Thousands of short-lived threads, each with a burst of events: a thread's reorder queue
/// gives its memory back once analysed (a 10-minute soak with 10858 threads took over 12 GiB
/// in `eltrace report` before), and the analysis keeps only threads with queued events ready.
#[test]
fn many_short_threads_keep_memory_bounded() {
    const THREADS: u32 = 400;
    const CALLS: u64 = 1_000;
    let mut b = B::new(&["Run", "Step"]);
    for t in 0..THREADS {
        b = b.thread(t, 1_000 + t as u64);
        let base = t as u64 * 1_000_000_000;
        let mut evs = vec![(base, Enter, 0)];
        for i in 0..CALLS {
            evs.push((base + 10 + 4 * i, Enter, 1));
            evs.push((base + 12 + 4 * i, Leave, 1));
        }
        evs.push((base + 10 + 4 * CALLS, Leave, 0));
        b = b.ev(t, &evs);
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

/// A runtime-async method that awaits itself directly (a recursion) before any call from it
/// returned: the look-ahead finds its frame size from a later direct call (L4 from the inner
/// frame) equal to the recursion's distance, so the inner Enter is a new call, not a resume.
#[test]
fn direct_async_recursion_is_a_call() {
    let main: &[(u64, EventKind, u32, u64)] = &[
        (0, Enter, 0, 0x9000),
        (10, Enter, 1, 0x8f00),
        (20, Enter, 2, 0x8eb0),
        (30, Enter, 2, 0x8e30),
        (40, Enter, 3, 0x8db0),
        (50, Leave, 3, 0x8db0),
        (60, Leave, 2, 0x8e30),
        (70, Leave, 2, 0x8eb0),
        (80, Leave, 1, 0x8f00),
        (90, Leave, 0, 0x9000),
    ];
    let a = run(&async_trace(&[main]));
    let l3 = fs(&a, 2);
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(
        (l3.calls, l3.segments, l3.resumes, l3.ambiguous_calls),
        (2, 2, 0, 0),
        "{l3:?}"
    );
}
