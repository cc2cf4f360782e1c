//! The reorder queue: the threads' events as read from the file, handed on in time order
//! across threads. The writer drains the threads' buffers one after another, so chunks of
//! different threads reach the file out of time order, but linking a resume to its call needs
//! the threads' events in time order: events wait until they are [`REORDER_NS`] older than the
//! newest event read (or the queue holds [`REORDER_MAX`] events). Each thread's run of items
//! is handed on as a [`Batch`] of slices of its chunks, which also shows the thread's next
//! events ([`Ahead`]).
//!
//! Events of different threads at the same time are handed on in the threads' index order,
//! whatever was handed on before: the order of the events that are not ordinary
//! (`replay::ahead`) depends on their times and threads alone.
//!
//! A chunk's events are queued as the chunk's own vector (no copy per event), their
//! timestamps turned into ns in place; a vector whose events were all handed on goes to a
//! small pool that the reader fills its next chunk into ([`Reorder::spare`]).
//!
//! ```text
//! in the file:  T1 [t=100 enter A, t=300 leave A]    handed on:  T1 t=100 enter A
//! in the file:  T2 [t=200 enter B, t=250 leave B]                T2 t=200 enter B
//!                                                                T2 t=250 leave B
//!                                                                T1 t=300 leave A
//! ```

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};

use eltrace_trace::{Event, EventKind, ThreadIdx};

use crate::fxmap::DenseMap;

/// How long (trace time) events wait for other threads' earlier events.
const REORDER_NS: u64 = 250_000_000;
/// How many events may wait at most.
const REORDER_MAX: usize = 4 << 20;
/// An empty thread queue keeps at most this capacity (in runs).
const RUNS_KEEP: usize = 16;
/// Events (capacity) kept for reuse at most in emptied vectors: 1 M events, 24 MiB.
const POOL_KEEP: usize = 1 << 20;

/// How many of a thread's next events [`Queue::prefetch`] asks for.
const PREFETCH_EVENTS: usize = 16;
/// Events in a 64-byte cache line (at least one).
const EVENTS_PER_LINE: usize = 64 / std::mem::size_of::<Event>();
const _: () = assert!(EVENTS_PER_LINE > 0);

/// A hint to the CPU to load `e`'s cache line (no effect on the program's results).
#[inline(always)]
fn prefetch(e: &Event) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that reads nothing into the program and cannot fault; the
    // address is a valid reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (e as *const Event).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = e;
}

/// A run of a thread's queued items: a chunk's events (from `pos` on, `ts` in ns), or a drop
/// at `ns`.
#[derive(Debug)]
enum Run {
    Events { events: Vec<Event>, pos: usize },
    Dropped { ns: u64, count: u64 },
}

impl Run {
    /// The time of the run's next item.
    #[inline(always)]
    fn first_ns(&self) -> Option<u64> {
        match self {
            Run::Events { events, pos } => events.get(*pos).map(|e| e.ts),
            Run::Dropped { ns, .. } => Some(*ns),
        }
    }
}

/// A thread's items read but not handed on yet.
#[derive(Debug, Default)]
struct Queue {
    runs: VecDeque<Run>,
    last_ns: u64,
}

impl Queue {
    /// Drops the front runs whose events were all taken, keeping their vectors for reuse.
    #[inline(always)]
    fn settle(&mut self, pool: &mut Pool) {
        while let Some(Run::Events { events, pos }) = self.runs.front() {
            if *pos < events.len() {
                break;
            }
            if let Some(Run::Events { events, .. }) = self.runs.pop_front() {
                pool.put(events);
            }
        }
    }

    fn first_ns(&self) -> Option<u64> {
        self.runs.front().and_then(Run::first_ns)
    }

    /// Asks the CPU to bring the next few queued events into the cache.
    #[inline(always)]
    fn prefetch(&self) {
        if let Some(Run::Events { events, pos }) = self.runs.front() {
            let next = events.get(*pos..).unwrap_or_default();
            let next = &next[..next.len().min(PREFETCH_EVENTS)];
            // One hint per 64-byte cache line.
            let mut i = 0;
            while i < next.len() {
                prefetch(&next[i]);
                i += EVENTS_PER_LINE;
            }
        }
    }
}

/// The queues of every thread.
#[derive(Debug, Default)]
pub(crate) struct Reorder {
    queues: DenseMap<Queue>,
    /// `(first queued ns, thread)` of every thread whose queue is not empty, once each: the
    /// next thread to hand on without looking at every thread the trace ever had.
    ready: BinaryHeap<Reverse<(u64, u32)>>,
    /// Items queued in all.
    items: usize,
    newest_ns: u64,
    /// Emptied event vectors, for the reader to reuse.
    pool: Pool,
}

/// Emptied event vectors, at most [`POOL_KEEP`] events' capacity in all.
#[derive(Debug, Default)]
struct Pool {
    vecs: Vec<Vec<Event>>,
    capacity: usize,
}

impl Pool {
    fn put(&mut self, mut events: Vec<Event>) {
        let cap = events.capacity();
        if cap > 0 && self.capacity + cap <= POOL_KEEP {
            events.clear();
            self.capacity += cap;
            self.vecs.push(events);
        }
    }

    fn take(&mut self) -> Option<Vec<Event>> {
        let v = self.vecs.pop()?;
        self.capacity -= v.capacity();
        Some(v)
    }
}

impl Reorder {
    /// Queues a chunk of a thread's events whose `ts` are ns already, never earlier than the
    /// thread's events queued before (the analyzer's clock made them so); `newest` is the
    /// chunk's last time before that clamp. Returns the time up to which the queued items can
    /// be handed on now.
    pub fn push_events(&mut self, thread: ThreadIdx, events: Vec<Event>, newest: u64) -> u64 {
        let Some(last) = events.last() else {
            self.recycle(events);
            return self.limit();
        };
        self.newest_ns = self.newest_ns.max(newest);
        let q = self.queues.entry(thread.0, Queue::default);
        debug_assert!(events[0].ts >= q.last_ns);
        q.last_ns = last.ts;
        let was_empty = q.runs.is_empty();
        self.items += events.len();
        if was_empty {
            self.ready.push(Reverse((events[0].ts, thread.0)));
        }
        q.runs.push_back(Run::Events { events, pos: 0 });
        self.limit()
    }

    fn limit(&self) -> u64 {
        if self.items > REORDER_MAX {
            u64::MAX
        } else {
            self.newest_ns.saturating_sub(REORDER_NS)
        }
    }

    /// Queues a drop of a thread's events, after its last queued event.
    pub fn push_dropped(&mut self, thread: ThreadIdx, count: u64) {
        let q = self.queues.entry(thread.0, Queue::default);
        if q.runs.is_empty() {
            self.ready.push(Reverse((q.last_ns, thread.0)));
        }
        q.runs.push_back(Run::Dropped {
            ns: q.last_ns,
            count,
        });
        self.items += 1;
    }

    /// Keeps an event vector for reuse (if the pool is not full).
    pub fn recycle(&mut self, events: Vec<Event>) {
        self.pool.put(events);
    }

    /// An emptied event vector to decode the next chunk into, if one is free.
    pub fn spare(&mut self) -> Option<Vec<Event>> {
        self.pool.take()
    }

    /// Hands on the queued items up to time `limit`, in time order across threads: `run`
    /// gets a thread's items up to the next other thread's first one (at least one).
    pub fn drain<E>(
        &mut self,
        limit: u64,
        mut run: impl FnMut(ThreadIdx, &mut Batch<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        // The heap's top and the next other thread (the smaller of the top's two children).
        while let Some((Reverse((ns, t)), next)) = match self.ready.as_slice() {
            [] => None,
            [top] => Some((*top, None)),
            [top, a] => Some((*top, Some(a.0))),
            [top, a, b, ..] => Some((*top, Some(a.0.min(b.0)))),
        } {
            if ns > limit {
                return Ok(());
            }
            // The batch ends before the next other thread's first item, or at it if this
            // thread comes first in index order (the same time on both).
            let (second, first_at_second) = match next {
                Some((n, t2)) => {
                    // That thread's events were decoded long ago and are out of the cache by
                    // now: fetch them while this batch runs.
                    if let Some(q2) = self.queues.get(t2) {
                        q2.prefetch();
                    }
                    (n, t < t2)
                }
                None => (u64::MAX, true),
            };
            let Some(mut top) = self.ready.peek_mut() else {
                break;
            };
            let Some(q) = self.queues.get_mut(t) else {
                PeekMut::pop(top);
                continue;
            };
            let mut batch = Batch {
                queue: q,
                items: &mut self.items,
                pool: &mut self.pool,
                until: second.min(limit),
                at_until: first_at_second || limit < second,
                limit,
                first: true,
            };
            run(ThreadIdx(t), &mut batch)?;
            q.settle(&mut self.pool);
            // Where the thread goes on next time: by then out of the cache, unless fetched now.
            q.prefetch();
            match q.first_ns() {
                // Back into the heap at its new place (one sift down).
                Some(n) => *top = Reverse((n, t)),
                None => {
                    PeekMut::pop(top);
                    // A thread's burst can queue many runs: give the memory back (a trace may
                    // have thousands of short-lived threads).
                    if q.runs.capacity() > RUNS_KEEP {
                        q.runs = VecDeque::new();
                    }
                }
            }
        }
        Ok(())
    }

    /// Capacity (in events) of all the threads' queues, and how many threads are waiting to
    /// be handed on (tests: memory stays bounded by what is queued).
    #[cfg(test)]
    pub fn queued_capacity(&self) -> (usize, usize) {
        let cap = self
            .queues
            .iter()
            .flat_map(|(_, q)| q.runs.iter())
            .map(|r| match r {
                Run::Events { events, .. } => events.capacity(),
                Run::Dropped { .. } => 1,
            })
            .sum();
        (cap, self.ready.len())
    }
}

/// A thread's items handed on together, in order: runs of events ([`Batch::take`]) and drops.
pub(crate) struct Batch<'a> {
    queue: &'a mut Queue,
    items: &'a mut usize,
    pool: &'a mut Pool,
    /// The batch's last time, and whether items at that very time are in it.
    until: u64,
    at_until: bool,
    /// The drain's limit: how far [`Batch::take_ahead`] may go.
    limit: u64,
    first: bool,
}

/// What [`Batch::take`] took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Events `from..to` of the front run ([`Batch::events`]).
    Events { from: usize, to: usize },
    /// This many events of the thread were dropped here.
    Dropped(u64),
}

impl Batch<'_> {
    /// The next items up to the batch's end: the front run's events up to the batch's time
    /// limit (at least one at the batch's start), or a drop; `None` past the batch's end.
    #[inline(always)]
    pub fn take(&mut self) -> Option<Taken> {
        self.queue.settle(self.pool);
        let taken = match self.queue.runs.front_mut()? {
            Run::Events { events, pos } => {
                let from = *pos;
                let rest = &events[from..];
                // The events up to the limit (a scan, not a binary search: the run's far end
                // is out of the cache, its next few events are not).
                let skip = usize::from(self.first).min(rest.len());
                let (until, at_until) = (self.until, self.at_until);
                let n = rest[skip..]
                    .iter()
                    .position(|e| e.ts > until || (e.ts == until && !at_until))
                    .map_or(rest.len(), |p| p + skip);
                if n == 0 {
                    return None;
                }
                *pos += n;
                *self.items -= n;
                Taken::Events { from, to: from + n }
            }
            Run::Dropped { ns, count } => {
                let past = *ns > self.until || (*ns == self.until && !self.at_until);
                if past && !self.first {
                    return None;
                }
                let count = *count;
                self.queue.runs.pop_front();
                *self.items -= 1;
                Taken::Dropped(count)
            }
        };
        self.first = false;
        Some(taken)
    }

    /// Up to `max` of the front run's next events past the batch's end but not past the
    /// drain's limit (none at a drop): what the replay may take ahead of the other threads
    /// (`Replay::run`). What it does not replay goes back with [`Batch::give_back`].
    #[inline]
    pub fn take_ahead(&mut self, max: usize) -> Option<(usize, usize)> {
        self.queue.settle(self.pool);
        let Some(Run::Events { events, pos }) = self.queue.runs.front_mut() else {
            return None;
        };
        let from = *pos;
        let rest = &events[from..];
        let rest = &rest[..rest.len().min(max)];
        let limit = self.limit;
        let n = rest.iter().position(|e| e.ts > limit).unwrap_or(rest.len());
        if n == 0 {
            return None;
        }
        *pos += n;
        *self.items -= n;
        Some((from, from + n))
    }

    /// Puts back the last `n` events taken (by [`Batch::take_ahead`]; the front run is still
    /// theirs).
    pub fn give_back(&mut self, n: usize) {
        if let Some(Run::Events { pos, .. }) = self.queue.runs.front_mut() {
            debug_assert!(n <= *pos);
            let n = n.min(*pos);
            *pos -= n;
            *self.items += n;
        }
    }

    /// Events `from..to` of the front run, as [`Batch::take`] took them.
    #[inline(always)]
    pub fn events(&self, from: usize, to: usize) -> &[Event] {
        match self.queue.runs.front() {
            Some(Run::Events { events, .. }) => &events[from..to],
            _ => &[],
        }
    }

    /// The thread's items queued after those taken.
    #[inline]
    pub fn ahead(&self) -> Ahead<'_> {
        Ahead {
            hot: &[],
            cold: &self.queue.runs,
        }
    }
}

/// A thread's items queued after the one being replayed: its next events, as far as read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ahead<'a> {
    /// The rest of the events taken with it.
    hot: &'a [Event],
    /// The thread's runs after those.
    cold: &'a VecDeque<Run>,
}

impl<'a> Ahead<'a> {
    /// A thread's next events when they are `events` alone (tests of the rules, without a
    /// queue).
    #[cfg(test)]
    pub fn only(events: &'a [Event]) -> Ahead<'a> {
        static NO_RUNS: VecDeque<Run> = VecDeque::new();
        Ahead {
            hot: events,
            cold: &NO_RUNS,
        }
    }

    /// What lies ahead of an event taken with `rest` after it.
    #[inline(always)]
    pub fn after(self, rest: &'a [Event]) -> Ahead<'a> {
        Ahead { hot: rest, ..self }
    }

    /// The next event, if the next item is one.
    #[inline(always)]
    pub fn next_event(self) -> Option<&'a Event> {
        match self.hot.first() {
            Some(e) => Some(e),
            None => self.cold_next(),
        }
    }

    fn cold_next(self) -> Option<&'a Event> {
        match self.cold.front() {
            Some(Run::Events { events, pos }) => events.get(*pos).or_else(|| {
                // A spent run is dropped at the next take: the one after it.
                match self.cold.get(1) {
                    Some(Run::Events { events, pos }) => events.get(*pos),
                    _ => None,
                }
            }),
            _ => None,
        }
    }

    /// The next events, up to a drop (after which the thread's stack is unknown), without
    /// Continuation events (their `sp` is a heap address, not a stack pointer).
    pub fn events(self) -> impl Iterator<Item = &'a Event> {
        let cold = self
            .cold
            .iter()
            .map_while(|run| match run {
                Run::Events { events, pos } => Some(&events[*pos..]),
                Run::Dropped { .. } => None,
            })
            .flatten();
        self.hot
            .iter()
            .chain(cold)
            .filter(|e| e.kind != EventKind::Continuation)
    }
}
