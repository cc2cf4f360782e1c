//! Exception events: Throw, Unwind (a frame removed by an exception) and Catch, recorded
//! through the hot path from the runtime's exception callbacks. `ExceptionUnwindFunctionEnter`
//! names the function being unwound and the matching `…Leave` does not, so each thread keeps
//! the functions it is unwinding (off the hot path: exceptions are rare).

use std::cell::RefCell;

use eltrace_trace::EventKind;

use crate::hooks::record;

thread_local! {
    /// Function indices of the frames being unwound (`None`: not hooked), innermost last.
    static UNWINDING: RefCell<Vec<Option<u32>>> = const { RefCell::new(Vec::new()) };
}

/// `ExceptionUnwindFunctionEnter(function)`: remember the frame being unwound.
pub fn unwind_enter(hooked_idx: Option<u32>) {
    let _ = UNWINDING.try_with(|u| u.borrow_mut().push(hooked_idx));
}

/// `ExceptionUnwindFunctionLeave()`: the frame remembered last is gone.
pub fn unwind_leave() {
    let top = UNWINDING.try_with(|u| u.borrow_mut().pop()).ok().flatten();
    if let Some(Some(idx)) = top {
        record(EventKind::Unwind.code() as u32, idx, 0);
    }
}

/// `ExceptionCatcherEnter` for a hooked function.
pub fn catch(idx: u32) {
    record(EventKind::Catch.code() as u32, idx, 0);
}

/// `ExceptionThrown` (function unknown).
pub fn throw() {
    record(EventKind::Throw.code() as u32, u32::MAX, 0);
}
