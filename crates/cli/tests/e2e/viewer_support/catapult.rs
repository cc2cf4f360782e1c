//! chrome://tracing's viewer (Catapult's trace viewer, as the Perfetto UI build ships it in
//! `assets/catapult_trace_viewer.html`, running on its WebComponents V0 polyfill), loading a
//! Chrome JSON file the way the Perfetto UI's "open with legacy UI" does
//! (`x-profiling-view.setActiveTrace`), and the model it imported: its import warnings, its
//! threads, its flow arrows.

use std::time::Duration;

use serde_json::Value;

use super::server::Server;
use super::{Browser, LOAD_TIMEOUT, Viewers};

/// What the viewer imported.
pub struct Imported {
    /// `type: message` of every import warning.
    pub warnings: Vec<String>,
    /// (process name, thread name, tid, slices).
    pub threads: Vec<(String, String, u64, u64)>,
    pub flows: u64,
    pub browser: Browser,
}

const MODEL_JS: &str = r#"
(() => {
  const v = document.querySelector('x-profiling-view');
  const m = v && v.timelineView && v.timelineView.model;
  if (!m) return null;
  return JSON.stringify({
    warnings: m.importWarnings.map(w => w.type + ': ' + w.message),
    threads: Object.values(m.processes).flatMap(p => Object.values(p.threads).map(t =>
      [p.name || '', t.name || '', t.tid, t.sliceGroup.slices.length])),
    flows: m.flowEvents.length,
  });
})()"#;

/// Opens the viewer on `json` and waits for its model.
pub fn import(v: &Viewers, name: &str, json: Vec<u8>) -> Imported {
    let server = Server::start(v.perfetto_ui.join("assets"));
    server.put("/trace.json", json);
    let mut browser = Browser::launch(v);
    browser.open(&server.url("/catapult_trace_viewer.html"));
    browser
        .cdp
        .wait_for(
            "document.querySelector('x-profiling-view') !== null",
            Duration::from_secs(60),
        )
        .expect("the trace viewer starts");
    let set = format!(
        "(async () => {{ const t = await (await fetch('/trace.json')).text(); \
         document.querySelector('x-profiling-view').setActiveTrace({}, t); return true; }})()",
        Value::String(name.to_owned())
    );
    browser.cdp.eval(&set).unwrap();
    let model = browser
        .cdp
        .wait_for(MODEL_JS, LOAD_TIMEOUT)
        .unwrap_or_else(|e| panic!("the trace viewer did not load {name} (no model): {e}"));
    let m: Value = serde_json::from_str(model.as_str().unwrap()).unwrap();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    Imported {
        warnings: strings(&m["warnings"]),
        threads: m["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t[0].as_str().unwrap().to_owned(),
                    t[1].as_str().unwrap().to_owned(),
                    t[2].as_u64().unwrap(),
                    t[3].as_u64().unwrap(),
                )
            })
            .collect(),
        flows: m["flows"].as_u64().unwrap(),
        browser,
    }
}
