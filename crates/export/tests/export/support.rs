//! Helpers of the export tests: run an exporter over a trace or a session, read the data of an
//! HTML report, compare with a golden file.

use std::path::PathBuf;

use eltrace_export::{Export, ExportOptions, Format, ProcessMeta, export};
use eltrace_trace::{Record, TraceInfo, TraceReader};
use serde_json::Value;

pub fn run(format: Format, trace: &[u8], opts: &ExportOptions) -> Vec<u8> {
    let mut out = Vec::new();
    export(format, trace, &mut out, opts).unwrap();
    out
}

/// Compares `actual` with `tests/results/<case>.<format's extension>`.
pub fn check_golden(case: &str, format: Format, actual: &[u8]) {
    check_golden_file(&format!("{case}.{}", format.extension()), actual);
}

/// Compares `actual` with `tests/results/<file>` (rewrites it under `ELTRACE_BLESS=1`).
pub fn check_golden_file(file: &str, actual: &[u8]) {
    let file = file.to_owned();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(&file);
    std::fs::write(&tmp, actual).unwrap();
    let expected_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/results")
        .join(&file);
    if std::env::var_os("ELTRACE_BLESS").is_some() {
        std::fs::write(&expected_path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&expected_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with ELTRACE_BLESS=1)",
            expected_path.display()
        )
    });
    if expected != actual {
        let out = std::process::Command::new("diff")
            .arg("-u")
            .arg(&expected_path)
            .arg(&tmp)
            .output();
        let diff = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        panic!("{file} differs from the expected output:\n{diff}");
    }
}

/// Compares `data`, pretty-printed with a final newline, with `tests/results/<file>`.
pub fn check_golden_json(file: &str, data: &Value) {
    let mut text = serde_json::to_string_pretty(data).unwrap();
    text.push('\n');
    check_golden_file(file, text.as_bytes());
}

/// The JSON object embedded in an HTML report.
pub fn html_data(page: &str) -> Value {
    let start = page
        .find("id=\"eltrace-data\">")
        .expect("the page has its data")
        + "id=\"eltrace-data\">".len();
    let len = page[start..].find("</script>").expect("the data ends");
    serde_json::from_str(&page[start..start + len]).expect("the data is JSON")
}

/// Exports `traces` as one session (each process on the timeline its trace's INFO gives).
pub fn run_session(format: Format, traces: &[Vec<u8>], opts: &ExportOptions) -> Vec<u8> {
    let infos: Vec<TraceInfo> = traces.iter().map(|t| info(t)).collect();
    let mut out = Vec::new();
    let mut e = Export::new(format, &mut out, opts);
    for (trace, process) in traces.iter().zip(ProcessMeta::session(&infos)) {
        e.process(&trace[..], Some(process)).unwrap();
    }
    e.finish().unwrap();
    out
}

/// The INFO record of a trace.
pub fn info(trace: &[u8]) -> TraceInfo {
    match TraceReader::new(trace).unwrap().next_record().unwrap() {
        Some(Record::Info(info)) => info,
        r => panic!("the trace starts with {r:?}"),
    }
}
