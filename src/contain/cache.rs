//! The sandbox profile of a project kept between calls, so a contained command does
//! not walk the project and HOME again while nothing they hold has changed.
//!
//! An entry is keyed by everything the profile is made of besides the file system —
//! this program's version and build commit, the project root, HOME, the profile's name and the rules
//! (`Policy::fingerprint`) — and holds the profile with its `profile::Trace`. It is
//! used again only while the trace holds (every directory listed has the same identity
//! and change times, every symlink the same target, every path looked up the same
//! kind); otherwise the profile is made afresh and the entry replaced. A trace taken
//! while a directory was changing is never stored.
//!
//! Entries live in `HOME/.cache/khaelor-perm/contain/`, which the HOME walk skips and a
//! contained command cannot write (HOME is read-only inside); where that directory
//! would lie inside the project (writable inside), nothing is cached. Reads and writes
//! of the cache that fail only cost the walk.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::profile::{self, ProfileError, Trace};
use crate::model::contain::{ProfileName, SandboxProfile};
use crate::policy::config::Policy;

/// Bumped whenever what a profile holds or how it is found changes.
const FORMAT: u32 = 2;

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Entry {
    format: u32,
    key: String,
    profile: SandboxProfile,
    trace: Trace,
}

/// Where entries are kept for `home`, unless that lies inside `root` (followed
/// through the links that exist on the way).
pub fn dir(home: &Path, root: &Path) -> Option<PathBuf> {
    let home = std::fs::canonicalize(home).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    let d = home.join(".cache").join("khaelor-perm").join("contain");
    let resolved = crate::model::paths::resolve_existing_prefix(&d);
    (!crate::model::paths::is_inside(&d, &root)
        && !crate::model::paths::is_inside(&resolved, &root))
    .then_some(d)
}

fn key(root: &Path, home: &Path, fingerprint: &str, name: ProfileName) -> String {
    let mut h = Sha256::new();
    h.update(FORMAT.to_le_bytes());
    // The build, not only the version: a build that masks differently must not reuse
    // a profile an earlier build made.
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(env!("KHAELOR_PERM_COMMIT").as_bytes());
    for part in [
        root.display().to_string(),
        home.display().to_string(),
        name.as_str().to_string(),
        fingerprint.to_string(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The profile as `profile::build_traced` makes it, with its trace, taken from the
/// cache in `dir` while that trace holds (`None`: no cache).
pub fn build(
    root: &Path,
    home: &Path,
    policy: &Policy,
    name: ProfileName,
    dir: Option<&Path>,
) -> Result<(SandboxProfile, Trace), ProfileError> {
    let (Some(dir), Some(fingerprint)) = (dir, policy.fingerprint()) else {
        return profile::build_traced(root, home, policy, name);
    };
    let key = key(root, home, &fingerprint, name);
    let file = dir.join(format!("{key}.json"));
    if let Some(entry) = read(&file)
        && entry.format == FORMAT
        && entry.key == key
        && entry.trace.holds()
    {
        return Ok((entry.profile, entry.trace));
    }
    let (profile, trace) = profile::build_traced(root, home, policy, name)?;
    if trace.racy {
        return Ok((profile, trace));
    }
    let entry = Entry {
        format: FORMAT,
        key,
        profile,
        trace,
    };
    let _ = write(dir, &file, &entry);
    Ok((entry.profile, entry.trace))
}

/// The most bytes an entry may have (a HOME walk of 50,000 entries records far less).
const MAX_ENTRY_BYTES: u64 = 32 * 1024 * 1024;

fn read(file: &Path) -> Option<Entry> {
    let bytes = crate::model::paths::read_small_file(file, MAX_ENTRY_BYTES)
        .ok()
        .flatten()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the entry whole or not at all: a file of its own, renamed over the old one.
fn write(dir: &Path, file: &Path, entry: &Entry) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let bytes = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&bytes)?;
    }
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
