//! Safe wrappers over the runtime's ICorProfilerInfo interface (the highest of 15..3 the
//! runtime offers) for the few calls eltrace makes. Vtables of later versions extend earlier
//! ones, so every call below goes through the ICorProfilerInfo3 prefix.

use core::ffi::c_void;

use eltrace_abi::*;

use super::metadata::MetaImport;
use crate::names;

/// The IIDs to try, highest version first.
const INFO_IIDS: [(u32, GUID); 13] = [
    (15, IID_ICorProfilerInfo15),
    (14, IID_ICorProfilerInfo14),
    (13, IID_ICorProfilerInfo13),
    (12, IID_ICorProfilerInfo12),
    (11, IID_ICorProfilerInfo11),
    (10, IID_ICorProfilerInfo10),
    (9, IID_ICorProfilerInfo9),
    (8, IID_ICorProfilerInfo8),
    (7, IID_ICorProfilerInfo7),
    (6, IID_ICorProfilerInfo6),
    (5, IID_ICorProfilerInfo5),
    (4, IID_ICorProfilerInfo4),
    (3, IID_ICorProfilerInfo3),
];

/// A live ICorProfilerInfoN pointer (N ≥ 3). Invariant: `ptr` came from a successful
/// QueryInterface and is never released, so it stays valid for the life of the runtime.
pub struct Info {
    ptr: *mut ICorProfilerInfo3,
    pub version: u32,
}

// SAFETY: ICorProfilerInfo is free-threaded (callable from any thread) per the profiling API.
unsafe impl Send for Info {}
// SAFETY: see Send.
unsafe impl Sync for Info {}

/// What `GetClassIDInfo2` returns.
pub struct ClassInfo {
    pub module: ModuleID,
    pub token: mdTypeDef,
    /// The parent class (0 for `System.Object`).
    pub parent: ClassID,
    /// Its type arguments (at most 8).
    pub args: Vec<ClassID>,
}

/// What `GetFunctionInfo` returns.
pub struct FunctionInfo {
    pub module: ModuleID,
    pub token: mdToken,
}

impl Info {
    /// QIs `unk` for the highest ICorProfilerInfo version, 15 down to 3.
    ///
    /// # Safety
    /// `unk` must be null or the live IUnknown the runtime passed to Initialize.
    pub unsafe fn query(unk: *mut IUnknown) -> Option<Info> {
        if unk.is_null() {
            return None;
        }
        for (version, iid) in INFO_IIDS {
            let mut out: *mut c_void = core::ptr::null_mut();
            // SAFETY: `unk` is a live COM object; QueryInterface takes an IID and out pointer.
            let hr = unsafe { ((*(*unk).vtbl).QueryInterface)(unk.cast(), &iid, &mut out) };
            if SUCCEEDED(hr) && !out.is_null() {
                return Some(Info {
                    ptr: out.cast(),
                    version,
                });
            }
        }
        None
    }

    /// The interface pointer, for the check-mode experiments (`crate::check`), which make
    /// calls eltrace itself never makes. Valid for the life of the runtime (type invariant).
    pub fn raw(&self) -> *mut ICorProfilerInfo3 {
        self.ptr
    }

    fn vt(&self) -> &ICorProfilerInfo3Vtbl {
        // SAFETY: `ptr` is a live interface pointer (type invariant); its vtable starts with
        // the ICorProfilerInfo3 slots for every N ≥ 3.
        unsafe { &*(*self.ptr).vtbl }
    }

    fn this(&self) -> *mut c_void {
        self.ptr.cast()
    }

    pub fn set_event_mask(&self, mask: DWORD) -> HRESULT {
        // SAFETY: live interface pointer; plain value argument.
        unsafe { (self.vt().SetEventMask)(self.this(), mask) }
    }

    /// `ICorProfilerInfo5::SetEventMask2`: the low and the high event mask. Only on an
    /// interface of version 5 or later (`self.version`).
    pub fn set_event_mask2(&self, low: DWORD, high: DWORD) -> HRESULT {
        if self.version < 5 {
            return E_NOINTERFACE;
        }
        // SAFETY: the pointer was QI'd for ICorProfilerInfo`version` (≥ 5), whose vtable
        // begins with ICorProfilerInfo5's slots; plain value arguments.
        unsafe {
            let p = self.ptr.cast::<ICorProfilerInfo5>();
            ((*(*p).vtbl).SetEventMask2)(p.cast(), low, high)
        }
    }

    pub fn set_hooks_with_info(
        &self,
        enter: FunctionEnter3WithInfo,
        leave: FunctionLeave3WithInfo,
        tailcall: FunctionTailcall3WithInfo,
    ) -> HRESULT {
        // SAFETY: live interface pointer; the hooks are 'static functions.
        unsafe {
            (self.vt().SetEnterLeaveFunctionHooks3WithInfo)(
                self.this(),
                Some(enter),
                Some(leave),
                Some(tailcall),
            )
        }
    }

    /// `SetEnterLeaveFunctionHooks3`: the fast path (the JIT calls these directly, with its
    /// own register convention; see fast.rs).
    pub fn set_hooks3(
        &self,
        enter: FunctionEnter3,
        leave: FunctionLeave3,
        tailcall: FunctionTailcall3,
    ) -> HRESULT {
        // SAFETY: live interface pointer; the hooks are 'static code.
        unsafe {
            (self.vt().SetEnterLeaveFunctionHooks3)(
                self.this(),
                Some(enter),
                Some(leave),
                Some(tailcall),
            )
        }
    }

    pub fn set_function_id_mapper2(&self, mapper: FunctionIDMapper2) -> HRESULT {
        // SAFETY: live interface pointer; the mapper is a 'static function; no client data.
        unsafe {
            (self.vt().SetFunctionIDMapper2)(self.this(), Some(mapper), core::ptr::null_mut())
        }
    }

    /// "CoreCLR 10.0.12" (or what the runtime reports).
    pub fn runtime_description(&self) -> Result<String, HRESULT> {
        let (mut id, mut kind, mut major, mut minor, mut build, mut qfe) =
            (0u16, 0u32, 0u16, 0u16, 0u16, 0u16);
        let mut buf = [0u16; 128];
        let mut len: ULONG = 0;
        // SAFETY: every out pointer is a valid local; the buffer length is passed.
        let hr = unsafe {
            (self.vt().GetRuntimeInformation)(
                self.this(),
                &mut id,
                &mut kind,
                &mut major,
                &mut minor,
                &mut build,
                &mut qfe,
                buf.len() as ULONG,
                &mut len,
                buf.as_mut_ptr(),
            )
        };
        if FAILED(hr) {
            return Err(hr);
        }
        let name = if kind == COR_PRF_CORE_CLR {
            "CoreCLR"
        } else {
            "CLR"
        };
        Ok(format!("{name} {major}.{minor}.{build}"))
    }

    pub fn function_info(&self, function: FunctionID) -> Result<FunctionInfo, HRESULT> {
        let (mut class, mut module, mut token): (ClassID, ModuleID, mdToken) = (0, 0, 0);
        // SAFETY: live interface pointer; valid out pointers.
        let hr = unsafe {
            (self.vt().GetFunctionInfo)(self.this(), function, &mut class, &mut module, &mut token)
        };
        if FAILED(hr) {
            return Err(hr);
        }
        Ok(FunctionInfo { module, token })
    }

    /// `GetFunctionInfo2` without a frame: the method's type arguments (at most 8; `None`
    /// when the call fails or there are more). For shared generic code, a type argument that
    /// is a reference type reads as `System.__Canon`.
    pub fn method_type_args(&self, function: FunctionID) -> Option<Vec<ClassID>> {
        self.instantiation(function).map(|(_, args)| args)
    }

    /// `GetFunctionFromTokenAndTypeArgs`: the FunctionID the runtime maps method-def
    /// `token` of `class` (an instantiated type, or 0 for a non-generic type) with method type
    /// arguments `args` to (for a runtime-async method, its Task-returning thunk; for a method
    /// that is not async, the method itself).
    pub fn function_from_token_and_type_args(
        &self,
        module: ModuleID,
        token: mdToken,
        class: ClassID,
        args: &[ClassID],
    ) -> Result<FunctionID, HRESULT> {
        let mut f: FunctionID = 0;
        let mut args = args.to_vec();
        // SAFETY: live interface pointer; the array and its length match (the runtime only
        // reads it); valid out pointer.
        let hr = unsafe {
            (self.vt().GetFunctionFromTokenAndTypeArgs)(
                self.this(),
                module,
                token,
                class,
                args.len() as ULONG32,
                args.as_mut_ptr(),
                &mut f,
            )
        };
        if FAILED(hr) { Err(hr) } else { Ok(f) }
    }

    /// `GetFunctionInfo2` without a frame: the function's class (instantiated; 0 when the
    /// runtime does not say) and its method type arguments (see [`Info::method_type_args`]).
    pub fn instantiation(&self, function: FunctionID) -> Option<(ClassID, Vec<ClassID>)> {
        let (mut class, mut module, mut token, mut n): (ClassID, ModuleID, mdToken, ULONG32) =
            (0, 0, 0, 0);
        let mut args = [0 as ClassID; 8];
        // SAFETY: live interface pointer; the array and its length match; out pointers are
        // locals; frame info 0 asks for the function's own instantiation.
        let hr = unsafe {
            (self.vt().GetFunctionInfo2)(
                self.this(),
                function,
                0,
                &mut class,
                &mut module,
                &mut token,
                args.len() as ULONG32,
                &mut n,
                args.as_mut_ptr(),
            )
        };
        if FAILED(hr) || n as usize > args.len() {
            return None;
        }
        Some((class, args[..n as usize].to_vec()))
    }

    /// `GetFunctionFromToken(module, token)`: the FunctionID the runtime maps a method-def
    /// token to (for a runtime-async method, its Task-returning thunk). Fails for methods
    /// that need type arguments (generic methods or methods of generic types).
    pub fn function_from_token(
        &self,
        module: ModuleID,
        token: mdToken,
    ) -> Result<FunctionID, HRESULT> {
        let mut f: FunctionID = 0;
        // SAFETY: live interface pointer; valid out pointer.
        let hr = unsafe { (self.vt().GetFunctionFromToken)(self.this(), module, token, &mut f) };
        if FAILED(hr) { Err(hr) } else { Ok(f) }
    }

    /// `GetClassFromObject`: the ClassID of a live object.
    pub fn class_of_object(&self, object: ObjectID) -> Result<ClassID, HRESULT> {
        let mut c: ClassID = 0;
        // SAFETY: live interface pointer; valid out pointer. The caller passes an ObjectID
        // the runtime handed out in the current (cooperative-mode) callback.
        let hr = unsafe { (self.vt().GetClassFromObject)(self.this(), object, &mut c) };
        if FAILED(hr) { Err(hr) } else { Ok(c) }
    }

    /// `GetClassIDInfo2`: module, type-def token, parent class and type arguments (at most 8)
    /// of a class.
    pub fn class_info(&self, class: ClassID) -> Result<ClassInfo, HRESULT> {
        let (mut module, mut td, mut parent, mut n): (ModuleID, mdTypeDef, ClassID, ULONG32) =
            (0, 0, 0, 0);
        let mut args = [0 as ClassID; 8];
        // SAFETY: live interface pointer; the array and its length match; out pointers are
        // locals.
        let hr = unsafe {
            (self.vt().GetClassIDInfo2)(
                self.this(),
                class,
                &mut module,
                &mut td,
                &mut parent,
                args.len() as ULONG32,
                &mut n,
                args.as_mut_ptr(),
            )
        };
        if FAILED(hr) {
            return Err(hr);
        }
        let n = (n as usize).min(args.len());
        Ok(ClassInfo {
            module,
            token: td,
            parent,
            args: args[..n].to_vec(),
        })
    }

    /// `IsArrayClass`: `(element type, element ClassID, rank)` for an array class.
    pub fn array_class(&self, class: ClassID) -> Option<(CorElementType, ClassID, u32)> {
        let (mut et, mut elem, mut rank): (CorElementType, ClassID, ULONG) = (0, 0, 0);
        // SAFETY: live interface pointer; out pointers are locals.
        let hr =
            unsafe { (self.vt().IsArrayClass)(self.this(), class, &mut et, &mut elem, &mut rank) };
        (hr == S_OK).then_some((et, elem, rank))
    }

    /// `GetStringLayout2`: `(length offset, buffer offset)` of a string object.
    pub fn string_layout(&self) -> Result<(u32, u32), HRESULT> {
        let (mut len_off, mut buf_off): (ULONG, ULONG) = (0, 0);
        // SAFETY: live interface pointer; out pointers are locals.
        let hr = unsafe { (self.vt().GetStringLayout2)(self.this(), &mut len_off, &mut buf_off) };
        if FAILED(hr) {
            Err(hr)
        } else {
            Ok((len_off, buf_off))
        }
    }

    /// `GetFunctionEnter3Info` into `buf` (its size in bytes is passed). Returns the HRESULT.
    ///
    /// # Safety
    /// Only inside a FunctionEnter3WithInfo hook, with that hook's `elt` handle.
    pub unsafe fn enter3_info(
        &self,
        function: FunctionID,
        elt: COR_PRF_ELT_INFO,
        buf: &mut [u64],
    ) -> HRESULT {
        let mut frame: COR_PRF_FRAME_INFO = 0;
        let mut cb: ULONG = (buf.len() * 8) as ULONG;
        // SAFETY: live interface pointer; `elt` is the running hook's (caller's contract);
        // `buf` is writable for `cb` bytes and 8-aligned like the struct.
        unsafe {
            (self.vt().GetFunctionEnter3Info)(
                self.this(),
                function,
                elt,
                &mut frame,
                &mut cb,
                buf.as_mut_ptr().cast(),
            )
        }
    }

    /// `GetFunctionLeave3Info`: the HRESULT and the return value's range.
    ///
    /// # Safety
    /// Only inside a FunctionLeave3WithInfo hook, with that hook's `elt` handle.
    pub unsafe fn leave3_info(
        &self,
        function: FunctionID,
        elt: COR_PRF_ELT_INFO,
    ) -> (HRESULT, COR_PRF_FUNCTION_ARGUMENT_RANGE) {
        let mut frame: COR_PRF_FRAME_INFO = 0;
        let mut range = COR_PRF_FUNCTION_ARGUMENT_RANGE {
            startAddress: 0,
            length: 0,
        };
        // SAFETY: live interface pointer; `elt` is the running hook's (caller's contract);
        // out pointers are locals.
        let hr = unsafe {
            (self.vt().GetFunctionLeave3Info)(self.this(), function, elt, &mut frame, &mut range)
        };
        (hr, range)
    }

    /// The module's file path (may be empty for dynamic modules).
    pub fn module_path(&self, module: ModuleID) -> Result<String, HRESULT> {
        let mut buf = vec![0u16; 512];
        loop {
            let mut base: LPCBYTE = core::ptr::null();
            let mut len: ULONG = 0;
            let mut assembly: AssemblyID = 0;
            // SAFETY: live interface pointer; the buffer and its length match.
            let hr = unsafe {
                (self.vt().GetModuleInfo)(
                    self.this(),
                    module,
                    &mut base,
                    buf.len() as ULONG,
                    &mut len,
                    buf.as_mut_ptr(),
                    &mut assembly,
                )
            };
            if FAILED(hr) {
                return Err(hr);
            }
            if (len as usize) > buf.len() && buf.len() < 1 << 16 {
                buf = vec![0u16; len as usize];
                continue;
            }
            let n = (len as usize).min(buf.len());
            return Ok(names::from_wide(&buf[..n]));
        }
    }

    /// The module's metadata importer (opened read-only).
    pub fn module_metadata(&self, module: ModuleID) -> Result<MetaImport, HRESULT> {
        let mut out: *mut IUnknown = core::ptr::null_mut();
        // SAFETY: live interface pointer; IID and out pointer are valid.
        let hr = unsafe {
            (self.vt().GetModuleMetaData)(
                self.this(),
                module,
                ofRead,
                &IID_IMetaDataImport,
                &mut out,
            )
        };
        if FAILED(hr) || out.is_null() {
            return Err(if FAILED(hr) { hr } else { E_NOINTERFACE });
        }
        // SAFETY: `out` is the IMetaDataImport the runtime just returned (owned reference).
        Ok(unsafe { MetaImport::from_raw(out.cast()) })
    }

    /// The runtime's ThreadID of the calling thread.
    pub fn current_thread(&self) -> Option<ThreadID> {
        let mut t: ThreadID = 0;
        // SAFETY: live interface pointer; valid out pointer.
        let hr = unsafe { (self.vt().GetCurrentThreadID)(self.this(), &mut t) };
        (SUCCEEDED(hr) && t != 0).then_some(t)
    }
}
