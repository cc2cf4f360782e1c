//! Streams records out of a trace, one chunk at a time, from any `io::Read`.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, Read};

use crate::crc::crc32_parts;
use crate::model::{
    EndReason, EndRecord, Event, FunctionFlags, FunctionIdx, FunctionRecord, Record, Sample,
    ThreadIdx, ThreadRecord, TraceInfo, ValueRecord, ValueStatus,
};
use crate::protocol::info_key;
use crate::stream::{Piece, StreamState};
use crate::varint::{Cursor, DecodeError};
use crate::{FORMAT_VERSION, MAGIC, MAX_CHUNK_PAYLOAD, tag};

/// Why a trace could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The underlying reader failed.
    Io(io::Error),
    /// The file does not start with the trace magic.
    NotATrace,
    /// The file is a trace of a format version this reader does not know.
    UnsupportedVersion(u16),
    /// A chunk failed its checksum or could not be decoded.
    Corrupt { offset: u64, reason: String },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "read failed: {e}"),
            ReadError::NotATrace => write!(f, "not an eltrace trace (bad magic)"),
            ReadError::UnsupportedVersion(v) => {
                write!(
                    f,
                    "trace format version {v} is not supported (this build reads {FORMAT_VERSION})"
                )
            }
            ReadError::Corrupt { offset, reason } => {
                write!(f, "trace is corrupt at byte {offset}: {reason}")
            }
        }
    }
}

impl std::error::Error for ReadError {}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// Reads a trace chunk by chunk. The first record is always [`Record::Info`].
pub struct TraceReader<R: Read> {
    input: R,
    offset: u64,
    payload: Vec<u8>,
    truncated: bool,
    ended: bool,
    done: bool,
    version: u16,
    /// A vector the next EVENTS chunk is decoded into (see [`TraceReader::recycle`]).
    spare: Vec<Event>,
    /// Each thread's stream coding state (stream chunks continue it: crate::stream).
    streams: HashMap<u32, StreamState>,
    /// Records of a stream chunk not returned yet (its events, and drops between them).
    pending: VecDeque<Record>,
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
pub(crate) fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> TraceReader<R> {
    /// Checks the file header. Fails with [`ReadError::NotATrace`] on anything else.
    pub fn new(mut input: R) -> Result<Self, ReadError> {
        let mut head = [0u8; 12];
        let n = read_full(&mut input, &mut head)?;
        if n < 8 || head[..8] != MAGIC {
            return Err(ReadError::NotATrace);
        }
        if n < 12 {
            return Err(ReadError::Corrupt {
                offset: n as u64,
                reason: "header cut short".into(),
            });
        }
        let version = u16::from_le_bytes([head[8], head[9]]);
        if !crate::version_supported(version) {
            return Err(ReadError::UnsupportedVersion(version));
        }
        Ok(TraceReader {
            input,
            offset: 12,
            payload: Vec::new(),
            truncated: false,
            ended: false,
            done: false,
            version,
            spare: Vec::new(),
            streams: HashMap::new(),
            pending: VecDeque::new(),
        })
    }

    /// True once the reader has met the end of a file that stopped part-way through a chunk,
    /// or that has no end chunk: the process was killed or the file was cut.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// True once the reader has read the end chunk.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The file's format version.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Byte offset of the next chunk.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Gives back the events of an EVENTS record that are no longer needed: the next EVENTS
    /// chunk is decoded into this vector instead of a new one.
    pub fn recycle(&mut self, events: Vec<Event>) {
        if events.capacity() > self.spare.capacity() {
            self.spare = events;
        }
    }

    /// The next record, `Ok(None)` at the end of the trace (check [`TraceReader::truncated`]).
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let start = self.offset;
            let mut head = [0u8; 12];
            let n = read_full(&mut self.input, &mut head)?;
            if n == 0 {
                self.done = true;
                self.truncated = !self.ended;
                return Ok(None);
            }
            if n < 12 {
                self.done = true;
                self.truncated = true;
                return Ok(None);
            }
            let kind = head[0];
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
            let crc = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
            if len > MAX_CHUNK_PAYLOAD || head[1..4] != [0, 0, 0] {
                return Err(ReadError::Corrupt {
                    offset: start,
                    reason: format!("implausible chunk header (kind {kind}, length {len})"),
                });
            }
            self.payload.resize(len as usize, 0);
            let got = read_full(&mut self.input, &mut self.payload)?;
            if got < len as usize {
                self.done = true;
                self.truncated = true;
                return Ok(None);
            }
            self.offset += 12 + u64::from(len);
            if crc32_parts(&[&head[..8], &self.payload]) != crc {
                return Err(ReadError::Corrupt {
                    offset: start,
                    reason: "checksum mismatch".into(),
                });
            }
            let corrupt = |e: DecodeError| ReadError::Corrupt {
                offset: start,
                reason: format!("chunk kind {kind}: {}", e.0),
            };
            if kind == tag::EVENT_STREAM || kind == tag::TIMELESS_STREAM {
                let (thread, pieces) =
                    decode_stream(kind, &self.payload, &mut self.streams).map_err(corrupt)?;
                self.pending.extend(pieces.into_iter().map(|p| match p {
                    Piece::Events(events) => Record::Events { thread, events },
                    Piece::Dropped(count) => Record::Dropped { thread, count },
                }));
                continue;
            }
            let rec = decode_chunk(kind, &self.payload, self.version, &mut self.spare)
                .map_err(corrupt)?;
            let first = start == 12;
            if first != matches!(rec, Some(Record::Info(_))) {
                return Err(ReadError::Corrupt {
                    offset: start,
                    reason: if first {
                        "first chunk is not the info chunk"
                    } else {
                        "a second info chunk"
                    }
                    .into(),
                });
            }
            match rec {
                Some(Record::End(e)) => {
                    self.ended = true;
                    return Ok(Some(Record::End(e)));
                }
                Some(r) => return Ok(Some(r)),
                None => continue, // a chunk kind from a newer writer: skip it
            }
        }
    }
}

/// Decodes a chunk's payload; an EVENTS chunk's events go into `spare` (taken from it).
pub(crate) fn decode_chunk(
    kind: u8,
    payload: &[u8],
    version: u16,
    spare: &mut Vec<Event>,
) -> Result<Option<Record>, DecodeError> {
    let mut c = Cursor::new(payload);
    let rec = match kind {
        tag::INFO => Record::Info(decode_info(&mut c)?),
        tag::FUNCTION => Record::Function(FunctionRecord {
            idx: FunctionIdx(c.u32()?),
            function_id: c.u64()?,
            module: c.string()?,
            type_name: c.string()?,
            method: c.string()?,
            token: c.u32()?,
            impl_flags: c.u32()?,
            flags: FunctionFlags(c.u32()?),
            // Appended in a later version: absent in older traces.
            state_machine: if c.is_empty() {
                String::new()
            } else {
                c.string()?
            },
        }),
        tag::THREAD => Record::Thread(ThreadRecord {
            idx: ThreadIdx(c.u32()?),
            os_tid: c.u64()?,
            managed_id: c.u64()?,
            name: c.string()?,
        }),
        tag::EVENTS => decode_events(&mut c, payload.len(), version, spare)?,
        tag::TIMELESS_EVENTS => decode_timeless_events(&mut c, payload.len(), version)?,
        tag::SAMPLES => Record::Samples(decode_samples(&mut c, payload.len())?),
        tag::DROPPED => Record::Dropped {
            thread: ThreadIdx(c.u32()?),
            count: c.u64()?,
        },
        tag::END => Record::End(EndRecord {
            reason: EndReason::from_code(c.u32()?),
            ts: c.u64()?,
            events_written: c.u64()?,
            events_dropped: c.u64()?,
            internal_errors: c.u64()?,
        }),
        tag::DIAGNOSTIC => Record::Diagnostic(c.string()?),
        tag::WAITS => Record::Waits {
            thread: ThreadIdx(c.u32()?),
            waits: c.u64()?,
            wait_ns: c.u64()?,
        },
        tag::VALUE => Record::Value(ValueRecord {
            id: c.u32()?,
            status: ValueStatus::from_code(c.u32()?),
            text: c.string()?,
        }),
        _ => return Ok(None),
    };
    // Trailing bytes are allowed, so that newer writers can append fields to a chunk.
    Ok(Some(rec))
}

/// An INFO chunk's key-value pairs (the known keys into their fields).
fn decode_info(c: &mut Cursor<'_>) -> Result<TraceInfo, DecodeError> {
    let n = c.u64()?;
    let mut info = TraceInfo::new(0);
    for _ in 0..n {
        let k = c.string()?;
        let v = c.string()?;
        let bad = || DecodeError("malformed info value");
        match k.as_str() {
            info_key::PID => info.pid = v.parse().map_err(|_| bad())?,
            info_key::START_UNIX_NS => info.start_unix_ns = v.parse().map_err(|_| bad())?,
            info_key::START_TICKS => info.start_ticks = v.parse().map_err(|_| bad())?,
            info_key::NS_PER_TICK => {
                info.ns_per_tick = v.parse().map_err(|_| bad())?;
                if !(info.ns_per_tick.is_finite() && info.ns_per_tick > 0.0) {
                    return Err(bad());
                }
            }
            info_key::RUNTIME => info.runtime = v,
            info_key::COMMAND => info.command = v,
            info_key::HOOK_MODE => info.hook_mode = v,
            _ => info.extra.push((k, v)),
        }
    }
    Ok(info)
}

/// An EVENTS chunk after its tag (`payload_len`: the chunk's payload bytes, a bound on the
/// count); the events go into `spare` (taken from it).
fn decode_events(
    c: &mut Cursor<'_>,
    payload_len: usize,
    version: u16,
    spare: &mut Vec<Event>,
) -> Result<Record, DecodeError> {
    let thread = ThreadIdx(c.u32()?);
    let count = c.u64()?;
    if count as usize > payload_len {
        return Err(DecodeError("event count larger than the chunk"));
    }
    let base_ts = c.u64()?;
    let events = crate::events::decode(c, count, base_ts, version, std::mem::take(spare))?;
    Ok(Record::Events { thread, events })
}

/// A stream chunk (crate::stream), continuing its thread's state in `streams`.
fn decode_stream(
    kind: u8,
    payload: &[u8],
    streams: &mut HashMap<u32, StreamState>,
) -> Result<(ThreadIdx, Vec<Piece>), DecodeError> {
    let mut c = Cursor::new(payload);
    let thread = c.u32()?;
    let count = c.u64()?;
    if count > payload.len() as u64 * crate::stream::MAX_EVENTS_PER_BYTE {
        return Err(DecodeError("event count larger than the chunk"));
    }
    let times = if kind == tag::TIMELESS_STREAM {
        Some((c.u64()?, c.u64()?))
    } else {
        None
    };
    let state = streams.entry(thread).or_default();
    let pieces = crate::stream::decode(&mut c, count, state, times)?;
    Ok((ThreadIdx(thread), pieces))
}

/// A TIMELESS_EVENTS chunk after its tag.
fn decode_timeless_events(
    c: &mut Cursor<'_>,
    payload_len: usize,
    version: u16,
) -> Result<Record, DecodeError> {
    let thread = ThreadIdx(c.u32()?);
    let count = c.u64()?;
    // Runs (version 4) hold many events in a few bytes, but never more than a chunk's.
    let most = if version >= crate::FORMAT_VERSION_4 {
        crate::MAX_EVENTS_PER_CHUNK
    } else {
        payload_len
    };
    if count as usize > most {
        return Err(DecodeError("event count larger than the chunk"));
    }
    let (first_ts, last_ts) = (c.u64()?, c.u64()?);
    let events = crate::events::decode_timeless(c, count, first_ts, last_ts, version)?;
    Ok(Record::Events { thread, events })
}

/// A SAMPLES chunk after its tag.
fn decode_samples(c: &mut Cursor<'_>, payload_len: usize) -> Result<Vec<Sample>, DecodeError> {
    let n = c.u64()?;
    if n as usize > payload_len {
        return Err(DecodeError("sample count larger than the chunk"));
    }
    let mut samples = Vec::with_capacity(n as usize);
    for _ in 0..n {
        samples.push(Sample {
            thread: ThreadIdx(c.u32()?),
            index: c.u64()?,
            ts: c.u64()?,
            cpu_ns: c.u64()?.checked_sub(1),
        });
    }
    Ok(samples)
}
