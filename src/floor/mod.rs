//! The hardline floor (seed §4.2): a short, built-in, non-configurable list of
//! catastrophic commands that no rule can allow, matched on a de-obfuscated rendering.
//!
//! Owns the floor entries and the rendering they match on (quotes stripped, whitespace
//! collapsed, `~`/`$HOME` expanded, paths normalized lexically, `rm`/`chmod`/`chown`
//! flags normalized, wrappers such as `sudo` and `env X=y` looked through, `sh -c` and
//! `eval` strings read again with a depth bound). It fires only where a command runs:
//! `echo 'rm -rf /'` is data, not a hit. It must not know rules or configuration, and it
//! must not grow into a regex armoury (seed §4.2: the list ships short and explicit).

use crate::programs::basename;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::model::paths;
use crate::model::vocab::{AnalysisContext, HardlineHit, collapse_whitespace};
use crate::programs;
use crate::shell::ir::{Cwd, Plan, Redirect, RedirectKind, SimpleCommand};

/// The risk note of every hardline hit (seed §4.2, word for word).
pub const HARDLINE_RISK_NOTE: &str =
    "Blocked by KHAELOR's built-in safety floor — this cannot be allowed by configuration.";

/// How many times code inside a string (`bash -c '…'`, `eval '…'`) is read again.
const MAX_CODE_DEPTH: usize = 4;

/// Words that may precede the command word without being it: reserved words of
/// compound commands as the lexer leaves them in a part (`if rm …`, `{ rm …`).
const RESERVED_PREFIXES: &[&str] = &[
    "{", "}", "(", ")", "!", "if", "then", "else", "elif", "do", "while", "until", "coproc",
];

use crate::programs::SHELLS;

/// systemctl options that take a separate value (`systemctl -H host reboot`).
const SYSTEMCTL_VALUE_OPTIONS: &[&str] = &[
    "-H",
    "--host",
    "-M",
    "--machine",
    "-t",
    "--type",
    "-p",
    "--property",
    "-s",
    "--signal",
    "-n",
    "--lines",
    "-o",
    "--output",
    "--root",
    "--when",
    "--state",
    "--kill-whom",
];

/// `/dev` entries that are not disks: writing to them destroys nothing.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Devices whose bytes are the machine's memory or I/O ports.
const MEMORY_DEVICES: &[&str] = &["/dev/mem", "/dev/kmem", "/dev/port"];

/// Disk device name prefixes under `/dev` (`> /dev/sd*` and its siblings).
const DISK_PREFIXES: &[&str] = &["sd", "nvme", "hd", "vd", "xvd", "mmcblk", "disk", "rdisk"];

fn hit(rule: &str, rendering: String) -> Option<HardlineHit> {
    Some(HardlineHit {
        rule: rule.to_string(),
        rendering,
    })
}

/// Checks one simple command's words (already unquoted, command word first).
/// How the floor reads code it meets inside a command (`sh -c CODE`, `eval`, a
/// wrapper's code string, a here-document fed to a shell): the engine that asked
/// lowers the text into the shell IR, so the floor itself never tokenizes.
pub(crate) trait CodeReader {
    /// The plan of `code` run in `cwd`. Text the engine cannot read still gives a plan
    /// (its last-resort reading), marked opaque: the floor may find danger in it.
    fn read(&self, code: &str, cwd: &Cwd, ctx: &AnalysisContext) -> Plan;
}

/// The floor on one simple command's words, as an engine lowered them; code strings
/// are read by `reader`.
pub(crate) fn check(
    words: &[String],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
) -> Option<HardlineHit> {
    check_at(words, ctx, reader, 0)
}

/// Checks the target of an output redirection (`> /dev/sda`).
pub fn check_redirect_target(target: &str, ctx: &AnalysisContext) -> Option<HardlineHit> {
    check_write_path(&normalize_path(&strip_quotes(target), ctx)?)
}

/// The floor on one resolved write, whatever produced it: a redirection, the write
/// tool, `sort -o`, `find -fprint`, `curl -o`, sed's `w`, awk's `print >`. Writing a
/// raw disk or partition destroys it as `> /dev/sda` does (seed §4.2); writing memory
/// or I/O ports corrupts the running system; a character written to
/// `/proc/sysrq-trigger` reboots (`b`), powers off (`o`), crashes (`c`) or kills every
/// process (`e`, `i`) at once: `reboot` by another name.
pub fn check_write_path(path: &Path) -> Option<HardlineHit> {
    if is_disk_device(path) {
        return hit("> /dev/sd*", format!("> {}", path.display()));
    }
    if MEMORY_DEVICES.iter().any(|d| path == Path::new(d)) {
        return hit("> /dev/mem", format!("> {}", path.display()));
    }
    if path == Path::new("/proc/sysrq-trigger") {
        return hit("> /proc/sysrq-trigger", format!("> {}", path.display()));
    }
    None
}

/// The de-obfuscated rendering the floor matches on: quotes stripped, whitespace
/// collapsed, home forms expanded, path words normalized.
pub fn render(words: &[String], ctx: &AnalysisContext) -> String {
    let rendered: Vec<String> = words.iter().map(|w| render_word(w, ctx)).collect();
    collapse_whitespace(&rendered.join(" "))
}

/// The floor on one engine's IR: the fork-bomb shape, then every simple command in the
/// working directory it runs in (`cd /usr/.. && rm -rf *` removes everything under `/`),
/// output-redirection targets, and here-documents fed to a shell, read as code.
pub(crate) fn check_plan(
    plan: &Plan,
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
) -> Option<HardlineHit> {
    check_plan_at(plan, ctx, reader, 0)
}

fn check_plan_at(
    plan: &Plan,
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    if depth > MAX_CODE_DEPTH {
        return None;
    }
    if let Some(h) = check_fork_bomb_plan(plan) {
        return Some(h);
    }
    let in_cwd = |cwd: &Cwd| match cwd.path() {
        Some(p) if p != ctx.cwd() => std::borrow::Cow::Owned(ctx.with_cwd(p.to_path_buf())),
        _ => std::borrow::Cow::Borrowed(ctx),
    };
    let redirect = |r: &Redirect, cwd: &Cwd, words: &[String]| -> Option<HardlineHit> {
        let here = in_cwd(cwd);
        match r.kind {
            RedirectKind::Write | RedirectKind::ReadWrite => r
                .target
                .as_ref()
                .and_then(|t| check_redirect_target(&t.text, &here)),
            RedirectKind::Inline if feeds_a_shell(words, &here, reader, depth) => {
                let input = r.input.as_ref()?;
                let inner = reader.read(&input.text, cwd, ctx);
                check_plan_at(&inner, &here, reader, depth + 1)
            }
            _ => None,
        }
    };
    plan.commands
        .iter()
        .find_map(|c| {
            let words: Vec<String> = c.words.iter().map(|w| w.text.clone()).collect();
            let here = in_cwd(&c.cwd);
            check_environment(c, &words, &here, reader, depth)
                .or_else(|| check_at(&words, &here, reader, depth))
                .or_else(|| c.redirects.iter().find_map(|r| redirect(r, &c.cwd, &words)))
        })
        .or_else(|| {
            plan.loose_redirects
                .iter()
                .find_map(|(r, cwd)| redirect(r, cwd, &[]))
        })
}

/// Assignment prefixes whose value is a command the programs run
/// (`GIT_SSH_COMMAND='rm -rf /' git fetch`, `X=… git --config-env=core.pager=X log`),
/// read as code. Assignments a wrapper sets (`env PAGER=… git log`) are read by
/// `skip_prefixes`.
fn check_environment(
    c: &SimpleCommand,
    words: &[String],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    if c.assignments.is_empty() {
        return None;
    }
    let assignments: Vec<&str> = c.assignments.iter().map(|a| a.text.as_str()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    programs::environment::environment_code(&assignments, &words)
        .iter()
        .find_map(|code| check_code(code, ctx, reader, depth))
}

/// The fork bomb (seed §4.2 `:(){ :|:& };:`) by its shape, not its spelling: a
/// function the command calls whose body calls itself unconditionally in a way that
/// forks (a pipeline stage, or in the background), so every call starts more calls
/// that each live on. A recursion that does not fork (`fib(){ …; fib …; fib …; }`)
/// ends at bash's own limits, and one behind a condition (`[ $1 -gt 0 ] && f … &`)
/// can end: neither is the floor's. Only what runs counts: the same characters in a
/// quoted argument, a commit message or a comment are data (`echo ':(){ :|:& };:'`).
fn check_fork_bomb_plan(plan: &Plan) -> Option<HardlineHit> {
    plan.functions.iter().find_map(|f| {
        let inside = |at: usize| f.body.contains(&at);
        let self_calls = |c: &&SimpleCommand| {
            c.words
                .first()
                .is_some_and(|w| w.text == f.name && inside(w.start))
        };
        let forks_itself = plan
            .commands
            .iter()
            .filter(self_calls)
            .any(|c| c.forks && !c.conditional);
        let called = plan
            .commands
            .iter()
            .filter_map(|c| c.words.first())
            .any(|w| w.text == f.name && !inside(w.start));
        (called && forks_itself).then(|| HardlineHit {
            rule: ":(){ :|:& };:".to_string(),
            rendering: format!("{0}(){{ {0}|{0}& }};{0}", f.name),
        })
    })
}

/// Whether a command reads shell code from its stdin: a shell (after wrappers) given
/// no `-c` string (or a script, or options we cannot read), `su` without `-c`,
/// `chroot DIR`, as the program table describes them.
fn feeds_a_shell(
    owner: &[String],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> bool {
    let stripped: Vec<Cow<'_, str>> = owner.iter().map(|w| strip_quotes(w)).collect();
    let all: Vec<&str> = stripped.iter().map(|w| w.as_ref()).collect();
    let raw: Vec<&str> = owner.iter().map(String::as_str).collect();
    let Prefix::Command(start, _) = skip_prefixes(&all, &raw, ctx, reader, depth) else {
        return false;
    };
    let cmd = all.get(start..).unwrap_or_default();
    let d = programs::describe(cmd);
    let shell = cmd.first().is_some_and(|w| programs::is_shell(w));
    d.stdin_code || (shell && (d.script.is_some() || !d.opaque.is_empty()))
}

/// Code found in a word, read by the engine and checked one level deeper.
fn check_code(
    code: &str,
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    if depth >= MAX_CODE_DEPTH {
        return None;
    }
    let inner = reader.read(code, &Cwd::Known(ctx.cwd().to_path_buf()), ctx);
    check_plan_at(&inner, ctx, reader, depth + 1)
}

fn check_at(
    words: &[String],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    // Brace expansion runs before anything else bash does to the words:
    // `{mkfs.ext4,/dev/sdb}` is `mkfs.ext4 /dev/sdb`.
    if words.iter().any(|w| w.contains('{'))
        && let Some(expanded) = crate::shell::braces::expand_all(words)
        && expanded.as_slice() != words
    {
        return check_words(&expanded, ctx, reader, depth);
    }
    check_words(words, ctx, reader, depth)
}

fn check_words(
    words: &[String],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    // Fast path: every hit names its command (or a wrapper's code runner) in one of the
    // words, so a command with none of those names cannot hit.
    if !words.iter().any(|w| names_floor_command(w)) {
        return None;
    }
    let stripped: Vec<Cow<'_, str>> = words.iter().map(|w| strip_quotes(w)).collect();
    let all: Vec<&str> = stripped.iter().map(|w| w.as_ref()).collect();
    // Code strings are taken from the words as the engine gave them, for its reader.
    let raw: Vec<&str> = words.iter().map(String::as_str).collect();
    let (start, moved) = match skip_prefixes(&all, &raw, ctx, reader, depth) {
        Prefix::Command(i, moved) => (i, moved),
        Prefix::Hit(h) => return Some(h),
    };
    // A wrapper that moved the working directory (`env -C / rm -rf .`): the command's
    // paths resolve there.
    let moved_ctx = moved.map(|dir| ctx.with_cwd(dir));
    let ctx = moved_ctx.as_ref().unwrap_or(ctx);
    let eff = all.get(start..).unwrap_or_default();
    let (&cmd_word, args) = eff.split_first()?;
    let name = basename(cmd_word);
    let raw_args = raw.get(start + 1..).unwrap_or_default();
    let rendering = || render_strs(eff, ctx);
    match name {
        _ if SHELLS.contains(&name) => shell_code(args)
            .and_then(|i| raw_args.get(i))
            .and_then(|code| check_code(code, ctx, reader, depth)),
        "su" => su_code(args)
            .and_then(|(i, at)| raw_args.get(i).and_then(|w| w.get(at..)))
            .and_then(|code| check_code(code, ctx, reader, depth)),
        "eval" | "watch" | "trap" => check_code(&code_of(name, args, raw_args), ctx, reader, depth),
        "rm" => check_rm(args, ctx, rendering),
        "chmod" => check_chmod(args, ctx, rendering),
        "chown" | "chgrp" => check_chown(args, ctx, rendering),
        "dd" => check_dd(args, ctx, rendering),
        "shutdown" => hit("shutdown*", rendering()),
        "reboot" => hit("reboot*", rendering()),
        "halt" => hit("halt*", rendering()),
        "poweroff" => hit("poweroff*", rendering()),
        "systemctl" => match first_operand(args, SYSTEMCTL_VALUE_OPTIONS) {
            Some("poweroff") => hit("poweroff*", rendering()),
            Some("reboot" | "kexec" | "soft-reboot") => hit("reboot*", rendering()),
            Some("halt") => hit("halt*", rendering()),
            _ => None,
        },
        "init" | "telinit" => match args.first().copied() {
            Some("0" | "6") => hit("init 0/6", rendering()),
            _ => None,
        },
        "git" => check_git_push(eff, rendering),
        // `sudo tee /dev/sda` is how `> /dev/sda` is written with privileges.
        "tee" => split_options(args)
            .1
            .iter()
            .find_map(|t| check_redirect_target(t, ctx)),
        _ if name.starts_with("mkfs") => hit("mkfs*", rendering()),
        // Formatting, swapping or wiping a disk device is mkfs by another name; on an
        // image file they are ordinary tools, so only a device operand counts.
        "mke2fs" | "mkswap" | "wipefs" | "shred" | "blkdiscard" => {
            let (_, operands) = split_options(args);
            operands
                .iter()
                .any(|w| normalize_path(w, ctx).is_some_and(|p| is_disk_device(&p)))
                .then(|| HardlineHit {
                    rule: "mkfs*".to_string(),
                    rendering: rendering(),
                })
        }
        // Erasing a disk's partition table loses every file on it, as `mkfs` does:
        // `sgdisk --zap-all`/`-Z`, `--zap`/`-z`, `--clear`/`-o`, and `parted DEV
        // mklabel`. sgdisk's other options (`-n 1:0:0`, `-c1:boot`) edit one entry and
        // ask; only an option whose own letter zaps counts, since values hold letters.
        "sgdisk" => {
            let (options, operands) = split_options(args);
            let zaps = options.iter().any(|o| match o.strip_prefix("--") {
                Some(long) => matches!(long, "zap-all" | "zap" | "clear"),
                None => o
                    .chars()
                    .nth(1)
                    .is_some_and(|c| matches!(c, 'Z' | 'z' | 'o')),
            });
            (zaps
                && operands
                    .iter()
                    .any(|w| normalize_path(w, ctx).is_some_and(|p| is_disk_device(&p))))
            .then(|| HardlineHit {
                rule: "mkfs*".to_string(),
                rendering: rendering(),
            })
        }
        "parted" => {
            let (_, operands) = split_options(args);
            let device = operands
                .first()
                .is_some_and(|w| normalize_path(w, ctx).is_some_and(|p| is_disk_device(&p)));
            (device
                && operands
                    .iter()
                    .skip(1)
                    .any(|w| matches!(*w, "mklabel" | "mktable")))
            .then(|| HardlineHit {
                rule: "mkfs*".to_string(),
                rendering: rendering(),
            })
        }
        // `cp image /dev/sda` is `dd of=/dev/sda`.
        "cp" => {
            let (_, operands) = split_options(args);
            let target = operands.last().filter(|_| operands.len() >= 2)?;
            let path = normalize_path(target, ctx)?;
            is_disk_device(&path).then(|| HardlineHit {
                rule: "dd * of=/dev/*".to_string(),
                rendering: rendering(),
            })
        }
        "find" => check_find_delete(args, ctx, rendering),
        "kill" => check_kill_all(args, rendering),
        // killall5 signals every process but its own session: `kill -1` in one word.
        "killall5" => hit("kill -9 -1", rendering()),
        "rsync" => check_rsync_delete(args, ctx, rendering),
        _ => None,
    }
}

/// `rsync --delete SRC/ /` (or the home, or a system directory): every file of the
/// destination that the source lacks is removed, so an empty or foreign source is
/// `rm -rf` of the destination. The destination is the last operand.
fn check_rsync_delete(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    let (options, operands) = split_options(args);
    let deletes = options
        .iter()
        .any(|o| o.starts_with("--del") && !o.starts_with("--delay-updates"));
    if !deletes || operands.len() < 2 {
        return None;
    }
    hit(
        removal_rule(classify_target(operands.last()?, ctx)?),
        rendering(),
    )
}

/// The floor entry for removing everything under a target (`find -delete`, `rsync
/// --delete`), whose words name no `$HOME` form of their own.
fn removal_rule(target: Target) -> &'static str {
    match target {
        Target::Root | Target::RootGlob => "rm -rf /",
        Target::Home => "rm -rf ~",
        Target::System => "rm -rf /<system directory>",
    }
}

/// `find / -delete` (or the home) with no test that narrows what is found: `rm -rf /`.
/// Options that only change how the tree is walked do not narrow it.
fn check_find_delete(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    const WALK_ONLY: &[&str] = &[
        "-xdev",
        "-mount",
        "-depth",
        "-d",
        "-noleaf",
        "-follow",
        "-ignore_readdir_race",
        "-delete",
        "-print",
        "-print0",
    ];
    const WALK_WITH_VALUE: &[&str] = &["-maxdepth", "-mindepth"];
    let (starts, rest): (Vec<&str>, Vec<&str>) = {
        let skip = args
            .iter()
            .take_while(|a| matches!(**a, "-H" | "-L" | "-P"))
            .count();
        let tail = args.get(skip..).unwrap_or_default();
        let n = tail
            .iter()
            .take_while(|a| !a.starts_with('-') && !matches!(**a, "(" | "!" | ","))
            .count();
        (
            tail.get(..n).unwrap_or_default().to_vec(),
            tail.get(n..).unwrap_or_default().to_vec(),
        )
    };
    if !rest.contains(&"-delete") {
        return None;
    }
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if WALK_WITH_VALUE.contains(a) {
            i += 2;
        } else if WALK_ONLY.contains(a) {
            i += 1;
        } else {
            // A test or an action that narrows or changes what is deleted.
            return None;
        }
    }
    let starts = if starts.is_empty() { vec!["."] } else { starts };
    starts
        .iter()
        .find_map(|w| hit(removal_rule(classify_target(w, ctx)?), rendering()))
}

/// `kill -9 -1` (any signal) signals every process the user may signal: the session,
/// the agent, and as root the whole machine. `kill -1 PID` sends signal 1 to PID.
fn check_kill_all(args: &[&str], rendering: impl Fn() -> String) -> Option<HardlineHit> {
    let mut i = 0;
    match args.first() {
        Some(&"-s" | &"-n") => i = 2,
        Some(a) if a.starts_with('-') && *a != "--" && args.len() >= 2 => i = 1,
        _ => {}
    }
    if args.get(i) == Some(&"--") {
        i += 1;
    }
    args.get(i..)
        .unwrap_or_default()
        .contains(&"-1")
        .then(|| HardlineHit {
            rule: "kill -9 -1".to_string(),
            rendering: rendering(),
        })
}

/// The command names `check_at` acts on; `mkfs*` is matched by prefix.
const FLOOR_COMMANDS: &[&str] = &[
    "rm",
    "chmod",
    "chown",
    "chgrp",
    "dd",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "systemctl",
    "init",
    "telinit",
    "git",
    "tee",
    "su",
    "eval",
    "watch",
    "trap",
    "env",
    "mke2fs",
    "mkswap",
    "wipefs",
    "shred",
    "blkdiscard",
    "sgdisk",
    "parted",
    "cp",
    "find",
    "kill",
    "killall5",
    "rsync",
];

/// Whether a word names a command the floor acts on. A word may hold code that some
/// wrapper hands to a shell (`flock F -c 'rm -rf /'`, `sg adm -c …`), an option value
/// that is a command (`--to-command=rm …`, `core.pager=rm …`, `PAGER=rm …`), or one
/// inside another language (vim's `:!rm …`), so each piece between blanks, operator
/// characters, `=`, `!` and `:` counts, not only the whole word.
fn names_floor_command(word: &str) -> bool {
    let by_length = FLOOR_NAMES.get_or_init(|| {
        let mut by_length: Vec<Vec<&'static str>> = Vec::new();
        for name in FLOOR_COMMANDS.iter().chain(SHELLS.iter()) {
            if by_length.len() <= name.len() {
                by_length.resize(name.len() + 1, Vec::new());
            }
            if let Some(same) = by_length.get_mut(name.len()) {
                same.push(name);
            }
        }
        by_length
    });
    let floor_name = |name: &str| {
        name.starts_with("mkfs")
            || by_length.get(name.len()).is_some_and(|same| {
                // The first byte settles most comparisons without a call to `memcmp`.
                same.iter()
                    .any(|n| n.as_bytes().first() == name.as_bytes().first() && *n == name)
            })
    };
    // Every separator is ASCII, so an ASCII word is split byte by byte (the walk is
    // run for every word of every command); a word with other characters may hold
    // Unicode blanks, which `char::is_whitespace` also takes.
    if !word.is_ascii() {
        return word
            .split(|c: char| c.is_whitespace() || is_floor_separator(c))
            .any(|piece| floor_name(basename(piece)));
    }
    // The name of each piece is what follows its last `/`.
    let mut name_start = 0;
    for (i, b) in word.bytes().enumerate() {
        if b == b'/' {
            name_start = i + 1;
        } else if is_floor_separator(char::from(b)) || matches!(b, 0x0b | 0x0c | b'\r') {
            if word.get(name_start..i).is_some_and(floor_name) {
                return true;
            }
            name_start = i + 1;
        }
    }
    word.get(name_start..).is_some_and(floor_name)
}

/// The names `names_floor_command` looks for (the floor's commands and the shells),
/// by length: a name is compared only with the few of its own length.
static FLOOR_NAMES: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();

/// The separators between the pieces of a word that may name a command, besides blanks.
fn is_floor_separator(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t'
            | '\n'
            | ';'
            | '&'
            | '|'
            | '('
            | ')'
            | '`'
            | '\''
            | '"'
            | '{'
            | '}'
            | '='
            | '!'
            | ':'
    )
}

/// Whether any of these words could make the floor fire: every entry names its command
/// (or a shell or code runner) in some word. An engine may skip lowering text for the
/// floor when this is false for every command and nothing else (a redirect target, a
/// function definition) is there to check.
pub(crate) fn may_fire<'w>(mut words: impl Iterator<Item = &'w str>) -> bool {
    words.any(names_floor_command)
}

enum Prefix {
    /// The index of the effective command word, and the directory a wrapper moved it
    /// to (`env -C DIR`, `sudo -D DIR`), when one did.
    Command(usize, Option<PathBuf>),
    /// A wrapper's own code string hit the floor (`env -S 'rm -rf /'`).
    Hit(HardlineHit),
}

/// Skips reserved words, `VAR=x` assignments and wrappers with their options (by the
/// program table, `programs::describe`), so the lexer's rendering of
/// `sudo env X=1 nice -n 5 rm -rf /` is matched as `rm -rf /`. A wrapper's own code
/// string (`env -S`, `flock F -c`, `watch`, `su -c`) is read again here; a command
/// whose long options were abbreviated (`rm --rec --for /`) is also matched spelled out.
fn skip_prefixes(
    words: &[&str],
    raw: &[&str],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Prefix {
    // Variables the command's wrappers or `export` set to a command some program runs
    // (`env GIT_SSH_COMMAND='rm -rf /' git fetch`): read as code.
    let (assignments, _) = programs::environment::assignment_words(raw);
    if !assignments.is_empty() {
        let codes = programs::environment::environment_code(&assignments, raw);
        if let Some(h) = codes.iter().find_map(|c| check_code(c, ctx, reader, depth)) {
            return Prefix::Hit(h);
        }
    }
    let mut i = 0;
    let mut layers = 0;
    let mut moved: Option<PathBuf> = None;
    while let Some(&w) = words.get(i) {
        let here_ctx = moved.as_ref().map(|dir| ctx.with_cwd(dir.clone()));
        let ctx = here_ctx.as_ref().unwrap_or(ctx);
        if RESERVED_PREFIXES.contains(&w) || programs::is_assignment(w) {
            i += 1;
            continue;
        }
        let here = words.get(i..).unwrap_or_default();
        let d = programs::describe(here);
        let raw_here = raw.get(i..).unwrap_or_default();
        // Wrappers, and programs that run a command of their own (`ip netns exec`,
        // `git bisect run`): the command they run is what the floor matches.
        let wrapper = d.inner.is_some()
            || programs::lookup(w).is_some_and(|p| {
                matches!(
                    p.role,
                    programs::Role::Wrapper { .. } | programs::Role::CodeOperands { .. }
                )
            });
        if !wrapper || layers >= programs::unwrap::MAX_LAYERS {
            if let Some(canonical) = &d.canonical
                && depth <= MAX_CODE_DEPTH
                && let Some(h) = check_at(canonical, ctx, reader, depth + 1)
            {
                return Prefix::Hit(h);
            }
            // Code a program's options or program text run (`tar -I CODE`, `git -c
            // core.pager=CODE`, awk's `system("…")`), read like `sh -c`'s. Shells,
            // `eval` and `trap` are read by name in `check_words`.
            let by_name = SHELLS.contains(&basename(w)) || matches!(basename(w), "eval" | "trap");
            if !by_name {
                // The program's text as the engine gave it: quote characters inside it
                // are its own (awk's `system("…")`), not bash's.
                let raw_d;
                let code_d = if raw_here == here {
                    &d
                } else {
                    raw_d = programs::describe(raw_here);
                    &raw_d
                };
                if let Some(h) = table_code(code_d, raw_here, ctx, reader, depth) {
                    return Prefix::Hit(h);
                }
            }
            break;
        }
        layers += 1;
        // The wrapper's own code and its command run where it moved to.
        let moved_here = d.chdir.as_deref().and_then(|dir| normalize_path(dir, ctx));
        let ctx = match &moved_here {
            Some(dir) => Cow::Owned(ctx.with_cwd(dir.clone())),
            None => Cow::Borrowed(ctx),
        };
        if let Some(h) = table_code(&d, raw_here, &ctx, reader, depth) {
            return Prefix::Hit(h);
        }
        if moved_here.is_some() {
            moved = moved_here;
        }
        match d.inner {
            Some(k) if k > 0 => i += k,
            _ => return Prefix::Command(words.len(), moved),
        }
    }
    Prefix::Command(i, moved)
}

/// The code strings the table found in one program's words, each checked as code.
fn table_code(
    d: &programs::Description,
    raw: &[&str],
    ctx: &AnalysisContext,
    reader: &dyn CodeReader,
    depth: usize,
) -> Option<HardlineHit> {
    d.code
        .iter()
        .map(|c| programs::code_text(c, raw))
        .chain(d.option_code.iter().cloned())
        .find_map(|code| check_code(&code, ctx, reader, depth))
}

/// The index after a run of options starting at `i`; `--` ends the run.
fn skip_options(words: &[&str], mut i: usize, value_opts: &[&str]) -> usize {
    while let Some(&o) = words.get(i) {
        if o == "--" {
            return i + 1;
        }
        if !o.starts_with('-') || o == "-" {
            break;
        }
        i += if value_opts.contains(&o) { 2 } else { 1 };
    }
    i
}

/// Where the code of `sh -c CODE` is, by the table's shell grammar (`sh` reads the
/// union of bash's and dash's options, so `bash +o history -c CODE` is found). With
/// options the grammar does not know, the word after `-c` is still checked: the floor
/// may deny what bash would refuse to run, never the other way round.
fn shell_code(args: &[&str]) -> Option<usize> {
    let mut words: Vec<&str> = Vec::with_capacity(args.len() + 1);
    words.push("sh");
    words.extend_from_slice(args);
    programs::describe(&words)
        .code
        .first()
        .and_then(|c| c.word.checked_sub(1))
}

/// Where the code of `su -c CODE` / `su --command=CODE` is: the word's index and the
/// byte where the code starts in it.
fn su_code(args: &[&str]) -> Option<(usize, usize)> {
    let mut words: Vec<&str> = Vec::with_capacity(args.len() + 1);
    words.push("su");
    words.extend_from_slice(args);
    programs::describe(&words)
        .code
        .first()
        .and_then(|c| Some((c.word.checked_sub(1)?, c.offset)))
}

/// `eval a b` runs `a b`; `watch -n 1 a b` runs `a b` through `sh -c`. Options are
/// read on the unquoted words by the table, the code is taken from the raw ones.
fn code_of(name: &str, args: &[&str], raw_args: &[&str]) -> String {
    let mut words: Vec<&str> = vec![name];
    words.extend_from_slice(args);
    let mut raw: Vec<&str> = vec![name];
    raw.extend_from_slice(raw_args);
    programs::describe(&words)
        .code
        .first()
        .map(|c| programs::code_text(c, &raw))
        .unwrap_or_default()
}

/// What a path argument names, for the targets the floor protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Root,
    RootGlob,
    Home,
    /// A top-level directory the system cannot run without (`/usr`, `/etc`, …), or
    /// everything in one (`/usr/*`).
    System,
}

/// Top-level directories whose removal leaves a system that no longer boots or runs
/// programs. `/tmp`, `/opt`, `/srv`, `/mnt` and the like are not among them.
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/usr", "/var",
];

fn classify_target(word: &str, ctx: &AnalysisContext) -> Option<Target> {
    // A glob stands for whatever it matches in the directory before its first pattern
    // character: `/[b-z]*` for the top-level directories, `~/.[a-z]*` for the home's
    // dotfiles, `*` after `cd /` for everything under `/`.
    let word = plain_home_parameter(word);
    let word = word.as_ref();
    let (base, glob) = match first_glob_char(word) {
        Some(at) => {
            let head = word.get(..at).unwrap_or_default();
            match head.rfind('/') {
                Some(slash) => (word.get(..=slash).unwrap_or("/"), true),
                None => (".", true),
            }
        }
        None => (word, false),
    };
    let path = normalize_path(base, ctx)?;
    if path == Path::new("/") {
        return Some(if glob { Target::RootGlob } else { Target::Root });
    }
    if glob && path == ctx.home() {
        return Some(Target::Home);
    }
    if SYSTEM_DIRS.iter().any(|d| path == Path::new(d)) {
        return Some(Target::System);
    }
    // An ancestor of the home takes the home with it (`rm -rf ~/..` with the home
    // at `/var/lib/jenkins` removes `/var/lib`).
    let home_like = ctx.home().starts_with(&path)
        || path == Path::new("/home")
        || path == Path::new("/root")
        || path == Path::new("/Users")
        || matches!(path.parent(), Some(p) if p == Path::new("/home") || p == Path::new("/Users"));
    home_like.then_some(Target::Home)
}

/// The byte index of the first pattern character (`*`, `?`, `[`) outside `${…}`.
fn first_glob_char(word: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut prev = '\0';
    for (i, c) in word.char_indices() {
        match c {
            '{' if prev == '$' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            '*' | '?' | '[' if depth == 0 => return Some(i),
            _ => {}
        }
        prev = c;
    }
    None
}

/// A path word made absolute and normalized lexically (`//`, `/.`, `..`, trailing `/`);
/// `~user` stands for `/home/user`. `None` when the word holds an unknown variable.
fn normalize_path(word: &str, ctx: &AnalysisContext) -> Option<PathBuf> {
    let word = plain_home_parameter(word);
    let word = word.as_ref();
    let expanded = match word.strip_prefix('~') {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => {
            let (user, tail) = rest.split_once('/').unwrap_or((rest, ""));
            PathBuf::from("/home").join(user).join(tail)
        }
        _ => paths::expand_home(word, ctx.home())?,
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        ctx.cwd().join(expanded)
    };
    Some(paths::clean(&absolute))
}

/// `${HOME:?}`, `${HOME:-x}`, `${HOME-x}`, `${HOME:=x}`: `HOME` is set for the agent,
/// so each is `$HOME` (the guard idiom `rm -rf "${HOME:?}/"` must not hide the target).
fn plain_home_parameter(word: &str) -> Cow<'_, str> {
    let Some(rest) = word.strip_prefix("${HOME") else {
        return Cow::Borrowed(word);
    };
    if !rest.starts_with([':', '-', '?', '=']) || rest.starts_with(":+") {
        return Cow::Borrowed(word);
    }
    match rest.find('}') {
        Some(close) => Cow::Owned(format!(
            "$HOME{}",
            rest.get(close + 1..).unwrap_or_default()
        )),
        None => Cow::Borrowed(word),
    }
}

/// The first operand, options and their separate values skipped.
fn first_operand<'w>(args: &[&'w str], value_opts: &[&str]) -> Option<&'w str> {
    let i = skip_options(args, 0, value_opts);
    args.get(i).copied()
}

fn is_disk_device(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/dev") else {
        return false;
    };
    let first = rest
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy());
    matches!(first, Some(name) if DISK_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// Splits option words from operands; `--` ends options.
fn split_options<'w>(args: &[&'w str]) -> (Vec<&'w str>, Vec<&'w str>) {
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut ended = false;
    for &a in args {
        if !ended && a == "--" {
            ended = true;
        } else if !ended && a.starts_with('-') && a.len() > 1 {
            options.push(a);
        } else {
            operands.push(a);
        }
    }
    (options, operands)
}

/// Whether the options make the command recursive (`-r`, `-R`, `-rf`, `--recursive`).
fn is_recursive(options: &[&str], short: &[char]) -> bool {
    options.iter().any(|o| {
        if let Some(long) = o.strip_prefix("--") {
            long == "recursive"
        } else {
            o.chars().skip(1).any(|c| short.contains(&c))
        }
    })
}

fn check_rm(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    let (options, operands) = split_options(args);
    if !is_recursive(&options, &['r', 'R']) {
        return None;
    }
    operands.iter().find_map(|w| {
        let rule = match classify_target(w, ctx)? {
            Target::Root => "rm -rf /",
            Target::RootGlob => "rm -rf /*",
            Target::Home if w.starts_with("$HOME") || w.starts_with("${HOME") => "rm -rf $HOME",
            Target::Home => "rm -rf ~",
            Target::System => "rm -rf /<system directory>",
        };
        hit(rule, rendering())
    })
}

fn targets_root(operands: &[&str], ctx: &AnalysisContext) -> bool {
    operands.iter().any(|w| {
        matches!(
            classify_target(w, ctx),
            Some(Target::Root | Target::RootGlob)
        )
    })
}

fn check_chmod(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    let (options, operands) = split_options(args);
    let (Some(mode), rest) = (operands.first(), operands.get(1..).unwrap_or_default()) else {
        return None;
    };
    let open = matches!(
        *mode,
        "777" | "0777" | "00777" | "a+rwx" | "a=rwx" | "ugo+rwx" | "ugo=rwx"
    );
    // Any mode, applied to every file of the system, breaks it (setuid programs such
    // as sudo, private keys, `/tmp`'s sticky bit), as `chown -R` does with any owner:
    // `chmod -R u=rwx,g=rwx,o=rwx /` is 777 spelt otherwise, `chmod -R 000 /` worse.
    (is_recursive(&options, &['R']) && targets_root(rest, ctx)).then(|| HardlineHit {
        rule: if open {
            "chmod -R 777 /"
        } else {
            "chmod -R * /"
        }
        .to_string(),
        rendering: rendering(),
    })
}

fn check_chown(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    let (options, operands) = split_options(args);
    // With `--reference=FILE` there is no owner operand.
    let skip = usize::from(!options.iter().any(|o| o.starts_with("--reference")));
    let targets = operands.get(skip..).unwrap_or_default();
    (is_recursive(&options, &['R']) && targets_root(targets, ctx)).then(|| HardlineHit {
        rule: "chown -R * /".to_string(),
        rendering: rendering(),
    })
}

fn check_dd(
    args: &[&str],
    ctx: &AnalysisContext,
    rendering: impl Fn() -> String,
) -> Option<HardlineHit> {
    args.iter()
        .filter_map(|a| a.strip_prefix("of="))
        .find_map(|target| {
            let path = normalize_path(target, ctx)?;
            let harmless = HARMLESS_DEVICES.iter().any(|d| path == Path::new(d))
                || path.starts_with("/dev/fd")
                || path.starts_with("/dev/shm");
            (path.starts_with("/dev") && path != Path::new("/dev") && !harmless).then(|| {
                HardlineHit {
                    rule: "dd * of=/dev/*".to_string(),
                    rendering: rendering(),
                }
            })
        })
}

/// `git push` that force-updates or deletes `main` or `master` on the remote, however
/// it is spelled (git's global options skipped, `git -C d push -f origin main`): a
/// force flag or a `+refspec` whose destination is, or is a pattern that covers, one of
/// them; `--mirror` (force-updates and prunes every ref); `--all`/`--branches` with
/// force (every branch, the default one included); a deletion (`--delete main`,
/// `:main`); `--prune` with a pattern refspec covering them (deletes what is not pushed).
fn check_git_push(eff: &[&str], rendering: impl Fn() -> String) -> Option<HardlineHit> {
    let words: Vec<String> = eff.iter().map(|w| (*w).to_string()).collect();
    let (i, "push") = programs::git::git_subcommand(&words)? else {
        return None;
    };
    let args = words.get(i + 1..).unwrap_or_default();
    let mut force = false;
    let mut mirror = false;
    let mut all = false;
    let mut delete = false;
    let mut prune = false;
    let mut repo_option = false;
    let mut positionals: Vec<&str> = Vec::new();
    let mut it = args.iter().map(String::as_str);
    let mut ended = false;
    while let Some(a) = it.next() {
        if ended || !a.starts_with('-') || a == "-" {
            positionals.push(a);
        } else if a == "--" {
            ended = true;
        } else if let Some(long) = a.strip_prefix("--") {
            force |= long == "force"
                || long.starts_with("force-with-lease")
                || long == "force-if-includes";
            mirror |= long == "mirror";
            all |= long == "all" || long == "branches";
            delete |= long == "delete";
            prune |= long == "prune";
            repo_option |= long.starts_with("repo");
            if matches!(long, "repo" | "push-option" | "receive-pack" | "exec") {
                it.next();
            }
        } else {
            force |= a.contains('f');
            delete |= a.contains('d');
            if a == "-o" {
                it.next();
            }
        }
    }
    let refspecs = if repo_option {
        &positionals[..]
    } else {
        positionals.get(1..).unwrap_or_default()
    };
    let default_branch = |dst: &str| {
        let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
        matches!(dst, "main" | "master")
    };
    // A destination pattern (`refs/heads/*`, `*`, `ma*`) covers the default branch
    // when it matches `main` or `master` in either spelling.
    let covers_default = |dst: &str| {
        if !dst.contains('*') {
            return default_branch(dst);
        }
        ["main", "master", "refs/heads/main", "refs/heads/master"]
            .iter()
            .any(|b| refspec_pattern_matches(dst, b))
    };
    let hits_default = refspecs.iter().any(|spec| {
        let plus = spec.starts_with('+');
        let body = spec.trim_start_matches('+');
        let (src, dst) = body.rsplit_once(':').unwrap_or((body, body));
        if delete {
            return default_branch(body);
        }
        if src.is_empty() {
            // `:main` deletes `main`.
            return default_branch(dst);
        }
        (force || plus || (prune && dst.contains('*'))) && covers_default(dst)
    });
    let hit = hits_default || mirror || (all && force);
    hit.then(|| HardlineHit {
        rule: "git push --force (main|master)".to_string(),
        rendering: rendering(),
    })
}

/// Whether a refspec side with one `*` (git allows one) matches `name`: the `*` stands
/// for any run of characters, `/` included.
fn refspec_pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => pattern == name,
    }
}

fn strip_quotes(w: &str) -> Cow<'_, str> {
    if w.contains(['\'', '"']) {
        Cow::Owned(w.replace(['\'', '"'], ""))
    } else {
        Cow::Borrowed(w)
    }
}

fn render_word(w: &str, ctx: &AnalysisContext) -> String {
    let w = strip_quotes(w);
    let w = collapse_whitespace(&w);
    let path_like = w.starts_with('/')
        || w.starts_with('~')
        || w.starts_with("$HOME")
        || w.starts_with("${HOME}");
    if !path_like {
        return w;
    }
    let (base, glob) = match w.strip_suffix('*') {
        Some(b) if b.ends_with('/') => (b, true),
        _ => (w.as_str(), false),
    };
    match normalize_path(base, ctx) {
        Some(p) => {
            let mut s = p.to_string_lossy().into_owned();
            if glob {
                if !s.ends_with('/') {
                    s.push('/');
                }
                s.push('*');
            }
            s
        }
        None => w.clone(),
    }
}

fn render_strs(words: &[&str], ctx: &AnalysisContext) -> String {
    let rendered: Vec<String> = words.iter().map(|w| render_word(w, ctx)).collect();
    collapse_whitespace(&rendered.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> (tempfile::TempDir, AnalysisContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(dir.path(), None, Path::new("/home/tester")).unwrap();
        (dir, ctx)
    }

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// The byte scan of an ASCII word finds a floor name exactly where splitting the
    /// word's characters does (blanks as `char::is_whitespace` takes them: VT, FF and
    /// CR too).
    #[test]
    fn floor_names_found_by_bytes_as_by_characters() {
        let by_chars = |word: &str| {
            word.split(|c: char| c.is_whitespace() || is_floor_separator(c))
                .any(|piece| {
                    let name = basename(piece);
                    FLOOR_COMMANDS.contains(&name)
                        || SHELLS.contains(&name)
                        || name.starts_with("mkfs")
                })
        };
        let words = [
            "rm",
            "/bin/rm",
            "./rm",
            "rm/",
            "rmx",
            "xrm",
            "ls",
            "",
            "/",
            "a:rm",
            "x=/usr/bin/sh",
            "core.pager=rm",
            "--to-command=rm",
            ":!rm",
            "a\x0brm",
            "a\x0crm",
            "a\rrm",
            "a\trm",
            "a\nrm",
            "bash",
            "/bin/bash -c",
            "mkfs.ext4",
            "x/mkfs",
            "{cp,x}",
            "(dd)",
            "`su`",
            "'git'",
            "\"env\"",
            "a;find",
            "a&kill",
            "a|tee",
            "a!halt",
            "sh\x0b",
            "zsh",
            "rm\u{a0}x",
            "x\u{2003}rm",
            "é/rm",
            "rm\u{85}",
        ];
        for word in words {
            assert_eq!(names_floor_command(word), by_chars(word), "{word:?}");
        }
    }

    /// Code read as one command of whitespace words: enough where no code string is
    /// met (the engines' readers are tested through them).
    struct Words;
    impl CodeReader for Words {
        fn read(&self, code: &str, cwd: &Cwd, _: &AnalysisContext) -> Plan {
            let words = code
                .split_whitespace()
                .map(|t| crate::shell::ir::Word {
                    text: t.to_string(),
                    dynamic: false,
                    pattern: false,
                    braces: false,
                    start: 0,
                })
                .collect();
            Plan {
                commands: vec![SimpleCommand {
                    assignments: Vec::new(),
                    words,
                    redirects: Vec::new(),
                    text: code.to_string(),
                    cwd: cwd.clone(),
                    heredoc: false,
                    forks: false,
                    conditional: false,
                    start: 0,
                    piped_from: None,
                }],
                ..Plan::default()
            }
        }
    }

    fn check(words: &[String], ctx: &AnalysisContext) -> Option<HardlineHit> {
        super::check(words, ctx, &Words)
    }

    #[test]
    fn wrappers_are_looked_through() {
        let (_d, ctx) = ctx();
        assert!(
            check(
                &w("sudo -u root env A=1 nice -n 5 timeout 10 rm -rf /"),
                &ctx
            )
            .is_some()
        );
        assert!(check(&w("xargs -I {} rm -rf /"), &ctx).is_some());
        assert!(check(&w("/bin/rm -rf //"), &ctx).is_some());
        assert!(check(&w("env -S rm -rf /"), &ctx).is_some());
    }

    #[test]
    fn render_normalizes_paths_and_home() {
        let (_d, ctx) = ctx();
        assert_eq!(
            render(&w("rm -rf //./ ~/ $HOME/x/.. /*"), &ctx),
            "rm -rf / /home/tester /home/tester /*"
        );
    }

    #[test]
    fn relative_targets_resolve_against_cwd() {
        let (_d, ctx) = ctx();
        let depth = ctx.cwd().components().count();
        let up = vec![".."; depth].join("/");
        assert!(check(&w(&format!("rm -rf {up}")), &ctx).is_some());
    }
}
