#!/usr/bin/env bash
# Lays out .NET runtimes other than the SDK's own, so that programs (and `eltrace record`,
# `eltrace check`) can run on them: one dotnet root per version, built from the NuGet runtime
# packs, under ${ELTRACE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eltrace}/runtimes/<version>/:
#
#   dotnet                                  a copy of the SDK's `dotnet` host (the muxer)
#   host/fxr/<v>/libhostfxr.so              from Microsoft.NETCore.App.Runtime.<rid>
#   shared/Microsoft.NETCore.App/<v>/       that pack's runtimes/<rid>/lib/net*/ and native/
#   shared/Microsoft.AspNetCore.App/<v>/    Microsoft.AspNetCore.App.Runtime.<rid> (unless --no-aspnet)
#
# Usage: scripts/runtimes.sh [--dir DIR] [--no-aspnet] VERSION|MAJOR...
#   VERSION  an exact version, e.g. 11.0.0 or 9.0.23
#   MAJOR    8, 9, 10, 11: the newest X.0.* that NuGet serves; a major the SDK's dotnet already
#            has (10 here) needs no layout and prints the SDK's own root
#   --dir    where the roots go (default: the runtimes/ folder above)
#   (none)   11
#
# Prints one root per argument on stdout, progress on stderr. Idempotent: a root that is
# complete (its marker file written last, its key files present) is left as it is; a packed
# runtime already in the NuGet global packages folder is not downloaded again. The packs come
# through a throw-away project's `PackageDownload` items, restored from the configured NuGet
# sources (nothing else is asked). A net10.0 program runs on such a root with
#
#   DOTNET_ROOT=<root> DOTNET_ROLL_FORWARD=Major <root>/dotnet App.dll
#
# (the muxer takes the host/fxr and shared/ beside its own real path, so run <root>/dotnet: the
# SDK's dotnet, or a symlink to it, ignores DOTNET_ROOT and runs the SDK's runtime). A program
# cannot roll backwards to an older major: run older runtimes with programs built for them.
# docs/runtimes.md has the facts, `eltrace check` per runtime and what differs on .NET 11.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NETCORE_PACK=Microsoft.NETCore.App.Runtime
ASPNET_PACK=Microsoft.AspNetCore.App.Runtime
MARKER=.eltrace-runtime
RESTORE_TIMEOUT=900

usage() {
    sed -n '/^# Usage:/,/^#   (none)/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

runtimes_dir="${ELTRACE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eltrace}/runtimes"
aspnet=1
args=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --dir)
            [ "$#" -ge 2 ] || usage
            runtimes_dir="$2"
            shift 2
            ;;
        --dir=*)
            runtimes_dir="${1#--dir=}"
            shift
            ;;
        --no-aspnet)
            aspnet=0
            shift
            ;;
        -h | --help) usage ;;
        -*) usage ;;
        *)
            args+=("$1")
            shift
            ;;
    esac
done
[ "${#args[@]}" -gt 0 ] || args=(11)

command -v dotnet >/dev/null 2>&1 || die "dotnet (the .NET SDK) is not on PATH"
sdk_dotnet="$(readlink -f "$(command -v dotnet)")"
sdk_root="$(dirname "$sdk_dotnet")"

case "$(uname -m)" in
    x86_64) rid=linux-x64 ;;
    aarch64) rid=linux-arm64 ;;
    *) die "no runtime packs for $(uname -m)" ;;
esac

# The SDK's own runtimes (Microsoft.NETCore.App versions, one a line).
sdk_runtimes() {
    dotnet --list-runtimes 2>/dev/null | awk '$1 == "Microsoft.NETCore.App" { print $2 }'
}

# The versions of PACKAGE that the NuGet sources serve, one a line.
served_versions() {
    local out rc=0 dir
    dir="$(mktemp -d)"
    out="$(cd "$dir" && timeout 120 dotnet package search "$1" --exact-match \
        --format json 2>&1)" || rc=$?
    rm -rf "$dir"
    # A source that cannot be reached is a problem in the answer, with exit status 0.
    if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | grep -q '"searchResult"' ||
        printf '%s' "$out" | grep -q '"problemType": *"Error"'; then
        printf '%s\n' "$out" | sed -n 's/^ *"text": *"\(.*\)",\{0,1\}$/\1/p' | head -n 3 >&2
        die "cannot list the versions of $1 that NuGet serves (is NuGet reachable?); pass an exact version instead"
    fi
    printf '%s\n' "$out" | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p'
}

# resolve ARG: prints "sdk VERSION" for a runtime the SDK's dotnet has, else "pack VERSION".
resolve() {
    local arg="$1" v served
    if [[ "$arg" =~ ^[0-9]+$ ]]; then
        v="$(sdk_runtimes | grep -E "^$arg\.[0-9]+\.[0-9]+$" | sort -V | tail -n 1 || true)"
        if [ -n "$v" ]; then
            printf 'sdk %s\n' "$v"
            return
        fi
        served="$(served_versions "$NETCORE_PACK.$rid")" || exit 1
        v="$(printf '%s\n' "$served" | grep -E "^$arg\.0\.[0-9]+$" | sort -V | tail -n 1 || true)"
        [ -n "$v" ] || die "NuGet serves no $NETCORE_PACK.$rid $arg.0.x"
        note "$arg: the newest $arg.0.x that NuGet serves is $v"
        printf 'pack %s\n' "$v"
    elif [[ "$arg" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
        if sdk_runtimes | grep -qxF "$arg"; then
            printf 'sdk %s\n' "$arg"
        else
            printf 'pack %s\n' "$arg"
        fi
    else
        die "not a version or a major: $arg"
    fi
}

# The NuGet global packages folder (where a restore puts the packages).
packages_dir() {
    if [ -n "${NUGET_PACKAGES:-}" ]; then
        printf '%s\n' "$NUGET_PACKAGES"
    else
        dotnet nuget locals global-packages --list 2>/dev/null |
            sed -n 's/^global-packages: *//p' | sed 's:/*$::'
    fi
}

# The extracted package ID VERSION in the global packages folder (NuGet writes
# .nupkg.metadata last, so its presence means the extraction is complete).
package_path() {
    local dir
    dir="$PACKAGES/$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')/$(printf '%s' "$2" | tr '[:upper:]' '[:lower:]')"
    [ -f "$dir/.nupkg.metadata" ] && printf '%s\n' "$dir"
}

# restore VERSION ID...: downloads the packages ID (at exactly VERSION) into the global packages
# folder through a throw-away project's PackageDownload items.
restore() {
    local v="$1" tfm proj log rc=0 id
    shift
    tfm="net$(dotnet --version | cut -d. -f1).0"
    proj="$(mktemp -d)"
    {
        printf '<Project Sdk="Microsoft.NET.Sdk">\n'
        printf '  <PropertyGroup><TargetFramework>%s</TargetFramework></PropertyGroup>\n' "$tfm"
        printf '  <ItemGroup>\n'
        for id in "$@"; do
            printf '    <PackageDownload Include="%s" Version="[%s]" />\n' "$id" "$v"
        done
        printf '  </ItemGroup>\n</Project>\n'
    } >"$proj/runtimes.csproj"
    log="$proj/restore.log"
    note "downloading $* $v from NuGet"
    (cd "$proj" && timeout "$RESTORE_TIMEOUT" dotnet restore runtimes.csproj --nologo \
        -nodeReuse:false >"$log" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        grep -E 'error|warn' "$log" | sed 's/^ *//' | sort -u | head -n 5 >&2 || true
        if grep -q 'NU1301' "$log"; then
            rm -rf "$proj"
            die "cannot reach NuGet to download $* $v (see above; sources: dotnet nuget list source)"
        elif grep -Eq 'NU110[123]' "$log"; then
            rm -rf "$proj"
            die "NuGet does not serve $* $v"
        elif [ "$rc" -eq 124 ]; then
            die "the NuGet restore of $* $v timed out after ${RESTORE_TIMEOUT}s"
        fi
        die "the NuGet restore of $* $v failed (exit $rc); log: $log"
    fi
    rm -rf "$proj"
}

# The framework folder (runtimes/<rid>/lib/netX.Y) of an extracted pack.
lib_dir() {
    local d
    for d in "$1/runtimes/$rid/lib"/net*; do
        [ -d "$d" ] && {
            printf '%s\n' "$d"
            return
        }
    done
    die "no runtimes/$rid/lib/net* in $1"
}

# complete ROOT VERSION: the root's marker and key files are there.
complete() {
    local root="$1" v="$2"
    [ -f "$root/$MARKER" ] && [ -x "$root/dotnet" ] &&
        [ -f "$root/host/fxr/$v/libhostfxr.so" ] &&
        [ -f "$root/shared/Microsoft.NETCore.App/$v/libcoreclr.so" ] &&
        [ -f "$root/shared/Microsoft.NETCore.App/$v/System.Private.CoreLib.dll" ] &&
        { [ "$aspnet" -eq 0 ] || grep -qx 'aspnet=1' "$root/$MARKER"; }
}

# layout VERSION: prints the root of VERSION, laying it out first if needed.
layout() {
    local v="$1" root="$runtimes_dir/$1" tmp netcore asp fw lib id ids
    if complete "$root" "$v"; then
        note "$v: already laid out in $root"
        printf '%s\n' "$root"
        return
    fi
    ids=("$NETCORE_PACK.$rid")
    [ "$aspnet" -eq 0 ] || ids+=("$ASPNET_PACK.$rid")
    local missing=()
    for id in "${ids[@]}"; do
        package_path "$id" "$v" >/dev/null || missing+=("$id")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        restore "$v" "${missing[@]}"
    else
        note "$v: the packs are in $PACKAGES already"
    fi
    netcore="$(package_path "$NETCORE_PACK.$rid" "$v")" ||
        die "$NETCORE_PACK.$rid $v is not in $PACKAGES after the restore"

    note "$v: laying out $root"
    mkdir -p "$runtimes_dir"
    tmp="$runtimes_dir/.$v.tmp-$$"
    rm -rf "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    fw="$tmp/shared/Microsoft.NETCore.App/$v"
    mkdir -p "$tmp/host/fxr/$v" "$fw"
    cp "$sdk_dotnet" "$tmp/dotnet"
    cp "$netcore/runtimes/$rid/native/libhostfxr.so" "$tmp/host/fxr/$v/"
    lib="$(lib_dir "$netcore")"
    cp "$lib"/* "$fw/"
    find "$netcore/runtimes/$rid/native" -maxdepth 1 -type f ! -name libhostfxr.so \
        -exec cp {} "$fw/" \;
    [ ! -f "$netcore/Microsoft.NETCore.App.versions.txt" ] ||
        cp "$netcore/Microsoft.NETCore.App.versions.txt" "$fw/.version"
    printf 'version=%s\nnetcore=%s\n' "$v" "$netcore" >"$tmp/$MARKER.part"
    if [ "$aspnet" -eq 1 ]; then
        asp="$(package_path "$ASPNET_PACK.$rid" "$v")" ||
            die "$ASPNET_PACK.$rid $v is not in $PACKAGES after the restore"
        mkdir -p "$tmp/shared/Microsoft.AspNetCore.App/$v"
        cp "$(lib_dir "$asp")"/* "$tmp/shared/Microsoft.AspNetCore.App/$v/"
        if [ -d "$asp/runtimes/$rid/native" ]; then
            find "$asp/runtimes/$rid/native" -maxdepth 1 -type f \
                -exec cp {} "$tmp/shared/Microsoft.AspNetCore.App/$v/" \;
        fi
        [ ! -f "$asp/Microsoft.AspNetCore.App.versions.txt" ] ||
            cp "$asp/Microsoft.AspNetCore.App.versions.txt" \
                "$tmp/shared/Microsoft.AspNetCore.App/$v/.version"
        printf 'aspnet=1\naspnet_pack=%s\n' "$asp" >>"$tmp/$MARKER.part"
    fi

    # The host must list the runtime it is meant to run.
    if ! DOTNET_ROOT="$tmp" "$tmp/dotnet" --list-runtimes 2>&1 |
        grep -q "^Microsoft.NETCore.App $v "; then
        DOTNET_ROOT="$tmp" "$tmp/dotnet" --list-runtimes >&2 || true
        die "$v: the laid-out host does not list Microsoft.NETCore.App $v"
    fi
    mv "$tmp/$MARKER.part" "$tmp/$MARKER"

    if complete "$root" "$v"; then
        # Another run laid it out meanwhile: keep theirs.
        rm -rf "$tmp"
    else
        rm -rf "$root"
        mv -T "$tmp" "$root" || complete "$root" "$v" || die "cannot move $tmp to $root"
        rm -rf "$tmp"
    fi
    trap - EXIT
    note "$v: ready: DOTNET_ROOT=$root DOTNET_ROLL_FORWARD=Major $root/dotnet App.dll"
    printf '%s\n' "$root"
}

PACKAGES="$(packages_dir)"
[ -n "$PACKAGES" ] || PACKAGES="$HOME/.nuget/packages"

mkdir -p "$runtimes_dir"
runtimes_dir="$(cd "$runtimes_dir" && pwd)"

for arg in "${args[@]}"; do
    resolved="$(resolve "$arg")"
    kind="${resolved%% *}"
    version="${resolved#* }"
    if [ "$kind" = sdk ]; then
        note "$version: the SDK's own runtime, in $sdk_root (no layout needed)"
        printf '%s\n' "$sdk_root"
    else
        layout "$version"
    fi
done
