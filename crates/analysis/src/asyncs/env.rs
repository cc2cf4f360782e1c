//! The async rules' door: what they work with for one thread's event ([`Env`]: the functions'
//! roles, the logical calls, the tables, the thread) and how they report to the statistics
//! ([`AsyncStats`]). The replay builds an `Env` from its own context at each call of a rule;
//! a test builds one by hand, with a recorder of what is reported, and needs no replay.
//!
//! The statistics go through a small trait rather than facts the rules return: a rule reports
//! as it goes, several things at several points (a resume counted, the calls it awaited
//! settled, its node in the logical call tree), and one of them, the node, is an answer the
//! rule keeps on the call; facts would have to be collected and applied in order, and the
//! node asked for separately.
//!
//! ```text
//! T1 enter  L3  sp=0x840     Env: L3 is a variant, call 0 of L3 waits: a resume of call 0
//!                            AsyncStats: count(L3, Resume); logical_child(..) for its node
//! T1 leave  L3  sp=0x840     AsyncStats: settle(call 0): its wall time and values
//! ```

use super::calls::Calls;
use super::roles::Roles;
use crate::model::{CallNodeId, CallSummary, Tables};

/// What the async rules work with, for one event of thread `thread`.
pub(crate) struct Env<'a> {
    /// The functions' records (a role learnt from the events is written into them) and the
    /// captured values.
    pub tables: &'a mut Tables,
    pub roles: &'a mut Roles,
    pub calls: &'a mut Calls,
    /// Where the rules report what they count and the calls that are over.
    pub stats: &'a mut dyn AsyncStats,
    /// The runtime reports a Leave when a runtime-async method suspends.
    pub suspend_leaves: bool,
    pub thread: u32,
}

/// What the rules count of a function, one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// A logical call started (its function's and the trace's count of logical calls).
    Call,
    /// A segment resumed a call.
    Resume,
    /// A resume attached to its call by order alone.
    InferredResume,
    /// A resume whose call its continuation names (allocated by that call's suspension).
    IdentityResume,
    /// A variant Enter whose continuation argument told a first call from a resume.
    KnownStart,
    /// A first call that could have been a resume below a suspended segment of its own.
    AmbiguousCall,
    /// A segment's Leave (or its end) proven a suspension after it was closed.
    Suspension,
    /// A call's first segment suspended without allocating a continuation: it ended there.
    TailAwait,
}

/// How the async rules report to the statistics (the replay's `Stats` implements it).
pub(crate) trait AsyncStats {
    /// Function `f` gets one more of `what`.
    fn count(&mut self, f: u32, what: Counted);
    /// A logical call is over (`pending`: it suspended and was never resumed).
    fn settle(&mut self, tables: &Tables, c: CallSummary, pending: bool);
    /// The logical call tree's node of `f` under `parent`, made if new; `None` when no
    /// logical call tree is kept.
    fn logical_child(&mut self, parent: Option<CallNodeId>, f: u32) -> Option<CallNodeId>;
}
