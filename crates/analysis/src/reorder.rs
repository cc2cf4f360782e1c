//! The reorder queue: the threads' events as read from the file, handed on in time order
//! across threads. The writer drains the threads' buffers one after another, so chunks of
//! different threads reach the file out of time order, but linking a resume to its call needs
//! the threads' events in time order: events wait until they are [`REORDER_NS`] older than the
//! newest event read (or the queue holds [`REORDER_MAX`] events). Each thread's run of items
//! is handed on as a [`Batch`], which also shows the thread's next events ([`Ahead`]).
//!
//! ```text
//! in the file:  T1 [t=100 enter A, t=300 leave A]    handed on:  T1 t=100 enter A
//! in the file:  T2 [t=200 enter B, t=250 leave B]                T2 t=200 enter B
//!                                                                T2 t=250 leave B
//!                                                                T1 t=300 leave A
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use eltrace_trace::{Event, ThreadIdx};

use crate::fxmap::DenseMap;

/// How long (trace time) events wait for other threads' earlier events.
const REORDER_NS: u64 = 250_000_000;
/// How many events may wait at most.
const REORDER_MAX: usize = 4 << 20;
/// An empty thread queue keeps at most this capacity.
const QUEUE_KEEP: usize = 256;

/// One queued item of a thread.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Item {
    Event(Event),
    /// This many events of the thread were dropped here.
    Dropped(u64),
}

/// A thread's items read but not handed on yet, with their times in ns.
#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<(u64, Item)>,
    last_ns: u64,
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
}

impl Reorder {
    /// Queues a chunk of a thread's events (`to_ns` converts their ticks); returns the time
    /// up to which the queued items can be handed on now.
    pub fn push_events(
        &mut self,
        thread: ThreadIdx,
        events: &[Event],
        to_ns: impl Fn(u64) -> u64,
    ) -> u64 {
        let q = self.queues.entry(thread.0, Queue::default);
        let was_empty = q.items.is_empty();
        for e in events {
            // Time never goes backwards within a thread, also across chunks.
            let ns = to_ns(e.ts).max(q.last_ns);
            q.last_ns = ns;
            q.items.push_back((ns, Item::Event(*e)));
        }
        if was_empty {
            if let Some(&(ns, _)) = q.items.front() {
                self.ready.push(Reverse((ns, thread.0)));
            }
        }
        self.items += events.len();
        if let Some(last) = events.last() {
            self.newest_ns = self.newest_ns.max(to_ns(last.ts));
        }
        if self.items > REORDER_MAX {
            u64::MAX
        } else {
            self.newest_ns.saturating_sub(REORDER_NS)
        }
    }

    /// Queues a drop of a thread's events, after its last queued event.
    pub fn push_dropped(&mut self, thread: ThreadIdx, count: u64) {
        let q = self.queues.entry(thread.0, Queue::default);
        if q.items.is_empty() {
            self.ready.push(Reverse((q.last_ns, thread.0)));
        }
        q.items.push_back((q.last_ns, Item::Dropped(count)));
        self.items += 1;
    }

    /// Hands on the queued items up to time `limit`, in time order across threads: `run`
    /// gets a thread's items up to the next other thread's first one (at least one).
    pub fn drain<E>(
        &mut self,
        limit: u64,
        mut run: impl FnMut(ThreadIdx, &mut Batch<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(&Reverse((ns, t))) = self.ready.peek() {
            if ns > limit {
                return Ok(());
            }
            self.ready.pop();
            let second = self.ready.peek().map_or(u64::MAX, |&Reverse((n, _))| n);
            let Some(q) = self.queues.get_mut(t) else {
                continue;
            };
            let mut batch = Batch {
                queue: q,
                items: &mut self.items,
                until: second.min(limit),
                first: true,
            };
            run(ThreadIdx(t), &mut batch)?;
            match q.items.front() {
                Some(&(n, _)) => self.ready.push(Reverse((n, t))),
                // A thread's burst can queue many events: give the memory back (a trace may
                // have thousands of short-lived threads).
                None if q.items.capacity() > QUEUE_KEEP => q.items = VecDeque::new(),
                None => {}
            }
        }
        Ok(())
    }

    /// Capacity (in events) of all the threads' queues, and how many threads are waiting to
    /// be handed on (tests: memory stays bounded by what is queued).
    #[cfg(test)]
    pub fn queued_capacity(&self) -> (usize, usize) {
        let cap = self.queues.iter().map(|(_, q)| q.items.capacity()).sum();
        (cap, self.ready.len())
    }
}

/// A thread's items handed on together, in order.
pub(crate) struct Batch<'a> {
    queue: &'a mut Queue,
    items: &'a mut usize,
    until: u64,
    first: bool,
}

impl Batch<'_> {
    /// The next item and its time, `None` past the batch's end.
    #[inline(always)]
    pub fn next_item(&mut self) -> Option<(u64, Item)> {
        let &(ns, item) = self.queue.items.front()?;
        if ns > self.until && !self.first {
            return None;
        }
        self.first = false;
        self.queue.items.pop_front();
        *self.items -= 1;
        Some((ns, item))
    }

    /// The thread's items queued after the one just taken.
    #[inline]
    pub fn ahead(&self) -> Ahead<'_> {
        Ahead(&self.queue.items)
    }
}

/// A thread's items queued after the one being replayed: its next events, as far as read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ahead<'a>(&'a VecDeque<(u64, Item)>);

impl<'a> Ahead<'a> {
    /// The next event, if the next item is one.
    #[inline]
    pub fn next_event(self) -> Option<&'a Event> {
        match self.0.front() {
            Some((_, Item::Event(e))) => Some(e),
            _ => None,
        }
    }

    /// The next events, up to a drop (after which the thread's stack is unknown).
    #[inline]
    pub fn events(self) -> impl Iterator<Item = &'a Event> {
        self.0.iter().map_while(|(_, item)| match item {
            Item::Event(e) => Some(e),
            Item::Dropped(_) => None,
        })
    }
}
