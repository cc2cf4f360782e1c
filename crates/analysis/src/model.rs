//! The analysis model as plain data: frames, how they ended, the function and thread tables,
//! the statistics kept per function, per thread, per caller→callee edge and in total, and
//! what a finished logical call of an async method gives them ([`CallSummary`]).
//!
//! ```text
//! t=0   enter   A  sp=0x9000    Frame B 10..20  depth 1  parent A  end Unwind
//! t=10  enter   B  sp=0x8f00    Frame A  0..50  depth 0            end Leave
//! t=20  unwind  B  sp=0x8f00    FunctionStats A: calls 1  inclusive 50  exclusive 40
//! t=50  leave   A  sp=0x9000    FunctionStats B: calls 1  unwound 1;  EdgeStats A→B: 1 call
//! ```

use eltrace_trace::{FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord, TraceInfo, ValueRecord};

use crate::fxmap::DenseMap;

/// How a frame ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndKind {
    /// A matching `Leave`.
    Leave,
    /// The function tail-called another one.
    Tailcall,
    /// An exception unwound the frame (`Unwind`).
    Unwind,
    /// A `Leave`/`Tailcall`/`Unwind` of a function lower on the stack closed this frame.
    Mismatched,
    /// A `Catch` in a function lower on the stack closed this frame.
    Catch,
    /// Events of the thread were dropped; the frame was closed at the drop.
    Lost,
    /// Still open when the trace ended; closed at the trace's last timestamp.
    OpenAtEnd,
    /// A segment of an async method that ended without a Leave (it suspended): a later
    /// event of its thread showed its frame gone (docs/design.md "Async methods").
    Suspend,
    /// An ordinary frame that ended without a Leave: a later event of its thread showed its
    /// frame gone (its Leave was never reported).
    Vanished,
}

impl EndKind {
    /// A short lower-case name, as used in exports.
    pub const fn name(self) -> &'static str {
        match self {
            EndKind::Leave => "leave",
            EndKind::Tailcall => "tailcall",
            EndKind::Unwind => "unwind",
            EndKind::Mismatched => "mismatch",
            EndKind::Catch => "catch",
            EndKind::Lost => "lost",
            EndKind::OpenAtEnd => "open_at_end",
            EndKind::Suspend => "suspend",
            EndKind::Vanished => "vanished",
        }
    }
}

/// Identifies a node of the [`CallTree`](crate::CallTree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallNodeId(pub u32);

/// One closed frame, as handed to a [`FrameSink`](crate::FrameSink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub func: FunctionIdx,
    /// Start in ns since the recording's origin ([`TraceInfo::start_ticks`]).
    pub start_ns: u64,
    /// End in ns since the origin; `end_ns >= start_ns`.
    pub end_ns: u64,
    /// 0 for a root frame, 1 for its callees, …
    pub depth: u32,
    /// The function of the frame directly below (the caller), `None` for a root frame.
    pub parent: Option<FunctionIdx>,
    /// Sum of the durations of the direct child frames.
    pub children_ns: u64,
    pub end: EndKind,
    /// The frame's call-tree node, when the analysis builds the call tree.
    pub node: Option<CallNodeId>,
    /// The stack pointer its Enter reported (the caller's SP), 0 when unknown.
    pub sp: u64,
    /// For a segment of an async method: the logical call it belongs to.
    pub segment: Option<SegmentRef>,
    /// The arguments captured at the Enter (`record --values`), shown only at a call's start
    /// (never at a resume): an id of [`Tables::values`].
    pub enter_value: Option<u32>,
    /// The return value captured at the Leave, shown only at a completion (never at a
    /// suspension).
    pub leave_value: Option<u32>,
}

/// Where a segment belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentRef {
    /// The logical call (unique in the analysis).
    pub call: u64,
    /// 0 for the initial segment, then 1, 2, … for the resumes.
    pub index: u32,
    /// The segment was attached to its call by order alone: several calls of the function
    /// were waiting for a resume and nothing on the trace tells which one this is.
    pub inferred: bool,
}

/// A logical call of an async method that is over (or still pending when the trace ended),
/// as its function's statistics take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallSummary {
    pub call: u64,
    pub func: u32,
    /// First segment's start to last segment's end.
    pub wall_ns: u64,
    /// Value ids captured at the call's start and at its last Leave.
    pub enter_value: Option<u32>,
    pub leave_value: Option<u32>,
}

impl Frame {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
    pub fn exclusive_ns(&self) -> u64 {
        self.duration_ns().saturating_sub(self.children_ns)
    }
}

/// The function table: records by index (later records with the same index replace earlier ones).
#[derive(Debug, Clone, Default)]
pub struct FunctionTable {
    records: DenseMap<FunctionRecord>,
}

impl FunctionTable {
    pub(crate) fn insert(&mut self, r: FunctionRecord) {
        self.records.insert(r.idx.0, r);
    }
    pub fn get(&self, idx: FunctionIdx) -> Option<&FunctionRecord> {
        self.records.get(idx.0)
    }
    /// Sets flag bits of a record (a role the analysis learnt).
    pub(crate) fn add_flags(&mut self, idx: FunctionIdx, bits: u32) {
        if let Some(r) = self.records.get_mut(idx.0) {
            r.flags.0 |= bits;
        }
    }
    /// `Namespace.Type.Method`, or `<unknown function N>` for an index without a record. A
    /// runtime-async method's Task-returning thunk is `Namespace.Type.Method [thunk]`, so
    /// that it reads apart from the method's own code (its async variant).
    pub fn name(&self, idx: FunctionIdx) -> String {
        match self.get(idx) {
            Some(r) if r.flags.async_thunk() => format!("{} [thunk]", r.full_name()),
            Some(r) => r.full_name(),
            None => format!("<unknown function {}>", idx.0),
        }
    }
    /// The module file name, empty when unknown.
    pub fn module(&self, idx: FunctionIdx) -> &str {
        self.get(idx).map_or("", |r| r.module.as_str())
    }
    /// Records in index order.
    pub fn iter(&self) -> impl Iterator<Item = &FunctionRecord> {
        self.records.iter().map(|(_, r)| r)
    }
    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// The thread table: records by index (later records with the same index update earlier ones).
#[derive(Debug, Clone, Default)]
pub struct ThreadTable {
    records: DenseMap<ThreadRecord>,
}

impl ThreadTable {
    pub(crate) fn insert(&mut self, r: ThreadRecord) {
        self.records.insert(r.idx.0, r);
    }
    pub fn get(&self, idx: ThreadIdx) -> Option<&ThreadRecord> {
        self.records.get(idx.0)
    }
    /// The OS tid of a thread, `None` without a record.
    pub fn os_tid(&self, idx: ThreadIdx) -> Option<u64> {
        self.get(idx).map(|r| r.os_tid)
    }
    /// A thread's name for people, without its tid, the same in every report and export: the
    /// runtime's name for it (`.NET TP Worker`), `main` for the thread whose OS tid is the
    /// process's `pid`, `managed thread N` for another thread whose record has a managed id
    /// (eltrace's profiler writes none: no profiling API gives it), else `thread`.
    pub fn name(&self, idx: ThreadIdx, pid: u32) -> String {
        match self.get(idx) {
            Some(r) if !r.name.is_empty() => r.name.clone(),
            Some(r) if r.os_tid == u64::from(pid) && pid != 0 => "main".to_owned(),
            Some(r) if r.managed_id != 0 => format!("managed thread {}", r.managed_id),
            _ => "thread".to_owned(),
        }
    }
    /// Records in index order.
    pub fn iter(&self) -> impl Iterator<Item = &ThreadRecord> {
        self.records.iter().map(|(_, r)| r)
    }
    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// The tables a trace defines, complete once the analysis is done and as far as read
/// while it runs.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    pub info: TraceInfo,
    pub functions: FunctionTable,
    pub threads: ThreadTable,
    /// Captured values (`record --values`) by id.
    pub values: ValueTable,
}

/// The captured values (`record --values`), by id.
#[derive(Debug, Clone, Default)]
pub struct ValueTable {
    records: DenseMap<ValueRecord>,
}

impl ValueTable {
    pub(crate) fn insert(&mut self, id: u32, r: ValueRecord) {
        self.records.insert(id, r);
    }
    pub fn get(&self, id: u32) -> Option<&ValueRecord> {
        self.records.get(id)
    }
    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// Adds another function's statistics (rows that merge functions of one name and module):
/// counts and times add up, the maximum is the larger one.
impl std::ops::AddAssign<&FunctionStats> for FunctionStats {
    fn add_assign(&mut self, b: &FunctionStats) {
        self.calls += b.calls;
        self.segments += b.segments;
        self.resumes += b.resumes;
        self.suspensions += b.suspensions;
        self.wall_ns += b.wall_ns;
        self.pending_at_end += b.pending_at_end;
        self.inferred_resumes += b.inferred_resumes;
        self.ambiguous_calls += b.ambiguous_calls;
        self.known_starts += b.known_starts;
        self.identity_resumes += b.identity_resumes;
        self.tail_awaits += b.tail_awaits;
        self.enumerations += b.enumerations;
        self.abandoned += b.abandoned;
        self.faulted += b.faulted;
        self.yields += b.yields;
        self.inclusive_ns += b.inclusive_ns;
        self.exclusive_ns += b.exclusive_ns;
        self.max_ns = self.max_ns.max(b.max_ns);
        self.open_at_end += b.open_at_end;
        self.unwound += b.unwound;
        self.tailcalls += b.tailcalls;
        self.mismatched += b.mismatched;
        self.lost += b.lost;
    }
}

/// Statistics of one function (docs/design.md "Analysis semantics").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// Calls of the function: frames (closed and open at end) of an ordinary function,
    /// logical calls of an async method (a call and its resumes count once).
    pub calls: u64,
    /// Physical segments: frames of the function (equal to `calls` for ordinary ones).
    pub segments: u64,
    /// Segments that began at a resume (async methods).
    pub resumes: u64,
    /// Segments that ended by suspending (async methods).
    pub suspensions: u64,
    /// Async methods: the sum over logical calls of first segment start to last segment end.
    pub wall_ns: u64,
    /// Async methods: logical calls suspended and never resumed by the end of the trace.
    pub pending_at_end: u64,
    /// Async methods: resumes attached to a call by order alone (see [`SegmentRef`]).
    pub inferred_resumes: u64,
    /// Async methods: Enters counted as first calls that may instead have been resumes: the
    /// variant entered deeper below a suspended-looking segment of its own, at a distance no
    /// direct call from it was seen to use yet (a recursion, or a dispatcher's resume by a
    /// path not seen before; docs/design.md "Async methods").
    pub ambiguous_calls: u64,
    /// Runtime-async variants: segments whose start, first call or resume, the runtime told
    /// by the continuation argument of their Enter (recorded, not inferred; docs/abi.md "The
    /// async continuation argument").
    pub known_starts: u64,
    /// Runtime-async variants: resumes whose call their continuation object names: the one
    /// the call's suspension allocated, or the same one an earlier resume of that call received
    /// (.NET 11 passes one continuation to every resume of a call; within one GC epoch an
    /// address names one object). docs/abi.md "Continuations at suspension".
    pub identity_resumes: u64,
    /// Runtime-async variants: calls whose first segment suspended without allocating a
    /// continuation (a tail await, e.g. a method that returns the task it awaits): never
    /// resumed, they end at that suspension.
    pub tail_awaits: u64,
    /// An iterator's `MoveNext`: enumerations (one per enumerator, from its first `MoveNext`
    /// to its last; docs/design.md "Iterators: enumerations"). Its `calls` and `segments`
    /// count `MoveNext` frames, `suspensions` the yields, `resumes` the `MoveNext` calls after
    /// an enumeration's first, `wall_ns` the enumerations' first start to last end,
    /// `pending_at_end` the enumerations still going when the trace ended.
    pub enumerations: u64,
    /// An iterator's `MoveNext`: enumerations that stopped after a yield (their holder
    /// disposed or dropped them before the iterator finished).
    pub abandoned: u64,
    /// An iterator's `MoveNext`: enumerations whose last `MoveNext` threw.
    pub faulted: u64,
    /// An iterator's `MoveNext` (an async iterator's `MoveNextAsync`): calls that yielded an
    /// element. For an ordinary iterator the same as `suspensions`; an async iterator's
    /// `MoveNextAsync` awaited by runtime-async code also has its variant's suspensions.
    pub yields: u64,
    /// Durations of the frames with no frame of the same function below them.
    pub inclusive_ns: u64,
    /// Durations minus direct children, over all frames.
    pub exclusive_ns: u64,
    /// The longest single frame.
    pub max_ns: u64,
    pub open_at_end: u64,
    /// Frames ended by an exception (`Unwind`, or closed by a `Catch` lower on the stack).
    pub unwound: u64,
    pub tailcalls: u64,
    /// Frames closed by the Leave of a function lower on the stack.
    pub mismatched: u64,
    /// Frames closed because events of their thread were dropped.
    pub lost: u64,
}

/// Statistics of one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadStats {
    pub events: u64,
    /// Sum of the durations of the thread's root frames.
    pub inclusive_ns: u64,
    /// Deepest stack seen (1 = only root frames).
    pub max_depth: u32,
    pub frames: u64,
    pub open_frames_at_end: u64,
    pub lost_frames: u64,
    pub dropped_events: u64,
    /// Times the thread's hooks waited for the trace writer (lossless recording), and the
    /// time they waited in all.
    pub waits: u64,
    pub wait_ns: u64,
    pub mismatched_frames: u64,
    /// Async segments that ended by suspending without a Leave.
    pub suspended_frames: u64,
    /// Ordinary frames that ended without a Leave (see [`EndKind::Vanished`]).
    pub vanished_frames: u64,
    pub unmatched_leaves: u64,
    pub throws: u64,
    /// First and last event time (ns since the origin); both 0 without events.
    pub first_ns: u64,
    pub last_ns: u64,
}

/// Statistics of one caller→callee pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeStats {
    /// Frames of the callee directly above a frame of the caller.
    pub calls: u64,
    /// Durations of those frames, not counting a frame that has another frame of the same
    /// pair below it (recursion is not double counted).
    pub inclusive_ns: u64,
}

/// The caller of a root frame in an edge key.
pub(crate) const ROOT: u32 = u32::MAX;

/// The key of a caller→callee edge (caller [`ROOT`] for a root frame).
pub(crate) fn edge_key(caller: u32, callee: u32) -> u64 {
    (u64::from(caller) << 32) | u64::from(callee)
}

/// Whole-trace counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Events in the trace (all threads, also those a thread filter left out).
    pub events: u64,
    /// Events analysed (those of the selected threads).
    pub analysed_events: u64,
    /// Sum of the trace's dropped-events records.
    pub dropped_events: u64,
    /// Times hooks waited for the trace writer (lossless recording), and the time they
    /// waited in all (all threads).
    pub waits: u64,
    pub wait_ns: u64,
    pub frames: u64,
    pub open_frames_at_end: u64,
    pub mismatched_frames: u64,
    pub unmatched_leaves: u64,
    pub lost_frames: u64,
    /// Async segments that ended by suspending without a Leave.
    pub suspended_frames: u64,
    /// Ordinary frames that ended without a Leave (see [`EndKind::Vanished`]).
    pub vanished_frames: u64,
    /// Logical calls of async methods.
    pub logical_calls: u64,
    /// Enumerations of iterators.
    pub enumerations: u64,
    pub throws: u64,
    /// Sum of the threads' inclusive time: the time covered by root frames.
    pub root_ns: u64,
    /// First event time and last timestamp of the trace (ns since the origin).
    pub first_ns: u64,
    pub last_ns: u64,
}
