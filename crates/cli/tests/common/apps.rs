//! The C# programs under tests/apps, each built once per test run with `dotnet build`:
//! Scenarios (the e2e scenarios), Async (runtime async on) and Probes (`eltrace check` and
//! `record --values`).

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
    app_dll(&DLL, "Scenarios")
}

/// Builds tests/apps/Async (runtime-async on) once per test run; returns Async.dll.
pub fn async_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Async")
}

/// Builds tests/apps/Probes once per test run; returns the path of Probes.dll.
pub fn probes_dll() -> &'static Path {
    static DLL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    app_dll(&DLL, "Probes")
}

/// Builds tests/apps/NAME once (per `cell`); returns the path of NAME.dll. The build's output
/// goes to `dotnet/dotnet-build-NAME.std{out,err}` in the target's temp directory (one pair
/// per app: a test binary may build two apps at once).
fn app_dll(cell: &'static OnceLock<Result<PathBuf, String>>, name: &str) -> &'static Path {
    let built = cell.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dotnet/{name}"));
        let logs = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dotnet");
        fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        let project = repo_root().join(format!("tests/apps/{name}"));
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
