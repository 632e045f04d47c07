"""Python bashlex (PyPI) over the same commands: parse, and parse plus a visitor that
collects every command's words. Usage: python bashlex_bench.py FILE...  (prints JSON)."""
import json
import sys
import time

import bashlex

commands = []
for f in sys.argv[1:]:
    with open(f, encoding="utf-8") as fh:
        commands += [l.rstrip("\n") for l in fh if l.strip() and not l.startswith("#")]


class Collect(bashlex.ast.nodevisitor):
    def __init__(self):
        self.found = []

    def visitcommand(self, node, parts):
        self.found.append([p.word for p in parts if p.kind == "word"])


def walk(trees):
    c = Collect()
    for t in trees:
        c.visit(t)
    return c.found


for c in commands[:500]:  # warm-up, not measured
    try:
        walk(bashlex.parse(c))
    except Exception:
        pass

parse, both, failed = [], [], 0
clock = time.perf_counter_ns
for c in commands:
    t0 = clock()
    try:
        trees = bashlex.parse(c)
    except Exception:  # bashlex refuses much of bash; the time to refuse still counts
        trees = None
        failed += 1
    t1 = clock()
    if trees is not None:
        try:
            walk(trees)
        except Exception:
            failed += 1
    t2 = clock()
    parse.append(t1 - t0)
    both.append(t2 - t0)


def stats(a):
    s = sorted(a)
    return {"medianNs": s[len(s) // 2], "meanNs": sum(s) / len(s), "p99Ns": s[int(len(s) * 0.99)]}


print(json.dumps({
    "commands": len(commands),
    "failed": failed,
    "stages": [
        {"stage": "bashlex: parse", **stats(parse)},
        {"stage": "bashlex: parse + command walk", **stats(both)},
    ],
}))
