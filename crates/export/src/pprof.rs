//! pprof's `profile.proto`, gzipped (`trace.pb.gz`): what `go tool pprof`, continuous
//! profiling backends (Pyroscope, Parca, Cloud Profiler, Datadog) and speedscope read.
//! Spec: https://github.com/google/pprof/blob/main/proto/profile.proto.
//!
//! One sample per distinct call path and thread: its locations (leaf first, one location per
//! function, one function per method with its module as file name, named as `report`'s rows:
//! an async method's thunk and variant are one), and its values: the number of calls of the
//! path's last frame (`calls/count`: an async method's resumed segments are not calls, nor the
//! variant a thunk enters) and, for a trace with times,
//! their exclusive time (`wall/nanoseconds`), so that pprof's flat value of a function is its
//! exclusive time and its cumulative value its inclusive time. Labels: `thread` (the thread's
//! name and tid) and `process` (program and pid). A `--timing sampled` trace's wall time is
//! the sampler's estimate per path of each thread's sampled call tree (samples of their own,
//! with no calls, labelled with the thread); a `--timing none` trace gives `calls/count` only. With several processes every process's samples go into
//! one profile.
//!
//! A time window keeps the part of each frame inside it, as the folded stacks do. The
//! profile's time is when the earliest process began, its duration the traces' span.

use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::rows::{nested_pair, row_name};
use eltrace_analysis::{
    Analysis, CallNodeId, Frame, FrameSink, FunctionIdx, Options, Tables, ThreadIdx,
};
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::labels::{ProcessMeta, thread_label};
use crate::proto::{bytes, message, packed, uint};
use crate::window::SelfTimes;
use crate::{ExportOptions, Exporter, TimeWindow};

/// The pprof exporter.
pub struct Pprof<'w> {
    out: &'w mut dyn Write,
    window: TimeWindow,
    process: ProcessMeta,
    /// (thread, call-tree node) → (exclusive ns in the window, calls) of the current process.
    values: HashMap<(u32, u32), (u64, u64)>,
    /// The frames' own times inside the window.
    self_times: SelfTimes,
    /// Every process so far has wall times: per-event times, or the sampler's estimates.
    timed: bool,
    /// The profile being built.
    strings: Vec<String>,
    string_ids: HashMap<String, u64>,
    /// (name, module) → function id (= its location id).
    functions: HashMap<(String, String), u64>,
    function_list: Vec<(u64, u64, u64)>,
    /// Samples: locations leaf first, calls, exclusive ns, thread and process label strings.
    samples: Vec<(Vec<u64>, u64, u64, u64, u64)>,
    first_ns: Option<u64>,
    last_ns: u64,
    /// When the earliest process began (Unix time, ns), if a trace says.
    unix_start: Option<u64>,
}

impl<'w> Pprof<'w> {
    pub fn new(out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Pprof {
            out,
            window: opts.window,
            process: ProcessMeta::from_info(&Default::default()),
            values: HashMap::new(),
            self_times: SelfTimes::default(),
            timed: true,
            strings: vec![String::new()],
            string_ids: HashMap::from([(String::new(), 0)]),
            functions: HashMap::new(),
            function_list: Vec::new(),
            samples: Vec::new(),
            first_ns: None,
            last_ns: 0,
            unix_start: None,
        }
    }

    fn string(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    /// The function of `f`'s row in `report` (a method's thunk and variant are one).
    fn function(&mut self, a: &Analysis, f: FunctionIdx) -> u64 {
        let name = row_name(a, f);
        let module = a.tables.functions.module(f).to_string();
        if let Some(&id) = self.functions.get(&(name.clone(), module.clone())) {
            return id;
        }
        let id = self.function_list.len() as u64 + 1;
        let (n, m) = (self.string(&name), self.string(&module));
        self.function_list.push((id, n, m));
        self.functions.insert((name, module), id);
        id
    }
}

impl FrameSink for Pprof<'_> {
    fn frame(&mut self, _: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        let offset = self.process.start_ns;
        let Some(own) = self.self_times.close(&self.window, offset, thread, frame) else {
            return Ok(());
        };
        let Some(node) = frame.node else {
            return Ok(());
        };
        let v = self.values.entry((thread.0, node.0)).or_default();
        v.0 += own;
        // An async method's resumed segments are not calls.
        if frame.segment.is_none_or(|s| s.index == 0) {
            v.1 += 1;
        }
        Ok(())
    }
}

impl Exporter for Pprof<'_> {
    fn configure(&self, opts: &mut Options) {
        opts.call_tree = true;
    }

    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.process = process.clone();
        self.values.clear();
        self.self_times.clear();
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        self.timed &= a.has_event_times() || a.sampled.is_some();
        let unix = a.tables.info.start_unix_ns;
        if unix > 0 {
            self.unix_start = Some(self.unix_start.map_or(unix, |u| u.min(unix)));
        }
        let (first, last) = (a.totals.first_ns, a.totals.last_ns);
        let offset = self.process.start_ns;
        self.first_ns = Some(
            self.first_ns
                .map_or(first + offset, |f| f.min(first + offset)),
        );
        self.last_ns = self.last_ns.max(last + offset);
        let process = self.string(&self.process.label());
        if let Some(sampled) = &a.sampled {
            // The sampler's estimates: a sample per node of each thread's sampled tree with
            // its estimated exclusive wall time and no calls; the calls come from the exact
            // tree below, with no time.
            let nodes = sampled.nodes();
            for node in nodes.iter().filter(|n| n.stat.exclusive_ns > 0) {
                let label = thread_label(&a.tables, node.thread, self.process.pid);
                let label = self.string(&label);
                let mut locations = vec![self.function(a, node.func)];
                let mut at = node.parent;
                while let Some(n) = at.and_then(|i| nodes.get(i as usize)) {
                    locations.push(self.function(a, n.func));
                    at = n.parent;
                }
                self.samples
                    .push((locations, 0, node.stat.exclusive_ns, label, process));
            }
        }
        let exact = a.has_event_times();
        let Some(tree) = a.call_tree() else {
            return Ok(());
        };
        let mut keys: Vec<(u32, u32)> = self.values.keys().copied().collect();
        keys.sort_unstable();
        let mut labels: HashMap<u32, u64> = HashMap::new();
        for (thread, node) in keys {
            let (excl, calls) = self.values[&(thread, node)];
            let label = match labels.get(&thread) {
                Some(&l) => l,
                None => {
                    let l = thread_label(&a.tables, ThreadIdx(thread), self.process.pid);
                    let l = self.string(&l);
                    labels.insert(thread, l);
                    l
                }
            };
            let mut locations = Vec::new();
            let mut at = Some(CallNodeId(node));
            let leaf = tree.get(CallNodeId(node)).map(|n| (n.func, n.parent));
            while let Some(n) = at.and_then(|id| tree.get(id)) {
                locations.push(self.function(a, n.func));
                at = n.parent;
            }
            // The frame a thunk enters its variant by (or a variant the Task-returning code
            // by) is the same call as the frame below it: one row per method, as in `report`.
            let nested = leaf.is_some_and(|(f, parent)| {
                parent
                    .and_then(|p| tree.get(p))
                    .is_some_and(|p| nested_pair(a, p.func, f))
            });
            let calls = if nested { 0 } else { calls };
            let excl = if exact { excl } else { 0 };
            self.samples.push((locations, calls, excl, label, process));
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let mut p = Vec::new();
        let (calls, count) = (self.string("calls"), self.string("count"));
        let (wall, ns) = (self.string("wall"), self.string("nanoseconds"));
        let (thread_key, process_key) = (self.string("thread"), self.string("process"));
        message(&mut p, 1, |m| {
            uint(m, 1, calls);
            uint(m, 2, count);
        });
        if self.timed {
            message(&mut p, 1, |m| {
                uint(m, 1, wall);
                uint(m, 2, ns);
            });
        }
        for (locations, n, excl, thread, process) in &self.samples {
            message(&mut p, 2, |m| {
                packed(m, 1, locations.iter().copied());
                if self.timed {
                    packed(m, 2, [*n, *excl]);
                } else {
                    packed(m, 2, [*n]);
                }
                for (k, v) in [(thread_key, *thread), (process_key, *process)] {
                    message(m, 3, |l| {
                        uint(l, 1, k);
                        uint(l, 2, v);
                    });
                }
            });
        }
        // One location per function (the same id), no addresses.
        for &(id, name, file) in &self.function_list {
            message(&mut p, 4, |m| {
                uint(m, 1, id);
                message(m, 4, |l| uint(l, 1, id));
            });
            message(&mut p, 5, |m| {
                uint(m, 1, id);
                uint(m, 2, name);
                uint(m, 3, name);
                uint(m, 4, file);
            });
        }
        for s in &self.strings {
            bytes(&mut p, 6, s.as_bytes());
        }
        if let Some(unix) = self.unix_start {
            uint(&mut p, 9, unix);
        }
        if let Some(first) = self.first_ns {
            uint(&mut p, 10, self.last_ns.saturating_sub(first));
        }
        let period_type = if self.timed {
            (wall, ns)
        } else {
            (calls, count)
        };
        message(&mut p, 11, |m| {
            uint(m, 1, period_type.0);
            uint(m, 2, period_type.1);
        });
        let mut gz = GzEncoder::new(&mut *self.out, Compression::default());
        gz.write_all(&p)?;
        gz.finish()?.flush()
    }
}
