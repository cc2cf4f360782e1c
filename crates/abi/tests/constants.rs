//! HRESULT, flag and corhdr constants checked against `tests/data/constants.tsv`
//! (a copy of the team's facts file).

use std::collections::BTreeMap;

use eltrace_abi::*;

/// The constant's bit pattern, widened to u64 (HRESULTs as their unsigned 32-bit form).
trait Bits {
    fn bits(self) -> u64;
}
impl Bits for i32 {
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
}
impl Bits for u32 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
}
impl Bits for u16 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
}
impl Bits for u8 {
    fn bits(self) -> u64 {
        u64::from(self)
    }
}
impl Bits for usize {
    fn bits(self) -> u64 {
        self as u64
    }
}
fn bits<T: Bits>(v: T) -> u64 {
    v.bits()
}

/// One entry per constants.tsv row: (tsv name, value of the crate constant), generated.
fn ours() -> Vec<(&'static str, u64)> {
    let v: &[(&str, u64)] = include!("data/constants_list.rs");
    v.to_vec()
}

/// name -> (value, group) from the tsv copy.
fn tsv() -> BTreeMap<String, (u64, String)> {
    let mut out = BTreeMap::new();
    let mut header = true;
    for line in include_str!("data/constants.tsv").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if header {
            assert_eq!(line, "name\tvalue_hex\tgroup");
            header = false;
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "bad line {line:?}");
        let hex = f[1].split_whitespace().next().unwrap();
        let v = u64::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap();
        let old = out.insert(f[0].to_string(), (v, f[2].to_string()));
        assert!(old.is_none(), "duplicate {}", f[0]);
    }
    out
}

#[test]
fn every_tsv_constant_is_defined_with_its_value() {
    let t = tsv();
    let ours = ours();
    assert_eq!(ours.len(), t.len());
    for (name, value) in &ours {
        let (want, group) = t.get(*name).unwrap_or_else(|| panic!("{name} not in tsv"));
        assert_eq!(value, want, "{name} ({group}): {value:#x} != {want:#x}");
    }
}

#[test]
fn profiler_flags_and_hresults() {
    let t = tsv();
    let v = |n: &str| t[n].0;
    assert_eq!(
        bits(COR_PRF_MONITOR_ENTERLEAVE),
        v("COR_PRF_MONITOR_ENTERLEAVE")
    );
    assert_eq!(
        bits(COR_PRF_MONITOR_EXCEPTIONS),
        v("COR_PRF_MONITOR_EXCEPTIONS")
    );
    assert_eq!(bits(COR_PRF_MONITOR_THREADS), v("COR_PRF_MONITOR_THREADS"));
    assert_eq!(
        bits(COR_PRF_MONITOR_JIT_COMPILATION),
        v("COR_PRF_MONITOR_JIT_COMPILATION")
    );
    assert_eq!(
        bits(COR_PRF_ENABLE_FUNCTION_ARGS),
        v("COR_PRF_ENABLE_FUNCTION_ARGS")
    );
    assert_eq!(
        bits(COR_PRF_ENABLE_FUNCTION_RETVAL),
        v("COR_PRF_ENABLE_FUNCTION_RETVAL")
    );
    assert_eq!(
        bits(COR_PRF_ENABLE_FRAME_INFO),
        v("COR_PRF_ENABLE_FRAME_INFO")
    );
    assert_eq!(
        bits(COR_PRF_DISABLE_INLINING),
        v("COR_PRF_DISABLE_INLINING")
    );
    assert_eq!(
        bits(COR_PRF_ENABLE_STACK_SNAPSHOT),
        v("COR_PRF_ENABLE_STACK_SNAPSHOT")
    );
    assert_eq!(
        bits(CORPROF_E_PROFILER_CANCEL_ACTIVATION),
        v("CORPROF_E_PROFILER_CANCEL_ACTIVATION")
    );
    assert_eq!(bits(CORPROF_E_INCONSISTENT_WITH_FLAGS), 0x8013_1374);
    assert_eq!(CORPROF_E_INCONSISTENT_WITH_FLAGS.signum(), -1);
    assert_eq!(S_OK, 0);
    assert_eq!(S_FALSE, 1);
    assert_eq!(bits(E_FAIL), 0x8000_4005);
    assert_eq!(bits(E_INVALIDARG), 0x8007_0057);
    assert_eq!(bits(E_NOINTERFACE), 0x8000_4002);
    assert_eq!(bits(E_OUTOFMEMORY), 0x8007_000E);
    assert_eq!(bits(E_NOTIMPL), 0x8000_4001);
    assert_eq!(bits(E_UNEXPECTED), 0x8000_FFFF);
    // not in the tsv: winerror.h values
    assert_eq!(bits(E_POINTER), 0x8000_4003);
    assert_eq!(bits(CLASS_E_NOAGGREGATION), 0x8004_0110);
    assert_eq!(bits(CLASS_E_CLASSNOTAVAILABLE), 0x8004_0111);
    assert_eq!(
        HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER),
        HRESULT_ERROR_INSUFFICIENT_BUFFER
    );
    assert_eq!(
        bits(HRESULT_ERROR_INSUFFICIENT_BUFFER),
        v("HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER)")
    );
    assert_eq!(HRESULT_FROM_WIN32(0), S_OK);
    assert!(SUCCEEDED(S_FALSE) && FAILED(E_FAIL) && !FAILED(S_OK));
}

#[test]
fn every_corprof_e_and_flag_group_is_covered() {
    // Every COR_PRF_MONITOR / HIGH / ENABLE / DISABLE flag and CORPROF_E_* of the tsv
    // is in the generated list (so it exists in the crate).
    let names: Vec<&str> = ours().iter().map(|(n, _)| *n).collect();
    for (name, (_, group)) in tsv() {
        if name.starts_with("CORPROF_E_")
            || name.starts_with("COR_PRF_MONITOR_")
            || name.starts_with("COR_PRF_HIGH_")
            || name.starts_with("COR_PRF_ENABLE_")
            || name.starts_with("COR_PRF_DISABLE_")
        {
            assert!(names.contains(&name.as_str()), "{name} ({group}) missing");
        }
    }
}

#[test]
fn corhdr_values() {
    assert_eq!(miAsync, 0x2000);
    assert_eq!(METHOD_IMPL_ASYNC, 0x2000);
    assert_eq!(ofRead, 0);
    assert_eq!(mdStatic, 0x10);
    assert_eq!(tdNestedPublic, 2);
    assert_eq!(ELEMENT_TYPE_GENERICINST, 0x15);
    assert_eq!(IMAGE_CEE_CS_CALLCONV_HASTHIS, 0x20);
    assert_eq!(mdtMethodDef, 0x0600_0000);
    assert_eq!(PROFILE_PLATFORM_SPECIFIC_DATA__flags, 0xA8);
}
