//! Reports of traces recorded without per-event times: a timeless one (`--timing none`:
//! weighted by calls, no time anywhere) and a sampled one (`--timing sampled`: weighted by the
//! estimated times, marked as estimates).

use std::fs;

use super::{SCREENSHOT, WINDOW, screenshots};
use crate::common::browser::{dump_dom, element_text, export_html, screenshot};
use crate::common::processes::TempDir;
use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::testing::{TraceBuilder, traces};

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
