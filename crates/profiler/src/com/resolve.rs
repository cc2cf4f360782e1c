//! Function naming for the FunctionIDMapper: FunctionID → module (cached per ModuleID, with
//! its IMetaDataImport and whether it is a framework module) → method, type chain (nested
//! types joined with `+`) and generic arity, as a [`FunctionRecord`] plus what the selection
//! globs need; and, for selected functions, the compiler state-machine flags (com/machines.rs,
//! cached per type).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use eltrace_abi::*;
use eltrace_trace::{FunctionFlags, FunctionRecord, glob};

use super::continuation;
use super::info::Info;
use super::machines;
use super::metadata::MetaImport;
use crate::names;
use crate::sys::lock;

/// The file whose directory is the framework directory (docs/design.md).
pub(super) const CORELIB: &str = "System.Private.CoreLib.dll";
/// The `<Module>` type that owns global functions.
const GLOBAL_TYPE: mdTypeDef = mdtTypeDef | 1;
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

/// A resolved function: its record (idx not yet assigned) and the selection inputs.
pub struct Described {
    pub record: FunctionRecord,
    pub glob_module: String,
    pub framework: bool,
    /// The function's module (0 when unknown).
    pub module_id: ModuleID,
    /// The type-def that declares the method (0 when unknown or global).
    pub class: mdTypeDef,
    /// The element type that the method's signature returns (after custom modifiers), e.g.
    /// `0x01` void, `0x12` class, `0x15` generic instance; 0 when unknown.
    pub returns: u8,
    /// Where the method's async variant receives its continuation at Enter: the index of the
    /// integer argument register (0 RDI .. 5 RSI, RDX, RCX, R8, R9) if the signature makes it
    /// certain (com/continuation.rs); `None` otherwise.
    pub cont_reg: Option<u8>,
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

    /// Names a function: the best record available, and what failed (if anything; failures
    /// leave placeholders in the record).
    pub fn describe(&self, info: &Info, function: FunctionID) -> (Described, Option<String>) {
        let mut d = Described {
            record: FunctionRecord {
                function_id: function as u64,
                method: format!("<unknown {function:#x}>"),
                ..FunctionRecord::default()
            },
            glob_module: String::new(),
            framework: false,
            module_id: 0,
            class: 0,
            returns: 0,
            cont_reg: None,
        };
        let fi = match info.function_info(function) {
            Ok(fi) => fi,
            Err(hr) => return (d, Some(format!("GetFunctionInfo failed: {hr:#010x}"))),
        };
        d.record.token = fi.token;
        d.module_id = fi.module;
        let module = match self.get(info, fi.module) {
            Ok(m) => m,
            Err(e) => return (d, Some(e)),
        };
        d.record.module = module.file.clone();
        d.glob_module = module.glob_name.clone();
        d.framework = module.framework;
        if module.framework {
            d.record.flags = FunctionFlags(FunctionFlags::FRAMEWORK);
        }
        let Some(md) = module.import.as_ref() else {
            return (d, Some(format!("no metadata for module {}", module.file)));
        };
        let props = match md.method_props(fi.token) {
            Ok(p) => p,
            Err(hr) => {
                let why = format!("GetMethodProps({:#010x}) failed: {hr:#010x}", fi.token);
                return (d, Some(why));
            }
        };
        d.record.impl_flags = props.impl_flags;
        d.returns = return_element(&props.sig);
        let arity = md.generic_param_count(fi.token).unwrap_or(0);
        d.record.method = names::method_name(&props.name, arity);
        if props.class != GLOBAL_TYPE && props.class & 0x00FF_FFFF != 0 {
            d.class = props.class;
            match type_name(md, props.class) {
                Ok(t) => d.record.type_name = t,
                Err(e) => return (d, Some(e)),
            }
        }
        let generic_type = d.record.type_name.contains('`');
        d.cont_reg = continuation::register(self, info, function, &props.sig, generic_type);
        (d, None)
    }

    /// The state-machine flags of method `token` of type-def `class` in `module`
    /// (docs/trace-format.md "FUNCTION") and, for a kickoff, the state machine type its
    /// attribute names (empty otherwise). 0 and empty when the metadata cannot tell.
    pub fn state_machine(
        &self,
        info: &Info,
        module: ModuleID,
        token: mdMethodDef,
        class: mdTypeDef,
    ) -> (u32, String) {
        let Ok(entry) = self.get(info, module) else {
            return (0, String::new());
        };
        let Some(md) = entry.import.as_ref() else {
            return (0, String::new());
        };
        let mut flags = if class != 0 {
            entry.type_flags(md, class)
        } else {
            0
        };
        let mut machine = String::new();
        for (attribute, bits) in machines::KICKOFF_ATTRIBUTES {
            let Some(blob) = md.attribute(token, attribute) else {
                continue;
            };
            flags |= bits;
            if let Some(name) = machines::attribute_type_name(&blob) {
                let td = find_nested(md, &name);
                if bits == FunctionFlags::ITERATOR_KICKOFF
                    && td
                        .is_some_and(|td| entry.type_flags(md, td) & FunctionFlags::ENUMERABLE != 0)
                {
                    flags |= FunctionFlags::ENUMERABLE;
                }
                machine = name;
            }
            break;
        }
        (flags, machine)
    }
}

impl ModuleEntry {
    /// [`machines::type_flags`] of type-def `td`, looked up once per type.
    fn type_flags(&self, md: &MetaImport, td: mdTypeDef) -> u32 {
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

/// The type-def of a type named as `type_name` is (`Ns.Outer+Inner`), if the module defines it.
fn find_nested(md: &MetaImport, name: &str) -> Option<mdTypeDef> {
    let mut td = 0;
    for part in machines::nested_path(name) {
        td = md.find_type_def(part, td)?;
    }
    (td != 0).then_some(td)
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

/// The element type a method signature returns: after the calling convention, the generic
/// parameter count (if generic) and the parameter count (compressed integers), skipping
/// custom modifiers (`0x1f`/`0x20` + a compressed token). 0 when the blob ends early.
pub fn return_element(sig: &[u8]) -> u8 {
    let mut i = 1;
    let skip = |i: &mut usize| match sig.get(*i) {
        Some(b) if b & 0x80 == 0 => *i += 1,
        Some(b) if b & 0xc0 == 0x80 => *i += 2,
        Some(_) => *i += 4,
        None => *i += 1,
    };
    if sig.first().is_some_and(|c| c & 0x10 != 0) {
        skip(&mut i);
    }
    skip(&mut i);
    while let Some(&b) = sig.get(i) {
        if b == 0x1f || b == 0x20 {
            i += 1;
            skip(&mut i);
        } else {
            return b;
        }
    }
    0
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
