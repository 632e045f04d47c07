//! Which file a program name runs: bash looks a name without a `/` up in `PATH`, entry
//! by entry, and runs the first file it finds. When an entry is a directory of the
//! project (an activated `.venv/bin`, a `node_modules/.bin` or `./bin` someone put on
//! `PATH`) or a relative one (`.`, an empty entry, `bin`: looked up from wherever the
//! command runs), a file the agent may write without a prompt decides what `ls`, `cat`
//! or `git` is. The verdicts of the program table hold for the system's programs, so a
//! name that finds a file of the project there, or that a command of the same call
//! could plant there, is no verified program: it is the project's own code. So is a
//! name whose file on `PATH` is a link into the project (`bun link`, `npm link`).
//! Finding that costs one `stat` per entry up to the file, and a `lstat` of it; the
//! context remembers each answer (`LinkMemo`), and past `INDEX_AFTER` names lists the
//! entries' directories once.
//!
//! The `PATH` is the one the caller saw (`AnalysisContext::with_search_path`); without
//! one, names are the system's programs, as before.

use std::path::{Component, Path, PathBuf};

use crate::model::paths;
use crate::model::vocab::{AnalysisContext, PathIndex};

/// The directories of the search path that the project holds, and its relative
/// entries (found from the working directory of each command; `.` as an empty path).
#[derive(Debug, Default)]
pub struct ProjectEntries {
    pub dirs: Vec<PathBuf>,
    pub relative: Vec<PathBuf>,
}

/// The entries of the caller's `PATH` that lie in the project (resolved as the kernel
/// would, so a symlink into the project counts), and the relative ones.
pub fn project_entries(ctx: &AnalysisContext) -> ProjectEntries {
    let mut out = ProjectEntries::default();
    for entry in ctx.search_path().unwrap_or_default() {
        if entry.is_relative() {
            out.relative.push(paths::clean(entry));
        } else {
            let resolved = paths::resolve_existing_prefix(entry);
            if paths::is_inside(&resolved, ctx.root()) {
                out.dirs.push(resolved);
            }
        }
    }
    out
}

/// The file of the project a command name may run, as bash finds it on the caller's
/// `PATH` from `cwd`: the first entry holding a file of that name is a directory of the
/// project or a relative entry, or a relative entry comes first while the working
/// directory is unknown (then the file as the entry spells it), or the file found is a
/// link into the project (then the file it leads to). Builtins, names with a `/` (no
/// lookup) and a context without a `PATH` never have one.
pub fn project_program(name: &str, cwd: Option<&Path>, ctx: &AnalysisContext) -> Option<PathBuf> {
    find(name, cwd, ctx).map(|f| match f {
        Found::Entry(p) | Found::Link(p) => p,
    })
}

/// The file of the project a command name runs when `PATH` finds it as a link from
/// outside the project (`project_program`'s links only): a command of the project
/// that someone installed by linking it (`bun link`, `npm link`), not a file of a
/// directory of the project on `PATH` (a `.venv/bin` holds installers too).
pub fn linked_project_program(
    name: &str,
    cwd: Option<&Path>,
    ctx: &AnalysisContext,
) -> Option<PathBuf> {
    match find(name, cwd, ctx)? {
        Found::Link(p) => Some(p),
        Found::Entry(_) => None,
    }
}

/// How `find` found a file of the project.
enum Found {
    /// In a directory of the project on `PATH`, or a relative entry.
    Entry(PathBuf),
    /// As a link from outside that leads into the project: the file it leads to.
    Link(PathBuf),
}

fn find(name: &str, cwd: Option<&Path>, ctx: &AnalysisContext) -> Option<Found> {
    let entries = ctx.search_path()?;
    if name.is_empty() || name.contains('/') || super::builtins::NAMES.contains(&name) {
        return None;
    }
    if !ctx.search_path_reaches_project() {
        return linked_program(name, entries, ctx).map(Found::Link);
    }
    for entry in entries {
        let dir = if entry.is_relative() {
            match cwd {
                Some(c) => c.join(entry),
                None => return Some(Found::Entry(entry.join(name))),
            }
        } else {
            entry.clone()
        };
        // Any file of that name stops the search here (bash skips one it cannot run;
        // taking it as found only ever makes the answer more careful).
        let file = dir.join(name);
        if std::fs::metadata(&file).is_ok_and(|m| !m.is_dir()) {
            let dir = paths::resolve_existing_prefix(&dir);
            if entry.is_relative() || paths::is_inside(&dir, ctx.root()) {
                return Some(Found::Entry(dir.join(name)));
            }
            return link_into_project(&file, ctx).map(Found::Link);
        }
    }
    None
}

/// `find` on a `PATH` of absolute entries outside the project: the first
/// file of that name, when it is a link that leads into the project (`bun link` puts
/// `~/.bun/bin/minsky`, a link to the project's `src/cli.ts`, on `PATH`; `npm link`
/// does the same under its prefix). The agent may rewrite that file without a prompt.
/// Answers are remembered in the context; after `INDEX_AFTER` names, the entries'
/// directories are listed once and a name is looked for only where it is listed.
fn linked_program(name: &str, entries: &[PathBuf], ctx: &AnalysisContext) -> Option<PathBuf> {
    ctx.links().with(|cache| {
        if let Some(found) = cache.found.get(name) {
            return found.clone();
        }
        cache.lookups += 1;
        if cache.index.is_none() && cache.lookups > INDEX_AFTER {
            cache.index = Some(index(entries));
        }
        let candidates: Vec<usize> = match &cache.index {
            Some(index) => index.candidates(name),
            None => (0..entries.len()).collect(),
        };
        let found =
            first_file(name, entries, &candidates).and_then(|file| link_into_project(&file, ctx));
        if cache.found.len() < MAX_REMEMBERED {
            cache.found.insert(name.to_string(), found.clone());
        }
        found
    })
}

/// Names looked up one by one before the `PATH`'s directories are listed.
const INDEX_AFTER: usize = 16;

/// Names a context remembers at most.
const MAX_REMEMBERED: usize = 8192;

/// The first of the candidate entries (indices into `entries`, in order) holding a
/// file of that name that is not a directory, as bash's search finds it. An entry met
/// before was searched then (a `PATH` often names one twice).
fn first_file(name: &str, entries: &[PathBuf], candidates: &[usize]) -> Option<PathBuf> {
    for &i in candidates {
        let entry = entries.get(i)?;
        if entries
            .get(..i)
            .is_some_and(|before| before.contains(entry))
        {
            continue;
        }
        let file = entry.join(name);
        if std::fs::metadata(&file).is_ok_and(|m| !m.is_dir()) {
            return Some(file);
        }
    }
    None
}

/// Every name the entries' directories hold, with the indices of the entries holding
/// it, in order. A directory that cannot be listed may still be searched (bash needs
/// only to reach a file there, not to read the directory): it is a candidate for
/// every name.
fn index(entries: &[PathBuf]) -> PathIndex {
    let mut out = PathIndex::default();
    for (i, entry) in entries.iter().enumerate() {
        let Ok(dir) = std::fs::read_dir(entry) else {
            out.unlisted.push(i);
            continue;
        };
        for e in dir {
            match e {
                Ok(e) => {
                    if let Ok(name) = e.file_name().into_string() {
                        out.names.entry(name).or_default().push(i);
                    }
                }
                // A listing cut short is no listing: search the entry for every name,
                // and read no further (a failing directory may fail again and again).
                Err(_) => {
                    out.unlisted.push(i);
                    break;
                }
            }
        }
    }
    out
}

/// The file a link found on `PATH` leads to, when that is inside the project (every
/// link on the way followed, as the kernel does when it runs it).
fn link_into_project(file: &Path, ctx: &AnalysisContext) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(file).is_ok_and(|m| m.is_symlink()) {
        return None;
    }
    std::fs::canonicalize(file)
        .ok()
        .filter(|target| paths::is_inside(target, ctx.root()))
}

/// Whether a written path lands in a directory of the search path that the project
/// holds, or replaces one with all it holds: a program planted there runs for a name
/// later in the same command. A relative entry is such a directory wherever the
/// command runs in the project: `.` any of them, `bin` any directory named so (or what
/// makes one: a write of `x/bin`, or of `x/tools` for `tools/bin`).
pub fn plants_program(written: &Path, entries: &ProjectEntries, ctx: &AnalysisContext) -> bool {
    let written = paths::resolve_existing_prefix(written);
    let parent = written.parent().unwrap_or(&written);
    let relative = paths::is_inside(parent, ctx.root())
        && entries.relative.iter().any(|r| {
            // `.` is any directory; an entry with `..` is taken as any directory too.
            if r.components().any(|c| c == Component::ParentDir) {
                return true;
            }
            let parts: Vec<_> = r
                .components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .collect();
            let entry: PathBuf = parts.iter().collect();
            parts.is_empty()
                || parent.ends_with(&entry)
                || (1..=parts.len())
                    .any(|k| written.ends_with(parts.iter().take(k).collect::<PathBuf>()))
        });
    relative
        || entries
            .dirs
            .iter()
            .any(|d| paths::is_inside(parent, d) || paths::is_inside(d, &written))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn world() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("proj");
        let sys = base.join("sys");
        std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
        std::fs::create_dir_all(&sys).unwrap();
        for f in ["ls", "cat", "python"] {
            std::fs::write(sys.join(f), "").unwrap();
        }
        std::fs::write(root.join(".venv/bin/python"), "").unwrap();
        (tmp, root, sys)
    }

    fn ctx(root: &Path, path: &str) -> AnalysisContext {
        AnalysisContext::new(root, None, Path::new("/home/u"))
            .unwrap()
            .with_search_path(Some(&OsString::from(path)))
    }

    #[test]
    fn a_name_found_first_in_a_project_directory_is_the_projects() {
        let (_t, root, sys) = world();
        let c = ctx(
            &root,
            &format!("{}:{}", root.join(".venv/bin").display(), sys.display()),
        );
        assert_eq!(
            project_program("python", Some(&root), &c),
            Some(root.join(".venv/bin/python"))
        );
        assert!(
            project_program("ls", Some(&root), &c).is_none(),
            "found in the system's dir"
        );
        assert!(
            project_program("echo", Some(&root), &c).is_none(),
            "a builtin"
        );
        assert!(
            project_program("./python", Some(&root), &c).is_none(),
            "no lookup"
        );
        // The system's directory first: its python runs.
        let c = ctx(
            &root,
            &format!("{}:{}", sys.display(), root.join(".venv/bin").display()),
        );
        assert!(project_program("python", Some(&root), &c).is_none());
    }

    #[test]
    fn relative_entries_are_looked_up_where_the_command_runs() {
        let (_t, root, sys) = world();
        std::fs::write(root.join("ls"), "").unwrap();
        for path in [
            format!(".:{}", sys.display()),
            format!(":{}", sys.display()),
        ] {
            let c = ctx(&root, &path);
            assert_eq!(
                project_program("ls", Some(&root), &c),
                Some(root.join("ls")),
                "{path}"
            );
            assert!(project_program("cat", Some(&root), &c).is_none(), "{path}");
            assert!(
                project_program("cat", None, &c).is_some(),
                "{path}: unknown cwd"
            );
        }
    }

    #[test]
    fn a_tilde_entry_is_the_homes_and_a_directory_named_tilde() {
        let (_t, root, sys) = world();
        let home = root.join("..").join("home");
        let c = AnalysisContext::new(&root, None, &home)
            .unwrap()
            .with_search_path(Some(&OsString::from(format!(
                "~/bin:~other/bin:{}",
                sys.display()
            ))));
        let e = project_entries(&c);
        // bash's reading: the home's `bin`, outside the project.
        assert!(e.dirs.is_empty());
        assert!(project_program("ls", Some(&root), &c).is_none());
        // zsh's and dash's: a directory `~` where the command runs.
        assert!(plants_program(&root.join("~/bin/ls"), &e, &c));
        assert!(!plants_program(&root.join("src/ls"), &e, &c));
        std::fs::create_dir_all(root.join("~/bin")).unwrap();
        std::fs::write(root.join("~/bin/ls"), "").unwrap();
        assert_eq!(
            project_program("ls", Some(&root), &c),
            Some(root.join("~/bin/ls"))
        );
        // A home inside the project (a project at `~`) reaches it through bash's reading.
        let c = AnalysisContext::new(&root, None, &root)
            .unwrap()
            .with_search_path(Some(&OsString::from(format!(
                "~/.venv/bin:{}",
                sys.display()
            ))));
        assert_eq!(
            project_program("python", Some(&root), &c),
            Some(root.join(".venv/bin/python"))
        );
    }

    #[test]
    fn a_link_on_path_into_the_project_is_the_projects() {
        let (_t, root, sys) = world();
        let linked = root.join("../links");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(root.join("cli.ts"), "").unwrap();
        std::os::unix::fs::symlink(root.join("cli.ts"), linked.join("minsky")).unwrap();
        std::os::unix::fs::symlink(sys.join("cat"), linked.join("cat")).unwrap();
        // Through a linked directory too (`npm link`: a link to the package's root).
        std::os::unix::fs::symlink(&root, linked.join("pkg")).unwrap();
        std::os::unix::fs::symlink(linked.join("pkg/cli.ts"), linked.join("tool")).unwrap();
        let c = ctx(&root, &format!("{}:{}", linked.display(), sys.display()));
        assert!(!c.search_path_reaches_project());
        let target = std::fs::canonicalize(root.join("cli.ts")).unwrap();
        assert_eq!(
            project_program("minsky", Some(&root), &c),
            Some(target.clone())
        );
        assert_eq!(project_program("tool", None, &c), Some(target));
        assert!(
            project_program("cat", Some(&root), &c).is_none(),
            "a link out"
        );
        assert!(project_program("ls", Some(&root), &c).is_none(), "a file");
        assert!(project_program("nothere", Some(&root), &c).is_none());
        // Past the names looked up one by one, the directories are listed once: the
        // answers stay the same.
        let fresh = ctx(&root, &format!("{}:{}", linked.display(), sys.display()));
        for i in 0..=INDEX_AFTER {
            assert!(project_program(&format!("absent{i}"), Some(&root), &fresh).is_none());
        }
        assert!(fresh.links().with(|cache| cache.index.is_some()));
        assert!(project_program("tool", Some(&root), &fresh).is_some());
        assert!(project_program("minsky", Some(&root), &fresh).is_some());
        assert!(project_program("cat", Some(&root), &fresh).is_none());
        assert!(project_program("ls", Some(&root), &fresh).is_none());
        // The first file found decides: the system's `minsky` before the link.
        std::fs::write(sys.join("minsky"), "").unwrap();
        let c = ctx(&root, &format!("{}:{}", sys.display(), linked.display()));
        assert!(project_program("minsky", Some(&root), &c).is_none());
        // A PATH that also reaches the project reads links the same way.
        let c = ctx(
            &root,
            &format!("{}:{}", root.join(".venv/bin").display(), linked.display()),
        );
        assert!(project_program("tool", Some(&root), &c).is_some());
        assert!(linked_project_program("tool", Some(&root), &c).is_some());
        // A file of the project's own directory on `PATH` is no link.
        assert!(project_program("python", Some(&root), &c).is_some());
        assert!(linked_project_program("python", Some(&root), &c).is_none());
    }

    #[test]
    fn an_unlisted_directory_is_searched_for_every_name() {
        let mut index = PathIndex::default();
        index.names.insert("minsky".into(), vec![2, 0]);
        index.unlisted = vec![1, 0];
        assert_eq!(index.candidates("minsky"), vec![0, 1, 2]);
        assert_eq!(index.candidates("other"), vec![0, 1]);
    }

    #[test]
    fn no_search_path_means_the_systems_programs() {
        let (_t, root, _sys) = world();
        let c = AnalysisContext::new(&root, None, Path::new("/home/u")).unwrap();
        assert!(project_program("python", Some(&root), &c).is_none());
        assert!(project_entries(&c).dirs.is_empty());
    }

    #[test]
    fn writes_into_a_project_entry_plant_programs() {
        let (_t, root, sys) = world();
        let c = ctx(
            &root,
            &format!("{}:{}", root.join(".venv/bin").display(), sys.display()),
        );
        let e = project_entries(&c);
        assert!(plants_program(&root.join(".venv/bin/ls"), &e, &c));
        assert!(!plants_program(&root.join("src/ls"), &e, &c));
        assert!(
            plants_program(&root.join(".venv"), &e, &c),
            "the entry replaced"
        );
        let c = ctx(&root, &format!(".:{}", sys.display()));
        assert!(plants_program(
            &root.join("src/ls"),
            &project_entries(&c),
            &c
        ));
        // A named relative entry: only a directory of that name, or what makes one.
        let c = ctx(&root, &format!("tools/bin:{}", sys.display()));
        let e = project_entries(&c);
        assert!(plants_program(&root.join("a/tools/bin/ls"), &e, &c));
        assert!(
            plants_program(&root.join("a/tools/bin"), &e, &c),
            "the entry made"
        );
        assert!(
            plants_program(&root.join("a/tools"), &e, &c),
            "its parent made"
        );
        assert!(!plants_program(&root.join("src/ls"), &e, &c));
        assert!(!plants_program(&root.join("bin/ls"), &e, &c));
        assert!(!plants_program(&root.join("notes.md"), &e, &c));
    }
}
