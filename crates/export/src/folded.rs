//! Folded stacks, the input of flamegraph.pl and inferno.
//! Spec: https://github.com/brendangregg/FlameGraph#2-fold-stacks (one `root;child;leaf value`
//! line per stack).
//!
//! One line per distinct call path (merged over threads), the value being the exclusive time
//! of that path's frames in ns (or their number of calls), lines sorted lexically. Frame
//! names are `Namespace.Type.Method`; `;` and whitespace inside a name become `_`.

use std::collections::HashMap;
use std::io::{self, Write};

use eltrace_analysis::{
    Analysis, CallNodeId, CallTree, Frame, FrameSink, FunctionIdx, Options, Tables, ThreadIdx,
};

use crate::{Exporter, FoldedValue};

/// The folded-stacks exporter.
pub struct Folded<'w> {
    out: &'w mut dyn Write,
    value: FoldedValue,
}

impl<'w> Folded<'w> {
    pub fn new(out: &'w mut dyn Write, value: FoldedValue) -> Self {
        Folded { out, value }
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
    fn frame(&mut self, _: &Tables, _: ThreadIdx, _: &Frame) -> io::Result<()> {
        Ok(())
    }
}

impl Exporter for Folded<'_> {
    fn configure(&self, opts: &mut Options) {
        opts.call_tree = true;
    }

    fn finish(&mut self, a: &Analysis) -> io::Result<()> {
        let Some(tree) = a.call_tree() else {
            return Ok(());
        };
        write_sorted(self.out, a, tree, self.value)?;
        self.out.flush()
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
}

/// Writes the lines in lexical order without materialising them: a depth-first walk where
/// each sibling group is sorted by `name` for a node's own line and by `name;` for the block
/// of its descendants, which is exactly the lexical order of the full lines.
fn write_sorted(
    out: &mut dyn Write,
    a: &Analysis,
    tree: &CallTree,
    value: FoldedValue,
) -> io::Result<()> {
    let n = tree.len();
    // Children as compressed rows; roots separately.
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
    let mut children = vec![0u32; tree.len()];
    for (id, node) in tree.nodes() {
        if let Some(p) = node.parent {
            let slot = &mut fill[p.0 as usize];
            children[*slot as usize] = id.0;
            *slot += 1;
        }
    }
    let kids = |id: u32| &children[start[id as usize] as usize..start[id as usize + 1] as usize];

    // Cleaned names, one index per distinct string (equal names from two modules merge).
    let mut names: Vec<String> = Vec::new();
    let mut by_string: HashMap<String, usize> = HashMap::new();
    let mut name_of: HashMap<FunctionIdx, usize> = HashMap::new();
    let mut name_idx = |f: FunctionIdx| -> usize {
        *name_of.entry(f).or_insert_with(|| {
            let s = clean(&a.tables.functions.name(f));
            *by_string.entry(s.clone()).or_insert_with(|| {
                names.push(s);
                names.len() - 1
            })
        })
    };
    let mut node_name = vec![0usize; n];
    for (id, node) in tree.nodes() {
        node_name[id.0 as usize] = name_idx(node.func);
    }

    let group = |ids: &mut dyn Iterator<Item = u32>| -> Vec<Entry> {
        let mut ids: Vec<u32> = ids.collect();
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

    let mut path = String::new();
    let mut stack = vec![Level {
        entries: group(&mut roots.into_iter()),
        pos: 0,
        path_len: 0,
    }];
    while let Some(level) = stack.last_mut() {
        let Some(e) = level.entries.get(level.pos) else {
            stack.pop();
            continue;
        };
        level.pos += 1;
        path.truncate(level.path_len);
        if level.path_len > 0 {
            path.push(';');
        }
        path.push_str(&names[e.name]);
        if e.own {
            let v: u64 = e
                .ids
                .iter()
                .filter_map(|&i| tree.get(CallNodeId(i)))
                .map(|node| match value {
                    FoldedValue::ExclusiveNs => node.exclusive_ns,
                    FoldedValue::Calls => node.calls,
                })
                .sum();
            writeln!(out, "{path} {v}")?;
        } else {
            let entries = group(&mut e.ids.iter().flat_map(|&i| kids(i).iter().copied()));
            stack.push(Level {
                entries,
                pos: 0,
                path_len: path.len(),
            });
        }
    }
    Ok(())
}
