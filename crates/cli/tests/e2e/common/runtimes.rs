//! The .NET runtimes the end-to-end tests run on: .NET 10 (the SDK's own runtime) and .NET
//! 11.0.0 (a dotnet root that scripts/runtimes.sh lays out from the NuGet runtime pack), which
//! of them a run selects (`ELTRACE_TEST_RUNTIMES`), and the command and environment that run
//! a net10.0 program on each. The `runtimes!` macro makes one test per runtime.
//!
//! The selection is made when the tests are built: crates/cli/build.rs reads
//! `ELTRACE_TEST_RUNTIMES` (cargo rebuilds when it changes) and sets the cfg
//! `eltrace_skip_net10` or `eltrace_skip_net11` for a runtime left out. The tests on that
//! runtime are compiled with `#[ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 11 out"]`, so that
//! cargo reports them as ignored, with the reason, instead of as passed; `--include-ignored`
//! runs them anyway.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::processes::{repo_root, run_captured};

/// The variable that selects the runtimes of a test run: a comma-separated list of majors
/// (`10`, `11`, `10,11`); unset or empty means every runtime. Read by crates/cli/build.rs,
/// which also fails the build on a name that is no runtime, so that a typo does not skip
/// everything.
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
    /// The major version, as `ELTRACE_TEST_RUNTIMES` names it.
    pub fn major(self) -> u32 {
        match self {
            Runtime::Net10 => 10,
            Runtime::Net11 => 11,
        }
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

/// Generates a module per test function `f(runtime: Runtime)` with one `#[test]` per
/// [`Runtime`] (`f::net10`, `f::net11`), each ignored when `ELTRACE_TEST_RUNTIMES` leaves its
/// runtime out. `runtimes!(net11: #[ignore = "why"]; f)` puts the attributes on `f::net11`
/// only (as in `modes!`; on a run that leaves 11 out that test has two `ignore`s, which
/// rustc warns about).
#[macro_export]
macro_rules! runtimes {
    (@one $name:ident, [$(#[$net11:meta])*]) => {
        mod $name {
            use $crate::common::runtimes::Runtime;
            #[test]
            #[cfg_attr(eltrace_skip_net10, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 10 out")]
            fn net10() {
                super::$name(Runtime::Net10);
            }
            #[test]
            #[cfg_attr(eltrace_skip_net11, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 11 out")]
            $(#[$net11])*
            fn net11() {
                super::$name(Runtime::Net11);
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
