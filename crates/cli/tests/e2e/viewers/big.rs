//! Big synthetic traces load in the viewers within their load timeout: a million calls as a
//! Perfetto trace in the Perfetto UI, 200,000 in speedscope's own format. The load times are
//! printed, never asserted.

use std::time::Instant;

use eltrace_trace::testing::traces;
use serde_json::Value;

use crate::viewer_support::perfetto_ui::PerfettoUi;
use crate::viewer_support::queries::{dir, export_with, import_errors, u};
use crate::viewer_support::speedscope::Speedscope;
use crate::viewer_support::viewers;

/// Big traces: the Perfetto export of a million calls loads in the Perfetto UI (its Chrome
/// JSON took up to a minute for 600 000 and failed at ten million), and speedscope's own
/// format of 200 000 calls (its Chrome JSON import took 28 s for 100 000). Seen on the 2-core
/// VM: 48 s and 9-13 s (100 000 calls as Chrome JSON: 38 s in speedscope). No time is
/// asserted: a load that does not end within `viewer_support::LOAD_TIMEOUT` fails as "did not
/// load"; the times are printed.
#[test]
fn big_exports_load() {
    let Some(v) = viewers("big_exports_load") else {
        return;
    };
    let trace = many_calls(1_000_000);
    let (_, pf) = export_with(&dir("big"), &trace, "perfetto", &[]);
    let start = Instant::now();
    let mut ui = PerfettoUi::load(&v, "big.pftrace", pf);
    eprintln!(
        "Perfetto UI: 1 000 000 calls loaded in {:?}",
        start.elapsed()
    );
    let n = ui.query("select count(*) as n from slice");
    assert_eq!(u(&n[0]["n"]), 1_000_001);
    assert_eq!(import_errors(&mut ui), Vec::<Value>::new());
    drop(ui);

    let trace = many_calls(200_000);
    let (_, ss_bytes) = export_with(&dir("big-ss"), &trace, "speedscope", &[]);
    let start = Instant::now();
    let mut ss = Speedscope::load(&v, "big.speedscope.json", &ss_bytes, "sandwich");
    eprintln!("speedscope: 200 000 calls loaded in {:?}", start.elapsed());
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// One thread: Main calling Step `n` times (10 ns each, 5 ns apart).
fn many_calls(n: u64) -> Vec<u8> {
    use eltrace_trace::EventKind::{Enter, Leave};
    let mut events = vec![(0, Enter, 0)];
    for i in 0..n {
        events.push((10 + i * 15, Enter, 1));
        events.push((20 + i * 15, Leave, 1));
    }
    events.push((n * 15 + 20, Leave, 0));
    traces::builder(&[("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Step")])
        .thread(0, 4242)
        .events(0, &events)
        .end(0)
}
