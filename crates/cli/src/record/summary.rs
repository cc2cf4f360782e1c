//! The summary `eltrace record` prints when the program has exited: for each process of the
//! session, where its trace went and what it holds, read with [`eltrace_trace::skim`] (the
//! tables and counters, not the events), so it comes within a second whatever the trace's
//! size. Then which functions were selected, with a hint when the selection left out a
//! framework the program used.
//!
//! ```text
//! eltrace: trace written to app.eltrace (12.1 MiB)
//! eltrace: 3,120,455 events, 41 functions probed, 6 threads, 0 dropped events, 0 waits
//! eltrace: selected 41 functions in 2 modules (Web, Shared); not selected: 2,596 framework functions …
//! eltrace: warning: --include 'Nope.*' matched none of the 2,637 functions the program compiled
//! ```
//!
//! A trace that is empty or cut short on a file system with no room left is said to be so
//! (`the disk is full`), not read as a broken file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use eltrace_trace::{FunctionFlags, Skim, glob, skim};

use crate::session::{ProcessTrace, expand, orphans};
use crate::util::{fmt_bytes, fmt_ns};

/// Prints the summary of the session whose main trace is `output` on stderr.
pub fn summarize(
    output: &Path,
    session: &str,
    shown_cmd: &str,
    include: &[String],
    exclude: &[String],
) {
    let explicit_include = !include.is_empty();
    let main_empty = std::fs::metadata(output).map_or(true, |m| m.len() == 0);
    if let Some(free) = full_disk(output) {
        eprintln!(
            "eltrace: error: the disk holding {} is full ({free} bytes free): the trace is {}",
            output.display(),
            if main_empty {
                "empty"
            } else {
                "cut short where the disk filled up"
            }
        );
        if main_empty {
            return;
        }
    }
    let traces = if main_empty {
        // The command's own process wrote nothing: it did not load the profiler.
        let _ = std::fs::remove_file(output);
        orphans(output, session)
    } else {
        match expand(output) {
            Ok(t) => t,
            Err(f) => {
                eprintln!("eltrace: warning: the trace cannot be read: {}", f.msg);
                return;
            }
        }
    };
    if traces.is_empty() {
        eprintln!(
            "eltrace: no trace was written to {} (was `{shown_cmd}` a .NET program? \
             profiler errors, if any, are printed above)",
            output.display()
        );
        return;
    }
    if main_empty {
        eprintln!(
            "eltrace: `{shown_cmd}` itself wrote no trace; {} process(es) it started did:",
            traces.len()
        );
    } else if traces.len() > 1 {
        eprintln!(
            "eltrace: {} .NET processes ran; each wrote its own trace (`eltrace report {}` shows them all, --pid picks one):",
            traces.len(),
            output.display()
        );
    }
    let mut all = Vec::new();
    for t in &traces {
        match skim_file(&t.path) {
            Ok(s) => {
                print_process(t, &s, traces.len() > 1 || main_empty);
                all.push(s);
            }
            Err(msg) => eprintln!(
                "eltrace: warning: {} cannot be read: {msg}",
                t.path.display()
            ),
        }
    }
    print_selection(&all, explicit_include);
    warn_unmatched(&all, "--include", include);
    warn_unmatched(&all, "--exclude", exclude);
}

/// Free bytes of the file system holding `path` when it is (nearly) full: less than 64 KiB
/// for the user (the profiler writes 256 KiB blocks). `None` when there is room or it is
/// unknown.
fn full_disk(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty())?;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `struct statvfs` is plain integers, for which all zeros is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable `struct statvfs`.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    (free < 64 << 10).then_some(free)
}

/// Warns about each glob of `flag` that matched none of the functions the processes
/// compiled (the profiler names every function it sees in the trace, selected or not), by
/// the rule the profiler selects by (`glob::SelectionGlob`).
fn warn_unmatched(all: &[Skim], flag: &str, globs: &[String]) {
    let total: usize = all.iter().map(|s| s.functions.len()).sum();
    if all.is_empty() || total == 0 {
        return;
    }
    for g in globs.iter().flat_map(|g| glob::parse_list(g)) {
        let hit = all
            .iter()
            .flat_map(|s| &s.functions)
            .any(|f| g.matches(glob::module_stem(&f.module), &f.full_name()));
        if !hit {
            let g = g.pattern();
            eprintln!(
                "eltrace: warning: {flag} '{g}' matched none of the {total} functions the program \
                 compiled (globs match `Namespace.Type.Method`, or `Module!Namespace.Type.Method` \
                 with a `!`)"
            );
        }
    }
}

fn skim_file(path: &Path) -> Result<Skim, String> {
    let f = File::open(path).map_err(|e| e.to_string())?;
    skim(BufReader::with_capacity(1 << 16, f)).map_err(|e| e.to_string())
}

fn print_process(t: &ProcessTrace, s: &Skim, several: bool) {
    if several {
        eprintln!(
            "eltrace: pid {}: {} ({})",
            t.info.pid,
            short_command(&t.info.command),
            t.path.display()
        );
    }
    eprintln!(
        "eltrace: trace written to {} ({})",
        t.path.display(),
        fmt_bytes(s.bytes)
    );
    let probed = s
        .functions
        .iter()
        .filter(|f| f.flags.0 & FunctionFlags::HOOKED != 0)
        .count();
    let (waits, wait_ns) = s
        .threads
        .iter()
        .fold((0, 0), |(w, n), t| (w + t.waits, n + t.wait_ns));
    let waited = if waits == 0 {
        "0 waits".to_owned()
    } else {
        format!("{waits} waits for the writer ({} in all)", fmt_ns(wait_ns))
    };
    eprintln!(
        "eltrace: {} events, {probed} functions probed, {} threads, {} dropped events, {waited}{}",
        s.events(),
        s.threads.len(),
        s.dropped(),
        if s.truncated {
            ", truncated (the recording was cut short)"
        } else {
            ""
        }
    );
}

/// The command line, shortened to its program and first arguments.
fn short_command(cmd: &str) -> String {
    const MAX: usize = 100;
    if cmd.chars().count() <= MAX {
        cmd.to_owned()
    } else {
        let cut: String = cmd.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// Which functions were selected, over all processes, and a hint about the framework.
fn print_selection(all: &[Skim], explicit_include: bool) {
    let mut selected_modules: BTreeMap<String, usize> = BTreeMap::new();
    let mut framework_compiled = 0usize;
    let mut framework_modules: BTreeSet<String> = BTreeSet::new();
    for s in all {
        for f in &s.functions {
            let module = f
                .module
                .strip_suffix(".dll")
                .unwrap_or(&f.module)
                .to_owned();
            if f.flags.hooked() {
                *selected_modules.entry(module).or_default() += 1;
            } else if f.flags.framework() {
                framework_compiled += 1;
                framework_modules.insert(module);
            }
        }
    }
    let selected: usize = selected_modules.values().sum();
    let names: Vec<&str> = selected_modules
        .keys()
        .map(String::as_str)
        .take(5)
        .collect();
    let more = if selected_modules.len() > names.len() {
        ", …"
    } else {
        ""
    };
    let mut line = if selected == 0 {
        "eltrace: no function was selected for tracing".to_owned()
    } else {
        format!(
            "eltrace: selected {selected} functions in {} module{} ({}{more})",
            selected_modules.len(),
            if selected_modules.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    };
    if !explicit_include && framework_compiled > 0 {
        let aspnet = framework_modules
            .iter()
            .any(|m| m.starts_with("Microsoft.AspNetCore"));
        line.push_str(&format!(
            "; {framework_compiled} framework functions were compiled but not traced ({})",
            if aspnet {
                "--include 'Microsoft.AspNetCore*!*' traces ASP.NET Core, --include '*' everything"
            } else {
                "--include '*' traces everything"
            }
        ));
    }
    eprintln!("{line}");
}
