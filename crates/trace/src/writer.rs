//! Encodes records into chunks and writes them to any `io::Write`.

use std::io::{self, Write};

use crate::crc::crc32_parts;
use crate::model::{
    EndRecord, Event, FunctionRecord, Sample, ThreadIdx, ThreadRecord, TraceInfo, ValueRecord,
};
use crate::protocol::info_key;
use crate::varint::{put_str, put_u64};
use crate::{FORMAT_VERSION, MAGIC, MAX_EVENTS_PER_CHUNK, tag};

/// Writes a trace. Every `write_*` call emits whole chunks; nothing is buffered between calls
/// beyond what the underlying writer buffers, so after [`TraceWriter::flush`] the file is a
/// readable (if unfinished) trace.
pub struct TraceWriter<W: Write> {
    out: W,
    payload: Vec<u8>,
    events_written: u64,
    /// INFO `timing` is not `exact`: events go into TIMELESS_EVENTS chunks (version 4).
    timeless: bool,
}

impl<W: Write> TraceWriter<W> {
    /// Writes the file header and the info chunk.
    pub fn new(mut out: W, info: &TraceInfo) -> io::Result<Self> {
        let timeless = !info.has_event_times();
        let version = FORMAT_VERSION;
        let mut head = [0u8; 12];
        head[..8].copy_from_slice(&MAGIC);
        head[8..10].copy_from_slice(&version.to_le_bytes());
        out.write_all(&head)?;
        let mut w = TraceWriter {
            out,
            payload: Vec::with_capacity(64 * 1024),
            events_written: 0,
            timeless,
        };
        w.write_info(info)?;
        Ok(w)
    }

    /// Events written so far through [`TraceWriter::write_events`].
    pub fn events_written(&self) -> u64 {
        self.events_written
    }

    fn chunk(&mut self, kind: u8) -> io::Result<()> {
        let len = u32::try_from(self.payload.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "chunk too large"))?;
        let mut head = [0u8; 12];
        head[0] = kind;
        head[4..8].copy_from_slice(&len.to_le_bytes());
        let crc = crc32_parts(&[&head[..8], &self.payload]);
        head[8..12].copy_from_slice(&crc.to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(&self.payload)?;
        self.payload.clear();
        Ok(())
    }

    fn write_info(&mut self, info: &TraceInfo) -> io::Result<()> {
        let mut pairs: Vec<(&str, String)> = vec![
            (info_key::PID, info.pid.to_string()),
            (info_key::START_UNIX_NS, info.start_unix_ns.to_string()),
            (info_key::START_TICKS, info.start_ticks.to_string()),
            (info_key::NS_PER_TICK, format!("{:?}", info.ns_per_tick)),
            (info_key::RUNTIME, info.runtime.clone()),
            (info_key::COMMAND, info.command.clone()),
            (info_key::HOOK_MODE, info.hook_mode.clone()),
        ];
        pairs.extend(info.extra.iter().map(|(k, v)| (k.as_str(), v.clone())));
        put_u64(&mut self.payload, pairs.len() as u64);
        for (k, v) in pairs {
            put_str(&mut self.payload, k);
            put_str(&mut self.payload, &v);
        }
        self.chunk(tag::INFO)
    }

    /// Adds (or, by index, replaces) a function table entry.
    pub fn write_function(&mut self, f: &FunctionRecord) -> io::Result<()> {
        let p = &mut self.payload;
        put_u64(p, u64::from(f.idx.0));
        put_u64(p, f.function_id);
        put_str(p, &f.module);
        put_str(p, &f.type_name);
        put_str(p, &f.method);
        put_u64(p, u64::from(f.token));
        put_u64(p, u64::from(f.impl_flags));
        put_u64(p, u64::from(f.flags.0));
        put_str(p, &f.state_machine);
        self.chunk(tag::FUNCTION)
    }

    /// Adds (or, by index, updates) a thread table entry.
    pub fn write_thread(&mut self, t: &ThreadRecord) -> io::Result<()> {
        let p = &mut self.payload;
        put_u64(p, u64::from(t.idx.0));
        put_u64(p, t.os_tid);
        put_u64(p, t.managed_id);
        put_str(p, &t.name);
        self.chunk(tag::THREAD)
    }

    /// Appends events of one thread (in time order) as one or more chunks. In a timeless
    /// trace only each chunk's first and last `ts` are kept (the reader spreads the others
    /// evenly between them).
    pub fn write_events(&mut self, thread: ThreadIdx, events: &[Event]) -> io::Result<()> {
        for part in events.chunks(MAX_EVENTS_PER_CHUNK) {
            let p = &mut self.payload;
            put_u64(p, u64::from(thread.0));
            put_u64(p, part.len() as u64);
            put_u64(p, part[0].ts);
            if self.timeless {
                put_u64(p, part[part.len() - 1].ts.max(part[0].ts));
                crate::events::encode_timeless(p, part);
                self.chunk(tag::TIMELESS_EVENTS)?;
            } else {
                crate::events::encode(p, part);
                self.chunk(tag::EVENTS)?;
            }
            self.events_written += part.len() as u64;
        }
        Ok(())
    }

    /// Appends whole chunks built elsewhere ([`crate::chunks`]) holding `events` events.
    pub fn write_encoded(&mut self, bytes: &[u8], events: u64) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.events_written += events;
        Ok(())
    }

    /// Records that `count` events of `thread` were lost at this point.
    pub fn write_dropped(&mut self, thread: ThreadIdx, count: u64) -> io::Result<()> {
        put_u64(&mut self.payload, u64::from(thread.0));
        put_u64(&mut self.payload, count);
        self.chunk(tag::DROPPED)
    }

    /// The totals of a thread's waits for the writer so far (lossless recording): how many
    /// times its hooks found the buffer full and waited, and for how long in all. A later
    /// WAITS chunk of the same thread replaces the earlier one.
    pub fn write_waits(&mut self, thread: ThreadIdx, waits: u64, wait_ns: u64) -> io::Result<()> {
        put_u64(&mut self.payload, u64::from(thread.0));
        put_u64(&mut self.payload, waits);
        put_u64(&mut self.payload, wait_ns);
        self.chunk(tag::WAITS)
    }

    /// Samples of the threads' event positions (timing `sampled`).
    pub fn write_samples(&mut self, samples: &[Sample]) -> io::Result<()> {
        for part in samples.chunks(65_536) {
            let p = &mut self.payload;
            put_u64(p, part.len() as u64);
            for s in part {
                put_u64(p, u64::from(s.thread.0));
                put_u64(p, s.index);
                put_u64(p, s.ts);
                put_u64(p, s.cpu_ns.map_or(0, |c| c.saturating_add(1)));
            }
            self.chunk(tag::SAMPLES)?;
        }
        Ok(())
    }

    /// A message about an internal failure or notable condition.
    pub fn write_diagnostic(&mut self, message: &str) -> io::Result<()> {
        put_str(&mut self.payload, message);
        self.chunk(tag::DIAGNOSTIC)
    }

    /// A captured value; comes before the first event that refers to it.
    pub fn write_value(&mut self, v: &ValueRecord) -> io::Result<()> {
        put_u64(&mut self.payload, u64::from(v.id));
        put_u64(&mut self.payload, u64::from(v.status.code()));
        put_str(&mut self.payload, &v.text);
        self.chunk(tag::VALUE)
    }

    /// The final chunk; a trace without one reads as cut short.
    pub fn write_end(&mut self, end: &EndRecord) -> io::Result<()> {
        let p = &mut self.payload;
        put_u64(p, u64::from(end.reason.code()));
        put_u64(p, end.ts);
        put_u64(p, end.events_written);
        put_u64(p, end.events_dropped);
        put_u64(p, end.internal_errors);
        self.chunk(tag::END)?;
        self.out.flush()
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}
