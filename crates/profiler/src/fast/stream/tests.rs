//! The stream stubs, called from Rust on a thread whose slot holds a streaming ring: their
//! bytes are the format's reference encoder's (eltrace_trace::stream) for the same events, and
//! a Leave below the stack's top goes through the Rust side, which writes the same bytes.

use core::arch::asm;

use eltrace_trace::stream::{
    CALLEE_HEAD, RUN_HEAD, StreamState, flush_run, put_event, put_pending,
};
use eltrace_trace::{EventKind, ThreadIdx};

use crate::clock;
use crate::hooks::CLIENT_INDEX_BIAS;
use crate::ring::{MIN_BUFFERS, Ring};
use crate::slot;

type Stub = unsafe extern "C" fn();

unsafe extern "C" {
    fn eltrace_stream_enter();
    fn eltrace_stream_leave();
    fn eltrace_stream_tailcall();
    fn eltrace_stream_enter_nt();
    fn eltrace_stream_leave_nt();
    fn eltrace_stream_tailcall_nt();
}

/// Calls `stub` as the JIT calls an Enter probe (R14 = client id, R15 = caller SP).
fn enter(stub: Stub, func: u32, sp: u64) {
    let client = func as usize + CLIENT_INDEX_BIAS;
    // SAFETY: the stub follows the probe contract: it reads R14/R15 and may modify RAX, R10,
    // R11 and XMM8-15 (covered by the C ABI's clobbers); its fallback is a C call that keeps
    // the rest. The slot holds a live streaming ring.
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

/// Every case the stubs encode: predicted Leaves, a repeated Enter, a Leave with nothing to
/// predict it, a Tailcall, functions and SP deltas of several varint bytes; and (`BELOW`) a
/// Leave of the frame below the top, which the stubs leave to the Rust side.
const EVENTS: [(EventKind, u32, u64); 33] = [
    // Enters the callee table predicts: 10 after the Leave of 9 (the same SP), 9 after the
    // Enter of 8 (an SP 0x100 below).
    (EventKind::Enter, 8, 0x7ffc_0000_2000),
    (EventKind::Enter, 9, 0x7ffc_0000_1f00),
    (EventKind::Leave, 9, 0x7ffc_0000_1f00),
    (EventKind::Enter, 10, 0x7ffc_0000_1f00),
    (EventKind::Leave, 10, 0x7ffc_0000_1f00),
    (EventKind::Enter, 9, 0x7ffc_0000_1f00),
    (EventKind::Leave, 9, 0x7ffc_0000_1f00),
    (EventKind::Enter, 10, 0x7ffc_0000_1f00),
    (EventKind::Leave, 10, 0x7ffc_0000_1f00),
    (EventKind::Leave, 8, 0x7ffc_0000_2000),
    (EventKind::Enter, 11, 0x7ffc_0000_2000),
    (EventKind::Leave, 11, 0x7ffc_0000_2000),
    (EventKind::Enter, 8, 0x7ffc_0000_2000),
    (EventKind::Enter, 9, 0x7ffc_0000_1f00),
    (EventKind::Leave, 9, 0x7ffc_0000_1f00),
    (EventKind::Leave, 8, 0x7ffc_0000_2000),
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
    (EventKind::Enter, 6, 0x8),
    (EventKind::Enter, 7, 0x4),
    (EventKind::Leave, 6, 0x8),
    (EventKind::Leave, 5, 0x10),
    (EventKind::Leave, 6, 0x7ffc_0000_3000),
];

/// Runs `events` through the stubs on this thread; returns the stream's bytes.
fn stub_bytes(timeless: bool, events: &[(EventKind, u32, u64)]) -> Vec<u8> {
    let ring = Box::new(
        Ring::for_thread(0, ThreadIdx(0), timeless, MIN_BUFFERS, 0).streaming(4096, 0, true),
    );
    slot::set_for_test(&*ring as *const Ring as usize);
    let (e, l, t): (Stub, Stub, Stub) = if timeless {
        (
            eltrace_stream_enter_nt,
            eltrace_stream_leave_nt,
            eltrace_stream_tailcall_nt,
        )
    } else {
        (
            eltrace_stream_enter,
            eltrace_stream_leave,
            eltrace_stream_tailcall,
        )
    };
    for &(kind, func, sp) in events {
        match kind {
            EventKind::Enter => enter(e, func, sp),
            EventKind::Leave => leave(l, func, sp),
            _ => leave(t, func, sp),
        }
    }
    slot::set_for_test(0);
    let stream = ring.stream().unwrap();
    assert_eq!(stream.events(), events.len() as u64);
    let cut = stream.cut(stream.published(), 0).unwrap();
    let mut bytes = cut.parts.concat();
    // What a run holds at the end (the writer writes it).
    let held = stream.take_held();
    assert_eq!(cut.events + held, events.len() as u64);
    let mut tail = [0u8; 3];
    let n = put_pending(&mut tail, held);
    bytes.extend_from_slice(&tail[..n]);
    bytes
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

/// The reference encoder's bytes for `events` at times `ts`.
fn reference(timeless: bool, events: &[(EventKind, u32, u64)], ts: &[u64]) -> Vec<u8> {
    let (mut out, mut s) = (Vec::new(), StreamState::default());
    for (&(kind, func, sp), &t) in events.iter().zip(ts) {
        put_event(&mut out, &mut s, timeless, t, kind.code(), func, sp);
    }
    flush_run(&mut out, &mut s);
    out
}

/// A timeless thread's loops, all in stubs (no Leave below the top): a leaf called 21 times
/// (a full run and more), a repeated Enter followed by a callee, by a Tailcall and by
/// another repeated Enter, and a run held at the end.
fn loops() -> Vec<(EventKind, u32, u64)> {
    let (root, a, c) = (0x7ffc_0000_5000, 0x7ffc_0000_4f00, 0x7ffc_0000_4e00);
    let mut ev = vec![(EventKind::Enter, 40, root)];
    for _ in 0..21 {
        ev.extend([(EventKind::Enter, 41, a), (EventKind::Leave, 41, a)]);
    }
    for _ in 0..2 {
        ev.extend([
            (EventKind::Enter, 41, a),
            (EventKind::Enter, 42, c),
            (EventKind::Leave, 42, c),
            (EventKind::Leave, 41, a),
        ]);
    }
    ev.extend([
        (EventKind::Enter, 41, a),
        (EventKind::Tailcall, 41, a),
        (EventKind::Enter, 43, a),
        (EventKind::Leave, 43, a),
        (EventKind::Enter, 43, a),
        (EventKind::Enter, 43, a),
        (EventKind::Leave, 43, a),
        (EventKind::Leave, 43, a),
        (EventKind::Leave, 40, root),
        (EventKind::Enter, 40, root),
        (EventKind::Leave, 40, root),
    ]);
    ev
}

#[test]
fn timeless_stream_stubs_write_runs_as_the_reference_does() {
    let events = loops();
    let bytes = stub_bytes(true, &events);
    assert_eq!(bytes, reference(true, &events, &vec![0; events.len()]));
    let runs = bytes.iter().filter(|&&b| u64::from(b) == RUN_HEAD).count();
    assert!(runs >= 4, "{bytes:x?}");
    assert!(
        bytes.len() < 48,
        "{} bytes for {} events",
        bytes.len(),
        events.len()
    );
}

#[test]
fn timeless_stream_stubs_write_the_reference_bytes() {
    // Without the Leave below the top: the Rust side would read the process's clock mode.
    let events = &EVENTS[..30];
    let bytes = stub_bytes(true, events);
    assert_eq!(bytes, reference(true, events, &[0; 30]));
    // The two Enters the callee table predicts (its head alone).
    let predicted = bytes
        .iter()
        .filter(|&&b| u64::from(b) == CALLEE_HEAD)
        .count();
    assert!(predicted >= 2, "{bytes:x?}");
}

#[test]
fn timed_stream_stubs_and_their_fallback_write_the_reference_bytes() {
    let _calibrating = clock::tests::CALIBRATING
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    clock::init(true);
    if !clock::is_tsc() {
        eprintln!("no invariant TSC here: the timed stubs never run inline; nothing to compare");
        return;
    }
    let stub = stub_bytes(false, &EVENTS);
    // The times, read back from the heads: each the delta from the one before (from 0).
    let (mut at, mut ts, mut t) = (0, Vec::new(), 0u64);
    for _ in EVENTS {
        let head = uvar(&stub, &mut at);
        t += head >> 4;
        ts.push(t);
        if head & 1 == 0 {
            uvar(&stub, &mut at);
            uvar(&stub, &mut at);
        }
    }
    assert_eq!(at, stub.len());
    assert!(ts[0] > 0 && ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    assert_eq!(stub, reference(false, &EVENTS, &ts));
}

#[test]
fn a_runs_pair_returns_from_its_own_stub() {
    // Numeric labels are the whole crate's: a forward jump to a label the stub does not
    // define lands in the next stub, here the contract test's one, which trashes XMM15.
    let ring =
        Box::new(Ring::for_thread(0, ThreadIdx(0), true, MIN_BUFFERS, 0).streaming(4096, 0, true));
    slot::set_for_test(&*ring as *const Ring as usize);
    let (func, sp) = (12, 0x7ffc_0000_1000);
    enter(eltrace_stream_enter_nt, func, sp);
    leave(eltrace_stream_leave_nt, func, sp);
    enter(eltrace_stream_enter_nt, func, sp);
    let client = func as usize + CLIENT_INDEX_BIAS;
    let kept: u64;
    // SAFETY: as `leave`, with XMM15 (which a Leave stub may modify) set before and read after.
    unsafe {
        asm!("movq xmm15, rax", "call {s}", "movq rax, xmm15",
             s = in(reg) eltrace_stream_leave_nt as Stub, inout("rax") 0x1234_5678u64 => kept,
             inout("rdi") client => _, inout("rsi") sp => _, clobber_abi("C"))
    }
    slot::set_for_test(0);
    assert_eq!(
        ring.stream().unwrap().take_held(),
        2,
        "the pair went into the run"
    );
    assert_eq!(
        kept, 0x1234_5678,
        "XMM15 trashed: the pair's path left its stub"
    );
}
