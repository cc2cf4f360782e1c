//! The end-to-end tests: real .NET programs recorded with the freshly built profiler (run
//! `cargo build --workspace` first, which puts the profiler beside `eltrace`), and the exports
//! loaded in real viewers (Chromium, installed by scripts/viewers.sh). `cargo test -p
//! eltrace-cli --test e2e` runs them all (minutes); each module is a group (`--test e2e
//! asyncs::`), and every test that records exists once per runtime (`…::net10`, `…::net11`;
//! `ELTRACE_TEST_RUNTIMES` selects them, see [`common::runtimes`]). A big group is a directory
//! whose `mod.rs` holds what its tests share and lists its submodules, each a smaller group and
//! the next part of the test names (`asyncs::queues::`); no file here grows past ~600 lines.

// Helpers.
/// The real applications of [`apps`]: built from copies, recorded with long limits.
mod apps_support;
/// Building the test programs, running processes, recording, reports, runtimes.
mod common;
/// Headless Chromium over the DevTools protocol, the Perfetto UI, speedscope, catapult.
mod viewer_support;

// Recordings of tests/apps/Scenarios, tests/apps/Async and the probes of `eltrace check`.
/// Real applications: an ASP.NET Core API under load, `dotnet build`, `dotnet test`.
mod apps;
/// Async methods: runtime-async (tests/apps/Async) and classic state machines.
mod asyncs;
/// The benchmark-only hook modes: the program computes right, discarded events are counted.
mod bench_modes;
/// `scripts/bench.sh --quick` runs end to end.
mod bench_smoke;
/// `eltrace check --json` on each runtime.
mod check;
/// The machinery of these tests: timeouts kill process groups, exit statuses.
mod harness;
/// 2,000 live threads: no event lost, peak memory within the documented bound.
mod memory;
/// The oracle: IL-instrumented counts against eltrace's, over tests/oracle's corpus.
mod oracle;
/// Hostile outputs of the profiler: FIFOs, directories, file-size limits, stalls, full disks.
mod outputs;
/// Scenarios: exact calls per function and edge, balance, exceptions, threads, exports.
mod scenarios;
/// Signals sent to `eltrace record`.
mod signals;
/// Vector values on the slow path.
mod simd;
/// Iterators and async state machines not named after a method.
mod state_machines;
/// Runtime-async traces with and without a Leave at each suspension agree.
mod suspend_leaves;
/// Tail calls, with the JIT's tail-call loops off and on.
mod tail_calls;
/// `record --timing exact|none|sampled`.
mod timing;
/// `record --values`: the VALUE records and Value events.
mod values;

// Exports in real viewers.
/// The HTML report in headless Chromium.
mod browser_html;
/// A recorded two-process session exported to one Perfetto trace, in the Perfetto UI.
mod export_session;
/// The Perfetto, speedscope and Chrome exports in the Perfetto UI, speedscope and catapult.
mod viewers;
