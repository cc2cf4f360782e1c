//! How a logical call is known by identity (docs/abi.md "Continuations at suspension", "State
//! machines by `this`"): the continuation a runtime-async suspension allocated or a resume
//! received, and the box a classic state machine's suspension put it in, each with its GC
//! epoch bits; the [`Calls`] methods that note them and find the call they name.
//!
//! ```text
//! continuation 0x…758  AllocContinuation   leave  …   call 7 allocated 0x…758 (note_allocation)
//! continuation 0x…758  Step                enter Step  by_continuation(0x…758) = call 7
//! continuation 0x…7000 GetStateMachineBox  leave  …   call 9's box 0x…7000 (note_box)
//! continuation 0x…7040 <W>d__3.MoveNext    enter …    by_box(0x…7040) = call 9
//! ```

use eltrace_trace::protocol::{OBJECT_EPOCH_BITS, other_object};

use super::calls::{CallState, Calls};

/// How far into its box a state machine lies at most: its header and the task's fields come
/// first (0x40 bytes on .NET 10 and 11.0.0 for `AsyncStateMachineBox<T>` of a small result).
const BOX_REACH: u64 = 1024;

impl Calls {
    /// The call of `func` that continuation `c` (address and GC epoch) names, if it can resume,
    /// and whether its suspension allocated `c` (else an earlier resume received it: .NET 11
    /// passes one object to every resume of a call). Within one GC epoch no address is reused,
    /// so the same value is the same call. A call's own continuation names it even while its
    /// segment still looks running (that segment's thread is not analysed that far, and .NET
    /// 11 allocates no new continuation when a call suspends again): a call resumes only once
    /// it suspended.
    pub fn by_continuation(&self, c: u64, func: u32) -> Option<(u64, bool)> {
        if !self.by_identity || c == 0 {
            return None;
        }
        let (id, allocated) = *self.by_cont.get(&c)?;
        self.live
            .get(&id)
            .is_some_and(|l| {
                l.cont == c && l.func == func && (allocated || l.state != CallState::Running)
            })
            .then_some((id, allocated))
    }

    /// Call `id`'s segment suspends with its state machine in box `b` (address and GC epoch
    /// bits): the box is the call's from now on (a pooled box serves one call at a time).
    pub fn note_box(&mut self, id: u64, b: u64) {
        if !self.by_identity || b == 0 {
            return;
        }
        let Some(l) = self.live.get_mut(&id) else {
            return;
        };
        let old = std::mem::replace(&mut l.boxed, b);
        if old != 0 && old != b {
            self.drop_box(id, old);
        }
        self.boxes
            .insert(b & !OBJECT_EPOCH_BITS, (b & OBJECT_EPOCH_BITS, id));
    }

    /// Forgets box `b` if call `id` holds it.
    pub(super) fn drop_box(&mut self, id: u64, b: u64) {
        let key = b & !OBJECT_EPOCH_BITS;
        if self.boxes.get(&key).is_some_and(|&(_, o)| o == id) {
            self.boxes.remove(&key);
        }
    }

    /// The call of `func` whose state-machine box holds `this` (a resume's `MoveNext`
    /// receives the struct inside the box, [`BOX_REACH`] bytes in at most), `(call, true)`:
    /// the box recorded last at or below `this`, in the same GC epoch. Boxes are objects: no
    /// other lies between a box's start and a struct inside it.
    pub fn by_box(&self, this: u64, func: u32) -> Option<(u64, bool)> {
        if !self.by_identity || this == 0 {
            return None;
        }
        let addr = this & !OBJECT_EPOCH_BITS;
        let (&start, &(epoch, id)) = self.boxes.range(..=addr).next_back()?;
        (addr - start < BOX_REACH
            && epoch == this & OBJECT_EPOCH_BITS
            && self.live.get(&id).is_some_and(|l| l.func == func))
        .then_some((id, true))
    }

    /// Call `id`'s running segment allocated continuation `c` as it suspends.
    pub fn note_allocation(&mut self, id: u64, c: u64) {
        if let Some(l) = self.live.get_mut(&id) {
            l.allocated_in = l.started.checked_sub(1);
        }
        self.note_continuation(id, c, true);
    }

    /// Whether call `id`, whose first segment just ended without a Leave, tail-awaited: the
    /// trace records allocations, and that segment allocated no continuation (in a timeless
    /// trace: and an allocation showed it gone, see [`Calls::at_allocation`]). The runtime
    /// then never resumes it (the task it awaited completes its caller): the call ends there.
    /// (On .NET 11 later suspensions reuse the call's continuation, so only a first segment
    /// tells.)
    pub fn tail_awaited(&self, id: u64) -> bool {
        self.allocations
            && (self.at_allocation || self.by_identity)
            && self
                .live
                .get(&id)
                .is_some_and(|l| l.started == 1 && l.allocated_in.is_none())
    }

    /// Call `id` resumed with continuation `c`: noted unless `c` names another live call (a
    /// resume linked by order must not take a continuation from the call it belongs to).
    pub fn note_resumed_with(&mut self, id: u64, c: u64) {
        let other = self
            .by_cont
            .get(&c)
            .is_some_and(|&(o, _)| o != id && self.live.contains_key(&o));
        if !other {
            self.note_continuation(id, c, false);
        }
    }

    /// Continuation `c` is call `id`'s now (`allocated`: by its suspension).
    fn note_continuation(&mut self, id: u64, c: u64, allocated: bool) {
        if !self.by_identity || c == 0 {
            return;
        }
        let Some(l) = self.live.get_mut(&id) else {
            return;
        };
        let old = std::mem::replace(&mut l.cont, c);
        if old != 0 && old != c && self.by_cont.get(&old).is_some_and(|&(o, _)| o == id) {
            self.by_cont.remove(&old);
        }
        let allocated = allocated || self.by_cont.get(&c).is_some_and(|&(o, a)| o == id && a);
        self.by_cont.insert(c, (id, allocated));
    }

    /// Whether call `id` certainly is not the call of a state machine whose resume received
    /// object `this`: an earlier resume of it received another object in the same GC epoch
    /// (the values' low bits; a struct state machine's box, or its class object, serves the
    /// call from its first resume to its end, and within one epoch no address names two
    /// objects).
    pub(super) fn other_object(&self, id: u64, this: u64) -> bool {
        self.live
            .get(&id)
            .is_some_and(|l| other_object(l.cont, this))
    }
}
