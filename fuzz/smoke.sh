#!/usr/bin/env bash
# Smoke run of every fuzz target, each for FUZZ_SECS seconds (default 5) on
# a corpus seeded from fixtures/. Two modes, and the output says which ran:
#  - guided, when the nightly toolchain and cargo-fuzz are installed
#    (`cargo install cargo-fuzz --locked`): `cargo +nightly fuzz run -s none <target>`,
#    libFuzzer steered by coverage instrumentation. Built into
#    ${KHAELOR_FUZZ_TARGET_DIR:-$HOME/.cache/khaelor-perm/fuzz-target}, outside the
#    checkout, so a later run only rebuilds what changed;
#  - unguided otherwise: the same libFuzzer binaries built with the stable toolchain
#    into the main target directory, without instrumentation (mutations of the seeds).
# FUZZ_MODE=guided or FUZZ_MODE=unguided forces one (guided fails without nightly or
# cargo-fuzz). Prints each target's executions; a crash or failed assertion fails the
# run.
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

have_nightly() { rustup toolchain list 2>/dev/null | grep -q '^nightly'; }
have_cargo_fuzz() { cargo +nightly fuzz --version >/dev/null 2>&1; }
mode="${FUZZ_MODE:-}"
if [ -z "$mode" ]; then
  if have_nightly && have_cargo_fuzz; then
    mode=guided
  else
    mode=unguided
    why="no nightly toolchain"
    have_nightly && why="cargo-fuzz is not installed (cargo install cargo-fuzz --locked)"
    echo "== fuzz smoke: guided run skipped: $why; running the unguided smoke"
  fi
fi

# run_one TARGET COMMAND...: runs one target, prints its executions, fails on a crash.
run_one() {
  local t=$1
  shift
  local out
  out="$("$@" 2>&1)" || {
    echo "$out" | grep -v '^#' | tail -40
    echo "== fuzz smoke ($mode): $t FAILED (the crashing input is in fuzz/crash-* or fuzz/artifacts/$t/)"
    exit 1
  }
  execs="$(echo "$out" | sed -n 's/^stat::number_of_executed_units: *//p' | tail -1)"
  cov="$(echo "$out" | grep -o 'cov: [0-9]*' | tail -1 || true)"
  echo "== fuzz smoke ($mode): $t ok, ${execs:-?} executions in ${secs}s${cov:+, $cov edges}"
}

flags=(-max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1)
case "$mode" in
  guided)
    target_dir="${KHAELOR_FUZZ_TARGET_DIR:-$HOME/.cache/khaelor-perm/fuzz-target}"
    echo "== fuzz smoke: building the targets (nightly, guided: cargo-fuzz coverage instrumentation) into $target_dir"
    cargo +nightly fuzz build -s none --target-dir "$target_dir" >/dev/null
    for t in "${targets[@]}"; do
      mkdir -p "corpus/$t"
      run_one "$t" cargo +nightly fuzz run -s none --target-dir "$target_dir" "$t" "corpus/$t" -- "${flags[@]}"
    done
    ;;
  unguided)
    echo "== fuzz smoke: building the targets (stable, unguided: no coverage instrumentation)"
    cargo build --quiet --bins --target-dir ../target
    for t in "${targets[@]}"; do
      mkdir -p "corpus/$t"
      run_one "$t" "../target/debug/$t" "corpus/$t" "${flags[@]}"
    done
    ;;
  *)
    echo "fuzz smoke: FUZZ_MODE must be guided or unguided, not \`$mode\`" >&2
    exit 2
    ;;
esac
