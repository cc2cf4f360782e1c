#!/usr/bin/env bash
# The hook-cost benchmark (issue 4): times calls of an empty, non-inlined .NET method under
# every hook configuration, with two harnesses (bench/Stopwatch, dependency-free; bench/Bdn,
# BenchmarkDotNet 0.15.8 in-process), all in one run, and prints a Markdown table of ns per
# call (Enter + Leave), ns per callback above "no profiler", and the ratios to "no profiler"
# and to "slow path, empty hook", with the timing modes of `record --timing` (exact, the
# default; none; sampled) in the same run. Then the encoding (bytes per event on disk of the
# fast-path benchmark trace of each timing mode) and the writer's sustained rate (a long run with the default buffers,
# lossless and --lossy). The encoder alone: scripts/bench-encode.sh.
#
#   bash scripts/bench.sh            # the full run (a few minutes); docs/performance.md
#   bash scripts/bench.sh --quick    # tiny iteration counts: checks that everything runs
#
# Outputs (traces, logs, table) go to out/bench/ (or $BENCH_OUT).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

quick=0
[ "${1:-}" = "--quick" ] && quick=1
out="${BENCH_OUT:-out/bench}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [ "$quick" = 1 ]; then
    calls=20000; rounds=2; sustained_calls=200000; thread_calls=200000; bdn_args=--quick
else
    calls=200000; rounds=15; sustained_calls=100000000; thread_calls=20000000; bdn_args=
fi
# Per-thread ring for the timed runs: a round (2 × calls events, the harnesses pause between
# rounds so the writer drains it) stays below the fast path's inline limit (half the ring), so
# the rounds time the hooks themselves, not a full buffer. The sustained run uses the defaults.
ring_events=$((1 << 20))
ring_mb=256

if [ -z "${ELTRACE_BENCH_NO_BUILD:-}" ]; then
    note "building eltrace (release)"
    cargo build --release --workspace --locked >&2
fi
eltrace="${ELTRACE_BENCH_BIN:-$REPO_ROOT/target/release/eltrace}"
note "building bench/Stopwatch and bench/Bdn"
dotnet build -c Release --nologo -v quiet -o "$out/Stopwatch" bench/Stopwatch >"$out/build.log" 2>&1 \
    || die "dotnet build of bench/Stopwatch failed (see $out/build.log)"
bdn=1
if ! dotnet build -c Release --nologo -v quiet -o "$out/Bdn" bench/Bdn >>"$out/build.log" 2>&1; then
    note "bench/Bdn (BenchmarkDotNet) did not build or restore; only the Stopwatch harness runs"
    bdn=0
fi

# run HARNESS CONFIG: prints ns per call of one configuration.
run() {
    local harness="$1" config="$2" dll args glob
    if [ "$harness" = stopwatch ]; then
        dll="$out/Stopwatch/EltraceBench.dll"; args="$calls $rounds"; glob='Bench.Target.Empty'
    else
        dll="$out/Bdn/EltraceBdn.dll"; args="$bdn_args"; glob='BenchBdn.Target.Empty'
    fi
    local trace="$out/$harness-$config.eltrace" log="$out/$harness-$config.log"
    local -a rec=("$eltrace" record -o "$trace" --include "$glob")
    local -a env=(ELTRACE_BUFFER_EVENTS=$ring_events ELTRACE_MAX_BUFFER_MB=$ring_mb)
    local -a cmd
    case "$config" in
        none) cmd=(dotnet "$dll" $args) ;;
        off) cmd=(env "${env[@]}" ELTRACE_HOOKS=off "${rec[@]}" -- dotnet "$dll" $args) ;;
        slow-empty) cmd=(env "${env[@]}" ELTRACE_HOOKS=slow-empty "${rec[@]}" -- dotnet "$dll" $args) ;;
        slow) cmd=(env "${env[@]}" "${rec[@]}" --slow-path -- dotnet "$dll" $args) ;;
        fast-empty) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast-empty "${rec[@]}" -- dotnet "$dll" $args) ;;
        fast) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast "${rec[@]}" -- dotnet "$dll" $args) ;;
        timing-none) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast "${rec[@]}" --timing none -- dotnet "$dll" $args) ;;
        timing-sampled) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast "${rec[@]}" --timing sampled -- dotnet "$dll" $args) ;;
        fast-norcx) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast ELTRACE_PRESERVE_RCX=0 "${rec[@]}" -- dotnet "$dll" $args) ;;
        filtered) cmd=(env "${env[@]}" ELTRACE_HOOKS=fast "$eltrace" record -o "$trace" \
                       --include 'Nothing.Matches.This' -- dotnet "$dll" $args) ;;
    esac
    "${cmd[@]}" >"$log" 2>&1 || die "$harness $config failed (see $log)"
    local ns
    ns=$(sed -n 's/^ns_per_call //p' "$log" | tail -1)
    [ -n "$ns" ] || die "$harness $config printed no ns_per_call (see $log)"
    if [ -f "$trace" ] && grep -q 'dropped events' "$log"; then
        grep -o '[0-9]* dropped events' "$log" | grep -qv '^0 ' \
            && note "$harness $config: $(grep -o '[0-9]* dropped events' "$log")"
    fi
    echo "$ns"
}

configs=(none off slow-empty slow fast-empty fast timing-none timing-sampled fast-norcx filtered)
declare -A label=(
    [none]="no profiler"
    [off]="profiler loaded, ELT off"
    [slow-empty]="slow path, empty hook"
    [slow]="slow path, recording"
    [fast-empty]="fast path, empty stub"
    [fast]="fast path, recording (RCX preserved, default)"
    [timing-none]="fast path, --timing none (no timestamps)"
    [timing-sampled]="fast path, --timing sampled (1 kHz sampler)"
    [fast-norcx]="fast path, recording (RCX not preserved)"
    [filtered]="fast path, function filtered out"
)
harnesses=(stopwatch)
[ "$bdn" = 1 ] && harnesses+=(bdn)
declare -A ns
for h in "${harnesses[@]}"; do
    for c in "${configs[@]}"; do
        note "$h: ${label[$c]}"
        ns[$h,$c]=$(run "$h" "$c")
    done
done

table="$out/table.md"
{
    echo "Machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(date -u +%Y-%m-%d)."
    echo "Stopwatch: best of $rounds rounds of $calls calls. Command: \`bash scripts/bench.sh${1:+ $1}\`."
    echo
    for h in "${harnesses[@]}"; do
        echo "| $h | ns/call | ns/callback above none | × no profiler | × slow empty hook |"
        echo "|---|---:|---:|---:|---:|"
        base=${ns[$h,none]}; slow=${ns[$h,slow-empty]}
        for c in "${configs[@]}"; do
            awk -v l="${label[$c]}" -v n="${ns[$h,$c]}" -v b="$base" -v s="$slow" 'BEGIN {
                printf "| %s | %.2f | %.2f | %.2f | %.3f |\n", l, n, (n - b) / 2, n / b, n / s }'
        done
        echo
    done
} >"$table"

# Encoding: bytes per event of the Stopwatch traces of each timing mode.
encoding() {
    local cfg="$1"
    "$eltrace" report --json "$out/stopwatch-$cfg.eltrace" >"$out/stopwatch-$cfg.json"
    echo "$(stat -c %s "$out/stopwatch-$cfg.eltrace") $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$out/stopwatch-$cfg.json")"
}
read -r size events <<<"$(encoding fast)"
read -r size_none events_none <<<"$(encoding timing-none)"
read -r size_sampled events_sampled <<<"$(encoding timing-sampled)"

# Sustained: one loop of $sustained_calls calls with the default buffers, per timing mode,
# lossless (the default: the thread encodes its own ring and waits for the writer when every
# buffer is full) and exact with --lossy; and the threads rows: 1 and 2 busy threads making
# $thread_calls calls each at once. What a user pays is the sustained figure; the burst rows
# above time rounds that fit in a 2^20-event ring, where no encoding happens during the round.
# Each sustained configuration runs $repeats times, the configurations in turn (a noisy
# machine then moves them alike); the table gives each one's median above the no-profiler run
# of the same turn, and the range. The burst rows are each process's best round.
sustained() {
    local name="$1" threads="$2"
    shift 2
    note "sustained run ($name, $threads thread(s))"
    local n=$sustained_calls rounds=1 pause=0
    if [ "$threads" != 1 ] || [ "${name#threads}" != "$name" ]; then
        n=$thread_calls; rounds=3; pause=200
    fi
    local sus="$out/sustained-$name.eltrace" log="$out/sustained-$name.log"
    if [ "${1:-}" = none ]; then
        dotnet "$out/Stopwatch/EltraceBench.dll" "$n" "$rounds" "$pause" "$threads" >"$log" 2>&1 \
            || die "sustained run ($name) failed (see $log)"
        return
    fi
    # shellcheck disable=SC2068 # the record flags, word by word
    env ELTRACE_HOOKS=fast "$eltrace" record -o "$sus" $@ --include 'Bench.Target.Empty' -- \
        dotnet "$out/Stopwatch/EltraceBench.dll" "$n" "$rounds" "$pause" "$threads" >"$log" 2>&1 \
        || die "sustained run ($name) failed (see $log)"
    "$eltrace" report --json "$sus" >"$out/sustained-$name.json"
}
repeats=3
[ "$quick" = 1 ] && repeats=1
for rep in $(seq 1 "$repeats"); do
    sustained "base.$rep" 1 none
    sustained "exact.$rep" 1 --timing exact
    sustained "none.$rep" 1 --timing none
    sustained "sampled.$rep" 1 --timing sampled
    sustained "lossy.$rep" 1 --lossy
    for t in 1 2; do
        sustained "threads$t-base.$rep" "$t" none
        sustained "threads$t-exact.$rep" "$t" --timing exact
        sustained "threads$t-none.$rep" "$t" --timing none
    done
done
rdtsc_ns=nan
if [ "$quick" = 0 ]; then
    rdtsc_ns=$(cargo run --release -q --locked -p eltrace-profiler --example rdtsc 2>/dev/null | sed -n 's/^rdtsc_ns //p')
fi
python3 - "$out" "$size" "$events" "$size_none" "$events_none" "$size_sampled" "$events_sampled" \
    "${ns[stopwatch,none]}" "${ns[stopwatch,fast]}" "${ns[stopwatch,timing-none]}" "${ns[stopwatch,timing-sampled]}" \
    "$rdtsc_ns" "$repeats" >>"$table" <<'PY'
import json, re, statistics, sys
out = sys.argv[1]
size, events, size_n, events_n, size_s, events_s = map(int, sys.argv[2:8])
b0, bf, bn, bs = map(float, sys.argv[8:12])
burst_exact, burst_none, burst_sampled = bf - b0, bn - b0, bs - b0
rdtsc = sys.argv[12]
reps = range(1, int(sys.argv[13]) + 1)
print(f"Encoding: the fast-path Stopwatch trace holds {events} events in {size} bytes: "
      f"{size / max(events, 1):.2f} bytes per event (whole file, metadata included); "
      f"--timing none {events_n} events in {size_n} bytes: {size_n / max(events_n, 1):.2f}; "
      f"--timing sampled {events_s} events in {size_s} bytes: {size_s / max(events_s, 1):.2f}.")
print()
print(f"One RDTSC: {rdtsc} ns here (crates/profiler/examples/rdtsc.rs), so two cost {2 * float(rdtsc or 'nan'):.1f} ns;"
      f" the exact timing's sustained target (1.5x two RDTSCs) is {3 * float(rdtsc or 'nan'):.1f} ns per call.")
print()
print(f"| sustained run | median ns/call above no profiler ({len(reps)} runs) | range | burst (above) | "
      "÷ burst | events written | dropped | waits (time) | written M events/s |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
def ns_of(name):
    log = open(f"{out}/sustained-{name}.log").read()
    v = re.findall(r"^ns_per_call (\S+)", log, re.M)
    return float(v[-1]) if v else float("nan")
def above(name, base):
    """Each turn's figure above that turn's no-profiler run: median, lowest, highest."""
    v = sorted(ns_of(f"{name}.{r}") - ns_of(f"{base}.{r}") for r in reps)
    return statistics.median(v), v[0], v[-1]
burst = {"exact": burst_exact, "none": burst_none, "sampled": burst_sampled, "lossy": burst_exact}
rows = [("exact", "exact"), ("none", "none"), ("sampled", "sampled"), ("lossy", "exact --lossy")]
last = reps[-1]
for name, label in rows:
    # Events, drops and waits of the last turn's trace (each turn's are alike).
    r = json.load(open(f"{out}/sustained-{name}.{last}.json"))["trace"]
    dur = r["duration_ns"] / 1e9
    med, lo, hi = above(name, "base")
    print(f"| {label} | {med:.2f} | {lo:.2f}-{hi:.2f} | {burst[name]:.2f} | {med / burst[name]:.2f} | "
          f"{r['events']} | {r['dropped_events']} | "
          f"{r.get('waits', 0)} ({r.get('wait_ns', 0) / 1e6:.0f} ms) | "
          f"{r['events'] / max(dur, 1e-9) / 1e6:.1f} |")
print()
print(f"No profiler, same loop: {statistics.median(ns_of(f'base.{r}') for r in reps):.2f} ns/call (median).")
print()
print("| busy threads | exact: median ns/call above no profiler (range) | none: median (range) | "
      "exact: × 1 thread | none: × 1 thread |")
print("|---:|---:|---:|---:|---:|")
one = {}
for t in (1, 2):
    e = above(f"threads{t}-exact", f"threads{t}-base")
    n = above(f"threads{t}-none", f"threads{t}-base")
    if t == 1:
        one = {"e": e[0], "n": n[0]}
    print(f"| {t} | {e[0]:.2f} ({e[1]:.2f}-{e[2]:.2f}) | {n[0]:.2f} ({n[1]:.2f}-{n[2]:.2f}) | "
          f"{e[0] / one['e']:.2f} | {n[0] / one['n']:.2f} |")
PY
cat "$table"
