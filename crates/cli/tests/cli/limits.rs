//! Running the built `eltrace` as a child under limits, for the hostile-trace tests and the
//! fuzzer: an address-space limit (`RLIMIT_AS`, set in the child before `exec`), a wall-clock
//! limit (the child is killed past it), and stdout sent to a file so that an export that
//! writes without end fails by its size, not by filling the disk.
//!
//! ```text
//! run_limited(["export", "-f", "folded", t], MEM, TIME)
//!   → Outcome { code: Some(0) | Some(1) | None (signal), timed_out, stdout_bytes, stderr }
//! ```

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RLIMIT_AS: i32 = 9;
const RLIMIT_FSIZE: i32 = 1;

#[repr(C)]
struct RLimit {
    cur: u64,
    max: u64,
}

unsafe extern "C" {
    fn setrlimit(resource: i32, rlim: *const RLimit) -> i32;
}

/// How a limited run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code; `None` when a signal ended the child (abort, SIGSEGV, the kill).
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout_bytes: u64,
    pub stderr: String,
}

impl Outcome {
    /// A clean end: exit 0 or an error exit (1), no panic, no signal, in time.
    pub fn clean(&self) -> bool {
        matches!(self.code, Some(0) | Some(1))
            && !self.timed_out
            && !self.stderr.contains("panicked")
            && !self.stderr.contains("memory allocation")
    }
}

/// Runs `eltrace args` with at most `mem` bytes of address space, `out_max` bytes of files
/// written (RLIMIT_FSIZE: a bigger output fails with SIGXFSZ/EFBIG) and `time` of wall clock;
/// stdout goes to `dir/stdout`.
pub fn run_limited(args: &[&str], dir: &Path, mem: u64, out_max: u64, time: Duration) -> Outcome {
    let out_path = dir.join("stdout");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eltrace"));
    cmd.args(args)
        .env_remove("ELTRACE_PROFILER_PATH")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit,
    // which is async-signal-safe, on stack data.
    unsafe {
        cmd.pre_exec(move || {
            for (res, v) in [(RLIMIT_AS, mem), (RLIMIT_FSIZE, out_max)] {
                let l = RLimit { cur: v, max: v };
                if setrlimit(res, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > time {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = reader.join().unwrap();
    let stdout_bytes = std::fs::metadata(&out_path).map_or(0, |m| m.len());
    Outcome {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stdout_bytes,
        stderr,
    }
}
