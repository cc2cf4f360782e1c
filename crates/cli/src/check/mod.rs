//! `eltrace check`: runs the bundled probe programs under the profiler's check mode (one
//! child process per experiment, two at a time, each with a timeout; a crash is a result),
//! evaluates every check ([`checks`]) over the experiment's observations ([`obs`]) and prints
//! one row per check, or one JSON object. With `--runtime` it runs them on each runtime asked
//! for ([`runtimes`] lays out the ones the SDK lacks) and prints one column per runtime
//! ([`matrix`]). Exit status 0 when no check FAILs.

pub mod checks;
pub mod layout;
pub mod matrix;
pub mod obs;
pub mod probes;
pub mod run;
pub mod runtimes;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use eltrace_trace::glob;
use eltrace_trace::protocol::{env, experiment};
use serde_json::json;

use crate::util::{Fail, print_stdout, wrap};
use checks::{CHECKS, NEED_RUNTIME_ASYNC, Row, Verdict};
use matrix::Column;
use obs::Observations;

/// How long one experiment may run.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);
/// Experiments running at the same time.
const PARALLEL: usize = 2;

/// The experiments: name (= `ELTRACE_CHECK` value), probe mode, and whether it records a
/// real trace with the production profiler instead of running a check-mode experiment.
/// Those in probe mode `async` need runtime async and do not run on .NET 8 and 9.
pub const EXPERIMENTS: &[(&str, &str, bool)] = &[
    (experiment::ASYNC, "async", true),
    (experiment::INFO, "info", false),
    (experiment::REGS_SLOW, "regs", false),
    (experiment::REGS_SLOW_ASYNC, "async", false),
    (experiment::REGS_SLOW_ASYNC_RCX0, "async", false),
    (experiment::FAST_TRASH, "regs", false),
    (experiment::FAST_RAX_AFTER_LEAVE, "regs", false),
    (experiment::FAST_RDI_AFTER_ENTER, "regs", false),
    (experiment::FAST_R14_AFTER_ENTER, "regs", false),
    (experiment::SNAPSHOT, "snapshot", false),
    (experiment::FLAGS, "flags", false),
    (experiment::PINVOKE, "pinvoke", false),
    (experiment::JIT, "jit", false),
];

#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub json: bool,
    pub only: Option<String>,
    pub dotnet: Option<PathBuf>,
    pub profiler: Option<PathBuf>,
    /// `--runtime`: the runtimes of the matrix (see [`runtimes::parse`]).
    pub runtime: Option<String>,
}

/// Whether `--only PATTERN` selects the check `name`: a glob (`eltrace_trace::glob`, the
/// rules of the profiler's selection) matches the whole name; a pattern without a wildcard
/// matches every name that contains it.
pub fn selects(pattern: &str, name: &str) -> bool {
    if glob::has_wildcard(pattern) {
        glob::matches(pattern, name)
    } else {
        name.contains(pattern)
    }
}

/// The rows for a set of observations per experiment (a missing experiment gives empty
/// observations, so its checks FAIL).
#[cfg(test)]
pub fn evaluate(observations: &BTreeMap<String, Observations>, only: Option<&str>) -> Vec<Row> {
    evaluate_on(observations, only, true)
}

/// [`evaluate`] on a runtime with or without runtime async (without it, the checks that need
/// it are N/A).
pub fn evaluate_on(
    observations: &BTreeMap<String, Observations>,
    only: Option<&str>,
    runtime_async: bool,
) -> Vec<Row> {
    let empty = Observations::default();
    CHECKS
        .iter()
        .filter(|c| only.is_none_or(|p| selects(p, c.name)))
        .map(|c| {
            if !runtime_async && NEED_RUNTIME_ASYNC.contains(&c.name) {
                checks::not_applicable(c.name)
            } else {
                (c.eval)(observations.get(c.experiment).unwrap_or(&empty))
            }
        })
        .collect()
}

/// The experiments that `only` needs, on a runtime with or without runtime async.
fn wanted_experiments(
    only: Option<&str>,
    runtime_async: bool,
) -> Vec<&'static (&'static str, &'static str, bool)> {
    EXPERIMENTS
        .iter()
        .filter(|(_, mode, _)| runtime_async || *mode != "async")
        .filter(|(name, ..)| {
            CHECKS.iter().any(|c| {
                c.experiment == *name
                    && only.is_none_or(|p| selects(p, c.name))
                    && (runtime_async || !NEED_RUNTIME_ASYNC.contains(&c.name))
            })
        })
        .collect()
}

fn find_dotnet(explicit: Option<&Path>) -> Result<PathBuf, Fail> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_owned())
        } else {
            Err(Fail::new(format!(
                "--dotnet {} does not exist",
                p.display()
            )))
        };
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("dotnet"))
        .find(|p| p.is_file())
        .ok_or_else(|| Fail::new("cannot find `dotnet` on PATH (pass --dotnet PATH)"))
}

pub fn check(opts: CheckOptions) -> Result<ExitCode, Fail> {
    let only = opts.only.as_deref();
    if wanted_experiments(only, true).is_empty() {
        return Err(Fail::with_code(
            2,
            format!("no check matches --only {}", only.unwrap_or("")),
        ));
    }
    let wanted = opts.runtime.as_deref().map(runtimes::parse).transpose()?;
    let dotnet = find_dotnet(opts.dotnet.as_deref())?;
    let profiler = crate::record::find_profiler(opts.profiler.as_deref())?;
    let Some(wanted) = wanted else {
        // One runtime: the one `dotnet` runs, with the default (net10.0) probes.
        let probes_dll = probes::ensure_built(&dotnet, probes::DEFAULT_TFM)?;
        let col = run_column(&dotnet, Vec::new(), probes_dll, profiler, only, true, "");
        let failed = col.rows.iter().any(|r| r.verdict == Verdict::Fail);
        let text = if opts.json {
            let mut v = render_json(&col.runtime, &dotnet, &col.rows).to_string();
            v.push('\n');
            v
        } else {
            render_table(&col.runtime, &dotnet, &col.rows)
        };
        print_stdout(&text)?;
        return Ok(exit(failed));
    };
    // A runtime that cannot be had (NuGet unreachable, a failed probe build) is a column
    // that says why; the others are checked all the same.
    let mut resolver = runtimes::Resolver::new(&dotnet)?;
    let mut cols: Vec<Column> = Vec::new();
    for w in &wanted {
        let col = match column_on(&mut resolver, w, &dotnet, &profiler, only, &cols) {
            Ok(Some(col)) => col,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("eltrace: .NET {}: not checked: {}", w.label(), e.msg);
                Column::unavailable(w.label(), e.msg)
            }
        };
        cols.push(col);
    }
    let failed = cols
        .iter()
        .any(|c| c.error.is_some() || c.rows.iter().any(|r| r.verdict == Verdict::Fail));
    let text = if opts.json {
        let mut v = matrix::render_json(&cols).to_string();
        v.push('\n');
        v
    } else {
        matrix::render_table(&cols)
    };
    print_stdout(&text)?;
    Ok(exit(failed))
}

/// The column of runtime `w` (None: a runtime already checked).
fn column_on(
    resolver: &mut runtimes::Resolver,
    w: &runtimes::Wanted,
    sdk: &Path,
    profiler: &Path,
    only: Option<&str>,
    done: &[Column],
) -> Result<Option<Column>, Fail> {
    let version = resolver.version(w)?;
    if done.iter().any(|c| c.version == version) {
        return Ok(None);
    }
    let rt = resolver.runtime(&version)?;
    // Built with the SDK's dotnet: a laid-out root has no SDK.
    let tfm = rt.probes_tfm();
    let probes_dll = probes::ensure_built(sdk, tfm)?;
    eprintln!(
        "eltrace: checking .NET {} ({tfm} probes, {})",
        rt.version,
        rt.dotnet.display()
    );
    let mut col = run_column(
        &rt.dotnet,
        rt.env(),
        probes_dll,
        profiler.to_owned(),
        only,
        rt.has_runtime_async(),
        &rt.version,
    );
    col.version = rt.version.clone();
    col.probes = tfm;
    Ok(Some(col))
}

fn exit(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the experiments `only` needs with `dotnet` (and `env`) and evaluates them.
fn run_column(
    dotnet: &Path,
    env: Vec<(&'static str, String)>,
    probes_dll: PathBuf,
    profiler: PathBuf,
    only: Option<&str>,
    runtime_async: bool,
    tag: &str,
) -> Column {
    let wanted = wanted_experiments(only, runtime_async);
    let work_dir = std::env::temp_dir().join(format!(
        "eltrace-check-{}{}{tag}",
        std::process::id(),
        if tag.is_empty() { "" } else { "-" }
    ));
    let setup = run::Setup {
        dotnet: dotnet.to_owned(),
        env,
        probes_dll,
        profiler,
        work_dir,
        timeout: CHILD_TIMEOUT,
    };
    let mut results: BTreeMap<String, Observations> = BTreeMap::new();
    if let Err(e) = std::fs::create_dir_all(&setup.work_dir) {
        let mut o = Observations::default();
        o.push(
            "error",
            &format!("cannot create {}: {e}", setup.work_dir.display()),
        );
        for (name, ..) in &wanted {
            results.insert(name.to_string(), o.clone());
        }
    } else {
        results = run_all(&setup, &wanted);
    }
    if std::env::var_os(env::CHECK_KEEP).is_some() {
        eprintln!("eltrace: check files kept in {}", setup.work_dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&setup.work_dir);
    }
    let runtime = results
        .values()
        .find_map(|o| o.get("runtime"))
        .unwrap_or("unknown runtime")
        .to_string();
    Column {
        version: String::new(),
        runtime,
        dotnet: dotnet.to_owned(),
        probes: probes::DEFAULT_TFM,
        rows: evaluate_on(&results, only, runtime_async),
        error: None,
    }
}

/// Runs the experiments, [`PARALLEL`] at a time.
fn run_all(
    setup: &run::Setup,
    wanted: &[&'static (&'static str, &'static str, bool)],
) -> BTreeMap<String, Observations> {
    let queue = Mutex::new(wanted.to_vec());
    let results: Mutex<BTreeMap<String, Observations>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some(&(name, mode, record)) = next else {
                        break;
                    };
                    let o = run::run_experiment(setup, name, mode, record);
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(name.to_string(), o);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn counts(rows: &[Row]) -> [(Verdict, usize); 3] {
    [Verdict::Pass, Verdict::Differs, Verdict::Fail]
        .map(|v| (v, rows.iter().filter(|r| r.verdict == v).count()))
}

pub fn render_json(runtime: &str, dotnet: &Path, rows: &[Row]) -> serde_json::Value {
    let c = counts(rows);
    json!({
        "runtime": runtime,
        "platform": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "dotnet": dotnet.display().to_string(),
        "checks": rows.iter().map(|r| json!({
            "name": r.name,
            "expected": r.expected,
            "observed": r.observed,
            "verdict": r.verdict.name(),
        })).collect::<Vec<_>>(),
        "summary": {"pass": c[0].1, "differs": c[1].1, "fail": c[2].1},
    })
}

pub fn render_table(runtime: &str, dotnet: &Path, rows: &[Row]) -> String {
    const W: usize = 58;
    let name_w = rows.iter().map(|r| r.name.len()).max().unwrap_or(5).max(5);
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let mut out = format!(
        "eltrace check: {runtime} on {} {} (dotnet {})\n\n",
        std::env::consts::OS,
        std::env::consts::ARCH,
        dotnet.display()
    );
    out.push_str(&format!(
        "{}  {}  {}  verdict\n",
        pad("check", name_w),
        pad("expected", W),
        pad("observed", W)
    ));
    for r in rows {
        let (e, o) = (wrap(&r.expected, W), wrap(&r.observed, W));
        for i in 0..e.len().max(o.len()) {
            let first = i == 0;
            out.push_str(&format!(
                "{}  {}  {}  {}",
                pad(if first { r.name } else { "" }, name_w),
                pad(e.get(i).map_or("", String::as_str), W),
                pad(o.get(i).map_or("", String::as_str), W),
                if first { r.verdict.name() } else { "" }
            ));
            let trimmed = out.trim_end().len();
            out.truncate(trimmed);
            out.push('\n');
        }
    }
    let c = counts(rows);
    out.push_str(&format!(
        "\n{} PASS, {} DIFFERS, {} FAIL\n",
        c[0].1, c[1].1, c[2].1
    ));
    out
}
