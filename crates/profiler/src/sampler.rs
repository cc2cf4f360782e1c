//! The sampler (`record --timing sampled`): a thread that, `ELTRACE_SAMPLE_HZ` times a second,
//! reads every live ring's write position (`head`, a plain load: no signal, nothing done on
//! the sampled thread), the time and the thread's CPU time, and queues one
//! [`Sample`] per thread for the writer, which writes them as SAMPLES records.
//!
//! Ordering with the writer (the analysis credits a sample when the thread's events reach its
//! index, so a sample must reach the file before the events after its index): the sampler
//! holds the queue's lock for a whole sweep, and the writer takes the queue right after its
//! round's ring snapshot and writes it before that round's events. A sample taken after the
//! previous round's take has an index at least that round's snapshot, i.e. at least the
//! events already in the file.
//!
//! The sampling instants are not periodic: each interval is drawn uniformly from half to one
//! and a half of the nominal period (the same rate on average), so that a program whose work
//! repeats with the sampling period, or a multiple of it, is not seen at the same phase every
//! time (the estimator weighs each sample by its interval, which stays unbiased: docs/timing.md).
//! A sample's time is read after its ring position ([`clock::now_after_loads`]), so it is never
//! earlier than the events the position includes.
//!
//! CPU time: a thread's CPU clock id is `(!tid << 3) | 6` (Linux's per-thread
//! `CPUCLOCK_SCHED`, what `pthread_getcpuclockid` returns), read with `clock_gettime`: one
//! system call per thread per sample, on the sampler thread only.

use std::sync::Mutex;
use std::time::Duration;

use eltrace_trace::Sample;

use crate::recorder::Recorder;
use crate::sys::{self, lock};
use crate::{clock, ring::Ring};

/// Samples taken and not yet written.
static QUEUE: Mutex<Vec<Sample>> = Mutex::new(Vec::new());

/// The CPU clock id of thread `tid` (see the module doc).
fn cpu_clock(tid: u64) -> i32 {
    ((!(tid as i32)) << 3) | 6
}

/// Starts the sampler thread; it ends when recording ends.
pub fn start(rec: &'static Recorder) -> std::io::Result<()> {
    let period_ns = 1_000_000_000 / rec.config.sample_hz.max(1);
    std::thread::Builder::new()
        .name("eltrace-sampler".into())
        .spawn(move || run(rec, period_ns))
        .map(|_| ())
}

/// The next sampling interval: uniform in `[period / 2, period * 3 / 2)` (mean `period`), from
/// a xorshift64 state.
fn jittered(period_ns: u64, state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    period_ns / 2 + *state % period_ns.max(1)
}

fn run(rec: &Recorder, period_ns: u64) {
    let mut seen = std::collections::HashSet::new();
    let start = sys::clock_ns(libc::CLOCK_MONOTONIC);
    let mut state = (start ^ 0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = start + jittered(period_ns, &mut state);
    while rec.is_recording() {
        let now = sys::clock_ns(libc::CLOCK_MONOTONIC);
        if next > now {
            std::thread::sleep(Duration::from_nanos(next - now));
        }
        // A late wake-up skips the intervals it missed instead of sampling in a burst.
        let now = sys::clock_ns(libc::CLOCK_MONOTONIC);
        let step = jittered(period_ns, &mut state);
        next = (next + step).max(now + step / 2);
        let seen = &mut seen;
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sweep(rec, seen))).is_err() {
            rec.internal_error("sampler-panic", "the sampler thread panicked");
            return;
        }
    }
}

/// One sample of every live ring; a ring seen for the first time gets a sample at its
/// registration first (index 0), so that the thread's time before this sweep is covered.
fn sweep(rec: &Recorder, seen: &mut std::collections::HashSet<u32>) {
    let mut q = lock(&QUEUE);
    let rings = lock(&rec.rings);
    for r in rings.iter() {
        // SAFETY: registered rings stay allocated while in the registry (locked here); only
        // the writer frees them, after removing them under this lock.
        let ring: &Ring = unsafe { &*r.ring };
        if ring.is_retired() {
            continue;
        }
        if seen.insert(r.thread.0) {
            q.push(Sample {
                thread: r.thread,
                index: 0,
                ts: r.registered_ns,
                cpu_ns: (r.registered_cpu_ns != 0).then_some(r.registered_cpu_ns),
            });
        }
        let index = ring
            .stream()
            .map_or_else(|| ring.published(), |s| s.events());
        let ts = clock::to_ns(clock::now_after_loads());
        let cpu = sys::clock_ns(cpu_clock(r.tid));
        q.push(Sample {
            thread: r.thread,
            index,
            ts,
            cpu_ns: (cpu != 0).then_some(cpu),
        });
    }
}

/// The writer: takes the samples queued so far (see the module doc for when).
pub fn take(out: &mut Vec<Sample>) {
    out.clear();
    std::mem::swap(out, &mut lock(&QUEUE));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_spread_around_the_period() {
        let period = 250_000;
        let mut state = 12345;
        let draws: Vec<u64> = (0..100_000).map(|_| jittered(period, &mut state)).collect();
        assert!(
            draws
                .iter()
                .all(|&d| (period / 2..period * 3 / 2).contains(&d))
        );
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean / period as f64 - 1.0).abs() < 0.01, "{mean}");
        // Spread over the whole range, not bunched: every tenth of it gets its share.
        let mut deciles = [0u32; 10];
        for d in &draws {
            deciles[((d - period / 2) * 10 / period) as usize] += 1;
        }
        assert!(
            deciles.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{deciles:?}"
        );
    }

    #[test]
    fn the_cpu_clock_of_this_thread_runs() {
        let id = cpu_clock(sys::current_tid());
        let a = sys::clock_ns(id);
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = sys::clock_ns(id);
        assert!(a > 0 && b > a, "{a} {b}");
    }
}
