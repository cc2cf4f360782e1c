//! The replay's quick path against the full rules, and threads replayed ahead of the others
//! against the replay in time order: random traces of every kind of frame (ordinary, async
//! state machines, runtime-async thunks and variants, roles undecided, iterators), with frames
//! gone by their stack pointer, mismatched and unmatched Leaves, tail calls, exceptions,
//! values and drops, analysed both ways: the same statistics (and, for the quick path, the
//! same frames). Values come after their event, as in traces without INFO `values_first`, or
//! before it, as the profiler writes them now: the same results either way.

use eltrace_trace::EventKind::{self, Catch, Enter, Leave, Tailcall, Throw, Unwind, Value};
use eltrace_trace::{FunctionFlags, TraceInfo, ValueStatus};

use super::build::*;
use crate::*;

/// The functions: `(type, method, token, impl flags, flags)`.
const FUNCS: [(&str, &str, u32, u32, u32); 12] = [
    ("Ns.T", "Run", 1, 0, 0),
    ("Ns.T", "A", 2, 0, 0),
    ("Ns.T", "B", 3, 0, 0),
    ("Ns.T+<Work>d__1", "MoveNext", 4, 0, 0),
    ("Ns.T", "Work", 5, 0, 0),
    ("Ns.T+<Seq>d__2", "MoveNext", 6, 0, 0),
    ("Ns.T+<Seq>d__2", "GetEnumerator", 7, 0, 0),
    ("Ns.T+<Seq>d__2", "get_Current", 8, 0, 0),
    ("Ns.T", "L3", 9, 0x2000, FunctionFlags::ASYNC_THUNK),
    ("Ns.T", "L3", 9, 0x2000, FunctionFlags::ASYNC_VARIANT),
    ("Ns.T", "U", 10, 0x2000, 0),
    ("Ns.T", "U", 10, 0x2000, 0),
];

/// A random trace of three threads; `async_fns`: the runtime-async functions (8-11) take
/// part (else no function is a variant, and the rules about variants stay quiet);
/// `overlap`: each thread keeps its own clock, so that the threads' times overlap (else each
/// chunk starts where the one before ended); `values_first`: Value events come before their
/// Enter or Leave (INFO `values_first`), else after it (the same trace otherwise).
fn random_trace(seed: u64, async_fns: bool, overlap: bool, values_first: bool) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let funcs = if async_fns { 12 } else { 8 };
    let info = if values_first {
        values_first_info()
    } else {
        TraceInfo::new(7)
    };
    let mut t = TraceBuilder::new(info).functions(FUNCS[..funcs].iter().map(
        |&(ty, m, token, impl_flags, flags)| {
            Function::new("App.dll", ty, m)
                .token(0x0600_0000 | token)
                .impl_flags(impl_flags)
                .flags(FunctionFlags::HOOKED | flags)
        },
    ));
    for id in 0..4 {
        t = t.value(id, ValueStatus::Ok, &format!("v{id}"));
    }
    for th in 0..3u32 {
        t = t.thread(th, 100 + u64::from(th));
    }
    let mut stacks: Vec<Vec<(u32, u64)>> = vec![Vec::new(); 3];
    let mut ts = 100u64;
    let (mut clocks, mut newest) = ([100u64; 3], 100u64);
    for _ in 0..150 {
        let th = rng.next(3) as usize;
        if overlap {
            newest = newest.max(ts);
            ts = clocks[th];
        }
        if rng.next(40) == 0 {
            t = t.dropped(th as u32, 1 + rng.next(5));
            stacks[th].clear();
            continue;
        }
        let mut evs: Vec<(u64, EventKind, u32, u64)> = Vec::new();
        for _ in 0..rng.next(16) + 1 {
            ts += rng.next(30);
            let st = &mut stacks[th];
            // The lowest stack pointer known (frames without one have 0).
            let top_sp = st
                .iter()
                .rev()
                .find(|&&(_, sp)| sp != 0)
                .map_or(0x10_0000, |&(_, sp)| sp);
            match rng.next(100) {
                0..=47 if st.len() < 24 => {
                    let f = rng.next(funcs as u64) as u32;
                    let sp = match rng.next(20) {
                        // At or above the top frame: frames gone.
                        0 => top_sp + rng.next(3) * 0x40,
                        1 => 0,
                        _ => top_sp.saturating_sub(0x40 + rng.next(8) * 0x20),
                    };
                    while sp != 0 && st.last().is_some_and(|&(_, s)| s <= sp) {
                        st.pop();
                    }
                    st.push((f, sp));
                    evs.push((ts, Enter, f, sp));
                    if rng.next(10) == 0 {
                        evs.push((ts, Value, rng.next(5) as u32, 0));
                    }
                }
                48..=87 => {
                    let Some((f, sp)) = st.pop() else { continue };
                    let kind = match rng.next(20) {
                        0 => Tailcall,
                        1 => Unwind,
                        _ => Leave,
                    };
                    evs.push((ts, kind, f, if kind == Unwind { 0 } else { sp }));
                    if kind == Leave && rng.next(10) == 0 {
                        evs.push((ts, Value, rng.next(5) as u32, 0));
                    }
                }
                88..=91 => {
                    // A Leave of a frame lower down, or of none (unmatched).
                    let i = rng.next(st.len() as u64 + 1) as usize;
                    let (f, sp) = st.get(i).copied().unwrap_or((rng.next(8) as u32, 0));
                    st.truncate(i);
                    evs.push((ts, Leave, f, sp));
                }
                92..=94 if !st.is_empty() => {
                    let i = rng.next(st.len() as u64) as usize;
                    let (f, sp) = st[i];
                    st.truncate(i + 1);
                    evs.push((ts, Catch, f, sp));
                }
                95..=96 => evs.push((ts, Throw, rng.next(8) as u32, top_sp)),
                _ => {}
            }
        }
        if values_first {
            evs = values_moved_first(&evs);
        }
        if !evs.is_empty() {
            t = t.events_sp(th as u32, &evs);
        }
        clocks[th] = ts;
    }
    t.end(newest.max(ts) + 10)
}

/// The analysis of a trace on this thread (with the call tree), with or without the quick
/// path.
fn analyse(bytes: &[u8], quick: bool) -> (Analysis, Vec<(ThreadIdx, Frame)>) {
    let opts = Options {
        call_tree: true,
        ..Options::default()
    };
    analyse_records(bytes, &opts, quick)
}

/// Everything the tests compare of an analysis: totals, functions, threads, edges, value
/// samples and the call tree.
fn summary(a: &Analysis) -> String {
    let mut edges = a.edges();
    edges.sort_by_key(|(c, f, _)| (c.map(|c| c.0), f.0));
    let functions: Vec<_> = a.functions().collect();
    let threads: Vec<_> = a.threads().collect();
    let samples: Vec<_> = functions
        .iter()
        .map(|(f, _)| a.value_samples(*f).to_vec())
        .collect();
    format!(
        "{:?}\n{functions:?}\n{threads:?}\n{edges:?}\n{samples:?}\n{:?}",
        a.totals, a.call_tree
    )
}

#[test]
fn the_quick_path_gives_what_the_full_rules_give() {
    let mut quick_frames = 0;
    for seed in 1..=300 {
        for values_first in [false, true] {
            let bytes = random_trace(seed, seed % 3 == 0, false, values_first);
            let (quick, quick_fr) = analyse(&bytes, true);
            let (full, full_fr) = analyse(&bytes, false);
            let at = format!("seed {seed} values_first {values_first}");
            assert_eq!(summary(&quick), summary(&full), "{at}");
            assert_same_frames(&quick_fr, &full_fr, &at);
            quick_frames += quick.totals.frames;
        }
    }
    assert!(quick_frames > 20_000, "{quick_frames} frames");
}

#[track_caller]
fn assert_same_frames(a: &[(ThreadIdx, Frame)], b: &[(ThreadIdx, Frame)], at: &str) {
    assert_eq!(a.len(), b.len(), "{at}");
    for (a, b) in a.iter().zip(b) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{at}");
    }
}

/// The same random traces with each Value event after its event (older traces) and before it
/// (INFO `values_first`): the same statistics, value samples and frames, by the quick path
/// and by the full rules.
#[test]
fn values_before_or_after_their_event_give_the_same_results() {
    let mut values = 0;
    for seed in 1..=300 {
        let after = random_trace(seed, seed % 3 == 0, seed % 2 == 0, false);
        let before = random_trace(seed, seed % 3 == 0, seed % 2 == 0, true);
        for quick in [true, false] {
            let (a, a_fr) = analyse(&after, quick);
            let (b, b_fr) = analyse(&before, quick);
            let at = format!("seed {seed} quick {quick}");
            assert_eq!(summary(&a), summary(&b), "{at}");
            assert_same_frames(&a_fr, &b_fr, &at);
            values += a_fr
                .iter()
                .filter(|(_, f)| f.enter_value.is_some() || f.leave_value.is_some())
                .count();
        }
    }
    assert!(values > 1_000, "{values} frames with values");
}

/// A Leave replayed before its return value was read (the Value is in the thread's next
/// chunk, read after the reorder window let the Leave go): the quick path leaves for the
/// Value what the full rules leave (the function's newest value sample without a return
/// value takes it).
#[test]
fn a_return_value_read_after_its_leave_was_replayed() {
    let ms = 1_000_000;
    let bytes = b(&["A", "B"])
        .value(0, ValueStatus::Ok, "7")
        .value(1, ValueStatus::Ok, "42")
        .thread(0, 100)
        .thread(1, 101)
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x9000),
                (0, Value, 0, 0),
                (5, Leave, 0, 0x9000),
                (6, Enter, 0, 0x9000),
                (10, Leave, 0, 0x9000),
            ],
        )
        .events_sp(
            1,
            &[(400 * ms, Enter, 1, 0x7000), (401 * ms, Leave, 1, 0x7000)],
        )
        .events_sp(0, &[(10, Value, 1, 0)])
        .end(500 * ms);
    let (quick, _) = analyse(&bytes, true);
    let (full, _) = analyse(&bytes, false);
    assert_eq!(summary(&quick), summary(&full));
    assert_eq!(quick.value_samples(FunctionIdx(0)).len(), 1);
}

/// The analysis of a trace for a sink that keeps no order, with or without threads replayed
/// ahead of the others.
fn analyse_unordered(bytes: &[u8], ahead: bool) -> Analysis {
    let mut an = Analyzer::new(&Options::default());
    if !ahead {
        an = an.without_run_ahead();
    }
    analyse_into(bytes, an, &mut NullSink)
}

#[test]
fn threads_replayed_ahead_give_what_the_time_order_gives() {
    use crate::replay::TAKEN_AHEAD;
    TAKEN_AHEAD.with(|c| c.set(0));
    let mut frames = 0;
    for seed in 1..=300 {
        for overlap in [true, false] {
            let bytes = random_trace(seed, seed % 3 == 0, overlap, seed % 2 == 0);
            let ahead = analyse_unordered(&bytes, true);
            let ordered = analyse_unordered(&bytes, false);
            assert_eq!(summary(&ahead), summary(&ordered), "seed {seed} {overlap}");
            assert_eq!(
                ahead.diagnostics, ordered.diagnostics,
                "seed {seed} {overlap}"
            );
            frames += ahead.totals.frames;
        }
    }
    let taken = TAKEN_AHEAD.with(|c| c.get());
    assert!(
        taken > 10_000,
        "{taken} events taken ahead in {frames} frames"
    );
}
