//! The checks of the async continuation (async.continuation-*): what the production
//! profiler records of a runtime-async variant's continuation argument at each Enter, and of
//! the continuation a suspension allocates (docs/abi.md "The async continuation argument",
//! "Continuations at suspension"); and of a classic state machine's box and `this`
//! (async.state-machine-box, "State machines by `this`"); each a pure function from the async
//! experiment's observations to a [`Row`].

use std::collections::{BTreeMap, BTreeSet};

use eltrace_trace::protocol::OBJECT_EPOCH_BITS;

use super::asyncs::{ASYNC_METHODS, async_pair, short};
use super::row::*;
use crate::check::obs::Observations;

/// What the production profiler recorded of each variant Enter's hidden continuation
/// argument (a Continuation event before the Enter: docs/abi.md "The async continuation
/// argument"): null at every first call, an object at every resume.
pub(super) fn async_continuation_arg(o: &Observations) -> Row {
    const EXP: &str = "the async variant's continuation argument at Enter: null at each call \
                       (calls), an object at each resume (calls×awaits)";
    let events = o.events();
    let mut parts = Vec::new();
    let (mut ok, mut none) = (!events.is_empty(), true);
    for (name, calls, awaits, _, _) in ASYNC_METHODS {
        let Some((variant, _)) = async_pair(&events, name).variant else {
            ok = false;
            parts.push(format!("{} no variant", short(name)));
            continue;
        };
        let values: Vec<u64> = events
            .iter()
            .filter(|e| e.kind == "continuation" && e.fid == variant)
            .filter_map(|e| e.num("value"))
            .collect();
        let null = values.iter().filter(|&&v| v == 0).count() as u64;
        let object = values.iter().filter(|&&v| v != 0 && v % 8 == 0).count() as u64;
        none &= values.is_empty();
        ok &= null == calls && object == calls * awaits && values.len() as u64 == null + object;
        parts.push(format!("{} null {null} object {object}", short(name)));
    }
    let (observed, verdict) = if events.is_empty() {
        (format!("no events; {}", o.exit_text()), Verdict::Fail)
    } else if none {
        (
            "no continuation recorded (the profiler found no register for it)".to_string(),
            Verdict::Fail,
        )
    } else {
        (parts.join("; "), pass_if(ok))
    };
    row("async.continuation-arg", EXP, observed, verdict)
}

/// The probe's generic async method: its name, calls per instantiation, awaits per call.
const GENERIC: (&str, u64, u64) = ("Probes.AsyncProbe.Echo``1", 2, 1);

/// The continuation argument of a generic method's variants, in shared code (`Echo<string>`:
/// after the instantiation argument) and in code for one instantiation (`Echo<int>`): null at
/// every call, an object at every resume, for both (docs/abi.md "Generic methods").
pub(super) fn async_continuation_generic(o: &Observations) -> Row {
    const EXP: &str = "a generic method's variant, shared (Echo<string>) and not (Echo<int>): \
                       null at each call, an object at each resume";
    let (name, calls, awaits) = GENERIC;
    let events = o.events();
    let mut by_fid: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e.kind == "continuation" && e.name == name)
    {
        let v = e.num("value").unwrap_or(1);
        let c = by_fid.entry(e.fid).or_default();
        if v == 0 {
            c.0 += 1;
        } else if v % 8 == 0 {
            c.1 += 1;
        }
    }
    let text = by_fid
        .values()
        .map(|(n, b)| format!("null {n} object {b}"))
        .collect::<Vec<_>>()
        .join("; ");
    let (observed, verdict) = if events.is_empty() {
        (format!("no events; {}", o.exit_text()), Verdict::Fail)
    } else if by_fid.is_empty() {
        (
            "no continuation recorded for Echo<T> (the profiler found no register for it)"
                .to_string(),
            Verdict::Fail,
        )
    } else {
        let ok = by_fid.len() == 2
            && by_fid
                .values()
                .all(|&(n, b)| n == calls && b == calls * awaits);
        (format!("{} variants: {text}", by_fid.len()), pass_if(ok))
    };
    row("async.continuation-generic", EXP, observed, verdict)
}

/// Whether the runtime passes one continuation object to every resume of a call (which
/// identifies the call from its second resume on) or a new one at each. The values carry the
/// GC epoch in their low 3 bits (docs/abi.md): a GC between two resumes may move the object,
/// so each epoch may add a value per call.
pub(super) fn async_continuation_reuse(o: &Observations) -> Row {
    const EXP: &str = "one continuation object per call, passed again at each of its resumes \
                       (distinct values = calls, per GC epoch)";
    let events = o.events();
    let mut parts = Vec::new();
    let (mut reused, mut fresh, mut found) = (true, true, false);
    for (name, calls, awaits, _, _) in ASYNC_METHODS {
        let Some((variant, _)) = async_pair(&events, name).variant else {
            continue;
        };
        let values: BTreeSet<u64> = events
            .iter()
            .filter(|e| e.kind == "continuation" && e.fid == variant)
            .filter_map(|e| e.num("value"))
            .filter(|&v| v != 0)
            .collect();
        if values.is_empty() {
            continue;
        }
        found = true;
        let epochs: BTreeSet<u64> = values.iter().map(|v| v & 7).collect();
        let n = values.len() as u64;
        reused &= n <= calls * epochs.len() as u64;
        fresh &= n == calls * awaits;
        parts.push(format!(
            "{} {n} values for {calls} calls × {awaits} resumes",
            short(name)
        ));
    }
    let (observed, verdict) = if !found {
        (
            format!("no continuation recorded; {}", o.exit_text()),
            Verdict::Fail,
        )
    } else if reused {
        (parts.join("; "), Verdict::Pass)
    } else if fresh {
        (
            format!("a new continuation at every resume: {}", parts.join("; ")),
            Verdict::Differs,
        )
    } else {
        (parts.join("; "), Verdict::Fail)
    };
    row("async.continuation-reuse", EXP, observed, verdict)
}

/// Whether the continuation a resume receives is one that a suspension allocated: the value
/// `AsyncHelpers.AllocContinuation*` returned (eltrace records it at the allocator's Leave,
/// docs/abi.md "Continuations at suspension"), which names the suspended call from its first
/// resume on, on every runtime. Values carry the GC epoch (a GC between a suspension and its
/// resume would move the object; the probe makes none meanwhile).
pub(super) fn async_continuation_alloc(o: &Observations) -> Row {
    const EXP: &str = "every resume receives a continuation that AsyncHelpers.AllocContinuation \
                       returned as a call suspended";
    let events = o.events();
    let allocated: BTreeSet<u64> = events
        .iter()
        .filter(|e| e.kind == "continuation" && is_allocator(&e.name))
        .filter_map(|e| e.num("value"))
        .collect();
    let mut parts = Vec::new();
    let (mut resumes, mut named) = (0, 0);
    for (name, _, _, _, _) in ASYNC_METHODS {
        let Some((variant, _)) = async_pair(&events, name).variant else {
            continue;
        };
        let values: Vec<u64> = events
            .iter()
            .filter(|e| e.kind == "continuation" && e.fid == variant)
            .filter_map(|e| e.num("value"))
            .filter(|&v| v != 0)
            .collect();
        let found = values.iter().filter(|v| allocated.contains(v)).count();
        resumes += values.len();
        named += found;
        parts.push(format!(
            "{} {found} of {} resumes",
            short(name),
            values.len()
        ));
    }
    let observed = format!(
        "{} allocations; {}; {}",
        allocated.len(),
        parts.join(", "),
        o.exit_text()
    );
    let verdict = pass_if(!allocated.is_empty() && resumes > 0 && named == resumes);
    row("async.continuation-alloc", EXP, observed, verdict)
}

/// CoreLib's continuation allocators (`AllocContinuation`, `…Method`, `…Class`).
fn is_allocator(name: &str) -> bool {
    name.starts_with("System.Runtime.CompilerServices.AsyncHelpers.AllocContinuation")
}

/// The probe's classic async method (a compiler state machine): its state machine's type
/// prefix, calls, awaits per call.
const CLASSIC: (&str, u64, u64) = ("Probes.AsyncProbe+<Classic>d__", 3, 3);

/// How far into its box a resumed state machine's `this` may lie (the analysis's bound).
const BOX_REACH: u64 = 1024;

/// A classic async method's resumes: every resumed `MoveNext` receives as `this` the struct
/// inside a box that the builder's `GetStateMachineBox` returned as the call suspended (both
/// recorded by the production profiler), at one offset; the first segment's `this` lies in
/// no box (the kickoff's local).
pub(super) fn async_state_machine_box(o: &Observations) -> Row {
    const EXP: &str = "each resume's MoveNext this lies in a box GetStateMachineBox returned \
                       (calls×awaits), each first MoveNext's in none (calls)";
    let (prefix, calls, awaits) = CLASSIC;
    let events = o.events();
    let boxes: BTreeSet<u64> = events
        .iter()
        .filter(|e| e.kind == "continuation" && e.name.contains(".GetStateMachineBox"))
        .filter_map(|e| e.num("value"))
        .map(|v| v & !OBJECT_EPOCH_BITS)
        .collect();
    let this: Vec<u64> = events
        .iter()
        .filter(|e| {
            e.kind == "continuation" && e.name.starts_with(prefix) && e.name.ends_with(".MoveNext")
        })
        .filter_map(|e| e.num("value"))
        .map(|v| v & !OBJECT_EPOCH_BITS)
        .collect();
    let mut offsets = BTreeSet::new();
    let mut in_box = 0;
    for t in &this {
        if let Some(b) = boxes
            .range(..=*t)
            .next_back()
            .filter(|&&b| t - b < BOX_REACH)
        {
            in_box += 1;
            offsets.insert(t - b);
        }
    }
    let at = offsets
        .iter()
        .map(|d| format!("{d:#x}"))
        .collect::<Vec<_>>()
        .join(", ");
    let observed = format!(
        "{} boxes; {in_box} of {} MoveNext this in a box (at {}), {} in none; {}",
        boxes.len(),
        this.len(),
        if at.is_empty() { "-" } else { &at },
        this.len() - in_box,
        o.exit_text()
    );
    let ok = in_box as u64 == calls * awaits && this.len() as u64 == calls * (awaits + 1);
    let verdict = if events.is_empty() {
        Verdict::Fail
    } else {
        pass_if(ok)
    };
    row("async.state-machine-box", EXP, observed, verdict)
}

/// The probe's async iterator: its state machine's type prefix, enumerations, elements each.
const ASYNC_ITERATOR: (&str, u64, u64) = ("Probes.AsyncProbe+<Count3>d__", 2, 3);

/// An async iterator's members receive the enumerator as `this`: its body's `MoveNext` and
/// `get_Current` at every call of one enumeration, one object per enumeration; its
/// `MoveNextAsync` and `DisposeAsync` where called directly (runtime-async consumers call
/// their async variants, whose recorded argument is the continuation, null at a first call:
/// on .NET 11 the variant runs the method's code, so no direct call is left). Recorded by the
/// production profiler (docs/abi.md "State machines by `this`").
pub(super) fn async_iterator_this(o: &Observations) -> Row {
    const EXP: &str = "an async iterator's body MoveNext, get_Current and direct MoveNextAsync, \
                       DisposeAsync calls: this = its enumerator, one per enumeration (2)";
    let (prefix, enumerations, elements) = ASYNC_ITERATOR;
    let events = o.events();
    let values: Vec<(&str, u64, u64)> = events
        .iter()
        .filter(|e| e.kind == "continuation" && e.name.starts_with(prefix))
        .filter_map(|e| Some((e.name.as_str(), e.fid, e.num("value")?)))
        .collect();
    // A variant's argument is its continuation: null at every first call.
    let variants: BTreeSet<u64> = values
        .iter()
        .filter(|&&(_, _, v)| v == 0)
        .map(|&(_, f, _)| f)
        .collect();
    let member = |name: &str| {
        ["MoveNextAsync", "get_Current", "DisposeAsync", ".MoveNext"]
            .iter()
            .position(|m| name.ends_with(m))
    };
    let objects: BTreeSet<u64> = values
        .iter()
        .filter(|&&(n, _, _)| member(n) == Some(3))
        .map(|&(_, _, v)| v & !OBJECT_EPOCH_BITS)
        .collect();
    let mut per: BTreeMap<u64, [u64; 4]> = objects.iter().map(|&x| (x, [0; 4])).collect();
    let mut strays = 0;
    for &(name, _, v) in values.iter().filter(|(_, f, _)| !variants.contains(f)) {
        match (member(name), per.get_mut(&(v & !OBJECT_EPOCH_BITS))) {
            (Some(m), Some(c)) => c[m] += 1,
            (Some(_), None) => strays += 1,
            _ => {}
        }
    }
    let text = per
        .values()
        .map(|c| {
            format!(
                "MoveNextAsync {} get_Current {} DisposeAsync {} MoveNext {}",
                c[0], c[1], c[2], c[3]
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let observed = format!(
        "{} enumerators ({}); {} values naming none; {} variant functions; {}",
        per.len(),
        if text.is_empty() { "-" } else { &text },
        strays,
        variants.len(),
        o.exit_text()
    );
    let ok = per.len() as u64 == enumerations
        && strays == 0
        && per.values().all(|c| {
            c[1] == elements
                && c[3] > elements
                && ((c[0] == elements + 1 && c[2] == 1) || (c[0] == 0 && c[2] == 0))
        });
    let verdict = if events.is_empty() {
        Verdict::Fail
    } else {
        pass_if(ok)
    };
    row("async.iterator-this", EXP, observed, verdict)
}
