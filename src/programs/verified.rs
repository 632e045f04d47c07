//! What the verified read-only tables share: what a verified command reads
//! (`Verified`), and the compact option spec both the program table (`readonly`) and
//! git's forms (`git_readonly`) are written in (`spec_opts`).
//!
//! Below both tables, so that `readonly` can hand git's words to `git_readonly` without
//! `git_readonly` reaching back up for these.

use super::options::{Arg, Does, Opt};

/// What a verified command reads, in the words' own spelling (relative to the cwd).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    /// Files (or directories, as names) whose content or metadata is read.
    pub reads: Vec<String>,
    /// Directories whose files are read recursively (`grep -r x dir`, `rg x dir`), or
    /// whose tree of names is listed (`find dir`, `tree dir`, `ls -R dir`).
    pub recursive: Vec<String>,
    /// The recursive reader skips hidden files (`rg` without `--hidden`/`-uu`).
    pub skips_hidden: bool,
    /// The recursive reader enters symlinks to directories it finds (`grep -R`, `rg
    /// -L`, `diff -r`, `find -L`, `tree -l`, `ls -RL`, `du -L`, `fd -L`). A symlink
    /// named as an operand is resolved in any case.
    pub follow: bool,
    /// The recursive reader lists names only (`find`, `tree`, `ls -R`, `du`, `fd`).
    pub names_only: bool,
    /// Directories whose entries are listed, not recursively (`ls dir`).
    pub lists: Vec<String>,
    /// The command changes the working directory only (`cd`, `pushd`, `popd`).
    pub chdir_only: bool,
    /// The recursive read reaches only the files whose name matches one of these
    /// patterns (find's `-name PAT -type f` before its first `-exec`, nothing printed
    /// before it: find prints and runs its commands on those alone; grep's
    /// `--include=*.py` options). Empty: every file.
    pub name_filter: Vec<String>,
    /// Checksum files (`md5sum -c SUMS`): each is read, and so is every file its lines
    /// name. The caller reads the list to know them (`checksum_names`).
    pub checksum_lists: Vec<String>,
}

/// Parses a spec (see `readonly::ENTRIES`). `:name=2` takes two values (`jq --arg NAME V`).
pub(super) fn spec_opts(spec: &'static str) -> Vec<Opt> {
    let mut out = Vec::new();
    for tok in spec.split_whitespace() {
        let (tok, reads) = match tok.strip_suffix('<') {
            Some(t) => (t, true),
            None => (tok, false),
        };
        let (tok, arg) = if let Some(t) = tok.strip_suffix("=2") {
            (t, Arg::Two)
        } else if let Some(t) = tok.strip_suffix('=') {
            (t, Arg::Required)
        } else if let Some(t) = tok.strip_suffix('?') {
            (t, Arg::Optional)
        } else {
            (tok, Arg::No)
        };
        let does = if reads { Does::Reads } else { Does::Nothing };
        let mut parts = tok.split(':');
        let short = parts.next().and_then(|s| {
            let mut c = s.chars();
            match (c.next(), c.next()) {
                (Some(ch), None) => Some(ch),
                _ => None,
            }
        });
        let longs: Vec<&'static str> = parts.filter(|p| !p.is_empty()).collect();
        if longs.is_empty() {
            out.push(Opt {
                short,
                long: None,
                arg,
                does,
            });
        }
        for (i, long) in longs.iter().enumerate() {
            out.push(Opt {
                short: if i == 0 { short } else { None },
                long: Some(long),
                arg,
                does,
            });
        }
    }
    out
}
