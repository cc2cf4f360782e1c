#!/usr/bin/env python3
"""Generate eltrace-abi's vtable and constant modules from the team's ABI facts.

Usage (from the repository root):

    python3 crates/abi/tools/gen_abi.py /work/shared/abi

Reads `interfaces.tsv` and `constants.tsv` from the given directory and writes:

    crates/abi/src/com_gen.rs        IUnknown, IClassFactory, IMethodMalloc
    crates/abi/src/callback_gen.rs   ICorProfilerCallback .. ICorProfilerCallback11
    crates/abi/src/info_gen.rs       ICorProfilerInfo .. ICorProfilerInfo15
    crates/abi/src/helpers_gen.rs    enumerators, ICorProfilerFunctionControl, ...
    crates/abi/src/metadata_gen.rs   IMetaDataImport, IMetaDataImport2
    crates/abi/src/consts_gen.rs     every constant of constants.tsv
    crates/abi/tests/data/interfaces.tsv   (interface, iid, base, vtable_slot, method)
    crates/abi/tests/data/constants.tsv    (name, value_hex, group)
    crates/abi/tests/data/constants_list.rs the list of constant names the test checks

The IDL parameter lists are translated mechanically; IDL typedef names (LPCBYTE,
REFIID, mdTypeDef, ...) are kept and defined as Rust aliases in src/types.rs.
Run `cargo fmt -p eltrace-abi` afterwards.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(HERE)

RUST_KEYWORDS = {"type", "ref", "fn", "mod", "use", "impl", "self", "match", "move", "loop"}

# IDL type name -> Rust type (spelled with the aliases from types.rs).
BASE = {
    "void": "c_void", "int": "i32", "UINT": "u32", "UINT8": "u8", "UINT32": "u32",
    "UINT64": "u64", "BYTE": "BYTE", "USHORT": "USHORT", "ULONG": "ULONG", "ULONG32": "ULONG32",
    "DWORD": "DWORD", "BOOL": "BOOL", "HRESULT": "HRESULT", "SIZE_T": "SIZE_T", "WCHAR": "WCHAR",
    "GUID": "GUID", "PVOID": "*mut c_void",
}
# Interface names that appear as parameter types.
IFACES = set()
# Function-pointer typedefs: `T *p` means "pointer to function" = Option<T>.
FN_TYPEDEFS = {
    "FunctionEnter", "FunctionLeave", "FunctionTailcall", "FunctionEnter2", "FunctionLeave2",
    "FunctionTailcall2", "FunctionEnter3", "FunctionLeave3", "FunctionTailcall3",
    "FunctionEnter3WithInfo", "FunctionLeave3WithInfo", "FunctionTailcall3WithInfo",
    "FunctionIDMapper", "FunctionIDMapper2", "StackSnapshotCallback", "EventPipeProviderCallback",
}
# Function typedefs that decay to a pointer when passed without '*'.
FN_BY_VALUE = {"ObjectReferenceCallback", "ObjectCallback"}


def strip_attrs(s):
    """Remove [..] attribute groups (which may contain quotes, parens and commas)."""
    out, depth, quote = [], 0, False
    for ch in s:
        if quote:
            if ch == '"':
                quote = False
            continue
        if depth and ch == '"':
            quote = True
            continue
        if ch == "[" and not depth:
            depth = 1
            out.append("\x00")  # marker, so that a trailing `[]` still reads as array
            continue
        if depth:
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
            continue
        out.append(ch)
    return "".join(out)


def rust_param(p):
    p = p.strip()
    is_array = False
    # `name[]` or `name[  ]` after stripping attrs leaves the marker at the end
    if p.endswith("\x00"):
        is_array = True
        p = p[:-1].strip()
    p = p.replace("\x00", " ")
    p = p.replace("*", " * ")
    toks = p.split()
    name = toks[-1]
    ty = toks[:-1]
    is_const = "const" in ty
    ty = [t for t in ty if t != "const"]
    stars = ty.count("*")
    base = [t for t in ty if t != "*"]
    assert len(base) == 1, (p, base)
    base = base[0]
    if is_array:
        stars += 1
    if name in RUST_KEYWORDS:
        name = "r#" + name
    if base in FN_TYPEDEFS:
        assert stars == 1, p
        return name, f"Option<{base}>"
    if base in FN_BY_VALUE:
        assert stars == 0, p
        return name, f"Option<{base}>"
    if base in IFACES:
        rt = base
    else:
        rt = BASE.get(base, base)
    if stars == 0:
        assert rt != "c_void", p
        return name, rt
    # innermost pointer carries the const
    first = "*const " if is_const else "*mut "
    rt = first + rt
    for _ in range(stars - 1):
        rt = "*mut " + rt
    return name, rt


def split_params(s):
    s = s.strip()
    assert s[0] == "(" and s[-1] == ")", s
    s = strip_attrs(s[1:-1]).strip()
    if not s:
        return []
    return [rust_param(x) for x in s.split(",")]


RET = {"HRESULT": "HRESULT", "ULONG": "ULONG", "BOOL": "BOOL", "void": None, "PVOID": "*mut c_void"}


def read_tsv(path):
    header_lines, rows, cols = [], [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                header_lines.append(line)
                continue
            fields = line.split("\t")
            if cols is None:
                cols = fields
                continue
            if not line.strip():
                continue
            rows.append(dict(zip(cols, fields)))
    return header_lines, rows


def iid_u128(iid):
    h = iid.strip("{}").split("-")
    return "0x" + "_".join(h)


def gen_interfaces(src):
    hdr, rows = read_tsv(os.path.join(src, "interfaces.tsv"))
    order, info = [], {}
    for r in rows:
        name = r["interface"]
        if name == "EXPORT":
            continue
        if name not in info:
            order.append(name)
            info[name] = {"iid": r["iid"], "base": r["base"], "methods": []}
        info[name]["methods"].append(r)
    IFACES.update(order)
    for n in order:
        ms = info[n]["methods"]
        ms.sort(key=lambda r: int(r["vtable_slot"]))

    def chain(n):
        b = info[n]["base"]
        return (chain(b) if b != "-" else []) + [n]

    families = {
        "com_gen.rs": ("IUnknown, IClassFactory and IMethodMalloc.", lambda n: n in ("IUnknown", "IClassFactory", "IMethodMalloc")),
        "callback_gen.rs": ("ICorProfilerCallback .. ICorProfilerCallback11 (implemented by the profiler).", lambda n: n.startswith("ICorProfilerCallback")),
        "info_gen.rs": ("ICorProfilerInfo .. ICorProfilerInfo15 (implemented by the runtime).", lambda n: n.startswith("ICorProfilerInfo")),
        "metadata_gen.rs": ("IMetaDataImport and IMetaDataImport2 (cor.h).", lambda n: n.startswith("IMetaData")),
        "helpers_gen.rs": ("The profiling API's helper interfaces: enumerators, ICorProfilerFunctionControl, ICorProfilerAssemblyReferenceProvider.", lambda n: True),
    }
    done = set()
    for fname, (doc, pred) in families.items():
        out = [
            f"//! Vtables: {doc}",
            "//!",
            "//! GENERATED by `crates/abi/tools/gen_abi.py` from the team's `interfaces.tsv`; do not edit by hand.",
            "//! Each vtable lists every slot in order, the inherited interfaces' slots first.",
            "",
            "#[allow(unused_imports)]",
            "use crate::*;",
            "use crate::com::com_interface;",
            "#[allow(unused_imports)]",
            "use core::ffi::{c_char, c_void};",
            "",
        ]
        for n in order:
            if n in done or not pred(n):
                continue
            done.add(n)
            c = chain(n)
            base = info[n]["base"]
            out.append("com_interface! {")
            out.append(f"    /// `{n}` (IID `{info[n]['iid']}`), base `{base}`: {sum(len(info[x]['methods']) for x in c)} slots.")
            out.append(f"    interface {n}, {n}Vtbl, IID_{n} = GUID::from_u128({iid_u128(info[n]['iid'])});")
            out.append("    {")
            for anc in c:
                out.append(f"        // {anc}")
                for m in info[anc]["methods"]:
                    ps = split_params(m["params"])
                    ret = RET[m["return_type"]]
                    pstr = ", ".join(f"{a}: {t}" for a, t in ps)
                    rs = f" -> {ret}" if ret else ""
                    out.append(f"        /// Slot {m['vtable_slot']}, declared by `{anc}`: `{m['return_type']} {m['method']}{m['params']}`")
                    out.append(f"        {m['method']}({pstr}){rs};")
            out.append("    }")
            out.append("}")
            out.append("")
        with open(os.path.join(CRATE, "src", fname), "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")

    # test data copy: interface, iid, vtable_slot, method
    with open(os.path.join(CRATE, "tests", "data", "interfaces.tsv"), "w", encoding="utf-8") as f:
        for h in hdr:
            f.write(h + "\n")
        f.write("# Copied by crates/abi/tools/gen_abi.py: columns interface, iid, base, vtable_slot, method of the team's interfaces.tsv.\n")
        f.write("interface\tiid\tbase\tvtable_slot\tmethod\n")
        for r in rows:
            if r["interface"] == "EXPORT":
                continue
            f.write(f"{r['interface']}\t{r['iid']}\t{r['base']}\t{r['vtable_slot']}\t{r['method']}\n")
    return order


# constants.tsv group -> Rust type of the constants in it
def const_type(group, name):
    if group.startswith("CORPROF_E") or group.startswith("generic HRESULTs"):
        return "HRESULT"
    if group in ("COR_PRF_MONITOR", "COR_PRF_HIGH_MONITOR"):
        return "DWORD"
    if group.startswith("COR_PRF_SNAPSHOT_INFO"):
        return "COR_PRF_SNAPSHOT_INFO"
    if group == "CorElementType":
        return "u8"
    if group.startswith("CorCallingConvention"):
        return "u8"
    if group.startswith("PROFILE_PLATFORM_SPECIFIC_DATA offsets"):
        return "usize"
    if group.startswith("PROFILE_PLATFORM_SPECIFIC_DATA flags"):
        return "u32"
    if group in ("CorMethodImpl", "CorMethodAttr", "CorTypeAttr", "CorFieldAttr", "CorTokenType"):
        return "u32"
    if group.startswith("CorILMethodFlags"):
        return "u32"
    if group in ("CorDebugIlToNativeMappingTypes", "COR_PRF_MISC"):
        return "u32"
    if group.startswith("COR_PRF_"):
        return group  # enum type alias (u32) defined in types.rs
    raise SystemExit(f"unknown group {group!r} for {name}")


SECTIONS = [
    ("hresult", "HRESULTs (generic and CORPROF_E_*)", lambda g: g.startswith("CORPROF_E") or g.startswith("generic HRESULTs")),
    ("flags", "Event-mask flags (COR_PRF_MONITOR / COR_PRF_HIGH_MONITOR) and DoStackSnapshot flags", lambda g: g in ("COR_PRF_MONITOR", "COR_PRF_HIGH_MONITOR") or g.startswith("COR_PRF_SNAPSHOT_INFO")),
    ("enums", "corprof.idl enumerations", lambda g: g.startswith("COR_PRF_") or g == "CorDebugIlToNativeMappingTypes"),
    ("corhdr", "corhdr.h: metadata flags, element types, calling conventions, token types", lambda g: g.startswith("Cor") or g.startswith("IMAGE")),
    ("elt", "amd64 PROFILE_PLATFORM_SPECIFIC_DATA (Unix x64 ELT slow path)", lambda g: g.startswith("PROFILE_PLATFORM")),
]

RENAME = {"HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER)": "HRESULT_ERROR_INSUFFICIENT_BUFFER"}


def gen_constants(src):
    hdr, rows = read_tsv(os.path.join(src, "constants.tsv"))
    out = {s[0]: [] for s in SECTIONS}
    names = []
    for r in rows:
        name, g = r["name"], r["group"]
        rname = RENAME.get(name, name)
        val = int(r["value_hex"].split()[0], 16)
        ty = const_type(g, name)
        for key, _, pred in SECTIONS:
            if pred(g):
                break
        else:
            raise SystemExit(g)
        note = r.get("note", "").strip()
        doc = f"`{name}` ({g})" + (f": {note}" if note else "") + "."
        for ch in "<>[]":
            doc = doc.replace(ch, "\\" + ch) if ch not in name else doc
        lines = [f"/// {doc}"]
        if rname != rname.upper():
            lines.append("#[allow(non_upper_case_globals)]")
        if ty == "HRESULT":
            v = f"0x{val:08X}_u32 as HRESULT"
        elif ty == "u8":
            v = f"0x{val:02X}"
        elif ty == "usize":
            v = f"0x{val:X}"
        else:
            v = f"0x{val:08X}"
        lines.append(f"pub const {rname}: {ty} = {v};")
        out[key].extend(lines)
        names.append((name, rname))
    text = [
        "//! Constants from the team's `constants.tsv` (corprof.idl, corerror.h, corhdr.h, asmconstants.h).",
        "//!",
        "//! GENERATED by `crates/abi/tools/gen_abi.py`; do not edit by hand. The HRESULT values",
        "//! are written as their 32-bit pattern and reinterpreted as `i32`.",
        "",
        "use crate::types::*;",
        "",
    ]
    for key, doc, _ in SECTIONS:
        text.append(f"/// {doc}.")
        text.append(f"pub mod {key} {{")
        text.append("    #[allow(unused_imports)]")
        text.append("    use super::*;")
        text.extend("    " + l for l in out[key])
        text.append("}")
        text.append("")
    with open(os.path.join(CRATE, "src", "consts_gen.rs"), "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(CRATE, "tests", "data", "constants.tsv"), "w", encoding="utf-8") as f:
        for h in hdr:
            f.write(h + "\n")
        f.write("# Copied by crates/abi/tools/gen_abi.py: columns name, value_hex, group of the team's constants.tsv.\n")
        f.write("name\tvalue_hex\tgroup\n")
        for r in rows:
            f.write(f"{r['name']}\t{r['value_hex']}\t{r['group']}\n")
    lst = [
        "// GENERATED by crates/abi/tools/gen_abi.py: (tsv name, value) of every constant in constants.tsv.",
        "// Included by tests/constants.rs; each entry must name an existing crate constant.",
        "&[",
    ]
    for name, rname in names:
        lst.append(f"    ({name!r}.replace('\\'', \"\"), bits({rname})),".replace(f"{name!r}.replace('\\'', \"\")", '"' + name + '"'))
    lst.append("]")
    with open(os.path.join(CRATE, "tests", "data", "constants_list.rs"), "w", encoding="utf-8") as f:
        f.write("\n".join(lst) + "\n")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/abi"
    gen_interfaces(src)
    gen_constants(src)


if __name__ == "__main__":
    main()
