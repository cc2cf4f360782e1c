//! Reports of traces with nothing to draw or with losses: an empty trace, and a lossy one
//! (events dropped, the trace cut short). The page renders without an error and its warnings
//! say what was lost.

use std::fs;

use super::{SCREENSHOT, WINDOW, screenshots};
use crate::common::browser::{dump_dom, element_text, export_html, screenshot};
use crate::common::processes::TempDir;
use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::testing::{TraceBuilder, app_info};

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
