//! Safe wrappers over IMetaDataImport(2) for the name lookups the FunctionIDMapper needs:
//! method props, type-def props, enclosing types, generic parameter counts, and what tells a
//! compiler state machine (implemented interfaces, custom attributes, nested type lookup).

use core::ffi::c_void;

use eltrace_abi::*;

use crate::names;

/// A module's metadata importer. Invariant: `ptr` is a live IMetaDataImport the runtime
/// returned (an owned reference that is never released: modules live as long as the
/// profiler cares); `v2` is null or a live IMetaDataImport2 of the same object.
pub struct MetaImport {
    ptr: *mut IMetaDataImport,
    v2: *mut IMetaDataImport2,
}

// SAFETY: the runtime's metadata importers are free-threaded for reading.
unsafe impl Send for MetaImport {}
// SAFETY: see Send.
unsafe impl Sync for MetaImport {}

/// What `GetMethodProps` returns that eltrace uses.
pub struct MethodProps {
    pub name: String,
    pub class: mdTypeDef,
    pub impl_flags: u32,
    /// The signature blob (copied).
    pub sig: Vec<u8>,
}

impl MetaImport {
    /// # Safety
    /// `ptr` must be a live IMetaDataImport (ownership of one reference passes to the result).
    pub unsafe fn from_raw(ptr: *mut IMetaDataImport) -> MetaImport {
        let mut v2: *mut c_void = core::ptr::null_mut();
        // SAFETY: `ptr` is live; QueryInterface takes an IID and an out pointer.
        let hr =
            unsafe { ((*(*ptr).vtbl).QueryInterface)(ptr.cast(), &IID_IMetaDataImport2, &mut v2) };
        MetaImport {
            ptr,
            v2: if SUCCEEDED(hr) {
                v2.cast()
            } else {
                core::ptr::null_mut()
            },
        }
    }

    fn vt(&self) -> &IMetaDataImportVtbl {
        // SAFETY: live pointer (type invariant).
        unsafe { &*(*self.ptr).vtbl }
    }

    pub fn method_props(&self, method: mdMethodDef) -> Result<MethodProps, HRESULT> {
        let mut buf = vec![0u16; 256];
        loop {
            let (mut class, mut len, mut attr, mut rva, mut impl_flags) =
                (0u32, 0u32, 0u32, 0u32, 0u32);
            let mut sig: PCCOR_SIGNATURE = core::ptr::null();
            let mut sig_len: ULONG = 0;
            // SAFETY: live pointer; buffer and length match; out pointers are locals.
            let hr = unsafe {
                (self.vt().GetMethodProps)(
                    self.ptr.cast(),
                    method,
                    &mut class,
                    buf.as_mut_ptr(),
                    buf.len() as ULONG,
                    &mut len,
                    &mut attr,
                    &mut sig,
                    &mut sig_len,
                    &mut rva,
                    &mut impl_flags,
                )
            };
            if FAILED(hr) {
                return Err(hr);
            }
            if len as usize > buf.len() && buf.len() < 1 << 16 {
                buf = vec![0u16; len as usize];
                continue;
            }
            let sig_bytes = if sig.is_null() || sig_len == 0 {
                Vec::new()
            } else {
                // SAFETY: on success the runtime points `sig` at `sig_len` bytes of the
                // module's metadata, which lives as long as the importer.
                unsafe { core::slice::from_raw_parts(sig, sig_len as usize) }.to_vec()
            };
            return Ok(MethodProps {
                name: names::from_wide(&buf),
                class,
                impl_flags,
                sig: sig_bytes,
            });
        }
    }

    /// The type's name (namespace-qualified for top-level types) and its flags.
    pub fn type_def_props(&self, td: mdTypeDef) -> Result<(String, u32), HRESULT> {
        let mut buf = vec![0u16; 256];
        loop {
            let (mut len, mut flags, mut extends) = (0u32, 0u32, 0u32);
            // SAFETY: live pointer; buffer and length match; out pointers are locals.
            let hr = unsafe {
                (self.vt().GetTypeDefProps)(
                    self.ptr.cast(),
                    td,
                    buf.as_mut_ptr(),
                    buf.len() as ULONG,
                    &mut len,
                    &mut flags,
                    &mut extends,
                )
            };
            if FAILED(hr) {
                return Err(hr);
            }
            if len as usize > buf.len() && buf.len() < 1 << 16 {
                buf = vec![0u16; len as usize];
                continue;
            }
            return Ok((names::from_wide(&buf), flags));
        }
    }

    /// The token a type-def extends (0 for none).
    pub fn type_def_extends(&self, td: mdTypeDef) -> Result<mdToken, HRESULT> {
        let (mut len, mut flags, mut extends) = (0u32, 0u32, 0u32);
        // SAFETY: live pointer; no name buffer (length 0); out pointers are locals.
        let hr = unsafe {
            (self.vt().GetTypeDefProps)(
                self.ptr.cast(),
                td,
                core::ptr::null_mut(),
                0,
                &mut len,
                &mut flags,
                &mut extends,
            )
        };
        if FAILED(hr) { Err(hr) } else { Ok(extends) }
    }

    /// The namespace-qualified name of a type-ref.
    pub fn type_ref_name(&self, tr: mdTypeRef) -> Result<String, HRESULT> {
        let mut buf = vec![0u16; 256];
        loop {
            let (mut scope, mut len) = (0u32, 0u32);
            // SAFETY: live pointer; buffer and length match; out pointers are locals.
            let hr = unsafe {
                (self.vt().GetTypeRefProps)(
                    self.ptr.cast(),
                    tr,
                    &mut scope,
                    buf.as_mut_ptr(),
                    buf.len() as ULONG,
                    &mut len,
                )
            };
            if FAILED(hr) {
                return Err(hr);
            }
            if len as usize > buf.len() && buf.len() < 1 << 16 {
                buf = vec![0u16; len as usize];
                continue;
            }
            return Ok(names::from_wide(&buf));
        }
    }

    /// The signature blob of a type-spec (copied).
    pub fn type_spec(&self, ts: mdTypeSpec) -> Result<Vec<u8>, HRESULT> {
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        let mut len: ULONG = 0;
        // SAFETY: live pointer; out pointers are locals.
        let hr =
            unsafe { (self.vt().GetTypeSpecFromToken)(self.ptr.cast(), ts, &mut sig, &mut len) };
        if FAILED(hr) {
            return Err(hr);
        }
        if sig.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: on success `sig` points at `len` bytes of metadata owned by the importer.
        Ok(unsafe { core::slice::from_raw_parts(sig, len as usize) }.to_vec())
    }

    /// The method's parameter names by sequence number (1 = first parameter; 0 = return).
    pub fn param_names(&self, method: mdMethodDef) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        let mut henum: HCORENUM = core::ptr::null_mut();
        let mut tokens = [0u32; 64];
        loop {
            let mut fetched: ULONG = 0;
            // SAFETY: live pointer; array and its length match; `henum` is ours.
            let hr = unsafe {
                (self.vt().EnumParams)(
                    self.ptr.cast(),
                    &mut henum,
                    method,
                    tokens.as_mut_ptr(),
                    tokens.len() as ULONG,
                    &mut fetched,
                )
            };
            if FAILED(hr) || fetched == 0 {
                break;
            }
            for &tk in &tokens[..(fetched as usize).min(tokens.len())] {
                let mut buf = [0u16; 256];
                let (mut md, mut seq, mut len, mut attr, mut cplus, mut cch) =
                    (0u32, 0u32, 0u32, 0u32, 0u32, 0u32);
                let mut value: UVCP_CONSTANT = core::ptr::null();
                // SAFETY: live pointer; buffer and length match; out pointers are locals.
                let hr = unsafe {
                    (self.vt().GetParamProps)(
                        self.ptr.cast(),
                        tk,
                        &mut md,
                        &mut seq,
                        buf.as_mut_ptr(),
                        buf.len() as ULONG,
                        &mut len,
                        &mut attr,
                        &mut cplus,
                        &mut value,
                        &mut cch,
                    )
                };
                if SUCCEEDED(hr) {
                    out.push((seq, names::from_wide(&buf)));
                }
            }
            if (fetched as usize) < tokens.len() {
                break;
            }
        }
        if !henum.is_null() {
            // SAFETY: closes the enumerator opened above exactly once.
            unsafe { (self.vt().CloseEnum)(self.ptr.cast(), henum) };
        }
        out
    }

    /// The namespace-qualified names of the interfaces type-def `td` implements, those named
    /// by a TypeDef or a TypeRef (a generic instantiation, a TypeSpec, is left out).
    pub fn interface_names(&self, td: mdTypeDef) -> Vec<String> {
        let mut out = Vec::new();
        let mut henum: HCORENUM = core::ptr::null_mut();
        let mut impls = [0u32; 32];
        loop {
            let mut fetched: ULONG = 0;
            // SAFETY: live pointer; array and its length match; `henum` is ours.
            let hr = unsafe {
                (self.vt().EnumInterfaceImpls)(
                    self.ptr.cast(),
                    &mut henum,
                    td,
                    impls.as_mut_ptr(),
                    impls.len() as ULONG,
                    &mut fetched,
                )
            };
            if FAILED(hr) || fetched == 0 {
                break;
            }
            for &ii in &impls[..(fetched as usize).min(impls.len())] {
                let (mut class, mut iface) = (0u32, 0u32);
                // SAFETY: live pointer; out pointers are locals.
                let hr = unsafe {
                    (self.vt().GetInterfaceImplProps)(self.ptr.cast(), ii, &mut class, &mut iface)
                };
                if FAILED(hr) {
                    continue;
                }
                let name = match iface & 0xFF00_0000 {
                    t if t == mdtTypeRef => self.type_ref_name(iface).ok(),
                    t if t == mdtTypeDef => self.type_def_props(iface).ok().map(|(n, _)| n),
                    _ => None,
                };
                out.extend(name);
            }
            if (fetched as usize) < impls.len() {
                break;
            }
        }
        if !henum.is_null() {
            // SAFETY: closes the enumerator opened above exactly once.
            unsafe { (self.vt().CloseEnum)(self.ptr.cast(), henum) };
        }
        out
    }

    /// The value blob of custom attribute `name` (its namespace-qualified type name) on
    /// `token` (copied), `None` when `token` carries no such attribute.
    pub fn attribute(&self, token: mdToken, name: &str) -> Option<Vec<u8>> {
        let wide: Vec<u16> = name.encode_utf16().chain(std::iter::once(0)).collect();
        let mut data: *const c_void = core::ptr::null();
        let mut len: ULONG = 0;
        // SAFETY: live pointer; `wide` is NUL-terminated and outlives the call; out pointers
        // are locals.
        let hr = unsafe {
            (self.vt().GetCustomAttributeByName)(
                self.ptr.cast(),
                token,
                wide.as_ptr(),
                &mut data,
                &mut len,
            )
        };
        // S_FALSE: no such attribute.
        if hr != S_OK {
            return None;
        }
        if data.is_null() || len == 0 {
            return Some(Vec::new());
        }
        // SAFETY: on S_OK `data` points at `len` bytes of metadata owned by the importer.
        Some(unsafe { core::slice::from_raw_parts(data.cast::<u8>(), len as usize) }.to_vec())
    }

    /// The type-def named `name`: namespace-qualified for a top-level type (`enclosing` 0),
    /// the bare nested name inside type-def `enclosing`.
    pub fn find_type_def(&self, name: &str, enclosing: mdTypeDef) -> Option<mdTypeDef> {
        let wide: Vec<u16> = name.encode_utf16().chain(std::iter::once(0)).collect();
        let mut td: mdTypeDef = 0;
        // SAFETY: live pointer; `wide` is NUL-terminated and outlives the call; valid out
        // pointer.
        let hr = unsafe {
            (self.vt().FindTypeDefByName)(self.ptr.cast(), wide.as_ptr(), enclosing, &mut td)
        };
        (hr == S_OK && td != 0).then_some(td)
    }

    /// The type enclosing the nested type `td`.
    pub fn enclosing_type(&self, td: mdTypeDef) -> Result<mdTypeDef, HRESULT> {
        let mut outer: mdTypeDef = 0;
        // SAFETY: live pointer; valid out pointer.
        let hr = unsafe { (self.vt().GetNestedClassProps)(self.ptr.cast(), td, &mut outer) };
        if FAILED(hr) { Err(hr) } else { Ok(outer) }
    }

    /// Number of generic parameters of a method or type (`None` without IMetaDataImport2).
    pub fn generic_param_count(&self, token: mdToken) -> Option<u32> {
        if self.v2.is_null() {
            return None;
        }
        // SAFETY: `v2` is a live IMetaDataImport2 (type invariant).
        let vt = unsafe { &*(*self.v2).vtbl };
        let mut henum: HCORENUM = core::ptr::null_mut();
        let mut params = [0u32; 16];
        let mut fetched: ULONG = 0;
        // SAFETY: live pointer; array and its length match; out pointers are locals.
        let hr = unsafe {
            (vt.EnumGenericParams)(
                self.v2.cast(),
                &mut henum,
                token,
                params.as_mut_ptr(),
                params.len() as ULONG,
                &mut fetched,
            )
        };
        let mut total = fetched;
        if !henum.is_null() {
            let mut count: ULONG = 0;
            // SAFETY: `henum` is the enumerator just opened on this importer.
            if SUCCEEDED(unsafe { (vt.CountEnum)(self.v2.cast(), henum, &mut count) }) {
                total = total.max(count);
            }
            // SAFETY: as above; closes it exactly once.
            unsafe { (vt.CloseEnum)(self.v2.cast(), henum) };
        }
        if FAILED(hr) { None } else { Some(total) }
    }
}
