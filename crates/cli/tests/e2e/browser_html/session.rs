//! A recording session of two processes in one report: a root over a box per process, each
//! process's facts under its name, the threads table with each thread's process, and the
//! compiler's losses and waits for the writer warned about by name.

use std::fs;

use super::{WINDOW, strings, use_report};
use crate::common::browser::{dump_dom, element_text};
use crate::common::processes::TempDir;
use eltrace_trace::testing::traces;

/// A recording session of two processes (`eltrace_trace::testing::traces::session`) in one
/// report: an "all" root over a box per process, each process's facts under its name, the
/// threads table with the process of each thread, the losses and waits of the compiler warned
/// about by name.
#[test]
fn session_report_in_chromium() {
    let dir = TempDir::new("browser-session");
    let traces = traces::session();
    let main = dir.path().join("app.eltrace");
    fs::write(&main, &traces[0]).unwrap();
    fs::write(dir.path().join("app.4300.eltrace"), &traces[1]).unwrap();
    let seen = use_report(dir.path(), &main, "session", "Csc.P.Main", "log");
    assert_eq!(
        seen["title"],
        "eltrace: 2 processes: App.dll (pid 4242), csc.dll (pid 4300)"
    );
    // all, 2 processes, 4 threads, 13 call paths.
    assert_eq!(seen["nodes"], 20, "{seen:#}");
    let csc = "/usr/bin/dotnet /sdk/Roslyn/bincore/csc.dll /noconfig @/tmp/x.rsp (pid 4300)";
    assert_eq!(
        seen["crumbs"],
        format!("Zoomed: all processes › {csc} › main (4300) › Csc.P.Main")
    );
    // Shared.Log.Write: twice in App, three times in csc.
    assert_eq!(seen["matches"], 5, "{seen:#}");
    assert_eq!(strings(&seen["search_functions"]), ["Shared.Log.Write"]);
    assert_eq!(
        strings(&seen["warnings"]),
        [
            format!(
                "{csc}: 4 events were dropped (a thread\u{2019}s buffer was full): the \
                 affected stacks were cut at the drop."
            ),
            format!(
                "{csc}: Threads waited 4 times for the trace writer (14.0 µs in all): the \
                 recording slowed them down there (it loses no event; record --lossy drops \
                 events instead of waiting)."
            ),
        ]
    );
    // By time in frames: App's main thread (3 µs), csc's (2 µs), the pool threads.
    assert_eq!(
        strings(&seen["threads"]),
        [
            "main (4242)",
            "main (4300)",
            ".NET TP Worker (4250)",
            ".NET TP Worker (4301)"
        ]
    );
    assert_eq!(seen["facts"]["Process"], "pid 4242");
    assert_eq!(seen["facts"]["Waits for the trace writer"], "0");

    let html = dir.path().join("session.html");
    let loaded = dump_dom(&html, dir.path(), WINDOW);
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    let dom = &loaded.dom;
    assert_eq!(
        element_text(dom, "p", "subtitle"),
        Some("2 processes (pids 4242, 4300) · 2023-11-14 22:13:20 UTC · 24 events · 4 threads")
    );
    let facts = element_text(dom, "div", "facts").unwrap();
    for h in [
        "<h3>dotnet App.dll (pid 4242)</h3>",
        &format!("<h3>{csc}</h3>"),
    ] {
        assert!(facts.contains(h), "{h} not in the facts: {facts}");
    }
    assert!(
        facts.contains("<dt>Waits for the trace writer</dt><dd class=\"bad\">4 (14.0 µs)</dd>"),
        "{facts}"
    );
    let threads = element_text(dom, "table", "threads").unwrap();
    assert!(threads.contains(">Process</th>"), "{threads}");
    assert!(
        threads.contains("<td class=\"warn-cell \">3 (12.0 µs)</td>"),
        "{threads}"
    );
}
