//! The writer: it owns the trace output ([`Sink`]), the writer thread and the end of the
//! trace. Whenever a thread has sealed half of its ring's outbox buffers (it wakes the writer:
//! [`wake_if_sleeping`]; a wake per buffer cost the program's threads a futex call and the
//! other core a reschedule each), the writer thread appends every sealed buffer to the file ([`drain`]:
//! queued function/thread/diagnostic/value records first); every `ELTRACE_FLUSH_MS` it also
//! encodes the rings that filled slowly and flushes, so that a killed process leaves a
//! readable trace. Between rounds it sleeps on a futex, and costs nothing while no events
//! come. Ending the recording (Shutdown, atexit, the unhandled-exception
//! sentinel: [`Writer::finish`]; SIGABRT: [`Writer::finish_from_signal`]) asks the recorder to
//! stop and the thread for the final drain and End record, written once.
//!
//! A producer whose ring is full waits for the writer ([`wait_for_room`]) unless the recording
//! is lossy. The wait cannot deadlock: the producer holds no lock while it sleeps (it is in a
//! hook), the writer takes only its own locks and never calls into the runtime, the sleep is a
//! futex with a 1 ms timeout that re-checks, and once the writer has stopped (the final drain
//! is done) or has finished no round for `ELTRACE_MAX_STALL_MS` (5 s by default: a total
//! stall measured from the writer's last progress, not per wait), waiting gives way to
//! counted drops until the writer moves again.

mod drain;
mod file;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use eltrace_trace::{EndReason, EndRecord};

pub use drain::Sink;
use drain::{check, round, write_waits};

use crate::clock;
use crate::recorder::Recorder;
use crate::ring::Ring;
use crate::sys::{self, lock};

/// The one writer of this process (installed once in Initialize, never freed).
static WRITER: OnceLock<Writer> = OnceLock::new();

pub struct Writer {
    rec: &'static Recorder,
    sink: Mutex<Sink>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The writer thread's kernel tid (0 before it runs).
    tid: AtomicU64,
    /// The final drain is done.
    finished: AtomicBool,
    /// Drain rounds done so far.
    rounds: AtomicU64,
    /// When (CLOCK_MONOTONIC ns) the writer last finished a round: waiting producers measure
    /// the writer's stall from it (the total stall, not each wait's).
    progress_ns: AtomicU64,
    /// The `progress_ns` of the last stall said (one diagnostic per stall).
    stall_said: AtomicU64,
}

impl Writer {
    /// Makes `sink` the process's trace, fed from `rec`. `None` if a writer exists already.
    pub fn install(rec: &'static Recorder, sink: Sink) -> Option<&'static Writer> {
        let writer = Writer {
            rec,
            sink: Mutex::new(sink),
            thread: Mutex::new(None),
            tid: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            rounds: AtomicU64::new(0),
            progress_ns: AtomicU64::new(sys::clock_ns(libc::CLOCK_MONOTONIC)),
            stall_said: AtomicU64::new(0),
        };
        WRITER.set(writer).ok()?;
        WRITER.get()
    }

    pub fn global() -> Option<&'static Writer> {
        WRITER.get()
    }

    /// Starts the writer thread.
    pub fn start(&'static self) -> io::Result<()> {
        let handle = std::thread::Builder::new()
            .name("eltrace-writer".into())
            .spawn(move || {
                self.tid.store(sys::current_tid(), Ordering::Relaxed);
                self.run();
            })?;
        *lock(&self.thread) = Some(handle);
        Ok(())
    }

    fn run(&self) {
        let rec = self.rec;
        let period = Duration::from_millis(rec.config.flush_ms);
        let mut last_flush = Instant::now();
        loop {
            // Sleep until a thread seals a buffer of chunks (it wakes us), an end is requested
            // (which wakes us too), or the next flush is due.
            if !any_sealed(rec) {
                let left = period.saturating_sub(last_flush.elapsed());
                sleep(rec, left.max(Duration::from_millis(1)));
            }
            if !rec.is_recording() {
                self.final_drain();
                return;
            }
            let due = last_flush.elapsed() >= period;
            if !due && !any_sealed(rec) {
                continue;
            }
            let result = std::panic::catch_unwind(|| {
                let mut sink = lock(&self.sink);
                round(rec, &mut sink, due, false)
            });
            self.rounds.fetch_add(1, Ordering::Release);
            self.progress_ns
                .store(sys::clock_ns(libc::CLOCK_MONOTONIC), Ordering::Release);
            if due {
                last_flush = Instant::now();
            }
            if result.is_err() {
                rec.internal_error(
                    "writer-panic",
                    "the writer thread panicked in a drain round",
                );
            }
        }
    }

    /// Ends recording from ordinary code (Shutdown callback, atexit, the sentinel): asks the
    /// writer thread for the final drain and End record and waits for it (bounded); if the
    /// writer thread is gone or stuck, does the final drain on this thread.
    pub fn finish(&self, reason: EndReason) {
        if self.finished.load(Ordering::Acquire) {
            return;
        }
        self.rec.request_end(reason);
        wake_now();
        let on_writer = sys::current_tid() == self.tid.load(Ordering::Relaxed);
        if !on_writer {
            for _ in 0..5000 {
                if self.finished.load(Ordering::Acquire) {
                    break;
                }
                let alive = lock(&self.thread)
                    .as_ref()
                    .is_some_and(|h| !h.is_finished());
                if !alive {
                    break;
                }
                sys::sleep_ns(1_000_000);
            }
        }
        if !self.finished.load(Ordering::Acquire) {
            // The writer thread is gone or stuck: finish here (the sink lock orders us with it).
            self.final_drain();
        }
        if let Some(h) = lock(&self.thread).take() {
            if h.is_finished() || !on_writer {
                let _ = h.join();
            }
        }
    }

    /// Ends recording from a signal handler: only atomics and nanosleep. Asks the writer
    /// thread for the final drain and waits up to `timeout_ms`.
    pub fn finish_from_signal(&self, reason: EndReason, timeout_ms: u32) {
        if self.finished.load(Ordering::Acquire) {
            return;
        }
        self.rec.request_end(reason);
        wake_now(); // a futex wake: async-signal-safe
        if sys::current_tid() == self.tid.load(Ordering::Relaxed) {
            return; // the writer itself is aborting; it cannot drain for us
        }
        for _ in 0..timeout_ms {
            if self.finished.load(Ordering::Acquire) {
                return;
            }
            sys::sleep_ns(1_000_000);
        }
    }

    /// The final drain and End record (once; later calls do nothing).
    fn final_drain(&self) {
        let rec = self.rec;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut sink = lock(&self.sink);
            if sink.file.ended {
                return;
            }
            // Producers may still be waiting for room: drain until the rings are empty (each
            // round wakes the producers it makes room for), a bounded number of times.
            for _ in 0..FINAL_ROUNDS {
                let drained = round(rec, &mut sink, true, true);
                self.rounds.fetch_add(1, Ordering::Release);
                self.progress_ns
                    .store(sys::clock_ns(libc::CLOCK_MONOTONIC), Ordering::Release);
                if drained == 0 {
                    break;
                }
            }
            // From here on nothing is drained: producers stop waiting (and count drops).
            self.finished.store(true, Ordering::Release);
            let rings = lock(&rec.rings);
            let mut total_drops =
                rec.late_drops.load(Ordering::Relaxed) + rec.freed_drops.load(Ordering::Relaxed);
            for r in rings.iter() {
                // SAFETY: registered rings stay allocated while they are in the registry, and
                // the registry is locked.
                let ring = unsafe { &*r.ring };
                ring.wake_producer();
                // Events pushed after the last round are lost with the process (and any a
                // thread still held under its consumer lock).
                let (uncut, pending) = match ring.stream() {
                    Some(s) => {
                        let mut uncut = s.uncut_events();
                        if uncut == 0 {
                            drain::write_held(rec, &mut sink, r.thread, s);
                        } else {
                            // What a run holds follows what could not be cut: lost with it.
                            uncut += s.take_held();
                        }
                        (uncut, s.take_pending_drops())
                    }
                    None => (0, 0),
                };
                let unwritten = ring.fill() as u64 + ring.outbox().unwritten_events() + uncut;
                let n = ring.take_unreported_drops() + unwritten + pending;
                if n > 0 {
                    check(rec, sink.file.out.write_dropped(r.thread, n));
                }
                write_waits(rec, &mut sink, r.thread, ring);
                total_drops += ring.total_drops() + unwritten;
            }
            drop(rings);
            let reason = rec.requested_end().unwrap_or(EndReason::Shutdown);
            let end = EndRecord {
                reason,
                ts: clock::to_ns(clock::now()),
                events_written: sink.file.out.events_written(),
                events_dropped: total_drops,
                internal_errors: rec.internal_errors(),
            };
            check(rec, sink.file.out.write_end(&end));
            check(rec, sink.file.sync_io());
            sink.file.ended = true;
        }));
        if result.is_err() {
            rec.internal_error("writer-panic", "panic in the final drain");
        }
        self.finished.store(true, Ordering::Release);
    }

    /// Whether the writer has finished no round for longer than the allowed total stall
    /// (`max_stall_ms`; 0: never stalled) at `now`.
    fn stalled(&self, now: u64) -> bool {
        let max = self.rec.config.max_stall_ms;
        max != 0 && now.saturating_sub(self.progress_ns.load(Ordering::Acquire)) > max * 1_000_000
    }

    /// Says (once per stall: a diagnostic, and one stderr line per process) that threads drop
    /// events instead of waiting for the stalled writer.
    #[cold]
    fn say_stall(&self) {
        let since = self.progress_ns.load(Ordering::Acquire);
        if self.stall_said.swap(since, Ordering::AcqRel) == since {
            return;
        }
        self.rec.note(
            "writer-stalled",
            &format!(
                "the trace writer made no progress for {} ms (ELTRACE_MAX_STALL_MS, record \
                 --max-stall): events are dropped (counted, marked) instead of waited for until \
                 it moves again",
                self.rec.config.max_stall_ms
            ),
        );
    }

    /// Whether a producer may wait for this writer: recording is lossless and the final drain
    /// is not done.
    fn takes_waiters(&self) -> bool {
        !self.rec.config.lossy && !self.finished.load(Ordering::Acquire)
    }
}

/// Drain rounds the final drain runs at most while producers keep refilling their rings.
const FINAL_ROUNDS: usize = 64;

/// How long one futex sleep of a waiting producer lasts at most before it re-checks.
const WAIT_SLICE_NS: u64 = 1_000_000;

/// Producer side: `ring` (the calling thread's) is full. Unless the recording is lossy, sleeps
/// until the writer has made room and returns true; returns false when the caller must count
/// a drop instead (lossy, the writer has stopped, or it stalled). No lock is held here.
#[cold]
#[inline(never)]
pub fn wait_for_room(ring: &Ring) -> bool {
    let Some(w) = WRITER.get() else {
        return false;
    };
    if !w.takes_waiters() {
        return false;
    }
    let start = sys::clock_ns(libc::CLOCK_MONOTONIC);
    if w.stalled(start) {
        // The writer has made no progress for the whole allowance already: drop at once, as
        // every thread does until the writer moves again (then waiting resumes).
        w.say_stall();
        return false;
    }
    let mut now = start;
    let ok = loop {
        if !w.takes_waiters() {
            break false;
        }
        if !ring.prepare_wait() {
            break true; // room appeared
        }
        wake_now();
        sys::futex_wait(ring.waiting_word(), 1, WAIT_SLICE_NS);
        now = sys::clock_ns(libc::CLOCK_MONOTONIC);
        if w.stalled(now) {
            w.say_stall();
            break false;
        }
    };
    ring.count_wait(now.saturating_sub(start));
    ok
}

/// 1 while the writer thread sleeps between rounds (a futex word).
static SLEEPING: AtomicU32 = AtomicU32::new(0);

/// Producer side: a buffer of chunks is ready; wake the writer if it sleeps. One load when it
/// is awake; one `FUTEX_WAKE` per sleep otherwise (never on the fast path's inline branch).
#[inline(always)]
pub fn wake_if_sleeping() {
    if SLEEPING.load(Ordering::Relaxed) != 0 && SLEEPING.swap(0, Ordering::AcqRel) != 0 {
        sys::futex_wake(&SLEEPING);
    }
}

/// Make sure the writer is not asleep (a ring is full, or an end was requested). Only an
/// atomic and a futex wake: safe in a signal handler.
fn wake_now() {
    if SLEEPING.swap(0, Ordering::AcqRel) != 0 {
        sys::futex_wake(&SLEEPING);
    }
}

/// Sleeps up to `step`, or until a producer calls [`wake_if_sleeping`].
fn sleep(rec: &Recorder, step: Duration) {
    SLEEPING.store(1, Ordering::SeqCst);
    if !any_sealed(rec) && rec.is_recording() {
        sys::futex_wait(&SLEEPING, 1, step.as_nanos() as u64);
    }
    SLEEPING.store(0, Ordering::Relaxed);
}

/// Whether some ring's outbox holds a buffer of chunks for the writer, or a stream is half
/// full (what wakes the writer: the rest waits for the next flush).
fn any_sealed(rec: &Recorder) -> bool {
    lock(&rec.rings).iter().any(|r| {
        // SAFETY: registered rings stay allocated while in the (locked) registry.
        let ring = unsafe { &*r.ring };
        let outbox = ring.outbox();
        outbox.sealed() != outbox.written() || ring.stream().is_some_and(|s| s.wants_writer())
    })
}
