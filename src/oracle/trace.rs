//! strace output -> per-command facts.
//!
//! Owns reading one batch's trace (`strace -f -xx -o FILE`, every string as `\xHH`), joining
//! `<unfinished ...>` / `<... resumed>` halves, building the process tree from the
//! `clone`/`fork` returns, attributing each process to the command whose marker it
//! descends from, tracking each process' cwd through `chdir`, and turning the events
//! into `Observed` facts. It owns the harness' markers (the driver's argv[0], the
//! not-found handler's path), which `sandbox` writes, and knows nothing about analyses.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{Exec, ExecVia, Observed, RunStatus};

/// The not-found handler hands the command's argv to this (absent) path.
pub const NOT_FOUND_PATH: &str = "/.oracle/nf";
/// `argv[0]` of the driver's own `exec` of bash for each command is this prefix and the
/// command's index (`__khaelor_oracle__:17`): the marker that starts a command's process
/// tree, at no extra fork.
pub const HARNESS_ARGV0: &str = "__khaelor_oracle__:";
/// `argv[0]` of the producers' layout's `bash -n` of each command (`__khaelor_syntax__:17`).
pub const SYNTAX_ARGV0: &str = "__khaelor_syntax__:";

/// One system call of interest, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Execve {
        path: String,
        argv: Vec<String>,
    },
    /// `openat`/`open`/`creat` with a write flag; `dirfd` is `None` for `AT_FDCWD`;
    /// `opened` the file a descriptor returned names (`-y`).
    OpenWrite {
        dirfd: Option<String>,
        path: String,
        opened: Option<String>,
    },
    /// `openat`/`open` without a write flag that succeeded (the program oracle's secret
    /// reads); `dirfd` as in `OpenWrite`.
    OpenRead {
        dirfd: Option<String>,
        path: String,
        /// The file the kernel opened, where strace shows it (`-y`: `= 3</real/path>`).
        opened: Option<String>,
    },
    /// `socket(DOMAIN, …)`, the domain as strace names it (`AF_INET`).
    Socket {
        domain: String,
    },
    /// `connect(fd, ADDRESS, …)`: the family, and a Unix socket's path.
    Connect {
        address: String,
    },
    Chdir {
        path: String,
    },
    /// `fchdir`: the new cwd, where `-y` shows the descriptor's directory (the
    /// programs' layout); `None` cannot be known from the trace.
    Fchdir {
        path: Option<String>,
    },
    /// A call that creates, changes or removes a name other than by `open` (`mkdir`,
    /// `unlink`, `rename`, `symlink`, `link`, `chmod`, `truncate`, `utimensat`), where
    /// it succeeded or was refused (`EROFS`, `EACCES`, `EPERM`: the attempt is the
    /// fact); one that found nothing to act on (`ENOENT`, `EEXIST`) changed nothing.
    /// Each target is a directory (`None`: the cwd; as in `OpenWrite`) and a path; a
    /// rename has two, the old name first.
    Change {
        op: Op,
        targets: Vec<(Option<String>, String)>,
    },
    /// A `newfstatat`/`stat` probe that failed (a PATH lookup leaves one per entry).
    StatMissing {
        path: String,
    },
    /// `clone`/`clone3`/`fork`/`vfork` returned this child in the parent. `decode_call`
    /// knows only the pid (life 0); `events_by_proc` binds it to the child's life.
    Spawn {
        child: Proc,
    },
    /// The process ended: `+++ exited with N +++` (`None`: killed by a signal).
    Exited {
        code: Option<i32>,
    },
}

/// What a call does to the path it names (`Change`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Op {
    /// Opened for writing (`open`/`openat`/`creat` with a write flag).
    Open,
    Mkdir,
    /// `unlink`, `unlinkat` (also `AT_REMOVEDIR`), `rmdir`.
    Remove,
    /// The old name of a rename (it disappears).
    RenameFrom,
    /// The new name of a rename (it appears or is replaced).
    RenameTo,
    Symlink,
    /// The new name of a hard link.
    Link,
    Chmod,
    Truncate,
    /// `utimensat` (`touch`, `cp -p`).
    Times,
}

impl Op {
    /// Whether the call follows a symlink at the last component (the file changed is
    /// the link's target) rather than acting on the name itself.
    pub fn follows(self) -> bool {
        matches!(self, Op::Open | Op::Chmod | Op::Truncate | Op::Times)
    }

    pub fn verb(self) -> &'static str {
        match self {
            Op::Open => "wrote",
            Op::Mkdir => "made directory",
            Op::Remove => "removed",
            Op::RenameFrom => "renamed away",
            Op::RenameTo => "renamed onto",
            Op::Symlink => "made symlink",
            Op::Link => "made hard link",
            Op::Chmod => "changed the mode of",
            Op::Truncate => "truncated",
            Op::Times => "set the times of",
        }
    }
}

/// One change a command's process made to a name (the program oracle's edits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub op: Op,
    /// The path as the program named it, joined onto its cwd or directory descriptor
    /// and cleaned lexically (`?/`, `?fdN/` when that is unknown).
    pub path: String,
    /// The file the kernel opened, where the trace shows it (`-y` on a returned or
    /// passed descriptor): a write through a symlink shows where it landed.
    pub real: Option<String>,
}

/// One process: a pid and which of its lives in the trace. The kernel reuses pids
/// (`pid_max` is 32,768 here) and a runaway command forks tens of thousands of
/// processes in a batch, so a pid alone would merge a dead process' history with
/// a later, unrelated one, and credit the later one's programs to the first one's
/// command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Proc {
    pid: u32,
    /// 0 for the first process with this pid in the trace, 1 for the next, ...
    life: u32,
}

/// Decodes a strace `-xx` string body (`\x6c\x73`), also accepting plain characters and
/// the C escapes strace may still print.
fn decode_string(body: &str) -> String {
    let b = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() / 4);
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'\\' {
            match b.get(i + 1) {
                Some(b'x') => {
                    let hex = b
                        .get(i + 2..i + 4)
                        .and_then(|h| std::str::from_utf8(h).ok());
                    if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        out.push(v);
                        i += 4;
                        continue;
                    }
                    out.push(b'x');
                    i += 2;
                }
                Some(b'n') => {
                    out.push(b'\n');
                    i += 2;
                }
                Some(b't') => {
                    out.push(b'\t');
                    i += 2;
                }
                Some(&other) => {
                    out.push(other);
                    i += 2;
                }
                None => {
                    out.push(b'\\');
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads a quoted string starting at `s` (which must begin with `"`); returns the
/// decoded string and the rest after the closing quote (and strace's `...` mark for a
/// truncated string, which is kept as is: `-s` is set high enough that it never shows).
fn take_string(s: &str) -> Option<(String, &str)> {
    let rest = s.strip_prefix('"')?;
    let bytes = rest.as_bytes();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => {
                let body = rest.get(..i)?;
                let after = rest.get(i + 1..)?;
                return Some((decode_string(body), after));
            }
            _ => i += 1,
        }
    }
    None
}

/// Reads `["a", "b", ...]`; returns the strings and the rest after `]`.
fn take_string_array(s: &str) -> Option<(Vec<String>, &str)> {
    let mut rest = s.trim_start().strip_prefix('[')?;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches([',', ' ']);
        if let Some(after) = rest.strip_prefix(']') {
            return Some((out, after));
        }
        if let Some(after) = rest.strip_prefix("...") {
            // strace abbreviated the array; the harness raises `-s` so this is only
            // reached on absurd argument counts, and the list is kept as far as seen.
            rest = after;
            continue;
        }
        let (v, after) = take_string(rest)?;
        out.push(v);
        rest = after;
    }
}

/// The return value of a complete call line `name(args) = RET ...`.
fn return_value(line: &str) -> Option<i64> {
    // strace pads short calls with spaces before ` = ` to align the results.
    let at = line.rfind(" = ")?;
    if !line.get(..at)?.trim_end().ends_with(')') {
        return None;
    }
    let ret = line.get(at + 3..)?;
    let num: String = ret
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    num.parse().ok()
}

/// Whether an `open` flag set asks for writing.
fn write_flags(flags: &str) -> bool {
    flags.split('|').any(|f| {
        matches!(
            f.trim(),
            "O_WRONLY" | "O_RDWR" | "O_CREAT" | "O_TRUNC" | "O_APPEND"
        )
    })
}

/// An `openat` directory argument: `None` for the cwd (`AT_FDCWD`, also as `-y` prints
/// it, `AT_FDCWD</dir>`), the directory's path where `-y` shows it (`4</dir>`), else
/// the descriptor number. The path ends at the first `>` (under `-xx` a `>` of the
/// name is escaped): a file already removed shows as `3<…>(deleted)>`.
fn directory(dirfd: &str) -> Option<String> {
    if dirfd.starts_with("AT_FDCWD") {
        return None;
    }
    match dirfd.split_once('<') {
        Some((_, rest)) => Some(decode_string(rest.split('>').next().unwrap_or(rest))),
        None => Some(dirfd.to_string()),
    }
}

/// The path `-y` shows after a returned descriptor (`) = 3</real/path>`).
fn fd_path(call: &str) -> Option<String> {
    let at = call.rfind(" = ")?;
    let ret = call.get(at + 3..)?;
    let (_, rest) = ret.split_once('<')?;
    let body = rest.get(..rest.find('>')?)?;
    Some(decode_string(body))
}

/// Whether an open call succeeded (returned a descriptor).
fn opened(call: &str) -> bool {
    return_value(call).is_some_and(|r| r >= 0)
}

/// Whether a changing call changed something or was refused (see `Event::Change`).
fn changed(call: &str) -> bool {
    match return_value(call) {
        Some(r) if r >= 0 => true,
        Some(_) => call
            .rsplit_once(" = ")
            .map(|(_, ret)| ret)
            .is_some_and(|ret| ["EROFS", "EACCES", "EPERM"].iter().any(|e| ret.contains(e))),
        None => false,
    }
}

/// A `DIRFD, "path"` pair at the start of `args` (`utimensat(4</f>, NULL, …)` acts on
/// the descriptor itself: an empty path).
fn at_target(args: &str) -> Option<(Option<String>, String)> {
    let comma = args.find(", ")?;
    let dirfd = args.get(..comma)?;
    let rest = args.get(comma + 2..)?;
    let path = if rest.starts_with("NULL") {
        String::new()
    } else {
        take_string(rest)?.0
    };
    Some((directory(dirfd), path))
}

/// Decodes one complete call (`name(args) = ret`), or `None` for what is not of interest.
fn decode_call(call: &str) -> Option<Event> {
    let open = call.find('(')?;
    let name = call.get(..open)?;
    let args = call.get(open + 1..)?;
    match name {
        "execve" => {
            let (path, rest) = take_string(args)?;
            let rest = rest.trim_start().strip_prefix(',')?;
            let (argv, _) = take_string_array(rest)?;
            Some(Event::Execve { path, argv })
        }
        "openat" => {
            let comma = args.find(", ")?;
            let dirfd = args.get(..comma)?;
            let (path, rest) = take_string(args.get(comma + 2..)?)?;
            let flags = rest.trim_start_matches([',', ' ']);
            let flags = flags.split([',', ')']).next().unwrap_or("");
            let dirfd = directory(dirfd);
            if write_flags(flags) {
                Some(Event::OpenWrite {
                    dirfd,
                    path,
                    opened: fd_path(call),
                })
            } else {
                opened(call).then(|| Event::OpenRead {
                    dirfd,
                    path,
                    opened: fd_path(call),
                })
            }
        }
        "open" => {
            let (path, rest) = take_string(args)?;
            let flags = rest.trim_start_matches([',', ' ']);
            let flags = flags.split([',', ')']).next().unwrap_or("");
            if write_flags(flags) {
                Some(Event::OpenWrite {
                    dirfd: None,
                    path,
                    opened: fd_path(call),
                })
            } else {
                opened(call).then(|| Event::OpenRead {
                    dirfd: None,
                    path,
                    opened: fd_path(call),
                })
            }
        }
        "socket" => {
            let domain = args.split([',', ')']).next().unwrap_or("").trim();
            Some(Event::Socket {
                domain: domain.to_string(),
            })
        }
        "connect" => {
            // `connect(3, {sa_family=AF_UNIX, sun_path="\x2f…"}, 110) = -1 ENOENT`
            let family = args
                .split_once("sa_family=")
                .map(|(_, r)| r.split([',', '}']).next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            let path = args
                .split_once("sun_path=")
                .and_then(|(_, r)| take_string(r.trim_start_matches('@')))
                .map(|(p, _)| p);
            let address = match path {
                Some(p) => format!("{family} {p}"),
                None => family,
            };
            Some(Event::Connect { address })
        }
        "creat" => {
            let (path, _) = take_string(args)?;
            Some(Event::OpenWrite {
                dirfd: None,
                path,
                opened: fd_path(call),
            })
        }
        "chdir" => {
            let (path, _) = take_string(args)?;
            (return_value(call) == Some(0)).then_some(Event::Chdir { path })
        }
        "fchdir" => (return_value(call) == Some(0)).then(|| Event::Fchdir {
            path: directory(args.split(')').next().unwrap_or("")).filter(|d| d.starts_with('/')),
        }),
        "mkdir" | "rmdir" | "unlink" | "chmod" | "truncate" => {
            let (path, _) = take_string(args)?;
            let op = match name {
                "mkdir" => Op::Mkdir,
                "chmod" => Op::Chmod,
                "truncate" => Op::Truncate,
                _ => Op::Remove,
            };
            changed(call).then(|| Event::Change {
                op,
                targets: vec![(None, path)],
            })
        }
        "mkdirat" | "unlinkat" | "fchmodat" | "fchmodat2" | "utimensat" => {
            let op = match name {
                "mkdirat" => Op::Mkdir,
                "unlinkat" => Op::Remove,
                "utimensat" => Op::Times,
                _ => Op::Chmod,
            };
            changed(call).then(|| {
                at_target(args).map(|t| Event::Change {
                    op,
                    targets: vec![t],
                })
            })?
        }
        "fchmod" | "ftruncate" => {
            let fd = args.split([',', ')']).next().unwrap_or("");
            let dir = directory(fd).filter(|d| d.starts_with('/'))?;
            let op = if name == "fchmod" {
                Op::Chmod
            } else {
                Op::Truncate
            };
            changed(call).then(|| Event::Change {
                op,
                targets: vec![(Some(dir), String::new())],
            })
        }
        "rename" | "link" | "symlink" => {
            let (first, rest) = take_string(args)?;
            let (second, _) = take_string(rest.trim_start_matches([',', ' ']))?;
            let (op, targets) = match name {
                "rename" => (Op::RenameFrom, vec![(None, first), (None, second)]),
                "link" => (Op::Link, vec![(None, second)]),
                _ => (Op::Symlink, vec![(None, second)]),
            };
            changed(call).then_some(Event::Change { op, targets })
        }
        "renameat" | "renameat2" | "linkat" => {
            let from = at_target(args)?;
            let comma = take_string(args.get(args.find(", ")? + 2..)?)?.1;
            let to = at_target(comma.trim_start_matches([',', ' ']))?;
            let (op, targets) = if name == "linkat" {
                (Op::Link, vec![to])
            } else {
                (Op::RenameFrom, vec![from, to])
            };
            changed(call).then_some(Event::Change { op, targets })
        }
        "symlinkat" => {
            let (_, rest) = take_string(args)?;
            let to = at_target(rest.trim_start_matches([',', ' ']))?;
            changed(call).then(|| Event::Change {
                op: Op::Symlink,
                targets: vec![to],
            })
        }
        "newfstatat" | "stat" | "statx" => {
            let s = if name == "stat" {
                args
            } else {
                args.get(args.find(", ")? + 2..)?
            };
            let (path, _) = take_string(s)?;
            (return_value(call) == Some(-1) && !path.is_empty())
                .then_some(Event::StatMissing { path })
        }
        "clone" | "clone3" | "fork" | "vfork" => {
            // Inside the sandbox's pid namespace the return is the namespace's pid;
            // `--pidns-translation` appends the pid strace's own lines carry.
            let translated = call
                .rsplit_once("/* ")
                .and_then(|(_, t)| t.strip_suffix(" in strace's PID NS */"))
                .and_then(|n| n.trim().parse::<i64>().ok());
            let ret = translated.or_else(|| return_value(call))?;
            u32::try_from(ret)
                .ok()
                .filter(|c| *c > 0)
                .map(|pid| Event::Spawn {
                    child: Proc { pid, life: 0 },
                })
        }
        _ => None,
    }
}

/// Splits a trace into per-process event lists, in each process' own order.
///
/// A pid's life ends at its `+++ exited with` / `+++ killed by` line; every process
/// prints one, so lives are delimited exactly. A spawn is bound to the child's first
/// life that starts after the spawning call began: the kernel makes the child during
/// the call, and strace prints the child's lines only after the call's first half (a
/// complete `clone(...) = N` line means nothing was printed in between). The child
/// may print lines, even exit, before the parent's return line, so the return line
/// itself cannot be the bound.
fn events_by_proc(text: &str) -> BTreeMap<Proc, Vec<(usize, Event)>> {
    // An unfinished call's text and the line it began on.
    let mut pending: HashMap<u32, (String, usize)> = HashMap::new();
    // Per pid: the first line of each life, and the life now running.
    let mut starts: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut life: HashMap<u32, u32> = HashMap::new();
    let mut raw: Vec<(Proc, usize, usize, Event)> = Vec::new();
    for (seq, line) in text.lines().enumerate() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let current = *life.entry(pid).or_insert(0);
        let lives = starts.entry(pid).or_default();
        if lives.len() <= current as usize {
            lives.push(seq);
        }
        let this = Proc { pid, life: current };
        let rest = rest.trim_start();
        if rest.starts_with("+++ exited") || rest.starts_with("+++ killed") {
            pending.remove(&pid);
            life.insert(pid, current + 1);
            let code = rest
                .strip_prefix("+++ exited with ")
                .and_then(|r| r.strip_suffix(" +++"))
                .and_then(|n| n.trim().parse().ok());
            raw.push((this, seq, seq, Event::Exited { code }));
            continue;
        }
        let (call, began) = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, (head.to_string(), seq));
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some((_, after)) = tail.split_once(" resumed>") else {
                continue;
            };
            let Some((head, began)) = pending.remove(&pid) else {
                continue;
            };
            (format!("{head}{after}"), began)
        } else {
            (rest.to_string(), seq)
        };
        if let Some(e) = decode_call(&call) {
            raw.push((this, seq, began, e));
        }
    }
    let mut out: BTreeMap<Proc, Vec<(usize, Event)>> = BTreeMap::new();
    for (proc_, seq, began, mut e) in raw {
        if let Event::Spawn { child } = &mut e {
            // The first life of the child's pid that starts after the call began; a
            // child that printed nothing yet (a cut trace) gets a life of its own.
            let lives = starts.get(&child.pid).map(Vec::as_slice).unwrap_or(&[]);
            let k = lives.partition_point(|&first| first <= began);
            child.life = u32::try_from(k).unwrap_or(u32::MAX);
        }
        out.entry(proc_).or_default().push((seq, e));
    }
    out
}

/// The command index a harness exec names (`argv[0]` `__khaelor_oracle__:17` -> 17).
fn marker_index(argv: &[String]) -> Option<usize> {
    argv.first()?.strip_prefix(HARNESS_ARGV0)?.parse().ok()
}

/// The command index the driver's `bash -n` of a command names
/// (`__khaelor_syntax__:17` -> 17).
fn syntax_index(argv: &[String]) -> Option<usize> {
    argv.first()?.strip_prefix(SYNTAX_ARGV0)?.parse().ok()
}

/// Joins `path` onto `cwd` lexically (`..` and `.` removed) when it is relative.
fn resolve(cwd: Option<&str>, path: &str) -> String {
    if path.starts_with('/') {
        crate::model::paths::clean(std::path::Path::new(path))
            .display()
            .to_string()
    } else if let Some(c) = cwd {
        crate::model::paths::clean(&std::path::Path::new(c).join(path))
            .display()
            .to_string()
    } else {
        format!("?/{path}")
    }
}

/// Whether a write target is one bash or the harness uses without the command asking
/// for a file: the null and terminal devices, descriptors, bash's here-document temp
/// files (`sh-thd.*` under TMPDIR).
fn exempt_write(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/tty" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
        || path
            .rsplit('/')
            .next()
            .is_some_and(|b| b.starts_with("sh-thd"))
}

/// Turns a batch's trace into one `Observed` per command index (`0..count`). `path_dirs`
/// are the sandbox's PATH entries (to recognise lookup probes). Commands whose marker is
/// missing get empty facts with status `Ran`; the caller decides what that means.
pub fn observe(text: &str, count: usize, path_dirs: &[String]) -> Vec<Observed> {
    observe_full(text, count, path_dirs)
        .into_iter()
        .map(|(o, _)| o)
        .collect()
}

/// What the program oracle reads from a trace besides `Observed`: the files a command's
/// processes opened for reading, and the sockets they made or connected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extra {
    /// Files opened for reading that opened, each with the opener's cwd joined on (not
    /// cleaned: `..` after a symlink is the caller's to resolve); a path relative to an
    /// unknown directory keeps a `?/` prefix, one relative to a descriptor `?fdN/`.
    pub reads: Vec<String>,
    /// `socket DOMAIN` and `connect ADDRESS`, as the trace shows them.
    pub sockets: Vec<String>,
    /// Every name the command's processes created, changed or removed (opens for
    /// writing that opened, and the calls of `Event::Change`), in trace order per
    /// process; the exemptions of `writes` applied to opens.
    pub changes: Vec<Change>,
}

/// A path named relative to a directory descriptor (`-y`'s path, `None` for the cwd),
/// joined and cleaned like a write (`resolve`); an unknown directory keeps `?fdN/`.
fn joined(dir: Option<&str>, path: &str, cwd: Option<&str>) -> String {
    match dir {
        None => resolve(cwd, path),
        Some(_) if path.starts_with('/') => resolve(None, path),
        Some(d) if d.starts_with('/') => {
            if path.is_empty() {
                resolve(None, d)
            } else {
                resolve(Some(d), path)
            }
        }
        Some(fd) => format!("?fd{fd}/{path}"),
    }
}

/// `observe`, and each command's `Extra`.
pub fn observe_full(text: &str, count: usize, path_dirs: &[String]) -> Vec<(Observed, Extra)> {
    let events = events_by_proc(text);
    let mut extra: Vec<Extra> = vec![Extra::default(); count];
    // Parents from the spawn returns; command roots from the harness' execs.
    let mut parent: HashMap<Proc, Proc> = HashMap::new();
    let mut root_of: HashMap<Proc, usize> = HashMap::new();
    for (&pid, evs) in &events {
        for (_, e) in evs {
            match e {
                Event::Spawn { child } => {
                    parent.insert(*child, pid);
                }
                Event::Execve { argv, .. } => {
                    if let Some(i) = marker_index(argv) {
                        root_of.insert(pid, i);
                    }
                }
                _ => {}
            }
        }
    }
    let command_of = |mut pid: Proc| -> Option<usize> {
        // INVARIANT: the walk is bounded by the number of known parents, so a cycle
        // from a misread trace cannot loop forever.
        for _ in 0..=parent.len() {
            if let Some(&i) = root_of.get(&pid) {
                return Some(i);
            }
            pid = *parent.get(&pid)?;
        }
        None
    };

    // Cwd per process: a child starts where its parent was at the spawn. Parents are
    // processed before children by walking from the processes with no known parent.
    let mut out: Vec<Observed> = (0..count)
        .map(|_| Observed {
            status: RunStatus::Ran,
            executed: Vec::new(),
            searched: Vec::new(),
            writes: Vec::new(),
            syntax_error: false,
            parsed: None,
        })
        .collect();
    // `bash -n` of a command: its process' exit status says whether bash parses it.
    for evs in events.values() {
        let Some(i) = evs.iter().find_map(|(_, e)| match e {
            Event::Execve { argv, .. } => syntax_index(argv),
            _ => None,
        }) else {
            continue;
        };
        let code = evs.iter().find_map(|(_, e)| match e {
            Event::Exited { code } => Some(*code),
            _ => None,
        });
        if let Some(o) = out.get_mut(i) {
            // Not seen to exit 0 (a syntax error, a signal, a cut trace): rejected.
            o.syntax_error = code != Some(Some(0));
            o.parsed = code.map(|c| c == Some(0));
        }
    }
    // Executions in trace order (the walk below visits processes depth first).
    let mut exec_seq: Vec<Vec<(usize, Exec)>> = vec![Vec::new(); count];
    let mut stack: Vec<(Proc, Option<String>)> = events
        .keys()
        .filter(|p| !parent.contains_key(p))
        .map(|p| (*p, None))
        .collect();
    let mut seen: std::collections::HashSet<Proc> = std::collections::HashSet::new();
    while let Some((pid, start_cwd)) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        let mut cwd = start_cwd;
        let cmd = command_of(pid);
        let evs = events.get(&pid).map(Vec::as_slice).unwrap_or(&[]);
        for (seq, e) in evs {
            match e {
                Event::Chdir { path } => cwd = Some(resolve(cwd.as_deref(), path)),
                Event::Fchdir { path } => cwd = path.clone(),
                Event::Change { op, targets } => {
                    let Some(x) = cmd.and_then(|i| extra.get_mut(i)) else {
                        continue;
                    };
                    for (k, (dir, path)) in targets.iter().enumerate() {
                        let joined = joined(dir.as_deref(), path, cwd.as_deref());
                        let op = if *op == Op::RenameFrom && k > 0 {
                            Op::RenameTo
                        } else {
                            *op
                        };
                        // A call on a descriptor (`fchmod`, `utimensat(fd, NULL)`)
                        // names the file the kernel has open.
                        let real =
                            (path.is_empty() && joined.starts_with('/')).then(|| joined.clone());
                        let c = Change {
                            op,
                            path: joined,
                            real,
                        };
                        if !exempt_write(&c.path) && !x.changes.contains(&c) {
                            x.changes.push(c);
                        }
                    }
                }
                Event::Exited { .. } => {}
                Event::OpenRead {
                    dirfd,
                    path,
                    opened,
                } => {
                    let Some(x) = cmd.and_then(|i| extra.get_mut(i)) else {
                        continue;
                    };
                    let joined = match (opened, dirfd, cwd.as_deref()) {
                        (Some(real), _, _) => real.clone(),
                        _ if path.starts_with('/') => path.clone(),
                        (None, None, Some(c)) => format!("{}/{path}", c.trim_end_matches('/')),
                        (None, None, None) => format!("?/{path}"),
                        (None, Some(d), _) if d.starts_with('/') => {
                            format!("{}/{path}", d.trim_end_matches('/'))
                        }
                        (None, Some(fd), _) => format!("?fd{fd}/{path}"),
                    };
                    if !x.reads.contains(&joined) {
                        x.reads.push(joined);
                    }
                }
                Event::Socket { domain } => {
                    if let Some(x) = cmd.and_then(|i| extra.get_mut(i)) {
                        x.sockets.push(format!("socket {domain}"));
                    }
                }
                Event::Connect { address } => {
                    if let Some(x) = cmd.and_then(|i| extra.get_mut(i)) {
                        x.sockets.push(format!("connect {address}"));
                    }
                }
                Event::Spawn { child } => stack.push((*child, cwd.clone())),
                Event::Execve { path, argv } => {
                    if marker_index(argv).is_some() || syntax_index(argv).is_some() {
                        continue;
                    }
                    let exec = if path == NOT_FOUND_PATH {
                        Exec {
                            argv: argv.iter().skip(1).cloned().collect(),
                            via: ExecVia::NotFound,
                            cwd: cwd.clone().filter(|c| c.starts_with('/')),
                        }
                    } else {
                        Exec {
                            argv: argv.clone(),
                            via: ExecVia::Execve,
                            cwd: cwd.clone().filter(|c| c.starts_with('/')),
                        }
                    };
                    if let Some(list) = cmd.and_then(|i| exec_seq.get_mut(i)) {
                        list.push((*seq, exec));
                    }
                }
                Event::OpenWrite {
                    dirfd,
                    path,
                    opened,
                } => {
                    let Some(o) = cmd.and_then(|i| out.get_mut(i)) else {
                        continue;
                    };
                    if let Some(x) = cmd.and_then(|i| extra.get_mut(i))
                        && let Some(real) = opened
                    {
                        // Only an open that succeeded wrote something (the programs'
                        // layout shows where); a refused one is in `writes` as before.
                        let c = Change {
                            op: Op::Open,
                            path: joined(dirfd.as_deref(), path, cwd.as_deref()),
                            real: Some(real.clone()),
                        };
                        if !exempt_write(&c.path) && !x.changes.contains(&c) {
                            x.changes.push(c);
                        }
                    }
                    let resolved = match dirfd {
                        None => resolve(cwd.as_deref(), path),
                        Some(fd) if path.starts_with('/') => {
                            let _ = fd;
                            resolve(None, path)
                        }
                        // A directory `-y` showed (the program oracle's layout).
                        Some(dir) if dir.starts_with('/') => resolve(Some(dir), path),
                        Some(fd) => format!("?fd{fd}/{path}"),
                    };
                    if !exempt_write(&resolved) && !o.writes.contains(&resolved) {
                        o.writes.push(resolved);
                    }
                }
                Event::StatMissing { path } => {
                    let Some(o) = cmd.and_then(|i| out.get_mut(i)) else {
                        continue;
                    };
                    if let Some((dir, name)) = path.rsplit_once('/')
                        && path_dirs.iter().any(|d| d == dir)
                        && !name.is_empty()
                        && !name.starts_with(HARNESS_ARGV0)
                        && !o.searched.iter().any(|s| s == name)
                    {
                        o.searched.push(name.to_string());
                    }
                }
            }
        }
    }
    for (o, mut list) in out.iter_mut().zip(exec_seq) {
        list.sort_by_key(|(seq, _)| *seq);
        o.executed = list.into_iter().map(|(_, e)| e).collect();
    }
    out.into_iter().zip(extra).collect()
}

/// The indices whose marker appears in the trace (a command whose marker is missing
/// never started, e.g. because the batch was cut).
pub fn started(text: &str) -> Vec<usize> {
    let mut v: Vec<usize> = events_by_proc(text)
        .values()
        .flatten()
        .filter_map(|(_, e)| match e {
            Event::Execve { argv, .. } => marker_index(argv),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> String {
        s.bytes().map(|b| format!("\\x{b:02x}")).collect()
    }

    #[test]
    fn decodes_hex_strings_and_arrays() {
        let line = format!(
            "execve(\"{}\", [\"{}\", \"{}\"], 0x1 /* 3 vars */) = -1 ENOENT (No such file)",
            hex("/.oracle/nf"),
            hex("/.oracle/nf"),
            hex("l s\n")
        );
        assert_eq!(
            decode_call(&line),
            Some(Event::Execve {
                path: "/.oracle/nf".into(),
                argv: vec!["/.oracle/nf".into(), "l s\n".into()]
            })
        );
    }

    #[test]
    fn attributes_events_through_the_process_tree_and_tracks_cwd() {
        let marker = hex("__khaelor_oracle__:0");
        let bash = hex("/bin/bash");
        let nf = hex("/.oracle/nf");
        let trace = [
            "10 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>".to_string(),
            // The child's events can come before the parent's clone return.
            format!("12 chdir(\"{}\")        = 0", hex("/p")),
            format!("12 execve(\"{bash}\", [\"{marker}\", \"-c\"], 0x1 /* 1 vars */) = 0"),
            "10 <... clone resumed>) = 12".to_string(),
            "12 clone(child_stack=NULL, flags=SIGCHLD) = 13".to_string(),
            format!(
                "13 execve(\"{nf}\", [\"{nf}\", \"{}\", \"{}\"], 0x1 /* 1 vars */) = -1 ENOENT (x)",
                hex("id"),
                hex("-u")
            ),
            format!(
                "12 openat(AT_FDCWD, \"{}\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3",
                hex("out")
            ),
            format!(
                "12 openat(AT_FDCWD, \"{}\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3",
                hex("/dev/null")
            ),
            format!(
                "12 newfstatat(AT_FDCWD, \"{}\", 0x7, 0) = -1 ENOENT (x)",
                hex("/bin/zz")
            ),
        ]
        .join("\n");
        let obs = observe(&trace, 1, &["/bin".to_string()]);
        let o = &obs[0];
        assert_eq!(
            o.executed,
            vec![Exec {
                argv: vec!["id".into(), "-u".into()],
                via: ExecVia::NotFound,
                // The child runs where its parent was when it forked.
                cwd: Some("/p".into()),
            }]
        );
        assert_eq!(o.writes, vec!["/p/out".to_string()]);
        assert_eq!(o.searched, vec!["zz".to_string()]);
        assert_eq!(started(&trace), vec![0]);
    }

    #[test]
    fn the_programs_layout_shows_reads_as_opened_and_sockets() {
        // `-y` prints descriptors with their paths: the read through `link` opened
        // the file the kernel resolved, a directory descriptor names its directory.
        let marker = hex("__khaelor_oracle__:0");
        let bash = hex("/bin/bash");
        let trace = [
            format!("12 chdir(\"{}\") = 0", hex("/p")),
            format!("12 execve(\"{bash}\", [\"{marker}\", \"-c\"], 0x1 /* 1 vars */) = 0"),
            format!(
                "12 openat(AT_FDCWD<{}>, \"{}\", O_RDONLY) = 3<{}>",
                hex("/p"),
                hex("link/cred"),
                hex("/h/.aws/credentials")
            ),
            format!(
                "12 openat(4<{}>, \"{}\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (x)",
                hex("/p/docs"),
                hex("out")
            ),
            format!(
                "12 openat(AT_FDCWD<{}>, \"{}\", O_RDONLY) = -1 ENOENT (x)",
                hex("/p"),
                hex("missing")
            ),
            format!(
                "12 socket(AF_INET, SOCK_STREAM, IPPROTO_IP) = 3<{}>",
                hex("socket:[1]")
            ),
            format!(
                "12 connect(3<{}>, {{sa_family=AF_UNIX, sun_path=\"{}\"}}, 110) = -1 ENOENT (x)",
                hex("socket:[1]"),
                hex("/run/nscd/socket")
            ),
        ]
        .join("\n");
        let full = observe_full(&trace, 1, &[]);
        let (o, x) = &full[0];
        assert_eq!(o.writes, vec!["/p/docs/out".to_string()]);
        assert_eq!(x.reads, vec!["/h/.aws/credentials".to_string()]);
        assert_eq!(
            x.sockets,
            vec![
                "socket AF_INET".to_string(),
                "connect AF_UNIX /run/nscd/socket".to_string()
            ]
        );
    }

    #[test]
    fn name_changes_are_resolved_like_opens() {
        // `-y` shows each directory descriptor; `ln -sf` makes a temporary link and
        // renames it, `mkdir -p` meets an existing parent (EEXIST: nothing changed),
        // `touch` sets the times of the descriptor it opened, a refused call counts.
        let marker = hex("__khaelor_oracle__:0");
        let bash = hex("/bin/bash");
        let cwd = format!("AT_FDCWD<{}>", hex("/p"));
        let trace = [
            format!("12 chdir(\"{}\") = 0", hex("/p")),
            format!("12 execve(\"{bash}\", [\"{marker}\", \"-c\"], 0x1 /* 1 vars */) = 0"),
            format!(
                "12 mkdir(\"{}\", 0777) = -1 EEXIST (File exists)",
                hex("src")
            ),
            format!("12 chdir(\"{}\") = 0", hex("src")),
            format!("12 mkdir(\"{}\", 0777) = 0", hex("x")),
            format!(
                "12 symlinkat(\"{}\", {cwd}, \"{}\") = 0",
                hex("a.txt"),
                hex("/p/Cu12")
            ),
            format!(
                "12 renameat({cwd}, \"{}\", {cwd}, \"{}\") = 0",
                hex("/p/Cu12"),
                hex("/p/l")
            ),
            format!("12 utimensat(0<{}>, NULL, NULL, 0) = 0", hex("/p/src/t")),
            format!(
                "12 unlinkat(3<{}>, \"{}\", AT_REMOVEDIR) = -1 EROFS (Read-only file system)",
                hex("/p/d"),
                hex("e")
            ),
            format!(
                "12 fchmodat({cwd}, \"{}\", 0755) = -1 ENOENT (No such file or directory)",
                hex("gone")
            ),
            // A descriptor of a file already removed (tac's scratch copy).
            format!("12 ftruncate(3<{}>(deleted), 0) = 0", hex("/tmp/tacAbC123")),
        ]
        .join("\n");
        let full = observe_full(&trace, 1, &[]);
        let got: Vec<(Op, &str)> = full[0]
            .1
            .changes
            .iter()
            .map(|c| (c.op, c.path.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Op::Mkdir, "/p/src/x"),
                (Op::Symlink, "/p/Cu12"),
                (Op::RenameFrom, "/p/Cu12"),
                (Op::RenameTo, "/p/l"),
                (Op::Times, "/p/src/t"),
                (Op::Remove, "/p/d/e"),
                (Op::Truncate, "/tmp/tacAbC123"),
            ]
        );
    }

    #[test]
    fn a_reused_pid_is_a_new_process() {
        // pid 12 runs command 0 and exits; a runaway command 1 later forks a child that
        // gets pid 12 again, and that child's program is command 1's, not command 0's.
        let nf = hex("/.oracle/nf");
        let bash = hex("/bin/bash");
        let exec_nf = |pid: u32, name: &str| {
            format!(
                "{pid} execve(\"{nf}\", [\"{nf}\", \"{}\"], 0x1 /* 1 vars */) = -1 ENOENT (x)",
                hex(name)
            )
        };
        let marker = |pid: u32, i: usize| {
            format!(
                "{pid} execve(\"{bash}\", [\"{}\", \"-c\"], 0x1 /* 1 vars */) = 0",
                hex(&format!("__khaelor_oracle__:{i}"))
            )
        };
        let trace = [
            "10 clone(child_stack=NULL, flags=SIGCHLD) = 12".to_string(),
            marker(12, 0),
            exec_nf(12, "ls"),
            "12 +++ exited with 127 +++".to_string(),
            "10 clone(child_stack=NULL, flags=SIGCHLD) = 20".to_string(),
            marker(20, 1),
            "20 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>".to_string(),
            // The reused pid prints, and even exits, before its parent's return line.
            exec_nf(12, "sleep"),
            "12 +++ exited with 127 +++".to_string(),
            "20 <... clone resumed>) = 12".to_string(),
            "20 clone(child_stack=NULL, flags=SIGCHLD) = 12".to_string(),
            exec_nf(12, "systemctl"),
        ]
        .join("\n");
        let obs = observe(&trace, 2, &[]);
        let names =
            |o: &Observed| -> Vec<String> { o.executed.iter().map(|e| e.argv.join(" ")).collect() };
        assert_eq!(names(&obs[0]), vec!["ls".to_string()]);
        assert_eq!(
            names(&obs[1]),
            vec!["sleep".to_string(), "systemctl".to_string()]
        );
    }
}
