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
//!
//! **Its cost grows with events plus samples**, not with samples × stack depth: a sample
//! credits only the node on top of its thread's stack. A frame's node (its path from the
//! thread's bottom frame) is looked up once, when the first sample needs it, and frames keep
//! their nodes while they stay on the stack; inclusive figures are summed over subtrees at
//! the end, and a function's inclusive figures are its outermost nodes' (a function recursing
//! counts once per sample). [`SampledTimes::steps`] counts the work, for the tests that bound it.

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
    fn add_top(&mut self, o: &Own) {
        self.top_samples += o.samples;
        self.exclusive_ns += o.wall_ns;
        self.exclusive_cpu_ns += o.cpu_ns;
    }

    fn add_inclusive(&mut self, o: &Own) {
        self.samples += o.samples;
        self.inclusive_ns += o.wall_ns;
        self.inclusive_cpu_ns += o.cpu_ns;
    }
}

/// A node of the sampled call tree: a stack path from a thread's bottom frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampledNode {
    /// The parent node's index, `None` for a bottom frame.
    pub parent: Option<u32>,
    /// The thread whose stacks the path is of (every thread has a tree of its own).
    pub thread: ThreadIdx,
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
    /// Sums of the squared wall and CPU times of the credited intervals (ns², as `f64`), for
    /// [`SampledTimes::effective_samples`].
    wall_sq: f64,
    cpu_sq: f64,
    functions: FxHashMap<u32, SampledStat>,
    nodes: Vec<SampledNode>,
    /// Node of a path: (parent node, or `ROOT | thread` for a bottom frame; function).
    children: FxHashMap<(u64, u32), u32>,
    steps: u64,
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

    /// The sampled call trees' nodes (one tree per thread), parents before children.
    pub fn nodes(&self) -> &[SampledNode] {
        &self.nodes
    }

    /// The node of the path `parent` (`None`: the thread's bottom) then `func` in `thread`'s
    /// sampled tree, if a sample saw it.
    pub fn child(&self, thread: ThreadIdx, parent: Option<u32>, func: FunctionIdx) -> Option<u32> {
        let key = parent.map_or(ROOT | u64::from(thread.0), u64::from);
        self.children.get(&(key, func.0)).copied()
    }

    /// The effective number of samples of the wall-time estimates: `(Σ w)² / Σ w²` over the
    /// intervals' wall times `w` (Kish's effective sample size). It equals the number of
    /// credited intervals when they are all as long, and falls when some are much longer than
    /// the others: a sampler that ran late on a loaded machine credits a long interval to one
    /// stack. A share `p` then has a standard error of about `sqrt(p (1 - p) / n)` with this
    /// `n` (docs/timing.md).
    pub fn effective_samples(&self) -> f64 {
        effective(self.wall_ns, self.wall_sq)
    }

    /// [`SampledTimes::effective_samples`] of the CPU-time estimates (`None` without CPU times).
    pub fn effective_cpu_samples(&self) -> Option<f64> {
        self.has_cpu.then(|| effective(self.cpu_ns, self.cpu_sq))
    }

    /// The share (0..=1) of the sampled wall time with `f` on the stack.
    pub fn inclusive_share(&self, f: FunctionIdx) -> f64 {
        let incl = self.function(f).map_or(0, |s| s.inclusive_ns);
        incl as f64 / self.wall_ns.max(1) as f64
    }

    /// The estimated inclusive and exclusive wall time (ns) of a row of merged functions (a
    /// method's thunk and variant, as `report` shows them): the sums of theirs.
    pub fn row_estimates(&self, idxs: &[FunctionIdx]) -> (u64, u64) {
        idxs.iter()
            .filter_map(|&i| self.function(i))
            .fold((0, 0), |(a, b), f| (a + f.inclusive_ns, b + f.exclusive_ns))
    }

    /// The estimator's work in elementary steps (an event applied, a frame popped, a sample
    /// credited, a node looked up or summed): at most a small multiple of events plus
    /// samples, whatever the stacks' depth. Tests bound the cost on it, not on a clock.
    pub fn steps(&self) -> u64 {
        self.steps
    }
}

/// A frame of a thread's stack: its function and SP, and the sampled-tree node of its path
/// once a sample has needed it ([`UNRESOLVED`] before).
#[derive(Debug, Clone, Copy)]
struct Frame {
    func: u32,
    sp: u64,
    node: u32,
}

const UNRESOLVED: u32 = u32::MAX;

/// `(Σ w)² / Σ w²` from the two sums (0 without weight).
fn effective(sum: u64, sum_sq: f64) -> f64 {
    if sum_sq > 0.0 {
        (sum as f64) * (sum as f64) / sum_sq
    } else {
        0.0
    }
}

/// Samples and times credited to a node while on top (and, at the end, below it).
#[derive(Debug, Clone, Copy, Default)]
struct Own {
    samples: u64,
    wall_ns: u64,
    cpu_ns: u64,
}

impl Own {
    fn add(&mut self, o: &Own) {
        self.samples += o.samples;
        self.wall_ns += o.wall_ns;
        self.cpu_ns += o.cpu_ns;
    }
}

/// One thread's state.
#[derive(Debug, Default)]
struct ThreadState {
    stack: Vec<Frame>,
    /// Frames from the bottom whose nodes are known (frames above have `UNRESOLVED`).
    resolved: usize,
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
    /// What each node got while on top, by node index.
    own: Vec<Own>,
}

/// The parent key of a thread's bottom frames (above every node index).
const ROOT: u64 = 1 << 32;

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
            self.out.steps += 1 + apply(t, e);
            t.index += 1;
        }
        self.settle(thread);
    }

    /// A drop marker of a thread: its stack is unknown from here.
    pub fn dropped(&mut self, thread: ThreadIdx) {
        let t = self.threads.entry(thread.0, ThreadState::default);
        self.out.steps += 1 + t.stack.len() as u64;
        t.stack.clear();
        t.resolved = 0;
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
            let Some(own) = interval(self.period_ns, t, &s) else {
                self.out.samples += 1;
                self.out.steps += 1;
                continue;
            };
            self.out.samples += 1;
            self.out.steps += 1;
            self.out.wall_ns += own.wall_ns;
            self.out.cpu_ns += own.cpu_ns;
            self.out.wall_sq += (own.wall_ns as f64).powi(2);
            self.out.cpu_sq += (own.cpu_ns as f64).powi(2);
            let Some(top) = t.stack.last() else {
                self.out.outside_ns += own.wall_ns;
                self.out.outside_cpu_ns += own.cpu_ns;
                continue;
            };
            let top_func = top.func;
            let node = resolve(
                &mut self.out.children,
                &mut self.out.nodes,
                &mut self.out.steps,
                thread,
                t,
            );
            if self.own.len() <= node as usize {
                self.own.resize(node as usize + 1, Own::default());
            }
            self.own[node as usize].add(&own);
            self.out
                .functions
                .entry(top_func)
                .or_default()
                .add_top(&own);
        }
    }

    /// The result; samples still pending point past the thread's last event.
    pub fn finish(mut self) -> SampledTimes {
        for (_, t) in self.threads.iter() {
            self.out.unmatched += t.pending.len() as u64;
        }
        self.own.resize(self.out.nodes.len(), Own::default());
        sum_subtrees(&mut self.out, &self.own);
        self.out
    }
}

/// The stack change of one event (the same rule as the encoding's prediction stack); the
/// frames it popped.
fn apply(t: &mut ThreadState, e: &Event) -> u64 {
    let stack = &mut t.stack;
    let before = stack.len();
    match e.kind {
        EventKind::Enter => stack.push(Frame {
            func: e.func.0,
            sp: e.sp,
            node: UNRESOLVED,
        }),
        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
            let lo = stack.len().saturating_sub(SEARCH);
            let found = stack[lo..]
                .iter()
                .rposition(|f| (f.func, f.sp) == (e.func.0, e.sp))
                // An SP the runtime reported differently (0): match by function.
                .or_else(|| stack[lo..].iter().rposition(|f| f.func == e.func.0));
            if let Some(i) = found {
                stack.truncate(lo + i);
                t.resolved = t.resolved.min(stack.len());
            }
        }
        EventKind::Catch | EventKind::Throw | EventKind::Value | EventKind::Continuation => {}
    }
    before.saturating_sub(stack.len()) as u64
}

/// The node of the thread's whole stack (not empty): the frames above the resolved ones get
/// theirs, bottom up, once.
fn resolve(
    children: &mut FxHashMap<(u64, u32), u32>,
    nodes: &mut Vec<SampledNode>,
    steps: &mut u64,
    thread: ThreadIdx,
    t: &mut ThreadState,
) -> u32 {
    let mut parent = match t.resolved {
        0 => None,
        n => Some(t.stack[n - 1].node),
    };
    for frame in &mut t.stack[t.resolved..] {
        *steps += 1;
        let key = (
            parent.map_or(ROOT | u64::from(thread.0), u64::from),
            frame.func,
        );
        let next = nodes.len() as u32;
        let node = *children.entry(key).or_insert(next);
        if node == next {
            nodes.push(SampledNode {
                parent,
                thread,
                func: FunctionIdx(frame.func),
                stat: SampledStat::default(),
            });
        }
        frame.node = node;
        parent = Some(node);
    }
    t.resolved = t.stack.len();
    parent.expect("a non-empty stack")
}

/// The interval a sample stands for (docs/timing.md); `None` for a thread's registration.
fn interval(period_ns: u64, t: &mut ThreadState, s: &Sample) -> Option<Own> {
    if t.last.is_none() && s.index == 0 {
        // The thread's registration: it starts the thread's clock and stands for no time
        // (it may be read after the thread's first events, whose stack it must not count).
        t.last = Some((s.ts, s.cpu_ns));
        return None;
    }
    let (wall_ns, cpu_ns) = match t.last {
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
    Some(Own {
        samples: 1,
        wall_ns,
        cpu_ns,
    })
}

/// The nodes' figures from what each got on top: exclusive is its own, inclusive its
/// subtree's; a function's inclusive figures are those of its nodes with no ancestor of the
/// same function (a sample counts once for a function however deep it recurses).
fn sum_subtrees(out: &mut SampledTimes, own: &[Own]) {
    let n = out.nodes.len();
    let mut subtree = own.to_vec();
    // Children come after their parents: one backward pass sums every subtree.
    for i in (0..n).rev() {
        out.steps += 1;
        let node = &mut out.nodes[i];
        node.stat.add_top(&own[i]);
        node.stat.add_inclusive(&subtree[i]);
        if let Some(p) = node.parent {
            let s = subtree[i];
            subtree[p as usize].add(&s);
        }
    }
    let outer = outermost(&out.nodes, &mut out.steps);
    for (i, node) in out.nodes.iter().enumerate() {
        if outer[i] {
            out.functions
                .entry(node.func.0)
                .or_default()
                .add_inclusive(&subtree[i]);
        }
    }
}

/// Whether each node is its function's outermost on its path (no ancestor of the same
/// function): a depth-first walk that counts the functions on the current path.
fn outermost(nodes: &[SampledNode], steps: &mut u64) -> Vec<bool> {
    let n = nodes.len();
    // Children lists, packed: node i's children are kids[first[i]..first[i + 1]].
    let mut first = vec![0u32; n + 1];
    for node in nodes {
        if let Some(p) = node.parent {
            first[p as usize + 1] += 1;
        }
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut kids = vec![0u32; first[n] as usize];
    for (i, node) in nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            kids[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    let mut outer = vec![false; n];
    let mut on_path: FxHashMap<u32, u32> = FxHashMap::default();
    // (node, entering?): a node is entered, its children walked, then left.
    let mut walk: Vec<(u32, bool)> = Vec::new();
    for root in (0..n).filter(|&i| nodes[i].parent.is_none()) {
        walk.push((root as u32, true));
        while let Some((i, entering)) = walk.pop() {
            *steps += 1;
            let func = nodes[i as usize].func.0;
            if entering {
                let count = on_path.entry(func).or_default();
                outer[i as usize] = *count == 0;
                *count += 1;
                walk.push((i, false));
                let (a, b) = (first[i as usize] as usize, first[i as usize + 1] as usize);
                walk.extend(kids[a..b].iter().map(|&k| (k, true)));
            } else if let Some(count) = on_path.get_mut(&func) {
                *count -= 1;
            }
        }
    }
    outer
}
