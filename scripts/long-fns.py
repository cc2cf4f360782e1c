#!/usr/bin/env python3
"""Lists the hand-written Rust functions in crates/ longer than a limit (default 120 lines).

    python3 scripts/long-fns.py [LIMIT] [--all]

What counts: every `fn NAME` with a body (trait declarations ending in `;` have none), in every
.rs file under crates/ (sources, unit and integration tests, examples alike) except generated
code (`*_gen.rs`). A function's length is its lines from the line of `fn` (attributes and doc
comments above it not counted) to the line of its closing brace, both included; a nested `fn`
is counted on its own and also inside its parent. Comments, strings and char literals are
blanked out before the scan, so braces in them do not count. Closures and `macro_rules!` bodies
are not functions. Prints `LINES path:line name`, longest first; exits 1 when any is found.
`--all` prints every function over LIMIT/2 too, marked, to see what comes next.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def mask(text):
    """The text with comments, string and char literal contents turned into spaces (newlines
    kept), so that braces and `fn` only count in code."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            blank(m.end(), j - len(end))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # a char literal ('x', '\n', '\u{1F600}') or a lifetime ('a, 'static)
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(text):
    """(name, first line, last line) of every function with a body in `text` (masked)."""
    found = []
    for m in FN.finditer(text):
        depth, j, n = 0, m.end(), len(text)
        while j < n:  # the signature: up to `{` (a body) or `;` (none) outside () and []
            c = text[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c in "{;":
                break
            j += 1
        if j >= n or text[j] == ";":
            continue
        braces, k = 0, j
        while k < n:
            if text[k] == "{":
                braces += 1
            elif text[k] == "}":
                braces -= 1
                if braces == 0:
                    break
            k += 1
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, k) + 1
        found.append((m.group(1), first, last))
    return found


def main(argv):
    limit = int(next((a for a in argv if a.isdigit()), 120))
    show_all = "--all" in argv
    rows = []
    for path in sorted((ROOT / "crates").rglob("*.rs")):
        if path.name.endswith("_gen.rs") or "target" in path.parts:
            continue
        text = mask(path.read_text())
        for name, first, last in functions(text):
            rows.append((last - first + 1, str(path.relative_to(ROOT)), first, name))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    over = [r for r in rows if r[0] > limit]
    for lines, path, line, name in over:
        print(f"{lines:4} {path}:{line} {name}")
    if show_all:
        for lines, path, line, name in rows:
            if limit // 2 < lines <= limit:
                print(f"{lines:4} {path}:{line} {name}  (under {limit})")
    print(f"{len(over)} function(s) over {limit} lines, of {len(rows)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
