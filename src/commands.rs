//! What common commands do, by name: the network tools, git's global options and the
//! subcommands that modify a repository, the filesystem verbs and the read-only file
//! readers (seed §3.4, §3.5).
//!
//! Pure functions over words that are already unquoted; shared by both engines so they
//! cannot drift apart on vocabulary. Knows nothing of bash syntax (the engines decide
//! which words form a command) and nothing of rules.

/// Command words that carry `network.access` (seed §3.4, plus the obvious siblings).
pub const NETWORK_COMMANDS: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "ssh",
    "scp",
    "sftp",
    "ftp",
    "telnet",
    "ping",
    "dig",
    "nslookup",
    "socat",
    "ssh-copy-id",
    "aria2c",
    "http",
    "https",
    "xh",
    "lftp",
    "tftp",
    "mosh",
    "whois",
    "host",
    "traceroute",
    "nmap",
    "mtr",
    "websocat",
];

/// Filesystem verbs whose path arguments are checked against the project (seed §3.5).
pub const FS_VERBS: &[&str] = &[
    "rm", "cp", "mv", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "dd", "tee", "truncate",
    "install",
];

/// Commands that run another command given in their arguments (DESIGN.md § Analysis).
/// The engines and the floor look through them; such commands never get a broad always
/// pattern.
pub const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "pkexec",
    "env",
    "command",
    "builtin",
    "exec",
    "nohup",
    "nice",
    "timeout",
    "time",
    "stdbuf",
    "xargs",
    "watch",
    "ionice",
    "chrt",
    "taskset",
    "setsid",
    "unbuffer",
    "caffeinate",
    "nocorrect",
    "noglob",
];

/// For a wrapper: the options that take a separate value, and how many positional
/// words (`timeout`'s duration, `chrt`'s priority) come before the wrapped command.
/// `None` for anything that is not a wrapper.
pub fn wrapper_options(name: &str) -> Option<(&'static [&'static str], usize)> {
    let spec: (&'static [&'static str], usize) = match name {
        "sudo" => (
            &[
                "-u",
                "-g",
                "-h",
                "-p",
                "-C",
                "-D",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--chdir",
                "--role",
                "--type",
                "--other-user",
                "--close-from",
                "--chroot",
                "--command-timeout",
            ],
            0,
        ),
        "doas" => (&["-u", "-C"], 0),
        "pkexec" => (&["--user"], 0),
        "env" => (
            &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
            0,
        ),
        "exec" => (&["-a"], 0),
        "nice" => (&["-n", "--adjustment"], 0),
        "timeout" => (&["-s", "-k", "--signal", "--kill-after"], 1),
        "time" => (&["-o", "-f", "--output", "--format"], 0),
        "stdbuf" => (&["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "xargs" => (
            &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--eof",
                "--replace",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            0,
        ),
        "watch" => (&["-n", "-q", "--interval", "--equexit"], 0),
        "ionice" => (&["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"], 0),
        "chrt" => (&["-T", "-P", "-D"], 1),
        "taskset" => (&[], 1),
        "caffeinate" => (&["-t", "-w"], 0),
        "command" | "builtin" | "nohup" | "setsid" | "unbuffer" | "nocorrect" | "noglob" => {
            (&[], 0)
        }
        _ => return None,
    };
    Some(spec)
}

/// Shells: `-c` makes their next operand code, and a bare shell reads code from stdin.
pub const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "fish"];

/// Shells and `eval`/`source`: their argument is code (`sh -c '…'`, `eval '…'`).
pub const CODE_RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "fish", "eval", "source", ".",
];

/// Whether `name` (a basename) is a shell.
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// The last path component of a command word, so `/usr/bin/curl` is recognized as
/// `curl` where that only adds scrutiny (network, git, wrappers, the floor). Allow
/// rules still see the word as written.
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a word is a variable assignment bash would take before a command word:
/// `NAME=v`, `NAME+=v`, `NAME[i]=v`.
pub fn is_assignment(word: &str) -> bool {
    let Some((lhs, _)) = word.split_once('=') else {
        return false;
    };
    let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
    let name = match lhs.split_once('[') {
        Some((name, index)) if index.ends_with(']') => name,
        Some(_) => return false,
        None => lhs,
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `words` (command word first, compared by basename) opens a network connection by name.
pub fn is_network_command(words: &[String]) -> bool {
    let Some(cmd) = words.first().map(|w| basename(w)) else {
        return false;
    };
    if NETWORK_COMMANDS.contains(&cmd) {
        return true;
    }
    // rsync only with a remote argument: `host:path`, `user@host:path` or `rsync://`.
    cmd == "rsync"
        && words
            .iter()
            .skip(1)
            .any(|w| !w.starts_with('-') && (w.starts_with("rsync://") || is_remote_spec(w)))
}

fn is_remote_spec(w: &str) -> bool {
    match w.find(':') {
        Some(i) => {
            let host = &w[..i];
            !host.is_empty() && !host.contains('/')
        }
        None => false,
    }
}

/// git's global options that take a separate value (`git -C dir status`).
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "--attr-source",
    "--super-prefix",
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
];

/// The index and name of git's subcommand, found after git's global options
/// (`git -C x -c a=b --no-pager push` -> `push`). `None` when `words` is not a git
/// command or has no subcommand.
pub fn git_subcommand(words: &[String]) -> Option<(usize, &str)> {
    if words.first().map(|w| basename(w)) != Some("git") {
        return None;
    }
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if GIT_GLOBAL_WITH_VALUE.contains(&w.as_str()) {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else {
            return Some((i, w.as_str()));
        }
    }
    None
}

/// The values of git's `-C` options, in order (they change git's working directory).
pub fn git_dir_options(words: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let end = git_subcommand(words).map(|(i, _)| i).unwrap_or(words.len());
    let mut i = 1;
    while i < end {
        match words.get(i).map(String::as_str) {
            Some("-C") => {
                if let Some(v) = words.get(i + 1) {
                    out.push(v.as_str());
                }
                i += 2;
            }
            Some(w) if GIT_GLOBAL_WITH_VALUE.contains(&w) => i += 2,
            _ => i += 1,
        }
    }
    out
}

/// Whether a git command modifies the repository (seed §3.4, `git.modify`). Read-only
/// forms of the listed subcommands (`branch` listing, `tag -l`, `config --get`,
/// `stash list`, `fetch --dry-run`, `apply --check`) stay plain `process.execute`.
pub fn is_git_modify(words: &[String]) -> bool {
    let Some((i, sub)) = git_subcommand(words) else {
        return false;
    };
    let args: Vec<&str> = words.iter().skip(i + 1).map(String::as_str).collect();
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
    let positional = args.iter().any(|a| !a.starts_with('-'));
    match sub {
        "commit" | "push" | "reset" | "rebase" | "merge" | "revert" | "cherry-pick"
        | "checkout" | "switch" | "restore" | "clean" | "am" | "filter-branch" | "gc" | "rm"
        | "mv" | "pull" | "add" | "init" | "update-ref" | "prune" | "repack" | "bisect"
        | "filter-repo" | "replace" | "update-index" | "sparse-checkout" => true,
        "stash" => !matches!(args.first(), Some(&"list") | Some(&"show")),
        "tag" => {
            !(args.is_empty() || has(&["-l", "--list", "-n", "--contains", "--points-at"]))
                || has(&["-d", "--delete", "-f", "--force", "-a", "-s", "-m"])
        }
        "branch" => {
            has(&[
                "-d",
                "-D",
                "-m",
                "-M",
                "-c",
                "-C",
                "-f",
                "--delete",
                "--move",
                "--copy",
                "--force",
                "-u",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
            ]) || (positional
                && !has(&[
                    "-l",
                    "--list",
                    "-a",
                    "--all",
                    "-r",
                    "--remotes",
                    "--contains",
                    "--merged",
                    "--no-merged",
                    "--points-at",
                    "--show-current",
                ]))
        }
        "remote" => matches!(
            args.first(),
            Some(&"add")
                | Some(&"remove")
                | Some(&"rm")
                | Some(&"set-url")
                | Some(&"rename")
                | Some(&"set-head")
                | Some(&"set-branches")
                | Some(&"prune")
                | Some(&"update")
        ),
        "reflog" => matches!(args.first(), Some(&"delete") | Some(&"expire")),
        "config" => {
            !has(&[
                "--get",
                "--get-all",
                "--get-regexp",
                "--list",
                "-l",
                "--get-urlmatch",
            ]) && !matches!(args.first(), Some(&"get") | Some(&"list"))
        }
        "apply" => {
            !has(&["--check", "--stat", "--numstat", "--summary"])
                || has(&["--apply", "--index", "--cached"])
        }
        "fetch" => !has(&["--dry-run"]),
        "worktree" => !matches!(args.first(), Some(&"list")),
        "submodule" => !matches!(
            args.first(),
            None | Some(&"status") | Some(&"summary") | Some(&"foreach")
        ),
        "notes" => !matches!(args.first(), None | Some(&"list") | Some(&"show")),
        "symbolic-ref" => {
            args.iter().filter(|a| !a.starts_with('-')).count() >= 2 || has(&["-d", "--delete"])
        }
        _ => false,
    }
}

/// The non-flag arguments of a filesystem verb (seed §3.5): the words checked against
/// the project. `dd` contributes its `of=` target.
pub fn fs_verb_arguments(words: &[String]) -> Vec<&str> {
    let Some(cmd) = words.first().map(|w| basename(w)) else {
        return Vec::new();
    };
    if !FS_VERBS.contains(&cmd) {
        return Vec::new();
    }
    if cmd == "dd" {
        return words
            .iter()
            .skip(1)
            .filter_map(|w| w.strip_prefix("of="))
            .collect();
    }
    let mut out = Vec::new();
    let mut after_dashdash = false;
    for w in words.iter().skip(1) {
        if !after_dashdash && w == "--" {
            after_dashdash = true;
        } else if after_dashdash || !w.starts_with('-') || w == "-" {
            out.push(w.as_str());
        }
    }
    // chmod's and chown's first operand is a mode or an owner, not a path.
    if (cmd == "chmod" || cmd == "chown") && !out.is_empty() {
        out.remove(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn git_subcommand_skips_global_options() {
        assert_eq!(
            git_subcommand(&w("git -C /x -c a=b --no-pager push origin")),
            Some((6, "push"))
        );
        assert_eq!(
            git_dir_options(&w("git -C /x -C y status")),
            vec!["/x", "y"]
        );
        assert!(is_git_modify(&w("git -c x=y commit -m hi")));
        assert!(!is_git_modify(&w("git branch")));
        assert!(is_git_modify(&w("git branch -D old")));
        assert!(!is_git_modify(&w("git config --get user.name")));
    }

    #[test]
    fn rsync_is_network_only_with_a_remote() {
        assert!(is_network_command(&w("rsync -a src/ host:/dst")));
        assert!(!is_network_command(&w("rsync -a src/ dst/")));
    }

    #[test]
    fn fs_verb_arguments_skip_flags_and_modes() {
        assert_eq!(fs_verb_arguments(&w("rm -rf a b")), vec!["a", "b"]);
        assert_eq!(fs_verb_arguments(&w("chmod -R 755 dir")), vec!["dir"]);
        assert_eq!(
            fs_verb_arguments(&w("dd if=/dev/zero of=/tmp/x")),
            vec!["/tmp/x"]
        );
    }
}
