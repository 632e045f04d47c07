//! Path resolution: how a word an agent wrote becomes the absolute path the kernel would
//! touch, and whether that path is inside the project.
//!
//! Owns `~`/`$HOME` expansion, `..` normalization, symlink resolution on the longest
//! existing prefix (dangling links followed to their target), and the component-wise
//! "inside the root" test (`/work/projX` is not inside `/work/proj`). Knows nothing of
//! bash syntax or rules: callers hand it words that are already unquoted.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// Lexical normalization: `.` removed, `..` applied, repeated `/` collapsed.
pub fn clean(p: &Path) -> PathBuf {
    path_clean::clean(p)
}

/// Resolves an absolute path as the kernel would: every existing prefix is
/// canonicalized (symlinks followed, `..` taken physically), the missing rest is
/// appended lexically. A dangling symlink is followed to where a write would land.
pub fn resolve_existing_prefix(p: &Path) -> PathBuf {
    let mut budget = MAX_SYMLINKS;
    resolve_with_budget(p, &mut budget)
}

fn resolve_with_budget(p: &Path, budget: &mut usize) -> PathBuf {
    // Fast path: the whole path exists.
    if let Ok(c) = fs::canonicalize(p) {
        return c;
    }
    let mut cur = PathBuf::from("/");
    // INVARIANT: while `exists`, `cur` is canonical, so `pop` on `..` is physical.
    let mut exists = true;
    for comp in p.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
                exists = fs::symlink_metadata(&cur).is_ok();
            }
            Component::Normal(name) => {
                cur.push(name);
                if !exists {
                    continue;
                }
                // One lstat per component; only symlinks need more work.
                match fs::symlink_metadata(&cur) {
                    Err(_) => exists = false,
                    Ok(m) if !m.file_type().is_symlink() => {}
                    Ok(_) => {
                        if *budget == 0 {
                            exists = false;
                            continue;
                        }
                        *budget -= 1;
                        match fs::read_link(&cur) {
                            Ok(target) => {
                                let base = cur.parent().map(Path::to_path_buf).unwrap_or_default();
                                let next = if target.is_absolute() {
                                    target
                                } else {
                                    base.join(target)
                                };
                                // A dangling link is followed to where a write would land.
                                cur = resolve_with_budget(&next, budget);
                                exists = fs::symlink_metadata(&cur).is_ok();
                            }
                            Err(_) => exists = false,
                        }
                    }
                }
            }
        }
    }
    cur
}

/// Expands a leading `~`, `~/`, `$HOME` or `${HOME}` to `home`. Returns `None` when the
/// word still holds a `$`, a `~user` form, or anything else whose value is unknown here.
pub fn expand_home(word: &str, home: &Path) -> Option<PathBuf> {
    let rest = if word == "~" || word == "$HOME" || word == "${HOME}" {
        Some("")
    } else if let Some(r) = word.strip_prefix("~/") {
        Some(r)
    } else if let Some(r) = word.strip_prefix("$HOME/") {
        Some(r)
    } else {
        word.strip_prefix("${HOME}/")
    };
    match rest {
        Some(r) if !r.contains('$') => Some(if r.is_empty() {
            home.to_path_buf()
        } else {
            home.join(r)
        }),
        Some(_) => None,
        None if word.starts_with('~') || word.contains('$') || word.contains('`') => None,
        None => Some(PathBuf::from(word)),
    }
}

/// Resolves a path word against an effective cwd. `None` means unknown: the cwd is
/// unknown and the word relative, or the word holds an unexpanded variable. Callers
/// treat unknown as outside the project.
pub fn resolve_word(word: &str, cwd: Option<&Path>, home: &Path) -> Option<PathBuf> {
    let expanded = expand_home(word, home)?;
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd?.join(expanded)
    };
    Some(resolve_existing_prefix(&absolute))
}

/// Component-wise containment: `root` itself and anything below it.
pub fn is_inside(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sibling_with_common_prefix_is_outside() {
        assert!(!is_inside(
            Path::new("/work/projX/a"),
            Path::new("/work/proj")
        ));
        assert!(is_inside(
            Path::new("/work/proj/a"),
            Path::new("/work/proj")
        ));
        assert!(is_inside(Path::new("/work/proj"), Path::new("/work/proj")));
    }

    #[test]
    fn home_forms_expand_and_unknown_variables_do_not() {
        let home = Path::new("/home/u");
        assert_eq!(expand_home("~", home), Some(PathBuf::from("/home/u")));
        assert_eq!(
            expand_home("$HOME/x", home),
            Some(PathBuf::from("/home/u/x"))
        );
        assert_eq!(
            expand_home("${HOME}/x", home),
            Some(PathBuf::from("/home/u/x"))
        );
        assert_eq!(expand_home("$TMP/x", home), None);
        assert_eq!(expand_home("~root/x", home), None);
        assert_eq!(expand_home("a/b", home), Some(PathBuf::from("a/b")));
    }
}
