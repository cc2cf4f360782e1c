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

pub mod check;
pub mod clock;
pub mod com;
pub mod config;
pub mod exceptions;
pub mod exit;
pub mod fast;
pub mod hooks;
pub mod install;
pub mod mapper;
pub mod names;
pub mod profiler;
pub mod recorder;
pub mod ring;
pub mod selection;
pub mod sig;
pub mod slot;
pub mod sys;
pub mod values;
pub mod writer;

pub use com::factory::{CLSID_ELTRACE, DllGetClassObject};
