//! The few C library functions and structs the profiler needs, declared by hand
//! (glibc on Linux x86-64) so the crate has no dependencies, and [`lock`], the one way the
//! profiler takes a mutex.
//!
//! Layouts follow glibc's `<bits/sigaction.h>`, `<bits/types/struct_timespec.h>` and
//! `<bits/types/__sigset_t.h>` for x86-64. Nothing here has behaviour of its own; the thin
//! safe wrappers below are the only callers of the raw declarations.

use core::ffi::{c_int, c_long, c_void};
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning (a panic elsewhere must not stop recording).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `struct timespec`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: c_long,
}

/// glibc's `sigset_t` (1024 bits).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SigSet {
    pub bits: [u64; 16],
}

/// glibc's `struct sigaction` on x86-64 (152 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SigAction {
    /// `sa_handler` or `sa_sigaction` (a union in C): `SIG_DFL`, `SIG_IGN` or a function.
    pub handler: usize,
    pub mask: SigSet,
    pub flags: c_int,
    pub restorer: usize,
}

impl SigAction {
    pub const fn zeroed() -> Self {
        SigAction {
            handler: 0,
            mask: SigSet { bits: [0; 16] },
            flags: 0,
            restorer: 0,
        }
    }
}

const _: () = assert!(core::mem::size_of::<SigAction>() == 152);

pub const CLOCK_REALTIME: c_int = 0;
pub const CLOCK_MONOTONIC: c_int = 1;
/// The calling thread's CPU time (a system call, not the vDSO).
pub const CLOCK_THREAD_CPUTIME_ID: c_int = 3;
pub const SIGABRT: c_int = 6;
pub const SA_SIGINFO: c_int = 0x4;
pub const SA_ONSTACK: c_int = 0x0800_0000;
pub const SA_RESTART: c_int = 0x1000_0000;
pub const SIG_DFL: usize = 0;
pub const SIG_IGN: usize = 1;

/// A three-argument (`SA_SIGINFO`) signal handler.
pub type SigInfoHandler = unsafe extern "C" fn(c_int, *mut c_void, *mut c_void);
/// A one-argument signal handler.
pub type PlainHandler = unsafe extern "C" fn(c_int);

unsafe extern "C" {
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn gettid() -> c_int;
    fn getpid() -> c_int;
    fn getppid() -> c_int;
    fn nanosleep(req: *const Timespec, rem: *mut Timespec) -> c_int;
    fn atexit(f: extern "C" fn()) -> c_int;
    fn sigaction(sig: c_int, act: *const SigAction, old: *mut SigAction) -> c_int;
    fn raise(sig: c_int) -> c_int;
    fn syscall(num: c_long, ...) -> c_long;
}

const SYS_FUTEX: c_long = 202;
const FUTEX_WAIT_PRIVATE: c_int = 128;
const FUTEX_WAKE_PRIVATE: c_int = 129;

/// Sleeps up to `ns` while `*word == expected` (returns early on a [`futex_wake`]).
pub fn futex_wait(word: &core::sync::atomic::AtomicU32, expected: u32, ns: u64) {
    let ts = Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as c_long,
    };
    // SAFETY: `word` is a live, aligned u32 and `ts` a valid relative timeout; FUTEX_WAIT
    // only reads them.
    unsafe {
        syscall(
            SYS_FUTEX,
            word.as_ptr(),
            FUTEX_WAIT_PRIVATE,
            expected,
            &ts as *const Timespec,
        );
    }
}

/// Wakes one thread sleeping in [`futex_wait`] on `word`.
pub fn futex_wake(word: &core::sync::atomic::AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not access memory.
    unsafe {
        syscall(SYS_FUTEX, word.as_ptr(), FUTEX_WAKE_PRIVATE, 1 as c_int);
    }
}

/// Reads a clock in nanoseconds. `clock_gettime` for the monotonic and realtime clocks is
/// served by the vDSO on Linux x86-64 (no system call) and is async-signal-safe.
#[inline(always)]
pub fn clock_ns(clock: c_int) -> u64 {
    let mut ts = Timespec::default();
    // SAFETY: `ts` is a valid, writable timespec; clock ids are constants glibc knows.
    let rc = unsafe { clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// glibc's `struct rlimit` on x86-64.
#[repr(C)]
struct Rlimit {
    cur: u64,
    max: u64,
}

/// `RLIMIT_FSIZE` on Linux: the largest file the process may write.
const RLIMIT_FSIZE: c_int = 1;

unsafe extern "C" {
    fn getrlimit(resource: c_int, rlim: *mut Rlimit) -> c_int;
}

/// The soft `RLIMIT_FSIZE` in bytes, or `None` when there is none (or it cannot be read). A
/// write past it raises SIGXFSZ, which kills a process that does not handle it.
pub fn file_size_limit() -> Option<u64> {
    let mut r = Rlimit { cur: 0, max: 0 };
    // SAFETY: `r` is a valid, writable rlimit; RLIMIT_FSIZE is a resource glibc knows.
    let rc = unsafe { getrlimit(RLIMIT_FSIZE, &mut r) };
    // RLIM_INFINITY is all ones.
    (rc == 0 && r.cur != u64::MAX).then_some(r.cur)
}

/// The calling thread's kernel thread id.
pub fn current_tid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { gettid() as u64 }
}

/// The process id.
pub fn current_pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { getpid() as u32 }
}

/// The parent's process id.
pub fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { getppid() as u32 }
}

/// Sleeps for `ns` nanoseconds (async-signal-safe).
pub fn sleep_ns(ns: u64) {
    let req = Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as c_long,
    };
    // SAFETY: `req` is a valid timespec; a null `rem` is allowed.
    unsafe {
        nanosleep(&req, core::ptr::null_mut());
    }
}

/// Registers `f` to run at `exit()`. Returns false if glibc refused.
pub fn register_atexit(f: extern "C" fn()) -> bool {
    // SAFETY: `f` is a plain `extern "C" fn()` with static lifetime (this library is never
    // unloaded while the runtime runs; see exit.rs).
    unsafe { atexit(f) == 0 }
}

/// Installs `act` for `sig`, returning the previous action.
pub fn set_sigaction(sig: c_int, act: &SigAction) -> Option<SigAction> {
    let mut old = SigAction::zeroed();
    // SAFETY: both pointers are valid for the duration of the call.
    let rc = unsafe { sigaction(sig, act, &mut old) };
    (rc == 0).then_some(old)
}

/// The action currently installed for `sig`.
pub fn get_sigaction(sig: c_int) -> Option<SigAction> {
    let mut old = SigAction::zeroed();
    // SAFETY: a null new action only queries; `old` is a valid out pointer.
    let rc = unsafe { sigaction(sig, core::ptr::null(), &mut old) };
    (rc == 0).then_some(old)
}

/// Sends `sig` to the calling thread (async-signal-safe).
pub fn raise_signal(sig: c_int) {
    // SAFETY: raise has no memory preconditions.
    unsafe {
        raise(sig);
    }
}
