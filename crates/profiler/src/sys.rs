//! The profiler's few C library calls behind thin safe wrappers (the `libc` crate's
//! declarations: glibc on Linux x86-64), and [`lock`], the one way the profiler takes a mutex.
//!
//! Nothing here has behaviour of its own; the wrappers below are the only callers of the raw
//! functions.

use core::ffi::{c_int, c_long, c_void};
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning (a panic elsewhere must not stop recording).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A three-argument (`SA_SIGINFO`) signal handler.
pub type SigInfoHandler = unsafe extern "C" fn(c_int, *mut c_void, *mut c_void);
/// A one-argument signal handler.
pub type PlainHandler = unsafe extern "C" fn(c_int);

/// A `struct sigaction` of all zeros: `SIG_DFL`, an empty mask, no flags.
pub fn empty_sigaction() -> libc::sigaction {
    // SAFETY: `struct sigaction` is plain data (integers, an integer array and an optional
    // function pointer), for which all zeros is a valid value.
    unsafe { core::mem::zeroed() }
}

const FUTEX_WAIT_PRIVATE: c_int = libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG;
const FUTEX_WAKE_PRIVATE: c_int = libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG;

/// A relative time of `ns` nanoseconds.
fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as c_long,
    }
}

/// Sleeps up to `ns` while `*word == expected` (returns early on a [`futex_wake`]).
pub fn futex_wait(word: &core::sync::atomic::AtomicU32, expected: u32, ns: u64) {
    let ts = timespec(ns);
    // SAFETY: `word` is a live, aligned u32 and `ts` a valid relative timeout; FUTEX_WAIT
    // only reads them.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAIT_PRIVATE,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes one thread sleeping in [`futex_wait`] on `word`.
pub fn futex_wake(word: &core::sync::atomic::AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not access memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAKE_PRIVATE,
            1 as c_int,
        );
    }
}

/// Reads a clock in nanoseconds. `clock_gettime` for the monotonic and realtime clocks is
/// served by the vDSO on Linux x86-64 (no system call) and is async-signal-safe.
#[inline(always)]
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = timespec(0);
    // SAFETY: `ts` is a valid, writable timespec; clock ids are constants glibc knows.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The soft `RLIMIT_FSIZE` in bytes, or `None` when there is none (or it cannot be read). A
/// write past it raises SIGXFSZ, which kills a process that does not handle it.
pub fn file_size_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit; RLIMIT_FSIZE is a resource glibc knows.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// The calling thread's kernel thread id.
pub fn current_tid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// The process id.
pub fn current_pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() as u32 }
}

/// The parent's process id.
pub fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}

/// Sleeps for `ns` nanoseconds (async-signal-safe).
pub fn sleep_ns(ns: u64) {
    let req = timespec(ns);
    // SAFETY: `req` is a valid timespec; a null `rem` is allowed.
    unsafe {
        libc::nanosleep(&req, core::ptr::null_mut());
    }
}

/// Registers `f` to run at `exit()`. Returns false if glibc refused.
pub fn register_atexit(f: extern "C" fn()) -> bool {
    // SAFETY: `f` is a plain `extern "C" fn()` with static lifetime (this library is never
    // unloaded while the runtime runs; see exit.rs).
    unsafe { libc::atexit(f) == 0 }
}

/// Installs `act` for `sig`, returning the previous action.
pub fn set_sigaction(sig: c_int, act: &libc::sigaction) -> Option<libc::sigaction> {
    let mut old = empty_sigaction();
    // SAFETY: both pointers are valid for the duration of the call.
    let rc = unsafe { libc::sigaction(sig, act, &mut old) };
    (rc == 0).then_some(old)
}

/// The action currently installed for `sig`.
pub fn get_sigaction(sig: c_int) -> Option<libc::sigaction> {
    let mut old = empty_sigaction();
    // SAFETY: a null new action only queries; `old` is a valid out pointer.
    let rc = unsafe { libc::sigaction(sig, core::ptr::null(), &mut old) };
    (rc == 0).then_some(old)
}

/// Sends `sig` to the calling thread (async-signal-safe).
pub fn raise_signal(sig: c_int) {
    // SAFETY: raise has no memory preconditions.
    unsafe {
        libc::raise(sig);
    }
}
