//! `eltrace dump`: prints a trace's records as text, one line each, in file order (events with
//! their thread, time, kind, function and stack pointer). For looking at exactly what the
//! runtime reported; `report` is the place for statistics. The function and thread tables are
//! kept by the indices present (hash maps), so an index the file makes up costs one entry.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use eltrace_trace::{
    Event, EventKind, FunctionIdx, FunctionRecord, Record, Sample, ThreadIdx, TraceInfo,
    TraceReader,
};

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
    let mut dumper = Dumper::new(&opts);
    let mut line = String::new();
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(Fail::new(format!("{shown}: {e}"))),
        };
        line.clear();
        dumper.format(rec, &mut line);
        if line.is_empty() {
            continue;
        }
        line.push('\n');
        if !write_stdout(out.write_all(line.as_bytes()))? {
            return Ok(ExitCode::SUCCESS);
        }
        if dumper.at_limit() {
            break;
        }
    }
    write_stdout(out.flush())?;
    if reader.truncated() {
        eprintln!("eltrace: warning: {shown} is truncated (the recording was cut short)");
    }
    Ok(ExitCode::SUCCESS)
}

/// The outcome of a write to stdout: true to go on, false when the reader went away (a
/// broken pipe: the dump ends successfully), a failure otherwise.
fn write_stdout(r: io::Result<()>) -> Result<bool, Fail> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(Fail::new(format!(
            "writing to stdout failed: {}",
            io_msg(&e)
        ))),
    }
}

/// What a dump keeps while it reads: the function names and OS tids by index (kept by the
/// indices present, see the module doc), the INFO record and the event lines printed.
struct Dumper<'a> {
    opts: &'a DumpOptions,
    names: HashMap<u32, String>,
    tids: HashMap<u32, u64>,
    /// Times print as ns since the recording's start, by the INFO record (first in the file).
    info: TraceInfo,
    printed: u64,
}

impl<'a> Dumper<'a> {
    fn new(opts: &'a DumpOptions) -> Self {
        Dumper {
            opts,
            names: HashMap::new(),
            tids: HashMap::new(),
            info: TraceInfo::new(0),
            printed: 0,
        }
    }

    /// Whether `--limit` event lines are printed.
    fn at_limit(&self) -> bool {
        self.opts.limit.is_some_and(|l| self.printed >= l)
    }

    /// Writes `rec`'s lines into `line` (without the last newline); nothing for the events
    /// of a thread not shown.
    fn format(&mut self, rec: Record, line: &mut String) {
        match rec {
            Record::Info(i) => {
                let _ = write!(
                    line,
                    "info pid={} runtime={:?} hook_mode={} command={:?}",
                    i.pid, i.runtime, i.hook_mode, i.command
                );
                self.info = i;
            }
            Record::Function(f) => self.function(&f, line),
            Record::Thread(t) => {
                self.tids.insert(t.idx.0, t.os_tid);
                let _ = write!(
                    line,
                    "thread {} tid={} name={:?}",
                    t.idx.0, t.os_tid, t.name
                );
            }
            Record::Events { thread, events } => self.events(thread, &events, line),
            Record::Dropped { thread, count } => {
                let _ = write!(line, "dropped tid={} count={count}", self.tid(thread));
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
            Record::Samples(samples) => self.samples(&samples, line),
            Record::Waits {
                thread,
                waits,
                wait_ns,
            } => {
                let _ = write!(
                    line,
                    "waits tid={} count={waits} ns={wait_ns}",
                    self.tid(thread)
                );
            }
        }
    }

    fn function(&mut self, f: &FunctionRecord, line: &mut String) {
        let name = self.names.entry(f.idx.0).or_default();
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

    /// One line per event of a shown thread, up to `--limit` in all.
    fn events(&mut self, thread: ThreadIdx, events: &[Event], line: &mut String) {
        let tid = self.tid(thread);
        if self
            .opts
            .threads
            .as_ref()
            .is_some_and(|set| !set.contains(&tid))
        {
            return;
        }
        for e in events {
            if self.at_limit() {
                break;
            }
            self.printed += 1;
            let ns = self.info.ns_since_start(e.ts);
            if e.kind == EventKind::Value {
                let _ = writeln!(line, "{tid:>7} {ns:>14} value    #{}", e.func.0);
                continue;
            }
            let _ = writeln!(
                line,
                "{tid:>7} {ns:>14} {:<8} {:#014x} {}",
                e.kind.name(),
                e.sp,
                name_of(&self.names, e.func)
            );
        }
        line.pop();
    }

    fn samples(&self, samples: &[Sample], line: &mut String) {
        for (i, s) in samples.iter().enumerate() {
            if i > 0 {
                line.push('\n');
            }
            let _ = write!(
                line,
                "sample tid={} index={} ts={} cpu_ns={}",
                self.tid(s.thread),
                s.index,
                self.info.ns_since_start(s.ts),
                s.cpu_ns.map_or_else(|| "-".into(), |c| c.to_string())
            );
        }
    }

    fn tid(&self, t: ThreadIdx) -> u64 {
        self.tids.get(&t.0).copied().unwrap_or(0)
    }
}

fn name_of(names: &HashMap<u32, String>, f: FunctionIdx) -> &str {
    match names.get(&f.0) {
        Some(n) if !n.is_empty() => n,
        _ if f.0 == u32::MAX => "-",
        _ => "<unknown function>",
    }
}
