//! The C# programs the tests record, each built once per test run with `dotnet build`:
//! tests/apps/Scenarios (the e2e scenarios), tests/apps/Async (runtime async on) and the
//! probes of `eltrace check` (crates/cli/src/check/probes, also recorded with `--values`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::processes::{repo_root, run_captured};

/// The module of every function of the scenario program.
pub const MODULE: &str = "Scenarios.dll";

/// Environment for `dotnet`: quiet, and no build servers left running after a build.
pub fn dotnet_command() -> Command {
    let mut cmd = Command::new("dotnet");
    cmd.env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1")
        .env("MSBUILDDISABLENODEREUSE", "1")
        .env("DOTNET_CLI_USE_MSBUILD_SERVER", "0")
        .env("UseSharedCompilation", "false");
    cmd
}

/// Builds tests/apps/Scenarios once per test run; returns the path of Scenarios.dll.
pub fn scenarios_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Scenarios", || {
        Ok(repo_root().join("tests/apps/Scenarios"))
    })
}

/// Builds tests/apps/Async (runtime-async on) once per test run; returns Async.dll.
pub fn async_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Async", || Ok(repo_root().join("tests/apps/Async")))
}

/// Builds the probe program of `eltrace check` (crates/cli/src/check/probes, the files the
/// binary embeds) once per test run, from a copy in the target's temp directory so that no
/// `obj/` lands in the crate's sources; returns the path of Probes.dll.
pub fn probes_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Probes", || {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/check/probes");
        let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet/Probes-src");
        let _ = fs::remove_dir_all(&copy);
        copy_sources(&src, &copy)
            .map_err(|e| format!("cannot copy {} to {}: {e}", src.display(), copy.display()))?;
        Ok(copy)
    })
}

/// Copies the files and folders of `src` into `dest`, leaving out `obj/` and `bin/`.
fn copy_sources(src: &Path, dest: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dest)?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_dir() {
            if name != "obj" && name != "bin" {
                copy_sources(&entry.path(), &dest.join(&name))?;
            }
        } else {
            fs::copy(entry.path(), dest.join(&name))?;
        }
    }
    Ok(())
}

/// Builds NAME.csproj in the folder `project` returns, once (per `cell`); returns the path of
/// NAME.dll. The build's output goes to `dotnet/dotnet-build-NAME.std{out,err}` in the
/// target's temp directory (one pair per app: a test binary may build two apps at once).
fn app_dll(
    cell: &'static OnceLock<Result<PathBuf, String>>,
    name: &str,
    project: impl FnOnce() -> Result<PathBuf, String>,
) -> &'static Path {
    let built = cell.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dotnet/{name}"));
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet");
        fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        let project = project()?;
        let mut cmd = dotnet_command();
        cmd.arg("build")
            .arg("-c")
            .arg("Release")
            .arg("-nodeReuse:false")
            .arg("-o")
            .arg(&out)
            .arg(&project);
        let (status, stdout, stderr) =
            run_captured(&mut cmd, &logs, &format!("dotnet-build-{name}"));
        if !status.success() {
            return Err(format!(
                "dotnet build of {} failed ({status}):\n{stdout}\n{stderr}",
                project.display()
            ));
        }
        Ok(out.join(format!("{name}.dll")))
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}
