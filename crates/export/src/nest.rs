//! Frames held per thread until they can be written in order, shared by the exporters that
//! write a thread's frames by start time (Chrome, Perfetto, speedscope).
//!
//! The analysis hands frames over as they close, children first. A [`Holder`] keeps each
//! thread's frames (clipped to the export's window) until the thread's root frame closes,
//! then hands them over sorted parents first; [`walk`] turns such a batch into the opens and
//! closes of a properly nested stack:
//!
//! ```text
//! closed:  C 5..10 (depth 1)  A 0..10 (depth 0)       held sorted:  A 0..10, C 5..10
//! walk:    open A @0, open C @5, close C @10, close A @10
//! ```
//!
//! It also notes where events were dropped on a thread ([`Holder::dropped`]): the frames a
//! drop closed ([`EndKind::Lost`]) end there.
//!
//! A holder serves one process; its times are moved by the process's start on the export's
//! timeline ([`crate::ProcessMeta::start_ns`]) before they are clipped to the window.

use std::collections::{BTreeMap, HashMap};

use eltrace_analysis::{EndKind, Frame, FunctionIdx, SegmentRef, ThreadIdx};

use crate::TimeWindow;

/// A frame as held: on the export's timeline, clipped to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    pub start: u64,
    pub end: u64,
    pub depth: u32,
    pub func: FunctionIdx,
    pub kind: EndKind,
    pub segment: Option<SegmentRef>,
    pub enter_value: Option<u32>,
    pub leave_value: Option<u32>,
}

/// Each thread's frames until its root frame closes.
#[derive(Debug, Default)]
pub(crate) struct Holder {
    window: TimeWindow,
    /// Added to the process's times: its start on the export's timeline.
    offset: u64,
    pending: HashMap<ThreadIdx, Vec<Held>>,
    /// (thread, time) → events dropped there, inside the window.
    drops: BTreeMap<(ThreadIdx, u64), u64>,
}

impl Holder {
    /// A holder of one process's frames whose times start `offset` ns into the export.
    pub fn new(window: TimeWindow, offset: u64) -> Self {
        Holder {
            window,
            offset,
            ..Holder::default()
        }
    }

    /// Holds `frame` (if it overlaps the window); when it is the thread's root frame, calls
    /// `ready` with the thread's held frames sorted by start, parents first.
    pub fn frame<E>(
        &mut self,
        thread: ThreadIdx,
        frame: &Frame,
        mut ready: impl FnMut(&[Held]) -> Result<(), E>,
    ) -> Result<(), E> {
        let held = self.pending.entry(thread).or_default();
        let (start, end) = (frame.start_ns + self.offset, frame.end_ns + self.offset);
        if let Some((start, end)) = self.window.clip(start, end) {
            held.push(Held {
                start,
                end,
                depth: frame.depth,
                func: frame.func,
                kind: frame.end,
                segment: frame.segment,
                enter_value: frame.enter_value,
                leave_value: frame.leave_value,
            });
        }
        if frame.depth == 0 && !held.is_empty() {
            sort(held);
            ready(held)?;
            // Keep the allocation for the thread's next root frame.
            held.clear();
        }
        Ok(())
    }

    /// Hands over what is still held (frames whose root never closed), thread by thread in
    /// index order.
    pub fn drain<E>(
        &mut self,
        mut ready: impl FnMut(ThreadIdx, &[Held]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut threads: Vec<ThreadIdx> = self.pending.keys().copied().collect();
        threads.sort_unstable();
        for t in threads {
            if let Some(mut held) = self.pending.remove(&t)
                && !held.is_empty()
            {
                sort(&mut held);
                ready(t, &held)?;
            }
        }
        Ok(())
    }

    /// `count` events of `thread` were dropped at `at_ns` (the process's time).
    pub fn dropped(&mut self, thread: ThreadIdx, at_ns: u64, count: u64) {
        let at = at_ns + self.offset;
        if self.window.clip(at, at).is_some() {
            *self.drops.entry((thread, at)).or_default() += count;
        }
    }

    /// Where events were dropped on `thread` (inside the window), in order: (time, count).
    pub fn drops(&self, thread: ThreadIdx) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.drops
            .range((thread, 0)..=(thread, u64::MAX))
            .map(|(&(_, t), &n)| (t, n))
    }
}

/// Parents before children: by start, then depth, then end (a zero-length frame before a
/// sibling that starts with it).
fn sort(held: &mut [Held]) {
    held.sort_unstable_by_key(|f| (f.start, f.depth, f.end));
}

/// One step of [`walk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    Open(&'a Held),
    Close(&'a Held),
}

/// Calls `step` with the opens and closes of sorted frames (see [`Holder::frame`]), in an
/// order that nests: a frame closes before any frame at its depth or above opens, and every
/// frame opened is closed. Times never go back.
pub(crate) fn walk<E>(
    frames: &[Held],
    mut step: impl FnMut(Step<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut open: Vec<&Held> = Vec::new();
    for f in frames {
        while let Some(top) = open.last()
            && (top.depth >= f.depth || top.end < f.start)
        {
            step(Step::Close(top))?;
            open.pop();
        }
        step(Step::Open(f))?;
        open.push(f);
    }
    while let Some(top) = open.pop() {
        step(Step::Close(top))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(start: u64, end: u64, depth: u32) -> Held {
        Held {
            start,
            end,
            depth,
            func: FunctionIdx(depth),
            kind: EndKind::Leave,
            segment: None,
            enter_value: None,
            leave_value: None,
        }
    }

    fn steps(mut frames: Vec<Held>) -> Vec<(char, u64, u32)> {
        sort(&mut frames);
        let mut out = Vec::new();
        walk(&frames, |s| -> Result<(), ()> {
            out.push(match s {
                Step::Open(f) => ('O', f.start, f.depth),
                Step::Close(f) => ('C', f.end, f.depth),
            });
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn nests_equal_ends_and_zero_lengths() {
        // A 0..10 with children B 0..4, a zero-length Z 4..4, C 4..10 (ends with A) and
        // C's zero-length child D 10..10.
        let got = steps(vec![
            held(10, 10, 2),
            held(4, 10, 1),
            held(4, 4, 1),
            held(0, 4, 1),
            held(0, 10, 0),
        ]);
        assert_eq!(
            got,
            vec![
                ('O', 0, 0),
                ('O', 0, 1),
                ('C', 4, 1),
                ('O', 4, 1),
                ('C', 4, 1),
                ('O', 4, 1),
                ('O', 10, 2),
                ('C', 10, 2),
                ('C', 10, 1),
                ('C', 10, 0),
            ]
        );
    }

    #[test]
    fn clips_to_the_window_and_notes_drops() {
        let mut h = Holder::new(TimeWindow { from: 5, to: 20 }, 0);
        let frame = |start, end, depth, end_kind| Frame {
            func: FunctionIdx(0),
            start_ns: start,
            end_ns: end,
            depth,
            parent: None,
            children_ns: 0,
            end: end_kind,
            node: None,
            sp: 0,
            segment: None,
            enter_value: None,
            leave_value: None,
        };
        let mut batches = Vec::new();
        let t = ThreadIdx(3);
        for f in [
            frame(0, 4, 1, EndKind::Leave),
            frame(6, 8, 1, EndKind::Lost),
            frame(0, 8, 0, EndKind::Lost),
            frame(30, 40, 0, EndKind::Leave),
        ] {
            h.frame(t, &f, |b| -> Result<(), ()> {
                batches.push(b.iter().map(|f| (f.start, f.end)).collect::<Vec<_>>());
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(batches, vec![vec![(5, 8), (6, 8)]]);
        for (at, n) in [(8, 4), (8, 1), (20, 9), (12, 2)] {
            h.dropped(t, at, n);
        }
        assert_eq!(h.drops(t).collect::<Vec<_>>(), vec![(8, 5), (12, 2)]);
        assert_eq!(h.drops(ThreadIdx(2)).count(), 0);
    }

    /// A process that starts later on the export's timeline: its times move, then are clipped.
    #[test]
    fn moves_times_by_the_process_start() {
        let mut h = Holder::new(TimeWindow { from: 105, to: 200 }, 100);
        let frame = Frame {
            func: FunctionIdx(0),
            start_ns: 0,
            end_ns: 10,
            depth: 0,
            parent: None,
            children_ns: 0,
            end: EndKind::Leave,
            node: None,
            sp: 0,
            segment: None,
            enter_value: None,
            leave_value: None,
        };
        let mut got = Vec::new();
        h.frame(ThreadIdx(0), &frame, |b| -> Result<(), ()> {
            got.extend(b.iter().map(|f| (f.start, f.end)));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![(105, 110)]);
        h.dropped(ThreadIdx(0), 4, 1);
        h.dropped(ThreadIdx(0), 5, 2);
        assert_eq!(h.drops(ThreadIdx(0)).collect::<Vec<_>>(), vec![(105, 2)]);
    }
}
