//! Check mode: the experiment harness behind `eltrace check`. When `ELTRACE_CHECK=<experiment>`
//! is set, Initialize hands over to [`initialize`] instead of starting the recorder. Each
//! experiment sets its own event mask, hooks ([`slow`]: WithInfo hooks that query the runtime;
//! [`fast`]: naked fast-path stubs) and mapper ([`funcs`]), and writes what it sees as
//! `key value` lines to `ELTRACE_CHECK_OUT` ([`obs`]), each written as it happens so that a
//! crash still leaves everything seen before it. The CLI turns the lines into verdicts.
//!
//! Nothing here runs unless the variable is set; production recording is untouched.

pub mod fast;
pub mod funcs;
pub mod obs;
pub mod slow;

use std::sync::OnceLock;

use eltrace_abi::*;
use eltrace_trace::protocol::{env, experiment};

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
}

impl Experiment {
    pub const ALL: [Experiment; 11] = [
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
        }
    }

    pub fn parse(s: &str) -> Option<Experiment> {
        Experiment::ALL.into_iter().find(|e| e.name() == s)
    }

    /// Whether the mapper gives probes to a function (by its resolved name).
    fn selects(self, f: &funcs::Func) -> bool {
        let t = f.type_name.as_str();
        match self {
            Experiment::Info => t == "Probes.AsyncProbe" || t == "Probes.Emitted",
            Experiment::RegsSlowAsync | Experiment::RegsSlowAsyncRcx0 => t == "Probes.AsyncProbe",
            Experiment::Snapshot => t == "Probes.SnapshotProbe",
            Experiment::Flags => t == "Probes.RegsProbe" && f.method == "Leaf",
            Experiment::RegsSlow
            | Experiment::FastTrash
            | Experiment::FastRaxAfterLeave
            | Experiment::FastRdiAfterEnter
            | Experiment::FastR14AfterEnter => t == "Probes.RegsProbe",
            Experiment::PInvoke => {
                !f.framework || !f.resolved || f.method.contains("IL_STUB") || t.contains("ILStub")
            }
        }
    }
}

/// The experiment's process-wide state.
pub struct State {
    pub info: Info,
    pub experiment: Experiment,
    pub funcs: funcs::Registry,
}

static STATE: OnceLock<State> = OnceLock::new();

pub fn state() -> Option<&'static State> {
    STATE.get()
}

/// The experiment named by `ELTRACE_CHECK`, if the variable is set (even if unknown).
pub fn requested() -> Option<String> {
    std::env::var(env::CHECK).ok().filter(|s| !s.is_empty())
}

/// Check-mode Initialize: opens the observation file, sets mask, hooks and mapper.
///
/// # Safety
/// `unk` is null or the live IUnknown the runtime passed to Initialize.
pub unsafe fn initialize(unk: *mut IUnknown, name: &str) -> HRESULT {
    let path = std::env::var(env::CHECK_OUT).unwrap_or_default();
    if !obs::open(&path) {
        crate::check::obs::say(&format!(
            "check mode: cannot open {}={path:?}",
            env::CHECK_OUT
        ));
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    }
    let Some(experiment) = Experiment::parse(name) else {
        obs::line("error", &format!("unknown experiment {name}"));
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    };
    // SAFETY: forwarded from the runtime.
    let Some(info) = (unsafe { Info::query(unk) }) else {
        obs::line("error", "no ICorProfilerInfo3 or later");
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    };
    obs::line("experiment", experiment.name());
    obs::line(
        "runtime",
        &info
            .runtime_description()
            .unwrap_or_else(|hr| format!("unknown ({hr:#010x})")),
    );
    obs::line("info_version", &info.version.to_string());
    if STATE
        .set(State {
            info,
            experiment,
            funcs: funcs::Registry::new(),
        })
        .is_err()
    {
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    }
    let st = STATE.get().expect("just set");
    let hr = match experiment {
        Experiment::Info
        | Experiment::RegsSlow
        | Experiment::RegsSlowAsync
        | Experiment::RegsSlowAsyncRcx0
        | Experiment::Snapshot
        | Experiment::Flags
        | Experiment::PInvoke => slow::install(st),
        Experiment::FastTrash
        | Experiment::FastRaxAfterLeave
        | Experiment::FastRdiAfterEnter
        | Experiment::FastR14AfterEnter => fast::install(st),
    };
    obs::line("init", &format!("{hr:#010x}"));
    if FAILED(hr) {
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    }
    S_OK
}

/// Check-mode Shutdown: the counters the stubs kept.
pub fn shutdown() {
    let Some(st) = STATE.get() else { return };
    match st.experiment {
        Experiment::RegsSlow | Experiment::RegsSlowAsync | Experiment::RegsSlowAsyncRcx0 => {
            slow::report_counters()
        }
        Experiment::FastTrash
        | Experiment::FastRaxAfterLeave
        | Experiment::FastRdiAfterEnter
        | Experiment::FastR14AfterEnter => fast::report_counters(),
        _ => {}
    }
    obs::line("shutdown", "1");
}

/// Sets the event mask and writes `mask.<label> <hr>`.
fn set_mask(st: &State, label: &str, mask: DWORD) -> HRESULT {
    let hr = st.info.set_event_mask(mask);
    obs::line(&format!("mask.{label}"), &format!("{hr:#010x}"));
    hr
}

/// Registers the check mapper.
fn set_mapper(st: &State) -> HRESULT {
    let hr = st.info.set_function_id_mapper2(funcs::mapper);
    obs::line("mapper", &format!("{hr:#010x}"));
    hr
}
