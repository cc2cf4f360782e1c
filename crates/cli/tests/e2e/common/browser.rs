//! An HTML page in headless Chromium (Debian's `chromium`, as scripts/viewers.sh installs it;
//! `$ELTRACE_CHROMIUM` names another binary): the DOM once the page's scripts have run
//! (`--dump-dom`), the console lines Chromium logged, and screenshots. Each run gets a fresh
//! profile directory and no network services.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::processes::{eltrace, run_captured};

/// The Chromium binary: `$ELTRACE_CHROMIUM`, else `chromium` (or `chromium-browser`,
/// `google-chrome`) on the PATH. Panics with how to install it when there is none.
pub fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("ELTRACE_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let bin = dir.join(name);
            if bin.is_file() {
                return bin;
            }
        }
    }
    panic!(
        "the browser tests need Chromium: `apt-get install -y chromium` (scripts/viewers.sh \
         does it) or set ELTRACE_CHROMIUM to a Chromium binary"
    );
}

/// What a page left: its DOM after the scripts ran and the console lines.
pub struct Loaded {
    pub dom: String,
    /// Chromium's `CONSOLE` log lines (console.* calls and uncaught errors), all levels.
    pub console: Vec<String>,
    /// How long Chromium took, start to exit.
    pub elapsed: Duration,
}

/// Chromium headless as root in a container: no sandbox, no GPU, no background network,
/// a fresh profile under `dir`, console messages logged to stderr.
fn headless(dir: &Path, window: (u32, u32)) -> Command {
    static RUN: AtomicU32 = AtomicU32::new(0);
    let profile = dir.join(format!("profile-{}", RUN.fetch_add(1, Ordering::Relaxed)));
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={},{}", window.0, window.1));
    cmd
}

fn file_url(page: &Path) -> String {
    format!(
        "file://{}",
        page.canonicalize().expect("the page exists").display()
    )
}

fn console_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect()
}

impl Loaded {
    /// Asserts that an HTML report rendered: no console line, and its body marked
    /// `data-rendered="yes"` with no `data-errors` (`what` names the page in the messages).
    pub fn assert_report_rendered(&self, what: &str) {
        assert!(self.console.is_empty(), "{what}: {:?}", self.console);
        let body = self.opening_tag("<body");
        assert!(body.contains("data-rendered=\"yes\""), "{what}: {body}");
        assert!(!body.contains("data-errors"), "{what}: {body}");
    }

    /// The first opening tag that starts with `start` (e.g. `<canvas`), attributes included.
    pub fn opening_tag(&self, start: &str) -> &str {
        let dom = &self.dom;
        let tag = &dom[dom
            .find(start)
            .unwrap_or_else(|| panic!("no {start} in the page"))..];
        &tag[..tag.find('>').expect("the tag ends")]
    }
}

/// `eltrace export <trace> --format html -o <dir>/<case>.html`.
pub fn export_html(dir: &Path, trace: &Path, case: &str) -> PathBuf {
    let html = dir.join(format!("{case}.html"));
    let mut cmd = Command::new(eltrace());
    cmd.arg("export")
        .arg(trace)
        .args(["--format", "html", "-o"])
        .arg(&html);
    let (status, _, stderr) = run_captured(&mut cmd, dir, "export");
    assert!(status.success(), "export --format html failed:\n{stderr}");
    html
}

/// Loads `page` and returns its DOM after the scripts ran.
pub fn dump_dom(page: &Path, dir: &Path, window: (u32, u32)) -> Loaded {
    let mut cmd = headless(dir, window);
    cmd.arg("--dump-dom").arg(file_url(page));
    let start = Instant::now();
    let (status, dom, stderr) = run_captured(&mut cmd, dir, "chromium-dom");
    let elapsed = start.elapsed();
    assert!(
        status.success() && !dom.is_empty(),
        "chromium --dump-dom {} failed ({status}):\n{stderr}",
        page.display()
    );
    Loaded {
        dom,
        console: console_lines(&stderr),
        elapsed,
    }
}

/// Saves a screenshot of `page` as `png`; returns the console lines.
pub fn screenshot(page: &Path, png: &Path, dir: &Path, window: (u32, u32)) -> Vec<String> {
    let _ = std::fs::remove_file(png);
    let mut cmd = headless(dir, window);
    cmd.arg(format!("--screenshot={}", png.display()))
        .arg(file_url(page));
    let (status, _, stderr) = run_captured(&mut cmd, dir, "chromium-screenshot");
    let size = std::fs::metadata(png).map_or(0, |m| m.len());
    assert!(
        status.success() && size > 0,
        "chromium --screenshot {} wrote no image ({status}):\n{stderr}",
        page.display()
    );
    console_lines(&stderr)
}

/// Decodes the `%XX` escapes of `encodeURIComponent`.
pub fn uri_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).expect("ASCII escape");
            out.push(u8::from_str_radix(hex, 16).expect("a %XX escape"));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("UTF-8 after decoding")
}

/// The text of the element `<tag id="id">…</tag>` in a dumped DOM, if there is one.
pub fn element_text<'d>(dom: &'d str, tag: &str, id: &str) -> Option<&'d str> {
    let open = format!("<{tag} id=\"{id}\"");
    let start = dom.find(&open)?;
    let body = start + dom[start..].find('>')? + 1;
    let end = body + dom[body..].find(&format!("</{tag}>"))?;
    Some(&dom[body..end])
}
