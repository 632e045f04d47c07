//! What a recursive read reaches: a bounded walk of a directory's files, for
//! judging `grep -r x dir`, `rg x` and `git grep x` by the secret rules.
//!
//! Owns only the walk. Directories are followed through symlinks exactly when the
//! program follows them (`Walk::follow`: `grep -R`, `rg -L`, `diff -r`, `find -L`;
//! not `grep -r` or `rg`, which follow only a symlink named on the command line, and
//! the caller has resolved that one), each real directory entered once (a loop of
//! links ends). A symlinked file is listed as found and as resolved. `rg` skips hidden
//! entries unless told otherwise; git-ignored files are walked all the same (that only
//! finds more).

use std::path::{Path, PathBuf};

pub use crate::model::vocab::MAX_WALK_ENTRIES;
/// Directories deeper than this are not entered (the read then asks).
pub const MAX_WALK_DEPTH: usize = 64;

/// The walk went past its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBound;

/// How a program walks a directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walk {
    /// Hidden entries are skipped (`rg`, `tree`, `fd` by default).
    pub skip_hidden: bool,
    /// Symlinks to directories are entered.
    pub follow: bool,
    /// Only directories are returned (and counted against the bound): a listing of
    /// names is judged by the directories it lists.
    pub dirs_only: bool,
}

/// Every file and directory under `dir` (as listed and, for symlinks, as resolved),
/// sorted per directory; with `dirs_only`, `dir` and every directory under it (a
/// followed symlink as resolved). `Err` when the walk would exceed its bounds.
pub fn walk(dir: &Path, how: Walk) -> Result<Vec<PathBuf>, OverBound> {
    let mut out: Vec<PathBuf> = Vec::new();
    let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    // INVARIANT: every directory pushed on the stack is in `entered` (its real path),
    // so a symlink loop enters each directory once.
    let mut entered: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    entered.insert(start);
    if how.dirs_only {
        out.push(dir.to_path_buf());
    }
    let mut stack: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0usize;
    // Where a symlink not followed is listed: its target is resolved only once the
    // walk is known to be within its bounds (a walk past them is judged whole, so the
    // system calls resolving its links would be spent for nothing).
    let mut links: Vec<usize> = Vec::new();
    // Entries listed without a type (it could not be read): never noted as plain.
    let mut untyped: Vec<usize> = Vec::new();
    while let Some((d, depth)) = stack.pop() {
        if depth > MAX_WALK_DEPTH {
            return Err(OverBound);
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<std::fs::DirEntry> = entries.filter_map(Result::ok).collect();
        entries.sort_by_cached_key(std::fs::DirEntry::file_name);
        for e in entries {
            seen += 1;
            if seen > MAX_WALK_ENTRIES {
                return Err(OverBound);
            }
            if how.skip_hidden && e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let p = e.path();
            let Ok(t) = e.file_type() else {
                if !how.dirs_only {
                    untyped.push(out.len());
                    out.push(p);
                }
                continue;
            };
            if t.is_symlink() && !how.follow {
                if !how.dirs_only {
                    links.push(out.len());
                    out.push(p.clone());
                    out.push(p);
                }
                continue;
            }
            if t.is_symlink() {
                // Followed: the target decides whether the walk goes in.
                let target = crate::model::paths::resolve_existing_prefix(&p);
                let into_dir = target.is_dir();
                if into_dir {
                    let real = std::fs::canonicalize(&p).unwrap_or_else(|_| target.clone());
                    if entered.insert(real) {
                        stack.push((target.clone(), depth + 1));
                    }
                }
                if !how.dirs_only || into_dir {
                    out.push(target);
                }
                if how.dirs_only {
                    continue;
                }
            } else if t.is_dir() {
                // Without followed links a directory is reached once; with them, a
                // linked directory may also be reached by its own path.
                let first = !how.follow
                    || entered.insert(std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone()));
                if first {
                    stack.push((p.clone(), depth + 1));
                }
            } else if how.dirs_only {
                continue;
            }
            out.push(p);
        }
    }
    if !links.is_empty() {
        // The links' targets are mostly entries this walk listed (a package store's
        // links into it): what the listing said of each spares a `lstat` per entry
        // when they are resolved. `out` holds, at each index in `links`, a link's
        // placeholder, and right after it the link as found.
        let mut next_link = links.iter().copied().peekable();
        let mut untyped = untyped.into_iter().peekable();
        let mut after_link = false;
        for (j, p) in out.iter().enumerate() {
            if next_link.next_if_eq(&j).is_some() {
                after_link = true;
                continue;
            }
            if untyped.next_if_eq(&j).is_none() {
                crate::model::paths::note_listed(p, after_link);
            }
            after_link = false;
        }
    }
    for i in links {
        if let Some(listed) = out.get_mut(i) {
            *listed = crate::model::paths::resolve_existing_prefix(listed);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_bounded_by_every_entry_it_reads() {
        let d = tempfile_dir("bound");
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..=MAX_WALK_ENTRIES {
            std::fs::write(d.join(format!("f{i}")), "").unwrap();
        }
        let listing = Walk {
            dirs_only: true,
            ..Walk::default()
        };
        assert_eq!(walk(&d, listing), Err(OverBound));
        std::fs::remove_dir_all(&d).unwrap();
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("khaelor-reach-{name}-{}", std::process::id()))
    }

    #[test]
    fn a_link_not_followed_is_listed_as_resolved_and_as_found() {
        let t = tempfile::tempdir().unwrap();
        let secrets = t.path().join("home/.ssh");
        let p = t.path().join("p");
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::create_dir_all(p.join("docs")).unwrap();
        std::fs::write(secrets.join("id_rsa"), "k").unwrap();
        std::fs::write(p.join("docs/a.md"), "x").unwrap();
        std::os::unix::fs::symlink(secrets.join("id_rsa"), p.join("docs/key")).unwrap();
        // A link to a link: the walk reports where the chain ends.
        std::os::unix::fs::symlink(p.join("docs/key"), p.join("docs/key2")).unwrap();
        let key = std::fs::canonicalize(secrets.join("id_rsa")).unwrap();
        let all = walk(&p, Walk::default()).unwrap();
        let docs = p.join("docs");
        assert_eq!(
            all,
            vec![
                docs.clone(),
                docs.join("a.md"),
                key.clone(),
                docs.join("key"),
                key,
                docs.join("key2"),
            ]
        );
        // Inside a decision's memo the listing's types stand in for `lstat`s when the
        // links are resolved; the answer is the same.
        let scoped = {
            let _memo = crate::model::paths::CallScope::new(&p);
            walk(&p, Walk::default()).unwrap()
        };
        assert_eq!(scoped, all);
    }

    #[test]
    fn a_walk_past_its_bound_with_links_is_over_it() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("many");
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..=MAX_WALK_ENTRIES {
            std::os::unix::fs::symlink("/etc/hostname", d.join(format!("l{i}"))).unwrap();
        }
        assert_eq!(walk(&d, Walk::default()), Err(OverBound));
    }

    #[test]
    fn walks_nested_and_skips_hidden_when_asked() {
        let d = std::env::temp_dir().join(format!("khaelor-reach-{}", std::process::id()));
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::write(d.join("a/b/.env"), "x").unwrap();
        std::fs::write(d.join("a/f.rs"), "x").unwrap();
        let all = walk(&d, Walk::default()).unwrap();
        assert!(all.contains(&d.join("a/b/.env")));
        let hidden = Walk {
            skip_hidden: true,
            ..Walk::default()
        };
        let visible = walk(&d, hidden).unwrap();
        assert!(!visible.contains(&d.join("a/b/.env")));
        assert!(visible.contains(&d.join("a/f.rs")));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn follows_directory_links_only_when_asked_and_ends_loops() {
        let t = tempfile::tempdir().unwrap();
        let store = t.path().join("home/.aws");
        let p = t.path().join("p");
        std::fs::create_dir_all(&store).unwrap();
        std::fs::create_dir_all(p.join("docs")).unwrap();
        std::fs::write(store.join("credentials"), "k").unwrap();
        std::os::unix::fs::symlink(&store, p.join("docs/awslink")).unwrap();
        // A loop: the link points back at the directory it is in.
        std::os::unix::fs::symlink(p.join("docs"), p.join("docs/again")).unwrap();
        let creds = std::fs::canonicalize(&store).unwrap().join("credentials");
        let plain = walk(&p, Walk::default()).unwrap();
        assert!(!plain.contains(&creds));
        let follow = Walk {
            follow: true,
            ..Walk::default()
        };
        let followed = walk(&p, follow).unwrap();
        assert!(followed.contains(&creds));
        let names = Walk {
            follow: true,
            dirs_only: true,
            ..Walk::default()
        };
        let dirs = walk(&p, names).unwrap();
        assert!(dirs.contains(&std::fs::canonicalize(&store).unwrap()));
        assert!(!dirs.contains(&creds));
    }
}
