//! Stream chunks (EVENT_STREAM and TIMELESS_STREAM, format version 5; docs/trace-format.md
//! "Stream chunks"): one thread's events coded as in EVENTS or TIMELESS_EVENTS, except that
//! the coding state (previous time and SP, the last frame-ending event, the prediction stack)
//! continues from the thread's previous stream chunk instead of starting afresh. A writer can
//! so cut a thread's encoded bytes at any event boundary into a chunk without the encoding
//! thread closing anything: what lets the profiler's stubs write finished bytes and its writer
//! only frame and move them.
//!
//! The prediction stack is a ring of [`STACK_ENTRIES`] frames on both sides (a deeper stack
//! overwrites its oldest frames), so that an encoder with a fixed buffer (the stubs) and the
//! reader predict alike. So is the callee table (format version 6): [`CALLEE_ENTRIES`]
//! entries, each the function and SP delta of the Enter (not coded as a repeat) that last
//! followed an event of the function and kind (Enter or not) that index it; an Enter the
//! table predicts is its head alone. A timeless stream (version 7) codes a leaf called in a
//! loop as runs of up to [`RUN_MAX`] pairs, each two bytes, which the encoder keeps unwritten
//! until the run ends ([`flush_run`]). A reset (the head [`RESET_HEAD`], then the number of events lost)
//! starts the state afresh after events were dropped.
//!
//! [`StreamState`] with [`put_event`] and [`put_reset`] is the reference encoder; [`frame`]
//! makes a chunk from encoded bytes; the reader decodes with [`decode`].

use crate::crc::crc32_parts;
use crate::events::ordering_time;
use crate::model::{Event, EventKind, FunctionIdx, ThreadIdx};
use crate::tag;
use crate::varint::{Cursor, DecodeError, put_u64, unzigzag, zigzag};

/// Frames on the prediction stack's ring (a power of two).
pub const STACK_ENTRIES: usize = 1 << 11;
const STACK_MASK: u64 = STACK_ENTRIES as u64 - 1;
/// A reset's head: the predicted bit on kind 7, which no event has.
pub const RESET_HEAD: u64 = 0x0F;
/// The most bytes one event takes (head, function and SP varints).
pub const MAX_EVENT_BYTES: usize = 10 + 5 + 10;
/// How many frames below the top an unpredicted end searches for its frame.
pub const SEARCH: usize = crate::events::SEARCH;
/// A timeless head's repeat bit (an Enter of the frame that ended last).
const REPEAT: u64 = 0x10;
/// A timeless stream's run head (version 7), as TIMELESS_EVENTS's: `n` pairs of a repeated
/// Enter and the Leave right after it follow.
pub const RUN_HEAD: u64 = crate::events::TIMELESS_RUN;
/// The most pairs one run holds. Its two bytes so hold 30 events: a stream's bytes hold at
/// most 15 events each, which bounds the events a ring of bytes holds (the profiler counts
/// them in 24 bits) and a chunk's count.
pub const RUN_MAX: u64 = 15;
/// The most events per byte of a stream chunk.
pub const MAX_EVENTS_PER_BYTE: u64 = RUN_MAX;
/// Entries of the callee table (a power of two).
pub const CALLEE_ENTRIES: usize = 1 << 12;
const CALLEE_MASK: u64 = CALLEE_ENTRIES as u64 - 1;
/// A head's low bits for an Enter the callee table predicts: the predicted bit on kind 4
/// (Catch), which no event has (version 6).
pub const CALLEE_HEAD: u64 = 0x09;
const CALLEE_CODE: u8 = 4;

/// The coding state of one thread's stream, the same on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamState {
    prev_ts: u64,
    prev_sp: u64,
    last_end: Option<(u32, u64)>,
    /// Frames pushed and not popped; the top is `stack[(depth - 1) % STACK_ENTRIES]`.
    depth: u64,
    stack: Box<[(u32, u64)]>,
    /// The previous event's callee-table key: its function `<< 1`, plus 1 for an Enter.
    prev_key: u64,
    /// Per key, `func | zigzag(SP delta) << 32` of the Enter that last followed.
    callees: Box<[u64]>,
    /// Timeless events encoded but not yet written: twice the pairs of the run under way, plus
    /// 1 for a repeated Enter whose Leave may continue it (its events' count).
    run: u64,
}

impl Default for StreamState {
    fn default() -> Self {
        StreamState {
            prev_ts: 0,
            prev_sp: 0,
            last_end: None,
            depth: 0,
            stack: vec![(0, 0); STACK_ENTRIES].into_boxed_slice(),
            prev_key: 0,
            callees: vec![0; CALLEE_ENTRIES].into_boxed_slice(),
            run: 0,
        }
    }
}

impl StreamState {
    /// Events encoded but not yet written (a run under way: [`flush_run`] writes them).
    pub fn pending(&self) -> u64 {
        self.run
    }

    /// The state at a thread's first event, and after a reset.
    pub fn reset(&mut self) {
        self.run = 0;
        self.prev_ts = 0;
        self.prev_sp = 0;
        self.last_end = None;
        self.depth = 0;
        self.prev_key = 0;
        self.callees.fill(0);
    }

    /// The callee-table entry the next Enter is predicted by.
    fn callee(&self) -> &u64 {
        &self.callees[(self.prev_key & CALLEE_MASK) as usize]
    }

    /// The callee table after an event of `code` on `func` whose SP delta zigzags to `zz`
    /// (`repeat`: an Enter coded as a repeat, which leaves the entries as they are).
    fn follow(&mut self, code: u8, func: u32, zz: u64, repeat: bool) {
        let enter = code == EventKind::Enter.code();
        if enter && !repeat {
            self.callees[(self.prev_key & CALLEE_MASK) as usize] = u64::from(func) | zz << 32;
        }
        self.prev_key = u64::from(func) << 1 | u64::from(enter);
    }

    fn top(&self) -> Option<(u32, u64)> {
        (self.depth > 0).then(|| self.stack[((self.depth - 1) & STACK_MASK) as usize])
    }

    /// The stack change of an event (`predicted`: its head said so).
    fn apply(&mut self, code: u8, func: u32, sp: u64, predicted: bool) {
        if code == EventKind::Enter.code() {
            self.stack[(self.depth & STACK_MASK) as usize] = (func, sp);
            self.depth += 1;
        } else if predicted {
            self.depth -= 1;
        } else if ends_frame(code) {
            let n = self.depth.min(SEARCH as u64);
            if let Some(k) = (0..n)
                .find(|k| self.stack[((self.depth - 1 - k) & STACK_MASK) as usize] == (func, sp))
            {
                self.depth -= k + 1;
            }
        }
    }
}

/// `Leave`, `Tailcall` or `Unwind`: the codes that end a frame.
fn ends_frame(code: u8) -> bool {
    matches!(code, 1..=3)
}

/// Appends one event (`code`: an [`EventKind`] code) to `out` and moves `state` on; returns
/// the events whose bytes it appended. A time before the previous event's counts as that
/// one's (timed streams never go back); timeless streams ignore `ts`.
///
/// A timeless stream keeps a repeated Enter unwritten, and counts it and the Leave right after
/// it as a run's pair. Any other event writes what the run holds first ([`flush_run`]), as
/// does a repeated Enter when an Enter already waits or the run holds [`RUN_MAX`] pairs: a
/// leaf called in a loop costs two bytes per 15 calls.
pub fn put_event(
    out: &mut Vec<u8>,
    state: &mut StreamState,
    timeless: bool,
    ts: u64,
    code: u8,
    func: u32,
    sp: u64,
) -> u64 {
    let enter = code == EventKind::Enter.code();
    let mut written = 0;
    if timeless {
        let me = Some((func, sp));
        if state.run & 1 == 1 && code == EventKind::Leave.code() && state.top() == me {
            state.run += 1;
            state.apply(code, func, sp, true);
            state.follow(code, func, 0, false);
            state.prev_sp = sp;
            return 0;
        }
        let repeat = enter && state.last_end == me;
        if !repeat || state.run & 1 == 1 || state.run >> 1 == RUN_MAX {
            written = flush_run(out, state);
        }
        if repeat {
            state.run |= 1;
            state.apply(code, func, sp, false);
            state.follow(code, func, 0, true);
            state.prev_sp = sp;
            return written;
        }
    }
    let ts = ts.max(state.prev_ts);
    let time = if timeless {
        0
    } else {
        (ts - state.prev_ts) << 4
    };
    let kind = u64::from(code) << 1;
    let predicted = ends_frame(code) && state.top() == Some((func, sp));
    let zz = zigzag(sp.wrapping_sub(state.prev_sp) as i64);
    let repeat = enter && state.last_end == Some((func, sp));
    if predicted {
        put_u64(out, time | kind | 1);
    } else if repeat {
        put_u64(out, time | if timeless { REPEAT } else { 1 });
    } else if enter && zz >> 32 == 0 && *state.callee() == u64::from(func) | zz << 32 {
        put_u64(out, time | CALLEE_HEAD);
    } else {
        put_u64(out, time | kind);
        put_u64(out, u64::from(func));
        put_u64(out, zz);
    }
    state.apply(code, func, sp, predicted);
    state.follow(code, func, zz, repeat);
    if ends_frame(code) {
        state.last_end = Some((func, sp));
    }
    state.prev_sp = sp;
    state.prev_ts = ts;
    written + 1
}

/// Appends the events a timeless stream holds unwritten (a run's pairs, then a repeated
/// Enter waiting for its Leave); returns how many.
pub fn flush_run(out: &mut Vec<u8>, state: &mut StreamState) -> u64 {
    let n = state.run;
    let mut bytes = [0u8; 3];
    let len = put_pending(&mut bytes, n);
    out.extend_from_slice(&bytes[..len]);
    state.run = 0;
    n
}

/// Writes the bytes of `pending` events a timeless stream holds unwritten (twice a run's
/// pairs, plus 1 for a repeated Enter waiting for its Leave: [`StreamState::pending`]) at the
/// start of `out` (at least 3 bytes); returns their length.
pub fn put_pending(out: &mut [u8], pending: u64) -> usize {
    let mut n = 0;
    if pending >> 1 > 0 {
        out[..2].copy_from_slice(&[RUN_HEAD as u8, (pending >> 1) as u8]);
        n = 2;
    }
    if pending & 1 == 1 {
        out[n] = REPEAT as u8;
        n += 1;
    }
    n
}

/// Appends a reset after `dropped` events were lost (after the events a run holds unwritten),
/// and starts `state` afresh; returns the events it appended.
pub fn put_reset(out: &mut Vec<u8>, state: &mut StreamState, dropped: u64) -> u64 {
    let written = flush_run(out, state);
    put_u64(out, RESET_HEAD);
    put_u64(out, dropped);
    state.reset();
    written
}

/// Appends a whole stream chunk of `count` events of `thread` whose bytes are `parts` in
/// order: EVENT_STREAM, or TIMELESS_STREAM with the ordering times `times` (first, last).
pub fn frame(
    out: &mut Vec<u8>,
    thread: ThreadIdx,
    count: u64,
    times: Option<(u64, u64)>,
    parts: &[&[u8]],
) {
    let mut prefix = Vec::with_capacity(30);
    put_u64(&mut prefix, u64::from(thread.0));
    put_u64(&mut prefix, count);
    if let Some((first, last)) = times {
        put_u64(&mut prefix, first);
        put_u64(&mut prefix, last);
    }
    let len = prefix.len() + parts.iter().map(|p| p.len()).sum::<usize>();
    let kind = if times.is_some() {
        tag::TIMELESS_STREAM
    } else {
        tag::EVENT_STREAM
    };
    let mut head = [0u8; 8];
    head[0] = kind;
    head[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    let mut all: Vec<&[u8]> = vec![&head, &prefix];
    all.extend_from_slice(parts);
    let crc = crc32_parts(&all);
    out.extend_from_slice(&head);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&prefix);
    for p in parts {
        out.extend_from_slice(p);
    }
}

/// What one stream chunk holds, in order: runs of events and the resets between them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Events(Vec<Event>),
    Dropped(u64),
}

/// Decodes a stream chunk's `count` events after its prefix, continuing `state`; a timeless
/// chunk's event `i` gets the ordering time `first + (last - first) · i / (count - 1)`.
pub(crate) fn decode(
    c: &mut Cursor<'_>,
    count: u64,
    state: &mut StreamState,
    times: Option<(u64, u64)>,
) -> Result<Vec<Piece>, DecodeError> {
    if let Some((first, last)) = times
        && last < first
    {
        return Err(DecodeError("stream chunk times go backwards"));
    }
    let mut pieces = Vec::new();
    let mut events = Vec::with_capacity((count as usize).min(crate::MAX_EVENTS_PER_CHUNK));
    let mut i = 0u64;
    while i < count {
        let head = c.u64()?;
        if head == RESET_HEAD {
            let dropped = c.u64()?;
            if !events.is_empty() {
                pieces.push(Piece::Events(std::mem::take(&mut events)));
            }
            pieces.push(Piece::Dropped(dropped));
            state.reset();
            continue;
        }
        if let Some(times) = times
            && head == RUN_HEAD
        {
            i = decode_run(c, state, times, count, i, &mut events)?;
            continue;
        }
        let predicted = head & 1 == 1;
        let code = ((head >> 1) & 7) as u8;
        let kind = EventKind::from_code(code).ok_or(DecodeError("unknown event kind"))?;
        let (ts, repeat) = match times {
            Some((first, last)) => {
                if head >> 5 != 0 {
                    return Err(DecodeError("timeless head out of range"));
                }
                (ordering_time(first, last, count, i), head & REPEAT != 0)
            }
            None => {
                let ts = state
                    .prev_ts
                    .checked_add(head >> 4)
                    .ok_or(DecodeError("timestamp overflows"))?;
                (ts, predicted && kind == EventKind::Enter)
            }
        };
        let callee = predicted && code == CALLEE_CODE;
        let (kind, code) = if callee {
            if times.is_some() && head & REPEAT != 0 {
                return Err(DecodeError("a repeat on a predicted Enter"));
            }
            (EventKind::Enter, EventKind::Enter.code())
        } else {
            (kind, code)
        };
        let (func, sp) = if callee {
            let entry = *state.callee();
            let d = unzigzag(entry >> 32);
            (entry as u32, state.prev_sp.wrapping_add(d as u64))
        } else if repeat {
            if kind != EventKind::Enter || (times.is_some() && predicted) {
                return Err(DecodeError("a repeat on an event that is no Enter"));
            }
            state
                .last_end
                .ok_or(DecodeError("a repeated frame with none before"))?
        } else if predicted {
            if !ends_frame(code) {
                return Err(DecodeError("a predicted event that ends no frame"));
            }
            state
                .top()
                .ok_or(DecodeError("a predicted event with no open frame"))?
        } else {
            let f = c.u32()?;
            (f, state.prev_sp.wrapping_add(c.i64()? as u64))
        };
        state.apply(code, func, sp, predicted && !repeat && !callee);
        state.follow(
            code,
            func,
            zigzag(sp.wrapping_sub(state.prev_sp) as i64),
            repeat,
        );
        if ends_frame(code) {
            state.last_end = Some((func, sp));
        }
        state.prev_sp = sp;
        state.prev_ts = ts;
        events.push(Event {
            ts,
            kind,
            func: FunctionIdx(func),
            sp,
        });
        i += 1;
    }
    if !events.is_empty() {
        pieces.push(Piece::Events(events));
    }
    if !c.is_empty() {
        // A reset after the last event belongs to this chunk too.
        while !c.is_empty() {
            if c.u64()? != RESET_HEAD {
                return Err(DecodeError("bytes after a stream chunk's events"));
            }
            pieces.push(Piece::Dropped(c.u64()?));
            state.reset();
        }
    }
    Ok(pieces)
}

/// A run's pairs (after its head) as events `i` on of the chunk's `count`; returns the index
/// after them.
fn decode_run(
    c: &mut Cursor<'_>,
    state: &mut StreamState,
    (first, last): (u64, u64),
    count: u64,
    mut i: u64,
    events: &mut Vec<Event>,
) -> Result<u64, DecodeError> {
    let n = c.u64()?;
    let (func, sp) = state
        .last_end
        .ok_or(DecodeError("a run with no frame before"))?;
    if n == 0 || n > RUN_MAX || n > (count - i) / 2 {
        return Err(DecodeError("a run's length out of range"));
    }
    for k in 0..2 * n {
        let enter = k % 2 == 0;
        let kind = if enter {
            EventKind::Enter
        } else {
            EventKind::Leave
        };
        state.apply(kind.code(), func, sp, !enter);
        state.follow(kind.code(), func, 0, true);
        state.prev_sp = sp;
        events.push(Event {
            ts: ordering_time(first, last, count, i),
            kind,
            func: FunctionIdx(func),
            sp,
        });
        i += 1;
    }
    Ok(i)
}

const _: () = assert!(STACK_ENTRIES.is_power_of_two());

#[cfg(test)]
mod tests;
