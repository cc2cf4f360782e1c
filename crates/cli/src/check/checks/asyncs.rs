//! The checks of runtime-async pairing (async.*; the continuation's are in continuation.rs)
//! and of the info queries at each kind of probe (info.*): each a pure function from an
//! experiment's observations to a [`Row`].

use std::collections::BTreeMap;

use super::row::*;
use crate::check::obs::{Event, Observations};

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
    for e in events
        .iter()
        .filter(|e| e.name == name && e.kind != "continuation")
    {
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

pub(super) fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

pub(super) fn counts_text(c: Option<(u64, Counts)>) -> String {
    c.map_or("-".into(), |(_, c)| format!("{}/{}", c.enter, c.leave))
}

pub(super) fn async_counts(o: &Observations) -> Row {
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

pub(super) fn async_suspension_leave(o: &Observations) -> Row {
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

pub(super) fn async_balance(o: &Observations) -> Row {
    const EXP: &str = "after eltrace's analysis: 0 mismatched, 0 unmatched, 0 open at end";
    let Some(b) = o.get("balance") else {
        return row(
            "async.balance",
            EXP,
            format!("no analysis; {}", o.exit_text()),
            Verdict::Fail,
        );
    };
    let f = crate::check::obs::fields(b);
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
    for e in events.iter().filter(|e| e.kind != "continuation") {
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
pub(super) fn enter_info_text(e: &Event) -> String {
    let hr = hr_text(e.hr());
    match (e.num("ranges"), e.num("len0"), e.field("val0")) {
        (Some(1), Some(l), Some(v)) => format!("{hr} 1×{l}B={v}"),
        (Some(n), _, _) => format!("{hr} {n} ranges"),
        _ => hr,
    }
}

pub(super) fn arg_of(name: &str) -> u64 {
    if name.ends_with(".Work") { 4 } else { 2 }
}

pub(super) fn enter_has_arg(e: &Event) -> bool {
    e.hr() == Some(S_OK)
        && e.num("ranges") == Some(1)
        && e.num("len0") == Some(4)
        && e.num("val0") == Some(arg_of(&e.name))
}

pub(super) fn distinct(mut v: Vec<String>) -> String {
    v.sort();
    v.dedup();
    v.join(", ")
}

pub(super) fn info_enter_initial(o: &Observations) -> Row {
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

pub(super) fn info_enter_resume(o: &Observations) -> Row {
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

pub(super) fn leave_text(e: &Event) -> String {
    match e.num("len") {
        Some(0) => format!("{} none", hr_text(e.hr())),
        Some(l) => format!("{} {l}B={}", hr_text(e.hr()), e.field("val").unwrap_or("?")),
        None => hr_text(e.hr()),
    }
}

pub(super) fn info_leave_suspension(o: &Observations) -> Row {
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

pub(super) fn info_leave_completion(o: &Observations) -> Row {
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

pub(super) fn info_tailcall(o: &Observations) -> Row {
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

pub(super) fn info_async_no_tailcall(o: &Observations) -> Row {
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

pub(super) fn info_undisturbed(o: &Observations) -> Row {
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
