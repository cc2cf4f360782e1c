//! Process-end handling besides the Shutdown callback: an `atexit` handler (plain `exit()`
//! without Shutdown → End(ProcessExit)) and a chaining SIGABRT handler (an unhandled exception
//! makes the runtime abort → End(Abort)). SIGSEGV is never touched: the runtime uses it for
//! NullReferenceException.

use core::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use eltrace_trace::EndReason;

use crate::sys;
use crate::writer::Writer;

/// How long the abort handler waits for the writer thread's final drain.
const ABORT_WAIT_MS: u32 = 2000;

static PREVIOUS_ABRT: OnceLock<libc::sigaction> = OnceLock::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs both handlers (once). Returns a description of what failed, if anything.
pub fn install() -> Result<(), String> {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let mut failures = Vec::new();
    if !sys::register_atexit(at_exit) {
        failures.push("atexit refused the exit handler");
    }
    // Read the previous action first so that the handler always finds it.
    match sys::get_sigaction(libc::SIGABRT) {
        Some(prev) => {
            let _ = PREVIOUS_ABRT.set(prev);
            let act = libc::sigaction {
                sa_sigaction: on_abort as sys::SigInfoHandler as libc::sighandler_t,
                sa_flags: libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART,
                ..sys::empty_sigaction()
            };
            if sys::set_sigaction(libc::SIGABRT, &act).is_none() {
                failures.push("sigaction(SIGABRT) failed");
            }
        }
        None => failures.push("sigaction(SIGABRT) could not be read"),
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(writer) = Writer::global() {
            writer.finish(EndReason::ProcessExit);
        }
    });
}

/// SIGABRT: ask the writer thread for the final drain (atomics + nanosleep only), then chain.
unsafe extern "C" fn on_abort(sig: c_int, info: *mut c_void, ctx: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        if let Some(writer) = Writer::global() {
            writer.finish_from_signal(EndReason::Abort, ABORT_WAIT_MS);
        }
    });
    // SAFETY: forwards the kernel's arguments unchanged to the previous disposition.
    unsafe { chain(sig, info, ctx) };
}

/// Runs what was installed for SIGABRT before us.
unsafe fn chain(sig: c_int, info: *mut c_void, ctx: *mut c_void) {
    let prev = PREVIOUS_ABRT
        .get()
        .copied()
        .unwrap_or_else(sys::empty_sigaction);
    match prev.sa_sigaction {
        libc::SIG_IGN => {}
        libc::SIG_DFL => {
            // Restore the default and re-raise: the signal is blocked while we run, so it is
            // delivered (and terminates the process) as soon as this handler returns. When the
            // signal came from abort(), abort() would re-raise it anyway.
            let _ = sys::set_sigaction(sig, &prev);
            sys::raise_signal(sig);
        }
        h if prev.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: the previous owner installed `h` as an SA_SIGINFO handler.
            let f: sys::SigInfoHandler = unsafe { core::mem::transmute::<usize, _>(h) };
            // SAFETY: same arguments the kernel gave us.
            unsafe { f(sig, info, ctx) };
        }
        h => {
            // SAFETY: the previous owner installed `h` as a one-argument handler.
            let f: sys::PlainHandler = unsafe { core::mem::transmute::<usize, _>(h) };
            // SAFETY: as above.
            unsafe { f(sig) };
        }
    }
}
