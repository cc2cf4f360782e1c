//! The profiler's COM callback object: a process-lifetime `static` whose vtable is the full
//! ICorProfilerCallback11 chain (the runtime QIs for Callback2, then 11, 10, … 3 and uses the
//! highest that succeeds), generated from one table. Slots eltrace implements dispatch to the
//! `Profiler` methods (profiler.rs); every other slot is a trampoline returning `S_OK`.
//!
//! Every trampoline catches panics: none may unwind into the runtime.

use core::ffi::c_void;

use eltrace_abi::*;

use crate::profiler::PROFILER;

/// The callback object the runtime holds. It is a `static` and is never freed: the runtime
/// may still call into it during shutdown races (other threads running while Shutdown runs,
/// late callbacks after Release), so reference counting cannot decide its lifetime.
/// `AddRef`/`Release` are therefore no-ops returning constants.
#[repr(C)]
pub struct CallbackObject {
    vtbl: *const ICorProfilerCallback11Vtbl,
}

// SAFETY: the object is immutable (one pointer to an immutable static vtable).
unsafe impl Sync for CallbackObject {}

pub static CALLBACK_OBJECT: CallbackObject = CallbackObject {
    vtbl: &CALLBACK_VTABLE,
};

/// The interface pointer handed to the runtime.
pub fn callback_ptr() -> *mut c_void {
    &CALLBACK_OBJECT as *const CallbackObject as *mut c_void
}

/// The interfaces the callback object answers QueryInterface for.
const CALLBACK_IIDS: [GUID; 12] = [
    IID_IUnknown,
    IID_ICorProfilerCallback,
    IID_ICorProfilerCallback2,
    IID_ICorProfilerCallback3,
    IID_ICorProfilerCallback4,
    IID_ICorProfilerCallback5,
    IID_ICorProfilerCallback6,
    IID_ICorProfilerCallback7,
    IID_ICorProfilerCallback8,
    IID_ICorProfilerCallback9,
    IID_ICorProfilerCallback10,
    IID_ICorProfilerCallback11,
];

/// QueryInterface on the callback object, shared with the class factory's CreateInstance.
///
/// # Safety
/// `riid` must be null or point to a GUID; `ppv` must be null or writable.
pub unsafe fn query_callback(riid: REFIID, ppv: *mut *mut c_void) -> HRESULT {
    if ppv.is_null() {
        return E_POINTER;
    }
    // SAFETY: `ppv` is non-null and writable per the contract.
    unsafe { *ppv = core::ptr::null_mut() };
    if riid.is_null() {
        return E_POINTER;
    }
    // SAFETY: `riid` is non-null and points to a GUID per the contract.
    let iid = unsafe { *riid };
    if CALLBACK_IIDS.contains(&iid) {
        // SAFETY: as above.
        unsafe { *ppv = callback_ptr() };
        S_OK
    } else {
        E_NOINTERFACE
    }
}

/// Runs a callback body, turning a panic into `E_FAIL` (counted as an internal error).
fn guard(f: impl FnOnce() -> HRESULT) -> HRESULT {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(hr) => hr,
        Err(_) => {
            if let Some(rec) = crate::recorder::Recorder::global() {
                rec.internal_error("callback-panic", "a profiler callback panicked");
            }
            E_FAIL
        }
    }
}

unsafe extern "C" fn query_interface(
    _this: *mut c_void,
    riid: REFIID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: the runtime passes a GUID pointer and an out pointer (null-checked inside).
    guard(|| unsafe { query_callback(riid, ppv) })
}

unsafe extern "C" fn add_ref(_this: *mut c_void) -> ULONG {
    1
}

unsafe extern "C" fn release(_this: *mut c_void) -> ULONG {
    1
}

/// Generates one trampoline per slot (after IUnknown's three) and the vtable. A row
/// `Slot(args) => method;` dispatches to `PROFILER.method(args)` (an `unsafe fn` taking the
/// runtime's arguments unchanged); a row without `=> method` returns `S_OK`.
macro_rules! callback_table {
    ( $( $slot:ident ( $( $p:ident : $t:ty ),* ) $( => $imp:ident )? ; )* ) => {
        #[allow(non_snake_case)]
        mod trampolines {
            use super::*;
            $(
                pub unsafe extern "C" fn $slot(_this: *mut c_void $(, $p: $t)*) -> HRESULT {
                    callback_table!(@body $($imp)? ; $($p),*)
                }
            )*
        }

        /// The ICorProfilerCallback11 vtable (slot order checked by the abi crate).
        pub static CALLBACK_VTABLE: ICorProfilerCallback11Vtbl = ICorProfilerCallback11Vtbl {
            QueryInterface: query_interface,
            AddRef: add_ref,
            Release: release,
            $( $slot: trampolines::$slot, )*
        };
    };
    (@body $imp:ident ; $($p:ident),*) => {
        // SAFETY: the runtime calls this slot with the arguments the IDL declares, which is
        // the contract of the `Profiler` method.
        guard(|| unsafe { PROFILER.$imp($($p),*) })
    };
    (@body ; $($p:ident),*) => {{
        $( let _ = $p; )*
        S_OK
    }};
}

callback_table! {
    Initialize(a: *mut IUnknown) => initialize;
    Shutdown() => shutdown;
    AppDomainCreationStarted(a: AppDomainID);
    AppDomainCreationFinished(a: AppDomainID, b: HRESULT);
    AppDomainShutdownStarted(a: AppDomainID);
    AppDomainShutdownFinished(a: AppDomainID, b: HRESULT);
    AssemblyLoadStarted(a: AssemblyID);
    AssemblyLoadFinished(a: AssemblyID, b: HRESULT);
    AssemblyUnloadStarted(a: AssemblyID);
    AssemblyUnloadFinished(a: AssemblyID, b: HRESULT);
    ModuleLoadStarted(a: ModuleID);
    ModuleLoadFinished(a: ModuleID, b: HRESULT);
    ModuleUnloadStarted(a: ModuleID);
    ModuleUnloadFinished(a: ModuleID, b: HRESULT);
    ModuleAttachedToAssembly(a: ModuleID, b: AssemblyID);
    ClassLoadStarted(a: ClassID);
    ClassLoadFinished(a: ClassID, b: HRESULT);
    ClassUnloadStarted(a: ClassID);
    ClassUnloadFinished(a: ClassID, b: HRESULT);
    FunctionUnloadStarted(a: FunctionID);
    JITCompilationStarted(a: FunctionID, b: BOOL) => jit_compilation_started;
    JITCompilationFinished(a: FunctionID, b: HRESULT, c: BOOL);
    JITCachedFunctionSearchStarted(a: FunctionID, b: *mut BOOL);
    JITCachedFunctionSearchFinished(a: FunctionID, b: COR_PRF_JIT_CACHE);
    JITFunctionPitched(a: FunctionID);
    JITInlining(a: FunctionID, b: FunctionID, c: *mut BOOL) => jit_inlining;
    ThreadCreated(a: ThreadID);
    ThreadDestroyed(a: ThreadID);
    ThreadAssignedToOSThread(a: ThreadID, b: DWORD);
    RemotingClientInvocationStarted();
    RemotingClientSendingMessage(a: *mut GUID, b: BOOL);
    RemotingClientReceivingReply(a: *mut GUID, b: BOOL);
    RemotingClientInvocationFinished();
    RemotingServerReceivingMessage(a: *mut GUID, b: BOOL);
    RemotingServerInvocationStarted();
    RemotingServerInvocationReturned();
    RemotingServerSendingReply(a: *mut GUID, b: BOOL);
    UnmanagedToManagedTransition(a: FunctionID, b: COR_PRF_TRANSITION_REASON);
    ManagedToUnmanagedTransition(a: FunctionID, b: COR_PRF_TRANSITION_REASON);
    RuntimeSuspendStarted(a: COR_PRF_SUSPEND_REASON);
    RuntimeSuspendFinished();
    RuntimeSuspendAborted();
    RuntimeResumeStarted();
    RuntimeResumeFinished();
    RuntimeThreadSuspended(a: ThreadID);
    RuntimeThreadResumed(a: ThreadID);
    MovedReferences(a: ULONG, b: *mut ObjectID, c: *mut ObjectID, d: *mut ULONG);
    ObjectAllocated(a: ObjectID, b: ClassID);
    ObjectsAllocatedByClass(a: ULONG, b: *mut ClassID, c: *mut ULONG);
    ObjectReferences(a: ObjectID, b: ClassID, c: ULONG, d: *mut ObjectID);
    RootReferences(a: ULONG, b: *mut ObjectID);
    ExceptionThrown(a: ObjectID) => exception_thrown;
    ExceptionSearchFunctionEnter(a: FunctionID);
    ExceptionSearchFunctionLeave();
    ExceptionSearchFilterEnter(a: FunctionID);
    ExceptionSearchFilterLeave();
    ExceptionSearchCatcherFound(a: FunctionID);
    ExceptionOSHandlerEnter(a: UINT_PTR);
    ExceptionOSHandlerLeave(a: UINT_PTR);
    ExceptionUnwindFunctionEnter(a: FunctionID) => exception_unwind_function_enter;
    ExceptionUnwindFunctionLeave() => exception_unwind_function_leave;
    ExceptionUnwindFinallyEnter(a: FunctionID);
    ExceptionUnwindFinallyLeave();
    ExceptionCatcherEnter(a: FunctionID, b: ObjectID) => exception_catcher_enter;
    ExceptionCatcherLeave();
    COMClassicVTableCreated(a: ClassID, b: REFGUID, c: *mut c_void, d: ULONG);
    COMClassicVTableDestroyed(a: ClassID, b: REFGUID, c: *mut c_void);
    ExceptionCLRCatcherFound();
    ExceptionCLRCatcherExecute();
    ThreadNameChanged(a: ThreadID, b: ULONG, c: *mut WCHAR) => thread_name_changed;
    GarbageCollectionStarted(a: i32, b: *mut BOOL, c: COR_PRF_GC_REASON) => garbage_collection_started;
    SurvivingReferences(a: ULONG, b: *mut ObjectID, c: *mut ULONG);
    GarbageCollectionFinished();
    FinalizeableObjectQueued(a: DWORD, b: ObjectID);
    RootReferences2(a: ULONG, b: *mut ObjectID, c: *mut COR_PRF_GC_ROOT_KIND, d: *mut COR_PRF_GC_ROOT_FLAGS, e: *mut UINT_PTR);
    HandleCreated(a: GCHandleID, b: ObjectID);
    HandleDestroyed(a: GCHandleID);
    InitializeForAttach(a: *mut IUnknown, b: *mut c_void, c: u32) => initialize_for_attach;
    ProfilerAttachComplete();
    ProfilerDetachSucceeded();
    ReJITCompilationStarted(a: FunctionID, b: ReJITID, c: BOOL);
    GetReJITParameters(a: ModuleID, b: mdMethodDef, c: *mut ICorProfilerFunctionControl);
    ReJITCompilationFinished(a: FunctionID, b: ReJITID, c: HRESULT, d: BOOL);
    ReJITError(a: ModuleID, b: mdMethodDef, c: FunctionID, d: HRESULT);
    MovedReferences2(a: ULONG, b: *mut ObjectID, c: *mut ObjectID, d: *mut SIZE_T);
    SurvivingReferences2(a: ULONG, b: *mut ObjectID, c: *mut SIZE_T);
    ConditionalWeakTableElementReferences(a: ULONG, b: *mut ObjectID, c: *mut ObjectID, d: *mut GCHandleID);
    GetAssemblyReferences(a: *const WCHAR, b: *mut ICorProfilerAssemblyReferenceProvider);
    ModuleInMemorySymbolsUpdated(a: ModuleID);
    DynamicMethodJITCompilationStarted(a: FunctionID, b: BOOL, c: LPCBYTE, d: ULONG);
    DynamicMethodJITCompilationFinished(a: FunctionID, b: HRESULT, c: BOOL);
    DynamicMethodUnloaded(a: FunctionID);
    EventPipeEventDelivered(a: EVENTPIPE_PROVIDER, b: DWORD, c: DWORD, d: ULONG, e: LPCBYTE, f: ULONG, g: LPCBYTE, h: LPCGUID, i: LPCGUID, j: ThreadID, k: ULONG, l: *mut UINT_PTR);
    EventPipeProviderCreated(a: EVENTPIPE_PROVIDER);
    LoadAsNotificationOnly(a: *mut BOOL) => load_as_notification_only;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vtable_has_every_slot() {
        assert_eq!(
            core::mem::size_of::<ICorProfilerCallback11Vtbl>(),
            ICorProfilerCallback11Vtbl::SLOT_NAMES.len() * 8
        );
        assert_eq!(ICorProfilerCallback11Vtbl::SLOT_NAMES.len(), 98);
    }

    #[test]
    fn answers_every_callback_iid() {
        for iid in CALLBACK_IIDS {
            let mut p = core::ptr::null_mut();
            // SAFETY: valid GUID and out pointer.
            assert_eq!(unsafe { query_callback(&iid, &mut p) }, S_OK);
            assert_eq!(p, callback_ptr());
        }
        let mut p = callback_ptr();
        // SAFETY: valid GUID and out pointer.
        let hr = unsafe { query_callback(&IID_ICorProfilerInfo3, &mut p) };
        assert_eq!(hr, E_NOINTERFACE);
        assert!(p.is_null());
    }
}
