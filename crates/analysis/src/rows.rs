//! The report model shared by `report` and every exporter that shows rows (issue #26 "one
//! report model"): one row per method and module ([`method_rows`]), with one classification
//! of what a row is ([`FunctionKind`]) and its async detail.
//!
//! **One row per method.** A Task-returning method that runtime-async code awaits has two
//! FunctionIDs, its *thunk* (the Task-returning entry that ordinary callers call) and its
//! *async variant* (the entry runtime-async callers call). Whichever way a call came in, it is
//! one call of the method: one row named after the method, with the split kept as detail
//! (`variant_calls`, `thunk_calls`; docs/design.md "One row per method").
//!
//! A call that goes through both entries is counted once: for a runtime-async method (impl
//! flag `0x2000`, `FunctionRecord::is_runtime_async`) the thunk calls the variant, which runs
//! the method's code; for a method that is not async it is the other way round, the variant
//! calls the Task-returning method's code (.NET 10; on .NET 11 the variant runs the method's
//! code itself). Those nested frames are the caller→callee edges between the two, taken off
//! the row's calls, segments and inclusive time.
//!
//! ```text
//! .NET 10, SlowStream.ReadAsync (not async) awaited by runtime-async Consume 25 times and
//! called by StreamReader (not runtime-async on 10) 25 times:
//!   variant 25 calls, thunk 50 calls, variant→thunk 25  →  ReadAsync: 50 calls
//! ```

use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::machines::{Kickoffs, MachineKind, machine_kind_from_flags};
use crate::model::{EdgeStats, FunctionStats};
use eltrace_trace::{FunctionIdx, FunctionRecord};

/// How a merged method's calls came in (the two add up to the row's calls).
#[derive(Debug, Clone, Copy, Default)]
pub struct Split {
    /// Calls that came in at the async variant (an `await` in runtime-async code).
    pub variant_calls: u64,
    /// Calls that came in at the Task-returning entry (any other caller).
    pub thunk_calls: u64,
}

/// The row name of function `idx`: a thunk's and a variant's are the method's full name.
pub fn row_name(a: &Analysis, idx: FunctionIdx) -> String {
    match a.tables.functions.get(idx) {
        Some(r) if r.flags.async_thunk() || r.flags.async_variant() => r.full_name(),
        _ => a.tables.functions.name(idx),
    }
}

/// Whether a `caller`→`callee` frame pair is one call of one method entered both ways: the
/// thunk of a runtime-async method calling its variant, or the variant of a method that is
/// not async calling its Task-returning code (which the profiler marks a thunk only when it
/// was mapped after the variant). Such edges are inside the method's row.
pub fn nested_pair(a: &Analysis, caller: FunctionIdx, callee: FunctionIdx) -> bool {
    let (Some(c), Some(e)) = (
        a.tables.functions.get(caller),
        a.tables.functions.get(callee),
    ) else {
        return false;
    };
    if c.module != e.module || c.token != e.token || c.full_name() != e.full_name() {
        return false;
    }
    let runtime_async = c.is_runtime_async() || e.is_runtime_async();
    if runtime_async {
        c.flags.async_thunk() && e.flags.async_variant()
    } else {
        c.flags.async_variant() && !e.flags.async_variant()
    }
}

/// The caller→callee edges of `a`, by (caller, callee) index.
pub fn edge_map(a: &Analysis) -> HashMap<(u32, u32), EdgeStats> {
    a.edges()
        .into_iter()
        .filter_map(|(caller, callee, e)| caller.map(|c| ((c.0, callee.0), e)))
        .collect()
}

/// Takes the nested frames between the thunks and variants among `idxs` off `s`; returns
/// the split for a row with either role (`None`: not an async method's row).
pub fn merge(
    a: &Analysis,
    edges: &HashMap<(u32, u32), EdgeStats>,
    idxs: &[FunctionIdx],
    s: &mut FunctionStats,
) -> Option<Split> {
    let role = |i: &FunctionIdx| a.tables.functions.get(*i).map(|r| r.flags);
    let (variants, others): (Vec<FunctionIdx>, Vec<FunctionIdx>) = idxs
        .iter()
        .partition(|i| role(i).is_some_and(|f| f.async_variant()));
    let thunk_flagged = others
        .iter()
        .any(|i| role(i).is_some_and(|f| f.async_thunk()));
    if variants.is_empty() && !thunk_flagged {
        return None;
    }
    let runtime_async = idxs.iter().any(|&i| {
        a.tables
            .functions
            .get(i)
            .is_some_and(FunctionRecord::is_runtime_async)
    });
    let mut nested = EdgeStats::default();
    for &o in &others {
        for &v in &variants {
            // The entry that wraps the method's code: the thunk of a runtime-async method,
            // the variant of one that is not async.
            let (caller, callee) = if runtime_async { (o, v) } else { (v, o) };
            if !nested_pair(a, caller, callee) {
                continue;
            }
            if let Some(e) = edges.get(&(caller.0, callee.0)) {
                nested.calls += e.calls;
                nested.inclusive_ns += e.inclusive_ns;
            }
        }
    }
    s.calls = s.calls.saturating_sub(nested.calls);
    s.segments = s.segments.saturating_sub(nested.calls);
    s.inclusive_ns = s.inclusive_ns.saturating_sub(nested.inclusive_ns);
    s.exclusive_ns = s.exclusive_ns.min(s.inclusive_ns);
    // Each call counted at the entry it came in by: a runtime-async method's thunk calls are
    // the variant's first segments; every call not at the variant came in by the other entry.
    let variant_frames: u64 = variants
        .iter()
        .filter_map(|&i| a.function_stats(i))
        .map(|f| f.calls)
        .sum();
    let variant_calls = if runtime_async {
        variant_frames.saturating_sub(nested.calls)
    } else {
        variant_frames
    };
    let split = Split {
        variant_calls,
        thunk_calls: s.calls.saturating_sub(variant_calls),
    };
    Some(split)
}

/// An async iterator's `MoveNextAsync` (`idx`): how many runs of its state machine's body
/// (`MoveNext` of the same type) were resumes after an await that suspended, not a run that
/// `MoveNextAsync` or `DisposeAsync` started (a frame directly above one of theirs).
pub fn body_resumes(a: &Analysis, edges: &HashMap<(u32, u32), EdgeStats>, idx: FunctionIdx) -> u64 {
    let Some(r) = a.tables.functions.get(idx) else {
        return 0;
    };
    let bodies: Vec<FunctionIdx> = a
        .functions()
        .map(|(i, _)| i)
        .filter(|&i| {
            a.tables.functions.get(i).is_some_and(|b| {
                b.module == r.module && b.type_name == r.type_name && b.method == "MoveNext"
            })
        })
        .collect();
    let runs: u64 = bodies
        .iter()
        .filter_map(|&b| a.function_stats(b))
        .map(|s| s.calls)
        .sum();
    let started: u64 = edges
        .iter()
        .filter(|((caller, callee), _)| {
            bodies.contains(&FunctionIdx(*callee))
                && a.tables
                    .functions
                    .get(FunctionIdx(*caller))
                    .is_some_and(|m| {
                        m.module == r.module
                            && m.type_name == r.type_name
                            && (m.method.ends_with("MoveNextAsync")
                                || m.method.ends_with("DisposeAsync"))
                    })
        })
        .map(|(_, e)| e.calls)
        .sum();
    runs.saturating_sub(started)
}

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// An ordinary function.
    Plain,
    /// A runtime-async method (its variant runs the method's code; its thunk merged in).
    Runtime,
    /// Only the Task-returning thunk of a runtime-async method was seen.
    Thunk,
    /// An async state machine's `MoveNext` (a segment of its kickoff method's calls).
    StateMachine,
    /// An iterator's `MoveNext` (enumerations).
    Iterator,
    /// An async iterator's `MoveNextAsync` (enumerations).
    AsyncIterator,
}

impl FunctionKind {
    /// The name `report --json` uses (`async.kind`), `""` for plain functions and iterators.
    pub fn json_name(self) -> &'static str {
        match self {
            FunctionKind::Plain | FunctionKind::Iterator | FunctionKind::AsyncIterator => "",
            FunctionKind::Runtime => "runtime",
            FunctionKind::Thunk => "thunk",
            FunctionKind::StateMachine => "state_machine",
        }
    }

    /// Whether the row has enumerations (an iterator's `MoveNext`, an async iterator's
    /// `MoveNextAsync`).
    pub fn iterator(self) -> bool {
        matches!(self, FunctionKind::Iterator | FunctionKind::AsyncIterator)
    }
}

/// What function `idx` is, and the user method of a state machine or iterator.
pub fn function_kind(
    a: &Analysis,
    kickoffs: &Kickoffs,
    idx: FunctionIdx,
    s: &FunctionStats,
) -> (FunctionKind, Option<String>) {
    let Some(r) = a.tables.functions.get(idx) else {
        return (FunctionKind::Plain, None);
    };
    // An async iterator's MoveNextAsync moves it (its row has the enumerations), also when
    // runtime-async code awaits it through an async variant.
    if machine_kind_from_flags(r) == Some(MachineKind::AsyncIterator)
        && r.method.ends_with("MoveNextAsync")
    {
        // The kickoff is found from the state machine's MoveNext (the same type).
        let body = FunctionRecord {
            method: "MoveNext".into(),
            ..r.clone()
        };
        if let Some(method) = kickoffs.method_of(&body) {
            return (FunctionKind::AsyncIterator, Some(method));
        }
    }
    if r.flags.async_thunk() {
        return (FunctionKind::Thunk, None);
    }
    if r.flags.async_variant() {
        return (FunctionKind::Runtime, None);
    }
    let Some(method) = kickoffs.method_of(r) else {
        return (FunctionKind::Plain, None);
    };
    // Without the profiler's flags (an older trace) the analysis told them apart.
    let kind = machine_kind_from_flags(r).unwrap_or(if s.enumerations > 0 {
        MachineKind::Iterator
    } else {
        MachineKind::Async
    });
    match kind {
        MachineKind::Async => (FunctionKind::StateMachine, Some(method)),
        MachineKind::Iterator => (FunctionKind::Iterator, Some(method)),
        MachineKind::AsyncIterator | MachineKind::None => (FunctionKind::Plain, None),
    }
}

/// One row of the report: the functions of one method name and module, merged.
#[derive(Debug, Clone)]
pub struct MethodRow {
    pub name: String,
    pub module: String,
    pub s: FunctionStats,
    /// The functions merged into this row.
    pub idxs: Vec<FunctionIdx>,
    pub kind: FunctionKind,
    /// A state machine's or iterator's user method (`Ns.T.Work`).
    pub method: Option<String>,
    /// A method entered by its thunk and its async variant: how its calls came in.
    pub split: Option<Split>,
    /// An async iterator's row: its body's runs that were resumes (awaits that suspended).
    pub awaits_suspended: Option<u64>,
}

/// The rows of `a` in the order their first function was met: functions that had calls, then
/// `extra` ones (with no statistics: e.g. every function a call tree names), one row per
/// (method name, module).
pub fn method_rows(a: &Analysis, extra: &[FunctionIdx]) -> Vec<MethodRow> {
    let kickoffs = Kickoffs::new(&a.tables.functions);
    let edges = edge_map(a);
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut rows: Vec<MethodRow> = Vec::new();
    let empty = FunctionStats::default();
    let with_calls = a.functions().map(|(i, s)| (i, *s));
    let others = extra
        .iter()
        .filter(|i| a.function_stats(**i).is_none())
        .map(|&i| (i, empty));
    for (idx, s) in with_calls.chain(others) {
        let name = row_name(a, idx);
        let module = a.tables.functions.module(idx).to_owned();
        match index.get(&(name.clone(), module.clone())) {
            Some(&i) => {
                if !rows[i].idxs.contains(&idx) {
                    rows[i].s += &s;
                    rows[i].idxs.push(idx);
                }
            }
            None => {
                index.insert((name.clone(), module.clone()), rows.len());
                let (kind, method) = function_kind(a, &kickoffs, idx, &s);
                rows.push(MethodRow {
                    name,
                    module,
                    s,
                    idxs: vec![idx],
                    kind,
                    method,
                    split: None,
                    awaits_suspended: (kind == FunctionKind::AsyncIterator)
                        .then(|| body_resumes(a, &edges, idx)),
                });
            }
        }
    }
    for r in &mut rows {
        r.split = merge(a, &edges, &r.idxs, &mut r.s);
        // The method's code ran in its variant: a runtime-async method's row, whichever of its
        // entries was met first.
        let has_variant = r.idxs.iter().any(|&i| {
            a.tables
                .functions
                .get(i)
                .is_some_and(|f| f.flags.async_variant())
        });
        if has_variant && !r.kind.iterator() {
            r.kind = FunctionKind::Runtime;
        }
    }
    rows
}
