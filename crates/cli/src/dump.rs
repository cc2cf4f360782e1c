//! `eltrace dump`: prints a trace's records as text, one line each, in file order (events with
//! their thread, time, kind, function and stack pointer). For looking at exactly what the
//! runtime reported; `report` is the place for statistics. The function and thread tables are
//! kept by the indices present (hash maps), so an index the file makes up costs one entry.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use eltrace_trace::{EventKind, FunctionIdx, Record, ThreadIdx, TraceInfo, TraceReader};

use crate::util::{Fail, io_msg, open_trace};

#[derive(Debug, Clone)]
pub struct DumpOptions {
    pub path: PathBuf,
    /// Only events of these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    /// Stop after this many event lines.
    pub limit: Option<u64>,
}

pub fn dump(opts: DumpOptions) -> Result<ExitCode, Fail> {
    let input = open_trace(&opts.path)?;
    let shown = opts.path.display().to_string();
    let mut reader = TraceReader::new(input).map_err(|e| Fail::new(format!("{shown}: {e}")))?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut tids: HashMap<u32, u64> = HashMap::new();
    // Times print as ns since the recording's start, by the INFO record (first in the file).
    let mut info = TraceInfo::new(0);
    let mut printed = 0u64;
    let mut line = String::new();
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(Fail::new(format!("{shown}: {e}"))),
        };
        line.clear();
        match rec {
            Record::Info(i) => {
                let _ = write!(
                    line,
                    "info pid={} runtime={:?} hook_mode={} command={:?}",
                    i.pid, i.runtime, i.hook_mode, i.command
                );
                info = i;
            }
            Record::Function(f) => {
                let name = names.entry(f.idx.0).or_default();
                *name = f.full_name();
                let _ = write!(
                    line,
                    "function {} {} [{}] token={:#x} impl={:#x} flags={:#x} id={:#x}",
                    f.idx.0, name, f.module, f.token, f.impl_flags, f.flags.0, f.function_id
                );
                if !f.state_machine.is_empty() {
                    let _ = write!(line, " state_machine={}", f.state_machine);
                }
            }
            Record::Thread(t) => {
                tids.insert(t.idx.0, t.os_tid);
                let _ = write!(
                    line,
                    "thread {} tid={} name={:?}",
                    t.idx.0, t.os_tid, t.name
                );
            }
            Record::Events { thread, events } => {
                let tid = tid_of(&tids, thread);
                if opts.threads.as_ref().is_some_and(|set| !set.contains(&tid)) {
                    continue;
                }
                for e in &events {
                    if opts.limit.is_some_and(|l| printed >= l) {
                        break;
                    }
                    printed += 1;
                    let ns = info.ns_since_start(e.ts);
                    if e.kind == EventKind::Value {
                        let _ = writeln!(line, "{tid:>7} {ns:>14} value    #{}", e.func.0);
                        continue;
                    }
                    let _ = writeln!(
                        line,
                        "{tid:>7} {ns:>14} {:<8} {:#014x} {}",
                        e.kind.name(),
                        e.sp,
                        name_of(&names, e.func)
                    );
                }
                line.pop();
            }
            Record::Dropped { thread, count } => {
                let _ = write!(line, "dropped tid={} count={count}", tid_of(&tids, thread));
            }
            Record::End(e) => {
                let _ = write!(
                    line,
                    "end reason={} written={} dropped={} internal_errors={}",
                    e.reason.name(),
                    e.events_written,
                    e.events_dropped,
                    e.internal_errors
                );
            }
            Record::Value(v) => {
                let _ = write!(line, "value {} {} {:?}", v.id, v.status.name(), v.text);
            }
            Record::Diagnostic(d) => {
                let _ = write!(line, "diagnostic {d}");
            }
            Record::Samples(samples) => {
                for (i, s) in samples.iter().enumerate() {
                    if i > 0 {
                        line.push('\n');
                    }
                    let _ = write!(
                        line,
                        "sample tid={} index={} ts={} cpu_ns={}",
                        tid_of(&tids, s.thread),
                        s.index,
                        info.ns_since_start(s.ts),
                        s.cpu_ns.map_or_else(|| "-".into(), |c| c.to_string())
                    );
                }
            }
            Record::Waits {
                thread,
                waits,
                wait_ns,
            } => {
                let _ = write!(
                    line,
                    "waits tid={} count={waits} ns={wait_ns}",
                    tid_of(&tids, thread)
                );
            }
        }
        if line.is_empty() {
            continue;
        }
        line.push('\n');
        match out.write_all(line.as_bytes()) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            Err(e) => {
                return Err(Fail::new(format!(
                    "writing to stdout failed: {}",
                    io_msg(&e)
                )));
            }
        }
        if opts.limit.is_some_and(|l| printed >= l) {
            break;
        }
    }
    match out.flush() {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            return Err(Fail::new(format!(
                "writing to stdout failed: {}",
                io_msg(&e)
            )));
        }
    }
    if reader.truncated() {
        eprintln!("eltrace: warning: {shown} is truncated (the recording was cut short)");
    }
    Ok(ExitCode::SUCCESS)
}

fn tid_of(tids: &HashMap<u32, u64>, t: ThreadIdx) -> u64 {
    tids.get(&t.0).copied().unwrap_or(0)
}

fn name_of(names: &HashMap<u32, String>, f: FunctionIdx) -> &str {
    match names.get(&f.0) {
        Some(n) if !n.is_empty() => n,
        _ if f.0 == u32::MAX => "-",
        _ => "<unknown function>",
    }
}
