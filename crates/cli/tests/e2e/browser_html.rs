//! The HTML report in a real browser. `eltrace export --format html` of a synthetic trace, of
//! a tree over the node budget, and of real recordings (the `calltree` scenario and the
//! runtime-async `work`) is loaded from file:// in headless Chromium (common/browser.rs),
//! with common/html_interact.js appended: it reads what the page rendered (boxes drawn and
//! painted, the tables, the facts) and uses the page through DOM events (click a box to
//! zoom, reset, flame layout and calls metric, search). The test checks what it saw, that
//! the page showed no error and that Chromium logged no console line. Screenshots of the
//! page as opened and as left by the interactions are kept in
//! `target/tmp/browser_html/<case>.png` and `<case>-used.png`.
//!
//! Needs Chromium (`apt-get install -y chromium`; scripts/viewers.sh installs it in CI) and,
//! for the recordings, the .NET SDK and the workspace built (`cargo build --workspace`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::apps::async_dll;
use crate::common::browser::{dump_dom, element_text, export_html, screenshot, uri_decode};
use crate::common::processes::TempDir;
use crate::common::recording::{Mode, record_app, record_in};
use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::testing::{Function, TraceBuilder, app_info, traces};
use eltrace_trace::{FunctionFlags, TraceInfo};
use serde_json::{Value, json};

const WINDOW: (u32, u32) = (1280, 1000);
const SCREENSHOT: (u32, u32) = (1280, 1500);
const INTERACT: &str = include_str!("common/html_interact.js");

/// `eltrace export <trace> --format html`, then the page in Chromium with the interactions
/// (zoom on the first box named `zoom`, search for `search`); returns what they saw.
fn use_report(dir: &Path, trace: &Path, case: &str, zoom: &str, search: &str) -> Value {
    let html = export_html(dir, trace, case);
    let shots = screenshots();
    let console = screenshot(&html, &shots.join(format!("{case}.png")), dir, SCREENSHOT);
    assert!(
        console.is_empty(),
        "console output:\n{}",
        console.join("\n")
    );

    // The same page with the interactions appended (the data holds no `<`, so the last
    // `</body>` is the page's).
    let page = fs::read_to_string(&html).unwrap();
    let cfg = json!({"zoom": zoom, "search": search})
        .to_string()
        .replace('<', "\\u003c");
    let end = page.rfind("</body>").expect("the page has a body");
    let used = dir.join(format!("{case}-used.html"));
    let script = format!("<script>window.eltraceTest = {cfg};\n{INTERACT}</script>\n");
    fs::write(&used, format!("{}{script}{}", &page[..end], &page[end..])).unwrap();
    let loaded = dump_dom(&used, dir, WINDOW);
    assert!(
        loaded.console.is_empty(),
        "console output:\n{}",
        loaded.console.join("\n")
    );
    eprintln!(
        "{case}: {} bytes, Chromium loaded and used it in {:.1} s",
        page.len(),
        loaded.elapsed.as_secs_f64()
    );
    let text = element_text(&loaded.dom, "pre", "test-result")
        .unwrap_or_else(|| panic!("the interactions left no result; DOM:\n{}", loaded.dom));
    let seen: Value = serde_json::from_str(&uri_decode(text)).expect("the result is JSON");
    screenshot(
        &used,
        &shots.join(format!("{case}-used.png")),
        dir,
        SCREENSHOT,
    );

    assert_eq!(seen["exception"], Value::Null, "{seen:#}");
    assert_eq!(seen["rendered"], "yes", "{seen:#}");
    assert_eq!(seen["errors"], "", "{seen:#}");
    assert!(seen["painted"].as_u64().unwrap() > 10_000, "{seen:#}");
    assert_eq!(seen["zoomed"], zoom, "{seen:#}");
    assert_eq!(seen["flame_zoomed"], zoom, "{seen:#}");
    assert!(seen["crumbs"].as_str().unwrap().ends_with(zoom), "{seen:#}");
    assert!(
        seen["details"].as_str().unwrap().starts_with(zoom),
        "{seen:#}"
    );
    assert_eq!(seen["after_reset_drawn"], seen["drawn"], "{seen:#}");
    assert_eq!(seen["flame"][0], "flame");
    assert_eq!(seen["flame"][1], "calls");
    seen
}

/// Where the screenshots are kept: target/tmp/browser_html.
fn screenshots() -> PathBuf {
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser_html");
    fs::create_dir_all(&shots).unwrap();
    shots
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

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

#[test]
fn recorded_calltree_in_chromium() {
    let rec = record_in(Mode::Fast, "calltree", &[]);
    assert_eq!(rec.exit(), 0, "{}", rec.stderr);
    let seen = use_report(
        rec.dir.path(),
        &rec.trace,
        "calltree",
        "Scenarios.CallTreeScenario.Run",
        "Inner.Leaf",
    );
    let functions = strings(&seen["functions"]);
    let calls = strings(&seen["function_calls"]);
    let calls_of = |name: &str| {
        let i = functions
            .iter()
            .position(|f| *f == name)
            .unwrap_or_else(|| panic!("{name} not in the table: {functions:?}"));
        calls[i]
    };
    for (name, n) in [
        ("Scenarios.Program.Main", "1"),
        ("Scenarios.CallTreeScenario.Run", "1"),
        ("Scenarios.Alpha.Step", "10"),
        ("Scenarios.Beta.Twice", "20"),
        ("Scenarios.Point.LengthSquared", "20"),
        ("Scenarios.Outer+Inner.Leaf", "17"),
        ("Scenarios.Box`1.Describe", "5"),
    ] {
        assert_eq!(calls_of(name), n, "calls of {name}");
    }
    assert_eq!(functions[0], "Scenarios.Program.Main", "{functions:?}");
    // Leaf is called from Run and from Step: two boxes.
    assert_eq!(seen["matches"], 2, "{seen:#}");
    assert_eq!(seen["zoom_boxes"], 1, "{seen:#}");
    let crumbs = seen["crumbs"].as_str().unwrap();
    assert!(
        crumbs.ends_with("› Scenarios.Program.Main › Scenarios.CallTreeScenario.Run"),
        "{crumbs}"
    );
    // By time, Run's own time (its Console.WriteLine, not traced) leaves its callees thinner
    // than a pixel; by calls (97 frames in all), every box is drawn.
    assert!(seen["drawn"].as_u64().unwrap() >= 4, "{seen:#}");
    assert_eq!(seen["flame"][2], seen["nodes"], "{seen:#}");
    assert_eq!(seen["facts"]["Dropped events"], "0");
    assert_eq!(seen["facts"]["Truncated"], "no");
    assert_eq!(seen["facts"]["Hooks"], "fast-path");
    // The program's one thread is its main thread (its tid is the pid), named so.
    let pid = seen["facts"]["Process"]
        .as_str()
        .unwrap()
        .trim_start_matches("pid ");
    assert_eq!(
        strings(&seen["threads"]),
        [format!("main ({pid})")],
        "{seen:#}"
    );
}

#[test]
fn recorded_async_work_in_chromium() {
    let rec = record_app(
        Mode::Fast,
        async_dll(),
        "work",
        &[],
        &[("DOTNET_RuntimeAsync", "1"), ("ELTRACE_PRESERVE_RCX", "1")],
    );
    assert_eq!(rec.exit(), 0, "{}", rec.stderr);
    let w = "AsyncScenarios.WorkScenario.";
    let seen = use_report(
        rec.dir.path(),
        &rec.trace,
        "async-work",
        &format!("{w}RunAsync"),
        "WorkVoid",
    );
    let methods = strings(&seen["async"]);
    let row = |name: &str| {
        let i = methods
            .iter()
            .position(|m| *m == name)
            .unwrap_or_else(|| panic!("{name} not in the async table: {methods:?}"));
        (0..4)
            .map(|k| seen["async_counts"][k][i].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // calls, segments, resumes, suspensions (as asyncs' `work` asserts).
    assert_eq!(row(&format!("{w}Work")), ["5", "25", "20", "20"]);
    assert_eq!(row(&format!("{w}WorkVoid")), ["2", "6", "4", "4"]);
    assert_eq!(row(&format!("{w}RunAsync")), ["1", "12", "11", "11"]);
    // WorkVoid's segments: the first under RunAsync on the main thread, resumes elsewhere.
    assert!(seen["matches"].as_u64().unwrap() >= 2, "{seen:#}");
}

/// Traces with nothing to draw or with losses: the page still renders, without an error,
/// and says what was lost.
#[test]
fn degenerate_reports_in_chromium() {
    let dir = TempDir::new("browser-degenerate");
    let empty = TraceBuilder::new(app_info()).end(0);
    let lossy = TraceBuilder::new(app_info())
        .functions([("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Work")])
        .thread(0, 1001)
        .events(0, &[(0, Enter, 0), (10, Enter, 1), (20, Leave, 1)])
        .dropped(0, 5)
        .events(0, &[(40, Enter, 1)])
        .cut();
    for (case, trace, warnings) in [
        ("empty", empty, vec![]),
        (
            "lossy",
            lossy,
            vec![
                "5 events were dropped (a thread\u{2019}s buffer was full): the affected \
                 stacks were cut at the drop.",
                "The trace was cut short (no end record): the process was killed or the \
                 trace could not be finished.",
            ],
        ),
    ] {
        let path = dir.path().join(format!("{case}.eltrace"));
        fs::write(&path, trace).unwrap();
        let html = export_html(dir.path(), &path, case);
        let loaded = dump_dom(&html, dir.path(), WINDOW);
        loaded.assert_report_rendered(case);
        let dom = &loaded.dom;
        assert!(
            dom.contains("<div id=\"errors\" hidden=\"\"></div>"),
            "{case}"
        );
        let shown: Vec<&str> = element_text(dom, "ul", "warnings")
            .unwrap_or_default()
            .split("<li>")
            .skip(1)
            .map(|li| li.trim_end_matches("</li>"))
            .collect();
        assert_eq!(shown, warnings, "{case}");
        screenshot(
            &html,
            &screenshots().join(format!("{case}.png")),
            dir.path(),
            SCREENSHOT,
        );
    }
}

/// A recording session of two processes (`eltrace_trace::testing::traces::session`) in one
/// report: an "all" root over a box per process, each process's facts under its name, the
/// threads table with the process of each thread, the losses and waits of the compiler warned
/// about by name.
#[test]
fn session_report_in_chromium() {
    let dir = TempDir::new("browser-session");
    let traces = traces::session();
    let main = dir.path().join("app.eltrace");
    fs::write(&main, &traces[0]).unwrap();
    fs::write(dir.path().join("app.4300.eltrace"), &traces[1]).unwrap();
    let seen = use_report(dir.path(), &main, "session", "Csc.P.Main", "log");
    assert_eq!(
        seen["title"],
        "eltrace: 2 processes: App.dll (pid 4242), csc.dll (pid 4300)"
    );
    // all, 2 processes, 4 threads, 13 call paths.
    assert_eq!(seen["nodes"], 20, "{seen:#}");
    let csc = "/usr/bin/dotnet /sdk/Roslyn/bincore/csc.dll /noconfig @/tmp/x.rsp (pid 4300)";
    assert_eq!(
        seen["crumbs"],
        format!("Zoomed: all processes › {csc} › main (4300) › Csc.P.Main")
    );
    // Shared.Log.Write: twice in App, three times in csc.
    assert_eq!(seen["matches"], 5, "{seen:#}");
    assert_eq!(strings(&seen["search_functions"]), ["Shared.Log.Write"]);
    assert_eq!(
        strings(&seen["warnings"]),
        [
            format!(
                "{csc}: 4 events were dropped (a thread\u{2019}s buffer was full): the \
                 affected stacks were cut at the drop."
            ),
            format!(
                "{csc}: Threads waited 4 times for the trace writer (14.0 µs in all): the \
                 recording slowed them down there (it loses no event; record --lossy drops \
                 events instead of waiting)."
            ),
        ]
    );
    // By time in frames: App's main thread (3 µs), csc's (2 µs), the pool threads.
    assert_eq!(
        strings(&seen["threads"]),
        [
            "main (4242)",
            "main (4300)",
            ".NET TP Worker (4250)",
            ".NET TP Worker (4301)"
        ]
    );
    assert_eq!(seen["facts"]["Process"], "pid 4242");
    assert_eq!(seen["facts"]["Waits for the trace writer"], "0");

    let html = dir.path().join("session.html");
    let loaded = dump_dom(&html, dir.path(), WINDOW);
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    let dom = &loaded.dom;
    assert_eq!(
        element_text(dom, "p", "subtitle"),
        Some("2 processes (pids 4242, 4300) · 2023-11-14 22:13:20 UTC · 24 events · 4 threads")
    );
    let facts = element_text(dom, "div", "facts").unwrap();
    for h in [
        "<h3>dotnet App.dll (pid 4242)</h3>",
        &format!("<h3>{csc}</h3>"),
    ] {
        assert!(facts.contains(h), "{h} not in the facts: {facts}");
    }
    assert!(
        facts.contains("<dt>Waits for the trace writer</dt><dd class=\"bad\">4 (14.0 µs)</dd>"),
        "{facts}"
    );
    let threads = element_text(dom, "table", "threads").unwrap();
    assert!(threads.contains(">Process</th>"), "{threads}");
    assert!(
        threads.contains("<td class=\"warn-cell \">3 (12.0 µs)</td>"),
        "{threads}"
    );
}

/// A trace recorded without per-event times (`--timing none`) in the HTML report: the graph is
/// weighted by calls (the Time switch hidden), and no table shows a time column.
#[test]
fn timeless_report_in_chromium() {
    let dir = TempDir::new("browser-timeless");
    let trace = TraceBuilder::new(eltrace_trace::testing::timed_info("none", 0))
        .functions([
            ("App.dll", "App.P", "Main"),
            ("App.dll", "App.P", "Work"),
            ("App.dll", "App.P", "Leaf"),
        ])
        .thread(0, 1001)
        .events(
            0,
            &[
                (0, Enter, 0),
                (10, Enter, 1),
                (12, Enter, 2),
                (13, Leave, 2),
                (20, Leave, 1),
                (30, Enter, 1),
                (40, Leave, 1),
                (50, Leave, 0),
            ],
        )
        .end(50);
    let path = dir.path().join("none.eltrace");
    fs::write(&path, trace).unwrap();
    let html = export_html(dir.path(), &path, "none");
    let loaded = dump_dom(&html, dir.path(), WINDOW);
    loaded.assert_report_rendered("the page");
    let dom = &loaded.dom;
    assert!(
        dom.contains("data-metric=\"calls\""),
        "the graph is weighted by calls"
    );
    let time_button = &dom[dom.find("id=\"metric-time\"").expect("the Time switch")..];
    let tag_start = dom[..dom.find("id=\"metric-time\"").unwrap()]
        .rfind('<')
        .unwrap();
    let tag = &dom[tag_start..dom.len() - time_button.len() + time_button.find('>').unwrap()];
    assert!(tag.contains("hidden"), "the Time switch is hidden: {tag}");
    let functions = element_text(dom, "table", "functions").expect("the functions table");
    assert!(functions.contains(">Calls<"), "{functions}");
    for time in [">Inclusive<", ">Exclusive<", ">Mean<", ">Max<"] {
        assert!(!functions.contains(time), "{time} in {functions}");
    }
    let threads = element_text(dom, "table", "threads").expect("the threads table");
    assert!(!threads.contains("Time in frames"), "{threads}");
    screenshot(
        &html,
        &screenshots().join("none.png"),
        dir.path(),
        SCREENSHOT,
    );
}

/// A `--timing sampled` trace in the HTML report: the graph is weighted by the sampler's
/// estimated time (the Time switch on), the functions table shows the estimated inclusive and
/// exclusive times marked `~` and no per-call column, the thread table no time, and the
/// note says the times are estimates.
#[test]
fn sampled_report_in_chromium() {
    let dir = TempDir::new("browser-sampled");
    let path = dir.path().join("sampled.eltrace");
    fs::write(&path, traces::sampled()).unwrap();
    let html = export_html(dir.path(), &path, "sampled");
    let loaded = dump_dom(&html, dir.path(), WINDOW);
    loaded.assert_report_rendered("the page");
    let dom = &loaded.dom;
    let canvas = loaded.opening_tag("<canvas");
    assert!(
        canvas.contains("data-metric=\"time\""),
        "weighted by time: {canvas}"
    );
    // Process, two threads, Main and Work on tid 77, Work on tid 78 (Leaf: no sample).
    assert!(canvas.contains("data-drawn=\"6\""), "{canvas}");
    let functions = element_text(dom, "table", "functions").expect("the functions table");
    for shown in [
        ">Calls<",
        ">Inclusive<",
        ">Exclusive<",
        ">~3.00 ms<",
        ">~5.00 ms<",
    ] {
        assert!(functions.contains(shown), "{shown} not in {functions}");
    }
    for hidden in [">Mean<", ">Max<"] {
        assert!(!functions.contains(hidden), "{hidden} in {functions}");
    }
    let threads = element_text(dom, "table", "threads").expect("the threads table");
    assert!(!threads.contains("Time in frames"), "{threads}");
    let note = element_text(dom, "p", "tree-note").expect("the tree's note");
    assert!(note.contains("estimates from samples"), "{note}");
    screenshot(
        &html,
        &screenshots().join("sampled.png"),
        dir.path(),
        SCREENSHOT,
    );
}
