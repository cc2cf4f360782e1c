//! Benchmark only (`ELTRACE_HOOKS=fast-stub-encode`): stubs that encode each event into the
//! final chunk format's bytes themselves, into the thread's byte ring that nothing reads
//! (ring/stub_encoding.rs). Each does what the chunk builder does for one event of an open
//! EVENTS chunk (timed stubs) or TIMELESS_EVENTS chunk (`_nt`): the head (the time's delta from
//! the previous event above the bits, as a varint; or one byte), a Leave predicted by the top of
//! the prediction stack, an Enter of the frame that ended last as a repeat, otherwise the
//! function varint and the SP's delta as an svar; then the stack, the previous SP and the last
//! frame-ending event. They measure what hooks that write finished chunk bytes would cost in a
//! real workload (docs/performance.md).
//!
//! What they leave out, as nothing reads the bytes: a Leave the stack's top does not predict
//! leaves the stack as it is (the format pops down to a match among the top 16 entries), and a
//! stack deeper than its ring's entries wraps. A thread without the state's buffer, and every
//! client id with flags, takes the recording stubs (fast.rs), whose records the ring discards.
//! Registers: as the recording stubs (fast.rs's contract); Enter keeps RDX in XMM8 around the
//! clock and its head in XMM10, Leave keeps RAX/RDX in R8/R9 and does not touch RCX.

use core::arch::global_asm;

use crate::ring::stub;
use crate::ring::stub_encoding::{BYTES, SHADOW, SHADOW_ENTRIES, off};
use crate::{hooks, slot};

/// Assembles a stub with the operands every one of them uses (offsets of the state's fields
/// from the ring pointer, the byte ring's and the stack's sizes, the client-id encoding and the
/// calibration's statics).
macro_rules! stub_encode_asm {
    ($template:expr, $($own:tt)*) => {
        global_asm!(
            $template,
            $($own)*
            flags_shift = const hooks::CLIENT_FLAGS_SHIFT,
            bias = const hooks::CLIENT_INDEX_BIAS,
            dead = const slot::DEAD,
            pos = const stub::STUB_ENCODING + off::POS,
            prevsp = const stub::STUB_ENCODING + off::PREV_SP,
            lef = const stub::STUB_ENCODING + off::LAST_FUNC,
            les = const stub::STUB_ENCODING + off::LAST_SP,
            depth = const stub::STUB_ENCODING + off::DEPTH,
            prevts = const stub::STUB_ENCODING + off::PREV_TS,
            count = const stub::STUB_ENCODING + off::COUNT,
            buf = const stub::STUB_ENCODING + off::BUF,
            bmask = const BYTES - 1,
            bhigh = const -(BYTES as i64),
            sh = const SHADOW,
            smask = const SHADOW_ENTRIES - 1,
            tsc0 = sym crate::clock::TSC0,
            mult = sym crate::clock::MULT,
            mono0 = sym crate::clock::MONO0,
        );
    };
}

/// varint of `$v` at `[$p]`, `$p` moved past it; `$l` a unique label number.
macro_rules! varint {
    ($v:literal, $b:literal, $p:literal, $l:literal) => {
        concat!(
            "\n",
            $l,
            "0:\n cmp ",
            $v,
            ", 0x80\n jb ",
            $l,
            "1f\n mov byte ptr [",
            $p,
            "], ",
            $b,
            "\n or byte ptr [",
            $p,
            "], 0x80\n inc ",
            $p,
            "\n shr ",
            $v,
            ", 7\n jmp ",
            $l,
            "0b\n",
            $l,
            "1:\n mov byte ptr [",
            $p,
            "], ",
            $b,
            "\n inc ",
            $p,
            "\n"
        )
    };
}

/// An Enter stub: `$timed` leaves in RAX the head of a plain Enter (the timed stubs' time
/// delta shifted above the bits; 0 for timeless ones), `$rep` is the bits that make it a repeat
/// (timed: the predicted bit; timeless: the repeat bit); `$fallback` the recording stub.
macro_rules! stub_encode_enter {
    ($name:literal, $fallback:literal, $timed:expr, $rep:literal) => {
        stub_encode_asm!(concat!(
            ".pushsection .text.",
            $name,
            ",\"ax\",@progbits\n",
            ".globl ",
            $name,
            "\n.hidden ",
            $name,
            "\n.type ",
            $name,
            ", @function\n.p2align 4\n",
            $name,
            ":\n",
            "
                mov rax, r14
                shr rax, {flags_shift}
                jnz 9f
                mov rax, qword ptr [rip + ",
            crate::slot::slot_symbol!(),
            "@GOTTPOFF]
                mov r10, qword ptr fs:[rax]
                cmp r10, {dead}
                jbe 9f
                cmp qword ptr [r10 + {buf}], 0
                je 9f
                ",
            $timed,
            "
                mov r11, qword ptr [r10 + {pos}]
                and r11, {bmask}
                add r11, qword ptr [r10 + {buf}]
                movq xmm10, rax
                lea eax, [r14 - {bias}]
                cmp rax, qword ptr [r10 + {lef}]
                jne 1f
                cmp r15, qword ptr [r10 + {les}]
                jne 1f
                movq rax, xmm10
                or rax, ",
            $rep,
            "
                ",
            varint!("rax", "al", "r11", "2"),
            "
                jmp 3f
            1:
                movq rax, xmm10
                ",
            varint!("rax", "al", "r11", "4"),
            "
                lea eax, [r14 - {bias}]
                ",
            varint!("rax", "al", "r11", "5"),
            "
                movq xmm8, r11
                mov rax, r15
                sub rax, qword ptr [r10 + {prevsp}]
                mov r11, rax
                sar r11, 63
                add rax, rax
                xor rax, r11
                movq r11, xmm8
                ",
            varint!("rax", "al", "r11", "6"),
            "
            3:
                mov rax, r11
                sub rax, qword ptr [r10 + {buf}]
                mov r11, qword ptr [r10 + {pos}]
                and r11, {bhigh}
                add rax, r11
                mov qword ptr [r10 + {pos}], rax
                mov r11, qword ptr [r10 + {depth}]
                inc qword ptr [r10 + {depth}]
                and r11d, {smask}
                shl r11d, 4
                add r11, qword ptr [r10 + {buf}]
                lea eax, [r14 - {bias}]
                mov qword ptr [r11 + {sh}], rax
                mov qword ptr [r11 + {sh} + 8], r15
                mov qword ptr [r10 + {prevsp}], r15
                inc qword ptr [r10 + {count}]
                ret
            9:
                jmp ",
            $fallback,
            "
                .size ",
            $name,
            ", . - ",
            $name,
            "
                .popsection"
        ),);
    };
}

/// Timed Enter: rax = (ts - prev_ts) << 4 (the head of a plain Enter).
macro_rules! enter_timed {
    () => {
        "movq xmm8, rdx
         rdtsc
         shl rdx, 32
         or rax, rdx
         sub rax, qword ptr [rip + {tsc0}]
         mov edx, 0
         cmovb rax, rdx
         mul qword ptr [rip + {mult}]
         shrd rax, rdx, 32
         add rax, qword ptr [rip + {mono0}]
         movq rdx, xmm8
         movq xmm9, rax
         sub rax, qword ptr [r10 + {prevts}]
         movq qword ptr [r10 + {prevts}], xmm9
         shl rax, 4"
    };
}

/// A Leave or Tailcall stub of kind code `$kind` (RDI = client id, RSI = SP): `$timed` as for
/// Enter, with the return value's RAX/RDX kept in R8/R9 meanwhile.
macro_rules! stub_encode_leave {
    ($name:literal, $fallback:literal, $kind:literal, $timed:expr) => {
        stub_encode_asm!(concat!(
            ".pushsection .text.",
            $name,
            ",\"ax\",@progbits\n",
            ".globl ",
            $name,
            "\n.hidden ",
            $name,
            "\n.type ",
            $name,
            ", @function\n.p2align 4\n",
            $name,
            ":\n",
            "
                mov r8, rdi
                shr r8, {flags_shift}
                jnz 9f
                mov r8, qword ptr [rip + ",
            crate::slot::slot_symbol!(),
            "@GOTTPOFF]
                mov r10, qword ptr fs:[r8]
                cmp r10, {dead}
                jbe 9f
                cmp qword ptr [r10 + {buf}], 0
                je 9f
                mov r8, rax
                mov r9, rdx
                ",
            $timed,
            "
                lea edi, [rdi - {bias}]
                mov r11, qword ptr [r10 + {pos}]
                and r11, {bmask}
                add r11, qword ptr [r10 + {buf}]
                mov rdx, qword ptr [r10 + {depth}]
                test rdx, rdx
                jz 1f
                dec rdx
                and edx, {smask}
                shl edx, 4
                add rdx, qword ptr [r10 + {buf}]
                cmp rdi, qword ptr [rdx + {sh}]
                jne 1f
                cmp rsi, qword ptr [rdx + {sh} + 8]
                jne 1f
                dec qword ptr [r10 + {depth}]
                or rax, (",
            $kind,
            " << 1) | 1
                ",
            varint!("rax", "al", "r11", "2"),
            "
                jmp 3f
            1:
                or rax, ",
            $kind,
            " << 1
                ",
            varint!("rax", "al", "r11", "4"),
            "
                mov eax, edi
                ",
            varint!("rax", "al", "r11", "5"),
            "
                mov rax, rsi
                sub rax, qword ptr [r10 + {prevsp}]
                mov rdx, rax
                sar rdx, 63
                add rax, rax
                xor rax, rdx
                ",
            varint!("rax", "al", "r11", "6"),
            "
            3:
                mov rax, r11
                sub rax, qword ptr [r10 + {buf}]
                mov r11, qword ptr [r10 + {pos}]
                and r11, {bhigh}
                add rax, r11
                mov qword ptr [r10 + {pos}], rax
                mov qword ptr [r10 + {lef}], rdi
                mov qword ptr [r10 + {les}], rsi
                mov qword ptr [r10 + {prevsp}], rsi
                inc qword ptr [r10 + {count}]
                mov rax, r8
                mov rdx, r9
                ret
            9:
                jmp ",
            $fallback,
            "
                .size ",
            $name,
            ", . - ",
            $name,
            "
                .popsection"
        ),);
    };
}

/// Timed Leave/Tailcall: RAX = (ts - prev_ts) << 4, RDX clobbered.
macro_rules! leave_timed {
    () => {
        "rdtsc
         shl rdx, 32
         or rax, rdx
         sub rax, qword ptr [rip + {tsc0}]
         mov edx, 0
         cmovb rax, rdx
         mul qword ptr [rip + {mult}]
         shrd rax, rdx, 32
         add rax, qword ptr [rip + {mono0}]
         mov rdx, rax
         sub rax, qword ptr [r10 + {prevts}]
         mov qword ptr [r10 + {prevts}], rdx
         shl rax, 4"
    };
}

stub_encode_enter!(
    "eltrace_stub_encode_enter",
    "eltrace_fast_enter",
    enter_timed!(),
    "1"
);
stub_encode_enter!(
    "eltrace_stub_encode_enter_nt",
    "eltrace_fast_enter_nt",
    "xor eax, eax # {prevts} {tsc0} {mult} {mono0}",
    "0x10"
);
stub_encode_leave!(
    "eltrace_stub_encode_leave",
    "eltrace_fast_leave",
    "1",
    leave_timed!()
);
stub_encode_leave!(
    "eltrace_stub_encode_tailcall",
    "eltrace_fast_tailcall",
    "2",
    leave_timed!()
);
stub_encode_leave!(
    "eltrace_stub_encode_leave_nt",
    "eltrace_fast_leave_nt",
    "1",
    "xor eax, eax # {prevts} {tsc0} {mult} {mono0}"
);
stub_encode_leave!(
    "eltrace_stub_encode_tailcall_nt",
    "eltrace_fast_tailcall_nt",
    "2",
    "xor eax, eax # {prevts} {tsc0} {mult} {mono0}"
);

#[cfg(test)]
mod tests;
