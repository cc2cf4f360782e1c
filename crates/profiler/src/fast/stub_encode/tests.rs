//! The stub-encode stubs, called from Rust on a thread whose slot holds a ring with their
//! state: their bytes are the chunk builder's for the same events (the format's own encoder,
//! trace/src/chunks), timed and timeless.

use core::arch::asm;

use eltrace_trace::chunks::ChunkBuilder;
use eltrace_trace::{EventKind, ThreadIdx};

use crate::clock;
use crate::hooks::CLIENT_INDEX_BIAS;
use crate::ring::{MIN_BUFFERS, Ring};
use crate::slot;

type Stub = unsafe extern "C" fn();

unsafe extern "C" {
    fn eltrace_stub_encode_enter();
    fn eltrace_stub_encode_leave();
    fn eltrace_stub_encode_tailcall();
    fn eltrace_stub_encode_enter_nt();
    fn eltrace_stub_encode_leave_nt();
    fn eltrace_stub_encode_tailcall_nt();
}

/// Calls `stub` as the JIT calls an Enter probe (R14 = client id, R15 = caller SP).
fn enter(stub: Stub, func: u32, sp: u64) {
    let client = func as usize + CLIENT_INDEX_BIAS;
    // SAFETY: the stub follows the probe contract: it reads R14/R15 and may modify RAX, R10,
    // R11 and XMM8-15 (all covered by the C ABI's clobbers); the slot holds a live ring with
    // its state, so it takes its inline path.
    unsafe { asm!("call {s}", s = in(reg) stub, in("r14") client, in("r15") sp, clobber_abi("C")) }
}

/// Calls `stub` as the JIT calls a Leave or Tailcall probe (RDI = client id, RSI = caller SP).
fn leave(stub: Stub, func: u32, sp: u64) {
    let client = func as usize + CLIENT_INDEX_BIAS;
    // SAFETY: as `enter`; a Leave stub may modify RCX, RSI, RDI, R8-R11 and XMM2-15.
    unsafe {
        asm!("call {s}", s = in(reg) stub, inout("rdi") client => _, inout("rsi") sp => _,
             clobber_abi("C"))
    }
}

/// A call tree with every case the stubs encode: predicted Leaves, a repeated Enter, a Leave
/// with nothing to predict it, a Tailcall, functions and SP deltas of several varint bytes.
const EVENTS: [(EventKind, u32, u64); 14] = [
    (EventKind::Enter, 3, 0x7ffc_0000_1000),
    (EventKind::Enter, 300, 0x7ffc_0000_0f00),
    (EventKind::Leave, 300, 0x7ffc_0000_0f00),
    (EventKind::Enter, 300, 0x7ffc_0000_0f00),
    (EventKind::Leave, 300, 0x7ffc_0000_0f00),
    (EventKind::Enter, 70_000, 0x7ffc_0000_0e80),
    (EventKind::Leave, 70_000, 0x7ffc_0000_0e80),
    (EventKind::Leave, 3, 0x7ffc_0000_1000),
    (EventKind::Leave, 9, 0x7ffc_0000_2000),
    (EventKind::Enter, 4, 0x10),
    (EventKind::Tailcall, 4, 0x10),
    (EventKind::Enter, 5, 0x10),
    (EventKind::Leave, 5, 0x10),
    (EventKind::Leave, 6, 0x7ffc_0000_3000),
];

/// Runs `EVENTS` through the stubs on this thread; returns their bytes.
fn stub_bytes(timeless: bool) -> Vec<u8> {
    let ring =
        Box::new(Ring::for_thread(64, ThreadIdx(0), timeless, MIN_BUFFERS, 0).stub_encoding());
    slot::set_for_test(&*ring as *const Ring as usize);
    let (e, l, t): (Stub, Stub, Stub) = if timeless {
        (
            eltrace_stub_encode_enter_nt,
            eltrace_stub_encode_leave_nt,
            eltrace_stub_encode_tailcall_nt,
        )
    } else {
        (
            eltrace_stub_encode_enter,
            eltrace_stub_encode_leave,
            eltrace_stub_encode_tailcall,
        )
    };
    for (kind, func, sp) in EVENTS {
        match kind {
            EventKind::Enter => enter(e, func, sp),
            EventKind::Leave => leave(l, func, sp),
            _ => leave(t, func, sp),
        }
    }
    slot::set_for_test(0);
    assert_eq!(ring.stub_state().events(), EVENTS.len() as u64);
    assert_eq!(ring.published(), 0, "a stub took the recording path");
    ring.stub_state().bytes()
}

fn uvar(b: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// The chunk builder's bytes for `EVENTS` at times `ts`, without the chunk's header and prefix.
fn builder_bytes(timeless: bool, ts: &[u64]) -> Vec<u8> {
    let mut b = ChunkBuilder::new(ThreadIdx(0), timeless);
    let mut buf = Vec::with_capacity(4096);
    for (&(kind, func, sp), &t) in EVENTS.iter().zip(ts) {
        assert!(b.push(&mut buf, t, kind.code(), func, sp));
    }
    b.close(&mut buf);
    let mut at = 12;
    for _ in 0..if timeless { 4 } else { 3 } {
        uvar(&buf, &mut at);
    }
    buf[at..].to_vec()
}

#[test]
fn timeless_stubs_write_the_chunk_builders_bytes() {
    let stub = stub_bytes(true);
    assert_eq!(stub, builder_bytes(true, &[0; EVENTS.len()]));
}

#[test]
fn timed_stubs_write_the_chunk_builders_bytes() {
    let _calibrating = clock::tests::CALIBRATING
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    clock::init(true);
    if !clock::is_tsc() {
        eprintln!("no invariant TSC here: the timed stubs never run inline; nothing to compare");
        return;
    }
    let stub = stub_bytes(false);
    // The stubs' times, read from their heads: each event's delta from the one before (from 0
    // for the first), then its function and SP unless the head predicts them.
    let (mut at, mut ts, mut t) = (0, Vec::new(), 0u64);
    let mut first_head = 0;
    for _ in EVENTS {
        let head = uvar(&stub, &mut at);
        if ts.is_empty() {
            first_head = at;
        }
        t += head >> 4;
        ts.push(t);
        if head & 1 == 0 {
            uvar(&stub, &mut at);
            uvar(&stub, &mut at);
        }
    }
    assert_eq!(at, stub.len());
    assert!(ts[0] > 0 && ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    // The builder's chunk starts at the first time (its first delta is 0); the rest is equal.
    let built = builder_bytes(false, &ts);
    assert_eq!(built[0], EventKind::Enter.code() << 1);
    assert_eq!(stub[first_head..], built[1..]);
}
