//! Which repository git uses, and which configuration files it reads, found as git finds
//! them (git 2.47's `setup.c`: `setup_git_directory_gently_1`, `is_git_directory`,
//! `read_gitfile_gently`; `config.c`: includes). Pure functions over the file system:
//! nothing here runs git, and nothing knows of requests or rules.
//!
//! Discovery: `--git-dir` names the repository (a directory or a gitfile); otherwise git
//! walks up from its working directory (after every `-C`), and in each directory D it
//! first tries `D/.git` (a gitfile `gitdir: PATH`, or a directory that is a git
//! directory), then D itself (a bare repository: any directory with a valid `HEAD`,
//! `objects/` and `refs/`, or `HEAD` and a `commondir` whose target has them;
//! `safe.bareRepository` defaults to `all`). The first hit is the repository. Ceilings
//! (`GIT_CEILING_DIRECTORIES`) and the file-system boundary
//! (`GIT_DISCOVERY_ACROSS_FILESYSTEM`) only make git stop earlier and fail, so walking
//! past them finds nothing git would use that it does not: they are not modelled.
//!
//! A repository is *protected* when every file git takes code from — its git directory,
//! its common directory, and every configuration file it includes — is a path the
//! protected-write table covers (under a `.git` component) or lies outside the project
//! (writes there ask). Only then may the analysis vouch for a git command run in it.

use std::path::{Component, Path, PathBuf};

use crate::model::paths;

/// Most bytes of a gitfile, `HEAD` or `commondir` read (git's own gitfile limit is 1 MiB).
const MAX_POINTER_BYTES: u64 = 4096;
/// Most bytes of one configuration file parsed for includes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// git's `MAX_INCLUDE_DEPTH`: deeper include chains are an error in git.
const MAX_INCLUDE_DEPTH: usize = 10;
/// Most configuration files followed for one command.
const MAX_CONFIG_FILES: usize = 64;

/// The repository a git command uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// The git directory (`<work tree>/.git`, a bare repository, a gitfile's target).
    pub git_dir: PathBuf,
    /// Where config, objects and refs live: the git directory, or what its `commondir`
    /// names (a linked worktree's main repository).
    pub common_dir: PathBuf,
    /// The work tree: the directory holding `.git`; `None` for a bare repository.
    pub work_tree: Option<PathBuf>,
}

/// What discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// No repository: git fails, or runs without one.
    None,
    Found(Repository),
    /// git would use something the analysis cannot see (an unknown directory, a
    /// gitfile it cannot read): the reason.
    Unknown(String),
}

/// A valid `HEAD` (`validate_headref`): a symbolic ref `ref: refs/…`, a symlink into
/// `refs/`, or a full object id.
fn valid_head(head: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(head) else {
        return false;
    };
    if meta.file_type().is_symlink() {
        return std::fs::read_link(head).is_ok_and(|t| t.to_string_lossy().starts_with("refs/"));
    }
    if !meta.is_file() || meta.len() > MAX_POINTER_BYTES {
        return false;
    }
    let Ok(Some(text)) = crate::model::paths::read_small_file(head, MAX_POINTER_BYTES) else {
        return false;
    };
    let text = String::from_utf8_lossy(&text);
    if let Some(rest) = text.strip_prefix("ref:") {
        return rest.trim_start().starts_with("refs/");
    }
    let id = text.trim_end_matches(['\n', '\r']);
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// git's `access(path, X_OK)` on `objects` and `refs`: a directory, or a file with an
/// execute bit.
fn accessible(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_dir() || m.permissions().mode() & 0o111 != 0)
}

/// The common directory `commondir` in `dir` names, if the file exists (relative paths
/// are relative to `dir`). `Some(None)`: it exists but cannot be read.
fn commondir_of(dir: &Path) -> Option<Option<PathBuf>> {
    let file = dir.join("commondir");
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_POINTER_BYTES {
        return Some(None);
    }
    let Ok(Some(text)) = crate::model::paths::read_small_file(&file, MAX_POINTER_BYTES) else {
        return Some(None);
    };
    let Ok(text) = String::from_utf8(text) else {
        return Some(None);
    };
    let line = text.trim_end_matches(['\n', '\r']);
    if line.is_empty() {
        return Some(None);
    }
    Some(Some(paths::resolve_existing_prefix(&paths::clean(
        &dir.join(line),
    ))))
}

/// `is_git_directory`: the shape that makes a directory a repository to git. Returns
/// the common directory when it is one.
pub fn git_directory(dir: &Path) -> Option<PathBuf> {
    if !valid_head(&dir.join("HEAD")) {
        return None;
    }
    let common = match commondir_of(dir) {
        Some(Some(c)) => c,
        Some(None) => return None,
        None => dir.to_path_buf(),
    };
    (accessible(&common.join("objects")) && accessible(&common.join("refs"))).then_some(common)
}

/// Whether `dir` has, or after a write of `written` would have, the shape of a git
/// directory, counted generously (`HEAD` of any content; `objects` and `refs` of any
/// kind, or a `commondir`): the protected-write check, which must not miss a
/// repository in the making.
pub fn git_shaped_after(dir: &Path, written: &Path) -> bool {
    let has = |name: &str| {
        let p = dir.join(name);
        written.starts_with(&p) || std::fs::symlink_metadata(&p).is_ok()
    };
    has("HEAD") && ((has("objects") && has("refs")) || has("commondir"))
}

/// The git directory a gitfile names (`gitdir: PATH`, relative to the file's directory).
/// `Err`: the file is no valid gitfile (git then dies).
fn read_gitfile(file: &Path) -> Result<PathBuf, String> {
    let shown = file.display();
    let meta = std::fs::metadata(file).map_err(|_| format!("cannot read `{shown}`"))?;
    if meta.len() > MAX_POINTER_BYTES {
        return Err(format!("`{shown}` is too large for a gitfile"));
    }
    let text = crate::model::paths::read_small_file(file, MAX_POINTER_BYTES)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| format!("cannot read `{shown}`"))?;
    let target = text
        .strip_prefix("gitdir: ")
        .map(|t| t.trim_end_matches(['\n', '\r']))
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("`{shown}` is no gitfile"))?;
    let base = file.parent().unwrap_or(Path::new("/"));
    Ok(paths::resolve_existing_prefix(&paths::clean(
        &base.join(target),
    )))
}

/// The repository named by `--git-dir` (a directory, or a gitfile) or found by walking
/// up from `cwd` (absolute). `work_tree` is `--work-tree`'s value, if given.
pub fn discover(cwd: &Path, git_dir: Option<&Path>, work_tree: Option<&Path>) -> Discovery {
    if let Some(g) = git_dir {
        let g = paths::resolve_existing_prefix(g);
        let dir = if g.is_file() {
            match read_gitfile(&g) {
                Ok(d) => d,
                Err(e) => return Discovery::Unknown(e),
            }
        } else {
            g
        };
        // git accepts an explicit `--git-dir` that fails the shape check only to die
        // later; anything it could use is judged by the same rules.
        let common = git_directory(&dir).unwrap_or_else(|| dir.clone());
        return Discovery::Found(Repository {
            git_dir: dir,
            common_dir: common,
            work_tree: work_tree.map(paths::resolve_existing_prefix),
        });
    }
    let start = paths::resolve_existing_prefix(cwd);
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        match std::fs::metadata(&dot_git) {
            Ok(m) if m.is_file() => {
                return match read_gitfile(&dot_git) {
                    Ok(target) => {
                        match git_directory(&target) {
                            Some(common) => Discovery::Found(Repository {
                                git_dir: target,
                                common_dir: common,
                                work_tree: Some(work_tree.map_or_else(
                                    || dir.to_path_buf(),
                                    paths::resolve_existing_prefix,
                                )),
                            }),
                            None => Discovery::Unknown(format!(
                                "`{}` points at `{}`, which is not a repository",
                                dot_git.display(),
                                target.display()
                            )),
                        }
                    }
                    Err(e) => Discovery::Unknown(e),
                };
            }
            Ok(m) if m.is_dir() => {
                if let Some(common) = git_directory(&dot_git) {
                    return Discovery::Found(Repository {
                        git_dir: dot_git,
                        common_dir: common,
                        work_tree: Some(
                            work_tree
                                .map_or_else(|| dir.to_path_buf(), paths::resolve_existing_prefix),
                        ),
                    });
                }
            }
            _ => {}
        }
        if let Some(common) = git_directory(dir) {
            return Discovery::Found(Repository {
                git_dir: dir.to_path_buf(),
                common_dir: common,
                work_tree: work_tree.map(paths::resolve_existing_prefix),
            });
        }
    }
    Discovery::None
}

/// Whether `p` has a `.git` component (ASCII case ignored, as the protected-write table
/// matches): every path under it is protected.
pub fn under_dot_git(p: &Path) -> bool {
    p.components().any(|c| match c {
        Component::Normal(n) => n.to_string_lossy().eq_ignore_ascii_case(".git"),
        _ => false,
    })
}

/// Whether an agent cannot change `p` silently: it is under a `.git` component, or
/// outside the project (writes there ask).
pub fn out_of_reach(p: &Path, root: &Path) -> bool {
    under_dot_git(p) || !paths::is_inside(p, root)
}

/// The configuration files a git command reads, in git's order, each followed by the
/// files it includes: system, user (XDG, then `~/.gitconfig`), the repository's
/// `config`, and its `config.worktree` when present. `Err`: an include that cannot be
/// known (git then reads a file the analysis cannot name).
pub fn config_files(repo: Option<&Repository>, home: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(config_files_and_code(repo, home)?.0)
}

/// `config_files`, and the values of the keys in them that run a program.
fn config_files_and_code(
    repo: Option<&Repository>,
    home: &Path,
) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let mut base = global_config_files(home);
    if let Some(r) = repo {
        base.push(r.common_dir.join("config"));
        let wt = r.git_dir.join("config.worktree");
        if wt.exists() {
            base.push(wt);
        }
    }
    read_all(&base, home)
}

/// The files the configuration git reads includes (`include.path`,
/// `includeIf.*.path`, every condition counted as met), beyond the system, user and
/// repository files themselves: git opens each of them on every command, so each is a
/// read (an include of `~/.pypirc` reads the secret whether or not git prints it).
pub fn included_config_files(
    repo: Option<&Repository>,
    home: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut base = global_config_files(home);
    if let Some(r) = repo {
        base.push(r.common_dir.join("config"));
        base.push(r.git_dir.join("config.worktree"));
    }
    Ok(config_files(repo, home)?
        .into_iter()
        .filter(|f| !base.contains(f))
        .collect())
}

/// The system and user configuration files (`--system`, `--global`).
pub fn global_config_files(home: &Path) -> Vec<PathBuf> {
    vec![
        PathBuf::from("/etc/gitconfig"),
        home.join(".config/git/config"),
        home.join(".gitconfig"),
    ]
}

/// Whether git reads its configuration from `path` by its place: a repository's
/// `config` or `config.worktree` (in `.git/`, `.git/worktrees/*/`, `.git/modules/…/`),
/// or one of the system and user files (`global_config_files`).
pub fn is_config_file(path: &Path, home: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str());
    if !matches!(
        name,
        Some("config" | "config.worktree" | ".gitconfig" | "gitconfig")
    ) {
        return false;
    }
    if global_config_files(home).iter().any(|f| f == path) {
        return true;
    }
    matches!(name, Some("config" | "config.worktree"))
        && path.parent().is_some_and(|dir| {
            dir.components()
                .any(|c| c.as_os_str() == std::ffi::OsStr::new(".git"))
        })
}

/// Whether a configuration's text holds a credential, which git prints with the rest
/// of it (`git config --list`, `git remote -v`, `cat .git/config`): a URL over http
/// with a user part (`https://user:token@host`, `https://TOKEN@host`) or any URL with
/// a password, in a value or in a section's name (`[url "https://t@host/"]`); an
/// `http.extraHeader` (an `Authorization` header: actions/checkout writes one into
/// `.git/config`); a key named like a password or a token (`sendemail.smtpPass`,
/// `github.token`). Text this reader does not read as git does counts as holding one.
pub fn holds_credential(text: &str) -> bool {
    let Some(entries) = entries(text) else {
        return true;
    };
    entries.iter().any(|(name, value)| {
        let key = name.rsplit('.').next().unwrap_or_default();
        let secret_key = [
            "password", "passwd", "token", "secret", "apikey", "api-key", "api_key",
        ]
        .iter()
        .any(|w| key.contains(w))
            || key.ends_with("pass");
        (secret_key && !value.is_empty())
            || (name.starts_with("http.") && key == "extraheader")
            || url_with_credential(name)
            || url_with_credential(value)
    })
}

/// Whether `text` holds a URL whose user part is a credential: any with a password
/// (`scheme://user:pass@`), and over http any user part at all (a token passed as the
/// user name). An ssh user name (`ssh://git@host`) is not one.
fn url_with_credential(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme = rest
            .get(..at)
            .unwrap_or_default()
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-')))
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let after = rest.get(at + 3..).unwrap_or_default();
        let authority = after
            .split(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .next()
            .unwrap_or_default();
        if let Some((user, _)) = authority.rsplit_once('@')
            && (user.contains(':') || scheme.starts_with("http") || scheme.starts_with("ftp"))
        {
            return true;
        }
        rest = after;
    }
    false
}

/// A configuration's text with its credentials taken out, for a reader that must not
/// see them but needs the rest (git inside the sandbox): the user part of every URL
/// dropped (`https://tok@host/` becomes `https://host/`), and every line of a key named
/// like a password or token or of an `extraHeader` turned into a comment. `None` when
/// what is left still holds one as `holds_credential` reads it.
pub fn without_credentials(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed = line.trim_start();
        let key = trimmed
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let secret_key = !trimmed.starts_with('[')
            && !trimmed.starts_with('#')
            && !trimmed.starts_with(';')
            && (key == "extraheader"
                || [
                    "password", "passwd", "token", "secret", "apikey", "api-key", "api_key",
                ]
                .iter()
                .any(|w| key.contains(w))
                || key.ends_with("pass"));
        if secret_key {
            out.push_str("# (a credential was here)\n");
            continue;
        }
        out.push_str(&strip_user_parts(line));
        out.push('\n');
    }
    (!holds_credential(&out)).then_some(out)
}

/// `text` with the user part of every URL in it dropped.
fn strip_user_parts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, after) = rest.split_at(at + 3);
        out.push_str(head);
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"') || c.is_whitespace())
            .unwrap_or(after.len());
        let (authority, tail) = after.split_at(end);
        out.push_str(
            authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host),
        );
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Whether `path` is a git configuration (by its place, `is_config_file`) that holds a
/// credential (`text_holds`: one that cannot be read whole is taken to hold one).
pub fn credential_config(path: &Path, home: &Path) -> bool {
    is_config_file(path, home) && super::text_holds(path, holds_credential)
}

/// `files` and, after each, what it includes (depth first, as git reads them).
/// On an include this reading cannot follow, the files read up to it (the one that
/// stopped it included: git opens it too) and why it stopped.
pub fn with_includes(
    files: &[PathBuf],
    home: &Path,
) -> Result<Vec<PathBuf>, (Vec<PathBuf>, String)> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut code: Vec<String> = Vec::new();
    for f in files {
        if let Err(e) = follow(f, home, 0, &mut out, &mut code) {
            return Err((out, e));
        }
    }
    Ok(out)
}

/// The files (`with_includes`) and the values of their keys that run a program
/// (`git::config_key`: `diff.*.textconv`, `core.fsmonitor`, …).
fn read_all(files: &[PathBuf], home: &Path) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut code: Vec<String> = Vec::new();
    for f in files {
        follow(f, home, 0, &mut out, &mut code)?;
    }
    Ok((out, code))
}

fn follow(
    file: &Path,
    home: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    code: &mut Vec<String>,
) -> Result<(), String> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(format!(
            "`{}` nests includes deeper than git allows",
            file.display()
        ));
    }
    if out.len() >= MAX_CONFIG_FILES {
        return Err("too many configuration files to follow".to_string());
    }
    let file = paths::resolve_existing_prefix(file);
    out.push(file.clone());
    let Ok(meta) = std::fs::metadata(&file) else {
        // git skips an include that does not exist.
        return Ok(());
    };
    if !meta.is_file() {
        return Ok(());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!("`{}` is too large to read", file.display()));
    }
    let text = crate::model::paths::read_small_file(&file, MAX_CONFIG_BYTES)
        .ok()
        .flatten()
        .ok_or_else(|| format!("cannot read `{}`", file.display()))?;
    let text = String::from_utf8_lossy(&text);
    let all = entries(&text).ok_or_else(|| format!("cannot parse `{}`", file.display()))?;
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    for (name, value) in all {
        let lower = name.to_ascii_lowercase();
        let include = lower == "include.path"
            || (lower.starts_with("includeif.") && lower.ends_with(".path"));
        if include {
            let target = resolve_include(&value, &dir, home)
                .ok_or_else(|| format!("`{}` includes `{value}`", file.display()))?;
            follow(&target, home, depth + 1, out, code)?;
        } else if super::git::config_key(&name).is_some()
            // Hook directories (husky's `core.hooksPath = .husky/_`) run on commit,
            // checkout and push, which ask on their own; the hook table protects them.
            && !matches!(lower.as_str(), "core.hookspath" | "init.templatedir")
        {
            code.push(value);
        }
    }
    Ok(())
}

/// An include path as git resolves it: `~/` is the home, a relative path is relative to
/// the including file's directory. `~user/` and `%(prefix)/` are not followed.
fn resolve_include(value: &str, dir: &Path, home: &Path) -> Option<PathBuf> {
    if value.is_empty() || value.starts_with("%(") {
        return None;
    }
    let p = if value == "~" {
        home.to_path_buf()
    } else if let Some(rest) = value.strip_prefix("~/") {
        home.join(rest)
    } else if value.starts_with('~') {
        return None;
    } else if value.starts_with('/') {
        PathBuf::from(value)
    } else {
        dir.join(value)
    };
    Some(paths::clean(&p))
}

/// Every `name = value` of a configuration file's text, the name as
/// `section[.subsection].key` (section and key lowercased, as git compares them).
/// `None`: text git's parser would read differently from this one, or reject.
pub fn entries(text: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut section = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied();
    while i < chars.len() {
        let c = at(i)?;
        if c == '\n' || c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' || c == ';' {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
            continue;
        }
        if c == '[' {
            // `[name]`, `[name "sub"]`, `[name.sub]`: only the name matters here.
            i += 1;
            let mut name = String::new();
            while let Some(c) = at(i) {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    name.push(c.to_ascii_lowercase());
                    i += 1;
                } else {
                    break;
                }
            }
            match at(i)? {
                ']' => i += 1,
                ' ' | '\t' => {
                    while matches!(at(i), Some(' ' | '\t')) {
                        i += 1;
                    }
                    if at(i)? != '"' {
                        return None;
                    }
                    i += 1;
                    let mut sub = String::new();
                    loop {
                        match at(i)? {
                            '\n' => return None,
                            '\\' => {
                                sub.push(at(i + 1)?);
                                i += 2;
                            }
                            '"' => {
                                i += 1;
                                break;
                            }
                            c => {
                                sub.push(c);
                                i += 1;
                            }
                        }
                    }
                    if at(i)? != ']' {
                        return None;
                    }
                    i += 1;
                    name = format!("{name}.{sub}");
                }
                _ => return None,
            }
            section = name;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let mut key = String::new();
        while let Some(c) = at(i) {
            if c.is_ascii_alphanumeric() || c == '-' {
                key.push(c.to_ascii_lowercase());
                i += 1;
            } else {
                break;
            }
        }
        while matches!(at(i), Some(' ' | '\t')) {
            i += 1;
        }
        let value = match at(i) {
            None | Some('\n') => String::new(),
            Some('#' | ';') => String::new(),
            Some('=') => {
                i += 1;
                let (v, next) = parse_value(&chars, i)?;
                i = next;
                v
            }
            Some('\r') if at(i + 1) == Some('\n') => String::new(),
            _ => return None,
        };
        out.push((format!("{section}.{key}"), value));
    }
    Some(out)
}

/// The values of `include.path` and `includeIf.<condition>.path` in a configuration
/// file's text, every condition counted as true (reading more is the safe side).
/// `None`: text git's parser would read differently from this one, or reject.
pub fn include_paths(text: &str) -> Option<Vec<String>> {
    Some(
        entries(text)?
            .into_iter()
            .filter(|(name, _)| {
                let lower = name.to_ascii_lowercase();
                lower == "include.path"
                    || (lower.starts_with("includeif.") && lower.ends_with(".path"))
            })
            .map(|(_, v)| v)
            .collect(),
    )
}

/// A value from `start` to the end of its line, as git's `parse_value` reads it: quotes
/// removed, escapes `\\ \" \n \t \b` decoded, a trailing `\` joining the next line,
/// comments cut, surrounding unquoted whitespace dropped. Returns the value and where
/// the next line starts.
fn parse_value(chars: &[char], start: usize) -> Option<(String, usize)> {
    let mut i = start;
    let mut value = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut started = false;
    loop {
        let Some(&c) = chars.get(i) else {
            return (!quoted).then_some((value, i));
        };
        i += 1;
        match c {
            '\n' => {
                if quoted {
                    return None;
                }
                return Some((value, i));
            }
            '\\' => {
                let n = *chars.get(i)?;
                i += 1;
                let decoded = match n {
                    '\n' => continue,
                    '\r' if chars.get(i) == Some(&'\n') => {
                        i += 1;
                        continue;
                    }
                    't' => '\t',
                    'b' => '\u{8}',
                    'n' => '\n',
                    '\\' => '\\',
                    '"' => '"',
                    _ => return None,
                };
                value.push_str(&pending_space);
                pending_space.clear();
                value.push(decoded);
                started = true;
            }
            '"' => {
                value.push_str(&pending_space);
                pending_space.clear();
                quoted = !quoted;
                started = true;
            }
            '#' | ';' if !quoted => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    pending_space.push(' ');
                }
            }
            c => {
                value.push_str(&pending_space);
                pending_space.clear();
                value.push(c);
                started = true;
            }
        }
    }
}

/// Why git, run in `repo`, would take code from a file the agent can change silently:
/// the git directory or common directory of a repository that is not under a `.git`
/// component of the project, or a configuration file it includes. `None`: protected.
pub fn unprotected(repo: &Repository, root: &Path, home: &Path) -> Option<String> {
    // The project's own repository is `<root>/.git` (its worktrees and submodules live
    // below it); a repository elsewhere in the project (`vendor/dep/.git`, a bare
    // directory) has a configuration this project's protection never vouched for, even
    // under a `.git` component: git only runs it when it is the project's own or the
    // user's, outside the project.
    let own = root.join(".git");
    for d in [&repo.git_dir, &repo.common_dir] {
        if paths::is_inside(d, root) && !d.starts_with(&own) {
            return Some(format!(
                "git uses the repository at `{}`, not the project's own `.git`: its configuration and attributes can run programs",
                d.display()
            ));
        }
    }
    let (files, code) = match config_files_and_code(Some(repo), home) {
        Ok(f) => f,
        Err(e) => {
            return Some(format!(
                "git reads configuration the analysis cannot follow: {e}"
            ));
        }
    };
    if let Some(f) = files.iter().find(|f| !out_of_reach(f, root)) {
        return Some(format!(
            "git reads its configuration from `{}`, which any write can change",
            f.display()
        ));
    }
    // A driver the protected configuration names may itself be a project file
    // (`textconv = ./tools/conv.sh`): git runs it from the top of the work tree.
    let top = repo.work_tree.as_deref().unwrap_or(&repo.git_dir);
    code.iter()
        .flat_map(|v| program_paths(v))
        .map(|w| match w.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => paths::clean(&top.join(w)),
        })
        .map(|p| paths::resolve_existing_prefix(&p))
        .find(|p| !out_of_reach(p, root))
        .map(|p| {
            format!(
                "git's configuration runs `{}`, which any write can change",
                p.display()
            )
        })
}

/// The words of a configuration value that name a file by path (`./x.sh`, `tools/x`,
/// `/abs/x`, `~/x`): split at whitespace, quotes and shell operators.
fn program_paths(value: &str) -> Vec<&str> {
    value
        .split(|c: char| c.is_whitespace() || "'\";|&<>()`$!".contains(c))
        .filter(|w| w.contains('/'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Credentials as they sit in real configurations, and what is not one.
    #[test]
    fn credentials_in_a_configuration() {
        for held in [
            "[remote \"origin\"]\n\turl = https://x-access-token:ghs_abc@github.com/o/r.git\n",
            "[remote \"origin\"]\n\turl = https://ghp_abc@github.com/o/r.git\n",
            "[remote \"origin\"]\n\tpushurl = ssh://deploy:hunter2@host/r.git\n",
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n",
            "[http]\n\textraHeader = Authorization: Bearer abc\n",
            "[url \"https://tok@github.com/\"]\n\tinsteadOf = https://github.com/\n",
            "[sendemail]\n\tsmtpPass = hunter2\n",
            "[github]\n\ttoken = abc\n",
            "[http]\n\tproxy = http://me:pw@proxy:3128\n",
            // Not read as git reads it: counted as holding one.
            "[remote \"origin\"\n\turl = x\n",
        ] {
            assert!(holds_credential(held), "{held:?}");
        }
        for none in [
            "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
            "[remote \"origin\"]\n\turl = git@github.com:o/r.git\n",
            "[remote \"origin\"]\n\turl = ssh://git@github.com/o/r.git\n",
            "[user]\n\temail = a@b.example\n\tsigningkey = ABCD\n",
            "[credential]\n\thelper = store\n",
            "[core]\n\tbare = false\n",
        ] {
            assert!(!holds_credential(none), "{none:?}");
        }
    }

    /// What git inside the sandbox reads instead: the same configuration, no credential.
    #[test]
    fn credentials_taken_out() {
        let text = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://x-access-token:ghs_abc@github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eA==\n[url \"https://tok@host/\"]\n\tinsteadOf = https://host/\n[github]\n\ttoken = abc\n";
        let clean = without_credentials(text).unwrap();
        assert!(!holds_credential(&clean), "{clean}");
        assert!(
            clean.contains("url = https://github.com/o/r.git"),
            "{clean}"
        );
        assert!(clean.contains("[url \"https://host/\"]"), "{clean}");
        assert!(clean.contains("bare = false"), "{clean}");
        assert!(!clean.contains("ghs_abc") && !clean.contains("eA==") && !clean.contains("= abc"));
    }

    #[test]
    fn configuration_files_by_place() {
        let home = Path::new("/home/u");
        for yes in [
            "/p/.git/config",
            "/p/.git/config.worktree",
            "/p/.git/worktrees/w/config.worktree",
            "/p/.git/modules/sub/config",
            "/home/u/.gitconfig",
            "/home/u/.config/git/config",
            "/etc/gitconfig",
        ] {
            assert!(is_config_file(Path::new(yes), home), "{yes}");
        }
        for no in [
            "/p/config",
            "/p/src/config",
            "/p/.gitconfig",
            "/p/.git/HEAD",
        ] {
            assert!(!is_config_file(Path::new(no), home), "{no}");
        }
    }

    #[test]
    fn include_paths_follow_git_syntax() {
        let t = "[core]\n\tbare = false\n[include]\n\tpath = ~/.pypirc\n[includeIf \"gitdir:/x/\"]\n path = \"a b\" ; c\n[include] path = one.cfg\n[other]\npath = no\n";
        assert_eq!(
            include_paths(t),
            Some(vec![
                "~/.pypirc".to_string(),
                "a b".to_string(),
                "one.cfg".to_string()
            ])
        );
        assert_eq!(
            include_paths("[Include]\n\tPATH = x\\\ny\n"),
            Some(vec!["xy".to_string()])
        );
        assert_eq!(include_paths("[include\npath = x\n"), None);
        assert_eq!(include_paths("[include]\npath = \"x\n"), None);
        assert_eq!(include_paths("\u{feff}[x]\n"), None);
    }

    #[test]
    fn discovery_finds_bare_shapes_and_gitfiles() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let bare = base.join("p/bare");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        std::fs::create_dir_all(base.join("p/bare/sub")).unwrap();
        assert_eq!(discover(&bare, None, None), Discovery::None);
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let Discovery::Found(r) = discover(&bare.join("sub"), None, None) else {
            panic!("bare/ is a repository");
        };
        assert_eq!(r.git_dir, bare);
        assert_eq!(r.work_tree, None);
        assert!(unprotected(&r, &base.join("p"), &base).is_some());
        // A gitfile pointing at it.
        std::fs::create_dir_all(base.join("p/w")).unwrap();
        std::fs::write(base.join("p/w/.git"), "gitdir: ../bare\n").unwrap();
        let Discovery::Found(r) = discover(&base.join("p/w"), None, None) else {
            panic!("the gitfile names a repository");
        };
        assert_eq!(r.git_dir, bare);
        assert_eq!(r.work_tree, Some(base.join("p/w")));
        // An invalid HEAD is no repository.
        std::fs::write(bare.join("HEAD"), "nonsense\n").unwrap();
        assert!(matches!(
            discover(&base.join("p/w"), None, None),
            Discovery::Unknown(_)
        ));
        assert_eq!(discover(&bare, None, None), Discovery::None);
    }

    #[test]
    fn a_real_repository_is_protected_until_it_includes_a_project_file() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let root = base.join("p");
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("objects")).unwrap();
        std::fs::create_dir_all(git.join("refs")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let Discovery::Found(r) = discover(&root.join("src"), None, None) else {
            panic!("found");
        };
        assert_eq!(r.git_dir, git);
        assert_eq!(unprotected(&r, &root, &base.join("home")), None);
        std::fs::write(git.join("config"), "[include]\n\tpath = ../x.cfg\n").unwrap();
        assert!(unprotected(&r, &root, &base.join("home")).is_some());
        std::fs::write(git.join("config"), "[include]\n\tpath = ~/.pypirc\n").unwrap();
        assert_eq!(unprotected(&r, &root, &base.join("home")), None);
        let files = config_files(Some(&r), &base.join("home")).unwrap();
        assert!(files.contains(&base.join("home/.pypirc")));
    }

    #[test]
    fn a_driver_in_the_project_is_unprotected() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let root = base.join("p");
        let git = root.join(".git");
        std::fs::create_dir_all(git.join("objects")).unwrap();
        std::fs::create_dir_all(git.join("refs")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let repo = Repository {
            git_dir: git.clone(),
            common_dir: git.clone(),
            work_tree: Some(root.clone()),
        };
        let home = base.join("home");
        for (config, protected) in [
            ("[diff \"x\"]\n\ttextconv = ./tools/conv.sh\n", false),
            ("[core]\n\tfsmonitor = \"sh tools/fsmon\"\n", false),
            ("[diff \"x\"]\n\ttextconv = /usr/bin/strings\n", true),
            ("[diff \"x\"]\n\ttextconv = cat\n", true),
            ("[core]\n\thooksPath = .husky/_\n", true),
            ("[diff \"x\"]\n\ttextconv = .git/conv.sh\n", true),
        ] {
            std::fs::write(git.join("config"), config).unwrap();
            assert_eq!(
                unprotected(&repo, &root, &home).is_none(),
                protected,
                "{config}"
            );
        }
    }

    #[test]
    fn shape_after_a_write() {
        let t = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(d.join("objects")).unwrap();
        std::fs::write(d.join("HEAD"), "x").unwrap();
        assert!(!git_shaped_after(&d, &d.join("a.txt")));
        assert!(git_shaped_after(&d, &d.join("refs/heads/main")));
        assert!(git_shaped_after(&d, &d.join("commondir")));
    }
}
