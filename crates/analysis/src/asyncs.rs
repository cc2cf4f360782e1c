//! What the analysis knows about asynchronous methods: which functions are runtime-async
//! thunks and variants or compiler state machines (their *role*), and the logical calls their
//! physical segments form (docs/design.md "Async methods: segments and logical calls").

use eltrace_trace::{FunctionIdx, FunctionRecord};

use crate::fxmap::{DenseMap, FxHashMap};
use crate::model::FunctionTable;
use crate::stats::CallSummary;

/// The method implementation flag of a runtime-async method.
pub const IMPL_ASYNC: u32 = 0x2000;

/// What a function is, as far as segments are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An ordinary method: one frame is one call.
    Plain,
    /// A runtime-async method's Task-returning thunk (an ordinary frame that calls the variant).
    Thunk,
    /// A runtime-async method's async variant: entered at the first call and at every resume.
    Variant,
    /// A runtime-async method whose role is not known yet (the profiler could not tell): its
    /// next event decides (a thunk's next event is its variant's Enter).
    Unresolved,
    /// `MoveNext` of a compiler-generated async state machine (`<M>d__N`), whose kickoff
    /// method is `kickoff` (the user method `M`, when it is in the trace).
    StateMachine,
}

impl Role {
    /// Whether frames of this role are segments of logical calls.
    pub fn segmented(self) -> bool {
        matches!(self, Role::Variant | Role::StateMachine)
    }
}

/// The user method a `MoveNext` of a compiler async state machine belongs to: for type
/// `Ns.T+<Work>d__3` and method `MoveNext`, `("Ns.T", "Work")`.
pub fn state_machine_method(r: &FunctionRecord) -> Option<(&str, &str)> {
    if r.method != "MoveNext" {
        return None;
    }
    let (outer, nested) = r.type_name.rsplit_once('+')?;
    let rest = nested.strip_prefix('<')?;
    let (name, tail) = rest.split_once('>')?;
    let tail = tail.strip_prefix('d')?;
    // `d__N`, possibly with generic arity: `d__3`, `d__3`1`.
    if !tail.starts_with("__") || name.is_empty() {
        return None;
    }
    Some((outer, name))
}

/// The role of a function from its record alone (the profiler's flags, impl flags, name).
pub fn role_of(r: &FunctionRecord) -> Role {
    if r.flags.async_thunk() {
        Role::Thunk
    } else if r.flags.async_variant() {
        Role::Variant
    } else if r.impl_flags & IMPL_ASYNC != 0 {
        Role::Unresolved
    } else if state_machine_method(r).is_some() {
        Role::StateMachine
    } else {
        Role::Plain
    }
}

/// Whether two records are the two halves (thunk and variant) of one runtime-async method.
pub fn same_async_method(a: &FunctionRecord, b: &FunctionRecord) -> bool {
    a.idx != b.idx
        && a.token == b.token
        && a.module == b.module
        && a.type_name == b.type_name
        && a.method == b.method
        && a.impl_flags & IMPL_ASYNC != 0
        && b.impl_flags & IMPL_ASYNC != 0
}

/// Whether `stub` is the kickoff method of state machine `sm` (`Ns.T.Work` for
/// `Ns.T+<Work>d__3.MoveNext`).
pub fn is_kickoff(sm: &FunctionRecord, stub: &FunctionRecord) -> bool {
    state_machine_method(sm)
        .is_some_and(|(ty, m)| stub.module == sm.module && stub.type_name == ty && stub.method == m)
}

/// Roles of the functions, decided from their records and learnt from the events.
#[derive(Debug, Default)]
pub struct Roles {
    roles: DenseMap<Role>,
}

impl Roles {
    pub fn get(&mut self, functions: &FunctionTable, f: u32) -> Role {
        if let Some(r) = self.roles.get(f) {
            return *r;
        }
        let r = functions.get(FunctionIdx(f)).map_or(Role::Plain, role_of);
        self.roles.insert(f, r);
        r
    }

    pub fn set(&mut self, f: u32, r: Role) {
        self.roles.insert(f, r);
    }

    /// The role learnt so far, without deciding one.
    pub fn known(&self, f: u32) -> Option<Role> {
        self.roles.get(f).copied()
    }
}

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
    pub enter_value: Option<u32>,
    pub leave_value: Option<u32>,
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
    /// Per function: calls that certainly suspended, oldest first.
    suspended: FxHashMap<u32, std::collections::VecDeque<u64>>,
    /// Per function: calls whose last segment ended with a Leave that may be a suspension.
    left_open: FxHashMap<u32, Vec<u64>>,
    /// Distances between two stack pointers at which one thread's dispatchers resumed
    /// runtime-async variants (e.g. the thread pool's and the timer queue's). Thread-pool
    /// threads run the same code, so a distance seen on one holds on the others.
    pub dispatch_deltas: Vec<u64>,
    /// Per function: how far below a frame's stack pointer its direct callees entered (a
    /// method's frame size; a few values, e.g. before and after tiered recompilation).
    call_deltas: FxHashMap<u32, Vec<u64>>,
}

/// How many call distances are kept per function.
const CALL_DELTAS: usize = 4;

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

    /// Notes that a direct call from `func` entered `delta` bytes below its frame's sp.
    pub fn note_call_delta(&mut self, func: u32, delta: u64) {
        let v = self.call_deltas.entry(func).or_default();
        if !v.contains(&delta) {
            if v.len() == CALL_DELTAS {
                v.remove(0);
            }
            v.push(delta);
        }
    }

    /// The call distances seen from `func`'s frames, if any.
    pub fn call_deltas(&self, func: u32) -> Option<&[u64]> {
        self.call_deltas.get(&func).map(Vec::as_slice)
    }

    /// Whether a call of `func` waits for a resume (suspended or left open).
    pub fn has_waiting(&self, func: u32) -> bool {
        self.suspended.get(&func).is_some_and(|q| !q.is_empty())
            || self.left_open.get(&func).is_some_and(|v| !v.is_empty())
    }

    pub fn start(&mut self, func: u32, caller: Option<u64>, ns: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        if let Some(c) = caller.and_then(|c| self.live.get_mut(&c)) {
            c.callees.push(id);
        }
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
                enter_value: None,
                leave_value: None,
            },
        );
        id
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

    /// The waiting call a resume of `func` continues when nothing names it: the oldest call
    /// that certainly suspended, else the newest one that left open. `(id, ambiguous, how it
    /// stood)`.
    pub fn pick(&mut self, func: u32) -> Option<(u64, bool, CallState)> {
        let from_suspended = self
            .suspended
            .get(&func)
            .and_then(|q| q.front().map(|&id| (id, q.len() > 1)));
        let (id, ambiguous) = match from_suspended {
            Some(x) => x,
            None => self
                .left_open
                .get(&func)
                .and_then(|v| v.last().map(|&id| (id, v.len() > 1)))?,
        };
        let prev = self.take(id)?;
        Some((id, ambiguous, prev))
    }

    /// A call of `func` whose latest segment is still open on a thread other than `thread`:
    /// a resume here shows that segment suspended without a Leave that thread has not shown
    /// yet (its next event would). The oldest such call; `(id, ambiguous)`.
    pub fn pick_running_elsewhere(&self, func: u32, thread: u32) -> Option<(u64, bool)> {
        let mut found: Option<u64> = None;
        let mut n = 0;
        for (&id, l) in &self.live {
            if l.func == func && l.state == CallState::Running && l.thread != thread {
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
    /// every one still known.
    pub fn finish_callees(&mut self, id: u64) -> Vec<(u64, Logical)> {
        let Some(l) = self.live.get_mut(&id) else {
            return Vec::new();
        };
        let callees = std::mem::take(&mut l.callees);
        let mut done = Vec::new();
        for c in callees {
            if let Some(x) = self.finish(c) {
                done.push((c, x));
            }
        }
        done
    }

    /// Removes a call that is known to be finished.
    pub fn finish(&mut self, id: u64) -> Option<Logical> {
        let _ = self.take(id);
        self.live.remove(&id)
    }

    /// Removes and returns every call still known, in id order.
    pub fn drain(&mut self) -> Vec<(u64, Logical)> {
        self.suspended.clear();
        self.left_open.clear();
        let mut v: Vec<(u64, Logical)> = self.live.drain().collect();
        v.sort_unstable_by_key(|(id, _)| *id);
        v
    }
}
