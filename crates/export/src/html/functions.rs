//! The report's function table: one row per method name and module over every process (the
//! analysis' report model, as `report` makes them), the rows to embed, and their columns.

use std::collections::{HashMap, HashSet};

use eltrace_analysis::rows::{FunctionKind, method_rows};
use eltrace_analysis::{Analysis, FunctionIdx, FunctionStats};
use serde_json::{Value, json};

use super::columns::{Strings, column};

/// Functions kept per sort key (inclusive, exclusive, calls) when there are more.
pub const MAX_FUNCTIONS: usize = 2_000;

/// One row of the function table: the functions of one name and module, merged.
pub(super) struct FnRow {
    pub name: String,
    pub module: String,
    pub s: FunctionStats,
    /// 0 none, 1 runtime-async method, 2 its thunk, 3 a state machine's `MoveNext`.
    pub async_kind: u8,
    /// A state machine's user method (`Ns.T.Work`).
    pub method: Option<String>,
}

/// The page's async kind of a row (the `async` column): 0 none (an iterator's MoveNext too),
/// 1 runtime-async method, 2 only its thunk, 3 a state machine's `MoveNext`.
fn async_code(kind: FunctionKind) -> u8 {
    match kind {
        FunctionKind::Runtime => 1,
        FunctionKind::Thunk => 2,
        FunctionKind::StateMachine => 3,
        FunctionKind::Plain | FunctionKind::Iterator | FunctionKind::AsyncIterator => 0,
    }
}

/// Adds a process's functions to the function rows (one per method name and module, as
/// `report` makes them: `eltrace_analysis::rows`, over all processes); returns each
/// function's row and how many of the process's rows have calls. A `--timing sampled`
/// trace's rows get the sampler's estimated inclusive and exclusive times. Functions the call tree
/// names without calls of their own (a path whose frames never closed) get rows too.
pub(super) fn add_function_rows(
    a: &Analysis,
    rows: &mut Vec<FnRow>,
    row_of_key: &mut HashMap<(String, String), u32>,
) -> (HashMap<FunctionIdx, u32>, usize) {
    let mut row_of = HashMap::new();
    let mut called: HashSet<u32> = HashSet::new();
    let in_tree: Vec<FunctionIdx> = a
        .call_tree()
        .into_iter()
        .flat_map(|t| t.nodes().map(|(_, n)| n.func))
        .collect();
    // A `--timing sampled` trace: the rows' times are the sampler's estimates.
    let estimates = a.sampled.as_ref().filter(|_| !a.has_event_times());
    for mut m in method_rows(a, &in_tree) {
        if let Some(st) = estimates {
            (m.s.inclusive_ns, m.s.exclusive_ns) = st.row_estimates(&m.idxs);
            (m.s.max_ns, m.s.wall_ns) = (0, 0);
        }
        let key = (m.name, m.module);
        let row = match row_of_key.get(&key) {
            Some(&r) => {
                rows[r as usize].s += &m.s;
                r
            }
            None => {
                let r = rows.len() as u32;
                row_of_key.insert(key.clone(), r);
                rows.push(FnRow {
                    name: key.0,
                    module: key.1,
                    s: m.s,
                    async_kind: async_code(m.kind),
                    method: m.method.filter(|_| m.kind == FunctionKind::StateMachine),
                });
                r
            }
        };
        if m.s.calls > 0 {
            called.insert(row);
        }
        for idx in m.idxs {
            row_of.insert(idx, row);
        }
    }
    (row_of, called.len())
}

/// Which function rows to embed: the top [`MAX_FUNCTIONS`] by each key, the async ones and
/// those in `needed`.
pub(super) fn keep_functions(rows: &[&FnRow], needed: &[bool]) -> Vec<bool> {
    let mut keep: Vec<bool> = rows
        .iter()
        .zip(needed)
        .map(|(r, &n)| n || r.async_kind != 0)
        .collect();
    let keys: [fn(&FnRow) -> u64; 3] = [|r| r.s.inclusive_ns, |r| r.s.exclusive_ns, |r| r.s.calls];
    for key in keys {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(key(rows[i])), i));
        for &i in order.iter().take(MAX_FUNCTIONS) {
            keep[i] = true;
        }
    }
    keep
}

pub(super) fn functions_json(rows: &[&FnRow], strings: &mut Strings) -> Value {
    let f = |get: fn(&FnRow) -> u64| column(rows.iter().map(|r| get(r)));
    let names: Vec<u32> = rows.iter().map(|r| strings.id(&r.name)).collect();
    let modules: Vec<u32> = rows.iter().map(|r| strings.id(&r.module)).collect();
    let methods: Vec<u32> = rows
        .iter()
        .map(|r| r.method.as_deref().map_or(0, |m| strings.id(m)))
        .collect();
    json!({
        "name": names,
        "module": modules,
        "calls": f(|r| r.s.calls),
        "incl": f(|r| r.s.inclusive_ns),
        "excl": f(|r| r.s.exclusive_ns),
        "max": f(|r| r.s.max_ns),
        "open": f(|r| r.s.open_at_end),
        "unwound": f(|r| r.s.unwound),
        "tailcalls": f(|r| r.s.tailcalls),
        "async": column(rows.iter().map(|r| r.async_kind)),
        "method": methods,
        "segments": f(|r| r.s.segments),
        "resumes": f(|r| r.s.resumes),
        "suspensions": f(|r| r.s.suspensions),
        "wall": f(|r| r.s.wall_ns),
        "pending": f(|r| r.s.pending_at_end),
        "inferred": f(|r| r.s.inferred_resumes),
        "ambiguous": f(|r| r.s.ambiguous_calls),
    })
}
