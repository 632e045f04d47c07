//! A checkpoint of the hook's session index: what `SessionIndex` folded from the first
//! `len` bytes of a session's log, kept beside it (`<id>.index`), so a hook call reads
//! the checkpoint and the lines appended since instead of every line of the log. Without
//! it a hook call's cost grew with the session: every call read every earlier call.
//!
//! It is a cache, never the record. It counts only while the log is the file it was
//! taken of (the same device and inode), at least `len` bytes long, with the same bytes
//! just before `len` (the end of the last line it folded, which holds that event's
//! number and time). A missing checkpoint, one that does not parse, one of another
//! version, or a log compacted, replaced or rewritten since: the log is read whole, as
//! without it. It is written to a temp file and renamed into place, so a reader sees an
//! old checkpoint or a new one, never a part of one; a write that fails only costs the
//! next call a longer read.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::session::grants::PersistedRule;

/// Changes whenever `Folded` or the way lines are folded changes: a checkpoint of
/// another version is not read.
const VERSION: u32 = 1;

/// Bytes of the log just before `len` a checkpoint keeps to know the log again.
const TAIL: u64 = 64;

/// Bytes of new lines a read may fold before it writes a new checkpoint: one about
/// every dozen hook calls, so no call reads more than this past the last one.
pub const REFRESH_BYTES: u64 = 16 * 1024;

/// What the index folds from a log's lines (`SessionIndex::apply`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    /// Events in the log (as `Session` counts them, for the event budget).
    pub events: usize,
    /// Call id -> its project root.
    pub calls: HashMap<String, String>,
    /// Calls whose last event asked (`PermissionRequested`), in log order: what a host's
    /// post-call event resolves.
    pub pending: Vec<String>,
    pub session_rules: Vec<(Option<String>, PersistedRule)>,
    pub next_seq: u64,
}

impl Default for Folded {
    fn default() -> Self {
        Folded {
            events: 0,
            calls: HashMap::new(),
            pending: Vec::new(),
            session_rules: Vec::new(),
            next_seq: 1,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Checkpoint {
    version: u32,
    dev: u64,
    ino: u64,
    len: u64,
    /// The log's bytes just before `len`, in hex.
    tail: String,
    folded: Folded,
}

/// Where the checkpoint of session `id`'s log in `dir` is kept.
pub fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.index"))
}

/// The checkpoint at `at`, when it describes a prefix of `log` as it is now: the
/// length of that prefix (the end of a line) and what was folded from it.
pub fn load(at: &Path, log: &File) -> Option<(u64, Folded)> {
    let bytes = fs::read(at).ok()?;
    let cp: Checkpoint = serde_json::from_slice(&bytes).ok()?;
    if cp.version != VERSION {
        return None;
    }
    let meta = log.metadata().ok()?;
    if meta.dev() != cp.dev || meta.ino() != cp.ino || cp.len > meta.len() {
        return None;
    }
    let tail = tail_of(log, cp.len)?;
    // The folded prefix ends a line: the last byte kept is that line's newline.
    (tail == cp.tail && tail.ends_with("0a")).then_some((cp.len, cp.folded))
}

/// Writes the checkpoint of the first `len` bytes of `log` (which end a line) and what
/// was folded from them. Best effort: a failure is logged and costs only a longer read.
pub fn store(at: &Path, log: &File, len: u64, folded: &Folded) {
    let written = (|| -> std::io::Result<()> {
        let meta = log.metadata()?;
        let tail = tail_of(log, len)
            .ok_or_else(|| std::io::Error::other("the log is shorter than the checkpoint"))?;
        let cp = Checkpoint {
            version: VERSION,
            dev: meta.dev(),
            ino: meta.ino(),
            len,
            tail,
            folded: folded.clone(),
        };
        let dir = at.parent().unwrap_or_else(|| Path::new("."));
        let name = at
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Named as the start-up sweep names temp files, so one left by a crash goes.
        // Created afresh, never opened through whatever is at that name (a link).
        let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
        let create = || OpenOptions::new().write(true).create_new(true).open(&tmp);
        let result = create()
            .or_else(|_| fs::remove_file(&tmp).and_then(|()| create()))
            .and_then(|mut f| f.write_all(&serde_json::to_vec(&cp)?))
            .and_then(|()| fs::rename(&tmp, at));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    })();
    if let Err(e) = written {
        tracing::debug!(file = %at.display(), error = %e, "session index checkpoint not written");
    }
}

/// Removes the checkpoint at `at`, if any (a log rewritten in place of the old one).
pub fn forget(at: &Path) {
    let _ = fs::remove_file(at);
}

/// The hex of up to `TAIL` bytes of `log` just before `len`; `None` when `len` is 0 or
/// past the end.
fn tail_of(log: &File, len: u64) -> Option<String> {
    let n = TAIL.min(len);
    if n == 0 {
        return None;
    }
    let mut buf = vec![0u8; usize::try_from(n).ok()?];
    log.read_exact_at(&mut buf, len - n).ok()?;
    Some(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A link at the temp file's name is replaced, never written through; the
    /// checkpoint lands and reads back.
    #[test]
    fn a_link_at_the_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("s.jsonl");
        std::fs::write(&log_path, b"{\"seq\":1}\n").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let at = path(dir.path(), "s");
        let tmp = dir
            .path()
            .join(format!(".s.index.tmp.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let log = File::open(&log_path).unwrap();
        let folded = Folded {
            events: 1,
            next_seq: 2,
            ..Folded::default()
        };
        store(&at, &log, 10, &folded);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(!tmp.exists());
        assert_eq!(load(&at, &log), Some((10, folded)));
    }
}
