//! A thread's shadow stack as data: its open frames ([`Open`]) with the counts that tell
//! whether a frame is the outermost of its function and of its caller→callee pair (recursion
//! is counted once), and what the replay remembers between two events of the thread
//! ([`ThreadState`]). The rules that push and pop frames are in `replay` and `asyncs::link`.
//!
//! ```text
//! t=0   enter  A  sp=0x9000    stack: A        A outer, edge (root)→A outer
//! t=10  enter  B  sp=0x8f00    stack: A B      B outer, edge A→B outer
//! t=20  enter  A  sp=0x8e00    stack: A B A    this A is not outer: its time is in the first A's
//! t=30  leave  A  sp=0x8e00    stack: A B
//! ```

use crate::fxmap::FxHashMap;
use crate::model::{CallNodeId, ROOT, SegmentRef, edge_key};

/// An open frame on a shadow stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    pub func: u32,
    pub start: u64,
    pub children: u64,
    /// No other frame of the same function below.
    pub outer: bool,
    /// No other frame of the same caller→callee pair below.
    pub edge_outer: bool,
    pub node: Option<CallNodeId>,
    pub sp: u64,
    pub segment: Option<SegmentRef>,
    /// A runtime-async function whose role (thunk or variant) the next event decides.
    pub unresolved: bool,
    pub enter_value: Option<u32>,
    /// What the iterator model noted on the frame (`iterators`).
    pub iter: IterMark,
}

/// What the iterator model (`iterators`) notes on a frame; all clear on most frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IterMark {
    /// The enumeration the frame works on (a `MoveNext`, a `Dispose`), 0 for none.
    pub enumeration: u64,
    /// Enumerators are held under this frame: its end hands them to its caller.
    pub holds: bool,
    /// An iterator method that returns its enumerator: its Leave hands one to its caller.
    pub kickoff: bool,
}

impl IterMark {
    /// Whether the frame's end concerns the iterator model.
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.enumeration != 0 || self.holds || self.kickoff
    }
}

/// What a segment's completing Leave leaves for the next event of its thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Completed {
    /// The call, if it may still be waiting (its Leave may have been a suspension).
    pub done: Option<u64>,
    /// Its caller's logical call.
    pub caller: u64,
    pub sp: u64,
}

/// One thread's replay state.
#[derive(Debug, Default)]
pub(crate) struct ThreadState {
    pub stack: Vec<Open>,
    /// Frames of each function on the stack.
    active: FxHashMap<u32, u32>,
    /// Frames of each caller→callee pair on the stack.
    active_edges: FxHashMap<u64, u32>,
    pub last_ns: u64,
    /// The logical call whose segment the previous event completed with a Leave, and that
    /// segment's sp: a dispatcher resumes the caller of a completed call next, at that sp.
    pub after_completion: Option<Completed>,
    /// What the previous event closed by a Leave, for a return value that follows it:
    /// `(function, logical call)`.
    pub last_left: Option<(u32, Option<u64>)>,
    /// Segment frames on the stack.
    pub open_segments: u32,
    /// The next Value event was taken by the Leave before it (its return value).
    pub skip_value: bool,
    /// Stack pointers at which a runtime-async variant was resumed with nothing below it on
    /// this thread: where the thread's dispatchers (thread pool, timer queue) call
    /// continuations. The latest few kept (see `asyncs::link`).
    pub dispatch_sps: Vec<u64>,
}

impl ThreadState {
    /// Whether a frame of `func` is on the stack.
    #[inline]
    pub fn has_frame_of(&self, func: u32) -> bool {
        self.active.get(&func).copied().unwrap_or(0) > 0
    }

    /// Pushes a frame of `func` entered at `ns` with stack pointer `sp`.
    #[inline(always)]
    pub fn push(&mut self, func: u32, ns: u64, sp: u64, node: Option<CallNodeId>) {
        let c = self.active.entry(func).or_insert(0);
        let outer = *c == 0;
        *c += 1;
        let caller = self.stack.last().map_or(ROOT, |o| o.func);
        let ce = self.active_edges.entry(edge_key(caller, func)).or_insert(0);
        let edge_outer = *ce == 0;
        *ce += 1;
        self.stack.push(Open {
            func,
            start: ns,
            children: 0,
            outer,
            edge_outer,
            node,
            sp,
            segment: None,
            unresolved: false,
            enter_value: None,
            iter: IterMark::default(),
        });
    }

    /// Pops the top frame and forgets it in the counts.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Open> {
        let o = self.stack.pop()?;
        if o.segment.is_some() {
            self.open_segments -= 1;
        }
        // Entries are removed at zero so that the maps stay as small as the stack.
        forget(&mut self.active, o.func);
        let caller = self.stack.last().map_or(ROOT, |p| p.func);
        forget(&mut self.active_edges, edge_key(caller, o.func));
        Some(o)
    }

    /// Makes the top frame a segment of a logical call.
    #[inline]
    pub fn mark_segment(&mut self, segment: SegmentRef) {
        self.open_segments += 1;
        if let Some(top) = self.stack.last_mut() {
            top.unresolved = false;
            top.segment = Some(segment);
        }
    }
}

/// Counts one frame less of `key`.
#[inline]
fn forget<K: std::hash::Hash + Eq>(counts: &mut FxHashMap<K, u32>, key: K) {
    if let Some(c) = counts.get_mut(&key) {
        *c -= 1;
        if *c == 0 {
            counts.remove(&key);
        }
    }
}
