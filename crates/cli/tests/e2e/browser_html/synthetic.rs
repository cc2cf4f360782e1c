//! The report of a synthetic trace (two threads, recursion, a state machine, a runtime-async
//! call resumed on the other thread) used in Chromium: every box drawn, zoom, search, the
//! tables sorted, the async table and the facts; its Logical view, which puts the resumed
//! segment under its caller; and a tree of 40,203 nodes, more than the report's 30,000.

use std::fs;

use super::{WINDOW, strings, use_report};
use crate::common::browser::{dump_dom, element_text, export_html, uri_decode};
use crate::common::processes::TempDir;
use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::testing::{Function, TraceBuilder, app_info};
use eltrace_trace::{FunctionFlags, TraceInfo};
use serde_json::{Value, json};

/// Two threads: Main (tid 1001) and `pool <worker>` (tid 1002), times in µs.
/// Main:   Main 0..100 { Compute 1..41 { Fib 2..30 { Fib 3..24 { Fib 4..14 } }, Leaf 31..40 },
///                       Compute 42..60 { Leaf 43..59 }, Run 61..70 { <Run>d__2.MoveNext },
///                       Work [thunk] 71..80 { Work 72..80 (suspends) } }
/// worker: Loop 5..60 { Compute 6..50 { Leaf 7..40 } }, Work 81..90 (resumed) { Leaf 82..88 }
/// 18 boxes: the process, 2 threads, 10 paths on Main, 5 on the worker.
fn synthetic() -> Vec<u8> {
    const US: u64 = 1_000;
    let info = TraceInfo {
        runtime: "CoreCLR 10.0.0".into(),
        ..app_info()
    };
    let f = |t, m| Function::new("App.dll", t, m);
    let runtime_async = |flags| {
        f("App.Program", "Work")
            .token(0x0600_0009)
            .impl_flags(0x2000)
            .flags(FunctionFlags::HOOKED | flags)
    };
    let (main, compute, fib, leaf, lp, run, movenext, thunk, work) = (0, 1, 2, 3, 4, 5, 6, 7, 8);
    let ev = |list: &[(u64, eltrace_trace::EventKind, u32, u64)]| -> Vec<_> {
        list.iter()
            .map(|&(t, k, f, sp)| (t * US, k, f, sp))
            .collect()
    };
    TraceBuilder::new(info)
        .functions([
            f("App.Program", "Main"),
            f("App.Program", "Compute"),
            f("App.Math", "Fib"),
            f("App.Program", "Leaf"),
            f("App.Worker", "Loop"),
            f("App.Program", "Run"),
            f("App.Program+<Run>d__2", "MoveNext"),
            runtime_async(FunctionFlags::ASYNC_THUNK),
            runtime_async(FunctionFlags::ASYNC_VARIANT),
        ])
        .named_thread(0, 1001, 1, "Main")
        .named_thread(1, 1002, 4, "pool <worker>")
        .events_sp(
            0,
            &ev(&[
                (0, Enter, main, 0x9000),
                (1, Enter, compute, 0x8f00),
                (2, Enter, fib, 0x8e00),
                (3, Enter, fib, 0x8d00),
                (4, Enter, fib, 0x8c00),
                (14, Leave, fib, 0x8c00),
                (24, Leave, fib, 0x8d00),
                (30, Leave, fib, 0x8e00),
                (31, Enter, leaf, 0x8e00),
                (40, Leave, leaf, 0x8e00),
                (41, Leave, compute, 0x8f00),
                (42, Enter, compute, 0x8f00),
                (43, Enter, leaf, 0x8e00),
                (59, Leave, leaf, 0x8e00),
                (60, Leave, compute, 0x8f00),
                (61, Enter, run, 0x8f00),
                (62, Enter, movenext, 0x8e00),
                (69, Leave, movenext, 0x8e00),
                (70, Leave, run, 0x8f00),
                (71, Enter, thunk, 0x8f00),
                (72, Enter, work, 0x8e00),
                (80, Leave, thunk, 0x8f00),
            ]),
        )
        .events_sp(
            1,
            &ev(&[
                (5, Enter, lp, 0x5100),
                (6, Enter, compute, 0x5000),
                (7, Enter, leaf, 0x4f00),
                (40, Leave, leaf, 0x4f00),
                (50, Leave, compute, 0x5000),
                (60, Leave, lp, 0x5100),
                (81, Enter, work, 0x5100),
                (82, Enter, leaf, 0x5000),
                (88, Leave, leaf, 0x5000),
                (90, Leave, work, 0x5100),
            ]),
        )
        .events_sp(0, &ev(&[(100, Leave, main, 0x9000)]))
        .end(100 * US)
}

#[test]
fn synthetic_report_in_chromium() {
    let dir = TempDir::new("browser-synthetic");
    let trace = dir.path().join("synthetic.eltrace");
    fs::write(&trace, synthetic()).unwrap();
    let seen = use_report(
        dir.path(),
        &trace,
        "synthetic",
        "App.Program.Compute",
        "leaf",
    );
    assert_eq!(seen["nodes"], 18, "{seen:#}");
    assert_eq!(
        seen["drawn"], 18,
        "every box is wide enough to draw: {seen:#}"
    );
    // Zoomed on Main's Compute: the process, Main's thread, Main, and Compute's 5 boxes.
    assert_eq!(seen["zoom_boxes"], 2, "Compute on each thread: {seen:#}");
    assert_eq!(seen["zoomed_drawn"], 8, "{seen:#}");
    assert_eq!(
        seen["crumbs"],
        "Zoomed: dotnet App.dll (pid 4242) › Main (1001) › App.Program.Main › App.Program.Compute"
    );
    // Leaf under Compute on each thread and under the resumed Work.
    assert_eq!(seen["matches"], 3, "{seen:#}");
    assert!(
        seen["search_result"]
            .as_str()
            .unwrap()
            .starts_with("3 boxes match, "),
        "{seen:#}"
    );
    assert_eq!(strings(&seen["search_functions"]), ["App.Program.Leaf"]);
    // Sorted by inclusive time: Compute (44 + 40 + 18 µs) before Main (100 µs).
    assert_eq!(
        strings(&seen["functions"])[..5],
        [
            "App.Program.Compute",
            "App.Program.Main",
            "App.Program.Leaf",
            "App.Worker.Loop",
            "App.Math.Fib"
        ]
    );
    assert_eq!(
        strings(&seen["threads"]),
        ["Main (1001)", "pool <worker> (1002)"]
    );
    // Sorted by wall time: Work 72..90 µs (its thunk and variant one row: one row per
    // method), the state machine 62..69.
    assert_eq!(
        strings(&seen["async"]),
        ["App.Program.Work", "App.Program+<Run>d__2.MoveNext"]
    );
    // Work: 1 call, 2 segments, 1 resume, 1 suspension.
    assert_eq!(seen["async_counts"][0][0], "1");
    assert_eq!(seen["async_counts"][1][0], "2");
    assert_eq!(seen["async_counts"][2][0], "1");
    assert_eq!(seen["async_counts"][3][0], "1");
    assert_eq!(seen["facts"]["Dropped events"], "0");
    assert_eq!(seen["facts"]["Truncated"], "no");
    assert_eq!(seen["facts"]["End"], "shutdown");
    assert_eq!(seen["warnings"], json!([]));
    assert_eq!(seen["title"], "eltrace: dotnet App.dll (pid 4242)");
}

/// The Logical view (`#logical`, or the Logical button): the synthetic trace's Work resumes on
/// the worker thread, and its segment's Leaf sits under Main › Work [thunk] › Work in the
/// logical tree, not under the worker thread as in the Threads view.
#[test]
fn logical_view_in_chromium() {
    let dir = TempDir::new("browser-logical");
    let trace = dir.path().join("synthetic.eltrace");
    fs::write(&trace, synthetic()).unwrap();
    let html = export_html(dir.path(), &trace, "logical");
    let page = fs::read_to_string(&html).unwrap();
    // Every Leaf box with its path of ancestors, in both views.
    let probe = r#"<script>
      (function () {
        const r = window.eltraceReport, out = {view: r.view, leaf_paths: []};
        for (const i of r.find('App.Program.Leaf')) {
          const path = [];
          for (let a = r.parent(i); a >= 0; a = r.parent(a)) path.unshift(r.label(a));
          out.leaf_paths.push(path.join(' > '));
        }
        out.leaf_paths.sort();
        out.errors = document.body.dataset.errors || '';
        const pre = document.createElement('pre');
        pre.id = 'test-result';
        pre.textContent = encodeURIComponent(JSON.stringify(out));
        document.body.append(pre);
      })();
    </script>"#;
    let body = page.find("<body>").expect("a body") + "<body>".len();
    let end = page.rfind("</body>").expect("the page has a body");
    let mut seen = Vec::new();
    for (case, hash) in [("threads", ""), ("logical", "#logical")] {
        let set_view = format!("<script>history.replaceState(null, '', '{hash}' || '#');</script>");
        let used = dir.path().join(format!("logical-{case}.html"));
        let text = format!(
            "{}{set_view}{}{probe}{}",
            &page[..body],
            &page[body..end],
            &page[end..]
        );
        fs::write(&used, text).unwrap();
        let loaded = dump_dom(&used, dir.path(), WINDOW);
        let result = element_text(&loaded.dom, "pre", "test-result")
            .unwrap_or_else(|| panic!("no result; DOM:\n{}", loaded.dom));
        let v: Value = serde_json::from_str(&uri_decode(result)).expect("JSON");
        assert_eq!(v["errors"], "", "{v:#}");
        assert_eq!(v["view"], case, "{v:#}");
        seen.push(v);
    }
    let p = "dotnet App.dll (pid 4242)";
    assert_eq!(
        strings(&seen[0]["leaf_paths"]),
        [
            format!("{p} > Main (1001) > App.Program.Main > App.Program.Compute"),
            format!("{p} > pool <worker> (1002) > App.Program.Work"),
            format!("{p} > pool <worker> (1002) > App.Worker.Loop > App.Program.Compute"),
        ]
    );
    assert_eq!(
        strings(&seen[1]["leaf_paths"]),
        [
            format!("{p} > App.Program.Main > App.Program.Compute"),
            format!("{p} > App.Program.Main > App.Program.Work [thunk] > App.Program.Work"),
            format!("{p} > App.Worker.Loop > App.Program.Compute"),
        ]
    );
}

/// 200 × 200 leaf paths: more than the report's 30,000 nodes. The heaviest are drawn, the
/// rest merged into "other" boxes, and the page says so.
#[test]
fn capped_report_in_chromium() {
    let (mids, leaves) = (200u32, 200u32);
    let mut b = TraceBuilder::new(app_info()).function(("App.dll", "App.P", "Main"));
    for i in 0..mids {
        b = b.function(("App.dll", "App.P", format!("Mid{i}").as_str()));
    }
    for j in 0..leaves {
        b = b.function(("App.dll", "App.P", format!("Leaf{j}").as_str()));
    }
    let mut ev = vec![(0, Enter, 0)];
    let mut t = 0;
    for i in 0..mids {
        t += 1;
        ev.push((t, Enter, 1 + i));
        for j in 0..leaves {
            ev.push((t + 1, Enter, 1 + mids + j));
            t += 2 + u64::from((mids - i) * (leaves - j));
            ev.push((t, Leave, 1 + mids + j));
        }
        t += 1;
        ev.push((t, Leave, 1 + i));
    }
    ev.push((t + 1, Leave, 0));
    let dir = TempDir::new("browser-capped");
    let trace = dir.path().join("capped.eltrace");
    fs::write(&trace, b.thread(0, 7).events(0, &ev).end(t + 2)).unwrap();
    let seen = use_report(dir.path(), &trace, "capped", "App.P.Mid0", "Leaf7");
    assert_eq!(seen["nodes"], 30_000, "{seen:#}");
    let note = seen["tree_note"].as_str().unwrap();
    assert!(
        note.starts_with("The call tree has 40,203 nodes, more than this report holds (30,000)"),
        "{note}"
    );
    assert_eq!(seen["warnings"][0], note);
    // The heaviest Mid keeps all its leaves: one Leaf7 box there, more under other Mids.
    assert!(seen["matches"].as_u64().unwrap() > 1, "{seen:#}");
    assert!(
        seen["zoom_ms"].as_f64().unwrap() < 1_000.0,
        "a zoom took {} ms",
        seen["zoom_ms"]
    );
}
