//! The 2021 Perfetto UI build (v20) in Chromium: a page of ours that loads one trace from our
//! server (the build opens the URL in `#timeline_data_source`), and SQL queries against the
//! trace_processor it loaded the trace into, through the UI's own query action.

use serde_json::Value;

use super::server::Server;
use super::{Browser, LOAD_TIMEOUT, Viewers};

/// The Perfetto UI with one trace loaded.
pub struct PerfettoUi {
    pub browser: Browser,
    _server: Server,
}

/// The page: the build reads the trace's URL from `#timeline_data_source` and draws into
/// `#timeline_main`.
fn page(trace_url: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>eltrace</title>\
         <link rel=\"icon\" href=\"data:,\"></head>\
         <body style=\"margin:0\"><div id=\"timeline_data_source\" style=\"display:none\">\
         {trace_url}</div><div id=\"timeline_main\"></div>\
         <script src=\"frontend_bundle.js\"></script></body></html>"
    )
}

/// Runs a query in the page and resolves to its JSON result (`{columns, rows, error}`).
const QUERY_JS: &str = r#"
(async (sql) => {
  const engine = Object.keys(globals.state.engines)[0];
  const id = 'eltrace' + Math.random();
  globals.dispatch(Actions.executeQuery({engineId: engine, queryId: id, query: sql}));
  for (let i = 0; i < 600; i++) {
    const r = globals.queryResults.get(id);
    if (r) {
      return JSON.stringify(r, (k, v) => typeof v === 'bigint' ? Number(v) : v);
    }
    await new Promise(res => setTimeout(res, 100));
  }
  return null;
})"#;

impl PerfettoUi {
    /// Opens the UI on `trace` (served as `/trace/<name>`) and waits until trace_processor
    /// has loaded it and the UI has made its tracks.
    pub fn load(v: &Viewers, name: &str, trace: Vec<u8>) -> PerfettoUi {
        Self::open(v, name, trace)
    }

    fn open(v: &Viewers, name: &str, trace: Vec<u8>) -> PerfettoUi {
        let server = Server::start(v.perfetto_ui.clone());
        let trace_path = format!("/trace/{name}");
        server.put(&trace_path, trace);
        server.put("/eltrace.html", page(&server.url(&trace_path)).into_bytes());
        let mut browser = Browser::launch(v);
        browser.open(&server.url("/eltrace.html"));
        let ready = "typeof globals !== 'undefined' && globals.state !== undefined \
            && Object.values(globals.state.engines).some(e => e.ready) \
            && Object.keys(globals.state.tracks).length > 0";
        if let Err(e) = browser.cdp.wait_for(ready, LOAD_TIMEOUT) {
            let shot = browser.screenshot(&format!("perfetto-{name}-timeout"));
            panic!(
                "the Perfetto UI did not load {name}: {e}\nconsole: {:#?}\nscreenshot: {}",
                browser.cdp.problems(),
                shot.display()
            );
        }
        PerfettoUi {
            browser,
            _server: server,
        }
    }

    /// The rows of `sql` as JSON objects; panics on a query error.
    pub fn query(&mut self, sql: &str) -> Vec<Value> {
        let expr = format!("{QUERY_JS}({})", Value::String(sql.to_owned()));
        let r = self.browser.cdp.eval(&expr).unwrap();
        let text = r
            .as_str()
            .unwrap_or_else(|| panic!("no result for {sql}: {r}"));
        let v: Value = serde_json::from_str(text).unwrap();
        if let Some(e) = v["error"].as_str() {
            panic!("{sql}: {e}");
        }
        v["rows"].as_array().cloned().unwrap_or_default()
    }

    /// The UI's tracks (name, kind) and track groups (name).
    pub fn tracks(&mut self) -> (Vec<(String, String)>, Vec<String>) {
        let v = self
            .browser
            .cdp
            .eval(
                "JSON.stringify({tracks: Object.values(globals.state.tracks).map(t => [t.name, t.kind]), \
                 groups: Object.values(globals.state.trackGroups).map(g => g.name)})",
            )
            .unwrap();
        let v: Value = serde_json::from_str(v.as_str().unwrap()).unwrap();
        let tracks = v["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t[0].as_str().unwrap_or("").to_owned(),
                    t[1].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let groups = v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_str().unwrap_or("").to_owned())
            .collect();
        (tracks, groups)
    }
}
