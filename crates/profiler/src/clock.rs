//! Timestamps: `CLOCK_MONOTONIC` in nanoseconds (one tick = 1 ns, `ns_per_tick = 1.0`), read
//! through the vDSO (no system call on Linux x86-64).

use crate::sys;

/// Now, in ticks (monotonic nanoseconds).
#[inline(always)]
pub fn now() -> u64 {
    sys::clock_ns(sys::CLOCK_MONOTONIC)
}

/// Wall-clock Unix time in nanoseconds.
pub fn unix_now_ns() -> u64 {
    sys::clock_ns(sys::CLOCK_REALTIME)
}

#[cfg(test)]
mod tests {
    #[test]
    fn monotonic_and_plausible() {
        let a = super::now();
        let b = super::now();
        assert!(a > 0 && b >= a);
        // After 2020-01-01.
        assert!(super::unix_now_ns() > 1_577_836_800_000_000_000);
    }
}
