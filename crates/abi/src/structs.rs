//! `#[repr(C)]` structs of corprof.idl and cor.h, laid out as on x86-64
//! (sizes and offsets are checked in `tests/layout.rs`).

use core::ffi::c_void;

use crate::types::*;

/// Declares CLR-spelled `#[repr(C)]` structs, each with the `allow`s its spelling needs.
macro_rules! clr_structs {
    ($($(#[$m:meta])* struct $name:ident { $($(#[$fm:meta])* $f:ident : $t:ty,)* })*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            #[derive(Clone, Copy, Debug)]
            #[allow(non_camel_case_types, non_snake_case)]
            pub struct $name { $($(#[$fm])* pub $f: $t,)* }
        )*
    };
}

clr_structs! {
    /// One argument's (or the return value's) bytes. Size 16.
    struct COR_PRF_FUNCTION_ARGUMENT_RANGE {
        /// Address of the argument's bytes (not the value).
        startAddress: UINT_PTR,
        /// Number of bytes.
        length: ULONG,
    }

    /// Header of the variable-length argument description `GetFunctionEnter3Info` fills.
    /// Size 24 with the declared one range; the runtime asks for
    /// `24 + 16 * (args + has_this)` bytes.
    struct COR_PRF_FUNCTION_ARGUMENT_INFO {
        /// Number of entries in `ranges` (really variable length).
        numRanges: ULONG,
        /// Sum of the argument sizes.
        totalArgumentSize: ULONG,
        /// First of `numRanges` ranges (`this` first, then the arguments in order).
        ranges: [COR_PRF_FUNCTION_ARGUMENT_RANGE; 1],
    }

    /// IL offset remapping entry. Size 12.
    struct COR_IL_MAP {
        /// Old IL offset.
        oldOffset: ULONG32,
        /// New IL offset.
        newOffset: ULONG32,
        /// Whether the mapping is accurate.
        fAccurate: BOOL,
    }

    /// IL-to-native map entry. Size 12.
    struct COR_DEBUG_IL_TO_NATIVE_MAP {
        /// IL offset (or NO_MAPPING / PROLOG / EPILOG).
        ilOffset: ULONG32,
        /// Native start offset.
        nativeStartOffset: ULONG32,
        /// Native end offset.
        nativeEndOffset: ULONG32,
    }

    /// Field offset entry. Size 8.
    struct COR_FIELD_OFFSET {
        /// The field's token.
        ridOfField: mdFieldDef,
        /// Offset within the object.
        ulOffset: ULONG,
    }

    /// A block of native code. Size 16.
    struct COR_PRF_CODE_INFO {
        /// Start address.
        startAddress: UINT_PTR,
        /// Size in bytes.
        size: SIZE_T,
    }

    /// A function and one of its ReJIT versions. Size 16.
    struct COR_PRF_FUNCTION {
        /// The function.
        functionId: FunctionID,
        /// The ReJIT version (0 for the original).
        reJitId: ReJITID,
    }

    /// A method by module and token. Size 16.
    struct COR_PRF_METHOD {
        /// The module.
        moduleId: ModuleID,
        /// The method's token.
        methodId: mdMethodDef,
    }

    /// A GC generation's address range. Size 32.
    struct COR_PRF_GC_GENERATION_RANGE {
        /// The generation.
        generation: COR_PRF_GC_GENERATION,
        /// Start of the range.
        rangeStart: ObjectID,
        /// Used length.
        rangeLength: UINT_PTR,
        /// Reserved length.
        rangeLengthReserved: UINT_PTR,
    }

    /// A non-GC (frozen) heap range. Size 24.
    struct COR_PRF_NONGC_HEAP_RANGE {
        /// Start of the range.
        rangeStart: ObjectID,
        /// Used length.
        rangeLength: UINT_PTR,
        /// Reserved length.
        rangeLengthReserved: UINT_PTR,
    }

    /// The exception clause a notification refers to. Size 32.
    struct COR_PRF_EX_CLAUSE_INFO {
        /// Clause kind.
        clauseType: COR_PRF_CLAUSE_TYPE,
        /// Native address of the clause.
        programCounter: UINT_PTR,
        /// Frame pointer of the clause's frame.
        framePointer: UINT_PTR,
        /// Shadow stack pointer (IA64; unused).
        shadowStackPointer: UINT_PTR,
    }

    /// OS description (cor.h). Size 12.
    struct OSINFO {
        /// Platform id.
        dwOSPlatformId: DWORD,
        /// Major version.
        dwOSMajorVersion: DWORD,
        /// Minor version.
        dwOSMinorVersion: DWORD,
    }

    /// Assembly version and culture (cor.h). Size 56.
    struct ASSEMBLYMETADATA {
        /// Major version.
        usMajorVersion: USHORT,
        /// Minor version.
        usMinorVersion: USHORT,
        /// Build number.
        usBuildNumber: USHORT,
        /// Revision number.
        usRevisionNumber: USHORT,
        /// Culture name buffer.
        szLocale: LPWSTR,
        /// Its size in WCHARs.
        cbLocale: ULONG,
        /// Processor ids.
        rProcessor: *mut DWORD,
        /// Their count.
        ulProcessor: ULONG,
        /// OS descriptions.
        rOS: *mut OSINFO,
        /// Their count.
        ulOS: ULONG,
    }

    /// Argument of `ICorProfilerAssemblyReferenceProvider::AddAssemblyReference`. Size 48.
    struct COR_PRF_ASSEMBLY_REFERENCE_INFO {
        /// Public key or token.
        pbPublicKeyOrToken: *mut c_void,
        /// Its length.
        cbPublicKeyOrToken: ULONG,
        /// Assembly name.
        szName: LPCWSTR,
        /// Version and culture.
        pMetaData: *mut ASSEMBLYMETADATA,
        /// Hash value.
        pbHashValue: *mut c_void,
        /// Its length.
        cbHashValue: ULONG,
        /// Flags.
        dwAssemblyRefFlags: DWORD,
    }

    /// EventPipe provider configuration. Size 32.
    struct COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
        /// Provider name.
        providerName: *const WCHAR,
        /// Keywords.
        keywords: u64,
        /// Level.
        loggingLevel: u32,
        /// Filter data string.
        filterData: *const WCHAR,
    }

    /// EventPipe event parameter description. Size 16.
    struct COR_PRF_EVENTPIPE_PARAM_DESC {
        /// A COR_PRF_EVENTPIPE_PARAM_TYPE.
        r#type: u32,
        /// Element type for arrays.
        elementType: u32,
        /// Parameter name.
        name: *const WCHAR,
    }

    /// One EventPipe payload piece. Size 16.
    struct COR_PRF_EVENT_DATA {
        /// Address of the data.
        ptr: u64,
        /// Its size.
        size: u32,
        /// Reserved.
        reserved: u32,
    }

    /// EventPipe provider callback filter data. Size 16.
    struct COR_PRF_FILTER_DATA {
        /// Address of the data.
        Ptr: u64,
        /// Its size.
        Size: u32,
        /// Its type.
        Type: u32,
    }
}
