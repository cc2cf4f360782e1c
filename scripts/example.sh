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

for format in perfetto speedscope chrome folded; do
    "$eltrace" export "$trace" --format "$format"
done

cat <<MSG

Outputs:
  trace          $trace
  Perfetto trace $out/hello.pftrace   (open in https://ui.perfetto.dev)
  speedscope     $out/hello.speedscope.json   (open in https://www.speedscope.app)
  Chrome trace   $out/hello.trace.json   (ui.perfetto.dev, chrome://tracing or speedscope)
  folded stacks  $out/hello.folded   (exclusive ns; flamegraph.pl --countname ns, inferno)
MSG
