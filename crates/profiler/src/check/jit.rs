//! The `jit` experiment: what the JIT and the runtime do with eltrace's own event mask (the
//! fast path's, `install::event_mask`, with `COR_PRF_HIGH_BASIC_GC` as `record` sets it).
//! Naked stubs count the Enters per selected function; the JIT callbacks write a `jit` line
//! for each compilation of a function of interest (the probe's `Probes.JitProbe` and CoreLib's
//! two `Convert` methods it calls, check/probes/JitProbe.cs) and an `inline` line for each
//! `JITInlining` question whose caller or callee is one, answered as eltrace's mapper answers
//! it (profiler.rs `jit_inlining`: refuse a selected callee, allow the rest). Counters of all
//! compilations and questions, and the Enters, are written at Shutdown.

use std::sync::atomic::{AtomicU64, Ordering};

use eltrace_abi::*;

use super::experiment::{Experiment, State};
use super::funcs::{self, CLIENT_TAG, CLIENT_TAG_SHIFT, Func};
use super::obs;
use crate::config::HookMode;

/// Enter counters, one per client id index (the registry's order); the mapper selects far
/// fewer functions.
const SLOTS: usize = 64;
static ENTERS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

static COMPILATIONS: AtomicU64 = AtomicU64::new(0);
static FRAMEWORK_COMPILATIONS: AtomicU64 = AtomicU64::new(0);
static QUESTIONS: AtomicU64 = AtomicU64::new(0);
static ALLOWED: AtomicU64 = AtomicU64::new(0);

/// eltrace's mask (fast path, no `--values`), the counting stubs, the check mapper.
pub fn install(st: &State) -> HRESULT {
    let mask = crate::install::event_mask(HookMode::Fast, false);
    let hr = if st.info.version >= 5 {
        st.info.set_event_mask2(mask, COR_PRF_HIGH_BASIC_GC)
    } else {
        st.info.set_event_mask(mask)
    };
    obs::line("mask.startup", &format!("{hr:#010x}"));
    obs::line("mask.value", &format!("{mask:#x}"));
    if FAILED(hr) {
        return hr;
    }
    let p = st.info.raw();
    // SAFETY: `raw` is a live ICorProfilerInfo3 (or later) pointer; the stubs are 'static
    // and follow the JIT's probe convention (they touch only RAX, R10 and the flags).
    let hr = unsafe {
        ((*(*p).vtbl).SetEnterLeaveFunctionHooks3)(
            p.cast(),
            Some(enter_stub),
            Some(leave_stub),
            Some(leave_stub),
        )
    };
    obs::line("hooks.fast", &format!("{hr:#010x}"));
    if FAILED(hr) {
        return hr;
    }
    funcs::install(st)
}

/// Whether the probe's lines name this function: the probe's methods and CoreLib's two
/// `Convert` methods it calls.
fn of_interest(f: &Func) -> bool {
    f.type_name == "Probes.JitProbe"
        || (f.framework
            && f.type_name == "System.Convert"
            && (f.method == "ToBase64String" || f.method == "FromBase64String"))
}

/// `JITCompilationStarted`: counts, and a line for a function of interest.
pub fn compilation_started(st: &State, function: FunctionID) {
    let f = funcs::describe(st, function);
    COMPILATIONS.fetch_add(1, Ordering::Relaxed);
    if f.framework {
        FRAMEWORK_COMPILATIONS.fetch_add(1, Ordering::Relaxed);
    }
    if of_interest(&f) {
        obs::line("jit", &format!("fid={:#x} name={}", f.fid, f.full_name()));
    }
}

/// `JITInlining`: eltrace's answer (refuse a selected callee or one that cannot be named),
/// with a line when the caller or the callee is of interest.
pub fn inlining(st: &State, caller: FunctionID, callee: FunctionID) -> bool {
    let to = funcs::describe(st, callee);
    let allow = to.resolved && !funcs::selects(Experiment::Jit, &to);
    QUESTIONS.fetch_add(1, Ordering::Relaxed);
    if allow {
        ALLOWED.fetch_add(1, Ordering::Relaxed);
    }
    let from = funcs::describe(st, caller);
    if of_interest(&from) || of_interest(&to) {
        obs::line(
            "inline",
            &format!(
                "caller={} allow={} name={}",
                from.full_name(),
                u8::from(allow),
                to.full_name()
            ),
        );
    }
    allow
}

/// The counters: `jit.*` totals and one `enters` line per selected function.
pub fn report() {
    for (k, c) in [
        ("jit.compilations", &COMPILATIONS),
        ("jit.framework_compilations", &FRAMEWORK_COMPILATIONS),
        ("jit.inline_questions", &QUESTIONS),
        ("jit.inline_allowed", &ALLOWED),
    ] {
        obs::line(k, &c.load(Ordering::Relaxed).to_string());
    }
    for (i, n) in ENTERS.iter().enumerate() {
        let Some(f) = funcs::get(funcs::client_id(i as u32)) else {
            break;
        };
        obs::line(
            "enters",
            &format!("count={} name={}", n.load(Ordering::Relaxed), f.full_name()),
        );
    }
}

/// Enter: counts the call of the function whose client id is in R14 (Unix x64). May modify
/// RAX, R10, R11 and the flags (docs/abi.md "Registers the call-out may modify").
#[unsafe(naked)]
unsafe extern "C" fn enter_stub(_id: FunctionIDOrClientID) {
    core::arch::naked_asm!(
        "mov rax, r14",
        "shr rax, {tag_shift}",
        "cmp rax, {tag}",
        "jne 2f",
        "mov eax, r14d",
        "cmp rax, {slots}",
        "jae 2f",
        "lea r10, [rip + {enters}]",
        "lock inc qword ptr [r10 + rax * 8]",
        "2:",
        "ret",
        enters = sym ENTERS,
        tag = const CLIENT_TAG,
        tag_shift = const CLIENT_TAG_SHIFT,
        slots = const SLOTS,
    )
}

/// Leave and Tailcall: nothing.
#[unsafe(naked)]
unsafe extern "C" fn leave_stub(_id: FunctionIDOrClientID) {
    core::arch::naked_asm!("ret")
}
