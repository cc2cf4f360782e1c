//! The exporters on synthetic traces: `cargo test -p eltrace-export --test export` (seconds).
//! Each module is a group of tests (`--test export perfetto::` runs one); most traces come
//! from `eltrace_trace::testing::traces` (html and html_large build their own), and the
//! expected outputs are the golden files in crates/export/tests/results (`ELTRACE_BLESS=1`
//! rewrites them, see [`support`]).

// Helpers.
/// Running an exporter over a trace or a session, the HTML report's data, golden files.
mod support;

// Tests, one module per format or concern.
/// Chrome trace JSON and folded stacks: golden files, nesting, sums, time windows.
mod golden;
/// The HTML report's embedded data: golden files, the call tree's sums, the node cap, size.
mod html;
/// The HTML report of a large generated trace stays within its node budget.
mod html_large;
/// Perfetto protobuf, decoded to text: golden files, agreement with the Chrome export.
mod perfetto;
/// pprof, decoded to text: golden files, one profile for a session.
mod pprof;
/// A two-process session in every format: golden files, pids, one timeline.
mod session;
/// speedscope JSON: golden files, the importer's checks, shared frames, exact times.
mod speedscope;
