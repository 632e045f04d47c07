"""Hook process against the process floor, side by side in one run.

Each round starts /bin/true and then every hook case, each a fresh process with its
stdin read from the case's file (no shell in between, so nothing is subtracted), and
times it from spawn to exit. Prints per case the median, p90 and the ratio to the
/bin/true median of the same run.
Usage: python3 benches/hook_floor.py BIN WORKDIR ROUNDS   (hook_claude.sh calls it)
"""
import os
import statistics
import subprocess
import sys
import time

bin_, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [
    ("/bin/true", ["/bin/true"], "bash-allow"),
    ("Bash git status (allow)", [bin_, "hook", "claude", "--state-dir", f"{work}/state"], "bash-allow"),
    ("Bash compound (ask)", [bin_, "hook", "claude", "--state-dir", f"{work}/state"], "bash-compound"),
    ("Bash rm -rf / (deny)", [bin_, "hook", "claude", "--state-dir", f"{work}/state"], "bash-floor"),
    ("Read (allow)", [bin_, "hook", "claude", "--state-dir", f"{work}/state"], "read"),
    ("--version", [bin_, "--version"], "bash-allow"),
]
times = {name: [] for name, _, _ in cases}
for r in range(rounds + 10):
    for name, argv, inp in cases:
        with open(f"{work}/{inp}.json", "rb") as f:
            t = time.perf_counter_ns()
            subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, check=True)
            el = time.perf_counter_ns() - t
        if r >= 10:  # warm-up rounds
            times[name].append(el / 1e6)
floor = statistics.median(times["/bin/true"])
print(f"{'case':28} {'median':>9} {'p90':>9}  ratio to /bin/true ({rounds} rounds, interleaved)")
for name, _, _ in cases:
    t = sorted(times[name])
    med = statistics.median(t)
    print(f"{name:28} {med:7.3f}ms {t[int(len(t) * 0.9)]:7.3f}ms  {med / floor:5.2f}x")
