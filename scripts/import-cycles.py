#!/usr/bin/env python3
"""Prints every import circle between the module files of each crate in crates/.

    python3 scripts/import-cycles.py [-v]     # -v: every file-to-file edge too

Per crate root (src/lib.rs, src/main.rs, each tests/*.rs and tests/*/main.rs) it walks the
`mod NAME;` declarations to the module files (NAME.rs or NAME/mod.rs; inline `mod NAME { }`
blocks belong to their file), then draws an edge from file A to file B when A's code names an
item that B defines:

- every `use` path (groups, `self`, `as`, globs) and every path in the code that starts with
  `crate::`, `super::`, `self::` or the name of a child module is resolved the way rustc does:
  `crate` from the root, `super` to the `mod` parent, a bare first segment to a child module or
  to a name the module imports; then segment by segment through child modules, through the
  `use` imports of the module reached (so a re-export leads on to the file that defines the
  item) and through its glob imports, to the file that defines the item (or the module's file
  when the path names a module, or an item this scan does not know, such as an enum variant);
- an imported name makes an edge only if the file names it outside its `use` lines: a parent's
  `pub use child::Item` that only re-exports is no edge (a user of `parent::Item` gets an edge
  to the child itself), and a `mod child;` declaration is no edge;
- a glob import (`use super::*`) makes an edge to each file defining a name that the glob
  brings in and that the importing file names;
- paths into other crates (std, eltrace_trace, …) are ignored; `#[cfg(test)]` code counts.

So a parent `mod.rs` and its child are in a circle only when each uses an item that the other
defines (the child importing from the parent something the parent defines, not something the
parent re-exports from that child). Comments, strings and char literals are blanked first.
Prints each circle (a strongly connected set of files, with the items on each edge) and its
simple cycles; exits 1 when any is found.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from importlib import import_module  # noqa: E402

mask = import_module("long-fns").mask
functions = import_module("long-fns").functions

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
USE = re.compile(r"(?<![A-Za-z0-9_])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);")
ITEM = re.compile(r"(?<!')\b(?:fn|struct|enum|trait|type|const|static|union|mod)\s+([A-Za-z_][A-Za-z0-9_]*)|\bmacro_rules!\s*([A-Za-z_][A-Za-z0-9_]*)")
INLINE_MOD = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
MOD_DECL = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")
# names a function binds itself: `let [mut] x`, its parameters, a closure's `|x, y|`, `for x in`
LET = re.compile(r"\blet\s+(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b")
PARAM = re.compile(r"[(,]\s*(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:(?!:)")
CLOSURE = re.compile(r"(?<![|])\|([A-Za-z0-9_,\s]*)\|(?![|])")
PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:[A-Za-z_][A-Za-z0-9_]*::)+[A-Za-z_][A-Za-z0-9_]*)")
KEYWORDS = {"crate", "super", "self"}


def match_brace(text, i):
    """The index of the `}` closing the `{` at `i`."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


def parse_tree(s):
    """A use tree as (path segments, alias or '*') leaves."""
    toks = re.findall(r"::|[{},*]|[A-Za-z_][A-Za-z0-9_]*", s)
    pos = 0

    def tree(prefix):
        nonlocal pos
        out, segs = [], list(prefix)
        while pos < len(toks):
            t = toks[pos]
            if t == "::":
                pos += 1
            elif t == "{":
                pos += 1
                while toks[pos] != "}":
                    if toks[pos] == ",":
                        pos += 1
                        continue
                    out += tree(segs)
                pos += 1
                return out
            elif t == "*":
                pos += 1
                return out + [(segs, "*")]
            elif t in ",}":
                break
            elif t == "as":
                alias = toks[pos + 1]
                pos += 2
                return out + [(segs, alias)]
            else:
                segs.append(t)
                pos += 1
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        return out + ([(segs, segs[-1])] if segs else [])

    return tree([])


def named(text):
    """The identifiers `text` names, leaving out, inside each function, the names the function
    binds itself (a local `report` names no item `report` that a glob brings in) unless called
    or followed by `::` there (`let mut b = b(…)` still names the function `b`)."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    spans = []  # (start, end, names bound) per function
    for _, first, last in functions(text):
        a, b = starts[first - 1], starts[last] if last < len(starts) else len(text)
        body = text[a:b]
        bound = {m.group(1) or m.group(2) for m in LET.finditer(body)}
        sig = body[: body.find("{")]
        bound |= {m.group(1) for m in PARAM.finditer(sig)}
        for c in CLOSURE.finditer(body):
            bound |= set(IDENT.findall(c.group(1))) - {"mut"}
        spans.append((a, b, bound))
    out = set()
    for m in IDENT.finditer(text):
        name, i = m.group(0), m.start()
        called = re.match(r"\s*(?:\(|::)", text[m.end():m.end() + 40])  # `b(…)`, `x::y`: an item
        if called or not any(a <= i < b and name in bound for a, b, bound in spans):
            out.add(name)
    return out


class Module:
    def __init__(self, path, file, dir, span):
        self.path, self.file, self.dir, self.span = path, file, dir, span
        self.children = {}  # name -> module path
        self.defs = set()
        self.imports = {}  # name -> (segments, pub)
        self.globs = []  # segments


class Crate:
    def __init__(self, root):
        self.root = root
        self.mods = {}
        self.texts = {}
        self.used = {}  # file -> identifiers named outside `use` lines
        self.uses = []  # (module, segments, alias, use span) in every file
        self.paths = []  # (module, segments) of paths in code
        self.memo = {}
        self.load(root, (), root.parent, None)

    def load(self, file, path, dir, span, text=None):
        if text is None:
            text = mask(file.read_text())
            self.texts[file] = text
            no_use = USE.sub(lambda m: " " * len(m.group(0)), text)
            no_use = MOD_DECL.sub(" ", no_use)  # `mod skim;` names no item `skim`
            self.used[file] = named(no_use)
            span = (0, len(text))
        m = self.mods[path] = Module(path, file, dir, span)
        lo, hi = span
        body = text[lo:hi]
        # inline modules: their spans, to leave out of this one's scan
        inner = []
        for im in INLINE_MOD.finditer(text, lo, hi):
            if any(a <= im.start() < b for a, b in inner):
                continue
            end = match_brace(text, im.end() - 1)
            inner.append((im.start(), end + 1))
            name = im.group(1)
            m.children[name] = path + (name,)
            self.load(file, path + (name,), dir / name, (im.end(), end), text)

        def own(i):
            return not any(a <= i < b for a, b in inner) and depth_at(i) == 0

        depth = []  # brace depth relative to this module, per position (lazily)
        run, d = [], 0
        for ch in body:
            run.append(d)
            d += ch == "{"
            d -= ch == "}"
        depth = run

        def depth_at(i):
            return depth[i - lo] if lo <= i < hi else 99

        for dm in MOD_DECL.finditer(text, lo, hi):
            if not own(dm.start()):
                continue
            name = dm.group(1)
            for cand in (dir / f"{name}.rs", dir / name / "mod.rs"):
                if cand.exists():
                    sub = cand.parent if cand.name == "mod.rs" else cand.parent / cand.stem
                    m.children[name] = path + (name,)
                    self.load(cand, path + (name,), sub, None)
                    break
        for it in ITEM.finditer(text, lo, hi):
            if own(it.start()):
                m.defs.add(it.group(1) or it.group(2))
        for u in USE.finditer(text, lo, hi):
            if any(a <= u.start() < b for a, b in inner):
                continue
            top = depth_at(u.start() + (len(u.group(1)) if u.group(1) else 0)) == 0
            for segs, alias in parse_tree(u.group(2)):
                if top and alias == "*":
                    m.globs.append(segs)
                elif top:
                    m.imports[alias] = (segs, bool(u.group(1)))
                self.uses.append((path, segs, alias, file))
        # the spans of `use` items: a path inside one is resolved above, as an import
        use_spans = [(u.start(), u.end()) for u in USE.finditer(text, lo, hi)]
        for p in PATH.finditer(text, lo, hi):
            if any(a <= p.start() < b for a, b in inner):
                continue
            if any(a <= p.start() < b for a, b in use_spans):
                continue
            segs = p.group(1).split("::")
            if segs[0] in KEYWORDS or segs[0] in m.children:
                self.paths.append((path, segs, file))

    def resolve(self, mod, segs, guard=0):
        """(file, name) that `segs`, written in module `mod`, names; None: another crate."""
        key = (mod, tuple(segs))
        if key not in self.memo:
            self.memo[key] = None  # a path that leads back to itself names nothing
            self.memo[key] = self.resolve_once(mod, segs, guard)
        return self.memo[key]

    def resolve_once(self, mod, segs, guard):
        if guard > 30 or not segs:
            return None
        m = self.mods[mod]
        i = 0
        if segs[0] == "crate":
            cur, i = (), 1
        elif segs[0] == "super":
            cur = mod
            while i < len(segs) and segs[i] == "super":
                cur, i = cur[:-1], i + 1
        elif segs[0] == "self":
            cur, i = mod, 1
        elif segs[0] in m.children:
            cur = mod
        elif segs[0] in m.imports:
            return self.resolve(mod, m.imports[segs[0]][0] + segs[1:], guard + 1)
        elif segs[0] in m.defs:
            return m.file, segs[0]
        else:
            for g in m.globs:
                r = self.glob_module(mod, g, guard)
                if r is not None and self.knows(r, segs[0]):
                    return self.resolve(r, segs, guard + 1)
            return None
        while i < len(segs):
            s, c = segs[i], self.mods[cur]
            if s in c.children:
                cur, i = c.children[s], i + 1
                continue
            if s in c.imports and s not in c.defs:
                return self.resolve(cur, c.imports[s][0] + segs[i + 1:], guard + 1)
            if s in c.defs:
                return c.file, s
            for g in c.globs:
                r = self.glob_module(cur, g, guard)
                if r is not None and self.knows(r, s):
                    return self.resolve(r, ["self"] + segs[i:], guard + 1)
            return c.file, s
        return self.mods[cur].file, None

    def module_of(self, mod, segs, guard=0):
        """The module path `segs` (written in `mod`) names, if it names a module."""
        r = self.resolve(mod, segs + ["\0"], guard + 1)
        if r is None:
            return None
        for p, mm in self.mods.items():
            if mm.file == r[0] and mm.span[0] == 0 and r[1] == "\0":
                return p
        return None

    def glob_module(self, mod, segs, guard):
        return self.module_of(mod, segs, guard)

    def knows(self, mod, name):
        m = self.mods[mod]
        return name in m.defs or name in m.imports or name in m.children

    def edges(self):
        """{(from file, to file): {names}}"""
        out = {}

        def add(a, b, name):
            if b is not None and a != b:
                out.setdefault((a, b), set()).add(name or "(module)")

        for mod, segs, alias, file in self.uses:
            if alias == "*":
                g = self.module_of(mod, segs)
                if g is None:
                    r = self.resolve(mod, segs)
                    if r:
                        add(file, r[0], segs[-1] + "::*")
                    continue
                gm = self.mods[g]
                for name in (gm.defs | set(gm.imports)) & self.used[file]:
                    r = self.resolve(g, [name])
                    if r:
                        add(file, r[0], name)
                continue
            if alias not in self.used[file]:
                continue  # only re-exported
            r = self.resolve(mod, segs)
            if r:
                add(file, r[0], r[1])
        for mod, segs, file in self.paths:
            r = self.resolve(mod, segs)
            if r:
                add(file, r[0], r[1])
        return out


def sccs(nodes, succ):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def cycles(comp, succ, limit=50):
    """The simple cycles within `comp`, each from its smallest file (at most `limit`)."""
    comp = sorted(comp)
    found = []
    for i, start in enumerate(comp):
        allowed = set(comp[i:])

        def walk(v, path):
            for w in sorted(succ.get(v, ())):
                if w == start:
                    found.append(path[:])
                elif w in allowed and w not in path and len(found) < limit:
                    path.append(w)
                    walk(w, path)
                    path.pop()

        walk(start, [start])
    return found[:limit]


def roots():
    for crate in sorted((ROOT / "crates").iterdir()):
        for r in (crate / "src/lib.rs", crate / "src/main.rs"):
            if r.exists():
                yield r
        tests = crate / "tests"
        if tests.is_dir():
            yield from sorted(tests.glob("*.rs"))
            yield from sorted(tests.glob("*/main.rs"))


def main(argv):
    verbose = "-v" in argv
    found = 0
    for root in roots():
        c = Crate(root)
        edges = c.edges()
        succ = {}
        for a, b in edges:
            succ.setdefault(a, set()).add(b)
        rel = lambda f: str(f.relative_to(ROOT))  # noqa: E731
        if verbose:
            for (a, b), names in sorted(edges.items()):
                print(f"  {rel(a)} -> {rel(b)}: {', '.join(sorted(names))}")
        for comp in sccs(sorted(succ), succ):
            if len(comp) < 2:
                continue
            found += 1
            print(f"circle in {rel(root)}: {len(comp)} files")
            for a in sorted(comp):
                for b in sorted(succ[a] & set(comp)):
                    print(f"  {rel(a)} -> {rel(b)}: {', '.join(sorted(edges[(a, b)]))}")
            for cyc in cycles(comp, succ):
                print("  cycle: " + " -> ".join(rel(f) for f in cyc + [cyc[0]]))
    print(f"{found} circle(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
