//! Which assembled stubs (fast.rs) a [`Variant`] installs: the symbols the `global_asm!`
//! blocks define, and the choice among them.

use super::{Body, Stubs, Variant};

unsafe extern "C" {
    fn eltrace_fast_enter();
    fn eltrace_fast_enter_trash();
    fn eltrace_fast_leave();
    fn eltrace_fast_leave_norcx();
    fn eltrace_fast_leave_trash();
    fn eltrace_fast_leave_norcx_trash();
    fn eltrace_fast_tailcall();
    fn eltrace_fast_tailcall_norcx();
    fn eltrace_fast_tailcall_trash();
    fn eltrace_fast_tailcall_norcx_trash();
    fn eltrace_fast_empty();
    fn eltrace_fast_clock();
    fn eltrace_fast_enter_nt();
    fn eltrace_fast_enter_nt_trash();
    fn eltrace_fast_leave_nt();
    fn eltrace_fast_leave_nt_norcx();
    fn eltrace_fast_leave_nt_trash();
    fn eltrace_fast_leave_nt_norcx_trash();
    fn eltrace_fast_tailcall_nt();
    fn eltrace_fast_tailcall_nt_norcx();
    fn eltrace_fast_tailcall_nt_trash();
    fn eltrace_fast_tailcall_nt_norcx_trash();
    fn eltrace_stream_enter();
    fn eltrace_stream_enter_trash();
    fn eltrace_stream_enter_nt();
    fn eltrace_stream_enter_nt_trash();
    fn eltrace_stream_leave();
    fn eltrace_stream_leave_trash();
    fn eltrace_stream_leave_nt();
    fn eltrace_stream_leave_nt_trash();
    fn eltrace_stream_tailcall();
    fn eltrace_stream_tailcall_trash();
    fn eltrace_stream_tailcall_nt();
    fn eltrace_stream_tailcall_nt_trash();
}

type Stub = unsafe extern "C" fn();

/// One timing's stubs: Enter by `[trash]`, Leave and Tailcall by `[trash][preserve_rcx]`.
struct Set {
    enter: [Stub; 2],
    leave: [[Stub; 2]; 2],
    tailcall: [[Stub; 2]; 2],
}

/// The stubs that take a timestamp (`record --timing exact`).
const TIMED: Set = Set {
    enter: [eltrace_fast_enter, eltrace_fast_enter_trash],
    leave: [
        [eltrace_fast_leave_norcx, eltrace_fast_leave],
        [eltrace_fast_leave_norcx_trash, eltrace_fast_leave_trash],
    ],
    tailcall: [
        [eltrace_fast_tailcall_norcx, eltrace_fast_tailcall],
        [
            eltrace_fast_tailcall_norcx_trash,
            eltrace_fast_tailcall_trash,
        ],
    ],
};

/// The stubs that take none (`record --timing none|sampled`).
const TIMELESS: Set = Set {
    enter: [eltrace_fast_enter_nt, eltrace_fast_enter_nt_trash],
    leave: [
        [eltrace_fast_leave_nt_norcx, eltrace_fast_leave_nt],
        [
            eltrace_fast_leave_nt_norcx_trash,
            eltrace_fast_leave_nt_trash,
        ],
    ],
    tailcall: [
        [eltrace_fast_tailcall_nt_norcx, eltrace_fast_tailcall_nt],
        [
            eltrace_fast_tailcall_nt_norcx_trash,
            eltrace_fast_tailcall_nt_trash,
        ],
    ],
};

/// The stubs of a variant (and the vector width their fallbacks keep, from the CPU:
/// [`super::detect_vectors`]).
pub fn stubs(v: Variant) -> Stubs {
    super::detect_vectors(v.trash);
    let same = |stub: unsafe extern "C" fn()| Stubs {
        enter: stub,
        leave: stub,
        tailcall: stub,
    };
    match v.body {
        Body::Record => {}
        Body::Empty => return same(eltrace_fast_empty),
        Body::Clock => return same(eltrace_fast_clock),
    }
    if v.stream {
        // The stream stubs leave RCX alone whatever `preserve_rcx` says; their fallbacks are
        // the recording stubs that preserve it.
        let t = usize::from(v.trash);
        let pick =
            |timed: [Stub; 2], timeless: [Stub; 2]| if v.timeless { timeless[t] } else { timed[t] };
        return Stubs {
            enter: pick(
                [eltrace_stream_enter, eltrace_stream_enter_trash],
                [eltrace_stream_enter_nt, eltrace_stream_enter_nt_trash],
            ),
            leave: pick(
                [eltrace_stream_leave, eltrace_stream_leave_trash],
                [eltrace_stream_leave_nt, eltrace_stream_leave_nt_trash],
            ),
            tailcall: pick(
                [eltrace_stream_tailcall, eltrace_stream_tailcall_trash],
                [eltrace_stream_tailcall_nt, eltrace_stream_tailcall_nt_trash],
            ),
        };
    }
    let set = if v.timeless { &TIMELESS } else { &TIMED };
    let (trash, rcx) = (usize::from(v.trash), usize::from(v.preserve_rcx));
    Stubs {
        enter: set.enter[trash],
        leave: set.leave[trash][rcx],
        tailcall: set.tailcall[trash][rcx],
    }
}
