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
//!
//! This module owns what the groups share: a report opened and used in Chromium with the
//! checks every used report passes ([`use_report`]), and where the screenshots go.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::browser::{dump_dom, element_text, export_html, screenshot, uri_decode};
use serde_json::{Value, json};

/// Traces with nothing to draw or with losses.
mod degenerate;
/// Real recordings in the report: the `calltree` scenario, the runtime-async `work`.
mod recorded;
/// A recording session of two processes in one report.
mod session;
/// A synthetic trace of two threads in the report: its boxes, zoom, search, tables and
/// facts, its Logical view, and a tree over the report's node budget.
mod synthetic;
/// Traces recorded without per-event times: timeless and sampled.
mod timing;

const WINDOW: (u32, u32) = (1280, 1000);

const SCREENSHOT: (u32, u32) = (1280, 1500);

const INTERACT: &str = include_str!("../common/html_interact.js");

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
