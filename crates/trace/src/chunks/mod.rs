//! Chunks built in place: [`ChunkBuilder`] encodes one thread's events, one at a time, into
//! whole EVENTS or TIMELESS_EVENTS chunks (header, CRC and all) inside a buffer the caller
//! owns and never grows, and [`put_dropped`] frames a DROPPED chunk the same way. The bytes
//! are the ones [`TraceWriter::write_events`](crate::TraceWriter::write_events) writes for the
//! same events split at the same places, so a program thread can encode its own events and
//! the writer only appends finished bytes ([`TraceWriter::write_encoded`](crate::TraceWriter::write_encoded)).
//!
//! A chunk is open from its first event to [`ChunkBuilder::close`]. While open, its header
//! space ([`RESERVE`] bytes) waits in front of its events; closing writes the header and the
//! payload's prefix (thread, count, first time) and moves the events down to follow them.
//! [`ChunkBuilder::push`] refuses an event (returns false) when the buffer's spare capacity
//! could not hold it, when the chunk holds [`MAX_EVENTS_PER_CHUNK`] events, or when an Enter
//! would take the prediction stack beyond [`SHADOW_CAP`] frames: the caller closes the chunk
//! (and, if the buffer is full, moves to another buffer) and pushes again. Both sides start
//! each chunk's prediction stack empty, so a chunk closed early decodes the same.

use crate::crc::crc32_parts;
use crate::events::{SEARCH, Shadow};
use crate::model::ThreadIdx;
use crate::{MAX_EVENTS_PER_CHUNK, tag};

mod bytes;
use crate::varint::zigzag;
use bytes::{put_full, put_run, put_timed_head, put_var};

/// Header space an open chunk keeps in front of its events: the 12-byte chunk head and the
/// payload's prefix at its longest (thread and count varints, first and last time).
pub const RESERVE: usize = 12 + 5 + 5 + 10 + 10;
/// The most bytes one event takes (head, function and stack-pointer varints).
pub const MAX_EVENT_BYTES: usize = 32;
/// Frames the prediction stack of a chunk built here holds at most.
pub const SHADOW_CAP: usize = 4096;
/// The most bytes [`put_dropped`] writes.
pub const DROPPED_BYTES: usize = 12 + 5 + 10;

const ENTER: u8 = 0;
/// The Leave kind's code.
pub const LEAVE: u8 = 1;
/// A head's four low bits for a Leave the prediction stack's top predicts.
pub const PREDICTED_LEAVE: u64 = 1 | ((LEAVE as u64) << 1);

/// Where [`ChunkBuilder::push_run`] takes a run's events from.
pub trait RunSource {
    /// `(code, func, sp)` of event `j` (`code`: an [`EventKind`](crate::EventKind) code the
    /// source has checked), or `None`: an item the caller handles itself, which ends the run.
    /// May be asked more than once for the same `j`.
    fn event(&mut self, j: usize) -> Option<(u8, u32, u64)>;
    /// Writes the heads of the first events of `from..to` (repeated leaf calls, pair after
    /// pair, an Enter first: what [`ChunkBuilder::run`] writes as heads alone) at `p`, the
    /// bytes `timed_pairs` would write for them, and moves `prev_ts` on as it would; returns
    /// the events and the bytes written, and leaves the rest to the builder. A source that can
    /// read its times in blocks says so here; by default it writes none.
    ///
    /// # Safety
    /// `p` must be valid for `MAX_EVENT_BYTES` bytes of writes per event of `from..to`.
    #[inline(always)]
    unsafe fn timed_pair_heads(
        &mut self,
        from: usize,
        to: usize,
        prev_ts: &mut u64,
        p: *mut u8,
    ) -> (usize, usize) {
        let _ = (from, to, prev_ts, p);
        (0, 0)
    }
    /// The time of event `j`, for a `j` that `event` returned. A timeless builder asks only for
    /// the first and the last event of a run.
    fn ts(&mut self, j: usize) -> u64;
    /// Whether event `j + 1` is the Leave of the frame that event `j`, an Enter of `func` at
    /// `sp`, opened (a leaf call). A source that can tell from its raw words says so here.
    #[inline(always)]
    fn leaf(&mut self, j: usize, func: u32, sp: u64) -> bool {
        self.event(j + 1)
            .is_some_and(|(c, f, s)| c == LEAVE && f == func && s == sp)
    }
    /// Whether events `j` and `j + 1` are of the same kinds, functions and SPs as events `k`
    /// and `k + 1` (all four taken by the run, or about to be). A source that can compare raw
    /// words says so here.
    #[inline(always)]
    fn same_pair(&mut self, j: usize, k: usize) -> bool {
        self.event(j).is_some_and(|a| self.event(k) == Some(a))
            && self
                .event(j + 1)
                .is_some_and(|b| self.event(k + 1) == Some(b))
    }
    /// How many of the (up to `max`) pairs of events starting at `j` (`j >= 2`: the pairs
    /// `j, j + 1`, then `j + 2, j + 3`, …) each repeat the pair before them as
    /// [`RunSource::same_pair`] tells: a hot loop's repeated leaf calls. A source that can
    /// scan its raw words faster says so here.
    #[inline(always)]
    fn repeats(&mut self, j: usize, max: usize) -> usize {
        let mut m = 0;
        while m < max && self.same_pair(j + 2 * m, j + 2 * m - 2) {
            m += 1;
        }
        m
    }
}

/// `Leave`, `Tailcall` or `Unwind`: the codes that end a frame.
#[inline(always)]
fn ends_frame(code: u8) -> bool {
    matches!(code, 1..=3)
}

/// Encodes one thread's events into chunks in place (see the module doc).
pub struct ChunkBuilder {
    thread: u32,
    timeless: bool,
    /// Offset of the open chunk's reserved header in the buffer (valid while `count > 0`).
    start: usize,
    count: u32,
    first_ts: u64,
    last_ts: u64,
    prev_ts: u64,
    prev_sp: u64,
    /// Timeless: the last frame-ending event's `(func, sp)`.
    last_end: Option<(u32, u64)>,
    shadow: Shadow,
}

/// [`ChunkBuilder::run`]'s Enter: its head (the time delta and whether it repeats the frame
/// that ended last) and, unless repeated, the function and stack pointer; for a leaf call (the
/// next event leaves this frame) also that Leave's head, and the stack is left as it was.
/// A macro, not a function: the encoder's hot loop keeps the code it compiles to (a function
/// split changed its register allocation and measured slower); the caller's locals are named
/// in the call.
macro_rules! encode_enter {
    (
        $i:ident, $stop:ident, $src:ident, $func:ident, $sp:ident, $end_func:ident,
        $end_sp:ident, $p:ident, $prev_ts:ident, $prev_sp:ident, $frames:ident, $depth:ident,
        $count:ident, $len:ident
    ) => {{
        // A leaf call: the next event leaves this frame.
        let leaf = $i + 1 < $stop && $src.leaf($i, $func, $sp);
        let mut k;
        let repeat = $end_func == $func && $end_sp == $sp;
        if TIMELESS {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            unsafe { $p.write(u8::from(repeat) << 4) };
            k = 1;
        } else {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            k = unsafe { put_timed_head($p, $src.ts($i), &mut $prev_ts, u64::from(repeat)) };
        }
        if !repeat {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            k += unsafe { put_full($p.add(k), $func, $sp, $prev_sp) };
        }
        $prev_sp = $sp;
        if leaf {
            // The Leave, predicted by the frame just entered.
            ($end_func, $end_sp) = ($func, $sp);
            if TIMELESS {
                // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
                unsafe { $p.add(k).write(PREDICTED_LEAVE as u8) };
                k += 1;
            } else {
                // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
                k += unsafe {
                    put_timed_head($p.add(k), $src.ts($i + 1), &mut $prev_ts, PREDICTED_LEAVE)
                };
            }
            $count += 2;
            $i += 2;
        } else {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            unsafe { $frames.add($depth).write(($func, $sp)) };
            $depth += 1;
            $count += 1;
            $i += 1;
        }
        $len += k;
    }};
}

/// [`ChunkBuilder::run`]'s other events (Leave, Tailcall, Unwind, Catch, Throw, ...): a
/// frame-ending event predicted by the top of the stack is its head alone, else the head, the
/// function and the stack pointer (and the stack unwinds to the frame it names). A macro for
/// the reason [`encode_enter`] is one.
macro_rules! encode_other {
    (
        $code:ident, $func:ident, $sp:ident, $depth:ident, $frames:ident, $end_func:ident,
        $end_sp:ident, $p:ident, $src:ident, $i:ident, $prev_ts:ident, $prev_sp:ident,
        $len:ident, $count:ident
    ) => {{
        let mut head_bits = u64::from($code) << 1;
        let mut full = true;
        if ends_frame($code) {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            let predicted = $depth > 0 && unsafe { $frames.add($depth - 1).read() } == ($func, $sp);
            if predicted {
                $depth -= 1;
                full = false;
                head_bits |= 1;
            } else {
                // SAFETY: `depth` frames are initialised.
                $depth = unsafe { unwind_to($frames, $depth, $func, $sp) };
            }
            ($end_func, $end_sp) = ($func, $sp);
        }
        let mut k;
        if TIMELESS {
            // Every timeless head is below 0x80: one byte.
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            unsafe { $p.write(head_bits as u8) };
            k = 1;
        } else {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            k = unsafe { put_timed_head($p, $src.ts($i), &mut $prev_ts, head_bits) };
        }
        if full {
            // SAFETY: see `ChunkBuilder::run` (the writes of a batch).
            k += unsafe { put_full($p.add(k), $func, $sp, $prev_sp) };
        }
        $prev_sp = $sp;
        $len += k;
        $count += 1;
        $i += 1;
    }};
}

impl ChunkBuilder {
    /// A builder for `thread`'s events; `timeless`: TIMELESS_EVENTS chunks (a trace without
    /// per-event times). Allocates the prediction stack once, here.
    pub fn new(thread: ThreadIdx, timeless: bool) -> ChunkBuilder {
        ChunkBuilder {
            thread: thread.0,
            timeless,
            start: 0,
            count: 0,
            first_ts: 0,
            last_ts: 0,
            prev_ts: 0,
            prev_sp: 0,
            last_end: None,
            shadow: Shadow::with_capacity(SHADOW_CAP),
        }
    }

    /// Whether a chunk is open (holds at least one event).
    pub fn is_open(&self) -> bool {
        self.count > 0
    }

    /// Where the open chunk starts in its buffer (`None`: no chunk is open).
    pub fn open_at(&self) -> Option<usize> {
        (self.count > 0).then_some(self.start)
    }

    /// Events in the open chunk.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether no chunk is open.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends one event (`code`: an [`EventKind`](crate::EventKind) code, which the caller
    /// has checked) to the open chunk, opening one at the end of `buf` if none is. Returns
    /// false, changing nothing, if the event does not fit (see the module doc). Never grows
    /// `buf`.
    #[inline(always)]
    pub fn push(&mut self, buf: &mut Vec<u8>, ts: u64, code: u8, func: u32, sp: u64) -> bool {
        let need = if self.count == 0 {
            RESERVE + MAX_EVENT_BYTES
        } else {
            MAX_EVENT_BYTES
        };
        if buf.capacity() - buf.len() < need
            || self.count as usize >= MAX_EVENTS_PER_CHUNK
            || (code == ENTER && self.count > 0 && self.shadow.len() >= SHADOW_CAP)
        {
            return false;
        }
        if self.count == 0 {
            self.start = buf.len();
            // SAFETY: `need` bytes of spare capacity were checked above; the reserved bytes
            // are written at `close` before anyone reads them (and are plain u8s).
            unsafe { buf.set_len(buf.len() + RESERVE) };
            self.first_ts = ts;
            self.prev_ts = ts;
            self.prev_sp = 0;
            self.last_end = None;
            self.shadow.clear();
        }
        let at = buf.len();
        // SAFETY: MAX_EVENT_BYTES (>= 1 + 10 + 5 + 10 + slack, and each `put_var` gets its 10)
        // of spare capacity were checked above, so every write below lands in the buffer.
        let n = unsafe {
            let p = buf.as_mut_ptr().add(at);
            let predicted = ends_frame(code) && self.shadow.predicts(func, sp);
            let mut n;
            let repeat = code == ENTER && self.last_end == Some((func, sp));
            if self.timeless {
                let head = u64::from(predicted) | (u64::from(code) << 1) | (u64::from(repeat) << 4);
                n = put_var(p, head);
                self.last_ts = ts.max(self.first_ts);
            } else {
                // An Enter's `p` bit: the repeat (version 4).
                let bits = (u64::from(code) << 1) | u64::from(predicted || repeat);
                n = put_timed_head(p, ts, &mut self.prev_ts, bits);
            }
            if !predicted && !repeat {
                n += put_var(p.add(n), u64::from(func));
                n += put_var(p.add(n), zigzag(sp.wrapping_sub(self.prev_sp) as i64));
            }
            if ends_frame(code) {
                self.last_end = Some((func, sp));
            }
            self.prev_sp = sp;
            self.shadow.apply_code(code, func, sp, predicted);
            n
        };
        // SAFETY: `n` bytes were written above, within the checked capacity.
        unsafe { buf.set_len(at + n) };
        self.count += 1;
        true
    }

    /// Appends the events `src.event(0)`, `src.event(1)`, … `src.event(n - 1)` as
    /// [`ChunkBuilder::push`] would, one after another, and returns how many it took: it stops
    /// at the first `None` (an item the caller handles itself) or at the first event `push`
    /// would refuse. The same bytes as `push` per event, in a loop that keeps the builder's
    /// state in registers.
    #[inline(always)]
    pub fn push_run(&mut self, buf: &mut Vec<u8>, n: usize, src: &mut impl RunSource) -> usize {
        let mut i = 0;
        if self.count == 0 {
            // The first event opens the chunk (reserving its header) through `push`.
            let Some((code, func, sp)) = (if n > 0 { src.event(0) } else { None }) else {
                return 0;
            };
            if !self.push(buf, src.ts(0), code, func, sp) {
                return 0;
            }
            i = 1;
        }
        if self.timeless {
            i + self.run::<true>(buf, i, n, src)
        } else {
            i + self.run::<false>(buf, i, n, src)
        }
    }

    /// [`ChunkBuilder::push_run`]'s loop over an open chunk, from event `from` to `n`: the
    /// bytes of `push`, with the builder's state (the prediction stack's depth too) in locals,
    /// the limits checked once per batch, the one-byte heads of the common events (a predicted
    /// end, a repeated Enter, a small time delta) written without the varint loop, and a leaf
    /// call (an Enter and the Leave of the same frame right after it) taken as one step that
    /// leaves the stack as it was. Returns the events taken.
    #[inline(always)]
    fn run<const TIMELESS: bool>(
        &mut self,
        buf: &mut Vec<u8>,
        from: usize,
        n: usize,
        src: &mut impl RunSource,
    ) -> usize {
        debug_assert!(self.count > 0);
        let cap = buf.capacity();
        let base = buf.as_mut_ptr();
        let mut len = buf.len();
        let mut count = self.count as usize;
        let mut prev_ts = self.prev_ts;
        let mut prev_sp = self.prev_sp;
        // The last frame-ending event; no function has index u32::MAX (28-bit indices), so
        // that value stands for "none".
        let (mut end_func, mut end_sp) = self.last_end.unwrap_or((u32::MAX, 0));
        let (frames, mut depth, frames_cap) = self.shadow.raw_parts();
        debug_assert!(frames_cap >= SHADOW_CAP);
        // Timeless: repeated leaf calls (a repeated Enter and its predicted Leave) not yet
        // written; a run head writes them all at the end of the batch or before the next event.
        let mut pairs = 0u64;
        let mut i = from;
        'batches: while i < n {
            // Events that fit whatever their size, within the chunk's count limit.
            let room = ((cap - len) / MAX_EVENT_BYTES)
                .min(MAX_EVENTS_PER_CHUNK.saturating_sub(count))
                .min(n - i);
            if room == 0 {
                break;
            }
            let stop = i + room;
            while i < stop {
                let Some((code, func, sp)) = src.event(i) else {
                    break 'batches;
                };
                if code == ENTER
                    && end_func == func
                    && end_sp == sp
                    && i + 1 < stop
                    && depth < SHADOW_CAP
                    && src.leaf(i, func, sp)
                {
                    // The last ended frame again, entered and left, and the pairs after it that
                    // repeat it word for word: a hot loop's leaf calls. Timeless: one more of a
                    // run (its head is written later). Timed: each event its head alone (the
                    // time delta, the repeat or predicted bit), the bytes of `encode_enter`'s
                    // leaf call pair after pair.
                    let last = i + 2 + 2 * src.repeats(i + 2, (stop - i - 2) / 2);
                    if TIMELESS {
                        pairs += (last - i) as u64 / 2;
                    } else {
                        // SAFETY: as for the writes below (see there): these events are in the
                        // batch, each within its MAX_EVENT_BYTES.
                        len += unsafe { timed_pairs(base.add(len), src, i, last, &mut prev_ts) };
                    }
                    prev_sp = sp;
                    count += last - i;
                    i = last;
                    continue;
                }
                if TIMELESS && pairs > 0 {
                    // SAFETY: the run's events reserved 2 × MAX_EVENT_BYTES each in this batch
                    // and wrote nothing; its head takes at most 11.
                    len += unsafe { put_run(base.add(len), pairs) };
                    pairs = 0;
                }
                // Every write below ("see above"): `room` events of MAX_EVENT_BYTES fit in the
                // spare capacity from where the batch began (each `put_var` gets its 10 bytes
                // within an event's 32, a leaf call's two events their 64); frames are written
                // below `frames_cap` (an Enter at SHADOW_CAP frames stops the run) and read
                // below `depth`.
                // SAFETY: `len` is within the buffer's capacity (see above).
                let p = unsafe { base.add(len) };
                if code == ENTER {
                    if depth >= SHADOW_CAP {
                        break 'batches;
                    }
                    encode_enter!(
                        i, stop, src, func, sp, end_func, end_sp, p, prev_ts, prev_sp, frames,
                        depth, count, len
                    );
                    continue;
                }
                encode_other!(
                    code, func, sp, depth, frames, end_func, end_sp, p, src, i, prev_ts, prev_sp,
                    len, count
                );
            }
            if TIMELESS && pairs > 0 {
                // SAFETY: as above, within the batch that took the run's events.
                len += unsafe { put_run(base.add(len), pairs) };
                pairs = 0;
            }
        }
        if TIMELESS && pairs > 0 {
            // A run cut short by the end of the events or by an event this loop does not take:
            // as above, within the batch that took them.
            // SAFETY: as above.
            len += unsafe { put_run(base.add(len), pairs) };
        }
        // SAFETY: the bytes up to `len` were written above, within the capacity; the first
        // `depth` frames were written (here or before) and `depth <= SHADOW_CAP <= frames_cap`.
        unsafe {
            buf.set_len(len);
            self.shadow.set_len(depth);
        }
        if TIMELESS && i > from {
            self.last_ts = src.ts(i - 1).max(self.first_ts);
        }
        self.count = count as u32;
        self.prev_ts = prev_ts;
        self.prev_sp = prev_sp;
        self.last_end = (end_func != u32::MAX).then_some((end_func, end_sp));
        i - from
    }

    /// Closes the open chunk (no effect if none is): writes its header and prefix and moves
    /// its events down behind them, so that `buf` ends with the whole chunk. Returns the
    /// number of events it holds.
    pub fn close(&mut self, buf: &mut Vec<u8>) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let mut prefix = [0u8; RESERVE - 12];
        let mut n = 0;
        for v in [u64::from(self.thread), u64::from(self.count), self.first_ts]
            .into_iter()
            .chain(self.timeless.then_some(self.last_ts))
        {
            // SAFETY: `prefix` has RESERVE - 12 = 30 bytes, enough for the four varints
            // (5 + 5 + 10 + 10); `n` stays below 30 - 10 before each call but the last.
            n += unsafe { put_var(prefix.as_mut_ptr().add(n), v) };
        }
        let events_from = self.start + RESERVE;
        let events_len = buf.len() - events_from;
        let payload_len = n + events_len;
        let to = self.start + 12 + n;
        buf.copy_within(events_from.., to);
        buf[self.start + 12..to].copy_from_slice(&prefix[..n]);
        buf.truncate(to + events_len);
        let kind = if self.timeless {
            tag::TIMELESS_EVENTS
        } else {
            tag::EVENTS
        };
        let mut head = [0u8; 12];
        head[0] = kind;
        head[4..8].copy_from_slice(&(payload_len as u32).to_le_bytes());
        let crc = crc32_parts(&[&head[..8], &buf[self.start + 12..]]);
        head[8..12].copy_from_slice(&crc.to_le_bytes());
        buf[self.start..self.start + 12].copy_from_slice(&head);
        let count = u64::from(self.count);
        self.count = 0;
        self.shadow.clear();
        count
    }
}

/// Writes the heads of events `from..to` of `src` at `p`: repeated leaf calls (an Enter
/// repeating the frame that ended last, then its predicted Leave, pair after pair), each its
/// head alone (the time delta, the repeat or predicted bit), as `encode_enter!` writes a leaf
/// call; returns the bytes written.
///
/// # Safety
/// `p` must be valid for `MAX_EVENT_BYTES` bytes of writes per event.
#[inline(always)]
unsafe fn timed_pairs(
    p: *mut u8,
    src: &mut impl RunSource,
    from: usize,
    to: usize,
    prev_ts: &mut u64,
) -> usize {
    // The source writes what it can in blocks, this loop the rest.
    // SAFETY: the caller's promise.
    let (done, mut len) = unsafe { src.timed_pair_heads(from, to, prev_ts, p) };
    let mut i = from + done;
    while i < to {
        // The repeated Enter (its repeat bit), then the predicted Leave.
        for bits in [1, PREDICTED_LEAVE] {
            // SAFETY: the caller's promise; a head takes at most 10 bytes.
            len += unsafe { put_timed_head(p.add(len), src.ts(i), prev_ts, bits) };
            i += 1;
        }
    }
    len
}

/// The stack change of a frame-ending event that did not match the top (an exception's
/// unwind, a frame the chunk did not see enter): truncates to the matching frame among the top
/// [`SEARCH`] ones, as [`Shadow::apply_code`](crate::events) does; returns the new depth.
///
/// # Safety
/// `frames` must hold `depth` initialised frames.
#[cold]
#[inline(never)]
unsafe fn unwind_to(frames: *const (u32, u64), depth: usize, func: u32, sp: u64) -> usize {
    // SAFETY: the caller's promise.
    let stack = unsafe { std::slice::from_raw_parts(frames, depth) };
    let lo = depth.saturating_sub(SEARCH);
    match stack[lo..].iter().rposition(|&e| e == (func, sp)) {
        Some(i) => lo + i,
        None => depth,
    }
}

/// Appends a DROPPED chunk (`count` events of `thread` lost here) to `buf`; returns false,
/// writing nothing, if `buf`'s spare capacity is below [`DROPPED_BYTES`]. Never grows `buf`.
pub fn put_dropped(buf: &mut Vec<u8>, thread: ThreadIdx, count: u64) -> bool {
    if buf.capacity() - buf.len() < DROPPED_BYTES {
        return false;
    }
    let mut tmp = [0u8; 15];
    // SAFETY: 15 bytes hold a u32 varint (5) and a u64 varint (10).
    let n = unsafe {
        let a = put_var(tmp.as_mut_ptr(), u64::from(thread.0));
        a + put_var(tmp.as_mut_ptr().add(a), count)
    };
    let mut head = [0u8; 12];
    head[0] = tag::DROPPED;
    head[4..8].copy_from_slice(&(n as u32).to_le_bytes());
    let crc = crc32_parts(&[&head[..8], &tmp[..n]]);
    head[8..12].copy_from_slice(&crc.to_le_bytes());
    buf.extend_from_slice(&head);
    buf.extend_from_slice(&tmp[..n]);
    true
}

#[cfg(test)]
mod tests;
