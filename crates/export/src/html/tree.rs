//! The report's call tree: each process's call tree (the analysis', merged over threads)
//! split again per thread, under a node for the process; with several processes, the
//! processes' trees under an "all" root. Then cut to a node budget: nodes that do not fit are
//! merged, per kept parent, into one "other" node that holds their totals.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use eltrace_analysis::{CallNodeId, CallTree, SampledTimes, ThreadIdx};

/// A multiply-rotate hasher for the `u64` keys of the per-frame map (SipHash would cost
/// more than the rest of the per-frame work).
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// The key of a call path on a thread.
pub(super) fn path_key(thread: ThreadIdx, node: CallNodeId) -> u64 {
    (u64::from(thread.0) << 32) | u64::from(node.0)
}

/// Calls and times of the frames of one call path on one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Acc {
    pub calls: u64,
    pub incl: u64,
    pub excl: u64,
}

/// Replaces the paths' times by the sampler's estimates (a `--timing sampled` trace, whose
/// frames have ordering times only): a path of the call tree on a thread gets the estimates
/// of the same path of functions in the thread's sampled tree, or none if no sample saw it.
pub(super) fn estimate_paths(paths: &mut KeyMap<Acc>, tree: &CallTree, sampled: &SampledTimes) {
    let nodes = sampled.nodes();
    // The sampled node of a call path on a thread, found from the path's root down.
    let mut memo: KeyMap<Option<u32>> = KeyMap::default();
    let mut chain = Vec::new();
    let keys: Vec<u64> = paths.keys().copied().collect();
    for key in keys {
        let thread = ThreadIdx((key >> 32) as u32);
        let mut cur = Some(CallNodeId(key as u32));
        while let Some(c) = cur.filter(|&c| !memo.contains_key(&path_key(thread, c))) {
            chain.push(c);
            cur = tree.get(c).and_then(|n| n.parent);
        }
        // `Some(None)`: the thread's bottom; `None`: a path no sample saw.
        let mut above: Option<Option<u32>> = match cur {
            Some(c) => memo[&path_key(thread, c)].map(Some),
            None => Some(None),
        };
        while let Some(c) = chain.pop() {
            let node = above
                .zip(tree.get(c))
                .and_then(|(parent, n)| sampled.child(thread, parent, n.func));
            memo.insert(path_key(thread, c), node);
            above = node.map(Some);
        }
        let acc = paths.get_mut(&key).expect("a key of the map");
        let stat = above
            .flatten()
            .and_then(|i| nodes.get(i as usize))
            .map(|n| n.stat);
        acc.incl = stat.map_or(0, |s| s.inclusive_ns);
        acc.excl = stat.map_or(0, |s| s.exclusive_ns);
    }
}

/// What a node stands for; the number is the `kind` column of the embedded data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The root over several processes.
    All = 0,
    /// A process (`reference`: its row in `processes`).
    Process = 1,
    /// A thread (`reference`: its row in `threads`).
    Thread = 2,
    /// A function on a call path (`reference`: its row in `functions`).
    Function = 3,
    /// The nodes below a kept node that did not fit (`reference`: how many).
    Other = 4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Node {
    /// Index of the parent node, `None` for the root.
    pub parent: Option<u32>,
    pub kind: Kind,
    pub reference: u64,
    /// Frames of the path; for an "other" node, every frame of the subtrees it holds.
    pub calls: u64,
    /// Sum of the frames' durations; for a thread or process, of its root frames'.
    pub incl: u64,
    pub excl: u64,
    /// A function node for a frame of a method's Task-returning thunk (the row is the
    /// method's: one row per method); the page labels it `… [thunk]`.
    pub thunk: bool,
}

impl Node {
    /// The root of a process's tree (`process`: its row in the report's processes); its time
    /// is added as its children are.
    fn process(process: u32) -> Node {
        Node {
            parent: None,
            kind: Kind::Process,
            reference: u64::from(process),
            calls: 0,
            incl: 0,
            excl: 0,
            thunk: false,
        }
    }
}

/// A thread of the tree: its index in the analysis and its row in the report's thread table.
pub(super) struct ThreadRow {
    pub idx: ThreadIdx,
    pub row: u32,
}

/// A process's uncut tree, parents before children: node 0 is the process (row `process`
/// of the report's processes), then one node per thread with frames (in `threads` order),
/// then the call paths of each thread. `func_row` gives the report's function row of an
/// analysis call-tree node.
pub(super) fn build(
    paths: &KeyMap<Acc>,
    tree: &CallTree,
    process: u32,
    threads: &[ThreadRow],
    func_row: impl Fn(CallNodeId) -> (u32, bool),
) -> Vec<Node> {
    let mut keys: Vec<u64> = paths.keys().copied().collect();
    keys.sort_unstable();
    let mut nodes = vec![Node::process(process)];
    let mut thread_node: HashMap<u32, u32> = HashMap::new();
    for t in threads {
        let first = path_key(t.idx, CallNodeId(0));
        let has_paths = keys
            .get(keys.partition_point(|&k| k < first))
            .is_some_and(|&k| k >> 32 == u64::from(t.idx.0));
        if has_paths {
            thread_node.insert(t.idx.0, nodes.len() as u32);
            nodes.push(Node {
                parent: Some(0),
                kind: Kind::Thread,
                reference: u64::from(t.row),
                calls: 0,
                incl: 0,
                excl: 0,
                thunk: false,
            });
        }
    }
    let mut index: KeyMap<u32> = KeyMap::default();
    let mut missing = Vec::new();
    for key in keys {
        let thread = (key >> 32) as u32;
        let Some(&tnode) = thread_node.get(&thread) else {
            continue;
        };
        // A frame's caller frame is on the same thread, so its path has frames too; should
        // one be missing, it is added with no frames of its own.
        let mut cur = Some(CallNodeId(key as u32));
        while let Some(c) = cur {
            if index.contains_key(&path_key(ThreadIdx(thread), c)) {
                break;
            }
            missing.push(c);
            cur = tree.get(c).and_then(|n| n.parent);
        }
        while let Some(c) = missing.pop() {
            let parent = match tree.get(c).and_then(|n| n.parent) {
                Some(p) => index[&path_key(ThreadIdx(thread), p)],
                None => tnode,
            };
            let acc = paths
                .get(&path_key(ThreadIdx(thread), c))
                .copied()
                .unwrap_or_default();
            index.insert(path_key(ThreadIdx(thread), c), nodes.len() as u32);
            let (row, thunk) = func_row(c);
            nodes.push(Node {
                parent: Some(parent),
                kind: Kind::Function,
                reference: u64::from(row),
                calls: acc.calls,
                incl: acc.incl,
                excl: acc.excl,
                thunk,
            });
        }
    }
    // A thread's time is its root frames', the process's its threads'. Threads come before
    // their paths, so walking backwards finishes each thread before adding it to the process.
    for i in (1..nodes.len()).rev() {
        let n = nodes[i];
        if let Some(p) = n.parent {
            if nodes[p as usize].kind != Kind::Function {
                nodes[p as usize].incl += n.incl;
            }
        }
    }
    nodes
}

/// A process's logical call tree (the analysis' `logical_tree`, over all threads): node 0 is
/// the process, then one node per path with calls or time, parents first; a process's time is
/// its root paths'. `func_row` gives the report's function row of a function.
pub(super) fn build_logical(
    tree: &CallTree,
    process: u32,
    func_row: impl Fn(eltrace_analysis::FunctionIdx) -> (u32, bool),
) -> Vec<Node> {
    let mut nodes = vec![Node::process(process)];
    let mut index: Vec<Option<u32>> = vec![None; tree.len()];
    for (id, n) in tree.nodes() {
        let parent = match n.parent {
            Some(p) => match index[p.0 as usize] {
                Some(i) => i,
                None => continue,
            },
            None => 0,
        };
        if n.calls == 0 && n.inclusive_ns == 0 {
            continue;
        }
        index[id.0 as usize] = Some(nodes.len() as u32);
        if parent == 0 {
            nodes[0].incl += n.inclusive_ns;
        }
        let (row, thunk) = func_row(n.func);
        nodes.push(Node {
            parent: Some(parent),
            kind: Kind::Function,
            reference: u64::from(row),
            calls: n.calls,
            incl: n.inclusive_ns,
            excl: n.exclusive_ns,
            thunk,
        });
    }
    nodes
}

/// The processes' trees in one: as it is for one process; for several, under an "all" root
/// whose time is theirs.
pub(super) fn join(processes: Vec<Vec<Node>>) -> Vec<Node> {
    if processes.len() == 1 {
        return processes.into_iter().next().unwrap_or_default();
    }
    let mut nodes = vec![Node {
        parent: None,
        kind: Kind::All,
        reference: 0,
        calls: 0,
        incl: 0,
        excl: 0,
        thunk: false,
    }];
    for tree in processes {
        let base = nodes.len() as u32;
        nodes[0].incl += tree.first().map_or(0, |n| n.incl);
        nodes.extend(tree.into_iter().map(|n| Node {
            parent: Some(n.parent.map_or(0, |p| p + base)),
            ..n
        }));
    }
    nodes
}

/// The tree cut to at most `max` nodes ("other" nodes included).
#[derive(Debug, Clone)]
pub(super) struct Capped {
    pub nodes: Vec<Node>,
    /// Nodes of the uncut tree.
    pub total: usize,
    /// Nodes of the uncut tree merged into "other" nodes.
    pub hidden: usize,
}

/// Keeps the nodes of largest inclusive time (each node ranked by the smallest time on its
/// path from the root, so a kept node's ancestors are kept) while the kept nodes plus one
/// "other" node per kept node with dropped children fit in `max`. Order and parent links are
/// those of `nodes` (parents first); the "other" nodes come last.
pub(super) fn cap(nodes: &[Node], max: usize) -> Capped {
    let n = nodes.len();
    let max = max.max(2);
    if n <= max {
        return Capped {
            nodes: nodes.to_vec(),
            total: n,
            hidden: 0,
        };
    }
    let mut rank = vec![0u64; n];
    let mut depth = vec![0u32; n];
    let mut unkept_children = vec![0u32; n];
    for (i, node) in nodes.iter().enumerate() {
        match node.parent {
            Some(p) => {
                let p = p as usize;
                rank[i] = node.incl.min(rank[p]);
                depth[i] = depth[p] + 1;
                unkept_children[p] += 1;
            }
            None => rank[i] = u64::MAX,
        }
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let i = i as usize;
        (std::cmp::Reverse(rank[i]), depth[i], i)
    });
    let mut kept = vec![false; n];
    let mut kept_count = 0usize;
    let mut others = 0usize;
    for &i in &order {
        let i = i as usize;
        let mut new_others = others + usize::from(unkept_children[i] > 0);
        if let Some(p) = nodes[i].parent {
            if unkept_children[p as usize] == 1 {
                new_others -= 1;
            }
        }
        if kept_count + 1 + new_others > max {
            break;
        }
        kept[i] = true;
        kept_count += 1;
        others = new_others;
        if let Some(p) = nodes[i].parent {
            unkept_children[p as usize] -= 1;
        }
    }
    // Each dropped node goes to the "other" node of its nearest kept ancestor.
    let mut new_index = vec![u32::MAX; n];
    let mut out = Vec::with_capacity(kept_count + others);
    for i in 0..n {
        if kept[i] {
            new_index[i] = out.len() as u32;
            let mut node = nodes[i];
            node.parent = node.parent.map(|p| new_index[p as usize]);
            out.push(node);
        }
    }
    let mut bucket = vec![u32::MAX; n];
    let mut other_of: HashMap<u32, usize> = HashMap::new();
    let mut hidden = 0;
    for i in 0..n {
        if kept[i] {
            continue;
        }
        hidden += 1;
        let p = nodes[i].parent.expect("the root is always kept") as usize;
        let direct = kept[p];
        bucket[i] = if direct { new_index[p] } else { bucket[p] };
        let slot = *other_of.entry(bucket[i]).or_insert_with(|| {
            out.push(Node {
                parent: Some(bucket[i]),
                kind: Kind::Other,
                reference: 0,
                calls: 0,
                incl: 0,
                excl: 0,
                thunk: false,
            });
            out.len() - 1
        });
        let o = &mut out[slot];
        o.reference += 1;
        o.calls += nodes[i].calls;
        o.excl += nodes[i].excl;
        if direct {
            o.incl += nodes[i].incl;
        }
    }
    Capped {
        nodes: out,
        total: n,
        hidden,
    }
}
