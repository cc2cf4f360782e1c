//! Loading: the exported `DllGetClassObject` and the static class factory that hands out the
//! callback object. Only eltrace's CLSID is served.

use core::ffi::c_void;

use eltrace_abi::*;

use super::callback::query_callback;

/// eltrace's CLSID (`eltrace_trace::protocol::CLSID`, docs/design.md).
pub const CLSID_ELTRACE: GUID = GUID::from_u128(eltrace_trace::protocol::CLSID);

/// The class factory; static and never freed (AddRef/Release are no-ops, as for the callback
/// object).
#[repr(C)]
pub struct FactoryObject {
    vtbl: *const IClassFactoryVtbl,
}

// SAFETY: immutable; one pointer to an immutable static vtable.
unsafe impl Sync for FactoryObject {}

static FACTORY_VTABLE: IClassFactoryVtbl = IClassFactoryVtbl {
    QueryInterface: factory_query_interface,
    AddRef: factory_add_ref,
    Release: factory_release,
    CreateInstance: factory_create_instance,
    LockServer: factory_lock_server,
};

pub static FACTORY: FactoryObject = FactoryObject {
    vtbl: &FACTORY_VTABLE,
};

fn factory_ptr() -> *mut c_void {
    &FACTORY as *const FactoryObject as *mut c_void
}

fn guarded(f: impl FnOnce() -> HRESULT) -> HRESULT {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(E_FAIL)
}

/// # Safety
/// `riid` null or a GUID; `ppv` null or writable.
unsafe fn query_factory(riid: REFIID, ppv: *mut *mut c_void) -> HRESULT {
    if ppv.is_null() {
        return E_POINTER;
    }
    // SAFETY: non-null out pointer per the contract.
    unsafe { *ppv = core::ptr::null_mut() };
    if riid.is_null() {
        return E_POINTER;
    }
    // SAFETY: non-null GUID pointer per the contract.
    let iid = unsafe { *riid };
    if iid == IID_IUnknown || iid == IID_IClassFactory {
        // SAFETY: as above.
        unsafe { *ppv = factory_ptr() };
        S_OK
    } else {
        E_NOINTERFACE
    }
}

unsafe extern "C" fn factory_query_interface(
    _this: *mut c_void,
    riid: REFIID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract: a GUID pointer and an out pointer (both null-checked).
    guarded(|| unsafe { query_factory(riid, ppv) })
}

unsafe extern "C" fn factory_add_ref(_this: *mut c_void) -> ULONG {
    1
}

unsafe extern "C" fn factory_release(_this: *mut c_void) -> ULONG {
    1
}

unsafe extern "C" fn factory_create_instance(
    _this: *mut c_void,
    outer: *mut IUnknown,
    riid: REFIID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    guarded(|| {
        if !outer.is_null() {
            if !ppv.is_null() {
                // SAFETY: non-null out pointer from the caller.
                unsafe { *ppv = core::ptr::null_mut() };
            }
            return CLASS_E_NOAGGREGATION;
        }
        // SAFETY: COM contract: a GUID pointer and an out pointer (both null-checked).
        unsafe { query_callback(riid, ppv) }
    })
}

unsafe extern "C" fn factory_lock_server(_this: *mut c_void, _lock: BOOL) -> HRESULT {
    S_OK
}

/// The export the runtime looks up. Answers only [`CLSID_ELTRACE`].
///
/// # Safety
/// Called by the runtime with a CLSID pointer, an IID pointer and an out pointer (each is
/// null-checked).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DllGetClassObject(
    rclsid: REFCLSID,
    riid: REFIID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    guarded(|| {
        if ppv.is_null() {
            return E_POINTER;
        }
        // SAFETY: non-null out pointer from the runtime.
        unsafe { *ppv = core::ptr::null_mut() };
        if rclsid.is_null() || riid.is_null() {
            return E_POINTER;
        }
        // SAFETY: non-null CLSID pointer from the runtime.
        if unsafe { *rclsid } != CLSID_ELTRACE {
            return CLASS_E_CLASSNOTAVAILABLE;
        }
        // SAFETY: checked pointers from the runtime.
        unsafe { query_factory(riid, ppv) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_only_our_clsid() {
        let mut p = core::ptr::null_mut();
        let other = GUID::from_u128(0x1234);
        // SAFETY: valid pointers.
        unsafe {
            assert_eq!(
                DllGetClassObject(&other, &IID_IClassFactory, &mut p),
                CLASS_E_CLASSNOTAVAILABLE
            );
            assert!(p.is_null());
            assert_eq!(
                DllGetClassObject(&CLSID_ELTRACE, &IID_IClassFactory, &mut p),
                S_OK
            );
            assert_eq!(p, factory_ptr());
            let f = p as *mut IClassFactory;
            let mut cb = core::ptr::null_mut();
            let hr = ((*(*f).vtbl).CreateInstance)(
                f.cast(),
                core::ptr::null_mut(),
                &IID_ICorProfilerCallback2,
                &mut cb,
            );
            assert_eq!(hr, S_OK);
            assert_eq!(cb, super::super::callback::callback_ptr());
            assert_eq!(
                DllGetClassObject(&CLSID_ELTRACE, &IID_IClassFactory, core::ptr::null_mut()),
                E_POINTER
            );
        }
    }
}
