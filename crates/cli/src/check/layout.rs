//! Laying out a .NET runtime the SDK lacks (for `eltrace check --runtime`), as
//! scripts/runtimes.sh does without ASP.NET Core: the NuGet pack
//! `Microsoft.NETCore.App.Runtime.<rid>` restored through a throw-away project's
//! `PackageDownload` item into the NuGet global packages folder, then copied into
//! `<runtimes>/<version>/` (a copy of the SDK's `dotnet` host, `host/fxr/<v>/libhostfxr.so`,
//! `shared/Microsoft.NETCore.App/<v>/`) in a private directory renamed into place at the end.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::run::dotnet_command;
use crate::util::{Fail, io_msg};

/// The file written last into a complete root (the same name as scripts/runtimes.sh's).
const MARKER: &str = ".eltrace-runtime";
const RESTORE_TIMEOUT: Duration = Duration::from_secs(900);
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `cmd` with a timeout; its stdout and stderr together, or why it could not run.
fn output(mut cmd: Command, dir: &Path, timeout: Duration) -> Result<(bool, String), String> {
    let log = dir.join("out.log");
    let file = std::fs::File::create(&log).map_err(|e| io_msg(&e))?;
    let err = file.try_clone().map_err(|e| io_msg(&e))?;
    cmd.current_dir(dir).stdout(file).stderr(err);
    let ended = super::run::run_with_timeout(&mut cmd, timeout).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    if ended.timed_out {
        return Err(format!("timed out after {}s", timeout.as_secs()));
    }
    Ok((ended.code == Some(0), text))
}

/// A fresh private temporary directory.
fn temp_dir(what: &str) -> Result<PathBuf, Fail> {
    let d = std::env::temp_dir().join(format!(
        "eltrace-{what}-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&d)
        .map_err(|e| Fail::new(format!("cannot create {}: {}", d.display(), io_msg(&e))))?;
    Ok(d)
}

pub fn rid() -> Result<&'static str, Fail> {
    match std::env::consts::ARCH {
        "x86_64" => Ok("linux-x64"),
        "aarch64" => Ok("linux-arm64"),
        a => Err(Fail::new(format!("no .NET runtime packs for {a}"))),
    }
}

/// The versions of the runtime pack that the NuGet sources serve.
pub fn served_versions(sdk: &Path, pack: &str) -> Result<Vec<String>, Fail> {
    let dir = temp_dir("nuget-search")?;
    let mut cmd = dotnet_command(sdk);
    cmd.args([
        "package",
        "search",
        pack,
        "--exact-match",
        "--format",
        "json",
    ]);
    let res = output(cmd, &dir, QUERY_TIMEOUT);
    let _ = std::fs::remove_dir_all(&dir);
    let cannot = |why: String| {
        Fail::new(format!(
            "cannot list the versions of {pack} that NuGet serves ({why}); is NuGet reachable? \
             (sources: dotnet nuget list source) Pass an exact version (e.g. 11.0.0) to skip the query"
        ))
    };
    let (_, text) = res.map_err(cannot)?;
    search_versions(&text).map_err(cannot)
}

/// The versions in `dotnet package search --format json`'s answer, or the problems that
/// left it without any (a source that cannot be reached is a problem of that source, with
/// exit status 0 and no packages).
pub fn search_versions(text: &str) -> Result<Vec<String>, String> {
    let start = text.find('{').unwrap_or(0);
    let v: serde_json::Value = serde_json::from_str(&text[start..]).map_err(|_| {
        text.lines()
            .next()
            .unwrap_or("no answer")
            .trim()
            .to_string()
    })?;
    let sources = v["searchResult"].as_array().cloned().unwrap_or_default();
    let problems: Vec<String> = v["problems"]
        .as_array()
        .into_iter()
        .chain(sources.iter().filter_map(|s| s["problems"].as_array()))
        .flatten()
        .filter(|p| p["problemType"].as_str() == Some("Error"))
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect();
    let versions: Vec<String> = sources
        .iter()
        .flat_map(|s| s["packages"].as_array().into_iter().flatten())
        .filter_map(|p| p["version"].as_str().map(str::to_string))
        .collect();
    if versions.is_empty() {
        return Err(if problems.is_empty() {
            "no versions listed".into()
        } else {
            problems.join("; ")
        });
    }
    Ok(versions)
}

/// The NuGet global packages folder.
pub fn packages_dir(sdk: &Path) -> PathBuf {
    if let Some(d) = std::env::var_os("NUGET_PACKAGES").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let out = dotnet_command(sdk)
        .args(["nuget", "locals", "global-packages", "--list"])
        .stderr(Stdio::null())
        .output();
    let listed = out.ok().and_then(|o| {
        String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
            l.trim()
                .strip_prefix("global-packages:")
                .map(|p| p.trim().to_string())
        })
    });
    match listed {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => super::probes::home().join(".nuget").join("packages"),
    }
}

/// The extracted package, if the restore finished it (NuGet writes `.nupkg.metadata` last).
pub fn package_path(packages: &Path, id: &str, version: &str) -> Option<PathBuf> {
    let d = packages
        .join(id.to_ascii_lowercase())
        .join(version.to_ascii_lowercase());
    d.join(".nupkg.metadata").is_file().then_some(d)
}

/// Downloads `id` `version` into the global packages folder through a throw-away project.
pub fn restore(sdk: &Path, id: &str, version: &str) -> Result<(), Fail> {
    let dir = temp_dir("runtime-restore")?;
    let project = format!(
        "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <PropertyGroup><TargetFramework>net10.0</TargetFramework></PropertyGroup>\n  \
         <ItemGroup><PackageDownload Include=\"{id}\" Version=\"[{version}]\" /></ItemGroup>\n</Project>\n"
    );
    std::fs::write(dir.join("runtime.csproj"), project).map_err(|e| {
        Fail::new(format!(
            "cannot write into {}: {}",
            dir.display(),
            io_msg(&e)
        ))
    })?;
    eprintln!(
        "eltrace: downloading {id} {version} from NuGet (once; it is kept in the NuGet global packages folder)"
    );
    let mut cmd = dotnet_command(sdk);
    cmd.args(["restore", "runtime.csproj", "--nologo", "-nodeReuse:false"]);
    let res = output(cmd, &dir, RESTORE_TIMEOUT);
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, text) =
        res.map_err(|e| Fail::new(format!("the NuGet restore of {id} {version}: {e}")))?;
    if ok {
        return Ok(());
    }
    // "<project> : error NU1301: …": from "error" on (the project is a throw-away one).
    let mut errors: Vec<&str> = text
        .lines()
        .filter_map(|l| l.find("error").map(|i| l[i..].trim()))
        .collect();
    errors.dedup();
    errors.truncate(3);
    let detail = errors.join("\n  ");
    let unreachable = [
        "NU1301",
        "Unable to load the service index",
        "Failed to download package",
        "Connection refused",
        "Name or service not known",
        "Resource temporarily unavailable",
        "No route to host",
    ];
    Err(Fail::new(if unreachable.iter().any(|m| text.contains(m)) {
        format!(
            "cannot reach NuGet to download {id} {version} (sources: dotnet nuget list source):\n  {detail}"
        )
    } else if ["NU1101", "NU1102", "NU1103"]
        .iter()
        .any(|c| text.contains(c))
    {
        format!("NuGet does not serve {id} {version}:\n  {detail}")
    } else {
        format!("the NuGet restore of {id} {version} failed:\n  {detail}")
    }))
}

/// `root` holds a complete layout of `version`.
pub fn complete(root: &Path, version: &str) -> bool {
    let fw = root.join("shared/Microsoft.NETCore.App").join(version);
    root.join(MARKER).is_file()
        && root.join("dotnet").is_file()
        && root
            .join("host/fxr")
            .join(version)
            .join("libhostfxr.so")
            .is_file()
        && fw.join("libcoreclr.so").is_file()
        && fw.join("System.Private.CoreLib.dll").is_file()
}

/// Copies the regular files of `from` (not recursively) into `to`, except `skip`.
fn copy_files(from: &Path, to: &Path, skip: &str) -> std::io::Result<()> {
    for e in std::fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_file() && e.file_name() != skip {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// Lays out `version` under `runtimes_dir` from the extracted pack `pack`.
pub fn lay_out(
    sdk: &Path,
    pack: &Path,
    runtimes_dir: &Path,
    version: &str,
) -> Result<PathBuf, Fail> {
    let rid = rid()?;
    let root = runtimes_dir.join(version);
    let tmp = runtimes_dir.join(format!(".{version}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("eltrace: laying out .NET {version} in {}", root.display());
    let native = pack.join("runtimes").join(rid).join("native");
    let lib = std::fs::read_dir(pack.join("runtimes").join(rid).join("lib"))
        .ok()
        .and_then(|rd| {
            rd.flatten().map(|e| e.path()).find(|p| {
                p.is_dir()
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("net"))
            })
        })
        .ok_or_else(|| Fail::new(format!("no runtimes/{rid}/lib/net* in {}", pack.display())))?;
    let fw = tmp.join("shared/Microsoft.NETCore.App").join(version);
    let fxr = tmp.join("host/fxr").join(version);
    let copied = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(&fw)?;
        std::fs::create_dir_all(&fxr)?;
        std::fs::copy(sdk, tmp.join("dotnet"))?;
        std::fs::copy(native.join("libhostfxr.so"), fxr.join("libhostfxr.so"))?;
        copy_files(&lib, &fw, "")?;
        copy_files(&native, &fw, "libhostfxr.so")?;
        let versions = pack.join("Microsoft.NETCore.App.versions.txt");
        if versions.is_file() {
            std::fs::copy(versions, fw.join(".version"))?;
        }
        Ok(())
    })();
    let cleanup = |f: Fail| {
        let _ = std::fs::remove_dir_all(&tmp);
        f
    };
    copied.map_err(|e| {
        cleanup(Fail::new(format!(
            "cannot lay out {}: {}",
            tmp.display(),
            io_msg(&e)
        )))
    })?;
    // The host must list the runtime it is meant to run.
    let listed = dotnet_command(&tmp.join("dotnet"))
        .arg("--list-runtimes")
        .env("DOTNET_ROOT", &tmp)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !listed
        .lines()
        .any(|l| l.starts_with(&format!("Microsoft.NETCore.App {version} ")))
    {
        return Err(cleanup(Fail::new(format!(
            "the laid-out host in {} does not list Microsoft.NETCore.App {version}:\n{listed}",
            tmp.display()
        ))));
    }
    let marker = format!("version={version}\nnetcore={}\n", pack.display());
    std::fs::write(tmp.join(MARKER), marker).map_err(|e| {
        cleanup(Fail::new(format!(
            "cannot write into {}: {}",
            tmp.display(),
            io_msg(&e)
        )))
    })?;
    if complete(&root, version) {
        // Another run laid it out meanwhile: keep theirs.
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        let _ = std::fs::remove_dir_all(&root);
        if std::fs::rename(&tmp, &root).is_err() && !complete(&root, version) {
            return Err(cleanup(Fail::new(format!(
                "cannot move {} to {}",
                tmp.display(),
                root.display()
            ))));
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::search_versions;

    #[test]
    fn search_answers_give_versions_or_the_problem() {
        let served = r#"{"version": 2, "problems": [], "searchResult": [{"sourceName": "nuget.org",
            "packages": [{"id": "microsoft.netcore.app.runtime.linux-x64", "version": "8.0.34"},
                         {"id": "microsoft.netcore.app.runtime.linux-x64", "version": "11.0.0"}]}]}"#;
        assert_eq!(search_versions(served).unwrap(), ["8.0.34", "11.0.0"]);
        // As `dotnet package search` answered with NuGet unreachable (exit status 0).
        let unreachable = r#"{"version": 2, "problems": [], "searchResult": [{"sourceName": "nuget.org",
            "problems": [{"text": "Unable to load the service index for source https://api.nuget.org/v3/index.json.",
                          "problemType": "Error"}], "packages": []}]}"#;
        let e = search_versions(unreachable).unwrap_err();
        assert!(e.starts_with("Unable to load the service index"), "{e}");
        assert_eq!(
            search_versions("error: no such command").unwrap_err(),
            "error: no such command"
        );
    }
}
