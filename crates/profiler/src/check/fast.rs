//! Fast-path experiments: naked stubs registered with `SetEnterLeaveFunctionHooks3`, which the
//! JIT calls directly with its private probe convention (Unix x64: Enter gets the client id in
//! R14 and the caller's SP in R15; Leave/Tailcall get them in RDI/RSI). The stubs only count
//! with atomics, check which register holds a tagged client id, remember the SP pair of one
//! method (`Probes.RegsProbe.Leaf`), and then, by experiment, overwrite exactly the documented
//! trash set, or one register outside it. Counters are written at Shutdown.

use std::sync::atomic::{AtomicU64, Ordering};

use eltrace_abi::*;

use super::experiment::{Experiment, State, set_mask};
use super::funcs::{self, CLIENT_TAG, CLIENT_TAG_SHIFT, LEAF_CLIENT};
use super::obs;

/// Mode bits read by the stubs.
const MODE_TRASH: u64 = 1;
const MODE_RAX_AFTER_LEAVE: u64 = 2;
const MODE_RDI_AFTER_ENTER: u64 = 4;
const MODE_R14_AFTER_ENTER: u64 = 8;

static MODE: AtomicU64 = AtomicU64::new(0);
static LEAF_ENTER_SP: AtomicU64 = AtomicU64::new(0);

static ENTERS: AtomicU64 = AtomicU64::new(0);
static ENTER_R14_TAGGED: AtomicU64 = AtomicU64::new(0);
static ENTER_RDI_TAGGED: AtomicU64 = AtomicU64::new(0);
static LEAF_ENTERS: AtomicU64 = AtomicU64::new(0);
static LEAVES: AtomicU64 = AtomicU64::new(0);
static LEAVE_RDI_TAGGED: AtomicU64 = AtomicU64::new(0);
static LEAF_LEAVES: AtomicU64 = AtomicU64::new(0);
static LEAF_SP_MATCH: AtomicU64 = AtomicU64::new(0);
static TAILCALLS: AtomicU64 = AtomicU64::new(0);
static TAILCALL_RDI_TAGGED: AtomicU64 = AtomicU64::new(0);

/// Registers the three stubs with `SetEnterLeaveFunctionHooks3`.
pub fn set_fast_hooks(st: &State) -> HRESULT {
    let p = st.info.raw();
    // SAFETY: `raw` is a live ICorProfilerInfo3 (or later) pointer; the stubs are 'static
    // and follow the JIT's probe convention (they touch only the registers it lets them).
    unsafe {
        ((*(*p).vtbl).SetEnterLeaveFunctionHooks3)(
            p.cast(),
            Some(enter_stub),
            Some(leave_stub),
            Some(tailcall_stub),
        )
    }
}

/// Mask (ENTERLEAVE only: no slow-path flags), stubs, mapper.
pub fn install(st: &State) -> HRESULT {
    let mode = match st.experiment {
        Experiment::FastTrash => MODE_TRASH,
        Experiment::FastRaxAfterLeave => MODE_RAX_AFTER_LEAVE,
        Experiment::FastRdiAfterEnter => MODE_RDI_AFTER_ENTER,
        Experiment::FastR14AfterEnter => MODE_R14_AFTER_ENTER,
        _ => 0,
    };
    MODE.store(mode, Ordering::Relaxed);
    obs::line("fast.mode", &mode.to_string());
    let hr = set_mask(
        st,
        "startup",
        COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING,
    );
    if FAILED(hr) {
        return hr;
    }
    let hr = set_fast_hooks(st);
    obs::line("hooks.fast", &format!("{hr:#010x}"));
    if FAILED(hr) {
        return hr;
    }
    funcs::install(st)
}

/// The counters, as `fast.*` lines.
pub fn report_counters() {
    for (k, c) in [
        ("fast.enters", &ENTERS),
        ("fast.enter_r14_tagged", &ENTER_R14_TAGGED),
        ("fast.enter_rdi_tagged", &ENTER_RDI_TAGGED),
        ("fast.leaf_enters", &LEAF_ENTERS),
        ("fast.leaves", &LEAVES),
        ("fast.leave_rdi_tagged", &LEAVE_RDI_TAGGED),
        ("fast.leaf_leaves", &LEAF_LEAVES),
        ("fast.leaf_sp_match", &LEAF_SP_MATCH),
        ("fast.tailcalls", &TAILCALLS),
        ("fast.tailcall_rdi_tagged", &TAILCALL_RDI_TAGGED),
    ] {
        obs::line(k, &c.load(Ordering::Relaxed).to_string());
    }
    obs::line(
        "fast.leaf_enter_sp",
        &format!("{:#x}", LEAF_ENTER_SP.load(Ordering::Relaxed)),
    );
}

/// Enter: may modify RAX, R10, R11, XMM8–XMM15 and the flags (targetamd64.h, UNIX_AMD64_ABI:
/// `RBM_CALLEE_TRASH & ~(RBM_ARG_REGS | RBM_FLTARG_REGS)`); everything else is the
/// method's incoming state.
#[unsafe(naked)]
unsafe extern "C" fn enter_stub(_id: FunctionIDOrClientID) {
    core::arch::naked_asm!(
        "lock inc qword ptr [rip + {enters}]",
        "mov rax, r14",
        "shr rax, {tag_shift}",
        "cmp rax, {tag}",
        "jne 2f",
        "lock inc qword ptr [rip + {r14_tagged}]",
        "2:",
        "mov rax, rdi",
        "shr rax, {tag_shift}",
        "cmp rax, {tag}",
        "jne 3f",
        "lock inc qword ptr [rip + {rdi_tagged}]",
        "3:",
        "mov rax, qword ptr [rip + {leaf_id}]",
        "cmp rax, r14",
        "jne 4f",
        "mov qword ptr [rip + {leaf_sp}], r15",
        "lock inc qword ptr [rip + {leaf_enters}]",
        "4:",
        "mov r11, qword ptr [rip + {mode}]",
        "test r11, {trash}",
        "jz 5f",
        "mov rax, 0x5EEDBAD0DEADBEEF",
        "mov r10, rax",
        "movq xmm8, rax",
        "movq xmm9, rax",
        "movq xmm10, rax",
        "movq xmm11, rax",
        "movq xmm12, rax",
        "movq xmm13, rax",
        "movq xmm14, rax",
        "movq xmm15, rax",
        "5:",
        "mov r11, qword ptr [rip + {mode}]",
        "test r11, {rdi}",
        "jz 6f",
        "mov rdi, 0x5EEDBAD0DEADBEEF",
        "6:",
        "test r11, {r14}",
        "jz 7f",
        "mov r14, 0x5EEDBAD0DEADBEEF",
        "7:",
        "mov r11, 0x5EEDBAD0DEADBEEF",
        "ret",
        enters = sym ENTERS,
        r14_tagged = sym ENTER_R14_TAGGED,
        rdi_tagged = sym ENTER_RDI_TAGGED,
        leaf_id = sym LEAF_CLIENT,
        leaf_sp = sym LEAF_ENTER_SP,
        leaf_enters = sym LEAF_ENTERS,
        mode = sym MODE,
        tag = const CLIENT_TAG,
        tag_shift = const CLIENT_TAG_SHIFT,
        trash = const MODE_TRASH,
        rdi = const MODE_RDI_AFTER_ENTER,
        r14 = const MODE_R14_AFTER_ENTER,
    )
}

/// Leave/Tailcall: may modify RDI, RSI, RCX, R8–R11, XMM2–XMM15 and the flags
/// (`RBM_CALLEE_TRASH & ~(RBM_FLOATRET | RBM_INTRET | RBM_FLOATRET_1 | RBM_INTRET_1)`);
/// RAX, RDX, XMM0 and XMM1 hold the return value.
macro_rules! leave_like_stub {
    ($name:ident, $calls:ident, $tagged:ident) => {
        #[unsafe(naked)]
        unsafe extern "C" fn $name(_id: FunctionIDOrClientID) {
            core::arch::naked_asm!(
                "lock inc qword ptr [rip + {calls}]",
                "mov r10, rdi",
                "shr r10, {tag_shift}",
                "cmp r10, {tag}",
                "jne 2f",
                "lock inc qword ptr [rip + {tagged}]",
                "2:",
                "mov r10, qword ptr [rip + {leaf_id}]",
                "cmp r10, rdi",
                "jne 3f",
                "lock inc qword ptr [rip + {leaf_leaves}]",
                "mov r10, qword ptr [rip + {leaf_sp}]",
                "cmp r10, rsi",
                "jne 3f",
                "lock inc qword ptr [rip + {sp_match}]",
                "3:",
                "mov r11, qword ptr [rip + {mode}]",
                "test r11, {trash}",
                "jz 4f",
                "mov r10, 0x5EEDBAD0DEADBEEF",
                "mov rdi, r10",
                "mov rsi, r10",
                "mov rcx, r10",
                "mov r8, r10",
                "mov r9, r10",
                "movq xmm2, r10",
                "movq xmm3, r10",
                "movq xmm4, r10",
                "movq xmm5, r10",
                "movq xmm6, r10",
                "movq xmm7, r10",
                "movq xmm8, r10",
                "movq xmm9, r10",
                "movq xmm10, r10",
                "movq xmm11, r10",
                "movq xmm12, r10",
                "movq xmm13, r10",
                "movq xmm14, r10",
                "movq xmm15, r10",
                "4:",
                "mov r11, qword ptr [rip + {mode}]",
                "test r11, {rax}",
                "jz 5f",
                "mov rax, 0x5EEDBAD0DEADBEEF",
                "5:",
                "mov r11, 0x5EEDBAD0DEADBEEF",
                "ret",
                calls = sym $calls,
                tagged = sym $tagged,
                leaf_id = sym LEAF_CLIENT,
                leaf_sp = sym LEAF_ENTER_SP,
                leaf_leaves = sym LEAF_LEAVES,
                sp_match = sym LEAF_SP_MATCH,
                mode = sym MODE,
                tag = const CLIENT_TAG,
                tag_shift = const CLIENT_TAG_SHIFT,
                trash = const MODE_TRASH,
                rax = const MODE_RAX_AFTER_LEAVE,
            )
        }
    };
}

leave_like_stub!(leave_stub, LEAVES, LEAVE_RDI_TAGGED);
leave_like_stub!(tailcall_stub, TAILCALLS, TAILCALL_RDI_TAGGED);
