//! Builds synthetic traces in memory with `TraceWriter` and reads results back: the one
//! place for the helpers every test module uses.

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
    TraceInfo, TraceWriter,
};

use crate::*;

/// Builds a trace in memory.
pub struct B {
    pub w: TraceWriter<Vec<u8>>,
}

impl B {
    pub fn new(funcs: &[&str]) -> Self {
        Self::with_info(funcs, TraceInfo::new(7))
    }
    pub fn with_info(funcs: &[&str], info: TraceInfo) -> Self {
        let mut w = TraceWriter::new(Vec::new(), &info).unwrap();
        for (i, f) in funcs.iter().enumerate() {
            w.write_function(&FunctionRecord {
                module: "App.dll".into(),
                type_name: "Ns.T".into(),
                method: (*f).into(),
                ..FunctionRecord::new(FunctionIdx(i as u32))
            })
            .unwrap();
        }
        B { w }
    }
    pub fn thread(mut self, idx: u32, tid: u64) -> Self {
        self.w
            .write_thread(&ThreadRecord::new(ThreadIdx(idx), tid))
            .unwrap();
        self
    }
    pub fn ev(mut self, thread: u32, evs: &[(u64, EventKind, u32)]) -> Self {
        let evs: Vec<Event> = evs
            .iter()
            .map(|&(ts, kind, f)| Event {
                ts,
                kind,
                func: FunctionIdx(f),
                sp: 0,
            })
            .collect();
        self.w.write_events(ThreadIdx(thread), &evs).unwrap();
        self
    }
    pub fn dropped(mut self, thread: u32, n: u64) -> Self {
        self.w.write_dropped(ThreadIdx(thread), n).unwrap();
        self
    }
    pub fn end(mut self, ts: u64) -> Vec<u8> {
        self.w
            .write_end(&EndRecord {
                reason: EndReason::Shutdown,
                ts,
                ..EndRecord::default()
            })
            .unwrap();
        self.w.into_inner()
    }
    pub fn cut(self) -> Vec<u8> {
        self.w.into_inner()
    }
}

pub fn run(bytes: &[u8]) -> Analysis {
    analyze(bytes, &Options::default()).unwrap()
}

pub fn fs(a: &Analysis, f: u32) -> FunctionStats {
    *a.function_stats(FunctionIdx(f)).unwrap()
}

pub fn edge(a: &Analysis, caller: Option<u32>, callee: u32) -> EdgeStats {
    a.edges()
        .into_iter()
        .find(|(c, f, _)| *c == caller.map(FunctionIdx) && f.0 == callee)
        .map(|(_, _, s)| s)
        .unwrap()
}

/// Records every frame.
#[derive(Default)]
pub struct Collect(pub Vec<(ThreadIdx, Frame)>);

impl FrameSink for Collect {
    fn frame(&mut self, _: &Tables, t: ThreadIdx, f: &Frame) -> std::io::Result<()> {
        self.0.push((t, *f));
        Ok(())
    }
}

/// Writes one thread record and the events `(ts, kind, func, sp)` per thread (tid 100 +
/// index), then the End record at `end`; returns the trace.
pub fn threads_and_end(
    mut w: TraceWriter<Vec<u8>>,
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    for (t, evs) in threads.iter().enumerate() {
        w.write_thread(&ThreadRecord::new(ThreadIdx(t as u32), 100 + t as u64))
            .unwrap();
        let evs: Vec<Event> = evs
            .iter()
            .map(|&(ts, kind, f, sp)| Event {
                ts,
                kind,
                func: FunctionIdx(f),
                sp,
            })
            .collect();
        w.write_events(ThreadIdx(t as u32), &evs).unwrap();
    }
    w.write_end(&EndRecord {
        reason: EndReason::Shutdown,
        ts: end,
        ..EndRecord::default()
    })
    .unwrap();
    w.into_inner()
}

/// A trace of functions `(type, method)` in App.dll and events `(ts, kind, func, sp)`.
pub fn typed_trace(funcs: &[(&str, &str)], threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    for (i, (ty, m)) in funcs.iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: (*ty).into(),
            method: (*m).into(),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    threads_and_end(w, threads, 1_000)
}

/// Runtime-async `L3` (thunk 1, variant 2) called from sync `Run` (0), calling plain `L4`
/// (3) from its last segment; `events` per thread are `(ts, kind, func, sp)`.
pub fn async_trace(threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    use eltrace_trace::FunctionFlags;
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    let funcs = [
        ("Run", 0, 0),
        ("L3", 0x2000, FunctionFlags::ASYNC_THUNK),
        ("L3", 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("L4", 0, 0),
    ];
    for (i, (m, impl_flags, flags)) in funcs.into_iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: "Ns.T".into(),
            method: m.into(),
            token: 0x0600_0001 + if m == "L3" { 1 } else { i as u32 + 10 },
            impl_flags,
            flags: FunctionFlags(FunctionFlags::HOOKED | flags),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    threads_and_end(w, threads, 10_000)
}
