//! The composition root and the callbacks eltrace implements. Initialize builds the
//! components from the configuration and starts them in order — clock → trace file, recorder
//! and writer → writer thread → event mask and hooks (install.rs) → mapper (mapper.rs) → exit
//! handlers — handing each what it needs; the end of recording (Shutdown, atexit, SIGABRT or
//! the unhandled-exception sentinel) stops them in reverse through `Writer::finish`. The other
//! callbacks record thread names and exception events.

use core::ffi::c_void;
use std::io::Write as _;
use std::sync::OnceLock;

use eltrace_abi::*;
use eltrace_trace::protocol::info_key;
use eltrace_trace::{EndReason, TraceInfo, protocol};

use crate::com::info::Info;
use crate::com::modules::Modules;
use crate::config::Config;
use crate::install::{event_mask, hook_mode_name, install_hooks};
use crate::recorder::{RECORDER, Recorder};
use crate::writer::{Sink, Writer};
use crate::{clock, exceptions, exit, mapper, names, output, sys};

/// The callback object's behaviour (one, process lifetime).
pub struct Profiler;

/// The one profiler.
pub static PROFILER: Profiler = Profiler;

/// The runtime's info interface, once Initialize has it.
static INFO: OnceLock<Info> = OnceLock::new();
/// The per-module cache (names, metadata, framework or not), shared by the mapper and the
/// `--values` hooks.
static MODULES: Modules = Modules::new();

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

/// Whether the runtime's profiling interface sets the high event mask (ICorProfilerInfo5 and
/// later: every CoreCLR eltrace supports), so that GC starts are counted (`hooks::GC_EPOCH`).
fn gc_epochs(info: &Info) -> bool {
    info.version >= 5
}

/// The JIT's self-tail-call-loop setting as this process sees it (`DOTNET_TailCallLoopOpt`,
/// else `COMPlus_TailCallLoopOpt`), `default` when neither is set (loops on): with loops on,
/// a self-recursive tail call the JIT turned into a jump is no call in the trace.
fn tail_call_loop_opt() -> String {
    [
        protocol::env::DOTNET_TAIL_CALL_LOOP_OPT,
        protocol::env::COMPLUS_TAIL_CALL_LOOP_OPT,
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok())
    .unwrap_or_else(|| "default".into())
}

/// Ends the trace with a diagnostic and refuses activation.
fn decline(rec: &Recorder, writer: &Writer, message: &str) -> HRESULT {
    rec.internal_error("init", &format!("{message}; not profiling"));
    writer.finish(EndReason::Shutdown);
    CORPROF_E_PROFILER_CANCEL_ACTIVATION
}

/// The runtime's ThreadID of the calling thread, 0 if unknown (used at ring creation).
fn current_managed_thread() -> u64 {
    INFO.get()
        .and_then(Info::current_thread)
        .map_or(0, |t| t as u64)
}

/// The trace's INFO record: the process, the runtime, the clock and the configuration
/// (`clock_desc`: what `clock::init` chose).
fn trace_info(config: &Config, info: &Info, pid: u32, ppid: u32, clock_desc: String) -> TraceInfo {
    let runtime = info.runtime_description().unwrap_or_default();
    TraceInfo {
        pid,
        start_unix_ns: clock::unix_now_ns(),
        start_ticks: clock::to_ns(clock::now()),
        ns_per_tick: 1.0,
        runtime,
        command: command_line(),
        hook_mode: hook_mode_name(config).into(),
        extra: vec![
            (
                info_key::SESSION.into(),
                config.session.clone().unwrap_or_default(),
            ),
            (info_key::PPID.into(), ppid.to_string()),
            (info_key::CLOCK.into(), clock_desc),
            (
                info_key::PROFILER.into(),
                format!("eltrace-profiler {}", env!("CARGO_PKG_VERSION")),
            ),
            (
                info_key::PROFILER_INFO_VERSION.into(),
                info.version.to_string(),
            ),
            (
                info_key::BUFFER_EVENTS.into(),
                crate::ring::Ring::rounded_capacity(config.buffer_events).to_string(),
            ),
            (
                info_key::MAX_BUFFER_MB.into(),
                config.max_buffer_mb.to_string(),
            ),
            (info_key::FLUSH_MS.into(), config.flush_ms.to_string()),
            (info_key::VALUES.into(), u8::from(config.values).to_string()),
            // values/mod.rs pushes a Value event before the Enter or Leave it belongs to.
            (info_key::VALUES_FIRST.into(), info_key::YES.into()),
            (info_key::LOSSY.into(), u8::from(config.lossy).to_string()),
            (info_key::TIMING.into(), config.timing.name().into()),
            (info_key::SAMPLE_HZ.into(), config.sample_hz.to_string()),
            (
                info_key::SAMPLING.into(),
                u8::from(config.sampling).to_string(),
            ),
            (info_key::TAIL_CALL_LOOP_OPT.into(), tail_call_loop_opt()),
            (
                info_key::GC_EPOCHS.into(),
                u8::from(gc_epochs(info)).to_string(),
            ),
            (
                info_key::EVENT_MASK.into(),
                format!("{:#010x}", event_mask(config.hooks, config.values)),
            ),
        ],
    }
}

/// Starts what records once the recorder and writer exist: the writer thread, the sampler,
/// the event mask, the hooks and the mapper, then the exit handlers. A failure before the
/// exit handlers ends the trace and declines activation ([`decline`]).
fn start_recording(
    rec: &'static Recorder,
    writer: &'static Writer,
    info: &'static Info,
) -> HRESULT {
    // Writer thread.
    if let Err(e) = writer.start() {
        return decline(rec, writer, &format!("cannot start the writer thread: {e}"));
    }

    // The sampler thread (timing `sampled`, or samples beside exact timestamps).
    if rec.config.sampling {
        if let Err(e) = crate::sampler::start(rec) {
            return decline(
                rec,
                writer,
                &format!("cannot start the sampler thread: {e}"),
            );
        }
    }

    // Event mask, hooks, mapper.
    let mask = event_mask(rec.config.hooks, rec.config.values);
    // With ICorProfilerInfo5, also the GC start callback (`hooks::GC_EPOCH`); the trace's
    // INFO says `gc_epochs=1` then.
    let hr = if gc_epochs(info) {
        info.set_event_mask2(mask, COR_PRF_HIGH_BASIC_GC)
    } else {
        info.set_event_mask(mask)
    };
    if FAILED(hr) {
        return decline(
            rec,
            writer,
            &format!("SetEventMask({mask:#x}) failed: {hr:#010x}"),
        );
    }
    if let Err(e) = install_hooks(info, &MODULES, &rec.config) {
        return decline(rec, writer, &e);
    }
    let hr = mapper::install(info, &MODULES, rec);
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

impl Profiler {
    /// `ICorProfilerCallback::Initialize`.
    ///
    /// # Safety
    /// `unk` is null or the live IUnknown the runtime passes.
    pub unsafe fn initialize(&self, unk: *mut IUnknown) -> HRESULT {
        if let Some(experiment) = crate::check::requested() {
            // SAFETY: forwarded from the runtime.
            return unsafe { crate::check::initialize(unk, &experiment) };
        }
        // Not valid UTF-8: read lossily, so that the configuration can name the variable.
        let config =
            Config::from_env(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()));
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
        if RECORDER.get().is_some() || INFO.get().is_some() {
            say("Initialize called twice; declining the second profiler instance");
            return CORPROF_E_PROFILER_CANCEL_ACTIVATION;
        }

        // Clock (before anything takes a timestamp), trace file and recorder.
        let clock_desc = clock::init(config.use_tsc);
        clock::set_timeless(config.timing.timeless());
        let pid = sys::current_pid();
        let ppid = sys::parent_pid();
        let trace_info = trace_info(&config, &info, pid, ppid, clock_desc);
        let opened = output::open(&config, pid, ppid).and_then(|(path, file)| {
            Sink::create(file, &trace_info)
                .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))
        });
        let sink = match opened {
            Ok(s) => s,
            Err(e) => {
                say(&format!(
                    "cannot create the trace file for {}: {e}; not profiling",
                    config.output_path(pid).display()
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
        let _ = INFO.set(info);
        let info = INFO.get().expect("just set");
        rec.set_managed_thread_source(current_managed_thread);
        for w in &warnings {
            rec.note("config", w);
        }

        start_recording(rec, writer, info)
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

    /// `GarbageCollectionStarted`: a new GC epoch (`hooks::GC_EPOCH`), before any object
    /// moves. Delivered with `COR_PRF_HIGH_BASIC_GC` (no per-object callbacks).
    ///
    /// # Safety
    /// None (the arguments are not read).
    pub unsafe fn garbage_collection_started(
        &self,
        _generations: i32,
        _collected: *mut BOOL,
        _reason: COR_PRF_GC_REASON,
    ) -> HRESULT {
        crate::hooks::GC_EPOCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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

    /// `JITInlining(caller, callee, should_inline)`: the JIT may inline `callee` unless its
    /// calls are recorded (a selected function, or the unhandled-exception sentinel): an
    /// inlined call makes no Enter or Leave. Everything else, framework code included,
    /// keeps the JIT's inlining (install.rs: no `COR_PRF_DISABLE_INLINING`). In check mode
    /// the experiment answers by the same rule (check/jit.rs).
    ///
    /// # Safety
    /// `should_inline` must be null or writable (the runtime passes its out parameter).
    pub unsafe fn jit_inlining(
        &self,
        caller: FunctionID,
        callee: FunctionID,
        should_inline: *mut BOOL,
    ) -> HRESULT {
        if should_inline.is_null() {
            return E_POINTER;
        }
        let allow = crate::check::jit_inlining(caller, callee)
            .unwrap_or_else(|| crate::mapper::allows_inlining(callee));
        // SAFETY: non-null and writable per the contract.
        unsafe { *should_inline = BOOL::from(allow) };
        S_OK
    }

    /// `JITCompilationStarted(function, safe_to_block)`: nothing while recording (the mask
    /// asks for JIT callbacks for `JITInlining`); the `jit` check experiment counts it.
    ///
    /// # Safety
    /// None (the id is not dereferenced).
    pub unsafe fn jit_compilation_started(&self, function: FunctionID, _safe: BOOL) -> HRESULT {
        crate::check::jit_compilation_started(function);
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
}
