#!/usr/bin/env bash
# Two builds of eltrace side by side on the sustained loop (bench/Stopwatch: `Empty()` CALLS
# times in one loop, default buffers, lossless), alternating run by run so that a noisy machine
# moves both alike: per round, the loop without a profiler, then under each build. Prints ns
# per call above no profiler for each build, a line per round, then each build's median. The
# way every "alternating" figure of docs/performance.md was measured.
#
#   bash scripts/bench-ab.sh A_ELTRACE B_ELTRACE [ROUNDS] [-- RECORD_FLAGS...]
#
#   # the previous commit against this one, exact timing, six rounds:
#   git worktree add /tmp/base HEAD~1 && (cd /tmp/base && cargo build --release --workspace)
#   cargo build --release --workspace
#   bash scripts/bench-ab.sh /tmp/base/target/release/eltrace target/release/eltrace 6 -- --timing exact
#
# Each eltrace must sit beside its libeltrace_profiler.so (a `cargo build --release
# --workspace` output). CALLS (default 10^8) sets the loop's length. Outputs go to
# out/bench-ab/ (or $BENCH_OUT).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

[ $# -ge 2 ] || die "usage: bench-ab.sh A_ELTRACE B_ELTRACE [ROUNDS] [-- RECORD_FLAGS...]"
a="$1" b="$2"
shift 2
rounds=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    rounds="$1"
    shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, not '$rounds'"
for bin in "$a" "$b"; do
    [ -x "$bin" ] || die "$bin is not an executable eltrace"
    [ -f "$(dirname "$bin")/libeltrace_profiler.so" ] \
        || die "no libeltrace_profiler.so beside $bin (build with cargo build --release --workspace)"
done
calls="${CALLS:-100000000}"
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || die "CALLS must be a positive number, not '$calls'"

out="${BENCH_OUT:-out/bench-ab}"
mkdir -p "$out"
note "building bench/Stopwatch"
dotnet build -c Release --nologo -v quiet -o "$out/Stopwatch" bench/Stopwatch >"$out/build.log" 2>&1 \
    || die "dotnet build of bench/Stopwatch failed (see $out/build.log)"
dll="$out/Stopwatch/EltraceBench.dll"

# ns_per_call LOG: the figure the harness printed last.
ns_per_call() { sed -n 's/^ns_per_call //p' "$1" | tail -1; }

# run NAME ELTRACE [RECORD_FLAGS...]: one sustained loop, under ELTRACE unless it is "-";
# prints its ns per call.
run() {
    local name="$1" bin="$2" log="$out/$1.log"
    shift 2
    if [ "$bin" = - ]; then
        dotnet "$dll" "$calls" 1 0 1 >"$log" 2>&1 || die "the loop failed (see $log)"
    else
        env ELTRACE_HOOKS=fast "$bin" record -o "$out/$name.eltrace" "$@" \
            --include 'Bench.Target.Empty' -- dotnet "$dll" "$calls" 1 0 1 >"$log" 2>&1 \
            || die "the loop under $bin failed (see $log)"
        rm -f "$out/$name.eltrace"
    fi
    local ns
    ns="$(ns_per_call "$log")"
    [ -n "$ns" ] || die "no ns_per_call in $log"
    printf '%s' "$ns"
}

printf 'Sustained loop, %s calls, ns per call above no profiler; record flags: %s\n' "$calls" "${*:-(none)}"
printf '| round | no profiler | A %s | B %s |\n|---:|---:|---:|---:|\n' "$a" "$b"
above_a=() above_b=()
for r in $(seq 1 "$rounds"); do
    note "round $r of $rounds"
    base="$(run none -)"
    ta="$(run a "$a" "$@")"
    tb="$(run b "$b" "$@")"
    da="$(awk -v t="$ta" -v n="$base" 'BEGIN { printf "%.2f", t - n }')"
    db="$(awk -v t="$tb" -v n="$base" 'BEGIN { printf "%.2f", t - n }')"
    above_a+=("$da") above_b+=("$db")
    printf '| %d | %s | %s | %s |\n' "$r" "$base" "$da" "$db"
done
printf '| median | | %s | %s |\n' "$(median %.2f "${above_a[@]}")" "$(median %.2f "${above_b[@]}")"
