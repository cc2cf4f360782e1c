//! One writer round: encode the rings that filled slowly (when a flush is due) or whose
//! thread exited, then append every buffer of finished chunks the rings' outboxes hold
//! (ring/outbox.rs), metadata first. Busy threads encode their own rings (hooks.rs), so for
//! them the writer only moves finished bytes. [`Sink`] is the trace file with the writer's
//! scratch state.
//!
//! Nothing is staged between rounds: a ring's backlog stays in its outbox and ring, where
//! the producer waits for room (lossless) or counts drops (`record --lossy`).

use std::io;
use std::sync::atomic::Ordering;

use eltrace_trace::{ThreadIdx, TraceInfo};

use super::file::TraceFile;
use crate::recorder::Recorder;
use crate::ring::Ring;
use crate::ring::stream::Stream;
use crate::sys::lock;

/// The open trace plus the writer's scratch buffers.
pub struct Sink {
    pub file: TraceFile,
    snapshot: Vec<Snap>,
    /// Timeless events: samples to write (sampler.rs).
    samples: Vec<eltrace_trace::Sample>,
    /// A streaming ring's chunk being framed.
    chunk: Vec<u8>,
}

/// What a round saw of one registered ring.
#[derive(Clone, Copy)]
struct Snap {
    ring: *mut Ring,
    thread: ThreadIdx,
    retired: bool,
    bytes: usize,
    /// Outbox buffers sealed when the round took its snapshot.
    sealed: u64,
    /// A streaming ring: its published word then (what the round may cut).
    word: u64,
    /// The ring was retired and is now encoded to its end.
    done: bool,
}

// SAFETY: a snapshot is only used by the writer thread within one round (the Vec is kept
// between rounds for its capacity only, cleared before reuse); the ring pointer is
// dereferenced only under the registry's rules (see `Recorder::rings`).
unsafe impl Send for Snap {}

impl Sink {
    /// Writes the header and info chunk to `file` (new and empty).
    pub fn create(file: std::fs::File, info: &TraceInfo) -> io::Result<Sink> {
        Ok(Sink {
            file: TraceFile::create(file, info)?,
            snapshot: Vec::new(),
            samples: Vec::new(),
            chunk: Vec::new(),
        })
    }
}

/// Reports a failed write of the trace as an internal error.
pub fn check(rec: &Recorder, r: io::Result<()>) {
    if let Err(e) = r {
        rec.internal_error("io", &format!("writing the trace failed: {e}"));
    }
}

/// One round (see the module doc); `flush`: a flush is due (encode every ring the writer
/// can lock, seal partial buffers, flush the file); `last`: the final drain, which waits
/// (briefly) for a ring whose thread holds its lock rather than leave its events unwritten.
/// Returns how many bytes of chunks it wrote plus the records it encoded (0: nothing moved).
pub fn round(rec: &Recorder, sink: &mut Sink, flush: bool, last: bool) -> usize {
    // 1. Snapshot the rings; encode those a flush is due for or whose thread exited (the
    //    writer takes the consumer lock; a thread busy encoding its own ring keeps it).
    let mut snapshot = std::mem::take(&mut sink.snapshot);
    snapshot.clear();
    snapshot.extend(lock(&rec.rings).iter().map(|r| {
        // SAFETY: registered rings stay allocated while in the registry (locked here); only
        // this thread frees them.
        let ring = unsafe { &*r.ring };
        Snap {
            ring: r.ring,
            thread: r.thread,
            retired: ring.is_retired(), // before published() below: then the head is final
            bytes: r.bytes,
            sealed: 0,
            word: 0,
            done: false,
        }
    }));
    let mut moved = encode_due(rec, &mut snapshot, flush, last);

    // 2. What the outboxes hold now. Every event in a sealed buffer happened after the
    //    metadata it refers to was queued (function and thread records, and the VALUE records
    //    of Value events: see `Recorder::add_value`), so taking the queue *after* this
    //    snapshot writes the records before the events that use them. The samples taken so
    //    far go before these events too (sampler.rs).
    take_sealed_and_metadata(rec, sink, &mut snapshot);

    // 3. Append the sealed buffers, oldest first per ring, and give them back.
    let mut freed = Vec::new();
    moved += append_sealed(rec, sink, &snapshot, &mut freed);
    sink.snapshot = snapshot;

    // 4. Free rings whose threads have exited and which are now written.
    free_rings(rec, freed);

    if flush {
        check(rec, sink.file.out.flush());
    }
    moved
}

/// Step 1 of a round: encodes the rings of `snapshot` a flush is due for (`flush`) or whose
/// thread exited, marking those encoded to their end `done`; returns the records encoded.
fn encode_due(rec: &Recorder, snapshot: &mut [Snap], flush: bool, last: bool) -> usize {
    let mut moved = 0;
    for s in snapshot.iter_mut() {
        // SAFETY: a snapshot's rings were registered when `round` took it, and only this
        // thread frees a ring, at the end of the round (`free_rings`).
        let ring = unsafe { &*s.ring };
        if !(flush || s.retired) {
            continue;
        }
        let mut consumer = ring.try_consume();
        if consumer.is_none() && last {
            // The thread is encoding its own ring (a few µs) or was preempted doing so: wait
            // for it, up to 50 ms, so that what it encoded is sealed and written too.
            for _ in 0..1000 {
                crate::sys::sleep_ns(50_000);
                consumer = ring.try_consume();
                if consumer.is_some() {
                    break;
                }
            }
        }
        if let Some(mut c) = consumer {
            let head = ring.published();
            let done = c.encode(head);
            moved += done.records as usize;
            c.seal();
            let bad = c.take_bad();
            drop(c);
            if bad > 0 {
                rec.internal_error(
                    "bad-record",
                    &format!("{bad} raw records had an unknown kind"),
                );
            }
            s.done = s.retired && !done.blocked && ring.drained() == head;
        }
    }
    moved
}

/// Step 2 of a round: notes each ring's sealed buffers in `snapshot`, then writes the
/// queued metadata and the samples taken so far.
fn take_sealed_and_metadata(rec: &Recorder, sink: &mut Sink, snapshot: &mut [Snap]) {
    for s in snapshot.iter_mut() {
        // SAFETY: as in `encode_due`: the ring is freed only by this thread, after this step.
        let ring = unsafe { &*s.ring };
        s.sealed = ring.outbox().sealed();
        if let Some(stream) = ring.stream() {
            s.word = stream.published();
        }
    }
    if rec.config.sampling {
        crate::sampler::take(&mut sink.samples);
    }
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
    if !sink.samples.is_empty() {
        check(rec, sink.file.out.write_samples(&sink.samples));
        sink.samples.clear();
    }
}

/// Step 3 of a round: appends the sealed buffers of `snapshot`, oldest first per ring,
/// gives them back and wakes the producers; writes drop counts, and the wait totals of the
/// rings now written to their end, which go into `freed`. Returns the bytes written.
fn append_sealed(
    rec: &Recorder,
    sink: &mut Sink,
    snapshot: &[Snap],
    freed: &mut Vec<(*mut Ring, usize)>,
) -> usize {
    let mut moved = 0;
    for s in snapshot {
        // SAFETY: as in `encode_due`: the ring is freed only by this thread, after this step.
        let ring = unsafe { &*s.ring };
        let outbox = ring.outbox();
        for i in outbox.written()..s.sealed {
            // SAFETY: this is the writer thread and `i` lies in [written, sealed).
            let slot = unsafe { outbox.sealed_slot(i) };
            moved += slot.bytes.len();
            check(rec, sink.file.out.write_encoded(&slot.bytes, slot.events));
            slot.bytes.clear();
            slot.events = 0;
            outbox.mark_written(i);
        }
        let mut cut_to_end = true;
        if let Some(stream) = ring.stream() {
            moved += cut_stream(rec, sink, s, stream);
            if s.retired {
                cut_to_end = stream.is_cut();
                if cut_to_end {
                    moved += write_held(rec, sink, s.thread, stream);
                }
                let n = stream.take_pending_drops();
                if n > 0 {
                    check(rec, sink.file.out.write_dropped(s.thread, n));
                }
            }
        }
        ring.wake_producer();
        if s.retired || ring.capacity() == 0 {
            let n = ring.take_unreported_drops();
            if n > 0 {
                check(rec, sink.file.out.write_dropped(s.thread, n));
            }
        }
        if s.done && cut_to_end && outbox.written() == outbox.sealed() {
            write_waits(rec, sink, s.thread, ring);
            freed.push((s.ring, s.bytes));
        }
    }
    moved
}

/// Step 3 for a streaming ring: writes what its thread published up to the round's snapshot
/// as one chunk (ring/stream.rs) and gives the bytes back. Returns the bytes written.
fn cut_stream(rec: &Recorder, sink: &mut Sink, s: &Snap, stream: &Stream) -> usize {
    let now = crate::clock::to_ns(crate::clock::now());
    let Some(cut) = stream.cut(s.word, now) else {
        return 0;
    };
    let mut chunk = std::mem::take(&mut sink.chunk);
    chunk.clear();
    cut.frame(&mut chunk, s.thread, crate::clock::is_timeless());
    check(rec, sink.file.out.write_encoded(&chunk, cut.events));
    stream.release(cut);
    let n = chunk.len();
    sink.chunk = chunk;
    n
}

/// Writes the chunk of the timeless events a stream's run holds unwritten, once its thread
/// retired or at the end (after all it published was cut). Returns the bytes written.
pub fn write_held(rec: &Recorder, sink: &mut Sink, thread: ThreadIdx, stream: &Stream) -> usize {
    let mut chunk = std::mem::take(&mut sink.chunk);
    chunk.clear();
    let now = crate::clock::to_ns(crate::clock::now());
    let events = stream.frame_held(&mut chunk, thread, now);
    if events > 0 {
        check(rec, sink.file.out.write_encoded(&chunk, events));
    }
    let n = chunk.len();
    sink.chunk = chunk;
    n
}

/// Step 4 of a round: frees the rings of `freed` (retired and written to their end).
fn free_rings(rec: &Recorder, freed: Vec<(*mut Ring, usize)>) {
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
}

/// Writes a ring's wait totals, if its producer ever waited.
pub fn write_waits(rec: &Recorder, sink: &mut Sink, thread: ThreadIdx, ring: &Ring) {
    let (waits, ns) = ring.waits();
    if waits > 0 {
        check(rec, sink.file.out.write_waits(thread, waits, ns));
    }
}
