#!/usr/bin/env python3
"""Domain packs against another guard's own test corpus, as an external check.

Usage: python3 benches/packs_peers.py [--bin PATH] CORPUS.toml...

Each file holds `[[case]]` tables with `command` and `expected` (or
`expected_decision`): "deny" for what that guard must block, "allow" for what it must
let through. Every command is decided by `khaelor-perm check --json` under the default
preset in a fresh git project, and the script prints:

- must-block cases: how many we allow (the check fails unless 0), deny or ask, and
  of those how many carry a domain pack's reason, or which other reasons;
- must-allow cases: how many a domain pack names (false positives of the packs) and
  our decisions on them (we ask for much the other guard lets through: it only blocks
  destruction, we also ask for what we cannot verify).

The corpora are not part of this repository (they are another project's tests): pass
the paths of a checkout of them. Exit status 1 when a must-block case is allowed.
"""

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter


def decide(binary, root, home, command):
    out = subprocess.run(
        [binary, "check", "--json", "--root", root, "--", command],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": home},
        timeout=60,
    )
    # The exit status is the decision (0 allow, 3 ask, 4 deny, 5 contain); a
    # failure prints no decision.
    if '"decision"' not in out.stdout:
        raise SystemExit(f"check failed on {command!r}: {out.stderr}")
    return json.loads(out.stdout)


def reasons(d):
    kinds = Counter()
    packs = set()
    for r in d.get("requests", []):
        for reason in r.get("reasons", []) or []:
            kinds[reason["kind"]] += 1
            if reason["kind"] == "destructive":
                packs.add(f'{reason["pack"]}:{reason["severity"]}')
    return kinds, packs


def main():
    args = sys.argv[1:]
    binary = "target/release/khaelor-perm"
    if args[:1] == ["--bin"]:
        binary, args = args[1], args[2:]
    cases = []
    for path in args:
        with open(path, "rb") as f:
            for c in tomllib.load(f).get("case", []):
                want = c.get("expected") or c.get("expected_decision")
                # An empty command is refused as bad input before any decision.
                if c.get("command", "").strip() and want in ("allow", "deny"):
                    cases.append((os.path.basename(path), c["command"], want))
    with tempfile.TemporaryDirectory() as tmp:
        root, home = os.path.join(tmp, "proj"), os.path.join(tmp, "home")
        os.makedirs(root)
        os.makedirs(home)
        subprocess.run(["git", "init", "-q", root], check=True)
        block = {"allow": [], "ask": 0, "deny": 0, "pack": 0, "other": {}}
        allow = {"decisions": Counter(), "pack": []}
        for source, command, want in cases:
            d = decide(binary, root, home, command)
            kinds, packs = reasons(d)
            if want == "deny":
                if d["decision"] == "allow":
                    block["allow"].append(command)
                    continue
                block[d["decision"] if d["decision"] in ("ask", "deny") else "ask"] += 1
                if packs:
                    block["pack"] += 1
                else:
                    why = ",".join(sorted(kinds)) or "the rules alone"
                    block["other"].setdefault(why, []).append(command)
            else:
                allow["decisions"][d["decision"]] += 1
                if packs:
                    allow["pack"].append((f"{source}: {command}", sorted(packs)))
    n_block = sum(1 for c in cases if c[2] == "deny")
    n_allow = len(cases) - n_block
    print(f"must-block cases: {n_block}")
    print(f"  allowed: {len(block['allow'])}")
    for c in block["allow"]:
        print(f"    {c!r}")
    print(f"  denied: {block['deny']}, asked: {block['ask']}")
    print(f"  with a domain pack's reason: {block['pack']}")
    for k, v in sorted(block["other"].items(), key=lambda kv: -len(kv[1])):
        print(f"  without one, stopped by {k}: {len(v)}")
        for c in v:
            print(f"    {c!r}")
    print(f"must-allow cases: {n_allow}")
    print(f"  our decisions: {dict(allow['decisions'])}")
    print(f"  named by a domain pack: {len(allow['pack'])}")
    for c, p in allow["pack"]:
        print(f"    {c}: {', '.join(p)}")
    return 1 if block["allow"] else 0


if __name__ == "__main__":
    sys.exit(main())
