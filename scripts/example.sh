#!/usr/bin/env bash
# Builds eltrace and the bundled example (examples/HelloTrace), records the example, prints
# the report and writes a Chrome trace and folded stacks. Outputs go to out/example/ (or $1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

out="${1:-out/example}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

bash scripts/setup.sh
note "building eltrace (release)"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
cargo build --release --workspace "${LOCK[@]}"
note "building examples/HelloTrace"
dotnet build -c Release --nologo -v quiet -o "$out/HelloTrace" examples/HelloTrace >/dev/null \
    || die "dotnet build of examples/HelloTrace failed (rerun: dotnet build -c Release examples/HelloTrace)"

eltrace=target/release/eltrace
trace="$out/hello.eltrace"
note "recording: $eltrace record -o $trace -- dotnet $out/HelloTrace/HelloTrace.dll"
"$eltrace" record -o "$trace" -- dotnet "$out/HelloTrace/HelloTrace.dll"

note "report: $eltrace report $trace"
"$eltrace" report "$trace"

"$eltrace" export "$trace" --format chrome -o "$out/hello.chrome.json"
"$eltrace" export "$trace" --format folded -o "$out/hello.folded"

cat <<MSG

Outputs:
  trace         $trace
  Chrome trace  $out/hello.chrome.json   (open in chrome://tracing or https://ui.perfetto.dev)
  folded stacks $out/hello.folded   (input for flamegraph.pl or speedscope)
MSG
