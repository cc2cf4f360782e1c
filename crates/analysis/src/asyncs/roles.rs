//! What a function is as far as segments are concerned (its [`Role`]): decided from its
//! FUNCTION record (the profiler's flags, the impl flags, the name; compiler state machines as
//! `machines` tells them) or learnt from the events; and whether the runtime reports a Leave
//! when a runtime-async method suspends.
//!
//! ```text
//! enter  L3 [thunk]          impl 0x2000, flag ASYNC_THUNK    Thunk: an ordinary frame
//! enter  L3                  impl 0x2000, same token          Variant: a segment of a logical call
//! enter  T+<Work>d__1.MoveNext   flag ASYNC_STATE_MACHINE      StateMachine: a segment of T.Work
//! enter  T+<Seq>d__2.MoveNext    flag ITERATOR                 Plain (the iterator model, `iterators`)
//! enter  X  (impl 0x2000, no flag)   next: enter X (the other)  Unresolved, then Thunk and Variant
//! ```
//!
//! Without the profiler's state-machine flags (an older trace) an iterator is told from an
//! async state machine by a member only iterators have (`GetEnumerator`, `get_Current`,
//! `Dispose`, `Reset`), seen in the function table before its `MoveNext` runs.

use eltrace_trace::{FunctionFlags, FunctionIdx, FunctionRecord};

use crate::fxmap::{DenseMap, FxHashMap};
use crate::machines::{
    MachineKind, iterator_member_name, machine_kind_from_flags, state_machine_method,
    state_machine_type_parts,
};
use crate::model::FunctionTable;

pub(crate) use crate::machines::is_kickoff;

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
    /// `MoveNext` of a compiler-generated async state machine (`<M>d__N`), a segment of a
    /// logical call of its kickoff method (the user method `M`).
    StateMachine,
    /// The runtime's continuation allocator (`FunctionFlags::CONT_ALLOCATOR`): a frame only
    /// where the selection chose it; its Leave says that the frame it was called from
    /// suspends, with the continuation just before it (replay/allocations.rs).
    Allocator,
    /// A state-machine box getter (`FunctionFlags::STATE_MACHINE_BOX`): a frame only where the
    /// selection chose it; its Leave gives the classic async segment below it the box its
    /// resumes run in (replay/allocations.rs `boxed`).
    Boxer,
}

/// The role of a function from its record alone (the profiler's flags, impl flags, name);
/// without state-machine flags a `<M>d__N.MoveNext` is taken for an async state machine
/// unless `iterator_by_name`.
fn role_with(r: &FunctionRecord, iterator_by_name: bool) -> Role {
    if r.flags.cont_allocator() {
        Role::Allocator
    } else if r.flags.state_machine_box() {
        Role::Boxer
    } else if r.flags.async_thunk() {
        Role::Thunk
    } else if r.flags.async_variant() {
        Role::Variant
    } else if r.is_runtime_async() {
        Role::Unresolved
    } else if r.method != "MoveNext" {
        Role::Plain
    } else {
        match machine_kind_from_flags(r) {
            Some(MachineKind::Async) => Role::StateMachine,
            Some(_) => Role::Plain,
            None if state_machine_method(r).is_some() && !iterator_by_name => Role::StateMachine,
            None => Role::Plain,
        }
    }
}

/// Whether two records are the two halves (thunk and variant) of one runtime-async method
/// (both with the impl flag, or marked so by the profiler: the variant of a Task-returning
/// method that is not async has no impl flag).
pub fn same_async_method(a: &FunctionRecord, b: &FunctionRecord) -> bool {
    a.idx != b.idx
        && a.token == b.token
        && a.module == b.module
        && a.type_name == b.type_name
        && a.method == b.method
        && (a.is_runtime_async() && b.is_runtime_async()
            || a.flags.async_thunk() && b.flags.async_variant()
            || a.flags.async_variant() && b.flags.async_thunk())
}

/// Roles of the functions, decided from their records and learnt from the events.
#[derive(Debug, Default)]
pub struct Roles {
    roles: DenseMap<Role>,
    /// Types of records without state-machine flags that have an iterator's member
    /// (`module`, `type`): their `MoveNext` is an iterator's, not an async method's.
    iterator_types: FxHashMap<(String, String), ()>,
    /// How many functions have the role [`Role::Variant`] now.
    variants: usize,
    /// A record read so far could make a function a variant (the variant flag, or the
    /// runtime-async impl flag of a function whose role the events decide).
    variants_possible: bool,
}

impl Roles {
    /// Sets a function's role, keeping count of the variants.
    fn set(&mut self, f: u32, role: Role) {
        if self.roles.get(f) == Some(&Role::Variant) {
            self.variants -= 1;
        }
        if role == Role::Variant {
            self.variants += 1;
        }
        self.roles.insert(f, role);
    }

    /// Whether any function is a runtime-async variant (else no frame can be a variant's
    /// segment, and the rules about them have nothing to look at).
    #[inline]
    pub fn any_variant(&self) -> bool {
        self.variants > 0
    }

    /// Whether some function is or can become a variant with the records read so far (else
    /// [`Roles::any_variant`] stays false until more records are read).
    #[inline]
    pub fn variants_possible(&self) -> bool {
        self.variants_possible || self.variants > 0
    }

    /// A function's role (asked at every Enter, several times: kept inline).
    #[inline(always)]
    pub fn get(&mut self, functions: &FunctionTable, f: u32) -> Role {
        match self.roles.get(f) {
            Some(r) => *r,
            None => self.decide(functions, f),
        }
    }

    /// A function's role the first time it is asked for (kept from then on).
    #[cold]
    #[inline(never)]
    fn decide(&mut self, functions: &FunctionTable, f: u32) -> Role {
        let r = functions
            .get(FunctionIdx(f))
            .map_or(Role::Plain, |r| role_with(r, self.iterator_by_name(r)));
        self.set(f, r);
        r
    }

    /// The state machine kind of a function (flags, else names and the members seen).
    pub fn machine_kind(&self, r: &FunctionRecord) -> MachineKind {
        if let Some(k) = machine_kind_from_flags(r) {
            return k;
        }
        if state_machine_type_parts(&r.type_name).is_none() {
            MachineKind::None
        } else if self.iterator_by_name(r) {
            MachineKind::Iterator
        } else if r.method == "MoveNext" {
            MachineKind::Async
        } else {
            MachineKind::None
        }
    }

    fn iterator_by_name(&self, r: &FunctionRecord) -> bool {
        !self.iterator_types.is_empty()
            && self
                .iterator_types
                .contains_key(&(r.module.clone(), r.type_name.clone()))
    }

    /// Records a role learnt from the events, also in the function's record (so that names
    /// and exports show it).
    pub fn learn(&mut self, functions: &mut FunctionTable, f: u32, role: Role) {
        self.set(f, role);
        let bit = match role {
            Role::Thunk => FunctionFlags::ASYNC_THUNK,
            Role::Variant => FunctionFlags::ASYNC_VARIANT,
            _ => return,
        };
        functions.add_flags(FunctionIdx(f), bit);
    }

    /// A FUNCTION record of `r` was read (again): a role learnt from the events stands;
    /// otherwise a role already decided becomes the new record's. A record without flags
    /// that names an iterator's member marks its type an iterator.
    pub fn record_read(&mut self, r: &FunctionRecord) {
        if r.flags.async_variant() || r.is_runtime_async() {
            self.variants_possible = true;
        }
        if !r.flags.state_machine_bits()
            && iterator_member_name(&r.method)
            && state_machine_type_parts(&r.type_name).is_some()
        {
            self.iterator_types
                .insert((r.module.clone(), r.type_name.clone()), ());
        }
        let idx = r.idx.0;
        if let Some(known) = self.roles.get(idx) {
            if !matches!(known, Role::Thunk | Role::Variant) {
                let role = role_with(r, self.iterator_by_name(r));
                self.set(idx, role);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ty: &str, m: &str, flags: u32) -> FunctionRecord {
        FunctionRecord {
            module: "App.dll".into(),
            type_name: ty.into(),
            method: m.into(),
            flags: FunctionFlags(flags),
            ..FunctionRecord::default()
        }
    }

    fn role_of(r: &FunctionRecord) -> Role {
        role_with(r, false)
    }

    #[test]
    fn roles_from_flags_then_names() {
        let it = rec("Ns.T+<Seq>d__2", "MoveNext", FunctionFlags::ITERATOR);
        assert_eq!(role_of(&it), Role::Plain);
        let sm = rec(
            "Ns.T+<Work>d__1",
            "MoveNext",
            FunctionFlags::ASYNC_STATE_MACHINE,
        );
        assert_eq!(role_of(&sm), Role::StateMachine);
        let both = FunctionFlags::ASYNC_STATE_MACHINE | FunctionFlags::ITERATOR;
        assert_eq!(
            role_of(&rec("Ns.T+<Items>d__4", "MoveNext", both)),
            Role::Plain
        );
        // Without flags: by name, an async state machine unless an iterator member was seen.
        let old = rec("Ns.T+<Seq>d__2", "MoveNext", 0);
        assert_eq!(role_of(&old), Role::StateMachine);
        let mut roles = Roles::default();
        roles.record_read(&rec(
            "Ns.T+<Seq>d__2",
            "System.Collections.Generic.IEnumerable<System.Int32>.GetEnumerator",
            0,
        ));
        assert_eq!(roles.machine_kind(&old), MachineKind::Iterator);
        let mut table = FunctionTable::default();
        table.insert(FunctionRecord {
            idx: FunctionIdx(0),
            ..old.clone()
        });
        assert_eq!(roles.get(&table, 0), Role::Plain);
        assert_eq!(
            roles.machine_kind(&rec("Ns.T+<Work>d__1", "MoveNext", 0)),
            MachineKind::Async
        );
        assert_eq!(
            roles.machine_kind(&rec("Ns.T", "Work", 0)),
            MachineKind::None
        );
    }
}
