//! eltrace's CoreCLR profiler (`libeltrace_profiler.so`): a function-level tracing profiler
//! built on the profiling API's Enter/Leave/Tailcall (ELT) hooks.
//!
//! The runtime loads the library, calls the exported `DllGetClassObject` with eltrace's CLSID
//! (the only public items) and gets the static callback object. Its `Initialize` (profiler.rs,
//! the composition root) reads the configuration, opens the trace, starts the writer thread,
//! sets the event mask and the hooks, registers the mapper and installs the exit handlers.
//! Each thread's hooks append fixed raw records to its own ring; the writer thread drains the
//! rings into the trace file (format: the `eltrace-trace` crate). With `ELTRACE_CHECK` set,
//! Initialize runs one experiment of `eltrace check` instead.
//!
//! | module | owns |
//! |---|---|
//! | `com/` | the COM side: `DllGetClassObject` and the class factory, the callback object and its vtable, safe wrappers over the Info and metadata interfaces, function naming (`resolve`) |
//! | `profiler` | the composition root (Initialize, Shutdown) and the callbacks eltrace implements |
//! | `config`, `selection` | the configuration from the environment; which functions get probes |
//! | `install` | the event mask and the hooks of each hook mode |
//! | `mapper` | the FunctionIDMapper2: naming, selection, sentinel, async role, client id |
//! | `hooks` | the hot path in Rust: `record`, the WithInfo hooks, the stubs' fallback, the client-id encoding |
//! | `fast` | the fast-path stubs in assembly |
//! | `slot` | the thread's ring slot (the one thread-local), warm-up and retirement |
//! | `ring` | the per-thread SPSC ring and the record layout the stubs write |
//! | `sampler` | `record --timing sampled`: the sampler thread and its queue of samples of the rings' write positions |
//! | `exceptions` | Throw, Unwind and Catch events |
//! | `recorder` | the shared recording state: ring registry, function and thread tables, the metadata queue, errors, the end request |
//! | `output` | which file this process's trace goes to (one per process), opened safely |
//! | `writer/` | the writer: the trace file and its I/O thread, the drain rounds, the writer thread and the end of the trace |
//! | `exit` | the atexit and SIGABRT handlers |
//! | `values/` | `record --values`: the signature parser, value plans and rendering, the capturing hooks |
//! | `check/` | check mode: the experiments of `eltrace check` |
//! | `clock`, `names`, `sys` | timestamps; name formatting; the C library declarations and `lock` |
//!
//! Dependencies point one way (no two modules import each other); the environment variable
//! names, the CLSID and the experiment names come from `eltrace_trace::protocol`.

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
mod output;
mod profiler;
mod recorder;
mod ring;
mod sampler;
mod selection;
mod slot;
mod sys;
mod values;
mod writer;

pub use com::factory::{CLSID_ELTRACE, DllGetClassObject};
