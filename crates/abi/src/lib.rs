//! # eltrace-abi: the CoreCLR profiling API as FFI facts
//!
//! This crate owns the binary interface between the .NET runtime (CoreCLR, Linux x64)
//! and a profiler: primitive typedefs and ID types, [`GUID`] and every IID, HRESULTs and
//! event-mask flags, corhdr metadata constants, the `#[repr(C)]` structs, the hook and
//! callback function-pointer types, and one `#[repr(C)]` vtable per COM interface
//! (IUnknown, IClassFactory, ICorProfilerCallback..11, ICorProfilerInfo..15, the
//! enumerators, IMetaDataImport/2). It has no behaviour and no dependencies.
//!
//! Facts come from the team's `/work/shared/abi` files (themselves read from
//! dotnet/runtime: corprof.idl, cor.h, corhdr.h, corerror.h); most of `*_gen.rs` and the
//! constant modules are generated from them by `tools/gen_abi.py`, and `tests/` checks
//! the result against copies of those files.
//!
//! ## Naming
//!
//! * Vtable of interface `X`: struct `XVtbl`, one field per slot in slot order (inherited
//!   slots first), named as in the IDL (`GetFunctionInfo2`, `JITCompilationStarted`).
//!   Each field is `unsafe extern "C" fn(this: *mut c_void, ...) -> R`.
//! * `XVtbl::SLOT_NAMES` / `XVtbl::IID`, also through the [`Interface`] trait; the IID is
//!   also `IID_X`.
//! * Interface pointer type: `X = ComObject<XVtbl>` (first word = vtable pointer).
//! * Constants keep their CLR names (`COR_PRF_MONITOR_ENTERLEAVE`, `CORPROF_E_*`,
//!   `ELEMENT_TYPE_*`, `mdStatic`, `miAsync`).
//!
//! ## Calling a method
//!
//! ```no_run
//! use eltrace_abi::*;
//! unsafe fn thread_id(info: *mut ICorProfilerInfo3) -> Option<ThreadID> {
//!     let mut tid: ThreadID = 0;
//!     // SAFETY: `info` is a live interface pointer obtained from the runtime.
//!     let hr = unsafe { ((*(*info).vtbl).GetCurrentThreadID)(info.cast(), &mut tid) };
//!     SUCCEEDED(hr).then_some(tid)
//! }
//! ```

mod com;
mod consts_gen;
mod functions;
mod hresult;
mod structs;
mod types;

mod callback_gen;
mod com_gen;
mod helpers_gen;
mod info_gen;
mod metadata_gen;

pub use com::{ComObject, GUID, Interface};
pub use consts_gen::corhdr::*;
pub use consts_gen::elt::*;
pub use consts_gen::enums::*;
pub use consts_gen::flags::*;
pub use consts_gen::hresult::*;
pub use functions::*;
pub use hresult::*;
pub use structs::*;
pub use types::*;

pub use callback_gen::*;
pub use com_gen::*;
pub use helpers_gen::*;
pub use info_gen::*;
pub use metadata_gen::*;

/// The method-impl flag of a runtime-async method (`MethodImplOptions.Async`, 0x2000): the
/// generated `miAsync` under the one name the rest of the workspace uses.
pub const METHOD_IMPL_ASYNC: u32 = consts_gen::corhdr::miAsync;
/// `ofRead`: open flags for `GetModuleMetaData` (read-only).
#[allow(non_upper_case_globals)]
pub const ofRead: DWORD = 0x0000_0000;
/// `ofWrite`: open flags for `GetModuleMetaData` (read/write).
#[allow(non_upper_case_globals)]
pub const ofWrite: DWORD = 0x0000_0001;
