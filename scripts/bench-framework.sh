#!/usr/bin/env bash
# Unselected code at full speed (issue 24, point 3): bench/Framework (JSON round trips, LINQ,
# dictionaries, string work: framework code almost all the time) timed with no profiler, with
# the profiler loaded and nothing selected (`--exclude '*'`), and with the default selection
# (the app's own few methods), alternating, N runs each (default 3); prints the median ms of
# each and its ratio to no profiler. Also the writer's CPU time over 10 s of an idle
# `record` (a program that sleeps), from /proc.
#
#   bash scripts/bench-framework.sh [RUNS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

runs="${1:-3}"
out="${BENCH_OUT:-out/bench}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
eltrace="${ELTRACE_BENCH_BIN:-$REPO_ROOT/target/release/eltrace}"
[ -n "${ELTRACE_BENCH_NO_BUILD:-}" ] || cargo build --release --workspace --locked >&2
dotnet build -c Release --nologo -v quiet -o "$out/Framework" bench/Framework >"$out/framework-build.log" 2>&1 \
    || die "dotnet build of bench/Framework failed (see $out/framework-build.log)"
dll="$out/Framework/EltraceFramework.dll"
rounds="${FRAMEWORK_ROUNDS:-400}"

one() {
    case "$1" in
        none) dotnet "$dll" "$rounds" ;;
        nothing) "$eltrace" record -o "$out/fw-nothing.eltrace" --exclude '*' -- dotnet "$dll" "$rounds" 2>/dev/null ;;
        default) "$eltrace" record -o "$out/fw-default.eltrace" -- dotnet "$dll" "$rounds" 2>/dev/null ;;
    esac | sed -n 's/^ms //p'
}

declare -A all
for i in $(seq 1 "$runs"); do
    for c in none nothing default; do
        all[$c]+="$(one "$c") "
    done
    note "run $i of $runs done"
done
python3 - "${all[none]}" "${all[nothing]}" "${all[default]}" "$runs" "$rounds" <<'PY'
import statistics, sys
none, nothing, default = ([float(x) for x in a.split()] for a in sys.argv[1:4])
m = statistics.median
print(f"bench/Framework, {sys.argv[5]} rounds, {sys.argv[4]} runs each, alternating (median ms, ratio to no profiler):")
print("| configuration | median ms | × no profiler | runs |")
print("|---|---:|---:|---|")
for name, v in (("no profiler", none), ("profiler loaded, nothing selected (--exclude '*')", nothing),
                ("default selection (the app's own methods)", default)):
    print(f"| {name} | {m(v):.1f} | {m(v) / m(none):.3f} | {' '.join(f'{x:.0f}' for x in v)} |")
PY

# The writer while nothing happens: 10 s of a sleeping program under record, the profiler's
# threads' CPU time from /proc (utime + stime of eltrace-writer and eltrace-io).
note "idle: 10 s of a sleeping program under record"
"$eltrace" record -o "$out/fw-idle.eltrace" -- dotnet "$dll" --sleep 10 >/dev/null 2>&1 &
rec_pid=$!
sleep 2
app=$(pgrep -P "$rec_pid" -f EltraceFramework | head -1 || true)
ticks() {
    local total=0 t
    for t in /proc/"$app"/task/*; do
        case "$(cat "$t/comm" 2>/dev/null)" in
            eltrace-writer|eltrace-io)
                read -r -a f <"$t/stat"
                total=$((total + f[13] + f[14]))
                ;;
        esac
    done
    echo "$total"
}
if [ -n "$app" ]; then
    a=$(ticks); sleep 5; b=$(ticks)
    hz=$(getconf CLK_TCK)
    python3 -c "import sys; a,b,hz=map(int,sys.argv[1:]); print(f'idle writer CPU: {(b-a)/hz*1000:.0f} ms over 5 s = {(b-a)/hz/5*100:.2f} % of a core')" "$a" "$b" "$hz"
fi
wait "$rec_pid" || true
