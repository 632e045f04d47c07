//! A cache of loaded policies keyed by (project root, home), so a call does not re-parse
//! its config files, yet a grant or a hand edit takes effect on the very next call.
//!
//! Owns freshness only: an entry is reused while every file of `config::config_files`,
//! and the project file's trust record, has the same existence, length, mtime and
//! content hash as when it was loaded.
//! Loading itself is `config::load_policy`.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::config::{self, Policy};
use crate::trust::TrustStore;

/// Above this many (root, home) pairs the cache starts over rather than grow unbounded.
const MAX_ENTRIES: usize = 512;

/// What a config file looked like when its policy was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: Option<u64>,
    mtime: Option<SystemTime>,
    hash: u64,
}

/// (canonical root, home) -> the stamps of its config files and the policy loaded.
type Entries = HashMap<(PathBuf, PathBuf), (Vec<Stamp>, Policy)>;

#[derive(Debug, Default)]
pub struct PolicyCache {
    entries: Mutex<Entries>,
}

impl PolicyCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The policy of `root` (canonical) for `home`, reloaded when any config file
    /// changed since it was cached.
    pub fn get(
        &self,
        root: &Path,
        home: &Path,
        managed: Option<&Path>,
        trust: Option<&TrustStore>,
    ) -> Policy {
        let mut files = config::config_files(root, home, managed);
        // Trusting or revoking changes the policy as much as an edit does.
        if let Some(t) = trust {
            files.push(t.record_path(&config::project_config_path(root)));
        }
        let stamps: Vec<Stamp> = files.iter().map(|f| stamp(f)).collect();
        let key = (root.to_path_buf(), home.to_path_buf());
        if let Ok(entries) = self.entries.lock()
            && let Some((s, p)) = entries.get(&key)
            && *s == stamps
        {
            return p.clone();
        }
        // Stamped before loading: a file changing during the load leaves an entry whose
        // stamp no longer matches, so the next call reloads rather than keep stale rules.
        let policy = config::load_policy_trusted(root, home, managed, trust);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(key, (stamps, policy.clone()));
        }
        policy
    }
}

fn stamp(file: &Path) -> Stamp {
    let meta = std::fs::metadata(file).ok();
    // The content hash catches an edit within the mtime granularity that keeps the length.
    let mut h = DefaultHasher::new();
    match std::fs::read(file) {
        Ok(bytes) => bytes.hash(&mut h),
        Err(e) => e.kind().hash(&mut h),
    }
    Stamp {
        len: meta.as_ref().map(|m| m.len()),
        mtime: meta.and_then(|m| m.modified().ok()),
        hash: h.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reloads_on_change_only() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let store = TrustStore::new(state.path());
        let trust = Some(&store);
        let cache = PolicyCache::new();
        let base = cache
            .get(root.path(), home.path(), None, trust)
            .rules()
            .len();
        assert_eq!(
            cache
                .get(root.path(), home.path(), None, trust)
                .rules()
                .len(),
            base
        );
        let cfg = root.path().join(".khaelor");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(
            cfg.join("config.json"),
            r#"{"permissions": {"process.execute": {"npm test": "allow"}}}"#,
        )
        .unwrap();
        // Project allows apply once the file is trusted (issue 14 §1).
        store
            .blocking_trust(&config::project_config_path(root.path()))
            .unwrap();
        assert_eq!(
            cache
                .get(root.path(), home.path(), None, trust)
                .rules()
                .len(),
            base + 1
        );
        // Same length, same second: only the content hash tells.
        std::fs::write(
            cfg.join("config.json"),
            r#"{"permissions": {"process.execute": {"npm tesT": "allow"}}}"#,
        )
        .unwrap();
        store
            .blocking_trust(&config::project_config_path(root.path()))
            .unwrap();
        let p = cache.get(root.path(), home.path(), None, trust);
        assert!(p.rules().iter().any(|r| r.pattern == "npm tesT"));
    }

    #[test]
    fn trusting_and_revoking_reload() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let store = TrustStore::new(state.path());
        let cfg = config::project_config_path(root.path());
        std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
        std::fs::write(
            &cfg,
            r#"{"permissions": {"process.execute": {"npm test": "allow"}}}"#,
        )
        .unwrap();
        let cache = PolicyCache::new();
        let has = |c: &PolicyCache| {
            c.get(root.path(), home.path(), None, Some(&store))
                .rules()
                .iter()
                .any(|r| r.pattern == "npm test")
        };
        assert!(!has(&cache));
        store.blocking_trust(&cfg).unwrap();
        assert!(has(&cache));
        store.blocking_revoke(&cfg).unwrap();
        assert!(!has(&cache));
    }
}
