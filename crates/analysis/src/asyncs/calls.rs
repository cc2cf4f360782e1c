//! The logical calls of async methods ([`Calls`]): each one's segments so far and how it
//! stands (running, certainly suspended, or left with a Leave that may have been a
//! suspension), the calls waiting for a resume per function, and what the rules learn about
//! stack distances (dispatch stack pointers, frame sizes). The rules themselves are in `link`.
//!
//! ```text
//! t=20   T0 enter  L3          sp=0x8eb0   call 0 starts: Running, segment 0
//! t=30   T0 leave  L3 [thunk]  sp=0x8f00   L3's segment gone, no Leave: call 0 Suspended
//! t=100  T1 enter  L3          sp=0x840    a resume: call 0 Running again, segment 1
//! t=130  T1 leave  L3          sp=0x840    call 0 complete (on .NET 10): finished, settled
//! ```

use crate::fxmap::{DenseMap, FxHashMap};
use crate::model::CallSummary;

/// How a logical call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// A segment of it is on a stack.
    Running,
    /// Its last segment ended without a Leave: it certainly suspended.
    Suspended,
    /// Its last segment ended with a Leave on a runtime (or a state machine) where a Leave may
    /// be a suspension: complete unless a later resume continues it.
    LeftOpen,
}

/// One logical call of an async method: its initial segment and its resumes.
#[derive(Debug, Clone)]
pub struct Logical {
    pub func: u32,
    /// The logical call that made this one (an async caller's), if any.
    pub caller: Option<u64>,
    pub first_start: u64,
    pub last_end: u64,
    pub segments: u32,
    pub cpu_ns: u64,
    pub state: CallState,
    /// A resume was attached to it by order alone (several calls were waiting).
    pub inferred: bool,
    /// Segments started (the next segment's index).
    pub started: u32,
    /// The thread of the latest segment.
    pub thread: u32,
    /// Logical calls this one made (its async callees).
    pub callees: Vec<u64>,
    /// A callee of it ended by an exception, which may pass this call without resuming it
    /// (to its caller's handler): it no longer holds its caller (see [`Calls::pick`]).
    pub callee_threw: bool,
    pub enter_value: Option<u32>,
    pub leave_value: Option<u32>,
    /// The continuation (with its GC epoch bits) its latest suspension allocated or its latest
    /// resume received, 0 for none.
    pub cont: u64,
    /// The segment (index) whose suspension allocated the call's latest continuation.
    pub allocated_in: Option<u32>,
    /// The state-machine box its latest suspension used (a classic async method's; with its
    /// GC epoch bits), 0 for none.
    pub boxed: u64,
    /// The call's node in the logical call tree (its first segment's), where its resumed
    /// segments go too.
    pub lnode: Option<crate::model::CallNodeId>,
}

impl Logical {
    /// What the statistics take of call `id` when it is over.
    pub fn summary(&self, id: u64) -> CallSummary {
        CallSummary {
            call: id,
            func: self.func,
            wall_ns: self.last_end.saturating_sub(self.first_start),
            enter_value: self.enter_value,
            leave_value: self.leave_value,
        }
    }
}

/// The logical calls not yet finished, and per function the ones waiting for a resume.
#[derive(Debug, Default)]
pub struct Calls {
    next_id: u64,
    pub live: FxHashMap<u64, Logical>,
    /// `(call, index)` → the start of the segment after it (see [`Calls::note_resume_bound`]).
    bounds: FxHashMap<(u64, u32), u64>,
    /// Per function: calls that certainly suspended, oldest first.
    suspended: FxHashMap<u32, std::collections::VecDeque<u64>>,
    /// Per function: calls whose last segment ended with a Leave that may be a suspension.
    left_open: FxHashMap<u32, Vec<u64>>,
    /// Per function: how many of its calls are live.
    live_per_func: FxHashMap<u32, u32>,
    /// Distances between two stack pointers at which one thread's dispatchers resumed
    /// runtime-async variants (e.g. the thread pool's and the timer queue's). Thread-pool
    /// threads run the same code, so a distance seen on one holds on the others.
    pub dispatch_deltas: Vec<u64>,
    /// Where in a page of the stack (`sp % STACK_PAGE`) a dispatcher resumed a variant with
    /// nothing below it, on any thread: thread-pool threads run the same code from stacks
    /// laid out alike (each a whole number of pages), so their dispatch stack pointers agree
    /// there, e.g. 0x…3b0 for the timer queue's resumes on every pool thread of .NET 10.
    dispatch_offsets: Vec<u64>,
    /// How far below a runtime-async thunk's stack pointer it entered its variant (the
    /// thunks' frame sizes: small, the runtime makes them alike).
    thunk_deltas: Vec<u64>,
    /// Per function: how far below a frame's stack pointer its direct callees entered (a
    /// method's frame size; a few values, e.g. before and after tiered recompilation).
    call_deltas: DenseMap<Deltas>,
    /// The trace's continuation values carry GC epochs (INFO `gc_epochs=1`): a value seen
    /// again names the same live call ([`Calls::by_continuation`]).
    pub by_identity: bool,
    /// The trace records the continuations that suspensions allocate (one was seen).
    pub allocations: bool,
    /// The frames being closed are the ones an allocation showed gone (its caller allocates
    /// at their stack pointer: `replay::allocations`). In a timeless trace that is the only
    /// evidence of a tail await taken: there other threads' events, replayed out of their
    /// real order, can make the rules close a first segment before its own allocation.
    pub at_allocation: bool,
    /// Continuation value (address and GC epoch bits) → the call whose suspension allocated it
    /// (`true`) or whose latest resume received it (`false`).
    pub(super) by_cont: FxHashMap<u64, (u64, bool)>,
    /// State-machine box address (epoch bits cleared) → (its GC epoch bits, the call whose
    /// latest suspension used it).
    pub(super) boxes: std::collections::BTreeMap<u64, (u64, u64)>,
}

/// How many call distances are kept per function.
const CALL_DELTAS: usize = 4;

/// A function's call distances, the latest [`CALL_DELTAS`] different ones, oldest first (kept
/// inline: every Leave notes one, so this is on the replay's hot path).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Deltas {
    v: [u64; CALL_DELTAS],
    len: u8,
}

impl Deltas {
    #[inline]
    fn as_slice(&self) -> &[u64] {
        &self.v[..usize::from(self.len)]
    }

    #[inline]
    fn note(&mut self, delta: u64) {
        if self.as_slice().contains(&delta) {
            return;
        }
        let n = usize::from(self.len);
        if n == CALL_DELTAS {
            self.v.copy_within(1.., 0);
            self.v[CALL_DELTAS - 1] = delta;
        } else {
            self.v[n] = delta;
            self.len += 1;
        }
    }
}

/// How many callees a call notes before it forgets those that are over.
const CALLEES: usize = 16;

/// The page size that [`Calls::dispatch_offsets`] are taken in.
const STACK_PAGE: u64 = 0x1000;

/// How many dispatch distances are kept.
const DISPATCH_DELTAS: usize = 16;

impl Calls {
    /// Notes the distance between two dispatch stack pointers of one thread.
    pub fn note_dispatch_delta(&mut self, delta: u64) {
        if delta == 0 || self.dispatch_deltas.contains(&delta) {
            return;
        }
        if self.dispatch_deltas.len() == DISPATCH_DELTAS {
            self.dispatch_deltas.remove(0);
        }
        self.dispatch_deltas.push(delta);
    }

    /// Notes that a thunk entered its variant `delta` bytes below its stack pointer.
    pub fn note_thunk_delta(&mut self, delta: u64) {
        if delta == 0 || self.thunk_deltas.contains(&delta) {
            return;
        }
        if self.thunk_deltas.len() == DISPATCH_DELTAS {
            self.thunk_deltas.remove(0);
        }
        self.thunk_deltas.push(delta);
    }

    /// Whether a thunk entered its variant `delta` bytes below it before; `None` when no
    /// thunk was seen to.
    pub fn thunk_delta_seen(&self, delta: u64) -> Option<bool> {
        (!self.thunk_deltas.is_empty()).then(|| self.thunk_deltas.contains(&delta))
    }

    /// Notes a stack pointer where a dispatcher resumed a variant with nothing below it.
    pub fn note_dispatch_offset(&mut self, sp: u64) {
        let off = sp % STACK_PAGE;
        if sp == 0 || self.dispatch_offsets.contains(&off) {
            return;
        }
        if self.dispatch_offsets.len() == DISPATCH_DELTAS {
            self.dispatch_offsets.remove(0);
        }
        self.dispatch_offsets.push(off);
    }

    /// Whether `sp` lies where some thread's dispatcher resumed a variant, within a page.
    #[inline]
    pub fn at_dispatch_offset(&self, sp: u64) -> bool {
        sp != 0 && self.dispatch_offsets.contains(&(sp % STACK_PAGE))
    }

    /// Notes that a direct call from `func` entered `delta` bytes below its frame's sp.
    #[inline]
    pub fn note_call_delta(&mut self, func: u32, delta: u64) {
        self.call_deltas.entry(func, Deltas::default).note(delta);
    }

    /// The call distances seen from `func`'s frames, if any.
    pub fn call_deltas(&self, func: u32) -> Option<&[u64]> {
        self.call_deltas.get(func).map(Deltas::as_slice)
    }

    /// Whether a call of `func` waits for a resume (suspended or left open).
    pub fn has_waiting(&self, func: u32) -> bool {
        self.suspended.get(&func).is_some_and(|q| !q.is_empty())
            || self.left_open.get(&func).is_some_and(|v| !v.is_empty())
    }

    pub fn start(&mut self, func: u32, caller: Option<u64>, ns: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if let Some(c) = caller {
            self.add_callee(c, id);
        }
        *self.live_per_func.entry(func).or_default() += 1;
        self.live.insert(
            id,
            Logical {
                func,
                caller,
                first_start: ns,
                last_end: ns,
                segments: 0,
                cpu_ns: 0,
                state: CallState::Running,
                inferred: false,
                started: 0,
                thread: u32::MAX,
                callees: Vec::new(),
                callee_threw: false,
                enter_value: None,
                leave_value: None,
                cont: 0,
                allocated_in: None,
                boxed: 0,
                lnode: None,
            },
        );
        id
    }

    /// Segment `index` of `call` had not been seen to end when the next one began at `t` (a
    /// resume on another thread analysed first): it suspended by `t`.
    pub fn note_resume_bound(&mut self, call: u64, index: u32, t: u64) {
        self.bounds.insert((call, index), t);
    }

    /// When segment `seg` of its call suspended at the latest, if a later segment began before
    /// it was seen to end (taken once; kept after the call is over).
    pub fn resume_bound(&mut self, seg: crate::model::SegmentRef) -> Option<u64> {
        if self.bounds.is_empty() {
            return None;
        }
        self.bounds.remove(&(seg.call, seg.index))
    }

    /// Notes `callee` as a call that `caller` made; forgets callees that are over once
    /// there are many (a caller whose callees complete without suspending is not resumed).
    fn add_callee(&mut self, caller: u64, callee: u64) {
        let n = match self.live.get(&caller) {
            Some(l) => l.callees.len(),
            None => return,
        };
        if n >= CALLEES && n.is_power_of_two() {
            let mut v = std::mem::take(&mut self.live.get_mut(&caller).expect("live").callees);
            v.retain(|c| self.live.contains_key(c));
            self.live.get_mut(&caller).expect("live").callees = v;
        }
        if let Some(l) = self.live.get_mut(&caller) {
            l.callees.push(callee);
        }
    }

    pub fn park_suspended(&mut self, id: u64) {
        if let Some(l) = self.live.get_mut(&id) {
            l.state = CallState::Suspended;
            self.suspended.entry(l.func).or_default().push_back(id);
        }
    }

    pub fn park_left_open(&mut self, id: u64) {
        if let Some(l) = self.live.get_mut(&id) {
            l.state = CallState::LeftOpen;
            self.left_open.entry(l.func).or_default().push(id);
        }
    }

    /// Sets (or clears) the return value of live call `id`'s latest Leave.
    pub fn set_leave_value(&mut self, id: u64, value: Option<u32>) {
        if let Some(l) = self.live.get_mut(&id) {
            l.leave_value = value;
        }
    }

    /// Whether `id` is waiting for a resume (suspended or left open).
    pub fn waiting(&self, id: u64) -> bool {
        self.live
            .get(&id)
            .is_some_and(|l| l.state != CallState::Running)
    }

    /// Takes `id` out of the waiting lists (it resumes); returns how it stood.
    pub fn take(&mut self, id: u64) -> Option<CallState> {
        let l = self.live.get_mut(&id)?;
        let prev = l.state;
        let func = l.func;
        match l.state {
            CallState::Suspended => {
                if let Some(q) = self.suspended.get_mut(&func) {
                    q.retain(|&x| x != id);
                }
            }
            CallState::LeftOpen => {
                if let Some(v) = self.left_open.get_mut(&func) {
                    v.retain(|&x| x != id);
                }
            }
            CallState::Running => {}
        }
        l.state = CallState::Running;
        Some(prev)
    }

    /// Whether call `id` awaits a callee that is not over: a direct callee (a variant calls
    /// another variant only to await it) still live, running, suspended or left open by a
    /// Leave that may have been a suspension. Such a call resumes only after that callee is
    /// over, or when an exception passes the callee by: a callee whose own callee ended by an
    /// exception does not hold it (the exception may pass it to its caller's handler).
    fn blocked(&self, id: u64) -> bool {
        self.live.get(&id).is_some_and(|l| {
            l.callees
                .iter()
                .any(|c| self.live.get(c).is_some_and(|x| !x.callee_threw))
        })
    }

    /// Notes that call `id` ended by an exception: its caller may be passed by it.
    pub fn note_threw(&mut self, id: u64) {
        let caller = self.live.get(&id).and_then(|l| l.caller);
        if let Some(c) = caller.and_then(|c| self.live.get_mut(&c)) {
            c.callee_threw = true;
        }
    }

    /// The call a resume of `func` on `thread` continues when nothing names it, `(id,
    /// ambiguous, how it stood)`. The candidates, in this order: the oldest call that certainly
    /// suspended, the newest one that left open, the oldest one whose latest segment is still
    /// open on another thread (a resume here shows that segment suspended without a Leave
    /// that thread has not shown yet: its next event would); first among those that await no
    /// callee that is not over ([`Calls::blocked`]), then among all. `ambiguous` when the
    /// chosen kind had more than one candidate.
    ///
    /// ```text
    /// T0 enter  Chain  sp=0x3020   call 1 (depth 5) awaits call 2 (depth 4) ... call 6 (depth 0)
    /// T1 enter  Chain  sp=0x63b0   the timer resumes call 6; it completes
    /// T1 enter  Chain  sp=0x63b0   call 5 resumes after it, awaits a Yield: suspended, unseen
    /// T2 enter  Chain  sp=0x5840   calls 1-4 are suspended, but each awaits a callee not
    ///                              over: this resumes call 5, still open on T1
    /// ```
    ///
    /// `this`: a state machine's resume received that object; a call whose earlier resume
    /// received another one in the same GC epoch is another call ([`Calls::other_object`]).
    pub fn pick(
        &mut self,
        func: u32,
        thread: u32,
        this: Option<u64>,
    ) -> Option<(u64, bool, CallState)> {
        let (id, ambiguous) = self
            .pick_among(func, thread, true, this)
            .or_else(|| self.pick_among(func, thread, false, this))?;
        let prev = self.take(id)?;
        Some((id, ambiguous, prev))
    }

    /// Whether a resume of `func` on `thread` would find a call to continue.
    pub fn resumable(&self, func: u32, thread: u32) -> bool {
        self.pick_among(func, thread, false, None).is_some()
    }

    /// [`Calls::pick`]'s choice among the calls that await nothing (`free`) or among all.
    fn pick_among(
        &self,
        func: u32,
        thread: u32,
        free: bool,
        this: Option<u64>,
    ) -> Option<(u64, bool)> {
        let ok = |id: &u64| {
            (!free || !self.blocked(*id)) && !this.is_some_and(|t| self.other_object(*id, t))
        };
        if let Some(q) = self.suspended.get(&func) {
            let mut c = q.iter().filter(|id| ok(id));
            if let Some(&id) = c.next() {
                return Some((id, c.next().is_some()));
            }
        }
        if let Some(v) = self.left_open.get(&func) {
            let mut c = v.iter().rev().filter(|id| ok(id));
            if let Some(&id) = c.next() {
                return Some((id, c.next().is_some()));
            }
        }
        let mut found: Option<u64> = None;
        let mut n = 0;
        for (&id, l) in &self.live {
            if l.func == func && l.state == CallState::Running && l.thread != thread && ok(&id) {
                n += 1;
                if found.is_none_or(|f| id < f) {
                    found = Some(id);
                }
            }
        }
        found.map(|id| (id, n > 1))
    }

    /// When `id` resumes, the calls it awaited are over, also those that never resumed (an
    /// exception can pass through a suspended async method without resuming it) and those
    /// whose last segment another thread has not been seen to end yet: removes and returns
    /// every one still known, and the calls those awaited, and so on (.NET 11.0.0 resumes a
    /// caller directly past callees that only return what they await: `Task.Delay`'s async
    /// variants, chained three deep, are never resumed).
    pub fn finish_callees(&mut self, id: u64) -> Vec<(u64, Logical)> {
        let Some(l) = self.live.get_mut(&id) else {
            return Vec::new();
        };
        let mut todo = std::mem::take(&mut l.callees);
        let mut done = Vec::new();
        while let Some(c) = todo.pop() {
            if let Some(mut x) = self.finish(c) {
                todo.append(&mut x.callees);
                done.push((c, x));
            }
        }
        done
    }

    /// Removes a call that is known to be finished.
    pub fn finish(&mut self, id: u64) -> Option<Logical> {
        let _ = self.take(id);
        let l = self.live.remove(&id)?;
        if l.cont != 0 && self.by_cont.get(&l.cont).is_some_and(|&(o, _)| o == id) {
            self.by_cont.remove(&l.cont);
        }
        if l.boxed != 0 {
            self.drop_box(id, l.boxed);
        }
        if let Some(n) = self.live_per_func.get_mut(&l.func) {
            *n = n.saturating_sub(1);
        }
        Some(l)
    }

    /// Whether `func` has no live call (none running, waiting or left open): an Enter of its
    /// variant can only be a first call.
    pub fn none_live(&self, func: u32) -> bool {
        self.live_per_func.get(&func).is_none_or(|&n| n == 0)
    }

    /// Removes and returns every call still known, in id order.
    pub fn drain(&mut self) -> Vec<(u64, Logical)> {
        self.suspended.clear();
        self.left_open.clear();
        self.live_per_func.clear();
        self.by_cont.clear();
        self.boxes.clear();
        let mut v: Vec<(u64, Logical)> = self.live.drain().collect();
        v.sort_unstable_by_key(|(id, _)| *id);
        v
    }
}
