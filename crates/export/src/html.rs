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
//!   a thread node, under a process node (the root; with several processes, one per process
//!   under an "all" root). Columns `parent` (-1 for the root), `kind` (0 all, 1 process,
//!   2 thread, 3 function, 4 other), `ref` (row in `processes`, `threads`,
//!   `functions`; for "other" the number of nodes it holds), `calls` (for "other", the
//!   frames of all the subtrees it holds), `incl`, `excl` (ns).
//!   At most [`MAX_NODES`] nodes: beyond that the nodes of largest inclusive time are kept
//!   and, under each kept node, the rest is merged into one "other" node (`tree_cap` says so).
//! - `tree_logical` (with `tree_logical_cap`), when the trace has frames: the logical call tree
//!   in the same columns, function nodes under each process node with no thread level (async
//!   calls under the call that awaited them); the page's Logical switch shows it.
//! - `functions`: one row per function name and module (as `report`; over all processes), the top
//!   [`MAX_FUNCTIONS`] by inclusive time, exclusive time and calls plus every function the
//!   tree or the async table needs; async columns (`async`: 0 none, 1 runtime-async method,
//!   2 its thunk, 3 state machine `MoveNext`; `method`, `segments`, `resumes`, …).
//! - `threads` (`process`: the thread's row in `processes`; `first`, `last` on the export's
//!   timeline), `processes` (with each trace's facts) and `strings` (every name once; the
//!   other tables refer to it by index). Waits for the trace writer (`waits`, `wait_ns`) are
//!   in a process's facts and the thread columns only when some thread waited.
//!
//! - `timed` (false: some process has no per-event times) and `estimated` (true: every such
//!   process was recorded with `--timing sampled`, and the tree's and rows' `incl` and `excl`
//!   are the sampler's estimates; per-call figures and thread times are then unknown).
//!
//! A process adds its rows, threads and tree when its analysis ends ([`Exporter::end_process`]);
//! the page is written at [`Exporter::finish`].

mod columns;
mod functions;
mod tree;

use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::{
    Analysis, Frame, FrameSink, FunctionIdx, Options, Tables, ThreadIdx, ThreadStats,
};
use serde_json::{Map, Value, json};

use crate::labels::thread_label;
use crate::{Exporter, ProcessMeta};
use columns::{Strings, column};
pub use functions::MAX_FUNCTIONS;
use functions::{FnRow, add_function_rows, functions_json, keep_functions};
use tree::{Acc, KeyMap, ThreadRow, path_key};

/// Most nodes of the embedded call tree ("other" nodes included): 25-30 bytes each in the file.
pub const MAX_NODES: usize = 30_000;

const TEMPLATE: &str = include_str!("html/report.html");
const CSS: &str = include_str!("html/report.css");
const JS: &str = include_str!("html/report.js");

/// The HTML report exporter.
pub struct Html<'w> {
    out: &'w mut dyn Write,
    max_nodes: usize,
    /// The current process and its frames per thread and call path.
    process: ProcessMeta,
    paths: KeyMap<Acc>,
    /// What the processes ended so far add to the report.
    report: Report,
}

/// The report's tables as the processes add to them.
#[derive(Default)]
struct Report {
    processes: Vec<ProcessMeta>,
    facts: Vec<Value>,
    /// Function rows in the order met (sorted at the end), and the row of each name and module.
    rows: Vec<FnRow>,
    row_of_key: HashMap<(String, String), u32>,
    threads: Vec<ThreadLine>,
    /// Each process's tree; function nodes refer to `rows`.
    trees: Vec<Vec<tree::Node>>,
    /// Each process's logical call tree (async calls under the call that awaited them).
    logical: Vec<Vec<tree::Node>>,
    /// A process was recorded without per-event times (`record --timing none|sampled`): the
    /// page shows no measured time (`timed` in the data); with the sampler's estimates of every
    /// such process (`estimated`), it weighs the graph and the tables by estimated time,
    /// marked `~`; else by calls, with no time.
    timeless: bool,
    /// A process was recorded with `--timing none`: no estimates either.
    unestimated: bool,
}

/// A row of the thread table.
struct ThreadLine {
    process: u32,
    tid: u64,
    name: String,
    label: String,
    s: ThreadStats,
    /// The process's start on the export's timeline.
    offset: u64,
}

impl<'w> Html<'w> {
    pub fn new(out: &'w mut dyn Write) -> Self {
        Html {
            out,
            max_nodes: MAX_NODES,
            process: ProcessMeta::from_info(&Default::default()),
            paths: KeyMap::default(),
            report: Report::default(),
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
        opts.logical_tree = true;
    }

    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.process = process.clone();
        self.paths.clear();
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        let r = &mut self.report;
        r.timeless |= !a.has_event_times();
        r.unestimated |= !a.has_event_times() && a.sampled.is_none();
        let process = r.processes.len() as u32;
        let (row_of, called) = add_function_rows(a, &mut r.rows, &mut r.row_of_key);
        let first = r.threads.len();
        let threads: Vec<ThreadRow> = a
            .threads()
            .enumerate()
            .map(|(k, (idx, _))| ThreadRow {
                idx,
                row: (first + k) as u32,
            })
            .collect();
        for (idx, s) in a.threads() {
            let rec = a.tables.threads.get(idx);
            r.threads.push(ThreadLine {
                process,
                tid: rec.map_or(0, |r| r.os_tid),
                name: rec.map_or("", |r| r.name.as_str()).to_owned(),
                label: thread_label(&a.tables, idx, self.process.pid),
                s: *s,
                offset: self.process.start_ns,
            });
        }
        // A function's row, and whether it is a method's thunk (labelled so in the graph).
        let row_and_thunk = |f: FunctionIdx| {
            (
                row_of.get(&f).copied().unwrap_or(u32::MAX),
                a.tables
                    .functions
                    .get(f)
                    .is_some_and(|r| r.flags.async_thunk()),
            )
        };
        if let Some(t) = a.call_tree() {
            if let Some(sampled) = a.sampled.as_ref().filter(|_| !a.has_event_times()) {
                tree::estimate_paths(&mut self.paths, t, sampled);
            }
            r.trees
                .push(tree::build(&self.paths, t, process, &threads, |c| {
                    t.get(c)
                        .map_or((u32::MAX, false), |n| row_and_thunk(n.func))
                }));
        }
        if let Some(t) = a.logical_tree() {
            r.logical
                .push(tree::build_logical(t, process, row_and_thunk));
        }
        r.facts.push(process_facts(a, &self.process, called));
        r.processes.push(self.process.clone());
        self.paths.clear();
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let title = page_title(&self.report.processes);
        let data = report_data(std::mem::take(&mut self.report), self.max_nodes);
        write_page(self.out, &title, &data)?;
        self.out.flush()
    }
}

/// The page's title: the command and the pid; with several processes, their programs and
/// pids.
fn page_title(processes: &[ProcessMeta]) -> String {
    match processes {
        [p] if p.command.is_empty() => format!("eltrace: pid {}", p.pid),
        [p] => format!("eltrace: {} (pid {})", p.command, p.pid),
        _ => {
            let labels: Vec<String> = processes.iter().map(ProcessMeta::label).collect();
            format!(
                "eltrace: {} processes: {}",
                processes.len(),
                labels.join(", ")
            )
        }
    }
}

/// The JSON object the page reads (see the module documentation).
fn report_data(r: Report, max_nodes: usize) -> Value {
    let mut strings = Strings::default();
    strings.id("");
    // Function rows by inclusive time, then name and module.
    let mut order: Vec<usize> = (0..r.rows.len()).collect();
    order.sort_by(|&x, &y| {
        let (x, y) = (&r.rows[x], &r.rows[y]);
        y.s.inclusive_ns
            .cmp(&x.s.inclusive_ns)
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.module.cmp(&y.module))
    });
    let mut sorted_row = vec![0u64; r.rows.len()];
    for (new, &old) in order.iter().enumerate() {
        sorted_row[old] = new as u64;
    }
    let rows: Vec<&FnRow> = order.iter().map(|&i| &r.rows[i]).collect();

    let mut nodes = tree::join(r.trees);
    for n in &mut nodes {
        if n.kind == tree::Kind::Function {
            n.reference = sorted_row
                .get(n.reference as usize)
                .copied()
                .unwrap_or(u64::MAX);
        }
    }
    let capped = tree::cap(&nodes, max_nodes);
    let mut logical = tree::join(r.logical);
    for n in &mut logical {
        if n.kind == tree::Kind::Function {
            n.reference = sorted_row
                .get(n.reference as usize)
                .copied()
                .unwrap_or(u64::MAX);
        }
    }
    let logical = tree::cap(&logical, max_nodes);

    // The function rows to embed, renumbered.
    let mut needed = vec![false; rows.len()];
    for n in capped.nodes.iter().chain(&logical.nodes) {
        if n.kind == tree::Kind::Function && (n.reference as usize) < needed.len() {
            needed[n.reference as usize] = true;
        }
    }
    let keep = keep_functions(&rows, &needed);
    let mut new_row = vec![u32::MAX; rows.len()];
    let mut kept_rows: Vec<&FnRow> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if keep[i] {
            new_row[i] = kept_rows.len() as u32;
            kept_rows.push(row);
        }
    }

    let mut data = Map::new();
    data.insert("schema".into(), json!(1));
    data.insert("processes".into(), Value::Array(r.facts));
    data.insert("tree".into(), tree_json(&capped.nodes, &new_row));
    data.insert(
        "tree_cap".into(),
        json!({"max": max_nodes, "total": capped.total, "shown": capped.nodes.len(),
               "hidden": capped.hidden}),
    );
    if logical.nodes.len() > 1 {
        data.insert("tree_logical".into(), tree_json(&logical.nodes, &new_row));
        data.insert(
            "tree_logical_cap".into(),
            json!({"max": max_nodes, "total": logical.total, "shown": logical.nodes.len(),
                   "hidden": logical.hidden}),
        );
    }
    data.insert("functions".into(), functions_json(&kept_rows, &mut strings));
    data.insert(
        "functions_cap".into(),
        json!({"per_key": MAX_FUNCTIONS, "total": rows.len(), "shown": kept_rows.len()}),
    );
    data.insert("threads".into(), threads_json(&r.threads, &mut strings));
    data.insert("strings".into(), json!(strings.list));
    data.insert("timed".into(), json!(!r.timeless));
    data.insert("estimated".into(), json!(r.timeless && !r.unestimated));
    Value::Object(data)
}

/// The tree's columns; a function node refers to its row in `new_row`.
fn tree_json(tree: &[tree::Node], new_row: &[u32]) -> Value {
    let reference = |n: &tree::Node| match n.kind {
        tree::Kind::Function => new_row
            .get(n.reference as usize)
            .map_or(u64::from(u32::MAX), |&r| u64::from(r)),
        _ => n.reference,
    };
    json!({
        "parent": column(tree.iter().map(|n| n.parent.map_or(-1, i64::from))),
        "kind": column(tree.iter().map(|n| n.kind as u8)),
        "ref": column(tree.iter().map(reference)),
        "calls": column(tree.iter().map(|n| n.calls)),
        "incl": column(tree.iter().map(|n| n.incl)),
        "excl": column(tree.iter().map(|n| n.excl)),
        "thunk": column(tree.iter().map(|n| u8::from(n.thunk))),
    })
}

/// Every analysed thread of every process, in index order (the rows the tree's thread nodes
/// refer to).
fn threads_json(threads: &[ThreadLine], strings: &mut Strings) -> Value {
    let t = |get: fn(&ThreadStats) -> u64| column(threads.iter().map(|l| get(&l.s)));
    let at = |get: fn(&ThreadStats) -> u64| column(threads.iter().map(|l| get(&l.s) + l.offset));
    let labels: Vec<u32> = threads.iter().map(|l| strings.id(&l.label)).collect();
    let names: Vec<u32> = threads.iter().map(|l| strings.id(&l.name)).collect();
    let mut columns = json!({
        "process": column(threads.iter().map(|l| l.process)),
        "tid": column(threads.iter().map(|l| l.tid)),
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
        "first": at(|s| s.first_ns),
        "last": at(|s| s.last_ns),
    });
    if threads.iter().any(|l| l.s.waits > 0) {
        columns["waits"] = t(|s| s.waits);
        columns["wait_ns"] = t(|s| s.wait_ns);
    }
    columns
}

/// A process's facts: what was run, how the trace ended, what was lost.
fn process_facts(a: &Analysis, process: &ProcessMeta, functions_called: usize) -> Value {
    let info = a.info();
    let t = &a.totals;
    let end = a.end.as_ref();
    let mut facts = json!({
        "pid": process.pid,
        "command": process.command,
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
    });
    if t.waits > 0 {
        facts["waits"] = json!(t.waits);
        facts["wait_ns"] = json!(t.wait_ns);
    }
    facts
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
