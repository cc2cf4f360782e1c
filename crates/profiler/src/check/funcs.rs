//! The check mapper: names every function once (through the recorder's resolver), decides by
//! experiment whether it gets probes, writes a `map` line for each hooked one, and returns a
//! tagged client id (`CLIENT_TAG << 48 | index`) so the fast stubs can recognise a client id
//! in a register and the slow hooks can find the FunctionID again.

use core::ffi::c_void;
use std::sync::Mutex;

use eltrace_abi::*;

use super::obs;
use crate::com::resolve::Modules;
use crate::sys::lock;

/// The top 16 bits of every client id the check mapper returns.
pub const CLIENT_TAG: u64 = 0xE17C;

/// The client id of the function at `index`.
pub const fn client_id(index: u32) -> u64 {
    (CLIENT_TAG << 48) | index as u64
}

/// The registry index of a client id, if it carries the tag.
pub const fn index_of(client: u64) -> Option<u32> {
    if client >> 48 == CLIENT_TAG {
        Some((client & 0xFFFF_FFFF) as u32)
    } else {
        None
    }
}

/// A function the mapper has seen.
#[derive(Debug, Clone, Default)]
pub struct Func {
    pub fid: u64,
    pub module: String,
    pub type_name: String,
    pub method: String,
    pub token: u32,
    pub impl_flags: u32,
    pub framework: bool,
    /// Whether naming succeeded.
    pub resolved: bool,
}

impl Func {
    pub fn full_name(&self) -> String {
        if self.type_name.is_empty() {
            self.method.clone()
        } else {
            format!("{}.{}", self.type_name, self.method)
        }
    }
}

/// Hooked functions by index, and the module cache.
pub struct Registry {
    funcs: Mutex<Vec<Func>>,
    modules: Modules,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    pub const fn new() -> Registry {
        Registry {
            funcs: Mutex::new(Vec::new()),
            modules: Modules::new(),
        }
    }

    /// The function behind a client id.
    pub fn get(&self, client: u64) -> Option<Func> {
        let i = index_of(client)? as usize;
        lock(&self.funcs).get(i).cloned()
    }

    /// Adds a hooked function; returns its client id.
    fn add(&self, f: Func) -> u64 {
        let mut v = lock(&self.funcs);
        v.push(f);
        client_id((v.len() - 1) as u32)
    }
}

fn map(function: FunctionID) -> Option<(u64, bool)> {
    let st = super::state()?;
    let (d, failure) = st.funcs.modules.describe(&st.info, function);
    let f = Func {
        fid: function as u64,
        module: d.record.module,
        type_name: d.record.type_name,
        method: d.record.method,
        token: d.record.token,
        impl_flags: d.record.impl_flags,
        framework: d.framework,
        resolved: failure.is_none(),
    };
    if !st.experiment.selects(&f) {
        return None;
    }
    let line = format!(
        "fid={:#x} token={:#010x} impl={:#x} framework={} resolved={} module={} name={}",
        f.fid,
        f.token,
        f.impl_flags,
        u8::from(f.framework),
        u8::from(f.resolved),
        if f.module.is_empty() { "-" } else { &f.module },
        f.full_name()
    );
    let leaf = f.type_name == "Probes.RegsProbe" && f.method == "Leaf";
    let client = st.funcs.add(f);
    obs::line("map", &format!("client={client:#x} {line}"));
    if leaf {
        super::fast::set_leaf(client);
    }
    Some((client, true))
}

/// `FunctionIDMapper2`: a tagged client id and `*hook = TRUE` for selected functions.
///
/// # Safety
/// Called by the runtime: `hook` is null or writable.
pub unsafe extern "C" fn mapper(
    function: FunctionID,
    _client_data: *mut c_void,
    hook: *mut BOOL,
) -> UINT_PTR {
    let mapped = std::panic::catch_unwind(|| map(function)).ok().flatten();
    let (client, hooked) = mapped.unwrap_or((function as u64, false));
    if !hook.is_null() {
        // SAFETY: non-null out pointer from the runtime.
        unsafe { *hook = BOOL::from(hooked) };
    }
    client as UINT_PTR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_round_trip_and_untagged_values_are_rejected() {
        assert_eq!(index_of(client_id(7)), Some(7));
        assert_eq!(client_id(0) >> 48, CLIENT_TAG);
        assert_eq!(index_of(0x7f00_1234_5678), None);
        assert_eq!(index_of(0), None);
    }
}
