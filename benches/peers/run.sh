#!/usr/bin/env bash
# Side by side in one run: this project's engines against OpenCode's bash
# parser (web-tree-sitter + the tree-sitter-bash wasm, with the walk that collects
# commands) and Python bashlex, on the same corpus, one command at a time. Prints each
# stage's median, mean and p99 per command and its ratio to our AST engine (the whole
# analysis: parse, walk, effects, floor, classes).
#
# Installs the peers itself into a cache outside the repository (install.sh); needs
# node/npm and python3. Not part of the test command. Knobs: CORPUS=dir holding
# tldr.txt and nl2bash.txt, BIN=prebuilt khaelor-perm, PEERS_CACHE=dir.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$here"
corpus="${CORPUS:-}"
if [ -z "$corpus" ]; then
    for c in ../shared/corpus /work/shared/corpus; do
        if [ -f "$c/tldr.txt" ]; then corpus="$c"; break; fi
    done
fi
[ -n "$corpus" ] || { echo "run.sh: no corpus found; set CORPUS=dir" >&2; exit 2; }
files=("$corpus/tldr.txt" "$corpus/nl2bash.txt")

cache="$(bash benches/peers/install.sh)"
if [ -n "${BIN:-}" ]; then
    bin="$(realpath "$BIN")"
else
    cargo build --release --quiet --bin khaelor-perm
    bin="$here/target/release/khaelor-perm"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"

echo "corpus: ${files[*]}"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')  node $(node --version)  $("$cache/venv/bin/python" --version)"
"$bin" compare --json --root "$work/root" "${files[@]}" > "$work/ours.json"
node benches/peers/opencode.mjs "$cache/npm" "${files[@]}" > "$work/opencode.json"
"$cache/venv/bin/python" benches/peers/bashlex_bench.py "${files[@]}" > "$work/bashlex.json"

python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
ours = json.load(open(f"{w}/ours.json"))
oc = json.load(open(f"{w}/opencode.json"))
bl = json.load(open(f"{w}/bashlex.json"))
rows = [("khaelor-perm: " + t["stage"], t) for t in ours["timings"]]
rows += [(s["stage"], s) for s in oc["stages"]]
rows += [(s["stage"], s) for s in bl["stages"]]
ast = next(t for t in ours["timings"] if t["stage"] == "AST engine")
print(f"commands: ours {ours['commands']}, OpenCode {oc['commands']}, bashlex {bl['commands']} "
      f"(bashlex refused {bl['failed']})")
print()
print("| stage | median | mean | p99 | median / our AST engine | mean / our AST engine |")
print("|---|---:|---:|---:|---:|---:|")
us = lambda ns: f"{ns / 1000:.1f} µs"
for name, t in rows:
    print(f"| {name} | {us(t['medianNs'])} | {us(t['meanNs'])} | {us(t['p99Ns'])} "
          f"| {t['medianNs'] / ast['medianNs']:.2f}x | {t['meanNs'] / ast['meanNs']:.2f}x |")
PY
