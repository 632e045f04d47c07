#!/usr/bin/env bash
# Never-quiet writes (tests/trust_protected.rs): real git, to show in a real repository that a
# write to .git/commondir makes `git status` run a foreign core.fsmonitor.
set -euo pipefail
if command -v git >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends git ca-certificates
