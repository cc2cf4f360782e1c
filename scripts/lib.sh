# Shared by the scripts in this folder: sourced, not run. Sets a quiet .NET environment,
# puts rustup's cargo on PATH when it is installed but not on PATH, and defines helpers.

export DOTNET_CLI_TELEMETRY_OPTOUT=1
export DOTNET_NOLOGO=1
export DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# No MSBuild nodes or compiler servers left running after a build (they would hold CI's output
# open and outlive the script).
export MSBUILDDISABLENODEREUSE=1
export DOTNET_CLI_USE_MSBUILD_SERVER=0
export UseSharedCompilation=false

if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi

# The repository root (the parent of this folder).
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REPO_ROOT

# note MESSAGE: a progress line on stderr.
note() { printf '==> %s\n' "$*" >&2; }

# die MESSAGE: print an error and exit 1.
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# median FMT NUMBERS...: their median (the mean of the middle two for an even count), printed
# with the printf format FMT. median_range FMT NUMBERS...: the same, followed by
# " (lowest-highest)" when there are two or more.
median() { _median "$1" 0 "${@:2}"; }
median_range() { _median "$1" 1 "${@:2}"; }
_median() {
    local fmt="$1" range="$2"
    shift 2
    printf '%s\n' "$@" | sort -g | awk -v fmt="$fmt" -v range="$range" '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        if (range && NR > 1) printf fmt " (" fmt "-" fmt ")", m, v[1], v[NR]; else printf fmt, m }'
}

# cargo_lock_args: prints `--locked` when cargo builds from the Debian crate sources (the
# versions Cargo.lock pins are exactly the ones installed there). On a machine that uses
# crates.io it prints nothing and first drops from Cargo.lock the placeholder checksums that
# Debian records for a few patched crates ("Could not get crate checksum"): cargo fills in
# crates.io's real checksums, keeping the pinned versions.
cargo_lock_args() {
    local cfg="${CARGO_HOME:-$HOME/.cargo}/config.toml"
    if [ -f "$cfg" ] && grep -Eq '^\s*\[source\.crates-io\]' "$cfg"; then
        printf -- '--locked'
    else
        sed -i '/^checksum = "Could not get crate checksum"$/d' "$REPO_ROOT/Cargo.lock"
    fi
}
