//! The function rows of `eltrace report`, shared by the text tables and the JSON: one row per
//! method (name and module), their order, and the helpers that show a row's numbers and names.

use eltrace_analysis::rows::{Split, method_rows};
use eltrace_analysis::{Analysis, FunctionIdx, FunctionStats};

use super::options::SortBy;
use super::timing::Timing;

/// One function of the report: functions with the same name and module are merged.
pub(super) struct Row {
    pub(super) name: String,
    pub(super) module: String,
    pub(super) s: FunctionStats,
    /// The functions merged into this row.
    pub(super) idxs: Vec<FunctionIdx>,
    /// A method entered by its thunk and its async variant: how its calls came in.
    pub(super) split: Option<Split>,
    /// An async iterator's MoveNextAsync row: its body's runs that were resumes (awaits that
    /// suspended).
    pub(super) awaits_suspended: Option<u64>,
    /// `"runtime"` (a runtime-async method's code), `"thunk"`, `"state_machine"` or `""`.
    pub(super) async_kind: &'static str,
    /// For a state machine's MoveNext (async or iterator): the user method it runs
    /// (`Ns.T.Work`).
    pub(super) async_method: Option<String>,
    /// An iterator's MoveNext (its enumerations are in `s`).
    pub(super) iterator: bool,
}

impl Row {
    fn key(&self, by: SortBy) -> u64 {
        match by {
            SortBy::Inclusive => self.s.inclusive_ns,
            SortBy::Exclusive => self.s.exclusive_ns,
            SortBy::Calls => self.s.calls,
        }
    }
}

pub(super) fn rows(a: &Analysis, by: SortBy) -> Vec<Row> {
    let mut rows: Vec<Row> = method_rows(a, &[])
        .into_iter()
        .map(|m| Row {
            iterator: m.kind.iterator(),
            async_kind: m.kind.json_name(),
            name: m.name,
            module: m.module,
            s: m.s,
            idxs: m.idxs,
            split: m.split,
            awaits_suspended: m.awaits_suspended,
            async_method: m.method,
        })
        .collect();
    let timing = Timing::of(a);
    for r in &mut rows {
        timing.adjust(&mut r.s, &r.idxs);
    }
    let by = if timing.has_times() {
        by
    } else {
        SortBy::Calls
    };
    rows.sort_by(|x, y| {
        y.key(by)
            .cmp(&x.key(by))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.module.cmp(&y.module))
    });
    rows
}

pub(super) fn share(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 / total as f64
    }
}

pub(super) fn mean(total: u64, n: u64) -> u64 {
    total.checked_div(n).unwrap_or(0)
}

/// A row's name in the table: a state machine's MoveNext shows the user method it runs.
pub(super) fn display_name(r: &Row) -> String {
    match &r.async_method {
        Some(m) if r.iterator => format!("{m} (iterator: {})", r.name),
        Some(m) => format!("{m} (async: {})", r.name),
        None => r.name.clone(),
    }
}

/// Cuts a long name from the left, keeping the method.
pub(super) fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        s.to_owned()
    } else {
        let tail: String = s.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    }
}
