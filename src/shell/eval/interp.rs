//! Interpreter one-liners (`python -c`, `perl -e`, `ruby -e`, `node -e`, `php -r`,
//! `lua -e`): the shell-outs whose argument is a literal string, as bash code to
//! analyse. A string handed to a shell (`os.system("…")`) is that code; a literal argv
//! (`subprocess.run(["rm", "-rf", "/"])`, `spawn("rm", ["-rf", "/"])`) is quoted into
//! one command. Everything else in the program stays "runs inline code" and asks.

/// The code option of each interpreter family.
fn code_flags(program: &str) -> Option<&'static [&'static str]> {
    let base = program.rsplit('/').next().unwrap_or(program);
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "python" | "pypy" => &["-c"],
        "perl" => &["-e", "-E"],
        "ruby" => &["-e"],
        "node" | "nodejs" => &["-e", "--eval", "-p", "--print"],
        "php" => &["-r"],
        "lua" | "luajit" => &["-e"],
        _ => return None,
    })
}

/// Whether a command word names an interpreter whose one-liners are read here.
pub fn is_interpreter(program: &str) -> bool {
    code_flags(program).is_some()
}

/// The inline program of an interpreter command line, if it has one.
pub fn inline_program(argv: &[String]) -> Option<&str> {
    let (first, rest) = argv.split_first()?;
    let flags = code_flags(first)?;
    let mut it = rest.iter();
    while let Some(w) = it.next() {
        if flags.contains(&w.as_str()) {
            return it.next().map(String::as_str);
        }
        if !w.starts_with('-') || w == "-" || w == "--" {
            return None;
        }
    }
    None
}

/// Whether double-quoted strings interpolate in this interpreter (then only
/// single-quoted ones, or double-quoted ones without `$`/`@`/`#{`, are literal).
fn interpolates(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    base.starts_with("perl") || base.starts_with("ruby") || base.starts_with("php")
}

/// Calls whose first argument is run: by a shell when it is one string, directly when
/// it is a list (or several strings).
const CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "system",
    "exec",
    "execSync",
    "spawn",
    "spawnSync",
    "execFile",
    "execFileSync",
    "shell_exec",
    "passthru",
    "proc_open",
    "popen",
    "os.execute",
    "io.popen",
    "qx",
    "%x",
    // Python's `subprocess` functions under another name (`import subprocess as s;
    // s.call(…)`, `from subprocess import check_output`). The `os.exec*`/`posix_spawn*`
    // family is `PATH_FIRST`.
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "Popen",
];

/// Calls whose first string is the path of the program and the rest its argv (read
/// like `CALLS`, the path dropped).
const PATH_FIRST: &[&str] = &[
    "execv",
    "execvp",
    "execve",
    "execvpe",
    "execl",
    "execlp",
    "execle",
    "execlpe",
    "posix_spawn",
    "posix_spawnp",
];

/// The bash commands the program's literal shell-outs run.
pub fn shell_outs(argv: &[String]) -> Vec<String> {
    let Some(program) = inline_program(argv) else {
        return Vec::new();
    };
    let interp = argv.first().map(|s| interpolates(s)).unwrap_or(false);
    let mut out = Vec::new();
    let b = program.as_bytes();
    let mut i = 0;
    while i < b.len() && out.len() < 16 {
        // Backticks (Perl, Ruby, PHP): their text is a shell command.
        if b.get(i) == Some(&b'`') && interp {
            if let Some(end) = program.get(i + 1..).and_then(|r| r.find('`')) {
                let code = program.get(i + 1..i + 1 + end).unwrap_or_default();
                if !code.contains(['$', '@']) && !code.contains("#{") {
                    out.push(code.to_string());
                }
                i += end + 2;
                continue;
            }
            break;
        }
        let rest = program.get(i..).unwrap_or_default();
        // The longest name that matches here (`execSync` before `exec`).
        let call = CALLS
            .iter()
            .chain(PATH_FIRST)
            .filter(|c| {
                rest.starts_with(**c)
                    && program
                        .get(..i)
                        .and_then(|p| p.chars().last())
                        .is_none_or(|p| !(p.is_alphanumeric() || p == '_'))
            })
            .max_by_key(|c| c.len());
        if let Some(call) = call {
            let after = rest.get(call.len()..).unwrap_or_default();
            let found = if matches!(*call, "qx" | "%x") {
                quoted_command(after)
            } else {
                call_argument(after, interp, PATH_FIRST.contains(call))
            };
            if let Some(cmd) = found {
                out.push(cmd);
            }
            i += call.len();
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Perl's `qx{…}` (any delimiter) and Ruby's `%x(…)`: the text between the
/// delimiters is the command; `None` where it interpolates (`$`, `@`, `#{`).
fn quoted_command(after: &str) -> Option<String> {
    let open = after.chars().next()?;
    let close = match open {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        c if c.is_ascii_punctuation() => c,
        _ => return None,
    };
    let inner = after.get(open.len_utf8()..)?;
    let code = inner.get(..inner.find(close)?)?;
    (!code.contains(['$', '@']) && !code.contains("#{") && !code.trim().is_empty())
        .then(|| code.to_string())
}

/// What follows a call's name: `(args…)`, or Perl/Ruby's bare `system "…"`. With
/// `path_first` (`os.execv(PATH, [ARGV…])`) the first string names the program's file
/// and the others are the command.
fn call_argument(after: &str, interp: bool, path_first: bool) -> Option<String> {
    let t = after.trim_start();
    let (open, close) = match t.chars().next()? {
        '(' => ('(', ')'),
        '{' => ('{', '}'),
        '"' | '\'' => {
            let (s, _) = string_literal(t, interp)?;
            return Some(s);
        }
        _ => return None,
    };
    let inner = t.strip_prefix(open)?.trim_start();
    let mut items: Vec<String> = Vec::new();
    let mut rest = inner;
    let mut list = false;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('[') {
            list = true;
            rest = r;
            continue;
        }
        if rest.starts_with(']') {
            break;
        }
        match rest.chars().next()? {
            '"' | '\'' => {
                let (s, r) = string_literal(rest, interp)?;
                items.push(s);
                rest = r.trim_start();
                match rest.chars().next()? {
                    ',' => rest = rest.get(1..)?,
                    c if c == close || c == ']' => {
                        if c == close && !list {
                            break;
                        }
                    }
                    _ => break,
                }
            }
            _ => break,
        }
    }
    let _ = open;
    if path_first && items.len() >= 2 {
        items.remove(0);
        return Some(super::fields::quote_words(&items));
    }
    match items.as_slice() {
        [] => None,
        [one] if !list => Some(one.clone()),
        many => Some(super::fields::quote_words(many)),
    }
}

/// A quoted literal at the start of `s`: its value and the text after it. `None` for
/// interpolated strings and escapes other than the common ones.
fn string_literal(s: &str, interp: bool) -> Option<(String, &str)> {
    let mut cs = s.char_indices();
    let (_, q) = cs.next()?;
    let mut out = String::new();
    while let Some((i, c)) = cs.next() {
        if c == q {
            return Some((out, s.get(i + 1..)?));
        }
        if c == '\\' {
            let (_, e) = cs.next()?;
            match e {
                'n' if q == '"' || !interp => out.push('\n'),
                't' if q == '"' || !interp => out.push('\t'),
                '\\' | '\'' | '"' => out.push(e),
                _ => return None,
            }
            continue;
        }
        if interp && q == '"' && matches!(c, '$' | '@' | '#') {
            return None;
        }
        out.push(c);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outs(argv: &[&str]) -> Vec<String> {
        shell_outs(&argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn literal_shell_outs_are_found() {
        assert_eq!(
            outs(&["python3", "-c", "import os; os.system('rm -rf /')"]),
            ["rm -rf /"]
        );
        assert_eq!(
            outs(&[
                "python",
                "-c",
                "import subprocess; subprocess.run(['rm', '-rf', '/'])"
            ]),
            ["rm -rf /"]
        );
        assert_eq!(
            outs(&[
                "python3",
                "-c",
                "import subprocess as s; s.call(\"mkfs.ext4 /dev/sdb\", shell=True)"
            ]),
            ["mkfs.ext4 /dev/sdb"]
        );
        assert_eq!(
            outs(&[
                "python3",
                "-c",
                "import os; os.execv('/bin/rm', ['rm', '-rf', '/'])"
            ]),
            ["rm -rf /"]
        );
        assert_eq!(
            outs(&[
                "python3",
                "-c",
                "import os; os.execlp('rm', 'rm', '-rf', '/')"
            ]),
            ["rm -rf /"]
        );
        assert_eq!(outs(&["perl", "-e", "qx{rm -rf /}"]), ["rm -rf /"]);
        assert_eq!(outs(&["ruby", "-e", "%x(reboot)"]), ["reboot"]);
        assert!(outs(&["perl", "-e", "qx{rm $x}"]).is_empty());
        assert_eq!(
            outs(&["perl", "-e", "system(\"shutdown -h now\")"]),
            ["shutdown -h now"]
        );
        assert_eq!(outs(&["perl", "-e", "system \"reboot\""]), ["reboot"]);
        assert_eq!(outs(&["perl", "-e", "`halt`"]), ["halt"]);
        assert_eq!(
            outs(&["perl", "-e", "system(\"rm $x\")"]),
            Vec::<String>::new()
        );
        assert_eq!(outs(&["ruby", "-e", "system('reboot')"]), ["reboot"]);
        assert_eq!(
            outs(&[
                "node",
                "-e",
                "require('child_process').execSync('rm -rf /')"
            ]),
            ["rm -rf /"]
        );
        assert_eq!(
            outs(&[
                "node",
                "-e",
                "require('child_process').spawn('rm', ['-rf', '/'])"
            ]),
            ["rm -rf /"]
        );
        assert_eq!(outs(&["php", "-r", "system('halt');"]), ["halt"]);
        assert_eq!(outs(&["lua", "-e", "os.execute('poweroff')"]), ["poweroff"]);
        assert_eq!(outs(&["python3", "-c", "print('system(\"x\")')"]), ["x"]);
        assert!(outs(&["python3", "script.py"]).is_empty());
        assert!(outs(&["python3", "-c", "print(1)"]).is_empty());
    }
}
