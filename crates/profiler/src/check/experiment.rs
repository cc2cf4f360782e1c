//! The experiment being run: the names `eltrace check` passes in `ELTRACE_CHECK`
//! (`eltrace_trace::protocol::experiment`), and the process-wide [`State`] every part of check
//! mode reads (the runtime's Info interface and the experiment).

use std::sync::OnceLock;

use eltrace_abi::*;
use eltrace_trace::protocol::experiment;

use super::obs;
use crate::com::info::Info;

/// One experiment (the value of `ELTRACE_CHECK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Experiment {
    /// Slow path with ARGS|RETVAL|FRAME_INFO: every event with its Get*3Info results.
    Info,
    /// Slow-path hooks that overwrite every volatile register before returning.
    RegsSlow,
    /// The same hooks on the runtime-async probe (RCX carries a variant's continuation).
    RegsSlowAsync,
    /// The same, but the Leave hook returns with RCX = 0.
    RegsSlowAsyncRcx0,
    /// Fast-path stubs that overwrite exactly the documented trash sets.
    FastTrash,
    /// Fast-path Leave stub that overwrites RAX (the return value).
    FastRaxAfterLeave,
    /// Fast-path Enter stub that overwrites RDI (the first argument).
    FastRdiAfterEnter,
    /// Fast-path Enter stub that overwrites R14.
    FastR14AfterEnter,
    /// DoStackSnapshot and ForceGC from an Enter hook.
    Snapshot,
    /// SetEventMask / hook registration consistency rules.
    Flags,
    /// Every non-framework, unnamed or IL-stub function: are P/Invoke stubs reported?
    PInvoke,
    /// eltrace's own event mask with counting fast stubs: JIT compilations, JITInlining
    /// questions and Enters per function (check/jit.rs).
    Jit,
}

impl Experiment {
    pub const ALL: [Experiment; 12] = [
        Experiment::Info,
        Experiment::RegsSlow,
        Experiment::RegsSlowAsync,
        Experiment::RegsSlowAsyncRcx0,
        Experiment::FastTrash,
        Experiment::FastRaxAfterLeave,
        Experiment::FastRdiAfterEnter,
        Experiment::FastR14AfterEnter,
        Experiment::Snapshot,
        Experiment::Flags,
        Experiment::PInvoke,
        Experiment::Jit,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Experiment::Info => experiment::INFO,
            Experiment::RegsSlow => experiment::REGS_SLOW,
            Experiment::RegsSlowAsync => experiment::REGS_SLOW_ASYNC,
            Experiment::RegsSlowAsyncRcx0 => experiment::REGS_SLOW_ASYNC_RCX0,
            Experiment::FastTrash => experiment::FAST_TRASH,
            Experiment::FastRaxAfterLeave => experiment::FAST_RAX_AFTER_LEAVE,
            Experiment::FastRdiAfterEnter => experiment::FAST_RDI_AFTER_ENTER,
            Experiment::FastR14AfterEnter => experiment::FAST_R14_AFTER_ENTER,
            Experiment::Snapshot => experiment::SNAPSHOT,
            Experiment::Flags => experiment::FLAGS,
            Experiment::PInvoke => experiment::PINVOKE,
            Experiment::Jit => experiment::JIT,
        }
    }

    pub fn parse(s: &str) -> Option<Experiment> {
        Experiment::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// The experiment's process-wide state.
pub struct State {
    pub info: Info,
    pub experiment: Experiment,
}

static STATE: OnceLock<State> = OnceLock::new();

/// Makes `st` the experiment's state (once); `None` if it was set already.
pub fn set_state(st: State) -> Option<&'static State> {
    STATE.set(st).ok()?;
    STATE.get()
}

pub fn state() -> Option<&'static State> {
    STATE.get()
}

/// Sets the event mask and writes `mask.<label> <hr>`.
pub fn set_mask(st: &State, label: &str, mask: DWORD) -> HRESULT {
    let hr = st.info.set_event_mask(mask);
    obs::line(&format!("mask.{label}"), &format!("{hr:#010x}"));
    hr
}
