//! The stream stubs (the default; `ELTRACE_STREAM=0` for raw records): each encodes its event into the thread's stream
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
//! Registers (fast.rs's contract): Enter uses RAX, R10, R11 and XMM8-11, and RCX and RDX
//! pushed and popped; Leave/Tailcall use R8-R11 and XMM8-11 (the return value's RAX/RDX kept
//! in XMM8/XMM9) and leave RCX alone. Every check before the fallback jump touches only
//! registers the fallback does not read.

use core::arch::global_asm;

use crate::ring::stream::off;
use crate::ring::stub;
use crate::{hooks, slot};

#[macro_use]
mod parts;

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
            prevkey = const stub::STREAM + off::PREV_KEY,
            run = const stub::STREAM + off::RUN,
            run_full = const 2 * eltrace_trace::stream::RUN_MAX,
            run_head = const eltrace_trace::stream::RUN_HEAD,
            callees = const crate::ring::stream::CALLEES,
            cmask = const eltrace_trace::stream::CALLEE_ENTRIES - 1,
            callee_head = const eltrace_trace::stream::CALLEE_HEAD,
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

/// Timed Enter: `$epilogue` runs before `ret` (the contract test's trash); `$fallback` the
/// recording stub.
macro_rules! stream_enter {
    ($name:literal, $fallback:literal, $epilogue:expr) => {
        stream_asm!(concat!(
            stream_start!($name, "r14", "rax", "eax"),
            "add r11, qword ptr [r10 + {buf}]\n",
            "movq xmm9, r11\n",
            // RCX and RDX (arguments) are scratch until the event is written.
            "push rcx\n",
            "push rdx\n",
            // The head's time bits in RAX, kept in XMM10.
            stream_tick!(),
            "movq xmm10, rax\n",
            repeat!(),
            "movq rax, xmm10\n",
            "or rax, 1\n",
            varint!("rax", "eax", "ax", "al", "r11", "ecx", "cl", "2"),
            "jmp 3f\n",
            "1:\n",
            callee!(),
            "movq rax, xmm10\n",
            "or rax, {callee_head}\n",
            varint!("rax", "eax", "ax", "al", "r11", "edx", "dl", "7"),
            "jmp 3f\n",
            "4:\n",
            "movq rax, xmm10\n",
            varint!("rax", "eax", "ax", "al", "r11", "edx", "dl", "4"),
            enter_varints!(),
            "3:\n",
            "pop rdx\n",
            "pop rcx\n",
            // Publish: the length and one event.
            publish!("xmm9", "rax"),
            push_frame!(),
            $epilogue,
            "\n",
            "ret\n",
            stub_close!($name, $fallback)
        ),);
    };
}

/// Timeless Enter: a repeat is taken by the run (no byte: a run's pair once its Leave
/// follows), after what the run holds is written when an Enter waits already or the run is
/// full; any other Enter writes what the run holds first (out of line). An Enter the callee
/// table predicts is the head `0x09`, one byte published by a constant; otherwise the head
/// `0x00`, the function and the SP's delta.
macro_rules! stream_enter_nt {
    ($name:literal, $fallback:literal, $epilogue:expr) => {
        stream_asm!(concat!(
            stub_open!($name),
            thread_stream!("r14", "rax"),
            repeat!(),
            run_enter!(),
            "or qword ptr [r10 + {run}], 1\n",
            "jmp 3f\n",
            // A repeat after what the run holds: it waits now.
            "81:\n",
            room!("rax", "eax", "r11d"),
            "add r11, qword ptr [r10 + {buf}]\n",
            "push rdx\n",
            flush_held!("rax", "eax", "ax", "rdx"),
            "pop rdx\n",
            "mov qword ptr [r10 + {run}], 1\n",
            "jmp 3f\n",
            // No repeat.
            "1:\n",
            room!("rax", "eax", "r11d"),
            "add r11, qword ptr [r10 + {buf}]\n",
            "cmp qword ptr [r10 + {run}], 0\n",
            "jne 88f\n",
            "80:\n",
            // RCX and RDX (arguments) are scratch until the event is written.
            "push rcx\n",
            "push rdx\n",
            "lea eax, [r14 - {bias}]\n",
            callee!(),
            "pop rdx\n",
            "pop rcx\n",
            "mov byte ptr [r11], {callee_head}\n",
            "mov r11, (1 << {event_bit}) | 1\n",
            "add qword ptr [r10 + {word}], r11\n",
            "jmp 3f\n",
            "4:\n",
            "movq xmm9, r11\n",
            "mov byte ptr [r11], 0\n",
            "inc r11\n",
            enter_varints!(),
            "pop rdx\n",
            "pop rcx\n",
            publish!("xmm9", "rax"),
            "3:\n",
            push_frame!(),
            $epilogue,
            "\n",
            "ret\n",
            // What the run holds, before an Enter that is no repeat.
            "88:\n",
            "push rdx\n",
            flush_held!("rax", "eax", "ax", "rdx"),
            "pop rdx\n",
            "jmp 80b\n",
            stub_close!($name, $fallback)
        ),);
    };
}

/// Timed Leave or Tailcall of kind code `$kind` (RDI = client id, RSI = caller SP); as
/// `stream_enter`.
macro_rules! stream_leave {
    ($name:literal, $fallback:literal, $kind:literal, $epilogue:expr) => {
        stream_asm!(concat!(
            stream_start!($name, "rdi", "r8", "r8d"),
            // The stack's top: R9 its address, unless the stack is empty (R8 = 0).
            stack_top!(),
            "mov r8d, 1\n",
            "1:\n",
            // R8 = 1: predicted (pop); 0: the stack is empty (function and SP follow).
            "movq xmm8, rax\n",
            "movq xmm9, rdx\n",
            "add r11, qword ptr [r10 + {buf}]\n",
            "movq xmm10, r11\n",
            stream_tick!(),
            "lea edi, [rdi - {bias}]\n",
            "test r8, r8\n",
            "jz 2f\n",
            "dec qword ptr [r10 + {depth}]\n",
            "or rax, (",
            $kind,
            " << 1) | 1\n",
            varint!("rax", "eax", "ax", "al", "r11", "r9d", "r9b", "4"),
            "jmp 3f\n",
            "2:\n",
            "or rax, ",
            $kind,
            " << 1\n",
            varint!("rax", "eax", "ax", "al", "r11", "r9d", "r9b", "5"),
            "mov eax, edi\n",
            varint!("rax", "eax", "ax", "al", "r11", "r9d", "r9b", "6"),
            sp_zigzag!("rax", "rdx", "rsi"),
            varint!("rax", "eax", "ax", "al", "r11", "r9d", "r9b", "7"),
            "3:\n",
            publish!("xmm10", "rax"),
            leave_end!(),
            "movq rax, xmm8\n",
            "movq rdx, xmm9\n",
            $epilogue,
            "\n",
            "ret\n",
            stub_close!($name, $fallback)
        ),);
    };
}

/// Timeless Leave or Tailcall (`stream_leave`'s `_nt` stubs, shorter): RAX and RDX (the
/// return value) untouched. A Leave (`$run`: `run_leave!()`) of the repeated Enter waiting is a
/// run's pair (no byte); otherwise what the run holds is written first (out of line), and a
/// predicted event is one head byte published by a constant.
macro_rules! stream_leave_nt {
    ($name:literal, $fallback:literal, $kind:literal, $run:expr, $epilogue:expr) => {
        stream_asm!(concat!(
            stub_open!($name),
            thread_stream!("rdi", "r8"),
            $run,
            "81:\n",
            room!("r8", "r8d", "r11d"),
            "add r11, qword ptr [r10 + {buf}]\n",
            "cmp qword ptr [r10 + {run}], 0\n",
            "jne 88f\n",
            "80:\n",
            stack_top!(),
            "dec qword ptr [r10 + {depth}]\n",
            "mov byte ptr [r11], (",
            $kind,
            " << 1) | 1\n",
            "mov r8, (1 << {event_bit}) | 1\n",
            "add qword ptr [r10 + {word}], r8\n",
            "lea edi, [rdi - {bias}]\n",
            "jmp 3f\n",
            // The stack is empty: the head, the function and the SP's delta.
            "1:\n",
            "movq xmm10, r11\n",
            "mov byte ptr [r11], ",
            $kind,
            " << 1\n",
            "inc r11\n",
            "lea edi, [rdi - {bias}]\n",
            "mov r8d, edi\n",
            varint!("r8", "r8d", "r8w", "r8b", "r11", "r9d", "r9b", "5"),
            sp_zigzag!("r8", "r9", "rsi"),
            varint!("r8", "r8d", "r8w", "r8b", "r11", "r9d", "r9b", "6"),
            publish!("xmm10", "r8"),
            "3:\n",
            leave_end!(),
            "82:\n",
            $epilogue,
            "\n",
            "ret\n",
            // What the run holds, before an event that is no run's.
            "88:\n",
            flush_held!("r8", "r8d", "r8w", "r9"),
            "jmp 80b\n",
            stub_close!($name, $fallback)
        ),);
    };
}

stream_enter!("eltrace_stream_enter", "eltrace_fast_enter", "");
stream_enter!(
    "eltrace_stream_enter_trash",
    "eltrace_fast_enter_trash",
    trash_enter!()
);
stream_enter_nt!("eltrace_stream_enter_nt", "eltrace_fast_enter_nt", "");
stream_enter_nt!(
    "eltrace_stream_enter_nt_trash",
    "eltrace_fast_enter_nt_trash",
    trash_enter!()
);
stream_leave!("eltrace_stream_leave", "eltrace_fast_leave", "1", "");
stream_leave!(
    "eltrace_stream_leave_trash",
    "eltrace_fast_leave_trash",
    "1",
    trash_leave!()
);
stream_leave_nt!(
    "eltrace_stream_leave_nt",
    "eltrace_fast_leave_nt",
    "1",
    run_leave!(),
    ""
);
stream_leave_nt!(
    "eltrace_stream_leave_nt_trash",
    "eltrace_fast_leave_nt_trash",
    "1",
    run_leave!(),
    trash_leave!()
);
stream_leave!("eltrace_stream_tailcall", "eltrace_fast_tailcall", "2", "");
stream_leave!(
    "eltrace_stream_tailcall_trash",
    "eltrace_fast_tailcall_trash",
    "2",
    trash_leave!()
);
stream_leave_nt!(
    "eltrace_stream_tailcall_nt",
    "eltrace_fast_tailcall_nt",
    "2",
    "",
    ""
);
stream_leave_nt!(
    "eltrace_stream_tailcall_nt_trash",
    "eltrace_fast_tailcall_nt_trash",
    "2",
    "",
    trash_leave!()
);

#[cfg(test)]
mod tests;
