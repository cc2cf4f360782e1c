//! The EVENTS chunk's event encoding (docs/trace-format.md "EVENTS"), shared by the writer and
//! the reader so that both keep the same per-chunk prediction stack.
//!
//! Version 2 predicts the function and stack pointer of a Leave, Tailcall or Unwind from a
//! shadow stack of the chunk's own Enters: a frame-ending event that matches the top of the
//! stack costs only its head (`uvar (dts << 4) | (kind << 1) | 1`). The stack starts empty
//! in every chunk, so each chunk decodes on its own. Version 1 (no prediction, `kind` in 3
//! bits) is still decoded.

use crate::model::{Event, EventKind, FunctionIdx};
use crate::varint::{Cursor, DecodeError, put_i64, put_u64};

/// How many entries below the top an unpredicted frame-ending event searches for its frame.
pub(crate) const SEARCH: usize = 16;

fn ends_frame(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind
    )
}

/// The prediction stack of one chunk: `(func, sp)` of the open Enters.
#[derive(Default)]
pub(crate) struct Shadow {
    stack: Vec<(u32, u64)>,
}

impl Shadow {
    /// An empty stack with room for `n` frames (chunks.rs never lets it grow past that).
    pub(crate) fn with_capacity(n: usize) -> Shadow {
        Shadow {
            stack: Vec::with_capacity(n),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.stack.len()
    }

    pub(crate) fn clear(&mut self) {
        self.stack.clear();
    }

    #[inline(always)]
    pub(crate) fn predicts(&self, func: u32, sp: u64) -> bool {
        self.stack.last() == Some(&(func, sp))
    }

    /// The stack's frames and their number, for a loop that keeps them in registers
    /// (chunks.rs); [`Shadow::set_len`] gives the number back.
    pub(crate) fn raw_parts(&mut self) -> (*mut (u32, u64), usize, usize) {
        (
            self.stack.as_mut_ptr(),
            self.stack.len(),
            self.stack.capacity(),
        )
    }

    /// Sets the number of frames after a loop over [`Shadow::raw_parts`].
    ///
    /// # Safety
    /// `n` must not exceed the capacity, and the first `n` frames must have been written.
    pub(crate) unsafe fn set_len(&mut self, n: usize) {
        // SAFETY: the caller's promise.
        unsafe { self.stack.set_len(n) }
    }

    /// The stack change of an event, the same on both sides.
    fn apply(&mut self, kind: EventKind, func: u32, sp: u64, predicted: bool) {
        self.apply_code(kind.code(), func, sp, predicted);
    }

    /// [`Shadow::apply`] by the kind's code (0 Enter; 1-3 end a frame).
    #[inline(always)]
    pub(crate) fn apply_code(&mut self, code: u8, func: u32, sp: u64, predicted: bool) {
        if code == EventKind::Enter.code() {
            self.stack.push((func, sp));
        } else if predicted {
            self.stack.pop();
        } else if matches!(code, 1..=3) {
            let n = self.stack.len();
            let lo = n.saturating_sub(SEARCH);
            if let Some(i) = self.stack[lo..].iter().rposition(|&e| e == (func, sp)) {
                self.stack.truncate(lo + i);
            }
        }
    }
}

/// Appends `events` (all of one chunk) to `p`, version 2.
pub(crate) fn encode(p: &mut Vec<u8>, events: &[Event]) {
    let mut shadow = Shadow::default();
    let (mut prev_ts, mut prev_sp) = (events.first().map_or(0, |e| e.ts), 0u64);
    let mut last_end: Option<(u32, u64)> = None;
    for e in events {
        // Timestamps never go backwards within a thread; a clock that did is clamped.
        let delta = e.ts.saturating_sub(prev_ts);
        prev_ts = prev_ts.max(e.ts);
        let ends = ends_frame(e.kind);
        let predicted = ends && shadow.predicts(e.func.0, e.sp);
        // Version 4: an Enter of the frame that ended last (a call repeated in a loop).
        let repeat = e.kind == EventKind::Enter && last_end == Some((e.func.0, e.sp));
        put_u64(
            p,
            (delta << 4) | (u64::from(e.kind.code()) << 1) | u64::from(predicted || repeat),
        );
        if !predicted && !repeat {
            put_u64(p, u64::from(e.func.0));
            put_i64(p, e.sp.wrapping_sub(prev_sp) as i64);
        }
        prev_sp = e.sp;
        shadow.apply(e.kind, e.func.0, e.sp, predicted);
        if ends {
            last_end = Some((e.func.0, e.sp));
        }
    }
}

/// Decodes `count` events starting at `base_ts` (the chunk header is already read) into
/// `events` (emptied first: a vector given back for reuse).
pub(crate) fn decode(
    c: &mut Cursor<'_>,
    count: u64,
    base_ts: u64,
    version: u16,
    mut events: Vec<Event>,
) -> Result<Vec<Event>, DecodeError> {
    events.clear();
    // The count comes from the file: reserve no more than a writer's chunk holds and let
    // the vector grow by the events actually decoded.
    events.reserve((count as usize).min(crate::MAX_EVENTS_PER_CHUNK));
    if version == crate::FORMAT_VERSION_1 {
        decode_into::<true, false>(c, count, base_ts, events)
    } else if version < crate::FORMAT_VERSION_4 {
        decode_into::<false, false>(c, count, base_ts, events)
    } else {
        decode_into::<false, true>(c, count, base_ts, events)
    }
}

/// [`decode`] for one format version (`V1`: version 1, no prediction; `REPEAT`: version 4,
/// an Enter's `p` bit repeats the frame that ended last), so that the loop does not test the
/// version per event.
fn decode_into<const V1: bool, const REPEAT: bool>(
    c: &mut Cursor<'_>,
    count: u64,
    base_ts: u64,
    mut events: Vec<Event>,
) -> Result<Vec<Event>, DecodeError> {
    let mut ts = base_ts;
    let mut sp = 0u64;
    let mut shadow = Shadow::default();
    let mut last_end: Option<(u32, u64)> = None;
    for _ in 0..count {
        let head = c.u64()?;
        let (code, predicted, dts) = if V1 {
            (head & 7, false, head >> 3)
        } else {
            ((head >> 1) & 7, head & 1 == 1, head >> 4)
        };
        let kind = EventKind::from_code(code as u8).ok_or(DecodeError("unknown event kind"))?;
        ts = ts
            .checked_add(dts)
            .ok_or(DecodeError("timestamp overflows"))?;
        let func = if REPEAT && predicted && kind == EventKind::Enter {
            let (f, s) = last_end.ok_or(DecodeError("a repeated frame with none before"))?;
            sp = s;
            f
        } else if predicted {
            if !ends_frame(kind) {
                return Err(DecodeError("a predicted event that ends no frame"));
            }
            let &(f, s) = shadow
                .stack
                .last()
                .ok_or(DecodeError("a predicted event with no open frame"))?;
            sp = s;
            f
        } else {
            let f = c.u32()?;
            sp = sp.wrapping_add(c.i64()? as u64);
            f
        };
        if !V1 {
            shadow.apply(kind, func, sp, predicted);
        }
        if REPEAT && ends_frame(kind) {
            last_end = Some((func, sp));
        }
        events.push(Event {
            ts,
            kind,
            func: FunctionIdx(func),
            sp,
        });
    }
    Ok(events)
}

/// Timeless encoding (TIMELESS_EVENTS, docs/trace-format.md): no timestamps; the head is
/// `p | kind << 1 | r << 4`, where `r` (Enter only) says the frame repeats the last ended one
/// (same function, same SP: a loop calling the same function), so a call in a loop costs one
/// byte per event.
pub(crate) fn encode_timeless(p: &mut Vec<u8>, events: &[Event]) {
    let mut shadow = Shadow::default();
    let mut prev_sp = 0u64;
    let mut last_end: Option<(u32, u64)> = None;
    for e in events {
        let predicted = ends_frame(e.kind) && shadow.predicts(e.func.0, e.sp);
        let repeat = e.kind == EventKind::Enter && last_end == Some((e.func.0, e.sp));
        let head =
            u64::from(predicted) | (u64::from(e.kind.code()) << 1) | (u64::from(repeat) << 4);
        put_u64(p, head);
        if !predicted && !repeat {
            put_u64(p, u64::from(e.func.0));
            put_i64(p, e.sp.wrapping_sub(prev_sp) as i64);
        }
        prev_sp = e.sp;
        shadow.apply(e.kind, e.func.0, e.sp, predicted);
        if ends_frame(e.kind) {
            last_end = Some((e.func.0, e.sp));
        }
    }
}

/// The timeless head of a run (version 4): `uvar n` follows, and the last ended frame is
/// entered and left `n` more times (2n events: a leaf called in a loop).
pub(crate) const TIMELESS_RUN: u64 = 0x20;

/// A timeless chunk's ordering time of event `i` of `count`: `first + (last − first) · i /
/// (count − 1)` (`first <= last`).
pub(crate) fn ordering_time(first: u64, last: u64, count: u64, i: u64) -> u64 {
    let steps = u128::from(count.saturating_sub(1).max(1));
    first + (u128::from(last - first) * u128::from(i) / steps) as u64
}

/// Decodes `count` timeless events; event `i` gets the ordering time
/// `first_ts + (last_ts - first_ts) * i / (count - 1)`. Runs ([`TIMELESS_RUN`]) are read from
/// version 4 on.
pub(crate) fn decode_timeless(
    c: &mut Cursor<'_>,
    count: u64,
    first_ts: u64,
    last_ts: u64,
    version: u16,
) -> Result<Vec<Event>, DecodeError> {
    if last_ts < first_ts {
        return Err(DecodeError("timeless chunk times go backwards"));
    }
    let at = |i: u64| ordering_time(first_ts, last_ts, count, i);
    let mut sp = 0u64;
    let mut shadow = Shadow::default();
    let mut last_end: Option<(u32, u64)> = None;
    // The count comes from the file: reserve no more than a chunk holds.
    let mut events = Vec::with_capacity(count.min(crate::MAX_EVENTS_PER_CHUNK as u64) as usize);
    let mut i = 0u64;
    while i < count {
        let head = c.u64()?;
        if head == TIMELESS_RUN && version >= crate::FORMAT_VERSION_4 {
            let n = c.u64()?;
            let (f, s) = last_end.ok_or(DecodeError("a run with no frame ended before"))?;
            if n == 0 || n > (count - i) / 2 {
                return Err(DecodeError("a run longer than its chunk"));
            }
            sp = s;
            for _ in 0..n {
                for kind in [EventKind::Enter, EventKind::Leave] {
                    events.push(Event {
                        ts: at(i),
                        kind,
                        func: FunctionIdx(f),
                        sp,
                    });
                    i += 1;
                }
            }
            continue;
        }
        if head >> 5 != 0 {
            return Err(DecodeError("unknown bits in a timeless event head"));
        }
        let kind = EventKind::from_code(((head >> 1) & 7) as u8)
            .ok_or(DecodeError("unknown event kind"))?;
        let (predicted, repeat) = (head & 1 == 1, head & 0x10 != 0);
        let func = if predicted {
            if !ends_frame(kind) || repeat {
                return Err(DecodeError("a predicted event that ends no frame"));
            }
            let &(f, s) = shadow
                .stack
                .last()
                .ok_or(DecodeError("a predicted event with no open frame"))?;
            sp = s;
            f
        } else if repeat {
            if kind != EventKind::Enter {
                return Err(DecodeError("a repeated frame that is not an Enter"));
            }
            let (f, s) = last_end.ok_or(DecodeError("a repeated frame with none before"))?;
            sp = s;
            f
        } else {
            let f = c.u32()?;
            sp = sp.wrapping_add(c.i64()? as u64);
            f
        };
        shadow.apply(kind, func, sp, predicted);
        if ends_frame(kind) {
            last_end = Some((func, sp));
        }
        events.push(Event {
            ts: at(i),
            kind,
            func: FunctionIdx(func),
            sp,
        });
        i += 1;
    }
    Ok(events)
}
