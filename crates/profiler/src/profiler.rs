//! The composition root and the callbacks eltrace implements. Initialize starts the
//! components in order — configuration → trace file, recorder and writer → writer thread →
//! event mask, hooks and mapper → exit handlers — and the end of recording (Shutdown, atexit,
//! SIGABRT or the unhandled-exception sentinel) stops them in reverse through
//! `Writer::finish`.

use core::ffi::c_void;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};

use eltrace_abi::*;
use eltrace_trace::{EndReason, FunctionFlags, FunctionIdx, TraceInfo, protocol};

use crate::com::info::Info;
use crate::com::resolve::Modules;
use crate::config::{Config, HookMode};
use crate::recorder::{RECORDER, Recorder};
use crate::sys::lock;
use crate::writer::{Sink, Writer};
use crate::{clock, exceptions, exit, hooks, names, sys};

/// The event mask eltrace asks for.
///
/// * ENTERLEAVE: the JIT emits the probes. FRAME_INFO: the WithInfo hooks require at least one
///   of ARGS/RETVAL/FRAME_INFO *before* they are registered (and FRAME_INFO is the cheapest).
/// * EXCEPTIONS: Throw/Unwind/Catch events. THREADS: ThreadNameChanged.
/// * DISABLE_INLINING: an inlined callee has no probes of its own. Measured on CoreCLR
///   10.0.12 with a loop calling a one-line `static int Small(int x) => x + 1` 1000 times:
///   1000 Enter/Leave pairs while the caller runs tier-0 code, but **0** (Small is not even
///   JIT-compiled, so the mapper never sees it) when the caller is optimized
///   (`DOTNET_TieredCompilation=0`, or `DOTNET_TC_QuickJitForLoops=0`, or after tier-up).
///   With this flag the count is 1000 in all three cases.
pub const EVENT_MASK: DWORD = COR_PRF_MONITOR_ENTERLEAVE
    | COR_PRF_ENABLE_FRAME_INFO
    | COR_PRF_DISABLE_INLINING
    | COR_PRF_MONITOR_EXCEPTIONS
    | COR_PRF_MONITOR_THREADS;

/// The unhandled-exception sentinel: CoreLib's `System.AppContext.OnUnhandledException`,
/// which raises `AppDomain.UnhandledException` just before the runtime prints the exception
/// and aborts (measured on CoreCLR 10.0.12: it is JIT-compiled and called on that path).
const SENTINEL_MODULE: &str = "System.Private.CoreLib.dll";
const SENTINEL_TYPE: &str = "System.AppContext";
const SENTINEL_METHOD: &str = "OnUnhandledException";

pub struct Profiler {
    info: OnceLock<Info>,
    modules: Modules,
    /// FunctionIDs of sentinel functions (see [`SENTINEL_METHOD`]).
    sentinels: Mutex<Vec<u64>>,
}

/// The one profiler (the callback object's behaviour); process lifetime.
pub static PROFILER: Profiler = Profiler {
    info: OnceLock::new(),
    modules: Modules::new(),
    sentinels: Mutex::new(Vec::new()),
};

/// One `eltrace:` line on stderr (used before the recorder exists).
fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "eltrace: {message}");
}

fn command_line() -> String {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Ends the trace with a diagnostic and refuses activation.
fn decline(rec: &Recorder, writer: &Writer, message: &str) -> HRESULT {
    rec.internal_error("init", &format!("{message}; not profiling"));
    writer.finish(EndReason::Shutdown);
    CORPROF_E_PROFILER_CANCEL_ACTIVATION
}

/// The runtime's ThreadID of the calling thread, 0 if unknown (used at ring creation).
fn current_managed_thread() -> u64 {
    PROFILER
        .info
        .get()
        .and_then(Info::current_thread)
        .map_or(0, |t| t as u64)
}

impl Profiler {
    /// The runtime's info interface, once Initialize has it.
    pub fn info(&self) -> Option<&Info> {
        self.info.get()
    }

    /// The per-module cache.
    pub fn modules(&self) -> &Modules {
        &self.modules
    }

    /// `ICorProfilerCallback::Initialize`.
    ///
    /// # Safety
    /// `unk` is null or the live IUnknown the runtime passes.
    pub unsafe fn initialize(&self, unk: *mut IUnknown) -> HRESULT {
        if let Some(experiment) = crate::check::requested() {
            // SAFETY: forwarded from the runtime.
            return unsafe { crate::check::initialize(unk, &experiment) };
        }
        let config = Config::from_env(|k| std::env::var(k).ok());
        if config.disable {
            say(&format!(
                "{} is set; the profiler declines to load",
                protocol::env::DISABLE
            ));
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        }
        // SAFETY: forwarded from the runtime.
        let Some(info) = (unsafe { Info::query(unk) }) else {
            say("the runtime offers no ICorProfilerInfo3 or later; not profiling");
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        };
        if RECORDER.get().is_some() || self.info.get().is_some() {
            say("Initialize called twice; declining the second profiler instance");
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        }

        // Clock (before anything takes a timestamp), trace file and recorder.
        let clock_desc = clock::init(config.use_tsc);
        let pid = sys::current_pid();
        let path = config.output_path(pid);
        let runtime = info.runtime_description().unwrap_or_default();
        let trace_info = TraceInfo {
            pid,
            start_unix_ns: clock::unix_now_ns(),
            start_ticks: clock::to_ns(clock::now()),
            ns_per_tick: 1.0,
            runtime,
            command: command_line(),
            hook_mode: hook_mode_name(&config).into(),
            extra: vec![
                ("clock".into(), clock_desc),
                (
                    "profiler".into(),
                    format!("eltrace-profiler {}", env!("CARGO_PKG_VERSION")),
                ),
                ("profiler_info_version".into(), info.version.to_string()),
                (
                    "buffer_events".into(),
                    crate::ring::Ring::rounded_capacity(config.buffer_events).to_string(),
                ),
                ("max_buffer_mb".into(), config.max_buffer_mb.to_string()),
                ("flush_ms".into(), config.flush_ms.to_string()),
                ("values".into(), u8::from(config.values).to_string()),
                (
                    "event_mask".into(),
                    format!("{:#010x}", event_mask(config.hooks, config.values)),
                ),
            ],
        };
        // The writer's staging backlog may use a quarter of the buffer budget.
        let sink = match Sink::create(&path, &trace_info, config.max_buffer_bytes() / 4) {
            Ok(s) => s,
            Err(e) => {
                say(&format!(
                    "cannot create the trace file {}: {e}; not profiling",
                    path.display()
                ));
                return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
            }
        };
        let warnings = config.warnings.clone();
        if RECORDER.set(Recorder::new(config)).is_err() {
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        }
        let rec = RECORDER.get().expect("just set");
        let Some(writer) = Writer::install(rec, sink) else {
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        };
        let _ = self.info.set(info);
        let info = self.info.get().expect("just set");
        rec.set_managed_thread_source(current_managed_thread);
        for w in &warnings {
            rec.note("config", w);
        }

        // Writer thread.
        if let Err(e) = writer.start() {
            return decline(rec, writer, &format!("cannot start the writer thread: {e}"));
        }

        // Event mask, hooks, mapper.
        let mask = event_mask(rec.config.hooks, rec.config.values);
        let hr = info.set_event_mask(mask);
        if FAILED(hr) {
            return decline(
                rec,
                writer,
                &format!("SetEventMask({mask:#x}) failed: {hr:#010x}"),
            );
        }
        if let Err(e) = install_hooks(info, &rec.config) {
            return decline(rec, writer, &e);
        }
        let hr = info.set_function_id_mapper2(function_id_mapper);
        if FAILED(hr) {
            return decline(
                rec,
                writer,
                &format!("SetFunctionIDMapper2 failed: {hr:#010x}"),
            );
        }

        // Exit handlers last: they only make sense once there is something to finish.
        if let Err(e) = exit::install() {
            rec.internal_error("exit-handlers", &e);
        }
        S_OK
    }

    /// `ICorProfilerCallback::Shutdown`.
    ///
    /// # Safety
    /// None beyond being called by the runtime.
    pub unsafe fn shutdown(&self) -> HRESULT {
        crate::check::shutdown();
        if let Some(writer) = Writer::global() {
            writer.finish(EndReason::Shutdown);
        }
        S_OK
    }

    /// Attaching to a running process is not supported.
    ///
    /// # Safety
    /// None (arguments are not used).
    pub unsafe fn initialize_for_attach(
        &self,
        _unk: *mut IUnknown,
        _data: *mut c_void,
        _len: u32,
    ) -> HRESULT {
        say("attaching to a running process is not supported");
        CORPROF_E_PROFILER_CANCEL_ACTIVATION
    }

    /// eltrace is a full profiler, not a notification-only one.
    ///
    /// # Safety
    /// `out` is null or writable.
    pub unsafe fn load_as_notification_only(&self, out: *mut BOOL) -> HRESULT {
        if !out.is_null() {
            // SAFETY: non-null out pointer from the runtime.
            unsafe { *out = 0 };
        }
        S_OK
    }

    /// `ThreadNameChanged(threadId, cchName, name)`.
    ///
    /// # Safety
    /// `name` is null or points to `len` UTF-16 units.
    pub unsafe fn thread_name_changed(
        &self,
        thread: ThreadID,
        len: ULONG,
        name: *mut WCHAR,
    ) -> HRESULT {
        let Some(rec) = Recorder::global() else {
            return S_OK;
        };
        let text = if name.is_null() || len == 0 {
            String::new()
        } else {
            // SAFETY: the runtime passes `len` readable units at `name`.
            names::from_wide(unsafe { core::slice::from_raw_parts(name, len as usize) })
        };
        rec.thread_named(thread as u64, text);
        S_OK
    }

    /// `ExceptionThrown(object)`: a Throw event on this thread.
    ///
    /// # Safety
    /// None (the object id is not dereferenced).
    pub unsafe fn exception_thrown(&self, _object: ObjectID) -> HRESULT {
        exceptions::throw();
        S_OK
    }

    fn hooked_index(function: FunctionID) -> Option<u32> {
        Recorder::global()?
            .function(function as u64)
            .and_then(|(idx, hooked)| hooked.then_some(idx.0))
    }

    /// `ExceptionUnwindFunctionEnter(function)`: remember which frame is being unwound.
    ///
    /// # Safety
    /// None (ids are not dereferenced).
    pub unsafe fn exception_unwind_function_enter(&self, function: FunctionID) -> HRESULT {
        exceptions::unwind_enter(Self::hooked_index(function));
        S_OK
    }

    /// `ExceptionUnwindFunctionLeave()`: that frame is gone (an Unwind event if hooked).
    ///
    /// # Safety
    /// None.
    pub unsafe fn exception_unwind_function_leave(&self) -> HRESULT {
        exceptions::unwind_leave();
        S_OK
    }

    /// `ExceptionCatcherEnter(function, object)`: a Catch event if the function is hooked.
    ///
    /// # Safety
    /// None (ids are not dereferenced).
    pub unsafe fn exception_catcher_enter(
        &self,
        function: FunctionID,
        _object: ObjectID,
    ) -> HRESULT {
        if let Some(idx) = Self::hooked_index(function) {
            exceptions::catch(idx);
        }
        S_OK
    }

    /// The mapper's work: the client id and whether the function gets probes (resolving it
    /// on first sight). Selected functions get probes that record events; the
    /// unhandled-exception sentinel gets probes even when not selected.
    fn map_function(&self, function: FunctionID) -> Option<(usize, bool)> {
        let rec = Recorder::global()?;
        let (idx, hooked) = match rec.function(function as u64) {
            Some(e) => e,
            None => self.add_function(rec, function)?,
        };
        let sentinel = lock(&self.sentinels).contains(&(function as u64));
        Some((
            hooks::client_id(idx.0, hooked, sentinel),
            hooked || sentinel,
        ))
    }

    fn add_function(&self, rec: &Recorder, function: FunctionID) -> Option<(FunctionIdx, bool)> {
        let info = self.info.get()?;
        let (described, failure) = self.modules.describe(info, function);
        if let Some(why) = failure {
            rec.internal_error("metadata", &format!("naming function {function:#x}: {why}"));
        }
        let mut record = described.record;
        let mut hooked = rec.config.selection.selects(
            &described.glob_module,
            &record.full_name(),
            described.framework,
        );
        if hooked && slow_path_async_unsafe(rec.config.hooks, record.impl_flags) {
            // On .NET 10 the runtime's slow-path Leave stub does not keep RCX, which carries a
            // runtime-async variant's continuation back to its caller. eltrace's own slow-path
            // Leave hooks return with RCX = 0 (see `leave_hook`), but the benchmark's empty
            // hooks do not: there runtime-async methods get no probes, so as not to crash the
            // process (docs/async-observations.md).
            hooked = false;
            if !SLOW_ASYNC_NOTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                rec.note(
                    "slow-path",
                    "runtime-async methods get no probes with the empty slow-path hooks (the \
                     runtime's slow-path Leave does not keep the continuation register RCX)",
                );
            }
        }
        if hooked {
            record.flags.0 |= FunctionFlags::HOOKED;
        }
        record.flags.0 |= async_role(info, described.module_id, &record);
        if described.framework
            && record.module == SENTINEL_MODULE
            && record.type_name == SENTINEL_TYPE
            && record.method == SENTINEL_METHOD
        {
            lock(&self.sentinels).push(function as u64);
        }
        let for_values = (rec.config.values && hooked).then(|| record.clone());
        let (idx, hooked) = rec.add_function(record, hooked);
        if let Some(mut r) = for_values {
            r.idx = idx;
            if let Err(e) =
                crate::values::prepare(info, &self.modules, described.module_id, idx.0, &r)
            {
                rec.internal_error("values", &format!("no values for {}: {e}", r.full_name()));
            }
        }
        Some((idx, hooked))
    }
}

/// The runtime-async role of a function: for a method with impl flag `METHOD_IMPL_ASYNC`,
/// `ASYNC_THUNK` when `GetFunctionFromToken(module, token)` returns this very FunctionID (the
/// token maps to the Task-returning thunk), `ASYNC_VARIANT` when it returns another one (this
/// one runs the method's code); nothing when the call fails (e.g. generic methods) or the
/// method is not runtime-async. Called at mapper time, never on the hot path.
fn async_role(info: &Info, module: ModuleID, record: &eltrace_trace::FunctionRecord) -> u32 {
    if record.impl_flags & METHOD_IMPL_ASYNC == 0 || module == 0 {
        return 0;
    }
    role_from_lookup(
        record.function_id,
        info.function_from_token(module, record.token).ok(),
    )
}

/// The role bits given this function's id and what the token lookup returned.
pub fn role_from_lookup(function_id: u64, by_token: Option<FunctionID>) -> u32 {
    match by_token {
        Some(f) if f as u64 == function_id => FunctionFlags::ASYNC_THUNK,
        Some(f) if f != 0 => FunctionFlags::ASYNC_VARIANT,
        _ => 0,
    }
}

/// Whether a method must not get probes in hook mode `mode`: runtime-async methods (impl
/// flag `METHOD_IMPL_ASYNC`) with the benchmark's empty slow-path hooks, which do not clear
/// RCX after a Leave as eltrace's recording slow-path hooks do.
pub fn slow_path_async_unsafe(mode: HookMode, impl_flags: u32) -> bool {
    matches!(mode, HookMode::SlowEmpty) && impl_flags & METHOD_IMPL_ASYNC != 0
}

/// Set once the slow-path note about runtime-async methods was written.
static SLOW_ASYNC_NOTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The event mask for a hook mode: the fast path must not ask for FRAME_INFO (or ARGS/RETVAL),
/// the slow path must ask for one of them; `off` asks for no probes at all. `values`
/// (`ELTRACE_VALUES`, slow path only) adds FUNCTION_ARGS and FUNCTION_RETVAL.
pub fn event_mask(mode: HookMode, values: bool) -> DWORD {
    match mode {
        HookMode::Slow if values => {
            EVENT_MASK | COR_PRF_ENABLE_FUNCTION_ARGS | COR_PRF_ENABLE_FUNCTION_RETVAL
        }
        HookMode::Slow | HookMode::SlowEmpty => EVENT_MASK,
        HookMode::Fast | HookMode::FastEmpty => EVENT_MASK & !COR_PRF_ENABLE_FRAME_INFO,
        HookMode::Off => EVENT_MASK & !(COR_PRF_ENABLE_FRAME_INFO | COR_PRF_MONITOR_ENTERLEAVE),
    }
}

/// The trace's `hook_mode`.
fn hook_mode_name(config: &Config) -> &'static str {
    match config.hooks {
        HookMode::Slow => "slow-path",
        HookMode::Fast if config.trash_registers => "fast-path (trash registers)",
        HookMode::Fast => "fast-path",
        HookMode::Off => "off (benchmark)",
        HookMode::SlowEmpty => "slow-path, empty hooks (benchmark)",
        HookMode::FastEmpty => "fast-path, empty stubs (benchmark)",
    }
}

/// Registers the ELT hooks of the configured mode.
fn install_hooks(info: &Info, config: &Config) -> Result<(), String> {
    let (hr, what) = match config.hooks {
        HookMode::Off => return Ok(()),
        HookMode::Slow if config.values => (
            info.set_hooks_with_info(
                crate::values::enter_hook,
                crate::values::leave_hook,
                tailcall_hook,
            ),
            "SetEnterLeaveFunctionHooks3WithInfo",
        ),
        HookMode::Slow => (
            info.set_hooks_with_info(enter_hook, leave_hook, tailcall_hook),
            "SetEnterLeaveFunctionHooks3WithInfo",
        ),
        HookMode::SlowEmpty => (
            info.set_hooks_with_info(empty_hook, empty_hook, empty_hook),
            "SetEnterLeaveFunctionHooks3WithInfo",
        ),
        HookMode::Fast | HookMode::FastEmpty => {
            let stubs = crate::fast::stubs(crate::fast::Variant {
                trash: config.trash_registers,
                preserve_rcx: config.preserve_rcx,
                empty: config.hooks == HookMode::FastEmpty,
            });
            // SAFETY: the stubs are 'static assembly functions following the JIT's probe
            // convention (fast.rs); the runtime only calls them, never through these
            // C signatures, so the pointer casts change no calling contract.
            let (enter, leave, tailcall) = unsafe {
                (
                    core::mem::transmute::<unsafe extern "C" fn(), FunctionEnter3>(stubs.enter),
                    core::mem::transmute::<unsafe extern "C" fn(), FunctionLeave3>(stubs.leave),
                    core::mem::transmute::<unsafe extern "C" fn(), FunctionTailcall3>(
                        stubs.tailcall,
                    ),
                )
            };
            (
                info.set_hooks3(enter, leave, tailcall),
                "SetEnterLeaveFunctionHooks3",
            )
        }
    };
    if FAILED(hr) {
        Err(format!("{what} failed: {hr:#010x}"))
    } else {
        Ok(())
    }
}

unsafe extern "C" fn empty_hook(_id: FunctionIDOrClientID, _elt: COR_PRF_ELT_INFO) {}

/// `FunctionIDMapper2`: returns `idx + 1` plus flags (never 0, see `hooks::client_id`) so the
/// hooks get the index without a lookup; unselected functions get `*hook = FALSE`.
unsafe extern "C" fn function_id_mapper(
    function: FunctionID,
    _client_data: *mut c_void,
    hook: *mut BOOL,
) -> UINT_PTR {
    let mapped = std::panic::catch_unwind(|| PROFILER.map_function(function));
    let (client, hooked) = match mapped {
        Ok(Some(m)) => m,
        _ => {
            if let Some(rec) = Recorder::global() {
                rec.internal_error("mapper", &format!("could not map function {function:#x}"));
            }
            (function, false)
        }
    };
    if !hook.is_null() {
        // SAFETY: non-null out pointer from the runtime.
        unsafe { *hook = BOOL::from(hooked) };
    }
    client
}

unsafe extern "C" fn enter_hook(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    hooks::enter_hook(id.value(), elt);
}

hooks::leave_hook_rcx0! {
    /// The slow-path Leave hook: `hooks::leave_hook`, then RCX = 0 (see the macro).
    fn leave_hook => hooks::leave_hook
}

unsafe extern "C" fn tailcall_hook(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    hooks::tailcall_hook(id.value(), elt);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_roles_from_the_token_lookup() {
        assert_eq!(
            role_from_lookup(0x100, Some(0x100)),
            FunctionFlags::ASYNC_THUNK
        );
        assert_eq!(
            role_from_lookup(0x200, Some(0x100)),
            FunctionFlags::ASYNC_VARIANT
        );
        assert_eq!(role_from_lookup(0x200, None), 0);
        assert_eq!(role_from_lookup(0x200, Some(0)), 0);
    }
}
