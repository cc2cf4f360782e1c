//! A quick look at a trace without decoding its events: the tables, the per-thread event
//! counts, drops and waits, the diagnostics and the END record. EVENTS chunks are skipped
//! with a seek after their first bytes (thread and count), so skimming a multi-GB trace
//! reads a few MB; their checksums are not verified (a full read does that). `eltrace
//! record` uses it for the summary it prints when the program exits. The tables hold the
//! indices present, in the order they first appear (an index the file makes up costs one
//! entry, not a table that long).
//!
//! ```text
//! header | INFO | FUNCTION ×n | THREAD | EVENTS (read 2 varints, seek) | ... | WAITS | END
//! ```

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

use crate::model::{EndRecord, FunctionRecord, Record, ThreadIdx, ThreadRecord, TraceInfo};
use crate::reader::{ReadError, decode_chunk, read_full};
use crate::varint::Cursor;
use crate::{MAGIC, MAX_CHUNK_PAYLOAD, tag};

/// Per-thread totals a skim finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadSkim {
    /// The thread's latest THREAD record (default if none was written).
    pub record: ThreadRecord,
    pub events: u64,
    pub dropped: u64,
    /// Times a hook of this thread waited for the writer (lossless recording), and for how
    /// long in all, from the thread's latest WAITS record.
    pub waits: u64,
    pub wait_ns: u64,
}

/// What [`skim`] read.
#[derive(Debug, Clone, Default)]
pub struct Skim {
    pub info: TraceInfo,
    /// The function table: the latest record of each index present, in order of first
    /// appearance (by index for a profiler's trace, whose indices are dense from 0).
    pub functions: Vec<FunctionRecord>,
    /// The threads present, in order of first appearance.
    pub threads: Vec<ThreadSkim>,
    /// Table index → position in `functions` / `threads`.
    function_at: HashMap<u32, usize>,
    thread_at: HashMap<u32, usize>,
    pub diagnostics: Vec<String>,
    pub values: u64,
    pub end: Option<EndRecord>,
    /// The file stopped part-way through a chunk, or has no END chunk.
    pub truncated: bool,
    /// Bytes in the file.
    pub bytes: u64,
}

impl Skim {
    /// Events in all threads' EVENTS chunks.
    pub fn events(&self) -> u64 {
        self.threads.iter().map(|t| t.events).sum()
    }

    /// Events lost, by the DROPPED chunks (or by the END record when it says more).
    pub fn dropped(&self) -> u64 {
        let chunks: u64 = self.threads.iter().map(|t| t.dropped).sum();
        chunks.max(self.end.as_ref().map_or(0, |e| e.events_dropped))
    }

    fn thread(&mut self, idx: ThreadIdx) -> &mut ThreadSkim {
        let n = self.threads.len();
        let at = *self.thread_at.entry(idx.0).or_insert(n);
        if at == n {
            self.threads.push(ThreadSkim::default());
        }
        &mut self.threads[at]
    }

    fn function(&mut self, f: FunctionRecord) {
        let n = self.functions.len();
        let at = *self.function_at.entry(f.idx.0).or_insert(n);
        if at == n {
            self.functions.push(f);
        } else {
            self.functions[at] = f;
        }
    }
}

/// Reads the tables and totals of a trace, skipping event payloads.
pub fn skim<R: Read + Seek>(mut input: R) -> Result<Skim, ReadError> {
    let mut head = [0u8; 12];
    let n = read_full(&mut input, &mut head)?;
    if n < 8 || head[..8] != MAGIC {
        return Err(ReadError::NotATrace);
    }
    if n < 12 {
        return Err(corrupt(n as u64, "header cut short"));
    }
    let version = u16::from_le_bytes([head[8], head[9]]);
    if !crate::version_supported(version) {
        return Err(ReadError::UnsupportedVersion(version));
    }
    let bytes = input.seek(SeekFrom::End(0))?;
    input.seek(SeekFrom::Start(12))?;
    let mut s = Skim {
        bytes,
        ..Skim::default()
    };
    let mut offset = 12u64;
    let mut payload = Vec::new();
    loop {
        let n = read_full(&mut input, &mut head)?;
        if n < 12 {
            s.truncated = n > 0 || s.end.is_none();
            break;
        }
        let kind = head[0];
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        if len > MAX_CHUNK_PAYLOAD || head[1..4] != [0, 0, 0] {
            return Err(corrupt(
                offset,
                &format!("implausible chunk header (kind {kind}, length {len})"),
            ));
        }
        if offset + 12 + u64::from(len) > bytes {
            s.truncated = true;
            break;
        }
        if matches!(
            kind,
            tag::EVENTS | tag::TIMELESS_EVENTS | tag::EVENT_STREAM | tag::TIMELESS_STREAM
        ) {
            // Thread and count are the first two varints (at most 15 bytes).
            let mut first = [0u8; 15];
            let want = first.len().min(len as usize);
            read_full(&mut input, &mut first[..want])?;
            let mut c = Cursor::new(&first[..want]);
            let bad = |_| corrupt(offset, "EVENTS header");
            let thread = ThreadIdx(c.u32().map_err(bad)?);
            let count = c.u64().map_err(bad)?;
            s.thread(thread).events += count;
            input.seek(SeekFrom::Current(i64::from(len) - want as i64))?;
        } else if kind == tag::VALUE {
            s.values += 1;
            input.seek(SeekFrom::Current(i64::from(len)))?;
        } else {
            payload.resize(len as usize, 0);
            read_full(&mut input, &mut payload)?;
            let crc = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
            if crate::crc::crc32_parts(&[&head[..8], &payload]) != crc {
                return Err(corrupt(offset, "checksum mismatch"));
            }
            let rec = decode_chunk(kind, &payload, version, &mut Vec::new())
                .map_err(|e| corrupt(offset, &format!("chunk kind {kind}: {}", e.0)))?;
            match rec {
                Some(Record::Info(i)) => s.info = i,
                Some(Record::Function(f)) => s.function(f),
                Some(Record::Thread(t)) => {
                    let idx = t.idx;
                    s.thread(idx).record = t;
                }
                Some(Record::Dropped { thread, count }) => s.thread(thread).dropped += count,
                Some(Record::Diagnostic(d)) => s.diagnostics.push(d),
                Some(Record::End(e)) => s.end = Some(e),
                Some(Record::Waits {
                    thread,
                    waits,
                    wait_ns,
                }) => {
                    let t = s.thread(thread);
                    t.waits = waits;
                    t.wait_ns = wait_ns;
                }
                _ => {}
            }
        }
        offset += 12 + u64::from(len);
    }
    Ok(s)
}

fn corrupt(offset: u64, reason: &str) -> ReadError {
    ReadError::Corrupt {
        offset,
        reason: reason.to_owned(),
    }
}
