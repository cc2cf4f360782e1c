//! Bad input gets one `eltrace: error:` line and a non-zero exit (2 for usage errors), never
//! a panic.

use crate::support::*;

#[test]
fn missing_file() {
    for cmd in [&["report"][..], &["export", "--format", "chrome"][..]] {
        let mut args = cmd.to_vec();
        args.push("/nonexistent/trace.eltrace");
        assert_error(
            &run(&args),
            1,
            "/nonexistent/trace.eltrace: no such file or directory",
        );
    }
}

#[test]
fn garbage_empty_and_directory() {
    let dir = temp_dir("garbage");
    let g = save(
        &dir,
        "garbage.eltrace",
        b"this is not a trace at all, just some text\n",
    );
    let e = save(&dir, "empty.eltrace", b"");
    for args in [
        vec!["report"],
        vec!["report", "--json"],
        vec!["export", "-f", "folded"],
    ] {
        let mut a = args.clone();
        a.push(g.to_str().unwrap());
        assert_error(&run(&a), 1, "not an eltrace trace");
        let mut a = args.clone();
        a.push(e.to_str().unwrap());
        assert_error(&run(&a), 1, "not an eltrace trace");
        let mut a = args.clone();
        a.push(dir.to_str().unwrap());
        assert_error(&run(&a), 1, "is a directory");
    }
}

#[test]
fn corrupt_trace() {
    let dir = temp_dir("corrupt");
    let p = save(&dir, "bad.eltrace", &corrupt_sample_trace());
    assert_error(
        &run(&["report", p.to_str().unwrap()]),
        1,
        "trace is corrupt at byte",
    );
    // A future format version.
    let mut bytes = sample_trace(true);
    bytes[8] = 99;
    let p = save(&dir, "v99.eltrace", &bytes);
    assert_error(
        &run(&["report", p.to_str().unwrap()]),
        1,
        "version 99 is not supported",
    );
    // Only the magic.
    let p = save(&dir, "magic.eltrace", b"ELTRACE\0");
    assert_error(&run(&["report", p.to_str().unwrap()]), 1, "corrupt");
}

#[test]
fn usage_errors() {
    let dir = temp_dir("usage");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let ps = p.to_str().unwrap();
    assert_error(&run(&["report", ps, "--bogus"]), 2, "--bogus");
    assert_error(
        &run(&["report", ps, "--by", "size"]),
        2,
        "possible values: inclusive, exclusive, calls",
    );
    assert_error(&run(&["report", ps, "--top", "many"]), 2, "many");
    assert_error(&run(&["report", ps, "--thread", "x"]), 2, "x");
    assert_error(&run(&["report"]), 2, "<FILES>");
    assert_error(&run(&["export", ps]), 2, "--format");
    assert_error(
        &run(&["export", ps, "--format", "svg"]),
        2,
        "possible values: chrome, perfetto, speedscope, folded, html",
    );
    assert_error(&run(&["frobnicate"]), 2, "frobnicate");
    assert_error(&run(&["record"]), 2, "COMMAND");
    // No subcommand: help on stderr, exit 2.
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage"));
}

#[test]
fn help_and_version_succeed() {
    let o = run(&["--help"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("record"));
    let o = run(&["export", "--help"]);
    assert!(stdout(&o).contains("ui.perfetto.dev"), "{}", stdout(&o));
    let o = run(&["--version"]);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("eltrace "));
}
