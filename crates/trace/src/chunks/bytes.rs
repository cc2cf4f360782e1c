//! The byte writers of the in-place chunk builder (mod.rs): varints, event heads, an
//! unpredicted event's function and stack pointer, and a timeless run head. Each writes at a
//! raw pointer the caller has checked room for, and returns the bytes it wrote.

use crate::varint::zigzag;

/// Writes `v` as a varint at `p`; returns the bytes written (at most 10).
///
/// # Safety
/// `p` must be valid for 10 bytes of writes.
#[inline(always)]
pub(super) unsafe fn put_var(p: *mut u8, mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        // SAFETY: n < 10 while v >= 0x80 (a u64 has at most ten 7-bit groups); the caller
        // gave 10 bytes.
        unsafe { p.add(n).write((v as u8) | 0x80) };
        v >>= 7;
        n += 1;
    }
    // SAFETY: as above.
    unsafe { p.add(n).write(v as u8) };
    n + 1
}

/// Writes a timeless run head at `p`: the last ended frame `pairs` more times entered and
/// left (docs/trace-format.md, TIMELESS_EVENTS); returns its bytes (at most 11).
///
/// # Safety
/// `p` must be valid for 11 bytes of writes.
#[inline(always)]
pub(super) unsafe fn put_run(p: *mut u8, pairs: u64) -> usize {
    // SAFETY: the caller's promise: one byte, then a varint of at most 10.
    unsafe {
        p.write(crate::events::TIMELESS_RUN as u8);
        1 + put_var(p.add(1), pairs)
    }
}

/// Writes an event head (a varint, most of them one or two bytes) at `p`; returns its bytes.
///
/// # Safety
/// `p` must be valid for 10 bytes of writes.
#[inline(always)]
pub(super) unsafe fn put_head(p: *mut u8, head: u64) -> usize {
    // SAFETY: the caller's promise (at most 10 bytes are written).
    unsafe {
        if head < 0x80 {
            p.write(head as u8);
            1
        } else if head < 0x4000 {
            p.write((head as u8) | 0x80);
            p.add(1).write((head >> 7) as u8);
            2
        } else {
            put_var(p, head)
        }
    }
}

/// Writes a timed event's head at `p`: the delta of its time `ts` from `prev_ts` (none if
/// `ts` is earlier) above the four `bits`, and moves `prev_ts` on to `ts`; returns its bytes.
///
/// # Safety
/// `p` must be valid for 10 bytes of writes.
#[inline(always)]
pub(super) unsafe fn put_timed_head(p: *mut u8, ts: u64, prev_ts: &mut u64, bits: u64) -> usize {
    let delta = ts.saturating_sub(*prev_ts);
    *prev_ts = (*prev_ts).max(ts);
    // SAFETY: the caller's promise.
    unsafe { put_head(p, (delta << 4) | bits) }
}

/// Writes the function and stack-pointer varints of an unpredicted event at `p`; returns
/// their bytes.
///
/// # Safety
/// `p` must be valid for 20 bytes of writes.
#[inline(always)]
pub(super) unsafe fn put_full(p: *mut u8, func: u32, sp: u64, prev_sp: u64) -> usize {
    // SAFETY: the caller's promise: 10 bytes for each varint.
    unsafe {
        let k = put_var(p, u64::from(func));
        k + put_var(p.add(k), zigzag(sp.wrapping_sub(prev_sp) as i64))
    }
}
