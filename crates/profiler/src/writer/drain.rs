//! One drain round: snapshot what every ring has published, write the queued metadata, then
//! empty each ring up to its snapshot in pieces: copy a piece into a small reused buffer,
//! free its slots at once (waking a producer that waits for room), and encode it as trace
//! events, with `Dropped` records where a ring lost events. Raw ticks become nanoseconds here
//! (`clock::to_ns`). [`Sink`] is the trace file with the writer's scratch buffers.
//!
//! Nothing is staged between rounds: a ring's backlog stays in the ring, where the producer
//! waits for room (lossless) or counts drops (`record --lossy`). The writer's own memory is a
//! few hundred KiB whatever the event rate.

use std::io;
use std::sync::atomic::Ordering;

use eltrace_trace::{Event, EventKind, FunctionIdx, ThreadIdx, TraceInfo};

use super::file::TraceFile;
use crate::clock;
use crate::recorder::Recorder;
use crate::ring::{KIND_DROPPED, RawRecord, Ring, extend_ticks};
use crate::sys::lock;

/// Records copied out of a ring per piece (256 KiB: the copy and its encoding stay in L2).
const PIECE: usize = 16_384;

/// The open trace plus the writer's scratch buffers.
pub struct Sink {
    pub file: TraceFile,
    /// One piece of a ring, copied out.
    raw: Vec<RawRecord>,
    /// The piece as events.
    events: Vec<Event>,
    snapshot: Vec<Snap>,
    /// Timeless events: samples to write (sampler.rs) and the previous round's snapshot time.
    samples: Vec<eltrace_trace::Sample>,
    prev_snap_ns: u64,
}

/// What a round saw of one registered ring.
#[derive(Clone, Copy)]
struct Snap {
    ring: *mut Ring,
    thread: ThreadIdx,
    head: u64,
    retired: bool,
    bytes: usize,
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
            raw: Vec::with_capacity(PIECE),
            events: Vec::with_capacity(PIECE),
            snapshot: Vec::new(),
            samples: Vec::new(),
            prev_snap_ns: clock::to_ns(clock::now()),
        })
    }
}

/// Reports a failed write of the trace as an internal error.
pub fn check(rec: &Recorder, r: io::Result<()>) {
    if let Err(e) = r {
        rec.internal_error("io", &format!("writing the trace failed: {e}"));
    }
}

/// One round (see the module doc); returns how many records it drained.
pub fn round(rec: &Recorder, sink: &mut Sink, flush: bool) -> usize {
    // 1. Snapshot what each ring has published. Every event in a snapshot happened after the
    //    metadata it refers to was queued (function and thread records, and the VALUE records
    //    of Value events: see `Recorder::add_value`), so taking the queue *after* the
    //    snapshot guarantees records precede the events that use them.
    let mut snapshot = std::mem::take(&mut sink.snapshot);
    snapshot.clear();
    snapshot.extend(lock(&rec.rings).iter().map(|r| {
        // SAFETY: registered rings stay allocated while in the registry (locked here); only
        // this thread frees them.
        let ring = unsafe { &*r.ring };
        let retired = ring.is_retired(); // before published(): then the head is final
        Snap {
            ring: r.ring,
            thread: r.thread,
            head: ring.published(),
            retired,
            bytes: r.bytes,
        }
    }));

    // Timeless events get their ordering times from the snapshots: every event drained now
    // happened before `snap_ns` and after the ring's previous snapshot (`Stamp::Spread`). The
    // samples taken since the last round go before this round's events (sampler.rs).
    let timeless = clock::is_timeless();
    let snap_ns = clock::to_ns(clock::now());
    if rec.config.sampling {
        crate::sampler::take(&mut sink.samples);
    }

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

    if !sink.samples.is_empty() {
        check(rec, sink.file.out.write_samples(&sink.samples));
        sink.samples.clear();
    }

    // 3. Empty each ring up to its snapshot, piece by piece.
    let mut drained = 0;
    let mut freed = Vec::new();
    for s in &snapshot {
        // SAFETY: as above; the ring is freed only below, by this thread.
        let ring = unsafe { &*s.ring };
        let total = s.head.saturating_sub(ring.drained());
        let from = match ring.anchor_ns() {
            0 => sink.prev_snap_ns,
            a => a,
        };
        let mut done = 0u64;
        loop {
            sink.raw.clear();
            ring.drain_to_max(s.head, PIECE, &mut sink.raw);
            if sink.raw.is_empty() {
                break;
            }
            // Every drained record was written before this read of the clock (the head was
            // read with Acquire above), so `now` restores the high bits of their ticks.
            let stamp = if timeless {
                Stamp::Spread {
                    from,
                    to: snap_ns,
                    done,
                    total,
                }
            } else {
                Stamp::Ticks(clock::now())
            };
            done += sink.raw.len() as u64;
            drained += sink.raw.len();
            write_raw(rec, sink, s.thread, ring, stamp);
        }
        if timeless {
            ring.set_anchor_ns(snap_ns);
        }
        if s.retired || ring.capacity() == 0 {
            let n = ring.take_unreported_drops();
            if n > 0 {
                check(rec, sink.file.out.write_dropped(s.thread, n));
            }
        }
        if s.retired {
            write_waits(rec, sink, s.thread, ring);
            freed.push((s.ring, s.bytes));
        }
    }
    sink.snapshot = snapshot;
    sink.prev_snap_ns = snap_ns;

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

    if flush {
        check(rec, sink.file.out.flush());
    }
    drained
}

/// Writes a ring's wait totals, if its producer ever waited.
pub fn write_waits(rec: &Recorder, sink: &mut Sink, thread: ThreadIdx, ring: &Ring) {
    let (waits, ns) = ring.waits();
    if waits > 0 {
        check(rec, sink.file.out.write_waits(thread, waits, ns));
    }
}

/// How a piece's events get their `ts`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stamp {
    /// From the records' ticks; the clock read `now` (ticks) after the piece was drained.
    Ticks(u64),
    /// Timeless records: the piece starts `done` records into a drain of `total` records
    /// that happened between `from` and `to` (ns); record `i` of the drain gets
    /// `from + (to - from) * (i + 1) / total`, an ordering estimate (docs/trace-format.md).
    Spread {
        from: u64,
        to: u64,
        done: u64,
        total: u64,
    },
}

impl Stamp {
    /// The `ts` of the piece's record `j` (whose low tick bits are `ticks48`).
    #[inline]
    fn ts(self, j: usize, ticks48: u64) -> u64 {
        match self {
            Stamp::Ticks(now) => clock::to_ns(extend_ticks(ticks48, now)),
            Stamp::Spread {
                from,
                to,
                done,
                total,
            } => {
                let to = to.max(from);
                let i = (done + j as u64 + 1).min(total.max(1));
                from + ((u128::from(to - from) * u128::from(i)) / u128::from(total.max(1))) as u64
            }
        }
    }
}

/// Converts the piece in `sink.raw` to events and writes them, splitting at drop markers.
fn write_raw(rec: &Recorder, sink: &mut Sink, thread: ThreadIdx, ring: &Ring, stamp: Stamp) {
    let mut result = Ok(());
    let bad = encode_piece(
        &mut sink.file.out,
        &mut sink.events,
        &sink.raw,
        thread,
        stamp,
        |dropped| ring.note_marked_drops(dropped),
        &mut result,
    );
    check(rec, result);
    if bad > 0 {
        rec.internal_error(
            "bad-record",
            &format!("{bad} raw records had an unknown kind"),
        );
    }
}

/// The writer's encoder: converts raw records (stamped by `stamp`) to events
/// in `events` (a reused buffer) and writes them to `out`, with a DROPPED record at each drop
/// marker (`on_marker` gets its count). Returns how many records had an unknown kind; the
/// first write error lands in `result`.
pub(crate) fn encode_piece<W: std::io::Write>(
    out: &mut eltrace_trace::TraceWriter<W>,
    events: &mut Vec<Event>,
    raw: &[RawRecord],
    thread: ThreadIdx,
    stamp: Stamp,
    mut on_marker: impl FnMut(u64),
    result: &mut io::Result<()>,
) -> u64 {
    let mut keep = |r: io::Result<()>| {
        if result.is_ok() {
            *result = r;
        }
    };
    events.clear();
    let mut bad = 0u64;
    for (j, &r) in raw.iter().enumerate() {
        let kind = r.kind();
        if kind == KIND_DROPPED {
            if !events.is_empty() {
                keep(out.write_events(thread, events));
                events.clear();
            }
            on_marker(r.sp());
            keep(out.write_dropped(thread, r.sp()));
            continue;
        }
        let Some(kind) = u8::try_from(kind).ok().and_then(EventKind::from_code) else {
            bad += 1;
            continue;
        };
        events.push(Event {
            ts: stamp.ts(j, r.ticks48()),
            kind,
            func: FunctionIdx(r.func()),
            sp: r.sp(),
        });
    }
    if !events.is_empty() {
        keep(out.write_events(thread, events));
        events.clear();
    }
    bad
}

#[cfg(test)]
mod bench {
    //! The encoder benchmark (`scripts/bench-encode.sh`): the writer's encoding of raw ring
    //! records, timed on one core next to a plain copy of the same bytes, on the events of a
    //! recorded trace turned back into the raw records the rings held. Ignored by default:
    //! `ELTRACE_BENCH_TRACE=t.eltrace cargo test --release -p eltrace-profiler bench_encode
    //! -- --ignored --nocapture`.

    use std::time::Instant;

    use eltrace_trace::{Record, TraceInfo, TraceReader, TraceWriter};

    use super::*;

    #[test]
    #[ignore]
    fn bench_encode() {
        let path = std::env::var("ELTRACE_BENCH_TRACE").expect("ELTRACE_BENCH_TRACE=trace");
        let f = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        let mut r = TraceReader::new(f).unwrap();
        // Per thread, its events as the raw records its ring held (ticks are ns here: the
        // clock is not initialised, so to_ns is the identity).
        let mut threads: Vec<(ThreadIdx, Vec<RawRecord>)> = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            if let Record::Events { thread, events } = rec {
                let i = match threads.iter().position(|(t, _)| *t == thread) {
                    Some(i) => i,
                    None => {
                        threads.push((thread, Vec::new()));
                        threads.len() - 1
                    }
                };
                threads[i].1.extend(
                    events
                        .iter()
                        .map(|e| RawRecord::new(e.ts, e.sp, e.func.0, u32::from(e.kind.code()))),
                );
            }
        }
        let n: usize = threads.iter().map(|(_, r)| r.len()).sum();
        assert!(n > 0, "{path} holds no events");
        let last_ts = |raw: &[RawRecord]| raw.last().map_or(0, |r| r.ticks48());
        let mut out = Vec::with_capacity(n * 8);
        let mut events = Vec::with_capacity(16_384);
        let mut copy: Vec<RawRecord> = Vec::with_capacity(n);
        let (mut best_enc, mut best_copy) = (f64::MAX, f64::MAX);
        for _ in 0..7 {
            copy.clear();
            let t = Instant::now();
            for (_, raw) in &threads {
                for piece in raw.chunks(16_384) {
                    copy.extend_from_slice(piece);
                }
            }
            best_copy = best_copy.min(t.elapsed().as_secs_f64());
            std::hint::black_box(&copy);

            out.clear();
            let t = Instant::now();
            let mut w = TraceWriter::new(&mut out, &TraceInfo::new(1)).unwrap();
            for (thread, raw) in &threads {
                for piece in raw.chunks(16_384) {
                    let mut res = Ok(());
                    encode_piece(
                        &mut w,
                        &mut events,
                        piece,
                        *thread,
                        Stamp::Ticks(last_ts(piece)),
                        |_| {},
                        &mut res,
                    );
                    res.unwrap();
                }
            }
            drop(w);
            best_enc = best_enc.min(t.elapsed().as_secs_f64());
        }
        let m = |s: f64| n as f64 / s / 1e6;
        println!(
            "encode_bench events {n} bytes_out {} bytes_per_event {:.2}",
            out.len(),
            out.len() as f64 / n as f64
        );
        println!(
            "encode_bench encode {:.1} M events/s ({:.1} ns/event); copy of the 16-byte records {:.1} M events/s ({:.2} GB/s)",
            m(best_enc),
            best_enc * 1e9 / n as f64,
            m(best_copy),
            (n * 16) as f64 / best_copy / 1e9
        );
    }
}
