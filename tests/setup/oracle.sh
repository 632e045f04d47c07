#!/usr/bin/env bash
# The bash oracle (tests/oracle_*.rs, `khaelor-perm oracle`): bubblewrap for the sandbox,
# strace to record what bash executes and writes, setpriv (util-linux) to run the sandbox
# under an unprivileged uid. Idempotent: returns at once when all three are installed.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v strace >/dev/null 2>&1 || missing+=(strace)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
