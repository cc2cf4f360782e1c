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
    fn eltrace_stub_encode_enter();
    fn eltrace_stub_encode_leave();
    fn eltrace_stub_encode_tailcall();
    fn eltrace_stub_encode_enter_nt();
    fn eltrace_stub_encode_leave_nt();
    fn eltrace_stub_encode_tailcall_nt();
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
        Body::StubEncode if v.timeless => {
            return Stubs {
                enter: eltrace_stub_encode_enter_nt,
                leave: eltrace_stub_encode_leave_nt,
                tailcall: eltrace_stub_encode_tailcall_nt,
            };
        }
        Body::StubEncode => {
            return Stubs {
                enter: eltrace_stub_encode_enter,
                leave: eltrace_stub_encode_leave,
                tailcall: eltrace_stub_encode_tailcall,
            };
        }
    }
    let set = if v.timeless { &TIMELESS } else { &TIMED };
    let (trash, rcx) = (usize::from(v.trash), usize::from(v.preserve_rcx));
    Stubs {
        enter: set.enter[trash],
        leave: set.leave[trash][rcx],
        tailcall: set.tailcall[trash][rcx],
    }
}
