#!/usr/bin/env bash
# Installs what the sandbox tests need (tests/contain_escape.rs, tests/contain_work.rs):
# bubblewrap (the sandbox itself), strace (the ptrace escape case), python3-pytest (the
# everyday-work pytest project), all from Debian. npm and node come from hosts.sh.
# Idempotent: installs only what is missing.
set -euo pipefail

need=()
[ -x /usr/bin/bwrap ] || need+=(bubblewrap)
command -v strace >/dev/null 2>&1 || need+=(strace)
[ -x /usr/bin/pytest-3 ] || [ -x /usr/bin/pytest ] || need+=(python3-pytest)
if [ ${#need[@]} -gt 0 ]; then
  echo "contain.sh: installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "contain.sh: bubblewrap $(/usr/bin/bwrap --version | cut -d' ' -f2), sandbox tools ready"
