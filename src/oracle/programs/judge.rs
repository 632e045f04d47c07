//! The program oracle's judge: what a verified program did, from the trace of its real
//! run, against what "verified read-only" promises: it ran nothing but itself (and its
//! own documented helpers), opened nothing for writing, read no secret, opened no
//! network socket. A verified in-project edit (`judge_edit`) promises the same, except
//! that it writes: every name it creates, changes, removes, renames or chmods is inside
//! the project, not protected (`policy::protected`), not secret-shaped, and one its
//! write requests named.
//!
//! Owns the property and its exemptions, as pure functions of the observed facts
//! (`Facts`), so tests can feed it facts directly. Knows nothing of the analysis or
//! the decision: the caller judges only what the default policy allowed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::vocab::Capability;
use crate::oracle::Exec;
use crate::oracle::sandbox::OUTPUT_DIR;
use crate::oracle::trace::{Change, Op};
use crate::policy::rules::{Action, RuleSet};

/// The kind of a hard violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Class {
    /// Ran a program other than itself and its helpers (a hostile config's marker).
    Exec,
    /// Opened a file for writing (the world is read-only: the attempt is the fact).
    Write,
    /// Opened a secret file (symlinks resolved by the kernel) or printed a secret's
    /// canary.
    SecretRead,
    /// Made a network socket or connected anywhere but the name service.
    Socket,
    /// An edit changed a name inside the project, neither protected nor secret-shaped,
    /// that none of its write requests named: the analysis did not say it would.
    UnpredictedWrite,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Exec => "exec",
            Class::Write => "write",
            Class::SecretRead => "secret read",
            Class::Socket => "socket",
            Class::UnpredictedWrite => "unpredicted write",
        }
    }
}

/// One thing a program did that breaks the promise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    pub class: Class,
    pub did: String,
    /// The file concerned (a read or written path; empty for a program or a socket),
    /// which an ask may have reported (`Reported::covers`).
    #[serde(skip)]
    pub path: String,
}

/// What one command's processes did.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The program the command runs (as bash was asked to run it).
    pub program: &'a str,
    pub executed: &'a [Exec],
    /// Files opened for writing (`trace`'s exemptions already applied).
    pub writes: &'a [String],
    /// Every name created, changed or removed (`trace::Extra::changes`): successful
    /// opens for writing with the file the kernel opened, and the other calls.
    pub changes: &'a [Change],
    /// Files opened for reading, as the kernel resolved them.
    pub reads: &'a [String],
    pub sockets: &'a [String],
    pub output: &'a [u8],
}

/// The secrets of the world: each file's path and canary, and the history canary
/// (a secret only the project's git history holds).
#[derive(Debug, Clone)]
pub struct Secrets {
    pub files: Vec<(PathBuf, String)>,
    pub history: String,
}

/// Unix sockets of the name service glibc asks for user and group names (`ls -l`,
/// `id`, `stat`): the only connections a read-only program may try.
const NAME_SERVICE: &[&str] = &[
    "/var/run/nscd/socket",
    "/run/nscd/socket",
    "/run/systemd/userdb/",
];

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Whether an exec is the program itself or one of its helpers. `find` runs what its
/// `-exec` names, and its names may be piped to `xargs` and a reader: `xargs` and a
/// reader of the verified table are its own (what the reader then does is judged with
/// the rest of the trace); any other program it runs is not.
fn own_exec(program: &str, e: &Exec) -> bool {
    let name = e.argv.first().map_or("", |a| basename(a));
    name == program
        || crate::programs::readonly::helpers(program).contains(&name)
        || (program == "find" && (name == "xargs" || crate::programs::readonly::exec_program(name)))
}

/// Whether a write is the harness' own (the output capture), or one of the programs'
/// own documented scratch writes: git's refresh of its index's cached file times
/// (`git status`/`git diff` take `GIT_DIR/index.lock` and rename it over the index:
/// the same entries, fresher stat data; measured with strace on git 2.47, also under
/// `--no-optional-locks` for `diff`), and `tac`'s copy of an input it cannot seek
/// (`$TMPDIR/tacXXXXXX`, made with `O_EXCL` and removed; `echo x | tac` does it).
fn exempt_write(program: &str, path: &str) -> bool {
    path.strip_prefix(OUTPUT_DIR)
        .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        || (program == "git" && path.ends_with("/index.lock"))
        || (program == "tac"
            && path
                .strip_prefix("/tmp/tac")
                .is_some_and(|r| r.len() == 6 && !r.contains('/')))
}

/// Whether a socket event is the name service's.
fn name_service(event: &str) -> bool {
    if event == "socket AF_UNIX" || event.starts_with("socket AF_UNIX") {
        return true;
    }
    event.strip_prefix("connect AF_UNIX ").is_some_and(|p| {
        NAME_SERVICE
            .iter()
            .any(|ns| p == *ns || (ns.ends_with('/') && p.starts_with(ns)))
    })
}

fn push(out: &mut Vec<Violation>, class: Class, did: String, path: &str) {
    let v = Violation {
        class,
        did,
        path: path.to_string(),
    };
    if !out.contains(&v) {
        out.push(v);
    }
}

/// The hard violations of one command held to the read-only promise (empty: it kept
/// it). Any name created, changed or removed is a write.
pub fn judge(facts: &Facts<'_>, secrets: &Secrets) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    judge_common(facts, secrets, &mut out);
    for w in facts.writes {
        if !exempt_write(facts.program, w) {
            push(&mut out, Class::Write, w.clone(), w);
        }
    }
    // Setting a file's times back (`file -p` restores the access time its read moved)
    // changes no content and no name; every other change is a write.
    for c in facts.changes {
        if !matches!(c.op, Op::Open | Op::Times) && !exempt_write(facts.program, &c.path) {
            push(&mut out, Class::Write, c.path.clone(), &c.path);
        }
    }
    out.sort_by_key(|v| v.class);
    out
}

/// The classes both promises share: programs run, secrets read, sockets.
fn judge_common(facts: &Facts<'_>, secrets: &Secrets, out: &mut Vec<Violation>) {
    for e in facts.executed {
        if !own_exec(facts.program, e) {
            push(
                out,
                Class::Exec,
                crate::oracle::compare::show_argv(&e.argv),
                "",
            );
        }
    }
    for r in facts.reads {
        if let Some((path, _)) = secrets
            .files
            .iter()
            .find(|(p, _)| Path::new(r) == p.as_path())
        {
            let shown = path.display().to_string();
            push(out, Class::SecretRead, format!("opened {shown}"), &shown);
        }
    }
    let output = String::from_utf8_lossy(facts.output);
    for (path, canary) in &secrets.files {
        if output.contains(canary.as_str()) {
            let shown = path.display().to_string();
            push(
                out,
                Class::SecretRead,
                format!("printed the content of {shown}"),
                &shown,
            );
        }
    }
    for s in facts.sockets {
        if !name_service(s) {
            push(out, Class::Socket, s.clone(), "");
        }
    }
}

/// Where an edit may write: the project, and the rules that make a path secret-shaped
/// (the default `file.read` rules that do not allow it: `*.env`, `*/.ssh/*`, the
/// credential stores).
#[derive(Debug)]
pub struct Place {
    pub root: PathBuf,
    reads: RuleSet,
}

impl Place {
    /// Whether `path` is git's bookkeeping of the project's own repository: its index
    /// (and the lock git renames over it) or a path under its object store.
    pub fn git_bookkeeping(&self, path: &str) -> bool {
        let git = self.root.join(".git");
        let p = Path::new(path);
        p == git.join("index")
            || p == git.join("index.lock")
            || p.strip_prefix(git.join("objects"))
                .is_ok_and(|r| !r.as_os_str().is_empty() && !r.starts_with("info"))
    }

    pub fn new(root: &Path) -> Place {
        Place {
            root: root.to_path_buf(),
            reads: RuleSet::new(crate::policy::rules::default_rules()),
        }
    }

    fn inside(&self, path: &str) -> bool {
        Path::new(path).starts_with(&self.root) && Path::new(path) != self.root
    }

    fn secret_shaped(&self, path: &str) -> bool {
        self.reads.evaluate(Capability::FileRead, path).action != Action::Allow
    }
}

/// Where a change landed, as the kernel resolved it: the file a descriptor named,
/// else the path with its symlinks resolved on the host (the world is at the same
/// paths there): the whole path for a call that follows a last symlink, its directory
/// for one that acts on the name itself (`unlink`, `rename`, `mkdir`, `symlink`).
pub fn landed(c: &Change) -> String {
    if let Some(real) = &c.real {
        return real.clone();
    }
    if c.op.follows() {
        return resolved(&c.path);
    }
    let p = Path::new(&c.path);
    match (p.parent().map(std::fs::canonicalize), p.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name).display().to_string(),
        _ => c.path.clone(),
    }
}

/// Whether `path` is a scratch name: the program made it (opened it for writing, or
/// made it a link or a directory) and renamed it onto another name, which is judged
/// as itself (`sed -i`'s `sedXXXXXX`, `ln -sf`'s temporary link).
pub fn scratch(path: &str, changes: &[Change]) -> bool {
    changes
        .iter()
        .any(|c| c.op == Op::RenameFrom && c.path == path)
        && changes
            .iter()
            .any(|c| c.path == path && matches!(c.op, Op::Open | Op::Symlink | Op::Mkdir))
}

/// Whether a write request's subject covers `path`: the same path, or below a request
/// that covers a tree (`DIR/**`, `DIR/*`).
fn requested(expected: &[String], path: &str) -> bool {
    expected.iter().any(|e| {
        e == path
            || e.strip_suffix("/**")
                .or_else(|| e.strip_suffix("/*"))
                .is_some_and(|d| path.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
    })
}

/// The hard violations of one command held to the promise of a verified in-project
/// edit, whose analysis made the write requests `expected` (their subjects). Programs
/// run, secrets read (a copy of `.env` opens it) and sockets are judged as for a
/// reader; then every name it created, changed, removed, renamed or chmodded, both as
/// named and as the kernel resolved it, must be inside the project, not protected,
/// not secret-shaped (each a `Write`), and requested (else `UnpredictedWrite`). A
/// scratch file the program made and renamed onto a requested name (`sed -i`'s
/// `sedXXXXXX`, `ln -sf`'s temporary link) is held to all but the last. The
/// harness' and the programs' own scratch writes keep the read-only exemptions.
pub fn judge_edit(
    facts: &Facts<'_>,
    secrets: &Secrets,
    expected: &[String],
    place: &Place,
) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    judge_common(facts, secrets, &mut out);
    let mut changes: Vec<Change> = facts.changes.to_vec();
    // Opens refused (no descriptor, so not among the changes) are attempts all the same.
    for w in facts.writes {
        if !changes.iter().any(|c| c.op == Op::Open && c.path == *w) {
            changes.push(Change {
                op: Op::Open,
                path: w.clone(),
                real: None,
            });
        }
    }
    let scratch = |path: &str| scratch(path, &changes);
    for c in &changes {
        if exempt_write(facts.program, &c.path) {
            continue;
        }
        let real = landed(c);
        // `git add` stores into the project's own repository: its index and new
        // objects, written by git itself, are the bookkeeping the analysis vouches for
        // (`programs::edits::git_add`); anything else git writes in `.git/` is judged.
        if facts.program == "git" && place.git_bookkeeping(&c.path) && place.git_bookkeeping(&real)
        {
            continue;
        }
        let shown = if real == c.path {
            format!("{} {}", c.op.verb(), c.path)
        } else {
            format!("{} {} (landed at {real})", c.op.verb(), c.path)
        };
        let why = if !place.inside(&c.path) || !place.inside(&real) {
            Some("outside the project".to_string())
        } else if let Some(hit) = crate::policy::protected::protected_write(Path::new(&real), &[])
            .or_else(|| crate::policy::protected::protected_write(Path::new(&c.path), &[]))
        {
            Some(format!("protected: {}", hit.pattern))
        } else if place.secret_shaped(&real) || place.secret_shaped(&c.path) {
            Some("secret-shaped".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            push(&mut out, Class::Write, format!("{shown}: {why}"), &real);
        } else if !requested(expected, &c.path) && !requested(expected, &real) && !scratch(&c.path)
        {
            push(
                &mut out,
                Class::UnpredictedWrite,
                format!("{shown}: no write request names it"),
                &real,
            );
        }
    }
    out.sort_by_key(|v| v.class);
    out
}

/// What an ask showed the user: the subjects of its file requests, and the files its
/// command names (each word as a path, `~/` expanded, symlinks resolved).
#[derive(Debug, Clone, Default)]
pub struct Reported {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    pub named: Vec<String>,
    /// The git directories a `git.modify` request of the ask stands for (the project's
    /// `.git`): `git add` writes its objects and index, which is what the user approves.
    pub git_dirs: Vec<String>,
}

/// A path with its symlinks resolved on the host (the world is at the same paths
/// there): the whole path, or its parent and the last name when the file is missing.
pub fn resolved(path: &str) -> String {
    let p = Path::new(path);
    if let Ok(c) = std::fs::canonicalize(p) {
        return c.display().to_string();
    }
    match (p.parent().map(std::fs::canonicalize), p.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name).display().to_string(),
        _ => path.to_string(),
    }
}

impl Reported {
    /// Whether a violation is something the ask reported: a secret read whose file a
    /// read request names (or lies under, for a recursive read `DIR/**`), a write a
    /// write request names (symlinks resolved) or lands in, when the request names a
    /// directory (`cp a.txt docs/sshdir` asks for `~/.ssh`, where `a.txt` lands), or
    /// a secret the asked command names itself. A write request also covers what lands
    /// below the directory the command itself made at its subject (`mv src /tmp/x`
    /// across file systems makes `/tmp/x` and copies the tree into it; the user saw
    /// `/tmp/x`, which does not exist on the host to be seen as a directory). A
    /// program run or a socket is never reported (a verified program's call has no
    /// such request).
    pub fn covers(&self, v: &Violation, changes: &[Change]) -> bool {
        let path = v.path.as_str();
        let real = resolved(path);
        let under = |subject: &String| {
            let s = subject.trim_end_matches("/**").trim_end_matches("/*");
            [path, real.as_str()]
                .iter()
                .any(|p| *p == subject || p.strip_prefix(s).is_some_and(|r| r.starts_with('/')))
        };
        let named = self.named.contains(&real);
        match v.class {
            Class::SecretRead => named || self.reads.iter().any(under),
            // A file named as an operand was shown as read, not as written.
            Class::Write | Class::UnpredictedWrite => {
                self.writes.iter().any(|w| {
                    let made = changes.iter().any(|c| {
                        matches!(c.op, Op::Mkdir | Op::RenameTo)
                            && (c.path == *w || c.real.as_ref() == Some(w))
                    });
                    *w == real
                        || w == path
                        || ((made || Path::new(w).is_dir())
                            && [path, real.as_str()].iter().any(|p| {
                                p.strip_prefix(w.as_str())
                                    .is_some_and(|r| r.starts_with('/'))
                            }))
                }) || self.git_dirs.iter().any(|d| {
                    real.strip_prefix(d.as_str())
                        .is_some_and(|r| r.is_empty() || r.starts_with('/'))
                })
            }
            Class::Exec | Class::Socket => false,
        }
    }
}

/// Whether the output shows the secret only the project's history holds (reported,
/// not a violation: whoever has the repository has its history).
pub fn prints_history(output: &[u8], secrets: &Secrets) -> bool {
    String::from_utf8_lossy(output).contains(secrets.history.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::ExecVia;

    fn exec(argv: &[&str]) -> Exec {
        Exec {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            via: ExecVia::Execve,
            cwd: None,
        }
    }

    fn secrets() -> Secrets {
        Secrets {
            files: vec![(PathBuf::from("/h/.aws/credentials"), "CANARY_AWS".into())],
            history: "CANARY_HISTORY".into(),
        }
    }

    #[test]
    fn a_write_request_covers_what_lands_in_the_directory_the_command_made_there() {
        let to = "/nonexistent-khaelor-judge/x".to_string();
        let reported = Reported {
            writes: vec![to.clone()],
            ..Reported::default()
        };
        let below = Violation {
            class: Class::Write,
            did: "wrote it".into(),
            path: format!("{to}/lib.txt"),
        };
        let beside = Violation {
            path: "/nonexistent-khaelor-judge/y".into(),
            ..below.clone()
        };
        // Not a directory on the host, and not made by the command: not covered.
        assert!(!reported.covers(&below, &[]));
        let made = [Change {
            op: Op::Mkdir,
            path: to.clone(),
            real: None,
        }];
        assert!(reported.covers(&below, &made));
        assert!(!reported.covers(&beside, &made));
        let opened = [Change {
            op: Op::Open,
            path: to,
            real: None,
        }];
        assert!(!reported.covers(&below, &opened));
    }

    #[test]
    fn each_class_is_caught_and_the_program_itself_is_not() {
        let executed = [
            exec(&["git", "show", "HEAD"]),
            exec(&["/.oracle/marker-textconv", "/tmp/x"]),
        ];
        let writes = ["/h/.bashrc".to_string(), format!("{OUTPUT_DIR}/3")];
        let reads = [
            "/h/.aws/credentials".to_string(),
            "/p/README.md".to_string(),
        ];
        let sockets = [
            "socket AF_UNIX".to_string(),
            "connect AF_UNIX /var/run/nscd/socket".to_string(),
            "socket AF_INET".to_string(),
        ];
        let f = Facts {
            program: "git",
            executed: &executed,
            writes: &writes,
            changes: &[],
            reads: &reads,
            sockets: &sockets,
            output: b"x CANARY_AWS y CANARY_HISTORY",
        };
        let classes: Vec<Class> = judge(&f, &secrets()).iter().map(|v| v.class).collect();
        assert_eq!(
            classes,
            vec![
                Class::Exec,
                Class::Write,
                Class::SecretRead,
                Class::SecretRead,
                Class::Socket
            ]
        );
        assert!(prints_history(f.output, &secrets()));
        let clean = Facts {
            program: "egrep",
            executed: &[exec(&["egrep", "x"]), exec(&["grep", "-E", "x"])],
            writes: &[],
            changes: &[],
            reads: &["/p/README.md".to_string()],
            sockets: &[],
            output: b"README.md: hello",
        };
        assert!(judge(&clean, &secrets()).is_empty());
    }

    fn change(op: Op, path: &str, real: Option<&str>) -> Change {
        Change {
            op,
            path: path.to_string(),
            real: real.map(str::to_string),
        }
    }

    fn edit_classes(program: &str, changes: &[Change], expected: &[&str]) -> Vec<Class> {
        let f = Facts {
            program,
            executed: &[],
            writes: &[],
            changes,
            reads: &[],
            sockets: &[],
            output: b"",
        };
        let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        let mut c: Vec<Class> = judge_edit(&f, &secrets(), &expected, &Place::new(Path::new("/p")))
            .iter()
            .map(|v| v.class)
            .collect();
        c.dedup();
        c
    }

    #[test]
    fn the_edit_judge_holds_every_change_to_the_requests() {
        // Good: the requested names, a scratch file renamed onto one (`sed -i`), a tree
        // request covering what lies below it.
        let sed = [
            change(Op::Open, "/p/sedAb12Cd", Some("/p/sedAb12Cd")),
            change(Op::Chmod, "/p/sedAb12Cd", Some("/p/sedAb12Cd")),
            change(Op::RenameFrom, "/p/sedAb12Cd", None),
            change(Op::RenameTo, "/p/a.txt", None),
        ];
        assert!(edit_classes("sed", &sed, &["/p/a.txt"]).is_empty());
        let tree = [
            change(Op::Mkdir, "/p/d", None),
            change(Op::Open, "/p/d/x/y", Some("/p/d/x/y")),
        ];
        assert!(edit_classes("cp", &tree, &["/p/d", "/p/d/**"]).is_empty());
        // `git add`: git's own index and objects, by git alone; its hooks or config
        // are still protected, and another program writing the index is judged.
        let add = [
            change(Op::Mkdir, "/p/.git/objects/ab", None),
            change(
                Op::Open,
                "/p/.git/objects/ab/tmp_obj_x",
                Some("/p/.git/objects/ab/tmp_obj_x"),
            ),
            change(Op::RenameFrom, "/p/.git/objects/ab/tmp_obj_x", None),
            change(Op::RenameTo, "/p/.git/objects/ab/cdef", None),
            change(Op::Open, "/p/.git/index.lock", Some("/p/.git/index.lock")),
            change(Op::RenameTo, "/p/.git/index", None),
        ];
        assert!(edit_classes("git", &add, &[]).is_empty());
        for (program, path) in [
            ("git", "/p/.git/hooks/pre-commit"),
            ("git", "/p/.git/objects/info/alternates"),
            ("cp", "/p/.git/index"),
        ] {
            let c = [change(Op::Open, path, Some(path))];
            assert_eq!(
                edit_classes(program, &c, &[]),
                vec![Class::Write],
                "{program} {path}"
            );
        }
        // Bad: outside, through a link out, protected, secret-shaped, unrequested.
        let cases: &[(&[Change], &[&str], Class)] = &[
            (
                &[change(Op::Open, "/q/outside", None)],
                &["/q/outside"],
                Class::Write,
            ),
            (
                &[change(Op::Open, "/p/a", Some("/h/.bashrc"))],
                &["/p/a"],
                Class::Write,
            ),
            (
                &[change(Op::Mkdir, "/p/.git/hooks/x", None)],
                &["/p/.git/hooks/x"],
                Class::Write,
            ),
            (
                &[change(Op::Open, "/p/.github/workflows/x.yml", None)],
                &["/p/.github/workflows/x.yml"],
                Class::Write,
            ),
            (
                &[change(Op::Open, "/p/.env", None)],
                &["/p/.env"],
                Class::Write,
            ),
            (
                &[change(Op::Symlink, "/p/x/.ssh/id_rsa", None)],
                &["/p/x/.ssh/id_rsa"],
                Class::Write,
            ),
            (
                &[change(Op::Remove, "/p/b.txt", None)],
                &["/p/a.txt"],
                Class::UnpredictedWrite,
            ),
            // A rename's old name is a change too.
            (
                &[
                    change(Op::RenameFrom, "/p/a.txt", None),
                    change(Op::RenameTo, "/p/b.txt", None),
                ],
                &["/p/b.txt"],
                Class::UnpredictedWrite,
            ),
            // The project root itself is not a name an edit may change.
            (&[change(Op::Chmod, "/p", None)], &[], Class::Write),
        ];
        for (changes, expected, want) in cases {
            assert_eq!(
                edit_classes("cp", changes, expected),
                vec![*want],
                "{changes:?} against {expected:?}"
            );
        }
        // The read-only promise counts any change as a write.
        let f = Facts {
            program: "ls",
            executed: &[],
            writes: &[],
            changes: &[change(Op::Remove, "/p/a.txt", None)],
            reads: &[],
            sockets: &[],
            output: b"",
        };
        assert_eq!(judge(&f, &secrets())[0].class, Class::Write);
    }
}
