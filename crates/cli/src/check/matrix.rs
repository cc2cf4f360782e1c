//! `eltrace check --runtime`'s output: one column of verdicts per runtime, as a table (with
//! the observations behind every verdict that is not PASS) or as one JSON object holding every
//! column in full.

use std::path::PathBuf;

use serde_json::json;

use super::checks::{Row, Verdict};
use crate::util::wrap;

/// The checks on one runtime.
#[derive(Debug, Clone)]
pub struct Column {
    /// The Microsoft.NETCore.App version asked for (the column's header).
    pub version: String,
    /// The runtime as the profiler saw it.
    pub runtime: String,
    pub dotnet: PathBuf,
    /// The target framework of the probe build that ran.
    pub probes: &'static str,
    pub rows: Vec<Row>,
    /// Why the runtime was not checked (then `rows` is empty).
    pub error: Option<String>,
}

impl Column {
    /// A runtime that could not be checked.
    pub fn unavailable(version: String, why: String) -> Self {
        Column {
            version,
            runtime: "not checked".into(),
            dotnet: PathBuf::new(),
            probes: "",
            rows: Vec::new(),
            error: Some(why),
        }
    }
}

/// Verdict counts: pass, differs, fail, n/a.
fn counts(rows: &[Row]) -> [usize; 4] {
    [
        Verdict::Pass,
        Verdict::Differs,
        Verdict::Fail,
        Verdict::NotApplicable,
    ]
    .map(|v| rows.iter().filter(|r| r.verdict == v).count())
}

/// The verdicts of check `i` differ between runtimes (N/A aside).
fn varies(cols: &[Column], i: usize) -> bool {
    let mut seen = cols
        .iter()
        .filter_map(|c| c.rows.get(i))
        .map(|r| r.verdict)
        .filter(|v| *v != Verdict::NotApplicable);
    let first = seen.next();
    seen.any(|v| Some(v) != first)
}

pub fn render_json(cols: &[Column]) -> serde_json::Value {
    let names: Vec<&str> = cols
        .iter()
        .find(|c| !c.rows.is_empty())
        .map(|c| c.rows.iter().map(|r| r.name).collect())
        .unwrap_or_default();
    let total = cols.iter().fold([0; 4], |mut acc, c| {
        for (a, n) in acc.iter_mut().zip(counts(&c.rows)) {
            *a += n;
        }
        acc
    });
    json!({
        "platform": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "runtimes": cols.iter().map(|c| {
            let n = counts(&c.rows);
            json!({
                "version": c.version,
                "runtime": c.runtime,
                "dotnet": c.dotnet.display().to_string(),
                "probes": c.probes,
                "error": c.error,
                "checks": c.rows.iter().map(|r| json!({
                    "name": r.name,
                    "expected": r.expected,
                    "observed": r.observed,
                    "verdict": r.verdict.name(),
                })).collect::<Vec<_>>(),
                "summary": {"pass": n[0], "differs": n[1], "fail": n[2], "not_applicable": n[3]},
            })
        }).collect::<Vec<_>>(),
        "matrix": names.iter().enumerate().map(|(i, name)| json!({
            "name": name,
            "verdicts": cols.iter().map(|c| (
                c.version.clone(),
                c.rows.get(i).map_or(serde_json::Value::Null, |r| json!(r.verdict.name())),
            )).collect::<serde_json::Map<_, _>>(),
            "varies": varies(cols, i),
        })).collect::<Vec<_>>(),
        "summary": {"pass": total[0], "differs": total[1], "fail": total[2], "not_applicable": total[3]},
    })
}

pub fn render_table(cols: &[Column]) -> String {
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let mut out = format!(
        "eltrace check on {} {}: {} runtime{}\n\n",
        std::env::consts::OS,
        std::env::consts::ARCH,
        cols.len(),
        if cols.len() == 1 { "" } else { "s" }
    );
    let ver_w = cols.iter().map(|c| c.version.len()).max().unwrap_or(0);
    for c in cols {
        out.push_str(&match &c.error {
            Some(e) => format!(
                "  {}  not checked: {}\n",
                pad(&c.version, ver_w),
                e.lines().next().unwrap_or("").trim_end_matches(':')
            ),
            None => format!(
                "  {}  {} ({} probes, {})\n",
                pad(&c.version, ver_w),
                c.runtime,
                c.probes,
                c.dotnet.display()
            ),
        });
    }
    let Some(first) = cols.iter().find(|c| !c.rows.is_empty()) else {
        return out;
    };
    let name_w = first
        .rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(5)
        .max("total DIFFERS".len());
    let col_w: Vec<usize> = cols.iter().map(|c| c.version.len().max(7)).collect();
    let line = |label: &str, cells: Vec<String>, tail: &str| {
        let mut l = pad(label, name_w);
        for (cell, w) in cells.iter().zip(&col_w) {
            l.push_str("  ");
            l.push_str(&pad(cell, *w));
        }
        l.push_str(tail);
        format!("{}\n", l.trim_end())
    };
    out.push('\n');
    out.push_str(&line(
        "check",
        cols.iter().map(|c| c.version.clone()).collect(),
        "",
    ));
    for (i, r) in first.rows.iter().enumerate() {
        let cells = cols
            .iter()
            .map(|c| c.rows.get(i).map_or("-", |r| r.verdict.name()).to_string())
            .collect();
        out.push_str(&line(
            r.name,
            cells,
            if varies(cols, i) { "  <- differs" } else { "" },
        ));
    }
    out.push('\n');
    for (k, label) in ["PASS", "DIFFERS", "FAIL", "N/A"].iter().enumerate() {
        let cells = cols
            .iter()
            .map(|c| counts(&c.rows)[k].to_string())
            .collect();
        out.push_str(&line(&format!("total {label}"), cells, ""));
    }
    // What was observed where the verdict is not PASS (N/A says the same everywhere).
    let mut notes = String::new();
    for (i, r) in first.rows.iter().enumerate() {
        let mut lines = String::new();
        let mut expected = r.expected.as_str();
        for c in cols {
            let Some(cell) = c.rows.get(i) else { continue };
            if cell.verdict != Verdict::NotApplicable && expected == r.expected {
                expected = &cell.expected;
            }
            if matches!(cell.verdict, Verdict::Pass | Verdict::NotApplicable) {
                continue;
            }
            let text = wrap(&cell.observed, 90).join(&format!(
                "\n      {}",
                " ".repeat(ver_w + cell.verdict.name().len() + 2)
            ));
            lines.push_str(&format!(
                "    {}  {}: {text}\n",
                pad(&c.version, ver_w),
                cell.verdict.name()
            ));
        }
        if !lines.is_empty() {
            notes.push_str(&format!("  {} (expected: {expected})\n{lines}", r.name));
        }
    }
    if !notes.is_empty() {
        out.push_str("\nobserved where not PASS:\n");
        out.push_str(&notes);
    }
    if cols
        .iter()
        .any(|c| c.error.is_none() && c.probes != super::probes::DEFAULT_TFM)
    {
        out.push_str(
            "\nN/A: the check needs runtime-async methods, which exist from .NET 10 on; the \
             probes for older runtimes are a net8.0 build without them.\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(version: &str, verdicts: &[Verdict]) -> Column {
        let names = ["a.one", "a.two", "b.three"];
        Column {
            version: version.into(),
            runtime: format!("CoreCLR {version}"),
            dotnet: PathBuf::from("/d/dotnet"),
            probes: if version.starts_with('8') {
                "net8.0"
            } else {
                "net10.0"
            },
            rows: names
                .iter()
                .zip(verdicts)
                .map(|(n, v)| Row {
                    name: n,
                    expected: format!("{n} as documented"),
                    observed: format!("{n} seen on {version}"),
                    verdict: *v,
                })
                .collect(),
            error: None,
        }
    }

    fn sample() -> Vec<Column> {
        use Verdict::*;
        vec![
            col("8.0.34", &[NotApplicable, Pass, Pass]),
            col("10.0.12", &[Pass, Differs, Pass]),
            col("11.0.0", &[Pass, Pass, Pass]),
        ]
    }

    #[test]
    fn table_has_a_column_per_runtime_and_marks_differences() {
        let t = render_table(&sample());
        let header = t.lines().find(|l| l.starts_with("check")).unwrap();
        assert_eq!(
            header.split_whitespace().collect::<Vec<_>>(),
            ["check", "8.0.34", "10.0.12", "11.0.0"]
        );
        let row = |n: &str| {
            t.lines()
                .find(|l| l.starts_with(n))
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        assert_eq!(row("a.one"), ["a.one", "N/A", "PASS", "PASS"]);
        assert_eq!(
            row("a.two"),
            ["a.two", "PASS", "DIFFERS", "PASS", "<-", "differs"]
        );
        assert_eq!(row("b.three"), ["b.three", "PASS", "PASS", "PASS"]);
        assert!(t.contains("10.0.12  DIFFERS: a.two seen on 10.0.12"), "{t}");
        assert!(!t.contains("seen on 11.0.0"), "{t}");
        assert!(t.contains("\nN/A: "), "{t}");
        assert!(t.contains("  a.two (expected: a.two as documented)"), "{t}");
        let total = |l: &str| {
            t.lines()
                .find(|x| x.starts_with(l))
                .unwrap()
                .split_whitespace()
                .skip(2)
                .collect::<Vec<_>>()
        };
        assert_eq!(total("total PASS"), ["2", "2", "3"]);
        assert_eq!(total("total DIFFERS"), ["0", "1", "0"]);
        assert_eq!(total("total N/A"), ["1", "0", "0"]);
    }

    #[test]
    fn an_unavailable_runtime_is_a_column_that_says_why() {
        let mut cols = sample();
        cols.insert(
            0,
            Column::unavailable("9".into(), "cannot reach NuGet".into()),
        );
        let t = render_table(&cols);
        assert!(
            t.contains("  9        not checked: cannot reach NuGet\n"),
            "{t}"
        );
        let row: Vec<&str> = t
            .lines()
            .find(|l| l.starts_with("a.two"))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            ["a.two", "-", "PASS", "DIFFERS", "PASS", "<-", "differs"]
        );
        let j = render_json(&cols);
        assert_eq!(j["runtimes"][0]["error"], "cannot reach NuGet");
        assert_eq!(j["runtimes"][1]["error"], serde_json::Value::Null);
        assert_eq!(j["matrix"][1]["name"], "a.two");
        assert_eq!(j["matrix"][1]["verdicts"]["9"], serde_json::Value::Null);
    }

    #[test]
    fn json_holds_every_column() {
        let j = render_json(&sample());
        let rts = j["runtimes"].as_array().unwrap();
        assert_eq!(rts.len(), 3);
        assert_eq!(rts[0]["version"], "8.0.34");
        assert_eq!(rts[0]["probes"], "net8.0");
        assert_eq!(rts[1]["checks"][1]["verdict"], "DIFFERS");
        assert_eq!(rts[1]["checks"][1]["observed"], "a.two seen on 10.0.12");
        assert_eq!(rts[0]["summary"]["not_applicable"], 1);
        assert_eq!(j["matrix"][1]["verdicts"]["10.0.12"], "DIFFERS");
        assert_eq!(j["matrix"][1]["verdicts"]["11.0.0"], "PASS");
        assert_eq!(j["matrix"][1]["varies"], true);
        assert_eq!(j["matrix"][0]["varies"], false);
        assert_eq!(j["summary"]["differs"], 1);
        assert_eq!(j["summary"]["pass"], 7);
    }
}
