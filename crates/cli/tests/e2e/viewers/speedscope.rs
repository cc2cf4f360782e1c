//! speedscope on synthetic traces: its own format (one profile per thread and the logical call
//! tree, every function once in the sandwich view, frames that end abnormally balanced, drops
//! in the title), the pprof export with `report`'s numbers, a sampled trace, and the Chrome
//! JSON opened by its default name.

use eltrace_trace::testing::traces;

use crate::viewer_support::queries::{dir, export_with};
use crate::viewer_support::speedscope::Speedscope;
use crate::viewer_support::viewers;

/// The speedscope export in speedscope: one profile per thread, named with its tid, every
/// function in the sandwich view once (an async method's segments merged), equal ends
/// nested without a warning from speedscope's importer.
#[test]
fn speedscope_shows_the_speedscope_export() {
    let Some(v) = viewers("speedscope_shows_the_speedscope_export") else {
        return;
    };
    let (path, bytes) = export_with(
        &dir("speedscope"),
        &traces::nested_async(),
        "speedscope",
        &[],
    );
    assert_eq!(path.file_name().unwrap(), "t.speedscope.json");
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(ss.title(), "App.dll (pid 4242) - speedscope");
    let rows = ss.sandwich();
    let names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "App.P.Main",
            "App.P.Outer [thunk]",
            "App.Q.Inner",
            "App.P.Outer"
        ],
        "{rows:?}"
    );
    ss.browser.screenshot("speedscope-nested-async-main");
    assert_eq!(
        ss.profile_lines(),
        vec![
            "main (4242) (1/3)",
            ".NET TP Worker (4250) (2/3)",
            "logical (async calls under their callers) (3/3)"
        ]
    );
    // The logical call tree (the last profile): every function, resumes included, under the
    // call that awaited it.
    let mut logical: Vec<String> = ss.sandwich().into_iter().map(|r| r.2).collect();
    logical.sort();
    assert_eq!(
        logical,
        vec![
            "App.P.Main",
            "App.P.Outer",
            "App.P.Outer [thunk]",
            "App.Q.Inner",
            "App.Q.Leaf"
        ]
    );
    ss.key("p");
    // On the worker: Inner's resume (500 ns, Leaf 100 of it) and Outer's (200 ns).
    let rows = ss.sandwich();
    assert_eq!(
        rows,
        vec![
            (
                "500.00ns (71%)".into(),
                "400.00ns (57%)".into(),
                "App.Q.Inner".into()
            ),
            (
                "200.00ns (29%)".into(),
                "200.00ns (29%)".into(),
                "App.P.Outer".into()
            ),
            (
                "100.00ns (14%)".into(),
                "100.00ns (14%)".into(),
                "App.Q.Leaf".into()
            ),
        ]
    );
    ss.browser.screenshot("speedscope-nested-async-worker");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);

    // Frames ended by an exception, a tail call, a mismatched Leave or the end of the trace
    // open and close in balance: speedscope's importer would throw otherwise.
    let (_, bytes) = export_with(
        &dir("speedscope-basic"),
        &traces::basic(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "time-ordered");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(
        ss.profile_lines(),
        vec![
            "Main (1001) (1/3)",
            "thread (1002) (2/3)",
            "logical (async calls under their callers) (3/3)"
        ]
    );
    ss.browser.screenshot("speedscope-basic");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);

    let (_, bytes) = export_with(
        &dir("speedscope-drops"),
        &traces::drops(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "t.speedscope.json", &bytes, "time-ordered");
    assert_eq!(
        ss.title(),
        "App.dll (pid 4242), 10 events dropped - speedscope"
    );
    assert_eq!(
        ss.profile_line(),
        "main (4242), 7 events dropped (1/4)",
        "{}",
        ss.text()
    );
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// The pprof export opens in speedscope (its pprof importer, gzipped) with the numbers of the
/// analysis (`report`'s): a timed trace's sandwich view shows every function's exclusive
/// ("Self") and inclusive ("Total") time, a timeless trace's its calls.
#[test]
fn speedscope_imports_the_pprof_export() {
    let Some(v) = viewers("speedscope_imports_the_pprof_export") else {
        return;
    };
    for (case, trace) in [
        ("timed", traces::recursion()),
        ("timeless", traces::timeless()),
    ] {
        let (path, bytes) = export_with(
            &dir(&format!("speedscope-pprof-{case}")),
            &trace,
            "pprof",
            &[],
        );
        assert_eq!(path.file_name().unwrap(), "t.pb.gz");
        let mut ss = Speedscope::load(&v, &format!("{case}.pb.gz"), &bytes, "sandwich");
        assert!(!ss.failed(), "{}", ss.text());
        let mut rows = ss.sandwich();
        rows.sort_by(|a, b| a.2.cmp(&b.2));
        // What report says of each function, in speedscope's own spelling.
        let a = eltrace_analysis::analyze(&trace[..], &eltrace_analysis::Options::default())
            .expect("the trace reads");
        let mut expected: Vec<(String, String, String)> = a
            .functions()
            .map(|(idx, s)| {
                let (total, own) = if a.has_event_times() {
                    (
                        format!("{}.00ns", s.inclusive_ns),
                        format!("{}.00ns", s.exclusive_ns),
                    )
                } else {
                    // Calls: a function's self value is its calls (its total holds its
                    // callees' calls too).
                    (String::new(), s.calls.to_string())
                };
                (total, own, a.tables.functions.name(idx))
            })
            .collect();
        expected.sort_by(|x, y| x.2.cmp(&y.2));
        // speedscope writes `130.00ns (52%)`: the value before the share.
        let value = |cell: &str| cell.split(" (").next().unwrap_or("").to_string();
        let got: Vec<(String, String, String)> = rows
            .iter()
            .map(|(total, own, name)| {
                let total = if a.has_event_times() {
                    value(total)
                } else {
                    String::new()
                };
                (total, value(own), name.clone())
            })
            .collect();
        assert_eq!(got, expected, "{case}: speedscope {rows:?}");
        assert_eq!(rows.len(), expected.len(), "{rows:?}");
        ss.browser.screenshot(&format!("speedscope-pprof-{case}"));
        assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    }
}

/// A `--timing sampled` trace's speedscope export (one sampled profile of the estimates)
/// opens in speedscope with its functions in the sandwich view.
#[test]
fn speedscope_shows_a_sampled_trace() {
    let Some(v) = viewers("speedscope_shows_a_sampled_trace") else {
        return;
    };
    let (_, bytes) = export_with(
        &dir("speedscope-sampled"),
        &traces::sampled(),
        "speedscope",
        &[],
    );
    let mut ss = Speedscope::load(&v, "sampled.speedscope.json", &bytes, "sandwich");
    assert!(!ss.failed(), "{}", ss.text());
    let rows = ss.sandwich();
    let mut names: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["App.P.Main", "App.P.Work"], "{rows:?}");
    ss.browser.screenshot("speedscope-sampled");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
}

/// The Chrome JSON's default name opens in speedscope; `*.chrome.json`, the old name, makes
/// speedscope take it for a DevTools profile and fail (the control).
#[test]
fn speedscope_opens_the_chrome_json_by_its_default_name() {
    let Some(v) = viewers("speedscope_opens_the_chrome_json_by_its_default_name") else {
        return;
    };
    let (path, bytes) = export_with(&dir("speedscope-json"), &traces::basic(), "chrome", &[]);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert_eq!(name, "t.trace.json");
    let mut ss = Speedscope::load(&v, name, &bytes, "time-ordered");
    assert!(!ss.failed(), "{}", ss.text());
    assert_eq!(
        ss.profile_lines(),
        vec![
            "App.dll (pid 4242), Main (1001) (tid 1001) (1/2)",
            "App.dll (pid 4242), thread (1002) (tid 1002) (2/2)"
        ]
    );
    ss.browser.screenshot("speedscope-chrome-json");
    assert_eq!(ss.browser.problems_except(&[]), Vec::<String>::new());
    drop(ss);
    let mut ss = Speedscope::load(&v, "t.chrome.json", &bytes, "time-ordered");
    assert!(ss.failed(), "the control no longer fails: {}", ss.text());
}
