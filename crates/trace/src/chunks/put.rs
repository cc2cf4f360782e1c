//! The byte writers of the chunk encoder ([`super::ChunkBuilder`]): varints, event heads, a
//! timeless run head, the function and stack-pointer pair of an unpredicted event, and the
//! prediction stack's unwind to a frame below its top. Leaves: they know nothing of the
//! builder, and every one is `#[inline(always)]` but the cold unwind.

use crate::events::{SEARCH, TIMELESS_RUN};

/// `Leave`, `Tailcall` or `Unwind`: the codes that end a frame.
#[inline(always)]
pub(super) fn ends_frame(code: u8) -> bool {
    matches!(code, 1..=3)
}

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

/// The stack change of a frame-ending event that did not match the top (an exception's
/// unwind, a frame the chunk did not see enter): truncates to the matching frame among the top
/// [`SEARCH`] ones, as [`Shadow::apply_code`](crate::events) does; returns the new depth.
///
/// # Safety
/// `frames` must hold `depth` initialised frames.
#[cold]
#[inline(never)]
pub(super) unsafe fn unwind_to(
    frames: *const (u32, u64),
    depth: usize,
    func: u32,
    sp: u64,
) -> usize {
    // SAFETY: the caller's promise.
    let stack = unsafe { std::slice::from_raw_parts(frames, depth) };
    let lo = depth.saturating_sub(SEARCH);
    match stack[lo..].iter().rposition(|&e| e == (func, sp)) {
        Some(i) => lo + i,
        None => depth,
    }
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
        p.write(TIMELESS_RUN as u8);
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

/// `v` zigzag-encoded: small magnitudes, either sign, to small unsigned values.
#[inline(always)]
pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}
