//! The replay's context for one thread's event ([`Ctx`]): the tables and statistics it writes
//! to, what the async rules and the iterator model keep across threads, and the thread. The
//! replay owns it; the async rules see only their part of it ([`Ctx::asyncs`], an
//! `asyncs::Env`) and report their statistics through `asyncs::AsyncStats`, which the
//! statistics implement here; the iterator model gets its own `iterators::Env`
//! ([`Ctx::iter_env`]).
//!
//! ```text
//! T1 enter  L3  sp=0x840     replay: push (Ctx: stats, tables)
//!                            asyncs::link::entered(Env: roles, calls, tables; AsyncStats)
//!                            iterators::entered(iterators::Env: iters, stats, tables)
//! ```

use eltrace_trace::{FunctionIdx, ThreadIdx};

use crate::asyncs::{AsyncStats, Calls, Counted, Env, Roles};
use crate::iterators::{self, Iterators};
use crate::model::{CallNodeId, CallSummary, Tables};
use crate::stats::Stats;

/// What the replay of one thread's event works with.
pub(crate) struct Ctx<'a> {
    pub stats: &'a mut Stats,
    pub tables: &'a mut Tables,
    pub roles: &'a mut Roles,
    pub calls: &'a mut Calls,
    /// The runtime reports a Leave when a runtime-async method suspends.
    pub suspend_leaves: bool,
    /// A Value event comes before the Enter or Leave it belongs to (INFO `values_first`),
    /// not after it.
    pub values_first: bool,
    pub thread: ThreadIdx,
    /// The iterator model's enumerations (`iterators`).
    pub iters: &'a mut Iterators,
    /// `(thread, function)`: top frames of runtime-async functions of unknown role whose
    /// thread's next event was not read yet (see `link::entered`).
    pub unresolved: &'a mut Vec<(u32, u32)>,
}

impl Ctx<'_> {
    /// The async rules' view of the context.
    #[inline(always)]
    pub fn asyncs(&mut self) -> Env<'_> {
        Env {
            tables: &mut *self.tables,
            roles: &mut *self.roles,
            calls: &mut *self.calls,
            stats: &mut *self.stats,
            suspend_leaves: self.suspend_leaves,
            thread: self.thread.0,
        }
    }

    /// The iterator model's view of the context, and the roles.
    #[inline(always)]
    pub fn iter_env(&mut self) -> (iterators::Env<'_>, &Roles) {
        let env = iterators::Env {
            iters: &mut *self.iters,
            stats: &mut *self.stats,
            tables: &*self.tables,
            thread: self.thread.0,
        };
        (env, &*self.roles)
    }
}

impl AsyncStats for Stats {
    #[inline]
    fn count(&mut self, f: u32, what: Counted) {
        if what == Counted::Call {
            self.totals.logical_calls += 1;
        }
        let fs = self.function(f);
        match what {
            Counted::Call => fs.calls += 1,
            Counted::Resume => fs.resumes += 1,
            Counted::InferredResume => fs.inferred_resumes += 1,
            Counted::IdentityResume => fs.identity_resumes += 1,
            Counted::TailAwait => fs.tail_awaits += 1,
            Counted::KnownStart => fs.known_starts += 1,
            Counted::AmbiguousCall => fs.ambiguous_calls += 1,
            Counted::Suspension => fs.suspensions += 1,
        }
    }

    fn settle(&mut self, tables: &Tables, c: CallSummary, pending: bool) {
        Stats::settle(self, tables, c, pending);
    }

    #[inline]
    fn logical_child(&mut self, parent: Option<CallNodeId>, f: u32) -> Option<CallNodeId> {
        let t = self.logical.as_mut()?;
        Some(t.child(parent, FunctionIdx(f)))
    }
}
