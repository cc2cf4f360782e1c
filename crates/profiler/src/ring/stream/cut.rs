//! The writer's and the sampler's side of a thread's stream (the module above): what was
//! published since the last cut, taken as a chunk's bytes in place and released once written;
//! the chunk of what a timeless run holds when its thread is gone; the thread's event count.

use core::sync::atomic::Ordering;

use eltrace_trace::ThreadIdx;
use eltrace_trace::stream::put_pending;

use super::{EVENTS24, POS40, Stream};

/// What [`Stream::cut`] hands the writer: a chunk's bytes in one or two pieces of the ring.
pub struct Cut<'a> {
    pub parts: [&'a [u8]; 2],
    pub events: u64,
    /// Timeless chunks: the ordering times (the last cut's time, now).
    pub times: (u64, u64),
    word: u64,
}

impl Cut<'_> {
    /// The chunk of this cut, framed into `out` (eltrace_trace::stream::frame).
    pub fn frame(&self, out: &mut Vec<u8>, thread: ThreadIdx, timeless: bool) {
        eltrace_trace::stream::frame(
            out,
            thread,
            self.events,
            timeless.then_some(self.times),
            &self.parts,
        );
    }
}

impl Stream {
    /// Writer, once the thread retired or at the end, when all it published was cut: frames
    /// into `out` the chunk of the timeless events a run holds unwritten (they follow those
    /// bytes), if any; returns how many. At the end, a thread still running may add to a run
    /// meanwhile: those events are lost.
    pub fn frame_held(&self, out: &mut Vec<u8>, thread: ThreadIdx, now_ns: u64) -> u64 {
        let held = self.run.swap(0, Ordering::Relaxed);
        if held > 0 {
            let mut bytes = [0u8; 3];
            let n = put_pending(&mut bytes, held);
            let from = self.cut_ns.load(Ordering::Relaxed);
            let times = (from, now_ns.max(from));
            self.cut_ns.store(times.1, Ordering::Relaxed);
            eltrace_trace::stream::frame(out, thread, held, Some(times), &[&bytes[..n]]);
        }
        held
    }

    /// Writer, at the end: takes the events a run holds (counted as lost when what was
    /// published could not all be cut).
    pub fn take_held(&self) -> u64 {
        self.run.swap(0, Ordering::Relaxed)
    }

    /// Writer: the published word (what a later [`Stream::cut`] may take).
    pub fn published(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// Writer: what was published since the last cut up to `word` (a value
    /// [`Stream::published`] returned), or `None`; `now_ns` is the timeless chunk's last
    /// ordering time. Call [`Stream::release`] once its bytes are written.
    pub fn cut(&self, word: u64, now_ns: u64) -> Option<Cut<'_>> {
        let (bytes, events) = self.since_cut(word);
        if bytes == 0 {
            return None;
        }
        let size = self.size() as usize;
        let start = (self.cut_bytes.load(Ordering::Relaxed) as usize) & (size - 1);
        let first = (bytes as usize).min(size - start);
        // SAFETY: the bytes between the last cut and the published word were written before
        // the word's Release store (read with Acquire above), and the producer writes no byte
        // there until the tail moves past them; they lie in the ring's `size` bytes.
        let parts = unsafe {
            [
                core::slice::from_raw_parts(self.buf.add(start), first),
                core::slice::from_raw_parts(self.buf, bytes as usize - first),
            ]
        };
        let from = self.cut_ns.load(Ordering::Relaxed);
        Some(Cut {
            parts,
            events,
            times: (from, now_ns.max(from)),
            word,
        })
    }

    /// The bytes and events `word` holds beyond the last cut (module doc: the carry).
    pub(super) fn since_cut(&self, word: u64) -> (u64, u64) {
        let cut = self.cut_bytes.load(Ordering::Relaxed);
        let bytes = (word & POS40).wrapping_sub(cut) & POS40;
        let carries = (cut + bytes) >> 40;
        let events = (word >> 40)
            .wrapping_sub(carries)
            .wrapping_sub(self.cut_events.load(Ordering::Relaxed))
            & EVENTS24;
        (bytes, events)
    }

    /// Writer: the cut's bytes are written; the producer may reuse them.
    pub fn release(&self, cut: Cut<'_>) {
        let (more, _) = self.since_cut(cut.word);
        let bytes = self.cut_bytes.load(Ordering::Relaxed) + more;
        let events = self.cut_events.load(Ordering::Relaxed) + cut.events;
        self.cut_bytes.store(bytes, Ordering::Relaxed);
        self.cut_events.store(events, Ordering::Relaxed);
        self.cut_ns.store(cut.times.1, Ordering::Relaxed);
        self.tail
            .store((bytes & 0xFFFF_FFFF) | (events << 32), Ordering::Release);
        self.open_to(self.half());
    }

    /// Writer: whether everything published was cut.
    pub fn is_cut(&self) -> bool {
        self.since_cut(self.word.load(Ordering::Acquire)).0 == 0
    }

    /// Writer, at the end: events published and not cut (lost with the process).
    pub fn uncut_events(&self) -> u64 {
        self.since_cut(self.word.load(Ordering::Acquire)).1
    }

    /// Sampler: the events the thread has written so far (whole).
    pub fn events(&self) -> u64 {
        let word = self.word.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        // Events not cut are fewer than 2^24 (module doc); the cut ones' count is in the tail
        // (the carries, once per TiB, read from the writer's count without care).
        let cut = self.cut_bytes.load(Ordering::Relaxed);
        let carries = (cut + ((word & POS40).wrapping_sub(cut) & POS40)) >> 40;
        let uncut = ((word >> 40).wrapping_sub(carries).wrapping_sub(tail >> 32)) & EVENTS24;
        let seen = self.sampled.load(Ordering::Relaxed);
        // And those a run holds, written later where they are counted now.
        let held = self.run.load(Ordering::Relaxed);
        let now = (tail >> 32).wrapping_add(uncut).wrapping_add(held) & 0xFFFF_FFFF;
        // Widen the 32-bit count from the last look (fewer than 2^31 events between looks). A
        // look while a run is written may miss its events for a moment (the run cleared, the
        // word not yet added to): a count below the last stays the last.
        let ahead = now.wrapping_sub(seen) & 0xFFFF_FFFF;
        if ahead >= 1 << 31 {
            return seen;
        }
        let total = seen + ahead;
        self.sampled.store(total, Ordering::Relaxed);
        total
    }
}
