//! Chrome Trace Event Format JSON, as loaded by ui.perfetto.dev and chrome://tracing.
//! Spec: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAIU8
//!
//! Output: `{"traceEvents":[…],"displayTimeUnit":"ns","otherData":{…}}`. Every frame is a
//! complete event (`ph:"X"`) with `ts`/`dur` in µs with three decimals (exact ns), `pid`,
//! `tid` (the OS tid when it fits 31 bits, else the thread index: Perfetto wants 32-bit
//! tids), `name`, `cat` (the module) and `args` saying how an abnormal frame ended. Then
//! `ph:"M"` `process_name`/`thread_name`/`thread_sort_index` metadata.
//!
//! An async method's segments are linked into their logical call by v2 flow events on the
//! complete events themselves (Perfetto's and the Trace Event Format's `bind_id`, `flow_in`,
//! `flow_out`): `bind_id` is the logical call (`args.call` + 1), a resume has `flow_in`, and every segment but
//! an unwound one has `flow_out` (a completion's dangling out-flow draws nothing). Their
//! `args` carry `call`, `segment` (0 for the initial one) and `inferred` (linked by order
//! alone). Values captured with `record --values` are `args.args` (at a call's start) and
//! `args.return` (at its completion).
//!
//! Events are streamed. Frames close children first, so each thread's frames are held until
//! its root frame closes and are then written sorted by start, parents before children —
//! memory is bounded by the largest root frame's subtree, not by the trace.

use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::{
    Analysis, EndKind, Frame, FrameSink, FunctionIdx, SegmentRef, Tables, ThreadIdx,
};
use serde_json::{Map, Value, json};

use crate::Exporter;

#[derive(Debug, Clone, Copy)]
struct Pending {
    start: u64,
    end: u64,
    depth: u32,
    func: FunctionIdx,
    kind: EndKind,
    segment: Option<SegmentRef>,
    enter_value: Option<u32>,
    leave_value: Option<u32>,
}

/// The Chrome trace exporter.
pub struct Chrome<'w> {
    out: &'w mut dyn Write,
    started: bool,
    any_event: bool,
    pending: HashMap<ThreadIdx, Vec<Pending>>,
    /// JSON-escaped `"name":…,"cat":…` per function.
    names: HashMap<FunctionIdx, String>,
    tids: HashMap<ThreadIdx, u64>,
}

/// Writes `ns` as µs with exactly three decimals.
fn write_us(out: &mut dyn Write, ns: u64) -> io::Result<()> {
    write!(out, "{}.{:03}", ns / 1000, ns % 1000)
}

fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The tid shown for a thread: the OS tid when it fits a positive `i32`, else the index.
fn chrome_tid(tables: &Tables, thread: ThreadIdx) -> u64 {
    match tables.threads.os_tid(thread) {
        Some(t) if t > 0 && t <= i32::MAX as u64 => t,
        _ => u64::from(thread.0),
    }
}

impl<'w> Chrome<'w> {
    pub fn new(out: &'w mut dyn Write) -> Self {
        Chrome {
            out,
            started: false,
            any_event: false,
            pending: HashMap::new(),
            names: HashMap::new(),
            tids: HashMap::new(),
        }
    }

    fn start(&mut self) -> io::Result<()> {
        if !self.started {
            self.out.write_all(b"{\"traceEvents\":[")?;
            self.started = true;
        }
        Ok(())
    }

    fn sep(&mut self) -> io::Result<()> {
        self.start()?;
        if self.any_event {
            self.out.write_all(b",\n")?;
        } else {
            self.out.write_all(b"\n")?;
            self.any_event = true;
        }
        Ok(())
    }

    fn flush_thread(&mut self, tables: &Tables, thread: ThreadIdx) -> io::Result<()> {
        let Some(mut frames) = self.pending.remove(&thread) else {
            return Ok(());
        };
        frames.sort_by_key(|f| (f.start, f.depth));
        let pid = tables.info.pid;
        let tid = *self
            .tids
            .entry(thread)
            .or_insert_with(|| chrome_tid(tables, thread));
        for f in &frames {
            self.sep()?;
            let name = self.names.entry(f.func).or_insert_with(|| {
                format!(
                    "\"name\":{},\"cat\":{}",
                    json_str(&tables.functions.name(f.func)),
                    json_str(tables.functions.module(f.func))
                )
            });
            write!(
                self.out,
                "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":"
            )?;
            write_us(self.out, f.start)?;
            self.out.write_all(b",\"dur\":")?;
            write_us(self.out, f.end - f.start)?;
            write!(self.out, ",{name}")?;
            let args = frame_args(tables, f);
            if !args.is_empty() {
                self.out.write_all(b",\"args\":")?;
                serde_json::to_writer(&mut *self.out, &Value::Object(args))?;
            }
            if let Some(seg) = f.segment {
                // Nonzero: some viewers take a zero id for none.
                write!(self.out, ",\"bind_id\":{}", seg.call + 1)?;
                if seg.index > 0 {
                    self.out.write_all(b",\"flow_in\":true")?;
                }
                if f.kind != EndKind::Unwind {
                    self.out.write_all(b",\"flow_out\":true")?;
                }
            }
            self.out.write_all(b"}")?;
        }
        // Keep the allocation for the thread's next root frame.
        frames.clear();
        self.pending.insert(thread, frames);
        Ok(())
    }

    fn meta(&mut self, pid: u32, tid: u64, name: &str, args: Value) -> io::Result<()> {
        self.sep()?;
        let ev = json!({"ph": "M", "pid": pid, "tid": tid, "name": name, "args": args});
        serde_json::to_writer(&mut *self.out, &ev)?;
        Ok(())
    }
}

/// A complete event's `args`: how an abnormal frame ended, its async segment, its values.
fn frame_args(tables: &Tables, f: &Pending) -> Map<String, Value> {
    let mut args = Map::new();
    match f.kind {
        EndKind::Leave => {}
        EndKind::OpenAtEnd => {
            args.insert("open_at_end".into(), Value::Bool(true));
        }
        k => {
            args.insert("ended_by".into(), json!(k.name()));
        }
    }
    if let Some(seg) = f.segment {
        args.insert("call".into(), json!(seg.call));
        args.insert("segment".into(), json!(seg.index));
        if seg.inferred {
            args.insert("inferred".into(), Value::Bool(true));
        }
    }
    let text = |id: Option<u32>| id.and_then(|i| tables.values.get(i)).map(|v| json!(v.text));
    if let Some(v) = text(f.enter_value) {
        args.insert("args".into(), v);
    }
    if let Some(v) = text(f.leave_value) {
        args.insert("return".into(), v);
    }
    args
}

impl FrameSink for Chrome<'_> {
    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        self.pending.entry(thread).or_default().push(Pending {
            start: frame.start_ns,
            end: frame.end_ns,
            depth: frame.depth,
            func: frame.func,
            kind: frame.end,
            segment: frame.segment,
            enter_value: frame.enter_value,
            leave_value: frame.leave_value,
        });
        if frame.depth == 0 {
            self.flush_thread(tables, thread)?;
        }
        Ok(())
    }
}

impl Exporter for Chrome<'_> {
    fn finish(&mut self, a: &Analysis) -> io::Result<()> {
        let threads: Vec<ThreadIdx> = self.pending.keys().copied().collect();
        for t in threads {
            self.flush_thread(&a.tables, t)?;
        }
        self.start()?;
        let info = a.info();
        let pid = info.pid;
        let pname = if info.command.is_empty() {
            format!("pid {pid}")
        } else {
            info.command.clone()
        };
        self.meta(pid, 0, "process_name", json!({ "name": pname }))?;
        for (idx, _) in a.threads() {
            let tid = *self
                .tids
                .entry(idx)
                .or_insert_with(|| chrome_tid(&a.tables, idx));
            let rec = a.tables.threads.get(idx);
            let name = match rec {
                Some(r) if !r.name.is_empty() => r.name.clone(),
                Some(r) if r.managed_id != 0 => format!("managed thread {}", r.managed_id),
                _ => "thread".to_owned(),
            };
            self.meta(pid, tid, "thread_name", json!({ "name": name }))?;
            self.meta(
                pid,
                tid,
                "thread_sort_index",
                json!({ "sort_index": idx.0 }),
            )?;
        }
        let mut other = Map::new();
        other.insert("tool".into(), json!("eltrace"));
        other.insert("pid".into(), json!(pid));
        other.insert("command".into(), json!(info.command));
        other.insert("runtime".into(), json!(info.runtime));
        other.insert("hook_mode".into(), json!(info.hook_mode));
        other.insert("start_unix_ns".into(), json!(info.start_unix_ns));
        other.insert("events".into(), json!(a.totals.events));
        other.insert("dropped_events".into(), json!(a.dropped_events()));
        other.insert("truncated".into(), json!(a.truncated));
        other.insert("end_reason".into(), json!(a.end_reason()));
        other.insert(
            "open_frames_at_end".into(),
            json!(a.totals.open_frames_at_end),
        );
        for (k, v) in &info.extra {
            other.entry(k.clone()).or_insert_with(|| json!(v));
        }
        self.out
            .write_all(b"\n],\"displayTimeUnit\":\"ns\",\"otherData\":")?;
        serde_json::to_writer(&mut *self.out, &Value::Object(other))?;
        self.out.write_all(b"}\n")?;
        self.out.flush()
    }
}
