//! The profiled process's memory (issue 16): 2,000 threads alive at once each get a ring
//! (the 64 KiB minimum once `ELTRACE_MAX_BUFFER_MB` is reached, here from the first), no
//! event is lost, and
//! the process's peak RSS stays within the documented bound over the same program's peak
//! without the profiler: the rings' cap + 64 KiB per thread past it + 64 MiB.
//! scripts/memory.sh measures the same and a 60-s busy run.

use std::process::Command;

use crate::common::apps::{dotnet_command, scenarios_dll};
use crate::common::processes::{TempDir, eltrace, profiler_library, run_captured};
use crate::common::recording::Recording;

const THREADS: u64 = 2_000;
/// Step calls per thread and phase (802,000 events in all: the debug build's report of
/// them stays quick).
const STEPS: u64 = 100;
/// A 1 MiB cap on the rings: every thread is past it and gets the 64 KiB minimum ring.
const CAP_MB: u64 = 1;

fn peak_kib(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kib="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak_rss_kib line in: {stdout}"))
}

#[test]
fn two_thousand_live_threads_each_get_a_ring_within_the_memory_bound() {
    let dll = scenarios_dll();
    profiler_library();
    let (n, steps) = (THREADS.to_string(), STEPS.to_string());
    let dir = TempDir::new("many-threads");

    // The program alone.
    let mut plain = dotnet_command();
    plain.arg(dll).args(["many-threads", &n, &steps]);
    let (status, out, err) = run_captured(&mut plain, dir.path(), "plain");
    assert!(status.success(), "{status}: {err}");
    let base = peak_kib(&out);

    // Under the profiler, with a 1 MiB cap on the rings.
    let trace = dir.path().join("x.eltrace");
    let mut cmd = Command::new(eltrace());
    cmd.env_remove("ELTRACE_HOOKS")
        .env("ELTRACE_MAX_BUFFER_MB", CAP_MB.to_string())
        .arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("dotnet")
        .arg(dll)
        .args(["many-threads", &n, &steps])
        .current_dir(dir.path());
    let (status, stdout, stderr) = run_captured(&mut cmd, dir.path(), "record");
    assert!(status.success(), "{status}: {stderr}");
    let peak = peak_kib(&stdout);
    let rec = Recording {
        dir,
        trace,
        status,
        stdout,
        stderr,
    };

    // Exact counts: every thread recorded everything.
    let r = rec.report();
    let live = "Scenarios.MemoryScenario.Live";
    let step = "Scenarios.MemoryScenario.Step";
    assert_eq!(r.calls(live), THREADS);
    assert_eq!(r.calls(step), 2 * THREADS * STEPS);
    assert_eq!(r.edge_calls(live, step), 2 * THREADS * STEPS);
    assert_eq!(r.trace_uint("dropped_events"), 0, "{}", r.trace());
    // Each thread: its start lambda, Live, 2 × STEPS Step calls (an Enter and a Leave each).
    let per_thread = 2 * (2 + 2 * STEPS);
    let counts: Vec<u64> = r
        .active_threads()
        .iter()
        .map(|t| crate::common::report::uint(t, "events"))
        .collect();
    let full = counts.iter().filter(|&&e| e == per_thread).count() as u64;
    assert_eq!(
        full, THREADS,
        "threads with all {per_thread} events: {counts:?}"
    );
    // The cap was reached: the later threads got the small rings (a diagnostic says so).
    assert!(
        rec.stderr.contains("64 KiB buffers") || r.trace().to_string().contains("64 KiB"),
        "no memory-cap note: {}",
        rec.stderr
    );

    // The bound: the cap, 64 KiB per thread (an upper bound on the small rings), 64 MiB.
    let bound_kib = (CAP_MB << 10) + THREADS * 64 + (64 << 10);
    eprintln!(
        "many-threads: peak RSS {} MiB with eltrace, {} MiB without (+{} MiB; bound +{} MiB)",
        peak >> 10,
        base >> 10,
        peak.saturating_sub(base) >> 10,
        bound_kib >> 10
    );
    assert!(
        peak <= base + bound_kib,
        "peak RSS {peak} KiB > {base} KiB + {bound_kib} KiB"
    );
}
