//! The hot path in Rust: [`record`], which appends one raw record to the calling thread's
//! ring (and, when the ring is half full, encodes it into trace chunks on this thread), the
//! ELT3 WithInfo hooks of the slow path, the fast-path stubs' Rust fallback
//! ([`fast_probe`]) and the client-id encoding the mapper and both paths share. After a
//! thread's first event (its warm-up, slot.rs) nothing here locks, allocates, logs or makes a
//! system call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use eltrace_trace::EventKind;
use eltrace_trace::protocol::OBJECT_EPOCH_BITS;

use crate::clock;
use crate::recorder::Recorder;
use crate::ring::stream::Stream;
use crate::ring::{RawRecord, Ring};
use crate::slot;
use crate::writer::{self, Writer};

/// Appends `{now, sp, func, kind}` to the calling thread's ring (no clock read when events
/// are timeless: `clock::event_now`). When the ring is full it
/// waits for the writer to make room (lossless recording), or counts a drop where it may not
/// wait (`record --lossy`, or the writer has stopped).
#[inline(always)]
pub fn record(kind: u32, func: u32, sp: u64) {
    let ts = clock::event_now();
    let ring = slot::ring();
    if ring.is_null() {
        late_drop();
        return;
    }
    // SAFETY: a non-null ring from the slot is this thread's registered ring, which is freed
    // only after this thread retired it (at its exit).
    let ring = unsafe { &*ring };
    if let Some(stream) = ring.stream() {
        record_stream(ring, stream, ts, kind as u8, func, sp);
        return;
    }
    let rec = RawRecord::new(ts, sp, func, kind);
    if !ring.try_push(rec) {
        full(ring, rec);
    }
    if ring.above_threshold() {
        encode_own(ring);
    }
}

/// [`record`] into the thread's stream (ring/stream.rs): encode the event here; once the
/// stream is half full, wake the writer (and let the stubs write on); when it is full, wait
/// for the writer as [`full`] does, or count a drop where waiting is not allowed.
#[inline(never)]
fn record_stream(ring: &Ring, stream: &Stream, ts: u64, code: u8, func: u32, sp: u64) {
    let timeless = clock::is_timeless();
    while !stream.push(timeless, ts, code, func, sp) {
        writer::wake_if_sleeping();
        if !writer::wait_for_room(ring) {
            stream.drop_one();
            return;
        }
    }
    if stream.wants_writer() {
        writer::wake_if_sleeping();
        stream.writer_woken();
    }
}

/// The ring is half full: encode its records into trace chunks here, on the thread that wrote
/// them (ring/consumer.rs), and wake the writer if half of the outbox's buffers wait for it
/// (fewer wakes; the other half is the room the encoder keeps while the writer comes; a
/// buffer sealed below that is written at the writer's next round or flush). Nothing
/// happens while another thread (the writer) holds the ring's consumer lock. No lock is
/// taken, nothing allocated, no system call but the writer's wake-up (once per writer sleep).
#[cold]
#[inline(never)]
fn encode_own(ring: &Ring) -> bool {
    let Some(mut consumer) = ring.try_consume() else {
        return false;
    };
    let done = consumer.encode(ring.published());
    drop(consumer);
    if done.sealed > 0 && ring.outbox().half_waiting() {
        writer::wake_if_sleeping();
    }
    done.records > 0
}

/// The ring is full: encode and push, or wait for the writer to take encoded buffers and
/// push, or count the event as dropped where waiting is not allowed. The record keeps the
/// time the hook was called, not the time the wait ended.
#[cold]
#[inline(never)]
fn full(ring: &Ring, rec: RawRecord) {
    let mut fruitless = 0;
    loop {
        let progressed = encode_own(ring);
        if ring.try_push(rec) {
            return;
        }
        if !writer::wait_for_room(ring) {
            ring.drop_one();
            return;
        }
        if ring.try_push(rec) {
            return;
        }
        // Room was promised but encoding made none: never spin for ever on an internal
        // failure; count the event as dropped instead (the drop is reported).
        fruitless = if progressed { 0 } else { fruitless + 1 };
        if fruitless > MAX_FRUITLESS {
            ring.drop_one();
            return;
        }
    }
}

/// Rounds of [`full`] in a row that may find room promised but not made before it drops.
const MAX_FRUITLESS: u32 = 10_000;

/// An event of a thread that may not record (its ring was retired, or recording had ended).
#[cold]
#[inline(never)]
fn late_drop() {
    if let Some(rec) = Recorder::global() {
        rec.late_drops.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads the profiled method's caller SP from the runtime's ELT info, or returns 0.
///
/// This relies on runtime internals (docs/abi.md, "Unix x64: where a WithInfo hook finds the
/// caller SP"): `eltInfo` points at `COR_PRF_ELT_INFO_INTERNAL` on the stack of the runtime's
/// ProfileEnter/Leave/Tailcall FCALL (our caller), whose first field points at the
/// PROFILE_PLATFORM_SPECIFIC_DATA that ProfileEnterNaked built further up the same stack, and
/// that struct holds `profiledRsp` at offset 0x20. Each pointer is checked to lie on this
/// thread's stack just above our own frame before it is read, and the result must be above
/// both and 8-aligned; otherwise the answer is 0 ("unknown"), never a fault.
#[inline(always)]
pub fn profiled_sp(elt_info: usize) -> u64 {
    const FAR: usize = 64 * 1024 * 1024;
    let Some(platform) = platform_data(elt_info) else {
        return 0;
    };
    // SAFETY: as in `platform_data` for `platform + 0x20` (it is at most NEAR + 0x20 above
    // our stack pointer, and the 0x130-byte platform struct lies entirely in the runtime
    // stub's frame).
    let sp = unsafe {
        ((platform + eltrace_abi::PROFILE_PLATFORM_SPECIFIC_DATA__profiledRsp) as *const u64).read()
    };
    let sp_usize = sp as usize;
    if sp_usize <= platform || sp_usize - platform > FAR || sp % 8 != 0 {
        return 0;
    }
    sp
}

/// The runtime's PROFILE_PLATFORM_SPECIFIC_DATA behind a WithInfo hook's `eltInfo` (see
/// [`profiled_sp`]), checked to lie on this thread's stack just above our frame.
#[inline(always)]
fn platform_data(elt_info: usize) -> Option<usize> {
    const NEAR: usize = 64 * 1024;
    let here: usize;
    // SAFETY: reads the stack pointer register; no memory access.
    unsafe {
        core::arch::asm!("mov {}, rsp", out(reg) here, options(nomem, nostack, preserves_flags));
    }
    if elt_info < here || elt_info - here > NEAR || elt_info % 8 != 0 {
        return None;
    }
    // SAFETY: `elt_info` is 8-aligned and within 64 KiB above our stack pointer, i.e. inside
    // the live part of this thread's stack (our callers' frames).
    let platform = unsafe { (elt_info as *const usize).read() };
    if platform <= elt_info || platform - here > NEAR || platform % 8 != 0 {
        return None;
    }
    Some(platform)
}

/// Defines a slow-path (WithInfo) Leave hook that calls `$inner` (an
/// `extern "C" fn(usize, usize)`, given the hook's two arguments unchanged) and then returns
/// with RCX = 0. The runtime's Unix `ProfileLeaveNaked` does not restore RCX, which carries a
/// runtime-async method's continuation on x64 (null at every reported Leave, since .NET 10
/// zeroes it before the Leave probe); whatever a hook leaves in RCX reaches the managed caller.
/// Every WithInfo Leave hook of eltrace (recording, values, the check experiments) is one of
/// these. Measured without it: `Probes async` under `--slow-path` or `--values` died with a
/// NullReferenceException in `AsyncHelpers.ThunkTaskCore`, and the check's `info` experiment
/// with SIGABRT now and then.
macro_rules! leave_hook_rcx0 {
    ($(#[$meta:meta])* $vis:vis fn $name:ident => $inner:path) => {
        $(#[$meta])*
        // SAFETY (naked): a complete SysV function: entry RSP ≡ 8 (mod 16), so one push keeps
        // the call aligned; RDI/RSI (the hook's arguments) pass through to `$inner` unchanged;
        // RBX is restored; RCX is caller-saved, so zeroing it breaks no C contract.
        #[unsafe(naked)]
        $vis unsafe extern "C" fn $name(
            _id: eltrace_abi::FunctionIDOrClientID,
            _elt: eltrace_abi::COR_PRF_ELT_INFO,
        ) {
            core::arch::naked_asm!(
                "push rbx",
                "call {inner}",
                "xor ecx, ecx",
                "pop rbx",
                "ret",
                inner = sym $inner,
            );
        }
    };
}
pub(crate) use leave_hook_rcx0;

/// Client-id flag: the function is one of the runtime's continuation allocators
/// (`AsyncHelpers.AllocContinuation*`, called by a runtime-async method as it suspends). Its
/// Leave is recorded, preceded by a Continuation event carrying the continuation it returns
/// (RAX), once a runtime-async variant's continuation is recorded at all
/// ([`ALLOCATIONS_WANTED`]); its Enter only where the selection chose it as well
/// ([`CLIENT_ALLOC_SELECTED`]; docs/abi.md "Continuations at suspension").
pub const CLIENT_ALLOC: usize = 1 << CLIENT_FLAGS_SHIFT;
/// Client-id field of 3 bits: 1 + the integer argument register (0 RDI .. 5 R9) that holds
/// the continuation argument of a runtime-async variant at its Enter, recorded by a
/// Continuation event before the Enter (docs/abi.md "The async continuation argument"); 0 for
/// other functions.
pub const CLIENT_CONT_SHIFT: u32 = CLIENT_FLAGS_SHIFT + 1;
/// The bits of [`CLIENT_CONT_SHIFT`]'s field.
pub const CLIENT_CONT: usize = 7 << CLIENT_CONT_SHIFT;
/// A continuation allocator's [`CLIENT_CONT`] field when the selection chose it too: its Enter
/// is recorded as well, so that what it calls (recorded under `--include '*'`) nests under its
/// frame, and its events are recorded whether or not [`ALLOCATIONS_WANTED`].
pub const CLIENT_ALLOC_SELECTED: usize = 7 << CLIENT_CONT_SHIFT;
/// With [`CLIENT_ALLOC`]: the [`CLIENT_CONT`] field of a state-machine box getter (CoreLib's
/// `GetStateMachineBox`, called at every suspension of a classic async method), recorded like
/// an allocator once a state machine's `this` is recorded at all ([`BOXES_WANTED`]).
pub const CLIENT_BOX: usize = 1 << CLIENT_CONT_SHIFT;
/// A box getter's [`CLIENT_CONT`] field when the selection chose it too (a frame, as
/// [`CLIENT_ALLOC_SELECTED`] for an allocator).
pub const CLIENT_BOX_SELECTED: usize = 2 << CLIENT_CONT_SHIFT;
/// Client-id flag: the function is probed only because it is a sentinel; record no events.
pub const CLIENT_NO_EVENTS: usize = 1 << (CLIENT_FLAGS_SHIFT + 4);
/// Client-id flag: the function is the unhandled-exception sentinel
/// (`System.AppContext.OnUnhandledException`); its Leave ends the trace with End(Abort).
pub const CLIENT_SENTINEL: usize = 1 << (CLIENT_FLAGS_SHIFT + 5);
/// The client-id flags are the bits from here up: a client id shifted right by this is
/// nonzero exactly when a flag is set (the fast-path stubs' first test).
pub const CLIENT_FLAGS_SHIFT: u32 = 58;
/// What the mapper adds to a function index to make its client id (never 0).
pub const CLIENT_INDEX_BIAS: usize = 1;

/// Whether continuation allocators record anything: set by the mapper once it has given a
/// runtime-async variant its continuation register, so a program with no such variant
/// selected pays nothing for its suspensions but the allocators' probes.
pub static ALLOCATIONS_WANTED: AtomicBool = AtomicBool::new(false);

/// Whether state-machine box getters record anything: set by the mapper once a state
/// machine's `MoveNext` records its `this`.
pub static BOXES_WANTED: AtomicBool = AtomicBool::new(false);

// The stubs build a record's key from the client id's low 32 bits (`idx + bias`, at most
// 2^28): the flags must lie above them, each flag on its own bit.
const _: () = assert!(
    CLIENT_FLAGS_SHIFT >= 32
        && CLIENT_SENTINEL == CLIENT_NO_EVENTS << 1
        && CLIENT_NO_EVENTS == 1 << (CLIENT_CONT_SHIFT + 3)
        && CLIENT_ALLOC << 1 == 1 << CLIENT_CONT_SHIFT
);

/// The client id the mapper returns: `idx + 1` (never 0) plus flags. A raw record holds 28
/// bits of function index (ring.rs); a function beyond that (2^28 functions mapped) is probed
/// without events.
///
/// `cont_reg` is where a runtime-async variant gets its continuation (see [`CLIENT_CONT`]);
/// `allocator` marks a continuation allocator ([`CLIENT_ALLOC`]), whose events are recorded
/// whether selected (`record_events`: [`CLIENT_ALLOC_SELECTED`]) or not.
pub const fn client_id(
    idx: u32,
    record_events: bool,
    sentinel: bool,
    cont_reg: Option<u8>,
    allocator: Option<Allocator>,
) -> usize {
    let mut c = idx as usize + CLIENT_INDEX_BIAS;
    if let Some(a) = allocator {
        c |= CLIENT_ALLOC;
        c |= match (a, record_events) {
            (Allocator::Continuation, false) => 0,
            (Allocator::Continuation, true) => CLIENT_ALLOC_SELECTED,
            (Allocator::Box, false) => CLIENT_BOX,
            (Allocator::Box, true) => CLIENT_BOX_SELECTED,
        };
    } else if let Some(r) = cont_reg {
        if r < 6 {
            c |= (r as usize + 1) << CLIENT_CONT_SHIFT;
        }
    }
    if !(record_events || allocator.is_some()) || idx >= (1 << crate::ring::FUNC_BITS) {
        c |= CLIENT_NO_EVENTS;
    }
    if sentinel {
        c |= CLIENT_SENTINEL;
    }
    c
}

/// What an allocator-like function returns at its Leave ([`CLIENT_ALLOC`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// A runtime-async continuation (`AsyncHelpers.AllocContinuation*`).
    Continuation,
    /// A classic async method's state-machine box (`GetStateMachineBox`).
    Box,
}

/// The function index of a client id whose events are recorded (`None` for functions probed
/// only as sentinels).
pub fn recorded_index(client_id: usize) -> Option<u32> {
    (client_id & CLIENT_NO_EVENTS == 0).then(|| func_of(client_id))
}

/// The function index the mapper encoded in the client id.
#[inline(always)]
fn func_of(client_id: usize) -> u32 {
    (client_id & 0xFFFF_FFFF).wrapping_sub(CLIENT_INDEX_BIAS) as u32
}

#[inline(always)]
fn probe(kind: EventKind, client_id: usize, elt_info: usize) {
    if client_id >> CLIENT_FLAGS_SHIFT == 0 {
        record(
            kind.code() as u32,
            func_of(client_id),
            profiled_sp(elt_info),
        );
    } else {
        flagged_probe(kind, client_id, elt_info);
    }
}

/// The fast-path stubs' Rust fallback (fast.rs): the caller SP comes from the JIT directly.
/// `saved` (else null) points, at an Enter, at the stub's saved integer argument registers
/// (R9 first and RDI last), at a Leave at its saved RAX (the return value).
#[inline(always)]
pub fn fast_probe(kind: u32, client_id: usize, sp: u64, saved: *const u64) {
    if client_id >> CLIENT_FLAGS_SHIFT == 0 {
        record(kind, func_of(client_id), sp);
    } else {
        let kind = EventKind::from_code(kind as u8).unwrap_or(EventKind::Leave);
        let value = match kind {
            _ if saved.is_null() => None,
            EventKind::Enter => cont_register(client_id).map(|r| {
                // SAFETY: the Enter stub saved the six argument registers in its own frame,
                // `saved` pointing at R9, RDI 5 words above; r < 6.
                unsafe { saved.add(5 - r).read() }
            }),
            // SAFETY: the Leave stub saved RAX in its own frame, where `saved` points.
            EventKind::Leave if client_id & CLIENT_ALLOC != 0 => Some(unsafe { saved.read() }),
            _ => None,
        };
        flagged(kind, client_id, sp, value);
    }
}

/// A WithInfo Enter whose caller SP is known already (`record --values`).
pub fn slow_enter(client_id: usize, elt_info: usize, sp: u64) {
    slow_probe(EventKind::Enter, client_id, elt_info, sp);
}

/// A WithInfo Leave whose caller SP is known already (`record --values`).
pub fn slow_leave(client_id: usize, elt_info: usize, sp: u64) {
    slow_probe(EventKind::Leave, client_id, elt_info, sp);
}

#[inline(always)]
fn slow_probe(kind: EventKind, client_id: usize, elt_info: usize, sp: u64) {
    if client_id >> CLIENT_FLAGS_SHIFT == 0 {
        record(kind.code() as u32, func_of(client_id), sp);
    } else {
        let value = slow_value(kind, client_id, elt_info);
        flagged(kind, client_id, sp, value);
    }
}

/// The argument register (0 RDI .. 5 R9) of a client id's continuation field.
#[inline(always)]
fn cont_register(client_id: usize) -> Option<usize> {
    match (client_id & CLIENT_CONT) >> CLIENT_CONT_SHIFT {
        0 => None,
        r => Some(r - 1).filter(|&r| r < 6),
    }
}

#[cold]
#[inline(never)]
fn flagged_probe(kind: EventKind, client_id: usize, elt_info: usize) {
    flagged(
        kind,
        client_id,
        profiled_sp(elt_info),
        slow_value(kind, client_id, elt_info),
    );
}

/// The value a slow-path (WithInfo) hook records for a flagged client id: a runtime-async
/// variant's continuation argument at its Enter, a continuation allocator's return value
/// (RAX) at its Leave, each read where the runtime's ProfileEnterNaked/ProfileLeaveNaked saved
/// it in its PROFILE_PLATFORM_SPECIFIC_DATA (see [`profiled_sp`]); `None` for other hooks and
/// where that struct is not found.
pub fn slow_value(kind: EventKind, client_id: usize, elt_info: usize) -> Option<u64> {
    let offset = match kind {
        EventKind::Enter => {
            eltrace_abi::PROFILE_PLATFORM_SPECIFIC_DATA__rdi + 8 * cont_register(client_id)?
        }
        EventKind::Leave if client_id & CLIENT_ALLOC != 0 => {
            eltrace_abi::PROFILE_PLATFORM_SPECIFIC_DATA__rax
        }
        _ => return None,
    };
    let platform = platform_data(elt_info)?;
    // SAFETY: `platform` was checked to lie on this thread's stack just above our frame, and
    // the 0x130-byte struct (registers up to 0xA8) lies entirely in the runtime stub's frame.
    Some(unsafe { ((platform + offset) as *const u64).read() })
}

/// Garbage collections started so far (`GarbageCollectionStarted`, with
/// `COR_PRF_HIGH_BASIC_GC`). A Continuation event carries its low 3 bits in the continuation's
/// low bits (objects are 8-aligned): within one GC epoch an address is never reused, so the
/// analysis may take the same continuation for the same call only within an epoch
/// (docs/abi.md "The async continuation argument").
pub static GC_EPOCH: AtomicU64 = AtomicU64::new(0);

#[cold]
#[inline(never)]
fn flagged(kind: EventKind, client_id: usize, sp: u64, value: Option<u64>) {
    if client_id & CLIENT_ALLOC != 0 {
        allocator_probe(kind, client_id, sp, value);
        return;
    }
    if client_id & CLIENT_NO_EVENTS == 0 {
        if let Some(c) = value {
            record(
                EventKind::Continuation.code() as u32,
                func_of(client_id),
                with_epoch(c),
            );
        }
        record(kind.code() as u32, func_of(client_id), sp);
    }
    if client_id & CLIENT_SENTINEL != 0 && kind != EventKind::Enter {
        // The runtime's unhandled-exception path has run the UnhandledException handlers
        // and will now print the exception and abort. It resets SIGABRT to SIG_DFL before
        // raising it, so our SIGABRT handler never runs: finish here.
        if let Some(writer) = Writer::global() {
            writer.finish(eltrace_trace::EndReason::Abort);
        }
    }
}

/// A continuation allocator's hook: its Leave after the continuation it returns (`value`);
/// its Enter and other events too where the selection chose it.
fn allocator_probe(kind: EventKind, client_id: usize, sp: u64, value: Option<u64>) {
    let (selected, wanted) = match client_id & CLIENT_CONT {
        CLIENT_ALLOC_SELECTED | CLIENT_BOX_SELECTED => (true, true),
        CLIENT_BOX => (false, BOXES_WANTED.load(Ordering::Relaxed)),
        _ => (false, ALLOCATIONS_WANTED.load(Ordering::Relaxed)),
    };
    if client_id & CLIENT_NO_EVENTS != 0 || !wanted {
        return;
    }
    let func = func_of(client_id);
    match (kind, value) {
        (EventKind::Leave, Some(c)) => {
            record(EventKind::Continuation.code() as u32, func, with_epoch(c));
            record(kind.code() as u32, func, sp);
        }
        _ if selected => record(kind.code() as u32, func, sp),
        _ => {}
    }
}

/// A continuation's address with the current GC epoch in its low bits (0 stays 0). A hook
/// runs in cooperative mode: no GC moves objects before it returns, so the epoch read here is
/// the one the address belongs to.
#[inline(always)]
fn with_epoch(c: u64) -> u64 {
    if c == 0 {
        0
    } else {
        (c & !OBJECT_EPOCH_BITS) | (GC_EPOCH.load(Ordering::Relaxed) & OBJECT_EPOCH_BITS)
    }
}

/// `FunctionEnter3WithInfo`.
pub extern "C" fn enter_hook(client_id: usize, elt_info: usize) {
    let _ = std::panic::catch_unwind(|| probe(EventKind::Enter, client_id, elt_info));
}

/// `FunctionLeave3WithInfo`.
pub extern "C" fn leave_hook(client_id: usize, elt_info: usize) {
    let _ = std::panic::catch_unwind(|| probe(EventKind::Leave, client_id, elt_info));
}

/// `FunctionTailcall3WithInfo`.
pub extern "C" fn tailcall_hook(client_id: usize, elt_info: usize) {
    let _ = std::panic::catch_unwind(|| probe(EventKind::Tailcall, client_id, elt_info));
}
