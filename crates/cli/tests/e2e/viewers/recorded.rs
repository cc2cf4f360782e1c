//! A real recording (runtime-async `nested` of tests/apps/Async: pool threads, async calls
//! resumed on other threads) in the Perfetto UI, chrome://tracing's viewer and speedscope: the
//! same frames as the analysis', the same flows in both Perfetto loads, no warning anywhere.

use serde_json::Value;

use super::PERFETTO_BENIGN;
use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app};
use crate::viewer_support::perfetto_ui::PerfettoUi;
use crate::viewer_support::queries::{
    counts, export_file, frames, import_errors, ui_flows, ui_slices,
};
use crate::viewer_support::speedscope::Speedscope;
use crate::viewer_support::{catapult, viewers};

/// A real recording (runtime async `nested`, pool threads, async calls resumed on other
/// threads) in all three viewers.
#[test]
fn real_async_recording_in_the_viewers() {
    let Some(v) = viewers("real_async_recording_in_the_viewers") else {
        return;
    };
    let rec = record_app(
        Mode::Fast,
        async_dll(),
        "nested",
        &[],
        &[("DOTNET_RuntimeAsync", "1")],
    );
    let trace = std::fs::read(&rec.trace).unwrap();
    let expected = frames(&trace);

    // Perfetto export in the Perfetto UI.
    let (_, pf) = export_file(&rec.trace, "perfetto", &[]);
    let mut ui = PerfettoUi::load(&v, "nested.pftrace", pf);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), expected);
    let flows = ui_flows(&mut ui);
    ui.browser.screenshot("perfetto-ui-real-nested");
    assert_eq!(
        ui.browser.problems_except(PERFETTO_BENIGN),
        Vec::<String>::new()
    );
    drop(ui);

    // The Chrome JSON: the same slices and flows in the Perfetto UI, no warning in
    // chrome://tracing's viewer (which counted 36 arg_merge_errors on this scenario).
    let (_, json) = export_file(&rec.trace, "chrome", &[]);
    let mut ui = PerfettoUi::load(&v, "nested.trace.json", json.clone());
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    assert_eq!(ui_slices(&mut ui), expected);
    assert_eq!(ui_flows(&mut ui), flows);
    assert!(!flows.is_empty());
    drop(ui);
    let m = catapult::import(&v, "nested.trace.json", json);
    assert_eq!(m.warnings, Vec::<String>::new());
    assert_eq!(m.flows as usize, flows.len());
    drop(m);

    // The speedscope export: every function once per thread, no importer warning.
    let (_, ss_bytes) = export_file(&rec.trace, "speedscope", &[]);
    let mut ss = Speedscope::load(&v, "nested.speedscope.json", &ss_bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    let lines = ss.profile_lines();
    let threads: std::collections::BTreeSet<u64> = expected.iter().map(|s| s.0).collect();
    // One profile per thread, and the logical call tree's.
    assert_eq!(lines.len(), threads.len() + 1, "{lines:?}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("logical (async calls")),
        "{lines:?}"
    );
    ss.browser.screenshot("speedscope-real-nested");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    let names = counts(&expected);
    assert!(names.keys().any(|n| n.contains("Nested")), "{names:?}");
}
