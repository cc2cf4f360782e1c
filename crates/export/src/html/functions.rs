//! The report's function table: one row per function name and module over every process
//! (functions of one name in one module merged, as `report` does), the rows to embed, and
//! their columns.

use std::collections::{HashMap, HashSet};

use eltrace_analysis::{
    Analysis, FunctionIdx, FunctionStats, Kickoffs, MachineKind, machine_kind_from_flags,
};
use serde_json::{Value, json};

use super::{MAX_FUNCTIONS, Strings, column};

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

fn add_stats(a: &mut FunctionStats, b: &FunctionStats) {
    a.calls += b.calls;
    a.segments += b.segments;
    a.resumes += b.resumes;
    a.suspensions += b.suspensions;
    a.wall_ns += b.wall_ns;
    a.pending_at_end += b.pending_at_end;
    a.inferred_resumes += b.inferred_resumes;
    a.ambiguous_calls += b.ambiguous_calls;
    a.known_starts += b.known_starts;
    a.identity_resumes += b.identity_resumes;
    a.inclusive_ns += b.inclusive_ns;
    a.exclusive_ns += b.exclusive_ns;
    a.max_ns = a.max_ns.max(b.max_ns);
    a.open_at_end += b.open_at_end;
    a.unwound += b.unwound;
    a.tailcalls += b.tailcalls;
    a.mismatched += b.mismatched;
    a.lost += b.lost;
}

/// The async kind of a function row; an iterator's MoveNext is no async method (kind 0).
fn async_kind(
    a: &Analysis,
    kickoffs: &Kickoffs,
    idx: FunctionIdx,
    s: &FunctionStats,
) -> (u8, Option<String>) {
    let Some(r) = a.tables.functions.get(idx) else {
        return (0, None);
    };
    if r.flags.async_thunk() {
        return (2, None);
    }
    if r.flags.async_variant() {
        return (1, None);
    }
    let kind = machine_kind_from_flags(r).unwrap_or(if s.enumerations > 0 {
        MachineKind::Iterator
    } else {
        MachineKind::Async
    });
    match kickoffs.method_of(r) {
        Some(m) if kind == MachineKind::Async => (3, Some(m)),
        _ => (0, None),
    }
}

/// Adds a process's functions to the function rows (one per name and module, over all
/// processes); returns each function's row and how many of the process's rows have calls.
pub(super) fn add_function_rows(
    a: &Analysis,
    rows: &mut Vec<FnRow>,
    row_of_key: &mut HashMap<(String, String), u32>,
) -> (HashMap<FunctionIdx, u32>, usize) {
    let mut row_of = HashMap::new();
    let mut called: HashSet<u32> = HashSet::new();
    let kickoffs = Kickoffs::new(&a.tables.functions);
    // Functions with calls, then any other the call tree names (a path whose frames never
    // closed), each once.
    let with_calls = a.functions().map(|(i, s)| (i, *s));
    let in_tree = a
        .call_tree()
        .into_iter()
        .flat_map(|t| t.nodes().map(|(_, n)| (n.func, FunctionStats::default())));
    for (idx, s) in with_calls.chain(in_tree) {
        if row_of.contains_key(&idx) {
            continue;
        }
        let key = (
            a.tables.functions.name(idx),
            a.tables.functions.module(idx).to_owned(),
        );
        let row = match row_of_key.get(&key) {
            Some(&r) => {
                add_stats(&mut rows[r as usize].s, &s);
                r
            }
            None => {
                let (async_kind, method) = async_kind(a, &kickoffs, idx, &s);
                let r = rows.len() as u32;
                row_of_key.insert(key.clone(), r);
                rows.push(FnRow {
                    name: key.0,
                    module: key.1,
                    s,
                    async_kind,
                    method,
                });
                r
            }
        };
        if s.calls > 0 {
            called.insert(row);
        }
        row_of.insert(idx, row);
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
