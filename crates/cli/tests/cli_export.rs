//! `eltrace export` on synthetic traces: both formats, default and explicit outputs, stdout.

mod cli_support;

use cli_support::*;
use serde_json::Value;

#[test]
fn chrome_to_default_path() {
    let dir = temp_dir("chrome");
    let p = save(&dir, "t.eltrace", &sample_trace(true));
    let o = run(&["export", p.to_str().unwrap(), "--format", "chrome"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let out = dir.join("t.json");
    assert!(
        stderr(&o).contains(&format!("wrote {}", out.display())),
        "{}",
        stderr(&o)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["displayTimeUnit"], "ns");
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
    assert!(!dir.join("t.json.partial").exists());
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
    let p = save(&dir, "t.json", &sample_trace(true));
    let o = run(&["export", p.to_str().unwrap(), "-f", "chrome"]);
    assert_error(&o, 1, "would overwrite the trace");
    assert_eq!(std::fs::read(&p).unwrap(), sample_trace(true));
}

#[test]
fn a_failed_export_leaves_no_output() {
    let dir = temp_dir("exfail");
    let p = save(&dir, "t.eltrace", &corrupt_sample_trace());
    let o = run(&["export", p.to_str().unwrap(), "-f", "chrome"]);
    assert_error(&o, 1, "corrupt");
    assert!(!dir.join("t.json").exists());
    assert!(!dir.join("t.json.partial").exists());
}
