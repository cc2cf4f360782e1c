//! Folded stacks, the input of flamegraph.pl and inferno.
//! Spec: https://github.com/brendangregg/FlameGraph#2-fold-stacks (one `root;child;leaf value`
//! line per stack).
//!
//! One line per distinct call path (merged over threads), the value being the exclusive time
//! of that path's frames in ns (or their number of calls), lines sorted lexically. Frame
//! names are `Namespace.Type.Method`; `;` and whitespace inside a name become `_`.

use std::io::{self, Write};

use eltrace_analysis::{Analysis, Frame, FrameSink, Options, Tables, ThreadIdx};

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
        // Parents come before children, so each path extends an earlier one.
        let mut paths: Vec<String> = Vec::with_capacity(tree.len());
        let mut lines: Vec<(usize, u64)> = Vec::with_capacity(tree.len());
        for (id, node) in tree.nodes() {
            let name = clean(&a.tables.functions.name(node.func));
            let path = match node.parent.and_then(|p| paths.get(p.0 as usize)) {
                Some(parent) => format!("{parent};{name}"),
                None => name,
            };
            paths.push(path);
            let v = match self.value {
                FoldedValue::ExclusiveNs => node.exclusive_ns,
                FoldedValue::Calls => node.calls,
            };
            lines.push((id.0 as usize, v));
        }
        lines.sort_by(|x, y| paths[x.0].cmp(&paths[y.0]));
        let mut i = 0;
        while i < lines.len() {
            let path = &paths[lines[i].0];
            let mut v = lines[i].1;
            i += 1;
            // Equal paths (same names from different modules) are one stack.
            while i < lines.len() && paths[lines[i].0] == *path {
                v += lines[i].1;
                i += 1;
            }
            writeln!(self.out, "{path} {v}")?;
        }
        self.out.flush()
    }
}
