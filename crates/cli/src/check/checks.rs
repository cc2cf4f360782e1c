//! The checks: each is a pure function from one experiment's [`Observations`] to a [`Row`]
//! (expected per the documented contract, observed, verdict). The numbers they expect follow
//! from the probe program's code (tests/apps/Probes) and the contract sources cited in
//! docs/abi.md.

use std::collections::BTreeMap;

use eltrace_trace::protocol::experiment;

use super::obs::{Event, Observations};

/// PASS: as documented. DIFFERS: a documented behaviour difference (e.g. a pre-fix runtime).
/// FAIL: neither. N/A: the check needs runtime async, which the runtime does not have
/// (.NET 8 and 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Differs,
    NotApplicable,
}

impl Verdict {
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Differs => "DIFFERS",
            Verdict::NotApplicable => "N/A",
        }
    }
}

/// One line of the `check` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: &'static str,
    pub expected: String,
    pub observed: String,
    pub verdict: Verdict,
}

/// A check: its name, the experiment whose observations it reads, and its function.
pub struct Check {
    pub name: &'static str,
    pub experiment: &'static str,
    pub eval: fn(&Observations) -> Row,
}

pub const S_OK: u32 = 0;
pub const E_FAIL: u32 = 0x8000_4005;
pub const CORPROF_E_INCONSISTENT_WITH_FLAGS: u32 = 0x8013_1374;
pub const CORPROF_E_UNSUPPORTED_CALL_SEQUENCE: u32 = 0x8013_1363;

/// The checks that need runtime-async methods (the probes in tests/apps/Probes/RuntimeAsync):
/// N/A on a runtime without runtime async, whose probe build leaves those probes out.
pub const NEED_RUNTIME_ASYNC: &[&str] = &[
    "async.counts",
    "async.suspension-leave",
    "async.balance",
    "info.enter.initial",
    "info.enter.resume",
    "info.leave.suspension",
    "info.leave.completion",
    "info.async-no-tailcall",
    "regs.slow.async-rcx",
    "regs.slow.async-rcx0",
];

/// The N/A row of a check that needs runtime async.
pub fn not_applicable(name: &'static str) -> Row {
    row(
        name,
        "(runtime-async methods)",
        "no runtime async before .NET 10: the probe build for this runtime has none".into(),
        Verdict::NotApplicable,
    )
}

/// Every check, in table order.
pub const CHECKS: &[Check] = &[
    Check {
        name: "async.counts",
        experiment: experiment::ASYNC,
        eval: async_counts,
    },
    Check {
        name: "async.suspension-leave",
        experiment: experiment::ASYNC,
        eval: async_suspension_leave,
    },
    Check {
        name: "async.balance",
        experiment: experiment::ASYNC,
        eval: async_balance,
    },
    Check {
        name: "info.enter.initial",
        experiment: experiment::INFO,
        eval: info_enter_initial,
    },
    Check {
        name: "info.enter.resume",
        experiment: experiment::INFO,
        eval: info_enter_resume,
    },
    Check {
        name: "info.leave.suspension",
        experiment: experiment::INFO,
        eval: info_leave_suspension,
    },
    Check {
        name: "info.leave.completion",
        experiment: experiment::INFO,
        eval: info_leave_completion,
    },
    Check {
        name: "info.tailcall",
        experiment: experiment::INFO,
        eval: info_tailcall,
    },
    Check {
        name: "info.async-no-tailcall",
        experiment: experiment::INFO,
        eval: info_async_no_tailcall,
    },
    Check {
        name: "info.undisturbed",
        experiment: experiment::INFO,
        eval: info_undisturbed,
    },
    Check {
        name: "regs.slow.clobber-all",
        experiment: experiment::REGS_SLOW,
        eval: regs_slow,
    },
    Check {
        name: "regs.slow.async-rcx",
        experiment: experiment::REGS_SLOW_ASYNC,
        eval: regs_slow_async,
    },
    Check {
        name: "regs.slow.async-rcx0",
        experiment: experiment::REGS_SLOW_ASYNC_RCX0,
        eval: regs_slow_async_rcx0,
    },
    Check {
        name: "regs.fast.trash-sets",
        experiment: experiment::FAST_TRASH,
        eval: fast_trash,
    },
    Check {
        name: "regs.fast.parameters",
        experiment: experiment::FAST_TRASH,
        eval: fast_parameters,
    },
    Check {
        name: "regs.fast.rax-after-leave",
        experiment: experiment::FAST_RAX_AFTER_LEAVE,
        eval: fast_rax,
    },
    Check {
        name: "regs.fast.rdi-after-enter",
        experiment: experiment::FAST_RDI_AFTER_ENTER,
        eval: fast_rdi,
    },
    Check {
        name: "regs.fast.r14-after-enter",
        experiment: experiment::FAST_R14_AFTER_ENTER,
        eval: fast_r14,
    },
    Check {
        name: "hook.stack-snapshot",
        experiment: experiment::SNAPSHOT,
        eval: stack_snapshot,
    },
    Check {
        name: "hook.force-gc",
        experiment: experiment::SNAPSHOT,
        eval: force_gc,
    },
    Check {
        name: "flags.inconsistent",
        experiment: experiment::FLAGS,
        eval: flags_inconsistent,
    },
    Check {
        name: "flags.slow-after-startup",
        experiment: experiment::FLAGS,
        eval: flags_after_startup,
    },
    Check {
        name: "flags.enterleave-after-startup",
        experiment: experiment::FLAGS,
        eval: flags_enterleave_late,
    },
    Check {
        name: "pinvoke.stubs",
        experiment: experiment::PINVOKE,
        eval: pinvoke_stubs,
    },
    Check {
        name: "pinvoke.reverse",
        experiment: experiment::PINVOKE,
        eval: pinvoke_reverse,
    },
];

fn row(name: &'static str, expected: &str, observed: String, verdict: Verdict) -> Row {
    Row {
        name,
        expected: expected.to_string(),
        observed,
        verdict,
    }
}

fn pass_if(ok: bool) -> Verdict {
    if ok { Verdict::Pass } else { Verdict::Fail }
}

/// `0x80004005 (E_FAIL)` and friends.
pub fn hr_text(hr: Option<u32>) -> String {
    let Some(hr) = hr else { return "none".into() };
    let name = match hr {
        S_OK => "S_OK",
        E_FAIL => "E_FAIL",
        CORPROF_E_INCONSISTENT_WITH_FLAGS => "CORPROF_E_INCONSISTENT_WITH_FLAGS",
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE => "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE",
        0x8007_0057 => "E_INVALIDARG",
        0x8013_136F => "CORPROF_E_STACKSNAPSHOT_UNSAFE",
        0x8000_4001 => "E_NOTIMPL",
        _ => return format!("{hr:#010x}"),
    };
    if hr == S_OK {
        name.into()
    } else {
        format!("{name} ({hr:#010x})")
    }
}

/// A setup failure or crash before any observation, in words (for FAIL rows).
fn not_run(o: &Observations) -> Option<String> {
    if o.initialized() {
        None
    } else if let Some(e) = o.get("error") {
        Some(format!("experiment not set up: {e}; {}", o.exit_text()))
    } else {
        Some(format!(
            "experiment not set up (no `init` line); {}",
            o.exit_text()
        ))
    }
}

// ---- 1. Async pairing --------------------------------------------------------------------

/// The runtime-async methods of the probe (AsyncProbe.cs): name, calls, awaits per call, and
/// the raw completion value the async variant's Leave carries (length, little-endian bits).
pub const ASYNC_METHODS: [(&str, u64, u64, u64, u64); 4] = [
    ("Probes.AsyncProbe.Work", 5, 4, 8, 6),
    ("Probes.AsyncProbe.WorkVoid", 2, 2, 0, 0),
    (
        "Probes.AsyncProbe.WorkDouble",
        2,
        2,
        8,
        0x4000_0000_0000_0000,
    ),
    ("Probes.AsyncProbe.WorkFloat", 2, 2, 4, 0x4000_0000),
];

/// Enter/Leave/Tailcall counts of one FunctionID.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub enter: u64,
    pub leave: u64,
    pub tailcall: u64,
}

/// A runtime-async method's two FunctionIDs: the Task-returning thunk (entered first) and
/// the async variant (entered from the thunk, and again at every resumption).
#[derive(Debug, Clone, Default)]
pub struct AsyncPair {
    pub thunk: Option<(u64, Counts)>,
    pub variant: Option<(u64, Counts)>,
    pub extra_fids: usize,
}

/// Groups events of `name` by FunctionID in order of first appearance.
pub fn async_pair(events: &[Event], name: &str) -> AsyncPair {
    let mut order: Vec<u64> = Vec::new();
    let mut counts: BTreeMap<u64, Counts> = BTreeMap::new();
    for e in events.iter().filter(|e| e.name == name) {
        if !order.contains(&e.fid) {
            order.push(e.fid);
        }
        let c = counts.entry(e.fid).or_default();
        match e.kind.as_str() {
            "enter" => c.enter += 1,
            "leave" => c.leave += 1,
            _ => c.tailcall += 1,
        }
    }
    let get = |i: usize| order.get(i).map(|f| (*f, counts[f]));
    AsyncPair {
        thunk: get(0),
        variant: get(1),
        extra_fids: order.len().saturating_sub(2),
    }
}

fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

fn counts_text(c: Option<(u64, Counts)>) -> String {
    c.map_or("-".into(), |(_, c)| format!("{}/{}", c.enter, c.leave))
}

fn async_counts(o: &Observations) -> Row {
    const EXP: &str = "per method: thunk Enter=Leave=calls; async variant Enter=calls×(1+awaits) \
                       (initial + one per resume), Leave=calls (+awaits if suspension Leaves)";
    let events = o.events();
    let mut parts = Vec::new();
    let mut ok = !events.is_empty();
    for (name, calls, awaits, _, _) in ASYNC_METHODS {
        let p = async_pair(&events, name);
        parts.push(format!(
            "{} thunk {} variant {}",
            short(name),
            counts_text(p.thunk),
            counts_text(p.variant)
        ));
        let thunk_ok = p
            .thunk
            .is_some_and(|(_, c)| c.enter == calls && c.leave == calls);
        let variant_ok = p.variant.is_some_and(|(_, c)| {
            c.enter == calls * (1 + awaits) && (c.leave == calls || c.leave == c.enter)
        });
        ok &= thunk_ok && variant_ok && p.extra_fids == 0;
    }
    let observed = if events.is_empty() {
        format!("no events; {}", o.exit_text())
    } else {
        format!("Enter/Leave: {}", parts.join("; "))
    };
    row("async.counts", EXP, observed, pass_if(ok))
}

fn async_suspension_leave(o: &Observations) -> Row {
    const EXP: &str = "a Leave at every suspension (async variant Leave = Enter)";
    let events = o.events();
    let (mut all_paired, mut none_at_suspension, mut missing) = (true, true, false);
    let mut total_susp = 0;
    for (name, calls, awaits, _, _) in ASYNC_METHODS {
        match async_pair(&events, name).variant {
            Some((_, c)) => {
                all_paired &= c.leave == c.enter;
                none_at_suspension &= c.leave == calls && c.enter == calls * (1 + awaits);
                total_susp += calls * awaits;
            }
            None => missing = true,
        }
    }
    let (observed, verdict) = if missing {
        (
            format!("async variant events missing; {}", o.exit_text()),
            Verdict::Fail,
        )
    } else if all_paired {
        ("a Leave at each suspension".to_string(), Verdict::Pass)
    } else if none_at_suspension {
        (
            format!("pre-fix runtime: no Leave at suspension (0 of {total_susp})"),
            Verdict::Differs,
        )
    } else {
        ("Leaves at some suspensions only".to_string(), Verdict::Fail)
    };
    row("async.suspension-leave", EXP, observed, verdict)
}

fn async_balance(o: &Observations) -> Row {
    const EXP: &str = "after eltrace's analysis: 0 mismatched, 0 unmatched, 0 open at end";
    let Some(b) = o.get("balance") else {
        return row(
            "async.balance",
            EXP,
            format!("no analysis; {}", o.exit_text()),
            Verdict::Fail,
        );
    };
    let f = super::obs::fields(b);
    let n = |k: &str| {
        f.get(k)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    };
    let (m, u, open, lost) = (n("mismatched"), n("unmatched"), n("open"), n("lost"));
    let observed = format!(
        "{m} mismatched, {u} unmatched, {open} open at end, {lost} lost, max depth {}",
        f.get("max_depth").map_or("?", String::as_str)
    );
    row(
        "async.balance",
        EXP,
        observed,
        pass_if(m == 0 && u == 0 && open == 0 && lost == 0),
    )
}

// ---- 2. Info queries ---------------------------------------------------------------------

/// What a variant event is, from the order of events (calls are sequential in the probe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    ThunkEnter,
    ThunkLeave,
    InitialEnter,
    ResumeEnter,
    SuspensionLeave,
    CompletionLeave,
}

/// Classifies the events of one async method: a variant Enter right after the thunk's
/// Enter on the same thread is the initial one, any other a resumption; a variant Leave
/// followed (in log order) by a resumption is a suspension Leave, otherwise a completion.
pub fn phases<'a>(events: &'a [Event], name: &str) -> Vec<(Phase, &'a Event)> {
    let p = async_pair(events, name);
    let (Some((thunk, _)), Some((variant, _))) = (p.thunk, p.variant) else {
        return Vec::new();
    };
    let mut out: Vec<(Phase, &Event)> = Vec::new();
    let mut last_on_thread: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    for e in events {
        let prev = last_on_thread.insert(e.tid, (e.fid, e.kind.clone()));
        if e.name != name {
            continue;
        }
        let phase = match (e.fid == thunk, e.kind.as_str()) {
            (true, "enter") => Phase::ThunkEnter,
            (true, _) => Phase::ThunkLeave,
            (false, "enter") if prev == Some((thunk, "enter".into())) && e.fid == variant => {
                Phase::InitialEnter
            }
            (false, "enter") => Phase::ResumeEnter,
            (false, _) => Phase::CompletionLeave,
        };
        out.push((phase, e));
    }
    // A variant Leave whose next variant event is a resumption was a suspension.
    for i in 0..out.len() {
        if out[i].0 != Phase::CompletionLeave {
            continue;
        }
        let next = out[i + 1..]
            .iter()
            .find(|(ph, _)| !matches!(ph, Phase::ThunkEnter | Phase::ThunkLeave));
        if matches!(next, Some((Phase::ResumeEnter, _))) {
            out[i].0 = Phase::SuspensionLeave;
        }
    }
    out
}

/// `S_OK 1×4B=0x4`: an Enter's GetFunctionEnter3Info result.
fn enter_info_text(e: &Event) -> String {
    let hr = hr_text(e.hr());
    match (e.num("ranges"), e.num("len0"), e.field("val0")) {
        (Some(1), Some(l), Some(v)) => format!("{hr} 1×{l}B={v}"),
        (Some(n), _, _) => format!("{hr} {n} ranges"),
        _ => hr,
    }
}

fn arg_of(name: &str) -> u64 {
    if name.ends_with(".Work") { 4 } else { 2 }
}

fn enter_has_arg(e: &Event) -> bool {
    e.hr() == Some(S_OK)
        && e.num("ranges") == Some(1)
        && e.num("len0") == Some(4)
        && e.num("val0") == Some(arg_of(&e.name))
}

fn distinct(mut v: Vec<String>) -> String {
    v.sort();
    v.dedup();
    v.join(", ")
}

fn info_enter_initial(o: &Observations) -> Row {
    const EXP: &str = "GetFunctionEnter3Info S_OK, 1 range of 4 bytes = the argument (4 or 2)";
    if let Some(why) = not_run(o) {
        return row("info.enter.initial", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let mut seen = Vec::new();
    let mut ok = true;
    let mut n = 0;
    for (name, calls, ..) in ASYNC_METHODS {
        let initial: Vec<&Event> = phases(&events, name)
            .into_iter()
            .filter(|(p, _)| matches!(p, Phase::InitialEnter | Phase::ThunkEnter))
            .map(|(_, e)| e)
            .collect();
        ok &= initial.len() as u64 == 2 * calls && initial.iter().all(|e| enter_has_arg(e));
        n += initial.len();
        seen.extend(
            initial
                .iter()
                .map(|e| format!("{} {}", short(name), enter_info_text(e))),
        );
    }
    let observed = format!("{n} initial Enters (thunk and variant): {}", distinct(seen));
    row("info.enter.initial", EXP, observed, pass_if(ok && n > 0))
}

fn info_enter_resume(o: &Observations) -> Row {
    const EXP: &str = "S_OK, 1 range of 4 bytes = the argument (docs do not cover resumption)";
    if let Some(why) = not_run(o) {
        return row("info.enter.resume", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let mut seen = Vec::new();
    let mut all_ok = true;
    let mut n = 0;
    for (name, ..) in ASYNC_METHODS {
        for (p, e) in phases(&events, name) {
            if p == Phase::ResumeEnter {
                n += 1;
                all_ok &= enter_has_arg(e);
                seen.push(enter_info_text(e));
            }
        }
    }
    let (observed, verdict) = if n == 0 {
        (
            format!("no resumption Enter seen; {}", o.exit_text()),
            Verdict::Fail,
        )
    } else if all_ok {
        (
            format!("{n} resumption Enters: {}", distinct(seen)),
            Verdict::Pass,
        )
    } else {
        (
            format!(
                "{n} resumption Enters: {}: the range does not hold the argument at a resume",
                distinct(seen)
            ),
            Verdict::Differs,
        )
    };
    row("info.enter.resume", EXP, observed, verdict)
}

fn leave_text(e: &Event) -> String {
    match e.num("len") {
        Some(0) => format!("{} none", hr_text(e.hr())),
        Some(l) => format!("{} {l}B={}", hr_text(e.hr()), e.field("val").unwrap_or("?")),
        None => hr_text(e.hr()),
    }
}

fn info_leave_suspension(o: &Observations) -> Row {
    const EXP: &str = "GetFunctionLeave3Info S_OK at each suspension Leave";
    if let Some(why) = not_run(o) {
        return row("info.leave.suspension", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let leaves: Vec<&Event> = ASYNC_METHODS
        .iter()
        .flat_map(|m| phases(&events, m.0))
        .filter(|(p, _)| *p == Phase::SuspensionLeave)
        .map(|(_, e)| e)
        .collect();
    let resumes = ASYNC_METHODS
        .iter()
        .flat_map(|m| phases(&events, m.0))
        .filter(|(p, _)| *p == Phase::ResumeEnter)
        .count();
    let (observed, verdict) = if resumes == 0 {
        (
            format!("no suspension seen; {}", o.exit_text()),
            Verdict::Fail,
        )
    } else if leaves.is_empty() {
        (
            format!("none emitted at {resumes} suspensions (pre-fix runtime): nothing to query"),
            Verdict::Differs,
        )
    } else {
        let ok = leaves.iter().all(|e| e.hr() == Some(S_OK));
        let seen = distinct(leaves.iter().map(|e| leave_text(e)).collect());
        (
            format!("{} suspension Leaves: {seen}", leaves.len()),
            pass_if(ok),
        )
    };
    row("info.leave.suspension", EXP, observed, verdict)
}

fn info_leave_completion(o: &Observations) -> Row {
    const EXP: &str = "S_OK with the raw T: Work 8B=6, WorkVoid none, WorkDouble 8B=2.0, \
                       WorkFloat 4B=2.0f";
    if let Some(why) = not_run(o) {
        return row("info.leave.completion", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let mut ok = true;
    let mut parts = Vec::new();
    for (name, calls, _, len, bits) in ASYNC_METHODS {
        let done: Vec<&Event> = phases(&events, name)
            .into_iter()
            .filter(|(p, _)| *p == Phase::CompletionLeave)
            .map(|(_, e)| e)
            .collect();
        let right = |e: &&Event| {
            e.hr() == Some(S_OK)
                && e.num("len") == Some(len)
                && (len == 0 || e.num("val") == Some(bits))
        };
        ok &= done.len() as u64 == calls && done.iter().all(right);
        let shown = distinct(done.iter().map(|e| leave_text(e)).collect());
        parts.push(format!("{} ×{} {}", short(name), done.len(), shown));
    }
    row("info.leave.completion", EXP, parts.join("; "), pass_if(ok))
}

fn info_tailcall(o: &Observations) -> Row {
    const EXP: &str = "Emitted.Caller: 3 Tailcalls, GetFunctionTailcall3Info S_OK with frame \
                       info, then Callee's Enter";
    if let Some(why) = not_run(o) {
        return row("info.tailcall", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let mut n = 0;
    let mut ok = true;
    let mut seen = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if e.kind != "tailcall" || e.name != "Probes.Emitted.Caller" {
            continue;
        }
        n += 1;
        let next = events[i + 1..].iter().find(|x| x.tid == e.tid);
        let next_ok = next.is_some_and(|x| x.kind == "enter" && x.name == "Probes.Emitted.Callee");
        ok &= e.hr() == Some(S_OK) && e.field("frame") == Some("1") && next_ok;
        seen.push(format!(
            "{} frame={}{}",
            hr_text(e.hr()),
            e.field("frame").unwrap_or("?"),
            if next_ok {
                ", then Callee Enter"
            } else {
                ", no Callee Enter next"
            }
        ));
    }
    let observed = format!("{n} Tailcalls: {}", distinct(seen));
    row("info.tailcall", EXP, observed, pass_if(ok && n == 3))
}

fn info_async_no_tailcall(o: &Observations) -> Row {
    const EXP: &str = "no Tailcall events from runtime-async methods";
    if let Some(why) = not_run(o) {
        return row("info.async-no-tailcall", EXP, why, Verdict::Fail);
    }
    let events = o.events();
    let asynchronous: Vec<&Event> = events
        .iter()
        .filter(|e| e.name.starts_with("Probes.AsyncProbe.Work"))
        .collect();
    let tail = asynchronous.iter().filter(|e| e.kind == "tailcall").count();
    let observed = format!(
        "{tail} Tailcalls among {} async-method events",
        asynchronous.len()
    );
    row(
        "info.async-no-tailcall",
        EXP,
        observed,
        pass_if(tail == 0 && !asynchronous.is_empty()),
    )
}

fn info_undisturbed(o: &Observations) -> Row {
    const EXP: &str = "the queries do not disturb the program: exit 0, Work total 30, tail 42";
    let total = o.num("probe.async.work_total");
    let tails: Vec<&str> = o.all("probe.tail.result").collect();
    // A probe build without runtime async (for .NET 8 and 9) runs the tail-call probe alone.
    let no_async = o.get("probe.runtime-async") == Some("0");
    let ok = o.program_ok()
        && (no_async || total == Some(30))
        && tails.len() == 3
        && tails.iter().all(|t| *t == "42");
    let observed = format!(
        "{}, Work total {}, tail results {}",
        o.exit_text(),
        if no_async {
            "not run (no runtime async)".into()
        } else {
            total.map_or("-".into(), |t| t.to_string())
        },
        if tails.is_empty() {
            "-".into()
        } else {
            tails.join(",")
        }
    );
    row("info.undisturbed", EXP, observed, pass_if(ok))
}

// ---- 3./4. Registers ---------------------------------------------------------------------

fn regs_slow(o: &Observations) -> Row {
    const EXP: &str = "program correct although the WithInfo hooks overwrite RAX RCX RDX RSI \
                       RDI R8-R11 XMM0-15 (the runtime's stubs save what the JIT needs)";
    if let Some(why) = not_run(o) {
        return row("regs.slow.clobber-all", EXP, why, Verdict::Fail);
    }
    let (e, l) = (
        o.num("slow.enters").unwrap_or(0),
        o.num("slow.leaves").unwrap_or(0),
    );
    let observed = format!(
        "{}, results {}, {e} Enter / {l} Leave hooks",
        o.exit_text(),
        if o.program_ok() { "right" } else { "wrong" }
    );
    row(
        "regs.slow.clobber-all",
        EXP,
        observed,
        pass_if(o.program_ok() && e > 0 && e == l),
    )
}

/// The CoreCLR major version in the `runtime` line (`CoreCLR 10.0.12` → 10).
fn runtime_major(o: &Observations) -> Option<u32> {
    o.get("runtime")?
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn regs_slow_async(o: &Observations) -> Row {
    const NAME: &str = "regs.slow.async-rcx";
    const EXP: &str = "runtime-async probe correct although the WithInfo hooks overwrite the \
                       volatile registers, RCX included (RCX carries a variant's continuation)";
    if let Some(why) = not_run(o) {
        return row(NAME, EXP, why, Verdict::Fail);
    }
    let (e, l) = (
        o.num("slow.enters").unwrap_or(0),
        o.num("slow.leaves").unwrap_or(0),
    );
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

fn regs_slow_async_rcx0(o: &Observations) -> Row {
    const NAME: &str = "regs.slow.async-rcx0";
    const EXP: &str = "runtime-async probe correct with the same hooks when the Leave hook \
                       returns with RCX = 0 (eltrace's workaround)";
    if let Some(why) = not_run(o) {
        return row(NAME, EXP, why, Verdict::Fail);
    }
    let (e, l) = (
        o.num("slow.enters").unwrap_or(0),
        o.num("slow.leaves").unwrap_or(0),
    );
    let observed = format!(
        "{}, results {}, {e} Enter / {l} Leave hooks",
        o.exit_text(),
        if o.program_ok() { "right" } else { "wrong" }
    );
    row(NAME, EXP, observed, pass_if(o.program_ok() && l > 0))
}

fn fast_trash(o: &Observations) -> Row {
    const EXP: &str = "program correct with the stubs overwriting exactly the trash sets \
                       (Enter: RAX R10 R11 XMM8-15; Leave/Tailcall: RDI RSI RCX R8-R11 XMM2-15)";
    if let Some(why) = not_run(o) {
        return row("regs.fast.trash-sets", EXP, why, Verdict::Fail);
    }
    let (e, l) = (
        o.num("fast.enters").unwrap_or(0),
        o.num("fast.leaves").unwrap_or(0),
    );
    let observed = format!(
        "{}, results {}, {e} Enter / {l} Leave stubs",
        o.exit_text(),
        if o.program_ok() { "right" } else { "wrong" }
    );
    row(
        "regs.fast.trash-sets",
        EXP,
        observed,
        pass_if(o.program_ok() && e > 0 && e == l),
    )
}

fn fast_parameters(o: &Observations) -> Row {
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
fn live_register(o: &Observations, name: &'static str, expected: &str) -> Row {
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

fn fast_rax(o: &Observations) -> Row {
    live_register(
        o,
        "regs.fast.rax-after-leave",
        "live (return value): the program breaks",
    )
}

fn fast_rdi(o: &Observations) -> Row {
    live_register(
        o,
        "regs.fast.rdi-after-enter",
        "live (first argument): the program breaks",
    )
}

fn fast_r14(o: &Observations) -> Row {
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

fn stack_snapshot(o: &Observations) -> Row {
    const EXP: &str = "documented: S_OK with frames (same thread, unseeded, \
                       COR_PRF_ENABLE_STACK_SNAPSHOT); known: E_FAIL on .NET 10 and 11 \
                       Linux x64 (S_OK on 8 and 9)";
    if let Some(why) = not_run(o) {
        return row("hook.stack-snapshot", EXP, why, Verdict::Fail);
    }
    let snaps: Vec<_> = o.all("snapshot").map(super::obs::fields).collect();
    let hrs: Vec<Option<u32>> = snaps
        .iter()
        .map(|f| f.get("hr").and_then(|h| super::obs::parse_u32(h)))
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

fn force_gc(o: &Observations) -> Row {
    const EXP: &str = "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE (0x80131363)";
    let hrs: Vec<Option<u32>> = o
        .all("forcegc")
        .map(|v| {
            super::obs::fields(v)
                .get("hr")
                .and_then(|h| super::obs::parse_u32(h))
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

fn flags_inconsistent(o: &Observations) -> Row {
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

fn flags_after_startup(o: &Observations) -> Row {
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

fn flags_enterleave_late(o: &Observations) -> Row {
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

fn pinvoke_stubs(o: &Observations) -> Row {
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
            let f = super::obs::fields(m);
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

fn pinvoke_reverse(o: &Observations) -> Row {
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
