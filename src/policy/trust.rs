//! Project config trust: which project config files the user has reviewed,
//! by content hash, so that a cloned repository cannot grant itself permissions.
//!
//! Owns the trust store (one small JSON record per trusted file under
//! `<state-dir>/trust/`, keyed by the SHA-256 of the file's resolved path, holding the
//! SHA-256 of the content the user trusted), its write protocol (temp file, fsync,
//! rename, fsync the directory) and the default state location. It does not filter
//! rules (`config` does, with the status this module reports) nor write grants
//! (`grants` calls `blocking_record` after its own write, under its own lock).
//!
//! A record names a path and one content hash: trusting new content replaces it, and a
//! file whose bytes differ from the recorded hash is `Changed`, which is as untrusted as
//! a file never trusted.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Records are a few hundred bytes; anything larger is not ours.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

pub use crate::model::rule::TrustStatus;

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustRecord {
    /// The config file, symlinks resolved.
    pub path: String,
    /// Hex SHA-256 of the content trusted.
    pub sha256: String,
    /// Hex SHA-256 of the content a grant is writing over the trusted content, set only
    /// while that write is in flight, so a crash between the config's rename and the
    /// record's update leaves whichever of the two contents is on disk trusted (the
    /// grant appends only rules the user granted to content the user trusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_sha256: Option<String>,
    /// Seconds since the Unix epoch when it was recorded.
    pub trusted_at: u64,
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("there is no project config at `{0}`")]
    NoConfig(String),
    #[error("`{0}` is not a regular file")]
    NotAFile(String),
    #[error("the managed config forbids trusting project config files")]
    Forbidden,
    #[error("could not {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> TrustError {
    TrustError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// The largest file the store hashes for trust: the loader reads no larger config
/// (`config::MAX_CONFIG_BYTES` is this bound), so nothing larger could be trusted.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The file name, in the state directory, of the panel token `serve` makes
/// (`http::credential`): the credential that answers permission prompts, which the
/// rules treat as a secret and commands naming it ask (`protected`).
pub const PANEL_TOKEN_FILE: &str = "panel-token";

/// `$XDG_STATE_HOME/khaelor-perm`, else `$HOME/.local/state/khaelor-perm`: the same
/// place `serve` keeps its sessions, so `khaelor-perm trust` and a default server agree.
pub fn default_state_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").and_then(absolute) {
        return Some(x.join("khaelor-perm"));
    }
    std::env::var_os("HOME")
        .and_then(absolute)
        .map(|h| h.join(".local").join("state").join("khaelor-perm"))
}

/// The trust records of one user, in `<state-dir>/trust/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    dir: PathBuf,
}

impl TrustStore {
    /// The store inside a state directory (created on the first write).
    pub fn new(state_dir: &Path) -> Self {
        TrustStore {
            dir: state_dir.join("trust"),
        }
    }

    /// The directory holding the records (writes there are self-protected).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The record file for a config file (whether it exists or not).
    pub fn record_path(&self, config: &Path) -> PathBuf {
        let key = crate::model::paths::resolve_existing_prefix(config);
        let name = sha256_hex(key.as_os_str().as_encoded_bytes());
        self.dir.join(format!("{name}.json"))
    }

    /// Whether `content`, read from `config`, is the content the user trusted. An
    /// unreadable or foreign record counts as no record (never as trust).
    pub fn status(&self, config: &Path, content: &[u8]) -> TrustStatus {
        match self.read_record(config) {
            Some(r) => {
                let hash = sha256_hex(content);
                if r.sha256 == hash || r.pending_sha256.as_deref() == Some(hash.as_str()) {
                    TrustStatus::Trusted
                } else {
                    TrustStatus::Changed
                }
            }
            None => TrustStatus::Untrusted,
        }
    }

    fn read_record(&self, config: &Path) -> Option<TrustRecord> {
        let path = self.record_path(config);
        let meta = fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_RECORD_BYTES {
            return None;
        }
        let record: TrustRecord = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
        // The name is a hash of the path; a record naming another path was not written
        // by us for this file.
        let resolved = crate::model::paths::resolve_existing_prefix(config);
        (record.path == resolved.display().to_string()).then_some(record)
    }

    /// Trusts the current content of `config`: reads it and records its hash.
    pub fn blocking_trust(&self, config: &Path) -> Result<TrustRecord, TrustError> {
        let meta = match fs::metadata(config) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(TrustError::NoConfig(config.display().to_string()));
            }
            Err(e) => return Err(io_err("read", config, e)),
        };
        if !meta.is_file() {
            return Err(TrustError::NotAFile(config.display().to_string()));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(TrustError::Io {
                action: "read",
                path: config.display().to_string(),
                source: io::Error::other("the file is larger than a config can be"),
            });
        }
        let bytes = fs::read(config).map_err(|e| io_err("read", config, e))?;
        self.blocking_record(config, &bytes)
    }

    /// Records `content` as the trusted content of `config` (for `grants`, which knows
    /// exactly what it wrote).
    pub fn blocking_record(
        &self,
        config: &Path,
        content: &[u8],
    ) -> Result<TrustRecord, TrustError> {
        self.blocking_write_record(config, content, None)
    }

    /// Records `content` as trusted with `next` pending: `grants` calls this before it
    /// replaces `content` by `next`, then `blocking_record(next)` after.
    pub fn blocking_record_pending(
        &self,
        config: &Path,
        content: &[u8],
        next: &[u8],
    ) -> Result<TrustRecord, TrustError> {
        self.blocking_write_record(config, content, Some(next))
    }

    fn blocking_write_record(
        &self,
        config: &Path,
        content: &[u8],
        next: Option<&[u8]>,
    ) -> Result<TrustRecord, TrustError> {
        fs::create_dir_all(&self.dir).map_err(|e| io_err("create", &self.dir, e))?;
        let record = TrustRecord {
            path: crate::model::paths::resolve_existing_prefix(config)
                .display()
                .to_string(),
            sha256: sha256_hex(content),
            pending_sha256: next.map(sha256_hex),
            trusted_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let text = serde_json::to_string_pretty(&record)
            .map_err(|e| io_err("encode", config, io::Error::other(e)))?;
        let path = self.record_path(config);
        blocking_write_atomic(&path, &self.dir, text.as_bytes())?;
        Ok(record)
    }

    /// Forgets `config`; `Ok(false)` when it was not trusted.
    pub fn blocking_revoke(&self, config: &Path) -> Result<bool, TrustError> {
        let path = self.record_path(config);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_err("remove", &path, e)),
        }
    }

    /// Every readable record, sorted by path.
    pub fn list(&self) -> Result<Vec<TrustRecord>, TrustError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("list", &self.dir, e)),
        };
        let mut out: Vec<TrustRecord> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                if !meta.is_file() || meta.len() > MAX_RECORD_BYTES {
                    return None;
                }
                serde_json::from_slice(&fs::read(e.path()).ok()?).ok()
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// Temp file in the same directory, fsync, rename, fsync the directory.
fn blocking_write_atomic(path: &Path, dir: &Path, bytes: &[u8]) -> Result<(), TrustError> {
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        f.write_all(bytes).map_err(|e| io_err("write", &tmp, e))?;
        f.sync_all().map_err(|e| io_err("sync", &tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| io_err("rename", path, e))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err("sync", dir, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_follows_content_and_revoke_forgets() {
        let state = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let cfg = proj.path().join("config.json");
        fs::write(&cfg, "{}").unwrap();
        let store = TrustStore::new(state.path());
        assert_eq!(store.status(&cfg, b"{}"), TrustStatus::Untrusted);
        store.blocking_trust(&cfg).unwrap();
        assert_eq!(store.status(&cfg, b"{}"), TrustStatus::Trusted);
        assert_eq!(store.status(&cfg, b"{ }"), TrustStatus::Changed);
        assert_eq!(store.list().unwrap().len(), 1);
        assert!(store.blocking_revoke(&cfg).unwrap());
        assert!(!store.blocking_revoke(&cfg).unwrap());
        assert_eq!(store.status(&cfg, b"{}"), TrustStatus::Untrusted);
    }

    #[test]
    fn a_pending_write_trusts_both_contents_until_it_is_recorded() {
        let state = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let cfg = proj.path().join("config.json");
        let store = TrustStore::new(state.path());
        store.blocking_record_pending(&cfg, b"{}", b"{1}").unwrap();
        assert_eq!(store.status(&cfg, b"{}"), TrustStatus::Trusted);
        assert_eq!(store.status(&cfg, b"{1}"), TrustStatus::Trusted);
        assert_eq!(store.status(&cfg, b"{2}"), TrustStatus::Changed);
        store.blocking_record(&cfg, b"{1}").unwrap();
        assert_eq!(store.status(&cfg, b"{}"), TrustStatus::Changed);
        assert_eq!(store.status(&cfg, b"{1}"), TrustStatus::Trusted);
    }

    #[test]
    fn a_record_for_another_path_is_no_trust() {
        let state = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let a = proj.path().join("a.json");
        let b = proj.path().join("b.json");
        fs::write(&a, "{}").unwrap();
        fs::write(&b, "{}").unwrap();
        let store = TrustStore::new(state.path());
        store.blocking_trust(&a).unwrap();
        // Copy a's record over b's name: it names a, so it vouches for nothing else.
        fs::copy(store.record_path(&a), store.record_path(&b)).unwrap();
        assert_eq!(store.status(&b, b"{}"), TrustStatus::Untrusted);
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let state = tempfile::tempdir().unwrap();
        let store = TrustStore::new(state.path());
        let e = store
            .blocking_trust(&state.path().join("nope.json"))
            .unwrap_err();
        assert!(e.to_string().starts_with("there is no project config at"));
    }
}
