//! Primitive typedefs of the Unix PAL and the profiling API, with the widths the
//! runtime uses on Linux x64 (LP64 with the PAL forcing `LONG`/`ULONG`/`DWORD` to 32 bits).
//!
//! The CLR spellings are kept so that signatures read like corprof.idl and cor.h.

use core::ffi::{c_char, c_void};

use crate::com::GUID;

/// Declares CLR-spelled type aliases, each with the `allow` its spelling needs.
macro_rules! clr_types {
    ($($(#[$m:meta])* $name:ident = $ty:ty;)*) => {
        $(
            $(#[$m])*
            #[allow(non_camel_case_types)]
            pub type $name = $ty;
        )*
    };
}

clr_types! {
    /// COM status code; negative values are failures.
    HRESULT = i32;
    /// 32-bit unsigned (`unsigned int` in the PAL).
    ULONG = u32;
    /// 32-bit unsigned.
    ULONG32 = u32;
    /// 32-bit unsigned.
    DWORD = u32;
    /// 32-bit signed (`int` in the PAL).
    LONG = i32;
    /// 32-bit signed boolean: `0` is false, anything else true.
    BOOL = i32;
    /// 16-bit unsigned.
    USHORT = u16;
    /// 8-bit unsigned.
    BYTE = u8;
    /// UTF-16 code unit (`char16_t` in the PAL).
    WCHAR = u16;
    /// Pointer-sized unsigned integer.
    UINT_PTR = usize;
    /// Pointer-sized unsigned integer.
    SIZE_T = usize;

    /// `const BYTE *`.
    LPCBYTE = *const BYTE;
    /// `WCHAR *`, a (usually output) UTF-16 buffer.
    LPWSTR = *mut WCHAR;
    /// `const WCHAR *`, a NUL-terminated UTF-16 string.
    LPCWSTR = *const WCHAR;
    /// `const GUID &`, passed as a pointer.
    REFIID = *const GUID;
    /// `const GUID &`, passed as a pointer.
    REFGUID = *const GUID;
    /// `const GUID &`, passed as a pointer.
    REFCLSID = *const GUID;
    /// `const GUID *`.
    LPCGUID = *const GUID;
    /// OS handle (`void *`).
    HANDLE = *mut c_void;

    /// Runtime ID of a process (opaque, pointer-sized).
    ProcessID = UINT_PTR;
    /// Runtime ID of an assembly.
    AssemblyID = UINT_PTR;
    /// Runtime ID of an application domain.
    AppDomainID = UINT_PTR;
    /// Runtime ID of a module.
    ModuleID = UINT_PTR;
    /// Runtime ID of a (possibly instantiated) class.
    ClassID = UINT_PTR;
    /// Runtime ID of a managed thread (not the OS thread id).
    ThreadID = UINT_PTR;
    /// Runtime ID of a context.
    ContextID = UINT_PTR;
    /// Runtime ID of a (possibly instantiated) function.
    FunctionID = UINT_PTR;
    /// Address of a managed object; changes when the GC moves it.
    ObjectID = UINT_PTR;
    /// Runtime ID of a GC handle.
    GCHandleID = UINT_PTR;
    /// ID of a ReJIT version of a function.
    ReJITID = UINT_PTR;
    /// Opaque handle passed to the ELT3 WithInfo hooks; valid only during that call.
    COR_PRF_ELT_INFO = UINT_PTR;
    /// Opaque frame handle; valid only during the callback that produced it.
    COR_PRF_FRAME_INFO = UINT_PTR;
    /// Handle created by `ICorProfilerInfo13::CreateHandle`.
    ObjectHandleID = *mut *mut c_void;
    /// EventPipe provider handle.
    EVENTPIPE_PROVIDER = UINT_PTR;
    /// EventPipe event handle.
    EVENTPIPE_EVENT = UINT_PTR;
    /// EventPipe session handle (64-bit on every platform).
    EVENTPIPE_SESSION = u64;

    /// Metadata token: table in the top byte, row in the low 24 bits.
    mdToken = u32;
    /// Token of a module (`mdtModule`).
    mdModule = mdToken;
    /// Token of a TypeRef.
    mdTypeRef = mdToken;
    /// Token of a TypeDef.
    mdTypeDef = mdToken;
    /// Token of a field definition.
    mdFieldDef = mdToken;
    /// Token of a method definition.
    mdMethodDef = mdToken;
    /// Token of a parameter definition.
    mdParamDef = mdToken;
    /// Token of an InterfaceImpl row.
    mdInterfaceImpl = mdToken;
    /// Token of a MemberRef.
    mdMemberRef = mdToken;
    /// Token of a custom attribute.
    mdCustomAttribute = mdToken;
    /// Token of a permission set.
    mdPermission = mdToken;
    /// Token of a stand-alone signature.
    mdSignature = mdToken;
    /// Token of an event.
    mdEvent = mdToken;
    /// Token of a property.
    mdProperty = mdToken;
    /// Token of a ModuleRef.
    mdModuleRef = mdToken;
    /// Token of a TypeSpec.
    mdTypeSpec = mdToken;
    /// Token of a user string.
    mdString = mdToken;
    /// Token of a generic parameter.
    mdGenericParam = mdToken;
    /// Token of a MethodSpec.
    mdMethodSpec = mdToken;
    /// Token of a generic parameter constraint.
    mdGenericParamConstraint = mdToken;
    /// Pointer to a metadata signature blob.
    PCCOR_SIGNATURE = *const u8;
    /// Metadata enumeration handle; release it with `IMetaDataImport::CloseEnum`.
    HCORENUM = *mut c_void;
    /// Pointer to a constant's value blob.
    UVCP_CONSTANT = *const c_void;
    /// NUL-terminated UTF-8 string owned by the metadata.
    MDUTF8CSTR = *const c_char;
    /// Element type as corprof.idl passes it (`ULONG`); the `ELEMENT_TYPE_*` constants are
    /// the signature bytes (`u8`), so compare with `u32::from(ELEMENT_TYPE_X)`.
    CorElementType = ULONG;

    /// `COR_PRF_JIT_CACHE` enumeration (32-bit).
    COR_PRF_JIT_CACHE = u32;
    /// `COR_PRF_TRANSITION_REASON` enumeration.
    COR_PRF_TRANSITION_REASON = u32;
    /// `COR_PRF_SUSPEND_REASON` enumeration.
    COR_PRF_SUSPEND_REASON = u32;
    /// `COR_PRF_RUNTIME_TYPE` enumeration.
    COR_PRF_RUNTIME_TYPE = u32;
    /// `COR_PRF_REJIT_FLAGS` enumeration.
    COR_PRF_REJIT_FLAGS = u32;
    /// `COR_PRF_CODEGEN_FLAGS` enumeration.
    COR_PRF_CODEGEN_FLAGS = u32;
    /// `COR_PRF_STATIC_TYPE` enumeration.
    COR_PRF_STATIC_TYPE = u32;
    /// `COR_PRF_GC_ROOT_KIND` enumeration.
    COR_PRF_GC_ROOT_KIND = u32;
    /// `COR_PRF_GC_ROOT_FLAGS` enumeration.
    COR_PRF_GC_ROOT_FLAGS = u32;
    /// `COR_PRF_FINALIZER_FLAGS` enumeration.
    COR_PRF_FINALIZER_FLAGS = u32;
    /// `COR_PRF_GC_GENERATION` enumeration.
    COR_PRF_GC_GENERATION = u32;
    /// `COR_PRF_CLAUSE_TYPE` enumeration.
    COR_PRF_CLAUSE_TYPE = u32;
    /// `COR_PRF_GC_REASON` enumeration.
    COR_PRF_GC_REASON = u32;
    /// `COR_PRF_MODULE_FLAGS` enumeration.
    COR_PRF_MODULE_FLAGS = u32;
    /// `COR_PRF_HANDLE_TYPE` enumeration.
    COR_PRF_HANDLE_TYPE = u32;
    /// `COR_PRF_EVENTPIPE_PARAM_TYPE` enumeration.
    COR_PRF_EVENTPIPE_PARAM_TYPE = u32;
    /// `COR_PRF_EVENTPIPE_LEVEL` enumeration.
    COR_PRF_EVENTPIPE_LEVEL = u32;
    /// `COR_PRF_SNAPSHOT_INFO` flags (DoStackSnapshot's `infoFlags`, a `ULONG32`).
    COR_PRF_SNAPSHOT_INFO = u32;
}
