//! Perfetto's protobuf trace format, as loaded by ui.perfetto.dev and trace_processor.
//! Spec: https://perfetto.dev/docs/reference/trace-packet-proto (protos/perfetto/trace/
//! trace_packet.proto, track_event/track_event.proto, track_event/track_descriptor.proto,
//! interned_data/interned_data.proto in github.com/google/perfetto).
//!
//! The few messages needed are encoded by hand (no codegen). The file is a `Trace`: a
//! sequence of `packet` fields (1), each a `TracePacket`. A process's packets are one packet
//! sequence (`trusted_packet_sequence_id` 1 for the first process, 2 for the next, …) whose
//! first packet clears its incremental state, so each process interns its names on its own;
//! track uuids and flow ids, which are global, start past the previous process's (its base):
//!
//! ```text
//! packet { track_descriptor { uuid: base + 1  process { pid, cmdline, process_name } }
//!          sequence_flags: SEQ_INCREMENTAL_STATE_CLEARED }
//! packet { track_descriptor { uuid: base + 2 + thread index
//!                             thread { pid, tid, thread_name } } }
//! packet { timestamp: ns  track_event { type: SLICE_BEGIN  track_uuid  name_iid
//!          [flow_ids]  [debug_annotations] }
//!          [interned_data { event_names { iid name } debug_annotation_names { iid name } }] }
//! packet { timestamp: ns  track_event { type: SLICE_END  track_uuid } }
//! ```
//!
//! One track per thread, named as the runtime named it (`main` for the thread whose tid is
//! the pid; the viewer adds the tid), grouped under the process by its pid. Function names
//! are interned: each is written once, in the packet that first uses it. Timestamps are ns
//! since the trace's origin (plus the process's start on a session's timeline). An async
//! method's segments share a flow id (one more than the logical call, in `flow_ids`, plus the
//! largest id of the processes before), so Perfetto draws an arrow from each segment to the next
//! (none uses `terminating_flow_ids`: which segment is a call's last is not always known when
//! it is written). The flow field is the `uint64` one (36), which every trace_processor
//! reads, also the 2021 ones that know nothing of the `fixed64` 47. How a
//! frame ended (`ended_by`, `open_at_end`), its segment (`call`, `segment`, `inferred`) and
//! its captured values (`args`, `return`) are debug annotations. Where events were dropped,
//! an instant event `events dropped` marks the time on the thread's track (`dropped_events`
//! there, `thread_dropped_events` in all). A thread that waited for the trace writer gets
//! two counter tracks under its track, `writer waits: <thread>` and `writer wait ns:
//! <thread>`: 0 at its first event, its totals at its last.
//!
//! Frames are written as a Chrome export writes them: held per thread until the root frame
//! closes (see [`crate::nest`]), then as begin/end pairs in nesting order. Perfetto sorts the
//! packets by timestamp and keeps the file's order among equal ones, so equal ends nest as
//! written.

use crate::proto::{LEN, bytes, message, uint};
use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::{Analysis, EndKind, Frame, FrameSink, FunctionIdx, Tables, ThreadIdx};

use crate::labels::{ProcessMeta, display_tid, thread_label};
use crate::nest::{Held, Holder, Step, walk};
use crate::{ExportOptions, Exporter, TimeWindow};

/// Field numbers and enum values of the messages written.
mod field {
    pub const TRACE_PACKET: u32 = 1;

    pub const PACKET_TIMESTAMP: u32 = 8;
    pub const PACKET_SEQUENCE_ID: u32 = 10;
    pub const PACKET_TRACK_EVENT: u32 = 11;
    pub const PACKET_INTERNED_DATA: u32 = 12;
    pub const PACKET_SEQUENCE_FLAGS: u32 = 13;
    pub const PACKET_TRACK_DESCRIPTOR: u32 = 60;
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;

    pub const TRACK_UUID: u32 = 1;
    pub const TRACK_NAME: u32 = 2;
    pub const TRACK_PROCESS: u32 = 3;
    pub const TRACK_THREAD: u32 = 4;
    pub const TRACK_PARENT_UUID: u32 = 5;
    pub const TRACK_COUNTER: u32 = 8;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_CMDLINE: u32 = 2;
    pub const PROCESS_NAME: u32 = 6;
    pub const THREAD_PID: u32 = 1;
    pub const THREAD_TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;

    pub const EVENT_DEBUG_ANNOTATIONS: u32 = 4;
    pub const EVENT_TYPE: u32 = 9;
    pub const EVENT_NAME_IID: u32 = 10;
    pub const EVENT_TRACK_UUID: u32 = 11;
    pub const EVENT_FLOW_IDS: u32 = 36;
    pub const TYPE_SLICE_BEGIN: u64 = 1;
    pub const TYPE_SLICE_END: u64 = 2;
    pub const TYPE_INSTANT: u64 = 3;
    pub const TYPE_COUNTER: u64 = 4;
    pub const EVENT_COUNTER_VALUE: u32 = 30;

    pub const INTERNED_EVENT_NAMES: u32 = 2;
    pub const INTERNED_ANNOTATION_NAMES: u32 = 3;
    pub const INTERNED_IID: u32 = 1;
    pub const INTERNED_NAME: u32 = 2;

    pub const ANNOTATION_NAME_IID: u32 = 1;
    pub const ANNOTATION_BOOL: u32 = 2;
    pub const ANNOTATION_UINT: u32 = 3;
    pub const ANNOTATION_STRING: u32 = 6;
}

/// A process's track uuids past its base: the process's, then one per thread, then the
/// counters.
const PROCESS_TRACK: u64 = 1;

/// The counters of a thread that waited for the trace writer: the waits so far and the time
/// waited so far, sampled at the thread's first event (0) and its last (the totals; the
/// trace has the totals, not the times of the waits).
const WAITS_COUNTER: &str = "writer waits";
const WAIT_NS_COUNTER: &str = "writer wait ns";

fn thread_track(thread: ThreadIdx) -> u64 {
    u64::from(thread.0) + 2
}

/// The debug annotation names, interned as their index + 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    EndedBy,
    OpenAtEnd,
    Call,
    Segment,
    Inferred,
    Args,
    Return,
    ThreadDroppedEvents,
    DroppedEvents,
}

impl Arg {
    const COUNT: usize = 9;
    const fn name(self) -> &'static str {
        match self {
            Arg::EndedBy => "ended_by",
            Arg::OpenAtEnd => "open_at_end",
            Arg::Call => "call",
            Arg::Segment => "segment",
            Arg::Inferred => "inferred",
            Arg::Args => "args",
            Arg::Return => "return",
            Arg::ThreadDroppedEvents => "thread_dropped_events",
            Arg::DroppedEvents => "dropped_events",
        }
    }
}

/// A debug annotation's value.
enum ArgValue<'a> {
    Bool(bool),
    Uint(u64),
    Str(&'a str),
}

/// The Perfetto exporter.
pub struct Perfetto<'w> {
    window: TimeWindow,
    /// The current process's start on the export's timeline.
    offset: u64,
    /// The current process's frames until their root frames close.
    held: Holder,
    w: Out<'w>,
}

/// The output, the ids the processes share out, and the current sequence's interning state.
struct Out<'w> {
    out: &'w mut dyn Write,
    /// The process being written, its packet sequence, and what its uuids and flow ids start
    /// past.
    process: ProcessMeta,
    sequence: u64,
    uuid_base: u64,
    flow_base: u64,
    /// The largest track uuid and flow id written.
    uuid_max: u64,
    flow_max: u64,
    /// The process's track descriptor is written.
    started: bool,
    /// Threads whose track descriptor is written, with the name written.
    described: HashMap<ThreadIdx, String>,
    /// Interned event names: functions, then other names by text.
    func_iids: HashMap<FunctionIdx, u64>,
    text_iids: HashMap<&'static str, u64>,
    next_name_iid: u64,
    arg_interned: [bool; Arg::COUNT],
    /// Scratch buffers of the packet being written.
    event: Vec<u8>,
    interned: Vec<u8>,
    annotation_names: Vec<u8>,
    packet: Vec<u8>,
}

impl<'w> Perfetto<'w> {
    pub fn new(out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Perfetto {
            window: opts.window,
            offset: 0,
            held: Holder::new(opts.window, 0),
            w: Out {
                out,
                process: ProcessMeta::from_info(&Default::default()),
                sequence: 0,
                uuid_base: 0,
                flow_base: 0,
                uuid_max: 0,
                flow_max: 0,
                started: false,
                described: HashMap::new(),
                func_iids: HashMap::new(),
                text_iids: HashMap::new(),
                next_name_iid: 1,
                arg_interned: [false; Arg::COUNT],
                event: Vec::with_capacity(256),
                interned: Vec::with_capacity(256),
                annotation_names: Vec::new(),
                packet: Vec::with_capacity(512),
            },
        }
    }
}

impl Out<'_> {
    /// Writes the scratch `event` (and `interned`, if any) as a packet at `ts`, or a packet
    /// of `track_descriptor` when `ts` is `None`.
    fn packet(&mut self, ts: Option<u64>, first: bool) -> io::Result<()> {
        let p = &mut self.packet;
        p.clear();
        match ts {
            Some(ts) => {
                uint(p, field::PACKET_TIMESTAMP, ts);
                bytes(p, field::PACKET_TRACK_EVENT, &self.event);
            }
            None => bytes(p, field::PACKET_TRACK_DESCRIPTOR, &self.event),
        }
        uint(p, field::PACKET_SEQUENCE_ID, self.sequence);
        if !self.annotation_names.is_empty() {
            self.interned.extend_from_slice(&self.annotation_names);
            self.annotation_names.clear();
        }
        if !self.interned.is_empty() {
            bytes(p, field::PACKET_INTERNED_DATA, &self.interned);
        }
        if first {
            uint(
                p,
                field::PACKET_SEQUENCE_FLAGS,
                field::SEQ_INCREMENTAL_STATE_CLEARED,
            );
        }
        // The packet's field key and length ahead of it (the key is one byte).
        let mut head = [0u8; 11];
        head[0] = (field::TRACE_PACKET << 3 | LEN) as u8;
        let mut n = 1;
        let mut len = p.len() as u64;
        while len >= 0x80 {
            head[n] = len as u8 | 0x80;
            len >>= 7;
            n += 1;
        }
        head[n] = len as u8;
        self.out.write_all(&head[..=n])?;
        self.out.write_all(p)?;
        self.event.clear();
        self.interned.clear();
        Ok(())
    }

    /// The uuid of the process's track `local` (see [`PROCESS_TRACK`], [`thread_track`]).
    fn uuid(&mut self, local: u64) -> u64 {
        let uuid = self.uuid_base + local;
        self.uuid_max = self.uuid_max.max(uuid);
        uuid
    }

    /// The process's next packet sequence, its uuids and flow ids past those used so far.
    fn next_process(&mut self, process: &ProcessMeta) {
        self.process = process.clone();
        self.sequence += 1;
        self.uuid_base = self.uuid_max;
        self.flow_base = self.flow_max;
        self.started = false;
        self.described.clear();
        self.func_iids.clear();
        self.text_iids.clear();
        self.next_name_iid = 1;
        self.arg_interned = [false; Arg::COUNT];
    }

    /// The process's track descriptor, first in its sequence (clearing its state).
    fn start(&mut self) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let p = self.process.clone();
        let uuid = self.uuid(PROCESS_TRACK);
        let ev = &mut self.event;
        uint(ev, field::TRACK_UUID, uuid);
        message(ev, field::TRACK_PROCESS, |m| {
            uint(m, field::PROCESS_PID, u64::from(p.pid));
            if !p.command.is_empty() {
                bytes(m, field::PROCESS_CMDLINE, p.command.as_bytes());
            }
            bytes(m, field::PROCESS_NAME, p.name.as_bytes());
        });
        self.packet(None, true)
    }

    /// The thread's track descriptor, before its first event; again with `renamed` when the
    /// thread's name changed since (the runtime names threads after they start).
    fn describe(&mut self, tables: &Tables, thread: ThreadIdx, renamed: bool) -> io::Result<()> {
        self.start()?;
        let pid = self.process.pid;
        if self.described.contains_key(&thread) && !renamed {
            return Ok(());
        }
        let name = tables.threads.name(thread, pid);
        if self.described.get(&thread) == Some(&name) {
            return Ok(());
        }
        self.described.insert(thread, name.clone());
        let tid = display_tid(tables, thread);
        let uuid = self.uuid(thread_track(thread));
        let ev = &mut self.event;
        uint(ev, field::TRACK_UUID, uuid);
        message(ev, field::TRACK_THREAD, |m| {
            uint(m, field::THREAD_PID, u64::from(pid));
            uint(m, field::THREAD_TID, tid);
            bytes(m, field::THREAD_NAME, name.as_bytes());
        });
        self.packet(None, false)
    }

    fn intern_entry(buf: &mut Vec<u8>, field: u32, iid: u64, name: &str) {
        message(buf, field, |m| {
            uint(m, field::INTERNED_IID, iid);
            bytes(m, field::INTERNED_NAME, name.as_bytes());
        });
    }

    /// The iid of a function's name, interned in this packet if new.
    fn func_iid(&mut self, tables: &Tables, func: FunctionIdx) -> u64 {
        if let Some(&iid) = self.func_iids.get(&func) {
            return iid;
        }
        let iid = self.next_name_iid;
        self.next_name_iid += 1;
        self.func_iids.insert(func, iid);
        let name = tables.functions.name(func);
        Self::intern_entry(&mut self.interned, field::INTERNED_EVENT_NAMES, iid, &name);
        iid
    }

    /// The iid of another event name, interned in this packet if new.
    fn text_iid(&mut self, text: &'static str) -> u64 {
        if let Some(&iid) = self.text_iids.get(text) {
            return iid;
        }
        let iid = self.next_name_iid;
        self.next_name_iid += 1;
        self.text_iids.insert(text, iid);
        Self::intern_entry(&mut self.interned, field::INTERNED_EVENT_NAMES, iid, text);
        iid
    }

    fn annotation(&mut self, arg: Arg, value: ArgValue<'_>) {
        let iid = arg as u64 + 1;
        if !std::mem::replace(&mut self.arg_interned[arg as usize], true) {
            Self::intern_entry(
                &mut self.annotation_names,
                field::INTERNED_ANNOTATION_NAMES,
                iid,
                arg.name(),
            );
        }
        message(&mut self.event, field::EVENT_DEBUG_ANNOTATIONS, |m| {
            uint(m, field::ANNOTATION_NAME_IID, iid);
            match value {
                ArgValue::Bool(b) => uint(m, field::ANNOTATION_BOOL, u64::from(b)),
                ArgValue::Uint(v) => uint(m, field::ANNOTATION_UINT, v),
                ArgValue::Str(s) => bytes(m, field::ANNOTATION_STRING, s.as_bytes()),
            }
        });
    }

    fn begin(&mut self, tables: &Tables, thread: ThreadIdx, f: &Held) -> io::Result<()> {
        let iid = self.func_iid(tables, f.func);
        let track = self.uuid(thread_track(thread));
        let ev = &mut self.event;
        uint(ev, field::EVENT_TYPE, field::TYPE_SLICE_BEGIN);
        uint(ev, field::EVENT_TRACK_UUID, track);
        uint(ev, field::EVENT_NAME_IID, iid);
        if let Some(seg) = f.segment {
            // Every segment carries the flow: whether a segment is its call's last is not
            // known when it is written (a runtime that reports a Leave at each suspension
            // shows it only at the next resume), and a flow that no later segment continues
            // draws nothing.
            let flow = self.flow_base + seg.call + 1;
            self.flow_max = self.flow_max.max(flow);
            uint(ev, field::EVENT_FLOW_IDS, flow);
            self.annotation(Arg::Call, ArgValue::Uint(seg.call));
            self.annotation(Arg::Segment, ArgValue::Uint(u64::from(seg.index)));
            if seg.inferred {
                self.annotation(Arg::Inferred, ArgValue::Bool(true));
            }
        }
        match f.kind {
            EndKind::Leave => {}
            EndKind::OpenAtEnd => self.annotation(Arg::OpenAtEnd, ArgValue::Bool(true)),
            k => self.annotation(Arg::EndedBy, ArgValue::Str(k.name())),
        }
        for (arg, id) in [(Arg::Args, f.enter_value), (Arg::Return, f.leave_value)] {
            if let Some(v) = id.and_then(|i| tables.values.get(i)) {
                self.annotation(arg, ArgValue::Str(&v.text));
            }
        }
        self.packet(Some(f.start), false)
    }

    fn end(&mut self, thread: ThreadIdx, f: &Held) -> io::Result<()> {
        let track = self.uuid(thread_track(thread));
        uint(&mut self.event, field::EVENT_TYPE, field::TYPE_SLICE_END);
        uint(&mut self.event, field::EVENT_TRACK_UUID, track);
        self.packet(Some(f.end), false)
    }

    /// An `events dropped` instant: `count` events lost there, `total` on the thread.
    fn instant(&mut self, thread: ThreadIdx, ts: u64, count: u64, total: u64) -> io::Result<()> {
        let iid = self.text_iid("events dropped");
        let track = self.uuid(thread_track(thread));
        uint(&mut self.event, field::EVENT_TYPE, field::TYPE_INSTANT);
        uint(&mut self.event, field::EVENT_TRACK_UUID, track);
        uint(&mut self.event, field::EVENT_NAME_IID, iid);
        self.annotation(Arg::DroppedEvents, ArgValue::Uint(count));
        self.annotation(Arg::ThreadDroppedEvents, ArgValue::Uint(total));
        self.packet(Some(ts), false)
    }

    /// A counter track under the thread's track, and its samples `(ts, value)`.
    fn counter(
        &mut self,
        thread: ThreadIdx,
        local: u64,
        name: &str,
        samples: &[(u64, u64)],
    ) -> io::Result<()> {
        let parent = self.uuid(thread_track(thread));
        let uuid = self.uuid(local);
        let ev = &mut self.event;
        uint(ev, field::TRACK_UUID, uuid);
        bytes(ev, field::TRACK_NAME, name.as_bytes());
        uint(ev, field::TRACK_PARENT_UUID, parent);
        bytes(ev, field::TRACK_COUNTER, &[]);
        self.packet(None, false)?;
        for &(ts, value) in samples {
            uint(&mut self.event, field::EVENT_TYPE, field::TYPE_COUNTER);
            uint(&mut self.event, field::EVENT_TRACK_UUID, uuid);
            uint(&mut self.event, field::EVENT_COUNTER_VALUE, value);
            self.packet(Some(ts), false)?;
        }
        Ok(())
    }

    fn write_frames(
        &mut self,
        tables: &Tables,
        thread: ThreadIdx,
        frames: &[Held],
    ) -> io::Result<()> {
        self.describe(tables, thread, false)?;
        walk(frames, |step| match step {
            Step::Open(f) => self.begin(tables, thread, f),
            Step::Close(f) => self.end(thread, f),
        })
    }
}

impl FrameSink for Perfetto<'_> {
    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        let w = &mut self.w;
        self.held.frame(thread, frame, |frames| {
            w.write_frames(tables, thread, frames)
        })
    }

    fn dropped(&mut self, _: &Tables, thread: ThreadIdx, at_ns: u64, count: u64) -> io::Result<()> {
        self.held.dropped(thread, at_ns, count);
        Ok(())
    }
}

impl Exporter for Perfetto<'_> {
    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.held = Holder::new(self.window, process.start_ns);
        self.offset = process.start_ns;
        self.w.next_process(process);
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        let w = &mut self.w;
        self.held
            .drain(|thread, frames| w.write_frames(&a.tables, thread, frames))?;
        w.start()?;
        let mut named: Vec<ThreadIdx> = w.described.keys().copied().collect();
        named.sort_unstable();
        for t in named {
            w.describe(&a.tables, t, true)?;
        }
        for (idx, stats) in a.threads() {
            for (ts, count) in self.held.drops(idx) {
                w.describe(&a.tables, idx, false)?;
                w.instant(idx, ts, count, stats.dropped_events)?;
            }
        }
        // Waits for the trace writer: two counters per thread that waited, their uuids after
        // every track of the process so far (the threads' all described first).
        let waited: Vec<_> = a.threads().filter(|(_, s)| s.waits > 0).collect();
        for (idx, _) in &waited {
            w.describe(&a.tables, *idx, false)?;
        }
        let mut local = w.uuid_max - w.uuid_base;
        for (idx, stats) in waited {
            let (first, last) = (stats.first_ns + self.offset, stats.last_ns + self.offset);
            let inside = |t: u64| self.window.clip(t, t).is_some();
            let at = |total: u64| -> Vec<(u64, u64)> {
                [(first, 0), (last, total)]
                    .into_iter()
                    .filter(|&(t, _)| inside(t))
                    .collect()
            };
            // Named with the thread: the UI lists counters under the process.
            let label = thread_label(&a.tables, idx, w.process.pid);
            for (name, total) in [
                (WAITS_COUNTER, stats.waits),
                (WAIT_NS_COUNTER, stats.wait_ns),
            ] {
                local += 1;
                w.counter(idx, local, &format!("{name}: {label}"), &at(total))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.out.flush()
    }
}
