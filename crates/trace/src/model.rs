//! The records a trace holds, as plain data: what the writer takes and the reader yields,
//! with the readings every reader shares (INFO's facts by key, ticks as ns since the start,
//! a function's runtime-async flag).

use crate::protocol::{IMPL_ASYNC, info_key};

/// Index of a function in the trace's function table (dense, assigned by the profiler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FunctionIdx(pub u32);

/// Index of a thread in the trace's thread table (dense, assigned by the profiler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ThreadIdx(pub u32);

/// What happened at one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    /// The Enter hook: `func` starts (or, for runtime-async methods, resumes).
    Enter = 0,
    /// The Leave hook: `func` returns normally.
    Leave = 1,
    /// The Tailcall hook: `func` (the caller) ends by tail-calling another function.
    Tailcall = 2,
    /// `ExceptionUnwindFunctionLeave`: `func`'s frame was removed by an exception.
    Unwind = 3,
    /// `ExceptionCatcherEnter`: an exception is caught in `func`, which goes on running.
    Catch = 4,
    /// `ExceptionThrown`: an exception was thrown while `func` (if known) was on top.
    Throw = 5,
    /// A value captured at the event just before it on the same thread (`record --values`):
    /// the arguments of an Enter or the return value of a Leave. `func` holds the id of a
    /// [`ValueRecord`], not a function; `sp` repeats the previous event's.
    Value = 6,
    /// The async continuation a runtime-async variant's Enter received, recorded just before
    /// that Enter on the same thread: `sp` holds the continuation (0: the Enter starts a call;
    /// otherwise the Enter resumes one, and `sp` is the continuation object's address at that
    /// moment); `func` is the function entered. Just before the Leave of a continuation
    /// allocator ([`FunctionFlags::CONT_ALLOCATOR`]): the continuation it returned; of a
    /// state-machine box getter ([`FunctionFlags::STATE_MACHINE_BOX`]): the box. Just before
    /// the Enter of a classic async state machine's `MoveNext` or an async iterator's
    /// `MoveNextAsync`, `get_Current` or `DisposeAsync`: the object it works on (`this`). The
    /// low 3 bits of a nonzero value hold the GC epoch (INFO `gc_epochs=1`).
    Continuation = 7,
}

impl EventKind {
    /// The 3-bit code on disk.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Decodes a 3-bit code; `None` for codes this version does not know.
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => EventKind::Enter,
            1 => EventKind::Leave,
            2 => EventKind::Tailcall,
            3 => EventKind::Unwind,
            4 => EventKind::Catch,
            5 => EventKind::Throw,
            6 => EventKind::Value,
            7 => EventKind::Continuation,
            _ => return None,
        })
    }

    /// Whether the event annotates a neighbouring event (Value: the Enter or Leave after it,
    /// or before it in a trace without INFO `values_first`; Continuation: the Enter or
    /// allocator Leave after it) rather than opening or ending a frame itself.
    pub const fn is_annotation(self) -> bool {
        matches!(self, EventKind::Value | EventKind::Continuation)
    }

    /// A short lower-case name, as used in JSON and text output.
    pub const fn name(self) -> &'static str {
        match self {
            EventKind::Enter => "enter",
            EventKind::Leave => "leave",
            EventKind::Tailcall => "tailcall",
            EventKind::Unwind => "unwind",
            EventKind::Catch => "catch",
            EventKind::Throw => "throw",
            EventKind::Value => "value",
            EventKind::Continuation => "continuation",
        }
    }
}

/// One hook's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Timestamp in ticks (see [`TraceInfo::ns_per_tick`]); never decreases within a thread.
    pub ts: u64,
    pub kind: EventKind,
    /// The function the hook is about. For `Throw` it may be `FunctionIdx(u32::MAX)` (unknown).
    pub func: FunctionIdx,
    /// The stack pointer the hook saw (the profiled method's caller SP where the runtime gives
    /// it, 0 where it does not).
    pub sp: u64,
}

/// Facts about the whole recording, written first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceInfo {
    /// OS process id of the profiled process.
    pub pid: u32,
    /// Wall-clock time of tick 0's neighbourhood: Unix time in ns when recording started.
    pub start_unix_ns: u64,
    /// Tick value at the moment `start_unix_ns` was taken.
    pub start_ticks: u64,
    /// Nanoseconds per timestamp tick (1.0 when ticks are ns).
    pub ns_per_tick: f64,
    /// Runtime description, e.g. "CoreCLR 10.0.12".
    pub runtime: String,
    /// The profiled command line, as far as the profiler could see it.
    pub command: String,
    /// How the hooks were installed, e.g. "slow-path" or "fast-path".
    pub hook_mode: String,
    /// Any further facts as key/value pairs (forward compatible).
    pub extra: Vec<(String, String)>,
}

impl TraceInfo {
    /// Info for process `pid` with ns ticks and everything else empty.
    pub fn new(pid: u32) -> Self {
        TraceInfo {
            pid,
            ns_per_tick: 1.0,
            ..Default::default()
        }
    }

    /// The value of the INFO key `key` (one of [`info_key`]) among the further facts
    /// ([`extra`](Self::extra)): the first pair of that key, `None` without one. The one
    /// lookup behind the accessors below.
    fn value(&self, key: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the flag `key` is set (its value is [`info_key::YES`]).
    fn flag(&self, key: &str) -> bool {
        self.value(key) == Some(info_key::YES)
    }

    /// INFO `timing`: `exact` (the default, also for traces older than the key), `none` or
    /// `sampled` (protocol::timing).
    pub fn timing(&self) -> &str {
        self.value(info_key::TIMING)
            .unwrap_or(crate::protocol::timing::EXACT)
    }

    /// Whether the trace's events carry real timestamps (timing `exact`). Events of a
    /// timeless trace still have `ts` values, but they only order the threads' events
    /// approximately (docs/trace-format.md, TIMELESS_EVENTS); they measure nothing.
    pub fn has_event_times(&self) -> bool {
        self.timing() == crate::protocol::timing::EXACT
    }

    /// INFO `sampling`: whether the sampler thread ran (the trace has SAMPLES chunks).
    pub fn sampling(&self) -> bool {
        self.flag(info_key::SAMPLING)
    }

    /// INFO `sample_hz`: the sampler's rate in samples per second, `None` when absent or
    /// not a decimal number.
    pub fn sample_hz(&self) -> Option<u64> {
        self.value(info_key::SAMPLE_HZ)?.parse().ok()
    }

    /// INFO `session`: the id of the `eltrace record` run that wrote the trace, `None` for a
    /// trace written without one (the key absent or empty).
    pub fn session(&self) -> Option<&str> {
        self.value(info_key::SESSION).filter(|s| !s.is_empty())
    }

    /// INFO `tail_call_loop_opt`: the JIT's TailCallLoopOpt setting the profiled process had
    /// (`0`, `default`, or the user's value), `None` for a trace that does not say.
    pub fn tail_call_loop_opt(&self) -> Option<&str> {
        self.value(info_key::TAIL_CALL_LOOP_OPT)
    }

    /// INFO `gc_epochs`: whether continuation values carry the GC epoch, so that an equal
    /// value is the same object.
    pub fn gc_epochs(&self) -> bool {
        self.flag(info_key::GC_EPOCHS)
    }

    /// Whether the runtime reports a Leave when a runtime-async method suspends: only when
    /// the INFO says so (`async_suspend_leave=1`). No released runtime does: .NET 10 and
    /// 11.0.0 give a suspending variant no Leave (measured, docs/async-observations.md), so
    /// the runtime's version decides nothing.
    pub fn async_suspend_leaves(&self) -> bool {
        self.flag(info_key::ASYNC_SUSPEND_LEAVE)
    }

    /// INFO `values_first`: whether a Value event comes just before the Enter or Leave it
    /// belongs to; else (a trace written before the key) just after it.
    pub fn values_first(&self) -> bool {
        self.flag(info_key::VALUES_FIRST)
    }

    /// Converts a tick count to nanoseconds.
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        if self.ns_per_tick == 1.0 {
            ticks
        } else {
            (ticks as f64 * self.ns_per_tick) as u64
        }
    }

    /// A timestamp (in ticks) as ns since the recording's start ([`start_ticks`](Self::start_ticks));
    /// 0 for one before it.
    pub fn ns_since_start(&self, ticks: u64) -> u64 {
        self.ticks_to_ns(ticks.saturating_sub(self.start_ticks))
    }
}

/// Bit flags on a function record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FunctionFlags(pub u32);

impl FunctionFlags {
    /// The function was selected by the filters and gets probes.
    pub const HOOKED: u32 = 1;
    /// The function's module is part of the .NET framework.
    pub const FRAMEWORK: u32 = 2;
    /// A runtime-async method's Task-returning thunk (the FunctionID its metadata token
    /// resolves to); it calls the async variant, which runs the method's code.
    pub const ASYNC_THUNK: u32 = 4;
    /// A runtime-async method's async variant: the code of the method, entered at the first
    /// call and again at every resume.
    pub const ASYNC_VARIANT: u32 = 8;
    /// A method of a compiler-generated async state machine (its type implements
    /// `IAsyncStateMachine`): its `MoveNext` runs the segments of the async method that
    /// created it (its kickoff). Set from metadata, with [`ITERATOR`](Self::ITERATOR) on an
    /// async iterator's type.
    pub const ASYNC_STATE_MACHINE: u32 = 0x10;
    /// A method of a compiler-generated iterator (its type implements `IEnumerator`): its
    /// `MoveNext` runs the iterator method's body from one `yield` to the next. Set from
    /// metadata; with [`ASYNC_STATE_MACHINE`](Self::ASYNC_STATE_MACHINE): an async iterator.
    pub const ITERATOR: u32 = 0x20;
    /// An async method compiled to a state machine (it carries `AsyncStateMachineAttribute`,
    /// whose type is [`FunctionRecord::state_machine`]): the kickoff that starts it.
    pub const ASYNC_KICKOFF: u32 = 0x40;
    /// An iterator method (it carries `IteratorStateMachineAttribute`; with
    /// [`ASYNC_KICKOFF`](Self::ASYNC_KICKOFF): `AsyncIteratorStateMachineAttribute`).
    pub const ITERATOR_KICKOFF: u32 = 0x80;
    /// With [`ITERATOR`](Self::ITERATOR) or [`ITERATOR_KICKOFF`](Self::ITERATOR_KICKOFF): the
    /// iterator's type also implements `IEnumerable`, so the iterator method returns an
    /// enumerable (each `GetEnumerator` hands out an enumerator); without it the iterator
    /// method returns the enumerator itself.
    pub const ENUMERABLE: u32 = 0x100;
    /// One of the runtime's continuation allocators (CoreLib's
    /// `AsyncHelpers.AllocContinuation*`), which a runtime-async method calls as it suspends.
    /// Probed whether selected or not: its Leave is recorded just after a Continuation event
    /// that carries the continuation it returned; the Leave's `sp` is the allocator's caller
    /// SP, inside the frame of the method that suspends. Its Enter is recorded, and it is a
    /// frame of the program, only where the selection chose it too (docs/trace-format.md
    /// "Continuation allocations").
    pub const CONT_ALLOCATOR: u32 = 0x200;
    /// One of CoreLib's state-machine box getters (`AsyncTaskMethodBuilder<T>` and
    /// `PoolingAsyncValueTaskMethodBuilder<T>`'s `GetStateMachineBox<TStateMachine>`), which a
    /// classic async method's builder calls at every suspension. Probed like a continuation
    /// allocator (its Leave just after a Continuation event with the box it returned, its
    /// Enter only where selected); a resume's `MoveNext` receives a `this` inside that box
    /// (docs/trace-format.md "State-machine boxes").
    pub const STATE_MACHINE_BOX: u32 = 0x400;

    pub fn hooked(self) -> bool {
        self.0 & Self::HOOKED != 0
    }
    pub fn framework(self) -> bool {
        self.0 & Self::FRAMEWORK != 0
    }
    pub fn async_thunk(self) -> bool {
        self.0 & Self::ASYNC_THUNK != 0
    }
    pub fn async_variant(self) -> bool {
        self.0 & Self::ASYNC_VARIANT != 0
    }
    pub fn async_state_machine(self) -> bool {
        self.0 & Self::ASYNC_STATE_MACHINE != 0
    }
    pub fn iterator(self) -> bool {
        self.0 & Self::ITERATOR != 0
    }
    pub fn async_kickoff(self) -> bool {
        self.0 & Self::ASYNC_KICKOFF != 0
    }
    pub fn iterator_kickoff(self) -> bool {
        self.0 & Self::ITERATOR_KICKOFF != 0
    }
    pub fn enumerable(self) -> bool {
        self.0 & Self::ENUMERABLE != 0
    }
    pub fn cont_allocator(self) -> bool {
        self.0 & Self::CONT_ALLOCATOR != 0
    }
    pub fn state_machine_box(self) -> bool {
        self.0 & Self::STATE_MACHINE_BOX != 0
    }
    /// Whether any of the state-machine bits is set (the profiler identified the function
    /// from metadata as a state machine's method or a kickoff).
    pub fn state_machine_bits(self) -> bool {
        self.0
            & (Self::ASYNC_STATE_MACHINE
                | Self::ITERATOR
                | Self::ASYNC_KICKOFF
                | Self::ITERATOR_KICKOFF)
            != 0
    }
}

/// One entry of the function table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FunctionRecord {
    pub idx: FunctionIdx,
    /// The runtime's FunctionID (an address; unique while the function is loaded).
    pub function_id: u64,
    /// Module (assembly file) name without directory, e.g. "App.dll".
    pub module: String,
    /// Namespace-qualified type name, nested types joined with `+`, generic arity as
    /// .NET writes it (``List`1``). Empty for a global function.
    pub type_name: String,
    /// Method name; a generic method carries its arity as ``` ``N ```.
    pub method: String,
    /// Metadata token of the method (0x06xxxxxx).
    pub token: u32,
    /// Method implementation flags from metadata (e.g. [`IMPL_ASYNC`]: runtime async).
    pub impl_flags: u32,
    pub flags: FunctionFlags,
    /// For a kickoff ([`FunctionFlags::ASYNC_KICKOFF`], [`FunctionFlags::ITERATOR_KICKOFF`]):
    /// the state machine type its attribute names, written as `type_name` is
    /// (`Ns.T+<Work>d__3`); empty otherwise.
    pub state_machine: String,
}

impl FunctionRecord {
    /// A record with the given index and everything else empty.
    pub fn new(idx: FunctionIdx) -> Self {
        FunctionRecord {
            idx,
            ..Default::default()
        }
    }

    /// Whether the method is a runtime-async method (impl flag [`IMPL_ASYNC`]): it has two
    /// FunctionIDs, the Task-returning thunk and the async variant (docs/trace-format.md).
    pub fn is_runtime_async(&self) -> bool {
        self.impl_flags & IMPL_ASYNC != 0
    }

    /// `Namespace.Type.Method` (or just the method for global functions).
    pub fn full_name(&self) -> String {
        if self.type_name.is_empty() {
            self.method.clone()
        } else {
            format!("{}.{}", self.type_name, self.method)
        }
    }
}

/// One entry of the thread table. A later record with the same index updates the earlier one
/// (a thread gets its managed id and name after it starts).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThreadRecord {
    pub idx: ThreadIdx,
    /// OS thread id (Linux TID).
    pub os_tid: u64,
    /// Managed thread id (`Environment.CurrentManagedThreadId`), 0 when unknown. eltrace's
    /// profiler always writes 0: no profiling API gives a thread's managed id (the runtime's
    /// `ThreadID` is the address of its own thread object, not the managed id).
    pub managed_id: u64,
    /// Thread name, empty when unknown or unnamed.
    pub name: String,
}

impl ThreadRecord {
    pub fn new(idx: ThreadIdx, os_tid: u64) -> Self {
        ThreadRecord {
            idx,
            os_tid,
            ..Default::default()
        }
    }
}

/// Why recording ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EndReason {
    /// The runtime called `ICorProfilerCallback::Shutdown`.
    #[default]
    Shutdown,
    /// The process exited (`exit()` ran the profiler's exit handler) without Shutdown.
    ProcessExit,
    /// The process aborted (e.g. an unhandled exception raised SIGABRT).
    Abort,
    /// A reason code this version does not know.
    Other(u32),
}

impl EndReason {
    pub fn code(self) -> u32 {
        match self {
            EndReason::Shutdown => 0,
            EndReason::ProcessExit => 1,
            EndReason::Abort => 2,
            EndReason::Other(c) => c,
        }
    }
    pub fn from_code(c: u32) -> Self {
        match c {
            0 => EndReason::Shutdown,
            1 => EndReason::ProcessExit,
            2 => EndReason::Abort,
            c => EndReason::Other(c),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Shutdown => "shutdown",
            EndReason::ProcessExit => "exit",
            EndReason::Abort => "abort",
            EndReason::Other(_) => "other",
        }
    }
}

/// The last chunk of a complete trace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndRecord {
    pub reason: EndReason,
    /// Tick at which recording ended.
    pub ts: u64,
    /// Events written to the file in all.
    pub events_written: u64,
    /// Events lost because buffers were full, in all.
    pub events_dropped: u64,
    /// Internal failures the profiler counted (each is described by a diagnostic chunk).
    pub internal_errors: u64,
}

/// What a value query gave (`record --values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueStatus {
    /// The query succeeded; `text` is the decoded value.
    #[default]
    Ok,
    /// The runtime answered `CORPROF_E_DATAINCOMPLETE` (no value at this point).
    Incomplete,
    /// The query answered S_OK with no range where one was expected (no value).
    Empty,
    /// The query failed with another HRESULT (in `text`) or the value could not be decoded.
    Failed,
}

impl ValueStatus {
    pub const fn code(self) -> u32 {
        match self {
            ValueStatus::Ok => 0,
            ValueStatus::Incomplete => 1,
            ValueStatus::Empty => 2,
            ValueStatus::Failed => 3,
        }
    }
    /// Unknown codes read as `Failed`.
    pub const fn from_code(c: u32) -> Self {
        match c {
            0 => ValueStatus::Ok,
            1 => ValueStatus::Incomplete,
            2 => ValueStatus::Empty,
            _ => ValueStatus::Failed,
        }
    }
    pub const fn name(self) -> &'static str {
        match self {
            ValueStatus::Ok => "ok",
            ValueStatus::Incomplete => "incomplete",
            ValueStatus::Empty => "empty",
            ValueStatus::Failed => "failed",
        }
    }
}

/// A value captured by a hook: the arguments at an Enter (`n=4, s="abc"`) or the return value
/// at a Leave (`6`), rendered as text by the profiler.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValueRecord {
    /// Referred to by the `func` field of [`EventKind::Value`] events; dense from 0.
    pub id: u32,
    pub status: ValueStatus,
    pub text: String,
}

/// One decoded chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Info(TraceInfo),
    Function(FunctionRecord),
    Thread(ThreadRecord),
    /// Events of one thread, in time order, continuing that thread's earlier chunks.
    Events {
        thread: ThreadIdx,
        events: Vec<Event>,
    },
    /// `count` events of `thread` were lost here (buffers were full).
    Dropped {
        thread: ThreadIdx,
        count: u64,
    },
    End(EndRecord),
    /// A captured value, referred to by [`EventKind::Value`] events.
    Value(ValueRecord),
    /// A message from the profiler about an internal failure or a notable condition.
    Diagnostic(String),
    /// A thread's totals of waiting for the writer so far (lossless recording); replaces the
    /// thread's earlier Waits.
    Waits {
        thread: ThreadIdx,
        waits: u64,
        wait_ns: u64,
    },
    /// Samples of the threads' event positions (timing `sampled`).
    Samples(Vec<Sample>),
}

/// One sample of a thread (timing `sampled`): at time `ts` (ns, the trace's clock), the
/// thread had recorded `index` events (all its events so far, counted from its first; drop
/// markers and dropped events not counted), so the stack it was running is the stack after
/// its first `index` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub thread: ThreadIdx,
    pub index: u64,
    pub ts: u64,
    /// The thread's CPU time (ns) at `ts`, when the profiler could read it.
    pub cpu_ns: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::timing;

    fn info(pairs: &[(&str, &str)]) -> TraceInfo {
        let mut i = TraceInfo::new(1);
        i.extra = pairs.iter().map(|&(k, v)| (k.into(), v.into())).collect();
        i
    }

    #[test]
    fn info_accessors_read_their_keys() {
        let i = info(&[
            (info_key::SESSION, "1f2e"),
            (info_key::TIMING, timing::SAMPLED),
            (info_key::SAMPLE_HZ, "250"),
            (info_key::SAMPLING, "1"),
            (info_key::TAIL_CALL_LOOP_OPT, "0"),
            (info_key::GC_EPOCHS, "1"),
            (info_key::ASYNC_SUSPEND_LEAVE, "1"),
        ]);
        assert_eq!(i.session(), Some("1f2e"));
        assert_eq!(i.timing(), timing::SAMPLED);
        assert!(!i.has_event_times());
        assert_eq!(i.sample_hz(), Some(250));
        assert!(i.sampling());
        assert_eq!(i.tail_call_loop_opt(), Some("0"));
        assert!(i.gc_epochs());
        assert!(i.async_suspend_leaves());
    }

    #[test]
    fn info_accessors_without_their_keys() {
        let i = info(&[(info_key::SESSION, ""), (info_key::SAMPLE_HZ, "fast")]);
        assert_eq!(i.session(), None);
        assert_eq!(i.timing(), timing::EXACT);
        assert!(i.has_event_times());
        assert_eq!(i.sample_hz(), None);
        assert!(!i.sampling());
        assert_eq!(i.tail_call_loop_opt(), None);
        assert!(!i.gc_epochs());
        assert!(!i.async_suspend_leaves());
        // A flag is set by `1` only.
        let i = info(&[(info_key::SAMPLING, "0"), (info_key::GC_EPOCHS, "yes")]);
        assert!(!i.sampling() && !i.gc_epochs());
    }

    #[test]
    fn ns_since_start() {
        let mut i = TraceInfo::new(1);
        i.start_ticks = 1_000;
        assert_eq!(i.ns_since_start(1_500), 500);
        assert_eq!(i.ns_since_start(999), 0);
        i.ns_per_tick = 0.5;
        assert_eq!(i.ns_since_start(1_500), 250);
    }

    #[test]
    fn runtime_async_is_the_impl_flag() {
        let mut f = FunctionRecord::new(FunctionIdx(0));
        assert!(!f.is_runtime_async());
        f.impl_flags = IMPL_ASYNC | 0x80;
        assert!(f.is_runtime_async());
    }
}
