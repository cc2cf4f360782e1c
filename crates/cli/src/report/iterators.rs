//! The iterator rows of `eltrace report` (docs/design.md "Iterators: enumerations"): an
//! iterator's MoveNext row's `iterator` object in the JSON, and the iterators table of the
//! text report (kickoff calls, enumerations and how they ended, MoveNext calls, yields).

use std::fmt::Write as _;

use eltrace_analysis::FunctionStats;
use serde_json::{Value, json};

use super::rows::{Row, fit, mean};

/// The calls of a row's kickoff method (the rows of that name in the same module).
pub(super) fn kickoff_calls(r: &Row, rows: &[Row]) -> u64 {
    let Some(m) = &r.async_method else {
        return 0;
    };
    rows.iter()
        .filter(|k| &k.name == m && k.module == r.module)
        .map(|k| k.s.calls)
        .sum()
}

/// Enumerations that ran to the end: neither abandoned, faulted nor pending.
fn completed(s: &FunctionStats) -> u64 {
    s.enumerations
        .saturating_sub(s.abandoned + s.faulted + s.pending_at_end)
}

/// An iterator's MoveNext row's `iterator` object (docs/design.md "eltrace report --json").
pub(super) fn iterator_json(r: &Row, rows: &[Row]) -> Value {
    let s = &r.s;
    json!({
        "method": r.async_method,
        "kickoff_calls": kickoff_calls(r, rows),
        "enumerations": s.enumerations,
        "yields": s.yields,
        "completed": completed(s),
        "abandoned": s.abandoned,
        "faulted": s.faulted,
        "pending_at_end": s.pending_at_end,
        "wall_ns": s.wall_ns,
        "mean_wall_ns": mean(s.wall_ns, s.enumerations),
        "async": r.awaits_suspended.is_some(),
        "awaits_suspended": r.awaits_suspended,
    })
}

/// The iterators among the first `n` rows: their kickoff calls, enumerations and how they
/// ended, MoveNext calls and yields.
pub(super) fn iterator_table(o: &mut String, rows: &[Row], n: usize) {
    let its: Vec<&Row> = rows[..n].iter().filter(|r| r.iterator).collect();
    if its.is_empty() {
        return;
    }
    let name_w = its
        .iter()
        .map(|r| r.async_method.as_deref().unwrap_or("").chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, 60);
    let _ = writeln!(
        o,
        "{:<name_w$}  {:>9}  {:>12}  {:>9}  {:>9}  {:>7}  {:>7}  {:>9}  {:>9}",
        "iterator",
        "calls",
        "enumerations",
        "completed",
        "abandoned",
        "faulted",
        "pending",
        "MoveNext",
        "yields"
    );
    for r in its {
        let s = &r.s;
        let _ = writeln!(
            o,
            "{:<name_w$}  {:>9}  {:>12}  {:>9}  {:>9}  {:>7}  {:>7}  {:>9}  {:>9}",
            fit(r.async_method.as_deref().unwrap_or(""), name_w),
            kickoff_calls(r, rows),
            s.enumerations,
            completed(s),
            s.abandoned,
            s.faulted,
            s.pending_at_end,
            s.calls,
            s.yields,
        );
    }
    o.push('\n');
}
