#!/usr/bin/env bash
# The fuzz smoke (fuzz/smoke.sh): each target in fuzz/ for FUZZ_SECS seconds
# (default 5) on a corpus seeded from fixtures/. Guided (coverage-instrumented, cargo
# +nightly fuzz) when the nightly toolchain and cargo-fuzz are installed, else the
# unguided stable smoke; the output says which ran and why. cargo-fuzz is not installed
# here: building it takes about 2 minutes and a cold guided build several more, over
# this setup's budget; `cargo install cargo-fuzz --locked` once makes later runs guided.
# Needs python3 (seeding) and a C++ compiler (libFuzzer), both present wherever the
# main crate builds (tree-sitter needs cc).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null || { echo "reliability: python3 is missing (apt-get install -y python3)" >&2; exit 1; }
command -v c++ >/dev/null || { echo "reliability: a C++ compiler is missing (apt-get install -y g++)" >&2; exit 1; }
bash fuzz/smoke.sh
