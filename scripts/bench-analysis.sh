#!/usr/bin/env bash
# The analysis's speed (issue 15): runs `eltrace report` on a trace RUNS times (default 3)
# and prints, per run and as the best and the median, events per second of CPU time
# (user + sys: other work on the machine does not count) and of wall time, and the peak
# RSS. Without a TRACE it first records an ASP.NET Core trace: tests/apps/Web under
# `eltrace record --include '*'` (framework included), driven by tests/apps/Load with
# REQUESTS requests (default 38000: about 210 M events, 710 MiB) over 8 connections. The
# trace goes to $BENCH_OUT (default /tmp/eltrace-bench-analysis), out of the repository.
#
#   bash scripts/bench-analysis.sh [TRACE] [RUNS]
#   REQUESTS=2000 bash scripts/bench-analysis.sh          # a small trace (~14 M events)
#   ELTRACE=path/to/eltrace bash scripts/bench-analysis.sh TRACE   # another build
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

trace="${1:-}"
runs="${2:-3}"
out="${BENCH_OUT:-/tmp/eltrace-bench-analysis}"
mkdir -p "$out"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
if [ -z "${ELTRACE:-}" ]; then
    note "building (release)"
    cargo build --release --workspace "${LOCK[@]}" >"$out/build.log" 2>&1 \
        || die "cargo build failed (see $out/build.log)"
    ELTRACE="$REPO_ROOT/target/release/eltrace"
fi

if [ -z "$trace" ]; then
    requests="${REQUESTS:-38000}"
    for app in Web Load; do
        dotnet build -c Release -nodeReuse:false -o "$out/$app" "tests/apps/$app" >"$out/$app-build.log" 2>&1 \
            || die "dotnet build of tests/apps/$app failed (see $out/$app-build.log)"
    done
    trace="$out/web.eltrace"
    rm -f "$trace"
    note "recording tests/apps/Web under $requests requests into $trace"
    coproc WEB { "$ELTRACE" record -o "$trace" --include '*' -- dotnet "$out/Web/Web.dll" 2>&1; }
    # bash unsets WEB_PID once the coprocess has exited: keep it.
    web_pid="$WEB_PID"
    url=""
    while read -r line <&"${WEB[0]}"; do
        case "$line" in listening=*) url="${line#listening=}"; break ;; esac
    done
    [ -n "$url" ] || die "the Web app did not start"
    dotnet "$out/Load/Load.dll" "$url/" --requests "$requests" --connections 8 --shutdown "$url/shutdown" >&2
    cat <&"${WEB[0]}" >&2 || true
    wait "$web_pid" || die "recording failed"
fi
[ -f "$trace" ] || die "no trace at $trace"

note "$trace: $(du -m "$trace" | cut -f1) MiB; $runs runs of eltrace report --json"
for i in $(seq 1 "$runs"); do
    /usr/bin/time -f '%U %S %e %M' -o "$out/time.$i" "$ELTRACE" report --json "$trace" >"$out/report.json"
done
events="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$out/report.json")"
python3 - "$out" "$runs" "$events" <<'PY'
import statistics, sys
out, runs, events = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for i in range(1, runs + 1):
    user, sys_, wall, rss = open(f"{out}/time.{i}").read().split()[-4:]
    cpu = float(user) + float(sys_)
    rows.append((cpu, float(wall), int(rss) / 1024))
    print(f"run {i}: cpu {cpu:.2f} s ({events / cpu / 1e6:.1f} M events/s), "
          f"wall {float(wall):.2f} s ({events / float(wall) / 1e6:.1f} M events/s), "
          f"peak RSS {int(rss) / 1024:.0f} MiB")
cpu = [r[0] for r in rows]
wall = [r[1] for r in rows]
print(f"events {events}: cpu best {min(cpu):.2f} s = {events / min(cpu) / 1e6:.1f} M events/s, "
      f"median {statistics.median(cpu):.2f} s; wall best {min(wall):.2f} s = "
      f"{events / min(wall) / 1e6:.1f} M events/s; peak RSS max {max(r[2] for r in rows):.0f} MiB")
PY
