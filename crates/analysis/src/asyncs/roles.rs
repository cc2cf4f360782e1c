//! What a function is as far as async segments are concerned (its [`Role`]): decided from its
//! FUNCTION record (the profiler's flags, the impl flags, the name) or learnt from the events;
//! and whether the runtime reports a Leave when a runtime-async method suspends.
//!
//! ```text
//! enter  L3 [thunk]          impl 0x2000, flag ASYNC_THUNK    Thunk: an ordinary frame
//! enter  L3                  impl 0x2000, same token          Variant: a segment of a logical call
//! enter  T+<Work>d__1.MoveNext                                StateMachine: a segment of T.Work
//! enter  X  (impl 0x2000, no flag)   next: enter X (the other)  Unresolved, then Thunk and Variant
//! ```

use eltrace_trace::{FunctionFlags, FunctionIdx, FunctionRecord, TraceInfo};

use crate::fxmap::DenseMap;
use crate::model::FunctionTable;
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

    /// Records a role learnt from the events, also in the function's record (so that names
    /// and exports show it).
    pub fn learn(&mut self, functions: &mut FunctionTable, f: u32, role: Role) {
        self.roles.insert(f, role);
        let bit = match role {
            Role::Thunk => FunctionFlags::ASYNC_THUNK,
            Role::Variant => FunctionFlags::ASYNC_VARIANT,
            _ => return,
        };
        functions.add_flags(FunctionIdx(f), bit);
    }

    /// A FUNCTION record of `r` was read (again): a role learnt from the events stands;
    /// otherwise a role already decided becomes the new record's.
    pub fn record_read(&mut self, r: &FunctionRecord) {
        let idx = r.idx.0;
        if let Some(known) = self.roles.get(idx) {
            if !matches!(known, Role::Thunk | Role::Variant) {
                self.roles.insert(idx, role_of(r));
            }
        }
    }
}

/// Whether a runtime reports a Leave when a runtime-async method suspends: CoreCLR 11 and
/// later do (dotnet/runtime's fix for issue 122488), 10 does not. The INFO key
/// `async_suspend_leave` (`1`/`0`) overrides the version.
pub fn runtime_reports_suspend_leaves(info: &TraceInfo) -> bool {
    if let Some((_, v)) = info.extra.iter().find(|(k, _)| k == "async_suspend_leave") {
        return v == "1";
    }
    let version = info
        .runtime
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()));
    version
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .is_some_and(|major| major >= 11)
}
