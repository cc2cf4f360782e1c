//! The stubs' inline TSC-to-ns conversion (`tick_to_ns!`, the same text the recording stubs
//! assemble) against `clock::to_ns`, bit for bit.

use core::arch::global_asm;

use crate::clock;

// `eltrace_test_tick_to_ns(tick) -> ns`: the conversion alone, as a C function.
global_asm!(
    concat!(
        ".pushsection .text.eltrace_test_tick_to_ns,\"ax\",@progbits\n",
        ".globl eltrace_test_tick_to_ns\n",
        ".hidden eltrace_test_tick_to_ns\n",
        "eltrace_test_tick_to_ns:\n",
        "mov rax, rdi\n",
        tick_to_ns!(),
        "\nret\n",
        ".popsection"
    ),
    tsc0 = sym clock::TSC0,
    mult = sym clock::MULT,
    mono0 = sym clock::MONO0,
);

unsafe extern "C" {
    fn eltrace_test_tick_to_ns(tick: u64) -> u64;
}

#[test]
fn the_stubs_convert_ticks_as_to_ns_does() {
    let _calibrating = clock::tests::CALIBRATING
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    clock::init(true);
    if !clock::is_tsc() {
        eprintln!("no invariant TSC here: the stubs never write inline; nothing to compare");
        return;
    }
    let t0 = clock::TSC0.load(core::sync::atomic::Ordering::Relaxed);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..100_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Ticks from the calibration's on: near it, hours and years after it, and now.
        let tick = match i % 4 {
            0 => t0 + (x & 0xFFFF),
            1 => t0 + (x >> 20),
            2 => t0.saturating_add(x >> 1),
            _ => clock::now(),
        };
        // SAFETY: a leaf function of the C ABI that reads three statics.
        let got = unsafe { eltrace_test_tick_to_ns(tick) };
        assert_eq!(got, clock::to_ns(tick), "tick {tick} (t0 {t0})");
    }
    // Before the calibration (never after start-up): the calibration's own time.
    // SAFETY: as above.
    let early = unsafe { eltrace_test_tick_to_ns(t0 - 1000) };
    assert_eq!(early, clock::to_ns(t0));
}
