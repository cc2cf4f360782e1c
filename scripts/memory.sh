#!/usr/bin/env bash
# The profiled process's memory (issue 16): peak resident memory (VmHWM, printed by the
# scenario itself at its end) of
#   - `busy SECONDS 2`: two threads calling a small method flat out for SECONDS (default 60),
#   - `many-threads 2000 1000`: 2,000 threads alive at once, 4,002 events each,
# each without eltrace, under `eltrace record` with the defaults (rings capped at 512 MiB),
# and with ELTRACE_MAX_BUFFER_MB=64. Also checks that no event was dropped. Writes
# out/memory/table.md (or $MEMORY_OUT); docs/design.md ("Memory") has the results.
#
#   bash scripts/memory.sh [SECONDS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

seconds="${1:-60}"
out="${MEMORY_OUT:-out/memory}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
note "building (release)"
cargo build --release --workspace "${LOCK[@]}" >"$out/build.log" 2>&1 || die "cargo build failed (see $out/build.log)"
dotnet build -c Release -nodeReuse:false -o "$out/app" tests/apps/Scenarios >"$out/dotnet-build.log" 2>&1 \
    || die "dotnet build failed (see $out/dotnet-build.log)"
eltrace="$REPO_ROOT/target/release/eltrace"
app="$out/app/Scenarios.dll"

# peak LOG: the scenario's peak_rss_kib line, in MiB.
peak() { awk -F= '/^peak_rss_kib=/ { printf "%.0f", $2 / 1024 }' "$1"; }

# run LABEL ENV... -- ARGS...: one run, without eltrace when LABEL is "plain".
run() {
    local label="$1"
    shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local log="$out/$label.log" start=$SECONDS
    if [[ "$label" == plain* ]]; then
        env "${envs[@]}" dotnet "$app" "$@" >"$log" 2>&1
    else
        env "${envs[@]}" "$eltrace" record -o "$out/$label.eltrace" -- dotnet "$app" "$@" >"$log" 2>&1
    fi
    local dropped=-
    if [ -f "$out/$label.eltrace" ]; then
        dropped="$("$eltrace" report --json "$out/$label.eltrace" 2>/dev/null \
            | awk -F'[:,]' '/"dropped_events"/ { gsub(/ /, "", $2); print $2; exit }')"
        local events
        events="$(grep -o '[0-9,]* events' "$log" | head -1)"
        rm -f "$out/$label.eltrace"
        printf '| %s | %s | %s MiB | %s | %s | %d s |\n' "$*" "$label" "$(peak "$log")" "$events" "$dropped" $((SECONDS - start))
    else
        printf '| %s | %s | %s MiB | - | - | %d s |\n' "$*" "$label" "$(peak "$log")" $((SECONDS - start))
    fi
}

{
    echo "| scenario | run | peak RSS | events | dropped | time |"
    echo "|---|---|---|---|---|---|"
    run plain X=1 -- busy "$seconds" 2
    run eltrace X=1 -- busy "$seconds" 2
    run eltrace-cap64 ELTRACE_MAX_BUFFER_MB=64 -- busy "$seconds" 2
    run plain-many X=1 -- many-threads 2000 1000
    run eltrace-many X=1 -- many-threads 2000 1000
    run eltrace-many-cap64 ELTRACE_MAX_BUFFER_MB=64 -- many-threads 2000 1000
} | tee "$out/table.md"
note "table: $out/table.md"
