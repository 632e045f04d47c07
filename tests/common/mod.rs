//! Shared helpers for the table-driven tests: loading golden tables from `fixtures/`
//! and building analysis contexts over real temp directories.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// The repository's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Loads a JSON Lines golden table: one case per line; blank lines and lines starting
/// with `#` or `//` are skipped. Returns `(line number, case)` so a failure names its
/// line. A malformed line fails the test with its line number.
pub fn load_table<T: DeserializeOwned>(name: &str) -> Vec<(usize, T)> {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("//") {
            continue;
        }
        let case: T = serde_json::from_str(t)
            .unwrap_or_else(|e| panic!("{}:{}: bad case: {e}\n{t}", path.display(), i + 1));
        out.push((i + 1, case));
    }
    out
}

/// Loads the layered policy with the project config trusted first, in a throw-away
/// trust store: project allows apply only to content the user trusted,
/// and these tests are about layering, not trust.
pub fn load_trusted_policy(
    root: &Path,
    home: &Path,
    managed: Option<&Path>,
) -> khaelor_perm::policy::config::Policy {
    let state = tempfile::tempdir().unwrap();
    let store = khaelor_perm::policy::trust::TrustStore::new(state.path());
    let cfg = khaelor_perm::policy::config::project_config_path(root);
    if cfg.exists() {
        store.blocking_trust(&cfg).unwrap();
    }
    khaelor_perm::policy::config::load_policy_trusted(root, home, managed, Some(&store))
}

/// As `load_trusted_policy`, with a preset chosen as by `--preset`.
pub fn load_trusted_policy_preset(
    root: &Path,
    home: &Path,
    preset: khaelor_perm::policy::presets::Preset,
) -> khaelor_perm::policy::config::Policy {
    let state = tempfile::tempdir().unwrap();
    let store = khaelor_perm::policy::trust::TrustStore::new(state.path());
    let cfg = khaelor_perm::policy::config::project_config_path(root);
    if cfg.exists() {
        store.blocking_trust(&cfg).unwrap();
    }
    khaelor_perm::policy::config::load_policy_preset(root, home, None, Some(&store), Some(preset))
}

/// A project `proj/` (with `dirs` made inside it) and a separate `home/` under one
/// canonical temp dir; with `allow_all`, the project config allows everything
/// (`fixtures/configs/allow_all.json`), so only the floor and the caps can stop a call.
pub struct World {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

pub fn world(allow_all: bool, dirs: &[&str]) -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    for d in dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if allow_all {
        std::fs::create_dir_all(root.join(".khaelor")).unwrap();
        std::fs::copy(
            fixtures_dir().join("configs/allow_all.json"),
            root.join(".khaelor/config.json"),
        )
        .unwrap();
    }
    World {
        _tmp: tmp,
        root,
        home,
    }
}

/// A decision's requests, one a line (`allow file.read "/p/a"`), for a failure message.
pub fn requests_shown(d: &khaelor_perm::policy::decide::CallDecision) -> String {
    d.requests
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?}",
                r.decision, r.request.capability, r.request.subject
            )
        })
        .collect::<Vec<_>>()
        .join("\n      ")
}

/// The sandbox the product's callers hand to `decide_with` (bubblewrap through this
/// test binary's path): a call the policy contains is answered `contain` where the
/// sandbox can run, as the hooks, the HTTP API and `check` answer it. Fails with the
/// setup script's name when bubblewrap cannot run here.
pub fn sandbox() -> Option<&'static dyn khaelor_perm::policy::decide::Sandbox> {
    use std::sync::OnceLock;
    static RUNNER: OnceLock<khaelor_perm::contain::Bubblewrap> = OnceLock::new();
    if let Err(e) = khaelor_perm::contain::available() {
        panic!("the sandbox cannot run here ({e}); run tests/setup/contain.sh");
    }
    let r = RUNNER.get_or_init(|| khaelor_perm::contain::Bubblewrap {
        exe: PathBuf::from(env!("CARGO_BIN_EXE_khaelor-perm")),
    });
    Some(r as &dyn khaelor_perm::policy::decide::Sandbox)
}
