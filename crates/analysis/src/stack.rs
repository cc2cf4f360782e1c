//! A thread's shadow stack as data: its open frames ([`Open`]), each linked to the next frame
//! of its function below it, which tells whether a frame is the outermost of its function
//! and of its caller→callee pair (recursion is counted once); the indices of its async
//! segment frames; and what the replay remembers between two events of the thread
//! ([`ThreadState`]). The rules that push and pop frames are in `replay` and `asyncs::link`.
//!
//! ```text
//! t=0   enter  A  sp=0x9000    stack: A        A outer, edge (root)→A outer
//! t=10  enter  B  sp=0x8f00    stack: A B      B outer, edge A→B outer
//! t=20  enter  A  sp=0x8e00    stack: A B A    this A is not outer: its time is in the first A's
//! t=30  leave  A  sp=0x8e00    stack: A B
//! ```

use crate::model::{CallNodeId, ROOT, SegmentRef};

/// An open frame on a shadow stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    pub start: u64,
    pub children: u64,
    pub sp: u64,
    pub segment: Option<SegmentRef>,
    /// What the iterator model noted on the frame (`iterators`).
    pub iter: IterMark,
    pub func: u32,
    /// The index of the next frame of the same function below this one ([`NONE`]: none).
    below_same: u32,
    /// The index of the next frame below whose function falls in the same bucket of
    /// [`ThreadState::heads`] ([`NONE`]: none).
    below_bucket: u32,
    pub node: Option<CallNodeId>,
    /// The frame's node in the logical call tree ([`Stats::logical`](crate::stats::Stats)):
    /// a resumed segment's is its logical call's node, not one under its dispatcher.
    pub lnode: Option<CallNodeId>,
    pub enter_value: Option<u32>,
    /// No other frame of the same function below.
    pub outer: bool,
    /// No other frame of the same caller→callee pair below.
    pub edge_outer: bool,
    /// A runtime-async function whose role (thunk or variant) the next event decides.
    pub unresolved: bool,
}

/// What the iterator model (`iterators`) notes on a frame; all clear on most frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IterMark {
    /// The enumeration the frame works on (a `MoveNext`, a `Dispose`), 0 for none.
    pub enumeration: u64,
    /// A `MoveNext` frame: which move of its enumeration it is (1 for the first).
    pub move_no: u64,
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
    /// By a hash of the function, the index of the highest frame of the functions in that
    /// bucket (lower ones are linked by [`Open::below_bucket`], and by [`Open::below_same`]
    /// within one function); empty until the first push.
    heads: Vec<u32>,
    pub last_ns: u64,
    /// The logical call whose segment the previous event completed with a Leave, and that
    /// segment's sp: a dispatcher resumes the caller of a completed call next, at that sp.
    pub after_completion: Option<Completed>,
    /// What the previous event closed by a Leave, for a return value that follows it (a
    /// trace without INFO `values_first`): `(function, logical call)`.
    pub last_left: Option<(u32, Option<u64>)>,
    /// The indices of the stack's segment frames, lowest first (the async rules look at
    /// these few frames instead of the whole stack).
    segments: Vec<u32>,
    /// The next Value event was taken by the Leave before it (its return value; a trace
    /// without INFO `values_first`).
    pub skip_value: bool,
    /// A Value event waiting for the Enter (its arguments) or Leave (its return value) that
    /// follows it (INFO `values_first`).
    pub pending_value: Option<u32>,
    /// Stack pointers at which a runtime-async variant was resumed with nothing below it on
    /// this thread: where the thread's dispatchers (thread pool, timer queue) call
    /// continuations. The latest few kept (see `asyncs::link`).
    pub dispatch_sps: Vec<u64>,
    /// The continuation the runtime passed to the variant Enter being replayed (from the
    /// Continuation event before it): `Some(0)` a first call, `Some(_)` a resume, `None` not
    /// recorded (docs/design.md, "Initial call or resume").
    pub cont: Option<u64>,
    /// A Continuation event waiting for its Enter: `(function, continuation)`.
    pub pending_cont: Option<(u32, u64)>,
}

impl ThreadState {
    /// Whether a frame of `func` is on the stack.
    #[inline]
    pub fn has_frame_of(&self, func: u32) -> bool {
        self.highest_of(func) != NONE
    }

    /// The index of the highest frame of `func` on the stack ([`NONE`]: none).
    #[inline(always)]
    fn highest_of(&self, func: u32) -> u32 {
        let Some(&head) = self.heads.get(bucket(func)) else {
            return NONE;
        };
        let mut j = head;
        while j != NONE {
            let o = &self.stack[j as usize];
            if o.func == func {
                return j;
            }
            j = o.below_bucket;
        }
        NONE
    }

    /// Pushes a frame of `func` entered at `ns` with stack pointer `sp`.
    #[inline(always)]
    pub fn push(&mut self, func: u32, ns: u64, sp: u64, node: Option<CallNodeId>) {
        let index = self.stack.len() as u32;
        if self.heads.is_empty() {
            self.heads = vec![NONE; BUCKETS];
        }
        let below_same = self.highest_of(func);
        let head = &mut self.heads[bucket(func)];
        let below_bucket = std::mem::replace(head, index);
        let outer = below_same == NONE;
        let caller = self.stack.last().map_or(ROOT, |o| o.func);
        // The same caller→callee pair below is a frame of `func` below: only those are looked at
        // (a recursion's chain; its first link is the pair itself where a function calls itself).
        let edge_outer = outer || !self.same_pair_below(below_same, caller);
        self.stack.push(Open {
            func,
            start: ns,
            children: 0,
            outer,
            edge_outer,
            below_same,
            below_bucket,
            node,
            lnode: None,
            sp,
            segment: None,
            unresolved: false,
            enter_value: None,
            iter: IterMark::default(),
        });
    }

    /// Whether one of the frames from index `from` down its chain of frames of the same
    /// function was called by `caller`.
    fn same_pair_below(&self, from: u32, caller: u32) -> bool {
        let mut j = from;
        while j != NONE {
            let called_by = match j {
                0 => ROOT,
                _ => self.stack[j as usize - 1].func,
            };
            if called_by == caller {
                return true;
            }
            j = self.stack[j as usize].below_same;
        }
        false
    }

    /// Pops the top frame; the function's highest frame is the one it linked to.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Open> {
        let o = self.stack.pop()?;
        if o.segment.is_some() {
            // The top frame is the highest segment frame.
            self.segments.pop();
        }
        self.unlink(o.func, o.below_bucket);
        Some(o)
    }

    /// Pops the top frame, which is not a segment, without returning it.
    #[inline(always)]
    pub fn pop_plain(&mut self) {
        let Some(o) = self.stack.last() else {
            return;
        };
        debug_assert!(o.segment.is_none());
        let (func, below_bucket) = (o.func, o.below_bucket);
        self.unlink(func, below_bucket);
        self.stack.pop();
    }

    /// The top frame (of `func`, linked to `below_bucket`) leaves its bucket's chain.
    #[inline(always)]
    fn unlink(&mut self, func: u32, below_bucket: u32) {
        if let Some(head) = self.heads.get_mut(bucket(func)) {
            *head = below_bucket;
        }
    }

    /// Makes the top frame a segment of a logical call.
    #[inline]
    pub fn mark_segment(&mut self, segment: SegmentRef) {
        let top_index = self.stack.len().saturating_sub(1) as u32;
        if let Some(top) = self.stack.last_mut() {
            top.unresolved = false;
            if top.segment.replace(segment).is_none() {
                self.segments.push(top_index);
            }
        }
    }

    /// The stack indices of the segment frames, lowest first.
    #[inline]
    pub fn segment_frames(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.segments.iter().map(|&i| i as usize)
    }

    /// How many frames on the stack are segments.
    #[inline]
    pub fn open_segments(&self) -> usize {
        self.segments.len()
    }
}

/// No frame (an index in [`Open::below_same`]).
const NONE: u32 = u32::MAX;

/// Buckets of [`ThreadState::heads`] (a power of two): 1 KiB a thread.
const BUCKETS: usize = 256;

/// A function's bucket (Fibonacci hashing: the top bits of a multiplication).
#[inline(always)]
fn bucket(func: u32) -> usize {
    (func.wrapping_mul(0x9E37_79B9) >> (32 - BUCKETS.trailing_zeros())) as usize
}
