//! A thread's stream (the default; `ELTRACE_STREAM=0` for raw records; docs/design.md
//! "Streams"): the thread encodes each
//! event into a stream chunk's bytes (eltrace_trace::stream) in a byte ring, the fast path's
//! stubs inline (fast/stream.rs) and the Rust side ([`Stream::push`]) otherwise, and the writer
//! cuts what was published into chunks ([`Stream::cut`]) and appends them. Nothing reads an
//! event a second time: the writer frames and moves finished bytes.
//!
//! ```text
//! word   bits 0-39 bytes written (mod 2^40), bits 40-63 events written  producer, Release
//! tail   bits 0-31 bytes cut (mod 2^32), bits 32-63 events cut (mod 2^32)  writer, Release
//! limit  the stubs write inline while word - tail (bytes, mod 2^32) < limit
//! ```
//!
//! A stub adds `len | 1 << 40` to `word` (one instruction for both counts). The writer takes a
//! consistent pair of byte and event counts from one load of `word`: the events since its last
//! cut are fewer than 2^24, as a byte stands for at most 15 (a run's two bytes for 30 events)
//! and the ring holds at most 2^20 bytes; and each
//! time the byte count passes 2^40 (a TiB) its carry adds one to the events, which the
//! writer, counting whole bytes, takes off. The state the encoding continues (previous time
//! and SP, the last frame-ending event, the prediction stack's depth, the callee table's key,
//! the timeless run's held events and, in the buffer after the byte ring, the stack's 2,048
//! frames and the table's 4,096 entries) is the owning thread's only. A run holds a loop's
//! events unwritten until it ends (eltrace_trace::stream::put_event); the writer writes what
//! it holds once the thread exited, or at the end ([`Stream::frame_held`]).
//!
//! `limit` is half the ring after a cut: a stub that finds the ring half full falls back to
//! Rust, which wakes the writer and raises it to all but the room the Rust side keeps. It is
//! 0 while drops are pending (the Rust side writes the reset first). A stub also falls back
//! when an event could run past the byte ring's end (`last_inline`; the Rust side wraps it)
//! and for a Leave the stack's top does not predict while the stack is not empty (the Rust
//! side searches).

use core::sync::atomic::{AtomicU64, Ordering};

use eltrace_trace::EventKind;
use eltrace_trace::stream::{
    CALLEE_ENTRIES, CALLEE_HEAD, MAX_EVENT_BYTES, RESET_HEAD, RUN_MAX, STACK_ENTRIES, put_pending,
};

/// The byte ring's default size (for the default 4,096-record `ELTRACE_BUFFER_EVENTS`). Half a
/// MiB: the slack a thread has while the writer, on a busy machine, takes a while to come.
pub const DEFAULT_BYTES: usize = 1 << 19;
/// The largest byte ring (with its stack, a thread's stream stays within 2 MiB).
pub const MAX_BYTES: usize = 1 << 20;
/// The byte ring of a thread that starts while the buffers use the whole cap
/// (`ELTRACE_MAX_BUFFER_MB`).
pub const SMALL_BYTES: usize = 1 << 15;
/// The smallest byte ring.
pub const MIN_BYTES: usize = 1 << 10;

/// The byte ring for `ELTRACE_BUFFER_EVENTS` = `events` (a ring of that many records): 128
/// bytes per record, a power of two from [`MIN_BYTES`] to [`MAX_BYTES`].
pub fn bytes_for_events(events: usize) -> usize {
    events
        .saturating_mul(DEFAULT_BYTES / 4096)
        .next_power_of_two()
        .clamp(MIN_BYTES, MAX_BYTES)
}
/// Bytes the Rust side keeps free for what it writes at once: a reset and an event.
const ROOM: u64 = 64;
const STACK_MASK: u64 = STACK_ENTRIES as u64 - 1;
const POS40: u64 = (1 << 40) - 1;
const EVENTS24: u64 = (1 << 24) - 1;
/// What `word` gains per event besides its bytes.
pub const ONE_EVENT: u64 = 1 << 40;

/// One thread's stream state; every field but the fixed ones an atomic so that the writer and
/// the sampler may read the ones they read while the owning thread writes (the stubs store
/// them with plain moves, which are these atomics' relaxed stores on x86-64). One cache line
/// for what the owning thread writes at every event, one for what it only reads, one for what
/// the writer writes at a cut and the stubs read, one for the writer's and sampler's own: the
/// writer's cuts do not take the producer's line away at every event, nor the reverse.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct Stream {
    // Written by the owning thread.
    word: AtomicU64,
    prev_sp: AtomicU64,
    prev_ts: AtomicU64,
    /// The last frame-ending event's function (`u64::MAX`: none) and SP.
    last_func: AtomicU64,
    last_sp: AtomicU64,
    depth: AtomicU64,
    /// Timeless events encoded and not yet written (eltrace_trace::stream::StreamState::pending:
    /// twice a run's pairs, plus 1 for a repeated Enter waiting for its Leave).
    run: AtomicU64,
    /// The callee table's key of the last event: its function `<< 1`, plus 1 for an Enter.
    prev_key: AtomicU64,
    // Fixed (but for the drop counts, written at a drop).
    /// The byte ring (`bytes` long, a power of two up to [`MAX_BYTES`]) and, after it, the
    /// prediction stack's frames, then the callee table's entries (at `stack` + [`CALLEES`]);
    /// the ring's mask; the last offset at which a stub starts an event (one cannot run past
    /// the ring's end from there).
    buf: *mut u8,
    stack: *mut u8,
    mask: u64,
    last_inline: u64,
    /// Events lost in all (reported in place by resets, or at the end).
    dropped: AtomicU64,
    /// Events lost since the last reset (lossy recording, or the writer stopped).
    pending_drops: AtomicU64,
    /// The stubs may write inline (false: `limit` stays 0).
    inline: bool,
    _fixed: [u8; 15],
    // Written by the writer, read by the stubs.
    tail: AtomicU64,
    limit: AtomicU64,
    _gate: [u64; 6],
    // The writer's own: bytes and events cut so far (whole), and when (ns); the sampler's
    // last look at the events written (whole).
    cut_bytes: AtomicU64,
    cut_events: AtomicU64,
    cut_ns: AtomicU64,
    sampled: AtomicU64,
}

/// Byte offsets of the fields the stubs use, from the state.
pub mod off {
    use core::mem::offset_of;

    use super::Stream;

    pub const WORD: usize = offset_of!(Stream, word);
    pub const TAIL: usize = offset_of!(Stream, tail);
    pub const LIMIT: usize = offset_of!(Stream, limit);
    pub const PREV_SP: usize = offset_of!(Stream, prev_sp);
    pub const PREV_TS: usize = offset_of!(Stream, prev_ts);
    pub const LAST_FUNC: usize = offset_of!(Stream, last_func);
    pub const LAST_SP: usize = offset_of!(Stream, last_sp);
    pub const DEPTH: usize = offset_of!(Stream, depth);
    pub const BUF: usize = offset_of!(Stream, buf);
    pub const STACK: usize = offset_of!(Stream, stack);
    pub const MASK: usize = offset_of!(Stream, mask);
    pub const LAST_INLINE: usize = offset_of!(Stream, last_inline);
    pub const PREV_KEY: usize = offset_of!(Stream, prev_key);
    pub const RUN: usize = offset_of!(Stream, run);
}

/// The callee table's offset from the stack's start (after its frames).
pub const CALLEES: usize = 16 * STACK_ENTRIES;
const CALLEE_MASK: u64 = CALLEE_ENTRIES as u64 - 1;

impl Stream {
    /// A stream with a byte ring of `bytes` (a power of two from [`MIN_BYTES`] to [`MAX_BYTES`]);
    /// timeless ordering times start at `start_ns`; `inline`: the stubs may write it.
    pub fn new(bytes: usize, start_ns: u64, inline: bool) -> Stream {
        assert!(bytes.is_power_of_two() && (MIN_BYTES..=MAX_BYTES).contains(&bytes));
        let buf: Box<[u8]> = vec![0u8; Stream::buffer(bytes)].into_boxed_slice();
        let mut s = Stream::disabled();
        s.buf = Box::into_raw(buf).cast::<u8>();
        // SAFETY: the buffer holds the ring's `bytes` and the stack after them.
        s.stack = unsafe { s.buf.add(bytes) };
        s.mask = bytes as u64 - 1;
        s.last_inline = (bytes - MAX_EVENT_BYTES) as u64;
        s.inline = inline;
        s.limit = AtomicU64::new(if inline { s.half() } else { 0 });
        s.cut_ns = AtomicU64::new(start_ns);
        s
    }

    /// Sets `limit` to `value` if the stubs may write and no drops are pending.
    fn open_to(&self, value: u64) {
        if self.inline && self.pending_drops.load(Ordering::Relaxed) == 0 {
            self.limit.store(value, Ordering::Relaxed);
            // A drop counted meanwhile (`drop_one`, on the owning thread) keeps the stubs out:
            // its reset must come before the next event.
            core::sync::atomic::fence(Ordering::SeqCst);
            if self.pending_drops.load(Ordering::Relaxed) != 0 {
                self.limit.store(0, Ordering::Relaxed);
            }
        }
    }

    /// No stream: no buffer, and a limit of 0 that sends every stub to the recording stubs.
    pub const fn disabled() -> Stream {
        Stream {
            word: AtomicU64::new(0),
            prev_sp: AtomicU64::new(0),
            prev_ts: AtomicU64::new(0),
            last_func: AtomicU64::new(u64::MAX),
            last_sp: AtomicU64::new(0),
            depth: AtomicU64::new(0),
            run: AtomicU64::new(0),
            prev_key: AtomicU64::new(0),
            buf: core::ptr::null_mut(),
            stack: core::ptr::null_mut(),
            mask: 0,
            last_inline: 0,
            dropped: AtomicU64::new(0),
            pending_drops: AtomicU64::new(0),
            inline: false,
            _fixed: [0; 15],
            tail: AtomicU64::new(0),
            limit: AtomicU64::new(0),
            _gate: [0; 6],
            cut_bytes: AtomicU64::new(0),
            cut_events: AtomicU64::new(0),
            cut_ns: AtomicU64::new(0),
            sampled: AtomicU64::new(0),
        }
    }

    /// Whether this is a stream (not [`Stream::disabled`]).
    #[inline(always)]
    pub fn is_enabled(&self) -> bool {
        !self.buf.is_null()
    }

    /// The buffer of a ring of `bytes`: the ring, then the stack, then the callee table.
    const fn buffer(bytes: usize) -> usize {
        bytes + CALLEES + 8 * CALLEE_ENTRIES
    }

    /// The memory a stream with a ring of `bytes` takes.
    pub const fn bytes_for(bytes: usize) -> usize {
        Stream::buffer(bytes) + core::mem::size_of::<Stream>()
    }

    fn size(&self) -> u64 {
        self.mask + 1
    }

    /// `limit` after a cut: half the ring.
    fn half(&self) -> u64 {
        self.size() / 2
    }

    /// `limit` once the writer was woken: what the Rust side may fill.
    fn full(&self) -> u64 {
        self.size() - ROOM
    }

    fn used(&self, word: u64) -> u64 {
        (word.wrapping_sub(self.tail.load(Ordering::Acquire))) & 0xFFFF_FFFF
    }

    /// Producer: encodes one event (after a reset, if drops are pending) as the stubs do, or
    /// returns false when the ring has no room for it. Wakes nobody: the caller does (once the
    /// ring is half full, [`Stream::wants_writer`]).
    pub fn push(&self, timeless: bool, ts: u64, code: u8, func: u32, sp: u64) -> bool {
        let word = self.word.load(Ordering::Relaxed);
        if self.used(word) > self.full() {
            return false;
        }
        let mut tmp = [0u8; 64];
        let (mut n, mut events) = (0, 0);
        let drops = self.pending_drops.load(Ordering::Relaxed);
        if drops > 0 {
            // The events a run holds came before the ones lost.
            events = self.run.swap(0, Ordering::Relaxed);
            n += put_pending(&mut tmp, events);
            n += put(&mut tmp[n..], RESET_HEAD);
            n += put(&mut tmp[n..], drops);
            self.prev_sp.store(0, Ordering::Relaxed);
            self.prev_ts.store(0, Ordering::Relaxed);
            self.last_func.store(u64::MAX, Ordering::Relaxed);
            self.depth.store(0, Ordering::Relaxed);
            self.prev_key.store(0, Ordering::Relaxed);
            for i in 0..CALLEE_ENTRIES as u64 {
                self.set_callee(i, 0);
            }
            self.pending_drops.store(0, Ordering::Relaxed);
        }
        let (len, more) = self.encode(&mut tmp[n..], timeless, ts, code, func, sp);
        n += len;
        events += more;
        let start = (word & POS40) as usize;
        for (i, &b) in tmp[..n].iter().enumerate() {
            // SAFETY: the ring holds `mask + 1` bytes and the index is masked; these bytes
            // lie past the published word, where neither the writer nor anyone else reads.
            unsafe { self.buf.add((start + i) & self.mask as usize).write(b) };
        }
        self.word.store(
            word.wrapping_add(n as u64 + events * ONE_EVENT),
            Ordering::Release,
        );
        if drops > 0 {
            self.open_to(self.half());
        }
        true
    }

    /// Whether the ring is half full: then the producer wakes the writer and calls
    /// [`Stream::writer_woken`] (the writer asks this too before it sleeps).
    pub fn wants_writer(&self) -> bool {
        self.used(self.word.load(Ordering::Relaxed)) >= self.half()
    }

    /// Producer: the writer was woken; the stubs may write on up to the Rust side's room
    /// (unless drops are pending).
    pub fn writer_woken(&self) {
        self.open_to(self.full());
    }

    /// Producer: whether [`Stream::push`] would find room (a waiter's check).
    pub fn has_room(&self) -> bool {
        self.used(self.word.load(Ordering::Relaxed)) <= self.full()
    }

    /// Producer: one event lost; the next one pushed follows a reset.
    pub fn drop_one(&self) {
        let n = self.pending_drops.load(Ordering::Relaxed) + 1;
        self.pending_drops.store(n, Ordering::Relaxed);
        // After the count (pairs with `open_to`): the writer either sees the drop and keeps
        // the stubs out, or opened the limit before this store closes it again.
        core::sync::atomic::fence(Ordering::SeqCst);
        self.limit.store(0, Ordering::Relaxed);
        let all = self.dropped.load(Ordering::Relaxed) + 1;
        self.dropped.store(all, Ordering::Relaxed);
    }

    /// Events lost in all (reported in place by resets, or at the end).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Writer, once the thread retired: drops no reset will report.
    pub fn take_pending_drops(&self) -> u64 {
        self.pending_drops.swap(0, Ordering::Relaxed)
    }

    /// The encoding of one event (eltrace_trace::stream::put_event on this state), into `out`
    /// (at least [`MAX_EVENT_BYTES`] + 3 long); returns its length and the events written (a
    /// timeless run's included, or none while a run holds them).
    fn encode(
        &self,
        out: &mut [u8],
        timeless: bool,
        ts: u64,
        code: u8,
        func: u32,
        sp: u64,
    ) -> (usize, u64) {
        let r = Ordering::Relaxed;
        let (mut n, mut events) = (0, 1);
        if timeless {
            let (len, held, taken) = self.run_step(out, code, func, sp);
            if taken {
                return (len, held);
            }
            (n, events) = (len, 1 + held);
        }
        let out = &mut out[n..];
        let prev_ts = self.prev_ts.load(r);
        let ts = ts.max(prev_ts);
        let time = if timeless { 0 } else { (ts - prev_ts) << 4 };
        let ends = matches!(code, 1..=3);
        let depth = self.depth.load(r);
        let top = (depth > 0).then(|| self.frame(depth - 1));
        let me = (u64::from(func), sp);
        let enter = code == EventKind::Enter.code();
        let d = sp.wrapping_sub(self.prev_sp.load(r)) as i64;
        let zz = ((d << 1) ^ (d >> 63)) as u64;
        let key = self.prev_key.load(r) & CALLEE_MASK;
        let entry = u64::from(func) | zz << 32;
        let repeat = enter && (self.last_func.load(r), self.last_sp.load(r)) == me;
        if ends && top == Some(me) {
            n += put(out, time | u64::from(code) << 1 | 1);
            self.depth.store(depth - 1, r);
        } else {
            let at = n;
            if repeat {
                n += put(out, time | if timeless { 0x10 } else { 1 });
            } else if enter && zz >> 32 == 0 && self.callee(key) == entry {
                n += put(out, time | CALLEE_HEAD);
            } else {
                n += put(out, time | u64::from(code) << 1);
                n += put(&mut out[n - at..], u64::from(func));
                n += put(&mut out[n - at..], zz);
            }
            if enter {
                self.set_frame(depth, me);
                self.depth.store(depth + 1, r);
            } else if ends {
                let search = depth.min(eltrace_trace::stream::SEARCH as u64);
                if let Some(k) = (0..search).find(|&k| self.frame(depth - 1 - k) == me) {
                    self.depth.store(depth - 1 - k, r);
                }
            }
        }
        if ends {
            self.last_func.store(me.0, r);
            self.last_sp.store(sp, r);
        }
        if enter && !repeat {
            self.set_callee(key, entry);
        }
        self.prev_key.store(me.0 << 1 | u64::from(enter), r);
        self.prev_sp.store(sp, r);
        self.prev_ts.store(ts, r);
        (n, events)
    }

    /// A timeless event's run step (eltrace_trace::stream::put_event): a run takes the Leave
    /// of the repeated Enter waiting, and a repeated Enter; what it holds is written into
    /// `out` first for any other event, and for a repeated Enter when an Enter waits already
    /// or the run is full. Returns the bytes and the held events written, and whether the
    /// run took the event.
    fn run_step(&self, out: &mut [u8], code: u8, func: u32, sp: u64) -> (usize, u64, bool) {
        let r = Ordering::Relaxed;
        let run = self.run.load(r);
        let depth = self.depth.load(r);
        let me = (u64::from(func), sp);
        if run & 1 == 1 && code == EventKind::Leave.code() && self.frame(depth - 1) == me {
            self.depth.store(depth - 1, r);
            self.prev_key.store(me.0 << 1, r);
            self.prev_sp.store(sp, r);
            self.run.store(run + 1, r);
            return (0, 0, true);
        }
        let enter = code == EventKind::Enter.code();
        let repeat = enter && (self.last_func.load(r), self.last_sp.load(r)) == me;
        let (mut n, mut held) = (0, 0);
        if !repeat || run & 1 == 1 || run >> 1 == RUN_MAX {
            held = self.run.swap(0, r);
            n = put_pending(out, held);
        }
        if repeat {
            self.set_frame(depth, me);
            self.depth.store(depth + 1, r);
            self.prev_key.store(me.0 << 1 | 1, r);
            self.prev_sp.store(sp, r);
            self.run.store(self.run.load(r) | 1, r);
        }
        (n, held, repeat)
    }

    /// Prediction-stack frame `i` (modulo its size): `(func, sp)`.
    fn frame(&self, i: u64) -> (u64, u64) {
        let at = 16 * (i & STACK_MASK) as usize;
        // SAFETY: the stack's 2,048 16-byte frames follow the byte ring in the buffer; only the
        // owning thread touches them.
        unsafe {
            (
                self.stack.add(at).cast::<u64>().read(),
                self.stack.add(at + 8).cast::<u64>().read(),
            )
        }
    }

    fn set_frame(&self, i: u64, (func, sp): (u64, u64)) {
        let at = 16 * (i & STACK_MASK) as usize;
        // SAFETY: as in `frame`.
        unsafe {
            self.stack.add(at).cast::<u64>().write(func);
            self.stack.add(at + 8).cast::<u64>().write(sp);
        }
    }

    /// Callee-table entry `key` (below [`CALLEE_ENTRIES`]).
    fn callee(&self, key: u64) -> u64 {
        // SAFETY: the table's entries follow the stack's frames in the buffer; only the owning
        // thread touches them.
        unsafe {
            self.stack
                .add(CALLEES + 8 * key as usize)
                .cast::<u64>()
                .read()
        }
    }

    fn set_callee(&self, key: u64, entry: u64) {
        // SAFETY: as in `callee`.
        unsafe {
            self.stack
                .add(CALLEES + 8 * key as usize)
                .cast::<u64>()
                .write(entry)
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.buf.is_null() {
            return;
        }
        let slice =
            core::ptr::slice_from_raw_parts_mut(self.buf, Stream::buffer(self.size() as usize));
        // SAFETY: `buf` came from `Box::into_raw` of a boxed slice of this length.
        drop(unsafe { Box::from_raw(slice) });
    }
}

/// `v` as a varint at the start of `out`; returns its length.
fn put(out: &mut [u8], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        out[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

const _: () = {
    assert!(DEFAULT_BYTES.is_power_of_two() && DEFAULT_BYTES <= MAX_BYTES);
    // The events a full ring holds fit the word's 24 bits (module doc).
    assert!(MAX_BYTES as u64 * eltrace_trace::stream::MAX_EVENTS_PER_BYTE < 1 << 24);
    // The cache lines of the struct's doc.
    assert!(core::mem::offset_of!(Stream, buf) == 64 && core::mem::offset_of!(Stream, tail) == 128);
    assert!(core::mem::offset_of!(Stream, cut_bytes) == 192);
    assert!(core::mem::size_of::<AtomicU64>() == 8 && core::mem::size_of::<*mut u8>() == 8);
};

mod cut;

#[cfg(test)]
mod tests;
