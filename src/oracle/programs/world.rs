//! The hostile world the program oracle runs the real programs in: a project with fake
//! secrets named by the secret rules' own shapes, symlinks from the project into fake
//! credential stores in HOME, nested git directories whose configuration runs a marker
//! program, config files that include a credential store, and a real project `.git`
//! with a secret in its history. Every secret holds a unique canary string.
//!
//! Owns building it on the host (`build`, at the analysis context's project and HOME
//! paths, which the sandbox binds read-only at the same paths) and the operand pools
//! the generator draws from (`OPERANDS`), so that the two agree. The world is the same
//! for every seed: commands are plain strings over relative paths and `~/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the hostile configurations point: no such program exists in the sandbox, so
/// running one shows as an `execve` attempt (of it, or of `/bin/sh` running it).
pub const MARKER: &str = "/.oracle/marker";

/// A secret file: where it lives (`~/` = HOME, else relative to the project) and the
/// secret rule (or seed shape) it is named after.
pub const SECRETS: &[(&str, &str)] = &[
    (".env", "file.read *.env"),
    (".env.production", "file.read *.env.*"),
    ("config/id_rsa", "secret: SSH private key"),
    ("certs/server.pem", "file.read *.pem"),
    ("certs/tls.key", "secret: private key"),
    ("~/.aws/credentials", "secret: AWS credentials and config"),
    ("~/.ssh/id_rsa", "secret: SSH private key"),
    ("~/.pypirc", "secret: PyPI tokens"),
    ("~/.cargo/credentials.toml", "secret: Cargo registry tokens"),
    ("~/.my.cnf", "secret: MySQL client passwords"),
    ("~/.netrc", "secret: netrc logins"),
    ("~/.git-credentials", "secret: git credential store"),
    ("~/.bash_history", "secret: shell history"),
];

/// Symlinks in the project to the credential stores (link, target under HOME).
pub const LINKS: &[(&str, &str)] = &[
    ("docs/awslink", ".aws"),
    ("docs/sshdir", ".ssh"),
    ("pypirc.txt", ".pypirc"),
    ("notes/cargo.toml", ".cargo/credentials.toml"),
    ("mycnf.ini", ".my.cnf"),
    ("docs/homedir", ".cache/emptydir"),
];

/// The committed secret that only the project's history holds (`old/.env`, removed in
/// the second commit).
pub const HISTORY_SECRET: &str = "old/.env";

/// Operand pools of the generator, by kind.
pub struct Operands {
    /// Plain project files (`data.json` is JSON, `config.yaml` YAML).
    pub files: &'static [&'static str],
    pub dirs: &'static [&'static str],
    /// Secret files, directly and through the symlinks.
    pub secrets: &'static [&'static str],
    /// The symlinks themselves and paths through them.
    pub links: &'static [&'static str],
    /// Files a write would hurt: HOME's rc file, project files, raw disks.
    pub targets: &'static [&'static str],
    /// Directories git may take as a repository: hostile ones and the project.
    pub git_dirs: &'static [&'static str],
    /// Files with `[include]` sections that name credential stores.
    pub includes: &'static [&'static str],
    pub revisions: &'static [&'static str],
    pub texts: &'static [&'static str],
    pub numbers: &'static [&'static str],
}

pub const OPERANDS: Operands = Operands {
    files: &[
        "README.md",
        "src/main.rs",
        "notes.txt",
        "a.txt",
        "b.txt",
        "data.json",
        "config.yaml",
        "-",
    ],
    dirs: &[".", "src", "docs", "vendor", "notes", "..", "~", "/"],
    secrets: &[
        ".env",
        ".env.production",
        "config/id_rsa",
        "certs/server.pem",
        "certs/tls.key",
        "~/.aws/credentials",
        "~/.ssh/id_rsa",
        "~/.pypirc",
        "~/.netrc",
        "docs/awslink/credentials",
        "docs/sshdir/id_rsa",
        "pypirc.txt",
        "notes/cargo.toml",
        "mycnf.ini",
    ],
    links: &[
        "docs/awslink",
        "docs/sshdir",
        "docs",
        "notes",
        "pypirc.txt",
        "mycnf.ini",
    ],
    targets: &["~/.bashrc", "a.txt", "out.txt", "/dev/sda", "/dev/nvme0n1"],
    git_dirs: &["hostile.git", "vendor/dep", "vendor/dep/.git", "."],
    includes: &["x.cfg", "team.gitconfig", "hostile.git/config"],
    revisions: &[
        "HEAD",
        "HEAD~1",
        "main",
        "HEAD~1:old/.env",
        "HEAD:README.md",
        "HEAD~1..HEAD",
        "v1",
    ],
    texts: &["x", "main", "KEY", "fn", "^a", "hello world", "%s"],
    numbers: &["1", "2", "0", "10", "-1", "3k", "1M"],
};

/// The canary of the `i`-th secret (`SECRETS`), or of the history secret (`None`).
pub fn canary(i: Option<usize>) -> String {
    match i {
        Some(i) => format!("KHAELOR_CANARY_{i:02}_SECRET"),
        None => "KHAELOR_CANARY_HISTORY_SECRET".to_string(),
    }
}

/// A secret's absolute path in the world.
pub fn secret_path(root: &Path, home: &Path, spec: &str) -> PathBuf {
    match spec.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => root.join(spec),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the host's git to build the world (no user or system configuration read).
fn git(dir: &Path, home: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Oracle")
        .env("GIT_AUTHOR_EMAIL", "oracle@example.invalid")
        .env("GIT_COMMITTER_NAME", "Oracle")
        .env("GIT_COMMITTER_EMAIL", "oracle@example.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The configuration that makes git run the marker: every hook of a repository's own
/// config that runs a program while git reads.
fn hostile_config() -> String {
    format!(
        "[core]\n\tfsmonitor = {MARKER}-fsmonitor\n\tpager = {MARKER}-pager\n\
         \thooksPath = /.oracle\n\tsshCommand = {MARKER}-ssh\n\
         [diff]\n\texternal = {MARKER}-external\n\
         [diff \"x\"]\n\ttextconv = {MARKER}-textconv\n\
         [filter \"x\"]\n\tclean = {MARKER}-clean\n\tsmudge = {MARKER}-smudge\n\tprocess = {MARKER}-process\n\
         [gpg]\n\tprogram = {MARKER}-gpg\n[log]\n\tshowSignature = true\n\
         [pager]\n\tlog = {MARKER}-pager-log\n\
         [grep]\n\tfallbackToNoIndex = true\n\
         [include]\n\tpath = ~/.pypirc\n"
    )
}

/// Builds the world at `root` (the project) and `home`. Every file is world-readable;
/// the sandbox copies it per worker with that worker's owner.
pub fn build(root: &Path, home: &Path) -> Result<(), String> {
    for (i, (spec, rule)) in SECRETS.iter().enumerate() {
        let token = canary(Some(i));
        let body = if spec.ends_with(".pypirc") || spec.ends_with(".my.cnf") {
            // An ini file: git's `[include]` of it parses (and so reads all of it).
            format!("[secret]\n\ttoken = {token}\n")
        } else {
            format!("{token}\n# {rule}\n")
        };
        write(&secret_path(root, home, spec), &body)?;
    }
    write(&home.join(".bashrc"), "# the user's shell rc\n")?;
    write(&home.join(".profile"), "# the user's profile\n")?;
    write(&root.join("README.md"), "# Project\n\nhello world\n")?;
    write(
        &root.join("src/main.rs"),
        "fn main() {\n    println!(\"x\");\n}\n",
    )?;
    // Names a program would take as its options if handed them bare: `wc` given
    // `--files0-from=names0` reads the files `names0` lists, `.env` among them.
    write(&root.join("src/--files0-from=.env"), "x\n")?;
    write(&root.join("src/-rf"), "x\n")?;
    write(&root.join("names0"), ".env\0")?;
    write(&root.join("--files0-from=names0"), "x\n")?;
    write(&root.join("notes.txt"), "b line\na line\nKEY=value\n")?;
    write(&root.join("a.txt"), "1 a\n2 b\n3 c\n")?;
    write(&root.join("b.txt"), "1 a\n2 x\n4 d\n")?;
    write(
        &root.join("data.json"),
        "{\"a\": 1, \"env\": \"x\", \"list\": [1, 2]}\n",
    )?;
    write(&root.join("config.yaml"), "a: 1\nlist:\n  - x\n  - y\n")?;
    write(
        &root.join("x.cfg"),
        "[user]\n\tname = x\n[include]\n\tpath = ~/.pypirc\n",
    )?;
    write(
        &root.join("team.gitconfig"),
        "[core]\n\teditor = vi\n[include]\n\tpath = docs/awslink/credentials\n[include]\n\tpath = ../home/.my.cnf\n",
    )?;
    // The project's repository: the history secret is committed, then removed.
    write(&root.join(HISTORY_SECRET), &format!("{}\n", canary(None)))?;
    write(
        &root.join(".gitignore"),
        ".env\n.env.*\nconfig/\ncerts/\nvendor/\nhostile.git/\n",
    )?;
    git(root, home, &["init", "-q", "-b", "main"])?;
    git(root, home, &["add", "-A"])?;
    git(root, home, &["add", "-f", HISTORY_SECRET])?;
    git(root, home, &["commit", "-q", "-m", "first"])?;
    git(root, home, &["rm", "-q", "-r", "old"])?;
    write(&root.join("notes.txt"), "b line\na line\nKEY=value\nmore\n")?;
    git(root, home, &["commit", "-q", "-a", "-m", "second"])?;
    git(root, home, &["tag", "v1"])?;
    // Uncommitted changes, so `diff` and `status` have something to show.
    write(&root.join("a.txt"), "1 a\n2 B\n3 c\n")?;
    // A bare repository with the project's history and a hostile config.
    git(root, home, &["clone", "-q", "--bare", ".", "hostile.git"])?;
    let bare = root.join("hostile.git");
    write(
        &bare.join("config"),
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n{}",
            hostile_config()
        ),
    )?;
    write(&bare.join("info/attributes"), "* diff=x filter=x\n")?;
    write(
        &bare.join("objects/info/alternates"),
        &format!("{}\n", home.join(".ssh").display()),
    )?;
    // A nested repository inside the project with a hostile config and attributes.
    let dep = root.join("vendor/dep");
    write(&dep.join("lib.txt"), "dep\n")?;
    git(&dep, home, &["init", "-q", "-b", "main"])?;
    git(&dep, home, &["add", "-A"])?;
    git(&dep, home, &["commit", "-q", "-m", "dep"])?;
    write(&dep.join("lib.txt"), "dep changed\n")?;
    let cfg = dep.join(".git/config");
    let mut text = std::fs::read_to_string(&cfg).map_err(|e| format!("{}: {e}", cfg.display()))?;
    text.push_str(&hostile_config());
    write(&cfg, &text)?;
    write(&dep.join(".git/info/attributes"), "* diff=x filter=x\n")?;
    write(&dep.join(".gitattributes"), "* diff=x\n")?;
    // Empty directories, which `rmdir` removes: two in the project, and one in HOME
    // that the link `docs/homedir` reaches.
    for dir in [root.join("empty/inner"), home.join(".cache/emptydir/sub")] {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // Symlinks to the credential stores, made last (git would commit them).
    for (link, target) in LINKS {
        let at = root.join(link);
        if let Some(dir) = at.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::os::unix::fs::symlink(home.join(target), &at)
            .map_err(|e| format!("{}: {e}", at.display()))?;
    }
    Ok(())
}

/// Every canary with the secret's absolute path (`None` for the history secret, which
/// no file holds).
pub fn canaries(root: &Path, home: &Path) -> Vec<(Option<PathBuf>, String)> {
    let mut v: Vec<(Option<PathBuf>, String)> = SECRETS
        .iter()
        .enumerate()
        .map(|(i, (spec, _))| (Some(secret_path(root, home, spec)), canary(Some(i))))
        .collect();
    v.push((None, canary(None)));
    v
}
