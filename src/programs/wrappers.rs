//! Wrappers in the table: programs that run another command given in their operands
//! (`sudo`, `env`, `timeout 5`, `chroot DIR`, `flock F`, `strace -o F`, …) or hand their
//! operands to a shell as one string (`watch`, `sg GROUP`), with their option grammars.
//!
//! Options of a wrapper end at its first operand (their parsers stop there, so the inner
//! command keeps its own options). An option the grammar does not know makes the call
//! opaque: we cannot tell whether it took the next word as its value, so we cannot tell
//! which command runs, and an allowed wrapper would run whatever follows it.

use super::description::{CodeArg, Description};
use super::options::{Abbrev, Arg, Does, Found, Grammar, Opt, Parsed, l, parse, s, sl};
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

/// bash's `jobs`: `-x COMMAND ARGS` runs the command (job specs in ARGS replaced by
/// process group ids); any other operand is a job spec, read here as the command it is
/// not, so `jobs %1` asks.
const JOBS: &[Opt] = &[
    s('l', N, NO),
    s('n', N, NO),
    s('p', N, NO),
    s('r', N, NO),
    s('s', N, NO),
    s('x', N, NO),
];

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

/// cpulimit (LimitCPU 2.x): short options only here. It finds the command by counting
/// option words, not by where getopt stopped (see `cpulimit`).
const CPULIMIT: &[Opt] = &[
    s('p', V, Does::Ends),
    s('e', V, NO),
    s('P', V, NO),
    s('l', V, NO),
    s('c', V, NO),
    s('s', V, NO),
    s('b', N, NO),
    s('f', N, NO),
    s('q', N, NO),
    s('k', N, NO),
    s('m', N, NO),
    s('r', N, NO),
    s('v', N, NO),
    s('z', N, NO),
    s('h', N, Does::Ends),
];

/// faketime compares whole words (`-mf` and `--` are timestamps, see `describe`).
const FAKETIME: &[Opt] = &[
    s('m', N, NO),
    s('f', N, NO),
    s('p', V, NO),
    l("exclude-monotonic", N, NO),
    l(
        "date-prog",
        V,
        Does::Runs("runs the program it names to read the timestamp"),
    ),
    sl('v', "version", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
];

/// nocache, a bash script over `getopts "n:D:f"`.
const NOCACHE: &[Opt] = &[s('n', V, NO), s('D', V, Does::Writes), s('f', N, NO)];

/// `daemonize [-av] [-c DIR] [-e F] [-o F] [-p F] [-l F] [-u USER] [-E N=V] PATH args`.
const DAEMONIZE: &[Opt] = &[
    s('a', N, NO),
    s('v', N, NO),
    s('c', V, Does::Chdir),
    s('e', V, Does::Writes),
    s('o', V, Does::Writes),
    s('p', V, Does::Writes),
    s('l', V, Does::Writes),
    s('u', V, NO),
    s('E', V, NO),
];

/// GNU parallel's `sem` (Getopt::Long): the command line goes to a shell.
const SEM: &[Opt] = &[
    l("bg", N, NO),
    l("fg", N, NO),
    l("wait", N, NO),
    l("pipe", N, NO),
    sl('j', "jobs", V, NO),
    sl('P', "max-procs", V, NO),
    l("id", V, NO),
    l("semaphorename", V, NO),
    l("semaphoretimeout", V, NO),
    l("st", V, NO),
    sl('u', "ungroup", N, NO),
    l("line-buffer", N, NO),
    l("will-cite", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// util-linux setarch (`+hVv3BFILRSTXZ`); its aliases (`linux64`) take no arch word.
const SETARCH: &[Opt] = &[
    sl('B', "32bit", N, NO),
    sl('F', "fdpic-funcptrs", N, NO),
    sl('I', "short-inode", N, NO),
    sl('L', "addr-compat-layout", N, NO),
    sl('R', "addr-no-randomize", N, NO),
    sl('S', "whole-seconds", N, NO),
    sl('T', "sticky-timeouts", N, NO),
    sl('X', "read-implies-exec", N, NO),
    sl('Z', "mmap-page-zero", N, NO),
    sl('3', "3gb", N, NO),
    l("4gb", N, NO),
    l("uname-2.6", N, NO),
    sl('v', "verbose", N, NO),
    l("list", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// The personality names setarch is installed under (util-linux).
const SETARCH_ALIASES: &[&str] = &[
    "linux32",
    "linux64",
    "uname26",
    "i386",
    "i486",
    "i586",
    "i686",
    "x86_64",
    "ia64",
    "ppc",
    "ppc32",
    "ppc64",
    "s390",
    "s390x",
    "sparc",
    "sparc32",
    "sparc32bash",
    "sparc64",
    "mips",
    "mips32",
    "mips64",
    "parisc",
    "parisc32",
    "parisc64",
];

/// libcgroup's cgexec (`+g:sh`).
const CGEXEC: &[Opt] = &[
    s('g', V, NO),
    s('s', N, NO),
    l("sticky", N, NO),
    sl('h', "help", N, Does::Ends),
];

/// systemd's run0 (systemd 256).
const RUN0: &[Opt] = &[
    l("no-ask-password", N, NO),
    l("machine", V, NO),
    l("unit", V, NO),
    l("property", V, NO),
    l("description", V, NO),
    l("slice", V, NO),
    l("slice-inherit", N, NO),
    sl('u', "user", V, NO),
    sl('g', "group", V, NO),
    l("nice", V, NO),
    sl('D', "chdir", V, Does::Chdir),
    l("setenv", V, NO),
    l("background", V, NO),
    l("pty", N, NO),
    l("pipe", N, NO),
    l("shell-prompt-prefix", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// runit's chpst (`+u:U:b:e:m:d:o:p:f:c:r:t:/:n:l:L:vP012V`).
const CHPST: &[Opt] = &[
    s('u', V, NO),
    s('U', V, NO),
    s('b', V, NO),
    s('e', V, Does::Reads),
    s('m', V, NO),
    s('d', V, NO),
    s('o', V, NO),
    s('p', V, NO),
    s('f', V, NO),
    s('c', V, NO),
    s('r', V, NO),
    s('t', V, NO),
    s('/', V, NO),
    s('n', V, NO),
    s('l', V, NO),
    s('L', V, NO),
    s('v', N, NO),
    s('P', N, NO),
    s('0', N, NO),
    s('1', N, NO),
    s('2', N, NO),
    s('V', N, NO),
];

/// daemontools' softlimit (`a:c:d:f:l:m:o:p:r:s:t:`).
const SOFTLIMIT: &[Opt] = &[
    s('a', V, NO),
    s('c', V, NO),
    s('d', V, NO),
    s('f', V, NO),
    s('l', V, NO),
    s('m', V, NO),
    s('o', V, NO),
    s('p', V, NO),
    s('r', V, NO),
    s('s', V, NO),
    s('t', V, NO),
];

/// tini (`p:hvwgle:s`, a getopt that permutes: see `PERMUTES`).
const TINI: &[Opt] = &[
    s('p', V, NO),
    s('h', N, Does::Ends),
    s('v', N, NO),
    s('w', N, NO),
    s('g', N, NO),
    s('l', N, Does::Ends),
    s('e', V, NO),
    s('s', N, NO),
];

/// dumb-init (`+hvVcr:`).
const DUMB_INIT: &[Opt] = &[
    sl('c', "single-child", N, NO),
    sl('r', "rewrite", V, NO),
    sl('v', "verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// gosu takes no options but these, each alone.
const GOSU: &[Opt] = &[
    sl('h', "help", N, Does::Ends),
    sl('v', "version", N, Does::Ends),
];

/// fakechroot (a script over `getopt -l … -- +l:d:sc:e:b:vh`).
const FAKECHROOT: &[Opt] = &[
    sl('l', "lib", V, Does::Runs("preloads the library it names")),
    sl(
        'd',
        "elfloader",
        V,
        Does::Runs("loads programs with the loader it names"),
    ),
    sl('s', "use-system-libs", N, NO),
    sl('c', "config-dir", V, NO),
    sl('e', "environment", V, Does::Reads),
    sl('b', "bindir", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('v', "version", N, Does::Ends),
];

const SYSTEMD_INHIBIT: &[Opt] = &[
    l("what", V, NO),
    l("who", V, NO),
    l("why", V, NO),
    l("mode", V, NO),
    l("list", N, Does::Ends),
    l("no-pager", N, NO),
    l("no-legend", N, NO),
    sl('h', "help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// sshpass (`+f:d:p:P:heVv`).
const SSHPASS: &[Opt] = &[
    s('f', V, Does::Reads),
    s('d', V, NO),
    s('p', V, NO),
    s('P', V, NO),
    s('e', N, NO),
    s('v', N, NO),
    s('h', N, Does::Ends),
    s('V', N, Does::Ends),
];

/// task-spooler: the actions (`-l`, `-t [id]`, `-K`, …) queue no command.
const TSP: &[Opt] = &[
    s('n', N, NO),
    s('g', N, NO),
    s('f', N, NO),
    s('m', N, NO),
    s('d', N, NO),
    s('B', N, NO),
    s('E', N, NO),
    s('L', V, NO),
    s('D', V, NO),
    s('N', V, NO),
    s('K', N, Does::Ends),
    s('C', N, Does::Ends),
    s('l', N, Does::Ends),
    s('S', N, Does::Ends),
    s('t', N, Does::Ends),
    s('c', N, Does::Ends),
    s('p', N, Does::Ends),
    s('o', N, Does::Ends),
    s('i', N, Does::Ends),
    s('s', N, Does::Ends),
    s('r', N, Does::Ends),
    s('w', N, Does::Ends),
    s('k', N, Does::Ends),
    s('u', N, Does::Ends),
    s('U', N, Does::Ends),
    s('h', N, Does::Ends),
    s('V', N, Does::Ends),
];

const NQ: &[Opt] = &[
    s('c', N, NO),
    s('q', N, NO),
    s('t', N, Does::Ends),
    s('w', N, Does::Ends),
];

/// trickle (`hvVsw:n:u:d:t:l:L:P:`).
const TRICKLE: &[Opt] = &[
    s('h', N, Does::Ends),
    s('v', N, NO),
    s('V', N, Does::Ends),
    s('s', N, NO),
    s('w', V, NO),
    s('n', V, NO),
    s('u', V, NO),
    s('d', V, NO),
    s('t', V, NO),
    s('l', V, NO),
    s('L', V, NO),
    s('P', V, Does::Runs("preloads the library it names")),
];

/// AppArmor's aa-exec (`+dhp:n:iv`).
const AA_EXEC: &[Opt] = &[
    sl('p', "profile", V, NO),
    sl('n', "namespace", V, NO),
    sl('i', "immediate", N, NO),
    sl('v', "verbose", N, NO),
    sl('d', "debug", N, NO),
    sl('h', "help", N, Does::Ends),
];

/// coreutils runcon: without -u/-r/-t/-l the first operand is the context.
const RUNCON: &[Opt] = &[
    sl('c', "compute", N, NO),
    sl('u', "user", V, NO),
    sl('r', "role", V, NO),
    sl('t', "type", V, NO),
    sl('l', "range", V, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// dtach: the mode comes first with its socket (`-n SOCK`), then options, then the
/// command; `-a` and `-p` attach to a session and run nothing.
const DTACH: &[Opt] = &[
    s('a', V, Does::Ends),
    s('p', V, Does::Ends),
    s('A', V, NO),
    s('c', V, NO),
    s('n', V, NO),
    s('N', V, NO),
    s('e', V, NO),
    s('E', N, NO),
    s('r', V, NO),
    s('z', N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// abduco (`aAclne:fpqrv`, a getopt that permutes): `-c|-n|-A NAME CMD…` creates a
/// session; `-a NAME` attaches.
const ABDUCO: &[Opt] = &[
    s('a', N, Does::Ends),
    s('A', N, NO),
    s('c', N, NO),
    s('n', N, NO),
    s('e', V, NO),
    s('f', N, NO),
    s('l', N, NO),
    s('p', N, NO),
    s('q', N, NO),
    s('r', N, NO),
    s('v', N, Does::Ends),
];

/// moreutils chronic (Getopt::Std `ev`, options before the command only).
const CHRONIC: &[Opt] = &[s('e', N, NO), s('v', N, NO)];

/// proot: with no command it starts `/bin/sh`.
const PROOT: &[Opt] = &[
    sl('r', "rootfs", V, NO),
    sl('b', "bind", V, NO),
    sl('m', "mount", V, NO),
    sl(
        'q',
        "qemu",
        V,
        Does::RunsCode(
            super::options::Value::Words,
            "runs the program under the emulator it names",
        ),
    ),
    sl('w', "pwd", V, Does::Chdir),
    l("cwd", V, Does::Chdir),
    sl('v', "verbose", V, NO),
    sl('k', "kernel-release", V, NO),
    sl('0', "root-id", N, NO),
    sl('i', "change-id", V, NO),
    s('R', V, NO),
    s('S', V, NO),
    l("link2symlink", N, NO),
    l("kill-on-exit", N, NO),
    sl('V', "version", N, Does::Ends),
    l("about", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
    l("usage", N, Does::Ends),
];

/// schroot (boost program_options: options may follow the command, see `PERMUTES`).
const SCHROOT: &[Opt] = &[
    sl('c', "chroot", V, NO),
    sl('u', "user", V, NO),
    sl('d', "directory", V, Does::Chdir),
    sl('a', "all", N, NO),
    sl('p', "preserve-environment", N, NO),
    sl('q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    sl('r', "run-session", N, NO),
    l("automatic-session", N, NO),
    sl('o', "option", V, NO),
    sl('n', "session-name", V, NO),
    sl('f', "force", N, NO),
    sl('l', "list", N, Does::Ends),
    sl('i', "info", N, Does::Ends),
    l("config", N, Does::Ends),
    l("location", N, Does::Ends),
    sl('b', "begin-session", N, Does::Ends),
    sl('e', "end-session", N, Does::Ends),
    l("recover-session", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// flatpak-spawn (GOption, no abbreviations); `--host` runs the command on the host.
const FLATPAK_SPAWN: &[Opt] = &[
    sl('v', "verbose", N, NO),
    l("forward-fd", V, NO),
    l("clear-env", N, NO),
    l("watch-bus", N, NO),
    l("expose-pids", N, NO),
    l("share-pids", N, NO),
    l("env", V, NO),
    l("unset-env", V, NO),
    l("env-fd", V, NO),
    l("latest-version", N, NO),
    l("sandbox", N, NO),
    l("no-network", N, NO),
    l("sandbox-expose", V, NO),
    l("sandbox-expose-ro", V, NO),
    l("sandbox-expose-path", V, NO),
    l("sandbox-expose-path-ro", V, NO),
    l("sandbox-expose-path-try", V, NO),
    l("sandbox-expose-path-ro-try", V, NO),
    l("sandbox-flag", V, NO),
    l("host", N, NO),
    l("directory", V, Does::Chdir),
    l("app-path", V, NO),
    l("usr-path", V, NO),
    sl('h', "help", N, Does::Ends),
];

/// distrobox-enter (a shell script): the command follows `--` or `-e`/`--exec`.
const DISTROBOX_ENTER: &[Opt] = &[
    sl('n', "name", V, NO),
    sl('T', "no-tty", N, NO),
    l("no-workdir", N, NO),
    sl('a', "additional-flags", V, NO),
    sl('e', "exec", N, NO),
    sl('r', "root", N, NO),
    sl('d', "dry-run", N, NO),
    sl('v', "verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// `toolbox run` (cobra, not interspersed).
const TOOLBOX_RUN: &[Opt] = &[
    sl('c', "container", V, NO),
    sl('d', "distro", V, NO),
    sl('r', "release", V, NO),
    l("preserve-fds", V, NO),
    sl('h', "help", N, Does::Ends),
];

/// `bundle exec`.
const BUNDLE_EXEC: &[Opt] = &[
    l("keep-file-descriptors", N, NO),
    l("gemfile", V, NO),
    sl('h', "help", N, Does::Ends),
];

/// `poetry run`: the global options poetry takes there.
const POETRY_RUN: &[Opt] = &[
    sl('q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    l("vv", N, NO),
    l("vvv", N, NO),
    sl('n', "no-interaction", N, NO),
    l("ansi", N, NO),
    l("no-ansi", N, NO),
    l("no-plugins", N, NO),
    l("no-cache", N, NO),
    sl('C', "directory", V, Does::Chdir),
    sl('P', "project", V, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// `pipenv run` (click).
const PIPENV_RUN: &[Opt] = &[
    l("python", V, NO),
    l("three", N, NO),
    l("clear", N, NO),
    sl('v', "verbose", N, NO),
    sl('q', "quiet", N, NO),
    l("system", N, NO),
    l("pypi-mirror", V, NO),
    sl('h', "help", N, Does::Ends),
];

/// `uv run` (clap: options end at the command).
const UV_RUN: &[Opt] = &[
    l("with", V, NO),
    l("with-editable", V, NO),
    l("with-requirements", V, Does::Reads),
    l("extra", V, NO),
    l("all-extras", N, NO),
    l("no-dev", N, NO),
    l("dev", N, NO),
    l("group", V, NO),
    l("only-group", V, NO),
    l("no-group", V, NO),
    l("all-groups", N, NO),
    l("isolated", N, NO),
    l("no-sync", N, NO),
    l("locked", N, NO),
    l("frozen", N, NO),
    l("offline", N, NO),
    l("no-project", N, NO),
    l("package", V, NO),
    l("env-file", V, Does::Reads),
    l("no-env-file", N, NO),
    sl('p', "python", V, NO),
    l("directory", V, Does::Chdir),
    l("project", V, NO),
    l("index", V, NO),
    l("default-index", V, NO),
    l("index-url", V, NO),
    l("extra-index-url", V, NO),
    sl('q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    l("no-cache", N, NO),
    sl('h', "help", N, Does::Ends),
];

/// `nix develop` (nix's own parser, no abbreviations): `-c`/`--command` takes the rest
/// of the words as the command (see `nix_develop`).
const NIX_DEVELOP: &[Opt] = &[
    sl('c', "command", N, NO),
    sl('i', "ignore-environment", N, NO),
    sl('k', "keep", V, NO),
    sl('u', "unset", V, NO),
    l("impure", N, NO),
    l("pure-eval", N, NO),
    sl('L', "print-build-logs", N, NO),
    l("phase", V, NO),
    l("unpack", N, NO),
    l("configure", N, NO),
    l("build", N, NO),
    l("check", N, NO),
    l("install", N, NO),
    l("installcheck", N, NO),
    l("profile", V, NO),
    l("redirect", Arg::Two, NO),
    l("override-input", Arg::Two, NO),
    l("expr", V, NO),
    sl('f', "file", V, Does::Reads),
    l("offline", N, NO),
    l("refresh", N, NO),
    l("show-trace", N, NO),
    l("accept-flake-config", N, NO),
    l("no-write-lock-file", N, NO),
    l("extra-experimental-features", V, NO),
    sl('v', "verbose", N, NO),
    l("quiet", N, NO),
    l("help", N, Does::Ends),
];

/// nix-shell (options and operands mix): `--run`/`--command` take a code string.
const NIX_SHELL: &[Opt] = &[
    l("run", V, Does::Code),
    l("command", V, Does::Code),
    sl('p', "packages", N, NO),
    l("pure", N, NO),
    l("impure", N, NO),
    l("keep", V, NO),
    sl('A', "attr", V, NO),
    s('I', V, NO),
    l("arg", Arg::Two, NO),
    l("argstr", Arg::Two, NO),
    sl('E', "expr", N, NO),
    l("option", Arg::Two, NO),
    sl('j', "max-jobs", V, NO),
    l("cores", V, NO),
    l("show-trace", N, NO),
    sl('v', "verbose", N, NO),
    l("quiet", N, NO),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// Open MPI's mpirun: long options with one dash or two, matched whole (see
/// `whole_words`).
const MPIRUN: &[Opt] = &[
    l("n", V, NO),
    l("np", V, NO),
    l("c", V, NO),
    l("H", V, NO),
    l("host", V, NO),
    l("hostfile", V, Does::Reads),
    l("machinefile", V, Does::Reads),
    l("x", V, NO),
    l("mca", Arg::Two, NO),
    l("gmca", Arg::Two, NO),
    l("map-by", V, NO),
    l("bind-to", V, NO),
    l("rank-by", V, NO),
    l("npernode", V, NO),
    l("wdir", V, Does::Chdir),
    l("wd", V, Does::Chdir),
    l("oversubscribe", N, NO),
    l("allow-run-as-root", N, NO),
    l("q", N, NO),
    l("quiet", N, NO),
    l("v", N, NO),
    l("verbose", N, NO),
    l("tag-output", N, NO),
    l("timestamp-output", N, NO),
    l("report-bindings", N, NO),
    l("display-map", N, NO),
    l("use-hwthread-cpus", N, NO),
    l("h", N, Does::Ends),
    l("help", N, Does::Ends),
    l("V", N, Does::Ends),
    l("version", N, Does::Ends),
];

/// Slurm's srun (`getopt_long` with `+`).
const SRUN: &[Opt] = &[
    sl('n', "ntasks", V, NO),
    sl('N', "nodes", V, NO),
    sl('c', "cpus-per-task", V, NO),
    sl('p', "partition", V, NO),
    sl('t', "time", V, NO),
    sl('J', "job-name", V, NO),
    sl('A', "account", V, NO),
    sl('w', "nodelist", V, NO),
    sl('x', "exclude", V, NO),
    sl('q', "qos", V, NO),
    sl('G', "gpus", V, NO),
    l("gres", V, NO),
    l("mem", V, NO),
    l("mem-per-cpu", V, NO),
    l("mpi", V, NO),
    l("export", V, NO),
    l("exclusive", OPT, NO),
    l("pty", N, NO),
    sl('l', "label", N, NO),
    sl('u', "unbuffered", N, NO),
    sl('Q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    sl('D', "chdir", V, Does::Chdir),
    sl('o', "output", V, Does::Writes),
    sl('e', "error", V, Does::Writes),
    sl('i', "input", V, Does::Reads),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// qemu's user-mode emulators: options with one dash or two, matched whole.
const QEMU_USER: &[Opt] = &[
    l("h", N, Does::Ends),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
    l("g", V, NO),
    l("L", V, NO),
    l("s", V, NO),
    l("cpu", V, NO),
    l("E", V, NO),
    l("U", V, NO),
    l("0", V, NO),
    l("r", V, NO),
    l("B", V, NO),
    l("R", V, NO),
    l("d", V, NO),
    l("D", V, Does::Writes),
    l("dfilter", V, NO),
    l("p", V, NO),
    l("seed", V, NO),
    l("trace", V, NO),
    l("plugin", V, Does::Runs("loads the plugin it names")),
    l("singlestep", N, NO),
    l("one-insn-per-tb", N, NO),
    l("strace", N, NO),
];

/// The names qemu's user-mode emulators go by.
const QEMU_NAMES: &[&str] = &[
    "qemu-x86_64",
    "qemu-x86_64-static",
    "qemu-i386",
    "qemu-i386-static",
    "qemu-aarch64",
    "qemu-aarch64-static",
    "qemu-arm",
    "qemu-arm-static",
    "qemu-riscv64",
    "qemu-riscv64-static",
    "qemu-ppc64le",
    "qemu-s390x",
    "qemu-mips",
];

/// The glibc dynamic loader run as a program (`ld.so [OPTIONS] PROGRAM args`): whole
/// `--name` words, each value the next word (`--argv0=x` is refused).
const LD_SO: &[Opt] = &[
    l("list", N, Does::Ends),
    l("verify", N, Does::Ends),
    l("inhibit-cache", N, NO),
    l("library-path", V, NO),
    l("inhibit-rpath", V, NO),
    l("audit", V, Does::Runs("loads the audit libraries it names")),
    l("preload", V, Does::Runs("preloads the libraries it names")),
    l("argv0", V, NO),
    l("glibc-hwcaps-prefix", V, NO),
    l("glibc-hwcaps-mask", V, NO),
    l("list-tunables", N, Does::Ends),
    l("list-diagnostics", N, Does::Ends),
    l("help", N, Does::Ends),
    l("version", N, Does::Ends),
];

const LD_SO_NAMES: &[&str] = &[
    "ld.so",
    "ld-linux-x86-64.so.2",
    "ld-linux.so.2",
    "ld-linux-aarch64.so.1",
    "ld-linux-armhf.so.3",
    "ld64.so.1",
    "ld64.so.2",
];

/// watchexec (clap): the command runs through a shell unless `-n`/`--shell=none`.
const WATCHEXEC: &[Opt] = &[
    sl('w', "watch", V, NO),
    sl('e', "exts", V, NO),
    sl('f', "filter", V, NO),
    l("filter-file", V, Does::Reads),
    sl('i', "ignore", V, NO),
    l("ignore-file", V, Does::Reads),
    sl('c', "clear", OPT, NO),
    sl('r', "restart", N, NO),
    sl('s', "signal", V, NO),
    l("stop-signal", V, NO),
    l("stop-timeout", V, NO),
    sl('d', "debounce", V, NO),
    sl('p', "postpone", N, NO),
    l("delay-run", V, NO),
    sl('o', "on-busy-update", V, NO),
    s('n', N, NO),
    l("shell", V, NO),
    sl('E', "env", V, NO),
    l("workdir", V, Does::Chdir),
    l("project-origin", V, NO),
    l("no-vcs-ignore", N, NO),
    l("no-project-ignore", N, NO),
    l("no-global-ignore", N, NO),
    l("no-default-ignore", N, NO),
    l("no-discover-ignore", N, NO),
    l("no-meta", N, NO),
    l("no-process-group", N, NO),
    l("poll", OPT, NO),
    sl('N', "notify", N, NO),
    l("print-events", N, NO),
    sl('1', "exit-after-first", N, NO),
    sl('q', "quiet", N, NO),
    sl('v', "verbose", N, NO),
    sl('h', "help", N, Does::Ends),
    sl('V', "version", N, Does::Ends),
];

/// nodemon: `--exec CMD` runs CMD (with the script and its arguments) through a shell;
/// without it the operand is a script for node.
const NODEMON: &[Opt] = &[
    sl('x', "exec", V, Does::Code),
    sl('w', "watch", V, NO),
    sl('e', "ext", V, NO),
    sl('i', "ignore", V, NO),
    sl('d', "delay", V, NO),
    sl('V', "verbose", N, NO),
    sl('q', "quiet", N, NO),
    sl('C', "on-change-only", N, NO),
    sl('I', "no-stdin", N, NO),
    sl('L', "legacy-watch", N, NO),
    sl('P', "polling-interval", V, NO),
    l("signal", V, NO),
    l("config", V, Does::Reads),
    l("cwd", V, Does::Chdir),
    l("spawn", N, NO),
    l("exitcrash", N, NO),
    l("no-colors", N, NO),
    sl('v', "version", N, Does::Ends),
    sl('h', "help", N, Does::Ends),
];

/// Wrappers whose getopt permutes: an option word after the command is theirs, so the
/// command is certain only after `--` or when no word after it looks like an option.
const PERMUTES: &[&str] = &["tini", "schroot", "abduco"];

/// Programs that run a command only in one subcommand (`uv run`, `bundle exec`): the
/// entry's grammar is that subcommand's.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("uv", &["run"]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("bundle", &["exec", "e", "ex", "exe"]),
    ("toolbox", &["run"]),
    ("nix", &["develop"]),
];

/// Whether a command word is one of the subcommand runners above.
pub fn runs_in_subcommand(name: &str) -> bool {
    SUBCOMMANDS.iter().any(|(n, _)| *n == name)
}

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
        &["jobs"],
        JOBS,
        X,
        0,
        &[
            Example::new("jobs -x rm a.txt").inner("rm a.txt"),
            Example::new("jobs -l"),
        ],
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
        names: &["busybox", "toybox"],
        grammar: Grammar::wrapper(&[], X),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("busybox rm -rf /").inner("rm -rf /"),
            Example::new("toybox rm -rf /").inner("rm -rf /"),
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
    // cpulimit counts its option words to find the command (see `cpulimit`).
    wrapper(
        &["cpulimit"],
        CPULIMIT,
        X,
        0,
        &[
            Example::new("cpulimit -l 10 -- rm -rf /").inner("rm -rf /"),
            Example::new("cpulimit -l 10 make").inner("make"),
            Example::new("cpulimit -l 10 -s 9 make x").inner("x"),
            Example::new("cpulimit -l10 x rm -rf /").opaque(),
            Example::new("cpulimit --limit=10 x rm -rf /").opaque(),
            Example::new("cpulimit -l 10 rm -rf /").opaque(),
            Example::new("cpulimit -p 1 -l 10"),
        ],
    ),
    wrapper(
        &["eatmydata"],
        &[],
        X,
        0,
        &[
            Example::new("eatmydata rm -rf /").inner("rm -rf /"),
            Example::new("eatmydata -- make").inner("make"),
            Example::new("eatmydata -x make").opaque(),
        ],
    ),
    wrapper(
        &["faketime"],
        FAKETIME,
        X,
        1,
        &[
            Example::new("faketime 2020-01-01 rm -rf /").inner("rm -rf /"),
            Example::new("faketime -f +2y make").inner("make"),
            Example::new("faketime -- rm -rf /").inner("rm -rf /"),
            Example::new("faketime -mf x make").opaque(),
            Example::new("faketime --date-prog gdate @0 ls")
                .inner("ls")
                .runs(),
        ],
    ),
    wrapper(
        &["nocache"],
        NOCACHE,
        X,
        0,
        &[
            Example::new("nocache rm -rf /").inner("rm -rf /"),
            Example::new("nocache -n 2 cp a b").inner("cp a b"),
        ],
    ),
    wrapper(
        &["daemonize"],
        DAEMONIZE,
        X,
        0,
        &[
            Example::new("daemonize -c /tmp /bin/rm -rf /").inner("/bin/rm -rf /"),
            Example::new("daemonize -o out /usr/bin/make")
                .inner("/usr/bin/make")
                .writes(&["out"]),
        ],
    ),
    Program {
        names: &["sem"],
        grammar: Grammar::wrapper(SEM, U),
        role: Role::CodeOperands { skip: 0 },
        examples: &[
            Example::new("sem rm -rf /").code("rm -rf /"),
            Example::new("sem --id x -j 2 make").code("make"),
            Example::new("sem --bogus make").opaque(),
        ],
    },
    Program {
        names: &["setarch"],
        grammar: Grammar::wrapper(SETARCH, U),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("setarch x86_64 rm -rf /").inner("rm -rf /"),
            Example::new("setarch i686 -R --3gb make").inner("make"),
            Example::new("setarch --list"),
            Example::new("setarch x86_64 -Q make").opaque(),
        ],
    },
    Program {
        names: SETARCH_ALIASES,
        grammar: Grammar::wrapper(SETARCH, U),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("linux64 rm -rf /").inner("rm -rf /"),
            Example::new("linux32 -R make").inner("make"),
            Example::new("i386 -B make").inner("make"),
        ],
    },
    wrapper(
        &["cgexec"],
        CGEXEC,
        U,
        0,
        &[
            Example::new("cgexec -g cpu:x rm -rf /").inner("rm -rf /"),
            Example::new("cgexec -g cpu,memory:a --sticky make").inner("make"),
        ],
    ),
    wrapper(
        &["run0"],
        RUN0,
        U,
        0,
        &[
            Example::new("run0 rm -rf /").inner("rm -rf /"),
            Example::new("run0 -u app --chdir=/srv make").inner("make"),
        ],
    ),
    wrapper(
        &["chpst"],
        CHPST,
        X,
        0,
        &[
            Example::new("chpst -u x rm -rf /").inner("rm -rf /"),
            Example::new("chpst -vn 1 -m 100 make").inner("make"),
        ],
    ),
    wrapper(
        &["setuidgid", "envuidgid", "su-exec"],
        &[],
        X,
        1,
        &[
            Example::new("setuidgid x rm -rf /").inner("rm -rf /"),
            Example::new("envuidgid x make").inner("make"),
            Example::new("su-exec root rm -rf /").inner("rm -rf /"),
        ],
    ),
    wrapper(
        &["softlimit"],
        SOFTLIMIT,
        X,
        0,
        &[
            Example::new("softlimit -m 1000 rm -rf /").inner("rm -rf /"),
            Example::new("softlimit -t5 make").inner("make"),
        ],
    ),
    wrapper(
        &["tini"],
        TINI,
        X,
        0,
        &[
            Example::new("tini -- rm -rf /").inner("rm -rf /"),
            Example::new("tini -s make").inner("make"),
            Example::new("tini -s rm -l x").opaque(),
        ],
    ),
    wrapper(
        &["dumb-init"],
        DUMB_INIT,
        U,
        0,
        &[
            Example::new("dumb-init rm -rf /").inner("rm -rf /"),
            Example::new("dumb-init -r 15:2 make").inner("make"),
        ],
    ),
    wrapper(
        &["gosu"],
        GOSU,
        X,
        1,
        &[
            Example::new("gosu root rm -rf /").inner("rm -rf /"),
            Example::new("gosu app:app make").inner("make"),
        ],
    ),
    wrapper(
        &["fakechroot"],
        FAKECHROOT,
        U,
        0,
        &[
            Example::new("fakechroot rm -rf /").inner("rm -rf /"),
            Example::new("fakechroot -s -- chroot /x ls").inner("chroot /x ls"),
        ],
    ),
    wrapper(
        &["systemd-inhibit"],
        SYSTEMD_INHIBIT,
        U,
        0,
        &[
            Example::new("systemd-inhibit rm -rf /").inner("rm -rf /"),
            Example::new("systemd-inhibit --what=sleep --why=x make").inner("make"),
            Example::new("systemd-inhibit --list"),
        ],
    ),
    wrapper(
        &["sshpass"],
        SSHPASS,
        X,
        0,
        &[
            Example::new("sshpass -p x rm -rf /").inner("rm -rf /"),
            Example::new("sshpass -f pw ssh h")
                .inner("ssh h")
                .reads(&["pw"]),
        ],
    ),
    wrapper(
        &["tsp"],
        TSP,
        X,
        0,
        &[
            Example::new("tsp rm -rf /").inner("rm -rf /"),
            Example::new("tsp -n -L x make").inner("make"),
            Example::new("tsp -l"),
        ],
    ),
    wrapper(
        &["nq"],
        NQ,
        X,
        0,
        &[
            Example::new("nq rm -rf /").inner("rm -rf /"),
            Example::new("nq -q make").inner("make"),
        ],
    ),
    wrapper(
        &["trickle"],
        TRICKLE,
        X,
        0,
        &[
            Example::new("trickle -d 10 rm -rf /").inner("rm -rf /"),
            Example::new("trickle -s -u 5 curl x").inner("curl x"),
        ],
    ),
    wrapper(
        &["aa-exec"],
        AA_EXEC,
        U,
        0,
        &[
            Example::new("aa-exec -p x -- rm -rf /").inner("rm -rf /"),
            Example::new("aa-exec --profile=x make").inner("make"),
        ],
    ),
    wrapper(
        &["runcon"],
        RUNCON,
        U,
        1,
        &[
            Example::new("runcon -t x rm -rf /").inner("rm -rf /"),
            Example::new("runcon u:r:t:s0 rm -rf /").inner("rm -rf /"),
            Example::new("runcon -c ctx make").inner("make"),
        ],
    ),
    wrapper(
        &["dtach"],
        DTACH,
        X,
        0,
        &[
            Example::new("dtach -n /tmp/s rm -rf /").inner("rm -rf /"),
            Example::new("dtach -A /tmp/s -z make").inner("make"),
            Example::new("dtach -a /tmp/s"),
        ],
    ),
    wrapper(
        &["abduco"],
        ABDUCO,
        X,
        1,
        &[
            Example::new("abduco -c s -- rm -rf /").inner("rm -rf /"),
            Example::new("abduco -c -- s rm -rf /").inner("rm -rf /"),
            Example::new("abduco -c s rm -rf /").opaque(),
            Example::new("abduco -n -e ^q s make").inner("make"),
            Example::new("abduco -a s"),
        ],
    ),
    wrapper(
        &["chronic"],
        CHRONIC,
        X,
        0,
        &[
            Example::new("chronic rm -rf /").inner("rm -rf /"),
            Example::new("chronic -ev make").inner("make"),
        ],
    ),
    wrapper(
        &["ifne"],
        &[s('n', N, NO)],
        X,
        0,
        &[
            Example::new("ifne rm -rf /").inner("rm -rf /"),
            Example::new("ifne -n make").inner("make"),
        ],
    ),
    wrapper(
        &["proot"],
        PROOT,
        U,
        0,
        &[
            Example::new("proot rm -rf /").inner("rm -rf /"),
            Example::new("proot -r /x -b /dev -w / make").inner("make"),
            Example::new("proot -q qemu-arm ls").inner("ls").runs(),
        ],
    ),
    wrapper(
        &["schroot"],
        SCHROOT,
        U,
        0,
        &[
            Example::new("schroot -- rm -rf /").inner("rm -rf /"),
            Example::new("schroot -c sid -- make -j2").inner("make -j2"),
            Example::new("schroot -c sid make -j2").opaque(),
            Example::new("schroot -l"),
        ],
    ),
    wrapper(
        &["flatpak-spawn"],
        FLATPAK_SPAWN,
        X,
        0,
        &[
            Example::new("flatpak-spawn --host rm -rf /").inner("rm -rf /"),
            Example::new("flatpak-spawn --host --env=A=1 make").inner("make"),
            Example::new("flatpak-spawn --hos make").opaque(),
        ],
    ),
    wrapper(
        &["distrobox-enter"],
        DISTROBOX_ENTER,
        X,
        0,
        &[
            Example::new("distrobox-enter -- rm -rf /").inner("rm -rf /"),
            Example::new("distrobox-enter box -- make").inner("make"),
            Example::new("distrobox-enter -n box -e make").inner("make"),
        ],
    ),
    wrapper(
        &["toolbox"],
        TOOLBOX_RUN,
        X,
        0,
        &[
            Example::new("toolbox run rm -rf /").inner("rm -rf /"),
            Example::new("toolbox run -c box make").inner("make"),
            Example::new("toolbox list"),
        ],
    ),
    wrapper(
        &["bundle"],
        BUNDLE_EXEC,
        X,
        0,
        &[
            Example::new("bundle exec rm -rf /").inner("rm -rf /"),
            Example::new("bundle exec --gemfile=G rake test").inner("rake test"),
            Example::new("bundle install"),
            Example::new("bundle --verbose exec rake").opaque(),
        ],
    ),
    wrapper(
        &["poetry"],
        POETRY_RUN,
        X,
        0,
        &[
            Example::new("poetry run rm -rf /").inner("rm -rf /"),
            Example::new("poetry run -C sub pytest -x").inner("pytest -x"),
            Example::new("poetry install"),
        ],
    ),
    wrapper(
        &["pipenv"],
        PIPENV_RUN,
        X,
        0,
        &[
            Example::new("pipenv run rm -rf /").inner("rm -rf /"),
            Example::new("pipenv run python -V").inner("python -V"),
        ],
    ),
    wrapper(
        &["uv"],
        UV_RUN,
        X,
        0,
        &[
            Example::new("uv run rm -rf /").inner("rm -rf /"),
            Example::new("uv run --with rich -p 3.12 pytest -q").inner("pytest -q"),
            Example::new("uv run --bogus pytest").opaque(),
            Example::new("uv sync"),
        ],
    ),
    wrapper(
        &["nix"],
        NIX_DEVELOP,
        X,
        0,
        &[
            Example::new("nix develop -c rm -rf /").inner("rm -rf /"),
            Example::new("nix develop .#x --impure --command make").inner("make"),
            Example::new("nix develop --keep -c -c make").inner("make"),
            Example::new("nix build"),
        ],
    ),
    Program {
        names: &["nix-shell"],
        grammar: Grammar::new(NIX_SHELL, X),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("nix-shell --run x").code("x"),
            Example::new("nix-shell -p hello --command x").code("x"),
            Example::new("nix-shell --bogus --run x").code("x").opaque(),
        ],
    },
    Program {
        names: &["capsh"],
        grammar: Grammar::wrapper(&[], X),
        role: Role::Wrapper { skip: 0 },
        examples: &[
            Example::new("capsh -- -c x").code("x"),
            Example::new("capsh --drop=cap_x --user=a -- -c x").code("x"),
            Example::new("capsh --print"),
            Example::new("capsh == --print").opaque(),
            Example::new("capsh --shell=/bin/sh -+ -c x").code("x"),
            Example::new("capsh --shell=/usr/bin/perl -- -e x").opaque(),
        ],
    },
    wrapper(
        &["mpirun", "mpiexec", "orterun"],
        MPIRUN,
        X,
        0,
        &[
            Example::new("mpirun -n 1 rm -rf /").inner("rm -rf /"),
            Example::new("mpirun -np 4 --mca btl self ./a").inner("./a"),
            Example::new("mpirun -n 1 ./a : -n 1 ./b")
                .inner("./a : -n 1 ./b")
                .opaque(),
            Example::new("mpirun -bogus ./a").opaque(),
        ],
    ),
    wrapper(
        &["srun"],
        SRUN,
        U,
        0,
        &[
            Example::new("srun rm -rf /").inner("rm -rf /"),
            Example::new("srun -N 2 --ntasks=4 ./a").inner("./a"),
        ],
    ),
    wrapper(
        QEMU_NAMES,
        QEMU_USER,
        X,
        0,
        &[
            Example::new("qemu-x86_64 /bin/rm -rf /").inner("/bin/rm -rf /"),
            Example::new("qemu-aarch64 -L /usr/aarch64 -cpu max ./a").inner("./a"),
            Example::new("qemu-arm -bogus ./a").opaque(),
        ],
    ),
    wrapper(
        LD_SO_NAMES,
        LD_SO,
        X,
        0,
        &[
            Example::new("ld.so /bin/rm -rf /").inner("/bin/rm -rf /"),
            Example::new("ld-linux-x86-64.so.2 --library-path /x /bin/ls").inner("/bin/ls"),
            Example::new("ld.so --argv0=x /bin/ls").opaque(),
            Example::new("ld.so --list /bin/ls"),
        ],
    ),
    Program {
        names: &["watchexec"],
        grammar: Grammar::wrapper(WATCHEXEC, X),
        role: Role::CodeOperands { skip: 0 },
        examples: &[
            Example::new("watchexec -- rm -rf /").code("rm -rf /"),
            Example::new("watchexec -e rs -r cargo test").code("cargo test"),
            Example::new("watchexec --bogus make").opaque(),
        ],
    },
    wrapper(
        &["nodemon"],
        NODEMON,
        X,
        0,
        &[
            Example::new("nodemon --exec x").code("x"),
            Example::new("nodemon -w src -x x app.js").code("x app.js"),
            Example::new("nodemon --inspect app.js").opaque(),
        ],
    ),
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
        "busybox" | "toybox" => {
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
        "cpulimit" => {
            cpulimit(p, words, d);
            return;
        }
        "capsh" => {
            capsh(words, d);
            return;
        }
        "nix-shell" => {
            nix_shell(p, words, d);
            return;
        }
        _ if QEMU_NAMES.contains(&name)
            || name == "mpirun"
            || name == "mpiexec"
            || name == "orterun" =>
        {
            whole_words(p, words, d, true);
            return;
        }
        _ if LD_SO_NAMES.contains(&name) => {
            whole_words(p, words, d, false);
            return;
        }
        _ => {}
    }
    // `setarch ARCH [options] cmd…`: the arch comes before the options.
    let start = if name == "setarch" && words.get(1).is_some_and(|w| !w.starts_with('-')) {
        2
    } else if runs_in_subcommand(name) {
        // `uv run [options] cmd…`: options before the subcommand are not read here.
        match words.get(1).copied() {
            Some(w) if w.starts_with('-') => {
                // Only where a word after them may be the subcommand that runs a
                // command (`uv --project x run …`); `pipenv --three`, `uv --version`
                // run none.
                let runs = words.iter().skip(2).any(|x| {
                    SUBCOMMANDS
                        .iter()
                        .any(|(n, subs)| *n == name && subs.contains(x))
                });
                if runs {
                    d.opaque.push(format!(
                        "`{name}` with options before its subcommand, which KHAELOR does not read"
                    ));
                }
                return;
            }
            Some("develop") if name == "nix" => {
                nix_develop(p, words, d);
                return;
            }
            Some(w)
                if SUBCOMMANDS
                    .iter()
                    .any(|(n, subs)| *n == name && subs.contains(&w)) =>
            {
                2
            }
            _ => return,
        }
    } else {
        1
    };
    let parsed = parse(&p.grammar, words, start);
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
    let after_dd = i > start && words.get(i - 1) == Some(&"--");
    if name == "faketime" {
        // faketime compares whole words: `-mf` is a timestamp, so is `--`.
        if parsed.found.iter().any(|f| {
            let w = words.get(f.at).copied().unwrap_or_default();
            (w.len() != 2 && !w.starts_with("--"))
                || w.contains('=')
                || f.value_at.is_some_and(|(at, _)| at == f.at)
        }) {
            d.opaque
                .push("`faketime` with an option word it does not read whole".to_string());
            return;
        }
        if after_dd {
            i -= 1;
        }
    }
    // A permuting getopt takes a `--` that follows the positional words (`abduco -c NAME
    // -- cmd…`) as the end of its options; any other option word after them is its own.
    let skip = match p.role {
        Role::Wrapper { skip } | Role::CodeOperands { skip } => skip,
        _ => 0,
    };
    let dd_after_skip = PERMUTES.contains(&name)
        && !after_dd
        && words.get(i + skip) == Some(&"--")
        && words
            .get(i..i + skip)
            .is_some_and(|ws| ws.iter().all(|w| !w.starts_with('-')));
    if PERMUTES.contains(&name)
        && !after_dd
        && !dd_after_skip
        && words
            .get(i..)
            .unwrap_or_default()
            .iter()
            .any(|w| w.starts_with('-') && w.len() > 1)
    {
        d.opaque.push(format!(
            "`{name}`, which reads option words after its command as its own (write `--` before the command)"
        ));
        return;
    }
    if name == "distrobox-enter" {
        // `distrobox-enter [NAME] [-- | -e] cmd…`; without a command, a login shell.
        if !after_dd && !parsed.has("exec") {
            if words.get(i).is_some_and(|w| !w.starts_with('-')) {
                i += 1;
            }
            if matches!(words.get(i), Some(&"--") | Some(&"-e") | Some(&"--exec")) {
                i += 1;
            } else if i < words.len() {
                d.opaque
                    .push("`distrobox-enter` with words KHAELOR does not read".to_string());
                return;
            }
        }
        if i >= words.len() {
            d.stdin_code = true;
        } else {
            d.inner = Some(i);
        }
        return;
    }
    if name == "runcon"
        && ["user", "role", "type", "range"]
            .iter()
            .any(|o| parsed.has(o))
    {
        // `runcon -t TYPE cmd…`: with a context part given there is no CONTEXT operand.
        d.inner = (i < words.len()).then_some(i);
        return;
    }
    if name == "dtach" && !['A', 'c', 'n', 'N'].iter().any(|&m| parsed.has_short(m)) {
        // dtach runs a command only in a mode that creates a session.
        return;
    }
    if name == "abduco"
        && !(parsed.has_short('c') || parsed.has_short('n') || parsed.has_short('A'))
    {
        return;
    }
    if name == "nodemon" && d.code.is_empty() {
        // `nodemon app.js args`: the script runs under node.
        if i < words.len() {
            d.script = Some(i);
        }
        return;
    }
    if name == "nodemon" {
        // `nodemon --exec CMD script args`: CMD runs with the script and its arguments.
        for c in &mut d.code {
            c.join_rest = true;
        }
        return;
    }
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
    // `sg - GROUP` is a login form of `sg GROUP`.
    if name == "sg" && words.get(i) == Some(&"-") {
        i += 1;
    }
    i += skip;
    if dd_after_skip {
        i += 1;
    }
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
            "chroot"
                | "unshare"
                | "nsenter"
                | "fakeroot"
                | "firejail"
                | "pkexec"
                | "script"
                | "setarch"
                | "run0"
                | "proot"
                | "schroot"
                | "fakechroot"
        ) || SETARCH_ALIASES.contains(&name)
            || (matches!(name, "sudo" | "doas")
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

/// `cpulimit [options] [--] cmd…` (LimitCPU): it does not take the command where getopt
/// stopped but counts option words (2 for `-l N`, 3 for `-s SIG`, 1 for a flag), then
/// skips one `--` there; `--limit=10 x cmd` runs `cmd`. Read only when every option is
/// a whole word and the count lands past the options; its getopt permutes, so without
/// `--` no later word may look like an option.
fn cpulimit(p: &'static Program, words: &[&str], d: &mut Description) {
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, "cpulimit");
    if !parsed.unknown.is_empty() {
        d.opaque.extend(
            parsed
                .unknown
                .iter()
                .map(|u| format!("`cpulimit` with the option `{u}`, which KHAELOR does not know")),
        );
        return;
    }
    if d.ends {
        return;
    }
    let whole = parsed.found.iter().all(|f| {
        words.get(f.at).is_some_and(|w| w.len() == 2)
            && f.value_at.is_none_or(|(at, _)| at == f.at + 1)
    });
    let count: usize = parsed
        .found
        .iter()
        .map(|f| match f.opt.short {
            Some('s') => 3,
            _ if f.opt.arg == Arg::No => 1,
            _ => 2,
        })
        .sum();
    let mut at = count + 1;
    if words.get(at) == Some(&"--") && at + 1 < words.len() {
        at += 1;
    }
    let after_dd = parsed.end > 1 && words.get(parsed.end - 1) == Some(&"--");
    let later_option = !after_dd
        && words
            .get(parsed.end..)
            .unwrap_or_default()
            .iter()
            .any(|w| w.starts_with('-') && w.len() > 1);
    if !whole || at < parsed.end || later_option {
        d.opaque.push(
            "`cpulimit`, which counts its option words to find the command (write each option and value as its own word, then `--`)"
                .to_string(),
        );
        return;
    }
    if at < words.len() {
        d.inner = Some(at);
    }
}

/// `capsh [--opt=value…] -- ARGS`: `--` (and `-+`) runs `/bin/bash ARGS`, or the shell
/// `--shell=` names, read here as that shell's own words; `==` and `=+` run capsh again
/// with the rest. Every capsh option is one word; capsh refuses any other word.
fn capsh(words: &[&str], d: &mut Description) {
    let mut shell = "bash";
    for (i, w) in words.iter().enumerate().skip(1) {
        match *w {
            "--" | "-+" => {
                if !super::is_shell(shell) {
                    d.opaque.push(format!(
                        "`capsh --shell={shell}`, which hands its words to a program KHAELOR does not read"
                    ));
                    return;
                }
                let mut sh: Vec<&str> = vec![shell];
                sh.extend(words.get(i + 1..).unwrap_or_default());
                // A shell's words, read as `unwrap::describe` would: `is_shell` means
                // the table's entry for the name is a shell's.
                let mut inner = Description::default();
                if let Some(p) = super::lookup(shell) {
                    super::shells::describe(p, &sh, &mut inner);
                }
                // Index k of the shell's words is index i + k of capsh's.
                d.code.extend(inner.code.into_iter().map(|c| CodeArg {
                    word: c.word + i,
                    ..c
                }));
                d.script = inner.script.map(|k| k + i);
                d.stdin_code = inner.stdin_code;
                d.opaque.extend(inner.opaque);
                d.runs.extend(inner.runs);
                d.reads.extend(inner.reads);
                return;
            }
            "==" | "=+" => {
                d.opaque
                    .push("`capsh ==`, which runs capsh again with the words after it".to_string());
                return;
            }
            w if w.starts_with("--shell=") => {
                shell = w.get("--shell=".len()..).unwrap_or_default();
            }
            w if w.starts_with("--") => {}
            // `-h` prints help; capsh refuses anything else. Either way nothing runs.
            _ => return,
        }
    }
}

/// `nix-shell [options] [path…]`: `--run`/`--command` take code; without them an
/// interactive shell reads its input.
fn nix_shell(p: &'static Program, words: &[&str], d: &mut Description) {
    let parsed = parse(&p.grammar, words, 1);
    d.apply_options(&parsed, words, "nix-shell");
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`nix-shell` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    if !d.ends && d.code.is_empty() {
        d.stdin_code = true;
    }
}

/// `nix develop [installable] [options] [-c|--command cmd…]`: options and installables
/// mix until `-c`, after which every word is the command; without it a shell starts.
fn nix_develop(p: &'static Program, words: &[&str], d: &mut Description) {
    let mut at = 2;
    loop {
        let parsed = parse(&p.grammar, words, at);
        d.apply_options(&parsed, words, "nix develop");
        if !parsed.unknown.is_empty() {
            d.opaque.extend(parsed.unknown.iter().map(|u| {
                format!("`nix develop` with the option `{u}`, which KHAELOR does not know")
            }));
            return;
        }
        if d.ends {
            return;
        }
        if parsed.has("command") {
            d.inner = (parsed.end < words.len()).then_some(parsed.end);
            return;
        }
        if parsed.end >= words.len() {
            d.stdin_code = true;
            return;
        }
        // An installable (`.#dev`): options may follow it.
        at = parsed.end + 1;
    }
}

/// Programs whose long options have one dash or two and are matched whole (Open MPI's
/// `-np 4`, qemu's `-cpu max`), or, with `single` false, only two (the dynamic loader's
/// `--library-path DIR`). A value is always the next word; the first word that is no
/// option is the command. An MPMD `:` makes a second command, not read here.
fn whole_words(p: &'static Program, words: &[&str], d: &mut Description, single: bool) {
    let name = basename(words.first().copied().unwrap_or_default());
    let mut parsed = Parsed {
        end: words.len(),
        ..Parsed::default()
    };
    let mut i = 1;
    while let Some(&w) = words.get(i) {
        if w == "--" && single {
            parsed.end = i + 1;
            break;
        }
        let bare = if single {
            w.strip_prefix("--").or_else(|| w.strip_prefix('-'))
        } else {
            w.strip_prefix("--")
        };
        let Some(bare) = bare.filter(|b| !b.is_empty()) else {
            if w.starts_with('-') && w.len() > 1 {
                parsed.unknown.push(w.to_string());
                break;
            }
            parsed.end = i;
            break;
        };
        let Some(opt) = p.grammar.opts.iter().find(|o| o.long == Some(bare)) else {
            parsed.unknown.push(w.to_string());
            break;
        };
        let used = match opt.arg {
            Arg::No | Arg::Optional => 0,
            Arg::Required => 1,
            Arg::Two => 2,
        };
        parsed.found.push(Found {
            opt,
            value: words
                .get(i + 1)
                .filter(|_| used > 0)
                .map(|v| (*v).to_string()),
            at: i,
            value_at: (used > 0 && i + 1 < words.len()).then_some((i + 1, 0)),
        });
        i += 1 + used;
    }
    d.apply_options(&parsed, words, name);
    for u in &parsed.unknown {
        d.opaque.push(format!(
            "`{name}` with the option `{u}`, which KHAELOR does not know"
        ));
    }
    if d.ends || !parsed.unknown.is_empty() || parsed.end >= words.len() {
        return;
    }
    d.inner = Some(parsed.end);
    if words.get(parsed.end..).unwrap_or_default().contains(&":") {
        d.opaque.push(format!(
            "`{name}` with `:`, which starts another command KHAELOR does not read"
        ));
    }
}
