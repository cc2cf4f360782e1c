//! The calling thread's ring slot: the one thread-local word that says where the thread's
//! events go, read by the fast-path stubs (fast.rs) and by the Rust hooks (hooks.rs) alike;
//! the thread's warm-up (its first event creates and registers its ring) and the retirement
//! of the ring when the thread exits.
//!
//! The slot holds 0 before the thread's first event, [`DEAD`] when the thread may not record
//! (it exited, or recording had ended when it started), and otherwise a pointer to the
//! thread's [`Ring`] (64-byte aligned, so never 0 or [`DEAD`]).
//!
//! # Why the slot is defined in assembly
//!
//! Rust's `thread_local!` in a `cdylib` uses the general-dynamic TLS model: every access is a
//! call to `__tls_get_addr`, which a stub would have to wrap in a full register save. The slot
//! is instead an 8-byte `.tbss` symbol reached with the initial-exec model (`sym@GOTTPOFF` plus
//! an `fs:` load): two loads, no call. glibc reserves static TLS surplus for `dlopen`ed
//! libraries, of which this takes 8 bytes. Rust reads and writes the slot with the same two
//! instructions ([`get`], `set`).

use core::arch::global_asm;
use std::cell::Cell;

use crate::recorder::Recorder;
use crate::ring::Ring;

/// The slot value of a thread that may not record.
pub const DEAD: usize = 1;

/// The slot's assembly symbol, for the stubs' `sym@GOTTPOFF` loads.
macro_rules! slot_symbol {
    () => {
        "eltrace_ring_slot"
    };
}
pub(crate) use slot_symbol;

global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    concat!(".globl ", slot_symbol!()),
    concat!(".hidden ", slot_symbol!()),
    concat!(".type ", slot_symbol!(), ", @object"),
    concat!(".size ", slot_symbol!(), ", 8"),
    concat!(slot_symbol!(), ":"),
    ".zero 8",
    ".popsection",
);

/// The calling thread's slot value.
#[inline(always)]
fn get() -> usize {
    let v: usize;
    // SAFETY: reads the calling thread's 8-byte thread-local slot (its TP offset comes from the
    // GOT); no other memory is touched.
    unsafe {
        core::arch::asm!(
            concat!("mov {v}, qword ptr [rip + ", slot_symbol!(), "@GOTTPOFF]"),
            "mov {v}, qword ptr fs:[{v}]",
            v = out(reg) v,
            options(nostack, preserves_flags, readonly),
        );
    }
    v
}

/// Sets the calling thread's slot (a ring pointer, 0 or [`DEAD`]).
#[inline(always)]
fn set(value: usize) {
    // SAFETY: writes the calling thread's 8-byte thread-local slot; no other memory is touched.
    unsafe {
        core::arch::asm!(
            concat!("mov {t}, qword ptr [rip + ", slot_symbol!(), "@GOTTPOFF]"),
            "mov qword ptr fs:[{t}], {v}",
            t = out(reg) _,
            v = in(reg) value,
            options(nostack, preserves_flags),
        );
    }
}

/// Sets the calling thread's slot (tests that call the stubs themselves).
#[cfg(test)]
pub(crate) fn set_for_test(value: usize) {
    set(value);
}

thread_local! {
    /// Retires the thread's ring when the thread exits (armed at warm-up).
    static GUARD: RetireGuard = const { RetireGuard(Cell::new(core::ptr::null_mut())) };
}

struct RetireGuard(Cell<*mut Ring>);

impl Drop for RetireGuard {
    fn drop(&mut self) {
        let ring = self.0.get();
        set(DEAD);
        if !ring.is_null() {
            // SAFETY: the ring stays allocated until the writer sees it retired and drained;
            // this is the last access of its producer.
            unsafe { &*ring }.retire();
        }
    }
}

/// The calling thread's ring, created and registered at the thread's first event; null when
/// the thread may not record. The ring stays valid until the thread exits.
#[inline(always)]
pub fn ring() -> *const Ring {
    let v = get();
    if v > DEAD {
        v as *const Ring
    } else if v == 0 {
        warm_up()
    } else {
        core::ptr::null()
    }
}

/// First event on this thread: create and register its ring (locks and allocates, once).
#[cold]
#[inline(never)]
fn warm_up() -> *const Ring {
    let Some(ring) = Recorder::global().and_then(Recorder::register_current_thread) else {
        set(DEAD);
        return core::ptr::null();
    };
    set(ring as usize);
    // If the thread is already tearing down its TLS, the guard cannot be armed and the ring is
    // simply never freed.
    let _ = GUARD.try_with(|g| g.0.set(ring));
    ring
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_is_per_thread() {
        set(0x1234);
        assert_eq!(get(), 0x1234);
        let other = std::thread::spawn(|| {
            let before = get();
            set(7);
            (before, get())
        })
        .join()
        .unwrap();
        assert_eq!(other, (0, 7));
        assert_eq!(get(), 0x1234);
        set(0);
    }
}
