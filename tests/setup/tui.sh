#!/usr/bin/env bash
# Installs tmux, which tests/hosts_tui.rs drives Claude Code's interactive TUI with
# and tests/panel_tui.rs drives `khaelor-perm approve` with (send-keys to answer,
# capture-pane to read). Idempotent: nothing happens when tmux is already there.
set -euo pipefail
if ! command -v tmux >/dev/null 2>&1; then
  echo "tui.sh: tmux missing, installing it from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq tmux >/dev/null
fi
echo "tui.sh: $(tmux -V) ready"
