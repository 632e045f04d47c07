#!/usr/bin/env bash
# Issue 15's fuzz smoke: builds the targets in fuzz/ (stable toolchain) and runs each
# for FUZZ_SECS seconds (default 5) on a corpus seeded from fixtures/ (fuzz/smoke.sh).
# Needs python3 (seeding) and a C++ compiler (libFuzzer), both present wherever the
# main crate builds (tree-sitter needs cc). Nothing to install; quick when built.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "reliability: python3 is missing (apt-get install -y python3)" >&2; exit 1; }
command -v c++ >/dev/null || { echo "reliability: a C++ compiler is missing (apt-get install -y g++)" >&2; exit 1; }
bash fuzz/smoke.sh
