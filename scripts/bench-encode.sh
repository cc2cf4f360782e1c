#!/usr/bin/env bash
# The encoder alone: times a ring's encoding of its raw records into whole EVENTS chunks with
# CRC (crates/profiler/src/ring/outbox.rs, as a program thread runs it on its own ring: 2048
# records pushed, then encoded into the outbox, sealed buffers taken as the writer takes them)
# on one core, next to a plain copy of the same 16-byte records, in the same run, on the events
# of a recorded trace turned back into raw records. Best of 7 rounds.
#
#   bash scripts/bench-encode.sh [TRACE]   # default: records tests/apps/Scenarios fib ×40
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

trace="${1:-}"
if [ -z "$trace" ]; then
    out="${BENCH_OUT:-out/bench}"
    mkdir -p "$out"
    cargo build --release --workspace --locked >&2
    dotnet build -c Release --nologo -v quiet -o "$out/Scenarios" tests/apps/Scenarios >"$out/build.log" 2>&1 \
        || die "dotnet build of tests/apps/Scenarios failed (see $out/build.log)"
    trace="$out/encode-fib.eltrace"
    note "recording Scenarios fib into $trace"
    target/release/eltrace record -o "$trace" -- dotnet "$out/Scenarios/Scenarios.dll" fib >/dev/null
fi
trace="$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")"
ELTRACE_BENCH_TRACE="$trace" cargo test --release --locked -p eltrace-profiler bench_encode \
    -- --ignored --nocapture 2>&1 | grep '^encode_bench'
