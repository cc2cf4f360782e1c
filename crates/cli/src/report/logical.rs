//! `report --logical`: the logical call tree. Each async call's segments are shown under the
//! call that awaited it, wherever they ran (a resumed segment goes to its call's node, not
//! under the dispatcher of the thread that ran it), as dotTrace's async call tree and Visual
//! Studio's async call stacks do. `calls` counts calls (an async call once, however many
//! segments), times are the segments' own (CPU) times; per path, merged over all threads
//! (docs/design.md "The logical call tree").
//!
//! ```text
//!   calls        incl        excl  path
//!       1      301 ms     2.64 ms  App.Program.Main
//!      25     31.3 ms     5.54 ms    App.Handler.ServeAsync        (segments on any thread)
//!      25     25.8 ms     25.8 ms      App.Store.ReadAsync
//! ```

use std::fmt::Write as _;

use eltrace_analysis::{Analysis, CallNodeId, CallTree};
use serde_json::{Value, json};

use super::timing::Timing;
use crate::util::fmt_ns;

/// Lines of the text tree when `--top` does not say.
const DEFAULT_LINES: usize = 60;
/// Nodes in the JSON section at most (the largest by inclusive time).
const MAX_JSON_NODES: usize = 20_000;

/// The nodes to show, depth first, children by inclusive time (largest first), without
/// nodes that hold neither a call nor time.
fn ordered(tree: &CallTree) -> Vec<CallNodeId> {
    let mut children: Vec<Vec<CallNodeId>> = vec![Vec::new(); tree.len()];
    let mut roots = Vec::new();
    for (id, n) in tree.nodes() {
        if n.calls == 0 && n.inclusive_ns == 0 {
            continue;
        }
        match n.parent {
            Some(p) => children[p.0 as usize].push(id),
            None => roots.push(id),
        }
    }
    let incl = |id: &CallNodeId| tree.get(*id).map_or(0, |n| n.inclusive_ns);
    let by_time = |v: &mut Vec<CallNodeId>| {
        v.sort_by(|x, y| incl(y).cmp(&incl(x)).then(x.0.cmp(&y.0)));
    };
    by_time(&mut roots);
    for c in &mut children {
        by_time(c);
    }
    let mut out = Vec::new();
    let mut stack: Vec<CallNodeId> = roots.into_iter().rev().collect();
    while let Some(id) = stack.pop() {
        out.push(id);
        stack.extend(children[id.0 as usize].iter().rev().copied());
    }
    out
}

/// The text section (empty when the analysis built no logical tree).
pub fn text(a: &Analysis, top: Option<usize>) -> String {
    let Some(tree) = a.logical_tree() else {
        return String::new();
    };
    let tm = Timing::of(a);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nlogical call tree (async calls under the call that awaited them, whatever thread ran \
         them; calls count calls, times are the segments' own):"
    );
    let _ = writeln!(o, "{:>9}  {:>10}  {:>10}  path", "calls", "incl", "excl");
    let nodes = ordered(tree);
    let limit = top.unwrap_or(DEFAULT_LINES);
    for id in nodes.iter().take(limit) {
        let Some(n) = tree.get(*id) else { continue };
        let time = |ns: u64| {
            if tm.has_times() {
                fmt_ns(ns)
            } else {
                "-".into()
            }
        };
        let _ = writeln!(
            o,
            "{:>9}  {:>10}  {:>10}  {:indent$}{}",
            n.calls,
            time(n.inclusive_ns),
            time(n.exclusive_ns),
            "",
            a.tables.functions.name(n.func),
            indent = 2 * n.depth as usize
        );
    }
    if nodes.len() > limit {
        let _ = writeln!(
            o,
            "({} more paths; --top N shows more, --json all)",
            nodes.len() - limit
        );
    }
    o
}

/// The JSON section: one object per path, parents before children (`parent` is the index
/// of the parent path in this list, -1 for a root).
pub fn json(a: &Analysis) -> Option<Value> {
    let tree = a.logical_tree()?;
    let tm = Timing::of(a);
    let nodes = ordered(tree);
    let mut index = vec![-1i64; tree.len()];
    let mut out = Vec::new();
    for id in nodes.iter().take(MAX_JSON_NODES) {
        let Some(n) = tree.get(*id) else { continue };
        let parent = n.parent.map_or(-1, |p| index[p.0 as usize]);
        index[id.0 as usize] = out.len() as i64;
        out.push(json!({
            "function": a.tables.functions.name(n.func),
            "parent": parent,
            "depth": n.depth,
            "calls": n.calls,
            "inclusive_ns": tm.json_per_call(n.inclusive_ns),
            "exclusive_ns": tm.json_per_call(n.exclusive_ns),
        }));
    }
    Some(Value::Array(out))
}
