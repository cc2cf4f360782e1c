//! The pieces of the stream stubs (fast/stream.rs): macros that expand to assembly text, with
//! the operand names `stream_asm!` gives (`{buf}`, `{word}`, ...). Labels: each piece names
//! the local labels it uses; `9` is every stub's fallback jump.

/// LEB128 of `$v` (clobbered; `$v32`/`$v16`/`$b` its 32-, 16- and 8-bit names) at `[$p]`, `$p`
/// moved past it, with `$t32`/`$t8` a scratch register's names; `$l` a label prefix unique in
/// the stub. One byte and two bytes (below 2^14: function indexes, most SP deltas) take no
/// loop: two bytes are `v + (v & !0x7f) | 0x80`, one 16-bit store. Longer values loop; each
/// byte is made in a register and stored once (a read-modify-write of the byte just stored
/// would wait for its cache line).
macro_rules! varint {
    ($v:literal, $v32:literal, $v16:literal, $b:literal, $p:literal, $t32:literal, $t8:literal, $l:literal) => {
        concat!(
            "cmp ",
            $v,
            ", 0x80\n",
            "jb ",
            $l,
            "1f\n",
            "cmp ",
            $v,
            ", 0x4000\n",
            "jae ",
            $l,
            "0f\n",
            "mov ",
            $t32,
            ", ",
            $v32,
            "\n",
            "and ",
            $t32,
            ", -128\n",
            "add ",
            $v32,
            ", ",
            $t32,
            "\n",
            "or ",
            $v32,
            ", 0x80\n",
            "mov word ptr [",
            $p,
            "], ",
            $v16,
            "\n",
            "add ",
            $p,
            ", 2\n",
            "jmp ",
            $l,
            "2f\n",
            $l,
            "0:\n",
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
            "cmp ",
            $v,
            ", 0x80\n",
            "jae ",
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
            "\n",
            $l,
            "2:\n"
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
            "# operands: {tsc0} {mult} {mono0} {prevts} {vectors} {clobber} {upper} {callees} {cmask} {callee_head} {run} {run_full} {run_head}\n",
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

/// An Enter's end: pushes its frame (R14's function, R15), keeps the SP and the callee
/// table's key; clobbers RAX, R11.
macro_rules! push_frame {
    () => {
        concat!(
            "mov r11, qword ptr [r10 + {depth}]\n",
            "inc qword ptr [r10 + {depth}]\n",
            "and r11d, {smask}\n",
            "shl r11d, 4\n",
            "add r11, qword ptr [r10 + {stack}]\n",
            "lea eax, [r14 - {bias}]\n",
            "mov qword ptr [r11], rax\n",
            "mov qword ptr [r11 + 8], r15\n",
            "mov qword ptr [r10 + {prevsp}], r15\n",
            "lea rax, [rax + rax + 1]\n",
            "mov qword ptr [r10 + {prevkey}], rax\n"
        )
    };
}

/// The callee table's look-up for an Enter (RAX = its function, R15 its SP) that is no
/// repeat: RCX = the SP delta's zigzag, the entry written, and a jump to `4f` unless the
/// table predicted the Enter; clobbers RAX and RDX (pushed by the stub).
macro_rules! callee {
    () => {
        concat!(
            sp_zigzag!("rcx", "rdx", "r15"),
            // The entry, func | zz << 32, in RDX; the table's slot in RAX.
            "mov rdx, rcx\n",
            "shl rdx, 32\n",
            "or rdx, rax\n",
            "mov eax, dword ptr [r10 + {prevkey}]\n",
            "and eax, {cmask}\n",
            "shl eax, 3\n",
            "add rax, qword ptr [r10 + {stack}]\n",
            "cmp rdx, qword ptr [rax + {callees}]\n",
            "mov qword ptr [rax + {callees}], rdx\n",
            "jne 4f\n",
            "mov rax, rcx\n",
            "shr rax, 32\n",
            "jnz 4f\n"
        )
    };
}

/// A Leave's or Tailcall's look at the stack's top (RDI = client id, RSI = caller SP): to `1f`
/// when the stack is empty (R8 = 0), to the fallback (`9f`) when the top is another frame;
/// falls through when it predicts the event. Clobbers R8, R9.
macro_rules! stack_top {
    () => {
        concat!(
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
        )
    };
}

/// A Leave's or Tailcall's end (RDI = its function index, RSI = its SP): the last frame-ending
/// event, the previous SP, the callee table's key. Clobbers R8.
macro_rules! leave_end {
    () => {
        concat!(
            "mov qword ptr [r10 + {lef}], rdi\n",
            "mov qword ptr [r10 + {les}], rsi\n",
            "mov qword ptr [r10 + {prevsp}], rsi\n",
            "lea r8, [rdi + rdi]\n",
            "mov qword ptr [r10 + {prevkey}], r8\n",
        )
    };
}

/// An Enter's repeat check: RAX = its function index; on to `1f` unless the frame that ended
/// last is the same (function and SP), when it falls through.
macro_rules! repeat {
    () => {
        concat!(
            "lea eax, [r14 - {bias}]\n",
            "cmp rax, qword ptr [r10 + {lef}]\n",
            "jne 1f\n",
            "cmp r15, qword ptr [r10 + {les}]\n",
            "jne 1f\n",
        )
    };
}

/// A full Enter's function and SP delta (RCX: its zigzag, from `callee!`) at R11; clobbers
/// RAX and RDX.
macro_rules! enter_varints {
    () => {
        concat!(
            "lea eax, [r14 - {bias}]\n",
            varint!("rax", "eax", "ax", "al", "r11", "edx", "dl", "5"),
            "mov rax, rcx\n",
            varint!("rax", "eax", "ax", "al", "r11", "edx", "dl", "6"),
        )
    };
}

/// Publishes the event written from the start kept in `$start` (an XMM register) to R11: its
/// length and one event added to the word. Clobbers `$t` and R11.
macro_rules! publish {
    ($start:literal, $t:literal) => {
        concat!(
            "movq ",
            $t,
            ", ",
            $start,
            "\n",
            "sub r11, ",
            $t,
            "\n",
            "bts r11, {event_bit}\n",
            "add qword ptr [r10 + {word}], r11\n",
        )
    };
}

/// `$v` = the zigzag code of `$sp` less the previous SP, `(d << 1) ^ (d >> 63)`, with `$t` a
/// scratch register.
macro_rules! sp_zigzag {
    ($v:literal, $t:literal, $sp:literal) => {
        concat!(
            "mov ",
            $v,
            ", ",
            $sp,
            "\n",
            "sub ",
            $v,
            ", qword ptr [r10 + {prevsp}]\n",
            "mov ",
            $t,
            ", ",
            $v,
            "\n",
            "sar ",
            $t,
            ", 63\n",
            "add ",
            $v,
            ", ",
            $v,
            "\n",
            "xor ",
            $v,
            ", ",
            $t,
            "\n"
        )
    };
}

/// A stub's start: its symbol, the thread's stream in R10 (`$client` the client id) and the
/// event's offset in R11D, with `$t`/`$t32` a scratch register's names; or the fallback.
macro_rules! stream_start {
    ($name:literal, $client:literal, $t:literal, $t32:literal) => {
        concat!(
            stub_open!($name),
            thread_stream!($client, $t),
            room!($t, $t32, "r11d")
        )
    };
}

/// A timeless repeated Enter (after `repeat!`) a run takes without a byte: falls through when
/// no Enter waits, the run is not full and the stubs may write (else the fallback, `9f`); to
/// `81f` otherwise. Clobbers RAX.
macro_rules! run_enter {
    () => {
        concat!(
            "mov rax, qword ptr [r10 + {run}]\n",
            "test al, 1\n",
            "jnz 81f\n",
            "cmp rax, {run_full}\n",
            "jae 81f\n",
            "cmp qword ptr [r10 + {limit}], 0\n",
            "je 9f\n",
        )
    };
}

/// A timeless Leave (RDI = client id, RSI = caller SP) that completes a run's pair: the
/// repeated Enter waiting is its frame's (function and SP): the pair counted, the depth, the
/// previous SP and the callee table's key moved on, then to `82f` (the stub's return, which
/// must follow: numeric labels are the whole crate's, and one the stub lacks is the next
/// stub's); to `81f` otherwise, or the fallback (`9f`) when the stubs may not write. Clobbers
/// R8, R9.
macro_rules! run_leave {
    () => {
        concat!(
            "mov r8, qword ptr [r10 + {run}]\n",
            "test r8b, 1\n",
            "jz 81f\n",
            "lea r9, [rdi - {bias}]\n",
            "cmp r9, qword ptr [r10 + {lef}]\n",
            "jne 81f\n",
            "cmp rsi, qword ptr [r10 + {les}]\n",
            "jne 81f\n",
            "cmp qword ptr [r10 + {limit}], 0\n",
            "je 9f\n",
            "inc r8\n",
            "mov qword ptr [r10 + {run}], r8\n",
            "dec qword ptr [r10 + {depth}]\n",
            "mov qword ptr [r10 + {prevsp}], rsi\n",
            "add r9, r9\n",
            "mov qword ptr [r10 + {prevkey}], r9\n",
            "jmp 82f\n",
        )
    };
}

/// Writes at R11 (moved past them) and publishes the events a run holds, if any: the run's
/// head and pair count, then `0x10` for a repeated Enter waiting; the run emptied. `$a`
/// (`$a32`, `$a16` its smaller names) and `$d` are scratch registers.
macro_rules! flush_held {
    ($a:literal, $a32:literal, $a16:literal, $d:literal) => {
        concat!(
            "mov ",
            $a,
            ", qword ptr [r10 + {run}]\n",
            "test ",
            $a,
            ", ",
            $a,
            "\n",
            "jz 85f\n",
            // $d = the word's addend: the events, and (with R11 added at the end) the bytes.
            "mov ",
            $d,
            ", ",
            $a,
            "\n",
            "shl ",
            $d,
            ", 40\n",
            "sub ",
            $d,
            ", r11\n",
            "shr ",
            $a,
            ", 1\n",
            "jz 83f\n",
            "shl ",
            $a32,
            ", 8\n",
            "or ",
            $a32,
            ", {run_head}\n",
            "mov word ptr [r11], ",
            $a16,
            "\n",
            "add r11, 2\n",
            "83:\n",
            "test byte ptr [r10 + {run}], 1\n",
            "jz 84f\n",
            "mov byte ptr [r11], 0x10\n",
            "inc r11\n",
            "84:\n",
            // Emptied before the word grows: the sampler's count may lag, never run ahead.
            "mov qword ptr [r10 + {run}], 0\n",
            "add ",
            $d,
            ", r11\n",
            "add qword ptr [r10 + {word}], ",
            $d,
            "\n",
            "85:\n",
        )
    };
}
