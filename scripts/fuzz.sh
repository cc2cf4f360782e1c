#!/usr/bin/env bash
# The long fuzz run (issue 16): the fuzzer of crates/cli/tests/cli/fuzz.rs (structured mutations
# of traces with recomputed checksums, plus truncations; every reader command under a 1 GiB
# address-space limit, failing on a panic, abort, signal or hang) for CASES cases (default
# 50,000) from SEED. With RECORD=1 it first records the e2e scenarios `fib` and `exceptions`
# with the built profiler and adds their real traces to the seeds. Failing inputs are kept in
# target/tmp/cli-fuzz/failed-<case>.eltrace; rerun one case's run with the same SEED.
#
#   bash scripts/fuzz.sh [CASES] [SEED]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

cases="${1:-50000}"
seed="${2:-$(date +%s)}"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
if [ "${RECORD:-0}" = 1 ]; then
    note "recording real seed traces"
    cargo build --workspace "${LOCK[@]}" >/dev/null
    dotnet build -nodeReuse:false -o "$seeds/app" tests/apps/Scenarios >"$seeds/build.log" 2>&1 \
        || die "dotnet build failed (see $seeds/build.log)"
    for s in fib exceptions; do
        target/debug/eltrace record -o "$seeds/$s.eltrace" -- dotnet "$seeds/app/Scenarios.dll" "$s" \
            >/dev/null 2>&1 || die "recording $s failed"
    done
fi
note "fuzzing: $cases cases from seed $seed"
start=$SECONDS
ELTRACE_FUZZ_CASES="$cases" ELTRACE_FUZZ_SEED="$seed" ELTRACE_FUZZ_SEEDS="$seeds" \
    cargo test -p eltrace-cli "${LOCK[@]}" --test cli fuzz:: -- --nocapture
note "fuzz: $cases cases passed in $((SECONDS - start)) s"
