//! The checks: each is a pure function from one experiment's [`Observations`] to a [`Row`]
//! (expected per the documented contract, observed, verdict). The numbers they expect follow
//! from the probe program's code (check/probes/) and the contract sources cited in
//! docs/abi.md.

use eltrace_trace::protocol::experiment;

use crate::check::obs::Observations;

mod asyncs;
mod continuation;
mod jit;
mod row;
mod runtime;

use asyncs::*;
#[cfg(test)]
pub use asyncs::{ASYNC_METHODS, Phase, phases};
use continuation::*;
use jit::*;
use row::row;
pub use row::{Row, Verdict};
use runtime::*;

/// A check: its name, the experiment whose observations it reads, and its function.
pub struct Check {
    pub name: &'static str,
    pub experiment: &'static str,
    pub eval: fn(&Observations) -> Row,
}

/// The checks that need runtime-async methods (the probes in check/probes/RuntimeAsync/):
/// N/A on a runtime without runtime async, whose probe build leaves those probes out.
pub const NEED_RUNTIME_ASYNC: &[&str] = &[
    "async.counts",
    "async.suspension-leave",
    "async.continuation-arg",
    "async.continuation-generic",
    "async.continuation-reuse",
    "async.continuation-alloc",
    "async.state-machine-box",
    "async.iterator-this",
    "async.balance",
    "info.enter.initial",
    "info.enter.resume",
    "info.leave.suspension",
    "info.leave.completion",
    "info.async-no-tailcall",
    "regs.slow.async-rcx",
    "regs.slow.async-rcx0",
];

/// The N/A row of a check that needs runtime async.
pub fn not_applicable(name: &'static str) -> Row {
    row(
        name,
        "(runtime-async methods)",
        "no runtime async before .NET 10: the probe build for this runtime has none".into(),
        Verdict::NotApplicable,
    )
}

/// Every check, in table order.
pub const CHECKS: &[Check] = &[
    Check {
        name: "async.counts",
        experiment: experiment::ASYNC,
        eval: async_counts,
    },
    Check {
        name: "async.suspension-leave",
        experiment: experiment::ASYNC,
        eval: async_suspension_leave,
    },
    Check {
        name: "async.continuation-arg",
        experiment: experiment::ASYNC,
        eval: async_continuation_arg,
    },
    Check {
        name: "async.continuation-generic",
        experiment: experiment::ASYNC,
        eval: async_continuation_generic,
    },
    Check {
        name: "async.continuation-reuse",
        experiment: experiment::ASYNC,
        eval: async_continuation_reuse,
    },
    Check {
        name: "async.continuation-alloc",
        experiment: experiment::ASYNC,
        eval: async_continuation_alloc,
    },
    Check {
        name: "async.state-machine-box",
        experiment: experiment::ASYNC,
        eval: async_state_machine_box,
    },
    Check {
        name: "async.iterator-this",
        experiment: experiment::ASYNC,
        eval: async_iterator_this,
    },
    Check {
        name: "async.balance",
        experiment: experiment::ASYNC,
        eval: async_balance,
    },
    Check {
        name: "info.enter.initial",
        experiment: experiment::INFO,
        eval: info_enter_initial,
    },
    Check {
        name: "info.enter.resume",
        experiment: experiment::INFO,
        eval: info_enter_resume,
    },
    Check {
        name: "info.leave.suspension",
        experiment: experiment::INFO,
        eval: info_leave_suspension,
    },
    Check {
        name: "info.leave.completion",
        experiment: experiment::INFO,
        eval: info_leave_completion,
    },
    Check {
        name: "info.tailcall",
        experiment: experiment::INFO,
        eval: info_tailcall,
    },
    Check {
        name: "info.async-no-tailcall",
        experiment: experiment::INFO,
        eval: info_async_no_tailcall,
    },
    Check {
        name: "info.undisturbed",
        experiment: experiment::INFO,
        eval: info_undisturbed,
    },
    Check {
        name: "regs.slow.clobber-all",
        experiment: experiment::REGS_SLOW,
        eval: regs_slow,
    },
    Check {
        name: "regs.slow.async-rcx",
        experiment: experiment::REGS_SLOW_ASYNC,
        eval: regs_slow_async,
    },
    Check {
        name: "regs.slow.async-rcx0",
        experiment: experiment::REGS_SLOW_ASYNC_RCX0,
        eval: regs_slow_async_rcx0,
    },
    Check {
        name: "regs.fast.trash-sets",
        experiment: experiment::FAST_TRASH,
        eval: fast_trash,
    },
    Check {
        name: "regs.fast.parameters",
        experiment: experiment::FAST_TRASH,
        eval: fast_parameters,
    },
    Check {
        name: "regs.fast.rax-after-leave",
        experiment: experiment::FAST_RAX_AFTER_LEAVE,
        eval: fast_rax,
    },
    Check {
        name: "regs.fast.rdi-after-enter",
        experiment: experiment::FAST_RDI_AFTER_ENTER,
        eval: fast_rdi,
    },
    Check {
        name: "regs.fast.r14-after-enter",
        experiment: experiment::FAST_R14_AFTER_ENTER,
        eval: fast_r14,
    },
    Check {
        name: "hook.stack-snapshot",
        experiment: experiment::SNAPSHOT,
        eval: stack_snapshot,
    },
    Check {
        name: "hook.force-gc",
        experiment: experiment::SNAPSHOT,
        eval: force_gc,
    },
    Check {
        name: "flags.inconsistent",
        experiment: experiment::FLAGS,
        eval: flags_inconsistent,
    },
    Check {
        name: "flags.slow-after-startup",
        experiment: experiment::FLAGS,
        eval: flags_after_startup,
    },
    Check {
        name: "flags.enterleave-after-startup",
        experiment: experiment::FLAGS,
        eval: flags_enterleave_late,
    },
    Check {
        name: "pinvoke.stubs",
        experiment: experiment::PINVOKE,
        eval: pinvoke_stubs,
    },
    Check {
        name: "pinvoke.reverse",
        experiment: experiment::PINVOKE,
        eval: pinvoke_reverse,
    },
    Check {
        name: "jit.inline-unselected",
        experiment: experiment::JIT,
        eval: jit_inline_unselected,
    },
    Check {
        name: "jit.inline-selected",
        experiment: experiment::JIT,
        eval: jit_inline_selected,
    },
    Check {
        name: "jit.tiering",
        experiment: experiment::JIT,
        eval: jit_tiering,
    },
    Check {
        name: "jit.r2r-unselected",
        experiment: experiment::JIT,
        eval: jit_r2r_unselected,
    },
    Check {
        name: "jit.r2r-selected",
        experiment: experiment::JIT,
        eval: jit_r2r_selected,
    },
];
