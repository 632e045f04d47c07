#!/usr/bin/env bash
# Smoke run of every fuzz target (issue 15), each on a corpus seeded from fixtures/:
# builds the targets with the stable toolchain into the main target directory and runs
# each libFuzzer binary for FUZZ_SECS seconds (default 5). Without cargo-fuzz's
# coverage instrumentation the search is unguided (mutations of the seeds), which is
# what fits the CI budget; a guided run needs nightly and cargo-fuzz:
#   cd fuzz && cargo +nightly fuzz run -s none <target>
# Prints each target's executions; a crash or failed assertion fails the run.
set -euo pipefail
cd "$(dirname "$0")"

secs="${FUZZ_SECS:-5}"
targets=(decide_ast decide_lexer config_loader grant_writer patch_parser rule_compile)

# Seeds: every "command" and "patch" string of the golden tables, and the sample
# configs. The corpus directories are scratch (git-ignored).
python3 - <<'PY'
import json, os, glob, hashlib
def put(target, text):
    d = os.path.join("corpus", target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(text.encode()).hexdigest()
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
def walk(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, str) and k in ("command", "patch", "pattern"):
                out.append((k, x))
            walk(x, out)
    elif isinstance(v, list):
        for x in v:
            walk(x, out)
for path in glob.glob("../fixtures/*.jsonl"):
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            found = []
            walk(json.loads(line), found)
        except ValueError:
            continue
        for k, x in found:
            if k == "command":
                put("decide_ast", x); put("decide_lexer", x)
            elif k == "patch":
                put("patch_parser", x)
            else:
                put("rule_compile", x + "\n" + x)
for path in glob.glob("../fixtures/configs/*.json"):
    text = open(path, encoding="utf-8").read()
    put("config_loader", text)
    put("grant_writer", text + "\nnpm run build")
PY

echo "== fuzz smoke: building the targets (stable, unguided: no coverage instrumentation)"
cargo build --quiet --bins --target-dir ../target
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  out="$("../target/debug/$t" "corpus/$t" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 2>&1)" || {
    echo "$out" | grep -v '^#' | tail -40
    echo "== fuzz smoke: $t FAILED (the crashing input is in fuzz/crash-* or fuzz/artifacts/)"
    exit 1
  }
  execs="$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p')"
  echo "== fuzz smoke: $t ok, ${execs:-?} executions in ${secs}s"
done
