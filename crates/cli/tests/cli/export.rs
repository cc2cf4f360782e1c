//! `eltrace export` on synthetic traces: both formats, default and explicit outputs, stdout.

use crate::support::*;
use eltrace_trace::testing::TraceBuilder;
use serde_json::Value;

#[test]
fn chrome_to_default_path() {
    let dir = temp_dir("chrome");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&["export", p.to_str().unwrap(), "--format", "chrome"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let out = dir.join("t.trace.json");
    assert!(
        stderr(&o).contains(&format!("wrote {}", out.display())),
        "{}",
        stderr(&o)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    // ts and dur are µs; Perfetto reads `"displayTimeUnit":"ns"` as "they are ns".
    assert!(v.get("displayTimeUnit").is_none());
    let evs = v["traceEvents"].as_array().unwrap();
    let slices: Vec<&Value> = evs.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(slices.len(), 6);
    let main = slices
        .iter()
        .find(|e| e["name"] == "App.Program.Main")
        .unwrap();
    assert_eq!(
        (main["tid"].as_u64(), main["pid"].as_u64()),
        (Some(1001), Some(4242))
    );
    assert_eq!(main["dur"].as_f64(), Some(10_000.0));
    assert_eq!(main["cat"], "App.dll");
    let boom = slices
        .iter()
        .find(|e| e["name"] == "App.Program.Boom")
        .unwrap();
    assert_eq!(boom["args"]["ended_by"], "unwind");
    let names: Vec<&Value> = evs.iter().filter(|e| e["name"] == "thread_name").collect();
    assert_eq!(names.len(), 2);
    assert!(!dir.join("t.trace.json.partial").exists());
}

#[test]
fn folded_to_stdout_and_file() {
    let dir = temp_dir("folded");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "--format",
        "folded",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "App.Program.Main 3000000\n\
         App.Program.Main;App.Program.Boom 1000000\n\
         App.Program.Main;App.Program.Work 5000000\n\
         App.Program.Main;App.Program.Work;Lib.Util.Leaf 1000000\n\
         App.Worker.Loop 4000000\n"
    );
    let out = dir.join("stacks.txt");
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "folded",
        "--value",
        "calls",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("App.Program.Main;App.Program.Work 2\n"),
        "{text}"
    );
    // Default path: FILE with the format's extension.
    let o = run(&["export", p.to_str().unwrap(), "--format", "folded"]);
    assert!(o.status.success());
    assert!(dir.join("t.folded").is_file());
}

#[test]
fn thread_filter() {
    let dir = temp_dir("exthread");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "folded",
        "-o",
        "-",
        "--thread",
        "1002",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "App.Worker.Loop 4000000\n");
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "folded",
        "-o",
        "-",
        "--thread",
        "5",
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("no thread"), "{}", stderr(&o));
}

#[test]
fn truncated_trace_exports_with_a_warning() {
    let dir = temp_dir("extrunc");
    let bytes = sample_trace(true);
    let p = save(&dir, "t.eltrace", &bytes[..bytes.len() - 5]);
    let o = run(&["export", p.to_str().unwrap(), "-f", "chrome", "-o", "-"]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["otherData"]["truncated"], true);
}

#[test]
fn refuses_to_overwrite_the_trace() {
    let dir = temp_dir("overwrite");
    let p = save(&dir, "t.folded", &sample_trace(true));
    let o = run(&["export", p.to_str().unwrap(), "-f", "folded"]);
    assert_error(&o, 1, "would overwrite the trace");
    assert_eq!(std::fs::read(&p).unwrap(), sample_trace(true));
}

#[test]
fn a_failed_export_leaves_no_output() {
    let dir = temp_dir("exfail");
    let p = save(&dir, "t.eltrace", &corrupt_sample_trace());
    let o = run(&["export", p.to_str().unwrap(), "-f", "chrome"]);
    assert_error(&o, 1, "corrupt");
    assert!(!dir.join("t.trace.json").exists());
    assert!(!dir.join("t.trace.json.partial").exists());
}

#[test]
fn perfetto_and_speedscope_to_default_paths() {
    let dir = temp_dir("newformats");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    for (format, file) in [
        ("perfetto", "t.pftrace"),
        ("speedscope", "t.speedscope.json"),
    ] {
        let o = run(&["export", p.to_str().unwrap(), "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = dir.join(file);
        assert!(
            stderr(&o).contains(&format!("wrote {} ({format}, 6 frames", out.display())),
            "{}",
            stderr(&o)
        );
        assert!(std::fs::metadata(&out).unwrap().len() > 0);
    }
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("t.speedscope.json")).unwrap()).unwrap();
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "Main (1001)",
            "Worker (1002)",
            "logical (async calls under their callers)"
        ]
    );
}

/// `--from`/`--to` keep what overlaps the window, cut at its edges; the folded output says
/// its unit on stderr when written to a file.
#[test]
fn time_window_and_thread_root() {
    let dir = temp_dir("window");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "folded",
        "-o",
        "-",
        "--from",
        "2.5ms",
        "--to",
        "4000000",
        "--thread-root",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "Main_(1001);App.Program.Main 0\n\
         Main_(1001);App.Program.Main;App.Program.Work 1000000\n\
         Main_(1001);App.Program.Main;App.Program.Work;Lib.Util.Leaf 500000\n\
         Worker_(1002);App.Worker.Loop 1500000\n"
    );
    let out = dir.join("w.folded");
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "folded",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("values: exclusive time in ns"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "chrome",
        "--from",
        "5ms",
        "--to",
        "5ms",
    ]);
    assert_error(&o, 2, "--from must be before --to");
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "chrome",
        "--from",
        "5h",
    ]);
    assert_error(&o, 2, "unknown unit 'h'");
}

/// Exports are private like traces (issue 28): created 0600 under umask 022, in every format
/// (a `--values` trace's export shows argument values); a file replaced keeps its own mode.
#[test]
fn exports_are_created_owner_only_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("export-mode");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let mode = |f: &std::path::Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    for format in [
        "perfetto",
        "speedscope",
        "chrome",
        "folded",
        "html",
        "pprof",
    ] {
        let out = dir.join(format!("t.{format}.out"));
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg("umask 022; exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_eltrace"))
            .args(["export", "-f", format, "-o"])
            .arg(&out)
            .arg(&p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert_eq!(mode(&out), 0o600, "{format}");
    }
    let kept = dir.join("kept.folded");
    std::fs::write(&kept, b"old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = run(&[
        "export",
        "-f",
        "folded",
        "-o",
        kept.to_str().unwrap(),
        p.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&kept), 0o640, "a replaced file keeps its mode");
}

/// What `go tool pprof -top` reads from a pprof export for sample type `index` (`calls` or
/// `wall`, the latter in ns): (flat, cum) by function name, for functions with a value.
fn pprof_top(
    profile: &std::path::Path,
    index: &str,
) -> std::collections::BTreeMap<String, (u64, u64)> {
    let o = std::process::Command::new("go")
        .args(["tool", "pprof", "-top", "-nodecount=100000"])
        .arg(format!("-sample_index={index}"))
        // Every function, however small its share (pprof drops those below 0.5 %), in ns.
        .args(["-nodefraction=0", "-unit=ns"])
        .arg(profile)
        .output()
        .expect("go tool pprof (Debian's golang-go; scripts/setup.sh installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let num = |s: &str| s.trim_end_matches("ns").parse::<u64>().ok();
    // `flat flat% sum% cum cum% name` rows after the header line.
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let name = cols.get(5..)?.join(" ");
            Some((name, (num(cols.first()?)?, num(cols.get(3)?)?)))
        })
        .filter(|(_, (flat, cum))| flat + cum > 0)
        .collect()
}

#[test]
fn pprof_reads_in_go_tool_pprof_with_the_counts_of_report() {
    let dir = temp_dir("pprof");
    for (case, trace) in [
        ("timed", sample_trace(true)),
        ("none", timeless_trace("none")),
        ("sampled", timeless_trace("sampled")),
    ] {
        let p = save(&dir, &format!("{case}.eltrace"), &trace);
        let out = dir.join(format!("{case}.pb.gz"));
        let o = run(&[
            "export",
            p.to_str().unwrap(),
            "--format",
            "pprof",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(&["report", "--json", p.to_str().unwrap()]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let functions = v["functions"].as_array().unwrap();
        let report = |key: &str| -> std::collections::BTreeMap<String, u64> {
            functions
                .iter()
                .map(|f| {
                    (
                        f["name"].as_str().unwrap().to_string(),
                        f[key].as_u64().unwrap_or(0),
                    )
                })
                .filter(|(_, v)| *v > 0)
                .collect()
        };
        let calls = pprof_top(&out, "calls");
        let flat = |m: &std::collections::BTreeMap<String, (u64, u64)>| -> std::collections::BTreeMap<String, u64> {
            m.iter()
                .map(|(k, v)| (k.clone(), v.0))
                .filter(|(_, v)| *v > 0)
                .collect()
        };
        assert_eq!(flat(&calls), report("calls"), "{case}");
        if case == "none" {
            continue;
        }
        // Wall time: pprof's flat is the exclusive time, its cum the inclusive time (measured,
        // or the sampler's estimates).
        let wall = pprof_top(&out, "wall");
        let cum: std::collections::BTreeMap<String, u64> =
            wall.iter().map(|(k, v)| (k.clone(), v.1)).collect();
        assert!(
            cum.len() >= 2,
            "{case}: wall time of Main and Work at least: {cum:?}"
        );
        assert_eq!(flat(&wall), report("exclusive_ns"), "{case}");
        assert_eq!(cum, report("inclusive_ns"), "{case}");
    }
}

/// A trace without per-event times (`timing`: `none` or `sampled`): Main calls Work twice and
/// Leaf once; for `sampled`, samples between the events (each written before the events after
/// its index, as the profiler writes them): Work on the stack in two of three intervals.
fn timeless_trace(timing: &str) -> Vec<u8> {
    use eltrace_trace::testing::timed_info;
    let sampled = timing == "sampled";
    let sample = |b: TraceBuilder, index: u64, ms: u64| {
        if sampled {
            b.samples(&[(0, index, ms * 1_000_000, None)])
        } else {
            b
        }
    };
    let b = TraceBuilder::new(timed_info(timing, 1000))
        .functions([
            ("App.dll", "App.Program", "Main"),
            ("App.dll", "App.Program", "Work"),
            ("App.dll", "App.Program", "Leaf"),
        ])
        .thread(0, 1001)
        .events(0, &[(0, Enter, 0)]);
    let b = sample(b, 1, 1).events(0, &[(10, Enter, 1)]);
    let b = sample(b, 2, 2).events(0, &[(20, Leave, 1), (30, Enter, 1)]);
    let b = sample(b, 4, 3).events(
        0,
        &[
            (35, Enter, 2),
            (36, Leave, 2),
            (40, Leave, 1),
            (50, Leave, 0),
        ],
    );
    sample(b, 8, 4).end(5_000_000)
}

/// An empty trace exports to a valid, empty pprof profile, and says so.
#[test]
fn pprof_of_an_empty_trace_is_empty_and_says_so() {
    let dir = temp_dir("pprof-empty");
    let p = save(
        &dir,
        "t.eltrace",
        &TraceBuilder::new(eltrace_trace::testing::app_info()).end(0),
    );
    let out = dir.join("t.pb.gz");
    let o = run(&[
        "export",
        p.to_str().unwrap(),
        "-f",
        "pprof",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds no calls"), "{}", stderr(&o));
    assert!(pprof_top(&out, "calls").is_empty());
}
