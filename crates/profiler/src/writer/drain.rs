//! One drain round: snapshot what every ring has published, write the queued metadata, copy
//! the rings into staging (fast, so the rings empty quickly) and encode up to a budget of
//! staged records as trace events, with `Dropped` records where rings lost events. Raw ticks
//! become nanoseconds here (`clock::to_ns`). [`Sink`] is the trace file with the staging.

use std::io;
use std::path::Path;
use std::sync::atomic::Ordering;

use eltrace_trace::{Event, EventKind, FunctionIdx, ThreadIdx, TraceInfo};

use super::file::TraceFile;
use crate::clock;
use crate::recorder::Recorder;
use crate::ring::{KIND_DROPPED, RawRecord, Ring, extend_ticks};
use crate::sys::lock;

/// The open trace plus the writer's scratch buffers.
pub struct Sink {
    pub file: TraceFile,
    staged: Vec<Staged>,
    staged_records: usize,
    /// Most records staging may hold before rings are left to fill (and drop).
    staging_limit: usize,
    events: Vec<Event>,
}

impl Sink {
    /// Creates the file and writes the header and info chunk.
    /// `staging_bytes` bounds the writer's own backlog of drained, not yet encoded records.
    pub fn create(path: &Path, info: &TraceInfo, staging_bytes: usize) -> io::Result<Sink> {
        Ok(Sink {
            file: TraceFile::create(path, info)?,
            staged: Vec::new(),
            staged_records: 0,
            staging_limit: (staging_bytes / core::mem::size_of::<RawRecord>()).max(ENCODE_SLICE),
            events: Vec::new(),
        })
    }

    /// Whether drained records wait to be encoded.
    pub fn backlog(&self) -> bool {
        self.staged_records > 0
    }
}

/// Reports a failed write of the trace as an internal error.
pub fn check(rec: &Recorder, r: io::Result<()>) {
    if let Err(e) = r {
        rec.internal_error("io", &format!("writing the trace failed: {e}"));
    }
}

/// Records drained from a thread's ring but not yet encoded.
struct Staged {
    thread: ThreadIdx,
    raw: Vec<RawRecord>,
    /// `(end, now)`: the records of `raw` before index `end` (and after the previous entry's)
    /// were drained when the clock read `now`; their ticks' high bits come from it.
    drained_at: Vec<(usize, u64)>,
    /// First record of `raw` not yet encoded.
    pos: usize,
    /// Drops to report after the staged records (retired or buffer-less rings).
    drops_after: u64,
}

/// Records encoded per round before the rings are drained again (small, so that a burst on
/// a fast-path thread is copied out of its ring every few tens of microseconds).
pub const ENCODE_SLICE: usize = 2_048;
/// Staging buffers larger than this many records are freed when they run empty.
const STAGING_KEEP: usize = 1 << 18;

/// One round: drain every ring into staging (fast copies, so the rings empty quickly), write
/// queued metadata, then encode up to `budget` staged records.
pub fn round(rec: &Recorder, sink: &mut Sink, flush: bool, budget: usize) {
    // 1. Snapshot what each ring has published. Every event in a snapshot happened after the
    //    metadata it refers to was queued (function and thread records, and the VALUE records
    //    of Value events: see `Recorder::add_value`), so taking the queue *after* the
    //    snapshot guarantees records precede the events that use them.
    let snapshot: Vec<(*mut Ring, ThreadIdx, u64, bool, usize)> = lock(&rec.rings)
        .iter()
        .map(|r| {
            // SAFETY: registered rings stay allocated while in the registry (locked here);
            // only this thread frees them.
            let ring = unsafe { &*r.ring };
            let retired = ring.is_retired(); // before published(): then the head is final
            (r.ring, r.thread, ring.published(), retired, r.bytes)
        })
        .collect();

    // 2. Metadata first.
    let queued = std::mem::take(&mut *lock(&rec.queue));
    for f in &queued.functions {
        check(rec, sink.file.out.write_function(f));
    }
    for t in &queued.threads {
        check(rec, sink.file.out.write_thread(t));
    }
    for d in &queued.diagnostics {
        check(rec, sink.file.out.write_diagnostic(d));
    }
    for v in &queued.values {
        check(rec, sink.file.out.write_value(v));
    }

    // 3. Drain the rings into staging, unless staging is at its limit (then the rings keep
    //    their records and, when full, count drops at the right place).
    let unlimited = budget == usize::MAX;
    let mut freed = Vec::new();
    for &(ptr, thread, head, retired, bytes) in &snapshot {
        if !unlimited && sink.staged_records >= sink.staging_limit {
            break;
        }
        // SAFETY: as above; the ring is freed only below, by this thread.
        let ring = unsafe { &*ptr };
        let i = match sink.staged.iter().position(|s| s.thread == thread) {
            Some(i) => i,
            None => {
                sink.staged.push(Staged {
                    thread,
                    raw: Vec::new(),
                    drained_at: Vec::new(),
                    pos: 0,
                    drops_after: 0,
                });
                sink.staged.len() - 1
            }
        };
        let st = &mut sink.staged[i];
        let before = st.raw.len();
        ring.drain_to(head, &mut st.raw);
        let added = &st.raw[before..];
        for m in added.iter().filter(|r| r.kind() == KIND_DROPPED) {
            ring.note_marked_drops(m.sp());
        }
        if !added.is_empty() {
            // Every drained record was written before this read of the clock (the head was
            // read with Acquire above).
            st.drained_at.push((st.raw.len(), clock::now()));
        }
        sink.staged_records += added.len();
        if retired || ring.capacity() == 0 {
            st.drops_after += ring.take_unreported_drops();
        }
        if retired {
            freed.push((ptr, bytes));
        }
    }

    // 4. Free rings whose threads have exited and which are now drained.
    if !freed.is_empty() {
        lock(&rec.rings).retain(|r| !freed.iter().any(|&(p, _)| p == r.ring));
        for (ptr, bytes) in freed {
            // SAFETY: the ring came from Box::into_raw in register_current_thread, it is no
            // longer in the registry, and its thread retired it (no more pushes).
            let ring = unsafe { Box::from_raw(ptr) };
            rec.freed_drops
                .fetch_add(ring.total_drops(), Ordering::Relaxed);
            drop(ring);
            rec.release_bytes(bytes);
        }
    }

    // 5. Encode.
    let mut left = budget;
    let mut staged = std::mem::take(&mut sink.staged);
    for st in staged.iter_mut() {
        if left == 0 {
            break;
        }
        let end = st.raw.len().min(st.pos.saturating_add(left));
        let n = end - st.pos;
        write_raw(rec, sink, st.thread, &st.raw, st.pos..end, &st.drained_at);
        st.pos = end;
        left -= n;
        sink.staged_records -= n;
        if st.pos == st.raw.len() {
            st.raw.clear();
            st.drained_at.clear();
            st.pos = 0;
            if st.drops_after > 0 {
                check(rec, sink.file.out.write_dropped(st.thread, st.drops_after));
                st.drops_after = 0;
            }
        }
    }
    // Keep entries that still hold records; give up the memory of large idle buffers.
    staged.retain_mut(|st| {
        if st.raw.is_empty() && st.raw.capacity() > STAGING_KEEP {
            st.raw = Vec::new();
        }
        !st.raw.is_empty() || st.drops_after > 0
    });
    sink.staged = staged;

    if flush {
        check(rec, sink.file.out.flush());
    }
}

/// Converts raw records to events and writes them, splitting at drop markers.
/// `raw[range]` is encoded; `drained_at` tells each record's drain time (see [`Staged`]).
fn write_raw(
    rec: &Recorder,
    sink: &mut Sink,
    thread: ThreadIdx,
    raw: &[RawRecord],
    range: std::ops::Range<usize>,
    drained_at: &[(usize, u64)],
) {
    sink.events.clear();
    let mut bad = 0u64;
    let mut batch = drained_at.iter().position(|&(end, _)| end > range.start);
    for j in range {
        let r = raw[j];
        while let Some(b) = batch.filter(|&b| drained_at[b].0 <= j) {
            batch = Some(b + 1).filter(|&n| n < drained_at.len());
        }
        let now = batch.map_or_else(clock::now, |b| drained_at[b].1);
        if r.kind() == KIND_DROPPED {
            if !sink.events.is_empty() {
                check(rec, sink.file.out.write_events(thread, &sink.events));
                sink.events.clear();
            }
            check(rec, sink.file.out.write_dropped(thread, r.sp()));
            continue;
        }
        let Some(kind) = u8::try_from(r.kind()).ok().and_then(EventKind::from_code) else {
            bad += 1;
            continue;
        };
        sink.events.push(Event {
            ts: clock::to_ns(extend_ticks(r.ticks48(), now)),
            kind,
            func: FunctionIdx(r.func()),
            sp: r.sp(),
        });
    }
    if !sink.events.is_empty() {
        check(rec, sink.file.out.write_events(thread, &sink.events));
        sink.events.clear();
    }
    if bad > 0 {
        rec.internal_error(
            "bad-record",
            &format!("{bad} raw records had an unknown kind"),
        );
    }
}
