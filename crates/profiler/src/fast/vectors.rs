//! The fast-path fallbacks' vector registers: how wide the stubs keep the ones the probe
//! contract protects around their call into Rust (XMM0-7 at Enter, XMM0/XMM1 at Leave and
//! Tailcall), found from the CPU, and the assembly text that saves and restores them.

use core::sync::atomic::{AtomicU8, Ordering};

/// How wide the fallbacks save the vector registers the contract protects: 0 XMM (128 bits),
/// 1 YMM (AVX), 2 ZMM (AVX-512). A C call may clear the upper bits of any of them (glibc's
/// AVX-512 `memmove` copies 16 to 31 bytes through XMM0/XMM1 with VEX stores, which zero bits
/// 128-511 of ZMM0/ZMM1), and the JIT keeps a Vector256/Vector512 argument or return value in
/// YMM0-7/ZMM0-7 across a probe when it cannot inline: so the fallbacks keep them whole. Set by
/// [`detect_vectors`] before any stub is installed; read by the stubs (a `sym` operand).
pub static VECTORS: AtomicU8 = AtomicU8::new(0);

/// Nonzero in the contract test (`ELTRACE_TEST_TRASH_REGISTERS=1`) on a CPU with AVX: every
/// fallback executes `VZEROUPPER` after its call, as a C function that used AVX may, so that a
/// fallback that kept less than the whole registers computes wrong results.
pub static CLOBBER_UPPER: AtomicU8 = AtomicU8::new(0);

/// Sets [`VECTORS`] from the CPU (and the OS's saving of its state), and [`CLOBBER_UPPER`]
/// for the contract test.
pub fn detect_vectors(trash: bool) {
    let width = if std::arch::is_x86_feature_detected!("avx512f") {
        2
    } else if std::arch::is_x86_feature_detected!("avx") {
        1
    } else {
        0
    };
    VECTORS.store(width, Ordering::Relaxed);
    CLOBBER_UPPER.store(u8::from(trash && width > 0), Ordering::Relaxed);
}

/// Stores (`vec_moves!(store, ...)`) or loads the vector registers `$i` at `[rsp + $off]`
/// with `$mov`, `$ptr`-sized, as `$reg$i`.
macro_rules! vec_moves {
    (store, $mov:literal, $ptr:literal, $reg:literal; $($i:literal @ $off:literal),*) => {
        concat!($($mov, " ", $ptr, " ptr [rsp + ", $off, "], ", $reg, $i, "\n"),*)
    };
    (load, $mov:literal, $ptr:literal, $reg:literal; $($i:literal @ $off:literal),*) => {
        concat!($($mov, " ", $reg, $i, ", ", $ptr, " ptr [rsp + ", $off, "]\n"),*)
    };
}

/// Bits 128-255 set: `VPTEST`'s mask for "is the upper half of this YMM register zero".
pub static UPPER128: [u64; 4] = [0, 0, u64::MAX, u64::MAX];

/// ORs into the byte at `[rsp + $flag]` whether any of the vector registers `$i` has a bit
/// above 127 set, reading them only (`VPTESTMQ` into K1, a register the probe may trash, with
/// AVX-512; `VPTEST` against [`UPPER128`] with AVX). RAX is scratch.
macro_rules! upper_bits {
    (zmm $flag:literal; $($i:literal),*) => {
        concat!($(
            "vptestmq k1, zmm", $i, ", zmm", $i, "\n",
            "kmovw eax, k1\n",
            "and al, 0xFC\n",
            "or byte ptr [rsp + ", $flag, "], al\n"
        ),*)
    };
    (ymm $flag:literal; $($i:literal),*) => {
        concat!($(
            "vptest ymm", $i, ", ymmword ptr [rip + {upper}]\n",
            "setnz al\n",
            "or byte ptr [rsp + ", $flag, "], al\n"
        ),*)
    };
}

/// A fallback's save (`store`) or restore (`load`) of the vector registers `$i` at
/// `[rsp + $off]` (64 bytes apart), as wide as [`VECTORS`] says, with the byte at
/// `[rsp + $flag]` telling whether any of them had upper bits set when saved or has them after
/// the call. Only then does the restore write them whole (`VMOVDQU64`/`VMOVDQU`); else it
/// writes their low 128 bits with legacy SSE moves, which leave the upper bits (zero) as they
/// are: a VEX or EVEX write would mark the upper state in use, and the legacy SSE of the
/// stubs and of the encoder would then pay for it on every event (measured: +2.5 ns per call
/// in the sustained exact loop). RAX and K1 are scratch. A restore first clears the upper
/// bits where [`CLOBBER_UPPER`] asks (the contract test).
macro_rules! keep_vectors {
    (store $flag:literal; $($i:literal @ $off:literal),*) => {
        concat!(
            "cmp byte ptr [rip + {vectors}], 1\n",
            "jb 71f\n",
            "mov byte ptr [rsp + ", $flag, "], 0\n",
            "je 72f\n",
            vec_moves!(store, "vmovdqu64", "zmmword", "zmm"; $($i @ $off),*),
            upper_bits!(zmm $flag; $($i),*),
            "jmp 73f\n72:\n",
            vec_moves!(store, "vmovdqu", "ymmword", "ymm"; $($i @ $off),*),
            upper_bits!(ymm $flag; $($i),*),
            "jmp 73f\n71:\n",
            vec_moves!(store, "movdqu", "xmmword", "xmm"; $($i @ $off),*),
            "73:\n"
        )
    };
    (load $flag:literal; $($i:literal @ $off:literal),*) => {
        concat!(
            "cmp byte ptr [rip + {clobber}], 0\n",
            "je 74f\n",
            "vzeroupper\n",
            "74:\n",
            "cmp byte ptr [rip + {vectors}], 1\n",
            "jb 75f\n",
            "je 76f\n",
            upper_bits!(zmm $flag; $($i),*),
            "cmp byte ptr [rsp + ", $flag, "], 0\n",
            "je 75f\n",
            vec_moves!(load, "vmovdqu64", "zmmword", "zmm"; $($i @ $off),*),
            "jmp 77f\n76:\n",
            upper_bits!(ymm $flag; $($i),*),
            "cmp byte ptr [rsp + ", $flag, "], 0\n",
            "je 75f\n",
            vec_moves!(load, "vmovdqu", "ymmword", "ymm"; $($i @ $off),*),
            "jmp 77f\n75:\n",
            vec_moves!(load, "movdqu", "xmmword", "xmm"; $($i @ $off),*),
            "77:\n"
        )
    };
}

/// The contract test's overwrite of the vector registers `$i` (and, with AVX-512, XMM16-31
/// and K1-K7, which the JIT counts as trashed then too): every bit set, as wide as
/// [`VECTORS`] says, so that code relying on any bit of them across a probe computes wrong
/// results.
macro_rules! trash_vectors {
    ($($i:literal),*) => {
        concat!(
            "cmp byte ptr [rip + {vectors}], 1\n",
            "jb 81f\n",
            "je 82f\n",
            $("vpternlogd zmm", $i, ", zmm", $i, ", zmm", $i, ", 0xFF\n",)*
            "vpternlogd zmm16, zmm16, zmm16, 0xFF\nvpternlogd zmm17, zmm17, zmm17, 0xFF\n",
            "vpternlogd zmm18, zmm18, zmm18, 0xFF\nvpternlogd zmm19, zmm19, zmm19, 0xFF\n",
            "vpternlogd zmm20, zmm20, zmm20, 0xFF\nvpternlogd zmm21, zmm21, zmm21, 0xFF\n",
            "vpternlogd zmm22, zmm22, zmm22, 0xFF\nvpternlogd zmm23, zmm23, zmm23, 0xFF\n",
            "vpternlogd zmm24, zmm24, zmm24, 0xFF\nvpternlogd zmm25, zmm25, zmm25, 0xFF\n",
            "vpternlogd zmm26, zmm26, zmm26, 0xFF\nvpternlogd zmm27, zmm27, zmm27, 0xFF\n",
            "vpternlogd zmm28, zmm28, zmm28, 0xFF\nvpternlogd zmm29, zmm29, zmm29, 0xFF\n",
            "vpternlogd zmm30, zmm30, zmm30, 0xFF\nvpternlogd zmm31, zmm31, zmm31, 0xFF\n",
            "kxnorw k1, k1, k1\nkxnorw k2, k2, k2\nkxnorw k3, k3, k3\nkxnorw k4, k4, k4\n",
            "kxnorw k5, k5, k5\nkxnorw k6, k6, k6\nkxnorw k7, k7, k7\n",
            "jmp 83f\n82:\n",
            $("vpcmpeqd ymm", $i, ", ymm", $i, ", ymm", $i, "\n",)*
            "jmp 83f\n81:\n",
            $("pcmpeqd xmm", $i, ", xmm", $i, "\n",)*
            "83:\n"
        )
    };
}
