#!/usr/bin/env bash
# Installs the peers the side-by-side benchmark runs, into a cache directory outside the
# repository (nothing here is committed): OpenCode's bash parser (web-tree-sitter with
# the tree-sitter-bash wasm, from npm) and Python bashlex (from PyPI, in a venv).
# Usage: bash benches/peers/install.sh   (prints the cache dir; PEERS_CACHE overrides it)
set -euo pipefail
cache="${PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/khaelor-perm-peers}"
mkdir -p "$cache"
# The versions OpenCode 0.x pins for its bash tool (web-tree-sitter 0.25 runs the
# tree-sitter-bash 0.25 wasm; the ABI must match).
if [ ! -f "$cache/npm/node_modules/tree-sitter-bash/tree-sitter-bash.wasm" ]; then
    command -v npm >/dev/null || { echo "install.sh: npm not found" >&2; exit 2; }
    mkdir -p "$cache/npm"
    npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$cache/npm" \
        web-tree-sitter@0.25.10 tree-sitter-bash@0.25.0 >&2
fi
if [ ! -x "$cache/venv/bin/python" ] || ! "$cache/venv/bin/python" -c 'import bashlex' 2>/dev/null; then
    python3 -m venv "$cache/venv" >&2
    "$cache/venv/bin/pip" install --quiet --disable-pip-version-check bashlex==0.18 >&2
fi
echo "$cache"
