//! The checks of registers (regs.*), runtime calls from a hook (hook.*), event-mask flags
//! (flags.*) and P/Invoke (pinvoke.*): each a pure function from an experiment's observations
//! to a [`Row`].

use super::asyncs::distinct;
use super::row::*;
use crate::check::obs::Observations;

// ---- 3./4. Registers ---------------------------------------------------------------------

/// The Enter and Leave counts the `path` hooks (`slow` or `fast`) reported; 0 when absent.
fn hook_counts(o: &Observations, path: &str) -> (u64, u64) {
    let count = |event: &str| o.num(&format!("{path}.{event}")).unwrap_or(0);
    (count("enters"), count("leaves"))
}

/// "<exit>, results right|wrong, E Enter / L Leave <what>".
fn program_observed(o: &Observations, e: u64, l: u64, what: &str) -> String {
    format!(
        "{}, results {}, {e} Enter / {l} Leave {what}",
        o.exit_text(),
        if o.program_ok() { "right" } else { "wrong" }
    )
}

pub(super) fn regs_slow(o: &Observations) -> Row {
    const EXP: &str = "program correct although the WithInfo hooks overwrite RAX RCX RDX RSI \
                       RDI R8-R11 XMM0-15 (the runtime's stubs save what the JIT needs)";
    if let Some(why) = not_run(o) {
        return row("regs.slow.clobber-all", EXP, why, Verdict::Fail);
    }
    let (e, l) = hook_counts(o, "slow");
    let observed = program_observed(o, e, l, "hooks");
    row(
        "regs.slow.clobber-all",
        EXP,
        observed,
        pass_if(o.program_ok() && e > 0 && e == l),
    )
}

/// The CoreCLR major version in the `runtime` line (`CoreCLR 10.0.12` → 10).
pub(super) fn runtime_major(o: &Observations) -> Option<u32> {
    o.get("runtime")?
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?
        .split('.')
        .next()?
        .parse()
        .ok()
}

pub(super) fn regs_slow_async(o: &Observations) -> Row {
    const NAME: &str = "regs.slow.async-rcx";
    const EXP: &str = "runtime-async probe correct although the WithInfo hooks overwrite the \
                       volatile registers, RCX included (RCX carries a variant's continuation)";
    if let Some(why) = not_run(o) {
        return row(NAME, EXP, why, Verdict::Fail);
    }
    let (e, l) = hook_counts(o, "slow");
    if o.program_ok() && e > 0 {
        let observed = format!(
            "{}, results right, {e} Enter / {l} Leave hooks",
            o.exit_text()
        );
        return row(NAME, EXP, observed, Verdict::Pass);
    }
    // The counters come at Shutdown; a crash leaves only the first-hook lines.
    let left = l > 0 || o.num("slow.first_leave") == Some(1);
    let observed = if left {
        format!(
            "{} after a Leave hook: the slow-path Leave stub hands the hook's RCX back to the \
             runtime-async caller as its continuation (eltrace's own hooks return with RCX = 0)",
            o.exit_text()
        )
    } else {
        format!("{} before any Leave hook", o.exit_text())
    };
    // Measured on .NET 10: a NullReferenceException after the first completing Leave.
    let verdict = if left && runtime_major(o).is_some_and(|m| m <= 10) {
        Verdict::Differs
    } else {
        Verdict::Fail
    };
    row(NAME, EXP, observed, verdict)
}

pub(super) fn regs_slow_async_rcx0(o: &Observations) -> Row {
    const NAME: &str = "regs.slow.async-rcx0";
    const EXP: &str = "runtime-async probe correct with the same hooks when the Leave hook \
                       returns with RCX = 0 (eltrace's workaround)";
    if let Some(why) = not_run(o) {
        return row(NAME, EXP, why, Verdict::Fail);
    }
    let (e, l) = hook_counts(o, "slow");
    let observed = program_observed(o, e, l, "hooks");
    row(NAME, EXP, observed, pass_if(o.program_ok() && l > 0))
}

pub(super) fn fast_trash(o: &Observations) -> Row {
    const EXP: &str = "program correct with the stubs overwriting exactly the trash sets \
                       (Enter: RAX R10 R11 XMM8-15; Leave/Tailcall: RDI RSI RCX R8-R11 XMM2-15)";
    if let Some(why) = not_run(o) {
        return row("regs.fast.trash-sets", EXP, why, Verdict::Fail);
    }
    let (e, l) = hook_counts(o, "fast");
    let observed = program_observed(o, e, l, "stubs");
    row(
        "regs.fast.trash-sets",
        EXP,
        observed,
        pass_if(o.program_ok() && e > 0 && e == l),
    )
}

pub(super) fn fast_parameters(o: &Observations) -> Row {
    const EXP: &str = "Enter: mapper's client id in R14 (not RDI), caller SP in R15 = the \
                       Leave's RSI; Leave: client id in RDI";
    if let Some(why) = not_run(o) {
        return row("regs.fast.parameters", EXP, why, Verdict::Fail);
    }
    let n = |k: &str| o.num(k).unwrap_or(0);
    let (enters, r14, rdi) = (
        n("fast.enters"),
        n("fast.enter_r14_tagged"),
        n("fast.enter_rdi_tagged"),
    );
    let (leaves, leave_rdi) = (n("fast.leaves"), n("fast.leave_rdi_tagged"));
    let (leaf_e, leaf_l, sp) = (
        n("fast.leaf_enters"),
        n("fast.leaf_leaves"),
        n("fast.leaf_sp_match"),
    );
    let leaf_calls = o.num("probe.regs.leaf_calls").unwrap_or(0);
    let ok = enters > 0
        && r14 == enters
        && rdi == 0
        && leave_rdi == leaves
        && leaf_calls > 0
        && leaf_e == leaf_calls
        && leaf_l == leaf_calls
        && sp == leaf_calls;
    let observed = format!(
        "client id in R14 at {r14}/{enters} Enters, in RDI at {rdi}; in RDI at {leave_rdi}/{leaves} \
         Leaves; Leaf: R15 at Enter = RSI at Leave {sp}/{leaf_calls}"
    );
    row("regs.fast.parameters", EXP, observed, pass_if(ok))
}

/// A register outside the trash set overwritten: the program must break.
pub(super) fn live_register(o: &Observations, name: &'static str, expected: &str) -> Row {
    if let Some(why) = not_run(o) {
        return row(name, expected, why, Verdict::Fail);
    }
    let broken = !o.program_ok();
    let observed = format!(
        "{}: {}",
        o.exit_text(),
        if broken {
            "live: confirmed"
        } else {
            "program correct: not live"
        }
    );
    row(name, expected, observed, pass_if(broken))
}

pub(super) fn fast_rax(o: &Observations) -> Row {
    live_register(
        o,
        "regs.fast.rax-after-leave",
        "live (return value): the program breaks",
    )
}

pub(super) fn fast_rdi(o: &Observations) -> Row {
    live_register(
        o,
        "regs.fast.rdi-after-enter",
        "live (first argument): the program breaks",
    )
}

pub(super) fn fast_r14(o: &Observations) -> Row {
    const EXP: &str = "harmless: R14 is outside RBM_PROFILER_ENTER_TRASH, but the Unix x64 \
                       prolog saves R14/R15 (rsSetRegsModified(RBM_PROFILER_ENTER_ARG_0|_1)) \
                       and nothing reads R14 after the Enter call";
    if let Some(why) = not_run(o) {
        return row("regs.fast.r14-after-enter", EXP, why, Verdict::Fail);
    }
    let n = o.num("fast.enters").unwrap_or(0);
    let observed = if o.program_ok() {
        format!(
            "{}, results right after {n} Enters: live: not confirmed",
            o.exit_text()
        )
    } else {
        format!("{}: live: confirmed", o.exit_text())
    };
    row(
        "regs.fast.r14-after-enter",
        EXP,
        observed,
        pass_if(o.program_ok() && n > 0),
    )
}

// ---- 5. Runtime calls from a hook --------------------------------------------------------

pub(super) fn stack_snapshot(o: &Observations) -> Row {
    const EXP: &str = "documented: S_OK with frames (same thread, unseeded, \
                       COR_PRF_ENABLE_STACK_SNAPSHOT); known: E_FAIL on .NET 10 and 11 \
                       Linux x64 (S_OK on 8 and 9)";
    if let Some(why) = not_run(o) {
        return row("hook.stack-snapshot", EXP, why, Verdict::Fail);
    }
    let snaps: Vec<_> = o.all("snapshot").map(crate::check::obs::fields).collect();
    let hrs: Vec<Option<u32>> = snaps
        .iter()
        .map(|f| f.get("hr").and_then(|h| crate::check::obs::parse_u32(h)))
        .collect();
    let frames: Vec<u64> = snaps
        .iter()
        .map(|f| f.get("frames").and_then(|v| v.parse().ok()).unwrap_or(0))
        .collect();
    let observed = format!(
        "{} calls: {}, frames {}",
        snaps.len(),
        distinct(hrs.iter().map(|h| hr_text(*h)).collect()),
        distinct(frames.iter().map(u64::to_string).collect())
    );
    let verdict = if snaps.is_empty() {
        Verdict::Fail
    } else if hrs.iter().all(|h| *h == Some(S_OK)) && frames.iter().all(|f| *f > 0) {
        Verdict::Pass
    } else if hrs.iter().all(|h| *h == Some(E_FAIL)) {
        Verdict::Differs
    } else {
        Verdict::Fail
    };
    row("hook.stack-snapshot", EXP, observed, verdict)
}

pub(super) fn force_gc(o: &Observations) -> Row {
    const EXP: &str = "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE (0x80131363)";
    let hrs: Vec<Option<u32>> = o
        .all("forcegc")
        .map(|v| {
            crate::check::obs::fields(v)
                .get("hr")
                .and_then(|h| crate::check::obs::parse_u32(h))
        })
        .collect();
    let ok = !hrs.is_empty()
        && hrs
            .iter()
            .all(|h| *h == Some(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE));
    let observed = if hrs.is_empty() {
        format!("not called; {}", o.exit_text())
    } else {
        format!(
            "{} calls: {}",
            hrs.len(),
            distinct(hrs.iter().map(|h| hr_text(*h)).collect())
        )
    };
    row("hook.force-gc", EXP, observed, pass_if(ok))
}

// ---- 6. Flags ----------------------------------------------------------------------------

pub(super) fn flags_inconsistent(o: &Observations) -> Row {
    const EXP: &str = "CORPROF_E_INCONSISTENT_WITH_FLAGS for: WithInfo hooks without \
                       ARGS/RETVAL/FRAME_INFO; fast hooks with FRAME_INFO; clearing the slow \
                       flags under WithInfo hooks";
    let keys = [
        (
            "hooks.with_info_without_slow_flags",
            "WithInfo w/o slow flags",
        ),
        ("hooks.fast_with_frame_info", "fast with FRAME_INFO"),
        ("mask.clear_slow_flags_with_info_hooks", "clear slow flags"),
    ];
    let ok = keys
        .iter()
        .all(|(k, _)| o.hr(k) == Some(CORPROF_E_INCONSISTENT_WITH_FLAGS));
    let observed = keys
        .iter()
        .map(|(k, label)| format!("{label}: {}", hr_text(o.hr(k))))
        .collect::<Vec<_>>()
        .join("; ");
    row(
        "flags.inconsistent",
        EXP,
        observed,
        pass_if(ok && o.initialized()),
    )
}

pub(super) fn flags_after_startup(o: &Observations) -> Row {
    const EXP: &str = "after startup, adding ARGS or RETVAL or clearing FRAME_INFO is refused \
                       with E_FAIL (COR_PRF_MONITOR_IMMUTABLE)";
    let keys = [
        ("mask.late_add_retval", "+RETVAL"),
        ("mask.late_add_args", "+ARGS"),
        ("mask.late_clear_frame_info", "-FRAME_INFO"),
    ];
    let ok = keys.iter().all(|(k, _)| o.hr(k) == Some(E_FAIL));
    let observed = keys
        .iter()
        .map(|(k, label)| format!("{label}: {}", hr_text(o.hr(k))))
        .collect::<Vec<_>>()
        .join("; ");
    row("flags.slow-after-startup", EXP, observed, pass_if(ok))
}

pub(super) fn flags_enterleave_late(o: &Observations) -> Row {
    const EXP: &str = "S_OK: COR_PRF_MONITOR_ENTERLEAVE is not in COR_PRF_MONITOR_IMMUTABLE \
                       (code already jitted keeps its probes)";
    let hr = o.hr("mask.late_clear_enterleave");
    let after = o
        .lines
        .iter()
        .skip_while(|(k, _)| k != "mask.late_clear_enterleave")
        .filter(|(k, _)| k == "event")
        .count();
    let observed = format!(
        "clearing it: {}; {after} hook events after that",
        hr_text(hr)
    );
    row(
        "flags.enterleave-after-startup",
        EXP,
        observed,
        pass_if(hr == Some(S_OK)),
    )
}

// ---- 7. P/Invoke ------------------------------------------------------------------------

pub(super) fn pinvoke_stubs(o: &Observations) -> Row {
    const EXP: &str = "not reported: P/Invoke methods and their IL stubs get no Enter/Leave";
    if let Some(why) = not_run(o) {
        return row("pinvoke.stubs", EXP, why, Verdict::Fail);
    }
    let is_stub = |n: &str| {
        n.ends_with(".GetPid")
            || n.ends_with(".QSort")
            || n.contains("IL_STUB")
            || n.contains("ILStub")
    };
    let mapped = o
        .all("map")
        .filter(|m| {
            let f = crate::check::obs::fields(m);
            f.get("name").is_some_and(|n| is_stub(n)) || f.get("resolved").is_some_and(|r| r == "0")
        })
        .count();
    let events = o.events();
    let stub_events = events.iter().filter(|e| is_stub(&e.name)).count();
    let calls = o.num("probe.pinvoke.getpid_calls").unwrap_or(0);
    let observed = format!(
        "{stub_events} Enter/Leave events and {mapped} mapper calls for stubs/P/Invoke methods \
         over {calls} getpid + 1 qsort calls"
    );
    let verdict = if !o.program_ok() || calls == 0 {
        Verdict::Fail
    } else if stub_events == 0 && mapped == 0 {
        Verdict::Pass
    } else {
        Verdict::Differs
    };
    row("pinvoke.stubs", EXP, observed, verdict)
}

pub(super) fn pinvoke_reverse(o: &Observations) -> Row {
    const EXP: &str = "[UnmanagedCallersOnly] comparer called by qsort: balanced Enter/Leave, \
                       one pair per call";
    if let Some(why) = not_run(o) {
        return row("pinvoke.reverse", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let count = |k: &str| {
        events
            .iter()
            .filter(|e| e.name == "Probes.PInvokeProbe.Compare" && e.kind == k)
            .count() as u64
    };
    let (e, l) = (count("enter"), count("leave"));
    let calls = o.num("probe.pinvoke.compares").unwrap_or(0);
    let observed = format!(
        "{e} Enter / {l} Leave for {calls} comparer calls; {}",
        o.exit_text()
    );
    row(
        "pinvoke.reverse",
        EXP,
        observed,
        pass_if(o.program_ok() && calls > 0 && e == calls && l == calls),
    )
}
