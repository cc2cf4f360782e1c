#!/usr/bin/env bash
# The real-workload benchmark (issue 12): requests/s of an ASP.NET Core minimal API
# (tests/apps/Web, Release, GET / "Hello, World!") under Debian's wrk, in one run, for:
#
#   none          no profiler
#   fast-empty    eltrace's fast-path stubs that do nothing (ELTRACE_HOOKS=fast-empty)
#   fast-clock    stubs that read the TSC and return (ELTRACE_HOOKS=fast-clock): a timed
#                 hook's floor, the clock alone
#   discard       eltrace record with the recording stubs, but every ring's records counted as
#   discard-none  dropped instead of encoded and written (ELTRACE_HOOKS=fast-discard; exact
#                 and --timing none): the hooks without the pipeline behind them. With the
#                 rows above and fast/fast-none, the cost of each stage per request
#                 (docs/performance.md, "The stages per request and per event"); their
#                 events are all dropped, by design
#   records       eltrace record with ELTRACE_STREAM=0: exact times through raw records, which
#                 the threads encode in batches, instead of streams (the default: the stubs
#                 encode, the writer cuts)
#   records-none  the same for --timing none
#   records-sampled  the same for --timing sampled
#   fast          eltrace record (fast path, lossless)
#   slow-empty    the runtime's slow path with an empty hook (ELTRACE_HOOKS=slow-empty)
#   slow          eltrace record --slow-path (lossless)
#   fast-app      eltrace record with the default selection (the app's own code only)
#   dotnet-trace  dotnet-trace collect (10.0.750501, its default profile), attached to the server
#
# Every eltrace row except fast-app probes every managed method (--include '*': ASP.NET Core,
# the BCL and the app), the worst case; fast-app is what a user gets by default. Each row
# starts a fresh server, warms it up for WARMUP seconds, then measures DURATION seconds of
# `wrk -t1 -c16`. Prints a Markdown table (requests/s, ratio to no profiler, events, dropped,
# waits) and writes traces and logs to out/bench-web/ (or $BENCH_OUT).
#
#   bash scripts/bench-web.sh                 # DURATION=10 WARMUP=3 (about 4 minutes)
#   DURATION=5 bash scripts/bench-web.sh      # shorter
#   ROUNDS=3 bash scripts/bench-web.sh        # every row three times, in turn (see below)
#   bash scripts/bench-web.sh --quick         # 2-s runs: checks that everything works
#
# ROUNDS=N runs the whole list N times, every configuration in turn in each round: this VM's
# rate drifts by 10-20 % within minutes, so a row's ratio is taken to the same round's
# no-profiler rate, and the table gives the median over the rounds with the range (events,
# dropped and waits are those of the round whose ratio is that median).
#
# Installs wrk (apt) and dotnet-trace (a dotnet tool from the NuGet sources, into the output
# folder) when they are missing. Run it on a quiet machine: the numbers are wall-clock rates.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

duration="${DURATION:-10}"
# The request: PATH=/ is "Hello, World!" (one call of the app's code), PATH=/fib/N makes the
# app's own recursive calls (CONFIGS picks the rows, e.g. CONFIGS="none nothing fast-app").
path="${PATH_UNDER_TEST:-/}"
warmup="${WARMUP:-3}"
if [ "${1:-}" = "--quick" ]; then duration=2; warmup=1; fi
out="${BENCH_OUT:-out/bench-web}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
trace_version=10.0.750501

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v wrk >/dev/null 2>&1; then
    note "installing wrk"
    as_root apt-get install -y -qq --no-install-recommends wrk >/dev/null \
        || { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends wrk >/dev/null; } \
        || die "could not install wrk"
fi
dotnet_trace="$out/tools/dotnet-trace"
if [ ! -x "$dotnet_trace" ]; then
    note "installing dotnet-trace $trace_version"
    dotnet tool install --tool-path "$out/tools" dotnet-trace --version "$trace_version" >"$out/tool.log" 2>&1 \
        || { note "dotnet-trace did not install (see $out/tool.log); its row is skipped"; dotnet_trace=; }
fi
if [ -z "${ELTRACE_BENCH_NO_BUILD:-}" ]; then
    note "building eltrace (release)"
    cargo build --release --workspace $(cargo_lock_args) >&2
fi
eltrace="${ELTRACE_BENCH_BIN:-$REPO_ROOT/target/release/eltrace}"
note "building tests/apps/Web (Release)"
dotnet build -c Release --nologo -v quiet -o "$out/Web" tests/apps/Web \
    -p:UseSharedCompilation=false -nodeReuse:false >"$out/build.log" 2>&1 \
    || die "dotnet build of tests/apps/Web failed (see $out/build.log)"
web="$out/Web/Web.dll"

server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

# start_server CONFIG LOG: starts the server for one row in the background; sets server_pid
# (the pid of the command started: eltrace record, or dotnet itself) and url.
start_server() {
    local config="$1" log="$2" trace="$out/$1.eltrace"
    rm -f "$out/$1".*eltrace "$trace"
    local -a rec=("$eltrace" record -o "$trace" --include '*')
    local -a cmd
    case "$config" in
        none | dotnet-trace) cmd=(dotnet "$web") ;;
        fast-empty) cmd=(env ELTRACE_HOOKS=fast-empty "${rec[@]}" -- dotnet "$web") ;;
        fast-clock) cmd=(env ELTRACE_HOOKS=fast-clock "${rec[@]}" -- dotnet "$web") ;;
        discard) cmd=(env ELTRACE_HOOKS=fast-discard "${rec[@]}" -- dotnet "$web") ;;
        discard-none) cmd=(env ELTRACE_HOOKS=fast-discard "${rec[@]}" --timing none -- dotnet "$web") ;;
        records) cmd=(env ELTRACE_STREAM=0 "${rec[@]}" -- dotnet "$web") ;;
        records-none) cmd=(env ELTRACE_STREAM=0 "${rec[@]}" --timing none -- dotnet "$web") ;;
        records-sampled) cmd=(env ELTRACE_STREAM=0 "${rec[@]}" --timing sampled -- dotnet "$web") ;;
        fast) cmd=("${rec[@]}" -- dotnet "$web") ;;
        slow-empty) cmd=(env ELTRACE_HOOKS=slow-empty "${rec[@]}" -- dotnet "$web") ;;
        slow) cmd=("${rec[@]}" --slow-path -- dotnet "$web") ;;
        fast-app) cmd=("$eltrace" record -o "$trace" -- dotnet "$web") ;;
        nothing) cmd=("$eltrace" record -o "$trace" --exclude '*' -- dotnet "$web") ;;
        fast-none) cmd=("${rec[@]}" --timing none -- dotnet "$web") ;;
        fast-sampled) cmd=("${rec[@]}" --timing sampled -- dotnet "$web") ;;
        *) die "unknown config $config" ;;
    esac
    "${cmd[@]}" >"$log.out" 2>"$log.err" </dev/null &
    server_pid=$!
    url=
    for _ in $(seq 1 600); do
        url="$(sed -n 's/^listening=//p' "$log.out" | head -n1)"
        [ -n "$url" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || die "$config: the server exited (see $log.err)"
        sleep 0.1
    done
    die "$config: the server did not listen within 60 s (see $log.err)"
}

# stop_server: asks the server to shut down gracefully and waits for it (and eltrace record).
# When the app cannot answer (see the errors column), it gets SIGTERM after 30 s: the app's
# own graceful shutdown (eltrace record leaves signals to its child).
stop_server() {
    curl -s -X POST "$url/shutdown" >/dev/null 2>&1 || true
    local app
    app="$(pgrep -P "$server_pid" dotnet || echo "$server_pid")"
    for _ in $(seq 1 300); do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -TERM "$app" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# rps LOG: the Requests/sec wrk printed; errors LOG: responses that were not 2xx/3xx plus
# socket errors (a profiler that breaks the app shows here, not as a rate).
rps() { awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$1"; }
errors() {
    awk '/Non-2xx or 3xx responses:/ { n += $5 }
         /Socket errors:/ { for (i = 3; i <= NF; i++) { v = $i; gsub(/,/, "", v); if (v ~ /^[0-9]+$/) n += v } }
         END { printf "%d", n }' "$1"
}

declare -A result errs events dropped waits ratio
rounds="${ROUNDS:-1}"
configs=(${CONFIGS:-none nothing fast-app fast-empty fast-clock discard discard-none fast fast-none fast-sampled slow-empty slow})
# dotnet-trace last in each round, whether CONFIGS names it or not (when it installed).
if [ -n "$dotnet_trace" ] && [[ " ${configs[*]} " != *" dotnet-trace "* ]]; then
    configs+=(dotnet-trace)
fi
[[ " ${configs[*]} " == *" none "* ]] || die "CONFIGS must name none (the rate the others are compared with)"
for round in $(seq 1 "$rounds"); do
  for config in "${configs[@]}"; do
    log="$out/$config"
    key="$config,$round"
    note "$config: starting the server (round $round of $rounds)"
    start_server "$config" "$log"
    wrk -t1 -c16 -d"${warmup}s" "$url$path" >"$log.warmup" 2>&1 || true
    tracer_pid=
    if [ "$config" = dotnet-trace ]; then
        # Attached for the measured window (plus a margin); its default profile.
        "$dotnet_trace" collect -p "$server_pid" -o "$out/dotnet-trace.nettrace" \
            --duration "00:00:00:$((duration + 4))" >"$log.trace.out" 2>&1 </dev/null &
        tracer_pid=$!
        sleep 2
    fi
    note "$config: wrk -t1 -c16 -d${duration}s"
    wrk -t1 -c16 -d"${duration}s" "$url$path" >"$log.wrk" 2>&1 || die "$config: wrk failed (see $log.wrk)"
    [ -n "$tracer_pid" ] && { wait "$tracer_pid" || note "dotnet-trace exited non-zero (see $log.trace.out)"; }
    stop_server
    result[$key]="$(rps "$log.wrk")"
    errs[$key]="$(errors "$log.wrk")"
    summary="$(grep -h '^eltrace: [0-9,]* events' "$log.err" | head -n1 || true)"
    events[$key]="$(sed -n 's/^eltrace: \([0-9,]*\) events.*/\1/p' <<<"$summary")"
    dropped[$key]="$(sed -n 's/.* \([0-9,]*\) dropped events.*/\1/p' <<<"$summary")"
    waits[$key]="$(sed -n 's/.*dropped events, \([0-9,]*\) waits\( for the writer (\([^)]*\) in all)\)\{0,1\}.*/\1 (\3)/p' <<<"$summary" | head -n1)"
    waits[$key]="${waits[$key]% ()}"
    note "$config: ${result[$key]} requests/s, ${errs[$key]} errors ${summary:+($summary)}"
  done
  for config in "${configs[@]}"; do
    r="${result[$config,$round]:-}" b="${result[none,$round]:-}"
    [ -n "$r" ] && [ -n "$b" ] && ratio[$config,$round]="$(awk -v a="$r" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
  done
done

# pick CONFIG: the round whose ratio is the median of CONFIG's rounds (the lower middle one
# for an even count).
pick() {
    local c="$1" r
    for r in $(seq 1 "$rounds"); do printf '%s %s\n' "${ratio[$c,$r]:-0}" "$r"; done \
        | sort -g | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] }'
}
{
    printf '\nASP.NET Core (tests/apps/Web, Release, GET %s), wrk -t1 -c16 -d%ss after %ss warm-up, %s round(s),\n' "$path" "$duration" "$warmup" "$rounds"
    printf '%s, %s cores, %s\n\n' "$(date -u +%F)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    printf '| configuration | requests/s | vs no profiler (same round) | errors | events | dropped | writer waits (time) |\n'
    printf '|---|---:|---:|---:|---:|---:|---|\n'
    declare -A label=(
        [none]="no profiler"
        [fast-empty]="fast path, empty stub (all methods)"
        [fast-clock]="fast path, stubs that only read the clock (all methods)"
        [discard]="recording stubs, records dropped unencoded (all methods; benchmark)"
        [discard-none]="recording stubs, --timing none, records dropped unencoded (benchmark)"
        [records]="eltrace record, raw records instead of streams (ELTRACE_STREAM=0; all methods)"
        [records-none]="eltrace record --timing none, raw records (ELTRACE_STREAM=0; all methods)"
        [records-sampled]="eltrace record --timing sampled, raw records (ELTRACE_STREAM=0; all methods)"
        [fast]="eltrace record (fast path, all methods; exact: streams)"
        [slow-empty]="slow path, empty hook (all methods)"
        [slow]="eltrace record --slow-path (all methods)"
        [fast-app]="eltrace record (default selection: the app's code)"
        [nothing]="eltrace record --exclude '*' (profiler loaded, nothing selected)"
        [fast-none]="eltrace record --timing none (all methods; streams)"
        [fast-sampled]="eltrace record --timing sampled (all methods; streams)"
        [dotnet-trace]="dotnet-trace collect $trace_version (default profile)"
    )
    for config in "${configs[@]}"; do
        rates=() ratios=()
        for r in $(seq 1 "$rounds"); do
            [ -n "${result[$config,$r]:-}" ] && rates+=("${result[$config,$r]}")
            [ -n "${ratio[$config,$r]:-}" ] && ratios+=("${ratio[$config,$r]}")
        done
        m="$(pick "$config")"
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${label[$config]}" \
            "$(median_range %.0f "${rates[@]:-0}")" "$(median_range %.2f "${ratios[@]:-0}")" "${errs[$config,$m]:-?}" \
            "${events[$config,$m]:--}" "${dropped[$config,$m]:--}" "${waits[$config,$m]:--}"
    done
} | tee "$out/table.md"
