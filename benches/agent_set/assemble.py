#!/usr/bin/env python3
"""Rebuild the agent set: the shell commands AI agents really ran in public sessions.

Reads every source of `sources.tsv` from its fetched bare git directory
(`MIRROR/owner+name/repo`) at the pinned commit, extracts the commands the agent ran
through its shell tool (never the model's prose, never its own non-shell tools),
deduplicates them, keeps at most CAP per repository and agent, labels each one and
writes `agent_commands.jsonl` rows as `benches/friction_set.rs::Row` reads them:
`{"command", "label", "kind", "source", "agent", "root"}`.

Labels: `labels.tsv` (ours, keyed by the first 16 hex digits of the sha256 of the
exact command text) first, then the rules of `rule_kind` below. The rules label by
what a command does, never by what khaelor-perm answers.

    python3 benches/agent_set/assemble.py --mirror /work/.mirror --out FILE

Standard library only.
"""

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter, OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
CAP = 110  # commands per repository and agent
MAX_LEN = 4000  # longer commands (whole files written inline) are dropped
KINDS = ["read", "edit", "build", "other", "risky"]


def h16(command):
    return hashlib.sha256(command.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------
# Reading the mirrors
# ---------------------------------------------------------------------------------


def git(gitdir, *args):
    return subprocess.run(
        ["git", "--git-dir", gitdir, *args], check=True, capture_output=True
    ).stdout


def list_files(gitdir, commit, globs):
    out = git(gitdir, "ls-tree", "-r", "-z", "--name-only", commit)
    paths = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
    return sorted(p for p in paths if any(fnmatch.fnmatch(p, g) for g in globs))


def read_blob(gitdir, commit, path):
    data = git(gitdir, "show", f"{commit}:{path}")
    return data.decode("utf-8", "replace")


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def strip_ansi(text):
    return ANSI.sub("", text)


# ---------------------------------------------------------------------------------
# Extractors: text of one file -> [(command, root or None)]
# ---------------------------------------------------------------------------------


def unwrap_shell(cmd):
    """`bash -lc 'script'` (Codex's exec argv, quoted) -> `script`."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        return None
    if (
        len(words) == 3
        and os.path.basename(words[0]) in ("bash", "zsh", "sh")
        and words[1] in ("-lc", "-c")
    ):
        return words[2]
    return None


CODEX_EXEC = re.compile(r"^\[\d{4}-\d\d-\d\dT[\d:]+\] exec (.*)$")
CODEX_STAMP = re.compile(r"^\[\d{4}-\d\d-\d\dT[\d:]+\] ")


def codex_exec_log(text):
    """Codex `exec` logs of a terminal-bench run: `[ts] exec bash -lc '...' in DIR`."""
    lines = strip_ansi(text).split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = CODEX_EXEC.match(lines[i])
        if not m:
            i += 1
            continue
        buf = [m.group(1)]
        i += 1
        while i < len(lines) and not CODEX_STAMP.match(lines[i]):
            buf.append(lines[i])
            i += 1
        whole = "\n".join(buf).rstrip()
        mm = re.match(r"(?s)^(.*) in (/\S*)$", whole)
        if not mm:
            continue
        script = unwrap_shell(mm.group(1))
        if script is not None:
            out.append((script, mm.group(2)))
    return out


BASH_BLOCK = re.compile(r"```bash\n(.*?)\n```", re.S)


def mini_swe_agent_log(text):
    """mini-swe-agent's console in a terminal-bench run: each step's one bash block."""
    text = strip_ansi(text)
    out = []
    for seg in re.split(r"\nmini-swe-agent \(step \d+, \$[\d.]+\):", text)[1:]:
        seg = seg.split("<returncode>", 1)[0]
        blocks = BASH_BLOCK.findall(seg)
        if len(blocks) != 1:  # mini runs a response only when it has exactly one
            continue
        # The console wraps lines at its width (160 columns): a command with a line
        # that long may have been cut in two and is not taken.
        if any(len(line) >= 120 for line in blocks[0].split("\n")[:-1]):
            continue
        out.append((blocks[0], "/app"))
    return out


def mini_swe_agent_traj(text):
    d = json.loads(text)
    out = []
    for m in d.get("messages", []):
        if m.get("role") != "assistant" or not isinstance(m.get("content"), str):
            continue
        blocks = BASH_BLOCK.findall(m["content"])
        if len(blocks) == 1:
            out.append((blocks[0], "/testbed"))
    return out


# SWE-agent's own tools (not shell commands): dropped.
SWE_AGENT_TOOLS = {
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_dir",
    "search_file", "find_file", "submit", "str_replace_editor", "filemap", "insert",
    "append", "exit_forfeit", "skip", "debug_start", "debug_stop", "debug_step",
    "debug_add_breakpoint", "debug_remove_breakpoint", "debug_continue", "debug_exec",
    "connect_start", "connect_sendline", "connect_exec", "connect_stop",
    "decompile", "disassemble", "exit_cost", "exit_context", "exit_error",
    "exit_format", "review_on_submit", "review_on_submit_m", "set_cursors",
}


def swe_agent_traj(text):
    d = json.loads(text)
    out = []
    for step in d.get("trajectory", []):
        action = (step.get("action") or "").strip()
        if not action:
            continue
        first = action.split(None, 1)[0]
        if first in SWE_AGENT_TOOLS:
            continue
        root = None
        try:
            state = step.get("state") or {}
            if isinstance(state, str):
                state = json.loads(state)
            wd = state.get("working_dir")
            if isinstance(wd, str) and wd.startswith("/") and wd != "/":
                root = wd
        except (ValueError, AttributeError):
            pass
        out.append((action, root))
    return out


CC_MD_BASH = re.compile(
    r'"name": "Bash",\s*"input": \{\s*"command": ("(?:[^"\\]|\\.)*")', re.S
)


def claude_code_md_export(text):
    """Claude Code sessions exported as markdown with the raw tool_use JSON."""
    m = re.search(r"\*\*Project Path\*\*: `([^`]+)`", text)
    root = m.group(1) if m else None
    return [(json.loads(s), root) for s in CC_MD_BASH.findall(text)]


def claude_code_jsonl(text):
    out = []
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") != "assistant":
            continue
        content = (e.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for c in content:
            if c.get("type") == "tool_use" and c.get("name") == "Bash":
                cmd = (c.get("input") or {}).get("command")
                if isinstance(cmd, str):
                    out.append((cmd, e.get("cwd")))
    return out


def claude_transcript_md(text):
    """kiliman/claude-transcript's rendering: `💻 **Bash: ...**` then a shell block."""
    return [
        (c, None)
        for c in re.findall(r"💻 \*\*Bash[^\n]*\*\*\n```shell\n(.*?)\n```", text, re.S)
    ]


def cctrace_md(text):
    """cctrace's export: `🔧 **Tool Use: Bash**` then the input as a JSON block."""
    m = re.search(r"\*\*Project:\*\* `([^`]+)`", text)
    root = m.group(1) if m else None
    out = []
    for blob in re.findall(r"🔧 \*\*Tool Use: Bash\*\*[^\n]*\n```json\n(.*?)\n```", text, re.S):
        try:
            cmd = json.loads(blob).get("command")
        except ValueError:
            continue
        if isinstance(cmd, str):
            out.append((cmd, root))
    return out


TOOL_INPUT = re.compile(r"🔧 (?:Tool|Using tool): Bash\nInput: (\{.*?\n\})", re.S)


def automaker_output(text):
    """Automaker's agent-output.md: `🔧 Tool: Bash` / `Input: {json}`. Codex runs its
    commands as `/bin/zsh -lc '...'`; only those are taken (the agent is Codex)."""
    out = []
    for blob in TOOL_INPUT.findall(text):
        try:
            cmd = json.loads(blob).get("command")
        except ValueError:
            continue
        if isinstance(cmd, str):
            script = unwrap_shell(cmd)
            if script is not None:
                out.append((script, None))
    return out


def tool_input_md(text):
    """A Claude Code log rendered as `🔧 Using tool: Bash` / `Input: {json}`."""
    out = []
    for blob in TOOL_INPUT.findall(text):
        try:
            cmd = json.loads(blob).get("command")
        except ValueError:
            continue
        if isinstance(cmd, str):
            out.append((cmd, None))
    return out


def specstory(text):
    """SpecStory's Cursor histories. A terminal call is rendered as
    `Tool use: **run_terminal_cmd**` (or `run_terminal_command_v2`) then a bash block;
    in the newer format inside `<tool-use data-tool-type="shell">`; in the oldest
    format as a bash block right after a `---` separator, followed by a plain
    output block. A bash block in the assistant's prose is none of these."""
    out = []
    lines = text.split("\n")
    n = len(lines)
    i = 0
    while i < n:
        if lines[i] != "```bash":
            i += 1
            continue
        j = i + 1
        while j < n and lines[j] != "```":
            j += 1
        cmd = "\n".join(lines[i + 1 : j])
        prev = [x for x in lines[max(0, i - 4) : i] if x.strip()]
        before = prev[-1] if prev else ""
        after = [x for x in lines[j + 1 : j + 4] if x.strip()]
        is_call = (
            re.search(r"Tool use: \*\*run_terminal_(cmd|command_v2)\*\*", before)
            or "Run command:" in before
            or (before == "---" and after[:1] == ["```"])
        )
        if is_call and cmd.strip():
            out.append((cmd, None))
        i = j + 1
    return out


EXTRACTORS = {
    "codex-exec-log": codex_exec_log,
    "mini-swe-agent-log": mini_swe_agent_log,
    "mini-swe-agent-traj": mini_swe_agent_traj,
    "swe-agent-traj": swe_agent_traj,
    "claude-code-md-export": claude_code_md_export,
    "claude-code-jsonl": claude_code_jsonl,
    "claude-transcript-md": claude_transcript_md,
    "cctrace-md": cctrace_md,
    "automaker-output": automaker_output,
    "tool-input-md": tool_input_md,
    "specstory": specstory,
}

# PowerShell (a Windows session's terminal) is not a POSIX shell: not taken.
POWERSHELL = re.compile(r"(^|[;|]\s*)[A-Z][a-z]+-[A-Z][A-Za-z]+\b|\$env:|^powershell", re.M)


def usable(cmd):
    if not cmd.strip() or len(cmd) > MAX_LEN:
        return False
    if POWERSHELL.search(cmd):
        return False
    return True


# ---------------------------------------------------------------------------------
# The rules (first pass). Each simple command of a list or pipeline gets a kind; the
# command's kind is the strongest of its parts, in the order
# read < edit < build < other < risky.
#
#   read   inspection only: cat, grep, ls, find without writers, git status/log/diff,
#          version queries, `bash -n`, `echo` without a redirection, ...
#   edit   an in-project file operation: mkdir, touch, cp/mv/rm inside the project,
#          a redirection or heredoc into a project file, sed -i, chmod of a project
#          file, git add/commit/checkout/stash/reset/... (the project's own git).
#   build  building, testing or running the project's own code: pytest, make,
#          cargo build, npm test/run, tsc, python script.py, node x.js, py_compile.
#   other  benign but beyond the project: installs, the network, writes outside the
#          project (/tmp included), services, processes, sudo, docker, git push.
#   risky  destroys or exfiltrates: rm -rf outside the project or of home, reads of
#          credentials (ssh keys, cloud credentials, .env files, tokens), curl|sh,
#          chmod 777 of the system, a forced push, killing all processes.
# ---------------------------------------------------------------------------------

ORDER = {k: i for i, k in enumerate(KINDS)}

READ_PROGS = {
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ls",
    "ll", "tree", "wc", "file", "stat", "du", "df", "pwd", "echo", "printf", "which",
    "whereis", "type", "whoami", "id", "uname", "date", "hostname", "ps", "pgrep",
    "diff", "cmp", "sort", "uniq", "cut", "awk", "jq", "yq", "nl", "od", "xxd",
    "hexdump", "strings", "readlink", "realpath", "basename", "dirname", "true",
    "false", "test", "[", "[[", "sleep", "column", "tr", "cd", "pushd", "popd",
    "printenv", "nproc", "free", "uptime", "lsb_release", "history", "fd", "fdfind",
    "sha256sum", "md5sum", "shasum", "cksum", "base64", "comm", "paste", "expand",
    "fold", "fmt", "rev", "seq", "tac", "zcat", "bat", "exit", "clear", "locale",
    "getconf", "ulimit", "arch", "tty", "lscpu", "groups", "look", "apropos", "man",
    "info", "help", "time", "command", "hash", "set", "wait", "jobs", "ldd", "nm",
    "objdump", "readelf", "lsof", "netstat", "ss", "top", "htop", "vmstat", "iostat",
    "identify", "ffprobe", "exiftool", "pdfinfo", "pdftotext", "unzip -l", "alias",
    "declare", "local", "read", "shopt", "trap", "return", "break", "continue",
    "source_never", "env_list", "mount", "findmnt", "blkid", "lsblk", "dmesg",
    "journalctl", "who", "w", "last", "getent", "host", "dig", "nslookup",
}
READ_PROGS.discard("source_never")
READ_PROGS.discard("env_list")

EDIT_PROGS = {"mkdir", "touch", "cp", "mv", "ln", "rm", "rmdir", "chmod", "tee", "truncate", "patch", "unzip", "tar", "gzip", "gunzip", "zip", "install", "dos2unix", "split", "csplit", "mktemp"}

BUILD_PROGS = {
    "pytest", "py.test", "tox", "nox", "make", "cmake", "ninja", "tsc", "jest",
    "vitest", "mocha", "eslint", "prettier", "ruff", "black", "isort", "flake8",
    "mypy", "pylint", "pyright", "gcc", "g++", "cc", "clang", "clang++", "javac",
    "java", "mvn", "gradle", "gradlew", "rustc", "deno", "php", "ruby", "perl",
    "node", "python", "python3", "python2", "bun", "ts-node", "tsx", "go", "cargo",
    "dotnet", "rake", "rspec", "bundle", "playwright", "cypress", "next", "vite",
    "webpack", "rollup", "esbuild", "swift", "swiftc", "kotlinc", "scalac", "sbt",
    "ghc", "cabal", "stack", "mix", "elixir", "erl", "lua", "R", "Rscript", "julia",
    "octave", "gfortran", "f77", "nasm", "as", "ld", "ar", "strip", "gdb", "valgrind",
    "coverage", "uvicorn", "gunicorn", "flask", "django-admin", "alembic", "jupyter",
    "sphinx-build", "mkdocs", "hugo", "jekyll", "storybook", "turbo", "nx", "lerna",
    "tcc", "bash", "sh", "zsh", "source", ".", "xvfb-run", "hyperfine", "biome",
    "knip", "stylelint", "golangci-lint", "shellcheck", "hadolint", "bandit",
    "pre-commit", "convex", "expo", "flutter", "dart", "pnpm", "yarn", "npm", "npx",
    "uv", "poetry", "pipenv", "hatch", "pdm", "conda_run", "tox-run", "minsky",
    "wasm-pack", "trunk", "maturin", "scons", "bazel", "meson", "qemu-system-x86_64",
    "sqlite3", "pdflatex", "latexmk", "pandoc", "ffmpeg", "convert", "magick",
}
BUILD_PROGS.discard("conda_run")
BUILD_PROGS.discard("tox-run")

OTHER_PROGS = {
    "pip", "pip3", "apt", "apt-get", "yum", "dnf", "apk", "brew", "port", "snap",
    "curl", "wget", "ssh", "scp", "rsync", "sftp", "ftp", "nc", "ncat", "netcat",
    "telnet", "ping", "traceroute", "docker", "docker-compose", "podman", "kubectl",
    "helm", "terraform", "systemctl", "service", "launchctl", "sudo", "su", "kill",
    "pkill", "killall", "gh", "open", "xdg-open", "code", "cursor", "vercel",
    "netlify", "firebase", "supabase", "heroku", "aws", "gcloud", "az", "fly",
    "flyctl", "wrangler", "railway", "psql", "mysql", "redis-cli", "mongo", "mongosh",
    "conda", "pyenv", "nvm", "rustup", "sdk", "corepack", "gem", "crontab", "at",
    "screen", "tmux", "osascript", "defaults", "say", "pbcopy", "pbpaste",
    "xclip", "git-lfs", "ollama", "huggingface-cli", "modal", "sqlcmd", "chown",
    "useradd", "usermod", "passwd", "iptables", "ufw", "mount_never",
    "alias_never", "pipx", "asdf", "volta", "fnm", "ngrok", "cloudflared",
    "openssl", "gpg", "john", "hashcat", "7z", "7za", "binwalk", "nmap", "tcpdump",
    "tshark", "stripe", "claude", "codex", "aider", "specstory", "update-alternatives",
    "ldconfig", "dpkg", "rpm", "locale-gen", "timedatectl", "hostnamectl", "reboot",
    "shutdown", "xargs_never", "watch", "ipython",
}
for x in ("mount_never", "alias_never", "xargs_never"):
    OTHER_PROGS.discard(x)

CRED_PATHS = re.compile(
    r"(~|\$HOME|/home/[^/\s]+|/Users/[^/\s]+|/root)/\.(ssh|aws|gnupg|netrc|git-credentials|docker/config|kube|npmrc|pypirc|config/gh|cargo/credentials|password-store|bash_history|zsh_history)"
    r"|(^|[\s/'\"=])\.env(\.[\w.-]+)?(\s|$|['\"])"
    r"|id_rsa|id_ed25519|credentials\.json|secrets?\.(pem|json|ya?ml)|\.pem\b|\.key\b"
    r"|\$\{?[A-Z_]*(API_KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z_]*\}?"
    r"|gh auth token|security find-(generic|internet)-password"
)
ENV_TEMPLATE = re.compile(r"\.env\.(example|sample|template|dist)\b")


def split_parts(cmd):
    """Top-level simple commands of a list/pipeline (heredoc bodies removed)."""
    body = cmd.replace("\\\n", " ")
    body = re.sub(
        r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?\n[ \t]*\2[ \t]*(?=\n|$)",
        r" <<HEREDOC\3",
        body,
        flags=re.S,
    )
    parts, cur, q, i = [], [], None, 0
    while i < len(body):
        c = body[i]
        if q:
            cur.append(c)
            if c == q:
                q = None
            elif c == "\\" and q == '"' and i + 1 < len(body):
                cur.append(body[i + 1])
                i += 1
        elif c in "'\"":
            q = c
            cur.append(c)
        elif c == "\\" and i + 1 < len(body):
            cur.append(c + body[i + 1])
            i += 1
        elif c in ";\n" or (c in "&|" and body[i : i + 2] in ("&&", "||")):
            parts.append("".join(cur))
            cur = []
            if body[i : i + 2] in ("&&", "||"):
                i += 1
        elif c == "|":
            parts.append("".join(cur))
            cur = ["|PIPE|"]
        elif c == "&" and body[i : i + 2] != "&>" and (i == 0 or body[i - 1] not in "><"):
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip() and p.strip() != "|PIPE|"], body


def words_of(part):
    piped = part.startswith("|PIPE|")
    part = part.replace("|PIPE|", "", 1).strip()
    try:
        w = shlex.split(part, comments=True)
    except ValueError:
        w = part.split()
    return w, piped


# Whether the working directory is in the project: a `cd` to a directory outside it
# (an absolute path not under the root, or one under home) makes relative paths
# name things outside the project until the next `cd`. Set by `rule_kind`.
CWD = {"inside": True}


def inside(path, root):
    """Whether a path names something in the project."""
    if not path or path.startswith("-"):
        return CWD["inside"]
    if path.startswith("~") or path.startswith("$HOME"):
        return False
    if path.startswith("/dev/null") or path in ("/dev/stdout", "/dev/stderr"):
        return True
    if path.startswith("/"):
        return bool(root) and (path == root or path.startswith(root.rstrip("/") + "/"))
    if path.startswith(".."):
        return False
    return CWD["inside"]


def redirect_targets(part):
    return re.findall(r"(?<![<0-9&])[0-9&]?>>?\|?\s*([^\s;&|<>]+)", part)


def rule_kind(cmd, root):
    """(kind, sure) for one command, by what it does."""
    parts, body = split_parts(cmd)
    low = cmd.lower()
    if re.search(r"(curl|wget)[^|;&]*\|\s*(sudo\s+)?(ba|z)?sh\b", cmd):
        return "risky", True
    if re.search(r"git\s+push\b[^;&|]*(\s-f\b|--force)", cmd) and re.search(r"\b(main|master)\b", cmd):
        return "risky", True
    for part in parts:
        if reads_credentials(part):
            return "risky", False
    if re.search(r"\bkill\s+-9\s+-1\b|killall\s+-9?\s*\w*$|pkill\s+-9\s+-f\s+\.", cmd):
        return "risky", True
    if re.search(r"chmod\s+(-R\s+)?777\s+/(\s|$)|\bmkfs\b|\bdd\s+[^|;]*of=/dev/", cmd):
        return "risky", True
    best, sure = "read", True
    CWD["inside"] = True
    for part in parts:
        k, s = part_kind(part, root)
        if ORDER[k] > ORDER[best]:
            best = k
        sure = sure and s
        w, _ = words_of(part)
        if w and w[0] == "cd" and len(w) > 1 and (w[1].startswith(("/", "~", "$HOME"))):
            t = w[1]
            CWD["inside"] = bool(root) and t.startswith("/") and (t == root or t.startswith(root.rstrip("/") + "/"))
    # redirections into files (quoted text is not a redirection)
    unquoted = re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "''", body.replace("<<HEREDOC", ""))
    for t in redirect_targets(unquoted):
        if t.startswith("&") or t in ("/dev/null", "/dev/stdout", "/dev/stderr"):
            continue
        k = "edit" if inside(t, root) else "other"
        if ORDER[k] > ORDER[best]:
            best = k
    CWD["inside"] = True
    if "<<HEREDOC" in body and best == "read" and "cat" in low:
        best, sure = "edit", False
    return best, sure


CRED_READERS = {
    "cat", "head", "tail", "less", "more", "grep", "rg", "awk", "sed", "cp", "scp",
    "base64", "xxd", "strings", "source", ".", "echo", "printf", "printenv", "env",
    "curl", "jq", "bat", "diff", "openssl", "gpg", "sort", "cut",
}


def reads_credentials(part):
    """A part that reads a credential store, a key, a token or a .env file (writing
    one, or naming its template, is not a read)."""
    w, _ = words_of(part)
    while w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]):
        w = w[1:]
    if not w or os.path.basename(w[0]) not in CRED_READERS:
        if not re.search(r"gh auth token|security find-(generic|internet)-password", part):
            return False
    text = re.sub(r"(?<![<0-9&])[0-9&]?>>?\|?\s*[^\s;&|<>]+", " ", part)  # not the targets
    if w and os.path.basename(w[0]) == "sed" and re.search(r"(^|\s)-i", text):
        return False
    if ENV_TEMPLATE.search(text) and not re.search(r"\.env(\s|$|\*)", text):
        return False
    return bool(CRED_PATHS.search(text))


SHELL_KEYWORDS = {"do", "then", "else", "elif", "if", "while", "until", "{", "(", "!", "time"}


def part_kind(part, root):
    kind, sure = part_kind_here(part, root)
    if kind == "build" and not CWD["inside"]:
        return "other", sure  # running code in a directory outside the project
    return kind, sure


def script_outside(args, root):
    """The script an interpreter runs, when it is a file outside the project."""
    script = next((a for a in args if not a.startswith("-")), None)
    if not script or args[:1] in (["-c"], ["-m"], ["-e"], ["-p"]):
        return False
    return bool(re.search(r"\.(py|js|ts|mjs|cjs|sh|rb)$", script)) and not inside(script, root)


def part_kind_here(part, root):
    w, _ = words_of(part)
    while w and w[0] in SHELL_KEYWORDS:
        w = w[1:]
    if w and w[0] in ("for", "select", "case"):
        return "read", True  # the loop's words; its body is another part
    if w and w[0] in ("done", "fi", "esac", "}", ")", ";;"):
        w = w[1:]
    if w and re.match(r"^\w+\(\)$", w[0]):
        return "read", True  # a function's name; its body is another part
    # leading assignments and wrappers
    while w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]):
        w = w[1:]
    if w and w[0].startswith("(") and len(w[0]) > 1:
        w = [w[0][1:]] + w[1:]  # a subshell
    while w and w[0] in ("time", "timeout", "nice", "nohup", "env", "stdbuf", "xvfb-run", "command", "exec", "caffeinate"):
        if w[0] == "timeout" and len(w) > 1:
            w = w[2:] if not w[1].startswith("-") else w[3:]
        elif w[0] == "env":
            w = w[1:]
            while w and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]) or w[0].startswith("-")):
                w = w[1:]
            if not w:
                return "read", True
        else:
            w = w[1:]
        while w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[0]):
            w = w[1:]
    if not w:
        return "read", True
    prog = os.path.basename(w[0])
    args = w[1:]
    a = " ".join(args)
    if args in (["--version"], ["-V"], ["version"]) and prog not in ("git",):
        return "read", True
    if prog in ("export", "unset"):
        return "read", True  # the shell's own variables
    if prog in ("tshark", "tcpdump") and "-r" in args:
        return "read", True  # reading a capture file
    if prog in ("rm", "rmdir"):
        targets = [x for x in args if not x.startswith("-")]
        if any(t in ("/", "/*", "~", "~/", "$HOME", "..", "../", "*") or t.startswith("~") and "-r" in a or t.startswith("$HOME") for t in targets) and re.search(r"-\w*r", a):
            return "risky", True
        if all(inside(t, root) for t in targets):
            return "edit", True
        return "other", True
    if prog in ("cp", "mv", "ln", "mkdir", "touch", "chmod", "truncate", "install", "rmdir", "tee", "unzip", "tar", "zip", "gzip", "gunzip", "split", "dos2unix"):
        if prog == "tar" and re.search(r"(^|\s)-?t", a) and not re.search(r"-?[cx]", a.split()[0] if args else ""):
            return "read", False
        if prog == "unzip" and "-l" in args:
            return "read", True
        if prog == "chmod" and re.search(r"(^|\s)-R\b", a) and any(t in ("/", "~") for t in args):
            return "risky", True
        targets = [x for x in args if not x.startswith("-") and not re.match(r"^[0-7]{3,4}$|^[ugoa]*[+-=][rwxXst]+$", x)]
        if prog in ("cp", "ln", "install") and len(targets) > 1:
            targets = targets[-1:]  # the sources are only read
        if all(inside(t, root) for t in targets):
            return "edit", True
        return "other", True
    if prog == "mktemp":
        return "other", True
    if prog == "sed":
        if re.search(r"(^|\s)-i|--in-place", a):
            return "edit", True
        return "read", True
    if prog == "perl" and re.search(r"-\w*i", a):
        return "edit", True
    if prog == "find":
        if re.search(r"-delete|-exec(dir)?\s+(rm|mv|cp|chmod|sed -i|perl -pi)", a):
            return "edit", True
        m = re.search(r"-exec(dir)?\s+(\S+)", a)
        if m:
            return ("read", True) if os.path.basename(m.group(2)) in READ_PROGS else ("other", False)
        return "read", True
    if prog == "xargs":
        rest, i = [], 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-I", "-n", "-P", "-L", "-d", "-s", "-E", "-a") else 1
        rest = args[i:]
        if rest:
            return part_kind(" ".join(shlex.quote(x) for x in rest), root)
        return "read", False
    if prog == "git":
        k, s = git_kind(args)
        if k == "edit" and not CWD["inside"]:
            return "other", s  # another repository's files, outside the project
        return k, s
    if prog in ("python", "python3", "python2") or re.match(r"python3\.\d+$", prog):
        if not args or args[0] in ("--version", "-V", "-VV"):
            return "read", True
        if args[:2] == ["-m", "pip"]:
            return pip_kind(args[2:])
        if args[:2] in (["-m", "venv"], ["-m", "virtualenv"]):
            return "edit", False
        if args[:2] == ["-m", "http.server"]:
            return "other", True
        if script_outside(args, root):
            return "other", True
        return "build", True
    if prog in ("pip", "pip3"):
        return pip_kind(args)
    if prog in ("npm", "pnpm", "yarn", "bun"):
        if prog == "bun" and script_outside(args[1:] if args[:1] == ["run"] else args, root):
            return "other", True
        return js_pm_kind(prog, args)
    if prog == "npx":
        name = next((x for x in args if not x.startswith("-")), "")
        if name.startswith("create-") or name in ("vercel", "netlify", "supabase", "firebase", "wrangler", "degit", "giget"):
            return "other", True
        if re.match(r"^@?[^@]+@", name):
            return "other", True  # a package version fetched from the registry
        if name in ("convex",):
            return "other", False
        return "build", True
    if prog == "cargo":
        sub = args[0] if args else ""
        if sub in ("install", "add", "publish", "login", "update", "search", "fetch"):
            return "other", True
        if sub in ("--version", "-V", "tree", "metadata"):
            return "read", True
        return "build", True
    if prog == "go":
        sub = args[0] if args else ""
        if sub in ("get", "install", "mod"):
            return "other", True
        if sub in ("version", "env", "list", "doc"):
            return "read", True
        return "build", True
    if prog == "uv":
        sub = args[0] if args else ""
        if sub == "run":
            return "build", True
        if sub in ("--version", "tree"):
            return "read", True
        return "other", True
    if prog in ("poetry", "pipenv", "pdm", "hatch"):
        sub = args[0] if args else ""
        if sub == "run":
            return "build", True
        if sub in ("show", "--version", "env"):
            return "read", False
        return "other", True
    if prog in ("bash", "sh", "zsh"):
        if args and args[0] == "-n":
            return "read", True
        if args and args[0] in ("-c", "-lc"):
            return rule_kind(args[1] if len(args) > 1 else "", root)
        return "build", True
    if prog in ("source", "."):
        t = args[0] if args else ""
        if inside(t, root):
            return "build", True
        return "other", True
    if prog == "echo" or prog == "printf":
        return "read", True
    if prog in ("node", "deno", "ruby", "php", "perl", "lua", "java", "bun"):
        if args and args[0] in ("--version", "-v", "-version", "version"):
            return "read", True
        if script_outside(args[1:] if args[:1] == ["run"] else args, root):
            return "other", True
        return "build", True
    if prog in BUILD_PROGS:
        if args and args[0] in ("--version", "-v", "-V", "version", "--help", "-h"):
            return "read", True
        return "build", True
    if w[0].startswith("./") or w[0].startswith("/") and root and w[0].startswith(root):
        return "build", True
    if "/" in w[0] and not w[0].startswith(("/", "~", "$")):
        return "build", True  # a program of the project (bin/test, scripts/run.sh)
    if prog in READ_PROGS:
        # `cd` anywhere only moves the shell: a read, like the other READ_PROGS.
        return "read", True
    if prog in OTHER_PROGS:
        if prog in ("kill", "pkill", "killall") and re.search(r"-9\s+-1|\s-1$", part):
            return "risky", True
        return "other", True
    if prog in EDIT_PROGS:
        return "edit", False
    return "other", False


def pip_kind(args):
    sub = args[0] if args else ""
    if sub in ("list", "show", "freeze", "--version", "check", "-V", "debug", "config"):
        return "read", True
    if sub == "install" and ("-e" in args or "--editable" in args) and "." in args:
        return "other", True
    return "other", True


def js_pm_kind(prog, args):
    sub = args[0] if args else ""
    if prog == "bun" and sub and (sub.endswith((".ts", ".js", ".tsx", ".mjs"))):
        return "build", True
    if sub in ("install", "i", "ci", "add", "remove", "uninstall", "rm", "update", "upgrade", "up", "link", "publish", "login", "audit", "outdated", "view", "info", "dlx", "x", "create", "init", "global", "cache", "exec_never", "pack", "unlink", "dedupe", "prune", "self-update", "set"):
        if sub == "init":
            return "edit", False
        if sub in ("audit", "outdated", "view", "info") and prog != "yarn":
            return "other", True
        if prog == "yarn" and sub == "":
            return "other", True
        return "other", True
    if sub in ("--version", "-v", "ls", "list", "why", "config", "root", "bin", "prefix", "-h", "--help", "help", "pm"):
        return "read", True
    if sub == "" and prog == "yarn":
        return "other", True
    return "build", True


GIT_READ = {
    "status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse",
    "rev-list", "describe", "shortlog", "reflog", "grep", "cat-file", "merge-base",
    "name-rev", "whatchanged", "count-objects", "check-ignore", "for-each-ref",
    "show-ref", "var", "help", "--version", "version", "diff-tree", "diff-index",
    "fsck", "verify-commit", "cherry",
}
GIT_EDIT = {
    "add", "commit", "checkout", "switch", "restore", "reset", "stash", "merge",
    "rebase", "mv", "rm", "init", "apply", "cherry-pick", "revert", "clean", "am",
    "worktree", "notes", "update-index", "gc", "prune", "bisect", "filter-branch",
    "commit-tree", "update-ref", "symbolic-ref", "hash-object", "lfs_never", "format-patch",
    "sparse-checkout", "mergetool", "difftool", "filter-repo",
}
GIT_OTHER = {"push", "pull", "fetch", "clone", "ls-remote", "submodule", "remote_add", "lfs", "send-email", "request-pull", "daemon", "credential"}


def git_kind(args):
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-C", "-c", "--git-dir", "--work-tree"):
            if args[i] == "-c" and i + 1 < len(args) and "credential" in args[i + 1]:
                return "risky", False
            i += 2
        else:
            i += 1
    if i >= len(args):
        return "read", True
    sub, rest = args[i], args[i + 1 :]
    if sub in GIT_READ:
        if sub == "stash" or (sub == "diff" and "--output" in " ".join(rest)):
            return "edit", True
        return "read", True
    if sub == "branch":
        if not rest or all(r.startswith("-") and r in ("-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes", "--merged", "--no-merged", "--contains") or r.startswith("--format") or r.startswith("--sort") for r in rest):
            return "read", True
        return "edit", True
    if sub == "tag":
        if not rest or rest[0] in ("-l", "--list", "-n"):
            return "read", True
        return "edit", True
    if sub == "remote":
        if not rest or rest[0] in ("-v", "show", "get-url"):
            return "read", True if (not rest or rest[0] != "show") else False
        return "edit", True
    if sub == "config":
        if "--global" in rest or "--system" in rest:
            if any(r in ("--get", "-l", "--list", "--get-all") for r in rest) or len([r for r in rest if not r.startswith("-")]) <= 1:
                return "read", True
            return "other", True
        if any(r in ("--get", "-l", "--list", "--get-all", "--get-regexp") for r in rest) or len([r for r in rest if not r.startswith("-")]) <= 1:
            return "read", True
        return "edit", True
    if sub == "stash":
        if rest and rest[0] in ("list", "show"):
            return "read", True
        return "edit", True
    if sub in GIT_EDIT:
        return "edit", True
    if sub == "push":
        if any(r in ("-f", "--force") or r.startswith("--force") for r in rest) and any(re.search(r"\b(main|master)\b", r) for r in rest):
            return "risky", True
        return "other", True
    if sub in GIT_OTHER:
        return "other", True
    return "other", False


# ---------------------------------------------------------------------------------


def read_labels(path):
    labels = {}
    if not os.path.exists(path):
        return labels
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            h, kind, label = line.split("\t")[:3]
            assert kind in KINDS, line
            assert label in ("benign", "risky"), line
            labels[h] = (kind, label)
    return labels


def read_sources(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            repo, commit, globs, agent, fmt = cols[:5]
            root = cols[5] if len(cols) > 5 and cols[5] else None
            rows.append((repo, commit, globs.split(","), agent, fmt, root))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror", help="where fetch put the sources")
    ap.add_argument("--out", required=True, help="the agent_commands.jsonl to write")
    ap.add_argument("--sources", default=os.path.join(HERE, "sources.tsv"))
    ap.add_argument("--labels", default=os.path.join(HERE, "labels.tsv"))
    ap.add_argument("--expected", default=os.path.join(HERE, "expected.json"),
                    help="where the set's counts are written for the bench to check")
    ap.add_argument("--review", help="also write every row with its hash and how it was labelled (TSV)")
    args = ap.parse_args()

    labels = read_labels(args.labels)
    seen = set()
    rows = []
    for repo, commit, globs, agent, fmt, source_root in read_sources(args.sources):
        gitdir = os.path.join(args.mirror, repo.replace("/", "+"), "repo")
        if not os.path.isdir(gitdir):
            sys.exit(f"{repo} is not fetched: {gitdir} (fetch github:{repo})")
        found = OrderedDict()
        for path in list_files(gitdir, commit, globs):
            try:
                cmds = EXTRACTORS[fmt](read_blob(gitdir, commit, path))
            except (ValueError, subprocess.CalledProcessError) as e:
                print(f"  skipped {repo}:{path}: {e}", file=sys.stderr)
                continue
            for cmd, root in cmds:
                root = root or source_root
                cmd = cmd.strip()
                if not usable(cmd) or cmd in seen or cmd in found:
                    continue
                found[cmd] = (path, root)
        # at most CAP per repository and agent, chosen by hash (spread over the files)
        taken = sum(1 for r in rows if r["_repo"] == repo and r["agent"] == agent)
        chosen = sorted(found, key=h16)[: max(0, CAP - taken)]
        for cmd in sorted(chosen, key=lambda c: list(found).index(c)):
            path, root = found[cmd]
            seen.add(cmd)
            row = {"command": cmd, "source": f"{repo}:{path}", "agent": agent, "_repo": repo}
            if root:
                row["root"] = root
            rows.append(row)

    by_rule = Counter()
    unsure = 0
    for r in rows:
        h = h16(r["command"])
        if h in labels:
            r["kind"], r["label"] = labels[h]
            r["_how"] = "labels.tsv"
        else:
            kind, sure = rule_kind(r["command"], r.get("root"))
            r["kind"], r["label"] = kind, ("risky" if kind == "risky" else "benign")
            r["_how"] = "rule" if sure else "rule (unsure)"
            by_rule[kind] += 1
            unsure += not sure

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in rows:
            out = {k: r[k] for k in ("command", "label", "kind", "source", "agent")}
            if r.get("root"):
                out["root"] = r["root"]
            f.write(json.dumps(out, ensure_ascii=False) + "\n")
    if args.review:
        with open(args.review, "w", encoding="utf-8") as f:
            for r in rows:
                f.write("\t".join([h16(r["command"]), r["kind"], r["_how"], r["agent"], r.get("root") or "", json.dumps(r["command"], ensure_ascii=False)]) + "\n")

    kinds = Counter(r["kind"] for r in rows)
    expected = {"rows": len(rows), "kinds": {k: kinds[k] for k in KINDS}}
    with open(args.expected, "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")

    print(f"{len(rows)} commands -> {args.out}")
    for name, key in (("agent", "agent"), ("source", "_repo"), ("kind", "kind")):
        c = Counter(r[key] for r in rows)
        print(f"by {name}: " + ", ".join(f"{k} {n}" for k, n in sorted(c.items(), key=lambda x: (-x[1], x[0]))))
    per = Counter((r["_repo"], r["agent"]) for r in rows)
    for (repo, agent), n in sorted(per.items()):
        print(f"  {repo} ({agent}): {n}")
    print(f"labelled by rule only: {sum(by_rule.values())} ({', '.join(f'{k} {by_rule[k]}' for k in KINDS)}), of which {unsure} unsure")


if __name__ == "__main__":
    main()
