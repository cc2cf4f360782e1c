//! A self-contained HTML report: one file that opens in a browser with no network, holding an
//! interactive flame graph / icicle of the call tree (click to zoom, search), the top-functions
//! table, the threads, the async methods and the trace's facts.
//!
//! The page is `html/report.html` with `html/report.css` and `html/report.js` inlined (our
//! own vanilla JS drawing on a canvas; no library, nothing fetched: a Content-Security-Policy
//! forbids it). The data is one JSON object in a `<script type="application/json">` element,
//! its `<` written `\u003c` so no name can end the element. Its size is bounded by the call
//! tree, not by the number of events:
//!
//! - `tree`: the calling-context tree per thread (paths merged over a thread's frames) under
//!   a thread node, under a process node (the root; a session of several processes will put
//!   one per process under an "all" root). Columns `parent` (-1 for the root), `kind`
//!   (1 process, 2 thread, 3 function, 4 other), `ref` (row in `processes`, `threads`,
//!   `functions`; for "other" the number of nodes it holds), `calls` (for "other", the
//!   frames of all the subtrees it holds), `incl`, `excl` (ns).
//!   At most [`MAX_NODES`] nodes: beyond that the nodes of largest inclusive time are kept
//!   and, under each kept node, the rest is merged into one "other" node (`tree_cap` says so).
//! - `functions`: one row per function name and module (as `report`), the top
//!   [`MAX_FUNCTIONS`] by inclusive time, exclusive time and calls plus every function the
//!   tree or the async table needs; async columns (`async`: 0 none, 1 runtime-async method,
//!   2 its thunk, 3 state machine `MoveNext`; `method`, `segments`, `resumes`, …).
//! - `threads`, `processes` (with the trace's facts) and `strings` (every name once; the
//!   other tables refer to it by index).

mod tree;

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use eltrace_analysis::{
    Analysis, CallNodeId, Frame, FrameSink, FunctionIdx, FunctionStats, Kickoffs, MachineKind,
    Options, Tables, ThreadIdx, ThreadStats, machine_kind_from_flags,
};
use serde_json::{Map, Value, json};

use crate::Exporter;
use tree::{Acc, KeyMap, ThreadRow, path_key};

/// Most nodes of the embedded call tree ("other" nodes included): 25-30 bytes each in the file.
pub const MAX_NODES: usize = 30_000;
/// Functions kept per sort key (inclusive, exclusive, calls) when there are more.
pub const MAX_FUNCTIONS: usize = 2_000;

const TEMPLATE: &str = include_str!("html/report.html");
const CSS: &str = include_str!("html/report.css");
const JS: &str = include_str!("html/report.js");

/// The HTML report exporter.
pub struct Html<'w> {
    out: &'w mut dyn Write,
    max_nodes: usize,
    paths: KeyMap<Acc>,
}

impl<'w> Html<'w> {
    pub fn new(out: &'w mut dyn Write) -> Self {
        Html {
            out,
            max_nodes: MAX_NODES,
            paths: KeyMap::default(),
        }
    }

    /// Sets the node budget of the embedded call tree (default [`MAX_NODES`], at least 2).
    pub fn max_nodes(mut self, max: usize) -> Self {
        self.max_nodes = max;
        self
    }
}

impl FrameSink for Html<'_> {
    fn frame(&mut self, _: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        if let Some(node) = frame.node {
            let acc = self.paths.entry(path_key(thread, node)).or_default();
            acc.calls += 1;
            acc.incl += frame.duration_ns();
            acc.excl += frame.exclusive_ns();
        }
        Ok(())
    }
}

impl Exporter for Html<'_> {
    fn configure(&self, opts: &mut Options) {
        opts.call_tree = true;
    }

    fn finish(&mut self, a: &Analysis) -> io::Result<()> {
        let data = report_data(a, &self.paths, self.max_nodes);
        let title = page_title(a);
        write_page(self.out, &title, &data)?;
        self.out.flush()
    }
}

/// The page's title: the command and the pid.
fn page_title(a: &Analysis) -> String {
    let info = a.info();
    if info.command.is_empty() {
        format!("eltrace: pid {}", info.pid)
    } else {
        format!("eltrace: {} (pid {})", info.command, info.pid)
    }
}

/// Every string once.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: HashMap<String, u32>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

/// One row of the function table: the functions of one name and module, merged.
struct FnRow {
    name: String,
    module: String,
    s: FunctionStats,
    /// 0 none, 1 runtime-async method, 2 its thunk, 3 a state machine's `MoveNext`.
    async_kind: u8,
    /// A state machine's user method (`Ns.T.Work`).
    method: Option<String>,
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
    a.inclusive_ns += b.inclusive_ns;
    a.exclusive_ns += b.exclusive_ns;
    a.max_ns = a.max_ns.max(b.max_ns);
    a.open_at_end += b.open_at_end;
    a.unwound += b.unwound;
    a.tailcalls += b.tailcalls;
    a.mismatched += b.mismatched;
    a.lost += b.lost;
}

/// An iterator's MoveNext is no async method: an ordinary row (kind 0).
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

/// The function rows (sorted by inclusive time, then name) and each function's row.
fn function_rows(a: &Analysis) -> (Vec<FnRow>, HashMap<FunctionIdx, u32>) {
    let kickoffs = Kickoffs::new(&a.tables.functions);
    let mut by_key: HashMap<(String, String), usize> = HashMap::new();
    let mut rows: Vec<FnRow> = Vec::new();
    let mut members: Vec<Vec<FunctionIdx>> = Vec::new();
    let names = |idx| {
        (
            a.tables.functions.name(idx),
            a.tables.functions.module(idx).to_owned(),
        )
    };
    // Functions with calls, then any other the call tree names (a path whose frames never
    // closed), each once.
    let mut seen: HashSet<FunctionIdx> = HashSet::new();
    let called = a.functions().map(|(i, s)| (i, *s));
    let in_tree = a
        .call_tree()
        .into_iter()
        .flat_map(|t| t.nodes().map(|(_, n)| (n.func, FunctionStats::default())));
    for (idx, s) in called.chain(in_tree) {
        if !seen.insert(idx) {
            continue;
        }
        let key = names(idx);
        match by_key.get(&key) {
            Some(&r) => {
                add_stats(&mut rows[r].s, &s);
                members[r].push(idx);
            }
            None => {
                let (async_kind, method) = async_kind(a, &kickoffs, idx, &s);
                by_key.insert(key.clone(), rows.len());
                rows.push(FnRow {
                    name: key.0,
                    module: key.1,
                    s,
                    async_kind,
                    method,
                });
                members.push(vec![idx]);
            }
        }
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&x, &y| {
        let (x, y) = (&rows[x], &rows[y]);
        y.s.inclusive_ns
            .cmp(&x.s.inclusive_ns)
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.module.cmp(&y.module))
    });
    let mut row_of = HashMap::new();
    let mut sorted = Vec::with_capacity(rows.len());
    let mut rows: Vec<Option<FnRow>> = rows.into_iter().map(Some).collect();
    for (new, &old) in order.iter().enumerate() {
        for &idx in &members[old] {
            row_of.insert(idx, new as u32);
        }
        sorted.push(rows[old].take().expect("each row once"));
    }
    (sorted, row_of)
}

/// Which function rows to embed: the top [`MAX_FUNCTIONS`] by each key, the async ones and
/// those in `needed`.
fn keep_functions(rows: &[FnRow], needed: &[bool]) -> Vec<bool> {
    let mut keep: Vec<bool> = rows
        .iter()
        .zip(needed)
        .map(|(r, &n)| n || r.async_kind != 0)
        .collect();
    let keys: [fn(&FnRow) -> u64; 3] = [|r| r.s.inclusive_ns, |r| r.s.exclusive_ns, |r| r.s.calls];
    for key in keys {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(key(&rows[i])), i));
        for &i in order.iter().take(MAX_FUNCTIONS) {
            keep[i] = true;
        }
    }
    keep
}

/// The thread's label: its name or `thread`, and its OS tid.
fn thread_label(a: &Analysis, idx: ThreadIdx) -> String {
    match a.tables.threads.get(idx) {
        Some(r) if !r.name.is_empty() => format!("{} (tid {})", r.name, r.os_tid),
        Some(r) => format!("thread {}", r.os_tid),
        None => format!("thread #{}", idx.0),
    }
}

fn column<T: Into<Value>>(values: impl Iterator<Item = T>) -> Value {
    Value::Array(values.map(Into::into).collect())
}

/// The JSON object the page reads (see the module documentation).
fn report_data(a: &Analysis, paths: &KeyMap<Acc>, max_nodes: usize) -> Value {
    let mut strings = Strings::default();
    strings.id("");
    let (rows, row_of) = function_rows(a);

    // Threads: every analysed thread, in index order.
    let threads: Vec<ThreadRow> = a
        .threads()
        .enumerate()
        .map(|(row, (idx, _))| ThreadRow {
            idx,
            row: row as u32,
        })
        .collect();
    let nodes = match a.call_tree() {
        Some(t) => tree::build(paths, t, &threads, |c: CallNodeId| {
            t.get(c).map_or(u32::MAX, |n| row_of[&n.func])
        }),
        None => Vec::new(),
    };
    let capped = tree::cap(&nodes, max_nodes);

    // The function rows to embed, renumbered.
    let mut needed = vec![false; rows.len()];
    for n in &capped.nodes {
        if n.kind == tree::Kind::Function {
            needed[n.reference as usize] = true;
        }
    }
    let keep = keep_functions(&rows, &needed);
    let mut new_row = vec![u32::MAX; rows.len()];
    let mut kept_rows: Vec<&FnRow> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if keep[i] {
            new_row[i] = kept_rows.len() as u32;
            kept_rows.push(r);
        }
    }
    let called = rows.iter().filter(|r| r.s.calls > 0).count();

    let mut data = Map::new();
    data.insert("schema".into(), json!(1));
    data.insert("processes".into(), json!([process_facts(a, called)]));
    data.insert("tree".into(), tree_json(&capped.nodes, &new_row));
    data.insert(
        "tree_cap".into(),
        json!({"max": max_nodes, "total": capped.total, "shown": capped.nodes.len(),
               "hidden": capped.hidden}),
    );
    data.insert("functions".into(), functions_json(&kept_rows, &mut strings));
    data.insert(
        "functions_cap".into(),
        json!({"per_key": MAX_FUNCTIONS, "total": rows.len(), "shown": kept_rows.len()}),
    );
    data.insert("threads".into(), threads_json(a, &mut strings));
    data.insert("strings".into(), json!(strings.list));
    Value::Object(data)
}

/// The tree's columns; a function node refers to its row in `new_row`.
fn tree_json(tree: &[tree::Node], new_row: &[u32]) -> Value {
    let reference = |n: &tree::Node| match n.kind {
        tree::Kind::Function => u64::from(new_row[n.reference as usize]),
        _ => n.reference,
    };
    json!({
        "parent": column(tree.iter().map(|n| n.parent.map_or(-1, i64::from))),
        "kind": column(tree.iter().map(|n| n.kind as u8)),
        "ref": column(tree.iter().map(reference)),
        "calls": column(tree.iter().map(|n| n.calls)),
        "incl": column(tree.iter().map(|n| n.incl)),
        "excl": column(tree.iter().map(|n| n.excl)),
    })
}

fn functions_json(rows: &[&FnRow], strings: &mut Strings) -> Value {
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

/// Every analysed thread, in index order (the rows the tree's thread nodes refer to).
fn threads_json(a: &Analysis, strings: &mut Strings) -> Value {
    let stats: Vec<_> = a.threads().collect();
    let t = |get: fn(&ThreadStats) -> u64| column(stats.iter().map(|(_, s)| get(s)));
    let records: Vec<_> = stats
        .iter()
        .map(|(i, _)| a.tables.threads.get(*i))
        .collect();
    let labels: Vec<u32> = stats
        .iter()
        .map(|(i, _)| strings.id(&thread_label(a, *i)))
        .collect();
    let names: Vec<u32> = records
        .iter()
        .map(|r| strings.id(r.map_or("", |r| r.name.as_str())))
        .collect();
    json!({
        "process": column(stats.iter().map(|_| 0)),
        "tid": column(records.iter().map(|r| r.map_or(0, |r| r.os_tid))),
        "managed": column(records.iter().map(|r| r.map_or(0, |r| r.managed_id))),
        "name": names,
        "label": labels,
        "events": t(|s| s.events),
        "frames": t(|s| s.frames),
        "incl": t(|s| s.inclusive_ns),
        "depth": t(|s| u64::from(s.max_depth)),
        "open": t(|s| s.open_frames_at_end),
        "lost": t(|s| s.lost_frames),
        "dropped": t(|s| s.dropped_events),
        "throws": t(|s| s.throws),
        "first": t(|s| s.first_ns),
        "last": t(|s| s.last_ns),
    })
}

/// The process's facts: what was run, how the trace ended, what was lost.
fn process_facts(a: &Analysis, functions_called: usize) -> Value {
    let info = a.info();
    let t = &a.totals;
    let end = a.end.as_ref();
    json!({
        "pid": info.pid,
        "command": info.command,
        "runtime": info.runtime,
        "hook_mode": info.hook_mode,
        "start_unix_ns": info.start_unix_ns,
        "duration_ns": a.duration_ns(),
        "root_ns": t.root_ns,
        "events": t.events,
        "analysed_events": t.analysed_events,
        "threads": a.threads().count(),
        "functions": a.tables.functions.len(),
        "functions_called": functions_called,
        "frames": t.frames,
        "logical_calls": t.logical_calls,
        "throws": t.throws,
        "dropped_events": a.dropped_events(),
        "truncated": a.truncated,
        "end_reason": a.end_reason(),
        "internal_errors": end.map_or(0, |e| e.internal_errors),
        "open_frames_at_end": t.open_frames_at_end,
        "mismatched_frames": t.mismatched_frames,
        "unmatched_leaves": t.unmatched_leaves,
        "lost_frames": t.lost_frames,
        "suspended_frames": t.suspended_frames,
        "vanished_frames": t.vanished_frames,
        "extra": info.extra,
        "diagnostics": a.diagnostics,
    })
}

/// `&`, `<`, `>`, `"` and `'` as HTML entities.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes JSON text with every `<` as `\u003c` (it only occurs inside strings), so the text
/// cannot close or confuse the `<script>` element that holds it.
struct NoLt<'a>(&'a mut dyn Write);

impl Write for NoLt<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for (i, part) in buf.split(|&b| b == b'<').enumerate() {
            if i > 0 {
                self.0.write_all(b"\\u003c")?;
            }
            self.0.write_all(part)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Fills the template's `{{title}}`, `{{css}}`, `{{js}}` and `{{data}}`.
fn write_page(out: &mut dyn Write, title: &str, data: &Value) -> io::Result<()> {
    let mut rest = TEMPLATE;
    while let Some(open) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..open])?;
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| bad_template("an unclosed {{"))?;
        match &after[..close] {
            "title" => out.write_all(html_escape(title).as_bytes())?,
            "css" => out.write_all(CSS.as_bytes())?,
            "js" => out.write_all(JS.as_bytes())?,
            "data" => serde_json::to_writer(NoLt(&mut *out), data)?,
            other => return Err(bad_template(other)),
        }
        rest = &after[close + 2..];
    }
    out.write_all(rest.as_bytes())
}

fn bad_template(what: &str) -> io::Error {
    io::Error::other(format!("report template: unknown placeholder {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_lt_escapes_every_lt() {
        let mut out = Vec::new();
        let v = json!({"name": "App.P+<Work>d__3.MoveNext</script>"});
        serde_json::to_writer(NoLt(&mut out), &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('<'), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn assets_cannot_end_their_elements() {
        assert!(!JS.to_ascii_lowercase().contains("</script"));
        assert!(!CSS.to_ascii_lowercase().contains("</style"));
    }

    #[test]
    fn template_has_only_known_placeholders() {
        let mut out = Vec::new();
        write_page(&mut out, "a <b> & \"c\"", &json!({})).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains("a &lt;b&gt; &amp; &quot;c&quot;"));
        assert!(!page.contains("{{"));
    }
}
