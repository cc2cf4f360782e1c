//! The `eltrace` binary on synthetic traces, no .NET needed: `cargo test -p eltrace-cli --test
//! cli` (seconds). Each module is a group of tests (`--test cli report::` runs one); the
//! traces come from `eltrace_trace::testing` and [`support`].

// Helpers.
/// Running `eltrace` under an address-space, output and time limit (hostile, fuzz).
mod limits;
/// The standard synthetic trace, temporary directories, running the built `eltrace`.
mod support;

// Tests, one module per concern.
/// Bad input: one `eltrace: error:` line, a non-zero exit, never a panic.
mod errors;
/// `eltrace export` of a trace: the formats, default and explicit outputs, stdout.
mod export;
/// `eltrace export` of a recording session: several process traces into one output.
mod export_session;
/// The mutation fuzzer over traces (`ELTRACE_FUZZ_CASES`; scripts/fuzz.sh runs a long one).
mod fuzz;
/// Crafted traces whose table indices must not choose the reader's memory.
mod hostile;
/// Where `export` writes: regular files replaced atomically, special files refused.
mod outputs;
/// `eltrace record` without a .NET runtime: library lookup, environment, exit codes.
mod record;
/// Two `record`s on one output, and the messages of a run.
mod record_outputs;
/// `eltrace report`: the text tables and the `--json` schema.
mod report;
