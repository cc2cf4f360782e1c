//! Chrome Trace Event Format JSON, as loaded by ui.perfetto.dev and chrome://tracing.
//! Spec: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAIU8
//!
//! Output: `{"traceEvents":[…],"otherData":{…}}`. Every frame is a complete event (`ph:"X"`)
//! with `ts`/`dur` in µs with three decimals (exact ns), `pid`, `tid` (the OS tid when it
//! fits 31 bits, else the thread index: Perfetto wants 32-bit tids), `name`, `cat` (the
//! module) and `args` saying how an abnormal frame ended. Then, per process, `ph:"M"`
//! metadata: the process's `process_name` (the program, e.g. `App.dll`; the command line is
//! in `otherData`), each thread's `thread_name` with its tid (`main (4242)`,
//! `.NET TP Worker (4250)`: chrome://tracing shows no tids) and `thread_sort_index`.
//! Where events were dropped, an instant event (`ph:"i"`, `events dropped`) marks the time
//! on the thread (after its last event before the loss, where the frames the drop closed
//! end). A thread that waited for the trace writer gets two counters of its process
//! (`ph:"C"`), `writer waits: <thread>` (`count`) and `writer wait: <thread>` (`ns`): 0 at
//! its first event, its totals at its last (`otherData` has the process's, `waits` and
//! `wait_ns`). There is no `displayTimeUnit`: Perfetto takes `"ns"` there to mean that `ts`
//! and `dur` are ns.
//!
//! Several processes (a session) share the one `traceEvents` array, each under its own
//! `pid`, their times on one timeline ([`ProcessMeta::start_ns`]); `otherData` then holds
//! `tool` and one object per process in `processes` (with one process, that object's fields
//! are `otherData` itself).
//!
//! An async method's segments are linked into their logical call by v2 flow events on the
//! complete events themselves (Perfetto's and the Trace Event Format's `bind_id`, `flow_in`,
//! `flow_out`): `bind_id` is the logical call + 1 (plus the largest id of the processes
//! before, so that processes' ids differ), a resume has `flow_in`, and every segment but an
//! unwound one has `flow_out` (a completion's dangling out-flow draws nothing). See
//! [`frame_args`] for their `args`. Values captured with `record --values` are `args.args`
//! (at a call's start) and `args.return` (at its completion).
//!
//! Quirks of the viewers: speedscope reads this format too, but adds each event's `args` to
//! its frame's name (the segments of one method do not merge) and computes `ts + dur` in
//! floating point (equal ends can come out unequal and mis-nest); `--format speedscope` has
//! neither problem. Perfetto loads a few hundred thousand calls of JSON quickly and fails
//! somewhere below ten million; `--format perfetto` is about a quarter of the size.
//!
//! Events are streamed. Frames close children first, so each thread's frames are held until
//! its root frame closes and are then written sorted by start, parents before children —
//! memory is bounded by the largest root frame's subtree, not by the trace.

use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::{Analysis, EndKind, Frame, FrameSink, FunctionIdx, Tables, ThreadIdx};
use serde_json::{Map, Value, json};

use crate::labels::{ProcessMeta, display_tid, thread_label};
use crate::nest::{Held, Holder};
use crate::{ExportOptions, Exporter, TimeWindow};

/// The Chrome trace exporter.
pub struct Chrome<'w> {
    window: TimeWindow,
    /// The current process's frames until their root frames close.
    held: Holder,
    w: Out<'w>,
    /// The `otherData` of each process ended so far.
    others: Vec<Map<String, Value>>,
}

/// The output and what is known about it.
struct Out<'w> {
    out: &'w mut dyn Write,
    started: bool,
    any_event: bool,
    /// The process being written.
    process: ProcessMeta,
    /// JSON-escaped `"name":…,"cat":…` per function of the process.
    names: HashMap<FunctionIdx, String>,
    /// Added to the process's flow ids: the largest id of the processes before.
    flow_base: u64,
    /// The largest flow id written.
    flow_max: u64,
}

/// Writes `ns` as µs: with exactly three decimals, unless trace_processor would read that
/// back 1 ns short. It converts a JSON number to ns as `(int64)(double * 1000.0)`, which
/// truncates 16.194 (the double just below it) to 16193; then the next double up is written
/// (`16.194000000000003`), which every reader takes for the same µs.
fn write_us(out: &mut dyn Write, ns: u64) -> io::Result<()> {
    // Exact below 2^53 ns (104 days): the division rounds as parsing "a.bcd" does.
    let us = ns as f64 / 1000.0;
    if (us * 1000.0) as u64 != ns {
        let up = f64::from_bits(us.to_bits() + 1);
        if (up * 1000.0) as u64 == ns && (up * 1000.0).round() as u64 == ns {
            return write!(out, "{up}");
        }
    }
    write!(out, "{}.{:03}", ns / 1000, ns % 1000)
}

fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

impl<'w> Chrome<'w> {
    pub fn new(out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Chrome {
            window: opts.window,
            held: Holder::new(opts.window, 0),
            w: Out {
                out,
                started: false,
                any_event: false,
                process: ProcessMeta::from_info(&Default::default()),
                names: HashMap::new(),
                flow_base: 0,
                flow_max: 0,
            },
            others: Vec::new(),
        }
    }
}

impl Out<'_> {
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

    /// Writes a thread's frames as complete events.
    fn write_frames(
        &mut self,
        tables: &Tables,
        thread: ThreadIdx,
        frames: &[Held],
    ) -> io::Result<()> {
        let pid = self.process.pid;
        let tid = display_tid(tables, thread);
        for f in frames {
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
                let id = self.flow_base + seg.call + 1;
                self.flow_max = self.flow_max.max(id);
                write!(self.out, ",\"bind_id\":{id}")?;
                if seg.index > 0 {
                    self.out.write_all(b",\"flow_in\":true")?;
                }
                if f.kind != EndKind::Unwind {
                    self.out.write_all(b",\"flow_out\":true")?;
                }
            }
            self.out.write_all(b"}")?;
        }
        Ok(())
    }

    fn event(&mut self, ev: &Value) -> io::Result<()> {
        self.sep()?;
        serde_json::to_writer(&mut *self.out, ev)?;
        Ok(())
    }
}

/// A complete event's `args`: how an abnormal frame ended, its async segment, its values.
///
/// The two ends of a flow arrow must not share an argument name: chrome://tracing merges
/// them into the arrow's and warns (`arg_merge_error`) at every shared one. So an async
/// segment's facts go under a name of its own, `"segment N": "how it ended"` (`"segment 1":
/// "suspend"`, with `", inferred"` when it was linked to its call by order alone); only the
/// initial segment carries `call`, only it the call's `args` and only the completion
/// `return`.
fn frame_args(tables: &Tables, f: &Held) -> Map<String, Value> {
    let mut args = Map::new();
    match (f.segment, f.kind) {
        (Some(seg), kind) => {
            if seg.index == 0 {
                args.insert("call".into(), json!(seg.call));
            }
            let how = if seg.inferred {
                format!("{}, inferred", kind.name())
            } else {
                kind.name().to_owned()
            };
            args.insert(format!("segment {}", seg.index), json!(how));
        }
        (None, EndKind::Leave) => {}
        (None, EndKind::OpenAtEnd) => {
            args.insert("open_at_end".into(), Value::Bool(true));
        }
        (None, k) => {
            args.insert("ended_by".into(), json!(k.name()));
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

impl Exporter for Chrome<'_> {
    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.held = Holder::new(self.window, process.start_ns);
        let w = &mut self.w;
        w.process = process.clone();
        w.names.clear();
        w.flow_base = w.flow_max;
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        let w = &mut self.w;
        self.held
            .drain(|thread, frames| w.write_frames(&a.tables, thread, frames))?;
        w.start()?;
        let pid = w.process.pid;
        for (idx, stats) in a.threads() {
            let tid = display_tid(&a.tables, idx);
            for (ts, count) in self.held.drops(idx) {
                let args = json!({
                    "dropped_events": count,
                    "thread_dropped_events": stats.dropped_events,
                });
                w.sep()?;
                write!(
                    w.out,
                    "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{tid},\"ts\":"
                )?;
                write_us(w.out, ts)?;
                write!(
                    w.out,
                    ",\"name\":\"events dropped\",\"cat\":\"eltrace\",\"args\":{args}}}"
                )?;
            }
        }
        // Waits for the trace writer: counters of the process, two per thread that waited.
        let offset = w.process.start_ns;
        for (idx, stats) in a.threads().filter(|(_, s)| s.waits > 0) {
            let tid = display_tid(&a.tables, idx);
            let label = thread_label(&a.tables, idx, pid);
            let times = [stats.first_ns + offset, stats.last_ns + offset];
            for (name, key, total) in [
                ("writer waits", "count", stats.waits),
                ("writer wait", "ns", stats.wait_ns),
            ] {
                for (ts, value) in times.into_iter().zip([0, total]) {
                    if self.window.clip(ts, ts).is_none() {
                        continue;
                    }
                    w.sep()?;
                    write!(w.out, "{{\"ph\":\"C\",\"pid\":{pid},\"tid\":{tid},\"ts\":")?;
                    write_us(w.out, ts)?;
                    let name = json_str(&format!("{name}: {label}"));
                    write!(w.out, ",\"name\":{name},\"args\":{{\"{key}\":{value}}}}}")?;
                }
            }
        }
        w.event(
            &json!({"ph": "M", "pid": pid, "tid": 0, "name": "process_name",
            "args": {"name": w.process.name}}),
        )?;
        for (idx, _) in a.threads() {
            let tid = display_tid(&a.tables, idx);
            let name = thread_label(&a.tables, idx, pid);
            w.event(
                &json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                "args": {"name": name}}),
            )?;
            w.event(
                &json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                "args": {"sort_index": idx.0}}),
            )?;
        }
        self.others.push(other_data(a, &w.process));
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let w = &mut self.w;
        w.start()?;
        let other = if self.others.len() == 1 {
            let mut other = self.others.pop().unwrap_or_default();
            other.insert("tool".into(), json!("eltrace"));
            other
        } else {
            let mut other = Map::new();
            other.insert("tool".into(), json!("eltrace"));
            other.insert("processes".into(), json!(std::mem::take(&mut self.others)));
            other
        };
        // No displayTimeUnit: Perfetto reads `"ns"` there as "ts and dur are in ns" (they
        // are µs, as the format says), in files under 32 MiB.
        w.out.write_all(b"\n],\"otherData\":")?;
        serde_json::to_writer(&mut *w.out, &Value::Object(other))?;
        w.out.write_all(b"}\n")?;
        w.out.flush()
    }
}

/// A process's facts for `otherData`: its command, its trace, what was lost.
fn other_data(a: &Analysis, process: &ProcessMeta) -> Map<String, Value> {
    let info = a.info();
    let mut other = Map::new();
    other.insert("pid".into(), json!(process.pid));
    other.insert("command".into(), json!(process.command));
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
    if a.totals.waits > 0 {
        other.insert("waits".into(), json!(a.totals.waits));
        other.insert("wait_ns".into(), json!(a.totals.wait_ns));
    }
    for (k, v) in &info.extra {
        other.entry(k.clone()).or_insert_with(|| json!(v));
    }
    other
}

#[cfg(test)]
mod tests {
    use super::write_us;

    /// Every time reads back as its ns, truncated (trace_processor) or rounded.
    #[test]
    fn times_read_back_exactly() {
        let mut fixed = 0;
        for ns in (0..300_000u64).chain((0..50_000).map(|i| 910_459_161 + i * 7_919)) {
            let mut text = Vec::new();
            write_us(&mut text, ns).unwrap();
            let text = String::from_utf8(text).unwrap();
            let v: f64 = text.parse().unwrap();
            assert_eq!(
                ((v * 1000.0) as u64, (v * 1000.0).round() as u64),
                (ns, ns),
                "{text}"
            );
            fixed += usize::from(text.split('.').nth(1).is_some_and(|d| d.len() > 3));
        }
        assert!(fixed > 0, "no time needed the next double");
        let mut text = Vec::new();
        write_us(&mut text, 16_194).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), "16.194000000000003");
    }
}
