//! Slow-path (WithInfo) experiments: the hooks are ordinary C functions called by the runtime's
//! ProfileEnter/Leave/Tailcall FCALLs. Depending on the experiment each event is written with
//! its `GetFunction*3Info` results (`info`), with nothing but a count (`regs-slow`, whose hooks
//! are wrapped by naked stubs that overwrite every volatile register before returning), with
//! `DoStackSnapshot`/`ForceGC` results (`snapshot`), with late `SetEventMask` results
//! (`flags`), or plainly (`pinvoke`).

use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use eltrace_abi::*;

use super::experiment::{self, Experiment, State, set_mask};
use super::fast;
use super::funcs::{self, Func};
use super::obs;
use crate::sys;

const BASE: DWORD = COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING;

/// Sets mask, hooks and mapper for a slow-path experiment.
pub fn install(st: &State) -> HRESULT {
    let mask = match st.experiment {
        Experiment::Info => {
            BASE | COR_PRF_ENABLE_FUNCTION_ARGS
                | COR_PRF_ENABLE_FUNCTION_RETVAL
                | COR_PRF_ENABLE_FRAME_INFO
        }
        Experiment::Snapshot => BASE | COR_PRF_ENABLE_FRAME_INFO | COR_PRF_ENABLE_STACK_SNAPSHOT,
        Experiment::Flags => return install_flags(st),
        _ => BASE | COR_PRF_ENABLE_FRAME_INFO,
    };
    let hr = set_mask(st, "startup", mask);
    if FAILED(hr) {
        return hr;
    }
    let hr = if matches!(
        st.experiment,
        Experiment::RegsSlow | Experiment::RegsSlowAsync
    ) {
        set_with_info(
            st,
            "with_info",
            clobber_enter,
            clobber_leave,
            clobber_tailcall,
        )
    } else if st.experiment == Experiment::RegsSlowAsyncRcx0 {
        set_with_info(
            st,
            "with_info",
            clobber_enter,
            clobber_leave_rcx0,
            clobber_tailcall,
        )
    } else {
        set_with_info(st, "with_info", enter, leave, tailcall)
    };
    if FAILED(hr) {
        return hr;
    }
    funcs::install(st)
}

fn set_with_info(
    st: &State,
    label: &str,
    e: FunctionEnter3WithInfo,
    l: FunctionLeave3WithInfo,
    t: FunctionTailcall3WithInfo,
) -> HRESULT {
    let hr = st.info.set_hooks_with_info(e, l, t);
    obs::line(&format!("hooks.{label}"), &format!("{hr:#010x}"));
    hr
}

/// The `flags` experiment's Initialize: the registration-order rules, each result written as
/// `mask.*`/`hooks.*`, ending in a consistent slow-path setup.
fn install_flags(st: &State) -> HRESULT {
    // WithInfo hooks need ARGS/RETVAL/FRAME_INFO already in the mask.
    set_mask(st, "enterleave_only", BASE);
    set_with_info(st, "with_info_without_slow_flags", enter, leave, tailcall);
    // Fast-path hooks are refused while a slow-path flag is set.
    set_mask(st, "frame_info", BASE | COR_PRF_ENABLE_FRAME_INFO);
    let hr = fast::set_fast_hooks(st);
    obs::line("hooks.fast_with_frame_info", &format!("{hr:#010x}"));
    // The consistent setup.
    let hr = set_with_info(st, "with_info", enter, leave, tailcall);
    if FAILED(hr) {
        return hr;
    }
    // Clearing every slow-path flag while WithInfo hooks are set is refused.
    set_mask(st, "clear_slow_flags_with_info_hooks", BASE);
    funcs::install(st)
}

/// Once, from the first hook (after startup): ELT flags may no longer change.
fn late_flags(st: &State) {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
        return;
    }
    let mask = BASE | COR_PRF_ENABLE_FRAME_INFO;
    set_mask(
        st,
        "late_clear_enterleave",
        mask & !COR_PRF_MONITOR_ENTERLEAVE,
    );
    set_mask(st, "late_add_retval", mask | COR_PRF_ENABLE_FUNCTION_RETVAL);
    set_mask(st, "late_add_args", mask | COR_PRF_ENABLE_FUNCTION_ARGS);
    set_mask(
        st,
        "late_clear_frame_info",
        mask & !COR_PRF_ENABLE_FRAME_INFO,
    );
    set_mask(st, "late_same", mask);
}

fn info_vt(st: &State) -> (&ICorProfilerInfo3Vtbl, *mut c_void) {
    let p = st.info.raw();
    // SAFETY: `raw` is a live ICorProfilerInfo3 (or later) pointer for the runtime's life.
    (unsafe { &*(*p).vtbl }, p.cast())
}

/// Up to 8 bytes at `addr` as a little-endian hex number.
///
/// # Safety
/// `addr` must point to `len` readable bytes (the runtime's argument/return copies).
unsafe fn hex_value(addr: UINT_PTR, len: ULONG) -> String {
    if addr == 0 || len == 0 {
        return "-".into();
    }
    let mut b = [0u8; 8];
    let n = (len as usize).min(8);
    // SAFETY: the caller guarantees `len` readable bytes; at most 8 are copied.
    unsafe { core::ptr::copy_nonoverlapping(addr as *const u8, b.as_mut_ptr(), n) };
    format!("{:#x}", u64::from_le_bytes(b))
}

fn enter_details(st: &State, f: &Func, elt: COR_PRF_ELT_INFO) -> String {
    let (vt, this) = info_vt(st);
    let mut frame: COR_PRF_FRAME_INFO = 0;
    let mut buf = [0u64; 64];
    let mut cb: ULONG = (buf.len() * 8) as ULONG;
    let args = buf.as_mut_ptr().cast::<COR_PRF_FUNCTION_ARGUMENT_INFO>();
    // SAFETY: live interface; `elt` is the handle of the running hook; the out pointers are
    // locals and `cb` is the buffer's size in bytes.
    let hr = unsafe {
        (vt.GetFunctionEnter3Info)(this, f.fid as FunctionID, elt, &mut frame, &mut cb, args)
    };
    let mut s = format!("hr={hr:#010x} frame={}", u8::from(frame != 0));
    if SUCCEEDED(hr) {
        // SAFETY: on success the runtime filled the header and `numRanges` ranges in `buf`.
        let (n, total) = unsafe { ((*args).numRanges, (*args).totalArgumentSize) };
        s.push_str(&format!(" ranges={n} total={total}"));
        for i in 0..(n as usize).min(4) {
            // SAFETY: range i < numRanges lies inside `buf` (the runtime checked the size).
            let r = unsafe { *(*args).ranges.as_ptr().add(i) };
            // SAFETY: a filled range points at `length` bytes of the runtime's copy.
            let v = unsafe { hex_value(r.startAddress, r.length) };
            s.push_str(&format!(" len{i}={} val{i}={v}", r.length));
        }
    }
    s
}

fn leave_details(st: &State, f: &Func, elt: COR_PRF_ELT_INFO) -> String {
    let (vt, this) = info_vt(st);
    let mut frame: COR_PRF_FRAME_INFO = 0;
    let mut range = COR_PRF_FUNCTION_ARGUMENT_RANGE {
        startAddress: 0,
        length: 0,
    };
    // SAFETY: live interface; `elt` is the running hook's handle; out pointers are locals.
    let hr = unsafe {
        (vt.GetFunctionLeave3Info)(this, f.fid as FunctionID, elt, &mut frame, &mut range)
    };
    let v = if SUCCEEDED(hr) {
        // SAFETY: on success the range points at `length` bytes of the return value.
        unsafe { hex_value(range.startAddress, range.length) }
    } else {
        "-".into()
    };
    format!(
        "hr={hr:#010x} frame={} len={} val={v}",
        u8::from(frame != 0),
        range.length
    )
}

fn tailcall_details(st: &State, f: &Func, elt: COR_PRF_ELT_INFO) -> String {
    let (vt, this) = info_vt(st);
    let mut frame: COR_PRF_FRAME_INFO = 0;
    // SAFETY: live interface; `elt` is the running hook's handle; the out pointer is a local.
    let hr = unsafe { (vt.GetFunctionTailcall3Info)(this, f.fid as FunctionID, elt, &mut frame) };
    format!("hr={hr:#010x} frame={}", u8::from(frame != 0))
}

unsafe extern "C" fn count_frame(
    _func: FunctionID,
    _ip: UINT_PTR,
    _frame: COR_PRF_FRAME_INFO,
    _size: ULONG32,
    _context: *mut BYTE,
    data: *mut c_void,
) -> HRESULT {
    // SAFETY: `data` is the `&mut u32` counter passed to DoStackSnapshot by `snapshot`.
    unsafe { *data.cast::<u32>() += 1 };
    S_OK
}

/// DoStackSnapshot (unseeded, current thread) and ForceGC from inside the hook.
fn snapshot(st: &State) {
    static TIMES: AtomicU64 = AtomicU64::new(0);
    if TIMES.fetch_add(1, Ordering::Relaxed) >= 3 {
        return;
    }
    let (vt, this) = info_vt(st);
    let mut frames: u32 = 0;
    // SAFETY: live interface; thread 0 = the current one; the callback only increments the
    // counter passed as client data, which outlives the (synchronous) walk; no seed context.
    let hr = unsafe {
        (vt.DoStackSnapshot)(
            this,
            0,
            Some(count_frame),
            COR_PRF_SNAPSHOT_DEFAULT,
            (&mut frames as *mut u32).cast(),
            core::ptr::null_mut(),
            0,
        )
    };
    obs::line(
        "snapshot",
        &format!("hr={hr:#010x} frames={frames} tid={}", sys::current_tid()),
    );
    // SAFETY: live interface; no arguments.
    let hr = unsafe { (vt.ForceGC)(this) };
    obs::line("forcegc", &format!("hr={hr:#010x}"));
}

fn event(kind: &str, client: usize, elt: COR_PRF_ELT_INFO) {
    let Some(st) = experiment::state() else {
        return;
    };
    let Some(f) = funcs::get(client as u64) else {
        obs::line("unknown_client", &format!("kind={kind} client={client:#x}"));
        return;
    };
    let details = match (st.experiment, kind) {
        (Experiment::Info, "enter") => enter_details(st, &f, elt),
        (Experiment::Info, "leave") => leave_details(st, &f, elt),
        (Experiment::Info, _) => tailcall_details(st, &f, elt),
        (Experiment::Snapshot, "enter") if f.method == "Target" => {
            snapshot(st);
            String::new()
        }
        (Experiment::Flags, _) => {
            late_flags(st);
            String::new()
        }
        _ => String::new(),
    };
    obs::line(
        "event",
        &format!(
            "kind={kind} tid={} fid={:#x} {details} name={}",
            sys::current_tid(),
            f.fid,
            f.full_name()
        ),
    );
}

unsafe extern "C" fn enter(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    let _ = std::panic::catch_unwind(|| event("enter", id.value(), elt));
}

crate::hooks::leave_hook_rcx0! {
    /// The experiments' Leave hook: `leave_inner`, then RCX = 0, like eltrace's own (without
    /// it the `info` experiment died with SIGABRT now and then; `regs.slow.async-rcx` shows
    /// why).
    fn leave => leave_inner
}

extern "C" fn leave_inner(client_id: usize, elt: COR_PRF_ELT_INFO) {
    let _ = std::panic::catch_unwind(|| event("leave", client_id, elt));
}

unsafe extern "C" fn tailcall(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    let _ = std::panic::catch_unwind(|| event("tailcall", id.value(), elt));
}

// `regs-slow`: counting hooks wrapped by stubs that overwrite every volatile register.

static SLOW_ENTERS: AtomicU64 = AtomicU64::new(0);
static SLOW_LEAVES: AtomicU64 = AtomicU64::new(0);
static SLOW_TAILCALLS: AtomicU64 = AtomicU64::new(0);

// The first Enter and Leave are written as they happen (check mode only): the counters come
// at Shutdown, which a crashing probe never reaches.
extern "C" fn count_enter() {
    if SLOW_ENTERS.fetch_add(1, Ordering::Relaxed) == 0 {
        let _ = std::panic::catch_unwind(|| obs::line("slow.first_enter", "1"));
    }
}
extern "C" fn count_leave() {
    if SLOW_LEAVES.fetch_add(1, Ordering::Relaxed) == 0 {
        let _ = std::panic::catch_unwind(|| obs::line("slow.first_leave", "1"));
    }
}
extern "C" fn count_tailcall() {
    SLOW_TAILCALLS.fetch_add(1, Ordering::Relaxed);
}

/// Calls `$count` (a C function), then overwrites RAX, RCX, RDX, RSI, RDI, R8–R11 and
/// XMM0–XMM15 with garbage and returns: legal for a C function, and what the runtime's
/// ProfileEnterNaked/LeaveNaked stubs must absorb on the slow path.
macro_rules! clobbering_hook {
    ($name:ident, $count:ident) => {
        #[unsafe(naked)]
        unsafe extern "C" fn $name(_id: FunctionIDOrClientID, _elt: COR_PRF_ELT_INFO) {
            core::arch::naked_asm!(
                // Entry RSP ≡ 8 (mod 16); one push aligns the call.
                "push rbx",
                "call {count}",
                "pop rbx",
                "mov rax, 0x5EEDBAD0DEADBEEF",
                "mov rcx, rax",
                "mov rdx, rax",
                "mov rsi, rax",
                "mov rdi, rax",
                "mov r8, rax",
                "mov r9, rax",
                "mov r10, rax",
                "mov r11, rax",
                "movq xmm0, rax",
                "movq xmm1, rax",
                "movq xmm2, rax",
                "movq xmm3, rax",
                "movq xmm4, rax",
                "movq xmm5, rax",
                "movq xmm6, rax",
                "movq xmm7, rax",
                "movq xmm8, rax",
                "movq xmm9, rax",
                "movq xmm10, rax",
                "movq xmm11, rax",
                "movq xmm12, rax",
                "movq xmm13, rax",
                "movq xmm14, rax",
                "movq xmm15, rax",
                "ret",
                count = sym $count,
            )
        }
    };
}

/// Like `clobbering_hook!`, but returns with RCX = 0 (what .NET 10 has in RCX at every
/// reported Leave, and what a runtime-async caller reads as "no continuation").
#[unsafe(naked)]
unsafe extern "C" fn clobber_leave_rcx0(_id: FunctionIDOrClientID, _elt: COR_PRF_ELT_INFO) {
    core::arch::naked_asm!(
        "push rbx",
        "call {count}",
        "pop rbx",
        "mov rax, 0x5EEDBAD0DEADBEEF",
        "mov rdx, rax",
        "mov rsi, rax",
        "mov rdi, rax",
        "mov r8, rax",
        "mov r9, rax",
        "mov r10, rax",
        "mov r11, rax",
        "movq xmm0, rax",
        "movq xmm1, rax",
        "movq xmm2, rax",
        "movq xmm3, rax",
        "movq xmm4, rax",
        "movq xmm5, rax",
        "movq xmm6, rax",
        "movq xmm7, rax",
        "movq xmm8, rax",
        "movq xmm9, rax",
        "movq xmm10, rax",
        "movq xmm11, rax",
        "movq xmm12, rax",
        "movq xmm13, rax",
        "movq xmm14, rax",
        "movq xmm15, rax",
        "xor ecx, ecx",
        "ret",
        count = sym count_leave,
    )
}

clobbering_hook!(clobber_enter, count_enter);
clobbering_hook!(clobber_leave, count_leave);
clobbering_hook!(clobber_tailcall, count_tailcall);

/// `regs-slow` counters, written at Shutdown.
pub fn report_counters() {
    for (k, c) in [
        ("slow.enters", &SLOW_ENTERS),
        ("slow.leaves", &SLOW_LEAVES),
        ("slow.tailcalls", &SLOW_TAILCALLS),
    ] {
        obs::line(k, &c.load(Ordering::Relaxed).to_string());
    }
}
