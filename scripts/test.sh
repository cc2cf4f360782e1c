#!/usr/bin/env bash
# The project's test command: setup, build, format check, lints, then every test (unit tests and
# the end-to-end tests in crates/cli/tests/e2e.rs, which record the C# program in
# tests/apps/Scenarios with the freshly built profiler). Stops at the first failing step.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

step() {
    local name="$1"
    shift
    note "$name: $*"
    local start=$SECONDS
    if ! "$@"; then
        printf '\nFAILED: %s (%s)\n' "$name" "$*" >&2
        exit 1
    fi
    note "$name: ok ($((SECONDS - start)) s)"
}

step setup bash scripts/setup.sh
step build cargo build --workspace --locked
step fmt cargo fmt --all --check
step clippy cargo clippy --workspace --all-targets --locked -- -D warnings
step test cargo test --workspace --locked --no-fail-fast
note "all steps passed"
