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
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_env(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_when_unset() {
        let c = cfg(&[]);
        assert_eq!(c.output, None);
        assert_eq!(c.output_path(7), PathBuf::from("eltrace-7.eltrace"));
        assert_eq!(c.hooks, HookMode::Fast);
        assert!(!c.trash_registers && c.preserve_rcx && c.use_tsc);
        assert_eq!(c.buffer_events, 4096);
        assert_eq!(c.max_buffer_mb, 512);
        assert_eq!(c.max_buffer_bytes(), 512 << 20);
        assert_eq!(c.flush_ms, 20);
        assert_eq!(c.max_stall_ms, 5_000);
        assert_eq!(c.test_io_delay_ms, 0);
        assert!(!c.disable);
        assert!(!c.values);
        assert!(c.selection.is_default());
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn values_imply_the_slow_path() {
        let c = cfg(&[(env::VALUES, "1")]);
        assert!(c.values);
        assert_eq!(c.hooks, HookMode::Slow);
        assert!(c.warnings.is_empty());
        let c = cfg(&[(env::VALUES, "1"), (env::HOOKS, "slow")]);
        assert!(c.values && c.hooks == HookMode::Slow && c.warnings.is_empty());
        let c = cfg(&[(env::VALUES, "1"), (env::HOOKS, "fast")]);
        assert!(c.values && c.hooks == HookMode::Slow);
        assert_eq!(c.warnings.len(), 1);
        let c = cfg(&[(env::VALUES, "1"), (env::HOOKS, "off")]);
        assert!(!c.values && c.hooks == HookMode::Off);
        assert_eq!(c.warnings.len(), 1);
        let c = cfg(&[(env::VALUES, "0")]);
        assert!(!c.values && c.hooks == HookMode::Fast);
    }

    #[test]
    fn empty_values_are_unset() {
        let all = [
            env::OUTPUT,
            env::INCLUDE,
            env::EXCLUDE,
            env::HOOKS,
            env::BUFFER_EVENTS,
            env::MAX_BUFFER_MB,
            env::FLUSH_MS,
            env::DISABLE,
            env::TEST_TRASH_REGISTERS,
            env::PRESERVE_RCX,
            env::CLOCK,
            env::VALUES,
        ];
        let pairs: Vec<(&str, &str)> = all.iter().map(|k| (*k, "")).collect();
        assert_eq!(cfg(&pairs), cfg(&[]));
        let pairs: Vec<(&str, &str)> = all.iter().map(|k| (*k, "  ")).collect();
        assert_eq!(cfg(&pairs), cfg(&[]));
    }

    #[test]
    fn output() {
        let c = cfg(&[(env::OUTPUT, "/tmp/x.eltrace")]);
        assert_eq!(c.output_path(1), PathBuf::from("/tmp/x.eltrace"));
    }

    #[test]
    fn include_exclude() {
        let c = cfg(&[(env::INCLUDE, "App!*;Foo.*"), (env::EXCLUDE, "*.get_*")]);
        assert!(!c.selection.is_default());
        assert!(c.selection.selects("App", "A.B.C", true));
        assert!(!c.selection.selects("App", "A.B.get_X", false));
        assert!(c.selection.selects("Lib", "Foo.Bar", false));
        assert!(!c.selection.selects("Lib", "Bar.Foo", false));
        let c = cfg(&[(env::INCLUDE, "App\u{FFFD}*")]);
        assert!(
            c.warnings[0].contains("not valid UTF-8"),
            "{:?}",
            c.warnings
        );
        assert!(!c.selection.selects("App", "A.B.C", false));
        let c = cfg(&[(env::EXCLUDE, "Demo.*")]);
        assert!(!c.selection.selects("App", "Demo.X.Y", false));
        assert!(c.selection.selects("App", "Other.X.Y", false));
        assert!(!c.selection.selects("System.Runtime", "Other.X.Y", true));
    }

    #[test]
    fn hooks() {
        for mode in HookMode::ALL {
            let c = cfg(&[(env::HOOKS, mode.name())]);
            assert_eq!(c.hooks, mode);
            assert!(c.warnings.is_empty());
        }
        let c = cfg(&[(env::HOOKS, "turbo")]);
        assert_eq!(c.hooks, HookMode::Fast);
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("`fast-discard`"), "{:?}", c.warnings);
        let c = cfg(&[
            (env::TEST_TRASH_REGISTERS, "1"),
            (env::PRESERVE_RCX, "0"),
            (env::CLOCK, "monotonic"),
        ]);
        assert!(c.trash_registers && !c.preserve_rcx && !c.use_tsc);
        assert!(c.warnings.is_empty());
        let c = cfg(&[(env::PRESERVE_RCX, "maybe"), (env::CLOCK, "sundial")]);
        assert!(c.preserve_rcx && c.use_tsc);
        assert_eq!(c.warnings.len(), 2);
    }

    #[test]
    fn buffer_events() {
        assert_eq!(cfg(&[(env::BUFFER_EVENTS, "1024")]).buffer_events, 1024);
        assert_eq!(cfg(&[(env::BUFFER_EVENTS, " 64 ")]).buffer_events, 64);
        for bad in ["0", "8", "-5", "lots", "1e6", "99999999999"] {
            let c = cfg(&[(env::BUFFER_EVENTS, bad)]);
            assert_eq!(c.buffer_events, DEFAULT_BUFFER_EVENTS, "{bad}");
            assert_eq!(c.warnings.len(), 1, "{bad}");
        }
    }

    #[test]
    fn max_buffer_mb() {
        assert_eq!(cfg(&[(env::MAX_BUFFER_MB, "1")]).max_buffer_mb, 1);
        for bad in ["0", "x", "-1"] {
            let c = cfg(&[(env::MAX_BUFFER_MB, bad)]);
            assert_eq!(c.max_buffer_mb, DEFAULT_MAX_BUFFER_MB);
            assert_eq!(c.warnings.len(), 1);
        }
    }

    #[test]
    fn max_stall_ms() {
        assert_eq!(cfg(&[(env::MAX_STALL_MS, "250")]).max_stall_ms, 250);
        assert_eq!(
            cfg(&[(env::MAX_STALL_MS, "0")]).max_stall_ms,
            0,
            "0: wait for ever"
        );
        for bad in ["soon", "-1", "3600001"] {
            let c = cfg(&[(env::MAX_STALL_MS, bad)]);
            assert_eq!(c.max_stall_ms, DEFAULT_MAX_STALL_MS);
            assert_eq!(c.warnings.len(), 1);
        }
    }

    #[test]
    fn flush_ms() {
        assert_eq!(cfg(&[(env::FLUSH_MS, "5")]).flush_ms, 5);
        for bad in ["0", "soon", "600000"] {
            let c = cfg(&[(env::FLUSH_MS, bad)]);
            assert_eq!(c.flush_ms, DEFAULT_FLUSH_MS);
            assert_eq!(c.warnings.len(), 1);
        }
    }

    #[test]
    fn timing() {
        assert_eq!(cfg(&[]).timing, Timing::Exact);
        assert_eq!(cfg(&[]).sample_hz, DEFAULT_SAMPLE_HZ);
        assert_eq!(cfg(&[("ELTRACE_TIMING", "none")]).timing, Timing::None);
        let c = cfg(&[("ELTRACE_TIMING", "sampled"), ("ELTRACE_SAMPLE_HZ", "250")]);
        assert_eq!((c.timing, c.sample_hz), (Timing::Sampled, 250));
        let c = cfg(&[("ELTRACE_TIMING", "fuzzy"), ("ELTRACE_SAMPLE_HZ", "0")]);
        assert_eq!((c.timing, c.sample_hz), (Timing::Exact, DEFAULT_SAMPLE_HZ));
        assert_eq!(c.warnings.len(), 2);
        assert!(Timing::Sampled.timeless() && !Timing::Exact.timeless());
        assert!(!cfg(&[]).sampling && !cfg(&[("ELTRACE_TIMING", "none")]).sampling);
        assert!(cfg(&[("ELTRACE_TIMING", "sampled")]).sampling);
        assert!(cfg(&[("ELTRACE_SAMPLE_HZ", "100")]).sampling);
    }

    #[test]
    fn disable() {
        for yes in ["1", "true", "YES", "on"] {
            assert!(cfg(&[(env::DISABLE, yes)]).disable, "{yes}");
        }
        for no in ["0", "false", "no", "OFF"] {
            let c = cfg(&[(env::DISABLE, no)]);
            assert!(!c.disable, "{no}");
            assert!(c.warnings.is_empty());
        }
        let c = cfg(&[(env::DISABLE, "maybe")]);
        assert!(!c.disable);
        assert_eq!(c.warnings.len(), 1);
    }
}
