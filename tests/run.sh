#!/usr/bin/env bash
# The README's test command: installs what the tests need (each tests/setup/*.sh is one
# concern, idempotent and quick when already installed), then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."

for setup in tests/setup/*.sh; do
  [ -e "$setup" ] || continue
  echo "== setup: $setup"
  bash "$setup"
done

echo "== cargo test"
cargo test "$@"

# Ratios, never absolute times: the analysis against the bare parse and the hook
# process against /bin/true, each side by side in one run (benches/speed_guard.py).
echo "== speed guard"
bash benches/speed_guard.sh
