//! chrome://tracing's trace viewer (catapult) imports the Chrome JSON of a synthetic trace
//! without a warning, with its threads and flow arrows.

use eltrace_trace::testing::traces;

use crate::viewer_support::queries::{dir, export_with};
use crate::viewer_support::{catapult, viewers};

/// The trace viewer warns that it runs on a polyfill.
const CATAPULT_BENIGN: &[&str] = &["WebComponentsV0 polyfill"];

/// chrome://tracing's viewer imports the Chrome JSON without a warning; the flow arrows are
/// there. The control: with the same arguments on both ends of each flow, as the export
/// used to write them, it warns `arg_merge_error`.
#[test]
fn trace_viewer_imports_chrome_json_without_warnings() {
    let Some(v) = viewers("trace_viewer_imports_chrome_json_without_warnings") else {
        return;
    };
    let (_, bytes) = export_with(&dir("catapult"), &traces::nested_async(), "chrome", &[]);
    let m = catapult::import(&v, "t.trace.json", bytes.clone());
    assert_eq!(m.warnings, Vec::<String>::new());
    assert_eq!(m.flows, 2);
    let threads: Vec<(String, String, u64, u64)> = m.threads.clone();
    assert_eq!(
        threads,
        vec![
            ("App.dll".into(), "main (4242)".into(), 4242, 4),
            ("App.dll".into(), ".NET TP Worker (4250)".into(), 4250, 3),
        ]
    );
    let mut browser = m.browser;
    browser.screenshot("trace-viewer-nested-async");
    assert_eq!(
        browser.problems_except(CATAPULT_BENIGN),
        Vec::<String>::new()
    );
    drop(browser);
    let old = String::from_utf8(bytes)
        .unwrap()
        .replace("\"segment 1\"", "\"call\":1,\"segment\"")
        .replace("\"segment 0\"", "\"segment\"");
    let m = catapult::import(&v, "old.json", old.into_bytes());
    assert!(
        m.warnings.iter().any(|w| w.starts_with("arg_merge_error")),
        "the control no longer warns: {:?}",
        m.warnings
    );
}
