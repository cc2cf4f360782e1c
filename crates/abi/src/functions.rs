//! Function-pointer types the profiling API passes around (corprof.idl), and the
//! [`FunctionIDOrClientID`] union the ELT3 hooks receive.
//!
//! All are `unsafe extern "C"`: `STDMETHODCALLTYPE`/`__stdcall` mean nothing on x86-64,
//! so on Unix x64 they use the SysV C convention. **Exception:** hooks registered with
//! `SetEnterLeaveFunctionHooks3` (the fast path, [`FunctionEnter3`], [`FunctionLeave3`],
//! [`FunctionTailcall3`]) are called directly from JIT-compiled code with the JIT's own
//! probe convention, not the C one: on Unix x64 Enter gets its `FunctionIDOrClientID` in
//! R14 (caller SP in R15), Leave/Tailcall in RDI (caller SP in RSI), and every argument
//! register (Enter) or return register (Leave/Tailcall) must be preserved. A plain Rust
//! `extern "C" fn` is therefore wrong for them; only naked assembly stubs fit, cast to
//! these types for registration. The `...WithInfo` hooks, ELT2 hooks, the mappers and
//! [`StackSnapshotCallback`] are called from C++ and are ordinary C functions.

use core::ffi::c_void;

use crate::structs::{
    COR_PRF_FILTER_DATA, COR_PRF_FUNCTION_ARGUMENT_INFO, COR_PRF_FUNCTION_ARGUMENT_RANGE,
};
use crate::types::*;

/// `typedef union { FunctionID functionID; UINT_PTR clientID; } FunctionIDOrClientID;`
///
/// Eight bytes, classified INTEGER: it travels in one general-purpose register, exactly
/// like a `usize`. Which member is live: the FunctionID when no FunctionIDMapper is set,
/// otherwise the mapper's return value (the client ID).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub union FunctionIDOrClientID {
    /// The runtime's FunctionID (no mapper installed).
    pub functionID: FunctionID,
    /// The value the FunctionIDMapper returned.
    pub clientID: UINT_PTR,
}

impl FunctionIDOrClientID {
    /// Wraps a raw value (either member; both are `UINT_PTR`).
    pub const fn new(value: UINT_PTR) -> Self {
        FunctionIDOrClientID { clientID: value }
    }

    /// The raw value, whichever member is live.
    pub const fn value(self) -> UINT_PTR {
        // SAFETY: both members are `UINT_PTR` at offset 0 and every bit pattern is valid.
        unsafe { self.clientID }
    }
}

impl core::fmt::Debug for FunctionIDOrClientID {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FunctionIDOrClientID({:#x})", self.value())
    }
}

/// Deprecated V1 mapper: returns the client ID; sets `*pbHookFunction` to FALSE to skip probes.
#[allow(non_snake_case)]
pub type FunctionIDMapper =
    unsafe extern "C" fn(funcId: FunctionID, pbHookFunction: *mut BOOL) -> UINT_PTR;
/// Maps a FunctionID to the client ID the ELT hooks receive; `*pbHookFunction = FALSE`
/// leaves the function without probes. Must not return 0 unless it clears `*pbHookFunction`,
/// and must return the same value when called again for the same function.
#[allow(non_snake_case)]
pub type FunctionIDMapper2 = unsafe extern "C" fn(
    funcId: FunctionID,
    clientData: *mut c_void,
    pbHookFunction: *mut BOOL,
) -> UINT_PTR;

/// Deprecated V1 Enter hook.
#[allow(non_snake_case)]
pub type FunctionEnter = unsafe extern "C" fn(funcID: FunctionID);
/// Deprecated V1 Leave hook.
#[allow(non_snake_case)]
pub type FunctionLeave = unsafe extern "C" fn(funcID: FunctionID);
/// Deprecated V1 Tailcall hook.
#[allow(non_snake_case)]
pub type FunctionTailcall = unsafe extern "C" fn(funcID: FunctionID);

/// Deprecated V2 Enter hook.
#[allow(non_snake_case)]
pub type FunctionEnter2 = unsafe extern "C" fn(
    funcId: FunctionID,
    clientData: UINT_PTR,
    func: COR_PRF_FRAME_INFO,
    argumentInfo: *mut COR_PRF_FUNCTION_ARGUMENT_INFO,
);
/// Deprecated V2 Leave hook.
#[allow(non_snake_case)]
pub type FunctionLeave2 = unsafe extern "C" fn(
    funcId: FunctionID,
    clientData: UINT_PTR,
    func: COR_PRF_FRAME_INFO,
    retvalRange: *mut COR_PRF_FUNCTION_ARGUMENT_RANGE,
);
/// Deprecated V2 Tailcall hook.
#[allow(non_snake_case)]
pub type FunctionTailcall2 =
    unsafe extern "C" fn(funcId: FunctionID, clientData: UINT_PTR, func: COR_PRF_FRAME_INFO);

/// ELT3 fast-path Enter hook. **Not called with the C convention** (see the module docs).
#[allow(non_snake_case)]
pub type FunctionEnter3 = unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID);
/// ELT3 fast-path Leave hook. **Not called with the C convention** (see the module docs).
#[allow(non_snake_case)]
pub type FunctionLeave3 = unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID);
/// ELT3 fast-path Tailcall hook. **Not called with the C convention** (see the module docs).
#[allow(non_snake_case)]
pub type FunctionTailcall3 = unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID);

/// ELT3 slow-path Enter hook (ordinary C call); `eltInfo` is valid only during the call.
#[allow(non_snake_case)]
pub type FunctionEnter3WithInfo =
    unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID, eltInfo: COR_PRF_ELT_INFO);
/// ELT3 slow-path Leave hook (ordinary C call).
#[allow(non_snake_case)]
pub type FunctionLeave3WithInfo =
    unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID, eltInfo: COR_PRF_ELT_INFO);
/// ELT3 slow-path Tailcall hook (ordinary C call).
#[allow(non_snake_case)]
pub type FunctionTailcall3WithInfo =
    unsafe extern "C" fn(functionIDOrClientID: FunctionIDOrClientID, eltInfo: COR_PRF_ELT_INFO);

/// Called by `DoStackSnapshot` per frame; must return exactly `S_OK` to continue
/// (anything else aborts the walk with `CORPROF_E_STACKSNAPSHOT_ABORTED`).
/// `funcId == 0` marks a run of native frames.
#[allow(non_snake_case)]
pub type StackSnapshotCallback = unsafe extern "C" fn(
    funcId: FunctionID,
    ip: UINT_PTR,
    frameInfo: COR_PRF_FRAME_INFO,
    contextSize: ULONG32,
    context: *mut BYTE,
    clientData: *mut c_void,
) -> HRESULT;

/// `ICorProfilerInfo10::EnumerateObjectReferences` callback; return FALSE to stop.
#[allow(non_snake_case)]
pub type ObjectReferenceCallback =
    unsafe extern "C" fn(root: ObjectID, reference: *mut ObjectID, clientData: *mut c_void) -> BOOL;

/// `ICorProfilerInfo15::EnumerateGCHeapObjects` callback; return FALSE to stop.
#[allow(non_snake_case)]
pub type ObjectCallback =
    unsafe extern "C" fn(object: ObjectID, callbackState: *mut c_void) -> BOOL;

/// `ICorProfilerInfo14::EventPipeCreateProvider2` callback.
#[allow(non_snake_case)]
pub type EventPipeProviderCallback = unsafe extern "C" fn(
    source_id: *const u8,
    is_enabled: u32,
    level: u8,
    match_any_keywords: u64,
    match_all_keywords: u64,
    filter_data: *mut COR_PRF_FILTER_DATA,
    callback_data: *mut c_void,
);

/// The export the runtime looks up with `dlsym(lib, "DllGetClassObject")`; it is called
/// with the CLSID from `CORECLR_PROFILER` and `IID_IClassFactory`.
#[allow(non_snake_case)]
pub type DllGetClassObjectFn =
    unsafe extern "C" fn(rclsid: REFCLSID, riid: REFIID, ppv: *mut *mut c_void) -> HRESULT;
