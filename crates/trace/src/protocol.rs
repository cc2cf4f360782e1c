//! The protocol between `eltrace` and the profiler library: the class id the runtime loads
//! the profiler by, the name of every environment variable either side reads or sets, the
//! values both sides must agree on, the names of the `eltrace check` experiments, and what
//! the profiler tells the readers through the trace: every key of the INFO chunk
//! ([`info_key`]) and the function flags it copies from metadata ([`IMPL_ASYNC`]). This is
//! the one place these names are spelled; what each variable means is in docs/design.md
//! ("Process boundary"), each INFO key in docs/trace-format.md ("INFO keys").

/// eltrace's CLSID, the only class the profiler's `DllGetClassObject` serves, as the 128-bit
/// number its GUID is built from.
pub const CLSID: u128 = 0x7E6B_A1DA_44E6_4198_B4E0_A9BC_E1DE_926B;

/// [`CLSID`] in the braced form `CORECLR_PROFILER` takes.
pub const CLSID_BRACED: &str = "{7E6BA1DA-44E6-4198-B4E0-A9BCE1DE926B}";

/// Separates the globs of [`env::INCLUDE`] and [`env::EXCLUDE`] (`glob;glob`).
pub const LIST_SEPARATOR: char = ';';

/// The low bits of a nonzero Continuation event value that hold the GC epoch it was recorded
/// in (objects are 8-aligned; INFO [`info_key::GC_EPOCHS`]): within one epoch an address names
/// one object, so two values recorded in the same epoch name the same object exactly when they
/// are equal.
pub const OBJECT_EPOCH_BITS: u64 = 7;

/// Whether the object recorded as `known` is certainly not the one recorded as `value`: both
/// nonzero, recorded in the same GC epoch, at different addresses (across a GC an object may
/// have moved).
pub fn other_object(known: u64, value: u64) -> bool {
    known != 0 && known != value && known & OBJECT_EPOCH_BITS == value & OBJECT_EPOCH_BITS
}

/// Environment variable names.
pub mod env {
    // Read by the runtime: whether and which profiler it loads.

    /// `1`: the runtime loads a profiler.
    pub const CORECLR_ENABLE_PROFILING: &str = "CORECLR_ENABLE_PROFILING";
    /// The profiler's CLSID ([`CLSID_BRACED`](super::CLSID_BRACED)).
    pub const CORECLR_PROFILER: &str = "CORECLR_PROFILER";
    /// The profiler library's absolute path.
    pub const CORECLR_PROFILER_PATH: &str = "CORECLR_PROFILER_PATH";
    /// `1`: the runtime compiles `MethodImplOptions.Async` methods as runtime-async methods
    /// (the check's probe programs need it).
    pub const DOTNET_RUNTIME_ASYNC: &str = "DOTNET_RuntimeAsync";
    /// `0`: the JIT keeps a self-recursive call in tail position a (tail) call instead of
    /// turning it into a loop, which calls no probe (`eltrace record` sets it unless
    /// `--keep-tail-loops`; read by the release JIT of .NET 10 and 11).
    pub const DOTNET_TAIL_CALL_LOOP_OPT: &str = "DOTNET_TailCallLoopOpt";
    /// The same setting under the runtime's older prefix.
    pub const COMPLUS_TAIL_CALL_LOOP_OPT: &str = "COMPlus_TailCallLoopOpt";
    /// Read by VSTest (`dotnet test`): how many milliseconds it lets a test host take to exit
    /// after the run before it kills it (default 100 ms). `eltrace record` sets
    /// [`VSTEST_SHUTDOWN_MS`] unless the user's environment does, so that a test host under
    /// the profiler finishes its trace (a kill before the END record truncates it).
    pub const VSTEST_TESTHOST_SHUTDOWN_TIMEOUT: &str = "VSTEST_TESTHOST_SHUTDOWN_TIMEOUT";
    /// The value `eltrace record` gives [`VSTEST_TESTHOST_SHUTDOWN_TIMEOUT`].
    pub const VSTEST_SHUTDOWN_MS: &str = "60000";

    // Read by the profiler (`eltrace record` and `eltrace check` set them; so may a user).

    /// Where the trace goes.
    pub const OUTPUT: &str = "ELTRACE_OUTPUT";
    /// The recording session `eltrace record` started (an id it chose): every .NET process
    /// of the run writes its own trace, and records the id in it (INFO `session`).
    pub const SESSION: &str = "ELTRACE_SESSION";
    /// With [`SESSION`]: the pid of `eltrace record`. The process whose parent it is writes
    /// [`OUTPUT`]; every other process writes `<stem>.<pid>.eltrace` beside it.
    pub const PARENT_PID: &str = "ELTRACE_PARENT_PID";
    /// Selection globs, separated by [`LIST_SEPARATOR`](super::LIST_SEPARATOR).
    pub const INCLUDE: &str = "ELTRACE_INCLUDE";
    /// Globs removed from the selection.
    pub const EXCLUDE: &str = "ELTRACE_EXCLUDE";
    /// The hook mode, one of [`hooks`](super::hooks).
    pub const HOOKS: &str = "ELTRACE_HOOKS";
    /// `1`: capture arguments and return values (implies the slow path).
    pub const VALUES: &str = "ELTRACE_VALUES";
    /// `1`: a thread whose buffer is full drops events (counted) instead of waiting for the
    /// writer (`record --lossy`).
    pub const LOSSY: &str = "ELTRACE_LOSSY";
    /// `1`: each thread encodes its events into stream chunks itself, the fast path's stubs
    /// inline, and the writer only cuts and writes them (format version 7; docs/design.md);
    /// `0`: raw records. Unset: streams.
    pub const STREAM: &str = "ELTRACE_STREAM";
    /// Per-thread ring capacity in events.
    pub const BUFFER_EVENTS: &str = "ELTRACE_BUFFER_EVENTS";
    /// Cap on all per-thread buffers together, in MiB.
    pub const MAX_BUFFER_MB: &str = "ELTRACE_MAX_BUFFER_MB";
    /// How often the writer thread drains the buffers, in ms.
    pub const FLUSH_MS: &str = "ELTRACE_FLUSH_MS";
    /// The longest total stall of the trace writer (ms) for which threads wait before they
    /// drop events instead (`record --max-stall`; `0`: wait for ever).
    pub const MAX_STALL_MS: &str = "ELTRACE_MAX_STALL_MS";
    /// Test only: the I/O thread sleeps this many ms once, before the 20th 256-KiB block it
    /// writes (a file system frozen that long, 5 MiB into the trace).
    pub const TEST_IO_DELAY_MS: &str = "ELTRACE_TEST_IO_DELAY_MS";
    /// `1`: the profiler declines to load.
    pub const DISABLE: &str = "ELTRACE_DISABLE";
    /// Test only, `1`: fast-path stubs overwrite their whole trash set before returning.
    pub const TEST_TRASH_REGISTERS: &str = "ELTRACE_TEST_TRASH_REGISTERS";
    /// `0`: fast-path Leave/Tailcall stubs that do not preserve RCX (default `1`).
    pub const PRESERVE_RCX: &str = "ELTRACE_PRESERVE_RCX";
    /// `monotonic`: timestamps from CLOCK_MONOTONIC even where the TSC is invariant.
    pub const CLOCK: &str = "ELTRACE_CLOCK";
    /// Per-event timing, one of [`timing`](super::timing) (`record --timing`; default exact).
    pub const TIMING: &str = "ELTRACE_TIMING";
    /// With timing `sampled`: samples per second (`record --sample-hz`; default 1000).
    pub const SAMPLE_HZ: &str = "ELTRACE_SAMPLE_HZ";
    /// `eltrace check` only: the experiment to run instead of recording, one of
    /// [`experiment`](super::experiment).
    pub const CHECK: &str = "ELTRACE_CHECK";
    /// With [`CHECK`]: the file the experiment writes its observations to.
    pub const CHECK_OUT: &str = "ELTRACE_CHECK_OUT";

    // Read by the CLI only.

    /// The profiler library when `--profiler` is not given.
    pub const PROFILER_PATH: &str = "ELTRACE_PROFILER_PATH";
    /// Where `eltrace check` builds its probe programs.
    pub const CACHE_DIR: &str = "ELTRACE_CACHE_DIR";
    /// Set: `eltrace check` keeps its working directory.
    pub const CHECK_KEEP: &str = "ELTRACE_CHECK_KEEP";
}

/// The values of [`env::HOOKS`].
pub mod hooks {
    /// `SetEnterLeaveFunctionHooks3` with the assembly stubs (the default).
    pub const FAST: &str = "fast";
    /// `SetEnterLeaveFunctionHooks3WithInfo` (`record --slow-path`, `record --values`).
    pub const SLOW: &str = "slow";
    /// Benchmark only: no probes.
    pub const OFF: &str = "off";
    /// Benchmark only: slow-path hooks that do nothing.
    pub const SLOW_EMPTY: &str = "slow-empty";
    /// Benchmark only: fast-path stubs that only return.
    pub const FAST_EMPTY: &str = "fast-empty";
    /// Benchmark only: fast-path stubs that read the clock and return (the floor of a timed
    /// hook: what the clock alone costs).
    pub const FAST_CLOCK: &str = "fast-clock";
    /// Benchmark only: the recording stubs, with every ring's records dropped (and counted)
    /// instead of encoded and written (what the hooks cost without the pipeline behind them).
    pub const FAST_DISCARD: &str = "fast-discard";
}

/// The values of [`env::TIMING`] (also the trace's INFO `timing`).
pub mod timing {
    /// A timestamp on every event (the default).
    pub const EXACT: &str = "exact";
    /// No timestamps: exact counts, stacks and order within a thread only.
    pub const NONE: &str = "none";
    /// No per-event timestamps; a sampler thread records each thread's event position and
    /// the time at a fixed rate (SAMPLE chunks).
    pub const SAMPLED: &str = "sampled";
}

/// The method-impl flag of a runtime-async method (`MethodImplOptions.Async`) in a FUNCTION
/// record's `impl_flags` ([`FunctionRecord::is_runtime_async`](crate::FunctionRecord::is_runtime_async)):
/// the runtime's `miAsync` (corhdr.h), which the profiler knows as
/// `eltrace_abi::METHOD_IMPL_ASYNC` and copies from metadata unchanged.
pub const IMPL_ASYNC: u32 = 0x2000;

/// The keys of the trace's INFO chunk, one `const` each, with what the value says and how it
/// is spelled. The first seven are [`TraceInfo`](crate::TraceInfo)'s fields (the writer
/// writes and the reader reads them); the profiler writes the others into `extra` and the
/// readers ask [`TraceInfo`](crate::TraceInfo)'s accessors for them. A flag is `1` (set) or
/// `0`. A trace written before a key existed lacks it; readers must accept that.
pub mod info_key {
    /// Decimal OS process id of the profiled process ([`TraceInfo::pid`](crate::TraceInfo::pid)).
    pub const PID: &str = "pid";
    /// Decimal Unix time in ns when recording started.
    pub const START_UNIX_NS: &str = "start_unix_ns";
    /// Decimal tick value taken at the same moment: the origin of "ns since start".
    pub const START_TICKS: &str = "start_ticks";
    /// Nanoseconds per tick, a finite positive decimal (Rust `{:?}` of an `f64`: `1.0` when
    /// ticks are ns, as eltrace's profiler writes them).
    pub const NS_PER_TICK: &str = "ns_per_tick";
    /// The runtime's description, e.g. `CoreCLR 10.0.12`.
    pub const RUNTIME: &str = "runtime";
    /// The profiled command line, as far as the profiler could see it.
    pub const COMMAND: &str = "command";
    /// How the hooks were installed: `fast-path` or `slow-path` (the benchmark modes say so
    /// in words, e.g. `off (benchmark)`).
    pub const HOOK_MODE: &str = "hook_mode";

    /// The recording session (the id `eltrace record` chose, [`env::SESSION`](super::env::SESSION));
    /// empty for a trace recorded without `eltrace record`.
    pub const SESSION: &str = "session";
    /// Decimal pid of the profiled process's parent.
    pub const PPID: &str = "ppid";
    /// The timestamp clock, in words: `tsc (3.0000 GHz, calibrated against
    /// CLOCK_MONOTONIC)`, `monotonic` or `monotonic (TSC calibration failed)`.
    pub const CLOCK: &str = "clock";
    /// The profiler library and its version, `eltrace-profiler 0.1.0`.
    pub const PROFILER: &str = "profiler";
    /// Decimal: the highest `ICorProfilerInfoN` the runtime offered (e.g. `15`).
    pub const PROFILER_INFO_VERSION: &str = "profiler_info_version";
    /// Decimal per-thread ring capacity in events, as rounded up to a power of two.
    pub const BUFFER_EVENTS: &str = "buffer_events";
    /// Decimal cap on all per-thread buffers together, in MiB.
    pub const MAX_BUFFER_MB: &str = "max_buffer_mb";
    /// Decimal: how often the writer thread drains the buffers, in ms.
    pub const FLUSH_MS: &str = "flush_ms";
    /// Flag: arguments and return values were captured (`record --values`).
    pub const VALUES: &str = "values";
    /// Flag: a Value event comes just before the Enter or Leave it belongs to (Continuation
    /// events may come between); without it (traces of older profilers) it comes just after.
    /// eltrace's profiler writes it set in every trace.
    pub const VALUES_FIRST: &str = "values_first";
    /// Flag: a thread whose buffer was full dropped events instead of waiting
    /// (`record --lossy`).
    pub const LOSSY: &str = "lossy";
    /// Per-event timing, one of [`timing`](super::timing) (`exact` when absent).
    pub const TIMING: &str = "timing";
    /// Decimal: the sampler's rate in samples per second per thread (read only with
    /// [`SAMPLING`]; 1000 when absent).
    pub const SAMPLE_HZ: &str = "sample_hz";
    /// Flag: the sampler thread ran and the trace has SAMPLES chunks (timing `sampled`, or
    /// `exact` with `--sample-hz`).
    pub const SAMPLING: &str = "sampling";
    /// The JIT's TailCallLoopOpt setting the process had: the value of
    /// [`env::DOTNET_TAIL_CALL_LOOP_OPT`](super::env::DOTNET_TAIL_CALL_LOOP_OPT) or else
    /// [`env::COMPLUS_TAIL_CALL_LOOP_OPT`](super::env::COMPLUS_TAIL_CALL_LOOP_OPT) (`0`
    /// when `eltrace record` set it), `default` when neither was set.
    pub const TAIL_CALL_LOOP_OPT: &str = "tail_call_loop_opt";
    /// Flag: the profiler counted garbage collections (ICorProfilerInfo5 or later) and
    /// wrote each GC epoch's low 3 bits into the continuation values of Continuation events,
    /// so an equal value within a trace is the same object (docs/abi.md).
    pub const GC_EPOCHS: &str = "gc_epochs";
    /// The `COR_PRF_MONITOR` event mask the profiler set, `0x` and 8 hex digits.
    pub const EVENT_MASK: &str = "event_mask";
    /// Flag: the runtime reports a Leave when a runtime-async method suspends. No released
    /// runtime does and eltrace's profiler never writes the key; a trace that has it (the
    /// tests') is analysed by that rule (docs/design.md).
    pub const ASYNC_SUSPEND_LEAVE: &str = "async_suspend_leave";

    /// The value of a set flag.
    pub const YES: &str = "1";
}

/// The `eltrace check` experiments. Each but [`ASYNC`](experiment::ASYNC) is a value of [`env::CHECK`] (a
/// check-mode experiment of the profiler); `async` records a real trace instead.
pub mod experiment {
    /// A recording of the runtime-async probe with the production profiler.
    pub const ASYNC: &str = "async";
    /// Slow path with ARGS|RETVAL|FRAME_INFO: every event with its Get*3Info results.
    pub const INFO: &str = "info";
    /// Slow-path hooks that overwrite every volatile register before returning.
    pub const REGS_SLOW: &str = "regs-slow";
    /// The same hooks on the runtime-async probe.
    pub const REGS_SLOW_ASYNC: &str = "regs-slow-async";
    /// The same, with the Leave hook returning RCX = 0.
    pub const REGS_SLOW_ASYNC_RCX0: &str = "regs-slow-async-rcx0";
    /// Fast-path stubs that overwrite exactly the documented trash sets.
    pub const FAST_TRASH: &str = "fast-trash";
    /// A fast-path Leave stub that overwrites RAX (the return value).
    pub const FAST_RAX_AFTER_LEAVE: &str = "fast-rax-after-leave";
    /// A fast-path Enter stub that overwrites RDI (the first argument).
    pub const FAST_RDI_AFTER_ENTER: &str = "fast-rdi-after-enter";
    /// A fast-path Enter stub that overwrites R14.
    pub const FAST_R14_AFTER_ENTER: &str = "fast-r14-after-enter";
    /// DoStackSnapshot and ForceGC from an Enter hook.
    pub const SNAPSHOT: &str = "snapshot";
    /// SetEventMask / hook registration consistency rules.
    pub const FLAGS: &str = "flags";
    /// Are P/Invoke stubs and reverse P/Invokes reported?
    pub const PINVOKE: &str = "pinvoke";
    /// eltrace's own event mask with counting fast stubs: JIT compilations, JITInlining
    /// questions and Enters per function.
    pub const JIT: &str = "jit";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_braced_clsid_is_the_number() {
        let hex = format!("{CLSID:032X}");
        let braced = format!(
            "{{{}-{}-{}-{}-{}}}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        );
        assert_eq!(braced, CLSID_BRACED);
    }

    #[test]
    fn info_keys_are_distinct() {
        use info_key::*;
        let all = [
            PID,
            START_UNIX_NS,
            START_TICKS,
            NS_PER_TICK,
            RUNTIME,
            COMMAND,
            HOOK_MODE,
            SESSION,
            PPID,
            CLOCK,
            PROFILER,
            PROFILER_INFO_VERSION,
            BUFFER_EVENTS,
            MAX_BUFFER_MB,
            FLUSH_MS,
            VALUES,
            LOSSY,
            TIMING,
            SAMPLE_HZ,
            SAMPLING,
            TAIL_CALL_LOOP_OPT,
            GC_EPOCHS,
            EVENT_MASK,
            ASYNC_SUSPEND_LEAVE,
        ];
        let mut sorted = all.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
    }

    #[test]
    fn experiment_names_are_distinct() {
        let all = [
            experiment::ASYNC,
            experiment::INFO,
            experiment::REGS_SLOW,
            experiment::REGS_SLOW_ASYNC,
            experiment::REGS_SLOW_ASYNC_RCX0,
            experiment::FAST_TRASH,
            experiment::FAST_RAX_AFTER_LEAVE,
            experiment::FAST_RDI_AFTER_ENTER,
            experiment::FAST_R14_AFTER_ENTER,
            experiment::SNAPSHOT,
            experiment::FLAGS,
            experiment::PINVOKE,
        ];
        let mut sorted = all.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
    }
}
