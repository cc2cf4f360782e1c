//! The per-thread event ring: a fixed-size single-producer/single-consumer queue of
//! [`RawRecord`]s. The producer is the thread the ring belongs to (ELT hooks, exception
//! callbacks); the consumer is whoever holds the ring's consumer lock: the same thread, which
//! encodes its own records into trace chunks when the ring is half full, or the writer thread
//! for a ring that fills slowly or whose thread exited (consumer.rs, outbox.rs). A streaming
//! ring (the default; `ELTRACE_STREAM=0` for records) holds no records: its thread encodes
//! into its [`stream`] instead.
//!
//! The layout of [`RawRecord`] and of [`Ring`]'s first cache lines is a contract with the
//! hand-written fast-path stubs (fast.rs), which write records exactly like [`Ring::push`];
//! they take every offset from [`stub`], computed from the types:
//!
//! ```text
//! RawRecord (16 bytes, align 8)               Ring (repr(C), align 64)
//!   +0  w0: u64  bits 0-47  time (ns), low 48    +0   head:          AtomicU64  producer: next sequence to write
//!                bits 48-63 key, low 16 bits     +8   pending_drops: AtomicU64  producer: drops not yet marked
//!   +8  w1: u64  bits 0-47  caller SP or 0       +16  total_drops:   AtomicU64  producer: all drops
//!                bits 48-63 key, high 16 bits    +24  records:       *mut RawRecord
//!                                                +32  mask:          u64  capacity - 1 (capacity is 2^k)
//!   key (u32) = func | kind << 28                +40  capacity:      u64  0 = over the memory cap
//!     func: FunctionIdx (28 bits)                +48  inline_limit:  AtomicU64  producer: fast-path fill limit
//!     kind: EventKind code or KIND_DROPPED       +56  threshold:     u64  inline_limit while no drops are pending
//!                                                +64  tail:          AtomicU64  consumer: next sequence to read
//! ```
//!
//! A stub writes `w0 = time`, `w1 = sp` as whole words, then the key's halves as 16-bit
//! stores at +6 and +14. The time is in nanoseconds: the stubs convert their RDTSC inline
//! (fast.rs `tick_to_ns`), the Rust paths call `clock::to_ns`, so the encoder, which reads
//! every record back, converts nothing. 48 bits hold any user-space stack address on x86-64
//! Linux (below 2^47), a drop count, and the time's low bits: the encoder restores the high
//! bits from the time when it drains the ring ([`extend48`]; 2^48 ns are 78 hours, and a
//! ring is drained within milliseconds). 16 bytes instead of 24 put 65536 events in
//! 1 MiB.
//!
//! Producer protocol: `h = head (own value)`, `t = tail.load(Acquire)`, `free = capacity - (h - t)`.
//! If `pending_drops == 0` and `free >= 1`: write the record at `records[h & mask]`, then
//! `head.store(h + 1, Release)`. If `pending_drops > 0` and `free >= 2`: first write a marker
//! `{ts, sp: pending_drops, func: u32::MAX, kind: KIND_DROPPED}` at `h`, the record at `h + 1`,
//! set `pending_drops = 0`, `head.store(h + 2, Release)`. Otherwise the ring is full
//! ([`Ring::try_push`] returns false). Recording is lossless by default: the producer then
//! first encodes what it can itself (consumer.rs), and when every outbox buffer waits for the
//! writer it waits (`writer::wait_for_room`: [`Ring::prepare_wait`], a futex sleep on the
//! `waiting` word, which the writer clears and wakes after it wrote outbox buffers or moved the
//! tail) and pushes again. When it may not wait (`record --lossy`, or the writer has
//! stopped) it counts a drop ([`Ring::drop_one`]): `pending_drops += 1`, `total_drops += 1`,
//! nothing written. The marker puts the loss at its exact place in the thread's event stream.
//! A stub that does not want the marker logic may fall back to the Rust path whenever
//! `pending_drops != 0` or the ring is full.
//!
//! The fast-path stubs (fast.rs) do exactly that, with one comparison: they write inline only
//! while `head - tail < inline_limit`. [`Ring::push`] keeps `inline_limit` at `threshold`
//! (half the capacity) while no drops are pending and at 0 while some are, so a stub falls back
//! to Rust when the ring is half full (the fallback encodes the ring on its own thread, see
//! hooks.rs) or a marker is due. A ring made
//! [`without_inline_writes`](Ring::without_inline_writes) (the clock is not the TSC, whose
//! ticks the stubs read) keeps `inline_limit` at 0: the stubs never write it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use eltrace_trace::{EventKind, ThreadIdx};

mod consumer;
mod outbox;
mod pairs;
pub mod stream;
pub mod stub;
use outbox::Encoder;
pub use outbox::{BUF_BYTES, BUFFERS, MIN_BUFFERS, Outbox};
use stream::Stream;

/// Kind code of a drop marker record (`sp` holds the number of events lost just before it):
/// above every `EventKind` code (the key has 4 bits of kind).
pub const KIND_DROPPED: u32 = 8;

/// Bits of a function index in a record's key (indices at or above 2^28 are not recorded:
/// `hooks::client_id`).
pub const FUNC_BITS: u32 = 28;
const FUNC_MASK: u32 = (1 << FUNC_BITS) - 1;
/// Bits of a record word's payload (time or SP); the key's half takes the bits above.
const PAYLOAD_BITS: u32 = 48;
/// Bits of each half of the key.
const KEY_HALF_BITS: u32 = 64 - PAYLOAD_BITS;
const LOW48: u64 = (1 << PAYLOAD_BITS) - 1;

/// One hook's raw record, as written on the hot path (packed: see the module doc).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct RawRecord {
    w0: u64,
    w1: u64,
}

const _: () = assert!(core::mem::size_of::<RawRecord>() == 16);

impl RawRecord {
    /// Packs a record; `ts` and `sp` keep their low 48 bits, `func` its low 28.
    #[inline(always)]
    pub const fn new(ts: u64, sp: u64, func: u32, kind: u32) -> RawRecord {
        let key = ((func & FUNC_MASK) | (kind << FUNC_BITS)) as u64;
        RawRecord {
            w0: (ts & LOW48) | (key << PAYLOAD_BITS),
            w1: (sp & LOW48) | ((key >> KEY_HALF_BITS) << PAYLOAD_BITS),
        }
    }

    fn key(self) -> u32 {
        ((self.w0 >> PAYLOAD_BITS) | ((self.w1 >> PAYLOAD_BITS) << KEY_HALF_BITS)) as u32
    }

    /// The event kind code (or [`KIND_DROPPED`]).
    pub fn kind(self) -> u32 {
        self.key() >> FUNC_BITS
    }

    /// The function index.
    pub fn func(self) -> u32 {
        self.key() & FUNC_MASK
    }

    /// The caller SP (for a drop marker: the number of events lost).
    pub fn sp(self) -> u64 {
        self.w1 & LOW48
    }

    /// Whether this record is the Leave of the frame `enter` (an Enter record) opened: the
    /// same function and SP. From the raw words: the second word is the Enter's with the kind's
    /// bits set to Leave's (an Enter's are 0), and the keys' low halves are equal.
    #[inline(always)]
    pub fn is_leave_of(self, enter: RawRecord) -> bool {
        const LEAVE_BITS: u64 =
            (EventKind::Leave.code() as u64) << (FUNC_BITS - KEY_HALF_BITS + PAYLOAD_BITS);
        self.w1 == enter.w1 | LEAVE_BITS && (self.w0 ^ enter.w0) >> PAYLOAD_BITS == 0
    }

    /// Whether this record has `other`'s kind, function and SP (its time may differ).
    #[inline(always)]
    pub fn same_event(self, other: RawRecord) -> bool {
        self.w1 == other.w1 && (self.w0 ^ other.w0) >> PAYLOAD_BITS == 0
    }

    /// The time's low 48 bits, in ns ([`extend48`] restores the rest).
    pub fn time48(self) -> u64 {
        self.w0 & LOW48
    }
}

impl core::fmt::Debug for RawRecord {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RawRecord")
            .field("time48", &self.time48())
            .field("sp", &self.sp())
            .field("func", &self.func())
            .field("kind", &self.kind())
            .finish()
    }
}

/// The full time (ns) nearest to `now` whose low 48 bits are `low` (a record's time is a
/// little before `now`, the drain time, or, with clocks a few ticks apart across CPUs, a
/// little after it).
pub fn extend48(low: u64, now: u64) -> u64 {
    let behind = now.wrapping_sub(low) & LOW48;
    if behind <= LOW48 / 2 {
        now.wrapping_sub(behind)
    } else {
        now.wrapping_add(LOW48 + 1 - behind)
    }
}

#[repr(C, align(64))]
pub struct Ring {
    head: AtomicU64,
    pending_drops: AtomicU64,
    total_drops: AtomicU64,
    records: *mut RawRecord,
    mask: u64,
    capacity: u64,
    inline_limit: AtomicU64,
    threshold: u64,
    tail: AtomicU64,
    /// Set by the owning thread when it exits; the writer frees the ring after the last drain.
    retired: AtomicBool,
    /// Consumer only: drops already written to the trace.
    reported_drops: AtomicU64,
    /// What `inline_limit` returns to once no drops are pending: `threshold`, or 0 for a ring
    /// the stubs must not write.
    inline_max: u64,
    /// Futex word: 1 while the producer sleeps until the consumer makes room.
    waiting: AtomicU32,
    /// Producer-written: how many times it waited for room, and for how many ns in all.
    waits: AtomicU64,
    wait_ns: AtomicU64,
    /// The consumer lock (1 while held): who may encode the ring (consumer.rs).
    consumer: AtomicU32,
    /// The encoder, used only by the consumer lock's holder.
    encoder: UnsafeCell<Encoder>,
    /// Encoded chunks waiting for the writer.
    outbox: Outbox,
    /// The thread's stream (stream.rs; a recording's default), disabled with
    /// `ELTRACE_STREAM=0`.
    stream: Stream,
}

// SAFETY: the ring is shared between exactly one producer and one consumer at a time (the
// holder of the consumer lock) that follow the head/tail protocol above; the encoder is used
// only under that lock and the outbox by its sealed/written protocol (outbox.rs); the buffer
// pointer is owned by the ring and freed only in Drop.
unsafe impl Send for Ring {}
// SAFETY: see Send; all shared mutable state is atomic or covered by the protocol.
unsafe impl Sync for Ring {}

const _: () = {
    assert!(core::mem::offset_of!(Ring, head) == 0);
    assert!(core::mem::offset_of!(Ring, pending_drops) == 8);
    assert!(core::mem::offset_of!(Ring, total_drops) == 16);
    assert!(core::mem::offset_of!(Ring, records) == 24);
    assert!(core::mem::offset_of!(Ring, mask) == 32);
    assert!(core::mem::offset_of!(Ring, capacity) == 40);
    assert!(core::mem::offset_of!(Ring, inline_limit) == 48);
    assert!(core::mem::offset_of!(Ring, threshold) == 56);
    assert!(core::mem::offset_of!(Ring, tail) == 64);
};

impl Ring {
    /// The capacity a request for `events` gets: the next power of two (at least 2).
    pub fn rounded_capacity(events: usize) -> usize {
        events.max(2).next_power_of_two()
    }

    /// Bytes a ring of `capacity` records and `buffers` outbox buffers takes.
    pub fn bytes_for(capacity: usize, buffers: usize) -> usize {
        capacity * core::mem::size_of::<RawRecord>()
            + core::mem::size_of::<Ring>()
            + Outbox::bytes_for(buffers)
    }

    /// A ring of `capacity` records (a power of two, or 0 for a ring that only counts drops)
    /// for thread 0, exact times, the fewest outbox buffers (tests).
    #[cfg(test)]
    pub fn new(capacity: usize) -> Ring {
        Ring::for_thread(capacity, ThreadIdx(0), false, MIN_BUFFERS, 0)
    }

    /// The ring of thread `thread`: `capacity` records (a power of two, or 0 for a ring that
    /// only counts drops), an outbox of `buffers` buffers; `timeless`: no per-event times,
    /// the first records' ordering times starting at `start_ns`.
    pub fn for_thread(
        capacity: usize,
        thread: ThreadIdx,
        timeless: bool,
        buffers: usize,
        start_ns: u64,
    ) -> Ring {
        assert!(capacity == 0 || capacity.is_power_of_two());
        let records = if capacity == 0 {
            core::ptr::null_mut()
        } else {
            let buf: Box<[RawRecord]> = vec![RawRecord::default(); capacity].into_boxed_slice();
            Box::into_raw(buf) as *mut RawRecord
        };
        Ring {
            head: AtomicU64::new(0),
            pending_drops: AtomicU64::new(0),
            total_drops: AtomicU64::new(0),
            records,
            mask: (capacity as u64).wrapping_sub(1),
            capacity: capacity as u64,
            inline_limit: AtomicU64::new(capacity as u64 / 2),
            threshold: capacity as u64 / 2,
            tail: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            reported_drops: AtomicU64::new(0),
            inline_max: capacity as u64 / 2,
            waiting: AtomicU32::new(0),
            waits: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
            consumer: AtomicU32::new(0),
            encoder: UnsafeCell::new(Encoder::new(thread, timeless, start_ns)),
            outbox: Outbox::new(if capacity == 0 { 0 } else { buffers }, BUF_BYTES),
            stream: Stream::disabled(),
        }
    }

    /// The same ring, but the fast-path stubs never write to it inline: they take the Rust
    /// fallback for every event (for a clock other than the TSC).
    pub fn without_inline_writes(mut self) -> Ring {
        self.inline_max = 0;
        *self.inline_limit.get_mut() = 0;
        self
    }

    /// The same ring, but its records are counted as dropped instead of encoded (benchmark
    /// only: `ELTRACE_HOOKS=fast-discard` measures the hooks without the pipeline behind them).
    pub fn discarding(mut self) -> Ring {
        self.encoder.get_mut().discard = true;
        self
    }

    /// A streaming ring (stream.rs): its thread encodes every event into the stream (the
    /// stubs inline, the Rust side otherwise), none into records.
    /// `bytes`: the byte ring's size; `inline`: the stubs may write it (false: every event
    /// takes the Rust side).
    pub fn streaming(mut self, bytes: usize, start_ns: u64, inline: bool) -> Ring {
        self.stream = Stream::new(bytes, start_ns, inline);
        self.without_inline_writes()
    }

    /// The thread's stream, if the ring streams.
    #[inline(always)]
    pub fn stream(&self) -> Option<&Stream> {
        self.stream.is_enabled().then_some(&self.stream)
    }

    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// Producer only, lossy: appends one record or counts it as dropped. No locks, no
    /// allocation. (The hooks use [`Ring::try_push`] and wait or drop themselves.)
    #[cfg(test)]
    pub fn push(&self, rec: RawRecord) {
        if !self.try_push(rec) {
            self.drop_one();
        }
    }

    /// Producer only: appends one record (after a drop marker when drops are pending) if the
    /// ring has room for it; returns false, changing nothing, when it has not.
    #[inline(always)]
    pub fn try_push(&self, rec: RawRecord) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        let free = self.capacity - head.wrapping_sub(tail);
        let pending = self.pending_drops.load(Ordering::Relaxed);
        if pending == 0 && free >= 1 {
            // SAFETY: slot `head` is outside [tail, head), so the consumer does not read it,
            // and `head & mask < capacity` indexes the buffer.
            unsafe { self.records.add((head & self.mask) as usize).write(rec) };
            self.head.store(head + 1, Ordering::Release);
            true
        } else if pending != 0 && free >= 2 {
            let marker = RawRecord::new(rec.time48(), pending, 0, KIND_DROPPED);
            // SAFETY: as above, for the two free slots `head` and `head + 1`.
            unsafe {
                self.records.add((head & self.mask) as usize).write(marker);
                self.records
                    .add(((head + 1) & self.mask) as usize)
                    .write(rec);
            }
            self.pending_drops.store(0, Ordering::Relaxed);
            self.inline_limit.store(self.inline_max, Ordering::Relaxed);
            self.head.store(head + 2, Ordering::Release);
            true
        } else {
            false
        }
    }

    /// Producer only: counts one event as lost here (a marker will announce it).
    #[cold]
    pub fn drop_one(&self) {
        self.inline_limit.store(0, Ordering::Relaxed);
        let pending = self.pending_drops.load(Ordering::Relaxed);
        self.pending_drops.store(pending + 1, Ordering::Relaxed);
        let total = self.total_drops.load(Ordering::Relaxed);
        self.total_drops.store(total + 1, Ordering::Relaxed);
    }

    /// Producer: announces that it is about to sleep until the consumer makes room, and
    /// returns whether it still must (false: room appeared meanwhile, nothing to wait for).
    /// Pairs with [`Ring::release`]'s fence: either the consumer sees the flag and wakes the
    /// producer, or the producer sees the consumer's new tail.
    pub fn prepare_wait(&self) -> bool {
        self.waiting.store(1, Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::SeqCst);
        if let Some(stream) = self.stream() {
            let wait = !stream.has_room();
            if !wait {
                self.waiting.store(0, Ordering::Relaxed);
            }
            return wait;
        }
        let head = self.head.load(Ordering::Relaxed);
        let used = head.wrapping_sub(self.tail.load(Ordering::Relaxed));
        let need = if self.pending_drops.load(Ordering::Relaxed) == 0 {
            1
        } else {
            2
        };
        // Room in the ring, or an outbox buffer the producer can encode into (outbox.rs) while
        // nobody else holds the consumer lock.
        let can_encode = self.outbox.has_room() && !self.is_consumed();
        if self.capacity - used >= need || can_encode {
            self.waiting.store(0, Ordering::Relaxed);
            false
        } else {
            true
        }
    }

    /// The producer's futex word while it waits (1) or not (0).
    pub fn waiting_word(&self) -> &AtomicU32 {
        &self.waiting
    }

    /// Producer: one wait of `ns` nanoseconds is over.
    pub fn count_wait(&self, ns: u64) {
        self.waiting.store(0, Ordering::Relaxed);
        self.waits
            .store(self.waits.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.wait_ns
            .store(self.wait_ns.load(Ordering::Relaxed) + ns, Ordering::Relaxed);
    }

    /// Times the producer waited for room, and nanoseconds waited in all (read racily by the
    /// consumer).
    pub fn waits(&self) -> (u64, u64) {
        (
            self.waits.load(Ordering::Relaxed),
            self.wait_ns.load(Ordering::Relaxed),
        )
    }

    /// Consumer: the producer's published position (records before it are readable).
    pub fn published(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }

    /// Consumer: copies the records `[tail, upto)` to `out` and frees their slots.
    /// `upto` must be a value [`Ring::published`] returned.
    #[cfg(test)]
    pub fn drain_to(&self, upto: u64, out: &mut Vec<RawRecord>) {
        self.drain_to_max(upto, usize::MAX, out);
    }

    /// Consumer: like [`Ring::drain_to`], but copies at most `max` records (the first ones).
    #[cfg(test)]
    pub fn drain_to_max(&self, upto: u64, max: usize, out: &mut Vec<RawRecord>) {
        let tail = self.tail.load(Ordering::Relaxed);
        if upto <= tail || self.capacity == 0 {
            return;
        }
        let n = ((upto - tail) as usize).min(max);
        debug_assert!(n as u64 <= self.capacity);
        let start = (tail & self.mask) as usize;
        let first = n.min(self.capacity as usize - start);
        out.reserve(n);
        // SAFETY: `[tail, tail + n)` lies within `[tail, upto)`, which was published with
        // Release and observed with Acquire; the producer does not write these slots until
        // `tail` moves past them, and both ranges lie inside the buffer (`start + first <=
        // capacity`, `n - first <= start`).
        unsafe {
            let src = self.records;
            let dst = out.as_mut_ptr().add(out.len());
            core::ptr::copy_nonoverlapping(src.add(start), dst, first);
            core::ptr::copy_nonoverlapping(src, dst.add(first), n - first);
            out.set_len(out.len() + n);
        }
        self.release(tail + n as u64);
    }

    /// Consumer: frees the slots before `upto` and wakes the producer if it waits for room.
    pub(crate) fn release(&self, upto: u64) {
        self.tail.store(upto, Ordering::Release);
        core::sync::atomic::fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::Relaxed) != 0 {
            self.wake_producer();
        }
    }

    /// Wakes the producer if it sleeps in a wait (room was made: the writer wrote outbox
    /// buffers or released the consumer lock; or waiting is over).
    pub fn wake_producer(&self) {
        core::sync::atomic::fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::Relaxed) != 0 && self.waiting.swap(0, Ordering::AcqRel) != 0
        {
            crate::sys::futex_wake(&self.waiting);
        }
    }

    /// Consumer: the next sequence to read (records before it are drained).
    pub fn drained(&self) -> u64 {
        self.tail.load(Ordering::Relaxed)
    }

    /// Consumer: records published but not yet drained (approximate while the producer runs).
    pub fn fill(&self) -> usize {
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Relaxed);
        head.wrapping_sub(tail) as usize
    }

    /// All events this ring dropped so far (read racily by the consumer).
    pub fn total_drops(&self) -> u64 {
        self.total_drops.load(Ordering::Relaxed) + self.stream.dropped()
    }

    /// Producer: whether the ring is filled at least up to the fast path's limit (the writer
    /// should drain it soon).
    #[inline(always)]
    pub fn above_threshold(&self) -> bool {
        let used = self.head.load(Ordering::Relaxed) - self.tail.load(Ordering::Relaxed);
        self.capacity > 0 && used >= self.threshold
    }

    /// The fast path's current fill limit (see the module doc).
    #[cfg(test)]
    pub fn inline_limit(&self) -> u64 {
        self.inline_limit.load(Ordering::Relaxed)
    }

    /// Drops not yet covered by a marker record.
    #[cfg(test)]
    pub fn pending_drops(&self) -> u64 {
        self.pending_drops.load(Ordering::Relaxed)
    }

    /// Consumer: drops the trace does not mention yet, marked as mentioned now. Call it only
    /// when no marker for them can follow (the ring is retired, over the cap, or recording
    /// ends). Drops announced by markers must have been passed to [`Ring::note_marked_drops`].
    pub fn take_unreported_drops(&self) -> u64 {
        let reported = self.reported_drops.load(Ordering::Relaxed);
        let total = self.total_drops.load(Ordering::Relaxed);
        self.reported_drops
            .store(total.max(reported), Ordering::Relaxed);
        total.saturating_sub(reported)
    }

    /// Consumer: counts drops announced by a marker record.
    pub fn note_marked_drops(&self, n: u64) {
        self.reported_drops.fetch_add(n, Ordering::Relaxed);
    }

    /// Owning thread: no more pushes will follow.
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// Consumer: read *before* [`Ring::published`]; if true, that head value is final.
    pub fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if !self.records.is_null() {
            let slice = core::ptr::slice_from_raw_parts_mut(self.records, self.capacity as usize);
            // SAFETY: `records` came from `Box::into_raw` of a boxed slice of this length.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

#[cfg(test)]
mod bench;
#[cfg(test)]
mod encode_tests;
#[cfg(test)]
mod tests;
