//! Folded stacks, the input of flamegraph.pl and inferno.
//! Spec: https://github.com/brendangregg/FlameGraph#2-fold-stacks (one `root;child;leaf value`
//! line per stack).
//!
//! One line per distinct call path, the value being the exclusive time of that path's frames
//! in **ns** (or, with [`FoldedValue::Calls`], their number of calls); the format has no
//! place for the unit (`flamegraph.pl --countname ns` shows it). Lines are sorted lexically.
//! Threads are merged unless [`ExportOptions::thread_root`] puts each thread's stacks under
//! a root frame of its own (`main_(4242);App.Program.Main 1200`). With several processes,
//! each process's stacks are under a root frame of its own (`csc.dll_(pid_1869);…`, the
//! thread roots below it). Frame names are `Namespace.Type.Method`; `;` and whitespace inside
//! a name become `_`. With a time window, a frame's time is the part of it inside the window
//! (on the session's timeline), minus the same of its children.
//!
//! Direct recursion deeper than [`FoldedRecursion`] (64 frames by default) is collapsed: the
//! frames of a run of one function past that depth count as the run's last written frame,
//! with their callees below it. Without this the output grows with the square of the depth
//! (a 100,000-deep recursion would be 100,000 lines of up to 100,000 frames, ~60 GB).
//!
//! A process's lines are made when its analysis ends (they need its call tree) and kept
//! until the end, when it is known whether the process roots are needed: the memory is that
//! of the output, which follows the number of call paths, not of events.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use eltrace_analysis::{
    Analysis, CallTree, Frame, FrameSink, FunctionIdx, Options, Tables, ThreadIdx,
};

use crate::labels::{ProcessMeta, thread_label};
use crate::window::SelfTimes;
use crate::{ExportOptions, Exporter, FoldedRecursion, FoldedValue, OverBudget, TimeWindow};

/// The key of the values of all threads together (no thread root).
const ALL_THREADS: u32 = u32::MAX;

/// The folded-stacks exporter.
pub struct Folded<'w> {
    out: &'w mut dyn Write,
    value: FoldedValue,
    window: TimeWindow,
    thread_root: bool,
    recursion: FoldedRecursion,
    /// The most bytes of lines kept (`ExportOptions::max_output`).
    max_bytes: u64,
    /// The current process, and (thread or [`ALL_THREADS`], call-tree node) → (exclusive ns
    /// in the window, calls) of its frames.
    process: ProcessMeta,
    values: HashMap<(u32, u32), (u64, u64)>,
    /// The frames' own times inside the window.
    self_times: SelfTimes,
    /// The lines of each process ended so far: its root frame and its sorted lines.
    blocks: Vec<(String, Vec<u8>)>,
}

impl<'w> Folded<'w> {
    pub fn new(out: &'w mut dyn Write, opts: &ExportOptions) -> Self {
        Folded {
            out,
            value: opts.folded_value,
            window: opts.window,
            thread_root: opts.thread_root,
            recursion: opts.folded_recursion,
            max_bytes: opts.max_output.unwrap_or(u64::MAX),
            process: ProcessMeta::from_info(&Default::default()),
            values: HashMap::new(),
            self_times: SelfTimes::default(),
            blocks: Vec::new(),
        }
    }
}

fn clean(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == ';' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

impl FrameSink for Folded<'_> {
    fn frame(&mut self, _: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()> {
        let offset = self.process.start_ns;
        let Some(own) = self.self_times.close(&self.window, offset, thread, frame) else {
            return Ok(());
        };
        let Some(node) = frame.node else {
            return Ok(());
        };
        let key = if self.thread_root {
            thread.0
        } else {
            ALL_THREADS
        };
        let v = self.values.entry((key, node.0)).or_default();
        v.0 += own;
        v.1 += 1;
        Ok(())
    }
}

impl Exporter for Folded<'_> {
    fn configure(&self, opts: &mut Options) {
        opts.call_tree = true;
    }

    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()> {
        self.process = process.clone();
        self.values.clear();
        self.self_times.clear();
        Ok(())
    }

    fn end_process(&mut self, a: &Analysis) -> io::Result<()> {
        let kept: usize = self.blocks.iter().map(|(_, l)| l.len()).sum();
        let mut lines = Capped {
            buf: Vec::new(),
            room: self.max_bytes.saturating_sub(kept as u64),
        };
        self.write_process(&mut lines, a)?;
        let lines = lines.buf;
        let root = clean(&self.process.label());
        self.blocks.push((root, lines));
        Ok(())
    }

    /// One process's lines as they are; several processes' each under its root frame, in
    /// the order of the lines' prefixes `root;` (two processes of one name and pid get the
    /// second one's number added to its root).
    fn finish(&mut self) -> io::Result<()> {
        if let [(_, lines)] = &self.blocks[..] {
            self.out.write_all(lines)?;
            return self.out.flush();
        }
        let mut blocks: Vec<(String, &[u8])> = Vec::new();
        for (i, (root, lines)) in self.blocks.iter().enumerate() {
            let mut prefix = format!("{root};");
            if blocks.iter().any(|(p, _)| *p == prefix) {
                prefix = format!("{root}_#{};", i + 1);
            }
            blocks.push((prefix, lines));
        }
        blocks.sort_by(|x, y| x.0.cmp(&y.0));
        for (prefix, lines) in blocks {
            for line in lines.split_inclusive(|&b| b == b'\n') {
                self.out.write_all(prefix.as_bytes())?;
                self.out.write_all(line)?;
            }
        }
        self.out.flush()
    }
}

impl Folded<'_> {
    /// The current process's lines, sorted.
    fn write_process(&self, out: &mut dyn Write, a: &Analysis) -> io::Result<()> {
        let Some(tree) = a.call_tree() else {
            return Ok(());
        };
        let pick = |v: &(u64, u64)| match self.value {
            FoldedValue::ExclusiveNs => v.0,
            FoldedValue::Calls => v.1,
        };
        if !self.thread_root {
            let value = |id: u32| self.values.get(&(ALL_THREADS, id)).map(pick);
            return write_sorted(out, a, tree, "", self.recursion, &value);
        }
        // One root per thread label (threads whose tid was reused share one), sorted as
        // the lines' prefixes `label;` sort.
        let mut roots: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut seen: Vec<u32> = self.values.keys().map(|k| k.0).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            let label = clean(&thread_label(&a.tables, ThreadIdx(t), self.process.pid));
            roots.entry(format!("{label};")).or_default().push(t);
        }
        for (prefix, threads) in &roots {
            let value = |id: u32| {
                threads
                    .iter()
                    .filter_map(|&t| self.values.get(&(t, id)).map(pick))
                    .reduce(|x, y| x + y)
            };
            write_sorted(out, a, tree, prefix, self.recursion, &value)?;
        }
        Ok(())
    }
}

/// A buffer of lines that fails with [`OverBudget`] past `room` bytes.
struct Capped {
    buf: Vec<u8>,
    room: u64,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() as u64 + data.len() as u64 > self.room {
            return Err(io::Error::other(OverBudget));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One entry of a sibling group: the line of the stack ending in `name` (`own`), or the
/// block of its callees' lines (`!own`, sorted as `name;`). Nodes with equal names merge.
struct Entry {
    name: usize,
    own: bool,
    ids: Vec<u32>,
}

struct Level {
    entries: Vec<Entry>,
    pos: usize,
    /// Length of the path before this group's names.
    path_len: usize,
    /// The last name of that path and how many times it ends the path in a row.
    last: Option<usize>,
    run: u32,
}

/// A call tree's children as compressed rows (node `i`'s children are
/// `children[start[i]..start[i + 1]]`), and its roots.
struct Shape {
    start: Vec<u32>,
    children: Vec<u32>,
    roots: Vec<u32>,
}

impl Shape {
    fn of(tree: &CallTree) -> Shape {
        let n = tree.len();
        let mut count = vec![0u32; n + 1];
        let mut roots = Vec::new();
        for (id, node) in tree.nodes() {
            match node.parent {
                Some(p) => count[p.0 as usize + 1] += 1,
                None => roots.push(id.0),
            }
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let start = count.clone();
        let mut fill = count;
        let mut children = vec![0u32; n];
        for (id, node) in tree.nodes() {
            if let Some(p) = node.parent {
                let slot = &mut fill[p.0 as usize];
                children[*slot as usize] = id.0;
                *slot += 1;
            }
        }
        Shape {
            start,
            children,
            roots,
        }
    }

    fn kids(&self, id: u32) -> &[u32] {
        &self.children[self.start[id as usize] as usize..self.start[id as usize + 1] as usize]
    }
}

/// The cleaned names, one per distinct string (equal names from two modules merge), and each
/// node's index among them.
fn node_names(a: &Analysis, tree: &CallTree) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let mut by_string: HashMap<String, usize> = HashMap::new();
    let mut name_of: HashMap<FunctionIdx, usize> = HashMap::new();
    let mut node_name = vec![0usize; tree.len()];
    for (id, node) in tree.nodes() {
        node_name[id.0 as usize] = *name_of.entry(node.func).or_insert_with(|| {
            let s = clean(&a.tables.functions.name(node.func));
            *by_string.entry(s.clone()).or_insert_with(|| {
                names.push(s);
                names.len() - 1
            })
        });
    }
    (names, node_name)
}

/// Writes the lines in lexical order without materialising them: a depth-first walk where
/// each sibling group is sorted by `name` for a node's own line and by `name;` for the block
/// of its descendants, which is exactly the lexical order of the full lines. Every line
/// starts with `prefix`; nodes without a value (no frame in the window, on these threads)
/// are left out, with their subtrees. A node whose name would end the path for the
/// `recursion`-th time in a row takes in its descendants of the same name (down every chain
/// of that name): their values add to its line, their other callees are its children.
fn write_sorted(
    out: &mut dyn Write,
    a: &Analysis,
    tree: &CallTree,
    prefix: &str,
    recursion: FoldedRecursion,
    value: &dyn Fn(u32) -> Option<u64>,
) -> io::Result<()> {
    let shape = Shape::of(tree);
    let kids = |id: u32| shape.kids(id);
    let (names, node_name) = node_names(a, tree);

    let group = |ids: &mut dyn Iterator<Item = u32>| -> Vec<Entry> {
        let mut ids: Vec<u32> = ids.filter(|&i| value(i).is_some()).collect();
        ids.sort_unstable_by(|x, y| {
            names[node_name[*x as usize]].cmp(&names[node_name[*y as usize]])
        });
        let mut entries = Vec::new();
        for same in ids.chunk_by(|x, y| node_name[*x as usize] == node_name[*y as usize]) {
            let name = node_name[same[0] as usize];
            if same.iter().any(|&i| !kids(i).is_empty()) {
                entries.push(Entry {
                    name,
                    own: false,
                    ids: same.to_vec(),
                });
            }
            entries.push(Entry {
                name,
                own: true,
                ids: same.to_vec(),
            });
        }
        let key = |e: &Entry| names[e.name].bytes().chain((!e.own).then_some(b';'));
        entries.sort_by(|x, y| key(x).cmp(key(y)));
        entries
    };

    // The ids and their descendants through children of the same name.
    let chain = |ids: &[u32], name: usize| -> Vec<u32> {
        let mut all = ids.to_vec();
        let mut i = 0;
        while let Some(&id) = all.get(i) {
            i += 1;
            for &k in kids(id) {
                if node_name[k as usize] == name && value(k).is_some() {
                    all.push(k);
                }
            }
        }
        all
    };

    let mut path = prefix.to_owned();
    let mut stack = vec![Level {
        entries: group(&mut shape.roots.iter().copied()),
        pos: 0,
        path_len: prefix.len(),
        last: None,
        run: 0,
    }];
    while let Some(level) = stack.last_mut() {
        let Some(e) = level.entries.get(level.pos) else {
            stack.pop();
            continue;
        };
        level.pos += 1;
        let run = if level.last == Some(e.name) {
            level.run + 1
        } else {
            1
        };
        path.truncate(level.path_len);
        if level.path_len > prefix.len() {
            path.push(';');
        }
        path.push_str(&names[e.name]);
        let collapse = recursion.0 > 0 && run >= recursion.0;
        let collapsed;
        let ids: &[u32] = if collapse {
            collapsed = chain(&e.ids, e.name);
            &collapsed
        } else {
            &e.ids
        };
        if e.own {
            let v: u64 = ids.iter().filter_map(|&i| value(i)).sum();
            writeln!(out, "{path} {v}")?;
        } else {
            let name = e.name;
            let below = ids.iter().flat_map(|&i| kids(i).iter().copied());
            let entries = if collapse {
                group(&mut below.filter(|&k| node_name[k as usize] != name))
            } else {
                group(&mut below.into_iter())
            };
            stack.push(Level {
                entries,
                pos: 0,
                path_len: path.len(),
                last: Some(name),
                run,
            });
        }
    }
    Ok(())
}
