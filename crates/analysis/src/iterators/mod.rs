//! Iterators (`yield return`; docs/design.md "Iterators: enumerations"): an iterator's
//! `MoveNext` is an ordinary call (one frame, one call), and its frames are grouped into
//! *enumerations*, one per enumerator from its first `MoveNext` to its last, never merged
//! across enumerators. An async iterator's members carry their enumerator (`this`, recorded
//! by the profiler); otherwise an enumerator is known by who holds it
//! (its *holder*): the frame that obtained it (from the iterator's `GetEnumerator`, or from an
//! iterator method that returns the enumerator itself), the logical call of an async method
//! whose segment obtained it, or the enumeration of an outer iterator (a nested or recursive
//! iterator's enumerator lives inside its consumer's enumeration, across that one's frames).
//! A member of the iterator (`MoveNext`, `get_Current`, `Dispose`) works on the newest
//! enumerator of its iterator held by the nearest holder below it on the stack; a holder's
//! frame that ends hands what it holds to its caller.
//!
//! ```text
//! enter  Run                               holder Run
//! enter  T+<Seq>d__1.GetEnumerator         an enumerator of Seq, held by Run
//! enter  T+<Seq>d__1.MoveNext   (×3)       enumeration 1 starts, then goes on (2 yields so far)
//! enter  T+<Seq>d__1.get_Current           after the last MoveNext: that one yielded too
//! enter  T+<Seq>d__1.Dispose               enumeration 1 ends: 3 MoveNext, 3 yields, abandoned
//! ```
//!
//! How an enumeration ended: `completed` when its last `MoveNext` returned false, `abandoned`
//! when it returned true and the holder stopped (disposed it or ended), `faulted` when it
//! threw. The return value is known with `record --values`; otherwise a `get_Current` after
//! the last `MoveNext` shows it returned true (every consumer reads the element it asked for,
//! save one that only tests `MoveNext`, like LINQ's `Any()`: taken for a completion).

use eltrace_trace::protocol::other_object;
use eltrace_trace::{FunctionIdx, FunctionRecord};

use crate::fxmap::{DenseMap, FxHashMap};
use crate::machines::MachineKind;
use crate::model::Tables;
use crate::stack::ThreadState;
use crate::stats::Stats;

mod ending;
pub(crate) use ending::{closed, finish};

/// What the iterator model works with, for one thread's event.
pub(crate) struct Env<'a> {
    pub iters: &'a mut Iterators,
    pub stats: &'a mut Stats,
    pub tables: &'a Tables,
    pub thread: u32,
}

/// How many frames below a member the search for its enumerator's holder goes.
const MAX_CHAIN: usize = 256;

/// What an iterator-related function is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    MoveNext,
    GetEnumerator,
    Current,
    Dispose,
    /// Any other method of the iterator's type (`<>m__Finally1`, the constructor).
    Other,
    /// An iterator method that returns the enumerator itself (no `IEnumerable`).
    Kickoff,
}

#[derive(Debug, Clone, Copy)]
struct Info {
    /// The iterator (its state machine type), interned.
    family: u32,
    member: Member,
}

/// Who holds an enumerator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Holder {
    /// An ordinary frame: the thread and its index on the shadow stack.
    Frame { thread: u32, depth: u32 },
    /// A logical call of an async method (its segments may run on any thread).
    Call(u64),
    /// Another iterator's enumeration (a nested or recursive iterator).
    Enumeration(u64),
    /// Code without probes at the bottom of a thread.
    Thread(u32),
}

/// How an enumeration's latest `MoveNext` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// No `MoveNext` yet.
    Fresh,
    Running,
    /// It returned true (its return value was captured).
    Yielded,
    /// It returned false.
    Finished,
    Faulted,
    /// It returned, with an unknown value.
    Returned,
}

#[derive(Debug)]
struct Enumeration {
    family: u32,
    holder: Holder,
    /// The `MoveNext` function of its first `MoveNext` (its statistics go there).
    func: u32,
    moves: u64,
    /// `MoveNext` frames of it now open.
    running: u32,
    last: Last,
    /// A `get_Current` came after the latest `MoveNext`.
    current_after: bool,
    /// Asked to end (disposed) while a `MoveNext` of it was running.
    ending: bool,
    first_start: u64,
    last_end: u64,
    /// The enumerator object (its address and GC epoch bits) where the profiler recorded
    /// `this` (async iterators), else 0.
    object: u64,
}

/// The enumerations of every iterator, across threads.
#[derive(Debug, Default)]
pub(crate) struct Iterators {
    infos: DenseMap<Option<Info>>,
    families: FxHashMap<(String, String), u32>,
    next_id: u64,
    live: FxHashMap<u64, Enumeration>,
    /// The enumerators each holder holds, oldest first.
    held: FxHashMap<Holder, Vec<u64>>,
    /// Enumerator object → its live enumeration (see [`Enumeration::object`]).
    by_object: FxHashMap<u64, u64>,
    /// The trace has ended: enumerations still held are pending, not abandoned.
    at_end: bool,
}

impl Iterators {
    /// What function `f` is to the iterator model (decided at its first frame).
    #[inline(always)]
    fn info(
        &mut self,
        tables: &Tables,
        kind: impl FnOnce(&FunctionRecord) -> MachineKind,
        f: u32,
    ) -> Option<Info> {
        if let Some(i) = self.infos.get(f) {
            return *i;
        }
        self.first_info(tables, kind, f)
    }

    /// Whether `f` belongs to an iterator (the model looks at its frames).
    #[inline(always)]
    pub(crate) fn is_member(
        &mut self,
        tables: &Tables,
        kind: impl FnOnce(&FunctionRecord) -> MachineKind,
        f: u32,
    ) -> bool {
        self.info(tables, kind, f).is_some()
    }

    /// [`Iterators::info`] the first time `f` is asked about.
    #[cold]
    #[inline(never)]
    fn first_info(
        &mut self,
        tables: &Tables,
        kind: impl FnOnce(&FunctionRecord) -> MachineKind,
        f: u32,
    ) -> Option<Info> {
        let i = self.decide(tables, kind, f);
        self.infos.insert(f, i);
        i
    }

    fn decide(
        &mut self,
        tables: &Tables,
        kind: impl FnOnce(&FunctionRecord) -> MachineKind,
        f: u32,
    ) -> Option<Info> {
        let r = tables.functions.get(FunctionIdx(f))?;
        let fl = r.flags;
        if fl.iterator_kickoff()
            && !fl.async_kickoff()
            && !fl.enumerable()
            && !r.state_machine.is_empty()
        {
            let family = self.family(&r.module, &r.state_machine);
            return Some(Info {
                family,
                member: Member::Kickoff,
            });
        }
        let m = r.method.as_str();
        // An async iterator (`IAsyncEnumerable`): `MoveNextAsync` is the call that moves it
        // (its row gets the enumerations and yields); the state machine's own `MoveNext` runs
        // the body, once from `MoveNextAsync` and once per await that suspended (an ordinary
        // call to this model). The other members as an iterator's, with `Async` names.
        let (moves, obtain, dispose) = match kind(r) {
            MachineKind::Iterator => (m == "MoveNext", "GetEnumerator", "Dispose"),
            MachineKind::AsyncIterator => (
                m.ends_with("MoveNextAsync"),
                "GetAsyncEnumerator",
                "DisposeAsync",
            ),
            _ => return None,
        };
        let member = if moves {
            Member::MoveNext
        } else if m.ends_with(obtain) {
            Member::GetEnumerator
        } else if m.ends_with("get_Current") {
            Member::Current
        } else if m.ends_with(dispose) {
            Member::Dispose
        } else {
            Member::Other
        };
        let (module, ty) = (r.module.clone(), r.type_name.clone());
        Some(Info {
            family: self.family(&module, &ty),
            member,
        })
    }

    fn family(&mut self, module: &str, machine: &str) -> u32 {
        let n = self.families.len() as u32;
        *self
            .families
            .entry((module.to_string(), machine.to_string()))
            .or_insert(n)
    }

    /// A new enumerator of `family`, held by `holder` (not started).
    fn obtain(&mut self, st: &mut ThreadState, holder: Holder, family: u32, ns: u64) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.live.insert(
            id,
            Enumeration {
                family,
                holder,
                func: u32::MAX,
                moves: 0,
                running: 0,
                last: Last::Fresh,
                current_after: false,
                ending: false,
                first_start: ns,
                last_end: ns,
                object: 0,
            },
        );
        self.hold(st, holder, id);
        id
    }

    fn hold(&mut self, st: &mut ThreadState, holder: Holder, id: u64) {
        self.held.entry(holder).or_default().push(id);
        if let Holder::Frame { depth, .. } = holder {
            if let Some(o) = st.stack.get_mut(depth as usize) {
                o.iter.holds = true;
            }
        }
    }

    /// The newest enumerator of `family` held by `holder` that `want` can work on (not one
    /// known to be another object than `this`).
    fn pick(&self, holder: Holder, family: u32, want: Member, this: Option<u64>) -> Option<u64> {
        let ids = self.held.get(&holder)?;
        // A logical call of an async method does one thing at a time: when one of its
        // segments moves an enumerator, a `MoveNext` still open in an earlier segment of it on
        // another thread is over (that thread's next event will show the segment gone).
        let call = matches!(holder, Holder::Call(_));
        let usable = |id: &&u64| {
            self.live.get(id).is_some_and(|e| {
                e.family == family
                    && (e.running == 0 || call)
                    && !e.ending
                    && !this.is_some_and(|t| other_object(e.object, t))
            })
        };
        let started = |id: &&u64| self.live.get(id).is_some_and(|e| e.moves > 0);
        match want {
            // A fresh enumerator first: two obtained together (`Zip`) both start.
            Member::MoveNext => ids
                .iter()
                .rev()
                .filter(usable)
                .find(|id| !started(id))
                .or_else(|| ids.iter().rev().filter(usable).find(started)),
            Member::Current => ids.iter().rev().filter(usable).find(started),
            _ => ids.iter().rev().find(usable),
        }
        .copied()
    }

    /// Searches the holders from the frame at `from` down (then the thread's own) for an
    /// enumerator of `family` that `want` can work on.
    fn find(
        &self,
        st: &ThreadState,
        thread: u32,
        from: Option<usize>,
        family: u32,
        want: Member,
        this: Option<u64>,
    ) -> Option<u64> {
        if let Some(id) = this.and_then(|t| self.by_object.get(&t)) {
            if self.live.get(id).is_some_and(|e| e.family == family) {
                return Some(*id);
            }
        }
        if let Some(top) = from {
            for i in (0..=top).rev().take(MAX_CHAIN) {
                if let Some(id) = self.pick(holder_at(st, thread, i), family, want, this) {
                    return Some(id);
                }
            }
        }
        self.pick(Holder::Thread(thread), family, want, this)
    }

    /// Enumeration `id` works on object `this` (where recorded).
    fn bind(&mut self, id: u64, this: Option<u64>) {
        let Some(t) = this else {
            return;
        };
        let Some(e) = self.live.get_mut(&id) else {
            return;
        };
        let old = std::mem::replace(&mut e.object, t);
        if old != t && self.by_object.get(&old) == Some(&id) {
            self.by_object.remove(&old);
        }
        self.by_object.insert(t, id);
    }
}

/// The holder that a frame at index `i` of a thread's stack stands for.
fn holder_at(st: &ThreadState, thread: u32, i: usize) -> Holder {
    let o = &st.stack[i];
    if o.iter.enumeration != 0 {
        Holder::Enumeration(o.iter.enumeration)
    } else if let Some(seg) = o.segment {
        Holder::Call(seg.call)
    } else {
        Holder::Frame {
            thread,
            depth: i as u32,
        }
    }
}

/// The holder for what a frame at `parent` (or, without one, the thread's unprobed code)
/// obtains.
fn holder_below(st: &ThreadState, thread: u32, parent: Option<usize>) -> Holder {
    parent.map_or(Holder::Thread(thread), |i| holder_at(st, thread, i))
}

/// A frame of function `f` was just pushed at `ns` (the top of `st`); `kind` tells what
/// state machine a function belongs to (asked once per function).
#[inline(always)]
pub(crate) fn entered(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    f: u32,
    ns: u64,
    kind: impl FnOnce(&FunctionRecord) -> MachineKind,
) {
    let Some(info) = cx.iters.info(cx.tables, kind, f) else {
        return;
    };
    entered_member(st, cx, info, f, ns);
}

fn entered_member(st: &mut ThreadState, cx: &mut Env<'_>, info: Info, f: u32, ns: u64) {
    let thread = cx.thread;
    let n = st.stack.len();
    let parent = n.checked_sub(2);
    let parent_info = parent.and_then(|p| {
        let func = st.stack[p].func;
        cx.iters.infos.get(func).copied().flatten()
    });
    let same_family = parent_info.filter(|p| p.family == info.family);
    // The enumerator, where the profiler recorded `this` (an async iterator's members; not
    // at an async variant's Enter, whose recorded argument is its continuation).
    let this = st.cont.filter(|&c| {
        c != 0
            && !cx
                .tables
                .functions
                .get(FunctionIdx(f))
                .is_some_and(|r| r.flags.async_variant())
    });
    let it = &mut *cx.iters;
    match info.member {
        Member::Kickoff => {
            if let Some(top) = st.stack.last_mut() {
                top.iter.kickoff = true;
            }
        }
        Member::GetEnumerator => {
            // The non-generic GetEnumerator calls the generic one: one enumerator.
            if same_family.is_some_and(|p| p.member == Member::GetEnumerator) {
                return;
            }
            let holder = holder_below(st, thread, parent);
            it.obtain(st, holder, info.family, ns);
        }
        Member::MoveNext => {
            // A runtime-async caller awaits an async iterator's MoveNextAsync through its async
            // variant: a resume of that variant, or the Task-returning MoveNextAsync the
            // variant calls (.NET 10), is the same move, not another.
            let resumed = st
                .stack
                .last()
                .and_then(|o| o.segment)
                .is_some_and(|s| s.index > 0);
            let from_variant = same_family.is_some_and(|p| p.member == Member::MoveNext)
                && parent.is_some_and(|p| {
                    cx.tables
                        .functions
                        .get(FunctionIdx(st.stack[p].func))
                        .is_some_and(|r| r.flags.async_variant())
                });
            if resumed || from_variant {
                return;
            }
            let id = match it.find(st, thread, parent, info.family, Member::MoveNext, this) {
                Some(id) => id,
                // No enumerator known (its GetEnumerator has no probes): one of its own.
                None => {
                    let holder = holder_below(st, thread, parent);
                    it.obtain(st, holder, info.family, ns)
                }
            };
            it.bind(id, this);
            start_move(st, cx, id, f, ns);
        }
        Member::Current => {
            let found = it.find(st, thread, parent, info.family, Member::Current, this);
            if let Some(id) = found {
                it.bind(id, this);
            }
            if let Some(e) = found.and_then(|id| it.live.get_mut(&id)) {
                e.current_after = true;
            }
        }
        Member::Dispose => {
            let found = it
                .find(st, thread, parent, info.family, Member::Dispose, this)
                // MoveNext's fault handler disposes its own enumerator, which is running.
                .or_else(|| same_family.and(parent.map(|p| st.stack[p].iter.enumeration)))
                .filter(|&id| id != 0);
            if let (Some(id), Some(top)) = (found, st.stack.last_mut()) {
                top.iter.enumeration = id;
            }
        }
        // An async iterator's body `MoveNext` with its enumerator recorded (`this`): it works
        // for that enumeration wherever it runs (also resumed after an await, with no
        // `MoveNextAsync` below it), so what it obtains is held by the enumeration. Other
        // members (`<>m__Finally1` and the like): the holders below are found by the search.
        Member::Other => body_entered(st, it, info.family, this),
    }
}

/// A move (`MoveNext`, `MoveNextAsync`) of enumeration `id` by function `f` starts at `ns`
/// (the top frame): the first one starts the enumeration; a later one shows the one before
/// it yielded.
fn start_move(st: &mut ThreadState, cx: &mut Env<'_>, id: u64, f: u32, ns: u64) {
    let Some(e) = cx.iters.live.get_mut(&id) else {
        return;
    };
    if e.moves == 0 {
        e.func = f;
        e.first_start = ns;
        cx.stats.function(f).enumerations += 1;
        cx.stats.totals.enumerations += 1;
    } else {
        let fs = cx.stats.function(e.func);
        fs.resumes += 1;
        // The MoveNext before this one yielded (unless it is known to have returned
        // false: the consumer asked again after the end). One still open (its async
        // caller's segment went on elsewhere: see `pick`) returned too.
        if matches!(e.last, Last::Yielded | Last::Returned)
            || (e.last == Last::Running && e.running > 0)
        {
            fs.suspensions += 1;
            fs.yields += 1;
        }
    }
    e.moves += 1;
    e.running += 1;
    e.last = Last::Running;
    e.current_after = false;
    let move_no = e.moves;
    if let Some(top) = st.stack.last_mut() {
        top.iter.enumeration = id;
        top.iter.move_no = move_no;
    }
}

/// An async iterator's body `MoveNext` (the top frame) with its enumerator recorded
/// (`this`): a frame of that enumeration wherever it runs.
fn body_entered(st: &mut ThreadState, it: &mut Iterators, family: u32, this: Option<u64>) {
    let n = st.stack.len();
    let Some(t) = this else {
        return;
    };
    let family_of = |id: &u64| it.live.get(id).is_some_and(|e| e.family == family);
    // Known by its object, else the enumeration of the move it runs under (its
    // `MoveNextAsync`, a few frames down at most), which learns its object here (a
    // runtime-async consumer calls `MoveNextAsync`'s variant, whose recorded argument
    // is its continuation, not the enumerator).
    let id = it.by_object.get(&t).copied().filter(family_of).or_else(|| {
        st.stack[..n.saturating_sub(1)]
            .iter()
            .rev()
            .take(4)
            .map(|o| o.iter.enumeration)
            .find(|&id| id != 0)
            .filter(family_of)
    });
    if let Some(id) = id {
        it.bind(id, Some(t));
        if let Some(top) = st.stack.last_mut() {
            top.iter.enumeration = id;
        }
    }
}
