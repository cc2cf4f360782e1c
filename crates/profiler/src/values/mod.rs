//! `record --values` (`ELTRACE_VALUES=1`): arguments at Enter and return values at Leave, on
//! the slow path only. At mapper time ([`prepare`]) a selected function's signature is parsed
//! once into a [`ValueFunc`] (parameter names, one [`Slot`] per argument, the Leave plan
//! from the return type and the runtime-async role). In the WithInfo hooks
//! ([`enter_hook`], [`leave_hook`]) the value is queried first (`GetFunctionEnter3Info` /
//! `GetFunctionLeave3Info`), rendered, queued as a VALUE record (`Recorder::add_value`) and
//! only then its Value event is pushed into the ring, just before the Enter/Leave event it
//! belongs to (INFO `values_first`: the replay holds the value until that event comes).
//!
//! The signature parser ([`sig`]) and the plans and rendering ([`render`]) are pure; this
//! module is what talks to the runtime, through the Info and module cache handed to
//! [`install`].
//!
//! This mode takes locks in the hooks (the function table's RwLock, the recorder's queue, the
//! class-name cache) and allocates: it is an opt-in slow mode. Without `ELTRACE_VALUES` none
//! of this code is installed.

mod render;
mod sig;
pub mod vectors;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use eltrace_abi::*;
use eltrace_trace::{EventKind, FunctionRecord, ValueStatus};

use render::{AsyncRole, MAX_STRING_CHARS, Objects, RetPlan, Slot, render, ret_plan};
use sig::SigType;

use crate::com::info::{ClassInfo, Info};
use crate::com::metadata::MetaImport;
use crate::com::modules::{self, Modules};
use crate::hooks;
use crate::recorder::Recorder;
use crate::sys::lock;

/// How `this` is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ThisPlan {
    /// A reference type: the object's runtime type name.
    Object,
    /// A value type (`this` is a byref): the declared type name.
    Declared(String),
}

/// What the hooks need to capture one function's values.
#[derive(Debug)]
pub struct ValueFunc {
    function_id: FunctionID,
    this: Option<ThisPlan>,
    params: Vec<(String, Slot)>,
    ret: RetPlan,
}

/// Function index → its value plan (only selected functions of a `--values` recording).
static FUNCS: RwLock<Vec<Option<Arc<ValueFunc>>>> = RwLock::new(Vec::new());

fn lookup(idx: u32) -> Option<Arc<ValueFunc>> {
    let t = FUNCS.read().unwrap_or_else(|e| e.into_inner());
    t.get(idx as usize).and_then(Clone::clone)
}

fn register(idx: u32, f: ValueFunc) {
    let mut t = FUNCS.write().unwrap_or_else(|e| e.into_inner());
    let i = idx as usize;
    if t.len() <= i {
        t.resize(i + 1, None);
    }
    t[i] = Some(Arc::new(f));
}

/// The async role a function record's flags give.
fn role(record: &FunctionRecord) -> AsyncRole {
    if record.flags.async_thunk() {
        AsyncRole::Thunk
    } else if record.flags.async_variant() {
        AsyncRole::Variant
    } else if record.impl_flags & METHOD_IMPL_ASYNC != 0 {
        AsyncRole::Unknown
    } else {
        AsyncRole::NotAsync
    }
}

/// A type token's name for placeholders and the Task check.
fn token_name(md: &MetaImport, tok: u32) -> String {
    match tok >> 24 {
        0x02 => modules::type_name(md, tok).unwrap_or_else(|_| "?".into()),
        0x01 => md.type_ref_name(tok).unwrap_or_else(|_| "?".into()),
        0x1b => match md
            .type_spec(tok)
            .ok()
            .and_then(|b| sig::parse_type_sig(&b).ok())
        {
            Some(SigType::GenericInst { token, .. }) if token >> 24 != 0x1b => {
                token_name(md, token)
            }
            _ => "?".into(),
        },
        _ => "?".into(),
    }
}

/// Hands the `--values` hooks the runtime's interfaces (before the hooks are installed).
pub fn install(info: &'static Info, modules: &'static Modules) {
    let _ = RUNTIME.set(Runtime { info, modules });
}

/// Builds and registers the value plan of a selected function (mapper time).
pub fn prepare(module: ModuleID, idx: u32, record: &FunctionRecord) -> Result<(), String> {
    let Runtime { info, modules } = *RUNTIME.get().ok_or("the values hooks are not installed")?;
    let entry = modules.get(info, module)?;
    let md = entry
        .import
        .as_ref()
        .ok_or_else(|| format!("no metadata for module {}", entry.file))?;
    let props = md
        .method_props(record.token)
        .map_err(|hr| format!("GetMethodProps({:#010x}) failed: {hr:#010x}", record.token))?;
    let msig = sig::parse_method_sig(&props.sig)
        .map_err(|e| format!("signature of {}: {}", record.full_name(), e.0))?;
    let name = |tok: u32| token_name(md, tok);
    let mut names: Vec<String> = (0..msig.params.len()).map(|i| format!("arg{i}")).collect();
    for (seq, n) in md.param_names(record.token) {
        if seq >= 1 && (seq as usize) <= names.len() && !n.is_empty() {
            names[seq as usize - 1] = n;
        }
    }
    let this = (msig.has_this && !msig.explicit_this).then(|| {
        let extends = md.type_def_extends(props.class).unwrap_or(0);
        let base = if extends == 0 {
            String::new()
        } else {
            name(extends)
        };
        if base == "System.ValueType" || base == "System.Enum" {
            ThisPlan::Declared(record.type_name.clone())
        } else {
            ThisPlan::Object
        }
    });
    let params = names
        .into_iter()
        .zip(msig.params.iter().map(|t| Slot::of(t, &name)))
        .collect();
    let ret = ret_plan(&msig.ret, role(record), &name);
    register(
        idx,
        ValueFunc {
            function_id: record.function_id as FunctionID,
            this,
            params,
            ret,
        },
    );
    Ok(())
}

/// The runtime's interfaces, handed over by [`install`]. Objects are described through them
/// only inside an ELT hook, where the thread is in cooperative mode and objects cannot move.
#[derive(Clone, Copy)]
struct Runtime {
    info: &'static Info,
    modules: &'static Modules,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// ClassID → type name.
static CLASS_NAMES: Mutex<Option<HashMap<ClassID, Arc<str>>>> = Mutex::new(None);
/// `(length offset, buffer offset)` of string objects, or `None` if the runtime said no.
static STRING_LAYOUT: OnceLock<Option<(u32, u32)>> = OnceLock::new();

impl Runtime {
    fn class_name(&self, class: ClassID, depth: u32) -> String {
        if let Some(n) = lock(&CLASS_NAMES).as_ref().and_then(|m| m.get(&class)) {
            return n.to_string();
        }
        let name = self.resolve_class(class, depth);
        lock(&CLASS_NAMES)
            .get_or_insert_with(HashMap::new)
            .insert(class, Arc::from(name.as_str()));
        name
    }

    fn resolve_class(&self, class: ClassID, depth: u32) -> String {
        if depth > 4 {
            return "?".into();
        }
        if let Some((_, elem, rank)) = self.info.array_class(class) {
            let inner = if elem != 0 {
                self.class_name(elem, depth + 1)
            } else {
                "?".into()
            };
            let commas = ",".repeat(rank.saturating_sub(1) as usize);
            return format!("{inner}[{commas}]");
        }
        let Ok(ClassInfo {
            module,
            token: td,
            args,
            ..
        }) = self.info.class_info(class)
        else {
            return "<object>".into();
        };
        let base = self
            .modules
            .get(self.info, module)
            .ok()
            .and_then(|m| {
                m.import
                    .as_ref()
                    .and_then(|md| modules::type_name(md, td).ok())
            })
            .unwrap_or_else(|| "<object>".into());
        if args.is_empty() {
            base
        } else {
            let a: Vec<String> = args
                .iter()
                .map(|&c| self.class_name(c, depth + 1))
                .collect();
            format!("{base}[{}]", a.join(","))
        }
    }
}

impl Objects for Runtime {
    fn type_name(&self, obj: u64) -> String {
        match self.info.class_of_object(obj as ObjectID) {
            Ok(c) => self.class_name(c, 0),
            Err(_) => "<object>".into(),
        }
    }

    fn string(&self, obj: u64) -> Option<(Vec<u16>, usize)> {
        let (len_off, buf_off) = (*STRING_LAYOUT.get_or_init(|| self.info.string_layout().ok()))?;
        // SAFETY: `obj` is a non-null string reference the runtime just passed to the hook;
        // the thread is in cooperative mode, so the object is live and does not move, and the
        // runtime's string layout puts the 32-bit length at `len_off`.
        let len = unsafe { ((obj as usize + len_off as usize) as *const u32).read_unaligned() };
        let total = len as usize;
        let n = total.min(MAX_STRING_CHARS);
        // SAFETY: as above; the string holds `len` UTF-16 units at `buf_off`, of which we read
        // at most `n <= len`.
        let units = unsafe {
            core::slice::from_raw_parts((obj as usize + buf_off as usize) as *const u16, n)
        }
        .to_vec();
        Some((units, total))
    }
}

/// The bytes of one argument range (at most 16; every slot reads at most 8).
///
/// # Safety
/// `start` must point at `len` readable bytes (a range the runtime just returned).
unsafe fn range_bytes<'a>(start: UINT_PTR, len: ULONG) -> &'a [u8] {
    if start == 0 {
        return &[];
    }
    // SAFETY: the caller's contract; we read at most `len` bytes.
    unsafe { core::slice::from_raw_parts(start as *const u8, (len as usize).min(16)) }
}

fn failed(hr: HRESULT) -> (ValueStatus, String) {
    if hr == CORPROF_E_DATAINCOMPLETE {
        (ValueStatus::Incomplete, String::new())
    } else {
        (ValueStatus::Failed, format!("{:#010x}", hr as u32))
    }
}

/// The arguments of `f` at the Enter being reported (`count` = `this` + parameters, ≥ 1).
fn enter_value(info: &Info, rt: &Runtime, f: &ValueFunc, elt: usize) -> (ValueStatus, String) {
    let count = f.params.len() + usize::from(f.this.is_some());
    // Header (8 bytes) + 16 per range; the runtime asks for one range more than it fills.
    let words = 1 + 2 * (count + 1);
    let mut small = [0u64; 1 + 2 * 17];
    let mut big = Vec::new();
    let buf: &mut [u64] = if words <= small.len() {
        &mut small[..words]
    } else {
        big.resize(words, 0);
        &mut big
    };
    // SAFETY: called from the Enter WithInfo hook with its own `elt`.
    let hr = unsafe { info.enter3_info(f.function_id, elt, buf) };
    if FAILED(hr) {
        return failed(hr);
    }
    let filled = ((buf[0] & 0xFFFF_FFFF) as usize).min((buf.len() - 1) / 2);
    if filled == 0 {
        return (ValueStatus::Empty, String::new());
    }
    let mut parts = Vec::with_capacity(count);
    for i in 0..count {
        let (start, len) = if i < filled {
            (buf[1 + 2 * i] as UINT_PTR, buf[2 + 2 * i] as u32)
        } else {
            (0, 0)
        };
        // SAFETY: ranges below `filled` were just filled by the runtime and point at the
        // argument copies it keeps for this hook.
        let bytes = unsafe { range_bytes(start, len) };
        let (name, text) = match (i, &f.this) {
            (0, Some(plan)) => {
                let text = match plan {
                    ThisPlan::Declared(n) => n.clone(),
                    ThisPlan::Object => render(&Slot::Object, bytes, rt).unwrap_or_else(|e| e),
                };
                ("this", text)
            }
            _ => {
                let (name, slot) = &f.params[i - usize::from(f.this.is_some())];
                let text = if bytes.is_empty() {
                    "?".to_string()
                } else {
                    render(slot, bytes, rt).unwrap_or_else(|e| e)
                };
                (name.as_str(), text)
            }
        };
        parts.push(format!("{name}={text}"));
    }
    (ValueStatus::Ok, parts.join(", "))
}

/// The return value of `f` at the Leave being reported, per its plan.
fn leave_value(
    info: &Info,
    rt: &Runtime,
    f: &ValueFunc,
    slot: &Slot,
    elt: usize,
) -> (ValueStatus, String) {
    // SAFETY: called from the Leave WithInfo hook with its own `elt`.
    let (hr, range) = unsafe { info.leave3_info(f.function_id, elt) };
    if FAILED(hr) {
        return failed(hr);
    }
    if range.startAddress == 0 || range.length == 0 {
        return (ValueStatus::Empty, String::new());
    }
    // SAFETY: the runtime just returned this range for the value being returned.
    let bytes = unsafe { range_bytes(range.startAddress, range.length) };
    match render(slot, bytes, rt) {
        Ok(t) => (ValueStatus::Ok, t),
        Err(e) => (ValueStatus::Failed, e),
    }
}

fn emit(status: ValueStatus, text: String, sp: u64) {
    if let Some(rec) = Recorder::global() {
        let id = rec.add_value(status, text);
        hooks::record(EventKind::Value.code() as u32, id, sp);
    }
}

fn capture(kind: EventKind, client_id: usize, elt: usize, sp: u64) {
    let Some(idx) = hooks::recorded_index(client_id) else {
        return;
    };
    let Some(f) = lookup(idx) else {
        return;
    };
    let Some(&rt) = RUNTIME.get() else {
        return;
    };
    let info = rt.info;
    let (status, text) = match kind {
        EventKind::Enter => {
            if f.params.is_empty() && f.this.is_none() {
                return;
            }
            enter_value(info, &rt, &f, elt)
        }
        _ => match &f.ret {
            RetPlan::None => return,
            RetPlan::Value(slot) => leave_value(info, &rt, &f, slot, elt),
        },
    };
    emit(status, text, sp);
}

/// `FunctionEnter3WithInfo` of a `--values` recording.
///
/// # Safety
/// Called by the runtime only, as a WithInfo Enter hook (`elt` is that hook's handle).
pub unsafe extern "C" fn enter_hook(id: FunctionIDOrClientID, elt: COR_PRF_ELT_INFO) {
    let _ = std::panic::catch_unwind(|| {
        let sp = hooks::profiled_sp(elt);
        // The Value event first (INFO `values_first`), then the Continuation and the Enter.
        capture(EventKind::Enter, id.value(), elt, sp);
        hooks::slow_enter(id.value(), elt, sp);
    });
}

crate::hooks::leave_hook_rcx0! {
    /// `FunctionLeave3WithInfo` of a `--values` recording: [`leave_inner`], then RCX = 0
    /// (`hooks::leave_hook_rcx0`). A Leave is only ever reported for a normal return, where the
    /// continuation is null; without this, `Probes async` under `--values` died in
    /// `AsyncHelpers.ThunkTaskCore.MoveNext` after the first completion, depending only on
    /// what the value capture happened to leave in RCX.
    ///
    /// # Safety
    /// Called by the runtime only, as a WithInfo Leave hook (`elt` is that hook's handle).
    pub fn leave_hook => leave_inner
}

/// The body of [`leave_hook`].
extern "C" fn leave_inner(client_id: usize, elt: usize) {
    let _ = std::panic::catch_unwind(|| {
        let sp = hooks::profiled_sp(elt);
        // The Value event first (INFO `values_first`), then an allocator's Continuation and
        // the Leave.
        capture(EventKind::Leave, client_id, elt, sp);
        hooks::slow_leave(client_id, elt, sp);
    });
}
