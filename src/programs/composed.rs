//! Composed readers: a verified lister whose names are handed to a verified reader
//! through `xargs` (`find src -print0 | xargs -0 wc -l`, `rg --files -0 | xargs -0 grep
//! -l x`). The composition reads every file the lister's walk can reach, plus what the
//! reader's fixed words read; it is verified only when the names reach the reader
//! exactly as names.
//!
//! Exactly as names means: NUL-separated on both sides (`-print0`/`-0`/`--null` and
//! `xargs -0`), since without it xargs splits a name at blanks and quotes and a file
//! called `x /home/u/.ssh/id_rsa` hands on a path the walk never reached; no `xargs`
//! option that reads items from a file (`-a`), replaces inside words (`-I`), changes
//! the separator (`-d`) or talks to a terminal; and a name never starts with `-` (the
//! reader would take it as an option: a file called `--files0-from=.env` makes `wc`
//! read `.env`). `find` and a lister given a path prefix every name with that path; a
//! lister that prints bare names (`rg --files` with no path) is verified only when the
//! caller has seen no entry of the directory it walks starting with `-`
//! (`Producer::bare`).
//!
//! Works on words only (unquoted, literal); knows nothing of bash, paths or rules. The
//! caller checks that the two commands are joined by one `|` with nothing else feeding
//! xargs' input.

use super::options::parse;
use super::readonly::{Verified, exec_program, verify};

/// A lister whose standard output is names of the files it walks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Producer {
    /// The directories walked (as the words spell them, relative to the cwd).
    pub roots: Vec<String>,
    /// The walk enters symlinked directories.
    pub follow: bool,
    /// The walk skips hidden entries (`rg`, `fd` by default).
    pub skips_hidden: bool,
    /// Each name ends with a NUL, not a newline.
    pub nul: bool,
    /// The names are printed without the root word before them (`rg --files` with no
    /// path): a name in the root directory may start with `-`.
    pub bare: bool,
}

/// What `words` (a verified command) print, when that is names of the files of a walk.
/// `None`: anything else (contents, formats of its own, `find -printf`, `-ls`).
pub fn producer(words: &[&str]) -> Option<Producer> {
    let name = *words.first()?;
    let rest = words.get(1..).unwrap_or_default();
    let v = verify(words)?;
    match name {
        "find" => {
            // Only the default action or `-print`/`-print0`, not both, and no
            // `-printf`/`-ls` (formats that print link targets and owners).
            let actions = find_primaries(rest);
            let print = actions.contains(&"-print");
            let print0 = actions.contains(&"-print0");
            if (print && print0)
                || actions
                    .iter()
                    .any(|w| matches!(*w, "-printf" | "-ls" | "-exec"))
            {
                return None;
            }
            let roots = find_roots(rest);
            Some(Producer {
                roots,
                follow: v.follow,
                skips_hidden: false,
                nul: print0,
                bare: false,
            })
        }
        "rg" => {
            let parsed = parse(super::readonly::grammar_of("rg")?, words, 1);
            let listing = parsed.has("files") || parsed.has("files-with-matches");
            // Only options that choose which files are listed, never how a name is
            // printed (`--path-separator`, `--json`, `--vimgrep`, colours, counts).
            let shapes = parsed.found.iter().all(|f| {
                f.opt.long.is_some_and(|l| RG_PRODUCER_OPTIONS.contains(&l))
                    || f.opt.short == Some('0')
            });
            if !listing || !shapes || parsed.has("files-without-match") {
                return None;
            }
            let mut ops: Vec<&str> = parsed
                .operands
                .iter()
                .filter_map(|&i| words.get(i).copied())
                .collect();
            if !parsed.has("files") && !parsed.has("regexp") && !ops.is_empty() {
                ops.remove(0);
            }
            let bare = ops.is_empty();
            let roots = if bare {
                vec![".".to_string()]
            } else {
                ops.iter().map(|s| (*s).to_string()).collect()
            };
            Some(Producer {
                roots,
                follow: v.follow,
                skips_hidden: v.skips_hidden,
                nul: parsed.has("null"),
                bare,
            })
        }
        _ => None,
    }
}

/// rg's options a lister may carry (see `producer`).
const RG_PRODUCER_OPTIONS: &[&str] = &[
    "files",
    "files-with-matches",
    "null",
    "glob",
    "iglob",
    "glob-case-insensitive",
    "hidden",
    "no-hidden",
    "follow",
    "no-follow",
    "no-ignore",
    "no-ignore-dot",
    "no-ignore-exclude",
    "no-ignore-files",
    "no-ignore-global",
    "no-ignore-parent",
    "no-ignore-vcs",
    "no-require-git",
    "type",
    "type-not",
    "max-depth",
    "sort",
    "sortr",
    "ignore-case",
    "smart-case",
    "case-sensitive",
    "fixed-strings",
    "regexp",
    "word-regexp",
    "line-regexp",
    "one-file-system",
    "no-messages",
    "threads",
    "max-filesize",
    "unrestricted",
    "no-config",
    "multiline",
    "pcre2",
];

/// `find`'s expression words that are primaries or operators, not the values of the
/// primaries that take one (`-name -print0` names a file `-print0`).
fn find_primaries<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut words = rest.iter();
    while let Some(w) = words.next() {
        out.push(*w);
        if super::readonly::FIND_ONE_VALUE.contains(w) {
            words.next();
        }
    }
    out
}

/// `find`'s start paths (`.` when none), after its leading `-H`/`-L`/`-P`.
fn find_roots(rest: &[&str]) -> Vec<String> {
    let mut roots: Vec<String> = rest
        .iter()
        .skip_while(|w| matches!(**w, "-H" | "-L" | "-P"))
        .take_while(|w| {
            !w.starts_with('-') && !matches!(**w, "!" | "(" | ")" | "\\(" | "\\)" | ",")
        })
        .map(|w| (*w).to_string())
        .collect();
    if roots.is_empty() {
        roots.push(".".to_string());
    }
    roots
}

/// `xargs ARGS… PROG WORDS…` fed the names `from` prints: what it reads, or `None`
/// when it is not verified (see the module doc). The walk is read file by file (hidden
/// names as the lister skips them, symlinked directories entered where the lister or
/// the reader enters them); when xargs may run PROG with no name at all (no `-r`),
/// what PROG WORDS read alone is read too (`xargs -0 grep -r x` searches `.` then).
pub fn xargs(words: &[&str], from: &Producer) -> Option<Verified> {
    let grammar = super::lookup("xargs")?.grammar;
    let parsed = parse(&grammar, words, 1);
    if !parsed.unknown.is_empty() || parsed.missing_value {
        return None;
    }
    let mut nul = false;
    let mut no_run_if_empty = false;
    for f in &parsed.found {
        match (f.opt.short, f.opt.long) {
            (Some('0'), _) | (_, Some("null")) => nul = true,
            (Some('r'), _) | (_, Some("no-run-if-empty")) => no_run_if_empty = true,
            // How many names per run, how many runs at once, shown or not: the same
            // names reach the same reader.
            (Some('n' | 'P' | 's' | 't' | 'x'), _)
            | (_, Some("max-args" | "max-procs" | "max-chars" | "verbose" | "exit")) => {}
            _ => return None,
        }
    }
    if !nul || !from.nul {
        return None;
    }
    let inner: Vec<&str> = match words.get(parsed.end..) {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => vec!["echo"],
    };
    let prog = *inner.first()?;
    // A literal `{}` among the reader's words is a file of that name to xargs (no
    // `-I`), which the marker below would hide.
    if !exec_program(prog) || inner.iter().any(|w| w.contains("{}")) {
        return None;
    }
    let mut with_names = inner.clone();
    with_names.push("{}");
    let fixed = super::readonly::composed_reader(&with_names)?;
    let mut v = Verified {
        recursive: from.roots.clone(),
        skips_hidden: from.skips_hidden,
        follow: from.follow || fixed.follow,
        ..Verified::default()
    };
    v.reads.extend(fixed.reads);
    if !no_run_if_empty {
        let alone = verify(&inner)?;
        if alone.chdir_only || !alone.checksum_lists.is_empty() {
            return None;
        }
        v.reads.extend(alone.reads);
        v.reads.extend(alone.lists);
        if !alone.recursive.is_empty() {
            v.recursive.extend(alone.recursive);
            v.follow |= alone.follow;
            v.skips_hidden &= alone.skips_hidden;
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn composed(producer_words: &str, xargs_words: &str) -> Option<Verified> {
        let p = producer(&w(producer_words))?;
        xargs(&w(xargs_words), &p)
    }

    /// Each form run with GNU findutils 4.9 and ripgrep 13 (`rg --files` prints bare
    /// names with no path, `./x` with `.`; `-0` ends each with a NUL).
    #[test]
    fn names_reach_a_verified_reader_only_as_names() {
        let p = producer(&w("find src -name *.rs -print0")).unwrap();
        assert_eq!(
            (p.roots.clone(), p.nul, p.bare),
            (vec!["src".to_string()], true, false)
        );
        let rg = producer(&w("rg --files -0")).unwrap();
        assert!(rg.bare && rg.nul && rg.skips_hidden);
        assert!(!producer(&w("rg --files -0 src")).unwrap().bare);
        assert!(producer(&w("rg -l -0 TODO")).unwrap().bare);
        assert!(producer(&w("rg --files --path-separator x -0")).is_none());
        assert!(producer(&w("find . -printf %l\\0")).is_none());
        assert!(producer(&w("find . -ls")).is_none());
        assert!(producer(&w("rg -0 TODO")).is_none());
        assert!(producer(&w("cat list")).is_none());

        let v = composed("find src -print0", "xargs -0 wc -l").unwrap();
        assert_eq!(v.recursive, vec!["src".to_string()]);
        assert!(!v.names_only);
        // Without `-r`, `grep -r x` alone searches `.`.
        let v = composed("find src -print0", "xargs -0 grep -r x").unwrap();
        assert_eq!(v.recursive, vec!["src".to_string(), ".".to_string()]);
        let v = composed("find src -print0", "xargs -0r grep -l x").unwrap();
        assert_eq!(v.recursive, vec!["src".to_string()]);
        assert_eq!(
            composed("find src -print0", "xargs -0 -r grep -f pats").map(|v| v.reads),
            Some(vec!["pats".to_string()])
        );
        assert!(composed("find src -print0", "xargs -0 -n 10 -P 4 cat").is_some());
        assert!(composed("find src -print0", "xargs --null cat").is_some());
        // Split names, items from a file, replacement, a writer, a runner.
        assert!(composed("find src", "xargs cat").is_none());
        assert!(composed("find src -print0", "xargs cat").is_none());
        assert!(composed("find src", "xargs -0 cat").is_none());
        assert!(composed("find src -print0", "xargs -0 -a list cat").is_none());
        assert!(composed("find src -print0", "xargs -0 -I {} cat {}").is_none());
        assert!(composed("find src -print0", "xargs -0 -d x cat").is_none());
        assert!(composed("find src -print0", "xargs -0 rm").is_none());
        assert!(composed("find src -print0", "xargs -0 sh -c cat").is_none());
        assert!(composed("find src -print0", "xargs -0 sort -o out").is_none());
        assert!(composed("find src -print0", "xargs -0 cat {}").is_none());
        assert!(composed("find src -print0", "xargs -0 git log").is_none());
    }
}
