//! The check mapper: names every function once (through com/resolve.rs), decides by
//! experiment whether it gets probes, writes a `map` line for each hooked one, and returns a
//! tagged client id (`CLIENT_TAG << 48 | index`) so the fast stubs can recognise a client id
//! in a register and the slow hooks can find the FunctionID again. It also publishes the
//! client id of `Probes.RegsProbe.Leaf` ([`LEAF_CLIENT`]) for the fast stubs.

use core::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use eltrace_abi::*;

use super::experiment::{self, Experiment, State};
use super::obs;
use crate::com::modules::Modules;
use crate::names;
use crate::sys::lock;

/// The top 16 bits of every client id the check mapper returns.
pub const CLIENT_TAG: u64 = 0xE17C;
/// Where the tag starts in a client id.
pub const CLIENT_TAG_SHIFT: u32 = 48;

/// The client id of `Probes.RegsProbe.Leaf`, once mapped (0 before); the fast stubs compare
/// client ids against it.
pub static LEAF_CLIENT: AtomicU64 = AtomicU64::new(0);

/// The client id of the function at `index`.
pub const fn client_id(index: u32) -> u64 {
    (CLIENT_TAG << CLIENT_TAG_SHIFT) | index as u64
}

/// The registry index of a client id, if it carries the tag.
pub const fn index_of(client: u64) -> Option<u32> {
    if client >> CLIENT_TAG_SHIFT == CLIENT_TAG {
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
        names::full_name(&self.type_name, &self.method)
    }
}

/// Hooked functions by index, and the module cache.
struct Registry {
    funcs: Mutex<Vec<Func>>,
    modules: Modules,
}

/// The functions this experiment's mapper gave probes to.
static REGISTRY: Registry = Registry::new();

/// The hooked function behind a client id.
pub fn get(client: u64) -> Option<Func> {
    REGISTRY.get(client)
}

impl Registry {
    const fn new() -> Registry {
        Registry {
            funcs: Mutex::new(Vec::new()),
            modules: Modules::new(),
        }
    }

    /// The function behind a client id.
    fn get(&self, client: u64) -> Option<Func> {
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

/// The functions of the `jit` experiment's probe that get probes (check/jit.rs).
pub const JIT_SELECTED: &[&str] = &["Caller", "Selected", "HotProbed"];

/// Whether the mapper gives probes to a function (by its resolved name) in `experiment`.
pub fn selects(experiment: Experiment, f: &Func) -> bool {
    let t = f.type_name.as_str();
    match experiment {
        Experiment::Info => t == "Probes.AsyncProbe" || t == "Probes.Emitted",
        Experiment::RegsSlowAsync | Experiment::RegsSlowAsyncRcx0 => t == "Probes.AsyncProbe",
        Experiment::Snapshot => t == "Probes.SnapshotProbe",
        Experiment::Flags => t == "Probes.RegsProbe" && f.method == "Leaf",
        Experiment::RegsSlow
        | Experiment::FastTrash
        | Experiment::FastRaxAfterLeave
        | Experiment::FastRdiAfterEnter
        | Experiment::FastR14AfterEnter => t == "Probes.RegsProbe",
        Experiment::PInvoke => {
            !f.framework || !f.resolved || f.method.contains("IL_STUB") || t.contains("ILStub")
        }
        Experiment::Jit => {
            (t == "Probes.JitProbe" && JIT_SELECTED.contains(&f.method.as_str()))
                || (f.framework && t == "System.Convert" && f.method == "FromBase64String")
        }
    }
}

/// Registers the check mapper.
pub fn install(st: &State) -> HRESULT {
    let hr = st.info.set_function_id_mapper2(mapper);
    obs::line("mapper", &format!("{hr:#010x}"));
    hr
}

/// Names a function (through the registry's module cache) without registering it.
pub fn describe(st: &State, function: FunctionID) -> Func {
    let (d, failure) = REGISTRY.modules.describe(&st.info, function);
    Func {
        fid: function as u64,
        module: d.record.module,
        type_name: d.record.type_name,
        method: d.record.method,
        token: d.record.token,
        impl_flags: d.record.impl_flags,
        framework: d.framework,
        resolved: failure.is_none(),
    }
}

fn map(function: FunctionID) -> Option<(u64, bool)> {
    let st = experiment::state()?;
    let f = describe(st, function);
    if !selects(st.experiment, &f) {
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
    let client = REGISTRY.add(f);
    obs::line("map", &format!("client={client:#x} {line}"));
    if leaf {
        LEAF_CLIENT.store(client, Ordering::Relaxed);
    }
    Some((client, true))
}

/// `FunctionIDMapper2`: a tagged client id and `*hook = TRUE` for selected functions.
///
/// # Safety
/// Called by the runtime: `hook` is null or writable.
unsafe extern "C" fn mapper(
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
