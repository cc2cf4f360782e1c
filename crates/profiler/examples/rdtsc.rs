//! The cost of one `RDTSC` on this machine, for scripts/bench.sh (the exact timing's target is
//! stated against two of them): 2·10^7 reads in a loop, results summed, best of 5, printed as
//! `rdtsc_ns <ns per read>`. `cargo run --release -p eltrace-profiler --example rdtsc`.

fn main() {
    #[cfg(target_arch = "x86_64")]
    {
        const N: u64 = 20_000_000;
        let mut best = f64::MAX;
        let mut sink = 0u64;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            for _ in 0..N {
                // SAFETY: RDTSC reads the time-stamp counter; it has no memory effects.
                sink = sink.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
            }
            best = best.min(t.elapsed().as_nanos() as f64 / N as f64);
        }
        std::hint::black_box(sink);
        println!("rdtsc_ns {best:.2}");
    }
}
