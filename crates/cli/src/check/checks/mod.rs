//! The checks: each is a pure function from one experiment's [`Observations`] to a [`Row`]
//! (expected per the documented contract, observed, verdict). The numbers they expect follow
//! from the probe program's code (check/probes/) and the contract sources cited in
//! docs/abi.md.

use std::collections::BTreeMap;

use eltrace_trace::protocol::experiment;

use crate::check::obs::{Event, Observations};

mod asyncs;
mod continuation;
mod jit;
mod runtime;

use asyncs::*;
#[cfg(test)]
pub use asyncs::{ASYNC_METHODS, Phase, phases};
use continuation::*;
use jit::*;
use runtime::*;

/// PASS: as documented. DIFFERS: a documented behaviour difference (e.g. a pre-fix runtime).
/// FAIL: neither. N/A: the check needs runtime async, which the runtime does not have
/// (.NET 8 and 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Differs,
    NotApplicable,
}

impl Verdict {
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Differs => "DIFFERS",
            Verdict::NotApplicable => "N/A",
        }
    }
}

/// One line of the `check` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: &'static str,
    pub expected: String,
    pub observed: String,
    pub verdict: Verdict,
}

/// A check: its name, the experiment whose observations it reads, and its function.
pub struct Check {
    pub name: &'static str,
    pub experiment: &'static str,
    pub eval: fn(&Observations) -> Row,
}

pub const S_OK: u32 = 0;
pub const E_FAIL: u32 = 0x8000_4005;
pub const CORPROF_E_INCONSISTENT_WITH_FLAGS: u32 = 0x8013_1374;
pub const CORPROF_E_UNSUPPORTED_CALL_SEQUENCE: u32 = 0x8013_1363;

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
        experiment: crate::check::JIT,
        eval: jit_inline_unselected,
    },
    Check {
        name: "jit.inline-selected",
        experiment: crate::check::JIT,
        eval: jit_inline_selected,
    },
    Check {
        name: "jit.tiering",
        experiment: crate::check::JIT,
        eval: jit_tiering,
    },
    Check {
        name: "jit.r2r-unselected",
        experiment: crate::check::JIT,
        eval: jit_r2r_unselected,
    },
    Check {
        name: "jit.r2r-selected",
        experiment: crate::check::JIT,
        eval: jit_r2r_selected,
    },
];

pub(super) fn row(name: &'static str, expected: &str, observed: String, verdict: Verdict) -> Row {
    Row {
        name,
        expected: expected.to_string(),
        observed,
        verdict,
    }
}

pub(super) fn pass_if(ok: bool) -> Verdict {
    if ok { Verdict::Pass } else { Verdict::Fail }
}

/// `0x80004005 (E_FAIL)` and friends.
pub fn hr_text(hr: Option<u32>) -> String {
    let Some(hr) = hr else { return "none".into() };
    let name = match hr {
        S_OK => "S_OK",
        E_FAIL => "E_FAIL",
        CORPROF_E_INCONSISTENT_WITH_FLAGS => "CORPROF_E_INCONSISTENT_WITH_FLAGS",
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE => "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE",
        0x8007_0057 => "E_INVALIDARG",
        0x8013_136F => "CORPROF_E_STACKSNAPSHOT_UNSAFE",
        0x8000_4001 => "E_NOTIMPL",
        _ => return format!("{hr:#010x}"),
    };
    if hr == S_OK {
        name.into()
    } else {
        format!("{name} ({hr:#010x})")
    }
}

/// A setup failure or crash before any observation, in words (for FAIL rows).
pub(super) fn not_run(o: &Observations) -> Option<String> {
    if o.initialized() {
        None
    } else if let Some(e) = o.get("error") {
        Some(format!("experiment not set up: {e}; {}", o.exit_text()))
    } else {
        Some(format!(
            "experiment not set up (no `init` line); {}",
            o.exit_text()
        ))
    }
}
