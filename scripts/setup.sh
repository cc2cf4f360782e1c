#!/usr/bin/env bash
# Installs what eltrace needs on a fresh machine of this project's kind (Debian, the .NET SDK and
# rustup's Rust already there). Idempotent: a second run changes nothing.
#
# 1. Installs the Debian packages of the Rust crates the workspace uses and of the test suite's
#    tools (golang-go for `go tool pprof`; apt-get update only if something is missing).
# 2. Only when crates.io cannot be reached: points cargo's crates-io source at the crate sources
#    those packages install under /usr/share/cargo/registry, in ${CARGO_HOME:-~/.cargo}/config.toml
#    (appended; an existing source replacement is left as it is). A machine that reaches
#    crates.io keeps using it. Set ELTRACE_CRATES_IO=online or offline to skip the probe.
# 3. Checks that dotnet and cargo answer.
# 4. Lays out the .NET runtimes other than the SDK's (scripts/runtimes.sh: from the NuGet runtime
#    packs, into the eltrace cache) for programs run with DOTNET_ROLL_FORWARD=Major: 11.0.0, which
#    the end-to-end tests run on besides the SDK's 10 (ELTRACE_TEST_RUNTIMES, default 10,11; see
#    docs/runtimes.md): the setup FAILS when it cannot be laid out (NuGet unreachable), unless
#    ELTRACE_TEST_RUNTIMES leaves 11 out. ELTRACE_SETUP_RUNTIMES="…" names more runtimes to lay
#    out (default none); a failure there is only reported.
# 5. Installs the trace viewers of the export tests (scripts/viewers.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Debian packages of the crates in the workspace's Cargo.toml files (with their dependencies).
RUST_DEB_PACKAGES="librust-clap-dev librust-serde-json-dev librust-libc-dev librust-crc32fast-dev librust-flate2-dev"
# Tools of the test suite: golang-go's `go tool pprof` reads the pprof exports (an independent
# reader of the format).
TOOL_DEB_PACKAGES="golang-go"
DEBIAN_REGISTRY=/usr/share/cargo/registry

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

# --- 1. Debian crate packages -------------------------------------------------------------
missing=()
for pkg in $RUST_DEB_PACKAGES $TOOL_DEB_PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$pkg")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    note "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    note "Debian crate packages already installed"
fi

# --- 2. cargo source replacement, only without crates.io ----------------------------------
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
cargo_config="$cargo_home/config.toml"

crates_io_reachable() {
    case "${ELTRACE_CRATES_IO:-}" in
        online) return 0 ;;
        offline) return 1 ;;
    esac
    # Ask cargo itself, with an empty CARGO_HOME and outside any project, so that no source
    # replacement or offline setting applies.
    local probe rc
    probe="$(mktemp -d)"
    rc=0
    (cd "$probe" && CARGO_HOME="$probe/home" CARGO_NET_RETRY=0 \
        timeout 30 cargo search --limit 1 serde >/dev/null 2>&1) || rc=$?
    rm -rf "$probe"
    return "$rc"
}

if [ -f "$cargo_config" ] && grep -Eq '^\s*\[source\.crates-io\]' "$cargo_config"; then
    note "cargo source replacement already in $cargo_config"
elif crates_io_reachable; then
    note "crates.io is reachable: cargo uses it as usual"
else
    [ -d "$DEBIAN_REGISTRY" ] || die "crates.io is unreachable and $DEBIAN_REGISTRY is missing"
    note "crates.io is unreachable: using the Debian crate sources in $DEBIAN_REGISTRY"
    mkdir -p "$cargo_home"
    if [ -s "$cargo_config" ]; then
        printf '\n' >>"$cargo_config"
    fi
    {
        printf '# Added by eltrace scripts/setup.sh: crates.io was unreachable.\n'
        printf '[source.crates-io]\nreplace-with = "debian-packages"\n\n'
        if ! grep -Eq '^\s*\[source\.debian-packages\]' "$cargo_config" 2>/dev/null; then
            printf '[source.debian-packages]\ndirectory = "%s"\n' "$DEBIAN_REGISTRY"
        fi
        if ! grep -Eq '^\s*\[net\]' "$cargo_config" 2>/dev/null; then
            printf '\n[net]\noffline = true\n'
        fi
    } >>"$cargo_config"
fi

# --- 3. toolchains ------------------------------------------------------------------------
command -v dotnet >/dev/null 2>&1 || die "dotnet (the .NET SDK) is not on PATH"
command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH"
note "dotnet $(dotnet --version)"
note "$(cargo --version)"

# --- 4. other .NET runtimes ------------------------------------------------------------------
# The runtimes the end-to-end tests need (crates/cli/tests/e2e/common/runtimes.rs: NET11_VERSION).
test_runtimes="${ELTRACE_TEST_RUNTIMES:-10,11}"
case ",${test_runtimes// /}," in
    *,11,* | *,net11,*)
        if ! bash "$REPO_ROOT/scripts/runtimes.sh" 11.0.0 >/dev/null; then
            die "cannot lay out .NET 11.0.0, which the end-to-end tests run on (see above): make NuGet reachable (dotnet nuget list source) and run the setup again, or test on .NET 10 alone with ELTRACE_TEST_RUNTIMES=10"
        fi
        ;;
esac
runtimes="${ELTRACE_SETUP_RUNTIMES-}"
if [ -n "$runtimes" ]; then
    # shellcheck disable=SC2086 # a list of versions
    if ! bash "$REPO_ROOT/scripts/runtimes.sh" $runtimes >/dev/null; then
        note "warning: could not lay out the .NET runtimes $runtimes (see above); go on without them"
    fi
fi

# --- 5. the viewers the export tests load files in (Chromium, speedscope, Perfetto UI) ----
bash "$(dirname "${BASH_SOURCE[0]}")/viewers.sh"
