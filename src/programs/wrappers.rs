//! Wrappers in the table: programs that run another command given in their operands
//! (`sudo`, `env`, `timeout 5`, `chroot DIR`, `flock F`, `strace -o F`, …) or hand their
//! operands to a shell as one string (`watch`, `sg GROUP`), with their option grammars.
//!
//! Options of a wrapper end at its first operand (their parsers stop there, so the inner
//! command keeps its own options). An option the grammar does not know makes the call
//! opaque: we cannot tell whether it took the next word as its value, so we cannot tell
//! which command runs (issue 8, class 7).

use super::options::{Abbrev, Arg, Does, Grammar, Opt, l, parse, s, sl};
use super::unwrap::{CodeArg, Description};
use super::{Example, Program, Role, basename, is_assignment};

const N: Arg = Arg::No;
const V: Arg = Arg::Required;
const OPT: Arg = Arg::Optional;
const NO: Does = Does::Nothing;

const SUDO: &[Opt] = &[
    sl('A', "askpass", N, NO),
    s('a', V, NO),
    sl('b', "background", N, NO),
    sl('B', "bell", N, NO),
    s('c', V, NO),
    sl('C', "close-from", V, NO),
    sl('D', "chdir", V, Does::Chdir),
    sl('E', "preserve-env", N, NO),
    l("preserve-env", OPT, NO),
    sl('e', "edit", N, NO),
    sl('g', "group", V, NO),
    sl('H', "set-home", N, NO),
    sl('h', "host", OPT, NO),
    l("help", N, NO),
    sl('i', "login", N, NO),
    sl('K', "remove-timestamp", N, NO),
    sl('k', "reset-timestamp", N, NO),
    sl('l', "list", N, Does::Ends),
    sl('N', "no-update", N, NO),
    sl('n', "non-interactive", N, NO),
    sl('P', "preserve-groups", N, NO),
    sl('p', "prompt", V, NO),
    sl('R', "chroot", V, NO),
    sl('r', "role", V, NO),
    sl('S', "stdin", N, NO),
    sl('s', "shell", N, NO),
    sl('T', "command-timeout", V, NO),
    sl('t', "type", V, NO),
    sl('U', "other-user", V, NO),
    sl('u', "user", V, NO),
    sl('V', "version", N, Does::Ends),
    sl('v', "validate", N, Does::Ends),
];

const DOAS: &[Opt] = &[
    s('C', V, Does::Ends),
    s('L', N, Does::Ends),
    s('n', N, NO),
    s('s', N, NO),
    s('u', V, NO),
];

const PKEXEC: &[Opt] = &[
    l("user", V, NO),
    l("keep-cwd", N, NO),
    l("disable-internal-agent", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const ENV: &[Opt] = &[
    sl('i', "ignore-environment", N, NO),
    sl('0', "null", N, NO),
    sl('u', "unset", V, NO),
    sl('C', "chdir", V, Does::Chdir),
    sl('S', "split-string", V, Does::Code),
    sl('v', "debug", N, NO),
    l("block-signal", OPT, NO),
    l("default-signal", OPT, NO),
    l("ignore-signal", OPT, NO),
    l("list-signal-handling", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const COMMAND: &[Opt] = &[s('p', N, NO), s('v', N, Does::Ends), s('V', N, Does::Ends)];

const EXEC: &[Opt] = &[s('a', V, NO), s('c', N, NO), s('l', N, NO)];

const HELP_VERSION: &[Opt] = &[l("help", N, Does::Ends), l("version", N, Does::Ends)];

const NICE: &[Opt] = &[
    sl('n', "adjustment", V, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const TIMEOUT: &[Opt] = &[
    sl('s', "signal", V, NO),
    sl('k', "kill-after", V, NO),
    sl('v', "verbose", N, NO),
    sl('f', "foreground", N, NO),
    sl('p', "preserve-status", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// GNU time and bash's `time -p`.
const TIME: &[Opt] = &[
    sl('o', "output", V, Does::Writes),
    sl('f', "format", V, NO),
    sl('a', "append", N, NO),
    sl('p', "portability", N, NO),
    sl('v', "verbose", N, NO),
    sl('q', "quiet", N, NO),
    l("help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const STDBUF: &[Opt] = &[
    sl('i', "input", V, NO),
    sl('o', "output", V, NO),
    sl('e', "error", V, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const XARGS: &[Opt] = &[
    sl('0', "null", N, NO),
    sl('a', "arg-file", V, Does::Reads),
    sl('d', "delimiter", V, NO),
    s('E', V, NO),
    s('e', OPT, NO),
    l("eof", OPT, NO),
    s('I', V, NO),
    s('i', OPT, NO),
    l("replace", OPT, NO),
    s('L', V, NO),
    s('l', OPT, NO),
    l("max-lines", OPT, NO),
    sl('n', "max-args", V, NO),
    sl('P', "max-procs", V, NO),
    sl('p', "interactive", N, NO),
    sl('r', "no-run-if-empty", N, NO),
    sl('s', "max-chars", V, NO),
    sl('t', "verbose", N, NO),
    sl('x', "exit", N, NO),
    sl('o', "open-tty", N, NO),
    l("process-slot-var", V, NO),
    l("show-limits", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const WATCH: &[Opt] = &[
    sl('b', "beep", N, NO),
    sl('c', "color", N, NO),
    sl('C', "no-color", N, NO),
    sl('d', "differences", OPT, NO),
    sl('e', "errexit", N, NO),
    sl('g', "chgexit", N, NO),
    sl('n', "interval", V, NO),
    sl('p', "precise", N, NO),
    sl('q', "equexit", V, NO),
    sl('r', "no-rerun", N, NO),
    sl('s', "shotsfile", V, Does::Writes),
    sl('t', "no-title", N, NO),
    sl('w', "no-wrap", N, NO),
    sl('x', "exec", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('v', "version", N, Does::Ends),
];

const IONICE: &[Opt] = &[
    sl('c', "class", V, NO),
    sl('n', "classdata", V, NO),
    sl('p', "pid", V, Does::Ends),
    sl('P', "pgid", V, Does::Ends),
    sl('u', "uid", V, Does::Ends),
    sl('t', "ignore", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const CHRT: &[Opt] = &[
    sl('a', "all-tasks", N, NO),
    sl('b', "batch", N, NO),
    sl('d', "deadline", N, NO),
    sl('e', "ext", N, NO),
    sl('f', "fifo", N, NO),
    sl('i', "idle", N, NO),
    sl('o', "other", N, NO),
    sl('r', "rr", N, NO),
    sl('R', "reset-on-fork", N, NO),
    sl('T', "sched-runtime", V, NO),
    sl('P', "sched-period", V, NO),
    sl('D', "sched-deadline", V, NO),
    sl('m', "max", N, Does::Ends),
    sl('p', "pid", N, Does::Ends),
    sl('v', "verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const TASKSET: &[Opt] = &[
    sl('a', "all-tasks", N, NO),
    sl('c', "cpu-list", N, NO),
    sl('p', "pid", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const SETSID: &[Opt] = &[
    sl('c', "ctty", N, NO),
    sl('f', "fork", N, NO),
    sl('w', "wait", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const CAFFEINATE: &[Opt] = &[
    s('d', N, NO),
    s('i', N, NO),
    s('m', N, NO),
    s('s', N, NO),
    s('u', N, NO),
    s('t', V, NO),
    s('w', V, NO),
];

const CHROOT: &[Opt] = &[
    l("userspec", V, NO),
    l("groups", V, NO),
    l("skip-chdir", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const UNSHARE: &[Opt] = &[
    sl('m', "mount", OPT, NO),
    sl('u', "uts", OPT, NO),
    sl('i', "ipc", OPT, NO),
    sl('n', "net", OPT, NO),
    sl('p', "pid", OPT, NO),
    sl('U', "user", OPT, NO),
    sl('C', "cgroup", OPT, NO),
    sl('T', "time", OPT, NO),
    sl('f', "fork", N, NO),
    l("kill-child", OPT, NO),
    l("mount-proc", OPT, NO),
    l("mount-binfmt", OPT, NO),
    l("map-user", V, NO),
    l("map-users", V, NO),
    l("map-group", V, NO),
    l("map-groups", V, NO),
    l("map-auto", N, NO),
    sl('r', "map-root-user", N, NO),
    sl('c', "map-current-user", N, NO),
    l("propagation", V, NO),
    l("setgroups", V, NO),
    l("keep-caps", N, NO),
    sl('R', "root", V, NO),
    sl('w', "wd", V, Does::Chdir),
    sl('S', "setuid", V, NO),
    sl('G', "setgid", V, NO),
    l("monotonic", V, NO),
    l("boottime", V, NO),
    sl('l', "load-interp", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const NSENTER: &[Opt] = &[
    sl('t', "target", V, NO),
    sl('m', "mount", OPT, NO),
    sl('u', "uts", OPT, NO),
    sl('i', "ipc", OPT, NO),
    sl('n', "net", OPT, NO),
    sl('p', "pid", OPT, NO),
    sl('U', "user", OPT, NO),
    sl('C', "cgroup", OPT, NO),
    sl('T', "time", OPT, NO),
    sl('a', "all", N, NO),
    sl('S', "setuid", V, NO),
    sl('G', "setgid", V, NO),
    l("preserve-credentials", N, NO),
    l("keep-caps", N, NO),
    sl('r', "root", OPT, NO),
    sl('w', "wd", OPT, Does::Chdir),
    sl('W', "wdns", V, NO),
    sl('e', "env", N, NO),
    sl('F', "no-fork", N, NO),
    sl('Z', "follow-context", N, NO),
    sl('c', "join-cgroup", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const FLOCK: &[Opt] = &[
    sl('s', "shared", N, NO),
    sl('x', "exclusive", N, NO),
    s('e', N, NO),
    sl('u', "unlock", N, NO),
    sl('n', "nonblock", N, NO),
    l("nb", N, NO),
    sl('o', "close", N, NO),
    sl('F', "no-fork", N, NO),
    sl('w', "timeout", V, NO),
    l("wait", V, NO),
    sl('E', "conflict-exit-code", V, NO),
    l("verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const STRACE: &[Opt] = &[
    s('a', V, NO),
    s('A', N, NO),
    s('b', V, NO),
    s('c', N, NO),
    s('C', N, NO),
    s('d', N, NO),
    s('D', N, NO),
    s('e', V, NO),
    s('E', V, NO),
    s('f', N, NO),
    s('F', N, NO),
    s('h', N, Does::Ends),
    s('i', N, NO),
    s('I', V, NO),
    s('k', N, NO),
    s('n', N, NO),
    sl('o', "output", V, Does::Writes),
    s('O', V, NO),
    sl('p', "attach", V, NO),
    s('P', V, NO),
    s('q', N, NO),
    s('r', N, NO),
    s('s', V, NO),
    s('S', V, NO),
    s('t', N, NO),
    s('T', N, NO),
    s('u', V, NO),
    s('U', V, NO),
    s('v', N, NO),
    s('V', N, Does::Ends),
    s('w', N, NO),
    s('x', N, NO),
    s('X', V, NO),
    s('y', N, NO),
    s('Y', N, NO),
    s('z', N, NO),
    s('Z', N, NO),
    l("follow-forks", N, NO),
    l("output-separately", N, NO),
    l("summary-only", N, NO),
    l("trace", V, NO),
    l("signal", V, NO),
    l("string-limit", V, NO),
    l("quiet", OPT, NO),
    l("decode-fds", OPT, NO),
];

const LTRACE: &[Opt] = &[
    s('a', V, NO),
    s('A', V, NO),
    s('b', N, NO),
    s('c', N, NO),
    s('C', N, NO),
    s('D', V, NO),
    s('e', V, NO),
    s('f', N, NO),
    s('F', V, NO),
    s('h', N, Does::Ends),
    s('i', N, NO),
    s('l', V, NO),
    s('L', N, NO),
    s('n', V, NO),
    sl('o', "output", V, Does::Writes),
    s('p', V, NO),
    s('r', N, NO),
    s('s', V, NO),
    s('S', N, NO),
    s('t', N, NO),
    s('T', N, NO),
    s('u', V, NO),
    s('w', V, NO),
    s('x', V, NO),
    l("demangle", N, NO),
    l("indent", V, NO),
    l("library", V, NO),
    l("version", N, Does::Ends),
];

const FAKEROOT: &[Opt] = &[
    sl('l', "lib", V, NO),
    l("faked", V, Does::Runs("runs the given faked daemon")),
    s('s', V, Does::Writes),
    s('i', V, Does::Reads),
    sl('u', "unknown-is-real", N, NO),
    s('b', V, NO),
    sl('h', "help", N, Does::Ends),
    sl('v', "version", N, Does::Ends),
];

const SETPRIV: &[Opt] = &[
    sl('d', "dump", N, Does::Ends),
    l("no-new-privs", N, NO),
    l("ambient-caps", V, NO),
    l("inh-caps", V, NO),
    l("bounding-set", V, NO),
    l("ruid", V, NO),
    l("euid", V, NO),
    l("rgid", V, NO),
    l("egid", V, NO),
    l("reuid", V, NO),
    l("regid", V, NO),
    l("clear-groups", N, NO),
    l("keep-groups", N, NO),
    l("init-groups", N, NO),
    l("groups", V, NO),
    l("securebits", V, NO),
    l("pdeathsig", V, NO),
    l("selinux-label", V, NO),
    l("apparmor-profile", V, NO),
    l("landlock-access", V, NO),
    l("landlock-rule", V, NO),
    l("reset-env", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const SCRIPT: &[Opt] = &[
    sl('a', "append", N, NO),
    sl('c', "command", V, Does::Code),
    sl('e', "return", N, NO),
    sl('f', "flush", N, NO),
    sl('E', "echo", V, NO),
    sl('I', "log-in", V, Does::Writes),
    sl('O', "log-out", V, Does::Writes),
    sl('B', "log-io", V, Does::Writes),
    sl('T', "log-timing", V, Does::Writes),
    sl('m', "logging-format", V, NO),
    sl('o', "output-limit", V, NO),
    sl('q', "quiet", N, NO),
    sl('t', "timing", OPT, Does::Writes),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const SYSTEMD_RUN: &[Opt] = &[
    sl('u', "unit", V, NO),
    sl('p', "property", V, NO),
    sl('E', "setenv", V, NO),
    sl('H', "host", V, NO),
    sl('M', "machine", V, NO),
    sl('t', "pty", N, NO),
    sl('P', "pipe", N, NO),
    sl('q', "quiet", N, NO),
    sl('G', "collect", N, NO),
    sl('d', "same-dir", N, NO),
    sl('S', "shell", N, NO),
    sl('r', "remain-after-exit", N, NO),
    l("user", N, NO),
    l("system", N, NO),
    l("scope", N, NO),
    l("description", V, NO),
    l("slice", V, NO),
    l("slice-inherit", N, NO),
    l("uid", V, NO),
    l("gid", V, NO),
    l("nice", V, NO),
    l("working-directory", V, Does::Chdir),
    l("service-type", V, NO),
    l("wait", N, NO),
    l("no-block", N, NO),
    l("no-ask-password", N, NO),
    l("send-sighup", N, NO),
    l("on-active", V, NO),
    l("on-boot", V, NO),
    l("on-startup", V, NO),
    l("on-unit-active", V, NO),
    l("on-unit-inactive", V, NO),
    l("on-calendar", V, NO),
    l("timer-property", V, NO),
    l("path-property", V, NO),
    l("socket-property", V, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const FIREJAIL: &[Opt] = &[
    l("noprofile", N, NO),
    l("quiet", N, NO),
    l("private", OPT, NO),
    l("net", V, NO),
    l("profile", V, NO),
    l("whitelist", V, NO),
    l("blacklist", V, NO),
    l("read-only", V, NO),
    l("caps.drop", V, NO),
    l("seccomp", N, NO),
    l("nonewprivs", N, NO),
    l("noroot", N, NO),
    l("nosound", N, NO),
    l("timeout", V, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const BWRAP: &[Opt] = &[
    l("bind", Arg::Two, NO),
    l("bind-try", Arg::Two, NO),
    l("ro-bind", Arg::Two, NO),
    l("ro-bind-try", Arg::Two, NO),
    l("dev-bind", Arg::Two, NO),
    l("dev-bind-try", Arg::Two, NO),
    l("symlink", Arg::Two, NO),
    l("setenv", Arg::Two, NO),
    l("file", Arg::Two, NO),
    l("bind-data", Arg::Two, NO),
    l("ro-bind-data", Arg::Two, NO),
    l("chmod", Arg::Two, NO),
    l("tmpfs", V, NO),
    l("proc", V, NO),
    l("dev", V, NO),
    l("dir", V, NO),
    l("mqueue", V, NO),
    l("remount-ro", V, NO),
    l("chdir", V, Does::Chdir),
    l("unsetenv", V, NO),
    l("uid", V, NO),
    l("gid", V, NO),
    l("hostname", V, NO),
    l("lock-file", V, NO),
    l("sync-fd", V, NO),
    l("info-fd", V, NO),
    l("json-status-fd", V, NO),
    l("block-fd", V, NO),
    l("userns-block-fd", V, NO),
    l("seccomp", V, NO),
    l("add-seccomp-fd", V, NO),
    l("exec-label", V, NO),
    l("file-label", V, NO),
    l("args", V, NO),
    l("argv0", V, NO),
    l("cap-add", V, NO),
    l("cap-drop", V, NO),
    l("perms", V, NO),
    l("size", V, NO),
    l("userns", V, NO),
    l("userns2", V, NO),
    l("pidns", V, NO),
    l("unshare-all", N, NO),
    l("share-net", N, NO),
    l("unshare-user", N, NO),
    l("unshare-user-try", N, NO),
    l("unshare-ipc", N, NO),
    l("unshare-pid", N, NO),
    l("unshare-net", N, NO),
    l("unshare-uts", N, NO),
    l("unshare-cgroup", N, NO),
    l("unshare-cgroup-try", N, NO),
    l("disable-userns", N, NO),
    l("assert-userns-disabled", N, NO),
    l("clearenv", N, NO),
    l("new-session", N, NO),
    l("die-with-parent", N, NO),
    l("as-pid-1", N, NO),
    l("level-prefix", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// su and runuser (util-linux): their options mix with operands (`su - user -c CODE`).
const SU: &[Opt] = &[
    sl('c', "command", V, Does::Code),
    l("session-command", V, Does::Code),
    sl('f', "fast", N, NO),
    sl('g', "group", V, NO),
    sl('G', "supp-group", V, NO),
    sl('l', "login", N, NO),
    sl('m', "preserve-environment", N, NO),
    s('p', N, NO),
    sl('P', "pty", N, NO),
    sl('s', "shell", V, NO),
    sl('u', "user", V, NO),
    sl('w', "whitelist-environment", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const TORSOCKS: &[Opt] = &[
    sl('u', "user", V, NO),
    sl('p', "pass", V, NO),
    sl('a', "address", V, NO),
    sl('P', "port", V, NO),
    sl('i', "isolate", N, NO),
    sl('d', "debug", N, NO),
    sl('q', "quiet", N, NO),
    l("shell", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

const PROXYCHAINS: &[Opt] = &[s('q', N, NO), s('f', V, Does::Reads)];

const VALGRIND: &[Opt] = &[
    sl('q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    l("version", N, Does::Ends),
    l("tool", V, NO),
    l("log-file", V, Does::Writes),
    l("xml-file", V, Does::Writes),
    l("xml", V, NO),
    l("log-fd", V, NO),
    l("trace-children", V, NO),
    l("trace-children-skip", V, NO),
    l("child-silent-after-fork", V, NO),
    l("leak-check", V, NO),
    l("show-leak-kinds", V, NO),
    l("errors-for-leak-kinds", V, NO),
    l("track-origins", V, NO),
    l("track-fds", V, NO),
    l("error-exitcode", V, NO),
    l("suppressions", V, Does::Reads),
    l("gen-suppressions", V, NO),
    l("num-callers", V, NO),
    l("time-stamp", V, NO),
    l("max-stackframe", V, NO),
    l("main-stacksize", V, NO),
    l("smc-check", V, NO),
    l("fair-sched", V, NO),
    l("demangle", V, NO),
    l("keep-debuginfo", V, NO),
    l("read-var-info", V, NO),
    l("undef-value-errors", V, NO),
    l("vgdb", V, NO),
    l("vgdb-error", V, NO),
    l("db-attach", V, Does::Runs("attaches the debugger it names")),
    l(
        "db-command",
        V,
        Does::Runs("runs the debugger command it names"),
    ),
];

const PARALLEL: &[Opt] = &[
    sl('j', "jobs", V, NO),
    sl('k', "keep-order", N, NO),
    sl('a', "arg-file", V, Does::Reads),
    sl('d', "delimiter", V, NO),
    s('I', V, NO),
    sl('n', "max-args", V, NO),
    s('N', V, NO),
    sl('q', "quote", N, NO),
    s('X', N, NO),
    s('m', N, NO),
    l("colsep", V, NO),
    l("halt", V, NO),
    l("bar", N, NO),
    l("progress", N, NO),
    l("dry-run", N, NO),
    sl('v', "verbose", N, NO),
    l("will-cite", N, NO),
    l("line-buffer", N, NO),
    l("tag", N, NO),
];

/// numactl: every option but the flags takes a value (`-N 0`, `--cpunodebind=0`).
const NUMACTL: &[Opt] = &[
    sl('a', "all", N, NO),
    sl('i', "interleave", V, NO),
    sl('w', "weighted-interleave", V, NO),
    sl('p', "preferred", V, NO),
    sl('P', "preferred-many", V, NO),
    sl('m', "membind", V, NO),
    sl('N', "cpunodebind", V, NO),
    sl('C', "physcpubind", V, NO),
    sl('l', "localalloc", N, NO),
    sl('b', "balancing", N, NO),
    sl('s', "show", N, Does::Ends),
    sl('H', "hardware", N, Does::Ends),
    sl('S', "shm", V, NO),
    sl('f', "file", V, NO),
    sl('L', "length", V, NO),
    sl('o', "offset", V, NO),
    sl('M', "shmmode", V, NO),
    sl('I', "shmid", V, NO),
    sl('T', "touch", N, NO),
    sl('t', "strict", N, NO),
    sl('d', "dump", N, NO),
    sl('D', "dump-nodes", N, NO),
    sl('u', "huge", N, NO),
    sl('V', "version", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
];

/// xvfb-run (a script over `getopt +ade:f:hn:lp:s:w:`).
const XVFB_RUN: &[Opt] = &[
    sl('a', "auto-servernum", N, NO),
    sl('d', "auto-display", N, NO),
    sl('e', "error-file", V, Does::Writes),
    sl('f', "auth-file", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('n', "server-num", V, NO),
    sl('l', "listen-tcp", N, NO),
    sl('p', "xauth-protocol", V, NO),
    sl('s', "server-args", V, NO),
    sl('w', "wait", V, NO),
];

/// `ssh-agent [-c|-s] [-Dd] [-a SOCK] [-E HASH] [-O OPT] [-P PROVIDERS] [-t LIFE] [cmd …]`.
const SSH_AGENT: &[Opt] = &[
    s('c', N, NO),
    s('s', N, NO),
    s('D', N, NO),
    s('d', N, NO),
    s('k', N, Does::Ends),
    s('a', V, NO),
    s('E', V, NO),
    s('O', V, NO),
    s('P', V, NO),
    s('t', V, NO),
];

/// `entr [-acdnprsz] utility [args]`; with `-s` the utility is code for `$SHELL -c`.
const ENTR: &[Opt] = &[
    s('a', N, NO),
    s('c', N, NO),
    s('d', N, NO),
    s('n', N, NO),
    s('p', N, NO),
    s('r', N, NO),
    s('s', N, NO),
    s('z', N, NO),
];

const fn wrapper(
    names: &'static [&'static str],
    opts: &'static [Opt],
    abbrev: Abbrev,
    skip: usize,
    examples: &'static [Example],
) -> Program {
    Program {
        names,
        grammar: Grammar::wrapper(opts, abbrev),
        role: Role::Wrapper { skip },
        examples,
    }
}

const U: Abbrev = Abbrev::Unique;
const X: Abbrev = Abbrev::None;

pub const PROGRAMS: &[Program] = &[
    wrapper(
        &["sudo"],
        SUDO,
        U,
        0,
        &[
            Example::new("sudo -u root rm -rf /").inner("rm -rf /"),
            Example::new("sudo --us=root ls").inner("ls"),
            Example::new("sudo -l ls"),
            Example::new("sudo -e /etc/hosts").writes(&["/etc/hosts"]),
            Example::new("sudo -iu postgres psql").inner("psql"),
            Example::new("sudo -Q ls").opaque(),
        ],
    ),
    wrapper(
        &["doas"],
        DOAS,
        X,
        0,
        &[Example::new("doas -u root ls").inner("ls")],
    ),
    wrapper(
        &["pkexec"],
        PKEXEC,
        X,
        0,
        &[Example::new("pkexec --user root ls").inner("ls")],
    ),
    wrapper(
        &["env"],
        ENV,
        U,
        0,
        &[
            Example::new("env A=1 B=2 make").inner("make"),
            Example::new("env -S x y").code("x y"),
            Example::new("env --split-string=x").code("x"),
            Example::new("env -C /tmp ls").inner("ls"),
            Example::new("env - PATH=/bin ls").inner("ls"),
        ],
    ),
    wrapper(
        &["command"],
        COMMAND,
        X,
        0,
        &[
            Example::new("command ls").inner("ls"),
            Example::new("command -v ls"),
        ],
    ),
    wrapper(
        &["builtin"],
        &[],
        X,
        0,
        &[Example::new("builtin cd x").inner("cd x")],
    ),
    wrapper(
        &["exec"],
        EXEC,
        X,
        0,
        &[Example::new("exec -a n ls").inner("ls")],
    ),
    wrapper(
        &[
            "nohup",
            "catchsegv",
            "nocorrect",
            "noglob",
            "dbus-run-session",
        ],
        HELP_VERSION,
        U,
        0,
        &[
            Example::new("nohup ls").inner("ls"),
            Example::new("catchsegv ./a.out").inner("./a.out"),
        ],
    ),
    Program {
        names: &["nice"],
        grammar: Grammar::wrapper(NICE, U).numeric(),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("nice -n 5 ls").inner("ls"),
            Example::new("nice -5 ls").inner("ls"),
        ],
    },
    wrapper(
        &["timeout"],
        TIMEOUT,
        U,
        1,
        &[
            Example::new("timeout 10 rm -rf /").inner("rm -rf /"),
            Example::new("timeout -s KILL 10 ls").inner("ls"),
        ],
    ),
    wrapper(
        &["time"],
        TIME,
        U,
        0,
        &[
            Example::new("time -p ls").inner("ls"),
            Example::new("time -o out ls").inner("ls").writes(&["out"]),
        ],
    ),
    wrapper(
        &["stdbuf"],
        STDBUF,
        U,
        0,
        &[Example::new("stdbuf -oL ls").inner("ls")],
    ),
    wrapper(
        &["xargs"],
        XARGS,
        U,
        0,
        &[
            Example::new("xargs -I {} rm -rf {}").inner("rm -rf {}"),
            Example::new("xargs -a list rm")
                .inner("rm")
                .reads(&["list"]),
            Example::new("xargs"),
        ],
    ),
    Program {
        names: &["watch"],
        grammar: Grammar::wrapper(WATCH, U),
        role: Role::CodeOperands { skip: 0 },
        examples: &[
            Example::new("watch -n 5 ls -l").code("ls -l"),
            Example::new("watch -x ls -l").inner("ls -l"),
        ],
    },
    wrapper(
        &["ionice"],
        IONICE,
        U,
        0,
        &[Example::new("ionice -c 3 ls").inner("ls")],
    ),
    wrapper(
        &["chrt"],
        CHRT,
        U,
        1,
        &[Example::new("chrt -f 10 ls").inner("ls")],
    ),
    wrapper(
        &["taskset"],
        TASKSET,
        U,
        1,
        &[
            Example::new("taskset -c 0,1 ls").inner("ls"),
            Example::new("taskset -p 1 22"),
        ],
    ),
    wrapper(
        &["setsid"],
        SETSID,
        U,
        0,
        &[Example::new("setsid -f ls").inner("ls")],
    ),
    wrapper(
        &["unbuffer"],
        &[s('p', N, NO)],
        X,
        0,
        &[Example::new("unbuffer ls").inner("ls")],
    ),
    wrapper(
        &["caffeinate"],
        CAFFEINATE,
        X,
        0,
        &[Example::new("caffeinate -i make").inner("make")],
    ),
    wrapper(
        &["chroot"],
        CHROOT,
        U,
        1,
        &[
            Example::new("chroot /mnt rm -rf /").inner("rm -rf /"),
            Example::new("chroot --userspec=a:b /mnt ls").inner("ls"),
        ],
    ),
    wrapper(
        &["unshare"],
        UNSHARE,
        U,
        0,
        &[
            Example::new("unshare -rn ls").inner("ls"),
            Example::new("unshare --map-root-user --net ls").inner("ls"),
        ],
    ),
    wrapper(
        &["nsenter"],
        NSENTER,
        U,
        0,
        &[Example::new("nsenter -t 1 -m -u ls").inner("ls")],
    ),
    wrapper(
        &["flock"],
        FLOCK,
        U,
        1,
        &[
            Example::new("flock /tmp/l rm -rf /").inner("rm -rf /"),
            Example::new("flock -n /tmp/l -c x").code("x"),
            Example::new("flock -w 5 9"),
        ],
    ),
    wrapper(
        &["strace"],
        STRACE,
        U,
        0,
        &[
            Example::new("strace -f -o out ls")
                .inner("ls")
                .writes(&["out"]),
            Example::new("strace --bogus ls").opaque(),
        ],
    ),
    wrapper(
        &["ltrace"],
        LTRACE,
        U,
        0,
        &[Example::new("ltrace -o out ls")
            .inner("ls")
            .writes(&["out"])],
    ),
    wrapper(
        &["fakeroot"],
        FAKEROOT,
        U,
        0,
        &[Example::new("fakeroot -- make").inner("make")],
    ),
    wrapper(
        &["setpriv"],
        SETPRIV,
        U,
        0,
        &[Example::new("setpriv --reuid=1000 --clear-groups ls").inner("ls")],
    ),
    Program {
        names: &["sg"],
        grammar: Grammar::wrapper(&[s('c', N, NO)], X),
        role: Role::CodeOperands { skip: 1 },
        examples: &[
            Example::new("sg adm -c x").code("x"),
            Example::new("sg adm x").code("x"),
        ],
    },
    // util-linux's getopt_long permutes: `script -q /dev/null -c x` still runs x.
    Program {
        names: &["script"],
        grammar: Grammar::new(SCRIPT, U),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("script -q -c x log")
                .code("x")
                .writes(&["log"]),
            Example::new("script --comm=x /dev/null")
                .code("x")
                .writes(&["/dev/null"]),
            Example::new("script -q /dev/null -c x")
                .code("x")
                .writes(&["/dev/null"]),
        ],
    },
    wrapper(
        &["systemd-run"],
        SYSTEMD_RUN,
        U,
        0,
        &[Example::new("systemd-run --user --wait ls").inner("ls")],
    ),
    wrapper(
        &["firejail"],
        FIREJAIL,
        X,
        0,
        &[
            Example::new("firejail --noprofile ls").inner("ls"),
            Example::new("firejail --join=1 ls").opaque(),
        ],
    ),
    wrapper(
        &["bwrap"],
        BWRAP,
        X,
        0,
        &[Example::new("bwrap --ro-bind / / --unshare-net ls").inner("ls")],
    ),
    Program {
        names: &["su", "runuser"],
        grammar: Grammar::new(SU, U),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("su -c x").code("x"),
            Example::new("su - deploy -c x").code("x"),
            Example::new("su root --command=x").code("x"),
            Example::new("su root a b").opaque(),
            Example::new("runuser -u app -- sh -c x").inner("sh -c x"),
        ],
    },
    wrapper(
        &["torsocks"],
        TORSOCKS,
        U,
        0,
        &[Example::new("torsocks -i curl x").inner("curl x")],
    ),
    wrapper(
        &["proxychains", "proxychains4"],
        PROXYCHAINS,
        X,
        0,
        &[Example::new("proxychains -f conf curl x")
            .inner("curl x")
            .reads(&["conf"])],
    ),
    wrapper(
        &["valgrind"],
        VALGRIND,
        X,
        0,
        &[Example::new("valgrind --leak-check=full ./a").inner("./a")],
    ),
    wrapper(
        &["parallel"],
        PARALLEL,
        U,
        0,
        &[Example::new("parallel -j 2 rm ::: a")
            .inner("rm ::: a")
            .opaque()],
    ),
    Program {
        names: &["busybox"],
        grammar: Grammar::wrapper(&[], X),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("busybox rm -rf /").inner("rm -rf /"),
            Example::new("busybox --list"),
        ],
    },
    wrapper(
        &["numactl"],
        NUMACTL,
        U,
        0,
        &[
            Example::new("numactl --cpunodebind=0 rm -rf /").inner("rm -rf /"),
            Example::new("numactl -N 0 -m 0 ls").inner("ls"),
            Example::new("numactl --hardware"),
        ],
    ),
    wrapper(
        &["xvfb-run"],
        XVFB_RUN,
        U,
        0,
        &[
            Example::new("xvfb-run -a -s -ac npm test").inner("npm test"),
            Example::new("xvfb-run --server-args=-ac ls").inner("ls"),
        ],
    ),
    wrapper(
        &["ssh-agent"],
        SSH_AGENT,
        X,
        0,
        &[
            Example::new("ssh-agent -t 60 bash -c x").inner("bash -c x"),
            Example::new("ssh-agent -s"),
        ],
    ),
    wrapper(
        &["entr"],
        ENTR,
        X,
        0,
        &[
            Example::new("entr -r make test").inner("make test"),
            Example::new("entr -s x").code("x"),
        ],
    ),
    Program {
        names: &["perf"],
        grammar: Grammar::wrapper(&[], X),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("perf record -g -- rm -rf /").inner("rm -rf /"),
            Example::new("perf stat -e cycles ls").opaque(),
            Example::new("perf report"),
        ],
    },
    Program {
        names: &["expect"],
        grammar: Grammar::new(&[], X),
        role: Role::Opaque("runs Tcl code, which spawns and drives programs"),
        examples: &[Example::new("expect -c x").opaque()],
    },
    Program {
        names: &["gdb", "lldb"],
        grammar: Grammar::new(&[], X),
        role: Role::Opaque("runs programs and its own command language"),
        examples: &[Example::new("gdb --args ls").opaque()],
    },
];

/// What a wrapper runs. `words[0]` is the wrapper.
pub fn describe(p: &'static Program, words: &[&str], d: &mut Description) {
    let name = basename(words.first().copied().unwrap_or_default());
    match name {
        "busybox" => {
            // `busybox APPLET args`; `busybox --list` runs nothing.
            if words.get(1).is_some_and(|w| !w.starts_with('-')) {
                d.inner = Some(1);
            }
            return;
        }
        "su" | "runuser" => {
            su(p, words, d);
            return;
        }
        "perf" => {
            perf(words, d);
            return;
        }
        _ => {}
    }
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, name);
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`{name}` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    // `env -S 'a b' c`: the string is split and run with the words after it (the
    // shebang form `env -S cmd args` included), whatever env makes of those words.
    if name == "env" && !d.code.is_empty() {
        for c in &mut d.code {
            c.join_rest = true;
        }
        return;
    }
    if d.ends || (!parsed.unknown.is_empty() && name != "parallel") {
        return;
    }
    if name == "script" {
        // `script [options] [FILE] [options]`: the operand is the typescript it writes;
        // without `-c` it starts an interactive shell.
        if let Some(f) = parsed.operands.first().and_then(|&i| words.get(i)) {
            d.writes.push((*f).to_string());
        }
        if d.code.is_empty() {
            d.stdin_code = true;
        }
        return;
    }
    let mut i = parsed.end;
    if name == "sudo" && parsed.has("edit") {
        // `sudo -e FILE…` (sudoedit) edits the files as root: writes, no command.
        for f in words.get(i..).unwrap_or_default() {
            d.writes.push((*f).to_string());
        }
        return;
    }
    if name == "env" {
        // `env - cmd` is `env -i cmd`.
        if words.get(i) == Some(&"-") {
            i += 1;
        }
        while words.get(i).is_some_and(|w| is_assignment(w)) {
            i += 1;
        }
    }
    let skip = match p.role {
        Role::Wrapper { skip } | Role::CodeOperands { skip } => skip,
        _ => 0,
    };
    // `sg - GROUP` is a login form of `sg GROUP`.
    if name == "sg" && words.get(i) == Some(&"-") {
        i += 1;
    }
    i += skip;
    if name == "flock" || name == "sg" {
        // `flock F -c CODE`, `sg GROUP -c CODE`: the string goes to `sh -c`.
        if matches!(words.get(i), Some(&"-c") | Some(&"--command")) {
            i += 1;
            if words.get(i).is_some() {
                d.code.push(CodeArg {
                    word: i,
                    offset: 0,
                    join_rest: false,
                });
            }
            return;
        }
    }
    if i >= words.len() {
        // Without a command these start an interactive shell.
        let shell = matches!(
            name,
            "chroot" | "unshare" | "nsenter" | "fakeroot" | "firejail" | "pkexec" | "script"
        ) || (matches!(name, "sudo" | "doas")
            && (parsed.has_short('s') || parsed.has_short('i')))
            || (name == "torsocks" && parsed.has("shell"));
        if shell && d.code.is_empty() {
            d.stdin_code = true;
        }
        return;
    }
    let watch_code = name == "watch" && !parsed.has("exec");
    if matches!(p.role, Role::CodeOperands { .. }) && (name != "watch" || watch_code) {
        d.code.push(CodeArg {
            word: i,
            offset: 0,
            join_rest: true,
        });
        return;
    }
    if name == "entr" && parsed.has_short('s') {
        // `entr -s CODE`: the utility is a string for `$SHELL -c`.
        d.code.push(CodeArg {
            word: i,
            offset: 0,
            join_rest: false,
        });
        return;
    }
    if name == "parallel" {
        d.opaque.push(
            "`parallel`, which runs its command template through a shell with each input substituted"
                .to_string(),
        );
    }
    d.inner = Some(i);
}

/// `perf record|stat|trace|… [options] [--] cmd…`: each subcommand has its own large
/// grammar, whose values (`-e EVENT`, `-o FILE`) cannot be told from the command without
/// it. After `--` the command is certain; without it the call is opaque (fail closed).
fn perf(words: &[&str], d: &mut Description) {
    let runs = matches!(
        words.get(1).copied(),
        Some(
            "record"
                | "stat"
                | "trace"
                | "ftrace"
                | "mem"
                | "c2c"
                | "kmem"
                | "lock"
                | "sched"
                | "kvm"
                | "top"
                | "kwork"
        )
    );
    if !runs {
        return;
    }
    match words.iter().position(|w| *w == "--") {
        Some(dd) if dd + 1 < words.len() => d.inner = Some(dd + 1),
        Some(_) => {}
        None if words.len() > 2 => d.opaque.push(
            "`perf` running a command after options KHAELOR does not read (write `--` before it)"
                .to_string(),
        ),
        None => {}
    }
}

/// `su [-] [USER] [-c CODE]`, `runuser -u USER [--] cmd…`: options and operands mix;
/// a code string runs through the user's shell, extra operands go to that shell.
fn su(p: &'static Program, words: &[&str], d: &mut Description) {
    let name = basename(words.first().copied().unwrap_or_default());
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, name);
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`{name}` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    if d.ends {
        return;
    }
    let mut operands = parsed.operands.iter().copied();
    if parsed.has("user") {
        // `runuser -u USER cmd…`: the command is what follows.
        d.inner = operands.next();
        return;
    }
    let mut rest: Vec<usize> = operands.collect();
    if rest.first().is_some_and(|&i| words.get(i) == Some(&"-")) {
        rest.remove(0);
    }
    // The first operand is the user; more operands are passed to the user's shell.
    if rest.len() > 1 {
        d.opaque
            .push(format!("`{name}` passing arguments to the user's shell"));
    }
    if d.code.is_empty() {
        d.stdin_code = true;
    }
}
