//! The replay's quick path: the events that need none of the rules, taken with the fewest
//! lookups and no copy of the frame. An Enter of an ordinary function (no async role, not an
//! iterator's member) below the top frame, on a stack with no frame the async rules look at
//! (with the arguments held for it, INFO `values_first`); the Leave of the top frame, an
//! ordinary one with no values. Anything else goes to `replay::step`, and the results are the
//! same either way (tests/quick.rs). Only a trace without INFO `values_first` makes it look at
//! the next event (a return value after the Leave).
//!
//! ```text
//! enter  A       sp=0x9000   quick: pushed
//! enter  B       sp=0x8f00   quick: pushed
//! leave  B       sp=0x8f00   quick: closed (the top frame)
//! enter  L3      (variant)   replay::step: the async rules decide
//! leave  A       sp=0x9000   quick
//! ```

use eltrace_trace::{Event, EventKind, FunctionIdx};

use super::context::Ctx;
use crate::asyncs::Role;
use crate::asyncs::link;
use crate::model::{EndKind, Frame};
use crate::reorder::Ahead;
use crate::sink::{AnalysisError, FrameSink};
use crate::stack::ThreadState;

/// Takes event `e` of a thread at `ns` if it is a common one (see the module's doc): does
/// what `replay::step` would, and returns true; returns false, having done nothing, for any
/// other event.
#[inline(always)]
pub(super) fn step<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    e: &Event,
    ns: u64,
    ahead: Ahead<'_>,
) -> Result<bool, AnalysisError> {
    let top = st.stack.last();
    // A frame whose role the next event decides.
    if top.is_some_and(|o| o.unresolved) {
        return Ok(false);
    }
    match e.kind {
        EventKind::Enter => {
            // At or above the top frame's sp: frames are gone (`gone_from`). Segments that
            // the rules about variants look at (`lowest_stale`, `stale_below`). A function
            // with an async role or an iterator's member (`link::entered`,
            // `iterators::entered`).
            if top.is_some_and(|o| e.sp != 0 && o.sp != 0 && o.sp <= e.sp)
                || (st.open_segments() != 0 && cx.roles.any_variant())
                || !matches!(
                    cx.roles.get(&cx.tables.functions, e.func.0),
                    Role::Plain | Role::Thunk
                )
            {
                return Ok(false);
            }
            let (env, roles) = cx.iter_env();
            if env
                .iters
                .is_member(env.tables, |r| roles.machine_kind(r), e.func.0)
            {
                return Ok(false);
            }
            st.skip_value = false;
            // Arguments held for this Enter (values_first): an ordinary frame's own.
            let held = st.pending_value.take();
            st.last_ns = ns;
            st.after_completion = None;
            st.last_left = None;
            let parent_node = st.stack.last().and_then(|o| o.node);
            let node = cx.stats.tree.as_mut().map(|t| t.child(parent_node, e.func));
            let lparent = st.stack.last().and_then(|o| o.lnode);
            let lnode = cx.stats.logical.as_mut().map(|t| t.child(lparent, e.func));
            st.push(e.func.0, ns, e.sp, node);
            if let Some(top) = st.stack.last_mut() {
                top.lnode = lnode;
                top.enter_value = held;
            }
            cx.stats.reached_depth(cx.thread, st.stack.len() as u32);
            Ok(true)
        }
        EventKind::Leave => {
            let Some(o) = top else {
                return Ok(false);
            };
            // Not the top frame's (mismatched frames), a continuation allocator's (a
            // Continuation event came just before), frames above its sp gone (`reveal`), a
            // segment, an iterator's frame, values (arguments, a return value held for it or,
            // in older traces, next).
            if o.func != e.func.0
                || st.pending_cont.is_some()
                || (e.sp != 0 && o.sp != 0 && o.sp < e.sp)
                || o.segment.is_some()
                || o.iter.any()
                || o.enter_value.is_some()
                || st.pending_value.is_some()
                || (!cx.values_first
                    && ahead
                        .next_event()
                        .is_some_and(|v| v.kind == EventKind::Value))
            {
                return Ok(false);
            }
            st.skip_value = false;
            st.last_ns = ns;
            st.after_completion = None;
            close(st, cx, sink, ns)?;
            st.last_left = Some((e.func.0, None));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// `close_top` for the Leave of an ordinary top frame (no segment, no iterator mark, no
/// values): the same statistics and frame, without copying the frame off the stack first.
#[inline(always)]
fn close<S: FrameSink + ?Sized>(
    st: &mut ThreadState,
    cx: &mut Ctx<'_>,
    sink: &mut S,
    ns: u64,
) -> Result<(), AnalysisError> {
    let Some((o, below)) = st.stack.split_last_mut() else {
        return Ok(());
    };
    let end = ns.max(o.start);
    let dur = end - o.start;
    let caller = match below.last_mut() {
        Some(p) => {
            p.children += dur;
            link::note_returned_call(cx.calls, p, o, EndKind::Leave);
            Some(p.func)
        }
        None => None,
    };
    cx.stats
        .frame_closed(cx.thread, o, caller, dur, EndKind::Leave);
    let frame = Frame {
        func: FunctionIdx(o.func),
        start_ns: o.start,
        end_ns: end,
        depth: below.len() as u32,
        parent: caller.map(FunctionIdx),
        children_ns: o.children,
        end: EndKind::Leave,
        node: o.node,
        sp: o.sp,
        segment: None,
        enter_value: None,
        leave_value: None,
    };
    st.pop_plain();
    sink.frame(cx.tables, cx.thread, &frame)
        .map_err(AnalysisError::Sink)
}
