//! The JSON object of `eltrace report --json` (docs/design.md "`eltrace report --json`"):
//! the trace's facts, the threads, the function rows with their async, iterator and value
//! parts, and the edges.

use std::rc::Rc;

use super::*;

pub(super) fn json_report(opts: &ReportOptions, a: &Analysis, rows: &[Row]) -> Value {
    let tm = Timing::of(a);
    let total = tm.total(a);
    let trace = trace_json(opts, a, rows.len(), tm, total);
    let n = opts.top.unwrap_or(rows.len());
    let functions: Vec<Value> = rows
        .iter()
        .take(n)
        .map(|r| function_json(a, r, rows, tm, total))
        .collect();
    let threads = threads_json(a, tm);
    // Moved into the object, not through `json!`, which would copy each part (to_value).
    let mut report = serde_json::Map::new();
    report.insert("trace".into(), trace);
    report.insert("functions".into(), Value::Array(functions));
    report.insert("threads".into(), Value::Array(threads));
    report.insert("edges".into(), Value::Array(edges(a, tm)));
    if let Some(tree) = super::logical::json(a) {
        report.insert("logical_tree".into(), tree);
    }
    Value::Object(report)
}

/// The report's `trace` object: the recording's facts and totals (`called`: the functions
/// with calls).
fn trace_json(
    opts: &ReportOptions,
    a: &Analysis,
    called: usize,
    tm: Timing<'_>,
    total: u64,
) -> Value {
    let info = a.info();
    let t = &a.totals;
    json!({
        "path": opts.path.display().to_string(),
        "events": t.events,
        "threads": a.threads().count(),
        "functions": a.tables.functions.len(),
        "functions_called": called,
        "dropped_events": a.dropped_events(),
        "waits": t.waits,
        "wait_ns": t.wait_ns,
        "truncated": a.truncated,
        "open_frames_at_end": t.open_frames_at_end,
        "end_reason": a.end_reason(),
        "mismatched_frames": t.mismatched_frames,
        "unmatched_leaves": t.unmatched_leaves,
        "lost_frames": t.lost_frames,
        "suspended_frames": t.suspended_frames,
        "vanished_frames": t.vanished_frames,
        "logical_calls": t.logical_calls,
        "enumerations": t.enumerations,
        "tail_call_loop_opt": info.tail_call_loop_opt(),
        "async_suspend_leaves": info.async_suspend_leaves(),
        "duration_ns": a.duration_ns(),
        "total_ns": tm.json(total),
        "timing": tm.summary_json(a),
        "frames": t.frames,
        "throws": t.throws,
        "pid": info.pid,
        "command": info.command,
        "runtime": info.runtime,
        "hook_mode": info.hook_mode,
        "start_unix_ns": info.start_unix_ns,
        "diagnostics": a.diagnostics,
    })
}

/// One row of the report's `functions`, with its `sampled`, `async`, `iterator` and
/// `values` parts when it has them.
fn function_json(a: &Analysis, r: &Row, rows: &[Row], tm: Timing<'_>, total: u64) -> Value {
    let s = &r.s;
    let mut f = json!({
        "name": r.name,
        "module": r.module,
        "calls": s.calls,
        "segments": s.segments,
        "suspensions": s.suspensions,
        "inclusive_ns": tm.json(s.inclusive_ns),
        "exclusive_ns": tm.json(s.exclusive_ns),
        "mean_inclusive_ns": tm.json_per_call(mean(s.inclusive_ns, s.calls)),
        "mean_exclusive_ns": tm.json_per_call(mean(s.exclusive_ns, s.calls)),
        "max_ns": tm.json_per_call(s.max_ns),
        "open_at_end": s.open_at_end,
        "unwound": s.unwound,
        "tailcalls": s.tailcalls,
        "mismatched": s.mismatched,
        "lost": s.lost,
        "share": tm.json_share(share(s.inclusive_ns, total)),
        "exclusive_share": tm.json_share(share(s.exclusive_ns, total)),
    });
    if let Some(v) = Timing::function_json(a, &r.idxs) {
        f["sampled"] = v;
    }
    if !r.async_kind.is_empty() {
        f["async"] = json!({
            "kind": r.async_kind,
            "method": r.async_method,
            "resumes": s.resumes,
            "wall_ns": tm.json_per_call(s.wall_ns),
            "mean_wall_ns": tm.json_per_call(mean(s.wall_ns, s.calls)),
            "pending_at_end": s.pending_at_end,
            "inferred_resumes": s.inferred_resumes,
            "ambiguous_calls": s.ambiguous_calls,
            "known_starts": s.known_starts,
            "identity_resumes": s.identity_resumes,
            "tail_awaits": s.tail_awaits,
        });
        if let Some(sp) = r.split {
            f["async"]["variant_calls"] = json!(sp.variant_calls);
            f["async"]["thunk_calls"] = json!(sp.thunk_calls);
        }
    }
    if r.iterator {
        f["iterator"] = iterator_json(r, rows);
    }
    let values = value_samples(a, &r.idxs);
    if !values.is_empty() {
        f["values"] = Value::Array(values);
    }
    f
}

/// The report's `threads`.
fn threads_json(a: &Analysis, tm: Timing<'_>) -> Vec<Value> {
    a.threads()
        .map(|(idx, s)| {
            let r = a.tables.threads.get(idx);
            json!({
                "tid": r.map_or(0, |r| r.os_tid),
                "managed_id": r.map_or(0, |r| r.managed_id),
                "name": r.map_or("", |r| r.name.as_str()),
                "index": idx.0,
                "events": s.events,
                "inclusive_ns": tm.json_per_call(s.inclusive_ns),
                "max_depth": s.max_depth,
                "open_frames_at_end": s.open_frames_at_end,
                "lost_frames": s.lost_frames,
                "dropped_events": s.dropped_events,
                "waits": s.waits,
                "wait_ns": s.wait_ns,
                "frames": s.frames,
            })
        })
        .collect()
}

/// The captured values of a row's first calls (`record --values`).
fn value_samples(a: &Analysis, idxs: &[FunctionIdx]) -> Vec<Value> {
    let text = |id: Option<u32>| {
        id.and_then(|i| a.tables.values.get(i))
            .map(|v| Value::String(v.text.clone()))
    };
    idxs.iter()
        .flat_map(|&i| a.value_samples(i))
        .take(eltrace_analysis::MAX_VALUE_SAMPLES)
        .map(|s| {
            let mut o = serde_json::Map::new();
            if let Some(v) = text(s.args) {
                o.insert("args".into(), v);
            }
            if let Some(v) = text(s.ret) {
                o.insert("return".into(), v);
            }
            Value::Object(o)
        })
        .collect()
}

/// Edges merged by (caller row, callee row), largest inclusive time first; a method's
/// thunk→variant nesting is inside its row, not an edge (analysis rows.rs).
fn edges(a: &Analysis, tm: Timing<'_>) -> Vec<Value> {
    // Each function's name made once (an edge list names the same functions many times).
    let mut names: HashMap<FunctionIdx, Rc<str>> = HashMap::new();
    let mut name = |f: FunctionIdx| -> Rc<str> {
        names
            .entry(f)
            .or_insert_with(|| eltrace_analysis::rows::row_name(a, f).into())
            .clone()
    };
    let root: Rc<str> = Rc::from("");
    let mut merged: HashMap<(Rc<str>, Rc<str>), (u64, u64)> = HashMap::new();
    for (caller, callee, s) in a.edges() {
        if caller.is_some_and(|c| eltrace_analysis::rows::nested_pair(a, c, callee)) {
            // One call of one method (its row counts it once).
            continue;
        }
        let caller = caller.map_or_else(|| root.clone(), &mut name);
        let e = merged.entry((caller, name(callee))).or_default();
        e.0 += s.calls;
        e.1 += s.inclusive_ns;
    }
    let mut v: Vec<_> = merged.into_iter().collect();
    if tm.per_call() {
        v.sort_by(|x, y| y.1.1.cmp(&x.1.1).then_with(|| x.0.cmp(&y.0)));
    } else {
        v.sort_by(|x, y| y.1.0.cmp(&x.1.0).then_with(|| x.0.cmp(&y.0)));
    }
    v.into_iter()
        .map(|((caller, callee), (calls, incl))| {
            json!({"caller": &*caller, "callee": &*callee, "calls": calls,
                   "inclusive_ns": tm.json_per_call(incl)})
        })
        .collect()
}
