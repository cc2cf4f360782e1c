//! Synthetic traces for tests (cargo feature `testing`): [`TraceBuilder`] writes a trace in
//! memory record by record, in the order of its calls, so a test states its functions, threads
//! and events as short tables and gets the bytes a profiler would have written.
//!
//! Enable it from a crate's tests only:
//!
//! ```toml
//! [dev-dependencies]
//! eltrace-trace = { workspace = true, features = ["testing"] }
//! ```
//!
//! ```
//! use eltrace_trace::EventKind::{Enter, Leave};
//! use eltrace_trace::testing::{Function, TraceBuilder};
//! use eltrace_trace::{FunctionFlags, TraceInfo};
//!
//! // Main (function 0) calls Work (1) once on thread 0 (OS tid 1001, named "Main").
//! let bytes = TraceBuilder::new(TraceInfo::new(4242))
//!     .functions([("App.dll", "App.Program", "Main"), ("App.dll", "App.Program", "Work")])
//!     .function(
//!         Function::new("App.dll", "App.Program", "Later")
//!             .token(0x0600_0003)
//!             .impl_flags(0x2000)
//!             .flags(FunctionFlags::HOOKED | FunctionFlags::ASYNC_THUNK),
//!     )
//!     .named_thread(0, 1001, 1, "Main")
//!     .events(0, &[(0, Enter, 0), (10, Enter, 1), (20, Leave, 1), (30, Leave, 0)])
//!     .end(30);
//! # let mut r = eltrace_trace::TraceReader::new(&bytes[..]).unwrap();
//! # while r.next_record().unwrap().is_some() {}
//! # assert!(!r.truncated());
//! ```
//!
//! [`traces`] holds named traces built this way (the export tests' cases), for any crate's
//! tests.

pub mod traces;

use crate::model::{
    EndReason, EndRecord, Event, EventKind, FunctionFlags, FunctionIdx, FunctionRecord, ThreadIdx,
    ThreadRecord, TraceInfo, ValueRecord, ValueStatus,
};
use crate::protocol::info_key;
use crate::writer::TraceWriter;

/// The INFO most synthetic traces carry: process 4242, ns ticks, runtime `CoreCLR test`,
/// command `dotnet App.dll`, hook mode `slow-path`.
pub fn app_info() -> TraceInfo {
    TraceInfo {
        runtime: "CoreCLR test".into(),
        command: "dotnet App.dll".into(),
        hook_mode: "slow-path".into(),
        ..TraceInfo::new(4242)
    }
}

/// One entry for the function table: its names and, for runtime-async methods and the like,
/// its token, implementation flags and [`FunctionFlags`] bits (all 0 unless set). A
/// `(module, type_name, method)` tuple converts into one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Function<'a> {
    pub module: &'a str,
    pub type_name: &'a str,
    pub method: &'a str,
    pub token: u32,
    pub impl_flags: u32,
    /// [`FunctionFlags`] bits, e.g. `FunctionFlags::HOOKED | FunctionFlags::ASYNC_VARIANT`.
    pub flags: u32,
    /// A kickoff's state machine type ([`FunctionRecord::state_machine`]), `""` for none.
    pub state_machine: &'a str,
}

impl<'a> Function<'a> {
    pub const fn new(module: &'a str, type_name: &'a str, method: &'a str) -> Self {
        Function {
            module,
            type_name,
            method,
            token: 0,
            impl_flags: 0,
            flags: 0,
            state_machine: "",
        }
    }

    /// The metadata token (`0x06……`).
    pub const fn token(self, token: u32) -> Self {
        Function { token, ..self }
    }

    /// The method's implementation flags ([`IMPL_ASYNC`](crate::protocol::IMPL_ASYNC):
    /// runtime async).
    pub const fn impl_flags(self, impl_flags: u32) -> Self {
        Function { impl_flags, ..self }
    }

    /// The record's [`FunctionFlags`] bits.
    pub const fn flags(self, flags: u32) -> Self {
        Function { flags, ..self }
    }

    /// A kickoff's state machine type (`Ns.T+<Work>d__3`).
    pub const fn state_machine(self, state_machine: &'a str) -> Self {
        Function {
            state_machine,
            ..self
        }
    }
}

impl<'a> From<(&'a str, &'a str, &'a str)> for Function<'a> {
    fn from((module, type_name, method): (&'a str, &'a str, &'a str)) -> Self {
        Function::new(module, type_name, method)
    }
}

/// [`app_info`] of a trace recorded with `--timing TIMING` (`none`, `sampled`) at `hz`.
pub fn timed_info(timing: &str, hz: u64) -> TraceInfo {
    let mut info = app_info();
    info.extra.push((info_key::TIMING.into(), timing.into()));
    info.extra
        .push((info_key::SAMPLE_HZ.into(), hz.to_string()));
    info
}

/// Writes a trace into memory. Every call writes its records at once, in call order, so a
/// test controls the order of the chunks (a thread's name after its first events, a value
/// before the event that refers to it). Panics if writing fails, which a `Vec` never does.
pub struct TraceBuilder {
    w: TraceWriter<Vec<u8>>,
    functions: u32,
    ts_offset: u64,
}

impl TraceBuilder {
    /// Writes the header and the INFO chunk of `info` (see [`app_info`] for a usual one).
    pub fn new(info: TraceInfo) -> Self {
        TraceBuilder {
            w: TraceWriter::new(Vec::new(), &info).expect("a Vec takes any write"),
            functions: 0,
            ts_offset: 0,
        }
    }

    /// Adds `f` as the next function: function indices count from 0 in the order added.
    pub fn function<'f>(mut self, f: impl Into<Function<'f>>) -> Self {
        let f = f.into();
        let record = FunctionRecord {
            module: f.module.into(),
            type_name: f.type_name.into(),
            method: f.method.into(),
            token: f.token,
            impl_flags: f.impl_flags,
            flags: FunctionFlags(f.flags),
            state_machine: f.state_machine.into(),
            ..FunctionRecord::new(FunctionIdx(self.functions))
        };
        self.w.write_function(&record).expect("write function");
        self.functions += 1;
        self
    }

    /// Adds each of `fs` as the next function, in order.
    pub fn functions<'f, F: Into<Function<'f>>>(self, fs: impl IntoIterator<Item = F>) -> Self {
        fs.into_iter().fold(self, Self::function)
    }

    /// Adds one function per name in `methods`, all of `type_name` in `module`.
    pub fn methods(self, module: &str, type_name: &str, methods: &[&str]) -> Self {
        self.functions(methods.iter().map(|&m| (module, type_name, m)))
    }

    /// Adds (or, for an index already written, updates) thread `idx` with OS tid `os_tid`,
    /// no managed id and no name.
    pub fn thread(self, idx: u32, os_tid: u64) -> Self {
        self.thread_record(ThreadRecord::new(ThreadIdx(idx), os_tid))
    }

    /// Adds (or updates) thread `idx` with its managed id and name.
    pub fn named_thread(self, idx: u32, os_tid: u64, managed_id: u64, name: &str) -> Self {
        self.thread_record(ThreadRecord {
            managed_id,
            name: name.into(),
            ..ThreadRecord::new(ThreadIdx(idx), os_tid)
        })
    }

    /// Writes a thread record as given.
    pub fn thread_record(mut self, t: ThreadRecord) -> Self {
        self.w.write_thread(&t).expect("write thread");
        self
    }

    /// From now on, adds `ticks` to the timestamp of every event written (events stated
    /// relative to the INFO's `start_ticks`). The End record's timestamp is not moved.
    pub fn ts_offset(mut self, ticks: u64) -> Self {
        self.ts_offset = ticks;
        self
    }

    /// The next events of `thread` as `(ts, kind, function index)`, stack pointer 0: one
    /// EVENTS chunk (more if there are more than a chunk holds; none if `events` is empty).
    pub fn events(self, thread: u32, events: &[(u64, EventKind, u32)]) -> Self {
        let events: Vec<_> = events.iter().map(|&(ts, k, f)| (ts, k, f, 0)).collect();
        self.events_sp(thread, &events)
    }

    /// The next events of `thread` as `(ts, kind, function index, stack pointer)`. For a
    /// Value event the "function index" is the id of a value written by [`Self::value`].
    pub fn events_sp(mut self, thread: u32, events: &[(u64, EventKind, u32, u64)]) -> Self {
        let events: Vec<Event> = events
            .iter()
            .map(|&(ts, kind, func, sp)| Event {
                ts: ts + self.ts_offset,
                kind,
                func: FunctionIdx(func),
                sp,
            })
            .collect();
        self.w
            .write_events(ThreadIdx(thread), &events)
            .expect("write events");
        self
    }

    /// Samples (timing `sampled`) as `(thread, index, ts, cpu_ns)`: one SAMPLES chunk.
    pub fn samples(mut self, samples: &[(u32, u64, u64, Option<u64>)]) -> Self {
        let samples: Vec<crate::Sample> = samples
            .iter()
            .map(|&(thread, index, ts, cpu_ns)| crate::Sample {
                thread: ThreadIdx(thread),
                index,
                ts: ts + self.ts_offset,
                cpu_ns,
            })
            .collect();
        self.w.write_samples(&samples).expect("write samples");
        self
    }

    /// `count` events of `thread` were lost here.
    pub fn dropped(mut self, thread: u32, count: u64) -> Self {
        self.w
            .write_dropped(ThreadIdx(thread), count)
            .expect("write dropped");
        self
    }

    /// The totals of `thread`'s waits for the writer so far (a WAITS record).
    pub fn waits(mut self, thread: u32, waits: u64, wait_ns: u64) -> Self {
        self.w
            .write_waits(ThreadIdx(thread), waits, wait_ns)
            .expect("write waits");
        self
    }

    /// A captured value that Value events refer to by `id` (dense from 0, in file order).
    pub fn value(mut self, id: u32, status: ValueStatus, text: &str) -> Self {
        let v = ValueRecord {
            id,
            status,
            text: text.into(),
        };
        self.w.write_value(&v).expect("write value");
        self
    }

    /// A complete trace: an End record (reason Shutdown, tick `ts`, zero totals).
    pub fn end(self, ts: u64) -> Vec<u8> {
        self.end_record(EndRecord {
            reason: EndReason::Shutdown,
            ts,
            ..EndRecord::default()
        })
    }

    /// A complete trace ending with `end` as given (another reason, totals).
    pub fn end_record(mut self, end: EndRecord) -> Vec<u8> {
        self.w.write_end(&end).expect("write end");
        self.w.into_inner()
    }

    /// A trace cut short: no End record (it reads as truncated; cut the bytes further to
    /// end it inside a chunk).
    pub fn cut(self) -> Vec<u8> {
        self.w.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Record, TraceReader};
    use EventKind::{Enter, Leave, Value};

    fn records(bytes: &[u8]) -> (Vec<Record>, bool) {
        let mut r = TraceReader::new(bytes).unwrap();
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push(rec);
        }
        (out, r.truncated())
    }

    #[test]
    fn writes_records_in_call_order() {
        let info = TraceInfo {
            start_ticks: 1_000,
            ..app_info()
        };
        let bytes = TraceBuilder::new(info.clone())
            .functions([("App.dll", "A", "F")])
            .function(
                Function::new("Lib.dll", "B", "G")
                    .token(6)
                    .impl_flags(0x2000)
                    .flags(4),
            )
            .value(0, ValueStatus::Failed, "0x8000")
            .thread(1, 77)
            .ts_offset(1_000)
            .events_sp(1, &[(5, Enter, 1, 0x90), (5, Value, 0, 0x90)])
            .dropped(1, 3)
            .events(1, &[(9, Leave, 1)])
            .named_thread(1, 77, 2, "Worker")
            .end(50);
        let (recs, truncated) = records(&bytes);
        assert!(!truncated);
        let ev = |ts, kind, f, sp| Event {
            ts,
            kind,
            func: FunctionIdx(f),
            sp,
        };
        assert_eq!(
            recs,
            [
                Record::Info(info),
                Record::Function(FunctionRecord {
                    module: "App.dll".into(),
                    type_name: "A".into(),
                    method: "F".into(),
                    ..FunctionRecord::new(FunctionIdx(0))
                }),
                Record::Function(FunctionRecord {
                    module: "Lib.dll".into(),
                    type_name: "B".into(),
                    method: "G".into(),
                    token: 6,
                    impl_flags: 0x2000,
                    flags: FunctionFlags(4),
                    ..FunctionRecord::new(FunctionIdx(1))
                }),
                Record::Value(ValueRecord {
                    id: 0,
                    status: ValueStatus::Failed,
                    text: "0x8000".into()
                }),
                Record::Thread(ThreadRecord::new(ThreadIdx(1), 77)),
                Record::Events {
                    thread: ThreadIdx(1),
                    events: vec![ev(1_005, Enter, 1, 0x90), ev(1_005, Value, 0, 0x90)]
                },
                Record::Dropped {
                    thread: ThreadIdx(1),
                    count: 3
                },
                Record::Events {
                    thread: ThreadIdx(1),
                    events: vec![ev(1_009, Leave, 1, 0)]
                },
                Record::Thread(ThreadRecord {
                    managed_id: 2,
                    name: "Worker".into(),
                    ..ThreadRecord::new(ThreadIdx(1), 77)
                }),
                Record::End(EndRecord {
                    reason: EndReason::Shutdown,
                    ts: 50,
                    ..EndRecord::default()
                }),
            ]
        );
    }

    #[test]
    fn methods_end_record_and_cut() {
        let b = || TraceBuilder::new(TraceInfo::new(7)).methods("App.dll", "Ns.T", &["A", "B"]);
        let (recs, truncated) = records(&b().cut());
        assert!(truncated);
        let names: Vec<String> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Function(f) => Some(format!("{}:{}", f.idx.0, f.full_name())),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["0:Ns.T.A", "1:Ns.T.B"]);
        let end = EndRecord {
            reason: EndReason::Abort,
            ts: 9,
            events_written: 25,
            events_dropped: 1,
            internal_errors: 2,
        };
        let (recs, truncated) = records(&b().events(0, &[]).end_record(end.clone()));
        assert!(!truncated);
        assert_eq!(recs.last(), Some(&Record::End(end)));
        // An empty event list writes no chunk.
        assert_eq!(recs.len(), 4);
    }
}
