//! Async methods (docs/design.md "Async methods: segments and logical calls"): what a
//! function is ([`roles`]), the logical calls its segments form ([`calls`]), what a thread's
//! stack and events show about its segments ([`evidence`]), the rules that link segments
//! into calls and tell when a segment suspended ([`link`], the replay's one way in), how a
//! call is known by identity ([`identity`]: continuations, state-machine boxes), and what a
//! segment's end means for its call ([`ending`]). The rules see only what
//! [`env`](mod@env) gives them: an [`Env`] of roles, calls and tables the replay builds for
//! each event, and the statistics behind the small trait [`AsyncStats`]. Nothing here
//! imports the replay.
//!
//! ```text
//! t=10   T0 enter  L3 [thunk]  sp=0x8f00
//! t=20   T0 enter  L3          sp=0x8eb0    segment 0 of a new call (below: its thunk)
//! t=30   T0 leave  L3 [thunk]  sp=0x8f00    the segment suspended (no Leave on .NET 10)
//! t=100  T1 enter  L3          sp=0x840     segment 1: a resume of that call
//! ```

mod calls;
mod ending;
mod env;
mod evidence;
mod identity;
pub(crate) mod link;
mod roles;
#[cfg(test)]
mod tests;

pub(crate) use calls::Calls;
pub(crate) use env::{AsyncStats, Counted, Env};
pub(crate) use roles::{Role, Roles};
