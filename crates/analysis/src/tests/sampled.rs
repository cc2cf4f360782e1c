//! The sampled-time estimator against a reference that credits every frame of the stack at
//! every sample (the estimator before it was made linear), on random traces of several
//! threads with recursion, frames gone by SP, unmatched Leaves and drops; and its work
//! bounded by events plus samples on a stack 100,000 deep.

use std::collections::BTreeMap;

use eltrace_trace::EventKind::{self, Enter, Leave, Unwind};
use eltrace_trace::{Event, FunctionIdx, Sample, ThreadIdx};

use crate::sampled::{SampledStat, SampledTimes, Sampler};

/// What the reference keeps: per function, and per (thread, path of functions).
#[derive(Default)]
struct Reference {
    functions: BTreeMap<u32, SampledStat>,
    paths: BTreeMap<(u32, Vec<u32>), SampledStat>,
    samples: u64,
    wall_ns: u64,
    outside_ns: u64,
}

fn credit(s: &mut SampledStat, top: bool, dt: u64, dcpu: u64) {
    s.samples += 1;
    s.inclusive_ns += dt;
    s.inclusive_cpu_ns += dcpu;
    if top {
        s.top_samples += 1;
        s.exclusive_ns += dt;
        s.exclusive_cpu_ns += dcpu;
    }
}

/// One thread's input: events and drops in order, each sample at an index.
enum Step {
    Event(Event),
    Drop,
    Sample(Sample),
}

/// The old rule, written plainly: at each sample, walk the whole stack.
fn reference(threads: &[(u32, Vec<Step>)], period_ns: u64) -> Reference {
    let mut r = Reference::default();
    for (thread, steps) in threads {
        let mut stack: Vec<(u32, u64)> = Vec::new();
        let mut last: Option<(u64, Option<u64>)> = None;
        for step in steps {
            match step {
                Step::Event(e) => match e.kind {
                    Enter => stack.push((e.func.0, e.sp)),
                    _ => {
                        let lo = stack.len().saturating_sub(16);
                        let found = stack[lo..]
                            .iter()
                            .rposition(|&f| f == (e.func.0, e.sp))
                            .or_else(|| stack[lo..].iter().rposition(|f| f.0 == e.func.0));
                        if let Some(i) = found {
                            stack.truncate(lo + i);
                        }
                    }
                },
                Step::Drop => stack.clear(),
                Step::Sample(s) => {
                    r.samples += 1;
                    if last.is_none() && s.index == 0 {
                        last = Some((s.ts, s.cpu_ns));
                        continue;
                    }
                    let (dt, dcpu) = match last {
                        Some((ts, cpu)) => (
                            s.ts.saturating_sub(ts),
                            cpu.zip(s.cpu_ns).map_or(0, |(a, b)| b.saturating_sub(a)),
                        ),
                        None => (period_ns, 0),
                    };
                    last = Some((s.ts, s.cpu_ns));
                    r.wall_ns += dt;
                    if stack.is_empty() {
                        r.outside_ns += dt;
                        continue;
                    }
                    let top = stack.last().unwrap().0;
                    let mut seen = Vec::new();
                    for (i, &(f, _)) in stack.iter().enumerate() {
                        if !seen.contains(&f) {
                            seen.push(f);
                            credit(r.functions.entry(f).or_default(), f == top, dt, dcpu);
                        }
                        let path = stack[..=i].iter().map(|x| x.0).collect();
                        let node = r.paths.entry((*thread, path)).or_default();
                        credit(node, i + 1 == stack.len(), dt, dcpu);
                    }
                }
            }
        }
    }
    r
}

/// Feeds the estimator as the analyzer does: each thread's steps in order, threads
/// interleaved in slices, samples given before the events that reach them.
fn estimate(threads: &[(u32, Vec<Step>)], hz: u64) -> SampledTimes {
    let mut s = Sampler::new(hz);
    let mut cursors = vec![0usize; threads.len()];
    loop {
        let mut moved = false;
        for (k, (thread, steps)) in threads.iter().enumerate() {
            let t = ThreadIdx(*thread);
            let end = (cursors[k] + 7).min(steps.len());
            let mut events = Vec::new();
            for step in &steps[cursors[k]..end] {
                match step {
                    Step::Event(e) => events.push(*e),
                    Step::Drop => {
                        s.events(t, &std::mem::take(&mut events));
                        s.dropped(t);
                    }
                    Step::Sample(x) => {
                        s.events(t, &std::mem::take(&mut events));
                        s.samples(&[*x]);
                    }
                }
            }
            s.events(t, &events);
            moved |= end > cursors[k];
            cursors[k] = end;
        }
        if !moved {
            return s.finish();
        }
    }
}

/// The path of functions from the thread's bottom frame to `node`.
fn path_of(t: &SampledTimes, mut node: u32) -> Vec<u32> {
    let mut path = Vec::new();
    loop {
        let n = t.nodes()[node as usize];
        path.push(n.func.0);
        match n.parent {
            Some(p) => node = p,
            None => break,
        }
    }
    path.reverse();
    path
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random thread: calls of 5 functions (recursion allowed) with SPs, Leaves that end
/// frames below the top (unwinding), unmatched Leaves, drops, and samples between events.
fn random_thread(rng: &mut Rng, thread: u32) -> Vec<Step> {
    let mut steps = vec![Step::Sample(Sample {
        thread: ThreadIdx(thread),
        index: 0,
        ts: 0,
        cpu_ns: Some(0),
    })];
    let (mut index, mut ts, mut cpu) = (0u64, 0u64, 0u64);
    let mut stack: Vec<(u32, u64)> = Vec::new();
    for _ in 0..400 {
        let kind: EventKind;
        let (func, sp);
        match rng.below(10) {
            0..=4 => {
                kind = Enter;
                func = rng.below(5) as u32;
                sp = 0x10_000 - 0x40 * stack.len() as u64;
                stack.push((func, sp));
            }
            5..=7 if !stack.is_empty() => {
                let i = stack.len() - 1 - rng.below(stack.len().min(3) as u64) as usize;
                (func, sp) = stack[i];
                kind = if i + 1 == stack.len() { Leave } else { Unwind };
                stack.truncate(i);
            }
            8 => {
                // A Leave nothing matches, or one with the SP lost (0).
                kind = Leave;
                func = rng.below(7) as u32;
                sp = 0;
                if let Some(i) = stack.iter().rposition(|f| f.0 == func) {
                    if i + 16 >= stack.len() {
                        stack.truncate(i);
                    }
                }
            }
            _ => {
                if rng.below(20) == 0 {
                    steps.push(Step::Drop);
                    stack.clear();
                    index += 1;
                }
                ts += 1 + rng.below(1_000);
                cpu += rng.below(500);
                steps.push(Step::Sample(Sample {
                    thread: ThreadIdx(thread),
                    index,
                    ts,
                    cpu_ns: Some(cpu),
                }));
                continue;
            }
        }
        steps.push(Step::Event(Event {
            ts: 0,
            kind,
            func: FunctionIdx(func),
            sp,
        }));
        index += 1;
    }
    steps
}

#[test]
fn the_estimates_equal_the_whole_stack_rule_on_random_traces() {
    for seed in 1..300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let threads: Vec<_> = (0..3).map(|t| (t, random_thread(&mut rng, t))).collect();
        let want = reference(&threads, 1_000_000);
        let got = estimate(&threads, 1000);
        assert_eq!(
            (got.samples, got.wall_ns, got.outside_ns),
            (want.samples, want.wall_ns, want.outside_ns),
            "seed {seed}"
        );
        let functions: BTreeMap<u32, SampledStat> =
            got.functions().into_iter().map(|(f, s)| (f.0, s)).collect();
        assert_eq!(functions, want.functions, "seed {seed}");
        let mut paths = BTreeMap::new();
        for (i, n) in got.nodes().iter().enumerate() {
            if let Some(p) = n.parent {
                assert!(p < i as u32, "parents first");
            }
            let key = (n.thread.0, path_of(&got, i as u32));
            assert!(paths.insert(key, n.stat).is_none(), "one node per path");
        }
        assert_eq!(paths, want.paths, "seed {seed}");
    }
}

/// A thread that enters `depth` frames of one function and is sampled `samples` times at
/// the deepest point, then unwinds.
fn deep(depth: u64, samples: u64) -> SampledTimes {
    let mut s = Sampler::new(10_000);
    let t = ThreadIdx(0);
    s.samples(&[Sample {
        thread: t,
        index: 0,
        ts: 0,
        cpu_ns: None,
    }]);
    let enters: Vec<Event> = (0..depth)
        .map(|i| Event {
            ts: 0,
            kind: Enter,
            func: FunctionIdx((i % 3) as u32),
            sp: (1u64 << 40) - i * 64,
        })
        .collect();
    s.events(t, &enters);
    let at: Vec<Sample> = (1..=samples)
        .map(|k| Sample {
            thread: t,
            index: depth,
            ts: k * 100_000,
            cpu_ns: None,
        })
        .collect();
    s.samples(&at);
    let leaves: Vec<Event> = enters
        .iter()
        .rev()
        .map(|e| Event { kind: Leave, ..*e })
        .collect();
    s.events(t, &leaves);
    s.finish()
}

#[test]
fn the_work_grows_with_events_plus_samples_not_with_depth() {
    let (depth, samples) = (100_000u64, 30_000u64);
    let s = deep(depth, samples);
    // The whole-stack rule would take depth × samples = 3·10^9 steps.
    let bound = 6 * (2 * depth + samples);
    assert!(s.steps() <= bound, "{} steps > {bound}", s.steps());
    assert_eq!(s.nodes().len() as u64, depth);
    let top = s.nodes()[depth as usize - 1];
    assert_eq!(top.stat.top_samples, samples);
    // Every function recurses all the way down: credited once per sample.
    for f in 0..3 {
        let st = s.function(FunctionIdx(f)).unwrap();
        assert_eq!(st.samples, samples);
        assert_eq!(st.inclusive_ns, samples * 100_000);
    }
    assert_eq!(s.nodes()[0].stat.inclusive_ns, samples * 100_000);
}

/// Samples of one thread at the given wall and CPU instants (the first: its registration).
fn timed(instants: &[(u64, u64)]) -> SampledTimes {
    let mut s = Sampler::new(10_000);
    let t = ThreadIdx(0);
    let samples: Vec<Sample> = instants
        .iter()
        .map(|&(ts, cpu)| Sample {
            thread: t,
            index: 0,
            ts,
            cpu_ns: Some(cpu),
        })
        .collect();
    s.samples(&samples);
    s.finish()
}

#[test]
fn effective_samples_fall_when_one_interval_is_long() {
    // 100 intervals of 100 µs: as many effective samples as samples.
    let even: Vec<(u64, u64)> = (0..=100).map(|k| (k * 100_000, k * 50_000)).collect();
    let s = timed(&even);
    assert_eq!(s.samples, 101);
    assert!(
        (s.effective_samples() - 100.0).abs() < 1e-6,
        "{}",
        s.effective_samples()
    );
    assert!((s.effective_cpu_samples().unwrap() - 100.0).abs() < 1e-6);
    // The same, then one interval 100 times as long (the sampler ran late): the weights are
    // 100 × 1 and 1 × 100, so (Σw)² / Σw² = 200² / (100 + 10,000) = 3.96.
    let mut late = even.clone();
    late.push((100 * 100_000 + 10_000_000, 100 * 50_000 + 5_000_000));
    let s = timed(&late);
    let want = 200.0 * 200.0 / 10_100.0;
    assert!(
        (s.effective_samples() - want).abs() < 1e-6,
        "{}",
        s.effective_samples()
    );
    assert!((s.effective_cpu_samples().unwrap() - want).abs() < 1e-6);
    // Without CPU times there is no CPU figure.
    assert_eq!(deep(3, 2).effective_cpu_samples(), None);
}
