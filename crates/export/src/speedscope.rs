//! speedscope's own file format, as loaded by www.speedscope.app and the `speedscope` npm
//! package. Spec: https://www.speedscope.app/file-format-schema.json (and speedscope's
//! src/lib/file-format-spec.ts).
//!
//! ```text
//! {"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"eltrace …",
//!  "name":"App.dll (pid 4242)","activeProfileIndex":0,
//!  "profiles":[{"type":"evented","name":"main (4242)","unit":"nanoseconds",
//!               "startValue":0,"endValue":9000,
//!               "events":[{"type":"O","frame":0,"at":0},…,{"type":"C","frame":0,"at":9000}]}],
//!  "shared":{"frames":[{"name":"App.Program.Main","file":"App.dll"},…]}}
//! ```
//!
//! One `evented` profile per thread, named with its tid (`main (4242)`, `.NET TP Worker
//! (4250)`; with several processes also with the process: `App.dll (pid 4242), main
//! (4242)`); every profile's events open and close frames in nesting order and are balanced
//! (frames ended by an exception, still open at the end or cut by a drop close where the
//! analysis closed them). Frames are shared: one per function name and module, with no
//! per-call data, so the segments of an async method and the calls of a function merge in
//! speedscope's aggregate views. Times are integer ns since the trace's origin (exact in a
//! JSON number up to 104 days), so equal ends stay equal — speedscope reading Chrome JSON
//! computes `ts + dur` in floating point and can mis-nest them. All profiles share one
//! `startValue` and `endValue`, so their time axes line up. Dropped events are noted in the
//! names (`main (4242), 17 events dropped`): speedscope has no marker events.
//!
//! After the threads' profiles, one `sampled` profile per process holds the **logical call
//! tree** (each async call's segments under the call that awaited it, whatever thread ran
//! them; docs/design.md "The logical call tree"): one sample per path with its exclusive time
//! as the weight, named `logical (async calls under their callers)` (not with a time window:
//! the tree is the whole trace's).
//!
//! A `--timing sampled` trace has no per-event times: instead of the threads' evented
//! profiles, one `sampled` profile per thread holds the sampler's estimates (a sample per path
//! of the thread's sampled call tree, its estimated exclusive wall time as the weight), named
//! `main (4242), sampled wall time (estimated)`. `--timing none` traces are refused by the
//! caller.
//!
//! A profile's events must be contiguous in the file, so each thread's events are kept
//! (varint-packed, a few bytes each) until the end, those of every process; the file is
//! written by [`Exporter::finish`], `shared` last.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use eltrace_analysis::{Analysis, Frame, FrameSink, FunctionIdx, Tables, ThreadIdx};
use serde_json::{Value, json};

use crate::labels::{ProcessMeta, thread_label};
use crate::nest::{Held, Holder, Step, walk};
use crate::{ExportOptions, Exporter, TimeWindow};

/// A sampled profile: (process index, name, stacks of frames root first, weights in ns).
type SampledProfile = (usize, String, Vec<Vec<u32>>, Vec<u64>);

/// The name of a process's logical call tree profile.
const LOGICAL_NAME: &str = "logical (async calls under their callers)";
/// What a `--timing sampled` trace's profile of a thread is, after the thread's name.
const SAMPLED_NAME: &str = "sampled wall time (estimated)";

/// The speedscope exporter.
pub struct Speedscope<'w> {
    out: &'w mut dyn Write,
    window: TimeWindow,
    /// The current process's frames until their root frames close, and its threads' events.
    held: Holder,
    threads: HashMap<ThreadIdx, Events>,
    frames: Frames,
    /// The threads of the processes ended so far, in order.
    profiles: Vec<Profile>,
    /// Each process so far and its events dropped.
    processes: Vec<(ProcessMeta, u64)>,
    /// Sampled profiles: each process's logical call tree, or a `--timing sampled` trace's
    /// estimates, as samples: (process, name, stacks of frames, weights in ns).
    sampled: Vec<SampledProfile>,
}

/// A thread's profile: its process (index in `processes`), name and events.
struct Profile {
    process: usize,
    name: String,
    events: Events,
}

/// The shared frames: one per (name, module).
#[derive(Default)]
struct Frames {
    /// The frame of each function of the current process.
    of_func: HashMap<FunctionIdx, u32>,
    by_name: HashMap<(String, String), u32>,
    list: Vec<(String, String)>,
}

impl Frames {
    fn index(&mut self, tables: &Tables, func: FunctionIdx) -> u32 {
        if let Some(&i) = self.of_func.get(&func) {
            return i;
        }
        let key = (
            tables.functions.name(func),
            tables.functions.module(func).to_owned(),
        );
        let next = self.list.len() as u32;
        let i = *self.by_name.entry(key.clone()).or_insert_with(|| {
            self.list.push(key);
            next
        });
        self.of_func.insert(func, i);
        i
    }
}

/// A thread's events, packed: per event `varint(frame << 1 | close)`, `varint(at - last at)`.
#[derive(Default)]
struct Events {
    packed: Vec<u8>,
    first: Option<u64>,
    last: u64,
    count: u64,
    /// Time covered by root frames (to pick the profile shown first).
    root_ns: u64,
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn get_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

impl Events {
    fn push(&mut self, frame: u32, close: bool, at: u64) {
        if self.first.is_none() {
            self.first = Some(at);
            self.last = at;
        }
        put_varint(&mut self.packed, u64::from(frame) << 1 | u64::from(close));
        put_varint(&mut self.packed, at - self.last);
        self.last = at;
        self.count += 1;
    }

    /// The events as (frame, close, at).
    fn iter(&self) -> impl Iterator<Item = (u32, bool, u64)> + '_ {
        let mut pos = 0;
        let mut at = self.first.unwrap_or(0);
        std::iter::from_fn(move || {
            if pos >= self.packed.len() {
                return None;
            }
            let code = get_varint(&self.packed, &mut pos);
            at += get_varint(&self.packed, &mut pos);
            Some(((code >> 1) as u32, code & 1 == 1, at))
        })
    }
}

impl<'w> Speedscope<'w> {
    pub fn new(out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Speedscope {
            out,
            window: opts.window,
            held: Holder::new(opts.window, 0),
            threads: HashMap::new(),
            frames: Frames::default(),
            profiles: Vec::new(),
            sampled: Vec::new(),
            processes: Vec::new(),
        }
    }
}

/// Appends a thread's sorted frames to its events.
fn add_frames(
    frames: &mut Frames,
    events: &mut HashMap<ThreadIdx, Events>,
    tables: &Tables,
    thread: ThreadIdx,
    held: &[Held],
) {
    let ev = events.entry(thread).or_default();
    walk(held, |step| -> Result<(), ()> {
        match step {
            Step::Open(f) => ev.push(frames.index(tables, f.func), false, f.start),
            Step::Close(f) => {
                ev.push(frames.index(tables, f.func), true, f.end);
                if f.depth == 0 {
                    ev.root_ns += f.end - f.start;
                }
            }
        }
        Ok(())
    })
    .unwrap_or(());
}

fn dropped_note(n: u64) -> String {
    match n {
        0 => String::new(),
        1 => ", 1 event dropped".to_owned(),
        n => format!(", {n} events dropped"),
    }
}

impl FrameSink for Speedscope<'_> {
    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        let (frames, threads) = (&mut self.frames, &mut self.threads);
        self.held.frame(thread, frame, |held| -> io::Result<()> {
            add_frames(frames, threads, tables, thread, held);
            Ok(())
        })
    }
}

impl Exporter for Speedscope<'_> {
    fn configure(&self, opts: &mut eltrace_analysis::Options) {
        opts.logical_tree = true;
    }

    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.held = Holder::new(self.window, process.start_ns);
        self.frames.of_func.clear();
        self.processes.push((process.clone(), 0));
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        let (frames, threads) = (&mut self.frames, &mut self.threads);
        self.held.drain(|thread, held| -> io::Result<()> {
            add_frames(frames, threads, &a.tables, thread, held);
            Ok(())
        })?;
        let process = self.processes.len() - 1;
        self.processes[process].1 = a.dropped_events();
        if !a.has_event_times() {
            // A `--timing sampled` trace (the caller refuses `none`): its frames' spans are
            // ordering times, not time; the sampler's estimates make a sampled profile per
            // thread.
            self.threads.clear();
            if let Some(sampled) = &a.sampled {
                let nodes = sampled.nodes();
                let mut by_thread: BTreeMap<ThreadIdx, (Vec<Vec<u32>>, Vec<u64>)> = BTreeMap::new();
                for n in nodes.iter().filter(|n| n.stat.exclusive_ns > 0) {
                    let mut stack = vec![self.frames.index(&a.tables, n.func)];
                    let mut up = n.parent;
                    while let Some(p) = up.and_then(|i| nodes.get(i as usize)) {
                        stack.push(self.frames.index(&a.tables, p.func));
                        up = p.parent;
                    }
                    stack.reverse();
                    let (stacks, weights) = by_thread.entry(n.thread).or_default();
                    stacks.push(stack);
                    weights.push(n.stat.exclusive_ns);
                }
                let pid = self.processes[process].0.pid;
                for (t, (stacks, weights)) in by_thread {
                    let name = format!("{}, {SAMPLED_NAME}", thread_label(&a.tables, t, pid));
                    self.sampled.push((process, name, stacks, weights));
                }
            }
            return Ok(());
        }
        let mut order: Vec<ThreadIdx> = self
            .threads
            .iter()
            .filter(|(_, e)| e.count > 0)
            .map(|(t, _)| *t)
            .collect();
        order.sort_unstable();
        for t in order {
            let dropped = a.thread_stats(t).map_or(0, |s| s.dropped_events);
            self.profiles.push(Profile {
                process,
                name: format!(
                    "{}{}",
                    thread_label(&a.tables, t, self.processes[process].0.pid),
                    dropped_note(dropped)
                ),
                events: self.threads.remove(&t).unwrap_or_default(),
            });
        }
        self.threads.clear();
        // Not for a time window: the tree holds the whole trace.
        if let Some(tree) = a.logical_tree().filter(|_| self.window.is_all()) {
            // Each path with time of its own, as the stack of its frames (root first).
            let (mut stacks, mut weights) = (Vec::new(), Vec::new());
            for (_, n) in tree.nodes() {
                if n.exclusive_ns == 0 {
                    continue;
                }
                let mut stack = vec![self.frames.index(&a.tables, n.func)];
                let mut up = n.parent;
                while let Some(p) = up.and_then(|id| tree.get(id)) {
                    stack.push(self.frames.index(&a.tables, p.func));
                    up = p.parent;
                }
                stack.reverse();
                stacks.push(stack);
                weights.push(n.exclusive_ns);
            }
            if !stacks.is_empty() {
                self.sampled
                    .push((process, LOGICAL_NAME.to_owned(), stacks, weights));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let profiles = &self.profiles;
        let start = profiles
            .iter()
            .filter_map(|p| p.events.first)
            .min()
            .unwrap_or(0);
        let end = profiles.iter().map(|p| p.events.last).max().unwrap_or(0);
        let active = profiles
            .iter()
            .enumerate()
            .max_by_key(|(i, p)| (p.events.root_ns, std::cmp::Reverse(*i)))
            .map_or(0, |(i, _)| i);
        let several = self.processes.len() > 1;
        let dropped: u64 = self.processes.iter().map(|p| p.1).sum();
        let title = if several {
            let names: Vec<String> = self.processes.iter().map(|p| p.0.label()).collect();
            format!("{}{}", names.join(", "), dropped_note(dropped))
        } else {
            let label = self.processes.first().map(|p| p.0.label());
            format!("{}{}", label.unwrap_or_default(), dropped_note(dropped))
        };
        let out = &mut *self.out;
        write!(
            out,
            "{{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\
             \"exporter\":\"eltrace {}\",\"name\":{},\"activeProfileIndex\":{active},\
             \"profiles\":[",
            env!("CARGO_PKG_VERSION"),
            Value::String(title)
        )?;
        for (i, p) in profiles.iter().enumerate() {
            let name = if several {
                format!("{}, {}", self.processes[p.process].0.label(), p.name)
            } else {
                p.name.clone()
            };
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(
                out,
                "\n{{\"type\":\"evented\",\"name\":{},\"unit\":\"nanoseconds\",\
                 \"startValue\":{start},\"endValue\":{end},\"events\":[",
                Value::String(name)
            )?;
            for (j, (frame, close, at)) in p.events.iter().enumerate() {
                let sep = if j == 0 { "\n" } else { ",\n" };
                let ty = if close { 'C' } else { 'O' };
                write!(
                    out,
                    "{sep}{{\"type\":\"{ty}\",\"frame\":{frame},\"at\":{at}}}"
                )?;
            }
            out.write_all(b"]}")?;
        }
        for (i, (process, what, stacks, weights)) in self.sampled.iter().enumerate() {
            let name = if several {
                format!("{}, {what}", self.processes[*process].0.label())
            } else {
                what.to_string()
            };
            if i > 0 || !profiles.is_empty() {
                out.write_all(b",")?;
            }
            let total: u64 = weights.iter().sum();
            write!(
                out,
                "\n{{\"type\":\"sampled\",\"name\":{},\"unit\":\"nanoseconds\",\
                 \"startValue\":0,\"endValue\":{total},\"samples\":{},\"weights\":{}}}",
                Value::String(name),
                json!(stacks),
                json!(weights)
            )?;
        }
        out.write_all(b"],\n\"shared\":{\"frames\":[")?;
        for (i, (name, module)) in self.frames.list.iter().enumerate() {
            let sep = if i == 0 { "\n" } else { ",\n" };
            let frame = if module.is_empty() {
                json!({ "name": name })
            } else {
                json!({ "name": name, "file": module })
            };
            write!(out, "{sep}{frame}")?;
        }
        out.write_all(b"]}}\n")?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::Events;

    #[test]
    fn events_pack_and_unpack() {
        let mut e = Events::default();
        let evs = [
            (0, false, 5),
            (300, false, 5),
            (300, true, 1 << 40),
            (0, true, (1 << 40) + 1),
        ];
        for (f, c, at) in evs {
            e.push(f, c, at);
        }
        assert_eq!(e.iter().collect::<Vec<_>>(), evs);
    }
}
