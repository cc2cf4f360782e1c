//! Benchmark only (`ELTRACE_HOOKS=fast-stub-encode`): the per-thread state of stubs that
//! encode each event into the final chunk bytes themselves (fast/stub_encode.rs), into a byte
//! ring that nothing reads. It measures, in a real workload, what the design "program threads'
//! stubs write finished chunk bytes and the writer only moves them" would cost the hooks
//! (docs/performance.md). The events are counted as dropped (ring/consumer.rs).
//!
//! The state is the chunk builder's for one open EVENTS or TIMELESS_EVENTS chunk that never
//! closes: the previous time and SP, the last frame-ending event, and the prediction stack, kept
//! here as a ring of [`SHADOW_ENTRIES`] `(func, sp)` pairs indexed by `depth` modulo its size.

use core::mem::offset_of;
use core::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the byte ring the stubs write (a power of two); an event starts below it and may
/// run up to [`PAD`] bytes past it.
pub const BYTES: usize = 1 << 15;
/// Room past the byte ring for the last event written (the longest event is 32 bytes).
pub const PAD: usize = 64;
/// Entries of the prediction stack (a power of two); deeper frames overwrite the oldest.
pub const SHADOW_ENTRIES: usize = 1 << 11;
/// The prediction stack's offset in the buffer: after the byte ring and its pad.
pub const SHADOW: usize = BYTES + PAD;
/// The buffer: the byte ring, its pad, then the prediction stack's 16-byte entries.
const BUFFER: usize = SHADOW + 16 * SHADOW_ENTRIES;

/// What the stubs read and write, at the offsets [`off`] gives them.
#[repr(C)]
#[derive(Debug)]
pub struct StubEncoding {
    /// Bytes written so far; the next event starts at `pos % BYTES`.
    pos: u64,
    /// The previous event's SP, time (ns) and the last frame-ending event's function (as u64;
    /// `u64::MAX`: none yet) and SP.
    prev_sp: u64,
    prev_ts: u64,
    last_func: u64,
    last_sp: u64,
    /// Frames on the prediction stack (its top is entry `(depth - 1) % SHADOW_ENTRIES`).
    depth: u64,
    /// Events encoded (written by the owning thread's stubs only).
    count: AtomicU64,
    /// The buffer (null: the stubs take the recording stubs' path).
    buf: *mut u8,
}

impl StubEncoding {
    /// No buffer: every stub-encode stub falls through to the recording stubs.
    pub const fn none() -> StubEncoding {
        StubEncoding {
            pos: 0,
            prev_sp: 0,
            prev_ts: 0,
            last_func: u64::MAX,
            last_sp: 0,
            depth: 0,
            count: AtomicU64::new(0),
            buf: core::ptr::null_mut(),
        }
    }

    /// With its buffer allocated.
    pub fn allocated() -> StubEncoding {
        let buf: Box<[u8]> = vec![0u8; BUFFER].into_boxed_slice();
        let mut state = StubEncoding::none();
        state.buf = Box::into_raw(buf).cast::<u8>();
        state
    }

    /// The events encoded so far, read from any thread while the owning thread's stubs
    /// write the state (no reference to the whole state is made).
    ///
    /// # Safety
    /// `state` must point at a live state.
    pub unsafe fn count(state: *const StubEncoding) -> u64 {
        // SAFETY: the caller's promise; `count` is an atomic the stubs store whole (their
        // `inc qword ptr` is the only writer's), so an atomic load of it is sound.
        unsafe { (*core::ptr::addr_of!((*state).count)).load(Ordering::Acquire) }
    }

    /// Events encoded so far (tests).
    #[cfg(test)]
    pub fn events(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The bytes written so far, oldest first, at most the byte ring's (tests).
    #[cfg(test)]
    pub fn bytes(&self) -> Vec<u8> {
        assert!(!self.buf.is_null() && self.pos <= BYTES as u64);
        // SAFETY: `buf` holds `BUFFER` bytes, and `pos` of them were written.
        unsafe { core::slice::from_raw_parts(self.buf, self.pos as usize) }.to_vec()
    }
}

impl Drop for StubEncoding {
    fn drop(&mut self) {
        if !self.buf.is_null() {
            let slice = core::ptr::slice_from_raw_parts_mut(self.buf, BUFFER);
            // SAFETY: `buf` came from `Box::into_raw` of a boxed slice of this length.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

/// The fields' offsets from the state, for the stubs' `const` operands.
pub mod off {
    use super::{StubEncoding, offset_of};

    pub const POS: usize = offset_of!(StubEncoding, pos);
    pub const PREV_SP: usize = offset_of!(StubEncoding, prev_sp);
    pub const PREV_TS: usize = offset_of!(StubEncoding, prev_ts);
    pub const LAST_FUNC: usize = offset_of!(StubEncoding, last_func);
    pub const LAST_SP: usize = offset_of!(StubEncoding, last_sp);
    pub const DEPTH: usize = offset_of!(StubEncoding, depth);
    pub const COUNT: usize = offset_of!(StubEncoding, count);
    pub const BUF: usize = offset_of!(StubEncoding, buf);
}

const _: () = {
    // The stubs load and store these fields as qwords.
    assert!(core::mem::size_of::<AtomicU64>() == 8 && core::mem::size_of::<*mut u8>() == 8);
    assert!(BYTES.is_power_of_two() && SHADOW_ENTRIES.is_power_of_two());
};
