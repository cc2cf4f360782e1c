//! Unit tests of the checks over fixture observations: `fixtures/*.obs` are the observations
//! `eltrace check` recorded on CoreCLR 10.0.12 (Linux x64; the flags fixture trimmed to 20
//! events). Every check is shown to give its .NET 10 verdict there, and each one's condition
//! is then broken (or, for DIFFERS rows, the post-fix behaviour synthesised) to see the
//! verdict change.

use std::collections::BTreeMap;

use super::checks::{CHECKS, NEED_RUNTIME_ASYNC, Phase, Verdict, phases};
use super::obs::Observations;
use super::{evaluate, evaluate_on, wanted_experiments};

fn fixture(name: &str) -> Observations {
    let text = match name {
        "async" => include_str!("fixtures/async.obs"),
        "info" => include_str!("fixtures/info.obs"),
        "regs-slow" => include_str!("fixtures/regs-slow.obs"),
        "regs-slow-async" => include_str!("fixtures/regs-slow-async.obs"),
        "regs-slow-async-rcx0" => include_str!("fixtures/regs-slow-async-rcx0.obs"),
        "fast-trash" => include_str!("fixtures/fast-trash.obs"),
        "fast-rax-after-leave" => include_str!("fixtures/fast-rax-after-leave.obs"),
        "fast-rdi-after-enter" => include_str!("fixtures/fast-rdi-after-enter.obs"),
        "fast-r14-after-enter" => include_str!("fixtures/fast-r14-after-enter.obs"),
        "snapshot" => include_str!("fixtures/snapshot.obs"),
        "flags" => include_str!("fixtures/flags.obs"),
        "pinvoke" => include_str!("fixtures/pinvoke.obs"),
        "jit" => include_str!("fixtures/jit.obs"),
        _ => panic!("no fixture {name}"),
    };
    Observations::parse(text)
}

/// The verdict of check `name` over `o`.
fn verdict(name: &str, o: &Observations) -> Verdict {
    let c = CHECKS
        .iter()
        .find(|c| c.name == name)
        .expect("check exists");
    (c.eval)(o).verdict
}

/// Sets the last line of `key` to `value` (or adds it).
fn set(o: &mut Observations, key: &str, value: &str) {
    match o.lines.iter_mut().rev().find(|(k, _)| k == key) {
        Some(line) => line.1 = value.to_string(),
        None => o.push(key, value),
    }
}

/// Replaces `from` with `to` in the first `n` lines (of any key) that contain it.
fn replace(o: &mut Observations, from: &str, to: &str, n: usize) {
    let mut left = n;
    for line in o.lines.iter_mut() {
        if left > 0 && line.1.contains(from) {
            line.1 = line.1.replacen(from, to, 1);
            left -= 1;
        }
    }
    assert_eq!(left, 0, "fewer than {n} lines contain {from:?}");
}

/// Removes the first line whose value contains `needle`.
fn remove_first(o: &mut Observations, key: &str, needle: &str) {
    let i = o
        .lines
        .iter()
        .position(|(k, v)| k == key && v.contains(needle))
        .unwrap_or_else(|| panic!("no {key} line with {needle:?}"));
    o.lines.remove(i);
}

/// The post-fix runtime, synthesised: a Leave of the async variant (with `details`) right
/// before every resumption Enter.
fn with_suspension_leaves(o: &Observations, details: &str) -> Observations {
    let events = o.events();
    let mut resumes = std::collections::BTreeSet::new();
    for m in super::checks::ASYNC_METHODS {
        for (p, e) in phases(&events, m.0) {
            if p == Phase::ResumeEnter {
                resumes.insert(events.iter().position(|x| std::ptr::eq(x, e)).unwrap());
            }
        }
    }
    assert!(!resumes.is_empty());
    let mut out = Observations::default();
    let mut i = 0;
    for (k, v) in &o.lines {
        if k == "event" {
            if resumes.contains(&i) {
                let e = &events[i];
                let line = format!(
                    "kind=leave tid=999 fid={:#x} {details} name={}",
                    e.fid, e.name
                );
                out.push("event", &line);
            }
            i += 1;
        }
        out.push(k, v);
    }
    out
}

/// The .NET 10 (CoreCLR 10.0.12, Linux x64) verdict of every check; the e2e test asserts the
/// same list on the installed runtime.
pub const NET10: &[(&str, Verdict)] = &[
    ("async.counts", Verdict::Pass),
    ("async.suspension-leave", Verdict::Differs),
    ("async.continuation-arg", Verdict::Pass),
    ("async.continuation-generic", Verdict::Pass),
    ("async.continuation-reuse", Verdict::Differs),
    ("async.continuation-alloc", Verdict::Pass),
    ("async.state-machine-box", Verdict::Pass),
    ("async.iterator-this", Verdict::Pass),
    ("async.balance", Verdict::Pass),
    ("info.enter.initial", Verdict::Pass),
    ("info.enter.resume", Verdict::Differs),
    ("info.leave.suspension", Verdict::Differs),
    ("info.leave.completion", Verdict::Pass),
    ("info.tailcall", Verdict::Pass),
    ("info.async-no-tailcall", Verdict::Pass),
    ("info.undisturbed", Verdict::Pass),
    ("regs.slow.clobber-all", Verdict::Pass),
    ("regs.slow.async-rcx", Verdict::Differs),
    ("regs.slow.async-rcx0", Verdict::Pass),
    ("regs.fast.trash-sets", Verdict::Pass),
    ("regs.fast.parameters", Verdict::Pass),
    ("regs.fast.rax-after-leave", Verdict::Pass),
    ("regs.fast.rdi-after-enter", Verdict::Pass),
    ("regs.fast.r14-after-enter", Verdict::Pass),
    ("hook.stack-snapshot", Verdict::Differs),
    ("hook.force-gc", Verdict::Pass),
    ("flags.inconsistent", Verdict::Pass),
    ("flags.slow-after-startup", Verdict::Pass),
    ("flags.enterleave-after-startup", Verdict::Pass),
    ("pinvoke.stubs", Verdict::Pass),
    ("pinvoke.reverse", Verdict::Pass),
    ("jit.inline-unselected", Verdict::Pass),
    ("jit.inline-selected", Verdict::Pass),
    ("jit.tiering", Verdict::Pass),
    ("jit.r2r-unselected", Verdict::Pass),
    ("jit.r2r-selected", Verdict::Pass),
];

#[test]
fn fixtures_give_the_net10_verdicts() {
    let all: BTreeMap<String, Observations> = super::EXPERIMENTS
        .iter()
        .map(|(name, ..)| (name.to_string(), fixture(name)))
        .collect();
    let rows = evaluate(&all, None);
    let got: Vec<(&str, Verdict)> = rows.iter().map(|r| (r.name, r.verdict)).collect();
    assert_eq!(got, NET10, "rows: {rows:#?}");
}

#[test]
fn without_runtime_async_its_checks_are_na_and_its_probes_do_not_run() {
    let all: BTreeMap<String, Observations> = super::EXPERIMENTS
        .iter()
        .map(|(name, ..)| (name.to_string(), fixture(name)))
        .collect();
    let rows = evaluate_on(&all, None, false);
    for (r, (name, on10)) in rows.iter().zip(NET10) {
        assert_eq!(r.name, *name);
        let want = if NEED_RUNTIME_ASYNC.contains(name) {
            Verdict::NotApplicable
        } else {
            *on10
        };
        assert_eq!(r.verdict, want, "{r:?}");
    }
    for name in NEED_RUNTIME_ASYNC {
        assert!(CHECKS.iter().any(|c| c.name == *name), "no check {name}");
    }
    let modes: Vec<&str> = wanted_experiments(None, false)
        .iter()
        .map(|(_, mode, _)| *mode)
        .collect();
    assert!(
        !modes.contains(&"async") && modes.contains(&"info"),
        "{modes:?}"
    );
    assert_eq!(
        wanted_experiments(None, true).len(),
        super::EXPERIMENTS.len()
    );
    // Only N/A checks selected: nothing to run on .NET 8/9.
    assert!(wanted_experiments(Some("async.*"), false).is_empty());
}

#[test]
fn undisturbed_accepts_a_probe_build_without_runtime_async_only_when_it_says_so() {
    let mut o = fixture("info");
    o.lines.retain(|(k, _)| !k.starts_with("probe.async."));
    assert_eq!(verdict("info.undisturbed", &o), Verdict::Fail);
    o.push("probe.runtime-async", "0");
    assert_eq!(verdict("info.undisturbed", &o), Verdict::Pass);
    remove_first(&mut o, "probe.tail.result", "42");
    assert_eq!(verdict("info.undisturbed", &o), Verdict::Fail);
}

#[test]
fn missing_observations_fail_every_check() {
    let rows = evaluate(&BTreeMap::new(), None);
    assert_eq!(rows.len(), CHECKS.len());
    for r in rows {
        assert_eq!(
            r.verdict,
            Verdict::Fail,
            "{} passes without observations",
            r.name
        );
    }
}

#[test]
fn only_selects_by_substring_or_glob() {
    let rows = evaluate(&BTreeMap::new(), Some("regs.fast"));
    assert_eq!(rows.len(), 5);
    let rows = evaluate(&BTreeMap::new(), Some("*.force-gc"));
    assert_eq!(rows.len(), 1);
    assert!(evaluate(&BTreeMap::new(), Some("nothing")).is_empty());
}

#[test]
fn async_counts_break_on_a_lost_leave_and_accept_suspension_leaves() {
    let mut o = fixture("async");
    let i = o
        .lines
        .iter()
        .position(|(k, v)| k == "event" && v.contains("kind=leave") && v.contains("name=Probes."))
        .expect("a Leave of a probe method");
    o.lines.remove(i);
    assert_eq!(verdict("async.counts", &o), Verdict::Fail);
    let fixed = with_suspension_leaves(&fixture("async"), "");
    assert_eq!(verdict("async.counts", &fixed), Verdict::Pass);
}

#[test]
fn suspension_leave_passes_post_fix_and_fails_when_partial() {
    let o = fixture("async");
    let fixed = with_suspension_leaves(&o, "");
    assert_eq!(verdict("async.suspension-leave", &fixed), Verdict::Pass);
    let mut partial = fixed.clone();
    remove_first(&mut partial, "event", "tid=999");
    assert_eq!(verdict("async.suspension-leave", &partial), Verdict::Fail);
}

#[test]
fn balance_passes_only_when_everything_is_closed() {
    let mut o = fixture("async");
    set(
        &mut o,
        "balance",
        "mismatched=0 unmatched=0 open=0 lost=0 max_depth=3",
    );
    assert_eq!(verdict("async.balance", &o), Verdict::Pass);
    set(
        &mut o,
        "balance",
        "mismatched=0 unmatched=1 open=0 lost=0 max_depth=3",
    );
    assert_eq!(verdict("async.balance", &o), Verdict::Fail);
}

#[test]
fn initial_enter_needs_the_real_argument() {
    let mut o = fixture("info");
    replace(
        &mut o,
        "val0=0x4 name=Probes.AsyncProbe.Work",
        "val0=0x5 name=Probes.AsyncProbe.Work",
        1,
    );
    assert_eq!(verdict("info.enter.initial", &o), Verdict::Fail);
}

#[test]
fn resume_enter_passes_with_the_argument_and_fails_without_resumes() {
    let mut o = fixture("info");
    let n = o
        .lines
        .iter()
        .filter(|(_, v)| v.contains("val0=0x0"))
        .count();
    for (_, v) in o.lines.iter_mut() {
        if v.contains("val0=0x0 name=Probes.AsyncProbe.Work") {
            let arg = if v.ends_with(".Work") { "0x4" } else { "0x2" };
            *v = v.replacen("val0=0x0", &format!("val0={arg}"), 1);
        }
    }
    assert!(n > 0);
    assert_eq!(verdict("info.enter.resume", &o), Verdict::Pass);
    let mut none = fixture("info");
    none.lines.retain(|(_, v)| !v.contains("val0=0x0"));
    assert_eq!(verdict("info.enter.resume", &none), Verdict::Fail);
}

#[test]
fn suspension_leave_query_passes_when_emitted_and_answered() {
    let o = fixture("info");
    let ok = with_suspension_leaves(&o, "hr=0x00000000 frame=1 len=0 val=-");
    assert_eq!(verdict("info.leave.suspension", &ok), Verdict::Pass);
    let bad = with_suspension_leaves(&o, "hr=0x80070057 frame=0 len=0 val=-");
    assert_eq!(verdict("info.leave.suspension", &bad), Verdict::Fail);
    // The completion Leaves are still recognised as such.
    assert_eq!(verdict("info.leave.completion", &ok), Verdict::Pass);
}

#[test]
fn completion_leave_needs_the_raw_value() {
    let mut o = fixture("info");
    replace(&mut o, "len=8 val=0x6 ", "len=8 val=0x7 ", 1);
    assert_eq!(verdict("info.leave.completion", &o), Verdict::Fail);
    let mut o = fixture("info");
    replace(&mut o, "len=4 val=0x40000000", "len=8 val=0x40000000", 1);
    assert_eq!(verdict("info.leave.completion", &o), Verdict::Fail);
}

#[test]
fn tailcall_needs_s_ok_and_the_callee_enter() {
    let mut o2 = fixture("info");
    for (_, v) in o2.lines.iter_mut() {
        if v.starts_with("kind=tailcall") {
            *v = v.replacen("hr=0x00000000", "hr=0x80070057", 1);
            break;
        }
    }
    assert_eq!(verdict("info.tailcall", &o2), Verdict::Fail);
    let mut o3 = fixture("info");
    remove_first(&mut o3, "event", "name=Probes.Emitted.Callee");
    assert_eq!(verdict("info.tailcall", &o3), Verdict::Fail);
}

#[test]
fn a_tailcall_from_an_async_method_fails() {
    let mut o = fixture("info");
    for (_, v) in o.lines.iter_mut() {
        if v.starts_with("kind=leave") && v.contains("AsyncProbe.Work") {
            *v = v.replacen("kind=leave", "kind=tailcall", 1);
            break;
        }
    }
    assert_eq!(verdict("info.async-no-tailcall", &o), Verdict::Fail);
}

#[test]
fn a_disturbed_program_fails() {
    for (key, value) in [
        ("exit.code", "3"),
        ("probe.ok", "0"),
        ("probe.async.work_total", "29"),
    ] {
        let mut o = fixture("info");
        set(&mut o, key, value);
        assert_eq!(
            verdict("info.undisturbed", &o),
            Verdict::Fail,
            "{key}={value}"
        );
    }
}

#[test]
fn register_checks_turn_red() {
    let mut o = fixture("regs-slow");
    set(&mut o, "exit.code", "3");
    assert_eq!(verdict("regs.slow.clobber-all", &o), Verdict::Fail);

    // The RCX finding: a crash after a Leave on .NET 10 DIFFERS; on a later runtime, or
    // before any Leave, it FAILs; a correct program PASSes.
    let mut o = fixture("regs-slow-async");
    set(&mut o, "runtime", "CoreCLR 11.0.0");
    assert_eq!(verdict("regs.slow.async-rcx", &o), Verdict::Fail);
    let mut o = fixture("regs-slow-async");
    o.lines.retain(|(k, _)| k != "slow.first_leave");
    assert_eq!(verdict("regs.slow.async-rcx", &o), Verdict::Fail);
    let mut o = fixture("regs-slow-async-rcx0");
    set(&mut o, "experiment", "regs-slow-async");
    assert_eq!(verdict("regs.slow.async-rcx", &o), Verdict::Pass);
    let mut o = fixture("regs-slow-async-rcx0");
    o.lines.retain(|(k, _)| k != "exit.code" && k != "shutdown");
    o.push("exit.signal", "6");
    assert_eq!(verdict("regs.slow.async-rcx0", &o), Verdict::Fail);

    let mut o = fixture("fast-trash");
    o.lines.retain(|(k, _)| k != "exit.code");
    o.push("exit.signal", "11");
    assert_eq!(verdict("regs.fast.trash-sets", &o), Verdict::Fail);

    for (key, value) in [
        ("fast.enter_rdi_tagged", "1"),
        ("fast.enter_r14_tagged", "2400"),
        ("fast.leaf_sp_match", "299"),
        ("fast.leave_rdi_tagged", "0"),
    ] {
        let mut o = fixture("fast-trash");
        set(&mut o, key, value);
        assert_eq!(
            verdict("regs.fast.parameters", &o),
            Verdict::Fail,
            "{key}={value}"
        );
    }

    // A "forbidden" register whose overwrite leaves the program correct is not live.
    let survived = fixture("fast-trash");
    for name in ["regs.fast.rax-after-leave", "regs.fast.rdi-after-enter"] {
        assert_eq!(verdict(name, &survived), Verdict::Fail, "{name}");
    }
    let mut wrong = fixture("fast-trash");
    set(&mut wrong, "exit.code", "3");
    assert_eq!(verdict("regs.fast.rax-after-leave", &wrong), Verdict::Pass);
    assert_eq!(verdict("regs.fast.r14-after-enter", &wrong), Verdict::Fail);
    assert_eq!(
        verdict(
            "regs.fast.r14-after-enter",
            &fixture("fast-rax-after-leave")
        ),
        Verdict::Fail
    );

    // Without a working setup nothing is confirmed.
    let mut unset = fixture("fast-rax-after-leave");
    set(&mut unset, "init", "0x80131374");
    assert_eq!(verdict("regs.fast.rax-after-leave", &unset), Verdict::Fail);
}

#[test]
fn snapshot_and_force_gc_verdicts() {
    let mut o = fixture("snapshot");
    for (_, v) in o.lines.iter_mut() {
        if v.starts_with("hr=0x80004005 frames=0") {
            *v = v.replacen("hr=0x80004005 frames=0", "hr=0x00000000 frames=4", 1);
        }
    }
    assert_eq!(verdict("hook.stack-snapshot", &o), Verdict::Pass);
    let mut o = fixture("snapshot");
    replace(
        &mut o,
        "hr=0x80004005 frames=0",
        "hr=0x8013136f frames=0",
        1,
    );
    assert_eq!(verdict("hook.stack-snapshot", &o), Verdict::Fail);

    let mut o = fixture("snapshot");
    replace(&mut o, "hr=0x80131363", "hr=0x00000000", 1);
    assert_eq!(verdict("hook.force-gc", &o), Verdict::Fail);
}

#[test]
fn flag_checks_turn_red() {
    for key in [
        "hooks.with_info_without_slow_flags",
        "hooks.fast_with_frame_info",
        "mask.clear_slow_flags_with_info_hooks",
    ] {
        let mut o = fixture("flags");
        set(&mut o, key, "0x00000000");
        assert_eq!(verdict("flags.inconsistent", &o), Verdict::Fail, "{key}");
    }
    let mut o = fixture("flags");
    set(&mut o, "mask.late_add_args", "0x00000000");
    assert_eq!(verdict("flags.slow-after-startup", &o), Verdict::Fail);
    let mut o = fixture("flags");
    set(&mut o, "mask.late_clear_enterleave", "0x80004005");
    assert_eq!(verdict("flags.enterleave-after-startup", &o), Verdict::Fail);
}

#[test]
fn pinvoke_checks_turn_red() {
    let mut o = fixture("pinvoke");
    o.push(
        "event",
        "kind=enter tid=1 fid=0x99 name=Probes.PInvokeProbe.GetPid",
    );
    assert_eq!(verdict("pinvoke.stubs", &o), Verdict::Differs);
    assert_eq!(
        verdict("pinvoke.reverse", &fixture("pinvoke")),
        Verdict::Pass
    );
    let mut o3 = fixture("pinvoke");
    let i = o3
        .lines
        .iter()
        .position(|(k, v)| k == "event" && v.starts_with("kind=leave") && v.ends_with(".Compare"))
        .expect("a Compare leave");
    o3.lines.remove(i);
    assert_eq!(verdict("pinvoke.reverse", &o3), Verdict::Fail);
    let mut o4 = fixture("pinvoke");
    set(&mut o4, "probe.pinvoke.compares", "47");
    assert_eq!(verdict("pinvoke.reverse", &o4), Verdict::Fail);
}

#[test]
fn continuation_arg_fails_when_a_call_looks_like_a_resume() {
    let o = fixture("async");
    assert_eq!(verdict("async.continuation-arg", &o), Verdict::Pass);
    let mut wrong = o.clone();
    replace(&mut wrong, "value=0x0 ", "value=0x7f0000001000 ", 1);
    assert_eq!(verdict("async.continuation-arg", &wrong), Verdict::Fail);
    let mut none = o.clone();
    none.lines
        .retain(|(k, v)| k != "event" || !v.contains("kind=continuation"));
    assert_eq!(verdict("async.continuation-arg", &none), Verdict::Fail);
}

#[test]
fn continuation_generic_needs_both_instantiations_right() {
    let o = fixture("async");
    assert_eq!(verdict("async.continuation-generic", &o), Verdict::Pass);
    // A call of Echo that looks like a resume (the register of the wrong argument).
    let mut wrong = o.clone();
    let i = wrong
        .lines
        .iter()
        .position(|(k, v)| {
            k == "event"
                && v.contains("kind=continuation")
                && v.contains("value=0x0 ")
                && v.ends_with("Echo``1")
        })
        .expect("a null continuation of Echo");
    wrong.lines[i].1 = wrong.lines[i]
        .1
        .replace("value=0x0 ", "value=0x7f0000001000 ");
    assert_eq!(verdict("async.continuation-generic", &wrong), Verdict::Fail);
    // Only one instantiation recorded (shared code left out).
    let fids: Vec<String> = o
        .lines
        .iter()
        .filter(|(k, v)| k == "event" && v.contains("kind=continuation") && v.ends_with("Echo``1"))
        .filter_map(|(_, v)| {
            v.split_whitespace()
                .find(|w| w.starts_with("fid="))
                .map(String::from)
        })
        .collect();
    let mut one = o.clone();
    one.lines.retain(|(k, v)| {
        k != "event" || !(v.contains("kind=continuation") && v.contains(fids[0].as_str()))
    });
    assert_eq!(verdict("async.continuation-generic", &one), Verdict::Fail);
}

#[test]
fn continuation_alloc_needs_every_resume_allocated() {
    let o = fixture("async");
    assert_eq!(verdict("async.continuation-alloc", &o), Verdict::Pass);
    // A resume whose continuation no suspension allocated.
    let mut lost = o.clone();
    let i = lost
        .lines
        .iter()
        .position(|(k, v)| {
            k == "event"
                && v.contains("kind=continuation")
                && v.contains("AsyncHelpers.AllocContinuation")
        })
        .expect("an allocation");
    lost.lines.remove(i);
    assert_eq!(verdict("async.continuation-alloc", &lost), Verdict::Fail);
    // No allocations recorded at all.
    let mut none = o.clone();
    none.lines
        .retain(|(k, v)| k != "event" || !v.contains("AsyncHelpers.AllocContinuation"));
    assert_eq!(verdict("async.continuation-alloc", &none), Verdict::Fail);
}

#[test]
fn state_machine_box_needs_every_resume_in_a_box() {
    let o = fixture("async");
    assert_eq!(verdict("async.state-machine-box", &o), Verdict::Pass);
    // One call's box never recorded: its resumes' `this` lie in no box.
    let first = o
        .lines
        .iter()
        .find(|(k, v)| k == "event" && v.contains(".GetStateMachineBox"))
        .and_then(|(_, v)| super::obs::fields(v).get("value").cloned())
        .expect("a box");
    let mut lost = o.clone();
    lost.lines.retain(|(k, v)| {
        k != "event" || !(v.contains(".GetStateMachineBox") && v.contains(&first))
    });
    assert_eq!(verdict("async.state-machine-box", &lost), Verdict::Fail);
    // No `this` recorded for the state machine.
    let mut none = o.clone();
    none.lines.retain(|(k, v)| {
        k != "event" || !(v.contains("kind=continuation") && v.contains("<Classic>"))
    });
    assert_eq!(verdict("async.state-machine-box", &none), Verdict::Fail);
}

#[test]
fn iterator_this_needs_one_object_per_enumeration() {
    let o = fixture("async");
    assert_eq!(verdict("async.iterator-this", &o), Verdict::Pass);
    // One get_Current's `this` another object: it names no enumerator.
    let mut other = o.clone();
    let i = other
        .lines
        .iter()
        .position(|(k, v)| {
            k == "event"
                && v.contains("kind=continuation")
                && v.contains("<Count3>")
                && v.contains("get_Current")
        })
        .expect("a get_Current this");
    other.lines[i].1 = other.lines[i].1.replacen("value=0x", "value=0x1", 1);
    assert_eq!(verdict("async.iterator-this", &other), Verdict::Fail);
    // No `this` recorded for the iterator's members.
    let mut none = o.clone();
    none.lines.retain(|(k, v)| {
        k != "event" || !(v.contains("kind=continuation") && v.contains("<Count3>"))
    });
    assert_eq!(verdict("async.iterator-this", &none), Verdict::Fail);
}
