//! Files whose text holds a credential, which no secret rule names by place: a git
//! configuration with a token in a remote's URL or an `Authorization` header, a shell's
//! startup file that writes a key out (`programs::holds_credential`). A read outside
//! the sandbox asks for them; inside, a startup file is covered with `/dev/null` and a
//! git configuration with a copy of it without its credentials (git inside still needs
//! the rest). They are looked for at the few places git and the shells read them, for
//! every run rather than with the kept profile: an edit in place changes a file's text
//! without touching the directory the profile's check looks at.

use std::io::Write;
use std::path::{Path, PathBuf};

/// What covers the files holding a credential for one run: each place, and what is
/// bound over it (`/dev/null`, or a copy without credentials kept in `copies` until the
/// run ends).
#[derive(Default)]
pub struct Held {
    pub covers: Vec<(String, String)>,
    /// The copies' temp files: removed when this is dropped.
    pub copies: Vec<tempfile::NamedTempFile>,
}

/// The files at those places, under the project `root` and `home`, that hold a
/// credential now, and what covers each.
pub fn covered(root: &Path, home: &Path) -> Held {
    let mut places: Vec<PathBuf> = crate::programs::git_discovery::global_config_files(home);
    places.push(home.join(".config/fish/config.fish"));
    for name in crate::programs::startup::NAMES {
        places.push(home.join(name));
    }
    places.push(root.join(".envrc"));
    places.push(root.join(".git/config"));
    places.push(root.join(".git/config.worktree"));
    let mut held = Held::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    for p in places {
        if !crate::programs::holds_credential(&p, home) {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&p) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let dest = real.display().to_string();
        let copy = crate::programs::git_discovery::is_config_file(&p, home)
            .then(|| clean_copy(&real))
            .flatten();
        match copy {
            Some(f) => {
                held.covers.push((f.path().display().to_string(), dest));
                held.copies.push(f);
            }
            None => held.covers.push(("/dev/null".to_string(), dest)),
        }
    }
    held
}

/// A temp file holding `config` without its credentials; `None` when they cannot be
/// taken out (then `/dev/null` covers it).
fn clean_copy(config: &Path) -> Option<tempfile::NamedTempFile> {
    let text =
        crate::model::paths::read_small_file(config, crate::programs::MAX_CHECKED_TEXT).ok()??;
    let clean =
        crate::programs::git_discovery::without_credentials(&String::from_utf8_lossy(&text))?;
    let mut f = tempfile::Builder::new()
        .prefix("khaelor-git-config")
        .tempfile()
        .ok()?;
    f.write_all(clean.as_bytes()).ok()?;
    f.flush().ok()?;
    Some(f)
}
