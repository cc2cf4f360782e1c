//! The recording state shared by every component, independent of COM: the registry of
//! per-thread rings (with the memory cap), the function table (FunctionID → FunctionIdx), the
//! thread table, the queue of metadata records for the writer, internal-error accounting, and
//! the end request (once an end is requested, new threads get no ring; the writer writes the
//! End record). One process-wide instance lives in [`RECORDER`].

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use eltrace_trace::{
    EndReason, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord, ValueRecord, ValueStatus,
    protocol,
};

use crate::clock;
use crate::config::{Config, HookMode};
use crate::ring::stream::{self, Stream};
use crate::ring::{BUFFERS, MIN_BUFFERS, Ring};
use crate::sys::lock;

/// The ring size, in events, of a thread that starts while the rings already use up the
/// memory cap (`ELTRACE_MAX_BUFFER_MB`): 16 KiB (and two outbox buffers).
pub const MIN_RING_EVENTS: usize = 1024;

/// The one recorder of this process (set once in Initialize, never freed).
pub static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// A registered ring (owned by the registry; freed by the writer once retired and drained).
pub struct RingRef {
    pub ring: *mut Ring,
    pub thread: ThreadIdx,
    pub bytes: usize,
    /// The thread's kernel tid (the sampler reads its CPU clock).
    pub tid: u64,
    /// When the ring was registered (ns, the trace's clock) and the thread's CPU time then
    /// (0: unknown): the sampler's first sample of the thread.
    pub registered_ns: u64,
    pub registered_cpu_ns: u64,
}

// SAFETY: the pointer is only dereferenced under the ring protocol (see ring.rs); the
// registry owns the allocation.
unsafe impl Send for RingRef {}

/// Metadata waiting for the writer; written before any events that follow it.
#[derive(Default)]
pub struct Queue {
    pub functions: Vec<FunctionRecord>,
    pub threads: Vec<ThreadRecord>,
    pub diagnostics: Vec<String>,
    /// Captured values (`ELTRACE_VALUES`), ids dense and ascending.
    pub values: Vec<ValueRecord>,
}

#[derive(Default)]
struct FunctionTable {
    by_id: HashMap<u64, (FunctionIdx, bool)>,
    next: u32,
}

#[derive(Default)]
struct ThreadTable {
    /// Runtime ThreadID → latest record (only threads that record).
    by_managed: HashMap<u64, ThreadRecord>,
    /// Runtime ThreadID → name, for names set before the thread recorded anything.
    names: HashMap<u64, String>,
}

pub struct Recorder {
    pub config: Config,
    /// Ring capacity in records (a power of two).
    pub ring_capacity: usize,
    pub rings: Mutex<Vec<RingRef>>,
    reserved_bytes: AtomicUsize,
    next_thread: AtomicU32,
    pub queue: Mutex<Queue>,
    functions: Mutex<FunctionTable>,
    threads: Mutex<ThreadTable>,
    errors: AtomicU64,
    /// The id the next captured value gets (assigned under the queue lock).
    next_value: AtomicU32,
    reported_kinds: Mutex<Vec<&'static str>>,
    /// Events lost outside any ring (threads whose ring was already retired).
    pub late_drops: AtomicU64,
    /// Drops of rings that were freed.
    pub freed_drops: AtomicU64,
    /// 0: recording; otherwise `EndReason::code() + 1` of the requested end.
    end_request: AtomicU32,
    /// The runtime's ThreadID of the calling thread (0 if unknown); set by the COM layer.
    current_managed_thread: OnceLock<fn() -> u64>,
}

impl Recorder {
    pub fn new(config: Config) -> Recorder {
        let ring_capacity = Ring::rounded_capacity(config.buffer_events);
        Recorder {
            config,
            ring_capacity,
            rings: Mutex::new(Vec::new()),
            reserved_bytes: AtomicUsize::new(0),
            next_thread: AtomicU32::new(0),
            queue: Mutex::new(Queue::default()),
            functions: Mutex::new(FunctionTable::default()),
            threads: Mutex::new(ThreadTable::default()),
            errors: AtomicU64::new(0),
            next_value: AtomicU32::new(0),
            reported_kinds: Mutex::new(Vec::new()),
            late_drops: AtomicU64::new(0),
            freed_drops: AtomicU64::new(0),
            end_request: AtomicU32::new(0),
            current_managed_thread: OnceLock::new(),
        }
    }

    pub fn global() -> Option<&'static Recorder> {
        RECORDER.get()
    }

    pub fn set_managed_thread_source(&self, f: fn() -> u64) {
        let _ = self.current_managed_thread.set(f);
    }

    pub fn is_recording(&self) -> bool {
        self.end_request.load(Ordering::Acquire) == 0
    }

    // ----- internal errors and notes -------------------------------------------------------

    /// Counts an internal failure, queues a diagnostic record, and prints one `eltrace:` line
    /// per `kind` to stderr.
    pub fn internal_error(&self, kind: &'static str, message: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.note(kind, message);
    }

    /// A notable condition that is not a failure: a diagnostic record and one stderr line per
    /// kind, not counted as an error.
    pub fn note(&self, kind: &'static str, message: &str) {
        lock(&self.queue)
            .diagnostics
            .push(format!("{kind}: {message}"));
        let first = {
            let mut kinds = lock(&self.reported_kinds);
            if kinds.contains(&kind) {
                false
            } else {
                kinds.push(kind);
                true
            }
        };
        if first {
            let _ = writeln!(std::io::stderr(), "eltrace: {kind}: {message}");
        }
    }

    pub fn internal_errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    // ----- functions ------------------------------------------------------------------------

    /// The index and hook decision of a function seen before.
    pub fn function(&self, function_id: u64) -> Option<(FunctionIdx, bool)> {
        lock(&self.functions).by_id.get(&function_id).copied()
    }

    /// Assigns the next index to `function_id` unless it has one (then the existing entry
    /// wins), and queues its record. `record.idx` is overwritten.
    pub fn add_function(&self, mut record: FunctionRecord, hooked: bool) -> (FunctionIdx, bool) {
        let mut table = lock(&self.functions);
        if let Some(&entry) = table.by_id.get(&record.function_id) {
            return entry;
        }
        let idx = FunctionIdx(table.next);
        table.next += 1;
        table.by_id.insert(record.function_id, (idx, hooked));
        record.idx = idx;
        lock(&self.queue).functions.push(record);
        (idx, hooked)
    }

    // ----- values -----------------------------------------------------------------------

    /// Queues a captured value and returns its id. The caller pushes the Value event that
    /// refers to it into its ring only afterwards: the writer takes the queue after it has
    /// snapshotted the rings, so a VALUE record always precedes the events using it.
    pub fn add_value(&self, status: ValueStatus, text: String) -> u32 {
        let mut q = lock(&self.queue);
        let id = self.next_value.fetch_add(1, Ordering::Relaxed);
        q.values.push(ValueRecord { id, status, text });
        id
    }

    // ----- threads --------------------------------------------------------------------------

    /// Creates and registers the calling thread's ring (warm-up path, once per thread).
    /// Returns `None` once recording has ended.
    pub fn register_current_thread(&self) -> Option<*mut Ring> {
        if !self.is_recording() {
            return None;
        }
        // Before the ring is allocated and zeroed (which can take milliseconds): the thread's
        // first event happened here.
        let registered_ns = clock::to_ns(clock::now());
        let registered_cpu_ns = if self.config.sampling {
            crate::sys::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
        } else {
            0
        };
        let idx = ThreadIdx(self.next_thread.fetch_add(1, Ordering::Relaxed));
        let max = self.config.max_buffer_bytes();
        // A stream (ring/stream.rs) or records and an outbox; over the cap a small one, still
        // lossless (its producer waits for the writer more often), instead of none.
        let streams = self.config.stream;
        // A stream's ring follows ELTRACE_BUFFER_EVENTS (ring/stream.rs `bytes_for_events`).
        let stream_size = stream::bytes_for_events(self.ring_capacity);
        let small_stream = stream::SMALL_BYTES.min(stream_size);
        let (full, small) = if streams {
            (
                Ring::bytes_for(0, 0) + Stream::bytes_for(stream_size),
                Ring::bytes_for(0, 0) + Stream::bytes_for(small_stream),
            )
        } else {
            (
                Ring::bytes_for(self.ring_capacity, BUFFERS),
                Ring::bytes_for(self.ring_capacity.min(MIN_RING_EVENTS), MIN_BUFFERS),
            )
        };
        let mut bytes = full;
        let before = self.reserved_bytes.fetch_add(bytes, Ordering::Relaxed);
        let over = before + bytes > max && small < full;
        if over {
            self.reserved_bytes.fetch_sub(bytes, Ordering::Relaxed);
            bytes = small;
            self.reserved_bytes.fetch_add(bytes, Ordering::Relaxed);
            self.note(
                "memory-cap",
                &format!(
                    "threads from thread {} on get {} KiB buffers instead of {} KiB: {} KiB of {} KiB ({}) are in use",
                    idx.0,
                    bytes >> 10,
                    full >> 10,
                    before >> 10,
                    max >> 10,
                    protocol::env::MAX_BUFFER_MB
                ),
            );
        }
        let timeless = clock::is_timeless();
        let mut ring = if streams {
            let size = if over { small_stream } else { stream_size };
            // The timed stubs read the TSC: with another clock every event takes the Rust side.
            Ring::for_thread(0, idx, timeless, 0, registered_ns).streaming(
                size,
                registered_ns,
                clock::is_tsc() || timeless,
            )
        } else if over {
            let capacity = self.ring_capacity.min(MIN_RING_EVENTS);
            Ring::for_thread(capacity, idx, timeless, MIN_BUFFERS, registered_ns)
        } else {
            Ring::for_thread(self.ring_capacity, idx, timeless, BUFFERS, registered_ns)
        };
        if !clock::is_tsc() && !timeless {
            ring = ring.without_inline_writes();
        }
        if self.config.hooks == HookMode::FastDiscard {
            ring = ring.discarding();
        }
        let ring = Box::into_raw(Box::new(ring));
        let os_tid = crate::sys::current_tid();
        let managed = self.current_managed_thread.get().map_or(0, |f| f());
        let mut record = ThreadRecord::new(idx, os_tid);
        if managed != 0 {
            let mut t = lock(&self.threads);
            if let Some(name) = t.names.get(&managed) {
                record.name = name.clone();
            }
            t.by_managed.insert(managed, record.clone());
        }
        lock(&self.queue).threads.push(record);
        lock(&self.rings).push(RingRef {
            ring,
            thread: idx,
            bytes,
            tid: os_tid,
            registered_ns,
            registered_cpu_ns,
        });
        Some(ring)
    }

    /// Returns memory of a freed ring to the cap.
    pub fn release_bytes(&self, bytes: usize) {
        self.reserved_bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// A managed thread got a name (or a new one).
    pub fn thread_named(&self, managed: u64, name: String) {
        let mut t = lock(&self.threads);
        t.names.insert(managed, name.clone());
        if let Some(rec) = t.by_managed.get_mut(&managed) {
            rec.name = name;
            let rec = rec.clone();
            drop(t);
            lock(&self.queue).threads.push(rec);
        }
    }

    // ----- the end ----------------------------------------------------------------------

    /// Asks for the end of recording with `reason` (the first request wins; async-signal-safe:
    /// one atomic). From now on no thread gets a ring.
    pub fn request_end(&self, reason: EndReason) {
        let _ = self.end_request.compare_exchange(
            0,
            reason.code() + 1,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// The requested end reason, if any.
    pub fn requested_end(&self) -> Option<EndReason> {
        match self.end_request.load(Ordering::Acquire) {
            0 => None,
            c => Some(EndReason::from_code(c - 1)),
        }
    }
}
