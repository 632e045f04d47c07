//! The program oracle's judge: what a verified program did, from the trace of its real
//! run, against what "verified read-only" promises: it ran nothing but itself (and its
//! own documented helpers), opened nothing for writing, read no secret, opened no
//! network socket.
//!
//! Owns the property and its exemptions, as pure functions of the observed facts
//! (`Facts`), so tests can feed it facts directly. Knows nothing of the analysis or
//! the decision: the caller judges only what the default policy allowed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::oracle::Exec;
use crate::oracle::sandbox::OUTPUT_DIR;

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
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Exec => "exec",
            Class::Write => "write",
            Class::SecretRead => "secret read",
            Class::Socket => "socket",
        }
    }
}

/// One thing a program did that breaks the promise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    pub class: Class,
    pub did: String,
}

/// What one command's processes did.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The program the command runs (as bash was asked to run it).
    pub program: &'a str,
    pub executed: &'a [Exec],
    /// Files opened for writing (`trace`'s exemptions already applied).
    pub writes: &'a [String],
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

/// Programs a verified program may itself run: Debian's `egrep`/`fgrep` are scripts
/// that run `grep`; Debian's `yq` is a Python wrapper that runs `jq`; git runs git.
/// Interpreters named by a script's `#!` line do not show: the kernel runs them
/// inside the same `execve`.
pub fn helpers(program: &str) -> &'static [&'static str] {
    match program {
        "egrep" | "fgrep" => &["grep"],
        "yq" => &["jq"],
        "git" => &["git"],
        _ => &[],
    }
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
        || helpers(program).contains(&name)
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

/// The hard violations of one command (empty: it kept the promise).
pub fn judge(facts: &Facts<'_>, secrets: &Secrets) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    let mut push = |class: Class, did: String| {
        let v = Violation { class, did };
        if !out.contains(&v) {
            out.push(v);
        }
    };
    for e in facts.executed {
        if !own_exec(facts.program, e) {
            push(Class::Exec, crate::oracle::compare::show_argv(&e.argv));
        }
    }
    for w in facts.writes {
        if !exempt_write(facts.program, w) {
            push(Class::Write, w.clone());
        }
    }
    for r in facts.reads {
        if let Some((path, _)) = secrets
            .files
            .iter()
            .find(|(p, _)| Path::new(r) == p.as_path())
        {
            push(Class::SecretRead, format!("opened {}", path.display()));
        }
    }
    let output = String::from_utf8_lossy(facts.output);
    for (path, canary) in &secrets.files {
        if output.contains(canary.as_str()) {
            push(
                Class::SecretRead,
                format!("printed the content of {}", path.display()),
            );
        }
    }
    for s in facts.sockets {
        if !name_service(s) {
            push(Class::Socket, s.clone());
        }
    }
    out
}

/// What an ask showed the user: the subjects of its file requests, and the files its
/// command names (each word as a path, `~/` expanded, symlinks resolved).
#[derive(Debug, Clone, Default)]
pub struct Reported {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    pub named: Vec<String>,
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
    /// write request names (symlinks resolved), or a secret the asked command names
    /// itself. A program run or a socket is never reported (a verified program's call
    /// has no such request).
    pub fn covers(&self, v: &Violation) -> bool {
        let path = v
            .did
            .strip_prefix("opened ")
            .or_else(|| v.did.strip_prefix("printed the content of "))
            .unwrap_or(&v.did);
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
            Class::Write => self.writes.iter().any(|w| *w == real || w == path),
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
        }
    }

    fn secrets() -> Secrets {
        Secrets {
            files: vec![(PathBuf::from("/h/.aws/credentials"), "CANARY_AWS".into())],
            history: "CANARY_HISTORY".into(),
        }
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
            reads: &["/p/README.md".to_string()],
            sockets: &[],
            output: b"README.md: hello",
        };
        assert!(judge(&clean, &secrets()).is_empty());
    }
}
