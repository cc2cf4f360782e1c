//! Which functions the runtime's slow path cannot probe safely on Unix x64: those whose
//! signature passes or returns a SIMD type wider than 64 bits (docs/abi.md, "Vector values
//! on the slow path"). The runtime's `ProfileTailcallNaked` / `ProfileLeaveNaked` /
//! `ProfileEnterNaked` save and restore only the low 64 bits of XMM0–7 (`movsd`), while the
//! JIT keeps a vector it is about to pass to a fast tail callee in XMM0/XMM1 across the
//! Tailcall probe: the callee gets the vector with its upper bits zeroed. Decided once per
//! function at mapper time from its metadata signature (sig.rs), never on the hot path.

use eltrace_abi::ModuleID;

use super::sig::{self, SigType};
use super::token_name;
use crate::com::info::Info;
use crate::com::metadata::MetaImport;
use crate::com::modules::Modules;

/// SIMD types the JIT holds in one vector register wider than 64 bits (namespace and name
/// without the generic arity). `Vector64<T>` and `System.Numerics.Vector2` are 8 bytes: the
/// stubs keep them whole.
const WIDE_SIMD: &[&str] = &[
    "System.Runtime.Intrinsics.Vector128",
    "System.Runtime.Intrinsics.Vector256",
    "System.Runtime.Intrinsics.Vector512",
    "System.Numerics.Vector",
    "System.Numerics.Vector3",
    "System.Numerics.Vector4",
    "System.Numerics.Quaternion",
    "System.Numerics.Plane",
];

/// Whether a type name (as metadata spells it, possibly with a `` `N `` arity) is a wide
/// SIMD type.
pub fn is_wide_simd_name(name: &str) -> bool {
    let bare = name.split('`').next().unwrap_or(name);
    WIDE_SIMD.contains(&bare)
}

/// Whether a signature type is a wide SIMD value type, given a token → name resolver.
fn is_wide_simd(t: &SigType, name: &dyn Fn(u32) -> String) -> bool {
    match t {
        SigType::ValueType(tok) => is_wide_simd_name(&name(*tok)),
        SigType::GenericInst {
            value_type: true,
            token,
            ..
        } => is_wide_simd_name(&name(*token)),
        _ => false,
    }
}

/// Whether a parsed method signature passes or returns a wide SIMD value.
pub fn sig_has_wide_simd(msig: &sig::MethodSig, name: &dyn Fn(u32) -> String) -> bool {
    is_wide_simd(&msig.ret, name) || msig.params.iter().any(|p| is_wide_simd(p, name))
}

/// Whether the method `token` of `module` passes or returns a wide SIMD value.
pub fn method_has_wide_simd(
    info: &Info,
    modules: &Modules,
    module: ModuleID,
    token: u32,
) -> Result<bool, String> {
    let entry = modules.get(info, module)?;
    let md: &MetaImport = entry
        .import
        .as_ref()
        .ok_or_else(|| format!("no metadata for module {}", entry.file))?;
    let props = md
        .method_props(token)
        .map_err(|hr| format!("GetMethodProps({token:#010x}) failed: {hr:#010x}"))?;
    let msig = sig::parse_method_sig(&props.sig).map_err(|e| e.0.to_string())?;
    Ok(sig_has_wide_simd(&msig, &|tok| token_name(md, tok)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_simd_names() {
        assert!(is_wide_simd_name("System.Runtime.Intrinsics.Vector128`1"));
        assert!(is_wide_simd_name("System.Runtime.Intrinsics.Vector512`1"));
        assert!(is_wide_simd_name("System.Numerics.Vector`1"));
        assert!(is_wide_simd_name("System.Numerics.Vector4"));
        assert!(!is_wide_simd_name("System.Runtime.Intrinsics.Vector64`1"));
        assert!(!is_wide_simd_name("System.Numerics.Vector2"));
        assert!(!is_wide_simd_name("System.Int32"));
    }

    #[test]
    fn signatures() {
        // static int M(valuetype 0x01000005, int): typeref 5 named by the resolver.
        let name = |tok: u32| {
            if tok == 0x0100_0005 {
                "System.Runtime.Intrinsics.Vector128`1".to_string()
            } else {
                "Other".to_string()
            }
        };
        let with = sig::parse_method_sig(&[0x00, 2, 0x08, 0x15, 0x11, (5 << 2) | 1, 1, 0x05, 0x08])
            .unwrap();
        assert!(sig_has_wide_simd(&with, &name));
        let ret = sig::parse_method_sig(&[0x00, 0, 0x11, (5 << 2) | 1]).unwrap();
        assert!(sig_has_wide_simd(&ret, &name));
        let byref = sig::parse_method_sig(&[0x00, 1, 0x08, 0x10, 0x11, (5 << 2) | 1]).unwrap();
        assert!(!sig_has_wide_simd(&byref, &name));
        let other = sig::parse_method_sig(&[0x00, 1, 0x08, 0x11, (6 << 2) | 1]).unwrap();
        assert!(!sig_has_wide_simd(&other, &name));
    }
}
