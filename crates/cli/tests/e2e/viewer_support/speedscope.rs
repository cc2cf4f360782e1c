//! speedscope's built viewer in Chromium, from file://, loading a profile as its own command
//! line does: a script of ours calls `speedscope.loadFileFromBase64(name, data)` and the
//! page is opened at `index.html#localProfilePath=<script>`. The file's name matters:
//! speedscope picks its importer by the name's suffix before it looks at the contents.

use std::time::{Duration, Instant};

use serde_json::json;

use super::cdp::base64_encode;
use super::{Browser, LOAD_TIMEOUT, Viewers, artifacts};

/// speedscope with one profile file loaded (or failing to).
pub struct Speedscope {
    pub browser: Browser,
}

/// True once the sandwich table shows a row after its header (the lines `sandwich` reads).
const SANDWICH_ROW_JS: &str = "(() => { const l = document.body.innerText.split('\\n'); \
    const i = l.findIndex(x => x.startsWith('Total\\tSelf')); return i >= 0 && l.length >= i + 4; })()";

impl Speedscope {
    /// Opens `bytes` as a file named `name` in `view` (`time-ordered`, `left-heavy`,
    /// `sandwich`) and waits until speedscope shows it (the page's title becomes
    /// `<profile name> - speedscope`) or says it failed.
    pub fn load(v: &Viewers, name: &str, bytes: &[u8], view: &str) -> Speedscope {
        // One script per load: tests of one binary run at once, some with the same file name.
        static LOADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let script = artifacts().join(format!("speedscope-{}-{n}-{name}.js", std::process::id()));
        let call = format!(
            "speedscope.loadFileFromBase64({}, {})",
            json!(name),
            json!(base64_encode(bytes))
        );
        std::fs::write(&script, call).unwrap();
        let mut browser = Browser::launch(v);
        browser.open(&format!(
            "file://{}#localProfilePath={}&view={view}",
            v.speedscope.join("index.html").display(),
            script.display()
        ));
        let mut s = Speedscope { browser };
        let start = Instant::now();
        loop {
            let title = s.title();
            if (title.ends_with(" - speedscope") && title != "speedscope") || s.failed() {
                break;
            }
            if start.elapsed() > LOAD_TIMEOUT {
                panic!("speedscope did not load {name}: nothing shown after {LOAD_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = std::fs::remove_file(&script);
        s
    }

    pub fn title(&mut self) -> String {
        let t = self.browser.cdp.eval("document.title").unwrap();
        t.as_str().unwrap_or("").to_owned()
    }

    /// The page's text.
    pub fn text(&mut self) -> String {
        let t = self.browser.cdp.eval("document.body.innerText").unwrap();
        t.as_str().unwrap_or("").to_owned()
    }

    /// speedscope says the import failed.
    pub fn failed(&mut self) -> bool {
        self.text().contains("Something went wrong")
    }

    /// The toolbar's profile line: `name (i/N)`.
    pub fn profile_line(&mut self) -> String {
        let text = self.text();
        text.lines()
            .find(|l| l.ends_with(')') && l.contains('/'))
            .unwrap_or("")
            .to_owned()
    }

    /// Types a key as a user would (speedscope: `n`/`p` next/previous profile).
    pub fn key(&mut self, key: &str) {
        for ty in ["keyDown", "keyUp"] {
            self.browser
                .cdp
                .call(
                    "Input.dispatchKeyEvent",
                    json!({"type": ty, "key": key, "text": key, "unmodifiedText": key}),
                )
                .unwrap();
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Every profile's toolbar line, switching with `n` through all of them.
    pub fn profile_lines(&mut self) -> Vec<String> {
        let first = self.profile_line();
        let count = first
            .rsplit_once('/')
            .and_then(|(_, n)| n.trim_end_matches(')').parse::<usize>().ok())
            .unwrap_or(1);
        let mut lines = vec![first];
        for _ in 1..count {
            self.key("n");
            lines.push(self.profile_line());
        }
        lines
    }

    /// The rows of the sandwich view's table: (total, self, name).
    ///
    /// speedscope sets the title before the table has rendered: a busy machine showed an
    /// empty table once, read right after the title. So the table is read once a row (three
    /// lines) follows its header, or the load timeout has passed (a guard against a hang,
    /// not a timing; the caller's checks then report what was shown).
    pub fn sandwich(&mut self) -> Vec<(String, String, String)> {
        let _ = self.browser.cdp.wait_for(SANDWICH_ROW_JS, LOAD_TIMEOUT);
        let text = self.text();
        let mut rows = Vec::new();
        let mut lines = text.lines().skip_while(|l| !l.starts_with("Total\tSelf"));
        lines.next();
        let cells: Vec<&str> = lines.map(|l| l.trim_start_matches('\t')).collect();
        for c in cells.chunks(3) {
            if let [total, own, name] = c {
                rows.push((total.to_string(), own.to_string(), name.to_string()));
            }
        }
        rows
    }
}
