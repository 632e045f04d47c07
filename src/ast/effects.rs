//! Plan -> requests: what each simple command of a plan does, by its words.
//!
//! Owns looking through wrappers (`sudo`, `env`, `timeout`, `xargs`, `find -exec`, …),
//! finding code passed as a string (`sh -c`, `eval`) for the engine to parse again, and
//! the effects of commands the analyzer knows: network and git (via `commands`), file
//! writes (redirects, filesystem verbs, `sed -i`, `sort -o`, `git --output`, `find
//! -delete`), file reads of read-only commands, and flags that make a reader run
//! something (`rg --pre`, `git -p`, `--ext-diff`, `git -c`). Works on words only.

use std::path::PathBuf;

use super::walk::{Cwd, Redirect, RedirectKind, SimpleCommand};
use crate::commands;
use crate::hardline;
use crate::paths;
use crate::vocab::{AnalysisContext, Capability, CapabilityRequest, HardlineHit, Part};

/// What the commands of one analysis add up to.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub parts: Vec<Part>,
    pub requests: Vec<CapabilityRequest>,
    pub notes: Vec<String>,
    pub hardline: Option<HardlineHit>,
    /// Code strings to parse again (`sh -c '…'`, `eval '…'`), with the cwd they run in.
    pub code: Vec<(String, Cwd)>,
    /// Code that could not be read (dynamic `-c` strings, `source FILE`, too deep).
    pub opaque: Vec<String>,
    /// A wrapper was looked through.
    pub wrapped: bool,
    /// Inline code or an interpreter fed from a heredoc: never more than exact patterns.
    pub inline_code: bool,
    /// A flag made a reader run or write something.
    pub escalated: bool,
}

impl Effects {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    fn push(&mut self, r: CapabilityRequest) {
        let dup = self
            .requests
            .iter()
            .any(|x| x.capability == r.capability && x.subject == r.subject);
        if !dup {
            self.requests.push(r);
        }
    }

    fn hardline(&mut self, hit: Option<HardlineHit>) {
        if self.hardline.is_none() {
            self.hardline = hit;
        }
    }
}

/// Devices a redirect may name without touching a file.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
];

/// Interpreters whose program can come from a heredoc or a flag.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "node",
    "nodejs",
    "perl",
    "ruby",
    "php",
    "deno",
    "bun",
    "lua",
    "Rscript",
    "osascript",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "awk",
    "gawk",
    "mawk",
    "irb",
];

/// Read-only commands that name files, with their flags that take a value, and whether
/// the first operand is a pattern/program rather than a file.
const READERS: &[(&str, &[&str], bool)] = &[
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

/// The last path component, so `/usr/bin/curl` is recognized as `curl` where that only
/// adds scrutiny (network, git, wrappers). Allow rules still see the word as written.
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn join(words: &[String]) -> String {
    words.join(" ")
}

/// Adds everything one simple command does.
pub(crate) fn command_effects(cmd: &SimpleCommand, ctx: &AnalysisContext, fx: &mut Effects) {
    let words: Vec<String> = cmd.words.iter().map(|w| w.text.clone()).collect();
    let cwd = cmd.cwd.clone();
    fx.parts.push(Part {
        words: words.clone(),
        text: cmd.text.clone(),
        cwd: cwd.path().map(|p| p.display().to_string()),
    });
    if !cmd.text.is_empty() && (!words.is_empty() || !cmd.assignments.is_empty()) {
        fx.push(CapabilityRequest::new(
            Capability::ProcessExecute,
            cmd.text.clone(),
            format!("Run {}", cmd.text),
        ));
    }
    for r in &cmd.redirects {
        redirect_effects(r, &cwd, ctx, fx);
    }
    if let Some(first) = words.first()
        && cmd.heredoc
        && INTERPRETERS.contains(&basename(first))
    {
        fx.inline_code = true;
        fx.note(format!(
            "`{}` runs a program fed from a heredoc",
            basename(first)
        ));
    }
    fx.hardline(hardline::check(&words, ctx));
    run_words(words, cwd, ctx, fx, 0);
}

/// Redirects open files before the command runs: writes, reads, network devices.
pub(crate) fn redirect_effects(r: &Redirect, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    let Some(target) = &r.target else { return };
    match r.kind {
        RedirectKind::Duplicate | RedirectKind::Inline => {}
        RedirectKind::Write | RedirectKind::Read => {
            let t = target.text.as_str();
            if t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/") {
                fx.push(CapabilityRequest::new(
                    Capability::NetworkAccess,
                    t,
                    format!("Connect to {t}"),
                ));
                fx.note(format!("Redirects to the network device `{t}`"));
                return;
            }
            if HARMLESS_DEVICES.contains(&t) || t.starts_with("/dev/fd/") {
                return;
            }
            if r.kind == RedirectKind::Write {
                fx.hardline(hardline::check_redirect_target(t, ctx));
                write_request(t, cwd, ctx, fx);
            } else {
                read_request(t, cwd, ctx, fx);
            }
        }
    }
}

fn resolve(word: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Option<PathBuf> {
    paths::resolve_word(word, cwd.path(), ctx.home())
}

/// A write of `word`: project or outside by resolved path; unknown counts as outside.
fn write_request(word: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    match resolve(word, cwd, ctx) {
        Some(p) if paths::is_inside(&p, ctx.root()) => {
            let s = p.display().to_string();
            fx.push(CapabilityRequest::new(
                Capability::FileWriteProject,
                s.clone(),
                format!("Write {s}"),
            ));
        }
        Some(p) => {
            let s = p.display().to_string();
            fx.note(format!("Writes outside the project: {s}"));
            fx.push(CapabilityRequest::new(
                Capability::FileWriteOutsideProject,
                s.clone(),
                format!("Write {s}"),
            ));
        }
        None => {
            fx.note(format!(
                "Writes to `{word}`, whose location cannot be known before it runs"
            ));
            fx.push(CapabilityRequest::new(
                Capability::FileWriteOutsideProject,
                word,
                format!("Write {word}"),
            ));
        }
    }
}

fn read_request(word: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    match resolve(word, cwd, ctx) {
        Some(p) => {
            let s = p.display().to_string();
            fx.push(CapabilityRequest::new(
                Capability::FileRead,
                s.clone(),
                format!("Read {s}"),
            ));
        }
        None => {
            fx.note(format!(
                "Reads `{word}`, whose location cannot be known before it runs"
            ));
            fx.push(CapabilityRequest::new(
                Capability::FileRead,
                word,
                format!("Read {word}"),
            ));
        }
    }
}

/// An extra `process.execute` for a program a flag makes the command run. Its subject
/// starts with `via ` so that allow rules written for the reader (`git diff*`) do not
/// cover it.
fn escalation(what: &str, text: &str, fx: &mut Effects) {
    fx.escalated = true;
    let subject = format!("via {what}: {text}");
    fx.note(format!("`{what}` makes this command run another program"));
    fx.push(CapabilityRequest::new(
        Capability::ProcessExecute,
        subject,
        format!("Run a program through {what}"),
    ));
}

/// What a word list does once wrappers are looked through. `depth` bounds nesting of
/// wrappers inside `find -exec` and `xargs`.
fn run_words(words: Vec<String>, cwd: Cwd, ctx: &AnalysisContext, fx: &mut Effects, depth: usize) {
    let mut cur = words;
    let mut cwd = cwd;
    let mut layers = 0;
    while let Some(first) = cur.first() {
        let name = basename(first).to_string();
        if !commands::WRAPPERS.contains(&name.as_str()) || layers > 16 {
            break;
        }
        layers += 1;
        fx.wrapped = true;
        let un = unwrap(&name, &cur);
        for w in &un.writes {
            write_request(w, &cwd, ctx, fx);
        }
        for r in &un.reads {
            read_request(r, &cwd, ctx, fx);
        }
        if let Some(dir) = &un.cwd {
            cwd = match resolve(dir, &cwd, ctx) {
                Some(p) => Cwd::Known(p),
                None => Cwd::Unknown,
            };
        }
        if let Some(code) = un.code {
            fx.code.push((code, cwd.clone()));
        }
        if un.inner.is_empty() {
            return;
        }
        fx.note(format!(
            "Runs `{}` through `{name}`",
            basename(un.inner.first().map(String::as_str).unwrap_or(""))
        ));
        let text = join(&un.inner);
        fx.parts.push(Part {
            words: un.inner.clone(),
            text: text.clone(),
            cwd: cwd.path().map(|p| p.display().to_string()),
        });
        fx.push(CapabilityRequest::new(
            Capability::ProcessExecute,
            text.clone(),
            format!("Run {text}"),
        ));
        fx.hardline(hardline::check(&un.inner, ctx));
        cur = un.inner;
    }
    inner_effects(&cur, &cwd, ctx, fx, depth);
}

/// The result of looking through one wrapper.
#[derive(Default)]
struct Unwrapped {
    inner: Vec<String>,
    cwd: Option<String>,
    writes: Vec<String>,
    reads: Vec<String>,
    code: Option<String>,
}

fn unwrap(name: &str, words: &[String]) -> Unwrapped {
    let (value_flags, mut positionals) = commands::wrapper_options(name).unwrap_or((&[], 0));
    let mut out = Unwrapped::default();
    let mut i = 1;
    let mut watch_exec = false;
    let mut taskset_list = false;
    while let Some(w) = words.get(i) {
        if w == "--" {
            i += 1;
            break;
        }
        if name == "env" && !w.starts_with('-') && w.contains('=') {
            i += 1;
            continue;
        }
        if w.starts_with('-') && w.len() > 1 {
            let (flag, attached) = match w.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (w.as_str(), None),
            };
            let takes_value = value_flags.contains(&flag);
            let value = if takes_value {
                match attached {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        words.get(i).cloned()
                    }
                }
            } else {
                None
            };
            match (name, flag, value) {
                ("env", "-C" | "--chdir", Some(v)) | ("sudo", "-D" | "--chdir", Some(v)) => {
                    out.cwd = Some(v)
                }
                ("env", "-S" | "--split-string", Some(v)) => out.code = Some(v),
                ("time", "-o" | "--output", Some(v)) => out.writes.push(v),
                ("xargs", "-a" | "--arg-file", Some(v)) => out.reads.push(v),
                _ => {}
            }
            if name == "watch" && (flag == "-x" || flag == "--exec") {
                watch_exec = true;
            }
            if name == "taskset" && (flag == "-p" || flag == "--pid") {
                // `taskset -p MASK PID` changes a running process: nothing is run.
                return out;
            }
            if name == "taskset" && (flag == "-c" || flag == "--cpu-list") {
                taskset_list = true;
            }
            if name == "nice"
                && flag.len() > 1
                && flag
                    .get(1..)
                    .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
            {
                // `nice -5 cmd`: an attached adjustment.
            }
            i += 1;
            continue;
        }
        if positionals > 0 {
            positionals -= 1;
            i += 1;
            continue;
        }
        break;
    }
    let _ = taskset_list;
    let rest: Vec<String> = words.get(i..).map(<[String]>::to_vec).unwrap_or_default();
    if name == "watch" && !watch_exec {
        // watch hands its arguments to `sh -c` as one string.
        if !rest.is_empty() {
            out.code = Some(join(&rest));
        }
        return out;
    }
    if name == "xargs" && rest.is_empty() {
        out.inner = vec!["echo".to_string()];
        return out;
    }
    out.inner = rest;
    out
}

/// Effects of the innermost command.
fn inner_effects(
    words: &[String],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    depth: usize,
) {
    let Some(first) = words.first() else { return };
    let name = basename(first);
    let text = join(words);
    let mut normalized: Vec<String> = words.to_vec();
    if let Some(w0) = normalized.first_mut() {
        *w0 = name.to_string();
    }

    // Code passed as a string.
    if matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish") {
        shell_code(name, words, cwd, fx);
    } else if name == "eval" {
        let code = words.get(1..).map(join).unwrap_or_default();
        if code.contains('$') || code.contains('`') {
            fx.opaque.push(format!(
                "`eval` of `{code}`, whose text is only known when it runs"
            ));
        }
        fx.code.push((code, cwd.clone()));
    } else if name == "su" || name == "runuser" {
        // `su user -c 'code'` runs its code string through the target user's shell.
        match flag_values(words, &["-c", "--command"]).pop() {
            Some(code) => fx.code.push((code, cwd.clone())),
            None => {
                fx.inline_code = true;
                fx.note(format!("`{name}` starts a shell as another user"));
            }
        }
    } else if name == "source" || name == "." {
        let f = words.get(1).cloned().unwrap_or_default();
        fx.opaque.push(format!(
            "`{name} {f}` runs the file's commands in this shell"
        ));
    }

    // Inline code and programs: no always pattern broader than exact.
    if matches!(
        name,
        "python"
            | "python2"
            | "python3"
            | "node"
            | "nodejs"
            | "perl"
            | "ruby"
            | "php"
            | "deno"
            | "bun"
            | "lua"
    ) && words.iter().skip(1).any(|w| {
        matches!(
            w.as_str(),
            "-c" | "-e" | "-E" | "-r" | "--eval" | "-p" | "--print" | "eval"
        )
    }) {
        fx.inline_code = true;
        fx.note(format!("`{name}` runs inline code from its arguments"));
    }

    if commands::is_network_command(&normalized) {
        fx.push(CapabilityRequest::new(
            Capability::NetworkAccess,
            text.clone(),
            format!("Network access: {text}"),
        ));
    }
    if name == "git" {
        git_effects(&normalized, &text, cwd, ctx, fx);
    }
    if commands::FS_VERBS.contains(&name) {
        for w in fs_writes(name, words) {
            write_request(&w, cwd, ctx, fx);
        }
        if name == "cp" || name == "install" {
            for r in cp_sources(words) {
                read_request(&r, cwd, ctx, fx);
            }
        }
    }
    match name {
        "sed" => sed_effects(words, &text, cwd, ctx, fx),
        "find" => find_effects(words, cwd, ctx, fx, depth),
        "curl" => {
            for v in flag_values(words, &["-o", "--output"]) {
                write_request(&v, cwd, ctx, fx);
            }
        }
        "wget" => {
            for v in flag_values(
                words,
                &[
                    "-O",
                    "--output-document",
                    "-P",
                    "--directory-prefix",
                    "-o",
                    "--output-file",
                ],
            ) {
                write_request(&v, cwd, ctx, fx);
            }
        }
        "shred" | "unlink" => {
            for w in words.iter().skip(1).filter(|w| !w.starts_with('-')) {
                write_request(w, cwd, ctx, fx);
            }
        }
        _ => {}
    }
    if let Some((_, value_flags, pattern_first)) = READERS.iter().find(|(n, _, _)| *n == name) {
        reader_effects(
            name,
            words,
            value_flags,
            *pattern_first,
            &text,
            cwd,
            ctx,
            fx,
        );
    }
}

/// `sh -c 'code'`: the code is parsed again; `sh script` runs a file we cannot see.
fn shell_code(name: &str, words: &[String], cwd: &Cwd, fx: &mut Effects) {
    let mut has_c = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if w == "--" {
            i += 1;
            break;
        }
        if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 {
            if w.contains('c') {
                has_c = true;
            }
            // `-o option` takes a value.
            if w == "-o" || w == "+o" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if w.starts_with("--") {
            i += 1;
            continue;
        }
        break;
    }
    match (has_c, words.get(i)) {
        (true, Some(code)) => fx.code.push((code.clone(), cwd.clone())),
        (true, None) => fx.opaque.push(format!("`{name} -c` without a command")),
        (false, Some(script)) => {
            fx.inline_code = true;
            fx.note(format!(
                "`{name}` runs the script `{script}`, whose commands are not analyzed"
            ));
        }
        (false, None) => {
            fx.inline_code = true;
        }
    }
}

/// Values of the given flags, separate (`-o f`) or attached (`--output=f`, `-of`).
fn flag_values(words: &[String], flags: &[&str]) -> Vec<String> {
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
fn operands(words: &[String], value_flags: &[&str]) -> Vec<String> {
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
fn fs_writes(name: &str, words: &[String]) -> Vec<String> {
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
fn cp_sources(words: &[String]) -> Vec<String> {
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
fn reader_effects(
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

fn git_effects(words: &[String], text: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
    if commands::is_git_modify(words) {
        fx.push(CapabilityRequest::new(
            Capability::GitModify,
            text,
            format!("Modify the repository: {text}"),
        ));
    }
    // `git -C dir` moves where git's own relative paths resolve.
    let mut git_cwd = cwd.clone();
    for d in commands::git_dir_options(words) {
        git_cwd = match resolve(d, &git_cwd, ctx) {
            Some(p) => Cwd::Known(p),
            None => Cwd::Unknown,
        };
    }
    let sub_index = commands::git_subcommand(words)
        .map(|(i, _)| i)
        .unwrap_or(words.len());
    let globals = words.get(1..sub_index).unwrap_or(&[]);
    if globals
        .iter()
        .any(|w| w == "-c" || w.starts_with("--config-env") || w.starts_with("--exec-path="))
    {
        escalation("git -c", text, fx);
    }
    if globals.iter().any(|w| w == "-p" || w == "--paginate") {
        escalation("git --paginate", text, fx);
    }
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
    if args.first().map(String::as_str) == Some("format-patch") {
        for v in flag_values(args, &["-o", "--output-directory"]) {
            write_request(&v, &git_cwd, ctx, fx);
        }
    }
}

/// `sed -i` writes its files; `w FILE` and `e` commands in the script write or run.
fn sed_effects(words: &[String], text: &str, cwd: &Cwd, ctx: &AnalysisContext, fx: &mut Effects) {
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
    if scripts.iter().any(|s| sed_script_writes_or_runs(s)) {
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

/// `find DIR… -exec CMD {} ;`: the command runs (with `{}` standing for what was found
/// under DIR); `-delete` writes DIR; `-fprint FILE` writes FILE.
fn find_effects(
    words: &[String],
    cwd: &Cwd,
    ctx: &AnalysisContext,
    fx: &mut Effects,
    depth: usize,
) {
    let mut starts: Vec<String> = words
        .iter()
        .skip(1)
        .take_while(|w| !w.starts_with('-') && *w != "(" && *w != "!" && *w != "\\(")
        .cloned()
        .collect();
    if starts.is_empty() {
        starts.push(".".to_string());
    }
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "-delete" => {
                fx.escalated = true;
                for s in &starts {
                    write_request(s, cwd, ctx, fx);
                }
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                fx.escalated = true;
                if let Some(f) = words.get(i + 1) {
                    write_request(f, cwd, ctx, fx);
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                fx.escalated = true;
                let inner: Vec<String> = words
                    .iter()
                    .skip(i + 1)
                    .take_while(|x| *x != ";" && *x != "+" && *x != "\\;")
                    .cloned()
                    .collect();
                i += inner.len();
                if depth < 4 && !inner.is_empty() {
                    for s in &starts {
                        let with_dir: Vec<String> = inner
                            .iter()
                            .map(|x| if x == "{}" { s.clone() } else { x.clone() })
                            .collect();
                        let text = join(&with_dir);
                        fx.note(format!("`find {w}` runs `{}`", join(&inner)));
                        fx.parts.push(Part {
                            words: with_dir.clone(),
                            text: text.clone(),
                            cwd: cwd.path().map(|p| p.display().to_string()),
                        });
                        fx.push(CapabilityRequest::new(
                            Capability::ProcessExecute,
                            text.clone(),
                            format!("Run {text}"),
                        ));
                        fx.hardline(hardline::check(&with_dir, ctx));
                        fx.wrapped = true;
                        run_words(with_dir, cwd.clone(), ctx, fx, depth + 1);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}
