//! Builds synthetic traces in memory with `TraceWriter` and reads results back: the one
//! place for the helpers every test module uses.

use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionFlags, FunctionIdx, FunctionRecord, ThreadIdx,
    ThreadRecord, TraceInfo, TraceWriter,
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

/// A trace of functions `(method, token, impl flags, function flags)` of type `Ns.T` in
/// App.dll, all hooked, and events `(ts, kind, func, sp)` per thread, ending at `end`.
pub fn flagged_trace(
    funcs: &[(&str, u32, u32, u32)],
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), &TraceInfo::new(7)).unwrap();
    for (i, &(m, token, impl_flags, flags)) in funcs.iter().enumerate() {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: "Ns.T".into(),
            method: m.into(),
            token,
            impl_flags,
            flags: FunctionFlags(FunctionFlags::HOOKED | flags),
            ..FunctionRecord::new(FunctionIdx(i as u32))
        })
        .unwrap();
    }
    threads_and_end(w, threads, end)
}

/// Runtime-async `L3` (thunk 1, variant 2) called from sync `Run` (0), calling plain `L4`
/// (3) from its last segment; `events` per thread are `(ts, kind, func, sp)`.
pub fn async_trace(threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    let funcs = [
        ("Run", 0x0600_000b, 0, 0),
        ("L3", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_THUNK),
        ("L3", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_VARIANT),
        ("L4", 0x0600_000e, 0, 0),
    ];
    flagged_trace(&funcs, threads, 10_000)
}
