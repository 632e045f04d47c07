//! Programs whose own language runs shell commands: vim and ex (`-c '!CMD'`, `+CMD`,
//! `--cmd CMD`, `:r !CMD`, `system('CMD')`), awk (`system("CMD")`, `print | "CMD"`,
//! `"CMD" | getline`) and sed (`e CMD`, `s/…/CMD/e`). Where the command is a literal
//! string of the program, it is taken out (`Description::option_code`) and read as code,
//! floor included; anything else stays as it was (the program's own request asks).
//!
//! Hand-written: these languages are not data the table can declare. Each reader is
//! small, and only ever adds code: a form it does not follow is left alone, never read
//! as safe. Checked against vim 9, mawk and GNU sed 4.9 with harmless markers.

use super::description::Description;
use super::{Abbrev, Example, Grammar, Program, Role, basename};

const fn language(names: &'static [&'static str], examples: &'static [Example]) -> Program {
    Program {
        names,
        // Their options are read by the hooks below; the grammar is not consulted.
        grammar: Grammar::new(&[], Abbrev::None).partial(),
        role: Role::Tool,
        examples,
    }
}

pub const PROGRAMS: &[Program] = &[
    language(
        &["vim", "vi", "ex", "view", "nvim", "gvim", "vimdiff", "evim"],
        &[
            Example::new("vim -c !x;y f").code("x;y"),
            Example::new("vim -c :silent!!x;y").code("x;y"),
            Example::new("vim +!x;y").code("x;y"),
            Example::new("ex --cmd !x;y").code("x;y"),
            Example::new("vim -c r!x;y").code("x;y"),
            Example::new("vim -c w!x;y"),
            Example::new("vim -c set|!x;y").code("x;y"),
            Example::new("vim -c !x;%"),
            Example::new("vim +42 f"),
            Example::new("vim -c wq f"),
        ],
    ),
    language(
        &["awk", "gawk", "mawk", "nawk", "busybox-awk"],
        &[
            Example::new(r#"awk BEGIN{system("x;y")}"#).code("x;y"),
            Example::new(r#"awk -F: {print|"x;y"}"#).code("x;y"),
            Example::new(r#"awk BEGIN{"x;y"|getline}"#).code("x;y"),
            Example::new(r#"awk BEGIN{system("x;"y)}"#),
            Example::new(r#"awk -f p.awk BEGIN{system("x;y")}"#),
            Example::new(r#"awk {print"x;y"}"#),
            Example::new(r#"awk {print>"/dev/sda"}"#).writes(&["/dev/sda"]),
            Example::new(r#"awk {if($1>2)printf"%s",$1>>"o"}"#).writes(&["o"]),
            Example::new(r#"awk {print($1>"m")}"#),
            Example::new(r#"awk $1>"m"{print}"#),
            Example::new(r#"awk {print>$2}"#).opaque(),
        ],
    ),
    language(
        &["sed", "gsed"],
        &[
            Example::new("sed ex;y").code("x;y"),
            Example::new(r"sed -n s/a/x;\/y/ep").code("x;/y"),
            Example::new("sed -e p -e 1ex;y f").code("x;y"),
            Example::new(r"sed s/a/x;\1/e"),
            Example::new("sed s/a/b/g f"),
            Example::new("sed -f s.sed f"),
            Example::new("sed 1w/dev/sda f").writes(&["/dev/sda"]),
            Example::new("sed -n s/a/b/wout f").writes(&["out"]),
            Example::new("sed -n w/dev/stdout f"),
            Example::new("sed r/etc/passwd f").reads(&["/etc/passwd"]),
        ],
    ),
];

/// Whether an entry is one of these.
pub(crate) fn owns(p: &Program) -> bool {
    PROGRAMS.iter().any(|q| q.names == p.names)
}

/// What a program's own language does that the table must know: the literal shell
/// commands it runs, the files it writes (sed's `w`, awk's `print > "f"`) and reads
/// (sed's `r`), and why a target cannot be known before it runs.
#[derive(Debug, Default, PartialEq, Eq)]
struct Found {
    commands: Vec<String>,
    writes: Vec<String>,
    reads: Vec<String>,
    opaque: Vec<String>,
}

/// The literal shell commands, written and read files of one of these programs' words.
pub fn describe(_p: &'static Program, words: &[&str], d: &mut Description) {
    let name = basename(words.first().copied().unwrap_or_default());
    let args = words.get(1..).unwrap_or_default();
    let found = match name {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(args),
        "sed" | "gsed" => sed(args),
        _ => Found {
            commands: vim(args),
            ..Found::default()
        },
    };
    d.option_code.extend(found.commands);
    d.writes.extend(found.writes);
    d.reads.extend(found.reads);
    d.opaque.extend(found.opaque);
}

/// vim's startup commands: `-c CMD`/`-cCMD`, `--cmd CMD`, `+CMD` (not `+N`, `+/pat`).
fn vim(args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        i += 1;
        let cmd = match w {
            "--" => break,
            "-c" | "--cmd" => {
                i += 1;
                args.get(i - 1).copied()
            }
            w if w.starts_with("-c") => w.get(2..),
            w if w.starts_with('+') => w.get(1..).filter(|c| {
                !c.is_empty()
                    && !c.starts_with('/')
                    && !c.starts_with(|ch: char| ch.is_ascii_digit())
            }),
            _ => None,
        };
        if let Some(cmd) = cmd {
            out.extend(ex_shell_commands(cmd));
        }
    }
    out
}

/// The shell commands of an Ex command line: `!CMD` (also after a range and
/// `silent[!]`) and `r[ead] !CMD`/`w[rite] !CMD`, which take the rest of the line, bars
/// included; and `system('…')`/`systemlist("…")` of a literal. Other commands end at
/// `|`. A command holding `%`, `#` or `!` is left alone: vim puts the file name or the
/// previous command there.
fn ex_shell_commands(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let cmd = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ':');
        let cmd = cmd.trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, '.' | ',' | '$' | ';' | '+' | '-' | ' ' | '\t')
        });
        let cmd = cmd.strip_prefix('%').unwrap_or(cmd);
        let cmd = strip_silent(cmd);
        let shell = if let Some(s) = cmd.strip_prefix('!') {
            Some(s)
        } else {
            let word_end = cmd
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(cmd.len());
            let (word, after) = cmd.split_at(word_end);
            let read = !word.is_empty() && "read".starts_with(word) && word.starts_with('r');
            let write = !word.is_empty() && "write".starts_with(word) && word.starts_with('w');
            let spaced = after.trim_start();
            match spaced.strip_prefix('!') {
                // `:w!file` forces a write; only `:w !cmd` pipes to a command.
                Some(s) if read || (write && spaced.len() < after.len()) => Some(s),
                _ => None,
            }
        };
        if let Some(s) = shell {
            let s = s.trim();
            if !s.is_empty() && !s.contains(['%', '#', '!']) {
                out.push(s.to_string());
            }
            return out;
        }
        let end = cmd.find('|').unwrap_or(cmd.len());
        let (this, next) = cmd.split_at(end);
        out.extend(vim_system_calls(this));
        match next.strip_prefix('|') {
            Some(n) => rest = n,
            None => return out,
        }
    }
}

fn strip_silent(cmd: &str) -> &str {
    for word in ["silent", "sil"] {
        if let Some(rest) = cmd.strip_prefix(word)
            && !rest.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            let rest = rest.strip_prefix('!').unwrap_or(rest);
            return rest.trim_start();
        }
    }
    cmd
}

/// `system('CMD')`, `systemlist("CMD")` of one literal string in a vim expression.
fn vim_system_calls(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in expr.match_indices("system") {
        let after = expr.get(at + "system".len()..).unwrap_or_default();
        let after = after.strip_prefix("list").unwrap_or(after).trim_start();
        let Some(arg) = after.strip_prefix('(').map(str::trim_start) else {
            continue;
        };
        let literal = match arg.chars().next() {
            // Single quotes: `''` is a quote, nothing else is special.
            Some('\'') => single_quoted(arg.get(1..).unwrap_or_default()),
            Some('"') => awk_string(arg.get(1..).unwrap_or_default()),
            _ => None,
        };
        if let Some((text, tail)) = literal
            && tail.trim_start().starts_with(')')
        {
            out.push(text);
        }
    }
    out
}

/// A vim single-quoted string's text after its opening quote, and what follows it.
fn single_quoted(s: &str) -> Option<(String, &str)> {
    let mut text = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().is_some_and(|(_, n)| *n == '\'') {
                chars.next();
                text.push('\'');
                continue;
            }
            return Some((text, s.get(i + 1..)?));
        }
        text.push(c);
    }
    None
}

/// A double-quoted string's text after its opening quote (awk's escapes, which vim's
/// share for these), and what follows it. An escape not listed makes it no literal.
fn awk_string(s: &str) -> Option<(String, &str)> {
    let mut text = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((text, s.get(i + 1..)?)),
            '\\' => match chars.next()?.1 {
                'n' => text.push('\n'),
                't' => text.push('\t'),
                c @ ('"' | '\\' | '/') => text.push(c),
                _ => return None,
            },
            '\n' => return None,
            c => text.push(c),
        }
    }
    None
}

/// awk's program text (the first operand, or `-e`/`--source` values; none with `-f`)
/// and what it runs and writes.
fn awk(args: &[&str]) -> Found {
    let mut programs: Vec<&str> = Vec::new();
    let mut file = false;
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        i += 1;
        match w {
            "--" => break,
            "-f" | "--file" => {
                file = true;
                i += 1;
            }
            "-e" | "--source" => {
                programs.extend(args.get(i).copied());
                i += 1;
            }
            "-F" | "-v" | "--field-separator" | "--assign" | "-W" => i += 1,
            w if w.starts_with("--source=") => programs.extend(w.get(9..)),
            w if w.starts_with("--file=") || (w.starts_with("-f") && w.len() > 2) => file = true,
            w if w.starts_with('-') && w.len() > 1 => {}
            _ => {
                i -= 1;
                break;
            }
        }
    }
    if programs.is_empty() && !file {
        programs.extend(args.get(i).copied());
    }
    let mut found = Found::default();
    for p in programs {
        found.commands.extend(awk_commands(p));
        awk_outputs(p, &mut found);
    }
    found
}

/// The files an awk program writes: `print > "f"`, `printf … >> "f"` of a literal
/// string, taken as written (bash does not touch it; awk opens it as given). A `>` is
/// a redirection only in a `print`/`printf` statement outside parentheses; elsewhere
/// (`$3 > 100`, `if (x > 1)`, `print (a > b)`) it compares. A redirection whose target
/// is not a literal (`> $2`, `> name`) is known only when it runs: opaque.
fn awk_outputs(program: &str, found: &mut Found) {
    let bytes = program.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    let mut depth = 0usize;
    let mut printing = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b';' | b'\n' | b'{' | b'}' => {
                printing = false;
                depth = 0;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = i - 1;
                while bytes
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    i += 1;
                }
                let word = program.get(start..i).unwrap_or_default();
                let after_name = start == 0 || bytes.get(start - 1).is_none_or(|c| *c != b'$');
                if depth == 0 && after_name && matches!(word, "print" | "printf") {
                    printing = true;
                }
            }
            b'>' if printing && depth == 0 => {
                if bytes.get(i) == Some(&b'>') {
                    i += 1;
                }
                let rest = program.get(i..).unwrap_or_default().trim_start();
                match rest.strip_prefix('"').and_then(awk_string) {
                    Some((target, _)) => found.writes.push(target),
                    None => found.opaque.push(
                        "awk writes to a file whose name is known only when it runs".to_string(),
                    ),
                }
            }
            _ => {}
        }
    }
}

/// The literal strings an awk program runs: `system("…")`, `| "…"` (print, printf,
/// close aside) and `"…" | getline`.
fn awk_commands(program: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(off) = program.get(at..).and_then(|r| r.find('"')) {
        let start = at + off;
        let Some((text, tail)) = awk_string(program.get(start + 1..).unwrap_or_default()) else {
            return out;
        };
        at = program.len() - tail.len();
        let before = program.get(..start).unwrap_or_default().trim_end();
        let after = tail.trim_start();
        let system = before
            .strip_suffix('(')
            .is_some_and(|b| b.trim_end().ends_with("system"))
            && after.starts_with(')');
        let piped_to = (before.ends_with('|') && !before.ends_with("||")) || before.ends_with("|&");
        let piped_to = piped_to && (after.is_empty() || after.starts_with([';', '}', '\n', ')']));
        let getline = after
            .strip_prefix("|&")
            .or_else(|| after.strip_prefix('|'))
            .is_some_and(|a| a.trim_start().starts_with("getline"))
            && (before.is_empty() || before.ends_with(['{', ';', '(', '\n', '=', ',', '!']));
        if system || piped_to || getline {
            out.push(text);
        }
    }
    out
}

/// sed's scripts (`-e`/`--expression` values, else the first operand; none with `-f`
/// alone) and what they run, write and read.
fn sed(args: &[&str]) -> Found {
    let mut scripts: Vec<&str> = Vec::new();
    let mut file = false;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut ended = false;
    while let Some(&w) = args.get(i) {
        i += 1;
        if ended || !w.starts_with('-') || w == "-" {
            operands.push(w);
            continue;
        }
        if w == "--" {
            ended = true;
        } else if let Some(long) = w.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            let takes = |full: &str| !name.is_empty() && full.starts_with(name);
            if takes("expression") {
                scripts.extend(value.or_else(|| {
                    i += 1;
                    args.get(i - 1).copied()
                }));
            } else if takes("file") {
                file = true;
                if value.is_none() {
                    i += 1;
                }
            } else if takes("line-length") && value.is_none() {
                i += 1;
            }
        } else {
            // A cluster: `e`, `f` and `l` take the rest or the next word, `i` a suffix.
            for (pos, c) in w.char_indices().skip(1) {
                let rest = w.get(pos + 1..).unwrap_or_default();
                let value = || {
                    if rest.is_empty() {
                        args.get(i).copied()
                    } else {
                        Some(rest)
                    }
                };
                match c {
                    'e' | 'f' | 'l' => {
                        let v = value();
                        if rest.is_empty() {
                            i += 1;
                        }
                        if c == 'e' {
                            scripts.extend(v);
                        }
                        file |= c == 'f';
                        break;
                    }
                    'i' => break,
                    _ => {}
                }
            }
        }
    }
    if scripts.is_empty() && !file {
        scripts.extend(operands.first().copied());
    }
    let script = scripts.join("\n");
    sed_script(&script)
}

/// The commands of a sed script's `e CMD` (to the end of its line) and the literal
/// replacement of an `s` with the `e` flag, which sed runs as the line it makes (the
/// whole command when the match is the whole line). A replacement with `&`, `\1` or a
/// case escape depends on the input: left alone. Also the files of `w`/`W` and the `w`
/// flag of `s` (written; `/dev/stdout` and `/dev/stderr` are GNU sed's own streams) and
/// of `r`/`R` (read): the file name is the rest of the line, leading blanks dropped.
fn sed_script(script: &str) -> Found {
    let mut found = Found::default();
    let out = &mut found.commands;
    let chars: Vec<char> = script.chars().collect();
    let mut p = 0;
    let line_end = |from: usize| {
        chars
            .iter()
            .skip(from)
            .position(|c| *c == '\n')
            .map_or(chars.len(), |n| from + n)
    };
    let text =
        |a: usize, b: usize| -> String { chars.get(a..b).unwrap_or_default().iter().collect() };
    while p < chars.len() {
        p = skip_address(&chars, p);
        let Some(&c) = chars.get(p) else { break };
        p += 1;
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' => {}
            'r' | 'R' | 'w' | 'W' => {
                let end = line_end(p);
                let file = text(p, end);
                let file = file.trim_start();
                if !file.is_empty() {
                    let list = if matches!(c, 'w' | 'W') {
                        &mut found.writes
                    } else {
                        &mut found.reads
                    };
                    if !matches!(file, "/dev/stdout" | "/dev/stderr") {
                        list.push(file.to_string());
                    }
                }
                p = end;
            }
            '#' | ':' | 'a' | 'i' | 'c' => p = line_end(p),
            'b' | 't' | 'T' => {
                while chars.get(p).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    p += 1;
                }
            }
            'e' => {
                let end = line_end(p);
                let cmd = text(p, end);
                let cmd = cmd.trim();
                if !cmd.is_empty() {
                    out.push(cmd.to_string());
                }
                p = end;
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(p) else { break };
                let (_, after_re) = delimited(&chars, p + 1, delim);
                let (repl, after_repl) = delimited(&chars, after_re, delim);
                p = after_repl;
                if c == 'y' {
                    continue;
                }
                let mut run = false;
                while let Some(&f) = chars.get(p) {
                    match f {
                        'w' => {
                            let end = line_end(p + 1);
                            let file = text(p + 1, end);
                            let file = file.trim_start();
                            if !file.is_empty() && !matches!(file, "/dev/stdout" | "/dev/stderr") {
                                found.writes.push(file.to_string());
                            }
                            p = end;
                            break;
                        }
                        'e' => run = true,
                        ';' | '\n' | '}' => break,
                        _ => {}
                    }
                    p += 1;
                }
                if run && let Some(cmd) = literal_replacement(&repl, delim) {
                    out.push(cmd);
                }
            }
            _ => {
                // One-letter commands (`p`, `d`, `q 5`…): their digits are skipped.
                while chars.get(p).is_some_and(char::is_ascii_digit) {
                    p += 1;
                }
            }
        }
    }
    found
}

/// Past a sed address or address range (`1`, `$`, `/re/`, `\,re,`, `1,/x/`, `0~2`).
fn skip_address(chars: &[char], mut p: usize) -> usize {
    for _ in 0..2 {
        while chars.get(p).is_some_and(|c| *c == ' ' || *c == '\t') {
            p += 1;
        }
        match chars.get(p) {
            Some(c) if c.is_ascii_digit() || *c == '$' || *c == '+' || *c == '~' => {
                while chars
                    .get(p)
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '$' | '+' | '~'))
                {
                    p += 1;
                }
            }
            Some('/') => p = delimited(chars, p + 1, '/').1,
            Some('\\') => {
                if let Some(&d) = chars.get(p + 1) {
                    p = delimited(chars, p + 2, d).1;
                }
            }
            _ => return p,
        }
        // `I`/`M` flags after a regex address.
        while chars.get(p).is_some_and(|c| matches!(c, 'I' | 'M')) {
            p += 1;
        }
        if chars.get(p) == Some(&',') {
            p += 1;
        } else {
            return p;
        }
    }
    p
}

/// The raw text up to the next unescaped `delim` from `p`, and the index after it.
fn delimited(chars: &[char], mut p: usize, delim: char) -> (String, usize) {
    let mut out = String::new();
    while let Some(&c) = chars.get(p) {
        if c == '\\' {
            out.push(c);
            if let Some(&n) = chars.get(p + 1) {
                out.push(n);
            }
            p += 2;
            continue;
        }
        p += 1;
        if c == delim {
            return (out, p);
        }
        out.push(c);
    }
    (out, p)
}

/// A replacement's text when it holds no reference to the input (`&`, `\1`…) or case
/// escape: `\DELIM`, `\\`, `\&` and `\n` decoded.
fn literal_replacement(raw: &str, delim: char) -> Option<String> {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '&' => return None,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                c if c == delim || c == '\\' || c == '&' || c == '/' => out.push(c),
                '\n' => out.push('\n'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    (!out.trim().is_empty()).then_some(out)
}

/// Programs that read their program from a file named by an option (`make -f F`, `awk
/// -f F`, `sed -f F`), with the option spellings.
const PROGRAM_FILE_OPTIONS: &[(&[&str], &[&str])] = &[
    (&["make", "gmake"], &["-f", "--file", "--makefile"]),
    (
        &["awk", "gawk", "mawk", "nawk", "busybox-awk"],
        &["-f", "--file"],
    ),
    (&["sed", "gsed"], &["-f", "--file"]),
];

/// The names a program file is its input by (`-` is stdin to make, awk and sed).
const INPUT_FILES: &[&str] = &["-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"];

/// Whether the program reads its program (a makefile, an awk or sed script) from its
/// input: `make -f -`, `make -f /dev/stdin`, `awk -f /dev/stdin`. That program is not in
/// the command's words, like `bash`'s when fed a here-document.
pub fn program_from_input(words: &[&str]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let name = basename(first);
    let Some((_, options)) = PROGRAM_FILE_OPTIONS
        .iter()
        .find(|(names, _)| names.contains(&name))
    else {
        return false;
    };
    let mut values: Vec<&str> = Vec::new();
    let mut i = 1;
    while let Some(&w) = words.get(i) {
        i += 1;
        if w == "--" {
            break;
        }
        if let Some((opt, v)) = w.split_once('=')
            && opt.starts_with("--")
            && options.contains(&opt)
        {
            values.push(v);
        } else if options.contains(&w) {
            values.extend(words.get(i).copied());
            i += 1;
        } else if !w.starts_with("--")
            && let Some(cluster) = w.strip_prefix('-')
            && let Some(at) = cluster.find('f')
        {
            // `-sf -`, `-f-`: the letters after `f` are its value, else the next word.
            let rest = cluster.get(at + 1..).unwrap_or_default();
            if rest.is_empty() {
                values.extend(words.get(i).copied());
                i += 1;
            } else {
                values.push(rest);
            }
        }
    }
    values.iter().any(|v| INPUT_FILES.contains(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn programs_read_from_the_input() {
        assert!(program_from_input(&w("make -f /dev/stdin")));
        assert!(program_from_input(&w("make -sf - all")));
        assert!(program_from_input(&w("make --file=-")));
        assert!(program_from_input(&w("gawk -f /dev/stdin data")));
        assert!(program_from_input(&w("sed -f - a.txt")));
        assert!(!program_from_input(&w("make -f build.mk")));
        assert!(!program_from_input(&w("make test")));
        assert!(!program_from_input(&w("awk -F - '{print}'")));
    }
}
