//! Function naming for the FunctionIDMapper: FunctionID → module (cached per ModuleID, with
//! its IMetaDataImport and whether it is a framework module: com/modules.rs) → method, type
//! chain (nested types joined with `+`) and generic arity, as a [`FunctionRecord`] plus what
//! the selection globs need; and, for selected functions, the compiler state-machine flags
//! (com/machines.rs, cached per type).

use eltrace_abi::*;
use eltrace_trace::{FunctionFlags, FunctionRecord};

use super::continuation;
use super::info::Info;
use super::machines;
use super::metadata::MetaImport;
use super::modules::{Modules, type_name};
use crate::names;

/// The `<Module>` type that owns global functions.
const GLOBAL_TYPE: mdTypeDef = mdtTypeDef | 1;

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

impl Modules {
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

/// The type-def of a type named as `type_name` is (`Ns.Outer+Inner`), if the module defines it.
fn find_nested(md: &MetaImport, name: &str) -> Option<mdTypeDef> {
    let mut td = 0;
    for part in machines::nested_path(name) {
        td = md.find_type_def(part, td)?;
    }
    (td != 0).then_some(td)
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
