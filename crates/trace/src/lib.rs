//! The eltrace trace format: what the profiler writes and the CLI reads.
//!
//! A trace is the 8-byte magic `ELTRACE\0`, a little-endian `u16` format
//! version and a `u16` of reserved zeroes, then a sequence of *chunks*. Each
//! chunk is self-delimiting and checksummed, so a file cut short (the process
//! was killed mid-write) is still readable up to its last whole chunk, and the
//! reader says that it was cut short. docs/trace-format.md is the full spec.
//!
//! ```
//! use eltrace_trace::{Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
//!     TraceInfo, TraceReader, TraceWriter, Record, EndRecord, EndReason};
//!
//! let mut bytes = Vec::new();
//! let mut w = TraceWriter::new(&mut bytes, &TraceInfo::new(42)).unwrap();
//! w.write_function(&FunctionRecord { method: "Fib".into(), ..FunctionRecord::new(FunctionIdx(0)) }).unwrap();
//! w.write_thread(&ThreadRecord::new(ThreadIdx(0), 1234)).unwrap();
//! let ev = [
//!     Event { ts: 10, kind: EventKind::Enter, func: FunctionIdx(0), sp: 0x7000 },
//!     Event { ts: 25, kind: EventKind::Leave, func: FunctionIdx(0), sp: 0x7000 },
//! ];
//! w.write_events(ThreadIdx(0), &ev).unwrap();
//! w.write_end(&EndRecord { reason: EndReason::Shutdown, ..EndRecord::default() }).unwrap();
//! drop(w);
//!
//! let mut r = TraceReader::new(&bytes[..]).unwrap();
//! let mut events = 0;
//! while let Some(rec) = r.next_record().unwrap() {
//!     if let Record::Events { events: e, .. } = rec { events += e.len(); }
//! }
//! assert_eq!(events, 2);
//! assert!(!r.truncated());
//! ```

pub mod chunks;
mod crc;
mod events;
pub mod glob;
mod model;
pub mod protocol;
mod reader;
mod skim;
pub mod stream;
mod varint;
mod writer;

#[cfg(feature = "testing")]
pub mod testing;

pub use model::{
    EndReason, EndRecord, Event, EventKind, FunctionFlags, FunctionIdx, FunctionRecord, Record,
    Sample, ThreadIdx, ThreadRecord, TraceInfo, ValueRecord, ValueStatus,
};
pub use reader::{ReadError, TraceReader};
pub use skim::{Skim, ThreadSkim, skim};
pub use writer::TraceWriter;

/// The first eight bytes of every trace file.
pub const MAGIC: [u8; 8] = *b"ELTRACE\0";
/// The format version this crate writes (it reads this one and versions 1 to 6): version 6
/// plus runs in TIMELESS_STREAM chunks ([`stream`]), which a version-6 reader would refuse.
pub const FORMAT_VERSION: u16 = 7;
/// Version 6: version 5 plus the callee table of stream chunks, whose predicted Enters a
/// version-5 reader would refuse (still read).
pub const FORMAT_VERSION_6: u16 = 6;
/// Version 5: version 4 plus the stream chunks (EVENT_STREAM, TIMELESS_STREAM: [`stream`]),
/// written on 2026-12-06 only (still read). A reader that knows only an older version
/// refuses these traces instead of skipping their events.
pub const FORMAT_VERSION_5: u16 = 5;
/// Version 4: version 3 plus runs of repeated leaf calls in TIMELESS_EVENTS and repeated
/// Enters in EVENTS (still read).
pub const FORMAT_VERSION_4: u16 = 4;
/// Version 3: version 2 plus the TIMELESS_EVENTS and SAMPLES chunks (still read).
pub const FORMAT_VERSION_3: u16 = 3;
/// Version 2: EVENTS with Leave prediction (still read).
pub const FORMAT_VERSION_2: u16 = 2;

/// Whether this crate reads traces of format `version`.
pub fn version_supported(version: u16) -> bool {
    (FORMAT_VERSION_1..=FORMAT_VERSION).contains(&version)
}
/// The first format version: EVENTS without Leave prediction (still read).
pub const FORMAT_VERSION_1: u16 = 1;
/// Largest payload one chunk may carry; the reader rejects larger lengths as corruption.
pub const MAX_CHUNK_PAYLOAD: u32 = 16 << 20;
/// Events chunks are split so that none holds more than this many events.
pub const MAX_EVENTS_PER_CHUNK: usize = 65_536;

/// Chunk kind tags as written on disk.
pub(crate) mod tag {
    pub const INFO: u8 = 1;
    pub const FUNCTION: u8 = 2;
    pub const THREAD: u8 = 3;
    pub const EVENTS: u8 = 4;
    pub const DROPPED: u8 = 5;
    pub const END: u8 = 6;
    pub const DIAGNOSTIC: u8 = 7;
    pub const VALUE: u8 = 8;
    pub const WAITS: u8 = 9;
    pub const TIMELESS_EVENTS: u8 = 10;
    pub const SAMPLES: u8 = 11;
    pub const EVENT_STREAM: u8 = 12;
    pub const TIMELESS_STREAM: u8 = 13;
}
