//! Path resolution: how a word an agent wrote becomes the absolute path the kernel would
//! touch, and whether that path is inside the project.
//!
//! Owns `~`/`$HOME` expansion, `..` normalization, symlink resolution on the longest
//! existing prefix (dangling links followed to their target), and the component-wise
//! "inside the root" test (`/work/projX` is not inside `/work/proj`). Knows nothing of
//! bash syntax or rules: callers hand it words that are already unquoted.
//!
//! Process aliases: `/proc/self`, `/proc/thread-self`, `/proc/<pid>`,
//! `/dev/fd` and `/dev/std{in,out,err}` name *a process's* view of the file system. Here
//! they would resolve through this server's process, not the tool's, so a path that
//! reaches one (as written, or through a symlink) is unknown: `resolve_word` returns
//! `None`, `resolve_existing_prefix` a non-absolute `unknown:…` path, and both ask.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// Reads a small regular file the analysis consults (a checksum list, a repository's
/// `HEAD`, `commondir`, gitfile or config), at most `max` bytes. Opened without
/// blocking and checked again once open, so a file swapped for a named pipe or a device
/// between the look and the open never stalls an analysis. `Ok(None)`: nothing is
/// there. `Err`: something is there that is not a regular file of at most `max` bytes,
/// or cannot be read.
pub fn read_small_file(path: &Path, max: u64) -> Result<Option<Vec<u8>>, std::io::Error> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let not_small = || std::io::Error::other("not a regular file within the size limit");
    match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(m) if !m.is_file() || m.len() > max => return Err(not_small()),
        Ok(_) => {}
    }
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || m.len() > max {
        return Err(not_small());
    }
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(not_small());
    }
    Ok(Some(bytes))
}

/// Lexical normalization: `.` removed, `..` applied, repeated `/` collapsed.
pub fn clean(p: &Path) -> PathBuf {
    path_clean::clean(p)
}

/// What an unresolvable alias path starts with: not absolute, so every caller treats it
/// as unknown (outside the project, never allowed silently).
pub const UNKNOWN_PREFIX: &str = "unknown:";

/// Whether an absolute path goes through a per-process alias (`/proc/self`,
/// `/proc/thread-self`, `/proc/<pid>`, `/dev/fd`, `/dev/stdin`, `/dev/stdout`,
/// `/dev/stderr`), judged on its lexically cleaned form.
pub fn is_process_alias(p: &Path) -> bool {
    let cleaned = clean(p);
    let mut c = cleaned.components();
    let (Some(Component::RootDir), Some(Component::Normal(top)), Some(Component::Normal(name))) =
        (c.next(), c.next(), c.next())
    else {
        return false;
    };
    let name = name.to_string_lossy();
    if top == "proc" {
        name == "self"
            || name == "thread-self"
            || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
    } else if top == "dev" {
        matches!(name.as_ref(), "fd" | "stdin" | "stdout" | "stderr")
    } else {
        false
    }
}

/// The first control character of a path field (NUL, newline, escape, DEL, C1), if any:
/// such a path is refused, never resolved to something that differs from what the tool
/// will open.
pub fn control_char(s: &str) -> Option<char> {
    s.chars().find(|c| c.is_control())
}

/// Resolves an absolute path as the kernel would: every existing prefix is
/// canonicalized (symlinks followed, `..` taken physically), the missing rest is
/// appended lexically. A dangling symlink is followed to where a write would land. A
/// path that reaches a process alias is `unknown:<path>` (see the module doc).
pub fn resolve_existing_prefix(p: &Path) -> PathBuf {
    let mut budget = MAX_SYMLINKS;
    let mut alias = false;
    let out = resolve_with_budget(p, &mut budget, &mut alias);
    if alias {
        PathBuf::from(format!("{UNKNOWN_PREFIX}{}", p.display()))
    } else {
        out
    }
}

/// What one `lstat` said about a path, as the walk below uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lstat {
    Missing,
    Plain,
    Symlink,
}

/// The file system facts one call has already read: every `lstat` and
/// `readlink` of the walk below, and the project root, canonicalised once. Only alive
/// inside a [`CallScope`]; outside one every resolution asks the kernel afresh.
#[derive(Debug, Default)]
struct Memo {
    lstat: HashMap<PathBuf, Lstat>,
    links: HashMap<PathBuf, Option<PathBuf>>,
    /// The root to canonicalise on first use; `None` once done.
    root: Option<PathBuf>,
}

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// While alive, path resolution on this thread memoises `lstat` and `readlink` (one
/// call of an analysis reads each path once, however many words name it), and treats
/// `root` as canonical once one `realpath` of it confirmed so, instead of walking its
/// components for every path below it. Scopes nest; the outermost one clears the memo,
/// so nothing is remembered from one call to the next.
#[must_use = "the memo lives as long as the scope"]
pub struct CallScope {
    outermost: bool,
}

impl CallScope {
    pub fn new(root: &Path) -> Self {
        let outermost = MEMO.with(|m| match m.try_borrow_mut() {
            Ok(mut slot) if slot.is_none() => {
                *slot = Some(Memo {
                    root: Some(root.to_path_buf()),
                    ..Memo::default()
                });
                true
            }
            _ => false,
        });
        CallScope { outermost }
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        if self.outermost {
            MEMO.with(|m| {
                if let Ok(mut slot) = m.try_borrow_mut() {
                    *slot = None;
                }
            });
        }
    }
}

/// Whether a memo is alive on this thread (then the fast path below is skipped: the
/// memoised walk gives the same answer with fewer system calls).
fn memo_active() -> bool {
    MEMO.with(|m| m.try_borrow().map(|s| s.is_some()).unwrap_or(false))
}

/// `lstat`, through the memo when one is alive. Before the first path under the root
/// is read, the root is canonicalised once: when it still is its own canonical form,
/// it and its ancestors are recorded as plain directories.
fn lstat(p: &Path) -> Lstat {
    let read = |p: &Path| match fs::symlink_metadata(p) {
        Err(_) => Lstat::Missing,
        Ok(m) if m.file_type().is_symlink() => Lstat::Symlink,
        Ok(_) => Lstat::Plain,
    };
    MEMO.with(|m| {
        let Ok(mut slot) = m.try_borrow_mut() else {
            return read(p);
        };
        let Some(memo) = slot.as_mut() else {
            return read(p);
        };
        if let Some(root) = memo.root.take_if(|r| p.starts_with(r.as_path()))
            && fs::canonicalize(&root).is_ok_and(|c| c == root)
        {
            for a in root.ancestors() {
                memo.lstat.insert(a.to_path_buf(), Lstat::Plain);
            }
        }
        if let Some(&known) = memo.lstat.get(p) {
            return known;
        }
        let got = read(p);
        memo.lstat.insert(p.to_path_buf(), got);
        got
    })
}

/// Records what a directory listing said of the entry `p`: a symlink or not. While a
/// memo is alive, a later resolution through `p` then asks the kernel nothing more of
/// it (a walk that lists thousands of entries and then resolves links among them).
/// Outside a memo it does nothing. Only for a path just listed, whose type the listing
/// gave: a path the memo already knows keeps what it knows.
pub fn note_listed(p: &Path, symlink: bool) {
    MEMO.with(|m| {
        if let Ok(mut slot) = m.try_borrow_mut()
            && let Some(memo) = slot.as_mut()
        {
            let kind = if symlink {
                Lstat::Symlink
            } else {
                Lstat::Plain
            };
            memo.lstat.entry(p.to_path_buf()).or_insert(kind);
        }
    });
}

/// `readlink`, through the memo when one is alive.
fn read_link(p: &Path) -> Option<PathBuf> {
    MEMO.with(|m| {
        let Ok(mut slot) = m.try_borrow_mut() else {
            return fs::read_link(p).ok();
        };
        let Some(memo) = slot.as_mut() else {
            return fs::read_link(p).ok();
        };
        if let Some(known) = memo.links.get(p) {
            return known.clone();
        }
        let got = fs::read_link(p).ok();
        memo.links.insert(p.to_path_buf(), got.clone());
        got
    })
}

fn resolve_with_budget(p: &Path, budget: &mut usize, alias: &mut bool) -> PathBuf {
    if is_process_alias(p) {
        *alias = true;
        return p.to_path_buf();
    }
    // Fast path: the whole path exists and no symlink was followed (a followed link
    // may go through an alias, so that case takes the walk below). Inside a call scope
    // the walk below reads through the memo and gives the same answer more cheaply.
    if !memo_active()
        && let Ok(c) = fs::canonicalize(p)
        && c == clean(p)
    {
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
                exists = lstat(&cur) != Lstat::Missing;
            }
            Component::Normal(name) => {
                cur.push(name);
                if !exists {
                    continue;
                }
                // One lstat per component; only symlinks need more work.
                match lstat(&cur) {
                    Lstat::Missing => exists = false,
                    Lstat::Plain => {}
                    Lstat::Symlink => {
                        if *budget == 0 {
                            exists = false;
                            continue;
                        }
                        *budget -= 1;
                        match read_link(&cur) {
                            Some(target) => {
                                let base = cur.parent().map(Path::to_path_buf).unwrap_or_default();
                                let next = if target.is_absolute() {
                                    target
                                } else {
                                    base.join(target)
                                };
                                // A dangling link is followed to where a write would land.
                                cur = resolve_with_budget(&next, budget, alias);
                                if *alias {
                                    return cur;
                                }
                                exists = lstat(&cur) != Lstat::Missing;
                            }
                            None => exists = false,
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
    Some(resolve_existing_prefix(&absolute)).filter(|p| p.is_absolute())
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
    fn process_aliases_are_unknown() {
        for p in [
            "/proc/self/cwd/x",
            "/proc/self/root/etc/passwd",
            "/proc/thread-self/cwd",
            "/proc/1/root/etc/shadow",
            "/dev/fd/3",
            "/dev/stdin",
            "/dev/stdout",
            "/proc/self/../self/cwd",
        ] {
            let r = resolve_existing_prefix(Path::new(p));
            assert!(!r.is_absolute(), "{p} -> {}", r.display());
            assert_eq!(resolve_word(p, None, Path::new("/h")), None, "{p}");
        }
        // Neighbours resolve as usual.
        for p in ["/proc/cpuinfo", "/dev/null", "/devices/x", "/tmp/proc/self"] {
            assert!(resolve_existing_prefix(Path::new(p)).is_absolute(), "{p}");
        }
    }

    #[test]
    fn a_symlink_into_an_alias_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("r");
        std::os::unix::fs::symlink("/proc/self/root", &link).unwrap();
        let r = resolve_existing_prefix(&link.join("etc/passwd"));
        assert!(!r.is_absolute(), "{}", r.display());
        let plain = dir.path().join("p");
        std::os::unix::fs::symlink(dir.path(), &plain).unwrap();
        assert!(resolve_existing_prefix(&plain.join("x")).is_absolute());
    }

    #[test]
    fn control_characters_are_found() {
        assert_eq!(control_char("a\0b"), Some('\0'));
        assert_eq!(control_char("a\nb"), Some('\n'));
        assert_eq!(control_char("a\u{1b}[31m"), Some('\u{1b}'));
        assert_eq!(control_char("/p/ünïcode name"), None);
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
