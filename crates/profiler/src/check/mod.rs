//! Check mode: the experiment harness behind `eltrace check`. When `ELTRACE_CHECK=<experiment>`
//! is set, Initialize hands over to [`initialize`] instead of starting the recorder. Each
//! experiment ([`experiment`]) sets its own event mask, hooks ([`slow`]: WithInfo hooks that
//! query the runtime; [`fast`]: naked fast-path stubs) and mapper ([`funcs`]), and writes what
//! it sees as `key value` lines to `ELTRACE_CHECK_OUT` ([`obs`]), each written as it happens so
//! that a crash still leaves everything seen before it. The CLI turns the lines into verdicts.
//! This module only dispatches: Initialize and Shutdown per experiment.
//!
//! Nothing here runs unless the variable is set; production recording is untouched.

mod experiment;
mod fast;
mod funcs;
mod jit;
mod obs;
mod slow;

use eltrace_abi::*;
use eltrace_trace::protocol::env;

use crate::com::info::Info;
use experiment::{Experiment, State};

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
        obs::say(&format!(
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
    let Some(st) = experiment::set_state(State { info, experiment }) else {
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    };
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
        Experiment::Jit => jit::install(st),
    };
    obs::line("init", &format!("{hr:#010x}"));
    if FAILED(hr) {
        return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
    }
    S_OK
}

/// Check-mode Shutdown: the counters the stubs kept.
pub fn shutdown() {
    let Some(st) = experiment::state() else {
        return;
    };
    match st.experiment {
        Experiment::RegsSlow | Experiment::RegsSlowAsync | Experiment::RegsSlowAsyncRcx0 => {
            slow::report_counters()
        }
        Experiment::FastTrash
        | Experiment::FastRaxAfterLeave
        | Experiment::FastRdiAfterEnter
        | Experiment::FastR14AfterEnter => fast::report_counters(),
        Experiment::Jit => jit::report(),
        _ => {}
    }
    obs::line("shutdown", "1");
}

/// `JITCompilationStarted` in check mode: false when no experiment runs (production).
pub fn jit_compilation_started(function: FunctionID) -> bool {
    let Some(st) = experiment::state() else {
        return false;
    };
    if st.experiment == Experiment::Jit {
        jit::compilation_started(st, function);
    }
    true
}

/// `JITInlining` in check mode: whether the JIT may inline `callee` into `caller`, or `None`
/// when no experiment runs (production decides). Only the `jit` experiment asks for JIT
/// callbacks; the others set `COR_PRF_DISABLE_INLINING`.
pub fn jit_inlining(caller: FunctionID, callee: FunctionID) -> Option<bool> {
    let st = experiment::state()?;
    Some(st.experiment == Experiment::Jit && jit::inlining(st, caller, callee))
}
