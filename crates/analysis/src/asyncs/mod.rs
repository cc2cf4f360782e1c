//! Async methods (docs/design.md "Async methods: segments and logical calls"): what a
//! function is (`roles`) and the logical calls its segments form (`calls`).
//!
//! ```text
//! t=10   T0 enter  L3 [thunk]  sp=0x8f00
//! t=20   T0 enter  L3          sp=0x8eb0    segment 0 of a new call (below: its thunk)
//! t=30   T0 leave  L3 [thunk]  sp=0x8f00    the segment suspended (no Leave on .NET 10)
//! t=100  T1 enter  L3          sp=0x840     segment 1: a resume of that call
//! ```

mod calls;
mod roles;

pub(crate) use calls::{CallState, Calls};
pub use roles::{
    IMPL_ASYNC, Role, Roles, is_kickoff, role_of, runtime_reports_suspend_leaves,
    same_async_method, state_machine_method,
};
