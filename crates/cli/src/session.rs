//! A recording session: the traces of every .NET process that one `eltrace record` ran. The
//! process `record` started writes the `-o` file; every other one (children, grandchildren)
//! writes `<stem>.<pid>.eltrace` beside it, and each trace's INFO names the session
//! (crates/profiler/src/output.rs):
//!
//! ```text
//! app.eltrace        INFO session=1f2e-… pid=101 command="dotnet build"
//! app.130.eltrace    INFO session=1f2e-… pid=130 command="…/csc.dll /noconfig @…"
//! app.77.eltrace     INFO session=09ab-…  (an older run: not part of this session)
//! ```
//!
//! [`expand`] turns a path given to `report` or `export` into the session's traces.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use eltrace_trace::{Record, TraceInfo, TraceReader};

use crate::util::{Fail, io_msg};

/// What a trace's INFO chunk says about its process.
#[derive(Debug, Clone)]
pub struct ProcessTrace {
    pub path: PathBuf,
    pub info: TraceInfo,
}

impl ProcessTrace {
    /// The session id (empty for traces written without `eltrace record`'s session).
    pub fn session(&self) -> &str {
        self.info.session().unwrap_or("")
    }
}

/// Reads the INFO chunk of the trace at `path` (only the first chunk).
pub fn read_info(path: &Path) -> Result<TraceInfo, Fail> {
    let shown = path.display();
    if path.is_dir() {
        return Err(Fail::new(format!(
            "{shown} is a directory, not a trace file"
        )));
    }
    let file = File::open(path).map_err(|e| Fail::new(format!("{shown}: {}", io_msg(&e))))?;
    let mut r = TraceReader::new(BufReader::with_capacity(64 * 1024, file))
        .map_err(|e| Fail::new(format!("{shown}: {e}")))?;
    match r.next_record() {
        Ok(Some(Record::Info(info))) => Ok(info),
        Ok(_) => Err(Fail::new(format!("{shown}: the trace holds no info chunk"))),
        Err(e) => Err(Fail::new(format!("{shown}: {e}"))),
    }
}

/// The files beside `main` named like its process traces: `<stem>.<digits>.eltrace`, sorted
/// by pid.
pub fn sibling_paths(main: &Path) -> Vec<PathBuf> {
    let Some(name) = main.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let stem = name.strip_suffix(".eltrace").unwrap_or(&name).to_owned();
    let dir = match main.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n
                .strip_prefix(&stem)?
                .strip_prefix('.')?
                .strip_suffix(".eltrace")?;
            let pid: u64 = pid
                .parse()
                .ok()
                .filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))?;
            e.file_type()
                .ok()?
                .is_file()
                .then(|| (pid, main.with_file_name(&n)))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// The traces of the session whose main trace is `main` (itself first, then the process
/// traces beside it that name the same session, by pid). A trace without a session, or a
/// process trace given directly, is a session of one.
pub fn expand(main: &Path) -> Result<Vec<ProcessTrace>, Fail> {
    let first = ProcessTrace {
        path: main.to_owned(),
        info: read_info(main)?,
    };
    let session = first.session().to_owned();
    let mut all = vec![first];
    if session.is_empty() {
        return Ok(all);
    }
    for p in sibling_paths(main) {
        if let Ok(info) = read_info(&p) {
            let t = ProcessTrace { path: p, info };
            if t.session() == session {
                all.push(t);
            }
        }
    }
    Ok(all)
}

/// The traces of the session `main` names, when `main` itself holds none (the command's own
/// process did not load the profiler, e.g. a shell that started two .NET programs).
pub fn orphans(main: &Path, session: &str) -> Vec<ProcessTrace> {
    sibling_paths(main)
        .into_iter()
        .filter_map(|p| {
            let info = read_info(&p).ok()?;
            let t = ProcessTrace { path: p, info };
            (t.session() == session).then_some(t)
        })
        .collect()
}

/// The traces `paths` name, each expanded to its session, without repeats, kept to the
/// processes `pids` names (all when `None`). A path that does not exist but has process
/// traces beside it (the command's own process wrote none) stands for those.
pub fn select(paths: &[PathBuf], pids: Option<&[u32]>) -> Result<Vec<ProcessTrace>, Fail> {
    let mut all: Vec<ProcessTrace> = Vec::new();
    for p in paths {
        let found = if p.exists() {
            expand(p)?
        } else {
            let mut beside: Vec<ProcessTrace> = sibling_paths(p)
                .into_iter()
                .filter_map(|path| {
                    read_info(&path)
                        .ok()
                        .map(|info| ProcessTrace { path, info })
                })
                .collect();
            // Only the latest session's: older runs' leftovers may lie beside them.
            if let Some(latest) = beside
                .iter()
                .max_by_key(|t| t.info.start_unix_ns)
                .map(|t| t.session().to_owned())
            {
                beside.retain(|t| t.session() == latest);
            }
            if beside.is_empty() {
                // Let the usual open report the error.
                read_info(p)?;
            }
            beside
        };
        for t in found {
            if !all.iter().any(|o| same_file(&o.path, &t.path)) {
                all.push(t);
            }
        }
    }
    let Some(pids) = pids else {
        return Ok(all);
    };
    for pid in pids {
        if !all.iter().any(|t| t.info.pid == *pid) {
            let known: Vec<String> = all.iter().map(|t| t.info.pid.to_string()).collect();
            return Err(Fail::new(format!(
                "no trace of process {pid} (processes: {})",
                known.join(", ")
            )));
        }
    }
    all.retain(|t| pids.contains(&t.info.pid));
    Ok(all)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_match_the_stem_and_a_pid() {
        let d = std::env::temp_dir().join(format!("eltrace-session-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for n in [
            "app.eltrace",
            "app.130.eltrace",
            "app.12.eltrace",
            "app.x1.eltrace",
            "app.12.eltrace.partial",
            "apple.5.eltrace",
            "app..eltrace",
        ] {
            std::fs::write(d.join(n), b"").unwrap();
        }
        std::fs::create_dir(d.join("app.7.eltrace")).unwrap();
        let got: Vec<String> = sibling_paths(&d.join("app.eltrace"))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["app.12.eltrace", "app.130.eltrace"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
