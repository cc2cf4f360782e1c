//! Builds synthetic traces in memory with the shared builder (`eltrace_trace::testing`) and
//! reads results back: the one place for the helpers every test module uses.

pub use eltrace_trace::testing::{Function, TraceBuilder};
use eltrace_trace::{EventKind, FunctionFlags, FunctionIdx, TraceInfo};

use crate::*;

/// A trace of the methods `funcs` of `Ns.T` in App.dll (indices in order), pid 7.
pub fn b(funcs: &[&str]) -> TraceBuilder {
    b_with(funcs, TraceInfo::new(7))
}

/// [`b`] with the given INFO.
pub fn b_with(funcs: &[&str], info: TraceInfo) -> TraceBuilder {
    TraceBuilder::new(info).methods("App.dll", "Ns.T", funcs)
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

/// The analysis of a trace with every record given to [`Analyzer::record`] on this thread,
/// and its frames; `quick: false` sends every event through the replay's full rules.
pub fn analyse_records(
    bytes: &[u8],
    opts: &Options,
    quick: bool,
) -> (Analysis, Vec<(ThreadIdx, Frame)>) {
    let mut an = Analyzer::new(opts);
    if !quick {
        an = an.without_quick_path();
    }
    let mut sink = Collect::default();
    let a = analyse_into(bytes, an, &mut sink);
    (a, sink.0)
}

/// The logical call of the segment of function `func` that started at `start`.
pub fn segment_call(frames: &[(ThreadIdx, Frame)], func: u32, start: u64) -> u64 {
    frames
        .iter()
        .find(|(_, f)| f.start_ns == start && f.func.0 == func)
        .and_then(|(_, f)| f.segment)
        .map(|s| s.call)
        .expect("a segment of the function starts there")
}

/// The analysis of a trace by `an` with every record given to it on this thread, its frames
/// handed to `sink`.
pub fn analyse_into<S: FrameSink>(bytes: &[u8], mut an: Analyzer, sink: &mut S) -> Analysis {
    let mut reader = eltrace_trace::TraceReader::new(bytes).unwrap();
    while let Some(rec) = reader.next_record().unwrap() {
        an.record(rec, sink).unwrap();
    }
    an.finish(reader.truncated(), sink).unwrap()
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

/// Adds one thread record and the events `(ts, kind, func, sp)` per thread (tid 100 +
/// index), then the End record at `end`; returns the trace.
pub fn threads_and_end(
    t: TraceBuilder,
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    let t = threads.iter().enumerate().fold(t, |t, (i, evs)| {
        t.thread(i as u32, 100 + i as u64).events_sp(i as u32, evs)
    });
    t.end(end)
}

/// A trace of functions `(type, method)` in App.dll and events `(ts, kind, func, sp)`.
pub fn typed_trace(funcs: &[(&str, &str)], threads: &[&[(u64, EventKind, u32, u64)]]) -> Vec<u8> {
    let t = TraceBuilder::new(TraceInfo::new(7))
        .functions(funcs.iter().map(|&(ty, m)| ("App.dll", ty, m)));
    threads_and_end(t, threads, 1_000)
}

/// A trace of functions `(method, token, impl flags, function flags)` of type `Ns.T` in
/// App.dll, all hooked, and events `(ts, kind, func, sp)` per thread, ending at `end`.
pub fn flagged_trace(
    funcs: &[(&str, u32, u32, u32)],
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    flagged_trace_with(TraceInfo::new(7), funcs, threads, end)
}

/// [`flagged_trace`] with the trace's INFO record `info`.
pub fn flagged_trace_with(
    info: TraceInfo,
    funcs: &[(&str, u32, u32, u32)],
    threads: &[&[(u64, EventKind, u32, u64)]],
    end: u64,
) -> Vec<u8> {
    let t =
        TraceBuilder::new(info).functions(funcs.iter().map(|&(m, token, impl_flags, flags)| {
            Function::new("App.dll", "Ns.T", m)
                .token(token)
                .impl_flags(impl_flags)
                .flags(FunctionFlags::HOOKED | flags)
        }));
    threads_and_end(t, threads, end)
}

/// One event of a synthetic thread: `(ts, kind, func, sp)`.
pub type Ev = (u64, EventKind, u32, u64);

/// An INFO record (pid 7) that says Value events come before their Enter or Leave.
pub fn values_first_info() -> TraceInfo {
    let mut info = TraceInfo::new(7);
    info.extra.push((
        eltrace_trace::protocol::info_key::VALUES_FIRST.into(),
        eltrace_trace::protocol::info_key::YES.into(),
    ));
    info
}

/// A thread's events written with each Value event after the event it belongs to (traces
/// without INFO `values_first`) rewritten as the profiler writes them now: each Value moved
/// before that event and before the Continuation events just before it.
pub fn values_moved_first(evs: &[Ev]) -> Vec<Ev> {
    let mut out: Vec<Ev> = Vec::with_capacity(evs.len());
    // Where the last event that is not an annotation begins, with its Continuations.
    let mut owner = 0;
    for &e in evs {
        match e.1 {
            EventKind::Value => {
                out.insert(owner, e);
                owner += 1;
            }
            EventKind::Continuation => out.push(e),
            _ => {
                owner = out.len();
                while owner > 0 && out[owner - 1].1 == EventKind::Continuation {
                    owner -= 1;
                }
                out.push(e);
            }
        }
    }
    out
}

/// Function flags of a runtime-async method's two FunctionIDs.
pub const THUNK: u32 = FunctionFlags::ASYNC_THUNK;
pub const VARIANT: u32 = FunctionFlags::ASYNC_VARIANT;

/// No frame mismatched, vanished, or left with an unmatched Leave.
pub fn assert_exact(a: &Analysis) {
    assert_eq!(a.totals.unmatched_leaves, 0);
    assert_eq!(a.totals.mismatched_frames, 0);
    assert_eq!(a.totals.vanished_frames, 0);
}

/// (calls, segments, suspensions, pending_at_end) of function `f`.
pub fn async_counts(a: &Analysis, f: u32) -> (u64, u64, u64, u64) {
    let s = fs(a, f);
    (s.calls, s.segments, s.suspensions, s.pending_at_end)
}

/// Asserts [`async_counts`] of function `f` (`name` in the message, with its statistics).
#[track_caller]
pub fn assert_async(a: &Analysis, f: u32, name: &str, want: (u64, u64, u64, u64)) {
    assert_eq!(async_counts(a, f), want, "{name} {:?}", fs(a, f));
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

/// A small deterministic generator for random traces.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}
