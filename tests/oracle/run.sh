#!/usr/bin/env bash
# The oracle test (tests/oracle/README.md): builds the oracle tool and the corpus (one dotnet
# build), instruments copies of Corpus.dll and CorpusRA.dll, then for each program runs the instrumented copy
# without eltrace (the oracle counts) and the plain Corpus.dll under `eltrace record`, in the
# fast and the slow path (and, on request, the fast path's register-trashing contract mode), and
# compares every method's calls (`Oracle compare`).
#
#   tests/oracle/run.sh [PROGRAM...]        default: every program of the corpus, then
#                                           runtime-async and runtime-async-shapes, then the
#                                           library corpus's
#
# `runtime-async` (`runtime-async-shapes`) is the corpus's `async` (`async-shapes`) program
# compiled with runtime async (CorpusRA.dll) and run with DOTNET_RuntimeAsync=1. The library
# corpus (CorpusLibs.dll: `pipes`, `async-linq`) uses System.IO.Pipelines and
# System.Linq.AsyncEnumerable from NuGet; those assemblies are instrumented and compared too. On
# .NET 11 each package's net11.0 build replaces the net10.0 one the build copied, and the app's
# deps.json gives it a file version above the shared framework's own copy (same assembly
# version: the framework's copy would win), so that the package's code is what runs.
#
# Environment: ELTRACE (default target/debug/eltrace; build the workspace first),
# ORACLE_OUT (default out/oracle), ORACLE_MODES (default "fast slow"; also "trash": the fast
# path with ELTRACE_TEST_TRASH_REGISTERS=1), ORACLE_RUNTIME (default 10: the SDK's runtime;
# 11: .NET 11.0.0 from the root scripts/runtimes.sh lays out, the net10.0 corpus rolled forward
# to it, runtime async on without DOTNET_RuntimeAsync).
# Prints one line per program and mode, and closes with `oracle: N passed, N failed`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

ELTRACE="${ELTRACE:-$REPO_ROOT/target/debug/eltrace}"
OUT="${ORACLE_OUT:-$REPO_ROOT/out/oracle}"
MODES="${ORACLE_MODES:-fast slow}"
# How the corpus runs: the SDK's dotnet, or .NET 11.0.0's own host with its root.
case "${ORACLE_RUNTIME:-10}" in
    10) RUN=(dotnet) ;;
    11)
        root="$(bash "$REPO_ROOT/scripts/runtimes.sh" 11.0.0)" || die "cannot lay out .NET 11.0.0"
        RUN=(env DOTNET_ROOT="$root" DOTNET_ROLL_FORWARD=Major "$root/dotnet")
        ;;
    *) die "ORACLE_RUNTIME=$ORACLE_RUNTIME: 10 or 11" ;;
esac
[ -x "$ELTRACE" ] || die "no eltrace at $ELTRACE (cargo build --workspace first, or set ELTRACE)"
mkdir -p "$OUT"

start=$SECONDS
note "oracle: building the tool and the corpus"
# No build server may outlive the build (the suite runs this script): no MSBuild node reuse,
# no MSBuild server, no shared compilation (VBCSCompiler).
DOTNET_CLI_USE_MSBUILD_SERVER=0 MSBUILDDISABLENODEREUSE=1 \
    dotnet build "$REPO_ROOT/tests/oracle/oracle.slnx" -c Release --artifacts-path "$OUT/build" \
    -nologo -clp:NoSummary -v:q -nodeReuse:false -p:UseSharedCompilation=false >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; die "dotnet build failed"; }
ORACLE=(dotnet "$OUT/build/bin/Oracle/release/Oracle.dll")
for asm in Corpus CorpusRA; do
    "${ORACLE[@]}" instrument "$OUT/build/bin/$asm/release/$asm.dll" "$OUT/instrumented/$asm"
done
# The library corpus's libraries (NuGet packages 11.0.0, CorpusLibs.csproj), instrumented with
# it, and its plain build: as built on 10; on 11 with each package's net11.0 assembly.
LIBS=(System.IO.Pipelines System.Linq.AsyncEnumerable)
LIBS_PLAIN="$OUT/build/bin/CorpusLibs/release"
if [ "${ORACLE_RUNTIME:-10}" = 11 ]; then
    rm -rf "$OUT/plain11"
    cp -r "$LIBS_PLAIN" "$OUT/plain11"
    LIBS_PLAIN="$OUT/plain11"
    for lib in "${LIBS[@]}"; do
        pkg="${NUGET_PACKAGES:-$HOME/.nuget/packages}/${lib,,}/11.0.0/lib/net11.0/$lib.dll"
        [ -f "$pkg" ] || die "no $pkg (the build restores $lib 11.0.0)"
        cp "$pkg" "$LIBS_PLAIN/"
        sed -i -E "/${lib//./[.]}[.]dll/,/fileVersion/ s/\"fileVersion\": \"[^\"]*\"/\"fileVersion\": \"11.0.65535.0\"/" \
            "$LIBS_PLAIN/CorpusLibs.deps.json"
    done
fi
lib_dlls=()
for lib in "${LIBS[@]}"; do lib_dlls+=("$LIBS_PLAIN/$lib.dll"); done
"${ORACLE[@]}" instrument "$LIBS_PLAIN/CorpusLibs.dll" "$OUT/instrumented/CorpusLibs" "${lib_dlls[@]}"
lib_modules="CorpusLibs.dll$(printf ',%s.dll' "${LIBS[@]}")"
# The library corpus's programs (the usage line of `CorpusLibs` without arguments).
read -r -a lib_programs <<<"$(dotnet "$LIBS_PLAIN/CorpusLibs.dll" 2>&1 |
    sed -n 's/^usage: CorpusLibs <\(.*\)>$/\1/p' | tr '|' ' ')"
[ "${#lib_programs[@]}" -gt 0 ] || die "CorpusLibs.dll printed no program list"
note "oracle: built and instrumented in $((SECONDS - start)) s"

if [ $# -gt 0 ]; then
    programs=("$@")
else
    # The program list is the corpus's own (the usage line of `Corpus` without arguments).
    read -r -a programs <<<"$(dotnet "$OUT/build/bin/Corpus/release/Corpus.dll" 2>&1 |
        sed -n 's/^usage: Corpus <\(.*\)>$/\1/p' | tr '|' ' ') runtime-async runtime-async-shapes ${lib_programs[*]}"
fi

passed=0
failed=0
for p in "${programs[@]}"; do
    asm=Corpus arg="$p" penv=() modules=Corpus.dll
    plain_dir="$OUT/build/bin/Corpus/release"
    if [ "$p" = runtime-async ] || [ "$p" = runtime-async-shapes ]; then
        asm=CorpusRA arg="${p#runtime-}" penv=(DOTNET_RuntimeAsync=1) modules=CorpusRA.dll
        plain_dir="$OUT/build/bin/CorpusRA/release"
    elif [[ " ${lib_programs[*]} " == *" $p "* ]]; then
        asm=CorpusLibs modules="$lib_modules" plain_dir="$LIBS_PLAIN"
    fi
    plain="$plain_dir/$asm.dll"
    counts="$OUT/$p.oracle.tsv"
    rm -f "$counts"
    if ! env "${penv[@]}" ORACLE_COUNTS="$counts" "${RUN[@]}" "$OUT/instrumented/$asm/$asm.dll" "$arg" >"$OUT/$p.oracle.out" 2>&1; then
        cat "$OUT/$p.oracle.out" >&2
        printf 'FAIL %s: the instrumented run failed\n' "$p"
        failed=$((failed + 1))
        continue
    fi
    for mode in $MODES; do
        envs=()
        case "$mode" in
            fast) args=() ;;
            slow) args=(--slow-path) ;;
            trash) args=() envs=(ELTRACE_TEST_TRASH_REGISTERS=1) ;;
            *) die "unknown mode $mode" ;;
        esac
        base="$OUT/$p.$mode"
        if ! env "${penv[@]}" "${envs[@]}" "$ELTRACE" record "${args[@]}" -o "$base.eltrace" -- "${RUN[@]}" "$plain" "$arg" >"$base.out" 2>&1 ||
            ! "$ELTRACE" report "$base.eltrace" --json --top 100000 >"$base.json" 2>>"$base.out"; then
            cat "$base.out" >&2
            printf 'FAIL %s %s: eltrace failed\n' "$p" "$mode"
            failed=$((failed + 1))
            continue
        fi
        if "${ORACLE[@]}" compare "$counts" "$base.json" "$modules" >"$base.compare"; then
            printf 'ok   %s %s: %s\n' "$p" "$mode" "$(tail -n 1 "$base.compare")"
            passed=$((passed + 1))
        else
            printf 'FAIL %s %s\n' "$p" "$mode"
            sed 's/^/    /' "$base.compare"
            failed=$((failed + 1))
        fi
    done
done
note "oracle: done in $((SECONDS - start)) s"
printf 'oracle: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
