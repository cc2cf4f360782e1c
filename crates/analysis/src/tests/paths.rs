//! The same results whichever way they are computed: `analyze_with`, whose reading thread
//! converts ticks into ns, against `Analyzer::record` on one thread; the clock's clamp of a
//! thread's times; and the shadow stack's links between frames of one function against a
//! scan of the whole stack.

use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::TraceInfo;

use super::build::*;
use crate::stack::ThreadState;
use crate::*;

/// Three threads of random nested calls in chunks, with ticks of 2.5 ns from tick 1000, and
/// now and then a chunk that starts before the thread's previous one ended (its times are
/// clamped).
fn random_ticks_trace(seed: u64) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let names: Vec<String> = (0..10).map(|i| format!("F{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let info = TraceInfo {
        start_ticks: 1000,
        ns_per_tick: 2.5,
        ..TraceInfo::new(7)
    };
    let mut t = b_with(&names, info);
    for th in 0..3 {
        t = t.thread(th, 100 + u64::from(th));
    }
    let mut stacks: Vec<Vec<u32>> = vec![Vec::new(); 3];
    let mut ts = [1000u64; 3];
    for _ in 0..300 {
        let th = rng.next(3) as usize;
        if rng.next(8) == 0 {
            ts[th] = ts[th].saturating_sub(rng.next(200));
        }
        let mut evs = Vec::new();
        for _ in 0..rng.next(12) + 1 {
            ts[th] += rng.next(40);
            let st = &mut stacks[th];
            if rng.next(2) == 0 && st.len() < 20 {
                let f = rng.next(10) as u32;
                st.push(f);
                evs.push((ts[th], Enter, f));
            } else if let Some(f) = st.pop() {
                evs.push((ts[th], Leave, f));
            }
        }
        t = t.events(th as u32, &evs);
    }
    t.end(ts.iter().copied().max().unwrap_or(0) + 10)
}

/// What the tests compare of two analyses.
fn summary(a: &Analysis) -> String {
    let mut edges = a.edges();
    edges.sort_by_key(|(c, f, _)| (c.map(|c| c.0), f.0));
    let functions: Vec<_> = a.functions().collect();
    let threads: Vec<_> = a.threads().collect();
    format!("{:?}\n{functions:?}\n{threads:?}\n{edges:?}", a.totals)
}

#[test]
fn the_reading_threads_clock_gives_the_same_analysis() {
    for seed in 1..=20 {
        let bytes = random_ticks_trace(seed);
        let (direct, direct_frames) = analyse_records(&bytes, &Options::default(), true);
        let mut sink = Collect::default();
        let read = analyze_with(&bytes[..], &Options::default(), &mut sink).unwrap();
        assert_eq!(summary(&read), summary(&direct), "seed {seed}");
        assert_eq!(sink.0.len(), direct_frames.len(), "seed {seed}");
        for (a, b) in sink.0.iter().zip(&direct_frames) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "seed {seed}");
        }
        assert!(direct.totals.events > 0);
    }
}

/// A chunk that starts before the thread's previous chunk ended (ticks of 2.5 ns from tick
/// 1000): its times are taken as the previous chunk's last, so time never goes back on a
/// thread.
#[test]
fn a_threads_times_never_go_back_across_chunks() {
    let info = TraceInfo {
        start_ticks: 1000,
        ns_per_tick: 2.5,
        ..TraceInfo::new(7)
    };
    let t = b_with(&["A", "B"], info)
        .thread(0, 100)
        .events(0, &[(1000, Enter, 0), (1080, Leave, 0)])
        .events(0, &[(1040, Enter, 1), (1100, Leave, 1)]);
    let a = run(&t.end(1200));
    // A: 0..200 ns. B's Enter at tick 1040 (100 ns) is taken as 200 ns; its Leave is at 250.
    assert_eq!(fs(&a, 0).inclusive_ns, 200);
    assert_eq!(fs(&a, 1).inclusive_ns, 50);
    assert_eq!(a.totals.root_ns, 250);
}

#[test]
fn frame_links_tell_outer_frames_as_a_scan_does() {
    // Few functions: recursion, mutual recursion and shared callees are common. More than
    // the stack's buckets: functions share buckets, and the chains hold several functions.
    for (funcs, seed) in [(5, 42), (300, 43), (5000, 44)] {
        let mut rng = Lcg(seed);
        let mut st = ThreadState::default();
        let mut pushes = 0;
        for _ in 0..20_000 {
            if rng.next(2) == 0 && st.stack.len() < 40 {
                let f = rng.next(funcs) as u32;
                st.push(f, 0, 0, None);
                pushes += 1;
                let n = st.stack.len() - 1;
                let caller = |i: usize| (i > 0).then(|| st.stack[i - 1].func);
                let same_below = (0..n).any(|i| st.stack[i].func == f);
                let pair_below = (0..n).any(|i| st.stack[i].func == f && caller(i) == caller(n));
                let top = &st.stack[n];
                assert_eq!(top.outer, !same_below, "{funcs} functions, push {pushes}");
                assert_eq!(
                    top.edge_outer, !pair_below,
                    "{funcs} functions, push {pushes}"
                );
            } else if rng.next(2) == 0 {
                if let Some(o) = st.pop() {
                    assert_eq!(
                        st.has_frame_of(o.func),
                        st.stack.iter().any(|p| p.func == o.func)
                    );
                }
            } else if st.stack.last().is_some_and(|o| o.segment.is_none()) {
                st.pop_plain();
            }
            for f in (0..funcs as u32).step_by(funcs as usize / 5) {
                assert_eq!(st.has_frame_of(f), st.stack.iter().any(|p| p.func == f));
            }
            if let Some(top) = st.stack.last() {
                assert!(st.has_frame_of(top.func));
            }
        }
    }
}
