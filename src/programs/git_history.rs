//! What a git reader prints from the object database: which verified git commands print
//! file contents from revisions, the index or objects named by id (`git show REV`, `git
//! log -p`, `git diff REV`, `git grep PAT REV`, `git cat-file -p ID`), and every path
//! those can reach in a repository — found by asking git itself, bounded in time and
//! size.
//!
//! A secret's identity is its content, and git keeps content under the names it had:
//! `.env` committed once and deleted since is still printed by `git log -p`. The reach
//! is every path of every commit reachable from any ref or reflog (stashes included),
//! plus the index: a superset of what any revision expression over them names. An
//! object named by id (`git cat-file -p 3b18e51`) may be any blob, reachable or not,
//! so it is vouched for only when the id is one of those commits.
//!
//! Running git here is bounded: `--no-lazy-fetch` (a partial clone never goes to the
//! network), no pager, no external diff or textconv, no signature check, nothing on
//! stdin, a deadline and an output cap. It is only called for a repository whose
//! configuration is protected (`git_discovery::unprotected`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::options::Parsed;

/// How long the history scan may take before the read is left unknown (it asks).
const SCAN_DEADLINE: Duration = Duration::from_secs(2);
/// Most bytes of git's output read.
const MAX_OUTPUT: usize = 32 << 20;
/// Most distinct paths kept.
const MAX_PATHS: usize = 100_000;

/// What a content-printing git command reaches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentRead {
    /// Pathspecs that limit what is printed, as written (relative to git's cwd); empty:
    /// no limit.
    pub pathspecs: Vec<String>,
    /// Objects named by what may be an id (`3b18e51`): vouched for only as a commit.
    pub object_ids: Vec<String>,
    /// The other names of revisions (`main`, `v1.0`, `HEAD`): a ref that names a blob
    /// or a tree (`git tag key <blob>`) prints it.
    pub names: Vec<String>,
    /// Only objects named by id or ref may print contents (`git show --stat v1.0`):
    /// commits print no file there, so the history's paths are not reached.
    pub objects_only: bool,
}

/// Options after which the diff machinery prints file contents (patches, the lines
/// `--check` flags) or reveals them (`-S`/`-G` pick commits by content).
const CONTENT_OPTIONS: &[&str] = &[
    "patch",
    "unified",
    "patch-with-raw",
    "patch-with-stat",
    "cc",
    "dd",
    "remerge-diff",
    "function-context",
    "word-diff",
    "word-diff-regex",
    "color-words",
    "check",
    "binary",
];
const CONTENT_SHORTS: &[char] = &['p', 'u', 'U', 'W', 'S', 'G', 'c', 'm'];
/// Output formats that replace the default patch of `git diff` and `git show`.
const SUMMARY_OPTIONS: &[&str] = &[
    "no-patch",
    "raw",
    "stat",
    "numstat",
    "shortstat",
    "dirstat",
    "dirstat-by-file",
    "cumulative",
    "summary",
    "name-only",
    "name-status",
    "compact-summary",
    "quiet",
];

fn asks_for_content(p: &Parsed) -> bool {
    CONTENT_OPTIONS.iter().any(|o| p.has(o)) || CONTENT_SHORTS.iter().any(|c| p.has_short(*c))
}

/// Whether a patch is printed by default and no summary format replaced it.
fn default_patch(p: &Parsed) -> bool {
    !(SUMMARY_OPTIONS.iter().any(|o| p.has(o)) || p.has_short('s'))
}

/// Whether a word may be an abbreviated or full object id.
fn looks_like_id(w: &str) -> bool {
    (4..=64).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The parts of a revision expression that may be object ids: each end of a range
/// (`a..b`, `a...b`), without `^` in front and without what follows `^`, `~`, `@`
/// or `:` (`3b18e51~2`, `3b18e51:path`).
pub fn id_parts(rev: &str) -> Vec<String> {
    let rev = rev.split_once(':').map_or(rev, |(r, _)| r);
    rev.split("..")
        .map(|r| r.trim_start_matches(['.', '^']))
        .map(|r| r.split(['^', '~', '@']).next().unwrap_or(r))
        .filter(|r| looks_like_id(r))
        .map(str::to_string)
        .collect()
}

/// The ref names a revision expression starts from (`v1.0^{}` -> `v1.0`, `a..b`).
pub fn name_parts(rev: &str) -> Vec<String> {
    let rev = rev.split_once(':').map_or(rev, |(r, _)| r);
    rev.split("..")
        .map(|r| r.trim_start_matches(['.', '^']))
        .map(|r| r.split(['^', '~', '@']).next().unwrap_or(r))
        .filter(|r| !r.is_empty() && !looks_like_id(r))
        .map(str::to_string)
        .collect()
}

/// The operands of a parsed git subcommand, split at `--` into revisions (and paths git
/// tells apart by existence: `is_path`) and pathspecs.
fn split_operands<'a>(
    words: &[&'a str],
    p: &Parsed,
    is_path: &dyn Fn(&str) -> bool,
) -> (Vec<&'a str>, Vec<String>) {
    let dashdash = words.iter().position(|w| *w == "--");
    let mut revs = Vec::new();
    let mut specs = Vec::new();
    for &i in &p.operands {
        let Some(w) = words.get(i).copied() else {
            continue;
        };
        if dashdash.is_some_and(|d| i > d) || is_path(w) {
            specs.push(w.to_string());
        } else {
            revs.push(w);
        }
    }
    (revs, specs)
}

/// Whether a verified git command (`words`, subcommand at `sub_at`, parsed by its
/// grammar as `p`) prints contents from the object database or the index, and what it
/// reaches. `is_path` says whether an operand names an existing file (git's own rule for
/// telling a path from a revision).
pub fn content_read(
    words: &[&str],
    sub_at: usize,
    p: &Parsed,
    is_path: &dyn Fn(&str) -> bool,
) -> Option<ContentRead> {
    let sub = *words.get(sub_at)?;
    let (revs, mut pathspecs) = split_operands(words, p, is_path);
    // `--full-diff`: the pathspec picks commits, and their whole patch is printed.
    if p.has("full-diff") {
        pathspecs.clear();
    }
    let mut read = ContentRead {
        pathspecs,
        ..ContentRead::default()
    };
    // `REV:PATH` operands are reads of PATH of their own (the effects' `git_reads`);
    // their revision part is one more revision.
    let ids = |revs: &[&str]| -> Vec<String> { revs.iter().flat_map(|r| id_parts(r)).collect() };
    read.names = revs.iter().flat_map(|r| name_parts(r)).collect();
    match sub {
        "log" | "whatchanged" | "reflog" => {
            if !asks_for_content(p) {
                return None;
            }
            read.object_ids = ids(&revs);
        }
        // `stash list` takes log's options; `stash show` prints a stat by default.
        "stash" => {
            if !asks_for_content(p) {
                return None;
            }
        }
        // A blob or tree operand is printed whatever the format; a commit's patch
        // unless a summary format replaced it.
        "show" => {
            read.object_ids = ids(&revs);
            let names_blob = revs.iter().any(|r| r.contains(':'));
            // `HEAD` is always a commit; another name may be a tag of a blob.
            let other_names = read.names.iter().any(|n| n != "HEAD" && n != "@");
            let content = default_patch(p) || asks_for_content(p) || names_blob;
            if !content && !other_names && read.object_ids.is_empty() {
                return None;
            }
            read.objects_only = !content;
        }
        "diff" => {
            if p.has("no-index") || !(default_patch(p) || asks_for_content(p)) {
                return None;
            }
            read.object_ids = ids(&revs);
        }
        // `git grep PAT REV…` or `--cached` search the object database; the work tree
        // is the recursive read `git_readonly` returns.
        "grep" => {
            let pattern_given = p.has_short('e') || p.has_short('f');
            let mut revs = revs;
            if !pattern_given && !revs.is_empty() {
                revs.remove(0);
            }
            if revs.is_empty() && !p.has("cached") {
                return None;
            }
            read.object_ids = ids(&revs);
        }
        "cat-file" => {
            if !p.has_short('p') && !words.contains(&"-p") {
                return None;
            }
            read.object_ids = ids(&revs);
        }
        _ => return None,
    }
    Some(read)
}

/// Every path a content reader can reach in a repository, and every commit id.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Paths relative to the work tree, each once, sorted.
    pub paths: Vec<String>,
    /// Full ids of the commits reachable from a ref or a reflog.
    pub commits: Vec<String>,
    /// Refs that name a blob or a tree, directly or through a tag (`refs/tags/key`).
    pub object_refs: Vec<String>,
}

impl Reach {
    /// Whether `name` may mean one of `object_refs` (git's `refs/`, `refs/tags/`,
    /// `refs/heads/`, `refs/remotes/` lookup, and `refs/remotes/NAME/HEAD`).
    pub fn names_object(&self, name: &str) -> bool {
        self.object_refs.iter().any(|r| {
            r == name
                || ["refs/", "refs/tags/", "refs/heads/", "refs/remotes/"]
                    .iter()
                    .any(|p| r.strip_prefix(p) == Some(name))
                || r.strip_prefix("refs/remotes/")
                    .and_then(|x| x.strip_suffix("/HEAD"))
                    == Some(name)
        })
    }

    /// Whether `id` is the start of exactly one reachable commit's id.
    pub fn is_commit(&self, id: &str) -> bool {
        let id = id.to_ascii_lowercase();
        self.commits.iter().filter(|c| c.starts_with(&id)).count() == 1
    }
}

/// Runs git in the repository at `git_dir` (no pager, no lazy fetch, no external
/// programs) with `args`, and returns its output; `Err` on failure, a timeout or an
/// output over the cap.
fn run_git(git_dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    run_git_in(git_dir, git_dir, args)
}

/// `run_git` with `dir` as git's working directory (a work tree's root, for commands
/// that look at the work tree).
fn run_git_in(dir: &Path, git_dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let mut child = Command::new("git")
        .arg(format!("--git-dir={}", git_dir.display()))
        .args([
            "--no-pager",
            "--no-lazy-fetch",
            "--no-optional-locks",
            "--no-replace-objects",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let Some(mut stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("git's output cannot be read".to_string());
    };
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut limited = (&mut stdout).take((MAX_OUTPUT + 1) as u64);
        let ok = limited.read_to_end(&mut buf).is_ok();
        (buf, ok)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() < SCAN_DEADLINE => {
                std::thread::sleep(Duration::from_millis(1));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let (buf, ok) = reader
        .join()
        .map_err(|_| "git's output cannot be read".to_string())?;
    match status {
        Some(s) if s.success() && ok && buf.len() <= MAX_OUTPUT => Ok(buf),
        Some(_) => Err("git could not list the repository's history".to_string()),
        None => Err("listing the repository's history took too long".to_string()),
    }
}

/// Every path and commit a content reader can reach in the repository at `git_dir`.
pub fn reach(git_dir: &Path) -> Result<Reach, String> {
    let log = run_git(
        git_dir,
        &[
            "log",
            "--all",
            "--reflog",
            "--no-renames",
            "--diff-merges=first-parent",
            "--name-only",
            "--no-show-signature",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x01%H",
            "-z",
        ],
    )?;
    let index = run_git(git_dir, &["ls-files", "-z", "--cached", "--full-name"])?;
    let refs = run_git(
        git_dir,
        &[
            "for-each-ref",
            "--format=%(objecttype) %(*objecttype) %(refname)",
        ],
    )?;
    let object_refs: Vec<String> = String::from_utf8_lossy(&refs)
        .lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let (t, peeled, name) = (it.next()?, it.next()?, it.next()?);
            [t, peeled]
                .iter()
                .any(|x| matches!(*x, "blob" | "tree"))
                .then(|| name.to_string())
        })
        .collect();
    let mut paths = std::collections::BTreeSet::new();
    let mut commits = Vec::new();
    for token in log.split(|b| *b == 0).chain(index.split(|b| *b == 0)) {
        let t = String::from_utf8_lossy(token);
        if let Some(id) = t.strip_prefix('\u{1}') {
            commits.push(id.to_string());
            continue;
        }
        let path = t.strip_prefix('\n').unwrap_or(&t);
        if !path.is_empty() {
            paths.insert(path.to_string());
            if paths.len() > MAX_PATHS {
                return Err("the repository's history holds too many paths".to_string());
            }
        }
    }
    Ok(Reach {
        paths: paths.into_iter().collect(),
        commits,
        object_refs,
    })
}

/// The files `git add` stores from the directories `dirs` (absolute, inside
/// `work_tree`) without `--force`, as git itself lists them: the tracked ones and, unless
/// `tracked_only` (`-u`), the untracked ones no ignore rule covers (`.gitignore`,
/// `.git/info/exclude`, `core.excludesFile`), as absolute paths. Bounded like `reach`.
pub fn stageable(
    git_dir: &Path,
    work_tree: &Path,
    dirs: &[PathBuf],
    tracked_only: bool,
) -> Result<Vec<PathBuf>, String> {
    let mut flags = vec!["--cached", "--full-name"];
    if !tracked_only {
        flags.extend(["--others", "--exclude-standard"]);
    }
    let out = ls_files(git_dir, work_tree, dirs, &flags)?;
    let mut files = std::collections::BTreeSet::new();
    for token in out.split(|b| *b == 0).filter(|t| !t.is_empty()) {
        // A name that is not text cannot be judged as written: the caller walks instead.
        let name = std::str::from_utf8(token)
            .map_err(|_| "git lists a file whose name is not text".to_string())?;
        files.insert(work_tree.join(name));
        if files.len() > MAX_PATHS {
            return Err("git lists too many files to judge".to_string());
        }
    }
    Ok(files.into_iter().collect())
}

/// Whether every name git knows below the directories `dirs` (absolute, inside
/// `work_tree`) is a tracked file whose work-tree copy is the one the index holds, so
/// that removing the directories loses nothing git cannot give back (`git checkout --
/// DIR`): no untracked name (an ignored one included), no modified or deleted file, no
/// file git was told to stop looking at (`--assume-unchanged`, `--skip-worktree`), no
/// unmerged one. `Err` when git cannot say (a deadline, too many names).
pub fn recoverable(git_dir: &Path, work_tree: &Path, dirs: &[PathBuf]) -> Result<bool, String> {
    let out = ls_files(
        git_dir,
        work_tree,
        dirs,
        &["-v", "--cached", "--others", "--modified", "--deleted"],
    )?;
    // Each entry is a tag, a space and a name: `H` a tracked file as it is cached; `?`
    // untracked, `C` modified, `R` deleted, `M` unmerged, `S` skip-worktree, a lower
    // case letter assume-unchanged.
    Ok(out
        .split(|b| *b == 0)
        .filter(|t| !t.is_empty())
        .all(|t| t.starts_with(b"H ")))
}

/// `git ls-files -z FLAGS -- DIRS…` over `work_tree`, each directory a literal
/// pathspec relative to it (`.` for the top).
fn ls_files(
    git_dir: &Path,
    work_tree: &Path,
    dirs: &[PathBuf],
    flags: &[&str],
) -> Result<Vec<u8>, String> {
    let rel: Vec<String> = dirs
        .iter()
        .map(|d| {
            let r = d
                .strip_prefix(work_tree)
                .map_err(|_| format!("`{}` is outside the work tree", d.display()))?;
            Ok(if r.as_os_str().is_empty() {
                ".".to_string()
            } else {
                r.display().to_string()
            })
        })
        .collect::<Result<_, String>>()?;
    let tree = work_tree
        .to_str()
        .ok_or("the work tree's path is not text")?;
    let mut args = vec!["--literal-pathspecs", "--work-tree", tree, "ls-files", "-z"];
    args.extend(flags);
    args.push("--");
    args.extend(rel.iter().map(String::as_str));
    run_git_in(work_tree, git_dir, &args)
}

/// The paths of `reach` (relative to the work tree `base`) that the pathspecs select,
/// as absolute paths. A pathspec with magic or a wildcard selects everything (reading
/// more is the safe side). `prefix` is git's cwd relative to the work tree.
pub fn selected(reach: &Reach, base: &Path, prefix: &Path, pathspecs: &[String]) -> Vec<PathBuf> {
    let specs: Option<Vec<PathBuf>> = pathspecs
        .iter()
        .map(|s| {
            if s.starts_with(':') || s.contains(['*', '?', '[', '\\']) {
                return None;
            }
            let joined = crate::model::paths::clean(&base.join(prefix).join(s));
            joined.strip_prefix(base).ok().map(Path::to_path_buf)
        })
        .collect();
    let limit = match specs {
        Some(s) if !s.is_empty() => Some(s),
        _ => None,
    };
    reach
        .paths
        .iter()
        .filter(|p| {
            limit
                .as_ref()
                .is_none_or(|l| l.iter().any(|s| Path::new(p).starts_with(s)))
        })
        .map(|p| base.join(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_parts() {
        assert_eq!(id_parts("3b18e51~2..abcdef0"), vec!["3b18e51", "abcdef0"]);
        assert_eq!(id_parts("^3b18e51:src/a.rs"), vec!["3b18e51"]);
        assert!(id_parts("main..HEAD").is_empty());
        assert_eq!(name_parts("v1.0^{}...main@{1}"), vec!["v1.0", "main"]);
        assert!(name_parts("3b18e51").is_empty());
    }

    #[test]
    fn pathspecs_narrow_and_magic_widens() {
        let reach = Reach {
            paths: vec![".env".into(), "src/a.rs".into(), "src/sub/b.rs".into()],
            commits: vec!["3b18e51aaaa".into()],
            object_refs: vec!["refs/tags/key".into()],
        };
        let base = Path::new("/p");
        let all = |specs: &[&str], prefix: &str| -> Vec<PathBuf> {
            let specs: Vec<String> = specs.iter().map(|s| (*s).to_string()).collect();
            selected(&reach, base, Path::new(prefix), &specs)
        };
        assert_eq!(
            all(&["src"], ""),
            vec![base.join("src/a.rs"), base.join("src/sub/b.rs")]
        );
        assert_eq!(all(&["."], "src/sub"), vec![base.join("src/sub/b.rs")]);
        assert_eq!(all(&["../.env"], "src"), vec![base.join(".env")]);
        assert_eq!(all(&[":!src"], "").len(), 3);
        assert_eq!(all(&["*.rs"], "").len(), 3);
        assert!(reach.is_commit("3b18e51"));
        assert!(!reach.is_commit("65ec267"));
        assert!(reach.names_object("key"));
        assert!(reach.names_object("tags/key"));
        assert!(!reach.names_object("main"));
    }
}
