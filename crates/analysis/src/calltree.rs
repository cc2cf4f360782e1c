//! The calling-context tree: one node per distinct call path (root function → … → function),
//! merged over all analysed threads, with calls and times per node. Folded stacks come from it.
//!
//! ```text
//! t=0   enter  Main     node 0  Main
//! t=10  enter  Step     node 1  Main;Step   (calls 1 once it closes)
//! t=20  leave  Step
//! t=30  enter  Step     node 1 again        (calls 2)
//! ```

use eltrace_trace::FunctionIdx;

use crate::fxmap::FxHashMap;
use crate::model::CallNodeId;

/// One call path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallNode {
    /// The caller's node, `None` for a root function.
    pub parent: Option<CallNodeId>,
    pub func: FunctionIdx,
    /// Depth of the node: 0 for root functions.
    pub depth: u32,
    /// Frames on this path.
    pub calls: u64,
    /// Sum of their durations (frames on one path never nest, so nothing is double counted).
    pub inclusive_ns: u64,
    /// Sum of their durations minus their direct children.
    pub exclusive_ns: u64,
}

/// Nodes are numbered in creation order, so a parent's id is always below its children's.
#[derive(Debug, Clone, Default)]
pub struct CallTree {
    nodes: Vec<CallNode>,
    children: FxHashMap<(u32, u32), u32>,
}

const NO_PARENT: u32 = u32::MAX;

impl CallTree {
    /// The node for `func` called from `parent`, created if new.
    pub(crate) fn child(&mut self, parent: Option<CallNodeId>, func: FunctionIdx) -> CallNodeId {
        let p = parent.map_or(NO_PARENT, |p| p.0);
        let next = self.nodes.len() as u32;
        let id = *self.children.entry((p, func.0)).or_insert(next);
        if id == next {
            let depth = parent.map_or(0, |p| self.nodes[p.0 as usize].depth + 1);
            self.nodes.push(CallNode {
                parent,
                func,
                depth,
                calls: 0,
                inclusive_ns: 0,
                exclusive_ns: 0,
            });
        }
        CallNodeId(id)
    }

    pub(crate) fn add(&mut self, id: CallNodeId, dur: u64, excl: u64) {
        self.add_segment(id, dur, excl, true);
    }

    /// Adds a frame's times; `call`: it starts a call (a resumed segment of an async call
    /// adds time to its call's node of the logical tree, not a call).
    pub(crate) fn add_segment(&mut self, id: CallNodeId, dur: u64, excl: u64, call: bool) {
        let n = &mut self.nodes[id.0 as usize];
        n.calls += u64::from(call);
        n.inclusive_ns += dur;
        n.exclusive_ns += excl;
    }

    pub fn get(&self, id: CallNodeId) -> Option<&CallNode> {
        self.nodes.get(id.0 as usize)
    }

    /// All nodes with their ids, parents before children.
    pub fn nodes(&self) -> impl Iterator<Item = (CallNodeId, &CallNode)> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (CallNodeId(i as u32), n))
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The functions on the path from the root to `id`, root first.
    pub fn path(&self, id: CallNodeId) -> Vec<FunctionIdx> {
        let mut path = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur {
            match self.get(c) {
                Some(n) => {
                    path.push(n.func);
                    cur = n.parent;
                }
                None => break,
            }
        }
        path.reverse();
        path
    }
}
