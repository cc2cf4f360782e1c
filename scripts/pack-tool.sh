#!/usr/bin/env bash
# Packs eltrace as a dotnet tool (NuGet package `eltrace`, linux-x64): the release binaries
# (stripped of debug info) and a small .NET launcher (tools/dotnet-tool) that execs the native
# `eltrace` from the package, the profiler library beside it. The version is the workspace's.
#
#   bash scripts/pack-tool.sh [OUT]          # writes OUT/eltrace.<version>.nupkg (default out/tool)
#   bash scripts/pack-tool.sh --check [OUT]  # also installs it into a temporary tool path,
#                                            # records and reports examples/HelloTrace with it and
#                                            # reads its pprof export with go tool pprof
#
# Then: dotnet tool install -g eltrace --add-source OUT   (or --tool-path DIR)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
out="${1:-out/tool}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

note "building eltrace (release)"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
cargo build --release --workspace "${LOCK[@]}" >&2
version="$(target/release/eltrace --version | awk '{ print $2 }')"
[ -n "$version" ] || die "cannot read the version of target/release/eltrace"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp target/release/eltrace target/release/libeltrace_profiler.so "$stage/"
if command -v strip >/dev/null 2>&1; then
    strip --strip-debug "$stage/eltrace" "$stage/libeltrace_profiler.so"
fi
rm -f "$out"/eltrace.*.nupkg
note "packing eltrace $version into $out"
dotnet pack tools/dotnet-tool -c Release --nologo -v quiet -o "$out" \
    -p:EltraceNative="$stage" -p:EltraceVersion="$version" >"$stage/pack.log" 2>&1 \
    || { cat "$stage/pack.log" >&2; die "dotnet pack of tools/dotnet-tool failed"; }
package="$out/eltrace.$version.nupkg"
[ -f "$package" ] || die "dotnet pack wrote no $package"
note "wrote $package ($(du -h "$package" | cut -f1)); install: dotnet tool install -g eltrace --add-source $out"

[ "$check" = 1 ] || exit 0
tools="$stage/tools"
note "installing it into $tools"
dotnet tool install --tool-path "$tools" --add-source "$out" --version "$version" eltrace >"$stage/install.log" 2>&1 \
    || { cat "$stage/install.log" >&2; die "dotnet tool install failed"; }
installed="$("$tools/eltrace" --version)"
[ "$installed" = "eltrace $version" ] || die "the installed tool says '$installed', not 'eltrace $version'"
dotnet build -c Release --nologo -v quiet -o "$stage/HelloTrace" examples/HelloTrace >"$stage/build.log" 2>&1 \
    || { cat "$stage/build.log" >&2; die "dotnet build of examples/HelloTrace failed"; }
note "recording examples/HelloTrace with the installed tool"
(cd "$stage" && "$tools/eltrace" record -o hello.eltrace -- dotnet HelloTrace/HelloTrace.dll >/dev/null)
report="$("$tools/eltrace" report --json "$stage/hello.eltrace")"
calls="$(python3 -c 'import json, sys
r = json.loads(sys.argv[1])
print(sum(f["calls"] for f in r["functions"] if f["name"] == "HelloTrace.Program.Main"))' "$report")"
[ "$calls" = 1 ] || die "the installed tool's recording has $calls calls of HelloTrace.Program.Main, not 1"
"$tools/eltrace" report "$stage/hello.eltrace" | head -n 6
note "the installed tool records and reports the example"

# Its pprof export read by go tool pprof (Debian's golang-go, from scripts/setup.sh): the calls
# of every function equal the report's.
command -v go >/dev/null 2>&1 || die "go is not installed (scripts/setup.sh installs golang-go)"
"$tools/eltrace" export "$stage/hello.eltrace" --format pprof -o "$stage/hello.pb.gz" 2>/dev/null
go tool pprof -top -sample_index=calls -nodecount=100000 -nodefraction=0 "$stage/hello.pb.gz" \
    >"$stage/top.txt" 2>/dev/null || die "go tool pprof cannot read the example's pprof export"
python3 - "$stage/top.txt" "$report" <<'PY' || die "go tool pprof's calls differ from the report's"
import json, sys
rows = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(rows) if l.split()[:1] == ["flat"]) + 1
pprof = {}
for l in rows[start:]:
    cols = l.split()
    if len(cols) >= 6 and int(cols[0]) > 0:
        pprof[" ".join(cols[5:])] = int(cols[0])
report = {f["name"]: f["calls"] for f in json.loads(sys.argv[2])["functions"] if f["calls"] > 0}
if pprof != report:
    print("pprof:", pprof, "\nreport:", report, file=sys.stderr)
    sys.exit(1)
print(f"go tool pprof: {len(pprof)} functions, the calls of report")
PY
