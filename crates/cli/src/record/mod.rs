//! `eltrace record`: reserves the output ([`reserve`]), runs a command with the CoreCLR
//! profiling variables set for the child only (docs/design.md "Process boundary"), waits for
//! it, and summarises the session's traces on stderr ([`summary`]). Exits with the child's
//! exit code (128 + signal if a signal killed it). SIGINT, SIGTERM and SIGHUP sent to
//! `record` are passed on to the program ([`signals`]); a second SIGINT stops the wait. When
//! the reserved output was replaced while the program ran (a symlink or FIFO raced in), the
//! trace is lost: `record` says so and exits non-zero (the program's status, or 1).

mod reserve;
mod signals;
mod summary;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use eltrace_trace::protocol::{self, env};

use crate::util::{Fail, io_msg};

/// The profiler library's file name.
pub const PROFILER_LIB: &str = "libeltrace_profiler.so";

#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub output: PathBuf,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `--slow-path`: `ELTRACE_HOOKS=slow` (otherwise the profiler's default, the fast path,
    /// unless the environment sets `ELTRACE_HOOKS`).
    pub slow_path: bool,
    /// `--values`: `ELTRACE_VALUES=1` and `ELTRACE_HOOKS=slow` (arguments and return values
    /// are captured on the slow path only).
    pub values: bool,
    /// `--lossy`: `ELTRACE_LOSSY=1`.
    pub lossy: bool,
    /// `--max-stall`: `ELTRACE_MAX_STALL_MS` (unset: the environment's, else 5 s).
    pub max_stall_ms: Option<u64>,
    /// `--timing`: `ELTRACE_TIMING` (unset: the environment's, else `exact`).
    pub timing: Option<String>,
    /// `--sample-hz`: `ELTRACE_SAMPLE_HZ`.
    pub sample_hz: Option<u32>,
    /// `--keep-tail-loops`: leave the JIT's self-tail-call loops on (no
    /// `DOTNET_TailCallLoopOpt=0` for the child).
    pub keep_tail_loops: bool,
    pub profiler: Option<PathBuf>,
    pub command: Vec<OsString>,
}

/// Finds the profiler: `--profiler`, else `$ELTRACE_PROFILER_PATH`, else beside this
/// executable. An explicit path that does not exist is an error, not a reason to look on.
pub(crate) fn find_profiler(explicit: Option<&Path>) -> Result<PathBuf, Fail> {
    let check = |p: PathBuf, from: &str| -> Result<PathBuf, Fail> {
        if p.is_file() {
            std::path::absolute(&p)
                .map_err(|e| Fail::new(format!("{}: {}", p.display(), io_msg(&e))))
        } else {
            Err(Fail::new(format!(
                "profiler library {} (from {from}) does not exist",
                p.display()
            )))
        }
    };
    if let Some(p) = explicit {
        return check(p.to_owned(), "--profiler");
    }
    if let Some(p) = std::env::var_os(env::PROFILER_PATH).filter(|p| !p.is_empty()) {
        return check(PathBuf::from(p), env::PROFILER_PATH);
    }
    let exe = std::env::current_exe().ok();
    let beside = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join(PROFILER_LIB));
    match beside {
        Some(p) if p.is_file() => Ok(p),
        _ => Err(Fail::new(format!(
            "cannot find {PROFILER_LIB} (looked in {}); build it with \
             `cargo build -p eltrace-profiler`, or pass --profiler PATH or set {}",
            beside.as_deref().and_then(Path::parent).map_or_else(
                || "the executable's directory".into(),
                |d| d.display().to_string()
            ),
            env::PROFILER_PATH
        ))),
    }
}

pub fn record(opts: RecordOptions) -> Result<ExitCode, Fail> {
    let Some((program, args)) = opts.command.split_first() else {
        return Err(Fail::with_code(2, "record needs a COMMAND to run"));
    };
    let shown_cmd = program.to_string_lossy().into_owned();
    let profiler = find_profiler(opts.profiler.as_deref())?;
    let output = output_path(&opts.output)?;
    let reservation = reserve::reserve(&output)?;
    for old in &reservation.replaced {
        eprintln!(
            "eltrace: replacing {} of an earlier recording",
            old.display()
        );
    }
    let session = session_id();

    let mut cmd = profiled_command(program, args, &opts, &profiler, &output, &session);
    let handlers = signals::Handlers::install();
    let spawned = cmd.spawn();
    if spawned.is_err() {
        // Nothing will fill the reserved file.
        let _ = std::fs::remove_file(&output);
    }
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Fail::with_code(
                127,
                format!("command not found: {shown_cmd}"),
            ));
        }
        Err(e) => {
            return Err(Fail::with_code(
                126,
                format!("cannot run {shown_cmd}: {}", io_msg(&e)),
            ));
        }
    };
    handlers.child(child.id());
    let waited = signals::wait_for_exit(child.id());
    drop(handlers);
    let waited =
        waited.map_err(|e| Fail::new(format!("waiting for {shown_cmd} failed: {}", io_msg(&e))))?;
    if waited == signals::Waited::GaveUp {
        eprintln!(
            "eltrace: `{shown_cmd}` (pid {}) still runs; its trace is not complete until it exits",
            child.id()
        );
        return Ok(ExitCode::from(130));
    }
    let status = child
        .wait()
        .map_err(|e| Fail::new(format!("waiting for {shown_cmd} failed: {}", io_msg(&e))))?;
    let code = exit_code(status, &shown_cmd);
    let replaced_by = reservation.replaced_by(&output);
    drop(reservation);
    if let Some(what) = replaced_by {
        // Not read: what is there now is not this run's trace (and may be a FIFO).
        say_trace_lost(&output, what, &shown_cmd);
        return Ok(ExitCode::from(if code == 0 { 1 } else { code }));
    }
    summary::summarize(&output, &session, &shown_cmd, &opts.include, &opts.exclude);
    Ok(ExitCode::from(code))
}

/// The absolute output path, whose directory must exist.
fn output_path(output: &Path) -> Result<PathBuf, Fail> {
    let abs = std::path::absolute(output)
        .map_err(|e| Fail::new(format!("{}: {}", output.display(), io_msg(&e))))?;
    if let Some(dir) = abs.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(Fail::new(format!(
                "cannot write {}: directory {} does not exist",
                abs.display(),
                dir.display()
            )));
        }
    }
    Ok(abs)
}

/// `program args`, with the profiling variables and the options' `ELTRACE_*` set for
/// it alone.
fn profiled_command(
    program: &OsStr,
    args: &[OsString],
    opts: &RecordOptions,
    profiler: &Path,
    output: &Path,
    session: &str,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env(env::CORECLR_ENABLE_PROFILING, "1")
        .env(env::CORECLR_PROFILER, protocol::CLSID_BRACED)
        .env(env::CORECLR_PROFILER_PATH, profiler)
        .env(env::OUTPUT, output)
        .env(env::SESSION, session)
        .env(env::PARENT_PID, std::process::id().to_string());
    let separator = protocol::LIST_SEPARATOR.to_string();
    if !opts.include.is_empty() {
        cmd.env(env::INCLUDE, opts.include.join(&separator));
    }
    if !opts.exclude.is_empty() {
        cmd.env(env::EXCLUDE, opts.exclude.join(&separator));
    }
    if opts.slow_path || opts.values {
        cmd.env(env::HOOKS, protocol::hooks::SLOW);
    }
    if opts.values {
        cmd.env(env::VALUES, "1");
    }
    if let Some(t) = &opts.timing {
        cmd.env(env::TIMING, t);
    }
    if let Some(hz) = opts.sample_hz {
        cmd.env(env::SAMPLE_HZ, hz.to_string());
    }
    if opts.lossy {
        cmd.env(env::LOSSY, "1");
    }
    if let Some(ms) = opts.max_stall_ms {
        cmd.env(env::MAX_STALL_MS, ms.to_string());
    }
    let user_set = [
        env::DOTNET_TAIL_CALL_LOOP_OPT,
        env::COMPLUS_TAIL_CALL_LOOP_OPT,
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some());
    if let Some(v) = tail_loop_setting(opts.keep_tail_loops, user_set) {
        cmd.env(env::DOTNET_TAIL_CALL_LOOP_OPT, v);
    }
    // `dotnet test`: VSTest kills its test host 100 ms after the run by default, which can
    // come before the profiler has written the host's trace to its end.
    if std::env::var_os(env::VSTEST_TESTHOST_SHUTDOWN_TIMEOUT).is_none() {
        cmd.env(
            env::VSTEST_TESTHOST_SHUTDOWN_TIMEOUT,
            env::VSTEST_SHUTDOWN_MS,
        );
    }
    cmd
}

/// `record`'s exit code for the program's `status`: its exit code, or 128 + the signal that
/// killed it (said on stderr).
fn exit_code(status: std::process::ExitStatus, shown_cmd: &str) -> u8 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => {
            eprintln!("eltrace: {shown_cmd} was killed by signal {sig}");
            (128 + sig).clamp(0, 255) as u8
        }
        (None, None) => 1,
    }
}

/// Says that the trace is lost: the reserved `output` was `what` (`removed`, or what
/// replaced it) while the program ran.
fn say_trace_lost(output: &Path, what: &str, shown_cmd: &str) {
    eprintln!(
        "eltrace: error: the trace is lost: {} was {} while `{shown_cmd}` ran, so the \
         profiler did not write it there (it refuses a symlink, a FIFO or a device swapped \
         in for the file record reserved); choose an -o in a directory only you can write",
        output.display(),
        match what {
            "removed" => "removed".to_owned(),
            w => format!("replaced by {w}"),
        }
    );
}

/// The `DOTNET_TailCallLoopOpt` value `record` gives the child: `0` (the JIT makes a
/// self-recursive call in tail position a tail call, which the profiler sees, instead of a
/// jump back to the method's start, which it does not), unless `--keep-tail-loops` or the
/// user's environment already says (`DOTNET_` or `COMPlus_` prefix).
fn tail_loop_setting(keep_tail_loops: bool, user_set: bool) -> Option<&'static str> {
    (!keep_tail_loops && !user_set).then_some("0")
}

/// A session id unique on this machine: eltrace's pid and the time, in hex.
fn session_id() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", std::process::id(), ns)
}

#[cfg(test)]
mod tests {
    use super::tail_loop_setting;

    #[test]
    fn tail_loops_are_off_unless_kept_or_set() {
        assert_eq!(tail_loop_setting(false, false), Some("0"));
        assert_eq!(tail_loop_setting(true, false), None);
        assert_eq!(tail_loop_setting(false, true), None);
        assert_eq!(tail_loop_setting(true, true), None);
    }
}
