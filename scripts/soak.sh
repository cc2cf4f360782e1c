#!/usr/bin/env bash
# The memory benchmark (issue 4, "memory flat over a 10-minute run"): records the `soak`
# scenario of tests/apps/Scenarios (waves of short-lived threads plus one long-lived thread,
# ~1 M events/s in all) for SECONDS (default 600) with the default buffers, and samples the
# profiled process's resident memory (VmRSS, VmHWM) and the trace's size every 10 s. A second
# run as long without the profiler gives the program's own footprint; then `eltrace report`
# reads the whole trace (its time and peak memory are measured too). Writes
# out/soak/table.md (or $SOAK_OUT); docs/performance.md has the results.
#
#   bash scripts/soak.sh [SECONDS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

seconds="${1:-600}"
out="${SOAK_OUT:-out/soak}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
note "building (release)"
cargo build --release --workspace "${LOCK[@]}" >"$out/build.log" 2>&1 || die "cargo build failed (see $out/build.log)"
dotnet build -c Release -nodeReuse:false -o "$out/app" tests/apps/Scenarios >"$out/dotnet-build.log" 2>&1 \
    || die "dotnet build failed (see $out/dotnet-build.log)"
eltrace="$REPO_ROOT/target/release/eltrace"

# sample PID FILE LABEL: one line per 10 s while PID lives: seconds, VmRSS and VmHWM in MiB,
# and the size of FILE in MiB.
sample() {
    local pid="$1" file="$2" start=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
        local status rss hwm size
        status="$(cat "/proc/$pid/status" 2>/dev/null || true)"
        rss="$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' <<<"$status")"
        hwm="$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' <<<"$status")"
        size="$( [ -f "$file" ] && stat -c %s "$file" || echo 0)"
        [ -n "$rss" ] && printf '%d %s %s %.1f\n' $((SECONDS - start)) "$rss" "$hwm" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')"
        sleep 10
    done
}

# The dotnet process is the recorder's child: find it by its command line.
app_pid() {
    local parent="$1" pid=""
    for _ in $(seq 1 100); do
        pid="$(pgrep -P "$parent" -f "Scenarios.dll soak" | head -n 1 || true)"
        [ -n "$pid" ] && { echo "$pid"; return; }
        sleep 0.1
    done
}

note "soak under eltrace: $seconds s"
trace="$out/soak.eltrace"
"$eltrace" record -o "$trace" -- dotnet "$out/app/Scenarios.dll" soak "$seconds" >"$out/record.log" 2>&1 &
rec=$!
pid="$(app_pid "$rec")"
[ -n "$pid" ] || die "the soak process did not start (see $out/record.log)"
sample "$pid" "$trace" >"$out/with.txt"
wait "$rec" || die "recording failed (see $out/record.log)"

note "soak without a profiler: $seconds s"
dotnet "$out/app/Scenarios.dll" soak "$seconds" >"$out/plain.log" 2>&1 &
plain=$!
sample "$plain" /dev/null >"$out/without.txt"
wait "$plain"

note "eltrace report on the trace"
python3 - "$out" "$eltrace" "$trace" <<'PY' || die "eltrace report failed"
import resource, subprocess, sys, time
out, eltrace, trace = sys.argv[1:]
start = time.monotonic()
with open(f"{out}/report.json", "w") as f:
    subprocess.run([eltrace, "report", "--json", trace], stdout=f, check=True)
open(f"{out}/report.seconds", "w").write(f"{time.monotonic() - start}\n")
open(f"{out}/report.maxrss", "w").write(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
PY
python3 - "$out" "$seconds" >"$out/table.md" <<'PY'
import json, sys
out, seconds = sys.argv[1], int(sys.argv[2])
def rows(name):
    return [tuple(float(x) for x in line.split()) for line in open(f"{out}/{name}") if line.strip()]
w, b = rows("with.txt"), rows("without.txt")
r = json.load(open(f"{out}/report.json"))["trace"]
rss_kib = int(open(f"{out}/report.maxrss").read().split()[-1])
secs = float(open(f"{out}/report.seconds").read())
print(f"Soak: `bash scripts/soak.sh {seconds}`; {r['threads']} threads recorded, "
      f"{r['events']} events written, {r['dropped_events']} dropped, trace {w[-1][3]:.0f} MiB. "
      f"`eltrace report` read it in {secs:.0f} s with a peak RSS of {rss_kib / 1024:.0f} MiB.")
print()
print("| s | RSS MiB under eltrace | RSS MiB without a profiler | trace MiB |")
print("|---:|---:|---:|---:|")
plain = {int(x[0]) // 10: x[1] for x in b}
step = max(1, len(w) // 12)
picked = w[::step] + ([w[-1]] if (len(w) - 1) % step else [])
for row in picked:
    other = plain.get(int(row[0]) // 10)
    other = f"{other:.1f}" if other is not None else "-"
    print(f"| {row[0]:.0f} | {row[1]:.1f} | {other} | {row[3]:.0f} |")
def slope(rows):
    late = [x for x in rows if x[0] >= 60]
    if len(late) < 2:
        return None
    return (late[-1][1] - late[0][1]) / ((late[-1][0] - late[0][0]) / 60)
sw, sb = slope(w), slope(b)
if sw is not None and sb is not None:
    print()
    print(f"From 60 s on, RSS grows {sw:.2f} MiB/min under eltrace and {sb:.2f} MiB/min without "
          f"a profiler; the difference, {sw - sb:.2f} MiB/min, is what eltrace adds.")
PY
cat "$out/table.md"
