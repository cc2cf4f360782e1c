//! A ring's encoded side: the [`Encoder`] that turns its raw records into whole trace chunks,
//! and the [`Outbox`] of fixed buffers those chunks go into until the writer appends them to
//! the file.
//!
//! Whoever holds the ring's consumer lock ([`Ring::try_consume`](super::Ring::try_consume);
//! consumer.rs) encodes: the thread the ring
//! belongs to, when its ring is half full (hooks.rs: on its own core, from records still in
//! its cache), or the writer thread for a ring that filled slowly (every flush period) or whose
//! thread exited. The writer thread itself only copies sealed buffers to the file: no thread
//! sits on the path of every event doing more than moving finished bytes.
//!
//! ```text
//!  producer (stubs, hooks) ──16-byte records──► ring ──Encoder (lock holder)──► Outbox
//!                                                                                │ sealed
//!                                              trace file ◄──writer thread◄──────┘ buffers
//! ```
//!
//! The outbox is `N` buffers used in turn: buffers `[written, sealed)` wait for the writer,
//! buffer `sealed % N` is the one being filled when `sealed - written < N`, and when all `N`
//! wait, encoding stops until the writer has written one (the ring then fills, and a lossless
//! producer waits: hooks.rs). Only the lock holder advances `sealed` (Release, after the
//! buffer's bytes); only the writer advances `written` (Release, after it emptied the buffer).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use eltrace_trace::ThreadIdx;
use eltrace_trace::chunks::ChunkBuilder;

/// Bytes of one outbox buffer: 64 KiB, 20-30 k events of a typical program.
pub const BUF_BYTES: usize = 64 * 1024;
/// Outbox buffers of a thread's ring.
pub const BUFFERS: usize = 8;
/// Outbox buffers of a ring made while the rings use up the memory cap.
pub const MIN_BUFFERS: usize = 2;

/// One outbox buffer: whole chunks, and the events they hold.
pub struct Slot {
    pub bytes: Vec<u8>,
    pub events: u64,
}

/// The buffers between a ring's encoder and the writer (see the module doc).
pub struct Outbox {
    slots: Box<[UnsafeCell<Slot>]>,
    pub(super) sealed: AtomicU64,
    pub(super) written: AtomicU64,
}

impl Outbox {
    pub fn new(buffers: usize, bytes: usize) -> Outbox {
        let slots = (0..buffers.max(1))
            .map(|_| {
                UnsafeCell::new(Slot {
                    bytes: Vec::with_capacity(bytes),
                    events: 0,
                })
            })
            .collect();
        Outbox {
            slots,
            sealed: AtomicU64::new(0),
            written: AtomicU64::new(0),
        }
    }

    /// Bytes an outbox of `buffers` buffers takes.
    pub fn bytes_for(buffers: usize) -> usize {
        buffers * BUF_BYTES
    }

    fn n(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Whether the encoder has a buffer to fill (not every buffer waits for the writer).
    pub fn has_room(&self) -> bool {
        let sealed = self.sealed.load(Ordering::Relaxed);
        sealed - self.written.load(Ordering::Acquire) < self.n()
    }

    /// Whether at least half of the buffers wait for the writer (the encoder wakes it then).
    pub fn half_waiting(&self) -> bool {
        let sealed = self.sealed.load(Ordering::Relaxed);
        2 * (sealed - self.written.load(Ordering::Relaxed)) >= self.n()
    }

    /// Writer: buffers sealed so far (read with Acquire: their bytes are visible).
    pub fn sealed(&self) -> u64 {
        self.sealed.load(Ordering::Acquire)
    }

    /// Writer: buffers written so far.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Writer: buffer number `i` (in `[written, sealed)`), to be copied out and emptied.
    ///
    /// # Safety
    /// Only the writer thread may call this, for `i` in `[written(), sealed())`, and must not
    /// hold the reference past its [`Outbox::mark_written`] of `i`.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn sealed_slot(&self, i: u64) -> &mut Slot {
        // SAFETY: the encoder does not touch buffers in [written, sealed) (the caller's
        // promise), so the writer has this one to itself until it marks it written.
        unsafe { &mut *self.slots[(i % self.n()) as usize].get() }
    }

    /// Writer, at the end: the events in sealed buffers not written (lost with the process).
    pub fn unwritten_events(&self) -> u64 {
        (self.written()..self.sealed())
            // SAFETY: only the writer calls this, and these buffers lie in [written, sealed).
            .map(|i| unsafe { self.sealed_slot(i) }.events)
            .sum()
    }

    /// Writer: buffer `i` (the oldest waiting one) is written and emptied.
    pub fn mark_written(&self, i: u64) {
        debug_assert_eq!(i, self.written.load(Ordering::Relaxed));
        self.written.store(i + 1, Ordering::Release);
    }

    /// Lock holder: the buffer being filled, if one is free.
    ///
    /// # Safety
    /// Only the holder of the ring's consumer lock may call this.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn current(&self) -> Option<&mut Slot> {
        let sealed = self.sealed.load(Ordering::Relaxed);
        if sealed - self.written.load(Ordering::Acquire) >= self.n() {
            return None;
        }
        // SAFETY: `sealed % n` is outside [written, sealed), so the writer does not touch it,
        // and the lock makes the caller the only encoder.
        Some(unsafe { &mut *self.slots[(sealed % self.n()) as usize].get() })
    }

    /// Lock holder: hands the buffer being filled to the writer.
    pub(super) fn seal(&self) {
        let sealed = self.sealed.load(Ordering::Relaxed);
        self.sealed.store(sealed + 1, Ordering::Release);
    }
}

/// The encoding state of one ring (owned by the consumer lock's holder).
pub struct Encoder {
    pub(super) builder: ChunkBuilder,
    pub(super) thread: ThreadIdx,
    pub(super) timeless: bool,
    /// Timeless events: when the ring was last encoded (ns); the next records came after.
    pub(super) anchor_ns: u64,
    /// Records of an unknown kind (skipped).
    pub bad: u64,
    /// Benchmark only (`ELTRACE_HOOKS=fast-discard`): records are counted in DROPPED chunks
    /// instead of encoded (consumer.rs).
    pub(super) discard: bool,
}

impl Encoder {
    pub fn new(thread: ThreadIdx, timeless: bool, start_ns: u64) -> Encoder {
        Encoder {
            builder: ChunkBuilder::new(thread, timeless),
            thread,
            timeless,
            anchor_ns: start_ns,
            bad: 0,
            discard: false,
        }
    }
}
