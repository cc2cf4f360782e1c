//! Exports loaded in the real viewers (the `viewer_support` module says how): the Perfetto export
//! and the Chrome JSON in the Perfetto UI (its trace_processor queried with SQL), the
//! speedscope export and the Chrome JSON in speedscope, the Chrome JSON in chrome://tracing's
//! viewer. Each test checks what the viewer shows (threads, functions, durations, nesting,
//! flow arrows, drops), that the page logged no error and, where a defect of an earlier
//! export showed there, that it is gone. One module per viewer with synthetic traces, then a
//! real recording and big traces. Screenshots: target/tmp/viewers/*.png.
//!
//! This module owns what the groups share: the Perfetto UI's console lines that are no error.

/// Big traces load: a million calls in the Perfetto UI, 200,000 in speedscope.
mod big;
/// The Perfetto and Chrome exports of synthetic traces and of a session in the Perfetto UI.
mod perfetto_ui;
/// A real runtime-async recording in all three viewers.
mod recorded;
/// The speedscope, pprof and Chrome exports in speedscope.
mod speedscope;
/// The Chrome JSON in chrome://tracing's viewer (catapult).
mod trace_viewer;

/// The Perfetto UI probes for a native trace_processor on 127.0.0.1:9001 and logs the
/// refused connection (it says itself that this is safe to ignore).
const PERFETTO_BENIGN: &[&str] = &["127.0.0.1:9001"];
