//! Function naming for the FunctionIDMapper: FunctionID → module (cached per ModuleID, with
//! its IMetaDataImport and whether it is a framework module) → method, type chain (nested
//! types joined with `+`) and generic arity, as a [`FunctionRecord`] plus what the selection
//! globs need; and, for selected functions, the compiler state-machine flags (com/machines.rs,
//! cached per type).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use eltrace_abi::*;
use eltrace_trace::{FunctionFlags, FunctionRecord};

use super::info::Info;
use super::machines;
use super::metadata::MetaImport;
use crate::names;
use crate::sys::lock;

/// The file whose directory is the framework directory (docs/design.md).
const CORELIB: &str = "System.Private.CoreLib.dll";
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
    canon: AtomicUsize,
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
    /// certain (see [`continuation_register`]); `None` otherwise.
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
            glob_name: names::glob_module_name(&file).to_string(),
            file,
            framework,
            import,
            machine_types: Mutex::new(BTreeMap::new()),
        });
        let mut map = lock(&self.map);
        Ok(Arc::clone(map.entry(module).or_insert(entry)))
    }

    /// How a generic method's code is instantiated: shared (a type argument is
    /// `System.__Canon`, so every reference type argument is one), or for one instantiation,
    /// and then whether every type argument is a CoreLib primitive (returned in a register,
    /// never through a buffer). `None` when the runtime cannot tell.
    fn instantiation(&self, info: &Info, function: FunctionID) -> Option<Inst> {
        let args = info.method_type_args(function)?;
        if args.is_empty() {
            return None;
        }
        let mut inst = Inst {
            shared: false,
            primitive: true,
        };
        for class in args {
            let canon = self.canon.load(Ordering::Relaxed);
            if canon != 0 && class == canon {
                inst.shared = true;
                continue;
            }
            let (module, td, _) = info.class_info(class).ok()?;
            let entry = self.get(info, module).ok()?;
            let name = type_name(entry.import.as_ref()?, td).ok()?;
            let corelib = entry
                .file
                .eq_ignore_ascii_case("System.Private.CoreLib.dll");
            if corelib && name == "System.__Canon" {
                self.canon.store(class, Ordering::Relaxed);
                inst.shared = true;
            } else if !(corelib && PRIMITIVES.contains(&name.as_str())) {
                inst.primitive = false;
            }
        }
        Some(inst)
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
        d.cont_reg = match continuation_register(&props.sig) {
            Some(Cont::Fixed(r)) => Some(r),
            // A generic method's shared code takes its instantiation (a method descriptor)
            // before the continuation; code for one instantiation does not.
            Some(Cont::Generic(r)) => self
                .instantiation(info, function)
                .map(|inst| r + u8::from(inst.shared)),
            Some(Cont::SharedOnly(r)) => match self.instantiation(info, function) {
                Some(Inst { shared: true, .. }) => Some(r + 1),
                Some(Inst {
                    primitive: true, ..
                }) => Some(r),
                _ => None,
            },
            None => None,
        };
        let arity = md.generic_param_count(fi.token).unwrap_or(0);
        d.record.method = names::method_name(&props.name, arity);
        if props.class != GLOBAL_TYPE && props.class & 0x00FF_FFFF != 0 {
            d.class = props.class;
            match type_name(md, props.class) {
                Ok(t) => d.record.type_name = t,
                Err(e) => return (d, Some(e)),
            }
        }
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

/// The CoreLib types that a method returns in a register (RAX or XMM0), never through a
/// return buffer.
const PRIMITIVES: [&str; 14] = [
    "System.Boolean",
    "System.Char",
    "System.SByte",
    "System.Byte",
    "System.Int16",
    "System.UInt16",
    "System.Int32",
    "System.UInt32",
    "System.Int64",
    "System.UInt64",
    "System.IntPtr",
    "System.UIntPtr",
    "System.Single",
    "System.Double",
];

/// A generic method's instantiation, as far as the continuation's register depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inst {
    /// Shared code: the instantiation argument comes before the continuation.
    shared: bool,
    /// Every type argument is a CoreLib primitive.
    primitive: bool,
}

/// Where a runtime-async variant's continuation is, from its signature alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cont {
    /// In this integer argument register.
    Fixed(u8),
    /// A generic method: in this register, or the next one when the code is shared (the
    /// instantiation argument comes first).
    Generic(u8),
    /// A generic method whose variant returns one of its type parameters: in the register
    /// after this one when the code is shared (the parameter is then a reference, returned
    /// in RAX), in this one for an instantiation over primitives; not certain otherwise (a
    /// struct may come back through a return buffer).
    SharedOnly(u8),
}

/// The integer argument register (0 RDI, 1 RSI, .. 5 R9: SysV x64) that holds a runtime-async
/// variant's hidden continuation argument at its Enter, from the method's signature, or `None`
/// where that is not certain. The runtime passes, in order, `this`, the return buffer, the
/// generic context and then the continuation, before the declared arguments (dotnet/runtime
/// `ArgIterator::GetAsyncContinuationArgOffset`; docs/abi.md "The async continuation
/// argument"). For a generic method the generic context comes only with shared code
/// ([`Cont::Generic`]: the caller asks the runtime). `None` for a variant that may return a
/// struct through a buffer: a Task or ValueTask of a value type or of a type parameter (of a
/// generic method: only its shared code is certain, where the parameter is a reference). The
/// caller rules out methods of generic types.
pub fn continuation_register(sig: &[u8]) -> Option<Cont> {
    let conv = *sig.first()?;
    if conv & 0x40 != 0 {
        return None;
    }
    let generic = conv & 0x10 != 0;
    let mut i = 1;
    if generic {
        compressed(sig, &mut i)?;
    }
    compressed(sig, &mut i)?;
    let mut b = *sig.get(i)?;
    while b == 0x1f || b == 0x20 {
        i += 1;
        compressed(sig, &mut i)?;
        b = *sig.get(i)?;
    }
    i += 1;
    let no_buffer = match b {
        // void, primitives, string, object, native ints: no Task at all (a variant with no
        // thunk), or Task / ValueTask (a class or value type token): the variant returns void.
        0x01..=0x0e | 0x18 | 0x19 | 0x1c | 0x12 | 0x11 => true,
        // A method type parameter (CoreLib's `T TransparentAwait<T>(Task<T>)`, a variant with
        // no thunk): a reference in shared code only.
        0x1e if generic => return Some(Cont::SharedOnly(u8::from(conv & 0x20 != 0))),
        0x15 => {
            // Task<T> / ValueTask<T>: the variant returns T.
            i += 1;
            compressed(sig, &mut i)?;
            if compressed(sig, &mut i)? != 1 {
                return None;
            }
            match *sig.get(i)? {
                0x02..=0x0e | 0x18 | 0x19 | 0x1c | 0x12 | 0x1d | 0x14 => true,
                0x15 => *sig.get(i + 1)? == 0x12,
                // A method type parameter: a reference in shared code only.
                0x1e if generic => return Some(Cont::SharedOnly(u8::from(conv & 0x20 != 0))),
                _ => false,
            }
        }
        _ => false,
    };
    let reg = u8::from(conv & 0x20 != 0);
    no_buffer.then_some(if generic {
        Cont::Generic(reg)
    } else {
        Cont::Fixed(reg)
    })
}

/// Reads one compressed unsigned integer of a signature blob at `*i` (ECMA-335 II.23.2).
fn compressed(sig: &[u8], i: &mut usize) -> Option<u32> {
    let b = *sig.get(*i)? as u32;
    let (v, n) = if b & 0x80 == 0 {
        (b, 1)
    } else if b & 0xc0 == 0x80 {
        (((b & 0x3f) << 8) | *sig.get(*i + 1)? as u32, 2)
    } else {
        let rest = sig.get(*i + 1..*i + 4)?;
        (
            ((b & 0x1f) << 24) | (rest[0] as u32) << 16 | (rest[1] as u32) << 8 | rest[2] as u32,
            4,
        )
    };
    *i += n;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_registers_from_signatures() {
        use Cont::*;
        // static Task<long> M(int): RDI.
        assert_eq!(
            continuation_register(&[0x00, 0x01, 0x15, 0x12, 0x09, 0x01, 0x0a, 0x08]),
            Some(Fixed(0))
        );
        // instance ValueTask<int> ReadAsync(Memory<byte>, CancellationToken): RSI.
        let read = [
            0x20, 0x02, 0x15, 0x11, 0x21, 0x01, 0x08, 0x15, 0x11, 0x25, 0x01, 0x05, 0x11, 0x29,
        ];
        assert_eq!(continuation_register(&read), Some(Fixed(1)));
        // instance Task M(): RSI; static void TransparentAwait(object): RDI.
        assert_eq!(
            continuation_register(&[0x20, 0x00, 0x12, 0x0d]),
            Some(Fixed(1))
        );
        assert_eq!(
            continuation_register(&[0x00, 0x01, 0x01, 0x1c]),
            Some(Fixed(0))
        );
        // static T TransparentAwait<T>(Task<T>) (.NET 11 CoreLib): RSI in shared code only.
        let transparent = [
            0x10, 0x01, 0x01, 0x1e, 0x00, 0x15, 0x12, 0x8f, 0xf0, 0x01, 0x1e, 0x00,
        ];
        assert_eq!(continuation_register(&transparent), Some(SharedOnly(0)));
        // Generic methods: static void TransparentAwait<T>(T): RDI, or RSI in shared code;
        // static Task<T[]> WhenAll<T>(IEnumerable<Task<T>>) likewise.
        assert_eq!(
            continuation_register(&[0x10, 0x01, 0x01, 0x01, 0x1e, 0x00]),
            Some(Generic(0))
        );
        let when_all = [
            0x10, 0x01, 0x01, 0x15, 0x12, 0x09, 0x01, 0x1d, 0x1e, 0x00, 0x15, 0x12, 0x0d, 0x01,
            0x15, 0x12, 0x09, 0x01, 0x1e, 0x00,
        ];
        assert_eq!(continuation_register(&when_all), Some(Generic(0)));
        // instance Task<T> M<T>(): certain only in shared code, one past `this`.
        assert_eq!(
            continuation_register(&[0x30, 0x01, 0x00, 0x15, 0x12, 0x09, 0x01, 0x1e, 0x00]),
            Some(SharedOnly(1))
        );
        // ValueTask<SomeStruct> (a return buffer may come first), Task<T> of a type
        // parameter of the type, explicit this: not certain.
        assert_eq!(
            continuation_register(&[0x00, 0x00, 0x15, 0x11, 0x21, 0x01, 0x11, 0x31]),
            None
        );
        assert_eq!(
            continuation_register(&[0x20, 0x00, 0x15, 0x12, 0x09, 0x01, 0x13, 0x00]),
            None
        );
        assert_eq!(continuation_register(&[0x60, 0x00, 0x12, 0x0d]), None);
        assert_eq!(continuation_register(&[]), None);
    }

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
