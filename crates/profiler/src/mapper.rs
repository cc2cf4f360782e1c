//! The FunctionIDMapper2: names each function once (com/resolve.rs), decides whether it gets
//! probes (the selection, and the unhandled-exception sentinel), marks its runtime-async role
//! and, for selected functions, its compiler state-machine role (com/machines.rs),
//! registers it with the recorder (and, with `--values`, its value plan) and returns the
//! client id the hooks decode (hooks.rs). Runs at JIT time, never on the hot path.

use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use eltrace_abi::*;
use eltrace_trace::{FunctionFlags, FunctionIdx, FunctionRecord};

use crate::com::info::Info;
use crate::com::modules::Modules;
use crate::config::HookMode;
use crate::hooks::Allocator;
use crate::recorder::Recorder;
use crate::sys::lock;
use crate::{hooks, values};

// The trace's readers know the runtime-async impl flag as `protocol::IMPL_ASYNC`; the profiler
// copies metadata's `impl_flags` unchanged and tests them with abi's `miAsync`.
const _: () = assert!(METHOD_IMPL_ASYNC == eltrace_trace::protocol::IMPL_ASYNC);

/// The unhandled-exception sentinel: CoreLib's `System.AppContext.OnUnhandledException`,
/// which raises `AppDomain.UnhandledException` just before the runtime prints the exception
/// and aborts (measured on CoreCLR 10.0.12: it is JIT-compiled and called on that path).
const SENTINEL_MODULE: &str = "System.Private.CoreLib.dll";
const SENTINEL_TYPE: &str = "System.AppContext";
const SENTINEL_METHOD: &str = "OnUnhandledException";

struct Mapper {
    info: &'static Info,
    modules: &'static Modules,
    rec: &'static Recorder,
    /// FunctionIDs of sentinel functions (see [`SENTINEL_METHOD`]).
    sentinels: Mutex<Vec<u64>>,
    /// (module, token) of methods without `METHOD_IMPL_ASYNC` whose async variant was seen:
    /// their Task-returning FunctionID is then marked the thunk (see [`async_role`]).
    variants: Mutex<Vec<(ModuleID, u32)>>,
    /// The runtime's major version (0 when unknown).
    runtime_major: u32,
    /// Inlining decisions for functions not mapped yet (see [`allows_inlining`]).
    inlining: Mutex<std::collections::HashMap<u64, bool>>,
    /// FunctionIDs of selected runtime-async variants whose continuation argument is recorded
    /// at Enter, and its register (hooks.rs `CLIENT_CONT`).
    cont_regs: Mutex<std::collections::HashMap<u64, u8>>,
    /// FunctionIDs of the runtime's continuation allocators and state-machine box getters
    /// (see [`allocator_kind`]).
    allocators: Mutex<std::collections::HashMap<u64, Allocator>>,
}

/// The one mapper (set once, by [`install`]).
static MAPPER: OnceLock<Mapper> = OnceLock::new();

/// Registers the mapper with the runtime; functions are named through `info` and `modules` and
/// recorded in `rec`.
pub fn install(info: &'static Info, modules: &'static Modules, rec: &'static Recorder) -> HRESULT {
    let _ = MAPPER.set(Mapper {
        info,
        modules,
        rec,
        sentinels: Mutex::new(Vec::new()),
        variants: Mutex::new(Vec::new()),
        runtime_major: runtime_major(&info.runtime_description().unwrap_or_default()),
        inlining: Mutex::new(std::collections::HashMap::new()),
        cont_regs: Mutex::new(std::collections::HashMap::new()),
        allocators: Mutex::new(std::collections::HashMap::new()),
    });
    info.set_function_id_mapper2(function_id_mapper)
}

impl Mapper {
    /// The mapper's work: the client id and whether the function gets probes (resolving it
    /// on first sight). Selected functions get probes that record events; the
    /// unhandled-exception sentinel gets probes even when not selected.
    fn map_function(&self, function: FunctionID) -> Option<(usize, bool)> {
        let rec = self.rec;
        let (idx, hooked) = match rec.function(function as u64) {
            Some(e) => e,
            None => self.add_function(rec, function)?,
        };
        let sentinel = lock(&self.sentinels).contains(&(function as u64));
        let cont_reg = lock(&self.cont_regs).get(&(function as u64)).copied();
        let allocator = lock(&self.allocators).get(&(function as u64)).copied();
        Some((
            hooks::client_id(idx.0, hooked, sentinel, cont_reg, allocator),
            hooked || sentinel || allocator.is_some(),
        ))
    }

    fn add_function(&self, rec: &Recorder, function: FunctionID) -> Option<(FunctionIdx, bool)> {
        let info = self.info;
        let (described, failure) = self.modules.describe(info, function);
        if let Some(why) = failure {
            rec.internal_error("metadata", &format!("naming function {function:#x}: {why}"));
        }
        let mut record = described.record;
        let mut hooked = rec.config.selection.selects(
            &described.glob_module,
            &record.full_name(),
            described.framework,
        );
        if hooked && slow_path_async_unsafe(rec.config.hooks, record.impl_flags) {
            // On .NET 10 the runtime's slow-path Leave stub does not keep RCX, which carries a
            // runtime-async variant's continuation back to its caller. eltrace's own slow-path
            // Leave hooks return with RCX = 0 (`hooks::leave_hook_rcx0`), but the benchmark's empty
            // hooks do not: there runtime-async methods get no probes, so as not to crash the
            // process (docs/async-observations.md).
            hooked = false;
            if !SLOW_ASYNC_NOTED.swap(true, Ordering::Relaxed) {
                rec.note(
                    "slow-path",
                    "runtime-async methods get no probes with the empty slow-path hooks (the \
                     runtime's slow-path Leave does not keep the continuation register RCX)",
                );
            }
        }
        if hooked && self.runtime_major == 10 && await_helper(&record) {
            // .NET 10 changes the program when these get probes: every await of the
            // runtime-async caller then completes without suspending (docs/async-observations.md).
            hooked = false;
        }
        if hooked && self.slow_path_vector_unsafe(rec, described.module_id, &record) {
            hooked = false;
        }
        if hooked {
            record.flags.0 |= FunctionFlags::HOOKED;
            // Only selected functions: their events are what the analysis reads.
            let (bits, machine) = self.modules.state_machine(
                info,
                described.module_id,
                record.token,
                described.class,
            );
            record.flags.0 |= bits;
            record.state_machine = machine;
        }
        record.flags.0 |= self.async_role(described.module_id, &record, hooked, described.returns);
        if hooked && record.flags.0 & FunctionFlags::ASYNC_VARIANT != 0 {
            // Where the variant's Enter finds its continuation (com/continuation.rs).
            if let Some(r) = described.cont_reg {
                lock(&self.cont_regs).insert(function as u64, r);
                hooks::ALLOCATIONS_WANTED.store(true, Ordering::Relaxed);
            }
        } else if hooked && receives_this(&record) {
            // The object a state machine's `MoveNext` or an async iterator's member works on
            // (RDI at the Enter), recorded like a continuation argument: the analysis links
            // resumes and enumerations by it (docs/abi.md "State machines by `this`").
            lock(&self.cont_regs).insert(function as u64, 0);
            if !record.flags.iterator() {
                hooks::BOXES_WANTED.store(true, Ordering::Relaxed);
            }
        }
        // Only eltrace's own hooks record allocators (not the benchmark's empty ones).
        let allocator = if described.framework && rec.config.hooks.records() {
            allocator_kind(&record).filter(|&k| self.wanted_allocator(k, function))
        } else {
            None
        };
        if let Some(kind) = allocator {
            // Probed whether selected or not, its Leave records the continuation a suspending
            // runtime-async method allocated, or the box a classic one's suspension uses (the
            // struct inside it is the `this` of the call's resumes) (hooks.rs `CLIENT_ALLOC`;
            // the analysis takes it as the suspension of the method that called it); a frame
            // only where selected.
            record.flags.0 |= match kind {
                Allocator::Continuation => FunctionFlags::CONT_ALLOCATOR,
                Allocator::Box => FunctionFlags::STATE_MACHINE_BOX,
            };
            lock(&self.allocators).insert(function as u64, kind);
        }
        if described.framework
            && record.module == SENTINEL_MODULE
            && record.type_name == SENTINEL_TYPE
            && record.method == SENTINEL_METHOD
        {
            lock(&self.sentinels).push(function as u64);
        }
        let for_values =
            (rec.config.values && hooked && allocator.is_none()).then(|| record.clone());
        let (idx, hooked) = rec.add_function(record, hooked);
        if let Some(mut r) = for_values {
            r.idx = idx;
            if let Err(e) = values::prepare(described.module_id, idx.0, &r) {
                rec.internal_error("values", &format!("no values for {}: {e}", r.full_name()));
            }
        }
        Some((idx, hooked))
    }
}

impl Mapper {
    /// On the slow path (any WithInfo hooks), whether a selected function must go without
    /// probes because its signature passes or returns a SIMD vector wider than 64 bits: the
    /// runtime's Unix x64 stubs keep only the low 64 bits of XMM0–7, and the JIT holds such a
    /// vector in XMM0/XMM1 across the Tailcall probe (docs/abi.md, "Vector values on the slow
    /// path"). Each such function is counted and named in the trace's diagnostics. The fast
    /// path's stubs keep the whole registers: it probes everything.
    fn slow_path_vector_unsafe(
        &self,
        rec: &Recorder,
        module: ModuleID,
        record: &FunctionRecord,
    ) -> bool {
        if !matches!(rec.config.hooks, HookMode::Slow | HookMode::SlowEmpty) || module == 0 {
            return false;
        }
        match values::vectors::method_has_wide_simd(self.info, self.modules, module, record.token) {
            Ok(false) => false,
            Ok(true) => {
                let n = SLOW_VECTOR_UNPROBED.fetch_add(1, Ordering::Relaxed) + 1;
                rec.note(
                    "slow-path-vectors",
                    &format!(
                        "no probes for {} (unprobed #{n}): it passes or returns a SIMD vector \
                         wider than 64 bits, which the runtime's slow-path ELT stubs do not keep \
                         (docs/abi.md); record without --slow-path/--values to probe it",
                        record.full_name()
                    ),
                );
                true
            }
            Err(e) => {
                rec.internal_error(
                    "metadata",
                    &format!("signature of {} (vector check): {e}", record.full_name()),
                );
                false
            }
        }
    }
}

/// Whether the JIT may inline `callee` (the `JITInlining` callback): not when its calls are
/// recorded (selected, the unhandled-exception sentinel, a continuation allocator), nor when
/// it cannot be named.
/// Decided once per function, at JIT time; a function not mapped yet is named and its
/// decision kept without registering it (it gets a FUNCTION record only when it is mapped).
pub fn allows_inlining(callee: FunctionID) -> bool {
    match std::panic::catch_unwind(|| MAPPER.get().map(|m| m.allows_inlining(callee))) {
        Ok(Some(allow)) => allow,
        _ => false,
    }
}

impl Mapper {
    fn allows_inlining(&self, callee: FunctionID) -> bool {
        if lock(&self.sentinels).contains(&(callee as u64))
            || lock(&self.allocators).contains_key(&(callee as u64))
        {
            return false;
        }
        if let Some((_, hooked)) = self.rec.function(callee as u64) {
            return !hooked;
        }
        if let Some(&allow) = lock(&self.inlining).get(&(callee as u64)) {
            return allow;
        }
        let (described, failure) = self.modules.describe(self.info, callee);
        let record = &described.record;
        let allow = failure.is_none()
            && !self.rec.config.selection.selects(
                &described.glob_module,
                &record.full_name(),
                described.framework,
            )
            && !(described.framework
                && record.module == SENTINEL_MODULE
                && record.type_name == SENTINEL_TYPE
                && record.method == SENTINEL_METHOD)
            && !(described.framework
                && allocator_kind(record).is_some_and(|k| self.wanted_allocator(k, callee)));
        lock(&self.inlining).insert(callee as u64, allow);
        allow
    }

    /// Whether an allocator-like function gets probes: every continuation allocator; a box
    /// getter's instantiation only for a selected struct state machine (its `MoveNext`
    /// selected), so that unselected code's suspensions, the framework's included, pay
    /// nothing.
    fn wanted_allocator(&self, kind: Allocator, function: FunctionID) -> bool {
        match kind {
            Allocator::Continuation => true,
            Allocator::Box => {
                crate::com::continuation::boxed_machine(self.modules, self.info, function)
                    .is_some_and(|(module, ty, framework)| {
                        self.rec.config.selection.selects(
                            &module,
                            &format!("{ty}.MoveNext"),
                            framework,
                        )
                    })
            }
        }
    }
}

/// How many functions the slow path left without probes because of vector arguments.
static SLOW_VECTOR_UNPROBED: AtomicU64 = AtomicU64::new(0);

/// `FunctionIDMapper2`: returns `idx + 1` plus flags (never 0, see `hooks::client_id`) so the
/// hooks get the index without a lookup; unselected functions get `*hook = FALSE`.
unsafe extern "C" fn function_id_mapper(
    function: FunctionID,
    _client_data: *mut c_void,
    hook: *mut BOOL,
) -> UINT_PTR {
    let mapped = std::panic::catch_unwind(|| MAPPER.get()?.map_function(function));
    let (client, hooked) = match mapped {
        Ok(Some(m)) => m,
        _ => {
            if let Some(rec) = Recorder::global() {
                rec.internal_error("mapper", &format!("could not map function {function:#x}"));
            }
            (function, false)
        }
    };
    if !hook.is_null() {
        // SAFETY: non-null out pointer from the runtime.
        unsafe { *hook = BOOL::from(hooked) };
    }
    client
}

impl Mapper {
    /// The runtime-async role of a function. For a method with impl flag `METHOD_IMPL_ASYNC`:
    /// `ASYNC_THUNK` when `GetFunctionFromToken(module, token)` returns this very FunctionID
    /// (the token maps to the Task-returning thunk), `ASYNC_VARIANT` when it returns another
    /// one (this one runs the method's code); nothing when the call fails (e.g. generic
    /// methods) or the method is not runtime-async.
    ///
    /// The runtime also makes an async variant of a Task-returning method that is *not* async
    /// when runtime-async code awaits it (`plain-await`; impl flags without the Async bit):
    /// for a selected, non-generic method the token lookup tells it the same way (another
    /// FunctionID than the token's), and the method's Task-returning FunctionID, mapped after
    /// its variant, is marked its thunk. Generic methods and methods of generic types are
    /// left out (an instantiation's FunctionID differs from the token's as well). Called at
    /// mapper time, never on the hot path. A runtime-async method whose signature returns no
    /// object (void, a generic parameter, a primitive) has no thunk: it is a variant.
    fn async_role(
        &self,
        module: ModuleID,
        record: &FunctionRecord,
        hooked: bool,
        returns: u8,
    ) -> u32 {
        if module == 0 {
            return 0;
        }
        if record.impl_flags & METHOD_IMPL_ASYNC != 0 {
            if !returns_object(returns) {
                // No Task-returning thunk exists: the method is its own async code (CoreLib's
                // `AsyncHelpers.TransparentAwait` and the like, .NET 11).
                return FunctionFlags::ASYNC_VARIANT;
            }
            return role_from_lookup(record.function_id, self.primary(module, record));
        }
        if !hooked {
            return 0;
        }
        let by_token = self.primary(module, record);
        let role = role_from_lookup(record.function_id, by_token);
        let key = (module, record.token);
        if role == FunctionFlags::ASYNC_VARIANT {
            lock(&self.variants).push(key);
            role
        } else if role == FunctionFlags::ASYNC_THUNK && lock(&self.variants).contains(&key) {
            role
        } else {
            0
        }
    }
}

impl Mapper {
    /// The FunctionID the runtime maps `record`'s method to: for a runtime-async method its
    /// Task-returning thunk, for another method the method itself, so that a FunctionID that
    /// differs is the method's async variant. A method of a generic type or a generic method
    /// is looked up with its own instantiation (its class and type arguments, `System.__Canon`
    /// for shared code), which `GetFunctionFromToken` refuses.
    fn primary(&self, module: ModuleID, record: &FunctionRecord) -> Option<FunctionID> {
        let generic = record.type_name.contains('`') || record.method.contains('`');
        if !generic {
            return self.info.function_from_token(module, record.token).ok();
        }
        let function = record.function_id as FunctionID;
        let (class, args) = self.info.instantiation(function)?;
        self.info
            .function_from_token_and_type_args(module, record.token, class, &args)
            .ok()
    }
}

/// Whether a signature's return element (`Described::returns`) can be a Task or ValueTask:
/// a class, value type or generic instance (0, unknown, counts as one).
pub fn returns_object(element: u8) -> bool {
    matches!(element, 0 | 0x11 | 0x12 | 0x15)
}

/// CoreLib's `AsyncHelpers.AwaitAwaiter`/`UnsafeAwaitAwaiter` (the awaiter helpers that
/// runtime-async code calls for an `await` of a custom awaiter such as `Task.Yield()`).
fn await_helper(r: &FunctionRecord) -> bool {
    r.module == "System.Private.CoreLib.dll"
        && r.type_name == "System.Runtime.CompilerServices.AsyncHelpers"
        && (r.method.starts_with("AwaitAwaiter") || r.method.starts_with("UnsafeAwaitAwaiter"))
}

/// CoreLib's `AsyncHelpers.AllocContinuation`, `AllocContinuationMethod` and
/// `AllocContinuationClass` (.NET 10 and 11): the helpers a runtime-async method calls when it
/// suspends, each returning the new continuation object, which the runtime passes to the
/// method's resume (docs/abi.md "Continuations at suspension").
///
/// And CoreLib's `AsyncTaskMethodBuilder<TResult>.GetStateMachineBox<TStateMachine>` and
/// `PoolingAsyncValueTaskMethodBuilder<TResult>.GetStateMachineBox<TStateMachine>` (every
/// builder of a classic async method goes through one of them at each suspension): each
/// returns the box that holds the state machine, whose `MoveNext` the call's resumes run with
/// `this` inside the box (docs/abi.md "State machines by `this`").
fn allocator_kind(r: &FunctionRecord) -> Option<Allocator> {
    const CS: &str = "System.Runtime.CompilerServices.";
    if r.module != "System.Private.CoreLib.dll" {
        return None;
    }
    let ty = r.type_name.strip_prefix(CS)?;
    match (ty, r.method.as_str()) {
        (
            "AsyncHelpers",
            "AllocContinuation" | "AllocContinuationMethod" | "AllocContinuationClass",
        ) => Some(Allocator::Continuation),
        ("AsyncTaskMethodBuilder`1" | "PoolingAsyncValueTaskMethodBuilder`1", m)
            if m.starts_with("GetStateMachineBox") =>
        {
            Some(Allocator::Box)
        }
        _ => None,
    }
}

/// A selected function whose `this` (RDI) the analysis takes as its identity: `MoveNext` of a
/// compiler-generated async state machine (a boxed struct's interior, or the class object,
/// from its first resume on), and an async iterator's `MoveNextAsync`, `get_Current`,
/// `DisposeAsync` and body `MoveNext` (the enumerator). Instance methods all: `this` is the first argument.
fn receives_this(r: &FunctionRecord) -> bool {
    let m = r.method.as_str();
    match (r.flags.async_state_machine(), r.flags.iterator()) {
        (true, false) => m == "MoveNext",
        (true, true) => {
            m == "MoveNext"
                || m.ends_with("MoveNextAsync")
                || m.ends_with("get_Current")
                || m.ends_with("DisposeAsync")
        }
        _ => false,
    }
}

/// The major version in a runtime description ("CoreCLR 10.0.12" → 10; 0 when none).
pub fn runtime_major(description: &str) -> u32 {
    description
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// The role bits given this function's id and what the token lookup returned.
pub fn role_from_lookup(function_id: u64, by_token: Option<FunctionID>) -> u32 {
    match by_token {
        Some(f) if f as u64 == function_id => FunctionFlags::ASYNC_THUNK,
        Some(f) if f != 0 => FunctionFlags::ASYNC_VARIANT,
        _ => 0,
    }
}

/// Whether a method must not get probes in hook mode `mode`: runtime-async methods (impl
/// flag `METHOD_IMPL_ASYNC`) with the benchmark's empty slow-path hooks, which do not clear
/// RCX after a Leave as eltrace's recording slow-path hooks do.
pub fn slow_path_async_unsafe(mode: HookMode, impl_flags: u32) -> bool {
    matches!(mode, HookMode::SlowEmpty) && impl_flags & METHOD_IMPL_ASYNC != 0
}

/// Set once the slow-path note about runtime-async methods was written.
static SLOW_ASYNC_NOTED: AtomicBool = AtomicBool::new(false);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_roles_from_the_token_lookup() {
        assert_eq!(
            role_from_lookup(0x100, Some(0x100)),
            FunctionFlags::ASYNC_THUNK
        );
        assert_eq!(
            role_from_lookup(0x200, Some(0x100)),
            FunctionFlags::ASYNC_VARIANT
        );
        assert_eq!(role_from_lookup(0x200, None), 0);
        assert_eq!(role_from_lookup(0x200, Some(0)), 0);
    }

    #[test]
    fn runtime_majors_and_return_elements() {
        assert_eq!(runtime_major("CoreCLR 10.0.12"), 10);
        assert_eq!(runtime_major("CoreCLR 11.0.0"), 11);
        assert_eq!(runtime_major(""), 0);
        // void, !!0 (MVAR) and int: no Task; a generic instance, a class: maybe.
        assert!(!returns_object(0x01));
        assert!(!returns_object(0x1e));
        assert!(!returns_object(0x08));
        assert!(returns_object(0x15));
        assert!(returns_object(0x12));
        use crate::com::resolve::return_element;
        // DEFAULT, 1 parameter, returns void.
        assert_eq!(return_element(&[0x00, 0x01, 0x01, 0x08]), 0x01);
        // GENERIC, 1 type parameter, 1 parameter, returns !!0.
        assert_eq!(
            return_element(&[0x10, 0x01, 0x01, 0x1e, 0x00, 0x1e, 0x00]),
            0x1e
        );
        // HASTHIS, 0 parameters, modreq(token) then GENERICINST.
        assert_eq!(return_element(&[0x20, 0x00, 0x1f, 0x09, 0x15, 0x12]), 0x15);
        assert_eq!(return_element(&[0x00]), 0);
    }
}
