//! Sizes and field offsets of the `#[repr(C)]` types, per the team's structs.md (x86-64).

use std::mem::{align_of, offset_of, size_of};

use eltrace_abi::*;

#[test]
fn primitive_widths() {
    assert_eq!(size_of::<HRESULT>(), 4);
    assert_eq!(size_of::<ULONG>(), 4);
    assert_eq!(size_of::<DWORD>(), 4);
    assert_eq!(size_of::<BOOL>(), 4);
    assert_eq!(size_of::<WCHAR>(), 2);
    assert_eq!(size_of::<mdToken>(), 4);
    assert_eq!(size_of::<FunctionID>(), 8);
    assert_eq!(size_of::<COR_PRF_ELT_INFO>(), 8);
    assert_eq!(size_of::<COR_PRF_FRAME_INFO>(), 8);
    assert_eq!(size_of::<EVENTPIPE_SESSION>(), 8);
}

#[test]
fn guid_layout_and_text() {
    assert_eq!(size_of::<GUID>(), 16);
    assert_eq!(align_of::<GUID>(), 4);
    assert_eq!(offset_of!(GUID, data2), 4);
    assert_eq!(offset_of!(GUID, data3), 6);
    assert_eq!(offset_of!(GUID, data4), 8);
    let g = GUID::from_u128(0x176FBED1_A55C_4796_98CA_A9DA0EF883E7);
    assert_eq!(g.data1, 0x176FBED1);
    assert_eq!(g.data2, 0xA55C);
    assert_eq!(g.data3, 0x4796);
    assert_eq!(g.data4, [0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7]);
    assert_eq!(g.to_u128(), 0x176FBED1_A55C_4796_98CA_A9DA0EF883E7);
    assert_eq!(g.to_string(), "{176FBED1-A55C-4796-98CA-A9DA0EF883E7}");
    assert_eq!(format!("{g:?}"), g.to_string());
    assert_eq!(
        IID_IUnknown,
        GUID::new(0, 0, 0, [0xC0, 0, 0, 0, 0, 0, 0, 0x46])
    );
    assert_ne!(IID_IUnknown, IID_IClassFactory);
    assert_eq!(GUID::NULL, GUID::default());
}

#[test]
fn interface_pointer_is_one_word() {
    assert_eq!(size_of::<IUnknown>(), 8);
    assert_eq!(size_of::<ICorProfilerInfo3>(), 8);
    assert_eq!(offset_of!(ICorProfilerCallback11, vtbl), 0);
}

#[test]
fn function_id_or_client_id() {
    assert_eq!(size_of::<FunctionIDOrClientID>(), 8);
    assert_eq!(align_of::<FunctionIDOrClientID>(), 8);
    let v = FunctionIDOrClientID::new(0x1234);
    assert_eq!(v.value(), 0x1234);
    // SAFETY: both members are UINT_PTR.
    assert_eq!(unsafe { v.functionID }, 0x1234);
    assert_eq!(format!("{v:?}"), "FunctionIDOrClientID(0x1234)");
}

#[test]
fn argument_range_and_info() {
    assert_eq!(size_of::<COR_PRF_FUNCTION_ARGUMENT_RANGE>(), 16);
    assert_eq!(align_of::<COR_PRF_FUNCTION_ARGUMENT_RANGE>(), 8);
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_RANGE, startAddress), 0);
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_RANGE, length), 8);

    assert_eq!(size_of::<COR_PRF_FUNCTION_ARGUMENT_INFO>(), 24);
    assert_eq!(align_of::<COR_PRF_FUNCTION_ARGUMENT_INFO>(), 8);
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, numRanges), 0);
    assert_eq!(
        offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, totalArgumentSize),
        4
    );
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, ranges), 8);
}

macro_rules! layout {
    ($ty:ty, size $size:expr $(, $f:ident @ $off:expr)* $(,)?) => {
        assert_eq!(size_of::<$ty>(), $size, stringify!($ty));
        $( assert_eq!(offset_of!($ty, $f), $off, concat!(stringify!($ty), ".", stringify!($f))); )*
    };
}

#[test]
fn other_structs() {
    layout!(COR_IL_MAP, size 12, oldOffset @ 0, newOffset @ 4, fAccurate @ 8);
    layout!(COR_DEBUG_IL_TO_NATIVE_MAP, size 12, ilOffset @ 0, nativeStartOffset @ 4, nativeEndOffset @ 8);
    layout!(COR_FIELD_OFFSET, size 8, ridOfField @ 0, ulOffset @ 4);
    layout!(COR_PRF_CODE_INFO, size 16, startAddress @ 0, size @ 8);
    layout!(COR_PRF_FUNCTION, size 16, functionId @ 0, reJitId @ 8);
    layout!(COR_PRF_METHOD, size 16, moduleId @ 0, methodId @ 8);
    layout!(COR_PRF_GC_GENERATION_RANGE, size 32, generation @ 0, rangeStart @ 8, rangeLength @ 16, rangeLengthReserved @ 24);
    layout!(COR_PRF_NONGC_HEAP_RANGE, size 24, rangeStart @ 0, rangeLength @ 8, rangeLengthReserved @ 16);
    layout!(COR_PRF_EX_CLAUSE_INFO, size 32, clauseType @ 0, programCounter @ 8, framePointer @ 16, shadowStackPointer @ 24);
    layout!(COR_PRF_ASSEMBLY_REFERENCE_INFO, size 48, pbPublicKeyOrToken @ 0, cbPublicKeyOrToken @ 8,
        szName @ 16, pMetaData @ 24, pbHashValue @ 32, cbHashValue @ 40, dwAssemblyRefFlags @ 44);
    layout!(COR_PRF_EVENTPIPE_PROVIDER_CONFIG, size 32, providerName @ 0, keywords @ 8, loggingLevel @ 16, filterData @ 24);
    layout!(COR_PRF_EVENTPIPE_PARAM_DESC, size 16, r#type @ 0, elementType @ 4, name @ 8);
    layout!(COR_PRF_EVENT_DATA, size 16, ptr @ 0, size @ 8, reserved @ 12);
    layout!(COR_PRF_FILTER_DATA, size 16, Ptr @ 0, Size @ 8, Type @ 12);
    layout!(OSINFO, size 12, dwOSPlatformId @ 0, dwOSMajorVersion @ 4, dwOSMinorVersion @ 8);
    layout!(ASSEMBLYMETADATA, size 56, usMajorVersion @ 0, usMinorVersion @ 2, usBuildNumber @ 4,
        usRevisionNumber @ 6, szLocale @ 8, cbLocale @ 16, rProcessor @ 24, ulProcessor @ 32, rOS @ 40, ulOS @ 48);
}
