//! Helpers for the end-to-end tests, one module per concern; a test names the module it uses
//! (`common::recording::record_in`), and each module's first lines say what it owns.
#![allow(dead_code)]

/// The C# programs under tests/apps, built once per test run.
pub mod apps;
/// Checks of the Chrome and folded exports.
pub mod exports;
/// Binaries under test, temporary directories, children under a timeout, captured output.
pub mod processes;
/// `eltrace record` of a program in each hook mode, and report/export of its trace.
pub mod recording;
/// `eltrace report --json` parsed, and the invariants every recording must pass.
pub mod report;
