//! The program oracle's generator: commands for every verified program, written from
//! the verified table's own options (`programs::readonly::table`, `find_words`,
//! `xxd_words`, `programs::git_readonly::forms`), with operands drawn from the hostile
//! world (`world::OPERANDS`).
//!
//! Owns the shapes: first a systematic pass that puts every option of every entry in
//! at least one command (each spelling, short and long, a few options per command),
//! then random commands: clusters (`-Lo`), attached values made of option letters,
//! `=`/attached/next-word values, `--`, options after operands, long-option prefixes
//! (`--out` for `--output`), and operands that are secrets, symlinks into credential
//! stores, hostile git directories, raw disks and `~/` paths. Deterministic by seed
//! (the bash oracle's splitmix64 `Rng`); programs not installed are left out.

use crate::oracle::generate::Rng;
use crate::programs::options::{Arg, Does, Opt};
use crate::programs::{git_readonly, readonly};

use super::world::OPERANDS;

/// One generated command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Runs over a writable copy of the world (an edit), not the read-only one.
    pub writable: bool,
    /// The program the command runs (the table's name, `git` for git's forms).
    pub program: String,
    /// The table entry (`grep/egrep/fgrep`, `git log`, `find`).
    pub entry: String,
    pub command: String,
    /// The coverage keys of the options it uses (`Coverage::key`).
    pub options: Vec<String>,
}

/// One entry the generator knows: its label, program names, options, and how its
/// operands are read.
#[derive(Debug, Clone)]
pub struct Entry {
    pub label: String,
    pub names: Vec<&'static str>,
    /// Words after the program name that start every command (`git log`: `["log"]`).
    pub lead: Vec<&'static str>,
    pub opts: Vec<Opt>,
    pub kind: Kind,
}

/// How an entry's operands are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Files or directories.
    Files,
    /// A pattern (or a jq filter), then files.
    Pattern,
    /// Text (`echo`, `seq`, `date +FMT`, `which NAME`).
    Text,
    /// A directory (`cd`).
    Dir,
    /// git: revisions and paths.
    Git,
    /// git config: names and files.
    GitConfig,
    /// `find`: paths, then an expression (its own words).
    Find,
    /// `xxd`: its own words, one file.
    Xxd,
    /// `node`: the syntax check and version forms, and the forms next to them that run
    /// code.
    Node,
    /// `awk`: `-F`/`-v`, a program (of the subset or one of the ways out), operands.
    Awk,
}

/// The coverage key of an option (`-n/--lines`, `--cached`, `-L`).
pub fn key(opt: &Opt) -> String {
    match (opt.short, opt.long) {
        (Some(c), Some(l)) => format!("-{c}/--{l}"),
        (Some(c), None) => format!("-{c}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    }
}

/// Programs that are bash builtins (no file on PATH).
const BUILTINS: &[&str] = &["cd", "pushd", "dirs", "type", "hash", "pwd", "jobs"];

/// Whether a program can run in the sandbox: a builtin, or a file on the host PATH.
pub fn installed(name: &str) -> bool {
    BUILTINS.contains(&name)
        || ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
            .iter()
            .any(|d| std::path::Path::new(d).join(name).is_file())
}

fn kind_of(name: &str) -> Kind {
    match name {
        "grep" | "egrep" | "fgrep" | "rg" | "fd" | "fdfind" | "jq" | "sed" => Kind::Pattern,
        "cd" | "pushd" => Kind::Dir,
        "whoami" | "id" | "uname" | "seq" | "date" | "basename" | "dirname" | "which"
        | "whereis" | "type" | "hash" | "dirs" | "jobs" | "pwd" | "tr" | "sleep" | "ps"
        | "pgrep" => Kind::Text,
        _ => Kind::Files,
    }
}

/// Every entry of the verified table, git's forms and the hand-read programs.
pub fn entries() -> Vec<Entry> {
    let mut out: Vec<Entry> = readonly::table()
        .into_iter()
        .map(|e| Entry {
            label: e.names.join("/"),
            names: e.names.to_vec(),
            lead: Vec::new(),
            opts: e.opts,
            kind: kind_of(e.names.first().copied().unwrap_or("")),
        })
        .collect();
    let (forms, _) = git_readonly::forms();
    for f in forms {
        let kind = if f.words == ["config"] {
            Kind::GitConfig
        } else {
            Kind::Git
        };
        out.push(Entry {
            label: format!("git {}", f.words.join(" ")),
            names: vec!["git"],
            lead: f.words.to_vec(),
            opts: f.opts.clone(),
            kind,
        });
    }
    out.push(Entry {
        label: "awk/mawk".to_string(),
        names: vec!["awk", "mawk"],
        lead: Vec::new(),
        opts: Vec::new(),
        kind: Kind::Awk,
    });
    for (name, kind) in [
        ("find", Kind::Find),
        ("xxd", Kind::Xxd),
        ("node", Kind::Node),
    ] {
        out.push(Entry {
            label: name.to_string(),
            names: vec![name],
            lead: Vec::new(),
            opts: Vec::new(),
            kind,
        });
    }
    out
}

/// The words of `find`'s and `xxd`'s own grammars (their coverage keys).
pub fn own_words(kind: Kind) -> Vec<&'static str> {
    match kind {
        Kind::Find => {
            let (lead, no, one) = readonly::find_words();
            lead.iter().chain(no).chain(one).copied().collect()
        }
        Kind::Xxd => {
            let (flags, valued) = readonly::xxd_words();
            flags.iter().chain(valued).copied().collect()
        }
        _ => Vec::new(),
    }
}

/// Quotes a word for bash unless it is plain (`~/` stays unquoted so bash expands it).
fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '_' | '.' | '/' | '-' | '+' | ',' | '=' | ':' | '@' | '%' | '~' | '^'
                )
        })
        && !w.contains("~") | w.starts_with("~");
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// sed scripts: the printing subset, and the forms that write, read or run (`w`,
/// `s///w`, `s///e`, `e`, `r`, `R`), some hidden behind a bracket expression.
const SED_SCRIPTS: &[&str] = &[
    "1,5p",
    "$p",
    "/KEY/p",
    "s/a/X/gp",
    "/a/,/b/{p;=}",
    "s/[/]/X/p",
    "1~2l",
    "$!N;P;D",
    "w out.txt",
    "1w ~/.bashrc",
    "s/a/b/w out.txt",
    "s/[/]/X/w out.txt",
    "s/a/b/e",
    "1e /.oracle/marker",
    "r .env",
    "1R ~/.ssh/id_rsa",
    "W a.txt",
];

/// A value for an option, by what its name suggests (a hostile file for files).
fn value(rng: &mut Rng, opt: &Opt) -> String {
    let name = opt.long.unwrap_or("");
    let o = &OPERANDS;
    if name == "expression" {
        return rng.pick(SED_SCRIPTS).to_string();
    }
    // grep's name filters: the patterns a reader reads as suffixes (`*.txt`, `*env`)
    // and the ones that reach hidden secrets or are read differently (`.e*`, `*`).
    if matches!(name, "include" | "exclude" | "exclude-dir") {
        return rng.pick(NAME_PATTERNS).to_string();
    }
    let fileish = opt.does == Does::Reads
        || [
            "file",
            "from",
            "reference",
            "output",
            "gitfile",
            "contents",
            "relative",
            "to-file",
            "magic",
            "blob",
        ]
        .iter()
        .any(|k| name.contains(k));
    if fileish {
        return match rng.below(4) {
            0 => rng.pick(o.secrets),
            1 => rng.pick(o.targets),
            2 => rng.pick(o.includes),
            _ => rng.pick(o.files),
        }
        .to_string();
    }
    if [
        "format",
        "printf",
        "pretty",
        "time-style",
        "timefmt",
        "date",
    ]
    .iter()
    .any(|k| name.contains(k))
    {
        return rng
            .pick(&["%H %s", "%p", "%y", "short", "iso", "oneline", "+%F", "%n%"])
            .to_string();
    }
    match rng.below(10) {
        0..=4 => rng.pick(o.numbers).to_string(),
        5 | 6 => rng.pick(o.texts).to_string(),
        7 => rng.pick(o.targets).to_string(),
        8 => rng.pick(o.secrets).to_string(),
        _ => rng.pick(o.revisions).to_string(),
    }
}

/// The words of one option in one of its spellings (`prefer_long`: `Some(true)` the
/// long name, `Some(false)` the short letter, `None` either).
/// `unlisted`: the letters the entry does not list (options the table left out
/// because they write, run or read more), for clusters that hide one.
fn option_words(
    rng: &mut Rng,
    opt: &Opt,
    prefer_long: Option<bool>,
    unlisted: &[&'static str],
) -> Vec<String> {
    let long = match (opt.short, opt.long, prefer_long) {
        (Some(_), Some(_), Some(p)) => p,
        (Some(_), Some(_), None) => rng.chance(50),
        (None, Some(_), _) => true,
        _ => false,
    };
    if long {
        let name = opt.long.unwrap_or("");
        // Sometimes a prefix: no verified entry accepts one, so it must be asked.
        let spelled = if prefer_long.is_none() && name.len() > 4 && rng.chance(5) {
            name.get(..name.len() - 2).unwrap_or(name)
        } else {
            name
        };
        match opt.arg {
            Arg::No => vec![format!("--{spelled}")],
            Arg::Optional => {
                if rng.chance(50) {
                    vec![format!("--{spelled}={}", quote(&value(rng, opt)))]
                } else {
                    vec![format!("--{spelled}")]
                }
            }
            Arg::Required => {
                let v = quote(&value(rng, opt));
                if rng.chance(50) {
                    vec![format!("--{spelled}={v}")]
                } else {
                    vec![format!("--{spelled}"), v]
                }
            }
            Arg::Two => vec![
                format!("--{spelled}"),
                rng.pick(&["name", "x"]).to_string(),
                quote(&value(rng, opt)),
            ],
        }
    } else {
        let c = opt.short.unwrap_or('?');
        match opt.arg {
            Arg::No => vec![format!("-{c}")],
            Arg::Optional => {
                if rng.chance(50) {
                    vec![format!("-{c}{}", quote(&value(rng, opt)))]
                } else {
                    vec![format!("-{c}")]
                }
            }
            Arg::Required | Arg::Two => {
                let v = quote(&value(rng, opt));
                match rng.below(3) {
                    0 => vec![format!("-{c}{v}")],
                    // An unlisted option letter as the attached value (`tree -Lo 1
                    // FILE`): the table reads a value, the program may read the
                    // letter as an option that takes the next word after `-L`'s.
                    1 => hidden_cluster(rng, opt, unlisted),
                    _ => vec![format!("-{c}"), v],
                }
            }
        }
    }
}

/// Operands for an entry.
fn operands(rng: &mut Rng, e: &Entry, name: &str) -> Vec<String> {
    let o = &OPERANDS;
    let mut out: Vec<String> = Vec::new();
    let file = |rng: &mut Rng| -> String {
        match rng.below(6) {
            0 | 1 => rng.pick(o.secrets),
            2 => rng.pick(o.links),
            3 => rng.pick(o.dirs),
            4 => rng.pick(o.targets),
            _ => rng.pick(o.files),
        }
        .to_string()
    };
    match e.kind {
        Kind::Files => {
            for _ in 0..1 + rng.below(2) {
                out.push(file(rng));
            }
        }
        Kind::Pattern => {
            if name == "sed" {
                out.push(rng.pick(SED_SCRIPTS).to_string());
            } else if name == "jq" {
                out.push(
                    rng.pick(&[".", ".a", ".env", "keys", ".list[]", "input_filename"])
                        .to_string(),
                );
            } else {
                out.push(rng.pick(o.texts).to_string());
            }
            for _ in 0..rng.below(3) {
                out.push(file(rng));
            }
        }
        Kind::Text => match name {
            "seq" => out.push(rng.pick(&["3", "1 2", "2 1 5"]).to_string()),
            "date" => out.push(rng.pick(&["+%F", "+%s"]).to_string()),
            "tr" => out.push(rng.pick(&["a-z A-Z", "x y", "abc"]).to_string()),
            "whoami" | "id" | "uname" | "pwd" | "dirs" => {}
            "sleep" => out.push(rng.pick(&["0", "0.01", "0.02s", "0 0.01", "x"]).to_string()),
            // BSD words (`e` prints the environment), process ids, or none.
            "ps" => out.extend(
                rng.pick(&["", "aux", "axjf", "1", "1,2", "x", "e", "auxe", "eww"])
                    .split_whitespace()
                    .map(str::to_string),
            ),
            "pgrep" => out.push(
                rng.pick(&["sleep", "bash", "strace", "x", "aws"])
                    .to_string(),
            ),
            _ => out.push(
                rng.pick(&["ls", "git", "x", "~/.bashrc", "a.txt"])
                    .to_string(),
            ),
        },
        Kind::Dir => out.push(rng.pick(o.dirs).to_string()),
        Kind::Git => {
            match e.lead.as_slice() {
                ["remote"] => {
                    return rng
                        .pick(&["-v", "show -n origin", "get-url origin", ""])
                        .split_whitespace()
                        .map(str::to_string)
                        .collect();
                }
                ["cat-file"] => {
                    out.push(rng.pick(&["-p", "-t", "-s", "-e"]).to_string());
                    out.push(rng.pick(o.revisions).to_string());
                    return out;
                }
                ["grep"] => out.push(rng.pick(o.texts).to_string()),
                ["blame"] | ["annotate"] => {
                    out.push(
                        rng.pick(&["README.md", "notes.txt", "x.cfg", "lib.txt"])
                            .to_string(),
                    );
                    return out;
                }
                ["branch"] | ["tag"] | ["status"] | ["stash", "list"] => return out,
                _ => {}
            }
            if rng.chance(60) {
                out.push(rng.pick(o.revisions).to_string());
            }
            if rng.chance(30) {
                out.push("--".to_string());
                out.push(file(rng));
            }
        }
        Kind::GitConfig => {
            if rng.chance(50) {
                out.push(
                    rng.pick(&["user.name", "core.pager", "include.path", "secret.token"])
                        .to_string(),
                );
            }
        }
        Kind::Find | Kind::Xxd | Kind::Awk | Kind::Node => {}
    }
    out
}

/// awk programs: the subset, and the ways out (commands, pipes, redirections,
/// `getline`, the environment, `ARGV`), some spelled to look like comparisons.
const AWK_PROGRAMS: &[&str] = &[
    "{print $1}",
    "NR>1 {print $2, $NF}",
    "$2 > 1 { print }",
    "{ print ($1 > $2) }",
    "{ s += $1 } END { print s / NR }",
    "/KEY/ { print FILENAME }",
    "{ a[$1]++ } END { for (k in a) print k }",
    "{ print > \"out.txt\" }",
    "{ print $1, $2 > \"b.txt\" }",
    "{ printf \"%s\", $0 >> \"a.txt\" }",
    "{ print | \"/.oracle/marker\" }",
    "BEGIN { system(\"/.oracle/marker\") }",
    "BEGIN { while ((\"cat .env\" | getline l) > 0) print l }",
    "BEGIN { getline l < \".env\"; print l }",
    "BEGIN { print ENVIRON[\"HOME\"] }",
    "BEGIN { ARGV[1] = \".env\"; ARGC = 2 } { print }",
    "$1 ~ /[/]/ { print }",
];

/// An `awk` command: options, a program, files and assignments.
fn awk_command(rng: &mut Rng, name: &str) -> (String, Vec<String>) {
    let mut out = vec![name.to_string()];
    let mut keys = Vec::new();
    if rng.chance(40) {
        out.push(rng.pick(&["-F:", "-F", "-F,"]).to_string());
        if out.last().is_some_and(|w| w == "-F") {
            out.push("' '".to_string());
        }
        keys.push("-F".to_string());
    }
    if rng.chance(30) {
        out.push("-v".to_string());
        out.push(rng.pick(&["n=1", "ARGC=3", "x=.env"]).to_string());
        keys.push("-v".to_string());
    }
    if rng.chance(5) {
        out.push(rng.pick(&["-f", "-W", "--"]).to_string());
    }
    out.push(quote(rng.pick(AWK_PROGRAMS)));
    let o = &OPERANDS;
    for _ in 0..rng.below(3) {
        let w = match rng.below(6) {
            0 | 1 => rng.pick(o.secrets),
            2 => rng.pick(o.links),
            3 => rng.pick(&["n=2", "ARGV=x"]),
            _ => rng.pick(o.files),
        };
        out.push(quote(w));
    }
    (out.join(" "), keys)
}

/// The `-C DIR` and global flags git is given before the subcommand.
fn git_globals(rng: &mut Rng) -> Vec<String> {
    let (_, flags) = git_readonly::forms();
    let mut out = Vec::new();
    if rng.chance(60) {
        out.push("-C".to_string());
        out.push(rng.pick(OPERANDS.git_dirs).to_string());
    }
    if rng.chance(30) {
        out.push(rng.pick(flags).to_string());
    }
    out
}

/// The option words a form needs to be a reading form (`git config --list`).
fn required(rng: &mut Rng, e: &Entry) -> Vec<String> {
    match e.kind {
        Kind::GitConfig => match rng.below(4) {
            0 => vec!["--list".into()],
            1 => vec!["--get".into(), "include.path".into()],
            2 => vec![
                "--file".into(),
                rng.pick(OPERANDS.includes).into(),
                "--list".into(),
            ],
            _ => vec!["--get-regexp".into(), "secret".into()],
        },
        _ => Vec::new(),
    }
}

/// A `find` command using `words` of its grammar (and random others).
fn find_command(rng: &mut Rng, words: &[&'static str]) -> (String, Vec<String>) {
    let (lead, _, one) = readonly::find_words();
    let mut out = vec!["find".to_string()];
    let mut keys = Vec::new();
    for w in words.iter().filter(|w| lead.contains(w)) {
        out.push((*w).to_string());
        keys.push((*w).to_string());
    }
    for _ in 0..1 + rng.below(2) {
        out.push(
            rng.pick(&[".", "docs", "docs/awslink", "~/.ssh", "vendor", "src"])
                .to_string(),
        );
    }
    for w in words.iter().filter(|w| !lead.contains(w)) {
        keys.push((*w).to_string());
        match *w {
            "(" | ")" | "\\(" | "\\)" => {
                out.extend(["\\(", "-true", "\\)"].map(str::to_string));
            }
            "!" | "-not" => out.extend([quote(w), "-false".to_string()]),
            "-a" | "-and" | "-o" | "-or" | "," => {
                out.extend(["-true".to_string(), (*w).to_string(), "-false".to_string()]);
            }
            _ => out.push((*w).to_string()),
        }
        if one.contains(w) {
            let v = match *w {
                "-type" | "-xtype" => rng.pick(&["f", "d", "l"]),
                "-name" | "-iname" | "-lname" | "-ilname" => rng.pick(NAME_PATTERNS),
                "-path" | "-ipath" | "-wholename" | "-iwholename" => "'*aws*'",
                "-regex" | "-iregex" => "'.*id_rsa'",
                "-regextype" => rng.pick(&["posix-extended", "emacs"]),
                "-printf" => rng.pick(&["'%p\\n'", "'%f %s\\n'", "'%l\\n'"]),
                "-newer" | "-anewer" | "-cnewer" | "-samefile" => {
                    rng.pick(&["a.txt", ".env", "docs/awslink/credentials"])
                }
                "-perm" => rng.pick(&["644", "-u+r"]),
                "-user" | "-group" => "root",
                "-size" => rng.pick(&["+1k", "-2"]),
                "-fstype" => "ext4",
                "-context" => "x",
                _ => rng.pick(&["1", "2", "-1", "+0"]),
            };
            out.push(v.to_string());
        }
    }
    // Sometimes the found names go to a reader (`-exec PROG … {} +`), in the forms
    // find verifies and the ones it must not.
    match rng.below(20) {
        0..=6 => {
            out.extend(exec_clause(rng));
            keys.push("-exec".to_string());
        }
        7..=10 => {
            out.extend(xargs_pipe(rng));
            keys.push("| xargs".to_string());
        }
        11 => {
            // A lister of bare names instead of find (the world's project holds files
            // named like options at the top: `-rf`, `--files0-from=…`).
            let mut rg = vec!["rg".to_string(), "--files".to_string(), "-0".to_string()];
            if rng.chance(50) {
                rg.push(rng.pick(&["src", ".", "docs", "vendor"]).to_string());
            }
            rg.extend(xargs_pipe(rng).into_iter().skip(1));
            keys.push("| xargs".to_string());
            return (rg.join(" "), keys);
        }
        _ => {}
    }
    (out.join(" "), keys)
}

/// `-name` patterns: ones that reach secrets (directly, hidden, through the links
/// `notes/cargo.toml` and `mycnf.ini`), harmless ones, and ones a glob matcher could
/// read differently from find (braces, brackets, a backslash).
const NAME_PATTERNS: &[&str] = &[
    "'*.env'",
    "'*env'",
    "'*.key'",
    "'*rc'",
    "credentials",
    "'*'",
    "'*.txt'",
    "'*.md'",
    "'.e*'",
    "'*.toml'",
    "'*.ini'",
    "'[.]env'",
    "'{a,.env}'",
    "'id_*'",
    "'\\.env'",
    "'*.rs'",
];

/// `-print0 | xargs -0 PROG …` after a find expression, or a look-alike that must ask
/// (names split at blanks, `-I`, a literal `{}`, items from a file).
fn xargs_pipe(rng: &mut Rng) -> Vec<String> {
    let prog = match rng.below(12) {
        0 => "rm",
        1 => "sort -o out.txt",
        _ => rng.pick(EXEC_READERS),
    };
    let (print, xargs): (&str, &str) = match rng.below(10) {
        0 => ("-print", "xargs"),
        1 => ("-print0", "xargs -0 -I{}"),
        2 => ("-print0", "xargs -0 -a a.txt"),
        3 => ("-print0", "xargs -0 -r"),
        4 => ("-print0", "xargs -0 -n 1"),
        5 => ("-print", "xargs -0"),
        _ => ("-print0", "xargs -0"),
    };
    let mut out = vec![print.to_string(), "|".to_string()];
    out.extend(xargs.split_whitespace().map(str::to_string));
    out.extend(prog.split_whitespace().map(str::to_string));
    if xargs.contains("-I") || rng.chance(5) {
        out.push("{}".to_string());
    }
    out
}

/// Readers a `find -exec` clause runs, with their fixed words (a few name a secret or
/// enter what they are given).
const EXEC_READERS: &[&str] = &[
    "cat",
    "cat -A",
    "grep -l x",
    "grep -R x",
    "grep -rn KEY",
    "grep -f .env",
    "grep -f a.txt",
    "wc -l",
    "head -n 1",
    "tail -c 8",
    "ls",
    "ls -la",
    "du -s",
    "stat",
    "file",
    "od -c",
    "strings -n 3",
    "xxd",
    "diff a.txt",
    "cmp a.txt",
    "sort",
    "echo",
    "md5sum",
    "nl -ba",
];

/// One `-exec` (or look-alike) clause: the verified forms and the ones that must ask
/// (`-execdir`, `-ok`, the name inside a word, a `+` not right after `{}`, a program
/// that writes).
fn exec_clause(rng: &mut Rng) -> Vec<String> {
    let action = match rng.below(12) {
        0 => "-execdir",
        1 => "-ok",
        _ => "-exec",
    };
    let prog = match rng.below(12) {
        0 => "sort -o out.txt",
        1 => "md5sum -c",
        _ => rng.pick(EXEC_READERS),
    };
    let tail: &[&str] = match rng.below(8) {
        0 => &["{}.bak", "\\;"],
        1 => &["{}", "x", "+"],
        2 | 3 => &["{}", "\\;"],
        _ => &["{}", "+"],
    };
    let mut out = vec![action.to_string()];
    out.extend(prog.split_whitespace().map(str::to_string));
    out.extend(tail.iter().map(|w| (*w).to_string()));
    out
}

/// `node` forms: the syntax check of one file and the version (verified), and the
/// forms next to them that run code or read more (a script run, a preload, code given
/// with the check, words after the file, which node gives the script), over files,
/// secrets and links. Plain `node -e CODE` is left out: it is inline code, for which
/// the analysis offers the exact command as an always pattern by design (the person
/// sees the code), so it is no look-alike of a verified form.
const NODE_FORMS: &[&str] = &[
    "-c FILE",
    "--check FILE",
    "-v",
    "--version",
    "-c FILE -r ./x.js",
    "-r /.oracle/marker -c FILE",
    "--import /.oracle/marker --check FILE",
    "-c -e require('child_process').execSync('/.oracle/marker')",
    "FILE",
    "-c FILE FILE",
    "-c",
    "--check=FILE",
];

/// A `node` command: one of `NODE_FORMS` with a file from the hostile world.
fn node_command(rng: &mut Rng) -> (String, Vec<String>) {
    let o = &OPERANDS;
    let form = rng.pick(NODE_FORMS);
    let mut out = vec!["node".to_string()];
    for w in form.split_whitespace() {
        let file = match rng.below(4) {
            0 => rng.pick(o.secrets),
            1 => rng.pick(o.links),
            _ => rng.pick(o.files),
        };
        out.push(quote(&w.replace("FILE", file)));
    }
    let key = form.split_whitespace().next().unwrap_or("").to_string();
    (out.join(" "), vec![key])
}

/// An `xxd` command using `words` (a value after each valued word), and one file.
fn xxd_command(rng: &mut Rng, words: &[&'static str]) -> (String, Vec<String>) {
    let (_, valued) = readonly::xxd_words();
    let mut out = vec!["xxd".to_string()];
    for w in words {
        out.push((*w).to_string());
        if valued.contains(w) {
            out.push(rng.pick(&["8", "0x10", "2", "-1"]).to_string());
        }
    }
    let o = &OPERANDS;
    out.push(
        match rng.below(4) {
            0 => rng.pick(o.secrets),
            1 => rng.pick(o.targets),
            2 => rng.pick(o.links),
            _ => rng.pick(o.files),
        }
        .to_string(),
    );
    (
        out.join(" "),
        words.iter().map(|w| (*w).to_string()).collect(),
    )
}

/// A command of entry `e` run as `name`, with `opts` (each with its spelling choice).
/// `extra`: option words put first (after git's subcommand).
fn command(
    rng: &mut Rng,
    e: &Entry,
    name: &str,
    opts: &[(&Opt, Option<bool>)],
    extra: &[String],
) -> Generated {
    let mut words: Vec<String> = vec![name.to_string()];
    if e.names == ["git"] {
        words.extend(git_globals(rng));
    }
    words.extend(e.lead.iter().map(|w| (*w).to_string()));
    words.extend(extra.iter().cloned());
    let mut option_words: Vec<Vec<String>> = Vec::new();
    let mut keys = Vec::new();
    let hidden = unlisted(&e.opts);
    // Short flags without a value may be clustered (`-la`), the last letter of a
    // cluster sometimes one that takes a value.
    let mut cluster = String::new();
    for (opt, long) in opts {
        keys.push(key(opt));
        let shortable = opt.short.is_some() && *long != Some(true);
        if shortable && opt.arg == Arg::No && e.kind != Kind::Git && rng.chance(40) {
            cluster.push(opt.short.unwrap_or('?'));
            continue;
        }
        option_words.push(option_words_of(rng, opt, *long, &hidden));
    }
    if !cluster.is_empty() {
        option_words.push(vec![format!("-{cluster}")]);
    }
    let required = required(rng, e);
    let ops = operands(rng, e, name);
    let after = rng.chance(20) && e.kind != Kind::Git;
    let dashdash = rng.chance(10) && !ops.is_empty() && e.kind != Kind::Git;
    if !after {
        for w in &option_words {
            words.extend(w.iter().cloned());
        }
    }
    words.extend(required);
    if dashdash {
        words.push("--".to_string());
    }
    words.extend(ops.iter().map(|w| quote(w)));
    if after {
        for w in &option_words {
            words.extend(w.iter().cloned());
        }
    }
    Generated {
        writable: false,
        program: name.to_string(),
        entry: e.label.clone(),
        command: words.join(" "),
        options: keys,
    }
}

fn option_words_of(
    rng: &mut Rng,
    opt: &Opt,
    long: Option<bool>,
    unlisted: &[&'static str],
) -> Vec<String> {
    option_words(rng, opt, long, unlisted)
}

/// Every ASCII letter and digit as a one-letter string.
const LETTERS: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s",
    "t", "u", "v", "w", "x", "y", "z", "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L",
    "M", "N", "O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z", "0", "1", "2", "3", "4",
    "5", "6", "7", "8", "9",
];

/// The letters an entry's options do not list.
fn unlisted(opts: &[Opt]) -> Vec<&'static str> {
    LETTERS
        .iter()
        .copied()
        .filter(|l| {
            !opts
                .iter()
                .any(|o| o.short.is_some_and(|c| l.starts_with(c)))
        })
        .collect()
}

/// `-{c}{x} VALUE TARGET`: a value option with an unlisted letter attached, then a
/// value and a file a write would hurt.
fn hidden_cluster(rng: &mut Rng, opt: &Opt, unlisted: &[&'static str]) -> Vec<String> {
    let c = opt.short.unwrap_or('?');
    let x = if unlisted.is_empty() {
        "o"
    } else {
        rng.pick(unlisted)
    };
    let o = &OPERANDS;
    let target = if rng.chance(60) {
        rng.pick(o.targets)
    } else {
        rng.pick(o.secrets)
    };
    vec![format!("-{c}{x}"), quote(&value(rng, opt)), quote(target)]
}

/// The systematic pass (always whole, whatever `n`), then random commands up to `n` in
/// all,
/// deterministic by `seed`. Entries none of whose programs is installed are skipped.
pub fn generate(seed: u64, n: usize) -> Vec<Generated> {
    let mut rng = Rng::new(seed);
    let entries: Vec<Entry> = entries()
        .into_iter()
        .filter(|e| e.names.iter().any(|n| installed(n)))
        .collect();
    let mut out: Vec<Generated> = Vec::new();
    // The systematic pass: every option of every entry, each spelling, three options
    // per command; every name of the entry in turn.
    for e in &entries {
        let names: Vec<&str> = e.names.iter().copied().filter(|n| installed(n)).collect();
        let mut k = 0usize;
        let mut name = || {
            k += 1;
            names.get(k % names.len().max(1)).copied().unwrap_or("")
        };
        match e.kind {
            Kind::Awk => {
                for (k, nm) in names.iter().enumerate() {
                    for _ in 0..AWK_PROGRAMS.len() / names.len().max(1) + k {
                        let (command, options) = awk_command(&mut rng, nm);
                        out.push(Generated {
                            writable: false,
                            program: (*nm).to_string(),
                            entry: e.label.clone(),
                            command,
                            options,
                        });
                    }
                }
                continue;
            }
            Kind::Node => {
                for _ in 0..NODE_FORMS.len() * 3 {
                    let (command, options) = node_command(&mut rng);
                    out.push(Generated {
                        writable: false,
                        program: "node".to_string(),
                        entry: e.label.clone(),
                        command,
                        options,
                    });
                }
                continue;
            }
            Kind::Find | Kind::Xxd => {
                let words = own_words(e.kind);
                for chunk in words.chunks(3) {
                    let (command, options) = if e.kind == Kind::Find {
                        find_command(&mut rng, chunk)
                    } else {
                        xxd_command(&mut rng, chunk)
                    };
                    out.push(Generated {
                        writable: false,
                        program: e.label.clone(),
                        entry: e.label.clone(),
                        command,
                        options,
                    });
                }
                continue;
            }
            _ => {}
        }
        let mut spellings: Vec<(&Opt, Option<bool>)> = Vec::new();
        for opt in &e.opts {
            match (opt.short, opt.long) {
                (Some(_), Some(_)) => {
                    spellings.push((opt, Some(false)));
                    spellings.push((opt, Some(true)));
                }
                _ => spellings.push((opt, Some(opt.long.is_some()))),
            }
        }
        let mut used: Vec<&str> = Vec::new();
        for chunk in spellings.chunks(3) {
            let nm = name();
            used.push(nm);
            out.push(command(&mut rng, e, nm, chunk, &[]));
        }
        // Every unlisted letter once attached to a short option with a value (the
        // options in turn), then that value and a file a write would hurt.
        let valued: Vec<&Opt> = e
            .opts
            .iter()
            .filter(|o| o.short.is_some() && matches!(o.arg, Arg::Required | Arg::Two))
            .collect();
        if !valued.is_empty() && e.kind != Kind::Git && e.kind != Kind::GitConfig {
            for (i, letter) in unlisted(&e.opts).into_iter().enumerate() {
                let Some(opt) = valued.get(i % valued.len()) else {
                    break;
                };
                let nm = name();
                let words = hidden_cluster(&mut rng, opt, &[letter]);
                let mut g = command(&mut rng, e, nm, &[], &words);
                g.options.push(key(opt));
                out.push(g);
            }
        }
        // Every installed name of the entry runs at least once.
        for nm in names.iter().filter(|n| !used.contains(n)) {
            out.push(command(&mut rng, e, nm, &[], &[]));
        }
    }
    // Every reader once behind `find -exec`, `find -print0 | xargs -0` and `rg --files
    // -0 | xargs -0`, over a directory picked in turn (the harmless `src`, a nested
    // hostile repository, symlinks into HOME, the project root with its secrets).
    if installed("find") && installed("xargs") {
        let roots = ["src", "vendor", "docs", ".", "notes", "src"];
        for (k, reader) in EXEC_READERS.iter().enumerate() {
            let root = roots.get(k % roots.len()).copied().unwrap_or(".");
            let forms = [
                format!("find {root} -type f -exec {reader} {{}} +"),
                format!("find {root} -print0 | xargs -0 {reader}"),
                format!("rg --files -0 {root} | xargs -0 -r {reader}"),
                format!("rg --files -0 | xargs -0 {reader}"),
            ];
            for command in forms {
                out.push(Generated {
                    writable: false,
                    program: "find".to_string(),
                    entry: "find".to_string(),
                    command,
                    options: vec!["-exec".to_string()],
                });
            }
        }
    }
    // Name-filtered walks: `find [-L] ROOT -name PAT -type f -exec READER {} +`, each
    // pattern over each root, with and without following links, and look-alikes where
    // the filter does not hold (`-type` missing, `-o`, the test after `-exec`).
    if installed("find") {
        let roots = [".", "docs", "notes", "src", "vendor"];
        let mut k = 0usize;
        for pat in NAME_PATTERNS {
            for root in roots {
                k += 1;
                let reader = EXEC_READERS
                    .get(k % EXEC_READERS.len())
                    .copied()
                    .unwrap_or("cat");
                let follow = if k.is_multiple_of(3) { "-L " } else { "" };
                let command = match k % 7 {
                    0 => format!("find {follow}{root} -name {pat} -exec {reader} {{}} +"),
                    1 => {
                        format!("find {follow}{root} -name {pat} -o -type f -exec {reader} {{}} +")
                    }
                    2 => format!("find {follow}{root} -type f -exec {reader} {{}} + -name {pat}"),
                    _ => format!("find {follow}{root} -name {pat} -type f -exec {reader} {{}} +"),
                };
                out.push(Generated {
                    writable: false,
                    program: "find".to_string(),
                    entry: "find".to_string(),
                    command,
                    options: vec!["-name".to_string(), "-exec".to_string()],
                });
            }
        }
    }
    // Random commands.
    while out.len() < n && !entries.is_empty() {
        let Some(e) = entries.get(rng.below(entries.len())) else {
            break;
        };
        let names: Vec<&str> = e.names.iter().copied().filter(|n| installed(n)).collect();
        let nm = rng.pick(&names);
        match e.kind {
            Kind::Awk => {
                let (command, options) = awk_command(&mut rng, nm);
                out.push(Generated {
                    writable: false,
                    program: nm.to_string(),
                    entry: e.label.clone(),
                    command,
                    options,
                });
                continue;
            }
            Kind::Node => {
                let (command, options) = node_command(&mut rng);
                out.push(Generated {
                    writable: false,
                    program: "node".to_string(),
                    entry: e.label.clone(),
                    command,
                    options,
                });
                continue;
            }
            Kind::Find | Kind::Xxd => {
                let words = own_words(e.kind);
                let picked: Vec<&'static str> =
                    (0..1 + rng.below(3)).map(|_| rng.pick(&words)).collect();
                let (command, options) = if e.kind == Kind::Find {
                    find_command(&mut rng, &picked)
                } else {
                    xxd_command(&mut rng, &picked)
                };
                out.push(Generated {
                    writable: false,
                    program: e.label.clone(),
                    entry: e.label.clone(),
                    command,
                    options,
                });
                continue;
            }
            _ => {}
        }
        let count = if e.opts.is_empty() {
            0
        } else {
            1 + rng.below(3)
        };
        let picked: Vec<(&Opt, Option<bool>)> = (0..count)
            .filter_map(|_| e.opts.get(rng.below(e.opts.len())))
            .map(|o| (o, None))
            .collect();
        out.push(command(&mut rng, e, nm, &picked, &[]));
    }
    out
}
