#!/usr/bin/env bash
# Installs the agent hosts the end-to-end hook tests drive (tests/hosts_e2e.rs), at
# pinned versions, into a cache directory outside the checkout:
#   ${KHAELOR_HOSTS_DIR:-$HOME/.cache/khaelor-perm/hosts}/<name>/node_modules
# Idempotent: a host whose pinned version is already there is not touched, so a second
# run takes well under a second. Needs node and npm (installed from Debian when missing).
set -euo pipefail

DIR="${KHAELOR_HOSTS_DIR:-$HOME/.cache/khaelor-perm/hosts}"
# Pinned versions: the book (docs/src/hosts/e2e.md) names the same ones.
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
QWEN_VERSION=0.24.4
COPILOT_VERSION=1.0.102
DROID_VERSION=0.215.0
CLINE_VERSION=3.0.65

if ! command -v npm >/dev/null 2>&1; then
  echo "hosts.sh: npm missing, installing nodejs and npm from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi

# install NAME PACKAGE VERSION [EXTRA_PACKAGE@VERSION...]: one npm prefix per host, so
# their dependency trees never mix; a stamp file records what is installed.
install() {
  local name=$1 pkg=$2 version=$3
  shift 3
  local prefix="$DIR/$name" stamp="$DIR/$name/.installed"
  local want="$pkg@$version $*"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  echo "hosts.sh: installing $want into $prefix"
  mkdir -p "$prefix"
  (cd "$prefix" && [ -f package.json ] || echo '{"private":true}' >"$prefix/package.json")
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$pkg@$version" "$@"
  echo "$want" >"$stamp"
}

install claude @anthropic-ai/claude-code "$CLAUDE_VERSION"
install codex @openai/codex "$CODEX_VERSION"
install gemini @google/gemini-cli "$GEMINI_VERSION"
# OpenCode loads plugins through @opencode-ai/plugin; without a local copy of the same
# version it retries a download for about 70 s. The test points its config dir here.
install opencode opencode-ai "$OPENCODE_VERSION" "@opencode-ai/plugin@$OPENCODE_VERSION"
install qwen @qwen-code/qwen-code "$QWEN_VERSION"
# GitHub Copilot CLI is a native binary that unpacks its runtime (about 235 MB) into its
# cache on first start; the tests point COPILOT_CACHE_HOME here, so that happens once.
install copilot @github/copilot "$COPILOT_VERSION"
if [ ! -d "$DIR/copilot/cache/pkg" ]; then
  COPILOT_CACHE_HOME="$DIR/copilot/cache" "$DIR/copilot/node_modules/.bin/copilot" --version >/dev/null
fi
# Factory Droid from the `droid` package: `@factory/cli@0.225.1` names a Linux binary
# package of that version that npm does not have.
install droid droid "$DROID_VERSION"
# Cline CLI: the `cline` package pulls its Linux binary from `@cline/cli-linux-x64` (an
# optional dependency on npm, no download of its own).
install cline cline "$CLINE_VERSION"
echo "hosts.sh: hosts ready in $DIR"
