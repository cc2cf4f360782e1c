//! `eltrace report`: statistics of a trace as text tables or as the JSON object of
//! docs/design.md ("`eltrace report --json`").

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use eltrace_analysis::{Analysis, FunctionIdx, Options, analyze};
use serde_json::{Value, json};

use crate::session;
use crate::util::{Fail, analysis_fail, fmt_ns, open_trace, print_stdout, warn_incomplete};

mod iterators;
mod json;
mod logical;
mod options;
mod rows;
mod timing;
use iterators::{iterator_json, iterator_table};
use json::json_report;
pub use options::{ReportOptions, SortBy};
use rows::{Row, display_name, fit, mean, rows, share};
use timing::Timing;

/// Rows shown in the table when `--top` is not given.
const DEFAULT_TOP: usize = 25;

pub fn report(opts: ReportOptions) -> Result<ExitCode, Fail> {
    let traces = session::select(&opts.paths, opts.pids.as_deref())?;
    let several = traces.len() > 1;
    let mut json_reports = Vec::new();
    let mut text = String::new();
    let mut thread_found = opts.threads.is_none();
    for t in &traces {
        let one = ReportOptions {
            path: t.path.clone(),
            ..opts.clone()
        };
        let (a, rows) = analyse(&one, !several)?;
        if let Some(tids) = &opts.threads {
            thread_found |= tids
                .iter()
                .any(|tid| a.tables.threads.iter().any(|r| r.os_tid == *tid));
        }
        if opts.json {
            json_reports.push(json_report(&one, &a, &rows));
        } else {
            if several {
                let _ = writeln!(
                    text,
                    "== process {}: {} ({})",
                    t.info.pid,
                    t.info.command,
                    t.path.display()
                );
            }
            text.push_str(&text_report(&one, &a, &rows));
            text.push_str(&logical::text(&a, opts.top));
            if several {
                text.push('\n');
            }
        }
    }
    if !thread_found {
        return Err(Fail::new(format!(
            "no process of {} has a thread with OS tid {}",
            opts.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            opts.threads
                .iter()
                .flatten()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if opts.json {
        let value = if several {
            // Moved in, not copied (`json!` would copy each report).
            let mut all = serde_json::Map::new();
            all.insert("processes".into(), Value::Array(json_reports));
            Value::Object(all)
        } else {
            json_reports.pop().unwrap_or(Value::Null)
        };
        text = serde_json::to_string_pretty(&value)
            .map_err(|e| Fail::new(format!("JSON encoding failed: {e}")))?;
        text.push('\n');
    }
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Analyses the trace at `opts.path`; with `strict`, a `--thread` it does not have is an
/// error.
fn analyse(opts: &ReportOptions, strict: bool) -> Result<(Analysis, Vec<Row>), Fail> {
    let input = open_trace(&opts.path)?;
    let aopts = Options {
        threads: opts.threads.clone(),
        logical_tree: opts.logical,
        ..Options::default()
    };
    let a = analyze(input, &aopts).map_err(|e| analysis_fail(&opts.path, &e))?;
    if let (true, Some(tids)) = (strict, &opts.threads) {
        check_threads(opts, &a, tids)?;
    }
    warn_incomplete(&opts.path, &a);
    let rows = rows(&a, opts.by);
    Ok((a, rows))
}

/// Fails when a `--thread` tid is not a thread of the trace.
fn check_threads(opts: &ReportOptions, a: &Analysis, tids: &[u64]) -> Result<(), Fail> {
    for tid in tids {
        if !a.tables.threads.iter().any(|t| t.os_tid == *tid) {
            let known: Vec<String> = a
                .tables
                .threads
                .iter()
                .map(|t| t.os_tid.to_string())
                .collect();
            return Err(Fail::new(format!(
                "{}: no thread with OS tid {tid} (threads: {})",
                opts.path.display(),
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// One function of a process's trace as `report` counts it: its displayed name, module,
/// calls and times (`timed`: the trace has times, measured or sampled).
pub(crate) struct Counted {
    pub name: String,
    pub module: String,
    pub calls: u64,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
}

/// The functions of the trace at `path` (one process), as `report` shows them, and whether
/// it has times (`eltrace diff`).
pub(crate) fn counted(
    path: &std::path::Path,
    threads: Option<Vec<u64>>,
) -> Result<(Vec<Counted>, bool), Fail> {
    let opts = ReportOptions {
        paths: vec![path.to_path_buf()],
        pids: None,
        path: path.to_path_buf(),
        top: None,
        by: SortBy::Calls,
        threads,
        json: false,
        logical: false,
    };
    let (a, rows) = analyse(&opts, false)?;
    let timed = Timing::of(&a).has_times();
    let out = rows
        .iter()
        .map(|r| Counted {
            name: display_name(r),
            module: r.module.clone(),
            calls: r.s.calls,
            inclusive_ns: r.s.inclusive_ns,
            exclusive_ns: r.s.exclusive_ns,
        })
        .collect();
    Ok((out, timed))
}

fn text_report(opts: &ReportOptions, a: &Analysis, rows: &[Row]) -> String {
    let mut o = String::new();
    let tm = Timing::of(a);
    let total = tm.total(a);
    text_summary(&mut o, opts, a, rows.len());
    text_notes(&mut o, opts, a, tm);
    o.push('\n');
    let n = function_table(&mut o, opts, rows, tm, total);
    o.push('\n');
    iterator_table(&mut o, rows, n);
    thread_table(&mut o, a, tm, total);
    for d in &a.diagnostics {
        let _ = writeln!(o, "profiler: {d}");
    }
    o
}

/// The report's first lines: the trace, its process and the counts of the recording.
fn text_summary(o: &mut String, opts: &ReportOptions, a: &Analysis, called: usize) {
    let info = a.info();
    let t = &a.totals;
    let _ = write!(o, "trace {}: pid {}", opts.path.display(), info.pid);
    if !info.command.is_empty() {
        let _ = write!(o, ", {}", info.command);
    }
    if !info.runtime.is_empty() {
        let _ = write!(o, ", {}", info.runtime);
    }
    if !info.hook_mode.is_empty() {
        let _ = write!(o, ", hooks {}", info.hook_mode);
    }
    o.push('\n');
    let _ = writeln!(
        o,
        "events {}, threads {}, functions {} called of {}, dropped {}, truncated {}, \
         open frames at end {}, end {}, duration {}",
        t.events,
        a.threads().count(),
        called,
        a.tables.functions.len(),
        a.dropped_events(),
        if a.truncated { "yes" } else { "no" },
        t.open_frames_at_end,
        a.end_reason(),
        fmt_ns(a.duration_ns()),
    );
}

/// The notes under the summary, each only when it applies: waits, async and iterator
/// counts, tail-call loops, frames without a Leave, mismatches, the timing's note and the
/// threads shown.
fn text_notes(o: &mut String, opts: &ReportOptions, a: &Analysis, tm: Timing<'_>) {
    let info = a.info();
    let t = &a.totals;
    if t.waits > 0 {
        let _ = writeln!(
            o,
            "waits: hooks waited {} times for the trace writer, {} in all (lossless recording; \
             the waiting time is inside the frames that were running)",
            t.waits,
            fmt_ns(t.wait_ns)
        );
    }
    if t.logical_calls > 0 {
        let _ = writeln!(
            o,
            "async: {} logical calls, {} segments ended by suspending without a Leave{}",
            t.logical_calls,
            t.suspended_frames,
            if info.async_suspend_leaves() {
                " (this runtime reports a Leave at suspension)"
            } else {
                ""
            }
        );
    }
    if t.enumerations > 0 {
        let _ = writeln!(
            o,
            "iterators: {} enumerations (a row's calls count MoveNext calls, its suspends the \
             yields; see the iterators table)",
            t.enumerations
        );
    }
    if let Some(v) = info.tail_call_loop_opt().filter(|&v| v != "0") {
        let _ = writeln!(
            o,
            "tail calls: the JIT's self-tail-call loops were on (TailCallLoopOpt {v}): a \
             self-recursive call it turned into a jump is not counted (record without \
             --keep-tail-loops counts them)"
        );
    }
    if t.vanished_frames > 0 {
        let _ = writeln!(
            o,
            "frames that ended without a Leave (shown gone by a later stack pointer): {}",
            t.vanished_frames
        );
    }
    if t.mismatched_frames + t.unmatched_leaves + t.lost_frames > 0 {
        let _ = writeln!(
            o,
            "mismatched frames {}, unmatched leaves {}, frames lost to drops {}",
            t.mismatched_frames, t.unmatched_leaves, t.lost_frames
        );
    }
    if let Some(note) = tm.note(a) {
        let _ = writeln!(o, "{note}");
    }
    if opts.threads.is_some() {
        let _ = writeln!(o, "threads shown: {} (by OS tid)", {
            let v: Vec<String> = opts.threads.iter().flatten().map(u64::to_string).collect();
            v.join(", ")
        });
    }
}

/// The functions table (the `--top` first rows); returns how many rows it shows.
fn function_table(
    o: &mut String,
    opts: &ReportOptions,
    rows: &[Row],
    tm: Timing<'_>,
    total: u64,
) -> usize {
    let n = opts.top.unwrap_or(DEFAULT_TOP).min(rows.len());
    let shown = &rows[..n];
    let name_w = shown
        .iter()
        .map(|r| display_name(r).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, 60);
    let mod_w = shown
        .iter()
        .map(|r| r.module.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 30);
    let _ = writeln!(
        o,
        "{:<name_w$}  {:<mod_w$}  {:>9}  {:>8}  {:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}",
        "function",
        "module",
        "calls",
        "segments",
        "suspends",
        "incl",
        "incl mean",
        "excl",
        "excl mean",
        "incl %"
    );
    for r in shown {
        let s = &r.s;
        let _ = writeln!(
            o,
            "{:<name_w$}  {:<mod_w$}  {:>9}  {:>8}  {:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}",
            fit(&display_name(r), name_w),
            fit(&r.module, mod_w),
            s.calls,
            s.segments,
            s.suspensions,
            tm.text(s.inclusive_ns),
            tm.text_per_call(mean(s.inclusive_ns, s.calls)),
            tm.text(s.exclusive_ns),
            tm.text_per_call(mean(s.exclusive_ns, s.calls)),
            tm.text_share(share(s.inclusive_ns, total)),
        );
    }
    if rows.is_empty() {
        o.push_str("(no calls recorded)\n");
    } else if n < rows.len() {
        let _ = writeln!(
            o,
            "… {} more functions (--top N shows more)",
            rows.len() - n
        );
    }
    n
}

/// The threads table and its total line.
fn thread_table(o: &mut String, a: &Analysis, tm: Timing<'_>, total: u64) {
    let info = a.info();
    let t = &a.totals;
    // No managed thread id column: no profiling API gives it, so every trace has 0 there
    // (the JSON keeps `managed_id`, documented as such). The thread's name is the one every
    // export shows (`main` for the thread whose tid is the pid).
    let _ = writeln!(
        o,
        "{:>8}  {:<20}  {:>10}  {:>10}  {:>9}  {:>11}",
        "tid", "thread", "events", "inclusive", "max depth", "open at end"
    );
    for (idx, s) in a.threads() {
        let r = a.tables.threads.get(idx);
        let _ = writeln!(
            o,
            "{:>8}  {:<20}  {:>10}  {:>10}  {:>9}  {:>11}",
            r.map_or_else(|| format!("#{}", idx.0), |r| r.os_tid.to_string()),
            fit(&a.tables.threads.name(idx, info.pid), 20),
            s.events,
            tm.text_per_call(s.inclusive_ns),
            s.max_depth,
            s.open_frames_at_end,
        );
    }
    let _ = writeln!(
        o,
        "{:>8}  {:<20}  {:>10}  {:>10}",
        "total",
        "",
        t.analysed_events,
        tm.text(total)
    );
}
