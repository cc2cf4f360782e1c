//! `eltrace diff BASE NEW`: two recordings of a program side by side, function by function
//! (the rows of `report`): calls, inclusive and exclusive time, and their changes, largest
//! change in calls first; functions new in NEW or gone from it. Exact call counts do not
//! flap on a noisy CI machine, so `--fail-on` gates (diff/gate.rs) make it a regression
//! check: exit 1, with the rows that broke a gate.
//!
//! A recording session (several .NET processes) is matched by command line: the functions
//! of every process with the same command are summed, and with more than one command on
//! either side each row names its command. Timeless traces (`--timing none`) compare counts
//! only.

mod change;
mod gate;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::report::counted;
use crate::session;
use crate::util::{Fail, fmt_ns, print_stdout};
use change::{Change, Side};
pub use gate::Gate;

#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub base: PathBuf,
    pub new: PathBuf,
    /// Only the processes with these pids (of either session).
    pub pids: Option<Vec<u32>>,
    /// OS tids to keep (`None`: all threads).
    pub threads: Option<Vec<u64>>,
    /// Rows to show (default: 25 in the table, all in JSON).
    pub top: Option<usize>,
    pub json: bool,
    pub gates: Vec<Gate>,
}

/// The rows of one side: (command, name, module) → values; whether every trace has times;
/// the commands seen.
type Counts = (BTreeMap<(String, String, String), Side>, bool, Vec<String>);

fn side(path: &PathBuf, opts: &DiffOptions) -> Result<Counts, Fail> {
    let traces = session::select(std::slice::from_ref(path), opts.pids.as_deref())?;
    let mut rows: BTreeMap<(String, String, String), Side> = BTreeMap::new();
    let mut timed = true;
    let mut commands = Vec::new();
    for t in &traces {
        let (funcs, has_times) = counted(&t.path, opts.threads.clone())?;
        timed &= has_times;
        if !commands.contains(&t.info.command) {
            commands.push(t.info.command.clone());
        }
        for f in funcs {
            let s = rows
                .entry((t.info.command.clone(), f.name, f.module))
                .or_default();
            s.calls += f.calls;
            s.inclusive_ns += f.inclusive_ns;
            s.exclusive_ns += f.exclusive_ns;
            s.present = true;
        }
    }
    Ok((rows, timed, commands))
}

/// The changes between the two traces, largest change in calls first, then in inclusive
/// time, then by name.
fn changes(base: Counts, new: Counts) -> (Vec<Change>, bool) {
    let (b, bt, bc) = base;
    let (n, nt, nc) = new;
    // One command on each side: match them whatever they are (the caller warns if they
    // differ); otherwise match by command.
    let single = bc.len() <= 1 && nc.len() <= 1;
    let key = |(c, name, module): (String, String, String)| {
        (if single { String::new() } else { c }, name, module)
    };
    let mut all: BTreeMap<(String, String, String), (Side, Side)> = BTreeMap::new();
    for (k, s) in b {
        all.entry(key(k)).or_default().0 = s;
    }
    for (k, s) in n {
        all.entry(key(k)).or_default().1 = s;
    }
    let mut out: Vec<Change> = all
        .into_iter()
        .map(|((process, name, module), (base, new))| Change {
            process,
            name,
            module,
            base,
            new,
        })
        .collect();
    out.sort_by(|x, y| {
        y.calls_delta()
            .abs()
            .cmp(&x.calls_delta().abs())
            .then_with(|| y.time_delta().abs().cmp(&x.time_delta().abs()))
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.process.cmp(&y.process))
    });
    (out, bt && nt)
}

pub fn diff(opts: DiffOptions) -> Result<ExitCode, Fail> {
    let base = side(&opts.base, &opts)?;
    let new = side(&opts.new, &opts)?;
    let programs = |c: &[String]| {
        let mut p: Vec<String> = c.iter().map(|c| program(c)).collect();
        p.sort_unstable();
        p.dedup();
        p.join(", ")
    };
    let (bp, np) = (programs(&base.2), programs(&new.2));
    if bp != np {
        eprintln!(
            "eltrace: warning: the traces are of different programs ({bp} against {np}); \
             diffing them anyway"
        );
    }
    let (changes, timed) = changes(base, new);
    if let Some(g) = opts.gates.iter().find(|g| g.metric.is_time() && !timed) {
        return Err(Fail::with_code(
            2,
            format!(
                "--fail-on '{}' needs times, and a trace was recorded with --timing none",
                g.text
            ),
        ));
    }
    let broken: Vec<(&Gate, &Change)> = opts
        .gates
        .iter()
        .flat_map(|g| {
            changes
                .iter()
                .filter(|c| g.broken_by(c))
                .map(move |c| (g, c))
        })
        .collect();
    if opts.json {
        let v = json_diff(&opts, &changes, timed, &broken);
        print_stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ))?;
    } else {
        print_stdout(&text_diff(&opts, &changes, timed))?;
    }
    if broken.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for (g, c) in &broken {
        let (b, n) = g.metric.of(c);
        let show = |v: u64| {
            if g.metric.is_time() {
                fmt_ns(v)
            } else {
                v.to_string()
            }
        };
        eprintln!(
            "eltrace: diff: {} broken by {}{}: {} -> {} ({})",
            g.text,
            c.name,
            if c.process.is_empty() {
                String::new()
            } else {
                format!(" [{}]", c.process)
            },
            show(b),
            show(n),
            pct(b, n)
        );
    }
    Ok(ExitCode::from(1))
}

/// The program of a command line: its words up to the first `.dll` or `.exe` (`dotnet
/// app.dll`), else its first word; its arguments may differ between the runs compared.
fn program(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    match words
        .iter()
        .position(|w| w.ends_with(".dll") || w.ends_with(".exe"))
    {
        Some(i) => words[..=i].join(" "),
        None => words.first().map_or(String::new(), |w| w.to_string()),
    }
}

/// The change from `b` to `n` in percent, `new` from 0.
fn pct(b: u64, n: u64) -> String {
    if b == 0 {
        return if n == 0 { "0%".into() } else { "new".into() };
    }
    format!("{:+.1}%", (n as f64 - b as f64) * 100.0 / b as f64)
}

fn signed(d: i128) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

fn signed_ns(b: u64, n: u64) -> String {
    if n >= b {
        format!("+{}", fmt_ns(n - b))
    } else {
        format!("-{}", fmt_ns(b - n))
    }
}

fn text_diff(opts: &DiffOptions, changes: &[Change], timed: bool) -> String {
    let mut out = String::new();
    let differing: Vec<&Change> = changes.iter().filter(|c| c.status() != "same").collect();
    let _ = writeln!(
        out,
        "diff {} -> {}: {} functions, {} changed, {} new, {} gone{}",
        opts.base.display(),
        opts.new.display(),
        changes.len(),
        differing.iter().filter(|c| c.status() == "changed").count(),
        differing.iter().filter(|c| c.status() == "new").count(),
        differing.iter().filter(|c| c.status() == "gone").count(),
        if timed {
            ""
        } else {
            " (counts only: a trace has no times)"
        }
    );
    if differing.is_empty() {
        out.push_str("no function changed\n");
        return out;
    }
    let _ = writeln!(
        out,
        "\n{:<60} {:>10} {:>10} {:>9} {:>8} {:>11} {:>11} {:>8} {:>11} {:>8}  status",
        "function", "calls", "new", "delta", "%", "incl", "delta", "%", "excl delta", "%"
    );
    for c in differing.iter().take(opts.top.unwrap_or(25)) {
        let mut name = c.name.clone();
        if !c.process.is_empty() {
            let _ = write!(name, " [{}]", c.process);
        }
        let (times, excl) = if timed {
            (
                format!(
                    "{:>11} {:>11} {:>8}",
                    fmt_ns(c.base.inclusive_ns),
                    signed_ns(c.base.inclusive_ns, c.new.inclusive_ns),
                    pct(c.base.inclusive_ns, c.new.inclusive_ns)
                ),
                format!(
                    "{:>11} {:>8}",
                    signed_ns(c.base.exclusive_ns, c.new.exclusive_ns),
                    pct(c.base.exclusive_ns, c.new.exclusive_ns)
                ),
            )
        } else {
            (
                format!("{:>11} {:>11} {:>8}", "-", "-", "-"),
                format!("{:>11} {:>8}", "-", "-"),
            )
        };
        let _ = writeln!(
            out,
            "{:<60} {:>10} {:>10} {:>9} {:>8} {times} {excl}  {}",
            name,
            c.base.calls,
            c.new.calls,
            signed(c.calls_delta()),
            pct(c.base.calls, c.new.calls),
            c.status()
        );
    }
    if differing.len() > opts.top.unwrap_or(25) {
        let _ = writeln!(
            out,
            "({} more; --top N shows more, --json all)",
            differing.len() - opts.top.unwrap_or(25)
        );
    }
    out
}

fn json_diff(
    opts: &DiffOptions,
    changes: &[Change],
    timed: bool,
    broken: &[(&Gate, &Change)],
) -> Value {
    let side = |s: &Side| {
        json!({
            "calls": s.calls,
            "inclusive_ns": timed.then_some(s.inclusive_ns),
            "exclusive_ns": timed.then_some(s.exclusive_ns),
        })
    };
    let rows: Vec<Value> = changes
        .iter()
        .take(opts.top.unwrap_or(usize::MAX))
        .map(|c| {
            json!({
                "name": c.name,
                "module": c.module,
                "process": (!c.process.is_empty()).then_some(&c.process),
                "status": c.status(),
                "base": side(&c.base),
                "new": side(&c.new),
                "calls_delta": c.calls_delta() as i64,
            })
        })
        .collect();
    json!({
        "base": opts.base.display().to_string(),
        "new": opts.new.display().to_string(),
        "timed": timed,
        "functions": rows,
        "broken": broken.iter().map(|(g, c)| json!({
            "gate": g.text,
            "name": c.name,
            "process": (!c.process.is_empty()).then_some(&c.process),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::program;

    #[test]
    fn a_program_is_its_command_up_to_the_assembly() {
        assert_eq!(program("dotnet /x/App.dll fib 10"), "dotnet /x/App.dll");
        assert_eq!(program("/x/App.exe --flag"), "/x/App.exe");
        assert_eq!(program("dotnet build -c Release"), "dotnet");
        assert_eq!(program(""), "");
    }
}
