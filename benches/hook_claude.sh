#!/usr/bin/env bash
# Measures `khaelor-perm hook claude` per call against /bin/true (BENCHMARKS.md).
# Usage: bash benches/hook_claude.sh [path/to/khaelor-perm]   (RUNS=300 by default)
set -euo pipefail
BIN=$(realpath "${1:-target/release/khaelor-perm}")
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d); mkdir -p "$W/proj/src" "$W/home" "$W/state"; echo hello > "$W/proj/src/a.txt"
cd "$W/proj"
mk() { printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"%s","tool_input":%s,"tool_use_id":"t"}' "$1" "$W/proj" "$2" "$3" > "$W/$1.json"; }
mk bash-allow Bash '{"command":"git status"}'
mk bash-compound Bash '{"command":"cargo build --release 2>&1 | tail -20 && git diff --stat"}'
mk bash-floor Bash '{"command":"rm -rf /"}'
mk read Read "{\"file_path\":\"$W/proj/src/a.txt\"}"
export HOME="$W/home"
# hyperfine 1.15 has no --input: the shell redirects stdin (its spawn time is measured
# and subtracted by hyperfine).
hyperfine --warmup 20 --runs ${RUNS:-300} --export-json "$W/hyperfine.json" \
  -n '/bin/true' "/bin/true < $W/bash-allow.json" \
  -n 'Bash git status (allow)' "$BIN hook claude --state-dir $W/state < $W/bash-allow.json" \
  -n 'Bash compound (ask)' "$BIN hook claude --state-dir $W/state < $W/bash-compound.json" \
  -n 'Bash rm -rf / (deny)' "$BIN hook claude --state-dir $W/state < $W/bash-floor.json" \
  -n 'Read (allow)' "$BIN hook claude --state-dir $W/state < $W/read.json" 2>&1
python3 - "$W/hyperfine.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f'{r["command"]:28} median {r["median"]*1000:6.2f} ms  mean {r["mean"]*1000:6.2f} ms  max {r["max"]*1000:6.2f} ms')
PY
# The same cases without hyperfine's shell: spawned directly, interleaved with
# /bin/true, ratios to its median (the hook process target is <= 1.5x).
python3 "$HERE/hook_floor.py" "$BIN" "$W" "${RUNS:-300}"
wc -l "$W"/state/sessions/*.jsonl
