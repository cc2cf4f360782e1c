//! Sampled time (`record --timing sampled`): the estimator that turns the profiler's samples
//! of each thread's event position into estimated wall and CPU time per function and per
//! call-tree node, on the exact stacks the events give. It owns [`SampledTimes`] and the
//! per-thread state it needs; it sees every selected thread's events in file order (before
//! the reorder queue) and every SAMPLES record.
//!
//! A sample `(thread, index, ts, cpu)` says: at `ts` the thread had recorded `index` events.
//! The stack after those events is the stack the thread was running at `ts`; the sample is
//! credited with the wall time since the thread's previous sample and the CPU time the thread
//! used meanwhile (the profiler's first sample of a thread is at its registration, index 0,
//! and starts its clock; a first sample elsewhere stands for one nominal period):
//!
//! ```text
//! events:   0 enter Main  1 enter A  2 leave A  3 enter B  …
//! sample:   (index 2, ts 1.000 ms)  → stack [Main, A]: Main and A inclusive +Δ, A exclusive +Δ
//! sample:   (index 4, ts 2.000 ms)  → stack [Main, B]: …
//! ```
//!
//! The estimator and its error bounds are in docs/timing.md.

use std::collections::VecDeque;

use eltrace_trace::{Event, EventKind, FunctionIdx, Sample, ThreadIdx};

use crate::fxmap::{DenseMap, FxHashMap};

/// How many entries below the top a frame-ending event searches for its frame (as the
/// trace encoding's prediction stack does).
const SEARCH: usize = 16;

/// Estimated times of one function or one call-tree node.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampledStat {
    /// Samples with the function on the stack (once per sample, however deep it recurses).
    pub samples: u64,
    /// Samples with the function on top of the stack.
    pub top_samples: u64,
    /// Estimated inclusive wall time (ns).
    pub inclusive_ns: u64,
    /// Estimated exclusive wall time (ns).
    pub exclusive_ns: u64,
    /// Estimated inclusive and exclusive CPU time (ns), where the trace has CPU times.
    pub inclusive_cpu_ns: u64,
    pub exclusive_cpu_ns: u64,
}

impl SampledStat {
    fn credit(&mut self, top: bool, dt: u64, dcpu: u64) {
        self.samples += 1;
        self.inclusive_ns += dt;
        self.inclusive_cpu_ns += dcpu;
        if top {
            self.top_samples += 1;
            self.exclusive_ns += dt;
            self.exclusive_cpu_ns += dcpu;
        }
    }
}

/// A node of the sampled call tree: a stack path from a thread's bottom frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampledNode {
    /// The parent node's index, `None` for a bottom frame.
    pub parent: Option<u32>,
    pub func: FunctionIdx,
    pub stat: SampledStat,
}

/// What the samples say about a trace.
#[derive(Debug, Clone, Default)]
pub struct SampledTimes {
    /// Samples credited (of the selected threads).
    pub samples: u64,
    /// Samples whose index the thread's events never reached (the trace ended first).
    pub unmatched: u64,
    /// Wall time credited in all (ns; the sum of every thread's sampled time).
    pub wall_ns: u64,
    /// CPU time credited in all (ns).
    pub cpu_ns: u64,
    /// Wall and CPU time of samples at which the thread ran no traced function.
    pub outside_ns: u64,
    pub outside_cpu_ns: u64,
    /// Whether the samples carried CPU times.
    pub has_cpu: bool,
    functions: FxHashMap<u32, SampledStat>,
    nodes: Vec<SampledNode>,
    children: FxHashMap<(u32, u32), u32>,
}

impl SampledTimes {
    /// Estimates of a function with samples.
    pub fn function(&self, f: FunctionIdx) -> Option<&SampledStat> {
        self.functions.get(&f.0)
    }

    /// Every function with at least one sample, in index order.
    pub fn functions(&self) -> Vec<(FunctionIdx, SampledStat)> {
        let mut v: Vec<_> = self
            .functions
            .iter()
            .map(|(&f, s)| (FunctionIdx(f), *s))
            .collect();
        v.sort_by_key(|(f, _)| f.0);
        v
    }

    /// The sampled call tree's nodes, parents before children.
    pub fn nodes(&self) -> &[SampledNode] {
        &self.nodes
    }

    /// The share (0..=1) of the sampled wall time with `f` on the stack.
    pub fn inclusive_share(&self, f: FunctionIdx) -> f64 {
        let incl = self.function(f).map_or(0, |s| s.inclusive_ns);
        incl as f64 / self.wall_ns.max(1) as f64
    }
}

/// One thread's state.
#[derive(Debug, Default)]
struct ThreadState {
    stack: Vec<(u32, u64)>,
    /// Events (and drop markers) seen so far.
    index: u64,
    pending: VecDeque<Sample>,
    /// Time and CPU time of the last credited sample.
    last: Option<(u64, Option<u64>)>,
}

/// The estimator (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    threads: DenseMap<ThreadState>,
    out: SampledTimes,
    /// The nominal period (ns) a thread's first sample is credited with.
    period_ns: u64,
    /// Scratch: the distinct functions of one stack.
    seen: Vec<u32>,
}

impl Sampler {
    pub fn new(sample_hz: u64) -> Sampler {
        Sampler {
            period_ns: 1_000_000_000 / sample_hz.max(1),
            ..Sampler::default()
        }
    }

    /// A chunk of a thread's events (in the thread's order).
    pub fn events(&mut self, thread: ThreadIdx, events: &[Event]) {
        for e in events {
            self.settle(thread);
            let t = self.threads.entry(thread.0, ThreadState::default);
            apply(&mut t.stack, e);
            t.index += 1;
        }
        self.settle(thread);
    }

    /// A drop marker of a thread: its stack is unknown from here.
    pub fn dropped(&mut self, thread: ThreadIdx) {
        let t = self.threads.entry(thread.0, ThreadState::default);
        t.stack.clear();
        t.index += 1;
        self.settle(thread);
    }

    /// Samples of selected threads.
    pub fn samples(&mut self, samples: &[Sample]) {
        for s in samples {
            self.out.has_cpu |= s.cpu_ns.is_some();
            self.threads
                .entry(s.thread.0, ThreadState::default)
                .pending
                .push_back(*s);
            self.settle(s.thread);
        }
    }

    /// Credits the thread's samples its events have reached.
    fn settle(&mut self, thread: ThreadIdx) {
        let t = self.threads.entry(thread.0, ThreadState::default);
        while t.pending.front().is_some_and(|s| s.index <= t.index) {
            let s = t.pending.pop_front().expect("front checked");
            credit(&mut self.out, &mut self.seen, self.period_ns, t, &s);
        }
    }

    /// The result; samples still pending point past the thread's last event.
    pub fn finish(mut self) -> SampledTimes {
        for (_, t) in self.threads.iter() {
            self.out.unmatched += t.pending.len() as u64;
        }
        self.out
    }
}

/// The stack change of one event (the same rule as the encoding's prediction stack).
fn apply(stack: &mut Vec<(u32, u64)>, e: &Event) {
    match e.kind {
        EventKind::Enter => stack.push((e.func.0, e.sp)),
        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
            let lo = stack.len().saturating_sub(SEARCH);
            if let Some(i) = stack[lo..].iter().rposition(|&f| f == (e.func.0, e.sp)) {
                stack.truncate(lo + i);
            } else if let Some(i) = stack[lo..].iter().rposition(|&(f, _)| f == e.func.0) {
                // An SP the runtime reported differently (0): match by function.
                stack.truncate(lo + i);
            }
        }
        EventKind::Catch | EventKind::Throw | EventKind::Value | EventKind::Continuation => {}
    }
}

/// Credits one sample: the interval since the thread's previous sample goes to the stack at
/// this sample (docs/timing.md).
fn credit(
    out: &mut SampledTimes,
    seen: &mut Vec<u32>,
    period_ns: u64,
    t: &mut ThreadState,
    s: &Sample,
) {
    if t.last.is_none() && s.index == 0 {
        // The thread's registration: it starts the thread's clock and stands for no time
        // (it may be read after the thread's first events, whose stack it must not count).
        t.last = Some((s.ts, s.cpu_ns));
        out.samples += 1;
        return;
    }
    let (dt, dcpu) = match t.last {
        Some((ts, cpu)) => (
            s.ts.saturating_sub(ts),
            match (cpu, s.cpu_ns) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => 0,
            },
        ),
        // A first sample past the registration stands for one nominal period.
        None => (period_ns, 0),
    };
    t.last = Some((s.ts, s.cpu_ns));
    out.samples += 1;
    out.wall_ns += dt;
    out.cpu_ns += dcpu;
    credit_stack(out, seen, &t.stack, dt, dcpu);
}

/// Credits `dt` of wall and `dcpu` of CPU time to a stack.
fn credit_stack(
    out: &mut SampledTimes,
    seen: &mut Vec<u32>,
    stack: &[(u32, u64)],
    dt: u64,
    dcpu: u64,
) {
    if stack.is_empty() {
        out.outside_ns += dt;
        out.outside_cpu_ns += dcpu;
        return;
    }
    seen.clear();
    let depth = stack.len();
    let top_func = stack[depth - 1].0;
    let mut parent: Option<u32> = None;
    for (i, &(f, _)) in stack.iter().enumerate() {
        let top = i + 1 == depth;
        if !seen.contains(&f) {
            seen.push(f);
            out.functions
                .entry(f)
                .or_default()
                .credit(f == top_func, dt, dcpu);
        }
        let key = (parent.unwrap_or(u32::MAX), f);
        let next = out.nodes.len() as u32;
        let node = *out.children.entry(key).or_insert(next);
        if node == next {
            out.nodes.push(SampledNode {
                parent,
                func: FunctionIdx(f),
                stat: SampledStat::default(),
            });
        }
        out.nodes[node as usize].stat.credit(top, dt, dcpu);
        parent = Some(node);
    }
}
