#!/usr/bin/env bash
# groff, which renders the man page in tests/cli_meta.rs as `man` would show it, so a
# page that groff warns about fails the test. From Debian (groff-base); idempotent.
set -euo pipefail
if command -v groff >/dev/null 2>&1; then
  exit 0
fi
echo "man.sh: groff missing, installing groff-base from Debian"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq groff-base >/dev/null
