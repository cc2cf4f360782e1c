//! Configuration from the environment: the pure parser [`Config::from_env`] of the variables
//! `eltrace_trace::protocol::env` names. docs/design.md fixes their meanings.
//!
//! Empty values count as unset. An invalid value falls back to the default and leaves a
//! warning in [`Config::warnings`] (the profiler reports each once on stderr and in the trace).

use std::path::PathBuf;

use eltrace_trace::protocol::{self, env};

use crate::selection::Selection;

pub const DEFAULT_BUFFER_EVENTS: usize = 4096;
pub const MIN_BUFFER_EVENTS: usize = 16;
pub const MAX_BUFFER_EVENTS: usize = 1 << 26;
pub const DEFAULT_MAX_BUFFER_MB: usize = 512;
pub const MAX_MAX_BUFFER_MB: usize = 1 << 20;
pub const DEFAULT_FLUSH_MS: u64 = 20;
/// `ELTRACE_MAX_STALL_MS` by default: threads wait for a stalled writer 5 s in all.
pub const DEFAULT_MAX_STALL_MS: u64 = 5_000;
pub const MAX_MAX_STALL_MS: u64 = 3_600_000;
pub const MAX_FLUSH_MS: u64 = 60_000;
pub const DEFAULT_SAMPLE_HZ: u64 = 1000;
pub const MAX_SAMPLE_HZ: u64 = 100_000;

/// Per-event timing (`ELTRACE_TIMING`, `record --timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Every event carries a timestamp (the default).
    Exact,
    /// No per-event timestamps.
    None,
    /// No per-event timestamps; the sampler thread (sampler.rs) records positions and times.
    Sampled,
}

impl Timing {
    pub fn parse(value: &str) -> Option<Timing> {
        [Timing::Exact, Timing::None, Timing::Sampled]
            .into_iter()
            .find(|t| t.name() == value)
    }

    /// The `ELTRACE_TIMING` value (and INFO `timing`).
    pub fn name(self) -> &'static str {
        match self {
            Timing::Exact => protocol::timing::EXACT,
            Timing::None => protocol::timing::NONE,
            Timing::Sampled => protocol::timing::SAMPLED,
        }
    }

    /// Whether events carry timestamps.
    pub fn timeless(self) -> bool {
        self != Timing::Exact
    }
}

/// How the ELT hooks are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookMode {
    /// `SetEnterLeaveFunctionHooks3WithInfo` with ordinary C hooks (`ELTRACE_HOOKS=slow`).
    Slow,
    /// `SetEnterLeaveFunctionHooks3` with the assembly stubs of fast.rs (the default).
    Fast,
    /// Benchmark only (`off`): the profiler loads but asks for no ELT probes.
    Off,
    /// Benchmark only (`slow-empty`): slow-path hooks that do nothing.
    SlowEmpty,
    /// Benchmark only (`fast-empty`): fast-path stubs that only `ret`.
    FastEmpty,
    /// Benchmark only (`fast-clock`): fast-path stubs that read the TSC and return.
    FastClock,
    /// Benchmark only (`fast-discard`): the fast path's recording stubs, every ring's records
    /// counted as dropped instead of encoded (ring/consumer.rs).
    FastDiscard,
}

impl HookMode {
    /// Every mode.
    pub const ALL: [HookMode; 7] = [
        HookMode::Slow,
        HookMode::Fast,
        HookMode::Off,
        HookMode::SlowEmpty,
        HookMode::FastEmpty,
        HookMode::FastClock,
        HookMode::FastDiscard,
    ];

    /// The mode an `ELTRACE_HOOKS` value selects.
    pub fn parse(value: &str) -> Option<HookMode> {
        HookMode::ALL.into_iter().find(|m| m.name() == value)
    }

    /// The value of `ELTRACE_HOOKS` that selects this mode.
    pub fn name(self) -> &'static str {
        match self {
            HookMode::Slow => protocol::hooks::SLOW,
            HookMode::Fast => protocol::hooks::FAST,
            HookMode::Off => protocol::hooks::OFF,
            HookMode::SlowEmpty => protocol::hooks::SLOW_EMPTY,
            HookMode::FastEmpty => protocol::hooks::FAST_EMPTY,
            HookMode::FastClock => protocol::hooks::FAST_CLOCK,
            HookMode::FastDiscard => protocol::hooks::FAST_DISCARD,
        }
    }

    /// Whether the mode's hooks record events (eltrace's own hooks, not a benchmark's empty
    /// ones).
    pub fn records(self) -> bool {
        matches!(
            self,
            HookMode::Fast | HookMode::Slow | HookMode::FastDiscard
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `ELTRACE_OUTPUT`; `None` means `eltrace-<pid>.eltrace` in the working directory.
    pub output: Option<PathBuf>,
    /// `ELTRACE_SESSION`: the `eltrace record` run this process belongs to (output.rs).
    pub session: Option<String>,
    /// `ELTRACE_PARENT_PID`: the pid of that `eltrace record`.
    pub parent_pid: Option<u32>,
    pub selection: Selection,
    pub hooks: HookMode,
    /// Per-thread ring capacity in events (as asked; the ring rounds up to a power of two).
    pub buffer_events: usize,
    pub max_buffer_mb: usize,
    pub flush_ms: u64,
    /// How long (ms, total) threads wait for a writer that makes no progress before they drop
    /// events instead (0: for ever).
    pub max_stall_ms: u64,
    /// Test only: the I/O thread's one stall, 5 MiB into the trace (ms).
    pub test_io_delay_ms: u64,
    pub disable: bool,
    /// `ELTRACE_TEST_TRASH_REGISTERS=1`.
    pub trash_registers: bool,
    /// `ELTRACE_PRESERVE_RCX` (default true).
    pub preserve_rcx: bool,
    /// Timestamps from the TSC where it is invariant (`ELTRACE_CLOCK` unset or `tsc`).
    pub use_tsc: bool,
    /// `ELTRACE_VALUES=1`: capture arguments and return values; `hooks` is then `Slow`.
    pub values: bool,
    /// `ELTRACE_LOSSY=1` (`record --lossy`): a thread whose buffer is full drops events
    /// (counted) instead of waiting for the writer.
    pub lossy: bool,
    /// Threads encode their events into stream chunks (ring/stream.rs): `ELTRACE_STREAM`, on
    /// by default (`ELTRACE_STREAM=0`: raw records, encoded in batches).
    pub stream: bool,
    /// `ELTRACE_TIMING`.
    pub timing: Timing,
    /// `ELTRACE_SAMPLE_HZ` (used with `Timing::Sampled`).
    pub sample_hz: u64,
    /// The sampler thread runs: timing `sampled`, or `ELTRACE_SAMPLE_HZ` set with timing
    /// `exact` (samples beside the timestamps, to check the estimator against them).
    pub sampling: bool,
    /// One message per invalid variable.
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config::from_env(|_| None)
    }
}

impl Config {
    /// Reads the configuration through `lookup` (e.g. `|k| std::env::var(k).ok()`).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let mut warnings = Vec::new();

        let output = get(env::OUTPUT).map(PathBuf::from);
        let session = get(env::SESSION).map(|s| s.trim().to_owned());
        let parent_pid = parent_pid(&get, &mut warnings);
        let selection = selection(&get, &mut warnings);
        let (hooks, values) = hooks_and_values(&get, &mut warnings);
        let trash_registers = flag(&get, env::TEST_TRASH_REGISTERS, false, &mut warnings);
        let lossy = flag(&get, env::LOSSY, false, &mut warnings);
        let preserve_rcx = flag(&get, env::PRESERVE_RCX, true, &mut warnings);
        let use_tsc = clock_is_tsc(&get, &mut warnings);

        let buffer_events = number(
            &get,
            env::BUFFER_EVENTS,
            DEFAULT_BUFFER_EVENTS,
            MIN_BUFFER_EVENTS,
            MAX_BUFFER_EVENTS,
            &mut warnings,
        );
        let max_buffer_mb = number(
            &get,
            env::MAX_BUFFER_MB,
            DEFAULT_MAX_BUFFER_MB,
            1,
            MAX_MAX_BUFFER_MB,
            &mut warnings,
        );
        let flush_ms = number(
            &get,
            env::FLUSH_MS,
            DEFAULT_FLUSH_MS as usize,
            1,
            MAX_FLUSH_MS as usize,
            &mut warnings,
        ) as u64;
        let max_stall_ms = number(
            &get,
            env::MAX_STALL_MS,
            DEFAULT_MAX_STALL_MS as usize,
            0,
            MAX_MAX_STALL_MS as usize,
            &mut warnings,
        ) as u64;
        let test_io_delay_ms =
            number(&get, env::TEST_IO_DELAY_MS, 0, 0, 60_000, &mut warnings) as u64;

        let timing = timing(&get, &mut warnings);
        // Streams by default (docs/performance.md): the stubs encode each event themselves, and
        // a timeless loop's calls go into runs without a byte. The benchmark modes measure the
        // record-and-encode path: no streams there.
        let stream = flag(&get, env::STREAM, true, &mut warnings)
            && matches!(hooks, HookMode::Fast | HookMode::Slow);
        let sample_hz = number(
            &get,
            env::SAMPLE_HZ,
            DEFAULT_SAMPLE_HZ as usize,
            1,
            MAX_SAMPLE_HZ as usize,
            &mut warnings,
        ) as u64;

        let disable = disable(&get, &mut warnings);

        Config {
            output,
            session,
            parent_pid,
            selection,
            hooks,
            buffer_events,
            max_buffer_mb,
            flush_ms,
            max_stall_ms,
            test_io_delay_ms,
            disable,
            trash_registers,
            preserve_rcx,
            use_tsc,
            values,
            lossy,
            stream,
            timing,
            sample_hz,
            sampling: timing == Timing::Sampled
                || (timing == Timing::Exact && get(env::SAMPLE_HZ).is_some()),
            warnings,
        }
    }

    /// Where the trace goes for process `pid`.
    pub fn output_path(&self, pid: u32) -> PathBuf {
        self.output
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("eltrace-{pid}.eltrace")))
    }

    /// The memory cap on all rings together, in bytes.
    pub fn max_buffer_bytes(&self) -> usize {
        self.max_buffer_mb.saturating_mul(1 << 20)
    }
}

/// `ELTRACE_PARENT_PID`, when it is a process id.
fn parent_pid(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Option<u32> {
    get(env::PARENT_PID).and_then(|v| {
        let pid = v.trim().parse::<u32>().ok().filter(|&p| p > 0);
        if pid.is_none() {
            warnings.push(format!(
                "{}={v:?} is not a process id; ignored",
                env::PARENT_PID
            ));
        }
        pid
    })
}

/// The selection of `ELTRACE_INCLUDE` and `ELTRACE_EXCLUDE`.
fn selection(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Selection {
    let include = get(env::INCLUDE).unwrap_or_default();
    let exclude = get(env::EXCLUDE).unwrap_or_default();
    for (name, list) in [(env::INCLUDE, &include), (env::EXCLUDE, &exclude)] {
        if list.contains('\u{FFFD}') {
            warnings.push(format!(
                "{name} is not valid UTF-8: its globs with invalid bytes match no function"
            ));
        }
    }
    Selection::parse(&include, &exclude)
}

/// `ELTRACE_HOOKS` and `ELTRACE_VALUES` together: values need the slow path (`fast` becomes
/// `slow`) and are off with a benchmark mode.
fn hooks_and_values(
    get: &impl Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> (HookMode, bool) {
    let mut hooks = match get(env::HOOKS).as_deref().map(str::trim) {
        None => HookMode::Fast,
        Some(value) => HookMode::parse(value).unwrap_or_else(|| {
            let known: Vec<String> = HookMode::ALL
                .iter()
                .map(|m| format!("`{}`", m.name()))
                .collect();
            warnings.push(format!(
                "{}={value:?} is not one of {}; using `fast`",
                env::HOOKS,
                known.join(", ")
            ));
            HookMode::Fast
        }),
    };
    let mut values = flag(get, env::VALUES, false, warnings);
    if values {
        match hooks {
            HookMode::Slow => {}
            HookMode::Fast => {
                if get(env::HOOKS).is_some() {
                    warnings.push(format!(
                        "{}=1 needs the slow path; using `slow` instead of `fast`",
                        env::VALUES
                    ));
                }
                hooks = HookMode::Slow;
            }
            other => {
                warnings.push(format!(
                    "{}=1 is ignored with the benchmark hook mode `{}`",
                    env::VALUES,
                    other.name()
                ));
                values = false;
            }
        }
    }
    (hooks, values)
}

/// `ELTRACE_CLOCK`: whether timestamps come from the TSC (`tsc`, the default) rather than
/// the monotonic clock.
fn clock_is_tsc(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> bool {
    match get(env::CLOCK).as_deref().map(str::trim) {
        None | Some("tsc") => true,
        Some("monotonic") => false,
        Some(other) => {
            warnings.push(format!(
                "{}={other:?} is not `tsc` or `monotonic`; using `tsc`",
                env::CLOCK
            ));
            true
        }
    }
}

/// `ELTRACE_TIMING`.
fn timing(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Timing {
    match get(env::TIMING).as_deref().map(str::trim) {
        None => Timing::Exact,
        Some(value) => Timing::parse(value).unwrap_or_else(|| {
            warnings.push(format!(
                "{}={value:?} is not `exact`, `none` or `sampled`; using `exact`",
                env::TIMING
            ));
            Timing::Exact
        }),
    }
}

/// `ELTRACE_DISABLE`.
fn disable(get: &impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> bool {
    match get(env::DISABLE).map(|v| v.trim().to_ascii_lowercase()) {
        None => false,
        Some(v) if matches!(v.as_str(), "1" | "true" | "yes" | "on") => true,
        Some(v) if matches!(v.as_str(), "0" | "false" | "no" | "off") => false,
        Some(v) => {
            warnings.push(format!(
                "{}={v:?} is not 1 or 0; not disabling",
                env::DISABLE
            ));
            false
        }
    }
}

fn flag(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: bool,
    warnings: &mut Vec<String>,
) -> bool {
    match get(name).map(|v| v.trim().to_ascii_lowercase()) {
        None => default,
        Some(v) if matches!(v.as_str(), "1" | "true" | "yes" | "on") => true,
        Some(v) if matches!(v.as_str(), "0" | "false" | "no" | "off") => false,
        Some(v) => {
            warnings.push(format!(
                "{name}={v:?} is not 1 or 0; using {}",
                default as u8
            ));
            default
        }
    }
}

fn number(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: usize,
    min: usize,
    max: usize,
    warnings: &mut Vec<String>,
) -> usize {
    let Some(raw) = get(name) else {
        return default;
    };
    match raw.trim().parse::<usize>() {
        Ok(n) if (min..=max).contains(&n) => n,
        _ => {
            warnings.push(format!(
                "{name}={raw:?} is not a number in {min}..={max}; using {default}"
            ));
            default
        }
    }
}

#[cfg(test)]
mod tests;
