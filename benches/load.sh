#!/usr/bin/env bash
# Load benchmark of the HTTP service (a measurement, not a test).
#
# Builds the release binary, starts `khaelor-perm serve` on loopback with a throwaway
# state dir and project, then runs wrk for $DURATION at $CONNS connections against
#   1. POST /v1/evaluate, cycling through ~200 real commands from the shared corpus
#      (every Nth line of tldr.txt and nl2bash.txt, so the mix is stable run to run);
#   2. GET /healthz (the floor: HTTP stack, no analysis).
# Prints req/s, p50, p99, non-2xx count for each, and the server's RSS (VmRSS) after.
#
# Needs wrk (`apt-get install -y wrk`). Knobs: DURATION=10s CONNS=8 THREADS=2
# COMMANDS=200 CORPUS=dir-with-tldr.txt-and-nl2bash.txt BIN=prebuilt-binary.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
DURATION="${DURATION:-10s}"
CONNS="${CONNS:-8}"
THREADS="${THREADS:-2}"
COMMANDS="${COMMANDS:-200}"

command -v wrk >/dev/null || { echo "load.sh: wrk not found: apt-get install -y wrk" >&2; exit 2; }

corpus="${CORPUS:-}"
if [ -z "$corpus" ]; then
    for c in ../shared/corpus /work/shared/corpus; do
        if [ -f "$c/tldr.txt" ]; then corpus="$c"; break; fi
    done
fi
[ -n "$corpus" ] || { echo "load.sh: no corpus found; set CORPUS=dir" >&2; exit 2; }

if [ -n "${BIN:-}" ]; then
    bin="$(realpath "$BIN")"
else
    cargo build --release --quiet --bin khaelor-perm
    bin="$here/target/release/khaelor-perm"
fi

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/project/src" "$work/home" "$work/state"
printf 'fn main() {}\n' > "$work/project/src/main.rs"

# ~COMMANDS commands, spread evenly over both corpus files, blank lines and lines over
# 4 KiB dropped.
cat "$corpus/tldr.txt" "$corpus/nl2bash.txt" | awk 'length($0) > 0 && length($0) < 4096' > "$work/all.txt"
total="$(wc -l < "$work/all.txt")"
step=$(( total / COMMANDS )); [ "$step" -ge 1 ] || step=1
awk -v s="$step" -v n="$COMMANDS" 'NR % s == 0 && c < n { print; c++ }' "$work/all.txt" > "$work/commands.txt"

cat > "$work/evaluate.lua" <<LUA
local root = "$work/project"
local bodies = {}

local function json_string(s)
  s = s:gsub('\\\\', '\\\\\\\\'):gsub('"', '\\\\"')
  s = s:gsub('[%c]', function(c) return string.format('\\\\u%04x', c:byte()) end)
  return '"' .. s .. '"'
end

for line in io.lines("$work/commands.txt") do
  bodies[#bodies + 1] = '{"tool":"bash","input":{"command":' .. json_string(line) ..
    '},"projectRoot":' .. json_string(root) .. '}'
end

local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/evaluate", { ["Content-Type"] = "application/json" }, bodies[i])
end
LUA

cat > "$work/report.lua" <<'LUA'
done = function(summary, latency, requests)
  local secs = summary.duration / 1e6
  local non2xx = summary.errors.status
  io.write(string.format("RESULT req/s=%.0f p50=%.2fms p99=%.2fms requests=%d non2xx=%d errors=%d\n",
    summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
cat "$work/evaluate.lua" "$work/report.lua" > "$work/evaluate_report.lua"

HOME="$work/home" RUST_LOG=error ${SERVER_ENV:-} "$bin" serve --addr 127.0.0.1:0 --state-dir "$work/state" \
    > "$work/stdout" 2> "$work/stderr" &
pid=$!
for _ in $(seq 1 100); do
    grep -q '^listening on ' "$work/stdout" 2>/dev/null && break
    sleep 0.05
done
url="$(sed -n 's/^listening on //p' "$work/stdout")"
[ -n "$url" ] || { echo "load.sh: server did not start" >&2; cat "$work/stderr" >&2; exit 1; }

# A warm-up call: anything but 200 here is a bug, not load.
bad=0
status="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
    --data "{\"tool\":\"bash\",\"input\":{\"command\":\"git status\"},\"projectRoot\":\"$work/project\"}" \
    "$url/v1/evaluate" || true)"
[ "$status" = "200" ] || { echo "load.sh: warm-up answered $status" >&2; bad=1; }

echo "server: $url  corpus: $corpus ($(wc -l < "$work/commands.txt") commands)  duration: $DURATION  connections: $CONNS  threads: $THREADS"
echo "== POST /v1/evaluate (corpus mix)"
wrk -t "$THREADS" -c "$CONNS" -d "$DURATION" --latency -s "$work/evaluate_report.lua" "$url" | grep '^RESULT'
echo "== GET /healthz"
wrk -t "$THREADS" -c "$CONNS" -d "$DURATION" --latency -s "$work/report.lua" "$url/healthz" | grep '^RESULT'
echo "== server RSS after both runs: $(awk '/^VmRSS/ { print $2 " " $3 }' "/proc/$pid/status")  (peak: $(awk '/^VmHWM/ { print $2 " " $3 }' "/proc/$pid/status"))"
exit "$bad"
