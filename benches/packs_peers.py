#!/usr/bin/env python3
"""Domain packs against another guard's own test corpus, as an external check.

Usage: python3 benches/packs_peers.py [--bin PATH] CORPUS.toml|TESTS.test.ts...

A `.toml` file holds `[[case]]` tables with `command` and `expected` (or
`expected_decision`): "deny" for what that guard must block, "allow" for what it must
let through. A `.ts` file is a guard's TypeScript tests: every
`assertBlocked('COMMAND', …)` is a must-block case and every `assertAllowed('COMMAND')`
a must-allow one, when COMMAND is a plain string literal (a template with `${…}` is
built at run time and left out). A case whose test changes the environment
(`withEnv`) or passes a working directory depends on a world we do not rebuild: it is
counted apart ("conditional"). Every command is decided by `khaelor-perm check --json` under the default
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
import re
import tomllib
from collections import Counter


def js_string(src, i):
    """The JavaScript string literal starting at src[i], and the index after it, or
    None when it is not a plain literal."""
    quote = src[i]
    if quote not in "'\"`":
        return None
    out, j = [], i + 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}
    while j < len(src):
        c = src[j]
        if c == "\\":
            n = src[j + 1]
            if n in escapes:
                out.append(escapes[n])
                j += 2
            elif n == "x":
                out.append(chr(int(src[j + 2 : j + 4], 16)))
                j += 4
            elif n == "u" and src[j + 2] == "{":
                end = src.index("}", j)
                out.append(chr(int(src[j + 3 : end], 16)))
                j = end + 1
            elif n == "u":
                out.append(chr(int(src[j + 2 : j + 6], 16)))
                j += 6
            elif n == "\n":
                j += 2
            else:
                out.append(n)
                j += 2
            continue
        if c == quote:
            return "".join(out), j + 1
        if quote == "`" and src.startswith("${", j):
            return None
        if c == "\n" and quote != "`":
            return None
        out.append(c)
        j += 1
    return None


def ts_cases(path):
    """(command, want, conditional) for each assertBlocked/assertAllowed call."""
    src = open(path, encoding="utf-8").read()
    cases = []
    for m in re.finditer(r"\bassert(Blocked|Allowed)\(\s*", src):
        lit = js_string(src, m.end())
        if lit is None:
            continue
        command, after = lit
        rest = src[after:].lstrip()
        if rest.startswith("+"):
            continue  # concatenated at run time
        want = "deny" if m.group(1) == "Blocked" else "allow"
        # A third argument (Blocked) or a second (Allowed) is a working directory.
        args_left = 2 if want == "deny" else 1
        depth, k, commas = 0, 0, 0
        while k < len(rest):
            ch = rest[k]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                commas += 1
            k += 1
        tail = rest[:k].rstrip().rstrip(",")
        with_cwd = tail.count(",") >= args_left if commas else False
        block_start = src.rfind("test(", 0, m.start())
        in_env = "withEnv(" in src[block_start : m.start()] if block_start >= 0 else False
        cases.append((command, want, with_cwd or in_env))
    return cases


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
    conditional = []
    for path in args:
        if path.endswith(".ts"):
            for command, want, cond in ts_cases(path):
                if command.strip():
                    source = os.path.basename(path)
                    (conditional if cond else cases).append((source, command, want))
            continue
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
    cond_allowed = []
    if conditional:
        with tempfile.TemporaryDirectory() as tmp:
            root, home = os.path.join(tmp, "proj"), os.path.join(tmp, "home")
            os.makedirs(root)
            os.makedirs(home)
            subprocess.run(["git", "init", "-q", root], check=True)
            for source, command, want in conditional:
                if want == "deny" and decide(binary, root, home, command)["decision"] == "allow":
                    cond_allowed.append(f"{source}: {command}")
        n_cond = sum(1 for c in conditional if c[2] == "deny")
        print(f"conditional must-block cases (their test sets an environment or a cwd): {n_cond}")
        print(f"  allowed here: {len(cond_allowed)}")
        for c in cond_allowed:
            print(f"    {c!r}")
    print(f"must-allow cases: {n_allow}")
    print(f"  our decisions: {dict(allow['decisions'])}")
    print(f"  named by a domain pack: {len(allow['pack'])}")
    for c, p in allow["pack"]:
        print(f"    {c}: {', '.join(p)}")
    return 1 if block["allow"] else 0


if __name__ == "__main__":
    sys.exit(main())
