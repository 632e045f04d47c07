//! The program oracle's edit commands: the in-project edits the analysis may allow
//! silently (`mkdir`, `touch`, `tee`, `cp`, `mv`, `ln -s`, `rm`, `rmdir`, `chmod`,
//! `sed -i`, redirections of verified programs into project files) and `git add`, each
//! option the analysis accepts and the look-alikes that must ask (`chmod u+s`, `chmod
//! -R`, `sed -i` scripts that write or run, or read a secret with `r`, text commands),
//! over the hostile world's operands: plain files and new names, secrets, the links
//! into HOME and paths through them, protected paths, nested git directories,
//! `../outside`, `~/x`, `/tmp/x`, and unquoted patterns; `rm -r` of the tracked `src`
//! and of `docs`, whose links git does not track.
//!
//! Owns the options (as data, read from `programs::edits` and the GNU programs'
//! `--help`; nothing private is imported), the operand pools and the shapes: first a
//! systematic pass (every option, mode, script and form once; every hostile operand
//! once in each program's written place), then random commands. Deterministic by seed
//! (its own stream, so the read-only commands of a seed do not move). Every command
//! runs over a writable copy of the world (`Generated::writable`).

use crate::oracle::generate::Rng;

use super::generate::{Generated, installed};
use super::world::OPERANDS;

/// One edit entry: its label (coverage and report key), the program, and the options
/// the generator exercises (coverage keys), the look-alikes that must ask included.
pub struct EditEntry {
    pub label: &'static str,
    pub program: &'static str,
    pub options: &'static [&'static str],
}

/// The entries, as data.
pub const ENTRIES: &[EditEntry] = &[
    EditEntry {
        label: "edit mkdir",
        program: "mkdir",
        options: &["-p", "-v", "--parents", "--verbose", "-m"],
    },
    EditEntry {
        label: "edit touch",
        program: "touch",
        options: &["-a", "-c", "-m", "--no-create", "-d"],
    },
    EditEntry {
        label: "edit tee",
        program: "tee",
        options: &["-a", "-i", "-p", "--append", "--ignore-interrupts"],
    },
    EditEntry {
        label: "edit cp",
        program: "cp",
        options: &[
            "-r",
            "-R",
            "-a",
            "-p",
            "-v",
            "-n",
            "-f",
            "-u",
            "-T",
            "--recursive",
            "--archive",
            "--verbose",
            "--no-clobber",
            "--force",
            "--update",
            "--no-target-directory",
            "-L",
            "-s",
            "-l",
            "-t",
        ],
    },
    EditEntry {
        label: "edit mv",
        program: "mv",
        options: &[
            "-f",
            "-n",
            "-v",
            "-u",
            "-T",
            "--force",
            "--no-clobber",
            "--verbose",
            "--update",
            "--no-target-directory",
            "-b",
            "-t",
        ],
    },
    EditEntry {
        label: "edit ln -s",
        program: "ln",
        options: &[
            "-s",
            "-f",
            "-n",
            "-v",
            "-T",
            "--symbolic",
            "--force",
            "--no-dereference",
            "--verbose",
            "--no-target-directory",
            "-r",
        ],
    },
    EditEntry {
        label: "edit rmdir",
        program: "rmdir",
        options: &[
            "-p",
            "-v",
            "--parents",
            "--verbose",
            "--ignore-fail-on-non-empty",
        ],
    },
    EditEntry {
        label: "edit rm",
        program: "rm",
        options: &[
            "-f",
            "-d",
            "-v",
            "--force",
            "--dir",
            "--verbose",
            "-r",
            "-R",
            "-rf",
        ],
    },
    EditEntry {
        label: "edit chmod",
        program: "chmod",
        options: &[
            "-c",
            "-f",
            "-v",
            "--changes",
            "--silent",
            "--quiet",
            "--verbose",
            "-R",
        ],
    },
    EditEntry {
        label: "edit sed -i",
        program: "sed",
        options: &[
            "-i",
            "--in-place",
            "-E",
            "-r",
            "-n",
            "-s",
            "-z",
            "--regexp-extended",
            "--quiet",
            "--silent",
            "--separate",
            "--null-data",
            "-e",
            "--expression",
            "-i.bak",
        ],
    },
    EditEntry {
        label: "edit git add",
        program: "git",
        options: &["FILE", "DIR", "-A", "-u", ".", "--", "-f"],
    },
    EditEntry {
        label: "edit redirect",
        program: "bash",
        options: &[
            "echo >",
            "echo >>",
            "cat >",
            "printf >",
            "cat > <<EOF",
            "&& >",
        ],
    },
];

/// Plain project files (they exist).
const FILES: &[&str] = &[
    "a.txt",
    "b.txt",
    "notes.txt",
    "README.md",
    "src/main.rs",
    "data.json",
];

/// New names inside the project (they do not exist yet).
const NEW: &[&str] = &[
    "new.txt",
    "notes.md",
    "out.txt",
    "src/new.rs",
    "src/x",
    "src/x/y",
    "newdir",
    "docs/new.md",
];

/// Empty directories `rmdir` removes: the project's, and HOME's through a link.
const EMPTY: &[&str] = &[
    "empty/inner",
    "empty/inner/",
    "empty",
    "docs/homedir/sub",
    "docs/homedir",
];

/// Directories of the project.
const DIRS: &[&str] = &["src", "docs", "notes", "vendor", "vendor/dep", "old"];

/// Names an edit must not write silently: protected paths, nested git directories,
/// paths through the links into HOME, outside the project, secret-shaped names.
const HOSTILE: &[&str] = &[
    ".git/hooks/pre-commit",
    ".git/config",
    ".git/HEAD",
    ".git/info/attributes",
    ".claude/settings.json",
    ".khaelor/config.toml",
    ".github/workflows/x.yml",
    ".husky/pre-commit",
    ".gitattributes",
    "vendor/dep/.git/config",
    "vendor/dep/.git/hooks/post-checkout",
    "hostile.git/config",
    "hostile.git/hooks/x",
    "docs/sshdir/new",
    "docs/sshdir/id_rsa",
    "docs/awslink/credentials",
    "docs/awslink/x",
    "pypirc.txt",
    "mycnf.ini",
    "notes/cargo.toml",
    "docs/sshdir",
    "../outside",
    "~/x",
    "~/.bashrc",
    "/tmp/x",
    ".env",
    ".env.local",
    "x.pem",
    "certs/tls.key",
    "config/id_rsa",
    ".ssh/authorized_keys",
    "..",
];

/// Copy and move sources an edit must not take silently.
const HOSTILE_SOURCES: &[&str] = &[
    ".env",
    "docs/sshdir/id_rsa",
    "docs/sshdir",
    "docs/awslink",
    "pypirc.txt",
    "certs",
    "config",
    "~/.ssh/id_rsa",
    "~/.bashrc",
    "../outside",
    "hostile.git",
    "vendor/dep/.git",
    ".git/config",
];

/// Patterns, written unquoted: bash passes the names they match (the hidden ones
/// only under `dotglob`), or the word itself when none does.
const PATTERNS: &[&str] = &[
    "*.txt", "src/*", "docs/*", "*", "notes/*", ".e*", "old/*", "*.md", "src/*.rs", "nomatch*",
];

/// `ln -s` targets.
const LINK_TARGETS: &[&str] = &[
    "a.txt",
    "src",
    "../README.md",
    "~/.bashrc",
    "~/.ssh",
    "/etc/passwd",
    "../..",
    ".env",
    "docs/sshdir",
];

/// chmod modes: plain ones and the special ones that must ask.
const MODES: &[&str] = &[
    "644", "0755", "600", "+x", "u+x,go-w", "a=rX", "g-w", "u+s", "g+s", "+t", "4755", "1777",
    "u=g", "o+rwx",
];

/// `sed -i` scripts: editing ones, those that write, read or run (`w`, `r`, `e`,
/// `s///w`, `s///e`), and the text commands (`a`, `i`, `c`).
const SED_SCRIPTS: &[&str] = &[
    "s/a/b/",
    "s/a/b/g",
    "1d",
    "$d",
    "/KEY/d",
    "y/ab/ba/",
    "2,3s/x/y/I",
    "/^$/d;s/ *$//",
    "w out.txt",
    "1w ~/.bashrc",
    "r ~/.ssh/id_rsa",
    "1r .env",
    "1r b.txt",
    "$r notes.txt",
    "1R a.txt",
    "1r docs/sshdir/id_rsa",
    "1r pypirc.txt",
    "1r /etc/hostname",
    "e id",
    "s/a/b/w out.txt",
    "s/a/id/e",
    "$a\\text",
    "2i foo",
    "1,2c\\bar",
    "/x/a baz",
    "1i\\",
    "$a text\\nmore",
    "a\\",
];

/// The `git add` forms, each with its coverage key.
const GIT_ADD: &[(&str, &str)] = &[
    ("git add a.txt", "FILE"),
    ("git add src", "DIR"),
    ("git add -A", "-A"),
    ("git add -u", "-u"),
    ("git add .", "."),
    ("git add -- a.txt", "--"),
    ("git add -f .env", "-f"),
    ("git add docs/sshdir", "DIR"),
    ("git add -C vendor/dep .", "."),
    ("git -C vendor/dep add lib.txt", "FILE"),
];

/// Quotes a word for bash unless it is plain (`~/` stays unquoted so bash expands it).
fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '.' | '/' | '-' | '+' | ',' | '=' | ':' | '~')
        })
        && (!w.contains('~') || w.starts_with("~/") || w == "~");
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A written operand: mostly plain (files, new names), one in three hostile.
/// The written place, else (in `pct`% of draws) a name of `pool`, else a hostile
/// target; quoted.
fn named_or(rng: &mut Rng, place: Option<&str>, pct: usize, pool: &[&str]) -> String {
    place.map_or_else(
        || {
            quote(if rng.chance(pct) {
                rng.pick(pool)
            } else {
                target(rng)
            })
        },
        quote,
    )
}

fn target(rng: &mut Rng) -> &'static str {
    match rng.below(6) {
        0 | 1 => rng.pick(FILES),
        2 | 3 => rng.pick(NEW),
        _ => rng.pick(HOSTILE),
    }
}

/// A copy or move source: mostly plain, one in four hostile (the world's secrets,
/// directly and through its links, among them).
fn source(rng: &mut Rng) -> &'static str {
    match rng.below(8) {
        0..=3 => rng.pick(FILES),
        4 | 5 => rng.pick(DIRS),
        6 => rng.pick(OPERANDS.secrets),
        _ => rng.pick(HOSTILE_SOURCES),
    }
}

/// A copy or move destination: a new name, a directory, a file, or hostile.
fn dest(rng: &mut Rng) -> &'static str {
    match rng.below(8) {
        0..=2 => rng.pick(NEW),
        3 | 4 => rng.pick(DIRS),
        5 => rng.pick(FILES),
        _ => rng.pick(HOSTILE),
    }
}

fn edit(label: &str, program: &str, command: String, options: Vec<String>) -> Generated {
    Generated {
        writable: true,
        program: program.to_string(),
        entry: label.to_string(),
        command,
        options,
    }
}

/// One command of `entry` using `opts` (coverage keys, spelled as given) and, where
/// the entry writes one place, `place` (else drawn).
fn command(rng: &mut Rng, entry: &EditEntry, opts: &[&str], place: Option<&str>) -> Generated {
    let flags: Vec<String> = opts.iter().map(|o| (*o).to_string()).collect();
    let keys = flags.clone();
    let at = |rng: &mut Rng| quote(place.unwrap_or_else(|| target(rng)));
    let join = |parts: &[String]| -> String {
        parts
            .iter()
            .filter(|p| !p.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let text = match entry.program {
        "mkdir" => {
            let mut f = flags.clone();
            if let Some(m) = f.iter_mut().find(|o| *o == "-m") {
                *m = "-m 700".to_string();
            }
            let mut words = vec!["mkdir".to_string(), f.join(" ")];
            words.push(named_or(rng, place, 50, NEW));
            if rng.chance(15) {
                words.push(quote(rng.pick(NEW)));
            }
            join(&words)
        }
        "touch" => {
            let mut f = flags.clone();
            if let Some(m) = f.iter_mut().find(|o| *o == "-d") {
                *m = "-d 2020-01-01".to_string();
            }
            join(&["touch".to_string(), f.join(" "), at(rng)])
        }
        "tee" => join(&[
            "echo x |".to_string(),
            "tee".to_string(),
            flags.join(" "),
            at(rng),
        ]),
        "cp" | "mv" => {
            let mut f = flags.clone();
            let t = f.iter().position(|o| o == "-t");
            if let Some(i) = t {
                f.remove(i);
            }
            let mut src = vec![if rng.chance(15) {
                rng.pick(PATTERNS).to_string()
            } else {
                quote(source(rng))
            }];
            if rng.chance(15) {
                src.push(quote(rng.pick(FILES)));
            }
            let to = place.map_or_else(|| quote(dest(rng)), quote);
            if t.is_some() {
                join(&[
                    entry.program.to_string(),
                    f.join(" "),
                    "-t".to_string(),
                    to,
                    src.join(" "),
                ])
            } else {
                join(&[entry.program.to_string(), f.join(" "), src.join(" "), to])
            }
        }
        "ln" => {
            let mut f = flags.clone();
            if !f
                .iter()
                .any(|o| o == "-s" || o == "--symbolic" || o.starts_with("-s"))
                && rng.chance(85)
            {
                f.insert(0, "-s".to_string());
            }
            let link = named_or(rng, place, 50, NEW);
            let mut text = join(&[
                "ln".to_string(),
                f.join(" "),
                quote(rng.pick(LINK_TARGETS)),
                link.clone(),
            ]);
            // A write through the link just made.
            if rng.chance(20) {
                text.push_str(&format!(" && echo x > {link}"));
            }
            text
        }
        "rm" => {
            // A recursive removal mostly of a directory (the tracked `src`, the
            // untracked links of `docs`); now and then a pattern.
            let recursive = flags.iter().any(|f| f.contains(['r', 'R']));
            let what = match place {
                Some(p) => quote(p),
                None if rng.chance(20) => rng.pick(PATTERNS).to_string(),
                None if recursive && rng.chance(50) => quote(rng.pick(DIRS)),
                None => quote(target(rng)),
            };
            join(&["rm".to_string(), flags.join(" "), what])
        }
        "rmdir" => {
            let what = match place {
                Some(p) => quote(p),
                None if rng.chance(60) => quote(rng.pick(EMPTY)),
                None => quote(target(rng)),
            };
            join(&["rmdir".to_string(), flags.join(" "), what])
        }
        "chmod" => join(&[
            "chmod".to_string(),
            flags.join(" "),
            quote(rng.pick(MODES)),
            if place.is_none() && rng.chance(20) {
                rng.pick(PATTERNS).to_string()
            } else {
                at(rng)
            },
        ]),
        "sed" => {
            let script = rng.pick(SED_SCRIPTS);
            let mut f = flags.clone();
            if !f.iter().any(|o| o.starts_with("-i") || o == "--in-place") {
                f.insert(0, "-i".to_string());
            }
            let file = named_or(rng, place, 70, FILES);
            if let Some(i) = f.iter().position(|o| o == "-e" || o == "--expression") {
                f.insert(i + 1, quote(script));
                join(&["sed".to_string(), f.join(" "), file])
            } else {
                join(&["sed".to_string(), f.join(" "), quote(script), file])
            }
        }
        "git" => {
            let (form, _) = GIT_ADD
                .iter()
                .find(|(_, k)| opts.first().is_some_and(|o| o == k))
                .or_else(|| GIT_ADD.first())
                .copied()
                .unwrap_or(("git add a.txt", "FILE"));
            match place {
                Some(p) => format!("git add {}", quote(p)),
                None => form.to_string(),
            }
        }
        _ => {
            let f = at(rng);
            match opts.first().copied().unwrap_or("echo >") {
                "echo >>" => format!("echo x >> {f}"),
                "cat >" => format!("cat {} > {f}", quote(rng.pick(FILES))),
                "printf >" => format!("printf y > {f}"),
                "cat > <<EOF" => format!("cat > {f} <<'EOF'\nx\nEOF"),
                "&& >" => format!("mkdir -p {} && echo x > {f}", quote(rng.pick(NEW))),
                _ => format!("echo x > {f}"),
            }
        }
    };
    let program = match (entry.program, opts.first().copied()) {
        ("bash", Some("cat >" | "cat > <<EOF")) => "cat",
        ("bash", Some("&& >")) => "mkdir",
        ("bash", _) => "echo",
        (p, _) => p,
    };
    edit(entry.label, program, text, keys)
}

/// The edit commands of a seed: the systematic pass, then random ones up to `n` in
/// all (the pass is never cut).
pub fn generate(seed: u64, n: usize) -> Vec<Generated> {
    // Its own stream: the read-only commands of `seed` stay what they were.
    let mut rng = Rng::new(seed ^ 0x6564_6974_735f_6f72);
    let entries: Vec<&EditEntry> = ENTRIES.iter().filter(|e| installed(e.program)).collect();
    let mut out: Vec<Generated> = Vec::new();
    for e in &entries {
        // Every option alone, then each hostile operand in the entry's written place.
        for o in e.options {
            out.push(command(&mut rng, e, &[o], None));
        }
        for h in HOSTILE {
            let opt: &[&str] = match e.program {
                "git" => &[],
                "ln" => &["-sf"],
                "bash" => &["echo >"],
                _ => &[],
            };
            out.push(command(&mut rng, e, opt, Some(h)));
        }
    }
    if let Some(e) = ENTRIES.iter().find(|e| e.program == "chmod") {
        for m in MODES {
            out.push(edit(
                e.label,
                "chmod",
                format!("chmod {} a.txt", quote(m)),
                Vec::new(),
            ));
        }
    }
    if let Some(e) = ENTRIES.iter().find(|e| e.program == "sed") {
        for s in SED_SCRIPTS {
            out.push(edit(
                e.label,
                "sed",
                format!("sed -i {} a.txt", quote(s)),
                vec!["-i".to_string()],
            ));
        }
    }
    if let Some(e) = ENTRIES.iter().find(|e| e.program == "git") {
        for (form, key) in GIT_ADD {
            out.push(edit(
                e.label,
                "git",
                (*form).to_string(),
                vec![(*key).to_string()],
            ));
        }
    }
    // The promise's own examples: a copy of a secret through a link, a write through
    // a link just made, good edits.
    for (program, command) in [
        ("cp", "cp docs/sshdir/id_rsa x"),
        ("ln", "ln -sf ~/.bashrc a && echo x > a"),
        ("mkdir", "mkdir -p src/x"),
        ("mv", "mv a.txt b.txt"),
        ("sed", "sed -i 's/a/b/' a.txt"),
        ("sed", "sed -i '1r b.txt' a.txt"),
        ("echo", "echo x > notes.md"),
        ("cp", "cp -r src newdir"),
        ("mv", "mv src newdir"),
        ("ln", "ln -s .env new.txt && echo x > new.txt"),
        ("ln", "ln --force .env b.txt"),
        ("ln", "ln -sf a.txt b.txt"),
        ("rmdir", "rmdir -p empty/inner"),
        ("rmdir", "rmdir docs/homedir/sub"),
        ("rm", "rm -rf src"),
        ("rm", "rm -rf docs"),
        ("rm", "rm -r src/"),
        ("rm", "rm -rf src/*"),
        ("rm", "rm -f *.txt"),
        ("rm", "mv notes.txt src/ && rm -rf src"),
        ("chmod", "chmod +x src/*"),
        ("mv", "mv src/* docs/"),
        ("mv", "mv src/* newdir"),
        ("cp", "cp src/* notes/"),
        ("cp", "cp -r docs/* src/"),
    ] {
        out.push(edit(
            "edit examples",
            program,
            command.to_string(),
            Vec::new(),
        ));
    }
    while out.len() < n && !entries.is_empty() {
        let Some(e) = entries.get(rng.below(entries.len())) else {
            break;
        };
        let count = if e.program == "git" || e.program == "bash" {
            1
        } else {
            rng.below(3)
        };
        let opts: Vec<&str> = (0..count).map(|_| rng.pick(e.options)).collect();
        let mut opts_dedup: Vec<&str> = Vec::new();
        for o in opts {
            if !opts_dedup.contains(&o) {
                opts_dedup.push(o);
            }
        }
        out.push(command(&mut rng, e, &opts_dedup, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_every_option_once() {
        let a = generate(5, 600);
        assert_eq!(a, generate(5, 600));
        assert!(a.iter().all(|g| g.writable));
        for e in ENTRIES {
            if !installed(e.program) {
                continue;
            }
            for o in e.options {
                assert!(
                    a.iter()
                        .any(|g| g.entry == e.label && g.options.iter().any(|k| k == o)),
                    "{} {o} never generated",
                    e.label
                );
            }
        }
    }
}
