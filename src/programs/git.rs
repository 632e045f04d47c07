//! git in the table: its global options (exact names only, as git reads them), the
//! subcommand after them, the subcommands' own options with git's abbreviation rule
//! (unique prefixes and `--no-` forms: `push --force-wit`, `push --rece=CMD`), the
//! options that make git run another program (`push --receive-pack`/`--exec`, `clone
//! -u`/`--upload-pack`/`--template`/`-c`, `fetch`/`pull`/`ls-remote --upload-pack`,
//! `rebase --exec`, `grep -O`, global `-c`/`--config-env`/`--exec-path`/`-p`), what
//! `clone` writes, and which subcommands modify the repository (seed §3.4).

use super::description::{CodeArg, Description};
use super::options::{
    Abbrev, Arg, Does, Grammar, Opt, Parsed, Value, is_program_word, l, parse, s, sl,
};
use super::{Example, Program, Role, basename};

const N: Arg = Arg::No;
const V: Arg = Arg::Required;
const OPT: Arg = Arg::Optional;
const NO: Does = Does::Nothing;

const CONFIG_RUNS: Does = Does::Runs(
    "sets configuration, which can name programs git runs (core.pager, core.sshCommand, diff.external, alias.*)",
);
/// git runs `--upload-pack`/`--receive-pack`/`--exec` through `sh -c` for a local
/// repository (checked: `push --receive-pack='touch m' /path` touches `m`), and hands
/// it to the remote's shell otherwise.
const REMOTE_RUNS: Does = Does::RunsCode(
    Value::Shell,
    "names the command git runs to talk to the other repository",
);

/// What the value of a configuration key that runs something is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigValue {
    /// Shell code: git runs it with `sh -c` when it holds shell syntax, and as a
    /// program otherwise (run-command's `use_shell`).
    Shell,
    /// `alias.NAME`: with a leading `!` shell code, otherwise the words of a git command
    /// (`git VALUE ARGS…`).
    Alias,
    /// `credential.helper`: `!CMD` and an absolute path are shell code, any other value
    /// NAME is run by the shell as `git credential-NAME` (checked: `x; touch m` touches
    /// `m`).
    CredentialHelper,
    /// A program run directly, or a directory of hooks: it runs something, but the
    /// value is no command text.
    Program,
}

/// A configuration key whose value makes git run something. `*` stands for one
/// subsection (`diff.*.command` is `diff.<driver>.command`); keys compare ignoring
/// case, as git's section and variable names do.
#[derive(Debug, Clone, Copy)]
pub struct ConfigKey {
    pub key: &'static str,
    pub value: ConfigValue,
    pub why: &'static str,
}

const fn key(key: &'static str, value: ConfigValue, why: &'static str) -> ConfigKey {
    ConfigKey { key, value, why }
}

/// The configuration keys whose values run commands (checked with markers where the
/// key could be exercised here, git 2.47: core.pager, pager.*, core.editor,
/// sequence.editor, core.sshCommand, core.fsmonitor, diff.external, alias.*,
/// credential.helper run shell code; gpg.program is run as a program).
pub const CONFIG_KEYS: &[ConfigKey] = &[
    key(
        "core.pager",
        ConfigValue::Shell,
        "is the pager git pipes its output through",
    ),
    key(
        "pager.*",
        ConfigValue::Shell,
        "is the pager of one git command (or a boolean)",
    ),
    key(
        "core.editor",
        ConfigValue::Shell,
        "is the editor git starts for messages",
    ),
    key(
        "sequence.editor",
        ConfigValue::Shell,
        "is the editor of `rebase -i`'s todo list",
    ),
    key(
        "core.sshcommand",
        ConfigValue::Shell,
        "is the command git runs to reach ssh remotes",
    ),
    key(
        "core.fsmonitor",
        ConfigValue::Shell,
        "is the hook git runs to learn what changed",
    ),
    key(
        "core.alternaterefscommand",
        ConfigValue::Shell,
        "is run to list an alternate's refs",
    ),
    key(
        "diff.external",
        ConfigValue::Shell,
        "is the command git runs instead of its diff",
    ),
    key(
        "diff.*.command",
        ConfigValue::Shell,
        "is a diff driver's command",
    ),
    key(
        "diff.*.textconv",
        ConfigValue::Shell,
        "converts files before they are diffed",
    ),
    key(
        "filter.*.clean",
        ConfigValue::Shell,
        "filters files as they are staged",
    ),
    key(
        "filter.*.smudge",
        ConfigValue::Shell,
        "filters files as they are checked out",
    ),
    key(
        "filter.*.process",
        ConfigValue::Shell,
        "is a long-running filter process",
    ),
    key(
        "merge.*.driver",
        ConfigValue::Shell,
        "is a merge driver's command",
    ),
    key(
        "difftool.*.cmd",
        ConfigValue::Shell,
        "is the command `git difftool` runs",
    ),
    key(
        "mergetool.*.cmd",
        ConfigValue::Shell,
        "is the command `git mergetool` runs",
    ),
    key(
        "browser.*.cmd",
        ConfigValue::Shell,
        "is the browser `git web--browse` runs",
    ),
    key(
        "tar.*.command",
        ConfigValue::Shell,
        "is the compressor `git archive` runs",
    ),
    key(
        "remote.*.uploadpack",
        ConfigValue::Shell,
        "is the upload-pack command of a remote",
    ),
    key(
        "remote.*.receivepack",
        ConfigValue::Shell,
        "is the receive-pack command of a remote",
    ),
    key(
        "uploadpack.packobjectshook",
        ConfigValue::Shell,
        "runs in place of pack-objects (honoured from `-c`)",
    ),
    key(
        "alias.*",
        ConfigValue::Alias,
        "defines a git command, or with `!` a shell command",
    ),
    key(
        "credential.helper",
        ConfigValue::CredentialHelper,
        "is the credential helper git runs",
    ),
    key(
        "credential.*.helper",
        ConfigValue::CredentialHelper,
        "is the credential helper for one URL",
    ),
    key(
        "core.hookspath",
        ConfigValue::Program,
        "is the directory whose hooks git runs",
    ),
    key(
        "init.templatedir",
        ConfigValue::Program,
        "is the directory whose hooks new repositories get",
    ),
    key(
        "core.gitproxy",
        ConfigValue::Program,
        "is the program git runs to reach git:// hosts",
    ),
    key(
        "core.askpass",
        ConfigValue::Program,
        "is the program git runs to ask for a password",
    ),
    key(
        "gpg.program",
        ConfigValue::Program,
        "is the program git runs to sign and verify",
    ),
    key(
        "gpg.*.program",
        ConfigValue::Program,
        "is the program git runs to sign and verify",
    ),
    key(
        "protocol.ext.allow",
        ConfigValue::Program,
        "lets `ext::` URLs run the command they hold",
    ),
];

/// The entry of a configuration key, if its value runs something.
pub fn config_key(name: &str) -> Option<&'static ConfigKey> {
    let name = name.to_ascii_lowercase();
    CONFIG_KEYS.iter().find(|k| match k.key.split_once('*') {
        Some((pre, post)) => {
            name.len() > pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => name == k.key,
    })
}

/// The shell code a configuration value runs, when its key's value is a command and
/// the value is more than a bare program name (`core.pager=less` runs `less`, which
/// the `-c` request already names).
pub fn config_code(name: &str, value: &str) -> Option<String> {
    let code = match config_key(name)?.value {
        ConfigValue::Shell => value.to_string(),
        ConfigValue::Alias => match value.strip_prefix('!') {
            Some(shell) => shell.to_string(),
            None => format!("git {value}"),
        },
        ConfigValue::CredentialHelper => match value.strip_prefix('!') {
            Some(shell) => shell.to_string(),
            None if value.starts_with('/') => value.to_string(),
            None => format!("git credential-{value}"),
        },
        ConfigValue::Program => return None,
    };
    (!is_program_word(&code)).then_some(code)
}

/// `-c KEY=VALUE` options whose value is shell code (an alias's as `git …`).
fn config_options(parsed: &Parsed, d: &mut Description) {
    for f in &parsed.found {
        // Global `-c`, and `clone -c`/`--config`.
        if f.opt.short != Some('c') {
            continue;
        }
        let Some(kv) = &f.value else {
            continue;
        };
        let Some((name, value)) = kv.split_once('=') else {
            continue;
        };
        let Some(code) = config_code(name, value) else {
            continue;
        };
        d.option_code.push(code);
    }
}

/// git's `--config-env=KEY=VAR` options whose key runs its value: the key and the
/// variable it takes the value from (`X='…' git --config-env=core.pager=X log`).
pub fn config_env(words: &[&str]) -> Vec<(&'static ConfigKey, String, String)> {
    if words.first().map(|w| basename(w)) != Some("git") {
        return Vec::new();
    }
    let g = Grammar::wrapper(GLOBAL, Abbrev::None);
    parse(&g, words, 1)
        .found
        .iter()
        .filter(|f| f.opt.long == Some("config-env"))
        .filter_map(|f| {
            let (name, var) = f.value.as_deref()?.split_once('=')?;
            Some((config_key(name)?, name.to_string(), var.to_string()))
        })
        .collect()
}

/// git's global options (`git --help`); git accepts no abbreviations of these.
const GLOBAL: &[Opt] = &[
    s('v', N, NO),
    l("version", N, NO),
    s('h', N, NO),
    l("help", N, NO),
    s('C', V, Does::Chdir),
    s('c', V, CONFIG_RUNS),
    l("config-env", V, CONFIG_RUNS),
    l(
        "exec-path",
        OPT,
        Does::Runs("runs git's programs from the given directory"),
    ),
    l("html-path", N, NO),
    l("man-path", N, NO),
    l("info-path", N, NO),
    sl('p', "paginate", N, Does::Runs("runs the configured pager")),
    sl('P', "no-pager", N, NO),
    l("no-replace-objects", N, NO),
    l("no-lazy-fetch", N, NO),
    l("no-optional-locks", N, NO),
    l("no-advice", N, NO),
    l("bare", N, NO),
    l("git-dir", V, NO),
    l("work-tree", V, NO),
    l("namespace", V, NO),
    l("super-prefix", V, NO),
    l("literal-pathspecs", N, NO),
    l("glob-pathspecs", N, NO),
    l("noglob-pathspecs", N, NO),
    l("icase-pathspecs", N, NO),
    l("attr-source", V, NO),
    l("list-cmds", V, NO),
];

/// `git push` (its `--git-completion-helper-all` list, git 2.47).
const PUSH: &[Opt] = &[
    sl('v', "verbose", N, NO),
    sl('q', "quiet", N, NO),
    l("repo", V, NO),
    l("all", N, NO),
    l("branches", N, NO),
    l("mirror", N, NO),
    sl('d', "delete", N, NO),
    l("tags", N, NO),
    sl('n', "dry-run", N, NO),
    l("porcelain", N, NO),
    sl('f', "force", N, NO),
    l("force-with-lease", OPT, NO),
    l("force-if-includes", N, NO),
    l("recurse-submodules", V, NO),
    l("thin", N, NO),
    l("receive-pack", V, REMOTE_RUNS),
    l("exec", V, REMOTE_RUNS),
    sl('u', "set-upstream", N, NO),
    l("progress", N, NO),
    l("prune", N, NO),
    l("no-verify", N, NO),
    l("verify", N, NO),
    l("follow-tags", N, NO),
    l("signed", OPT, NO),
    l("atomic", N, NO),
    sl('o', "push-option", V, NO),
    s('4', N, NO),
    l("ipv4", N, NO),
    s('6', N, NO),
    l("ipv6", N, NO),
];

/// `git fetch`/`git pull`: only the option that runs something is listed; the grammar
/// is partial, so any prefix of it counts as it.
const FETCH: &[Opt] = &[l("upload-pack", V, REMOTE_RUNS)];

const CLONE: &[Opt] = &[
    sl('v', "verbose", N, NO),
    sl('q', "quiet", N, NO),
    l("progress", N, NO),
    l("reject-shallow", N, NO),
    sl('n', "no-checkout", N, NO),
    l("checkout", N, NO),
    l("bare", N, NO),
    l("naked", N, NO),
    l("mirror", N, NO),
    sl('l', "local", N, NO),
    l("no-hardlinks", N, NO),
    l("hardlinks", N, NO),
    sl('s', "shared", N, NO),
    l("recurse-submodules", OPT, NO),
    l("recursive", OPT, NO),
    sl('j', "jobs", V, NO),
    l(
        "template",
        V,
        Does::Runs(
            "copies hooks from the template directory into the new repository, where they run",
        ),
    ),
    l("reference", V, NO),
    l("reference-if-able", V, NO),
    l("dissociate", N, NO),
    sl('o', "origin", V, NO),
    sl('b', "branch", V, NO),
    sl('u', "upload-pack", V, REMOTE_RUNS),
    l("depth", V, NO),
    l("shallow-since", V, NO),
    l("shallow-exclude", V, NO),
    l("single-branch", N, NO),
    l("no-tags", N, NO),
    l("tags", N, NO),
    l("shallow-submodules", N, NO),
    l("separate-git-dir", V, Does::Writes),
    l("ref-format", V, NO),
    sl('c', "config", V, CONFIG_RUNS),
    l("server-option", V, NO),
    s('4', N, NO),
    l("ipv4", N, NO),
    s('6', N, NO),
    l("ipv6", N, NO),
    l("filter", V, NO),
    l("also-filter-submodules", N, NO),
    l("remote-submodules", N, NO),
    l("sparse", N, NO),
    l("bundle-uri", V, NO),
];

const LS_REMOTE: &[Opt] = &[
    sl('q', "quiet", N, NO),
    l("upload-pack", V, REMOTE_RUNS),
    l("exec", V, REMOTE_RUNS),
    sl('t', "tags", N, NO),
    sl('b', "branches", N, NO),
    sl('h', "heads", N, NO),
    l("refs", N, NO),
    l("get-url", N, NO),
    l("sort", V, NO),
    l("exit-code", N, NO),
    l("symref", N, NO),
    sl('o', "server-option", V, NO),
];

/// `git archive` (partial).
const ARCHIVE: &[Opt] = &[
    l("exec", V, REMOTE_RUNS),
    l("remote", V, NO),
    sl('o', "output", V, Does::Writes),
    l("prefix", V, NO),
    l("format", V, NO),
    l("add-file", V, Does::Reads),
    l("add-virtual-file", V, NO),
];

/// `git rebase` (partial).
const REBASE: &[Opt] = &[
    sl(
        'x',
        "exec",
        V,
        // Run with `sh -c` (checked: `--exec 'touch m; true'` touches `m`).
        Does::RunsCode(
            Value::Shell,
            "runs the command after each commit it replays",
        ),
    ),
    l("onto", V, NO),
    sl('s', "strategy", V, NO),
    sl('X', "strategy-option", V, NO),
    l("empty", V, NO),
    l("whitespace", V, NO),
];

/// `git grep` (partial).
const GREP: &[Opt] = &[
    sl(
        'O',
        "open-files-in-pager",
        OPT,
        // Through the shell, like every pager git starts.
        Does::RunsCode(Value::Shell, "opens the matching files in a pager it names"),
    ),
    l("max-depth", V, NO),
    sl('m', "max-count", V, NO),
    sl('A', "after-context", V, NO),
    sl('B', "before-context", V, NO),
    sl('C', "context", V, NO),
    sl('e', "regexp", V, NO),
    s('f', V, NO),
    l("threads", V, NO),
];

/// `git filter-branch`: every filter is shell code it `eval`s for each commit.
const FILTER_BRANCH: &[Opt] = &[
    l("setup", V, FILTER_RUNS),
    l("env-filter", V, FILTER_RUNS),
    l("tree-filter", V, FILTER_RUNS),
    l("index-filter", V, FILTER_RUNS),
    l("parent-filter", V, FILTER_RUNS),
    l("msg-filter", V, FILTER_RUNS),
    l("commit-filter", V, FILTER_RUNS),
    l("tag-name-filter", V, FILTER_RUNS),
    l("subdirectory-filter", V, NO),
    s('d', V, NO),
    l("original", V, NO),
    sl('f', "force", N, NO),
    l("prune-empty", N, NO),
    l("state-branch", V, NO),
];

const FILTER_RUNS: Does = Does::RunsCode(Value::Shell, "evaluates the filter for every commit");

/// `git difftool` and `git mergetool` (partial): `-x`/`--extcmd` is shell code, a tool
/// named by `-t` runs its configured command.
const DIFFTOOL: &[Opt] = &[
    sl(
        'x',
        "extcmd",
        V,
        Does::RunsCode(Value::Shell, "runs the command to show each diff"),
    ),
    sl(
        't',
        "tool",
        V,
        Does::Runs("runs the named diff or merge tool"),
    ),
    l("tool-help", N, NO),
    sl('y', "no-prompt", N, NO),
    l("prompt", N, NO),
    sl('g', "gui", N, NO),
    sl('d', "dir-diff", N, NO),
    l("symlinks", N, NO),
    l("trust-exit-code", N, NO),
];

/// `git send-email` (partial): its `*-cmd` options are shell commands, and an
/// `--smtp-server` that is a path is run as sendmail.
const SEND_EMAIL: &[Opt] = &[
    l(
        "sendmail-cmd",
        V,
        Does::RunsCode(Value::Shell, "sends the mail through the command"),
    ),
    l(
        "smtp-server",
        V,
        Does::Runs("sends the mail through the server, or the program at that path"),
    ),
    l(
        "to-cmd",
        V,
        Does::RunsCode(Value::Shell, "runs the command to find recipients"),
    ),
    l(
        "cc-cmd",
        V,
        Does::RunsCode(Value::Shell, "runs the command to find recipients"),
    ),
    l(
        "header-cmd",
        V,
        Does::RunsCode(Value::Shell, "runs the command to make headers"),
    ),
    l("to", V, NO),
    l("cc", V, NO),
    l("bcc", V, NO),
    l("from", V, NO),
    l("subject", V, NO),
    l("in-reply-to", V, NO),
    l("smtp-user", V, NO),
    l("smtp-server-port", V, NO),
    l("smtp-encryption", V, NO),
    l("annotate", N, NO),
    l("compose", N, NO),
    l("dry-run", N, NO),
];

const fn sub(opts: &'static [Opt], complete: bool) -> Grammar {
    let g = Grammar::new(opts, Abbrev::Git);
    if complete { g } else { g.partial() }
}

/// The grammar of a subcommand, where the table has one.
fn sub_grammar(name: &str) -> Option<Grammar> {
    Some(match name {
        "push" => sub(PUSH, true),
        "fetch" | "pull" => sub(FETCH, false),
        "clone" => sub(CLONE, true),
        "ls-remote" => sub(LS_REMOTE, true),
        "archive" => sub(ARCHIVE, false),
        "rebase" => sub(REBASE, false),
        "grep" => sub(GREP, false),
        "filter-branch" => sub(FILTER_BRANCH, false),
        "difftool" | "mergetool" => sub(DIFFTOOL, false),
        "send-email" => sub(SEND_EMAIL, false),
        _ => return None,
    })
}

pub const PROGRAMS: &[Program] = &[Program {
    names: &["git"],
    grammar: Grammar::wrapper(GLOBAL, Abbrev::None),
    role: Role::Git,
    examples: &[
        Example::new("git status"),
        Example::new("git filter-branch --tree-filter x;y HEAD")
            .runs()
            .code("x;y"),
        Example::new("git filter-branch --subdirectory-filter sub HEAD"),
        Example::new("git difftool -x x;y").runs().code("x;y"),
        Example::new("git difftool --extcmd=x;y").runs().code("x;y"),
        Example::new("git mergetool --tool=vimdiff").runs(),
        Example::new("git send-email --sendmail-cmd=x;y a.patch")
            .runs()
            .code("x;y"),
        Example::new("git grep -Ox;y foo").runs().code("x;y"),
        Example::new("git push --receive-pack=x origin").runs(),
        Example::new("git push --rece=x origin").runs(),
        Example::new("git push --exec x origin").runs(),
        Example::new("git push --force-wit origin main"),
        Example::new("git push --rec origin"),
        Example::new("git clone -u x repo").runs().writes(&["repo"]),
        Example::new("git clone --upl=x repo dst")
            .runs()
            .writes(&["dst"]),
        Example::new("git clone --template=t r.git")
            .runs()
            .writes(&["r"]),
        Example::new("git clone -c core.pager=x host:a/b.git")
            .runs()
            .writes(&["b"]),
        Example::new("git clone https://h/x.git").writes(&["x"]),
        Example::new("git fetch --upload-pack=x origin").runs(),
        Example::new("git pull --upl x").runs(),
        Example::new("git ls-remote --exec=x origin").runs(),
        Example::new("git -c core.pager=x log").runs(),
        Example::new("git -c core.pager=x;y log").runs().code("x;y"),
        Example::new("git -c CORE.sshCommand=x;y fetch")
            .runs()
            .code("x;y"),
        Example::new("git -c alias.a=!x;y a").runs().code("x;y"),
        Example::new("git -c alias.a=push;x a")
            .runs()
            .code("git push;x"),
        Example::new("git -c credential.helper=x;y fetch")
            .runs()
            .code("git credential-x;y"),
        Example::new("git -c gpg.program=x;y log").runs(),
        Example::new("git -c pager.log=false log").runs(),
        Example::new("git clone -c diff.x.textconv=x;y r d")
            .runs()
            .code("x;y")
            .writes(&["d"]),
        Example::new("git push --receive-pack=x;y o")
            .runs()
            .code("x;y"),
        Example::new("git --exec-path=/x log").runs(),
        Example::new("git -C /x status"),
        Example::new("git rebase -x x main").runs(),
        Example::new("git rebase -x x;y main").runs().code("x;y"),
        Example::new("git grep -Ox pat").runs(),
        Example::new("git archive -o out.tar HEAD").writes(&["out.tar"]),
        Example::new("git bisect run make test").inner("make test"),
        Example::new("git submodule foreach x y").code("x y"),
        Example::new("git submodule --quiet foreach --recursive x").code("x"),
    ],
}];

/// What a git command runs, reads and writes. `words[0]` is git.
pub fn describe(p: &'static Program, words: &[&str], d: &mut Description) {
    let globals = parse(&p.grammar, words, 1);
    d.apply_options(&globals, words, "git");
    config_options(&globals, d);
    let sub_index = globals.end;
    let Some(&sub_name) = words.get(sub_index) else {
        return;
    };
    let shown = format!("git {sub_name}");
    if let Some(g) = sub_grammar(sub_name) {
        let parsed = parse(&g, words, sub_index + 1);
        d.apply_options(&parsed, words, &shown);
        config_options(&parsed, d);
        if sub_name == "clone" {
            // The destination is written: the second operand, or the repository's
            // "humanish" name (`host:a/b.git` -> `b`) in the cwd.
            let ops: Vec<&str> = parsed
                .operands
                .iter()
                .filter_map(|&i| words.get(i).copied())
                .collect();
            match ops.as_slice() {
                [_, dst, ..] => d.writes.push((*dst).to_string()),
                [repo] => d.writes.push(humanish(repo)),
                [] => {}
            }
        }
    }
    let rest = words.get(sub_index + 1..).unwrap_or_default();
    match sub_name {
        // `git bisect run CMD…` runs the command at each step.
        "bisect" if rest.first() == Some(&"run") && rest.len() > 1 => {
            d.inner = Some(sub_index + 2);
        }
        // `git submodule foreach CMD…` runs the command through a shell in each one.
        "submodule" => {
            if let Some(k) = rest.iter().position(|w| *w == "foreach") {
                let mut j = sub_index + 1 + k + 1;
                while words
                    .get(j)
                    .is_some_and(|w| matches!(*w, "--recursive" | "-q" | "--quiet"))
                {
                    j += 1;
                }
                if j < words.len() {
                    d.code.push(CodeArg {
                        word: j,
                        offset: 0,
                        join_rest: true,
                    });
                }
            }
        }
        _ => {}
    }
}

/// git's default clone directory: the last path component, `.git` and `/` removed.
fn humanish(repo: &str) -> String {
    let trimmed = repo.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let trimmed = trimmed.trim_end_matches('/');
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    if last.is_empty() {
        trimmed.to_string()
    } else {
        last.to_string()
    }
}

fn words_str(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

/// The index and name of git's subcommand, found after git's global options
/// (`git -C x -c a=b --no-pager push` -> `push`). `None` when `words` is not a git
/// command or has no subcommand.
pub fn git_subcommand(words: &[String]) -> Option<(usize, &str)> {
    if words.first().map(|w| basename(w)) != Some("git") {
        return None;
    }
    let g = Grammar::wrapper(GLOBAL, Abbrev::None);
    let end = parse(&g, &words_str(words), 1).end;
    words.get(end).map(|w| (end, w.as_str()))
}

/// The values of git's `-C` options, in order (they change git's working directory).
pub fn git_dir_options(words: &[String]) -> Vec<&str> {
    if words.first().map(|w| basename(w)) != Some("git") {
        return Vec::new();
    }
    let g = Grammar::wrapper(GLOBAL, Abbrev::None);
    let parsed = parse(&g, &words_str(words), 1);
    parsed
        .found
        .iter()
        .filter(|f| f.opt.short == Some('C'))
        .filter_map(|f| f.value_at)
        .filter_map(|(i, off)| words.get(i).and_then(|w| w.get(off..)))
        .collect()
}

/// The values of git's `--git-dir` and `--work-tree` options (the last of each wins).
pub fn git_repo_options(words: &[String]) -> (Option<&str>, Option<&str>) {
    if words.first().map(|w| basename(w)) != Some("git") {
        return (None, None);
    }
    let g = Grammar::wrapper(GLOBAL, Abbrev::None);
    let parsed = parse(&g, &words_str(words), 1);
    let value = |long: &str| {
        parsed
            .found
            .iter()
            .filter(|f| f.opt.long == Some(long))
            .filter_map(|f| f.value_at)
            .filter_map(|(i, off)| words.get(i).and_then(|w| w.get(off..)))
            .next_back()
    };
    (value("git-dir"), value("work-tree"))
}

/// Whether a git command modifies the repository (seed §3.4, `git.modify`). Read-only
/// forms of the listed subcommands (`branch` listing, `tag -l`, `config --get`,
/// `stash list`, `fetch --dry-run`, `apply --check`) stay plain `process.execute`.
/// `add` is not in the seed's list but is here: it writes the repository's index and
/// objects. A `git add` the analysis proves an in-project edit (`edits::git_add`) is
/// decided as that edit instead, without this request.
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
        assert_eq!(git_dir_options(&w("git -C/x status")), vec!["/x"]);
        assert!(is_git_modify(&w("git -c x=y commit -m hi")));
        assert!(!is_git_modify(&w("git branch")));
        assert!(is_git_modify(&w("git add -A")));
        assert!(is_git_modify(&w("git branch -D old")));
        assert!(!is_git_modify(&w("git config --get user.name")));
    }

    #[test]
    fn abbreviations_are_spelled_out_for_the_floor() {
        let words: Vec<&str> = "git push --force-wit origin main"
            .split_whitespace()
            .collect();
        let d = crate::programs::describe(&words);
        assert_eq!(
            d.canonical.map(|c| c.join(" ")).as_deref(),
            Some("git push --force-with-lease origin main")
        );
    }

    #[test]
    fn humanish_names() {
        assert_eq!(humanish("https://h/x.git"), "x");
        assert_eq!(humanish("host:a/b.git/"), "b");
        assert_eq!(humanish("../repo"), "repo");
    }
}
