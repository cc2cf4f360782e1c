//! The COM side: loading (`DllGetClassObject`, class factory), the callback object and its
//! vtable, and safe wrappers over the runtime's Info and metadata interfaces.

pub(crate) mod callback;
pub(crate) mod continuation;
pub(crate) mod factory;
pub(crate) mod info;
pub(crate) mod machines;
pub(crate) mod metadata;
pub(crate) mod modules;
pub(crate) mod resolve;
