//! The COM side: loading (`DllGetClassObject`, class factory), the callback object and its
//! vtable, and safe wrappers over the runtime's Info and metadata interfaces.

pub mod callback;
pub mod factory;
pub mod info;
pub mod metadata;
pub mod resolve;
