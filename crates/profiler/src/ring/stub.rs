//! What the fast-path stubs (fast.rs) rely on, computed from [`Ring`] and [`RawRecord`]: the
//! stubs take these as `const` operands, so a layout change moves their offsets with it, and
//! the assertions below stop the build when the layout no longer has the shape the stubs'
//! instructions assume (8-byte fields, a power-of-two record, 16-bit key halves).

use core::mem::{offset_of, size_of};
use core::sync::atomic::AtomicU64;

use super::{FUNC_BITS, KEY_HALF_BITS, PAYLOAD_BITS, RawRecord, Ring};

/// `Ring::head` (u64, the producer's next sequence).
pub const HEAD: usize = offset_of!(Ring, head);
/// `Ring::records` (the buffer pointer).
pub const RECORDS: usize = offset_of!(Ring, records);
/// `Ring::mask` (u64, capacity - 1).
pub const MASK: usize = offset_of!(Ring, mask);
/// `Ring::inline_limit` (u64, the stubs' fill limit).
pub const INLINE_LIMIT: usize = offset_of!(Ring, inline_limit);
/// `Ring::stream` (stream.rs's `off` from there).
pub const STREAM: usize = offset_of!(Ring, stream);
/// `Ring::tail` (u64, the consumer's next sequence).
pub const TAIL: usize = offset_of!(Ring, tail);
/// A record's byte offset in the buffer is its index shifted left by this.
pub const RECORD_SHIFT: u32 = size_of::<RawRecord>().trailing_zeros();
/// The record word holding the time (ns) (in its payload bits).
pub const TICK: usize = offset_of!(RawRecord, w0);
/// The record word holding the caller SP (in its payload bits).
pub const SP: usize = offset_of!(RawRecord, w1);
/// The key's low half: the 16 bits above the time.
pub const KEY_LO: usize = TICK + (PAYLOAD_BITS / 8) as usize;
/// The key's high half: the 16 bits above the SP.
pub const KEY_HI: usize = SP + (PAYLOAD_BITS / 8) as usize;
/// Shift from the key's low half to its high half.
pub const KEY_HALF: u32 = KEY_HALF_BITS;
/// `key = func | kind << KIND_SHIFT`.
pub const KIND_SHIFT: u32 = FUNC_BITS;

const _: () = {
    // The stubs load and store these fields as qwords.
    assert!(size_of::<AtomicU64>() == 8 && size_of::<u64>() == 8);
    assert!(size_of::<*mut RawRecord>() == 8);
    // `shl index, RECORD_SHIFT` must be the multiplication by the record size.
    assert!(size_of::<RawRecord>().is_power_of_two());
    // The key halves are stored with `mov word ptr`, the time and SP as whole words.
    assert!(KEY_HALF_BITS == 16 && PAYLOAD_BITS % 8 == 0);
    assert!(size_of::<RawRecord>() == 16 && SP == TICK + 8);
};
