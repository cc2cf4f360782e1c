//! Replaying a thread ahead of the others: after a batch (a thread's events up to the next
//! event of another thread), the thread's next ordinary events are taken too, up to the
//! drain's limit, when nothing the other threads' replay looks at can change by it; the
//! first event that is not ordinary goes back to the queue and waits for its turn in time
//! order. The replay of a trace whose threads run at the same time switches thread every
//! few events (6.6 on average on an ASP.NET Core trace); each switch costs more than an
//! event. Results stay the same (tests/quick.rs); only the order in which frames close
//! changes, so this is done only for a sink that keeps no order. The events that are not
//! ordinary keep their order, which the reorder queue makes depend on their times and
//! threads alone (at the same time, the lower thread index first), not on when the ordinary
//! events before them were taken.
//!
//! ```text
//! T1 enter A  t=10    batch of T1 (T2's next event is at t=12)
//! T1 enter B  t=14    ahead: ordinary, T1 has no frame of undecided role
//! T1 leave B  t=15    ahead
//! T1 enter V  t=16    a variant: back to the queue, replayed after T2's events up to t=16
//! ```

use eltrace_trace::{Event, EventKind, ThreadIdx};

use super::context::Ctx;
use super::{Replay, quick};
use crate::asyncs::Role;
use crate::model::Tables;
use crate::reorder::{Ahead, Batch};
use crate::sink::{AnalysisError, FrameSink};
use crate::stack::ThreadState;
use crate::stats::Stats;

/// How many events [`Replay::run_ahead`] takes at first, and at most, at a time (the scan
/// for the drain's limit stops there): few at first, as the thread's next event may well not
/// be ordinary, then twice as many each time.
const FIRST_STEP: usize = 8;
const MAX_STEP: usize = 256;

#[cfg(test)]
thread_local! {
    /// Events this thread's analyses took ahead (tests: the path is taken).
    pub(crate) static TAKEN_AHEAD: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl Replay {
    /// Whether thread `thread`'s ordinary frames may be replayed ahead of the other threads'
    /// events (up to the drain's limit) without changing any result but the order in which
    /// frames close: the sink keeps no order, there is no call tree (its nodes are numbered
    /// in the order they are made), and nothing another thread's rules look at can change.
    /// What ahead-taken events touch ([`step`]) is the thread's own stack, sums
    /// in the statistics, and the call distances of callers that are not variants, which
    /// only the rules about variants read, for variants. Other threads' rules look at this
    /// thread's stack only for a frame of undecided role (`unresolved`): there must be none.
    /// The quick path looks at whether any function is a variant when the stack holds
    /// segments, and another thread's earlier event could make one: with segments open, no
    /// record read so far may allow a variant (`Roles::variants_possible`).
    pub(super) fn may_run_ahead<S: FrameSink + ?Sized>(
        &self,
        stats: &Stats,
        thread: ThreadIdx,
        sink: &S,
    ) -> bool {
        !self.no_quick_path
            && !self.no_run_ahead
            && !sink.ordered()
            && stats.tree.is_none()
            && !self.unresolved.iter().any(|&(t, _)| t == thread.0)
            && self
                .states
                .get(thread.0)
                .is_some_and(|st| st.open_segments() == 0 || !self.roles.variants_possible())
    }

    /// Replays thread `thread`'s next events past its batch's end while they are ordinary
    /// ([`Replay::may_run_ahead`]); the first one that is not goes back to the queue, to be
    /// replayed in time order.
    pub(super) fn run_ahead<S: FrameSink + ?Sized>(
        &mut self,
        tables: &mut Tables,
        stats: &mut Stats,
        thread: ThreadIdx,
        batch: &mut Batch<'_>,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let mut size = FIRST_STEP;
        while let Some((from, to)) = batch.take_ahead(size) {
            size = (size * 2).min(MAX_STEP);
            let events = batch.events(from, to);
            let cold = batch.ahead();
            let (st, mut cx) = self.thread(tables, stats, thread);
            let mut done = 0usize;
            for (i, e) in events.iter().enumerate() {
                let ahead = cold.after(&events[i + 1..]);
                if !step(st, &mut cx, sink, e, ahead)? {
                    break;
                }
                done += 1;
            }
            #[cfg(test)]
            TAKEN_AHEAD.with(|c| c.set(c.get() + done as u64));
            let left = events.len() - done;
            if left > 0 {
                batch.give_back(left);
                break;
            }
        }
        Ok(())
    }
}

/// `quick::step` for an event taken ahead of the other threads (`Replay::run_ahead`): only an
/// Enter (of an ordinary function or a thunk: `step` takes no other), and a Leave whose
/// caller (if any) neither is a variant nor can become one: its call distance
/// (`link::note_returned_call`) is read only for variants. Returns false, having done
/// nothing, for anything else.
#[inline(always)]
fn step<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    e: &Event,
    ahead: Ahead<'_>,
) -> Result<bool, AnalysisError> {
    match e.kind {
        EventKind::Enter => {}
        EventKind::Leave => {
            let n = st.stack.len();
            if n >= 2
                && matches!(
                    cx.roles.get(&cx.tables.functions, st.stack[n - 2].func),
                    Role::Variant | Role::Unresolved
                )
            {
                return Ok(false);
            }
        }
        _ => return Ok(false),
    }
    quick::step(st, cx, sink, e, e.ts, ahead)
}
