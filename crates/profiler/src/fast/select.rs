//! Which assembled stubs (fast.rs) a [`Variant`] installs: the symbols the `global_asm!`
//! blocks define, and the choice among them.

use super::{Stubs, Variant};

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
}

/// The stubs of a variant.
pub fn stubs(v: Variant) -> Stubs {
    if v.empty {
        return Stubs {
            enter: eltrace_fast_empty,
            leave: eltrace_fast_empty,
            tailcall: eltrace_fast_empty,
        };
    }
    if v.timeless {
        return timeless_stubs(v);
    }
    let (leave, tailcall): (unsafe extern "C" fn(), unsafe extern "C" fn()) =
        match (v.trash, v.preserve_rcx) {
            (false, true) => (eltrace_fast_leave, eltrace_fast_tailcall),
            (false, false) => (eltrace_fast_leave_norcx, eltrace_fast_tailcall_norcx),
            (true, true) => (eltrace_fast_leave_trash, eltrace_fast_tailcall_trash),
            (true, false) => (
                eltrace_fast_leave_norcx_trash,
                eltrace_fast_tailcall_norcx_trash,
            ),
        };
    Stubs {
        enter: if v.trash {
            eltrace_fast_enter_trash
        } else {
            eltrace_fast_enter
        },
        leave,
        tailcall,
    }
}

/// The timeless stubs of a (non-empty) variant.
fn timeless_stubs(v: Variant) -> Stubs {
    type Stub = unsafe extern "C" fn();
    let (leave, tailcall): (Stub, Stub) = match (v.trash, v.preserve_rcx) {
        (false, true) => (eltrace_fast_leave_nt, eltrace_fast_tailcall_nt),
        (false, false) => (eltrace_fast_leave_nt_norcx, eltrace_fast_tailcall_nt_norcx),
        (true, true) => (eltrace_fast_leave_nt_trash, eltrace_fast_tailcall_nt_trash),
        (true, false) => (
            eltrace_fast_leave_nt_norcx_trash,
            eltrace_fast_tailcall_nt_norcx_trash,
        ),
    };
    Stubs {
        enter: if v.trash {
            eltrace_fast_enter_nt_trash
        } else {
            eltrace_fast_enter_nt
        },
        leave,
        tailcall,
    }
}
