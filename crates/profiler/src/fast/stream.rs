//! The stream stubs (exact recordings, or `ELTRACE_STREAM=1`): each encodes its event into the thread's stream
//! (ring/stream.rs) as eltrace_trace::stream::put_event does, and publishes it with one `add`
//! of its length and one event to the stream's word. Timed stubs (`record --timing exact`)
//! take the time as the recording stubs do (fast.rs `tick_to_ns`), no earlier than the
//! previous event's; `_nt` stubs take none.
//!
//! An event goes to the recording stub of the same kind instead (`$fallback`, whose inline
//! path a streaming ring disables, so that it calls the Rust side: hooks.rs `record`) when the
//! client id has flags, the thread has no ring, the stream holds `limit` bytes or more (half
//! full: the Rust side wakes the writer; or drops are pending), the event could run past the
//! byte ring's end, or a Leave/Tailcall is not the stack's top while the stack is not empty
//! (the Rust side searches the stack).
//!
//! Registers (fast.rs's contract): Enter uses RAX, R10, R11 and XMM8-11 (RDX kept in XMM8
//! around RDTSC); Leave/Tailcall use R8-R11 and XMM8-11 (the return value's RAX/RDX kept in
//! XMM8/XMM9) and leave RCX alone. Every check before the fallback jump touches only
//! registers the fallback does not read.

use core::arch::global_asm;

use crate::ring::stream::off;
use crate::ring::stub;
use crate::{hooks, slot};

/// Assembles a stream stub with the operands every one uses.
macro_rules! stream_asm {
    ($template:expr, $($own:tt)*) => {
        global_asm!(
            $template,
            $($own)*
            flags_shift = const hooks::CLIENT_FLAGS_SHIFT,
            bias = const hooks::CLIENT_INDEX_BIAS,
            dead = const slot::DEAD,
            word = const stub::STREAM + off::WORD,
            tail = const stub::STREAM + off::TAIL,
            limit = const stub::STREAM + off::LIMIT,
            prevsp = const stub::STREAM + off::PREV_SP,
            prevts = const stub::STREAM + off::PREV_TS,
            lef = const stub::STREAM + off::LAST_FUNC,
            les = const stub::STREAM + off::LAST_SP,
            depth = const stub::STREAM + off::DEPTH,
            buf = const stub::STREAM + off::BUF,
            mask = const stub::STREAM + off::MASK,
            last_inline = const stub::STREAM + off::LAST_INLINE,
            stack = const stub::STREAM + off::STACK,
            smask = const eltrace_trace::stream::STACK_ENTRIES - 1,
            event_bit = const 40,
            tsc0 = sym crate::clock::TSC0,
            mult = sym crate::clock::MULT,
            mono0 = sym crate::clock::MONO0,
            vectors = sym super::vectors::VECTORS,
            clobber = sym super::vectors::CLOBBER_UPPER,
            upper = sym super::vectors::UPPER128,
        );
    };
}

/// LEB128 of `$v` (clobbered; `$v32`/`$b` its 32- and 8-bit names) at `[$p]`, `$p` moved past
/// it, with `$t32`/`$t8` a scratch register's names: each byte is made in a register and
/// stored once (a read-modify-write of the byte just stored would wait for its cache line);
/// `$l` a label prefix unique in the stub.
macro_rules! varint {
    ($v:literal, $v32:literal, $b:literal, $p:literal, $t32:literal, $t8:literal, $l:literal) => {
        concat!(
            $l,
            "0:\n",
            "cmp ",
            $v,
            ", 0x80\n",
            "jb ",
            $l,
            "1f\n",
            "mov ",
            $t32,
            ", ",
            $v32,
            "\n",
            "or ",
            $t8,
            ", 0x80\n",
            "mov byte ptr [",
            $p,
            "], ",
            $t8,
            "\n",
            "inc ",
            $p,
            "\n",
            "shr ",
            $v,
            ", 7\n",
            "jmp ",
            $l,
            "0b\n",
            $l,
            "1:\n",
            "mov byte ptr [",
            $p,
            "], ",
            $b,
            "\n",
            "inc ",
            $p,
            "\n"
        )
    };
}

/// The stream's room and the event's offset: falls back (`9f`) unless fewer than `limit`
/// bytes wait and the event starts at or below `last_inline`; leaves the offset in `$off`
/// (a 32-bit register name) with `$t` a scratch register. Touches nothing else.
macro_rules! room {
    ($t:literal, $t32:literal, $off:literal) => {
        concat!(
            "mov ",
            $t,
            ", qword ptr [r10 + {word}]\n",
            "mov ",
            $off,
            ", ",
            $t32,
            "\n",
            "sub ",
            $t32,
            ", dword ptr [r10 + {tail}]\n",
            "cmp ",
            $t,
            ", qword ptr [r10 + {limit}]\n",
            "jae 9f\n",
            "and ",
            $off,
            ", dword ptr [r10 + {mask}]\n",
            "cmp ",
            $off,
            ", dword ptr [r10 + {last_inline}]\n",
            "ja 9f\n"
        )
    };
}

/// A timed stub's time: RAX = the ns time (no earlier than the previous event's), the
/// previous time updated, RAX = the delta shifted above the head's four bits. Clobbers RDX.
macro_rules! stream_tick {
    () => {
        concat!(
            "rdtsc\n",
            "shl rdx, 32\n",
            "or rax, rdx\n",
            tick_to_ns!(),
            "\ncmp rax, qword ptr [r10 + {prevts}]\n",
            "cmovb rax, qword ptr [r10 + {prevts}]\n",
            "mov rdx, rax\n",
            "sub rax, qword ptr [r10 + {prevts}]\n",
            "mov qword ptr [r10 + {prevts}], rdx\n",
            "shl rax, 4\n"
        )
    };
}

/// A stub's start: the operands every stub names (so that each uses them all), its section
/// and symbol.
macro_rules! stub_open {
    ($name:literal) => {
        concat!(
            "# operands: {tsc0} {mult} {mono0} {prevts} {vectors} {clobber} {upper}\n",
            ".pushsection .text.",
            $name,
            ",\"ax\",@progbits\n",
            ".globl ",
            $name,
            "\n",
            ".hidden ",
            $name,
            "\n",
            ".type ",
            $name,
            ", @function\n",
            ".p2align 4\n",
            $name,
            ":\n"
        )
    };
}

/// The thread's ring into R10, or the fallback (`9f`) for a client id with flags or a thread
/// without a ring; `$client` holds the client id, `$t` is a scratch register.
macro_rules! thread_stream {
    ($client:literal, $t:literal) => {
        concat!(
            "mov ",
            $t,
            ", ",
            $client,
            "\n",
            "shr ",
            $t,
            ", {flags_shift}\n",
            "jnz 9f\n",
            "mov ",
            $t,
            ", qword ptr [rip + ",
            crate::slot::slot_symbol!(),
            "@GOTTPOFF]\n",
            "mov r10, qword ptr fs:[",
            $t,
            "]\n",
            "cmp r10, {dead}\n",
            "jbe 9f\n"
        )
    };
}

/// A stub's end: the fallback jump to the recording stub, the symbol's size.
macro_rules! stub_close {
    ($name:literal, $fallback:literal) => {
        concat!(
            "9:\n",
            "jmp ",
            $fallback,
            "\n",
            ".size ",
            $name,
            ", . - ",
            $name,
            "\n",
            ".popsection"
        )
    };
}

/// Enter: `$timed` true for a timed stub; `$rep` the head bits of a repeat; `$epilogue` runs
/// before `ret` (the contract test's trash); `$fallback` the recording stub.
macro_rules! stream_enter {
    ($name:literal, $fallback:literal, $timed:literal, $rep:literal, $epilogue:expr) => {
        stream_asm!(concat!(
            stub_open!($name),
            thread_stream!("r14", "rax"),
            room!("rax", "eax", "r11d"),
            "add r11, qword ptr [r10 + {buf}]\n",
            "movq xmm9, r11\n",
            // RCX (an argument) is the varints' scratch until the event is written.
            "push rcx\n",
            // The head's time bits (0 for a timeless stub) in RAX, kept in XMM10.
            "xor eax, eax\n",
            ".if ",
            $timed,
            "\n",
            "movq xmm8, rdx\n",
            stream_tick!(),
            "movq rdx, xmm8\n",
            ".endif\n",
            "movq xmm10, rax\n",
            "lea eax, [r14 - {bias}]\n",
            "cmp rax, qword ptr [r10 + {lef}]\n",
            "jne 1f\n",
            "cmp r15, qword ptr [r10 + {les}]\n",
            "jne 1f\n",
            "movq rax, xmm10\n",
            "or rax, ",
            $rep,
            "\n",
            varint!("rax", "eax", "al", "r11", "ecx", "cl", "2"),
            "jmp 3f\n",
            "1:\n",
            "movq rax, xmm10\n",
            varint!("rax", "eax", "al", "r11", "ecx", "cl", "4"),
            "lea eax, [r14 - {bias}]\n",
            varint!("rax", "eax", "al", "r11", "ecx", "cl", "5"),
            // The SP's delta, zigzag: (d << 1) ^ (d >> 63).
            "mov rax, r15\n",
            "sub rax, qword ptr [r10 + {prevsp}]\n",
            "mov rcx, rax\n",
            "sar rcx, 63\n",
            "add rax, rax\n",
            "xor rax, rcx\n",
            varint!("rax", "eax", "al", "r11", "ecx", "cl", "6"),
            "3:\n",
            "pop rcx\n",
            // Publish: the length and one event.
            "movq rax, xmm9\n",
            "sub r11, rax\n",
            "bts r11, {event_bit}\n",
            "add qword ptr [r10 + {word}], r11\n",
            // Push the frame and keep the SP.
            "mov r11, qword ptr [r10 + {depth}]\n",
            "inc qword ptr [r10 + {depth}]\n",
            "and r11d, {smask}\n",
            "shl r11d, 4\n",
            "add r11, qword ptr [r10 + {stack}]\n",
            "lea eax, [r14 - {bias}]\n",
            "mov qword ptr [r11], rax\n",
            "mov qword ptr [r11 + 8], r15\n",
            "mov qword ptr [r10 + {prevsp}], r15\n",
            $epilogue,
            "\n",
            "ret\n",
            stub_close!($name, $fallback)
        ),);
    };
}

/// Leave or Tailcall of kind code `$kind` (RDI = client id, RSI = caller SP); as
/// `stream_enter`.
macro_rules! stream_leave {
    ($name:literal, $fallback:literal, $kind:literal, $timed:literal, $epilogue:expr) => {
        stream_asm!(concat!(
            stub_open!($name),
            thread_stream!("rdi", "r8"),
            room!("r8", "r8d", "r11d"),
            // The stack's top: R9 its address, unless the stack is empty (R8 = 0).
            "mov r8, qword ptr [r10 + {depth}]\n",
            "test r8, r8\n",
            "jz 1f\n",
            "lea r9, [r8 - 1]\n",
            "and r9d, {smask}\n",
            "shl r9d, 4\n",
            "add r9, qword ptr [r10 + {stack}]\n",
            "mov r8, qword ptr [r9]\n",
            "add r8, {bias}\n",
            "cmp r8, rdi\n",
            "jne 9f\n",
            "cmp rsi, qword ptr [r9 + 8]\n",
            "jne 9f\n",
            "mov r8d, 1\n",
            "1:\n",
            // R8 = 1: predicted (pop); 0: the stack is empty (function and SP follow).
            "movq xmm8, rax\n",
            "movq xmm9, rdx\n",
            "add r11, qword ptr [r10 + {buf}]\n",
            "movq xmm10, r11\n",
            "xor eax, eax\n",
            ".if ",
            $timed,
            "\n",
            stream_tick!(),
            ".endif\n",
            "lea edi, [rdi - {bias}]\n",
            "test r8, r8\n",
            "jz 2f\n",
            "dec qword ptr [r10 + {depth}]\n",
            "or rax, (",
            $kind,
            " << 1) | 1\n",
            varint!("rax", "eax", "al", "r11", "r9d", "r9b", "4"),
            "jmp 3f\n",
            "2:\n",
            "or rax, ",
            $kind,
            " << 1\n",
            varint!("rax", "eax", "al", "r11", "r9d", "r9b", "5"),
            "mov eax, edi\n",
            varint!("rax", "eax", "al", "r11", "r9d", "r9b", "6"),
            "mov rax, rsi\n",
            "sub rax, qword ptr [r10 + {prevsp}]\n",
            "mov rdx, rax\n",
            "sar rdx, 63\n",
            "add rax, rax\n",
            "xor rax, rdx\n",
            varint!("rax", "eax", "al", "r11", "r9d", "r9b", "7"),
            "3:\n",
            "movq rax, xmm10\n",
            "sub r11, rax\n",
            "bts r11, {event_bit}\n",
            "add qword ptr [r10 + {word}], r11\n",
            "mov qword ptr [r10 + {lef}], rdi\n",
            "mov qword ptr [r10 + {les}], rsi\n",
            "mov qword ptr [r10 + {prevsp}], rsi\n",
            "movq rax, xmm8\n",
            "movq rdx, xmm9\n",
            $epilogue,
            "\n",
            "ret\n",
            stub_close!($name, $fallback)
        ),);
    };
}

stream_enter!("eltrace_stream_enter", "eltrace_fast_enter", "1", "1", "");
stream_enter!(
    "eltrace_stream_enter_trash",
    "eltrace_fast_enter_trash",
    "1",
    "1",
    trash_enter!()
);
stream_enter!(
    "eltrace_stream_enter_nt",
    "eltrace_fast_enter_nt",
    "0",
    "0x10",
    ""
);
stream_enter!(
    "eltrace_stream_enter_nt_trash",
    "eltrace_fast_enter_nt_trash",
    "0",
    "0x10",
    trash_enter!()
);
stream_leave!("eltrace_stream_leave", "eltrace_fast_leave", "1", "1", "");
stream_leave!(
    "eltrace_stream_leave_trash",
    "eltrace_fast_leave_trash",
    "1",
    "1",
    trash_leave!()
);
stream_leave!(
    "eltrace_stream_leave_nt",
    "eltrace_fast_leave_nt",
    "1",
    "0",
    ""
);
stream_leave!(
    "eltrace_stream_leave_nt_trash",
    "eltrace_fast_leave_nt_trash",
    "1",
    "0",
    trash_leave!()
);
stream_leave!(
    "eltrace_stream_tailcall",
    "eltrace_fast_tailcall",
    "2",
    "1",
    ""
);
stream_leave!(
    "eltrace_stream_tailcall_trash",
    "eltrace_fast_tailcall_trash",
    "2",
    "1",
    trash_leave!()
);
stream_leave!(
    "eltrace_stream_tailcall_nt",
    "eltrace_fast_tailcall_nt",
    "2",
    "0",
    ""
);
stream_leave!(
    "eltrace_stream_tailcall_nt_trash",
    "eltrace_fast_tailcall_nt_trash",
    "2",
    "0",
    trash_leave!()
);

#[cfg(test)]
mod tests;
