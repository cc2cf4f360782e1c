#!/usr/bin/env bash
# The project's test command: setup, build, format check, lints, then every test (unit tests and
# the end-to-end tests of crates/cli/tests/e2e, which record the C# programs in tests/apps
# with the freshly built profiler, on .NET 10 and .NET 11.0.0; ELTRACE_TEST_RUNTIMES=10 or 11
# picks one), then the dotnet tool package (scripts/pack-tool.sh --check). Stops at the first
# failing step.
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
# shellcheck disable=SC2207 # one word or none
LOCK=($(cargo_lock_args))
step build cargo build --workspace "${LOCK[@]}"
step fmt cargo fmt --all --check
step clippy cargo clippy --workspace --all-targets "${LOCK[@]}" -- -D warnings
test_log="$(mktemp)"
trap 'rm -f "$test_log"' EXIT
run_tests() {
    set -o pipefail
    cargo test --workspace "${LOCK[@]}" --no-fail-fast 2>&1 | tee "$test_log"
}
note "test: cargo test --workspace"
test_start=$SECONDS
test_status=0
run_tests || test_status=$?
# One closing line over every test binary, so the total is visible at a glance; the ignored
# tests counted by the reason they give (`#[ignore = "…"]`), so a skip is never a silent pass;
# and one line per runtime of the end-to-end tests (named `…::net10`, `…::net11`;
# ELTRACE_TEST_RUNTIMES selects them, and the tests of a runtime left out are built ignored).
awk '/^test result:/ { p += $4; f += $6; s += $8 } END { printf "tests: %d passed, %d failed, %d skipped (ignored)\n", p, f, s }' "$test_log"
awk '/^test .* \.\.\. ignored/ {
        reason = $0
        sub(/^.* \.\.\. ignored,? */, "", reason)
        n[reason == "" ? "no reason given" : reason]++
    }
    END { for (r in n) printf "  %d skipped: %s\n", n[r], r }' "$test_log" | sort -t: -k2
for rt in net10 net11; do
    awk -v rt="$rt" '$1 == "test" && $2 ~ ("::" rt "$") {
            if ($4 == "ok") p++; else if ($4 == "FAILED") f++; else if ($4 ~ /^ignored/) s++
        }
        END { printf "  on .NET %s: %d passed, %d failed, %d ignored\n", substr(rt, 4), p, f, s }' "$test_log"
done
note "runtimes of the end-to-end tests: ${ELTRACE_TEST_RUNTIMES:-10,11} (ELTRACE_TEST_RUNTIMES)"
if [ "$test_status" -ne 0 ]; then
    printf '\nFAILED: test (cargo test exited %s)\n' "$test_status" >&2
    exit 1
fi
note "test: ok ($((SECONDS - test_start)) s)"
# The dotnet tool: packed, installed into a temporary tool path, recording the example.
tool_out="$(mktemp -d)"
step tool bash scripts/pack-tool.sh --check "$tool_out"
rm -rf "$tool_out"
note "all steps passed"
