#!/usr/bin/env bash
# The speed guard (benches/speed_guard.py): builds the release binary, then checks the
# analysis-to-parse and hook-to-/bin/true ratios against benches/speed_baseline.json.
# Usage: bash benches/speed_guard.sh [--record]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
python3 benches/speed_guard.py target/release/khaelor-perm "$@"
