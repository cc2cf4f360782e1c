//! The fast path: `SetEnterLeaveFunctionHooks3` stubs in assembly (x86-64 SysV, CoreCLR's JIT
//! probe convention), called directly from JIT-compiled code.
//!
//! # Contract (docs/abi.md: "Parameters" and "Registers the call-out may modify", Unix x64)
//!
//! | stub | input | may modify | everything else comes back unchanged |
//! |---|---|---|---|
//! | Enter | R14 = client id, R15 = caller SP | RAX, R10, R11, XMM8-15, flags | incl. RDI RSI RDX RCX R8 R9, XMM0-7 (the method's arguments), R14, R15 |
//! | Leave / Tailcall | RDI = client id, RSI = caller SP | RCX, RSI, RDI, R8-R11, XMM2-15, flags | incl. RAX RDX XMM0 XMM1 (return values) |
//!
//! The default Leave/Tailcall stubs also preserve **RCX** although the contract allows
//! trashing it: on x64 the runtime-async continuation comes back in RCX and .NET 10 zeroes it
//! before the Leave call, not after. Preserving it costs nothing on the inline path (the stubs
//! do not use RCX) and one push/pop on the fallback path; `ELTRACE_PRESERVE_RCX=0` selects
//! stubs that do not preserve it (measured in docs/performance.md).
//!
//! # What a recording stub does
//!
//! 1. Client ids with bit 62 or 63 set (no events / the unhandled-exception sentinel, see
//!    hooks.rs) go to the Rust fallback.
//! 2. Loads the thread's ring pointer from its ring slot (slot.rs: an initial-exec
//!    thread-local, two loads, no call). 0 (no ring yet) or `DEAD` (1) → fallback.
//! 3. `used = head - tail`; if `used >= inline_limit` → fallback (half full, or a drop marker is
//!    due: ring.rs's module doc).
//! 4. Writes the 16-byte [`RawRecord`](crate::ring::RawRecord) at `records[head & mask]`:
//!    the RDTSC value converted to ns (`mono0 + ((tsc - tsc0) · mult) >> 32` with the
//!    calibration's statics, clock.rs) and the SP as whole words, then the key `idx | kind << 28` (one `lea`
//!    from the client id `idx + 1`) as two 16-bit stores over their top bytes; then
//!    `head += 1` (an x86 store is a release store).
//!
//! Every offset, shift and constant the stubs use is a `const` operand computed from the
//! Rust definitions (and the calibration a `sym` operand naming clock.rs's statics) (`ring::stub` from the `Ring`/`RawRecord` types, `slot::DEAD`, the
//! client-id encoding of hooks.rs, the `EventKind` codes): a layout change moves the stubs
//! with it, and one they cannot follow stops the build (`ring::stub`'s assertions).
//!
//! RDTSC and the conversion's `mul` clobber RAX and RDX: Enter keeps RDX (an argument) in
//! XMM8, Leave keeps RAX/RDX (the return value) in R8/R9. The inline path touches no other register and no stack.
//!
//! The fallback saves what a C call may clobber but the contract protects (Enter: the six
//! integer argument registers and XMM0-7; Leave: RAX, RDX, XMM0, XMM1 and optionally RCX; the
//! vector registers whole, as YMM with AVX and ZMM with AVX-512: fast/vectors.rs), aligns the
//! stack and calls [`fast_fallback`], which records through the same Rust code as the slow
//! path (warm-up, drops, sentinel) and wakes the writer when the ring is half full. No locks,
//! allocation or system calls on the inline path; the fallback makes a futex wake at most once
//! per writer sleep.
//!
//! The stubs read the TSC themselves, so they may write only while ticks are TSC counts: with
//! the monotonic clock every ring's inline limit stays 0 (`Ring::without_inline_writes`) and
//! every event takes the fallback (correct, slower).
//!
//! # Stream stubs (exact and sampled recordings: fast/stream.rs)
//!
//! With streams (ring/stream.rs) the stubs installed encode each event into the thread's
//! stream instead of writing a record; for what they cannot do inline they jump to the
//! recording stub of their kind, whose inline path a streaming ring disables, and so to Rust.
//!
//! # Timeless stubs (`record --timing none|sampled`)
//!
//! `*_nt` stubs are the same stubs without step 4's timestamp: no `RDTSC`, so Enter needs no
//! XMM8 and Leave no R8/R9, and the record's time word is not written (the writer ignores it
//! in a timeless trace). They write at any clock (no `without_inline_writes` needed).
//!
//! # Test and benchmark variants
//!
//! * `ELTRACE_TEST_TRASH_REGISTERS=1`: stubs that, before every `ret` (inline and fallback),
//!   overwrite every register their trash set allows: integers with `0x5A5A…`, vector
//!   registers with all ones (a NaN), whole (YMM with AVX; ZMM, XMM16-31 and K1-K7 with
//!   AVX-512) — RCX too unless RCX is preserved; and every fallback clears the vector
//!   registers' upper bits (`VZEROUPPER`) after its call, as a C callee may. The e2e suite runs
//!   every scenario this way; a program that relied on more than the contract would compute wrong
//!   results.
//! * Empty stubs (`ret`) for the benchmark's "fast path, empty stub", and stubs that read the
//!   TSC and return (`ELTRACE_HOOKS=fast-clock`: the floor of a timed hook), keeping RAX and
//!   RDX in R10 and R11, which every probe may modify.

use core::arch::global_asm;

use eltrace_trace::EventKind;

use crate::ring::stub;
use crate::{hooks, slot};

#[macro_use]
mod vectors;
pub use vectors::detect_vectors;

/// Which stub set to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Overwrite the trash set before returning (contract test).
    pub trash: bool,
    /// Leave/Tailcall preserve RCX.
    pub preserve_rcx: bool,
    /// What the stubs do: record, or a benchmark's baseline.
    pub body: Body,
    /// Stubs that take no timestamp (`record --timing none|sampled`).
    pub timeless: bool,
    /// Recording stubs that encode into the thread's stream (the default; fast/stream.rs).
    pub stream: bool,
}

/// What a stub set does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Record the event (the stubs above).
    Record,
    /// `ret` only (benchmark baseline).
    Empty,
    /// Read the TSC and return (benchmark: the clock's own cost).
    Clock,
}

/// The three stub addresses, for `SetEnterLeaveFunctionHooks3`.
#[derive(Debug, Clone, Copy)]
pub struct Stubs {
    pub enter: unsafe extern "C" fn(),
    pub leave: unsafe extern "C" fn(),
    pub tailcall: unsafe extern "C" fn(),
}

/// The Rust side of the Leave and Tailcall stubs' slow branch. `kind` is the `EventKind`
/// code, `client` the client id, `sp` the caller SP the JIT passed, `rax` points at the
/// stub's saved RAX (the return value; a continuation allocator's is recorded, hooks.rs
/// `CLIENT_ALLOC`).
extern "C" fn fast_fallback(kind: u32, client: usize, sp: u64, rax: *const u64) {
    let _ = std::panic::catch_unwind(|| hooks::fast_probe(kind, client, sp, rax));
}

/// The Enter stubs' slow branch: as [`fast_fallback`], and `saved` points at the stub's saved
/// integer argument registers (R9 first, RDI 5 words above), where a runtime-async variant's
/// continuation argument is read (hooks.rs, `CLIENT_CONT`).
extern "C" fn fast_enter_fallback(client: usize, sp: u64, saved: *const u64) {
    let _ = std::panic::catch_unwind(|| {
        hooks::fast_probe(EventKind::Enter.code() as u32, client, sp, saved)
    });
}

macro_rules! trash_enter {
    () => {
        concat!(
            "movabs rax, 0x5A5A5A5A5A5A5A5A
         mov r10, rax
         mov r11, rax
         ",
            trash_vectors!(8, 9, 10, 11, 12, 13, 14, 15)
        )
    };
}

macro_rules! trash_leave {
    () => {
        concat!(
            "movabs rdi, 0x5A5A5A5A5A5A5A5A
         mov rsi, rdi
         mov r8, rdi
         mov r9, rdi
         mov r10, rdi
         mov r11, rdi
         ",
            trash_vectors!(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        )
    };
}

/// The stubs' TSC to nanoseconds, `mono0 + ((tsc - tsc0) · mult) >> 32` (clock.rs
/// [`to_ns`](crate::clock::to_ns), to the same bit), on the tick in RAX;
/// clobbers RDX. A tick before the calibration's (never after start-up on an invariant TSC)
/// counts as the calibration's own, where `to_ns` would go a few ns below it. In the shadow
/// of RDTSC's latency these instructions cost next to nothing (docs/performance.md), while
/// the thread's encoder, which reads every record back, no longer converts anything.
macro_rules! tick_to_ns {
    () => {
        "sub rax, qword ptr [rip + {tsc0}]
         mov edx, 0
         cmovb rax, rdx
         mul qword ptr [rip + {mult}]
         shrd rax, rdx, 32
         add rax, qword ptr [rip + {mono0}]"
    };
}

/// The Enter stubs' timestamp: RDTSC, in ns, into the record's time word (RDX, an argument,
/// kept in XMM8 meanwhile).
macro_rules! enter_tick {
    () => {
        concat!(
            "movq xmm8, rdx
             rdtsc
             shl rdx, 32
             or rax, rdx
             ",
            tick_to_ns!(),
            "
             movq rdx, xmm8
             mov qword ptr [r11 + {tick}], rax"
        )
    };
}

/// The Leave/Tailcall stubs' timestamp: RAX/RDX (the return value) kept in R8/R9 around
/// RDTSC and the conversion, restored by [`leave_tick_end`].
macro_rules! leave_tick {
    () => {
        concat!(
            "mov r8, rax
             mov r9, rdx
             rdtsc
             shl rdx, 32
             or rax, rdx
             ",
            tick_to_ns!(),
            "
             mov qword ptr [r11 + {tick}], rax"
        )
    };
}

macro_rules! leave_tick_end {
    () => {
        "mov rax, r8
         mov rdx, r9"
    };
}

/// Timeless stubs (`record --timing none|sampled`) write no time: the record's time bits keep
/// whatever the slot held, and the writer ignores them. (The operands are named in a comment
/// only, so that every stub takes the same operands.)
macro_rules! no_tick {
    () => {
        "# no timestamp (time word at +{tick} left as is; no {tsc0} {mult} {mono0})"
    };
}

/// Assembles a recording stub: `global_asm!` of `$template` with the operands every stub
/// uses (the client-id encoding, the slot's `DEAD`, the ring and record layout, and
/// `key_kind`, the key bits of `$kind`), then the stub's own operands (`$own`: its fallback,
/// and a Leave stub's `kind`). The operands are text substituted into the template, so
/// their order does not change the code.
macro_rules! stub_asm {
    ($template:expr, $kind:expr, $($own:tt)*) => {
        global_asm!(
            $template,
            $($own)*
            key_kind = const ($kind.code() as u32) << stub::KIND_SHIFT,
            flags_shift = const hooks::CLIENT_FLAGS_SHIFT,
            bias = const hooks::CLIENT_INDEX_BIAS,
            dead = const slot::DEAD,
            head = const stub::HEAD,
            tail = const stub::TAIL,
            inline_limit = const stub::INLINE_LIMIT,
            mask = const stub::MASK,
            records = const stub::RECORDS,
            record_shift = const stub::RECORD_SHIFT,
            tick = const stub::TICK,
            tsc0 = sym crate::clock::TSC0,
            mult = sym crate::clock::MULT,
            mono0 = sym crate::clock::MONO0,
            sp = const stub::SP,
            key_lo = const stub::KEY_LO,
            key_hi = const stub::KEY_HI,
            key_half = const stub::KEY_HALF,
            vectors = sym vectors::VECTORS,
            clobber = sym vectors::CLOBBER_UPPER,
            upper = sym vectors::UPPER128,
        );
    };
}

/// An Enter stub; `$epilogue` runs before each `ret`; `$stamp` writes the tick (or not).
macro_rules! enter_stub {
    ($name:literal, $epilogue:expr) => {
        enter_stub!($name, $epilogue, enter_tick!());
    };
    ($name:literal, $epilogue:expr, $stamp:expr) => {
        stub_asm!(
            concat!(
                ".pushsection .text.", $name, ",\"ax\",@progbits\n",
                ".globl ", $name, "\n",
                ".hidden ", $name, "\n",
                ".type ", $name, ", @function\n",
                ".p2align 4\n",
                $name, ":\n",
                "
                mov rax, r14
                shr rax, {flags_shift}
                jnz 9f
                mov rax, qword ptr [rip + ", crate::slot::slot_symbol!(), "@GOTTPOFF]
                mov r10, qword ptr fs:[rax]
                cmp r10, {dead}
                jbe 9f
                mov r11, qword ptr [r10 + {head}]
                mov rax, r11
                sub rax, qword ptr [r10 + {tail}]
                cmp rax, qword ptr [r10 + {inline_limit}]
                jae 9f
                and r11, qword ptr [r10 + {mask}]
                shl r11, {record_shift}
                add r11, qword ptr [r10 + {records}]
                ", $stamp, "
                mov qword ptr [r11 + {sp}], r15
                lea eax, [r14 + {key_kind} - {bias}]
                mov word ptr [r11 + {key_lo}], ax
                shr eax, {key_half}
                mov word ptr [r11 + {key_hi}], ax
                inc qword ptr [r10 + {head}]
                ",
                $epilogue,
                "
                ret
            9:
                push rdi
                push rsi
                push rdx
                push rcx
                push r8
                push r9
                sub rsp, 520
                ", keep_vectors!(store 512; 0 @ 0, 1 @ 64, 2 @ 128, 3 @ 192, 4 @ 256, 5 @ 320, 6 @ 384, 7 @ 448), "
                mov rdi, r14
                mov rsi, r15
                lea rdx, [rsp + 520]
                call {fallback}
                ", keep_vectors!(load 512; 0 @ 0, 1 @ 64, 2 @ 128, 3 @ 192, 4 @ 256, 5 @ 320, 6 @ 384, 7 @ 448), "
                add rsp, 520
                pop r9
                pop r8
                pop rcx
                pop rdx
                pop rsi
                pop rdi
                ",
                $epilogue,
                "
                ret
                .size ", $name, ", . - ", $name, "
                .popsection"
            ),
            EventKind::Enter,
            fallback = sym fast_enter_fallback,
        );
    };
}

/// A Leave or Tailcall stub recording `$kind`; `$push_rcx`/`$pop_rcx`/`$frame` select RCX
/// preservation (the frame keeps the call 16-byte aligned either way, and the saved RAX at
/// RSP + 160 either way: 8 + 8 + 144 with RCX pushed, 8 + 152 without; the frame's first 128
/// bytes keep XMM0/XMM1 whole, the byte at 128 says how: vectors.rs).
macro_rules! leave_stub {
    ($name:literal, $kind:expr, $push_rcx:literal, $pop_rcx:literal, $frame:literal, $epilogue:expr) => {
        leave_stub!($name, $kind, $push_rcx, $pop_rcx, $frame, $epilogue, leave_tick!(), leave_tick_end!());
    };
    ($name:literal, $kind:expr, $push_rcx:literal, $pop_rcx:literal, $frame:literal, $epilogue:expr, $stamp:expr, $unstamp:expr) => {
        stub_asm!(
            concat!(
                ".pushsection .text.", $name, ",\"ax\",@progbits\n",
                ".globl ", $name, "\n",
                ".hidden ", $name, "\n",
                ".type ", $name, ", @function\n",
                ".p2align 4\n",
                $name, ":\n",
                "
                mov r8, rdi
                shr r8, {flags_shift}
                jnz 9f
                mov r8, qword ptr [rip + ", crate::slot::slot_symbol!(), "@GOTTPOFF]
                mov r10, qword ptr fs:[r8]
                cmp r10, {dead}
                jbe 9f
                mov r11, qword ptr [r10 + {head}]
                mov r8, r11
                sub r8, qword ptr [r10 + {tail}]
                cmp r8, qword ptr [r10 + {inline_limit}]
                jae 9f
                and r11, qword ptr [r10 + {mask}]
                shl r11, {record_shift}
                add r11, qword ptr [r10 + {records}]
                ", $stamp, "
                mov qword ptr [r11 + {sp}], rsi
                lea esi, [rdi + {key_kind} - {bias}]
                mov word ptr [r11 + {key_lo}], si
                shr esi, {key_half}
                mov word ptr [r11 + {key_hi}], si
                ", $unstamp, "
                inc qword ptr [r10 + {head}]
                ",
                $epilogue,
                "
                ret
            9:
                push rax
                push rdx
                ", $push_rcx, "
                sub rsp, ", $frame, "
                ", keep_vectors!(store 128; 0 @ 0, 1 @ 64), "
                mov rdx, rsi
                mov rsi, rdi
                mov edi, {kind}
                lea rcx, [rsp + 160]
                call {fallback}
                ", keep_vectors!(load 128; 0 @ 0, 1 @ 64), "
                add rsp, ", $frame, "
                ", $pop_rcx, "
                pop rdx
                pop rax
                ",
                $epilogue,
                "
                ret
                .size ", $name, ", . - ", $name, "
                .popsection"
            ),
            $kind,
            fallback = sym fast_fallback,
            kind = const $kind.code(),
        );
    };
}

enter_stub!("eltrace_fast_enter", "");
enter_stub!("eltrace_fast_enter_trash", trash_enter!());

leave_stub!(
    "eltrace_fast_leave",
    EventKind::Leave,
    "push rcx",
    "pop rcx",
    "144",
    ""
);
leave_stub!(
    "eltrace_fast_leave_norcx",
    EventKind::Leave,
    "",
    "",
    "152",
    ""
);
leave_stub!(
    "eltrace_fast_leave_trash",
    EventKind::Leave,
    "push rcx",
    "pop rcx",
    "144",
    trash_leave!()
);
leave_stub!(
    "eltrace_fast_leave_norcx_trash",
    EventKind::Leave,
    "",
    "",
    "152",
    concat!(trash_leave!(), "\nmov rcx, rdi")
);
leave_stub!(
    "eltrace_fast_tailcall",
    EventKind::Tailcall,
    "push rcx",
    "pop rcx",
    "144",
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_norcx",
    EventKind::Tailcall,
    "",
    "",
    "152",
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_trash",
    EventKind::Tailcall,
    "push rcx",
    "pop rcx",
    "144",
    trash_leave!()
);
leave_stub!(
    "eltrace_fast_tailcall_norcx_trash",
    EventKind::Tailcall,
    "",
    "",
    "152",
    concat!(trash_leave!(), "\nmov rcx, rdi")
);

enter_stub!("eltrace_fast_enter_nt", "", no_tick!());
enter_stub!("eltrace_fast_enter_nt_trash", trash_enter!(), no_tick!());
leave_stub!(
    "eltrace_fast_leave_nt",
    EventKind::Leave,
    "push rcx",
    "pop rcx",
    "144",
    "",
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_leave_nt_norcx",
    EventKind::Leave,
    "",
    "",
    "152",
    "",
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_leave_nt_trash",
    EventKind::Leave,
    "push rcx",
    "pop rcx",
    "144",
    trash_leave!(),
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_leave_nt_norcx_trash",
    EventKind::Leave,
    "",
    "",
    "152",
    concat!(trash_leave!(), "\nmov rcx, rdi"),
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_nt",
    EventKind::Tailcall,
    "push rcx",
    "pop rcx",
    "144",
    "",
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_nt_norcx",
    EventKind::Tailcall,
    "",
    "",
    "152",
    "",
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_nt_trash",
    EventKind::Tailcall,
    "push rcx",
    "pop rcx",
    "144",
    trash_leave!(),
    no_tick!(),
    ""
);
leave_stub!(
    "eltrace_fast_tailcall_nt_norcx_trash",
    EventKind::Tailcall,
    "",
    "",
    "152",
    concat!(trash_leave!(), "\nmov rcx, rdi"),
    no_tick!(),
    ""
);

global_asm!(
    ".pushsection .text.eltrace_fast_empty,\"ax\",@progbits",
    ".globl eltrace_fast_empty",
    ".hidden eltrace_fast_empty",
    ".type eltrace_fast_empty, @function",
    ".p2align 4",
    "eltrace_fast_empty:",
    "ret",
    ".size eltrace_fast_empty, . - eltrace_fast_empty",
    ".popsection",
);

global_asm!(
    ".pushsection .text.eltrace_fast_clock,\"ax\",@progbits",
    ".globl eltrace_fast_clock",
    ".hidden eltrace_fast_clock",
    ".type eltrace_fast_clock, @function",
    ".p2align 4",
    "eltrace_fast_clock:",
    // RAX and RDX are a Leave's return value and RDX an Enter's argument: kept in R10 and R11,
    // which every probe may modify, around the RDTSC that overwrites them.
    "mov r10, rax",
    "mov r11, rdx",
    "rdtsc",
    "mov rax, r10",
    "mov rdx, r11",
    "ret",
    ".size eltrace_fast_clock, . - eltrace_fast_clock",
    ".popsection",
);

mod select;
mod stream;
pub use select::stubs;

#[cfg(test)]
mod tests;
