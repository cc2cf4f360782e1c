//! Timestamps. Hooks record nanoseconds: a clock read in *ticks* ([`now`]) converted by
//! [`to_ns`] (the fast-path stubs do the same arithmetic inline after their `RDTSC`), so a
//! trace's ticks are always ns (`ns_per_tick = 1.0`).
//!
//! Two clocks, chosen once by [`init`] before any hook runs:
//!
//! * **TSC** (the default where the CPU says the time-stamp counter is *invariant*: CPUID
//!   leaf 0x8000_0007, EDX bit 8): a tick is one `RDTSC` count. [`init`] calibrates it against
//!   `CLOCK_MONOTONIC` over [`CALIBRATION_NS`] and keeps a fixed-point factor, so
//!   `to_ns(t) = mono0 + ((t - tsc0) * mult) >> 32`: monotonic in `t`, one factor for every
//!   thread. The fast-path stubs (fast.rs) read the TSC inline, so they and the Rust paths
//!   share this clock.
//! * **Monotonic** (no invariant TSC, or `ELTRACE_CLOCK=monotonic`): a tick is a
//!   `CLOCK_MONOTONIC` nanosecond read through the vDSO (no system call). The fast-path stubs
//!   then always take their Rust fallback, which reads this clock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sys;

/// How long [`init`] spins to calibrate the TSC against `CLOCK_MONOTONIC`.
pub const CALIBRATION_NS: u64 = 2_000_000;

static TSC: AtomicBool = AtomicBool::new(false);
/// Events carry no timestamps (`record --timing none|sampled`): [`event_now`] is 0.
static TIMELESS: AtomicBool = AtomicBool::new(false);
/// The calibration (`to_ns`); the fast-path stubs read these three too (fast.rs).
pub(crate) static TSC0: AtomicU64 = AtomicU64::new(0);
pub(crate) static MONO0: AtomicU64 = AtomicU64::new(0);
/// ns per tick × 2^32.
pub(crate) static MULT: AtomicU64 = AtomicU64::new(1 << 32);

/// Whether the CPU reports an invariant TSC (constant rate, runs in every C-state).
pub fn invariant_tsc() -> bool {
    // CPUID is available on every x86-64 CPU; leaf 0x8000_0000 gives the highest extended
    // leaf, and 0x8000_0007 is read only if it exists.
    let max = core::arch::x86_64::__cpuid(0x8000_0000).eax;
    max >= 0x8000_0007 && core::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no memory effects and is allowed in user mode on Linux.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Chooses and calibrates the clock (call once, before any hook can run). `use_tsc`: use
/// the TSC if it is invariant. Returns a description for the trace's INFO.
pub fn init(use_tsc: bool) -> String {
    if !(use_tsc && invariant_tsc()) {
        TSC.store(false, Ordering::Release);
        return "monotonic".into();
    }
    // Bracket each end with monotonic reads and keep the tightest pair.
    let pair = || {
        let mut best = (u64::MAX, 0, 0);
        for _ in 0..5 {
            let m1 = sys::clock_ns(libc::CLOCK_MONOTONIC);
            let t = rdtsc();
            let m2 = sys::clock_ns(libc::CLOCK_MONOTONIC);
            if m2 - m1 < best.0 {
                best = (m2 - m1, t, m1 + (m2 - m1) / 2);
            }
        }
        (best.1, best.2)
    };
    let (t0, m0) = pair();
    while sys::clock_ns(libc::CLOCK_MONOTONIC) - m0 < CALIBRATION_NS {
        core::hint::spin_loop();
    }
    let (t1, m1) = pair();
    if t1 <= t0 || m1 <= m0 {
        TSC.store(false, Ordering::Release);
        return "monotonic (TSC calibration failed)".into();
    }
    let mult = (((m1 - m0) as u128) << 32) / (t1 - t0) as u128;
    TSC0.store(t0, Ordering::Relaxed);
    MONO0.store(m0, Ordering::Relaxed);
    MULT.store(mult as u64, Ordering::Relaxed);
    TSC.store(true, Ordering::Release);
    let ghz = (t1 - t0) as f64 / (m1 - m0) as f64;
    format!("tsc ({ghz:.4} GHz, calibrated against CLOCK_MONOTONIC)")
}

/// Whether ticks are TSC counts.
#[inline(always)]
pub fn is_tsc() -> bool {
    TSC.load(Ordering::Relaxed)
}

/// Now, in ticks.
#[inline(always)]
pub fn now() -> u64 {
    if is_tsc() {
        rdtsc()
    } else {
        sys::clock_ns(libc::CLOCK_MONOTONIC)
    }
}

/// Now, in ticks, read after every earlier load has completed (`LFENCE` before `RDTSC`, which
/// otherwise may run ahead of them): the sampler's time of a ring position it has just loaded
/// from another core, which can take a cache miss of ~100 ns.
#[inline(always)]
pub fn now_after_loads() -> u64 {
    if is_tsc() {
        // SAFETY: LFENCE has no memory effects beyond ordering; SSE2 is baseline on x86-64.
        unsafe { core::arch::x86_64::_mm_lfence() };
    }
    now()
}

/// Makes events timeless or not (call once, before any hook can run).
pub fn set_timeless(on: bool) {
    TIMELESS.store(on, Ordering::Release);
}

/// Whether events carry no timestamps.
#[inline(always)]
pub fn is_timeless() -> bool {
    TIMELESS.load(Ordering::Relaxed)
}

/// An event's timestamp, in ns ([`to_ns`] of [`now`], as the fast-path stubs compute it), or
/// 0 when events are timeless (no clock read).
#[inline(always)]
pub fn event_now() -> u64 {
    if is_timeless() { 0 } else { to_ns(now()) }
}

/// Converts ticks to monotonic nanoseconds: `mono0 + ((ticks - tsc0) * mult) >> 32` on the
/// TSC (the fast-path stubs compute the same bits inline), the ticks themselves on the
/// monotonic clock.
#[inline(always)]
pub fn to_ns(ticks: u64) -> u64 {
    if !is_tsc() {
        return ticks;
    }
    let t0 = TSC0.load(Ordering::Relaxed);
    let m0 = MONO0.load(Ordering::Relaxed);
    let mult = u128::from(MULT.load(Ordering::Relaxed));
    if ticks >= t0 {
        m0.wrapping_add((((ticks - t0) as u128 * mult) >> 32) as u64)
    } else {
        m0.wrapping_sub((((t0 - ticks) as u128 * mult) >> 32) as u64)
    }
}

/// Wall-clock Unix time in nanoseconds.
pub fn unix_now_ns() -> u64 {
    sys::clock_ns(libc::CLOCK_REALTIME)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn monotonic_and_plausible() {
        let a = now();
        let b = now();
        assert!(a > 0 && b >= a);
        // After 2020-01-01.
        assert!(unix_now_ns() > 1_577_836_800_000_000_000);
    }

    /// Held by the tests that calibrate (the statics are shared by the test threads).
    pub(crate) static CALIBRATING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn tsc_calibration_tracks_the_monotonic_clock() {
        if !invariant_tsc() {
            return; // nothing to calibrate on this CPU
        }
        let _calibrating = CALIBRATING.lock().unwrap_or_else(|e| e.into_inner());
        let what = init(true);
        assert!(what.starts_with("tsc"), "{what}");
        let m1 = sys::clock_ns(libc::CLOCK_MONOTONIC);
        let t = to_ns(now());
        let m2 = sys::clock_ns(libc::CLOCK_MONOTONIC);
        // Within 50 µs of the monotonic clock right after calibration.
        assert!(t + 50_000 >= m1 && t <= m2 + 50_000, "{m1} {t} {m2}");
        // Converted ticks are monotonic.
        let (x, y) = (to_ns(1000), to_ns(2000));
        assert!(y > x);
        assert!(to_ns(now()) >= t);
    }
}
