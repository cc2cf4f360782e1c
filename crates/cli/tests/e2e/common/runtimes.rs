//! The .NET runtimes the end-to-end tests run on: .NET 10 (the SDK's own runtime) and .NET
//! 11.0.0 (a dotnet root that scripts/runtimes.sh lays out from the NuGet runtime pack), which
//! of them a run selects (`ELTRACE_TEST_RUNTIMES`), and the command and environment that run
//! a net10.0 program on each. The `runtimes!` macro makes one test per runtime.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::processes::{repo_root, run_captured};

/// The variable that selects the runtimes of a test run: a comma-separated list of majors
/// (`10`, `11`, `10,11`); unset or empty means every runtime.
pub const SELECT_VAR: &str = "ELTRACE_TEST_RUNTIMES";

/// The .NET 11 release the tests run on (the one scripts/setup.sh lays out).
pub const NET11_VERSION: &str = "11.0.0";

/// A runtime the end-to-end tests run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// The SDK's own runtime (CoreCLR 10): `dotnet` from PATH.
    Net10,
    /// .NET 11.0.0 from its laid-out root, the net10.0 programs rolled forward to it.
    Net11,
}

impl Runtime {
    pub const ALL: [Runtime; 2] = [Runtime::Net10, Runtime::Net11];

    /// The major version, as `ELTRACE_TEST_RUNTIMES` names it.
    pub fn major(self) -> u32 {
        match self {
            Runtime::Net10 => 10,
            Runtime::Net11 => 11,
        }
    }

    /// Whether this run tests on this runtime (see [`SELECT_VAR`]); panics on a list that
    /// names no known runtime, so that a typo does not skip everything silently.
    pub fn selected(self) -> bool {
        static SELECTED: OnceLock<Vec<u32>> = OnceLock::new();
        let majors = SELECTED.get_or_init(|| {
            let var = std::env::var(SELECT_VAR).unwrap_or_default();
            if var.trim().is_empty() {
                return Runtime::ALL.iter().map(|r| r.major()).collect();
            }
            var.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    let major = s.trim_start_matches("net").parse::<u32>().ok();
                    match major.filter(|m| Runtime::ALL.iter().any(|r| r.major() == *m)) {
                        Some(m) => m,
                        None => panic!("{SELECT_VAR}={var}: {s:?} is not a runtime (10, 11)"),
                    }
                })
                .collect()
        });
        majors.contains(&self.major())
    }

    /// The `dotnet` that runs a program on this runtime: the SDK's for .NET 10, the laid-out
    /// root's own copy of the host for .NET 11 (the SDK's `dotnet` ignores `DOTNET_ROOT`).
    pub fn dotnet(self) -> PathBuf {
        match self {
            Runtime::Net10 => PathBuf::from("dotnet"),
            Runtime::Net11 => net11_root().join("dotnet"),
        }
    }

    /// The environment a net10.0 program needs on this runtime.
    pub fn env(self) -> Vec<(&'static str, String)> {
        match self {
            Runtime::Net10 => Vec::new(),
            Runtime::Net11 => vec![
                ("DOTNET_ROOT", net11_root().display().to_string()),
                ("DOTNET_ROLL_FORWARD", "Major".to_owned()),
            ],
        }
    }

    /// Points `cmd` at this runtime: `dotnet` replaced by [`Runtime::dotnet`] is up to the
    /// caller; this sets the environment of [`Runtime::env`].
    pub fn apply_env(self, cmd: &mut Command) {
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
    }

    /// How a trace or `eltrace check` names the runtime: "CoreCLR <major>.".
    pub fn description_prefix(self) -> String {
        format!("CoreCLR {}.", self.major())
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, ".NET {}", self.major())
    }
}

/// The .NET 11 root, laid out by `scripts/runtimes.sh` (a no-op when scripts/setup.sh did it
/// already; it downloads the packs otherwise), once per test binary.
fn net11_root() -> PathBuf {
    static ROOT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let dir = std::env::temp_dir();
        let label = format!("eltrace-runtimes-{}", std::process::id());
        let mut cmd = Command::new("bash");
        cmd.arg(repo_root().join("scripts/runtimes.sh"))
            .arg(NET11_VERSION);
        let (status, stdout, stderr) = run_captured(&mut cmd, &dir, &label);
        for ext in ["stdout", "stderr"] {
            let _ = std::fs::remove_file(dir.join(format!("{label}.{ext}")));
        }
        let root = PathBuf::from(stdout.trim());
        if !status.success() || !root.join("dotnet").is_file() {
            return Err(format!(
                "cannot lay out .NET {NET11_VERSION} for the tests on it (scripts/runtimes.sh \
                 {NET11_VERSION}: {status}):\n{stderr}\nRun scripts/setup.sh with NuGet \
                 reachable, or test on .NET 10 alone: {SELECT_VAR}=10"
            ));
        }
        Ok(root)
    });
    match root {
        Ok(r) => r.clone(),
        Err(e) => panic!("{e}"),
    }
}

/// Runs `test` on `runtime` when this run selects it; otherwise says it was skipped.
pub fn on(runtime: Runtime, test: impl FnOnce()) {
    if runtime.selected() {
        test();
    } else {
        eprintln!("skipped: {runtime} is not selected by {SELECT_VAR}");
    }
}

/// Generates a module per test function `f(runtime: Runtime)` with one `#[test]` per
/// [`Runtime`] (`f::net10`, `f::net11`), each skipped when `ELTRACE_TEST_RUNTIMES` leaves its
/// runtime out. `runtimes!(net11: #[ignore = "why"]; f)` puts the attributes on `f::net11`
/// only (as in `modes!`).
#[macro_export]
macro_rules! runtimes {
    (@one $name:ident, [$(#[$net11:meta])*]) => {
        mod $name {
            use $crate::common::runtimes::{Runtime, on};
            #[test]
            fn net10() {
                on(Runtime::Net10, || super::$name(Runtime::Net10));
            }
            #[test]
            $(#[$net11])*
            fn net11() {
                on(Runtime::Net11, || super::$name(Runtime::Net11));
            }
        }
    };
    (@each $net11:tt $($name:ident)*) => {
        $( $crate::runtimes!(@one $name, $net11); )*
    };
    (net11: $(#[$net11:meta])*; $($name:ident),* $(,)?) => {
        $crate::runtimes!(@each [$(#[$net11])*] $($name)*);
    };
    ($($name:ident),* $(,)?) => {
        $crate::runtimes!(net11: ; $($name),*);
    };
}
