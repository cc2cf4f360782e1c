//! Helpers for the end-to-end tests, one module per concern; a test names the module it uses
//! (`common::recording::record_in`), and each module's first lines say what it owns.

/// The C# programs under tests/apps, built once per test run.
pub mod apps;
/// HTML pages in headless Chromium: the DOM after the scripts ran, console lines, screenshots.
pub mod browser;
/// Checks of the Chrome and folded exports.
pub mod exports;
/// Binaries under test, temporary directories, children under a timeout, captured output.
pub mod processes;
/// `eltrace record` of a program in each hook mode and runtime, and report/export of its trace.
pub mod recording;
/// `eltrace report --json` parsed, and the invariants every recording must pass.
pub mod report;
/// The .NET runtimes the tests run on (10 and 11), selected by `ELTRACE_TEST_RUNTIMES`.
pub mod runtimes;
