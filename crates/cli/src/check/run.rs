//! Running one experiment: the probe program under the profiler in its own child process and
//! process group, with a timeout; a crash is a result. Its observations are the profiler's
//! file (or, for the recording experiment, the trace read back and analysed), the probe's
//! stdout and the exit status. The child-process helpers the other modules share live here
//! too (`dotnet_command`, `run_with_timeout`): layout, probes and runtimes import from run,
//! never run from them, and runtimes → layout → probes → run is the one direction.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eltrace_analysis::{Options, analyze};
use eltrace_trace::protocol::{self, env};
use eltrace_trace::{EventKind, Record, TraceReader};

use super::obs::Observations;

/// How one child ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ended {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
}

impl Ended {
    pub fn describe(&self) -> String {
        match (self.timed_out, self.code, self.signal) {
            (true, ..) => "timed out".into(),
            (_, Some(c), _) => format!("exit {c}"),
            (_, _, Some(s)) => format!("signal {s}"),
            _ => "unknown".into(),
        }
    }
}

/// `dotnet` with quiet output and no build servers left behind.
pub fn dotnet_command(dotnet: &Path) -> Command {
    let mut cmd = Command::new(dotnet);
    cmd.env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .env("MSBUILDDISABLENODEREUSE", "1")
        .env("DOTNET_CLI_USE_MSBUILD_SERVER", "0")
        .env("UseSharedCompilation", "false")
        .stdin(Stdio::null());
    cmd
}

/// Spawns `cmd` in its own process group and waits, killing the group after `timeout`.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<Ended> {
    let mut child = cmd.process_group(0).spawn()?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Ended {
                code: st.code(),
                signal: st.signal(),
                timed_out: false,
            });
        }
        if Instant::now() >= deadline {
            let pgid = child.id();
            // SAFETY: kill(2) with a negative pid signals the child's own process group,
            // which process_group(0) created (group id = the child's pid, not yet reaped).
            unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) };
            let st = child.wait()?;
            return Ok(Ended {
                code: st.code(),
                signal: st.signal(),
                timed_out: true,
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What the runner needs to start a probe.
pub struct Setup {
    pub dotnet: PathBuf,
    /// Extra environment (a laid-out runtime's `DOTNET_ROOT`, `DOTNET_ROLL_FORWARD`).
    pub env: Vec<(&'static str, String)>,
    pub probes_dll: PathBuf,
    pub profiler: PathBuf,
    pub work_dir: PathBuf,
    pub timeout: Duration,
}

/// Runs one experiment and collects its observations.
pub fn run_experiment(setup: &Setup, name: &str, mode: &str, record: bool) -> Observations {
    let out = setup.work_dir.join(format!("{name}.obs"));
    let trace = setup.work_dir.join(format!("{name}.eltrace"));
    let stdout = setup.work_dir.join(format!("{name}.stdout"));
    let stderr = setup.work_dir.join(format!("{name}.stderr"));
    let mut o = Observations::default();
    let files =
        std::fs::File::create(&stdout).and_then(|a| Ok((a, std::fs::File::create(&stderr)?)));
    let Ok((so, se)) = files else {
        o.push("error", "cannot create output files");
        return o;
    };
    let mut cmd = Command::new(&setup.dotnet);
    cmd.arg(&setup.probes_dll)
        .arg(mode)
        .env(env::CORECLR_ENABLE_PROFILING, "1")
        .env(env::CORECLR_PROFILER, protocol::CLSID_BRACED)
        .env(env::CORECLR_PROFILER_PATH, &setup.profiler)
        .env(env::DOTNET_RUNTIME_ASYNC, "1")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env_remove(env::CHECK)
        .env_remove(env::INCLUDE)
        .env_remove(env::EXCLUDE)
        .envs(setup.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(so)
        .stderr(se);
    if record {
        cmd.env(env::OUTPUT, &trace)
            // The probe's methods and its classic method's state machine (`+<Classic>d__N`).
            .env(
                env::INCLUDE,
                format!(
                    "Probes!Probes.AsyncProbe.*{}Probes!Probes.AsyncProbe+*",
                    eltrace_trace::protocol::LIST_SEPARATOR
                ),
            );
    } else {
        cmd.env(env::CHECK, name).env(env::CHECK_OUT, &out);
    }
    let ended = match run_with_timeout(&mut cmd, setup.timeout) {
        Ok(e) => e,
        Err(e) => {
            o.push(
                "error",
                &format!("cannot run {}: {e}", setup.dotnet.display()),
            );
            return o;
        }
    };
    if record {
        o.lines.extend(trace_observations(&trace).lines);
    } else if let Ok(text) = std::fs::read_to_string(&out) {
        o.lines.extend(Observations::parse(&text).lines);
    }
    if let Ok(text) = std::fs::read_to_string(&stdout) {
        o.add_probe_stdout(&text);
    }
    if ended.timed_out {
        o.push("exit.timeout", "1");
    }
    if let Some(c) = ended.code {
        o.push("exit.code", &c.to_string());
    }
    if let Some(s) = ended.signal {
        o.push("exit.signal", &s.to_string());
    }
    // Everything together, for a look afterwards (ELTRACE_CHECK_KEEP keeps the directory).
    let _ = std::fs::write(setup.work_dir.join(format!("{name}.all")), o.to_text());
    o
}

/// A recorded trace as observations: `runtime`, one `event` line per Enter/Leave/Tailcall
/// (thread = OS tid, fid = the runtime's FunctionID), and `balance` from eltrace's analysis.
pub fn trace_observations(path: &Path) -> Observations {
    let mut o = Observations::default();
    let Ok(file) = std::fs::File::open(path) else {
        o.push("error", "no trace was written");
        return o;
    };
    let Ok(mut reader) = TraceReader::new(std::io::BufReader::new(file)) else {
        o.push("error", "the trace cannot be read");
        return o;
    };
    let mut funcs = std::collections::HashMap::new();
    let mut threads = std::collections::HashMap::new();
    while let Ok(Some(rec)) = reader.next_record() {
        match rec {
            Record::Info(i) => o.push("runtime", &i.runtime),
            Record::Function(f) => {
                funcs.insert(f.idx, (f.function_id, f.full_name()));
            }
            Record::Thread(t) => {
                threads.insert(t.idx, t.os_tid);
            }
            Record::Events { thread, events } => {
                let tid = threads.get(&thread).copied().unwrap_or(u64::from(thread.0));
                for e in events {
                    if !matches!(
                        e.kind,
                        EventKind::Enter
                            | EventKind::Leave
                            | EventKind::Tailcall
                            | EventKind::Continuation
                    ) {
                        continue;
                    }
                    let (fid, name) = funcs.get(&e.func).cloned().unwrap_or_default();
                    // A Continuation event's `sp` is the continuation argument (before the
                    // name, which runs to the end of the line).
                    let value = if e.kind == EventKind::Continuation {
                        format!(" value={:#x}", e.sp)
                    } else {
                        String::new()
                    };
                    o.push(
                        "event",
                        &format!(
                            "kind={} tid={tid} fid={fid:#x}{value} name={name}",
                            e.kind.name()
                        ),
                    );
                }
            }
            _ => {}
        }
    }
    o.push("init", "0x00000000");
    let analysed = std::fs::File::open(path)
        .map_err(|e| e.to_string())
        .and_then(|f| {
            analyze(std::io::BufReader::new(f), &Options::default()).map_err(|e| e.to_string())
        });
    match analysed {
        Ok(a) => {
            let max_depth = a.threads().map(|(_, t)| t.max_depth).max().unwrap_or(0);
            o.push(
                "balance",
                &format!(
                    "mismatched={} unmatched={} open={} lost={} max_depth={max_depth}",
                    a.totals.mismatched_frames,
                    a.totals.unmatched_leaves,
                    a.totals.open_frames_at_end,
                    a.totals.lost_frames
                ),
            );
        }
        Err(e) => o.push("error", &format!("analysis failed: {e}")),
    }
    o
}
