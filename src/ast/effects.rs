//! Plan -> requests: what each simple command of a plan does, by its words.
//!
//! Owns looking through wrappers (`sudo`, `env`, `timeout`, `xargs`, `find -exec`, …),
//! finding code passed as a string (`sh -c`, `eval`) for the engine to parse again, and
//! the effects of commands the analyzer knows: network and git (via `commands`), file
//! writes (redirects, filesystem verbs, `sed -i`, `sort -o`, `git --output`, `find
//! -delete`), file reads of read-only commands, and flags that make a reader run
//! something (`rg --pre`, `git -p`, `--ext-diff`, `git -c`). Works on words only.

use std::path::PathBuf;

mod programs;

use super::walk::{Cwd, Redirect, RedirectKind, SimpleCommand};
use crate::commands;
use crate::hardline;
use crate::paths;
use crate::vocab::{AnalysisContext, Capability, CapabilityRequest, HardlineHit, Part};
use programs::{
    READERS, cp_sources, flag_values, fs_writes, git_effects, reader_effects, sed_effects,
};

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

    pub(crate) fn push(&mut self, r: CapabilityRequest) {
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

use crate::commands::basename;

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
    // The subject is empty only for a bare redirection (`> f`): nothing runs.
    if !cmd.text.is_empty() {
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

/// The path a word names, or `None` when it is only known when the command runs: an
/// unknown cwd or variable, or a glob/brace pattern. A pattern is not resolved as a
/// literal path: `cat .env*` would otherwise be the subject `/p/.env*`, which no
/// `*.env` rule matches, and `lin*/x` would not follow the symlink bash expands into.
fn resolve(word: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Option<PathBuf> {
    if is_pattern(word) {
        return None;
    }
    paths::resolve_word(word, cwd.path(), ctx.home())
}

/// Glob characters, or a brace expansion (`a{b,c}`, `{1..3}`). Quoted ones count too:
/// the words reaching here have lost their quotes, and treating them as patterns only
/// makes a path unknown, which asks.
fn is_pattern(word: &str) -> bool {
    word.contains(['*', '?', '['])
        || word.split_once('{').is_some_and(|(_, rest)| {
            rest.contains('}') && (rest.contains(',') || rest.contains(".."))
        })
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

    // Code passed as a string.
    if commands::is_shell(name) {
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

    if commands::is_network_command(words) {
        fx.push(CapabilityRequest::new(
            Capability::NetworkAccess,
            text.clone(),
            format!("Network access: {text}"),
        ));
    }
    if name == "git" {
        git_effects(words, &text, cwd, ctx, fx);
    }
    // Issue 14 §5: containers that get the host, clusters (`crate::containers`).
    let c = crate::containers::effects(words, cwd.path(), ctx);
    c.notes.into_iter().for_each(|n| fx.note(n));
    c.requests.into_iter().for_each(|r| fx.push(r));
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
