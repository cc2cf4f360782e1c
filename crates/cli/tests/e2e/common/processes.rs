//! Running processes for the end-to-end tests: the binaries under test, temporary
//! directories, children killed with their process group on drop or after a timeout, and
//! commands run with their output captured to files.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long one scenario (or one build) may take before it is killed and the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The `eltrace` binary under test.
pub fn eltrace() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_eltrace"))
}

/// The profiler library that `eltrace record` loads: it must lie beside the binary.
pub fn profiler_library() -> PathBuf {
    let lib = eltrace()
        .parent()
        .expect("eltrace has a directory")
        .join("libeltrace_profiler.so");
    assert!(
        lib.is_file(),
        "{} is missing: run `cargo build --workspace` first (cargo test builds only the \
         eltrace binary, not the profiler cdylib beside it)",
        lib.display()
    );
    lib
}

/// A directory removed (with its contents) when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("e2e")
            .join(format!("{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    /// Removes the directory, unless `ELTRACE_E2E_KEEP` is set or the test is failing: a
    /// failure keeps its traces and logs (a rare failure can then be read, not only rerun).
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for the failure: {}", self.path.display());
        } else if std::env::var_os("ELTRACE_E2E_KEEP").is_none() {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// A child process started in its own process group; the whole group is killed when the
/// guard is dropped (a test that fails or times out leaves no `dotnet` behind).
pub struct ChildGuard {
    child: Option<Child>,
}

impl ChildGuard {
    pub fn spawn(cmd: &mut Command) -> ChildGuard {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        ChildGuard { child: Some(child) }
    }

    /// The child's pid (its process group's id too).
    pub fn id(&self) -> u32 {
        self.child.as_ref().expect("child").id()
    }

    /// Waits for the child; kills its process group and panics after `timeout`.
    pub fn wait(mut self, timeout: Duration, what: &str) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut().expect("child");
        loop {
            match child.try_wait().expect("wait for child") {
                Some(status) => {
                    self.child = None;
                    return status;
                }
                None if Instant::now() >= deadline => {
                    kill_group(child);
                    // Reaped: the drop must not signal a process group id that may be reused.
                    self.child = None;
                    panic!("{what} did not finish within {timeout:?}; killed it");
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

fn kill_group(child: &mut Child) {
    // The group id is the child's pid (process_group(0)); `kill -KILL -- -PGID` ends the
    // group: eltrace and the dotnet process it started.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            kill_group(child);
        }
    }
}

/// The exit status as a shell reports it: the exit code, or 128 + the signal that ended it.
pub fn shell_status(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .expect("exit code or signal")
}

/// Runs a command with stdout and stderr sent to files in `dir`, under [`TIMEOUT`].
/// Returns (status, stdout, stderr).
pub fn run_captured(cmd: &mut Command, dir: &Path, label: &str) -> (ExitStatus, String, String) {
    run_captured_within(cmd, dir, label, TIMEOUT)
}

/// [`run_captured`] for a command that takes longer than one scenario (a script running
/// many), under `timeout`.
pub fn run_captured_within(
    cmd: &mut Command,
    dir: &Path,
    label: &str,
    timeout: Duration,
) -> (ExitStatus, String, String) {
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    cmd.stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("stdout file"))
        .stderr(File::create(&err_path).expect("stderr file"));
    let status = ChildGuard::spawn(cmd).wait(timeout, label);
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    (status, stdout, stderr)
}
