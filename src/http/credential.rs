//! The panel token: the credential `serve` makes on first start when no `--token-file`
//! is given, so that answering a permission prompt is something only the person (who
//! can read the file) does, never any process that can reach loopback.
//!
//! Owns the file's place (`<state-dir>/panel-token`), its creation (32 random bytes
//! as hex, mode 0600, made in a temporary file and linked into place so it is never
//! half written and never replaces one that exists) and its validation. Which routes
//! need it is `auth`'s business; clients (`approve`, the web page's link) read the
//! same file through `read_token_file`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use crate::policy::trust::PANEL_TOKEN_FILE;

/// Random bytes in a panel token (64 hex characters).
const TOKEN_BYTES: usize = 32;

/// Largest token file read (a token is a line; anything larger is not one).
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// Why the panel token could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("could not {action} the panel token `{path}`: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
    #[error(
        "the panel token `{0}` is not a regular file: remove it and start again to make a new one"
    )]
    NotAFile(String),
    #[error(
        "the panel token `{path}` can be read by others (mode {mode:o}): run `chmod 600 {path}`, or remove it and start again to make a new one"
    )]
    TooOpen { path: String, mode: u32 },
    #[error(
        "the panel token `{0}` is owned by another user: remove it and start again to make a new one"
    )]
    Owner(String),
    #[error(
        "the panel token `{0}` is not {hex} hexadecimal characters: remove it and start again to make a new one",
        hex = TOKEN_BYTES * 2
    )]
    Malformed(String),
    #[error("token file `{0}` is empty")]
    Empty(String),
}

/// `<state-dir>/panel-token`.
pub fn panel_token_path(state_dir: &Path) -> PathBuf {
    state_dir.join(PANEL_TOKEN_FILE)
}

/// The panel token of `state_dir`: the one on disk when there is a valid one, else a
/// new one written there. A file that exists but is not a valid token is an error
/// (never silently replaced: someone may have copied it into a client already).
pub fn blocking_panel_token(state_dir: &Path) -> Result<String, CredentialError> {
    let path = panel_token_path(state_dir);
    match blocking_read_panel_token(&path) {
        Err(CredentialError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {}
        other => return other,
    }
    let token = random_token(&path)?;
    let io_err = |action: &'static str| {
        let path = path.display().to_string();
        move |source: io::Error| CredentialError::Io {
            action,
            path,
            source,
        }
    };
    // A private temporary name in the same directory, then a hard link to the final
    // name: the link fails when the file exists (another server made it first), so a
    // token is never replaced, and the final name never shows a partial token.
    let temp = state_dir.join(format!(".{PANEL_TOKEN_FILE}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&temp);
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .map_err(io_err("create"))?;
    let written = f
        .write_all(format!("{token}\n").as_bytes())
        .and_then(|()| f.sync_all());
    drop(f);
    let linked = written.and_then(|()| fs::hard_link(&temp, &path));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            if let Ok(dir) = File::open(state_dir) {
                let _ = dir.sync_all();
            }
            Ok(token)
        }
        // Another server won the race: use its token.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => blocking_read_panel_token(&path),
        Err(e) => Err(io_err("write")(e)),
    }
}

/// Reads and checks a panel token: a regular file of this user, readable by nobody
/// else, holding 64 hex characters.
pub fn blocking_read_panel_token(path: &Path) -> Result<String, CredentialError> {
    let shown = || path.display().to_string();
    let meta = fs::symlink_metadata(path).map_err(|source| CredentialError::Io {
        action: "read",
        path: shown(),
        source,
    })?;
    if !meta.file_type().is_file() {
        return Err(CredentialError::NotAFile(shown()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(CredentialError::TooOpen {
            path: shown(),
            mode,
        });
    }
    if meta.uid() != own_uid(path) {
        return Err(CredentialError::Owner(shown()));
    }
    let token = read_token_file(path)?;
    if token.len() != TOKEN_BYTES * 2 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CredentialError::Malformed(shown()));
    }
    Ok(token)
}

/// A token file's token: its text with surrounding whitespace removed (`--token-file`
/// and the panel token alike); empty is an error.
pub fn read_token_file(path: &Path) -> Result<String, CredentialError> {
    let mut text = String::new();
    File::open(path)
        .and_then(|f| f.take(MAX_TOKEN_FILE_BYTES).read_to_string(&mut text))
        .map_err(|source| CredentialError::Io {
            action: "read",
            path: path.display().to_string(),
            source,
        })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CredentialError::Empty(path.display().to_string()));
    }
    Ok(token.to_string())
}

/// The user this process runs as, read from the owner of a file it just made (std
/// has no `geteuid` and the crate forbids `unsafe`): `/proc/self` is owned by it.
fn own_uid(fallback: &Path) -> u32 {
    fs::metadata("/proc/self")
        .or_else(|_| fs::symlink_metadata(fallback))
        .map_or(u32::MAX, |m| m.uid())
}

/// 32 bytes of the kernel's random source, as lowercase hex.
fn random_token(path: &Path) -> Result<String, CredentialError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|source| CredentialError::Io {
            action: "make random bytes for",
            path: path.display().to_string(),
            source,
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_private_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let a = blocking_panel_token(d.path()).unwrap();
        assert_eq!(a.len(), 64);
        let meta = fs::metadata(panel_token_path(d.path())).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        // A second start reads the same token; no temporary file is left.
        assert_eq!(blocking_panel_token(d.path()).unwrap(), a);
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(PANEL_TOKEN_FILE)]);
        // Two stores make two different tokens.
        let e = tempfile::tempdir().unwrap();
        assert_ne!(blocking_panel_token(e.path()).unwrap(), a);
    }

    #[test]
    fn a_bad_file_is_an_error_and_is_not_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = panel_token_path(d.path());
        fs::write(&p, "short\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(
            blocking_panel_token(d.path()),
            Err(CredentialError::Malformed(_))
        ));
        assert_eq!(fs::read_to_string(&p).unwrap(), "short\n");
        fs::write(&p, format!("{}\n", "ab".repeat(32))).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        let e = blocking_panel_token(d.path()).unwrap_err();
        assert!(matches!(e, CredentialError::TooOpen { mode: 0o644, .. }));
        assert!(e.to_string().contains("chmod 600"), "{e}");
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), &p).unwrap();
        assert!(matches!(
            blocking_panel_token(d.path()),
            Err(CredentialError::NotAFile(_))
        ));
    }
}
