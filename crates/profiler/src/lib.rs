//! eltrace's CoreCLR profiler (`libeltrace_profiler.so`): a function-level tracing profiler
//! built on the profiling API's Enter/Leave/Tailcall (ELT) hooks.
//!
//! The runtime loads the library, calls the exported `DllGetClassObject` with eltrace's CLSID,
//! and gets the static callback object ([`com::callback`]). `Initialize`
//! ([`profiler::Profiler::initialize`]) reads the configuration ([`config`]), opens the trace
//! ([`writer`]), starts the writer thread, sets the event mask, the ELT3 WithInfo hooks
//! ([`hooks`]) and the FunctionIDMapper2, and installs the exit handlers ([`exit`]). Each
//! thread's hooks append fixed raw records to its own ring ([`ring`]); the writer thread drains
//! the rings into the trace file (format: the `eltrace-trace` crate).
//!
//! With `ELTRACE_CHECK` set, Initialize runs one experiment of `eltrace check` instead
//! ([`check`]).

mod check;
mod clock;
mod com;
mod config;
mod exceptions;
mod exit;
mod fast;
mod hooks;
mod install;
mod mapper;
mod names;
mod profiler;
mod recorder;
mod ring;
mod selection;
mod slot;
mod sys;
mod values;
mod writer;

pub use com::factory::{CLSID_ELTRACE, DllGetClassObject};
