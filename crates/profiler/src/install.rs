//! What the profiler asks of the runtime for its probes: the event mask and the ELT hooks of
//! each hook mode (`ELTRACE_HOOKS`): the fast path's assembly stubs (fast.rs), the slow path's
//! WithInfo hooks (hooks.rs), the `--values` hooks (values/), or the benchmark's empty ones.

use eltrace_abi::*;

use crate::com::info::Info;
use crate::com::modules::Modules;
use crate::config::{Config, HookMode};
use crate::{fast, hooks, values};

/// The event mask eltrace asks for.
///
/// * ENTERLEAVE: the JIT emits the probes. FRAME_INFO: the WithInfo hooks require at least one
///   of ARGS/RETVAL/FRAME_INFO *before* they are registered (and FRAME_INFO is the cheapest).
/// * EXCEPTIONS: Throw/Unwind/Catch events. THREADS: ThreadNameChanged.
/// * JIT_COMPILATION: the runtime asks the `JITInlining` callback before it inlines a callee
///   (profiler.rs `jit_inlining`), which refuses only callees whose calls are recorded: an
///   inlined callee has no probes of its own. Measured on CoreCLR 10.0.12 with a loop calling
///   a one-line `static int Small(int x) => x + 1` 1000 times: 1000 Enter/Leave pairs while
///   the caller runs tier-0 code, but **0** (Small is not even JIT-compiled, so the mapper
///   never sees it) when the caller is optimized and Small is inlined. Until this stop the
///   mask held `COR_PRF_DISABLE_INLINING`, which forbids inlining in every method of the
///   process (the framework's too) although only a selected callee's inlining loses events.
pub const EVENT_MASK: DWORD = COR_PRF_MONITOR_ENTERLEAVE
    | COR_PRF_ENABLE_FRAME_INFO
    | COR_PRF_MONITOR_JIT_COMPILATION
    | COR_PRF_MONITOR_EXCEPTIONS
    | COR_PRF_MONITOR_THREADS;

/// The event mask for a hook mode: the fast path must not ask for FRAME_INFO (or ARGS/RETVAL),
/// the slow path must ask for one of them; `off` asks for no probes at all. `values`
/// (`ELTRACE_VALUES`, slow path only) adds FUNCTION_ARGS and FUNCTION_RETVAL.
pub fn event_mask(mode: HookMode, values: bool) -> DWORD {
    match mode {
        HookMode::Slow if values => {
            EVENT_MASK | COR_PRF_ENABLE_FUNCTION_ARGS | COR_PRF_ENABLE_FUNCTION_RETVAL
        }
        HookMode::Slow | HookMode::SlowEmpty => EVENT_MASK,
        HookMode::Fast | HookMode::FastEmpty | HookMode::FastClock | HookMode::FastDiscard => {
            EVENT_MASK & !COR_PRF_ENABLE_FRAME_INFO
        }
        HookMode::Off => EVENT_MASK & !(COR_PRF_ENABLE_FRAME_INFO | COR_PRF_MONITOR_ENTERLEAVE),
    }
}

/// The trace's `hook_mode`.
pub fn hook_mode_name(config: &Config) -> &'static str {
    match config.hooks {
        HookMode::Slow => "slow-path",
        HookMode::Fast if config.trash_registers => "fast-path (trash registers)",
        HookMode::Fast => "fast-path",
        HookMode::Off => "off (benchmark)",
        HookMode::SlowEmpty => "slow-path, empty hooks (benchmark)",
        HookMode::FastEmpty => "fast-path, empty stubs (benchmark)",
        HookMode::FastClock => "fast-path, stubs that only read the clock (benchmark)",
        HookMode::FastDiscard => "fast-path, events dropped instead of encoded (benchmark)",
    }
}

/// Registers the ELT hooks of the configured mode. The `--values` hooks are handed the
/// runtime's interfaces here.
pub fn install_hooks(
    info: &'static Info,
    modules: &'static Modules,
    config: &Config,
) -> Result<(), String> {
    let (hr, what) = match config.hooks {
        HookMode::Off => return Ok(()),
        HookMode::Slow if config.values => {
            values::install(info, modules);
            (
                info.set_hooks_with_info(values::enter_hook, values::leave_hook, tailcall_hook),
                "SetEnterLeaveFunctionHooks3WithInfo",
            )
        }
        HookMode::Slow => (
            info.set_hooks_with_info(enter_hook, leave_hook, tailcall_hook),
            "SetEnterLeaveFunctionHooks3WithInfo",
        ),
        HookMode::SlowEmpty => (
            info.set_hooks_with_info(empty_hook, empty_hook, empty_hook),
            "SetEnterLeaveFunctionHooks3WithInfo",
        ),
        HookMode::Fast | HookMode::FastEmpty | HookMode::FastClock | HookMode::FastDiscard => {
            let stubs = fast::stubs(fast::Variant {
                trash: config.trash_registers,
                preserve_rcx: config.preserve_rcx,
                body: match config.hooks {
                    HookMode::FastEmpty => fast::Body::Empty,
                    HookMode::FastClock => fast::Body::Clock,
                    _ => fast::Body::Record,
                },
                timeless: config.timing.timeless(),
                stream: config.stream,
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
