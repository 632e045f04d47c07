//! Word-level hooks the program table cannot say as data: the read-only readers and the
//! files they name, the filesystem verbs' destinations, sed scripts (`-i`, `w`, `e`),
//! `rg --pre`, git's `--output`/`--ext-diff`/difftool and the files git reads, the
//! repository git uses (`git_repository`: a repository the analysis cannot vouch for
//! makes the command ask) and the paths its history holds for the commands that print
//! them (`git_history`). Options
//! that run, read or write something by declaration live in `crate::programs`. The
//! parent decides which words form the command and turns paths into requests.

use super::{Effects, escalation, read_request, resolve, unresolved_request, write_request};
use crate::analysis::ast::walk::Cwd;
use crate::model::vocab::{AnalysisContext, Capability, CapabilityRequest};
use crate::programs::git::{git_dir_options, git_repo_options, git_subcommand, is_git_modify};
use crate::programs::git_discovery::{self, Discovery, Repository};
use crate::programs::git_history;

/// Read-only commands that name files, with their flags that take a value, and whether
/// the first operand is a pattern/program rather than a file.
pub(super) const READERS: &[(&str, &[&str], bool)] = &[
    ("cat", &[], false),
    ("head", &["-n", "-c", "--lines", "--bytes"], false),
    (
        "tail",
        &[
            "-n",
            "-c",
            "--lines",
            "--bytes",
            "-s",
            "--sleep-interval",
            "--pid",
        ],
        false,
    ),
    (
        "less",
        &[
            "-b", "-h", "-j", "-k", "-p", "-P", "-t", "-T", "-x", "-y", "-z", "-o", "-O",
        ],
        false,
    ),
    ("more", &["-n"], false),
    ("wc", &[], false),
    (
        "grep",
        &[
            "-e",
            "-f",
            "-m",
            "-A",
            "-B",
            "-C",
            "-d",
            "-D",
            "--regexp",
            "--file",
            "--max-count",
            "--context",
            "--label",
            "--include",
            "--exclude",
            "--exclude-dir",
        ],
        true,
    ),
    ("egrep", &["-e", "-f", "-m", "-A", "-B", "-C"], true),
    ("fgrep", &["-e", "-f", "-m", "-A", "-B", "-C"], true),
    (
        "rg",
        &[
            "-e",
            "-f",
            "-g",
            "-t",
            "-T",
            "-m",
            "-A",
            "-B",
            "-C",
            "-j",
            "-M",
            "-E",
            "--regexp",
            "--file",
            "--glob",
            "--iglob",
            "--type",
            "--type-not",
            "--max-count",
            "--context",
            "--threads",
            "--max-columns",
            "--encoding",
            "--pre",
            "--pre-glob",
            "--type-add",
            "--sort",
            "--sortr",
            "--max-depth",
            "--color",
            "--colors",
            "--replace",
            "-r",
        ],
        true,
    ),
    (
        "sort",
        &[
            "-k",
            "-t",
            "-S",
            "-T",
            "-o",
            "--key",
            "--field-separator",
            "--buffer-size",
            "--temporary-directory",
            "--output",
            "--parallel",
        ],
        false,
    ),
    (
        "uniq",
        &[
            "-f",
            "-s",
            "-w",
            "--skip-fields",
            "--skip-chars",
            "--check-chars",
        ],
        false,
    ),
    (
        "diff",
        &[
            "-U",
            "-C",
            "-L",
            "--label",
            "-x",
            "--exclude",
            "-X",
            "--unified",
            "--context",
            "-I",
        ],
        false,
    ),
    ("cmp", &["-i", "-n", "--ignore-initial", "--bytes"], false),
    (
        "nl",
        &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
        false,
    ),
    ("tac", &["-s", "--separator"], false),
    ("od", &["-A", "-j", "-N", "-S", "-t", "-w"], false),
    ("xxd", &["-c", "-g", "-l", "-o", "-s", "-n", "-C"], false),
    ("hexdump", &["-e", "-f", "-n", "-s"], false),
    (
        "strings",
        &["-n", "-t", "-e", "--bytes", "--radix", "--encoding"],
        false,
    ),
    (
        "file",
        &["-m", "-F", "-P", "--magic-file", "--separator"],
        false,
    ),
    ("stat", &["-c", "-f", "--format", "--printf"], false),
    ("md5sum", &[], false),
    ("sha1sum", &[], false),
    ("sha256sum", &[], false),
    ("sha512sum", &[], false),
    ("base64", &["-w", "--wrap"], false),
    (
        "jq",
        &[
            "--arg",
            "--argjson",
            "--slurpfile",
            "--rawfile",
            "--indent",
            "-L",
            "--tab",
        ],
        true,
    ),
];

/// Flags of `jq` that take two values.
const JQ_TWO_VALUE_FLAGS: &[&str] = &["--arg", "--argjson", "--slurpfile", "--rawfile"];

/// Values of the given flags, separate (`-o f`) or attached (`--output=f`, `-of`).
pub(super) fn flag_values(words: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if let Some((f, v)) = w.split_once('=') {
            if flags.contains(&f) {
                out.push(v.to_string());
            }
        } else if flags.contains(&w.as_str()) {
            if let Some(v) = words.get(i + 1) {
                out.push(v.clone());
            }
            i += 1;
        } else if let Some(short) = flags
            .iter()
            .find(|f| f.len() == 2 && !f.starts_with("--") && w.starts_with(**f) && w.len() > 2)
            && let Some(v) = w.get(short.len()..)
        {
            out.push(v.to_string());
        }
        i += 1;
    }
    out
}

/// Operands (non-flag words), skipping the values of flags that take one.
pub(super) fn operands(words: &[String], value_flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1;
    let mut only_operands = false;
    while let Some(w) = words.get(i) {
        if only_operands {
            out.push(w.clone());
        } else if w == "--" {
            only_operands = true;
        } else if w.starts_with('-') && w.len() > 1 {
            let flag = w.split_once('=').map(|(f, _)| f).unwrap_or(w);
            if value_flags.contains(&flag) && !w.contains('=') {
                i += 1;
            }
        } else {
            out.push(w.clone());
        }
        i += 1;
    }
    out
}

/// The words a filesystem verb writes (seed §3.5, refined: `cp`/`ln`/`install` write
/// only their destination).
pub(super) fn fs_writes(name: &str, words: &[String]) -> Vec<String> {
    match name {
        "dd" => words
            .iter()
            .skip(1)
            .filter_map(|w| w.strip_prefix("of="))
            .map(str::to_string)
            .collect(),
        "cp" | "ln" | "install" | "mv" => {
            let value_flags: &[&str] = &[
                "-t",
                "-S",
                "--suffix",
                "-m",
                "--mode",
                "-o",
                "--owner",
                "-g",
                "--group",
                "--target-directory",
            ];
            let targets = flag_values(words, &["-t", "--target-directory"]);
            let ops = operands(words, value_flags);
            let directories_only =
                name == "install" && words.iter().any(|w| w == "-d" || w == "--directory");
            if name == "mv" || directories_only {
                let mut all = ops;
                all.extend(targets);
                return all;
            }
            if !targets.is_empty() {
                return targets;
            }
            match (name, ops.len()) {
                (_, 0) => Vec::new(),
                // `ln -s target` links into the cwd.
                ("ln", 1) => vec![".".to_string()],
                _ => ops.last().cloned().into_iter().collect(),
            }
        }
        "chmod" | "chown" | "chgrp" => {
            let mut ops = operands(words, &["--reference"]);
            if !words.iter().any(|w| w.starts_with("--reference")) && !ops.is_empty() {
                ops.remove(0);
            }
            ops
        }
        "truncate" => operands(words, &["-s", "--size", "-r", "--reference"]),
        "touch" => operands(words, &["-d", "-t", "-r", "--date", "--reference"]),
        "mkdir" => operands(words, &["-m", "--mode", "--context"]),
        _ => operands(words, &[]),
    }
}

/// `cp`'s sources are read.
pub(super) fn cp_sources(words: &[String]) -> Vec<String> {
    let value_flags: &[&str] = &[
        "-t",
        "-S",
        "--suffix",
        "-m",
        "--mode",
        "-o",
        "--owner",
        "-g",
        "--group",
        "--target-directory",
    ];
    let mut ops = operands(words, value_flags);
    if flag_values(words, &["-t", "--target-directory"]).is_empty() {
        ops.pop();
    }
    ops
}

#[allow(clippy::too_many_arguments)]
pub(super) fn reader_effects(
    name: &str,
    words: &[String],
    value_flags: &[&str],
    pattern_first: bool,
    text: &str,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    let mut ops = Vec::new();
    let mut has_pattern_flag = false;
    let mut i = 1;
    let mut only_operands = false;
    while let Some(w) = words.get(i) {
        if only_operands {
            ops.push(w.clone());
        } else if w == "--" {
            only_operands = true;
        } else if w.starts_with('-') && w.len() > 1 {
            let flag = w.split_once('=').map(|(f, _)| f).unwrap_or(w);
            if matches!(flag, "-e" | "-f" | "--regexp" | "--file" | "--from-file") {
                has_pattern_flag = true;
            }
            if matches!(flag, "-f" | "--file" | "--from-file")
                && name != "tail"
                && let Some(v) = w
                    .split_once('=')
                    .map(|(_, v)| v.to_string())
                    .or_else(|| words.get(i + 1).cloned())
            {
                read_request(&v, cwd, ctx, fx);
            }
            if name == "rg" && flag == "--pre" {
                let cmd = w
                    .split_once('=')
                    .map(|(_, v)| v.to_string())
                    .or_else(|| words.get(i + 1).cloned())
                    .unwrap_or_default();
                escalation(&format!("rg --pre {cmd}"), text, fx);
            }
            if name == "sort" && (flag == "-o" || flag == "--output") {
                if let Some(v) = w
                    .split_once('=')
                    .map(|(_, v)| v.to_string())
                    .or_else(|| words.get(i + 1).cloned())
                {
                    fx.escalated = true;
                    write_request(&v, cwd, ctx, fx);
                }
            } else if name == "sort" && w.starts_with("-o") && w.len() > 2 {
                fx.escalated = true;
                write_request(w.get(2..).unwrap_or(""), cwd, ctx, fx);
            }
            if name == "jq" && JQ_TWO_VALUE_FLAGS.contains(&flag) {
                i += 2;
            } else if value_flags.contains(&flag) && !w.contains('=') {
                i += 1;
            }
        } else {
            ops.push(w.clone());
        }
        i += 1;
    }
    if pattern_first && !has_pattern_flag && !ops.is_empty() {
        ops.remove(0);
    }
    // `uniq IN OUT` and `xxd IN OUT` write their second operand.
    if (name == "uniq" || name == "xxd")
        && ops.len() >= 2
        && let Some(out) = ops.pop()
    {
        fx.escalated = true;
        write_request(&out, cwd, ctx, fx);
    }
    for op in ops {
        if op == "-" {
            continue;
        }
        read_request(&op, cwd, ctx, fx);
    }
}

pub(super) fn git_effects(
    words: &[String],
    text: &str,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    // A `git add` proven an in-project edit (every command of this text) is decided as
    // that edit: what it stores is judged as reads, its index and objects are git's.
    let proven_edit = git_subcommand(words).is_some_and(|(_, sub)| sub == "add") && {
        let mut same = fx.verdicts.iter().filter(|(t, _)| t == text).peekable();
        same.peek().is_some()
            && same.all(|(_, v)| *v == Some(crate::model::vocab::Verdict::ProjectWrite))
    };
    if is_git_modify(words) && !proven_edit {
        fx.push(CapabilityRequest::new(
            Capability::GitModify,
            text,
            format!("Modify the repository: {text}"),
        ));
    }
    // `git -C dir` moves where git's own relative paths resolve.
    let mut git_cwd = cwd.clone();
    for d in git_dir_options(words) {
        git_cwd = match resolve(d, &git_cwd, ctx) {
            Some(p) => Cwd::Known(p),
            None => Cwd::Unknown,
        };
    }
    let sub_index = git_subcommand(words).map(|(i, _)| i).unwrap_or(words.len());
    // Global options that run something (`-c`, `--config-env`, `--exec-path`, `-p`) and
    // the subcommands' (`push --receive-pack`, `clone -u`) come from the program table.
    let args = words.get(sub_index..).unwrap_or(&[]);
    if args.iter().any(|w| w == "--ext-diff") {
        escalation("git --ext-diff", text, fx);
    }
    if let Some(sub) = args.first()
        && (sub == "difftool" || sub == "mergetool")
    {
        escalation(&format!("git {sub}"), text, fx);
    }
    for v in flag_values(args, &["--output"]) {
        fx.escalated = true;
        write_request(&v, &git_cwd, ctx, fx);
    }
    git_reads(args, &git_cwd, ctx, fx);
    if args.first().map(String::as_str) == Some("format-patch") {
        for v in flag_values(args, &["-o", "--output-directory"]) {
            write_request(&v, &git_cwd, ctx, fx);
        }
    }
    git_repository_effects(words, text, &git_cwd, ctx, fx);
}

/// The repository a git command uses, as the analysis can vouch for it.
#[derive(Debug, Clone)]
pub(super) enum GitRepo {
    /// No repository; the configuration git reads is protected.
    None,
    /// A repository whose git directory and configuration are protected.
    Protected(Repository),
    /// git takes code from something an agent can write silently, or from something
    /// the analysis cannot see: why.
    Unprotected(String),
}

/// Subcommands that do not use the repository they run in (`clone`, `init` ask on their
/// own), and git without one.
fn outside_repositories(words: &[String]) -> bool {
    match git_subcommand(words) {
        Some((_, sub)) => matches!(sub, "clone" | "init" | "help" | "version"),
        None => true,
    }
}

/// The repository git finds for `words` run in `git_cwd` (after `-C`): `--git-dir`,
/// `--work-tree`, or discovery from the cwd (`git_discovery`), and whether every file
/// it takes code from is protected.
/// Found once per command: the verdict and the effects both ask.
pub(super) fn git_repository(
    words: &[String],
    git_cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) -> GitRepo {
    let (d, w) = git_repo_options(words);
    let key = (
        d.map(str::to_string),
        w.map(str::to_string),
        git_cwd.path().map(std::path::Path::to_path_buf),
    );
    if let Some((_, found)) = fx.git_repos.iter().find(|(k, _)| *k == key) {
        return found.clone();
    }
    let found = find_repository(words, git_cwd, ctx);
    fx.git_repos.push((key, found.clone()));
    found
}

fn find_repository(words: &[String], git_cwd: &Cwd, ctx: &AnalysisContext) -> GitRepo {
    let Some(cwd) = git_cwd.path() else {
        return GitRepo::Unprotected(
            "git runs in a directory only known when it runs, whose repository cannot be checked"
                .to_string(),
        );
    };
    let (git_dir, work_tree) = git_repo_options(words);
    let at = |w: Option<&str>| -> Result<Option<std::path::PathBuf>, String> {
        match w {
            None => Ok(None),
            Some(w) => resolve(w, git_cwd, ctx)
                .map(Some)
                .ok_or_else(|| format!("git uses `{w}`, only known when it runs")),
        }
    };
    let (git_dir, work_tree) = match (at(git_dir), at(work_tree)) {
        (Ok(g), Ok(w)) => (g, w),
        (Err(e), _) | (_, Err(e)) => return GitRepo::Unprotected(e),
    };
    match git_discovery::discover(cwd, git_dir.as_deref(), work_tree.as_deref()) {
        Discovery::Found(repo) => match git_discovery::unprotected(&repo, ctx.root(), ctx.home()) {
            Some(why) => GitRepo::Unprotected(why),
            None => GitRepo::Protected(repo),
        },
        Discovery::None => match git_discovery::config_files(None, ctx.home()) {
            Ok(files) => match files
                .iter()
                .find(|f| !git_discovery::out_of_reach(f, ctx.root()))
            {
                Some(f) => GitRepo::Unprotected(format!(
                    "git reads its configuration from `{}`, which any write can change",
                    f.display()
                )),
                None => GitRepo::None,
            },
            Err(e) => GitRepo::Unprotected(e),
        },
        Discovery::Unknown(why) => GitRepo::Unprotected(why),
    }
}

/// What the repository adds: a repository that is not protected (a bare-shaped `bare/`
/// written by the agent, whose `config` names a textconv driver) makes any git command
/// there a program run of its own, which asks even where a rule allows the command by
/// name (`git log *`); in a protected one, a command that prints contents from history
/// reads every path it can reach there (`git_history`), and an object named by an id
/// that is not a reachable commit is a read of something unknown.
fn git_repository_effects(
    words: &[String],
    text: &str,
    git_cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    if outside_repositories(words) {
        return;
    }
    let repo = match git_repository(words, git_cwd, ctx, fx) {
        GitRepo::None => return,
        GitRepo::Unprotected(why) => {
            fx.note(format!(
                "{why}: git runs the programs its configuration names"
            ));
            fx.escalated = true;
            fx.push(CapabilityRequest::via(
                "an unprotected git repository",
                text,
                "Run git in a repository whose configuration any write can change",
            ));
            return;
        }
        GitRepo::Protected(r) => r,
    };
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    let is_path = |w: &str| resolve(w, git_cwd, ctx).is_some_and(|p| p.exists());
    let Some(content) = crate::programs::git_readonly::content_read(&refs, &is_path) else {
        return;
    };
    let base = repo
        .work_tree
        .clone()
        .unwrap_or_else(|| repo.git_dir.clone());
    let shown = repo.git_dir.display().to_string();
    let reach = match git_history::reach(&repo.git_dir) {
        Ok(r) => r,
        Err(e) => {
            fx.note(format!(
                "{e}: what this command prints from it cannot be checked"
            ));
            unresolved_request(
                Capability::FileRead,
                "Read",
                &format!("the git history in {shown}"),
                fx,
            );
            return;
        }
    };
    for id in &content.object_ids {
        if !reach.is_commit(id) {
            fx.note(format!(
                "`{id}` may name any object, a secret file's content included"
            ));
            unresolved_request(
                Capability::FileRead,
                "Read",
                &format!("git object {id}"),
                fx,
            );
        }
    }
    for name in &content.names {
        if reach.names_object(name) {
            fx.note(format!(
                "`{name}` names a blob or tree, whose file it may be is unknown"
            ));
            unresolved_request(
                Capability::FileRead,
                "Read",
                &format!("git object {name}"),
                fx,
            );
        }
    }
    if content.objects_only {
        return;
    }
    let prefix = git_cwd
        .path()
        .and_then(|c| c.strip_prefix(&base).ok())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let paths = git_history::selected(&reach, &base, &prefix, &content.pathspecs);
    if paths.is_empty() {
        return;
    }
    let mut r = CapabilityRequest::new(
        Capability::FileRead,
        shown.clone(),
        format!("Read files from the git history in {shown}"),
    );
    r.directory_read = Some(crate::model::vocab::DirectoryRead {
        paths: paths.iter().map(|p| p.display().to_string()).collect(),
        ..Default::default()
    });
    fx.push(r);
}

/// `sed -i` writes its files; `w FILE` and `e` commands in the script write or run.
pub(super) fn sed_effects(
    words: &[String],
    text: &str,
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
) {
    let in_place = words.iter().skip(1).any(|w| {
        w == "-i"
            || w.starts_with("-i") && !w.starts_with("--")
            || w.starts_with("--in-place")
            || (w.starts_with('-')
                && !w.starts_with("--")
                && w.contains('i')
                && !w.contains('e')
                && w.len() <= 4)
    });
    let mut scripts = flag_values(words, &["-e", "--expression"]);
    let script_files = flag_values(words, &["-f", "--file"]);
    for f in &script_files {
        read_request(f, cwd, ctx, fx);
    }
    let mut ops = operands(
        words,
        &["-e", "--expression", "-f", "--file", "-l", "--line-length"],
    );
    // BSD `sed -i '' …`: the empty word is the backup suffix.
    if ops.first().is_some_and(String::is_empty) {
        ops.remove(0);
    }
    if scripts.is_empty() && script_files.is_empty() && !ops.is_empty() {
        scripts.push(ops.remove(0));
    }
    // A script the exact reader proves made of editing commands only has no `w` or
    // `e` (`1a foo; w out` appends that text); the scan below is for the others.
    if scripts
        .iter()
        .any(|s| sed_script_writes_or_runs(s) && !crate::programs::edits::sed_script_edits(s))
    {
        escalation("a sed script with `w` or `e`", text, fx);
    }
    if in_place {
        fx.escalated = true;
        for f in ops {
            write_request(&f, cwd, ctx, fx);
        }
    }
}

/// Whether a sed script has a `w`/`W`/`e` command, or an `s` command with `w`/`e` flags.
fn sed_script_writes_or_runs(script: &str) -> bool {
    for cmd in script.split([';', '\n']) {
        let c = cmd.trim_start().trim_start_matches(|ch: char| {
            ch.is_ascii_digit() || ch == ',' || ch == '$' || ch == '!' || ch.is_whitespace()
        });
        let mut chars = c.chars();
        match chars.next() {
            Some('w' | 'W' | 'e') => return true,
            Some('s') => {
                let Some(delim) = chars.next() else { continue };
                let mut seen = 0;
                let mut escaped = false;
                let mut flags = String::new();
                for ch in chars {
                    if seen >= 2 {
                        flags.push(ch);
                    } else if escaped {
                        escaped = false;
                    } else if ch == '\\' {
                        escaped = true;
                    } else if ch == delim {
                        seen += 1;
                    }
                }
                if flags.contains('w') || flags.contains('e') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Files the read-only git commands print: `git diff --no-index A B`, paths after
/// `--`, `REV:PATH` blobs (`git show HEAD:.env`), and operands that name an existing
/// file (git's own rule for telling a path from a revision). Without these, `git diff
/// --no-index .env /dev/null` would print a secret under the `git diff*` allow.
fn git_reads(args: &[String], cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    let Some(sub) = args.first() else { return };
    if !matches!(
        sub.as_str(),
        "diff" | "show" | "log" | "blame" | "annotate" | "cat-file" | "grep"
    ) {
        return;
    }
    let no_index = args.iter().any(|a| a == "--no-index");
    let mut after_dashdash = false;
    for a in args.iter().skip(1) {
        if a == "--" {
            after_dashdash = true;
            continue;
        }
        if after_dashdash || (no_index && !a.starts_with('-')) {
            if a != "/dev/null" {
                read_request(a, cwd, ctx, fx);
            }
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        if let Some((_, path)) = a.split_once(':') {
            if !path.is_empty() && !path.contains("//") {
                read_request(path, cwd, ctx, fx);
            }
        } else if resolve(a, cwd, ctx).is_some_and(|p| p.exists()) {
            read_request(a, cwd, ctx, fx);
        }
    }
}
