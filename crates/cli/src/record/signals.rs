//! Signals sent to `eltrace record` while its program runs, handled as `perf record`, `time`
//! and `strace` handle them: `record` is a bystander that waits for the program, prints the
//! summary and exits with the program's status.
//!
//! ```text
//! SIGTERM, SIGHUP, SIGINT sent to record (kill)  → passed on to the program; record waits
//! SIGINT, SIGHUP from the terminal               → the program got it too (same process
//!                                                   group): not passed on again; record waits
//! a second SIGINT (Ctrl-C twice)                 → record stops waiting (exit 130)
//! SIGQUIT                                        → ignored (the terminal sends it to both)
//! ```
//!
//! The handler only does async-signal-safe things: atomics, `kill(2)` and `write(2)` of a
//! fixed line. The program's pid is forgotten (so nothing is sent to a recycled pid) before
//! it is reaped: [`wait_for_exit`] waits with `WNOWAIT`.

use std::io;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// `si_code` of a signal the kernel sent (the terminal's Ctrl-C, a hangup), not `kill(2)`.
const SI_KERNEL: c_int = 0x80;

/// The signals passed on to the program.
const FORWARDED: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The program's pid while it runs (0: none yet, or reaped soon).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A signal that came before the program's pid was known, passed on by [`Handlers::child`].
static PENDING: AtomicI32 = AtomicI32::new(0);
/// SIGINTs received; the second stops the wait.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

/// Writes `msg` to stderr from the handler (`write(2)` is async-signal-safe).
fn say(msg: &[u8]) {
    // SAFETY: writes `msg.len()` bytes of a live slice to fd 2; a failure is ignored.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

extern "C" fn on_signal(sig: c_int, info: *mut libc::siginfo_t, _ctx: *mut c_void) {
    if sig == libc::SIGINT && INTERRUPTS.fetch_add(1, Ordering::SeqCst) >= 1 {
        say(b"eltrace: interrupted again: not waiting for the program any longer\n");
        return;
    }
    let code = if info.is_null() {
        0
    } else {
        // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t for the call.
        unsafe { (*info).si_code }
    };
    let forwarded = code != SI_KERNEL;
    if forwarded {
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill has no memory preconditions; `pid` is the unreaped program.
            unsafe { libc::kill(pid, sig) };
        } else {
            PENDING.store(sig, Ordering::SeqCst);
        }
    }
    say(match (sig, forwarded) {
        (libc::SIGINT, _) => {
            b"eltrace: interrupted: waiting for the program to exit (interrupt again to stop waiting)\n"
        }
        (libc::SIGTERM, true) => {
            b"eltrace: SIGTERM passed on to the program; waiting for it to exit\n"
        }
        (_, true) => b"eltrace: SIGHUP passed on to the program; waiting for it to exit\n",
        _ => b"eltrace: hangup: waiting for the program to exit\n",
    });
}

/// The handlers, installed while this value lives; the old dispositions come back on drop.
pub struct Handlers {
    old: Vec<(c_int, libc::sigaction)>,
}

impl Handlers {
    /// Installs the handlers (before the program starts: a signal in between is kept and
    /// passed on once its pid is known).
    pub fn install() -> Handlers {
        CHILD.store(0, Ordering::SeqCst);
        PENDING.store(0, Ordering::SeqCst);
        INTERRUPTS.store(0, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in FORWARDED.into_iter().chain([libc::SIGQUIT]) {
            // SAFETY: a zeroed sigaction is a valid value (no flags, empty mask once
            // sigemptyset ran, the default handler); both point at live locals.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                libc::sigemptyset(&mut act.sa_mask);
                if sig == libc::SIGQUIT {
                    act.sa_sigaction = libc::SIG_IGN;
                } else {
                    let handler: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                        on_signal;
                    act.sa_sigaction = handler as libc::sighandler_t;
                    // No SA_RESTART: the wait returns EINTR, to see a second SIGINT.
                    act.sa_flags = libc::SA_SIGINFO;
                }
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &act, &mut prev) == 0 {
                    old.push((sig, prev));
                }
            }
        }
        Handlers { old }
    }

    /// The program runs as `pid`: signals from now on (and one that came before) go to it.
    pub fn child(&self, pid: u32) {
        let pid = i32::try_from(pid).unwrap_or(0);
        CHILD.store(pid, Ordering::SeqCst);
        let sig = PENDING.swap(0, Ordering::SeqCst);
        if sig != 0 && pid > 0 {
            // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
            unsafe { libc::kill(pid, sig) };
        }
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        CHILD.store(0, Ordering::SeqCst);
        for (sig, prev) in &self.old {
            // SAFETY: restores the disposition sigaction returned for `sig` before.
            unsafe { libc::sigaction(*sig, prev, std::ptr::null_mut()) };
        }
    }
}

/// How the wait for the program ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited {
    /// It exited (not reaped yet: `Child::wait` gives its status).
    Exited,
    /// A second SIGINT: stop waiting; it still runs.
    GaveUp,
}

/// Waits until the program `pid` has exited, without reaping it, then forgets its pid so
/// that no signal is passed on to a recycled one; or until a second SIGINT.
pub fn wait_for_exit(pid: u32) -> io::Result<Waited> {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid buffer for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live, writable siginfo_t; WNOWAIT leaves the child unreaped.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            CHILD.store(0, Ordering::SeqCst);
            return Ok(Waited::Exited);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
        if INTERRUPTS.load(Ordering::SeqCst) >= 2 {
            CHILD.store(0, Ordering::SeqCst);
            return Ok(Waited::GaveUp);
        }
    }
}
