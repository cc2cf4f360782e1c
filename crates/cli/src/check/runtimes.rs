//! The runtimes of `eltrace check --runtime`: parses the list (`10,11`, `all`, exact versions
//! such as `11.0.0`) and resolves each entry to a dotnet root. A runtime the SDK's `dotnet`
//! has is used in place; any other is laid out once into eltrace's cache
//! (`<cache>/runtimes/<version>/`, the layout of scripts/runtimes.sh without ASP.NET Core):
//! a copy of the SDK's `dotnet` host, `host/fxr/<v>/libhostfxr.so` and
//! `shared/Microsoft.NETCore.App/<v>/` from the NuGet pack `Microsoft.NETCore.App.Runtime.<rid>`,
//! which a throw-away project's `PackageDownload` item restores. A major (`11`) is the SDK's
//! own, else the newest one laid out already, else the newest NuGet serves. Progress goes to
//! stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{Fail, io_msg};

/// `--runtime all`.
pub const ALL: &[&str] = &["8", "9", "10", "11"];
/// The file written last into a complete root (the same name as scripts/runtimes.sh's).
const MARKER: &str = ".eltrace-runtime";
const NETCORE_PACK: &str = "Microsoft.NETCore.App.Runtime";
const RESTORE_TIMEOUT: Duration = Duration::from_secs(900);
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// One column of the matrix: a runtime version and the dotnet that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// The exact Microsoft.NETCore.App version, e.g. `11.0.0`.
    pub version: String,
    pub major: u32,
    /// The muxer to run the probes with.
    pub dotnet: PathBuf,
    /// A root laid out from a runtime pack (runs with `DOTNET_ROOT` and
    /// `DOTNET_ROLL_FORWARD=Major`), not the SDK's own.
    pub laid_out: bool,
}

impl Runtime {
    /// Runtime async (and the probes that need it) exists from .NET 10.
    pub fn has_runtime_async(&self) -> bool {
        self.major >= 10
    }

    /// The target framework of the probe build that runs here: a program cannot roll back
    /// to an older major, so 8 and 9 get a net8.0 build (rolled forward to 9).
    pub fn probes_tfm(&self) -> &'static str {
        if self.has_runtime_async() {
            "net10.0"
        } else {
            "net8.0"
        }
    }

    /// The environment for a program on this runtime.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        if !self.laid_out {
            return Vec::new();
        }
        let root = self.dotnet.parent().unwrap_or(Path::new("."));
        vec![
            ("DOTNET_ROOT", root.display().to_string()),
            ("DOTNET_ROLL_FORWARD", "Major".to_string()),
        ]
    }
}

/// What one entry of `--runtime` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// The newest `X.0.*`: the SDK's if it has one, else the newest NuGet serves.
    Major(u32),
    /// Exactly this version.
    Exact(String),
}

/// Parses `--runtime`: a comma-separated list of majors (8 and up) and exact versions, or
/// `all` (= 8,9,10,11); duplicates are dropped.
pub fn parse(spec: &str) -> Result<Vec<Wanted>, Fail> {
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim) {
        let items: Vec<&str> = if item.eq_ignore_ascii_case("all") {
            ALL.to_vec()
        } else {
            vec![item]
        };
        for it in items {
            let w = parse_one(it)?;
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    Ok(out)
}

fn parse_one(s: &str) -> Result<Wanted, Fail> {
    let bad = || {
        Fail::with_code(
            2,
            format!(
                "--runtime: not a major (8, 9, 10, 11), an exact version (11.0.0) or `all`: {s:?}"
            ),
        )
    };
    let major = |m: &str| -> Result<u32, Fail> {
        let m: u32 = m.parse().map_err(|_| bad())?;
        if m < 8 {
            return Err(Fail::with_code(
                2,
                format!("--runtime {s}: eltrace check runs on .NET 8 and later"),
            ));
        }
        Ok(m)
    };
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Wanted::Major(major(s)?));
    }
    let (core, pre) = s.split_once('-').unwrap_or((s, ""));
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let pre_ok = pre
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if parts.len() == 3
        && parts.iter().all(numeric)
        && pre_ok
        && !(s.contains('-') && pre.is_empty())
    {
        major(parts[0])?;
        return Ok(Wanted::Exact(s.to_string()));
    }
    Err(bad())
}

/// The major of a version string.
fn major_of(v: &str) -> u32 {
    v.split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// Sort key of a version: its numbers, a release after its prereleases.
fn version_key(v: &str) -> (Vec<u64>, bool, String) {
    let (core, pre) = v.split_once('-').unwrap_or((v, ""));
    let nums = core.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    (nums, pre.is_empty(), pre.to_string())
}

/// The newest `major.0.*` among `versions` (releases only).
pub fn newest_of_major<'a>(
    versions: impl IntoIterator<Item = &'a str>,
    major: u32,
) -> Option<String> {
    let prefix = format!("{major}.0.");
    versions
        .into_iter()
        .filter(|v| v.starts_with(&prefix) && !v.contains('-'))
        .max_by_key(|v| version_key(v))
        .map(str::to_string)
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

fn rid() -> Result<&'static str, Fail> {
    match std::env::consts::ARCH {
        "x86_64" => Ok("linux-x64"),
        "aarch64" => Ok("linux-arm64"),
        a => Err(Fail::new(format!("no .NET runtime packs for {a}"))),
    }
}

/// The Microsoft.NETCore.App versions the SDK's `dotnet` has.
fn sdk_runtimes(sdk: &Path) -> Vec<String> {
    let out = dotnet_command(sdk)
        .arg("--list-runtimes")
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("Microsoft.NETCore.App")).then(|| w.next().map(str::to_string))?
        })
        .collect()
}

/// The versions of the runtime pack that the NuGet sources serve.
fn served_versions(sdk: &Path, pack: &str) -> Result<Vec<String>, Fail> {
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
    let start = text.find('{').unwrap_or(0);
    let v: serde_json::Value = serde_json::from_str(&text[start..]).map_err(|_| {
        cannot(
            text.lines()
                .next()
                .unwrap_or("no answer")
                .trim()
                .to_string(),
        )
    })?;
    let problems: Vec<String> = v["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["problemType"].as_str() == Some("Error"))
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect();
    let versions: Vec<String> = v["searchResult"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["packages"].as_array().into_iter().flatten())
        .filter_map(|p| p["version"].as_str().map(str::to_string))
        .collect();
    if versions.is_empty() && !problems.is_empty() {
        return Err(cannot(problems.join("; ")));
    }
    Ok(versions)
}

/// The NuGet global packages folder.
fn packages_dir(sdk: &Path) -> PathBuf {
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
fn package_path(packages: &Path, id: &str, version: &str) -> Option<PathBuf> {
    let d = packages
        .join(id.to_ascii_lowercase())
        .join(version.to_ascii_lowercase());
    d.join(".nupkg.metadata").is_file().then_some(d)
}

/// Downloads `id` `version` into the global packages folder through a throw-away project.
fn restore(sdk: &Path, id: &str, version: &str) -> Result<(), Fail> {
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
    let mut errors: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("error"))
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
fn complete(root: &Path, version: &str) -> bool {
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
fn lay_out(sdk: &Path, pack: &Path, runtimes_dir: &Path, version: &str) -> Result<PathBuf, Fail> {
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

/// The newest complete layout of `major.0.*` in `runtimes_dir`: a major laid out once needs
/// no NuGet query again (name an exact version to get another).
fn newest_laid_out(runtimes_dir: &Path, major: u32) -> Option<String> {
    let names: Vec<String> = std::fs::read_dir(runtimes_dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|v| complete(&runtimes_dir.join(v), v))
        .collect();
    newest_of_major(names.iter().map(String::as_str), major)
}

/// Resolves every wanted runtime to a dotnet root, laying out what is missing. `sdk` is the
/// SDK's `dotnet` (the real file, not a symlink: its copy becomes each root's host).
pub fn resolve(wanted: &[Wanted], sdk: &Path) -> Result<Vec<Runtime>, Fail> {
    let sdk = std::fs::canonicalize(sdk).unwrap_or_else(|_| sdk.to_owned());
    let own = sdk_runtimes(&sdk);
    let pack = format!("{NETCORE_PACK}.{}", rid()?);
    let mut served: Option<Vec<String>> = None;
    let runtimes_dir = super::probes::cache_root().join("runtimes");
    let mut packages: Option<PathBuf> = None;
    let mut out: Vec<Runtime> = Vec::new();
    for w in wanted {
        let version = match w {
            Wanted::Exact(v) => v.clone(),
            Wanted::Major(m) => match newest_of_major(own.iter().map(String::as_str), *m)
                .or_else(|| newest_laid_out(&runtimes_dir, *m))
            {
                Some(v) => v,
                None => {
                    if served.is_none() {
                        eprintln!("eltrace: asking NuGet which {pack} versions it serves");
                        served = Some(served_versions(&sdk, &pack)?);
                    }
                    let list = served.as_deref().unwrap_or_default();
                    let v = newest_of_major(list.iter().map(String::as_str), *m)
                        .ok_or_else(|| Fail::new(format!("NuGet serves no {pack} {m}.0.x")))?;
                    eprintln!("eltrace: .NET {m}: the newest {m}.0.x NuGet serves is {v}");
                    v
                }
            },
        };
        if out.iter().any(|r| r.version == version) {
            continue;
        }
        let major = major_of(&version);
        if own.contains(&version) {
            out.push(Runtime {
                version,
                major,
                dotnet: sdk.clone(),
                laid_out: false,
            });
            continue;
        }
        let root = runtimes_dir.join(&version);
        if !complete(&root, &version) {
            let pkgs = packages.get_or_insert_with(|| packages_dir(&sdk)).clone();
            let extracted = match package_path(&pkgs, &pack, &version) {
                Some(p) => p,
                None => {
                    restore(&sdk, &pack, &version)?;
                    package_path(&pkgs, &pack, &version).ok_or_else(|| {
                        Fail::new(format!(
                            "{pack} {version} is not in {} after the restore",
                            pkgs.display()
                        ))
                    })?
                }
            };
            std::fs::create_dir_all(&runtimes_dir).map_err(|e| {
                Fail::new(format!(
                    "cannot create {}: {}",
                    runtimes_dir.display(),
                    io_msg(&e)
                ))
            })?;
            lay_out(&sdk, &extracted, &runtimes_dir, &version)?;
        }
        out.push(Runtime {
            version,
            major,
            dotnet: root.join("dotnet"),
            laid_out: true,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_majors_versions_and_all() {
        assert_eq!(
            parse("10,11").unwrap(),
            [Wanted::Major(10), Wanted::Major(11)]
        );
        assert_eq!(
            parse("all,11.0.0").unwrap(),
            [
                Wanted::Major(8),
                Wanted::Major(9),
                Wanted::Major(10),
                Wanted::Major(11),
                Wanted::Exact("11.0.0".into())
            ]
        );
        assert_eq!(parse(" 9 , 9").unwrap(), [Wanted::Major(9)]);
        assert_eq!(
            parse("11.0.0-rc.2.25502.107").unwrap(),
            [Wanted::Exact("11.0.0-rc.2.25502.107".into())]
        );
        for bad in [
            "", "7", "6.0.36", "11.0", "x", "11.0.0-", "10,,11", "1.2.3.4",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, 2, "{bad}: {}", e.msg);
        }
    }

    #[test]
    fn picks_the_newest_release_of_a_major() {
        let served = [
            "3.1.3",
            "8.0.0",
            "8.0.29",
            "8.0.34",
            "9.0.9",
            "9.0.23",
            "11.0.0-rc.1",
            "11.0.0",
        ];
        assert_eq!(newest_of_major(served, 8).as_deref(), Some("8.0.34"));
        assert_eq!(newest_of_major(served, 9).as_deref(), Some("9.0.23"));
        assert_eq!(newest_of_major(served, 11).as_deref(), Some("11.0.0"));
        assert_eq!(newest_of_major(served, 12), None);
    }

    #[test]
    fn old_runtimes_get_net8_probes_and_no_runtime_async() {
        let rt = |v: &str, laid_out| Runtime {
            version: v.into(),
            major: major_of(v),
            dotnet: PathBuf::from("/c/runtimes").join(v).join("dotnet"),
            laid_out,
        };
        assert_eq!(rt("8.0.34", true).probes_tfm(), "net8.0");
        assert_eq!(rt("9.0.23", true).probes_tfm(), "net8.0");
        assert!(!rt("9.0.23", true).has_runtime_async());
        assert_eq!(rt("11.0.0", true).probes_tfm(), "net10.0");
        assert!(rt("10.0.12", false).env().is_empty());
        assert_eq!(
            rt("11.0.0", true).env(),
            [
                ("DOTNET_ROOT", "/c/runtimes/11.0.0".to_string()),
                ("DOTNET_ROLL_FORWARD", "Major".to_string())
            ]
        );
    }
}
