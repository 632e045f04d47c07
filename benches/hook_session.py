"""The hook's CPU in a long session against a fresh one (a measurement, not a test).

Each binary first records PREFILL calls in one session; then, interleaved ROUNDS
times: `/bin/true`, a call that starts a new session, and a call of the long session.
CPU is user + system of the child, as the speed guard takes it. A hook call reads what
it needs of the session's log (call ids, pending calls, session-only grants), so
without the log's index checkpoint its cost grows with the session.

Usage: python3 benches/hook_session.py BIN[,BIN2…] [ROUNDS=150] [PREFILL=1000]
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

bins = sys.argv[1].split(",")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 150
prefill = int(sys.argv[3]) if len(sys.argv) > 3 else 1000

with tempfile.TemporaryDirectory() as w:
    proj = os.path.join(w, "proj")
    os.makedirs(proj)
    env = dict(os.environ, HOME=os.path.join(w, "home"))

    def call(session, n):
        return json.dumps(
            {
                "session_id": session,
                "cwd": proj,
                "hook_event_name": "PreToolUse",
                "permission_mode": "default",
                "tool_name": "Bash",
                "tool_input": {"command": "git status"},
                "tool_use_id": f"t{n}",
            }
        ).encode()

    def cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def run(argv, stdin):
        before = cpu()
        subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, env=env, check=True)
        return cpu() - before

    state = {b: os.path.join(w, f"state{i}") for i, b in enumerate(bins)}
    for b in bins:
        for i in range(prefill):
            subprocess.run(
                [b, "hook", "claude", "--state-dir", state[b]],
                input=call("long", i),
                stdout=subprocess.DEVNULL,
                env=env,
                check=True,
            )
    times = {"/bin/true": []}
    for b in bins:
        times[f"{b}: new session"] = []
        times[f"{b}: after {prefill} calls"] = []
    for i in range(rounds):
        times["/bin/true"].append(run(["/bin/true"], b""))
        for b in bins:
            hook = [b, "hook", "claude", "--state-dir", state[b]]
            times[f"{b}: new session"].append(run(hook, call(f"new{i}", i)))
            times[f"{b}: after {prefill} calls"].append(run(hook, call("long", prefill + i)))
    floor = statistics.median(times["/bin/true"])
    for name, t in times.items():
        m = statistics.median(t)
        print(f"{name:60} CPU median {m * 1000:.2f} ms ({m / floor:.2f}x /bin/true)")
