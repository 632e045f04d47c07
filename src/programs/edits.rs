//! In-project edits: the literal commands whose every effect is a write of files
//! inside the project, made by programs modelled option by option (`mkdir`, `touch`,
//! `cp`, `mv`, `ln -s`, `tee`, `sed -i` with a script of editing commands only, `rm`,
//! `rmdir`, `chmod` with a plain permission mode, `git add` of literal paths in the project's
//! own repository).
//!
//! Owns which words make such an edit and the complete list of what it writes and
//! copies; the analysis turns them into requests (every write judged by the write
//! rules, the protected paths and the secret rules; every copied tree judged as reads)
//! and `presets` owns the rules that allow the verdict. Options were read from the GNU
//! programs' `--help` and checked by running them; an option not listed here keeps the
//! command unverified (today's answer). Knows nothing of requests or rules.

use std::path::{Path, PathBuf};

use super::git_discovery::{self, Discovery};
use super::git_history;
use crate::model::paths;
use crate::model::vocab::AnalysisContext;

/// What a verified edit does, as absolute paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edit {
    /// Every path the command creates, changes or removes (for a copy or move of a
    /// directory, every name it creates below the destination too).
    pub writes: Vec<PathBuf>,
    /// Files whose content ends up under a new name (copy and move sources).
    pub reads: Vec<PathBuf>,
    /// Directories copied or moved whole: every file below is read.
    pub trees: Vec<PathBuf>,
    /// Names removed as themselves, not as what they point to (a symlink `rm` or `mv`
    /// takes away): judged by their own path, which is not resolved again.
    pub names: Vec<PathBuf>,
    /// Directories of which exactly these files are read (what `git add DIR` stores,
    /// as git lists it): each file judged as a read, the directory as the subject.
    pub listed: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Directories removed whole (`rm -r`), found recoverable from git as they are
    /// now: the proof holds only if nothing else the command runs writes.
    pub removed_trees: Vec<PathBuf>,
}

/// Most names below one copied or moved directory before the command is left
/// unverified (each is a write to judge).
const MAX_TREE_ENTRIES: usize = 512;

/// The edit one literal simple command makes, run in `cwd`, or `None` when it is not
/// one this module proves: an unknown option, an operand outside the project (or the
/// project root itself), a word with a `~` the shell may have meant differently.
pub fn edit(words: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    if !paths::is_inside(cwd, ctx.root()) {
        return None;
    }
    let (name, rest) = words.split_first()?;
    match *name {
        "mkdir" => mkdir(rest, cwd, ctx),
        "touch" => plain(rest, "acm", &["--no-create"], cwd, ctx),
        "tee" => plain(rest, "aip", &["--append", "--ignore-interrupts"], cwd, ctx),
        "cp" => copy(
            rest,
            "rRapvnfuT",
            &[
                "--recursive",
                "--archive",
                "--verbose",
                "--no-clobber",
                "--force",
                "--update",
                "--no-target-directory",
            ],
            false,
            cwd,
            ctx,
        ),
        "mv" => copy(
            rest,
            "fnvuT",
            &[
                "--force",
                "--no-clobber",
                "--verbose",
                "--update",
                "--no-target-directory",
            ],
            true,
            cwd,
            ctx,
        ),
        "ln" => symlink(rest, cwd, ctx),
        "sed" => sed_in_place(rest, cwd, ctx),
        "rm" => remove(rest, cwd, ctx),
        "rmdir" => rmdir(rest, cwd, ctx),
        "chmod" => chmod(rest, cwd, ctx),
        "git" => git_add(rest, cwd, ctx),
        _ => None,
    }
}

/// Options (short letters taking no value, clustered or not; long flags) and operands.
struct Parsed<'w> {
    letters: String,
    long: Vec<&'w str>,
    operands: Vec<&'w str>,
}

fn parse<'w>(rest: &[&'w str], short: &str, long: &[&str]) -> Option<Parsed<'w>> {
    let mut p = Parsed {
        letters: String::new(),
        long: Vec::new(),
        operands: Vec::new(),
    };
    let mut only_operands = false;
    for w in rest {
        if only_operands || !w.starts_with('-') || *w == "-" {
            p.operands.push(w);
        } else if *w == "--" {
            only_operands = true;
        } else if w.starts_with("--") {
            if !long.contains(w) {
                return None;
            }
            p.long.push(w);
        } else {
            let letters = w.get(1..)?;
            if !letters.chars().all(|c| short.contains(c)) {
                return None;
            }
            p.letters.push_str(letters);
        }
    }
    Some(p)
}

/// An operand's path, inside the project and not the root itself. A `~` the analysis
/// would have to guess about (a quoted one, `~user`) leaves it unproven.
fn inside(word: &str, cwd: &Path, ctx: &AnalysisContext) -> Option<PathBuf> {
    if word.is_empty() || (word.starts_with('~') && !word.starts_with("~/") && word != "~") {
        return None;
    }
    let p = paths::resolve_word(word, Some(cwd), ctx.home())?;
    (paths::is_inside(&p, ctx.root()) && p != ctx.root()).then_some(p)
}

/// An operand's path wherever it is, but not `/` (a `~` as `inside` takes it).
fn anywhere(word: &str, cwd: &Path, ctx: &AnalysisContext) -> Option<PathBuf> {
    if word.is_empty() || (word.starts_with('~') && !word.starts_with("~/") && word != "~") {
        return None;
    }
    paths::resolve_word(word, Some(cwd), ctx.home()).filter(|p| p.parent().is_some())
}

/// `mkdir [-p] [-v] DIR…`: every operand is written, and with `-p` every directory
/// above it that does not exist yet (`mkdir -p .env/x` makes `.env`; the program
/// oracle saw `mkdir -p src/x/y` create `src/x`), each judged where it resolves. An
/// operand with a `..` is left unproven: `a/b/../c` makes `a/b` too, which its cleaned
/// path no longer names.
fn mkdir(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let mut edit = plain(rest, "pv", &["--parents", "--verbose"], cwd, ctx)?;
    let p = parse(rest, "pv", &["--parents", "--verbose"])?;
    if !p.letters.contains('p') && !p.long.contains(&"--parents") {
        return Some(edit);
    }
    for w in &p.operands {
        let written = paths::expand_home(w, ctx.home())?;
        if written
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            return None;
        }
        for above in missing_parents(&cwd.join(written)) {
            let resolved =
                paths::resolve_word(&above.display().to_string(), Some(cwd), ctx.home())?;
            if !paths::is_inside(&resolved, ctx.root()) || resolved == ctx.root() {
                return None;
            }
            if !edit.writes.contains(&resolved) {
                edit.writes.push(resolved);
            }
        }
    }
    Some(edit)
}

/// `rmdir [-p] [-v] [--ignore-fail-on-non-empty] DIR…`: removes directories only when
/// they are empty, so no file is lost. Every operand is removed, and with `-p` every
/// directory its text names above it (`rmdir -p a/b` removes `a/b`, then `a`), each
/// judged where it resolves: a directory reached through a link out of the project
/// (`rmdir link/sub`, which the kernel follows) is outside. A link itself is never
/// removed (`rmdir` refuses it). An operand with a `.` or `..` is left unproven (`-p`
/// takes the text apart, not the path), and so is an absolute one with `-p`, which
/// goes on up to `/`.
fn rmdir(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let long = ["--parents", "--verbose", "--ignore-fail-on-non-empty"];
    let p = parse(rest, "pv", &long)?;
    if p.operands.is_empty() {
        return None;
    }
    let parents = p.letters.contains('p') || p.long.contains(&"--parents");
    let mut writes: Vec<PathBuf> = Vec::new();
    for w in &p.operands {
        let written = paths::expand_home(w, ctx.home()).unwrap_or_else(|| PathBuf::from(w));
        // The text as written: `Path::components` would drop an inner `.`.
        if w.split('/').any(|part| part == "." || part == "..")
            || (parents && written.is_absolute())
        {
            return None;
        }
        let mut removed = vec![inside(w, cwd, ctx)?];
        if parents {
            for above in written.ancestors().skip(1) {
                if above.as_os_str().is_empty() {
                    break;
                }
                removed.push(inside(above.to_str()?, cwd, ctx)?);
            }
        }
        for r in removed {
            if !writes.contains(&r) {
                writes.push(r);
            }
        }
    }
    Some(Edit {
        writes,
        ..Edit::default()
    })
}

/// The directories `mkdir -p` makes above `dir` (absolute, as written: not cleaned, so
/// `a/b/../c` counts `a/b`): each ancestor below the first one that exists now.
pub fn missing_parents(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .skip(1)
        .take_while(|a| !a.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// `mkdir`, `touch`, `tee`: every operand is written.
fn plain(
    rest: &[&str],
    short: &str,
    long: &[&str],
    cwd: &Path,
    ctx: &AnalysisContext,
) -> Option<Edit> {
    let p = parse(rest, short, long)?;
    if p.operands.is_empty() {
        return None;
    }
    let writes = p
        .operands
        .iter()
        .map(|w| inside(w, cwd, ctx))
        .collect::<Option<Vec<_>>>()?;
    Some(Edit {
        writes,
        ..Edit::default()
    })
}

/// `cp SRC… DEST` and `mv SRC… DEST`: each source (a moved one inside the project, a
/// copied one anywhere), lands at DEST
/// (with `-T`, or when DEST is not a directory and there is one source) or at
/// DEST/NAME. A directory source (copied with `-r`/`-R`/`-a`, or moved) lands with
/// every name below it, each a write of its own, and its files are read; a moved
/// source is written too (it disappears).
fn copy(
    rest: &[&str],
    short: &str,
    long: &[&str],
    moves: bool,
    cwd: &Path,
    ctx: &AnalysisContext,
) -> Option<Edit> {
    let p = parse(rest, short, long)?;
    let (dest_word, sources) = p.operands.split_last()?;
    if sources.is_empty() {
        return None;
    }
    let no_target_dir = p.letters.contains('T') || p.long.contains(&"--no-target-directory");
    // The project root itself is a destination only as the directory the sources land
    // in (`cp lib/a.ts .`).
    let dest = match inside(dest_word, cwd, ctx) {
        Some(d) => d,
        None if !no_target_dir && !dest_word.starts_with('~') => {
            paths::resolve_word(dest_word, Some(cwd), ctx.home()).filter(|d| d == ctx.root())?
        }
        None => return None,
    };
    let recursive = moves
        || p.letters.contains(['r', 'R', 'a'])
        || p.long
            .iter()
            .any(|l| matches!(*l, "--recursive" | "--archive"));
    if no_target_dir && sources.len() > 1 {
        return None;
    }
    let into_dir = !no_target_dir && (sources.len() > 1 || dest.is_dir());
    let mut edit = Edit::default();
    for s in sources {
        // A copy only reads its source, which may be anywhere (judged as a read, as
        // `cat SRC > DEST` is); a move takes it away, so it must be inside.
        let src = if moves {
            inside(s, cwd, ctx)?
        } else {
            anywhere(s, cwd, ctx)?
        };
        // The name the source is known by (a symlink source is moved or, with `-r`,
        // copied as the link itself; its target is what `resolve_word` returned).
        let unresolved = paths::clean(&cwd.join(paths::expand_home(s, ctx.home())?));
        let base = unresolved.file_name()?;
        let landing = if into_dir {
            dest.join(base)
        } else {
            dest.clone()
        };
        if moves {
            edit.writes.push(src.clone());
            if unresolved != src {
                edit.names.push(unresolved.clone());
            }
        }
        let is_dir = std::fs::symlink_metadata(&unresolved).is_ok_and(|m| m.is_dir());
        if is_dir && recursive {
            for rel in tree(&src)? {
                edit.writes.push(landing.join(rel));
            }
            edit.trees.push(src);
        } else {
            edit.reads.push(src);
        }
        edit.writes.push(landing);
    }
    Some(edit)
}

/// `rm [-f] [-d] [-v] [-r] PATH…`: each operand is removed (`-d`: an empty directory
/// too). The name the operand is known by is a write besides the place it resolves to:
/// rm removes a symlink itself, and a protected name that is a link (`.claude -> src/x`)
/// is judged as that name; an operand that resolves outside the project (`link/`, which
/// rm follows: traced, it empties the link's target) is not an edit. A recursive
/// removal (`-r`, `-R`) of a directory takes every name below it, each judged as its
/// own name (rm never follows a link it meets), and is an edit only when it loses
/// nothing git cannot give back: every name below is a file the project's own
/// repository tracks, unchanged from its index (an untracked or ignored file, new work
/// or a `node_modules/`, asks, as does a tree past `MAX_TREE_ENTRIES`, or a name that
/// does not exist now). No `-i`/`-I`/`--interactive` (they read answers), no
/// `--no-preserve-root`.
fn remove(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let p = parse(
        rest,
        "fdvrR",
        &["--force", "--dir", "--verbose", "--recursive"],
    )?;
    if p.operands.is_empty() {
        return None;
    }
    let recursive = p.letters.contains(['r', 'R']) || p.long.contains(&"--recursive");
    let mut edit = Edit::default();
    for w in &p.operands {
        let resolved = inside(w, cwd, ctx)?;
        let unresolved = paths::clean(&cwd.join(paths::expand_home(w, ctx.home())?));
        if !paths::is_inside(&unresolved, ctx.root()) || unresolved == ctx.root() {
            return None;
        }
        if recursive {
            // A name that does not exist yet may be a directory when rm runs.
            let link = std::fs::symlink_metadata(&unresolved).ok()?.is_symlink();
            if link && w.ends_with('/') {
                // `rm -r link/` empties the directory the link names.
                return None;
            }
            if !link && std::fs::symlink_metadata(&resolved).is_ok_and(|m| m.is_dir()) {
                let below = tree(&resolved)?;
                // A repository inside (a submodule's work tree, an embedded clone) keeps
                // its changes where the project's git does not look.
                if below.iter().any(|r| r.file_name() == Some(".git".as_ref())) {
                    return None;
                }
                edit.names
                    .extend(below.into_iter().map(|r| resolved.join(r)));
                edit.removed_trees.push(resolved.clone());
            }
        }
        if unresolved != resolved {
            edit.names.push(unresolved);
        }
        edit.writes.push(resolved);
    }
    if !edit.removed_trees.is_empty() {
        let repo = own_repo(cwd, ctx)?;
        if !git_history::recoverable(&repo.git_dir, ctx.root(), &edit.removed_trees).ok()? {
            return None;
        }
    }
    Some(edit)
}

/// The repository git finds from `cwd` when it is the project's own (`<root>/.git`,
/// the root its work tree) and its configuration is protected, so that running git
/// there runs nothing an agent could have written.
fn own_repo(cwd: &Path, ctx: &AnalysisContext) -> Option<git_discovery::Repository> {
    let Discovery::Found(repo) = git_discovery::discover(cwd, None, None) else {
        return None;
    };
    let own = ctx.root().join(".git");
    (repo.git_dir.starts_with(&own)
        && repo.common_dir.starts_with(&own)
        && repo.work_tree.as_deref() == Some(ctx.root())
        && git_discovery::unprotected(&repo, ctx.root(), ctx.home()).is_none())
    .then_some(repo)
}

/// `git add [OPTS] [--] PATH…` (or `-A`/`-u` alone: the whole work tree) in the
/// project's own repository (`<root>/.git`, its configuration protected as
/// `git_discovery::unprotected` checks): git copies what each path holds now into its
/// object store and records it in the index. Its writes are git's own bookkeeping in
/// `.git/` (the index, new objects), made by git itself, never a file an agent names,
/// so they are not judged as writes to `.git/` (which ask: a write there could be a hook
/// or a config); the files it stores are judged as reads: a file named, and from a
/// directory the files git lists as stored without `-f` (tracked, or untracked and not
/// ignored), or with `-f` every file below it (git never follows a symlink: it stores
/// the link, so judging its target only asks more). Each path is a literal one (no `*?[\` git would match itself, no
/// `:` magic) inside the project. Options only choose which changes are staged
/// (`-A`, `-u`, `-N`, `-f`, `-n`, `-v`, `--ignore-errors`): never `-p`, `-i`, `-e`
/// (they read answers or run an editor), `--pathspec-from-file` (names from a file),
/// `--chmod`, `--renormalize`, `--sparse`; no global option before `add` (`-C`, `-c`).
fn git_add(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let ["add", args @ ..] = rest else {
        return None;
    };
    let p = parse(
        args,
        "AuNfnv",
        &[
            "--all",
            "--update",
            "--intent-to-add",
            "--force",
            "--dry-run",
            "--verbose",
            "--ignore-errors",
            "--no-ignore-removal",
        ],
    )?;
    let repo = own_repo(cwd, ctx)?;
    let whole =
        p.letters.contains(['A', 'u']) || p.long.iter().any(|l| matches!(*l, "--all" | "--update"));
    let tracked_only = p.letters.contains('u') || p.long.contains(&"--update");
    let force = p.letters.contains('f') || p.long.contains(&"--force");
    let mut edit = Edit::default();
    if p.operands.is_empty() {
        if !whole {
            return None;
        }
        edit.trees.push(ctx.root().to_path_buf());
    }
    for w in &p.operands {
        if w.is_empty() || w.starts_with(':') || w.contains(['*', '?', '[', '\\']) {
            return None;
        }
        if w.starts_with('~') && !w.starts_with("~/") && *w != "~" {
            return None;
        }
        let path = paths::resolve_word(w, Some(cwd), ctx.home())?;
        if !paths::is_inside(&path, ctx.root()) {
            return None;
        }
        if path.is_dir() {
            edit.trees.push(path);
        } else {
            edit.reads.push(path);
        }
    }
    // Without `-f`, git stores from a directory only what it tracks and what no ignore
    // rule covers: asked of git itself, so an ignored `.env` or `node_modules/` is not
    // read. Where git cannot say (a deadline, too many files), every file below is.
    if !force && !edit.trees.is_empty() {
        let dirs = std::mem::take(&mut edit.trees);
        match git_history::stageable(&repo.git_dir, ctx.root(), &dirs, tracked_only) {
            Ok(files) => {
                edit.listed = dirs
                    .into_iter()
                    .map(|d| {
                        let below = files
                            .iter()
                            .filter(|f| f.starts_with(&d))
                            .cloned()
                            .collect();
                        (d, below)
                    })
                    .collect();
            }
            Err(_) => edit.trees = dirs,
        }
    }
    Some(edit)
}

/// `chmod [-c] [-f] [-v] MODE FILE…`: each file's permission bits change. MODE is a
/// plain one: three octal digits (no set-user-ID, set-group-ID or sticky bit) or
/// symbolic clauses of `ugoa`, one of `+-=` and `rwxX` (no `s`, `t`, no copying of
/// another class's bits). chmod follows a symlink operand and changes its target, which
/// is the place `inside` resolves and judges. No `-R` (a walk that meets symlinks), no
/// `--reference` (reads another file's mode).
fn chmod(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let p = parse(
        rest,
        "cfv",
        &["--changes", "--silent", "--quiet", "--verbose"],
    )?;
    let (mode, files) = p.operands.split_first()?;
    if files.is_empty() || !plain_mode(mode) {
        return None;
    }
    let writes = files
        .iter()
        .map(|w| inside(w, cwd, ctx))
        .collect::<Option<Vec<_>>>()?;
    Some(Edit {
        writes,
        ..Edit::default()
    })
}

/// A permission mode without special bits: `644`, `0755`, `+x`, `u+x,go-w`, `a=rX`.
fn plain_mode(mode: &str) -> bool {
    let octal = mode.strip_prefix('0').unwrap_or(mode);
    if !octal.is_empty()
        && octal.len() <= 3
        && mode.len() <= 4
        && mode.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return mode.len() == 3 || mode.starts_with('0');
    }
    !mode.is_empty()
        && mode.split(',').all(|clause| {
            let ops = clause.trim_start_matches(['u', 'g', 'o', 'a']);
            let Some(perms) = ops.strip_prefix(['+', '-', '=']) else {
                return false;
            };
            !perms.is_empty() && perms.chars().all(|c| "rwxX".contains(c))
        })
}

/// The names below `dir`, relative to it, without following symlinks; `None` past
/// `MAX_TREE_ENTRIES` or on an error reading a directory.
fn tree(dir: &Path) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(dir.join(&rel)).ok()? {
            let entry = entry.ok()?;
            let name = rel.join(entry.file_name());
            if entry.file_type().ok()?.is_dir() {
                stack.push(name.clone());
            }
            out.push(name);
            if out.len() > MAX_TREE_ENTRIES {
                return None;
            }
        }
    }
    Some(out)
}

/// `ln -s TARGET LINK`: a new symbolic link inside the project to a place inside the
/// project (a relative target is read from the link's directory, as the kernel reads
/// it), both judged as written. A LINK that exists as a directory or a link (where `ln`
/// would put the link inside it), or at all with `-f`, is left unproven.
fn symlink(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let p = parse(
        rest,
        "sfnvT",
        &[
            "--symbolic",
            "--force",
            "--no-dereference",
            "--verbose",
            "--no-target-directory",
        ],
    )?;
    if !(p.letters.contains('s') || p.long.contains(&"--symbolic")) {
        return None;
    }
    let [target, link] = p.operands.as_slice() else {
        return None;
    };
    let unresolved = paths::clean(&cwd.join(paths::expand_home(link, ctx.home())?));
    let existing = std::fs::symlink_metadata(&unresolved);
    if existing
        .as_ref()
        .is_ok_and(|m| m.is_dir() || m.is_symlink())
    {
        return None;
    }
    // Over an existing name, `ln -f` makes the link under a temporary name beside it and
    // renames it over (the program oracle saw the name): a write nothing can name now.
    if existing.is_ok() && (p.letters.contains('f') || p.long.contains(&"--force")) {
        return None;
    }
    let link_path = inside(link, cwd, ctx)?;
    let parent = link_path.parent()?;
    if target.starts_with('~') {
        return None;
    }
    let t = paths::resolve_word(target, Some(parent), ctx.home())?;
    if !paths::is_inside(&t, ctx.root()) {
        return None;
    }
    // What is later written through the link lands on its target (the program oracle
    // saw `ln -s .env new.txt && echo x > new.txt` rewrite `.env`): the target is
    // judged as written too, so a secret or protected one asks.
    Some(Edit {
        writes: vec![link_path, t],
        ..Edit::default()
    })
}

/// `sed -i SCRIPT FILE…` (or `-e SCRIPT`…): no backup suffix (it would write another
/// file), a script made only of editing commands (`sed_script_edits`), every file
/// inside the project. Each file is rewritten in place.
fn sed_in_place(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Edit> {
    let mut in_place = false;
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while let Some(w) = rest.get(i) {
        i += 1;
        if only_operands || !w.starts_with('-') {
            operands.push(w);
            continue;
        }
        match *w {
            "--" => only_operands = true,
            "-i" | "--in-place" => in_place = true,
            "-e" | "--expression" => {
                scripts.push(rest.get(i)?);
                i += 1;
            }
            "--regexp-extended" | "--quiet" | "--silent" | "--separate" | "--null-data" => {}
            w if w.starts_with("--expression=") => scripts.push(w.get("--expression=".len()..)?),
            w if !w.starts_with("--") => {
                // A cluster of value-less letters; `i` only last, since any letter after
                // it would be a backup suffix (`-ie` keeps a copy named FILEe).
                let letters = w.get(1..)?;
                let (head, last) = letters.split_at(letters.len().checked_sub(1)?);
                if !head.chars().all(|c| "Ernsz".contains(c)) || !"Ernszi".contains(last) {
                    return None;
                }
                in_place |= last == "i";
            }
            _ => return None,
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return None;
        }
        scripts.push(operands.remove(0));
    }
    if !in_place || operands.is_empty() {
        return None;
    }
    let mut reads: Vec<PathBuf> = Vec::new();
    for script in &scripts {
        for name in sed_script_reads(script)? {
            reads.push(sed_read(&name, cwd, ctx)?);
        }
    }
    let writes = operands
        .iter()
        .map(|w| inside(w, cwd, ctx))
        .collect::<Option<Vec<_>>>()?;
    Some(Edit {
        writes,
        reads,
        ..Edit::default()
    })
}

/// The file a sed `r`/`R` reads, from sed's working directory. sed takes the name as
/// it is written: a `~` or `$` in it is no home or variable (`r ~/x` reads `./~/x`),
/// which the path code would expand, so such a name is left unproven, and so is
/// `/dev/stdin`, which sed reads as its own input.
fn sed_read(name: &str, cwd: &Path, ctx: &AnalysisContext) -> Option<PathBuf> {
    if name.starts_with('~') || name.contains('$') || name == "/dev/stdin" {
        return None;
    }
    anywhere(name, cwd, ctx)
}

/// Whether a sed script is made only of commands that edit the text it is given:
/// `s` (flags `g p i I m M` and a number), `y`, `d D p P n N g G h H x =`, blocks,
/// with line, `$` and regex addresses, ranges, steps and `!`, and a text command
/// (`a`, `i`, `c`) whose text ends the script on its one line, and `r`/`R`, which read a
/// file into the output (`sed_script_reads` names them). No `w W e F`, no
/// `s///e` or `s///w`, no labels or branches, no `q`. The script is
/// read twice, once treating `[…]` as a bracket expression (where the delimiter is
/// an ordinary character, as GNU sed reads it) and once not, and both readings must
/// agree it is only edits: a script that reads differently cannot hide a `w`.
pub fn sed_script_edits(script: &str) -> bool {
    sed_script_reads(script).is_some()
}

/// The files a script of editing commands reads with `r`/`R` (their text goes into
/// the output), or `None` when it is not such a script. GNU sed takes a file name up to
/// the end of its line, `;` and `}` included, and never expands `~` or `$` in it. Both
/// readings must agree on the names.
pub fn sed_script_reads(script: &str) -> Option<Vec<String>> {
    let with = SedReader::new(script, true).edits()?;
    let without = SedReader::new(script, false).edits()?;
    (with == without).then_some(with)
}

struct SedReader<'s> {
    chars: std::iter::Peekable<std::str::Chars<'s>>,
    brackets: bool,
}

impl<'s> SedReader<'s> {
    fn new(script: &'s str, brackets: bool) -> Self {
        SedReader {
            chars: script.chars().peekable(),
            brackets,
        }
    }

    fn skip_blank(&mut self) {
        while self
            .chars
            .next_if(|c| c.is_whitespace() || *c == ';')
            .is_some()
        {}
    }

    fn skip_spaces(&mut self) {
        while self.chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    }

    fn digits(&mut self) -> bool {
        let mut any = false;
        while self.chars.next_if(char::is_ascii_digit).is_some() {
            any = true;
        }
        any
    }

    /// Reads up to the unescaped `delim`; `regex`: a bracket expression is read whole
    /// when `brackets` is on.
    fn delimited(&mut self, delim: char, regex: bool) -> bool {
        while let Some(c) = self.chars.next() {
            if c == '\\' {
                if self.chars.next().is_none() {
                    return false;
                }
            } else if c == delim {
                return true;
            } else if c == '\n' && regex {
                return false;
            } else if c == '[' && regex && self.brackets {
                // `[]…]` and `[^]…]`: a leading `]` is part of the set.
                self.chars.next_if_eq(&'^');
                self.chars.next_if_eq(&']');
                loop {
                    match self.chars.next() {
                        None | Some('\n') => return false,
                        Some(']') => break,
                        Some('[') => {
                            // `[:alpha:]`, `[=a=]`, `[.a.]`: up to the matching `x]`.
                            if let Some(k) = self.chars.next_if(|k| matches!(k, ':' | '=' | '.')) {
                                let mut prev = ' ';
                                loop {
                                    match self.chars.next() {
                                        None | Some('\n') => return false,
                                        Some(']') if prev == k => break,
                                        Some(c) => prev = c,
                                    }
                                }
                            }
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        false
    }

    fn address(&mut self) -> bool {
        match self.chars.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.chars.next_if_eq(&'~').is_some() {
                    return self.digits();
                }
                true
            }
            Some('$') => {
                self.chars.next();
                true
            }
            Some('/') => {
                self.chars.next();
                self.delimited('/', true) && self.regex_flags()
            }
            Some('\\') => {
                self.chars.next();
                match self.chars.next() {
                    Some(d) if d != '\n' && d != '\\' => {
                        self.delimited(d, true) && self.regex_flags()
                    }
                    _ => false,
                }
            }
            _ => true,
        }
    }

    fn regex_flags(&mut self) -> bool {
        while self.chars.next_if(|c| matches!(c, 'I' | 'M')).is_some() {}
        true
    }

    fn addresses(&mut self) -> bool {
        if !self.address() {
            return false;
        }
        if self.chars.next_if_eq(&',').is_some() {
            self.skip_spaces();
            if self.chars.next_if(|c| matches!(c, '+' | '~')).is_some() {
                if !self.digits() {
                    return false;
                }
            } else if !matches!(self.chars.peek(), Some(c) if c.is_ascii_digit() || matches!(c, '$' | '/' | '\\'))
                || !self.address()
            {
                return false;
            }
        }
        self.skip_spaces();
        self.chars.next_if_eq(&'!');
        self.skip_spaces();
        true
    }

    /// After a command: spaces, then the end, `;`, a newline or `}`.
    fn command_end(&mut self) -> bool {
        self.skip_spaces();
        matches!(self.chars.peek(), None | Some(';' | '\n' | '}'))
    }

    fn edits(mut self) -> Option<Vec<String>> {
        let mut depth = 0usize;
        let mut reads: Vec<String> = Vec::new();
        loop {
            self.skip_blank();
            if self.chars.peek().is_none() {
                return (depth == 0).then_some(reads);
            }
            if self.chars.next_if_eq(&'}').is_some() {
                depth = depth.checked_sub(1)?;
                if !self.command_end() {
                    return None;
                }
                continue;
            }
            if !self.addresses() {
                return None;
            }
            let ok = match self.chars.next() {
                Some('{') => {
                    depth += 1;
                    true
                }
                Some('s') => match self.chars.next() {
                    Some(d) if d != '\n' && d != '\\' => {
                        self.delimited(d, true)
                            && self.delimited(d, false)
                            && {
                                while self
                                    .chars
                                    .next_if(|c| matches!(c, 'g' | 'p' | 'i' | 'I' | 'm' | 'M'))
                                    .is_some()
                                    || self.digits()
                                {}
                                true
                            }
                            && self.command_end()
                    }
                    _ => false,
                },
                Some('y') => match self.chars.next() {
                    Some(d) if d != '\n' && d != '\\' => {
                        self.delimited(d, false) && self.delimited(d, false) && self.command_end()
                    }
                    _ => false,
                },
                Some('d' | 'D' | 'p' | 'P' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=') => {
                    self.command_end()
                }
                // `a`, `i`, `c`: GNU sed takes the text up to the first newline no
                // backslash escapes, so with no newline left the rest of the script is
                // the text, whatever it spells (`1a foo; w out` appends `foo; w out`).
                // A newline anywhere after it is left unread, and so is an open block
                // (sed refuses the script: the text swallows the `}`).
                Some('a' | 'i' | 'c') => {
                    return (depth == 0 && !self.chars.any(|c| c == '\n')).then_some(reads);
                }
                // `r FILE`, `R FILE`: blanks, then the name up to the end of the line.
                Some('r' | 'R') => {
                    self.skip_spaces();
                    let name: String =
                        std::iter::from_fn(|| self.chars.next_if(|c| *c != '\n')).collect();
                    let ok = !name.is_empty();
                    reads.push(name);
                    ok
                }
                _ => false,
            };
            if !ok {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_only_edit() {
        for s in [
            "s/a/b/",
            "s/a/b/g",
            "s|/usr|/opt|g",
            "1,3d",
            "/^#/d;s/x/y/2",
            "$!N;P;D",
            "/start/,/end/{s/a/b/;p}",
            "y/abc/xyz/",
            "0~2d",
            "s/a\\/b/c/I",
            "\\%x%d",
            "1,+2s/a/b/gp",
            "s/[[:space:]]*$//",
            "$a\\    x}\\n y",
            "1a foo; w out",
            "2468a\\                elif x:\\n    y",
            "2281,2283c\\    cmap = 1",
            "/print(x)/a\\        for r in s: print(r)",
            "s/a/b/;3i header",
            "1 i\\",
        ] {
            assert!(sed_script_edits(s), "{s}");
        }
        for s in [
            "s/a/b/e",
            "s/a/b/w out",
            "s/a/b/gw out",
            "w out",
            "1w out",
            "W x",
            "e id",
            "1e id",
            // The delimiter inside a bracket expression: GNU sed reads `[/]` as a set,
            // a reader that does not would see other flags, so both must agree.
            "s/[/]/x/",
            "s/[/]/x/w out",
            "s/[/]/g;w x/",
            "a text\nw out",
            "1a foo\\\nbar",
            "1{a foo}",
            "/x/{s/a/b/;a foo",
            "q",
            "b end",
            ":a",
            "{s/a/b/",
            "}",
            "s/a/b",
            "F",
            "1,~d",
            "s/a/b/;1 e id",
        ] {
            assert!(!sed_script_edits(s), "{s}");
        }
    }

    #[test]
    fn sed_scripts_that_read_a_file_name_it() {
        let reads = |s: &str| sed_script_reads(s);
        assert_eq!(reads("228r new.py"), Some(vec!["new.py".to_string()]));
        assert_eq!(
            reads("r /etc/passwd"),
            Some(vec!["/etc/passwd".to_string()])
        );
        assert_eq!(reads("R x"), Some(vec!["x".to_string()]));
        // The name runs to the end of the line, `;` and `}` included.
        assert_eq!(reads("1r a; 2d"), Some(vec!["a; 2d".to_string()]));
        assert_eq!(
            reads("1d\n$r b.txt\ns/a/b/"),
            Some(vec!["b.txt".to_string()])
        );
        assert_eq!(reads("1{r a}"), None);
        assert_eq!(reads("1r"), None);
        assert_eq!(reads("s/a/b/"), Some(Vec::new()));
        let (_tmp, _, root, home) = project_with_d_sub();
        std::fs::write(root.join("a.py"), "x").unwrap();
        std::fs::write(root.join("new.py"), "y").unwrap();
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        let e = edit(&["sed", "-i", "228r new.py", "a.py"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("a.py")]);
        assert_eq!(e.reads, vec![root.join("new.py")]);
        // sed never expands `~` or `$`: `./~/x` is not the home's.
        assert_eq!(edit(&["sed", "-i", "1r ~/x", "a.py"], &root, &ctx), None);
        assert_eq!(
            edit(&["sed", "-i", "1r $HOME/x", "a.py"], &root, &ctx),
            None
        );
        assert_eq!(
            edit(&["sed", "-i", "1r /dev/stdin", "a.py"], &root, &ctx),
            None
        );
    }

    #[test]
    fn plain_modes_only() {
        for m in [
            "644", "0755", "755", "+x", "u+x", "a+rx", "go-w", "u+x,go-w", "a=rX",
        ] {
            assert!(plain_mode(m), "{m}");
        }
        for m in [
            "4755", "2755", "1777", "u+s", "g+s", "+t", "o=u", "a=", "", "7", "75555", "u+x-w",
            "+", "x", "0",
        ] {
            assert!(!plain_mode(m), "{m}");
        }
    }

    /// A project `p` holding `d/sub/` and a home `h`, both under a fresh directory
    /// (returned as `base`), kept while the guard lives.
    fn project_with_d_sub() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("p");
        let home = base.join("h");
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        (tmp, base, root, home)
    }

    #[test]
    fn recursive_removal_is_an_edit_only_of_what_git_can_give_back() {
        let (_tmp, base, root, home) = project_with_d_sub();
        std::fs::write(root.join("d/a.txt"), "a").unwrap();
        std::fs::write(root.join("d/sub/b.txt"), "b").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        let git_in = |dir: &Path, args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(dir)
                .env("HOME", &home)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?} in {}", dir.display());
        };
        let git = |args: &[&str]| git_in(&root, args);
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "x"]);
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        // Every name below a tracked, unchanged tree is a write of its own name.
        let e = edit(&["rm", "-rf", "d"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("d")]);
        let mut names = e.names.clone();
        names.sort();
        assert_eq!(
            names,
            vec![
                root.join("d/a.txt"),
                root.join("d/sub"),
                root.join("d/sub/b.txt")
            ]
        );
        assert!(edit(&["rm", "-r", "--verbose", "d/sub/"], &root, &ctx).is_some());
        // A file is itself; a name that does not exist may be a directory when rm runs.
        assert!(edit(&["rm", "-rf", "d/a.txt"], &root, &ctx).is_some());
        assert_eq!(edit(&["rm", "-rf", "gone", "d/a.txt"], &root, &ctx), None);
        // Anything git cannot give back asks: a change, an untracked or ignored file.
        std::fs::write(root.join("d/a.txt"), "changed").unwrap();
        assert_eq!(edit(&["rm", "-rf", "d"], &root, &ctx), None);
        git(&["checkout", "-q", "--", "d"]);
        assert!(edit(&["rm", "-rf", "d"], &root, &ctx).is_some());
        for (name, body) in [("d/sub/new.rs", "new"), ("d/x.log", "log")] {
            std::fs::write(root.join(name), body).unwrap();
            assert_eq!(edit(&["rm", "-R", "d"], &root, &ctx), None, "{name}");
            std::fs::remove_file(root.join(name)).unwrap();
        }
        // A repository inside, tracked as a commit of its own: its changes are not
        // the project's git's to give back.
        let inner = root.join("d/sub/inner");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("i.txt"), "i").unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &["commit", "-q", "-m", "i"],
        ] {
            git_in(&inner, args);
        }
        git(&["add", "d"]);
        git(&["commit", "-q", "-m", "inner"]);
        std::fs::write(inner.join("i.txt"), "changed").unwrap();
        assert_eq!(edit(&["rm", "-rf", "d"], &root, &ctx), None);
        git(&["rm", "-q", "--cached", "d/sub/inner"]);
        git(&["commit", "-q", "-m", "out"]);
        std::fs::remove_dir_all(&inner).unwrap();
        assert!(edit(&["rm", "-rf", "d"], &root, &ctx).is_some());
        // A link is removed itself; `link/` would empty what it names.
        std::os::unix::fs::symlink(root.join("d"), root.join("l")).unwrap();
        let e = edit(&["rm", "-r", "l"], &root, &ctx).unwrap();
        assert_eq!(e.names, vec![root.join("l")]);
        assert_eq!(edit(&["rm", "-r", "l/"], &root, &ctx), None);
        // Outside a repository of the project's own, nothing is known to come back.
        let bare = base.join("q");
        std::fs::create_dir_all(bare.join("d")).unwrap();
        std::fs::write(bare.join("d/a.txt"), "a").unwrap();
        let ctx = AnalysisContext::new(&bare, None, &home).unwrap();
        assert_eq!(edit(&["rm", "-rf", "d"], &bare, &ctx), None);
    }

    #[test]
    fn git_add_reads_what_it_stores_in_the_projects_own_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("p");
        let home = base.join("h");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("vendor/dep")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(root.join("src/a.ts"), "x").unwrap();
        let git = |dir: &Path| {
            let ok = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(dir)
                .env("HOME", &home)
                .status()
                .unwrap()
                .success();
            assert!(ok);
        };
        git(&root);
        git(&root.join("vendor/dep"));
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        let e = edit(&["git", "add", "src/a.ts", "README.md"], &root, &ctx).unwrap();
        assert_eq!(e.reads, vec![root.join("src/a.ts"), root.join("README.md")]);
        assert!(e.writes.is_empty() && e.trees.is_empty());
        // From a directory, what git lists as stored; from a subdirectory, `.` is that
        // directory; `-A` alone is the whole tree, `-u` its tracked files only.
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("src/x.log"), "x").unwrap();
        let listed = |e: Edit| e.listed;
        let src = vec![(root.join("src"), vec![root.join("src/a.ts")])];
        assert_eq!(
            listed(edit(&["git", "add", "src"], &root, &ctx).unwrap()),
            src
        );
        assert_eq!(
            listed(edit(&["git", "add", "."], &root.join("src"), &ctx).unwrap()),
            src
        );
        let all = vec![(
            root.clone(),
            // A repository inside is stored as a link to its commit, named as git
            // lists it.
            vec![
                root.join(".gitignore"),
                root.join("src/a.ts"),
                root.join("vendor/dep/"),
            ],
        )];
        assert_eq!(
            listed(edit(&["git", "add", "-A"], &root.join("src"), &ctx).unwrap()),
            all
        );
        assert_eq!(
            listed(edit(&["git", "add", "-u"], &root, &ctx).unwrap()),
            vec![(root.clone(), vec![])]
        );
        // `-f` stores ignored files too: every file below is read.
        let e = edit(&["git", "add", "-f", "src"], &root, &ctx).unwrap();
        assert_eq!((e.trees, e.listed), (vec![root.join("src")], vec![]));
        for (words, cwd) in [
            (vec!["git", "add"], &root),
            (vec!["git", "add", "-p"], &root),
            (vec!["git", "add", "-e", "src/a.ts"], &root),
            (vec!["git", "add", "--pathspec-from-file=x"], &root),
            (vec!["git", "add", "*.ts"], &root),
            (vec!["git", "add", ":(glob)**"], &root),
            (vec!["git", "add", "../x"], &root),
            (vec!["git", "-C", "src", "add", "a.ts"], &root),
            (vec!["git", "commit", "-m", "x"], &root),
            // Another repository inside the project: its configuration is not the
            // project's own.
            (vec!["git", "add", "x"], &root.join("vendor/dep")),
        ] {
            assert_eq!(edit(&words, cwd, &ctx), None, "{words:?}");
        }
    }

    #[test]
    fn mkdir_parents_writes_every_directory_it_makes() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("p");
        let home = base.join("h");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        let e = edit(&["mkdir", "-p", "src/x/y"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("src/x/y"), root.join("src/x")]);
        let e = edit(&["mkdir", "-p", ".env/x"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join(".env/x"), root.join(".env")]);
        // Without -p, mkdir makes only the operand (and fails without its parent).
        let e = edit(&["mkdir", "src/x/y"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("src/x/y")]);
        assert_eq!(edit(&["mkdir", "-p", "a/b/../c"], &root, &ctx), None);
    }

    #[test]
    fn rmdir_removes_each_operand_and_with_parents_each_named_above() {
        let (_tmp, _, root, home) = project_with_d_sub();
        std::fs::create_dir_all(home.join("out/sub")).unwrap();
        std::os::unix::fs::symlink(home.join("out"), root.join("link")).unwrap();
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        let e = edit(&["rmdir", "d/sub"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("d/sub")]);
        let e = edit(&["rmdir", "-p", "d/sub/"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("d/sub"), root.join("d")]);
        let flags = ["rmdir", "--ignore-fail-on-non-empty", "-v", "d"];
        let e = edit(&flags, &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("d")]);
        // Through a link out of the project the kernel removes the target's directory.
        assert_eq!(edit(&["rmdir", "link/sub"], &root, &ctx), None);
        // `-p` takes the text apart: `..` and absolute paths are not followed.
        assert_eq!(edit(&["rmdir", "-p", "d/../d/sub"], &root, &ctx), None);
        assert_eq!(edit(&["rmdir", "-p", "d/./sub"], &root, &ctx), None);
        assert_eq!(edit(&["rmdir", "./d"], &root, &ctx), None);
        let abs = root.join("d/sub").display().to_string();
        assert_eq!(edit(&["rmdir", "-p", &abs], &root, &ctx), None);
        assert_eq!(edit(&["rmdir", "--force", "d"], &root, &ctx), None);
        assert_eq!(edit(&["rmdir"], &root, &ctx), None);
    }

    #[test]
    fn removals_are_writes_of_each_name() {
        let (_tmp, _, root, home) = project_with_d_sub();
        std::fs::write(root.join("d/sub/.env"), "x").unwrap();
        std::fs::write(root.join("a.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a.txt"), root.join(".claude")).unwrap();
        let ctx = AnalysisContext::new(&root, None, &home).unwrap();
        // Only the operand; a recursive removal outside a repository is not an edit.
        assert_eq!(edit(&["rm", "-rf", "d"], &root, &ctx), None);
        assert_eq!(edit(&["rm", "-R", "d"], &root, &ctx), None);
        let e = edit(&["rm", "-f", "d"], &root, &ctx).unwrap();
        assert_eq!(e.writes, vec![root.join("d")]);
        // A link is removed by its own name.
        let e = edit(&["rm", ".claude"], &root, &ctx).unwrap();
        assert_eq!(e.names, vec![root.join(".claude")]);
        for words in [
            vec!["rm", "-rf", "."],
            vec!["rm", "-rf", "/"],
            vec!["rm", "-i", "a.txt"],
            vec!["rm", "--no-preserve-root", "-rf", "d"],
            vec!["rm", "../x"],
            vec!["rm"],
            vec!["chmod", "u+s", "a.txt"],
            vec!["chmod", "-R", "+x", "d"],
            vec!["chmod", "--reference=a.txt", "d"],
            vec!["chmod", "+x"],
        ] {
            assert_eq!(edit(&words, &root, &ctx), None, "{words:?}");
        }
        assert_eq!(
            edit(&["chmod", "+x", "a.txt"], &root, &ctx).unwrap().writes,
            vec![root.join("a.txt")]
        );
    }
}
