//! The HTML report's embedded data: golden files of synthetic traces (`tests/results/html-*.json`,
//! the data pretty-printed; `ELTRACE_BLESS=1` rewrites them), the call tree's sums against the
//! analysis, the node cap, the page's self-containedness and a size that follows the call
//! tree rather than the number of events. The page itself is tested in a browser by
//! crates/cli/tests/e2e/browser_html/.

use std::path::PathBuf;

use eltrace_analysis::Analysis;
use eltrace_export::{Export, ExportOptions, Format, HTML_MAX_NODES, Html, export};
use eltrace_trace::testing::traces;
use eltrace_trace::testing::{Function, TraceBuilder, app_info};
use eltrace_trace::{EndRecord, EventKind, FunctionFlags, TraceInfo, ValueStatus};
use serde_json::Value;

use EventKind::{Catch, Enter, Leave, Throw, Unwind, Value as Val};

use crate::support::{check_golden_json, html_data};

fn builder(funcs: &[(&str, &str, &str)]) -> TraceBuilder {
    let info = TraceInfo {
        start_ticks: 1_000,
        start_unix_ns: 1_700_000_000_000_000_000,
        ..app_info()
    };
    TraceBuilder::new(info)
        .ts_offset(1_000)
        .functions(funcs.iter().copied())
}

/// Two threads running some of the same functions (their paths stay apart in the report),
/// an exception, a frame open at the end, a state machine whose `MoveNext` resumes on the
/// other thread, and names that need escaping.
fn two_threads() -> Vec<u8> {
    builder(&[
        ("App.dll", "App.Program", "Main"),               // 0
        ("App.dll", "App.Program", "Compute"),            // 1
        ("App.dll", "App.Program", "Leaf"),               // 2
        ("App.dll", "App.Program", "Thrower"),            // 3
        ("App.dll", "App.Worker", "Loop"),                // 4
        ("App.dll", "App.Program", "Run"),                // 5
        ("App.dll", "App.Program+<Run>d__2", "MoveNext"), // 6
        ("Lib.dll", "Lib.Evil", "X</script><b>&\"'"),     // 7
    ])
    .named_thread(0, 1001, 1, "Main")
    .named_thread(1, 1002, 5, "worker <1>")
    .events(
        0,
        &[
            (0, Enter, 0),
            (100, Enter, 1),
            (200, Enter, 2),
            (300, Leave, 2),
            (400, Enter, 2),
            (450, Leave, 2),
            (1_000, Leave, 1),
            (1_100, Enter, 3),
            (1_150, Throw, 3),
            (1_200, Unwind, 3),
            (1_250, Catch, 0),
            (1_300, Enter, 5),
            (1_310, Enter, 6),
            (1_400, Leave, 6),
            (1_410, Leave, 5),
            (1_500, Enter, 7),
            (1_600, Leave, 7),
        ],
    )
    .events(
        1,
        &[
            (1_000, Enter, 4),
            (1_100, Enter, 1),
            (1_200, Enter, 2),
            (1_700, Leave, 2),
            (1_800, Leave, 1),
            (1_900, Enter, 6),
            (2_000, Leave, 6),
            (2_100, Enter, 2),
        ],
    )
    .events(0, &[(3_000, Leave, 0)])
    .end_record(EndRecord {
        ts: 3_500,
        events_written: 27,
        ..EndRecord::default()
    })
}

/// A runtime-async method as .NET 10 reports it: Main awaits `Work` through its thunk; the
/// variant suspends (no Leave), resumes twice on thread 1 and completes.
fn runtime_async() -> Vec<u8> {
    let info = TraceInfo {
        start_ticks: 1_000,
        runtime: "CoreCLR 10.0.0".into(),
        ..app_info()
    };
    let hooked = |method, token, impl_flags, flags| {
        Function::new("App.dll", "App.P", method)
            .token(token)
            .impl_flags(impl_flags)
            .flags(FunctionFlags::HOOKED | flags)
    };
    TraceBuilder::new(info)
        .ts_offset(1_000)
        .functions([
            hooked("Main", 0x0600_0001, 0, 0),
            hooked("Work", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_THUNK),
            hooked("Work", 0x0600_0002, 0x2000, FunctionFlags::ASYNC_VARIANT),
            hooked("Leaf", 0x0600_0003, 0, 0),
        ])
        .value(0, ValueStatus::Ok, "n=2")
        .thread(0, 10)
        .thread(1, 11)
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x9000),
                (100, Enter, 1, 0x8f00),
                (200, Enter, 2, 0x8e00),
                (200, Val, 0, 0x8e00),
                (300, Leave, 1, 0x8f00),
            ],
        )
        .events_sp(
            1,
            &[
                (1_000, Enter, 2, 0x5000),
                (1_200, Enter, 3, 0x4f00),
                (1_300, Leave, 3, 0x4f00),
            ],
        )
        .events_sp(1, &[(2_000, Enter, 2, 0x5000), (2_500, Leave, 2, 0x5000)])
        .events_sp(0, &[(3_000, Leave, 0, 0x9000)])
        .end(4_000)
}

/// Main calls `Mid{i}` for i < `mids`, each of which calls `Leaf{j}` for j < `leaves`, the
/// frames lasting longer for smaller i and j; `rounds` times over, on one thread.
fn wide(mids: u32, leaves: u32, rounds: u32) -> Vec<u8> {
    let mut funcs = vec![("App.dll", "App.P".to_owned(), "Main".to_owned())];
    for i in 0..mids {
        funcs.push(("App.dll", "App.P".into(), format!("Mid{i}")));
    }
    for j in 0..leaves {
        funcs.push(("App.dll", "App.P".into(), format!("Leaf{j}")));
    }
    let mut b = TraceBuilder::new(app_info());
    for (m, t, f) in &funcs {
        b = b.function((*m, t.as_str(), f.as_str()));
    }
    let mut ev = vec![(0, Enter, 0)];
    let mut t = 0;
    for _ in 0..rounds {
        for i in 0..mids {
            t += 1;
            ev.push((t, Enter, 1 + i));
            for j in 0..leaves {
                ev.push((t + 1, Enter, 1 + mids + j));
                t += 2 + u64::from((mids - i) * (leaves - j));
                ev.push((t, Leave, 1 + mids + j));
            }
            t += 1;
            ev.push((t, Leave, 1 + i));
        }
    }
    ev.push((t + 1, Leave, 0));
    b.thread(0, 7).events(0, &ev).end(t + 2)
}

/// The page for `trace` (with a node budget, when given) and its analysis.
fn page(trace: &[u8], max_nodes: Option<usize>) -> (String, Analysis) {
    let mut out = Vec::new();
    let a = match max_nodes {
        None => export(Format::Html, trace, &mut out, &ExportOptions::default()).unwrap(),
        Some(max) => {
            let html = Html::new(&mut out).max_nodes(max);
            let opts = ExportOptions::default();
            let mut e = Export::with_exporter(Box::new(html), &opts);
            let a = e.process(trace, None).unwrap();
            e.finish().unwrap();
            a
        }
    };
    (String::from_utf8(out).expect("the page is UTF-8"), a)
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("a column")
        .iter()
        .map(|x| x.as_u64().expect("a count"))
        .collect()
}

#[test]
fn golden_html_data() {
    let cases = [
        ("threads", two_threads(), None),
        ("async", runtime_async(), None),
        ("capped", wide(4, 3, 2), Some(8)),
        // The sampler's estimates on the tree's paths and in the rows, `estimated`.
        ("sampled", traces::sampled(), None),
    ];
    for (case, trace, max) in cases {
        let (page, _) = page(&trace, max);
        // Kept for a look in a browser.
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("html-{case}.html"));
        std::fs::write(out, &page).unwrap();
        check_golden_json(&format!("html-{case}.json"), &html_data(&page));
    }
}

/// The tree's sums agree with the analysis: every frame is in one node, each thread's time is
/// its root frames', each function's segments and exclusive time are those of its nodes.
#[test]
fn tree_adds_up() {
    for (trace, max) in [
        (two_threads(), None),
        (runtime_async(), None),
        (wide(4, 3, 2), None),
        (wide(4, 3, 2), Some(8)),
        (wide(30, 30, 1), Some(100)),
    ] {
        let (page, a) = page(&trace, max);
        let d = html_data(&page);
        let t = &d["tree"];
        let parent: Vec<i64> = t["parent"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let (kind, refs) = (u64s(&t["kind"]), u64s(&t["ref"]));
        let (calls, incl, excl) = (u64s(&t["calls"]), u64s(&t["incl"]), u64s(&t["excl"]));
        let n = parent.len();
        assert_eq!(d["tree_cap"]["shown"], n);
        if let Some(max) = max {
            assert!(n <= max, "{n} nodes for a budget of {max}");
        }
        assert_eq!(parent[0], -1);
        assert_eq!(kind[0], 1, "the root is the process");
        for (i, &p) in parent.iter().enumerate().skip(1) {
            assert!(
                (0..i as i64).contains(&p),
                "node {i}: parent {p} not before it"
            );
        }
        assert_eq!(incl[0], a.totals.root_ns);
        assert_eq!(calls.iter().sum::<u64>(), a.totals.frames);
        // Children's times fit in their parent's; a thread's are its time.
        let mut child_incl = vec![0u64; n];
        for i in 1..n {
            child_incl[parent[i] as usize] += incl[i];
        }
        let threads: Vec<_> = a.threads().collect();
        for i in 0..n {
            assert!(child_incl[i] <= incl[i], "node {i}: children exceed it");
            if kind[i] == 2 {
                let (_, s) = threads[refs[i] as usize];
                assert_eq!(incl[i], s.inclusive_ns, "thread node {i}");
                assert_eq!(child_incl[i], incl[i]);
            }
        }
        if d["tree_cap"]["hidden"] == 0 {
            let f = &d["functions"];
            let rows = f["name"].as_array().unwrap().len();
            let (mut seg, mut ex) = (vec![0u64; rows], vec![0u64; rows]);
            let async_kind = u64s(&f["async"]);
            for i in 0..n {
                if kind[i] == 3 {
                    let row = refs[i] as usize;
                    // A runtime-async method's thunk calling its variant is one call of the
                    // method's row (one row per method): the variant's first frame there is
                    // not another segment.
                    let p = parent[i] as usize;
                    let nested = async_kind[row] == 1 && kind[p] == 3 && refs[p] as usize == row;
                    if !nested {
                        seg[row] += calls[i];
                    }
                    ex[row] += excl[i];
                }
            }
            assert_eq!(seg, u64s(&f["segments"]));
            assert_eq!(ex, u64s(&f["excl"]));
        } else {
            assert!(kind.contains(&4), "a cut tree has an other node");
            let hidden: u64 = (0..n).filter(|&i| kind[i] == 4).map(|i| refs[i]).sum();
            assert_eq!(d["tree_cap"]["hidden"], hidden);
            assert_eq!(
                d["tree_cap"]["total"],
                (n as u64 - (0..n).filter(|&i| kind[i] == 4).count() as u64) + hidden
            );
        }
    }
}

/// The budget keeps the paths of most time: with 30 × 30 leaf paths and 100 nodes, the
/// heaviest Mid (Mid0) keeps its heaviest leaves, the lightest ones end in "other" nodes.
#[test]
fn cap_keeps_the_heaviest_paths() {
    let (page, _) = page(&wide(30, 30, 1), Some(100));
    let d = html_data(&page);
    assert_eq!(d["tree_cap"]["total"], 1 + 1 + 1 + 30 + 30 * 30);
    let t = &d["tree"];
    let (kind, refs, parent) = (u64s(&t["kind"]), u64s(&t["ref"]), &t["parent"]);
    let strings = d["strings"].as_array().unwrap();
    let fname = |row: u64| {
        strings[d["functions"]["name"][row as usize].as_u64().unwrap() as usize]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let names: Vec<String> = (0..kind.len())
        .map(|i| match kind[i] {
            3 => {
                let p = parent[i].as_u64().unwrap() as usize;
                let pname = if kind[p] == 3 {
                    fname(refs[p])
                } else {
                    String::new()
                };
                format!("{pname}/{}", fname(refs[i]))
            }
            k => format!("kind {k}"),
        })
        .collect();
    assert!(
        names.contains(&"App.P.Mid0/App.P.Leaf0".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"App.P.Mid29/App.P.Leaf29".to_owned()),
        "{names:?}"
    );
}

#[test]
fn page_is_self_contained() {
    let (page, _) = page(&two_threads(), None);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none';"));
    // Two script elements (the data and the code) and nothing that loads anything.
    assert_eq!(page.matches("<script").count(), 2, "{page}");
    assert_eq!(page.matches("</script>").count(), 2);
    for banned in [
        " src=",
        "<link",
        "@import",
        "url(",
        "fetch(",
        "XMLHttpRequest",
        "http://",
        "https://",
    ] {
        assert!(!page.contains(banned), "the page contains {banned:?}");
    }
    // The name that tries to end the script is data, escaped.
    let d = html_data(&page);
    assert!(
        d["strings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "Lib.Evil.X</script><b>&\"'")
    );
    assert!(page.contains("<title>eltrace: dotnet App.dll (pid 4242)</title>"));
}

/// The file's size follows the call tree, not the number of events: a hundred times more
/// rounds over the same paths changes it only by the digits of the larger numbers.
#[test]
fn size_follows_the_tree() {
    let (small, _) = page(&wide(10, 10, 10), None);
    let (big, a) = page(&wide(10, 10, 1_000), None);
    assert!(a.totals.events > 200_000);
    let (s, b) = (small.len(), big.len());
    assert!(b < s + s / 20, "{s} bytes for 10 rounds, {b} for 1000");
}

/// A tree far over the budget gives a file of the budget's size, and says it was cut.
#[test]
fn size_is_capped() {
    let (page, _) = page(&wide(200, 250, 1), None);
    let d = html_data(&page);
    assert_eq!(d["tree_cap"]["total"], 3 + 200 + 200 * 250);
    assert_eq!(d["tree_cap"]["shown"], HTML_MAX_NODES);
    assert!(d["tree_cap"]["hidden"].as_u64().unwrap() > 20_000);
    assert!(page.len() < 2_000_000, "{} bytes", page.len());
}
