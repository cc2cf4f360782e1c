//! The writer thread and the trace file: every `ELTRACE_FLUSH_MS` it drains every registered
//! ring, converts raw records to trace events, writes queued function/thread/diagnostic
//! records first, then the events, `Dropped` records where rings lost events, and flushes so
//! that a killed process leaves a readable trace. The final drain writes the End record once.
//! Raw ticks become nanoseconds here (`clock::to_ns`). Between rounds the writer sleeps on a
//! futex that a producer whose ring is half full wakes ([`wake_if_sleeping`]).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::{Duration, Instant};

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, ThreadIdx, TraceInfo, TraceWriter,
};

use crate::clock;
use crate::recorder::Recorder;
use crate::ring::{KIND_DROPPED, RawRecord, Ring, extend_ticks};
use crate::sys::lock;

/// Encoded bytes are handed to the I/O thread in blocks of this size.
const IO_BLOCK: usize = 256 * 1024;
/// Blocks that may wait for the I/O thread (bounds memory if the disk is slow).
const IO_QUEUE: usize = 64;
/// How long the final drain waits for the I/O thread to write everything.
const IO_SYNC_TIMEOUT: Duration = Duration::from_secs(2);

enum IoMsg {
    Data(Vec<u8>),
    /// Reply once everything before this message is written.
    Sync(mpsc::Sender<()>),
}

/// The `Write` the trace writer encodes into: it collects bytes and passes full blocks to the
/// I/O thread, so that a slow `write(2)` (a 1 MB write can take ~4 ms here) never stalls the
/// draining of the rings.
pub struct PipeWriter {
    buf: Vec<u8>,
    tx: SyncSender<IoMsg>,
}

impl PipeWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let block = std::mem::replace(&mut self.buf, Vec::with_capacity(IO_BLOCK + 4096));
        self.tx
            .send(IoMsg::Data(block))
            .map_err(|_| io::Error::other("the I/O thread is gone"))
    }
}

impl Write for PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= IO_BLOCK {
            self.send()?;
        }
        Ok(data.len())
    }

    /// Hands the partial block to the I/O thread (which writes it promptly).
    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

fn io_thread(mut file: File, rx: Receiver<IoMsg>) {
    let mut failed = false;
    for msg in rx {
        match msg {
            IoMsg::Data(block) => {
                if let Err(e) = file.write_all(&block) {
                    if !failed {
                        failed = true;
                        if let Some(rec) = crate::recorder::Recorder::global() {
                            rec.internal_error(
                                "io",
                                &format!("writing the trace file failed: {e}"),
                            );
                        }
                    }
                }
            }
            IoMsg::Sync(reply) => {
                let _ = reply.send(());
            }
        }
    }
}

/// The open trace plus the writer's scratch buffers. Lives in `Recorder::sink`.
pub struct Sink {
    out: TraceWriter<PipeWriter>,
    /// A second handle on the I/O thread's queue, for [`Sink::sync_io`].
    io: SyncSender<IoMsg>,
    staged: Vec<Staged>,
    staged_records: usize,
    /// Most records staging may hold before rings are left to fill (and drop).
    staging_limit: usize,
    events: Vec<Event>,
    ended: bool,
}

impl Sink {
    /// Creates the file and writes the header and info chunk.
    /// `staging_bytes` bounds the writer's own backlog of drained, not yet encoded records.
    pub fn create(path: &Path, info: &TraceInfo, staging_bytes: usize) -> io::Result<Sink> {
        let file = File::create(path)?;
        let (tx, rx) = mpsc::sync_channel(IO_QUEUE);
        std::thread::Builder::new()
            .name("eltrace-io".into())
            .spawn(move || io_thread(file, rx))?;
        let pipe = PipeWriter {
            buf: Vec::with_capacity(IO_BLOCK + 4096),
            tx: tx.clone(),
        };
        let mut out = TraceWriter::new(pipe, info)?;
        out.flush()?;
        Ok(Sink {
            out,
            io: tx,
            staged: Vec::new(),
            staged_records: 0,
            staging_limit: (staging_bytes / core::mem::size_of::<RawRecord>()).max(ENCODE_SLICE),
            events: Vec::new(),
            ended: false,
        })
    }
}

impl Sink {
    /// Waits (bounded) until the I/O thread has written everything flushed so far.
    fn sync_io(&self) -> io::Result<()> {
        let (tx, rx) = mpsc::channel();
        self.io
            .send(IoMsg::Sync(tx))
            .map_err(|_| io::Error::other("the I/O thread is gone"))?;
        rx.recv_timeout(IO_SYNC_TIMEOUT)
            .map_err(|_| io::Error::other("the I/O thread did not finish writing in time"))
    }
}

/// 1 while the writer thread sleeps between rounds (a futex word).
static SLEEPING: AtomicU32 = AtomicU32::new(0);

/// Producer side: a ring crossed its threshold; wake the writer if it sleeps. One load when it
/// is awake; one `FUTEX_WAKE` per sleep otherwise (never on the fast path's inline branch).
#[inline(always)]
pub fn wake_if_sleeping() {
    if SLEEPING.load(Ordering::Relaxed) != 0 && SLEEPING.swap(0, Ordering::AcqRel) != 0 {
        crate::sys::futex_wake(&SLEEPING);
    }
}

/// Sleeps up to `step`, or until a producer calls [`wake_if_sleeping`].
fn sleep(rec: &Recorder, step: Duration) {
    SLEEPING.store(1, Ordering::SeqCst);
    if !any_ring_filling(rec) {
        crate::sys::futex_wait(&SLEEPING, 1, step.as_nanos() as u64);
    }
    SLEEPING.store(0, Ordering::Relaxed);
}

/// Starts the writer thread (the sink must already be in `rec.sink`).
pub fn start(rec: &'static Recorder) -> io::Result<()> {
    let handle = std::thread::Builder::new()
        .name("eltrace-writer".into())
        .spawn(move || {
            rec.writer_tid
                .store(crate::sys::current_tid(), Ordering::Relaxed);
            run(rec);
        })?;
    *lock(&rec.writer) = Some(handle);
    Ok(())
}

fn run(rec: &'static Recorder) {
    let period = Duration::from_millis(rec.config.flush_ms);
    // Poll often: an end request (possibly from a signal handler, which cannot wake us) is
    // seen within ~1 ms, and a ring that is a quarter full is drained early instead of
    // dropping.
    let step = Duration::from_millis(1).min(period);
    let mut last_flush = Instant::now();
    let mut backlog = false;
    loop {
        // While staged records wait or a ring is filling, go again at once: under a burst the
        // producer (≈15-20 M events/s on the slow path) is about as fast as the encoder.
        let busy = backlog || any_ring_filling(rec);
        if !busy {
            sleep(rec, step);
        }
        if !rec.is_recording() {
            final_drain(rec);
            return;
        }
        let due = last_flush.elapsed() >= period;
        if !due && !busy && !any_ring_filling(rec) {
            continue;
        }
        let result = std::panic::catch_unwind(|| {
            let mut sink = lock(&rec.sink);
            match sink.as_mut() {
                Some(sink) => {
                    round(rec, sink, due, ENCODE_SLICE);
                    sink.staged_records > 0
                }
                None => false,
            }
        });
        if due {
            last_flush = Instant::now();
        }
        match result {
            Ok(b) => backlog = b,
            Err(_) => {
                backlog = false;
                rec.internal_error(
                    "writer-panic",
                    "the writer thread panicked in a drain round",
                );
            }
        }
    }
}

fn any_ring_filling(rec: &Recorder) -> bool {
    lock(&rec.rings).iter().any(|r| {
        // SAFETY: registered rings stay allocated while in the (locked) registry.
        let ring = unsafe { &*r.ring };
        ring.fill() * 4 >= ring.capacity() && ring.capacity() > 0
    })
}

/// The final drain and End record (once; later calls do nothing).
pub fn final_drain(rec: &Recorder) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = lock(&rec.sink);
        let Some(sink) = guard.as_mut() else {
            return;
        };
        if sink.ended {
            return;
        }
        round(rec, sink, true, usize::MAX);
        // Drops that no marker record will announce any more.
        let mut total_drops =
            rec.late_drops.load(Ordering::Relaxed) + rec.freed_drops.load(Ordering::Relaxed);
        for r in lock(&rec.rings).iter() {
            // SAFETY: registered rings stay allocated while they are in the registry, and the
            // registry is locked.
            let ring = unsafe { &*r.ring };
            let n = ring.take_unreported_drops();
            if n > 0 {
                check(rec, sink.out.write_dropped(r.thread, n));
            }
            total_drops += ring.total_drops();
        }
        let reason = rec.requested_end().unwrap_or(EndReason::Shutdown);
        let end = EndRecord {
            reason,
            ts: clock::to_ns(clock::now()),
            events_written: sink.out.events_written(),
            events_dropped: total_drops,
            internal_errors: rec.internal_errors(),
        };
        check(rec, sink.out.write_end(&end));
        check(rec, sink.sync_io());
        sink.ended = true;
    }));
    if result.is_err() {
        rec.internal_error("writer-panic", "panic in the final drain");
    }
    rec.finished.store(true, Ordering::Release);
}

fn check(rec: &Recorder, r: io::Result<()>) {
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
const ENCODE_SLICE: usize = 2_048;
/// Staging buffers larger than this many records are freed when they run empty.
const STAGING_KEEP: usize = 1 << 18;

/// One round: drain every ring into staging (fast copies, so the rings empty quickly), write
/// queued metadata, then encode up to `budget` staged records.
fn round(rec: &Recorder, sink: &mut Sink, flush: bool, budget: usize) {
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
        check(rec, sink.out.write_function(f));
    }
    for t in &queued.threads {
        check(rec, sink.out.write_thread(t));
    }
    for d in &queued.diagnostics {
        check(rec, sink.out.write_diagnostic(d));
    }
    for v in &queued.values {
        check(rec, sink.out.write_value(v));
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
                check(rec, sink.out.write_dropped(st.thread, st.drops_after));
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
        check(rec, sink.out.flush());
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
                check(rec, sink.out.write_events(thread, &sink.events));
                sink.events.clear();
            }
            check(rec, sink.out.write_dropped(thread, r.sp()));
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
        check(rec, sink.out.write_events(thread, &sink.events));
        sink.events.clear();
    }
    if bad > 0 {
        rec.internal_error(
            "bad-record",
            &format!("{bad} raw records had an unknown kind"),
        );
    }
}
