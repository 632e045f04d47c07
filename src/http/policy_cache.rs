//! A cache of loaded policies keyed by (project root, home, host), so a call does not
//! re-parse its config files, yet a grant or a hand edit takes effect on the very next
//! call.
//!
//! Owns freshness only, from metadata alone: an entry is reused while every file of
//! `config::config_files`, the project file's trust record, and for a hook call the
//! host's own files (`hosts::grants::watched`: its rule files and directories, their
//! trust records, git's index) have the same paths, kind, device, inode, length, mtime
//! and ctime as when it was loaded. No config is opened to decide freshness, so a named
//! pipe, a device or a 100 MB file costs a `stat` (the loaders refuse them the same way
//! before opening). Loading itself is `config::load_layers` + `grants::hook_policy`.
//!
//! Timestamps have a granularity (a few milliseconds on Linux file systems): a rewrite
//! that keeps the length within that window leaves the metadata unchanged. As git does
//! with its index ("racy clean"), an entry whose files were modified less than
//! `RACY_WINDOW` before it was stamped is not trusted and is reloaded, until the files
//! have been quiet for that long. Calls block on `stat` and the load: callers run them
//! on the blocking pool.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::hosts::{Host, grants};
use crate::policy::config::{self, Policy};
use crate::policy::trust::TrustStore;

/// Above this many (root, home) pairs the cache starts over rather than grow unbounded.
const MAX_ENTRIES: usize = 512;

/// Metadata this close to the stamp time may hide a same-length rewrite.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What a config path looked like (without following a final dangling link) when its
/// policy was loaded. `None` fields: nothing there.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    /// `(dev, ino, mode, len, mtime ns, ctime ns)` of the target, when it exists.
    target: Option<(u64, u64, u32, u64, i128, i128)>,
    /// The same for the path itself when it is a link (a relinked config changes it).
    link: Option<(u64, u64, i128)>,
    /// Last modification of either, for the racy check.
    modified: Option<SystemTime>,
}

struct Entry {
    stamps: Vec<(PathBuf, Stamp)>,
    stamped_at: SystemTime,
    policy: Policy,
}

/// (canonical root, home, the host whose rules are read) -> the stamps of its files
/// and the policy loaded.
type Entries = HashMap<(PathBuf, PathBuf, Option<Host>), Entry>;

#[derive(Default)]
pub struct PolicyCache {
    entries: Mutex<Entries>,
}

impl std::fmt::Debug for PolicyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyCache").finish_non_exhaustive()
    }
}

impl PolicyCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The policy of `root` (canonical) for `home`, reloaded when any config file
    /// changed since it was cached. Blocks on the file system.
    pub fn blocking_get(
        &self,
        root: &Path,
        home: &Path,
        managed: Option<&Path>,
        trust: Option<&TrustStore>,
    ) -> Policy {
        self.blocking_get_at(root, home, managed, trust, None, None, SystemTime::now())
    }

    /// As `blocking_get`, with the preset chosen by `--preset` (one per service, so it
    /// is not part of the cache key).
    pub fn blocking_get_preset(
        &self,
        root: &Path,
        home: &Path,
        managed: Option<&Path>,
        trust: Option<&TrustStore>,
        preset: Option<crate::policy::presets::Preset>,
    ) -> Policy {
        self.blocking_get_at(root, home, managed, trust, preset, None, SystemTime::now())
    }

    /// The policy a hook call of `host` is decided by (`grants::hook_policy`): as
    /// `blocking_get_preset`, with `host`'s own rules when `host` is `Some`, reloaded
    /// when one of the host's files, their trust records or git's index changed.
    pub fn blocking_get_for_host(
        &self,
        root: &Path,
        home: &Path,
        managed: Option<&Path>,
        trust: Option<&TrustStore>,
        preset: Option<crate::policy::presets::Preset>,
        host: Option<Host>,
    ) -> Policy {
        self.blocking_get_at(root, home, managed, trust, preset, host, SystemTime::now())
    }

    /// `blocking_get` with the stamp time given (tests look past the racy window).
    #[expect(
        clippy::too_many_arguments,
        reason = "the cache key and the load inputs"
    )]
    fn blocking_get_at(
        &self,
        root: &Path,
        home: &Path,
        managed: Option<&Path>,
        trust: Option<&TrustStore>,
        preset: Option<crate::policy::presets::Preset>,
        host: Option<Host>,
        stamped_at: SystemTime,
    ) -> Policy {
        let mut files = config::config_files(root, home, managed);
        // Trusting or revoking changes the policy as much as an edit does.
        if let Some(t) = trust {
            files.push(t.record_path(&config::project_config_path(root)));
        }
        if let Some(h) = host {
            files.extend(grants::watched(h, root, home, trust));
        }
        // The paths go into the stamps: a host directory listing another file is
        // another policy even when every stamp alone matches.
        let stamps: Vec<(PathBuf, Stamp)> = files
            .into_iter()
            .map(|f| {
                let s = stamp(&f);
                (f, s)
            })
            .collect();
        let key = (root.to_path_buf(), home.to_path_buf(), host);
        if let Ok(entries) = self.entries.lock()
            && let Some(e) = entries.get(&key)
            && e.stamps == stamps
            && !racy(&e.stamps, e.stamped_at)
        {
            return e.policy.clone();
        }
        // Stamped before loading: a file changing during the load leaves an entry whose
        // stamp no longer matches (or is racy), so the next call reloads rather than
        // keep stale rules.
        let layers = config::load_layers(root, home, managed, trust, preset);
        let (policy, warnings) = grants::hook_policy(layers, host, home);
        for w in warnings {
            tracing::warn!(root = %root.display(), "{w}");
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(
                key,
                Entry {
                    stamps,
                    stamped_at,
                    policy: policy.clone(),
                },
            );
        }
        policy
    }
}

/// Whether any file was modified too close to (or after) the stamp to trust its
/// metadata.
fn racy(stamps: &[(PathBuf, Stamp)], stamped_at: SystemTime) -> bool {
    stamps.iter().any(|(_, s)| {
        s.modified
            .is_some_and(|m| match stamped_at.duration_since(m) {
                Ok(age) => age < RACY_WINDOW,
                Err(_) => true,
            })
    })
}

fn nanos(secs: i64, nsec: i64) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsec)
}

fn stamp(file: &Path) -> Stamp {
    let link = std::fs::symlink_metadata(file)
        .ok()
        .filter(|m| m.file_type().is_symlink());
    let target = std::fs::metadata(file).ok();
    // ctime too: it cannot be set back by a client the way mtime can.
    let modified = [link.as_ref(), target.as_ref()]
        .into_iter()
        .flatten()
        .flat_map(|m| {
            let ctime = u64::try_from(m.ctime()).ok().map(|s| {
                SystemTime::UNIX_EPOCH
                    + Duration::new(s, m.ctime_nsec().clamp(0, 999_999_999) as u32)
            });
            [m.modified().ok(), ctime]
        })
        .flatten()
        .max();
    Stamp {
        target: target.map(|m| {
            (
                m.dev(),
                m.ino(),
                m.mode(),
                m.len(),
                nanos(m.mtime(), m.mtime_nsec()),
                nanos(m.ctime(), m.ctime_nsec()),
            )
        }),
        link: link.map(|m| (m.dev(), m.ino(), nanos(m.ctime(), m.ctime_nsec()))),
        modified,
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
            .blocking_get(root.path(), home.path(), None, trust)
            .rules()
            .len();
        assert_eq!(
            cache
                .blocking_get(root.path(), home.path(), None, trust)
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
        // Project allows apply once the file is trusted.
        store
            .blocking_trust(&config::project_config_path(root.path()))
            .unwrap();
        assert_eq!(
            cache
                .blocking_get(root.path(), home.path(), None, trust)
                .rules()
                .len(),
            base + 1
        );
        // Same length, same second: only the racy check makes it reload.
        std::fs::write(
            cfg.join("config.json"),
            r#"{"permissions": {"process.execute": {"npm tesT": "allow"}}}"#,
        )
        .unwrap();
        store
            .blocking_trust(&config::project_config_path(root.path()))
            .unwrap();
        let p = cache.blocking_get(root.path(), home.path(), None, trust);
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
            c.blocking_get(root.path(), home.path(), None, Some(&store))
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

    /// Quiet files are served from the cache: the same `Arc` comes back.
    #[test]
    fn quiet_files_are_not_reloaded() {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let cfg = root.path().join(".khaelor");
        std::fs::create_dir_all(&cfg).unwrap();
        let file = cfg.join("config.json");
        std::fs::write(&file, r#"{"permissions": {"file.read": "allow"}}"#).unwrap();
        let cache = PolicyCache::new();
        let later = SystemTime::now() + RACY_WINDOW * 2;
        let a = cache.blocking_get_at(root.path(), home.path(), None, None, None, None, later);
        let b = cache.blocking_get_at(root.path(), home.path(), None, None, None, None, later);
        assert!(a.same_as(&b), "a quiet config is served from the cache");
        // Within the window the same files are reloaded.
        let fresh = PolicyCache::new();
        let c = fresh.blocking_get(root.path(), home.path(), None, None);
        let d = fresh.blocking_get(root.path(), home.path(), None, None);
        assert!(!c.same_as(&d), "fresh metadata is not trusted");
    }

    /// A hook policy with the host's rules is served from the cache while the host's
    /// files are quiet, and reloaded when one changes, when a file appears in a rules
    /// directory, or when git starts tracking the per-person file (its index changes).
    #[test]
    fn host_files_and_gits_index_reload_a_hook_policy() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (root, home) = (base.join("proj"), base.join("home"));
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(
            root.join(".claude/settings.local.json"),
            r#"{"permissions": {"allow": ["Bash(npm test:*)"]}}"#,
        )
        .unwrap();
        let cache = PolicyCache::new();
        let mut later = SystemTime::now() + RACY_WINDOW * 2;
        let get = |at: SystemTime, host: Option<Host>| {
            cache.blocking_get_at(&root, &home, None, None, None, host, at)
        };
        let granted = |p: &Policy| {
            p.rules().iter().any(|r| {
                r.name.as_deref() == Some("host:claude") && r.pattern.starts_with("npm test")
            })
        };
        let a = get(later, Some(Host::Claude));
        assert!(granted(&a) && a.host_rules_read(), "{:?}", a.rules());
        assert!(a.same_as(&get(later, Some(Host::Claude))), "quiet: cached");
        // Without the host (`--no-host-rules`): another entry, without the grant.
        let off = get(later, None);
        assert!(!granted(&off) && !off.host_rules_read());
        // git starts tracking the file: shipped, untrusted, its allow left out.
        git(&["add", ".claude/settings.local.json"]);
        later += RACY_WINDOW * 2;
        let b = get(later, Some(Host::Claude));
        assert!(!b.same_as(&a) && !granted(&b), "{:?}", b.rules());
        git(&["rm", "-q", "--cached", ".claude/settings.local.json"]);
        later += RACY_WINDOW * 2;
        assert!(granted(&get(later, Some(Host::Claude))));
        // A new file in a directory the host reads every file of (Codex's rules).
        let c = get(later, Some(Host::Codex));
        assert!(c.same_as(&get(later, Some(Host::Codex))));
        let rules = home.join(".codex/rules");
        std::fs::create_dir_all(&rules).unwrap();
        std::fs::write(
            rules.join("default.rules"),
            "prefix_rule(pattern=[\"npm\", \"ci\"], decision=\"allow\")\n",
        )
        .unwrap();
        later += RACY_WINDOW * 2;
        let d = get(later, Some(Host::Codex));
        assert!(!d.same_as(&c));
    }
}
