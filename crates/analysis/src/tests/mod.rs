//! Unit tests of the analysis on synthetic traces, one module per concern.

/// Trace builders and result helpers shared by every module.
mod build;

/// Async methods: segments, logical calls, resumes and suspensions.
mod asyncs;
/// Invariants checked on random traces.
mod invariants;
/// Iterators: enumerations, yields, and state machines told apart.
mod iterators;
/// Runtime-async patterns of the oracle's `runtime-async` program.
mod oracle_async;
/// Runtime-async patterns of the oracle's program: dispatch offsets and calls open elsewhere.
mod oracle_async2;
/// The same results by every path: the reading thread's clock, the stack's frame links.
mod paths;
/// The replay's quick path against the full rules, on random traces.
mod quick;
/// Reading records: thread records, ticks, truncation, corruption, unknown functions.
mod records;
/// Many threads, interleaved chunks and the reorder queues.
mod reorder;
/// The sampled-time estimator against the whole-stack rule, and its work bound.
mod sampled;
/// The sink: what it gets, in which order.
mod sink;
/// The statistics' counters.
mod stats;
/// The synchronous replay of one thread's stack, the sink and the call tree.
mod sync;
/// Runtime-async patterns of tiering, OSR'd dispatchers and .NET 11.0.0.
mod tiering;
/// Timeless traces (`record --timing none|sampled`) and the sampled-time estimator.
mod timing;
/// Captured values before or after their event (INFO `values_first` or not).
mod values;
