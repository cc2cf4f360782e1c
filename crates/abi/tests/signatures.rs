//! Exact types of the vtable fields and function types the profiler relies on.
//! Each `let` only compiles if the field has exactly that function-pointer type.

#![allow(clippy::type_complexity)]

use core::ffi::c_void;

use eltrace_abi::*;

type This = *mut c_void;

fn unknown(v: &IUnknownVtbl) {
    let _: unsafe extern "C" fn(This, *const GUID, *mut *mut c_void) -> HRESULT = v.QueryInterface;
    let _: unsafe extern "C" fn(This) -> ULONG = v.AddRef;
    let _: unsafe extern "C" fn(This) -> ULONG = v.Release;
}

fn class_factory(v: &IClassFactoryVtbl) {
    let _: unsafe extern "C" fn(This, *mut IUnknown, *const GUID, *mut *mut c_void) -> HRESULT =
        v.CreateInstance;
    let _: unsafe extern "C" fn(This, BOOL) -> HRESULT = v.LockServer;
}

fn callback(v: &ICorProfilerCallback11Vtbl) {
    let _: unsafe extern "C" fn(This, *mut IUnknown) -> HRESULT = v.Initialize;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.Shutdown;
    let _: unsafe extern "C" fn(This, ModuleID, HRESULT) -> HRESULT = v.ModuleLoadFinished;
    let _: unsafe extern "C" fn(This, FunctionID, BOOL) -> HRESULT = v.JITCompilationStarted;
    let _: unsafe extern "C" fn(This, FunctionID, HRESULT, BOOL) -> HRESULT =
        v.JITCompilationFinished;
    let _: unsafe extern "C" fn(This, FunctionID, *mut BOOL) -> HRESULT =
        v.JITCachedFunctionSearchStarted;
    let _: unsafe extern "C" fn(This, FunctionID, FunctionID, *mut BOOL) -> HRESULT = v.JITInlining;
    let _: unsafe extern "C" fn(This, ThreadID) -> HRESULT = v.ThreadCreated;
    let _: unsafe extern "C" fn(This, ThreadID) -> HRESULT = v.ThreadDestroyed;
    let _: unsafe extern "C" fn(This, ThreadID, DWORD) -> HRESULT = v.ThreadAssignedToOSThread;
    let _: unsafe extern "C" fn(This, ThreadID, ULONG, *mut WCHAR) -> HRESULT = v.ThreadNameChanged;
    let _: unsafe extern "C" fn(This, ObjectID) -> HRESULT = v.ExceptionThrown;
    let _: unsafe extern "C" fn(This, FunctionID) -> HRESULT = v.ExceptionUnwindFunctionEnter;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.ExceptionUnwindFunctionLeave;
    let _: unsafe extern "C" fn(This, FunctionID, ObjectID) -> HRESULT = v.ExceptionCatcherEnter;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.ExceptionCatcherLeave;
    let _: unsafe extern "C" fn(This, COR_PRF_SUSPEND_REASON) -> HRESULT = v.RuntimeSuspendStarted;
    let _: unsafe extern "C" fn(This, i32, *mut BOOL, COR_PRF_GC_REASON) -> HRESULT =
        v.GarbageCollectionStarted;
    let _: unsafe extern "C" fn(This, *mut IUnknown, *mut c_void, u32) -> HRESULT =
        v.InitializeForAttach;
    let _: unsafe extern "C" fn(This, *mut BOOL) -> HRESULT = v.LoadAsNotificationOnly;
}

fn info(v: &ICorProfilerInfo15Vtbl) {
    let _: unsafe extern "C" fn(This, DWORD) -> HRESULT = v.SetEventMask;
    let _: unsafe extern "C" fn(This, *mut DWORD) -> HRESULT = v.GetEventMask;
    let _: unsafe extern "C" fn(
        This,
        FunctionID,
        *mut ClassID,
        *mut ModuleID,
        *mut mdToken,
    ) -> HRESULT = v.GetFunctionInfo;
    let _: unsafe extern "C" fn(
        This,
        ModuleID,
        *mut *const u8,
        ULONG,
        *mut ULONG,
        *mut WCHAR,
        *mut AssemblyID,
    ) -> HRESULT = v.GetModuleInfo;
    let _: unsafe extern "C" fn(This, ModuleID, DWORD, *const GUID, *mut *mut IUnknown) -> HRESULT =
        v.GetModuleMetaData;
    let _: unsafe extern "C" fn(This, *mut ThreadID) -> HRESULT = v.GetCurrentThreadID;
    let _: unsafe extern "C" fn(This, ThreadID, *mut DWORD) -> HRESULT = v.GetThreadInfo;
    let _: unsafe extern "C" fn(This, *const u8, *mut FunctionID) -> HRESULT = v.GetFunctionFromIP;
    let _: unsafe extern "C" fn(This, ClassID, *mut ModuleID, *mut mdTypeDef) -> HRESULT =
        v.GetClassIDInfo;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.ForceGC;
    let _: unsafe extern "C" fn(
        This,
        FunctionID,
        COR_PRF_FRAME_INFO,
        *mut ClassID,
        *mut ModuleID,
        *mut mdToken,
        ULONG32,
        *mut ULONG32,
        *mut ClassID,
    ) -> HRESULT = v.GetFunctionInfo2;
    let _: unsafe extern "C" fn(
        This,
        ThreadID,
        Option<StackSnapshotCallback>,
        ULONG32,
        *mut c_void,
        *mut BYTE,
        ULONG32,
    ) -> HRESULT = v.DoStackSnapshot;
    let _: unsafe extern "C" fn(
        This,
        ClassID,
        *mut ModuleID,
        *mut mdTypeDef,
        *mut ClassID,
        ULONG32,
        *mut ULONG32,
        *mut ClassID,
    ) -> HRESULT = v.GetClassIDInfo2;
    let _: unsafe extern "C" fn(
        This,
        Option<FunctionEnter3>,
        Option<FunctionLeave3>,
        Option<FunctionTailcall3>,
    ) -> HRESULT = v.SetEnterLeaveFunctionHooks3;
    let _: unsafe extern "C" fn(
        This,
        Option<FunctionEnter3WithInfo>,
        Option<FunctionLeave3WithInfo>,
        Option<FunctionTailcall3WithInfo>,
    ) -> HRESULT = v.SetEnterLeaveFunctionHooks3WithInfo;
    let _: unsafe extern "C" fn(This, Option<FunctionIDMapper2>, *mut c_void) -> HRESULT =
        v.SetFunctionIDMapper2;
    let _: unsafe extern "C" fn(
        This,
        FunctionID,
        COR_PRF_ELT_INFO,
        *mut COR_PRF_FRAME_INFO,
        *mut ULONG,
        *mut COR_PRF_FUNCTION_ARGUMENT_INFO,
    ) -> HRESULT = v.GetFunctionEnter3Info;
    let _: unsafe extern "C" fn(
        This,
        FunctionID,
        COR_PRF_ELT_INFO,
        *mut COR_PRF_FRAME_INFO,
        *mut COR_PRF_FUNCTION_ARGUMENT_RANGE,
    ) -> HRESULT = v.GetFunctionLeave3Info;
    let _: unsafe extern "C" fn(
        This,
        FunctionID,
        COR_PRF_ELT_INFO,
        *mut COR_PRF_FRAME_INFO,
    ) -> HRESULT = v.GetFunctionTailcall3Info;
    let _: unsafe extern "C" fn(
        This,
        *mut USHORT,
        *mut COR_PRF_RUNTIME_TYPE,
        *mut USHORT,
        *mut USHORT,
        *mut USHORT,
        *mut USHORT,
        ULONG,
        *mut ULONG,
        *mut WCHAR,
    ) -> HRESULT = v.GetRuntimeInformation;
    let _: unsafe extern "C" fn(This, *mut DWORD, *mut DWORD) -> HRESULT = v.GetEventMask2;
    let _: unsafe extern "C" fn(This, DWORD, DWORD) -> HRESULT = v.SetEventMask2;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.SuspendRuntime;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.ResumeRuntime;
    let _: unsafe extern "C" fn(This) -> HRESULT = v.InitializeCurrentThread;
    let _: unsafe extern "C" fn(This, *const u8, *mut FunctionID, *mut ReJITID) -> HRESULT =
        v.GetFunctionFromIP2;
}

fn metadata(v: &IMetaDataImport2Vtbl) {
    let _: unsafe extern "C" fn(This, HCORENUM) = v.CloseEnum;
    let _: unsafe extern "C" fn(This, mdToken) -> BOOL = v.IsValidToken;
    let _: unsafe extern "C" fn(
        This,
        mdMethodDef,
        *mut mdTypeDef,
        *mut WCHAR,
        ULONG,
        *mut ULONG,
        *mut DWORD,
        *mut *const u8,
        *mut ULONG,
        *mut ULONG,
        *mut DWORD,
    ) -> HRESULT = v.GetMethodProps;
    let _: unsafe extern "C" fn(
        This,
        mdTypeDef,
        *mut WCHAR,
        ULONG,
        *mut ULONG,
        *mut DWORD,
        *mut mdToken,
    ) -> HRESULT = v.GetTypeDefProps;
    let _: unsafe extern "C" fn(This, mdTypeDef, *mut mdTypeDef) -> HRESULT = v.GetNestedClassProps;
    let _: unsafe extern "C" fn(
        This,
        mdTypeRef,
        *mut mdToken,
        *mut WCHAR,
        ULONG,
        *mut ULONG,
    ) -> HRESULT = v.GetTypeRefProps;
    let _: unsafe extern "C" fn(This, *mut WCHAR, ULONG, *mut ULONG, *mut GUID) -> HRESULT =
        v.GetScopeProps;
    let _: unsafe extern "C" fn(This, *mut mdModule) -> HRESULT = v.GetModuleFromScope;
    let _: unsafe extern "C" fn(
        This,
        *mut HCORENUM,
        mdToken,
        *mut mdGenericParam,
        ULONG,
        *mut ULONG,
    ) -> HRESULT = v.EnumGenericParams;
    let _: unsafe extern "C" fn(
        This,
        mdGenericParam,
        *mut ULONG,
        *mut DWORD,
        *mut mdToken,
        *mut DWORD,
        *mut WCHAR,
        ULONG,
        *mut ULONG,
    ) -> HRESULT = v.GetGenericParamProps;
    let _: unsafe extern "C" fn(This, mdToken, *mut MDUTF8CSTR) -> HRESULT = v.GetNameFromToken;
    let _: unsafe extern "C" fn(This, mdSignature, *mut *const u8, *mut ULONG) -> HRESULT =
        v.GetSigFromToken;
}

fn hook_types() {
    let _: Option<unsafe extern "C" fn(FunctionID, *mut c_void, *mut BOOL) -> UINT_PTR> =
        None::<FunctionIDMapper2>;
    let _: Option<unsafe extern "C" fn(FunctionIDOrClientID)> = None::<FunctionEnter3>;
    let _: Option<unsafe extern "C" fn(FunctionIDOrClientID, COR_PRF_ELT_INFO)> =
        None::<FunctionEnter3WithInfo>;
    let _: Option<unsafe extern "C" fn(FunctionIDOrClientID, COR_PRF_ELT_INFO)> =
        None::<FunctionLeave3WithInfo>;
    let _: Option<unsafe extern "C" fn(FunctionIDOrClientID, COR_PRF_ELT_INFO)> =
        None::<FunctionTailcall3WithInfo>;
    let _: Option<
        unsafe extern "C" fn(
            FunctionID,
            UINT_PTR,
            COR_PRF_FRAME_INFO,
            ULONG32,
            *mut BYTE,
            *mut c_void,
        ) -> HRESULT,
    > = None::<StackSnapshotCallback>;
    let _: Option<unsafe extern "C" fn(*const GUID, *const GUID, *mut *mut c_void) -> HRESULT> =
        None::<DllGetClassObjectFn>;
}

#[test]
fn signatures_compile() {
    // The checks are at compile time; reference the functions so they are type-checked.
    let _ = (unknown, class_factory, callback, info, metadata, hook_types);
    hook_types();
}

// A fake COM object: a Rust vtable called through an interface pointer, the way the
// runtime calls the profiler and the profiler calls the runtime.
unsafe extern "C" fn fake_qi(_this: This, _riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    // SAFETY: the test passes a valid out pointer.
    unsafe { *ppv = core::ptr::null_mut() };
    E_NOINTERFACE
}
unsafe extern "C" fn fake_add_ref(this: This) -> ULONG {
    // SAFETY: `this` points at the test's `Fake`, whose first field is the vtable pointer.
    let fake = unsafe { &mut *this.cast::<Fake>() };
    fake.refs += 1;
    fake.refs
}
unsafe extern "C" fn fake_release(this: This) -> ULONG {
    // SAFETY: as in `fake_add_ref`.
    let fake = unsafe { &mut *this.cast::<Fake>() };
    fake.refs -= 1;
    fake.refs
}

static FAKE_VTBL: IUnknownVtbl = IUnknownVtbl {
    QueryInterface: fake_qi,
    AddRef: fake_add_ref,
    Release: fake_release,
};

#[repr(C)]
struct Fake {
    vtbl: *const IUnknownVtbl,
    refs: ULONG,
}

#[test]
fn call_through_an_interface_pointer() {
    let mut fake = Fake {
        vtbl: &FAKE_VTBL,
        refs: 1,
    };
    let p: *mut IUnknown = (&raw mut fake).cast();
    let mut out: *mut c_void = (&raw mut fake.refs).cast();
    // SAFETY: `p` points at `fake`, whose first word is a valid IUnknown vtable pointer.
    unsafe {
        assert_eq!(((*(*p).vtbl).AddRef)(p.cast()), 2);
        assert_eq!(((*(*p).vtbl).Release)(p.cast()), 1);
        assert_eq!(
            ((*(*p).vtbl).QueryInterface)(p.cast(), &IID_ICorProfilerInfo3, &mut out),
            E_NOINTERFACE
        );
    }
    assert!(out.is_null());
    assert_eq!(fake.refs, 1);
}
