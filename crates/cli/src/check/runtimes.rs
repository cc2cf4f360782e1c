//! The runtimes of `eltrace check --runtime`: parses the list (`10,11`, `all`, exact versions
//! such as `11.0.0`) and resolves each entry to a dotnet root. A runtime the SDK's `dotnet`
//! has is used in place; any other is laid out once into eltrace's cache
//! (`<cache>/runtimes/<version>/`, by [`super::layout`] from the NuGet runtime pack). A major (`11`) is the SDK's
//! own, else the newest one laid out already, else the newest NuGet serves. Progress goes to
//! stderr.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::layout::{complete, lay_out, package_path, packages_dir, restore, rid, served_versions};
use super::run::dotnet_command;
use crate::util::{Fail, io_msg};

/// `--runtime all`.
pub const ALL: &[&str] = &["8", "9", "10", "11"];
const NETCORE_PACK: &str = "Microsoft.NETCore.App.Runtime";

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

impl Wanted {
    /// As the user wrote it (a column's header when it cannot be resolved).
    pub fn label(&self) -> String {
        match self {
            Wanted::Major(m) => m.to_string(),
            Wanted::Exact(v) => v.clone(),
        }
    }
}

/// Resolves wanted runtimes to dotnet roots, laying out what is missing; what it learns
/// (the SDK's runtimes, the versions NuGet serves) is asked once.
pub struct Resolver {
    sdk: PathBuf,
    own: Vec<String>,
    pack: String,
    served: Option<Vec<String>>,
    runtimes_dir: PathBuf,
    packages: Option<PathBuf>,
}

impl Resolver {
    /// `sdk` is the SDK's `dotnet` (resolved to the real file: its copy becomes each root's
    /// host).
    pub fn new(sdk: &Path) -> Result<Self, Fail> {
        let sdk = std::fs::canonicalize(sdk).unwrap_or_else(|_| sdk.to_owned());
        Ok(Resolver {
            own: sdk_runtimes(&sdk),
            pack: format!("{NETCORE_PACK}.{}", rid()?),
            sdk,
            served: None,
            runtimes_dir: super::probes::cache_root().join("runtimes"),
            packages: None,
        })
    }

    /// The exact version `w` stands for.
    pub fn version(&mut self, w: &Wanted) -> Result<String, Fail> {
        let m = match w {
            Wanted::Exact(v) => return Ok(v.clone()),
            Wanted::Major(m) => *m,
        };
        if let Some(v) = newest_of_major(self.own.iter().map(String::as_str), m)
            .or_else(|| newest_laid_out(&self.runtimes_dir, m))
        {
            return Ok(v);
        }
        let pack = &self.pack;
        if self.served.is_none() {
            eprintln!("eltrace: asking NuGet which {pack} versions it serves");
            self.served = Some(served_versions(&self.sdk, pack)?);
        }
        let list = self.served.as_deref().unwrap_or_default();
        let v = newest_of_major(list.iter().map(String::as_str), m)
            .ok_or_else(|| Fail::new(format!("NuGet serves no {pack} {m}.0.x")))?;
        eprintln!("eltrace: .NET {m}: the newest {m}.0.x NuGet serves is {v}");
        Ok(v)
    }

    /// The runtime `version`: the SDK's own, or a root in the cache, laid out first if needed.
    pub fn runtime(&mut self, version: &str) -> Result<Runtime, Fail> {
        let major = major_of(version);
        if self.own.iter().any(|v| v == version) {
            return Ok(Runtime {
                version: version.to_string(),
                major,
                dotnet: self.sdk.clone(),
                laid_out: false,
            });
        }
        let (sdk, pack, dir) = (&self.sdk, &self.pack, &self.runtimes_dir);
        let root = dir.join(version);
        if !complete(&root, version) {
            let pkgs = self.packages.get_or_insert_with(|| packages_dir(sdk));
            let extracted = match package_path(pkgs, pack, version) {
                Some(p) => p,
                None => {
                    restore(sdk, pack, version)?;
                    package_path(pkgs, pack, version).ok_or_else(|| {
                        Fail::new(format!(
                            "{pack} {version} is not in {} after the restore",
                            pkgs.display()
                        ))
                    })?
                }
            };
            std::fs::create_dir_all(dir).map_err(|e| {
                Fail::new(format!("cannot create {}: {}", dir.display(), io_msg(&e)))
            })?;
            lay_out(sdk, &extracted, dir, version)?;
        }
        Ok(Runtime {
            version: version.to_string(),
            major,
            dotnet: root.join("dotnet"),
            laid_out: true,
        })
    }
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
