#!/usr/bin/env bash
# Cost of the sandbox `contain` runs commands in (a measurement, not a test): the
# start-up of `khaelor-perm exec --contain -- /bin/true` side by side with the bare
# `/bin/true` and with bubblewrap alone (the same namespaces, no profile), in one run,
# interleaved so machine noise hits all three alike. Prints median, p90 and the
# sandbox's own cost (median contained minus median bare). Target: under 10 ms.
#
# The project is a small one made here (a git repository, a Cargo crate, a node
# package, 200 source files); HOME is the caller's, so the HOME walk for secrets is the
# real one. The project settles for 4 s before the runs: a profile is kept between
# calls (HOME/.cache/khaelor-perm/contain) only for directories unchanged for 3 s.
# Knobs: RUNS=200 BIN=prebuilt-binary (default: builds the release binary),
# BEFORE=another-binary (measured side by side, e.g. the previous release).
# Needs bubblewrap (tests/setup/contain.sh).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${RUNS:-200}"
BIN="${BIN:-}"
if [ -z "$BIN" ]; then
    (cd "$here" && cargo build --release --quiet --bin khaelor-perm)
    BIN="$here/target/release/khaelor-perm"
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
BEFORE="${BEFORE:-}"
[ -x /usr/bin/bwrap ] || { echo "contain_startup.sh: bubblewrap missing: run tests/setup/contain.sh" >&2; exit 2; }

# Outside /tmp: the sandbox's /tmp is private.
work="$(mktemp -d "$here/target/contain-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
proj="$work/proj"
mkdir -p "$proj/src" "$proj/web"
git -C "$proj" init -q
printf '[package]\nname = "b"\nversion = "0.1.0"\n' > "$proj/Cargo.toml"
printf '{"name":"w","scripts":{"test":"true"}}\n' > "$proj/web/package.json"
for i in $(seq 1 200); do echo "fn f$i() {}" > "$proj/src/m$i.rs"; done
echo 'SECRET=1' > "$proj/.env"

sleep 4
python3 - "$BIN" "$proj" "$RUNS" "$BEFORE" <<'PY'
import os, resource, statistics, subprocess, sys, time
bin_, proj, runs, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
bwrap = ["/usr/bin/bwrap", "--die-with-parent", "--new-session", "--unshare-user",
         "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
         "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
         "--tmpfs", "/tmp", "--bind", proj, proj, "--cap-drop", "ALL", "--", "/bin/true"]
cases = {
    "bare /bin/true": ["/bin/true"],
    "bubblewrap alone": bwrap,
    "exec --contain": [bin_, "exec", "--contain", "--", "/bin/true"],
}
if before:
    cases["before: exec --contain"] = [before, "exec", "--contain", "--", "/bin/true"]
times = {k: [] for k in cases}
cpu = {k: [] for k in cases}
for k, argv in cases.items():  # warm-up
    subprocess.run(argv, cwd=proj, check=True)
for _ in range(runs):
    for k, argv in cases.items():
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(argv, cwd=proj, check=True)
        times[k].append((time.perf_counter() - t) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[k].append(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1000)
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
print(f"runs per case: {runs}, project files: {sum(len(f) for _, _, f in os.walk(proj))}")
print(f"load average before: {os.getloadavg()[0]:.1f}")
print(f"{'case':<24} {'median ms':>10} {'p90 ms':>8} {'cpu ms':>8}")
for k, v in times.items():
    print(f"{k:<24} {statistics.median(v):>10.2f} {q(v, 0.9):>8.2f} {statistics.median(cpu[k]):>8.2f}")
own = statistics.median(times["exec --contain"]) - statistics.median(times["bare /bin/true"])
print(f"sandbox start-up (median contained - median bare): {own:.2f} ms (target < 10 ms)")
if before:
    old = statistics.median(times["before: exec --contain"]) - statistics.median(times["bare /bin/true"])
    print(f"before: {old:.2f} ms")
PY
