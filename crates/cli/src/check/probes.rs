//! The bundled probe program (the C# project in check/probes/, embedded at compile time; the
//! e2e tests of `record --values` build the same project): written to a cache directory keyed
//! by a hash of the sources (and the target framework) and built there once with `dotnet
//! build -c Release`; later runs find the prebuilt `Probes.dll`. The default build is net10.0
//! (runtime async compiled in); .NET 8 and 9 run a net8.0 build without the runtime-async
//! probes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::{Fail, io_msg};

/// The probe sources: (file name, contents).
pub const SOURCES: &[(&str, &str)] = &[
    ("Probes.csproj", include_str!("probes/Probes.csproj")),
    ("Program.cs", include_str!("probes/Program.cs")),
    (
        "RuntimeAsync/AsyncProbe.cs",
        include_str!("probes/RuntimeAsync/AsyncProbe.cs"),
    ),
    ("TailProbe.cs", include_str!("probes/TailProbe.cs")),
    ("RegsProbe.cs", include_str!("probes/RegsProbe.cs")),
    ("SnapshotProbe.cs", include_str!("probes/SnapshotProbe.cs")),
    ("PInvokeProbe.cs", include_str!("probes/PInvokeProbe.cs")),
    ("ValuesProbe.cs", include_str!("probes/ValuesProbe.cs")),
    ("JitProbe.cs", include_str!("probes/JitProbe.cs")),
];

/// How long building the probes may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// FNV-1a over the sources: names the cache directory.
pub fn sources_hash() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in SOURCES {
        for b in name.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// `$ELTRACE_CACHE_DIR`, else `$XDG_CACHE_HOME/eltrace`, else `~/.cache/eltrace`, else the
/// temporary directory.
pub fn cache_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env(eltrace_trace::protocol::env::CACHE_DIR) {
        return d;
    }
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("eltrace");
    }
    if std::env::var_os("HOME").is_some_and(|h| !h.is_empty()) {
        return home().join(".cache").join("eltrace");
    }
    std::env::temp_dir().join("eltrace-cache")
}

/// `$HOME`, else the temporary directory.
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(std::env::temp_dir, PathBuf::from)
}

/// The default target framework of the probes (its cache directory has no suffix).
pub const DEFAULT_TFM: &str = "net10.0";

/// The built `Probes.dll` for the target framework `tfm`, building it first if the cache has
/// none. The build happens in a private directory renamed into place at the end, so
/// concurrent runs never see half a build (the loser of a race uses the winner's).
pub fn ensure_built(dotnet: &Path, tfm: &str) -> Result<PathBuf, Fail> {
    let root = cache_root();
    let mut name = format!("probes-{:016x}", sources_hash());
    if tfm != DEFAULT_TFM {
        name.push('-');
        name.push_str(tfm);
    }
    let dir = root.join(&name);
    let dll = |d: &Path| d.join("bin").join("Probes.dll");
    if dll(&dir).is_file() {
        return Ok(dll(&dir));
    }
    let tmp = root.join(format!("{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    build_in(dotnet, &tmp, tfm)?;
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dll(&dir).is_file() {
        Ok(dll(&dir))
    } else {
        Err(Fail::new(format!(
            "cannot move the probe build into {}",
            dir.display()
        )))
    }
}

fn build_in(dotnet: &Path, dir: &Path, tfm: &str) -> Result<(), Fail> {
    let src = dir.join("src");
    let fail = |what: &str, e: std::io::Error| {
        Fail::new(format!("{what} {}: {}", src.display(), io_msg(&e)))
    };
    std::fs::create_dir_all(&src).map_err(|e| fail("cannot create", e))?;
    for (name, text) in SOURCES {
        let file = src.join(name);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail("cannot create", e))?;
        }
        std::fs::write(file, text).map_err(|e| fail("cannot write into", e))?;
    }
    eprintln!(
        "eltrace: building the probe programs ({tfm}) in {}",
        dir.display()
    );
    let log = dir.join("build.log");
    let out = std::fs::File::create(&log).map_err(|e| fail("cannot write the log in", e))?;
    let err = out
        .try_clone()
        .map_err(|e| fail("cannot write the log in", e))?;
    // No build servers left running after the build.
    let mut cmd = super::run::dotnet_command(dotnet);
    cmd.arg("build")
        .arg(src.join("Probes.csproj"))
        .args(["-c", "Release", "--nologo", "-nodeReuse:false"])
        .arg(format!("-p:ProbesTargetFramework={tfm}"))
        .arg("-o")
        .arg(dir.join("bin"))
        .stdout(out)
        .stderr(err);
    let status = super::run::run_with_timeout(&mut cmd, BUILD_TIMEOUT)
        .map_err(|e| Fail::new(format!("cannot run {}: {e}", dotnet.display())))?;
    if status.code != Some(0) || !dir.join("bin").join("Probes.dll").is_file() {
        let hint = if tfm == DEFAULT_TFM {
            String::new()
        } else {
            // The SDK has only its own reference pack; older ones come from NuGet.
            format!(" (a {tfm} build needs NuGet once, for Microsoft.NETCore.App.Ref)")
        };
        return Err(Fail::new(format!(
            "building the probe programs failed ({}){hint}; see {}",
            status.describe(),
            log.display()
        )));
    }
    Ok(())
}
