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
