//! How enumerations end (docs/design.md "Iterators: enumerations"): a closed frame of the
//! iterator model moves, disposes or hands on what it holds ([`closed`]); an enumeration is
//! settled as completed, abandoned, faulted or pending; at the end of the trace the ones
//! still held end there ([`finish`]).

use eltrace_trace::ValueStatus;

use super::Env;
use super::{Holder, Iterators, Last, Member, holder_below};
use crate::model::EndKind;
use crate::stack::{Open, ThreadState};

/// Frame `o` of the iterator model (`o.iter.any()`) was popped from `st`: it ended at `end`
/// by `kind`, with return value `leave_value`.
pub(crate) fn closed(
    st: &mut ThreadState,
    cx: &mut Env<'_>,
    o: &Open,
    end: u64,
    kind: EndKind,
    leave_value: Option<u32>,
) {
    let thread = cx.thread;
    let info = cx.iters.infos.get(o.func).copied().flatten();
    let top = st.stack.len().checked_sub(1);
    if o.iter.enumeration != 0 {
        match info.map(|i| i.member) {
            Some(Member::MoveNext) => {
                let value = leave_value
                    .and_then(|v| cx.tables.values.get(v))
                    .filter(|v| v.status == ValueStatus::Ok)
                    .map(|v| v.text.as_str());
                let last = match kind {
                    EndKind::Leave => match value {
                        Some("true") => Last::Yielded,
                        Some("false") => Last::Finished,
                        _ => Last::Returned,
                    },
                    EndKind::Unwind | EndKind::Catch => Last::Faulted,
                    EndKind::OpenAtEnd => Last::Running,
                    _ => Last::Returned,
                };
                let id = o.iter.enumeration;
                let mut finish = false;
                if let Some(e) = cx.iters.live.get_mut(&id) {
                    e.running = e.running.saturating_sub(1);
                    // A MoveNext closed after a later one started (its segment was found gone
                    // late, on another thread) does not say how the latest one ended.
                    if o.iter.move_no == e.moves {
                        e.last = last;
                    }
                    e.last_end = e.last_end.max(end);
                    finish = e.running == 0 && e.ending;
                }
                if finish {
                    settle(cx, id);
                }
            }
            Some(Member::Dispose) => end_enumeration(cx, o.iter.enumeration),
            _ => {}
        }
    }
    if o.iter.kickoff && kind == EndKind::Leave {
        if let Some(family) = info.map(|i| i.family) {
            let holder = holder_below(st, thread, top);
            cx.iters.obtain(st, holder, family, end);
        }
    }
    if o.iter.holds {
        let from = Holder::Frame {
            thread,
            depth: st.stack.len() as u32,
        };
        if let Some(ids) = cx.iters.held.remove(&from) {
            let to = holder_below(st, thread, top);
            for id in ids {
                if let Some(e) = cx.iters.live.get_mut(&id) {
                    e.holder = to;
                    cx.iters.hold(st, to, id);
                }
            }
        }
    }
}

/// Enumeration `id` was disposed: it ends now, or when its running `MoveNext` returns.
fn end_enumeration(cx: &mut Env<'_>, id: u64) {
    let Some(e) = cx.iters.live.get_mut(&id) else {
        return;
    };
    if e.running > 0 {
        e.ending = true;
    } else {
        settle(cx, id);
    }
}

/// Enumeration `id` is over: counts how it ended, and ends the enumerations it held.
fn settle(cx: &mut Env<'_>, id: u64) {
    let Some(e) = cx.iters.live.remove(&id) else {
        return;
    };
    if e.object != 0 && cx.iters.by_object.get(&e.object) == Some(&id) {
        cx.iters.by_object.remove(&e.object);
    }
    if let Some(v) = cx.iters.held.get_mut(&e.holder) {
        v.retain(|&x| x != id);
        if v.is_empty() {
            cx.iters.held.remove(&e.holder);
        }
    }
    if e.moves > 0 {
        let at_end = cx.iters.at_end;
        let fs = cx.stats.function(e.func);
        fs.wall_ns += e.last_end.saturating_sub(e.first_start);
        let yielded = e.last == Last::Yielded || (e.last == Last::Returned && e.current_after);
        match e.last {
            Last::Faulted => fs.faulted += 1,
            Last::Running => fs.pending_at_end += 1,
            _ if yielded => {
                fs.suspensions += 1;
                fs.yields += 1;
                if at_end {
                    fs.pending_at_end += 1;
                } else {
                    fs.abandoned += 1;
                }
            }
            _ => {}
        }
    }
    if let Some(inner) = cx.iters.held.remove(&Holder::Enumeration(id)) {
        for i in inner {
            end_enumeration(cx, i);
        }
    }
}

impl Iterators {
    /// The trace's end is near: enumerations that end from here on (their holders' frames
    /// open at the end) are pending, not abandoned.
    pub fn ending(&mut self) {
        self.at_end = true;
    }
}

/// At the end of the trace, after every thread's frames were closed: the enumerations still
/// held end there (pending when their last `MoveNext` yielded).
pub(crate) fn finish(cx: &mut Env<'_>) {
    cx.iters.at_end = true;
    let mut ids: Vec<u64> = cx.iters.live.keys().copied().collect();
    ids.sort_unstable();
    for id in ids {
        if let Some(e) = cx.iters.live.get_mut(&id) {
            e.running = 0;
        }
        settle(cx, id);
    }
}
