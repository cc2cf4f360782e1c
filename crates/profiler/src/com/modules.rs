//! The per-module facts behind function naming, resolved once per ModuleID
//! ([`Modules::get`]): the module's file and glob name, whether it is a framework module, its
//! IMetaDataImport and the state-machine flags of its types (cached per type); and type names
//! (`Ns.Outer+Inner`) from a module's metadata. com/resolve.rs names functions with them.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use eltrace_abi::*;
use eltrace_trace::glob;

use super::info::Info;
use super::machines;
use super::metadata::MetaImport;
use crate::names;
use crate::sys::lock;

/// The file whose directory is the framework directory (docs/design.md).
pub(super) const CORELIB: &str = "System.Private.CoreLib.dll";
/// Guard against malformed nesting chains.
const MAX_NESTING: usize = 64;

/// `<root>/shared` for CoreLib's directory `<root>/shared/Microsoft.NETCore.App/<version>`;
/// `None` when CoreLib does not lie in a shared framework (a self-contained app).
fn shared_root(corelib_dir: &str) -> Option<&str> {
    let version_parent = names::dir_name(corelib_dir);
    if names::file_name(version_parent) != "Microsoft.NETCore.App" {
        return None;
    }
    let shared = names::dir_name(version_parent);
    (names::file_name(shared) == "shared").then_some(shared)
}

pub struct ModuleEntry {
    pub file: String,
    pub glob_name: String,
    pub framework: bool,
    pub import: Option<MetaImport>,
    /// State-machine flags of the module's types ([`machines::type_flags`]), by type-def.
    machine_types: Mutex<BTreeMap<mdTypeDef, u32>>,
}

/// Per-module facts, resolved once per ModuleID.
pub struct Modules {
    map: Mutex<BTreeMap<ModuleID, Arc<ModuleEntry>>>,
    framework_dir: Mutex<Option<String>>,
    /// The ClassID of `System.__Canon` once a shared instantiation showed it (0 before).
    pub(super) canon: AtomicUsize,
}

impl Default for Modules {
    fn default() -> Self {
        Modules::new()
    }
}

impl Modules {
    pub const fn new() -> Modules {
        Modules {
            map: Mutex::new(BTreeMap::new()),
            framework_dir: Mutex::new(None),
            canon: AtomicUsize::new(0),
        }
    }

    /// Whether the module at `path` is part of a shared framework: it lies in CoreLib's
    /// directory, or anywhere under the `shared/` directory that holds CoreLib's framework
    /// (`<dotnet root>/shared/Microsoft.NETCore.App/<version>/`), which also holds
    /// Microsoft.AspNetCore.App and every other shared framework.
    fn is_framework(&self, path: &str) -> bool {
        let Some(corelib_dir) = self.framework_dir(path) else {
            return false;
        };
        let dir = names::dir_name(path);
        dir == corelib_dir
            || shared_root(&corelib_dir).is_some_and(|root| {
                path.len() > root.len()
                    && path.starts_with(root)
                    && path[root.len()..].starts_with('/')
            })
    }

    /// The framework directory: that of the first CoreLib module seen, else the directory of
    /// the System.Private.CoreLib.dll mapped into the process.
    fn framework_dir(&self, this_path: &str) -> Option<String> {
        let mut dir = lock(&self.framework_dir);
        if dir.is_none() {
            if names::file_name(this_path) == CORELIB {
                *dir = Some(names::dir_name(this_path).to_string());
            } else if let Some(p) = corelib_from_maps() {
                *dir = Some(names::dir_name(&p).to_string());
            }
        }
        dir.clone()
    }

    pub fn get(&self, info: &Info, module: ModuleID) -> Result<Arc<ModuleEntry>, String> {
        if let Some(e) = lock(&self.map).get(&module) {
            return Ok(Arc::clone(e));
        }
        // Runtime calls happen without our locks held.
        let path = info
            .module_path(module)
            .map_err(|hr| format!("GetModuleInfo failed: {hr:#010x}"))?;
        let import = info.module_metadata(module).ok();
        let file = names::file_name(&path).to_string();
        let framework = !path.is_empty() && self.is_framework(&path);
        let entry = Arc::new(ModuleEntry {
            glob_name: glob::module_stem(&file).to_string(),
            file,
            framework,
            import,
            machine_types: Mutex::new(BTreeMap::new()),
        });
        let mut map = lock(&self.map);
        Ok(Arc::clone(map.entry(module).or_insert(entry)))
    }
}

impl ModuleEntry {
    /// [`machines::type_flags`] of type-def `td`, looked up once per type.
    pub(super) fn type_flags(&self, md: &MetaImport, td: mdTypeDef) -> u32 {
        if let Some(&f) = lock(&self.machine_types).get(&td) {
            return f;
        }
        let generated = md.attribute(td, machines::COMPILER_GENERATED).is_some();
        let f = if generated {
            machines::type_flags(&md.interface_names(td), true)
        } else {
            0
        };
        lock(&self.machine_types).insert(td, f);
        f
    }
}

/// `Namespace.Outer+Inner` for a type-def token.
pub fn type_name(md: &MetaImport, mut td: mdTypeDef) -> Result<String, String> {
    let mut chain = Vec::new();
    for _ in 0..MAX_NESTING {
        let (name, flags) = md
            .type_def_props(td)
            .map_err(|hr| format!("GetTypeDefProps({td:#010x}) failed: {hr:#010x}"))?;
        chain.push(name);
        if flags & tdVisibilityMask < tdNestedPublic {
            break;
        }
        td = md
            .enclosing_type(td)
            .map_err(|hr| format!("GetNestedClassProps({td:#010x}) failed: {hr:#010x}"))?;
    }
    chain.reverse();
    Ok(names::join_nested(&chain))
}

/// The path of System.Private.CoreLib.dll as mapped into this process, if it is.
fn corelib_from_maps() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.find('/').map(|i| &l[i..]))
        .find(|p| names::file_name(p) == CORELIB)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shared_framework_is_framework() {
        let m = Modules::new();
        let corelib =
            "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll";
        assert!(m.is_framework(corelib));
        for fw in [
            "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Runtime.dll",
            "/usr/share/dotnet/shared/Microsoft.AspNetCore.App/10.0.12/Microsoft.AspNetCore.Hosting.dll",
        ] {
            assert!(m.is_framework(fw), "{fw}");
        }
        for app in [
            "/home/u/app/bin/Web.dll",
            "/usr/share/dotnet/sdk/10.0.401/Roslyn/bincore/csc.dll",
            "/usr/share/dotnet/sharedstuff/x.dll",
            "",
        ] {
            assert!(!m.is_framework(app), "{app}");
        }
        assert_eq!(
            shared_root("/r/shared/Microsoft.NETCore.App/11.0.0"),
            Some("/r/shared")
        );
        // A self-contained app: CoreLib beside the app; only its own directory is framework.
        assert_eq!(shared_root("/opt/app"), None);
        let m = Modules::new();
        assert!(m.is_framework("/opt/app/System.Private.CoreLib.dll"));
        assert!(m.is_framework("/opt/app/System.Runtime.dll"));
        assert!(!m.is_framework("/opt/app/plugins/Plugin.dll"));
    }
}
