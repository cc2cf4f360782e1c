//! One row per method: a Task-returning method that runtime-async code awaits has two
//! FunctionIDs, its *thunk* (the Task-returning entry that ordinary callers call) and its
//! *async variant* (the entry runtime-async callers call). Whichever way a call came in, it is
//! one call of the method: the report shows one row named after the method, with the split
//! kept as detail (`variant_calls`, `thunk_calls`; docs/design.md "One row per method").
//!
//! A call that goes through both entries is counted once: for a runtime-async method
//! (impl flag `0x2000`) the thunk calls the variant, which runs the method's code; for a
//! method that is not async it is the other way round, the variant calls the Task-returning
//! method's code (.NET 10; on .NET 11 the variant runs the method's code itself). Those
//! nested frames are the caller→callee edges between the two, taken off the row's calls,
//! segments and inclusive time.
//!
//! ```text
//! .NET 10, SlowStream.ReadAsync (not async) awaited by runtime-async Consume 25 times and
//! called by StreamReader (not runtime-async on 10) 25 times:
//!   variant 25 calls, thunk 50 calls, variant→thunk 25  →  ReadAsync: 50 calls
//! ```

use std::collections::HashMap;

use eltrace_analysis::{Analysis, EdgeStats, FunctionIdx, FunctionStats};

/// Impl flag of a runtime-async method (`MethodImplOptions.Async`).
const IMPL_ASYNC: u32 = 0x2000;

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
    let runtime_async = (c.impl_flags | e.impl_flags) & IMPL_ASYNC != 0;
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
            .is_some_and(|r| r.impl_flags & IMPL_ASYNC != 0)
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
pub fn body_resumes(a: &Analysis, idx: FunctionIdx) -> u64 {
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
    let started: u64 = a
        .edges()
        .into_iter()
        .filter(|(caller, callee, _)| {
            bodies.contains(callee)
                && caller.is_some_and(|c| {
                    a.tables.functions.get(c).is_some_and(|m| {
                        m.module == r.module
                            && m.type_name == r.type_name
                            && (m.method.ends_with("MoveNextAsync")
                                || m.method.ends_with("DisposeAsync"))
                    })
                })
        })
        .map(|(_, _, e)| e.calls)
        .sum();
    runs.saturating_sub(started)
}
