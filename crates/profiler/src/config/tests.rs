//! Tests of config.rs: every variable parsed, defaults, and the warnings for bad values.

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
fn streams_with_every_timing_unless_told() {
    let on = |pairs: &[(&str, &str)]| cfg(pairs).stream;
    assert!(on(&[]) && on(&[("ELTRACE_TIMING", "sampled")]));
    assert!(on(&[("ELTRACE_TIMING", "none")]));
    assert!(!on(&[("ELTRACE_TIMING", "none"), ("ELTRACE_STREAM", "0")]));
    assert!(!on(&[
        ("ELTRACE_TIMING", "sampled"),
        ("ELTRACE_STREAM", "0")
    ]));
    // The benchmark hook modes measure the raw records' path.
    assert!(!on(&[("ELTRACE_HOOKS", "fast-discard")]));
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
