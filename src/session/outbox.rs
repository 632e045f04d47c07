//! The outbox: audit records a local decider (the per-call hook) has not yet handed to
//! the team's hub. Each batch is a file on local disk until the hub acknowledges it,
//! so a hub that is down or unreachable loses nothing and holds up no decision: the
//! next hook call sends what is waiting.
//!
//! Owns the spool directory only (`<state>/outbox/`): putting a batch, and draining
//! the batches in order through a sender the caller gives (the HTTP client is the
//! hook's). One file per batch, named by session and first sequence number, written to
//! a temporary name and renamed, so a reader never sees half a batch; a batch is
//! removed only after the sender succeeded. Sends are serialised by a lock file, and a
//! failed send makes the next hooks skip sending for `BACKOFF`, so an outage costs one
//! timeout per `BACKOFF`, not one per call.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::audit::AuditRecord;

/// How long after a failed send the next hooks leave the outbox alone.
pub const BACKOFF: Duration = Duration::from_secs(30);
/// Records sent in one request at most (the hub's body limit is 1 MiB).
pub const MAX_BATCH_RECORDS: usize = 200;
/// Bytes of records sent in one request at most.
pub const MAX_BATCH_BYTES: usize = 512 * 1024;
/// A batch file larger than this cannot go in one request under the hub's body limit
/// (a batch is one call's records, which go together): it is kept aside, renamed
/// `.oversize`, so it does not hold up every batch after it.
pub const MAX_SENDABLE_BYTES: usize = 960 * 1024;

const BACKOFF_FILE: &str = ".backoff";
const LOCK_FILE: &str = ".lock";

/// What a drain did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Drained {
    /// Records the hub acknowledged (and their files removed).
    pub sent: usize,
    /// Batch files still waiting.
    pub left: usize,
    /// Batch files this drain kept aside, too large for one request (`.oversize`).
    pub set_aside: usize,
    /// Why sending stopped early, if it did: another process is sending, the last
    /// failure is recent, or this send failed.
    pub stopped: Option<String>,
}

/// The outbox of one state directory.
#[derive(Debug, Clone)]
pub struct Outbox {
    dir: PathBuf,
}

impl Outbox {
    pub fn new(state_dir: &Path) -> Outbox {
        Outbox {
            dir: state_dir.join("outbox"),
        }
    }

    /// Puts `records` (of one session, in order) as one batch. Written and flushed
    /// under a temporary name, then renamed: it survives the process being killed.
    pub fn blocking_put(&self, session: &str, records: &[AuditRecord]) -> Result<(), String> {
        let Some(first) = records.first() else {
            return Ok(());
        };
        if !super::valid_id(session) {
            return Err(format!("invalid session id `{session}`"));
        }
        fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create the outbox `{}`: {e}", self.dir.display()))?;
        let mut bytes = Vec::new();
        for r in records {
            serde_json::to_writer(&mut bytes, r).map_err(|e| format!("audit record: {e}"))?;
            bytes.push(b'\n');
        }
        let name = format!("{session}.{:020}.jsonl", first.seq);
        let path = self.dir.join(&name);
        let tmp = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|_| f.flush()))
            .and_then(|_| fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(format!("cannot write the outbox `{}`: {e}", path.display()));
        }
        Ok(())
    }

    /// The batch files waiting, in sending order: by session, then by first sequence
    /// number (the names sort so).
    fn batches(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.') && n.ends_with(".jsonl"))
            })
            .collect();
        files.sort();
        files
    }

    /// Sends the waiting batches in order, up to `MAX_BATCH_RECORDS` records and
    /// `MAX_BATCH_BYTES` bytes per `send`, removing each file once its records were
    /// sent. Returns at once when another process holds the outbox or a send failed
    /// less than `BACKOFF` ago; a failed send starts the backoff and keeps the files.
    pub fn blocking_drain(
        &self,
        mut send: impl FnMut(&[AuditRecord]) -> Result<(), String>,
    ) -> Drained {
        let mut out = Drained::default();
        if self.batches().is_empty() {
            return out;
        }
        let backoff = self.dir.join(BACKOFF_FILE);
        if let Some(age) = fs::metadata(&backoff)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            && age < BACKOFF
        {
            out.left = self.batches().len();
            out.stopped = Some(format!(
                "the last send failed {} s ago; retrying after {} s",
                age.as_secs(),
                BACKOFF.as_secs()
            ));
            return out;
        }
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(LOCK_FILE));
        let Ok(lock) = lock else {
            out.stopped = Some("cannot open the outbox's lock".to_string());
            return out;
        };
        if lock.try_lock().is_err() {
            out.left = self.batches().len();
            out.stopped = Some("another process is sending".to_string());
            return out;
        }
        let files = self.batches();
        let mut pending: Vec<(PathBuf, Vec<AuditRecord>)> = Vec::new();
        let (mut count, mut bytes) = (0, 0);
        let mut flush =
            |pending: &mut Vec<(PathBuf, Vec<AuditRecord>)>, out: &mut Drained| -> bool {
                if pending.is_empty() {
                    return true;
                }
                let records: Vec<AuditRecord> = pending
                    .iter()
                    .flat_map(|(_, r)| r.iter().cloned())
                    .collect();
                match send(&records) {
                    Ok(()) => {
                        for (path, _) in pending.drain(..) {
                            let _ = fs::remove_file(path);
                        }
                        out.sent += records.len();
                        true
                    }
                    Err(e) => {
                        let _ = fs::write(&backoff, e.as_bytes());
                        out.stopped = Some(e);
                        false
                    }
                }
            };
        for path in files {
            let text = match fs::read_to_string(&path) {
                Ok(t) => t,
                Err(_) => continue,
            };
            // A line that does not parse cannot be sent; it is kept aside, never
            // dropped silently: the file is renamed so it stops blocking the rest.
            let parsed: Result<Vec<AuditRecord>, _> =
                text.lines().map(serde_json::from_str).collect();
            let Ok(records) = parsed else {
                let _ = fs::rename(&path, path.with_extension("unreadable"));
                continue;
            };
            if text.len() > MAX_SENDABLE_BYTES {
                let _ = fs::rename(&path, path.with_extension("oversize"));
                out.set_aside += 1;
                continue;
            }
            if count + records.len() > MAX_BATCH_RECORDS || bytes + text.len() > MAX_BATCH_BYTES {
                if !flush(&mut pending, &mut out) {
                    break;
                }
                count = 0;
                bytes = 0;
            }
            count += records.len();
            bytes += text.len();
            pending.push((path, records));
        }
        if out.stopped.is_none() && flush(&mut pending, &mut out) {
            let _ = fs::remove_file(&backoff);
        }
        out.left = self.batches().len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::audit::AuditEvent;

    fn rec(session: &str, seq: u64) -> AuditRecord {
        AuditRecord {
            at: "2026-12-05T10:00:00.000Z".to_string(),
            session_id: session.to_string(),
            seq,
            event: AuditEvent::ToolRequested,
            call_id: "c".to_string(),
            host: None,
            user: None,
            machine: Some("m".to_string()),
            project: None,
            tool: None,
            decision: None,
            by: None,
            scope: None,
            pattern: None,
            requests: Vec::new(),
            message: None,
        }
    }

    #[test]
    fn batches_wait_until_sent_in_order_and_a_failure_backs_off() {
        let tmp = tempfile::tempdir().unwrap();
        let ob = Outbox::new(tmp.path());
        ob.blocking_put("s2", &[rec("s2", 1)]).unwrap();
        ob.blocking_put("s1", &[rec("s1", 10), rec("s1", 11)])
            .unwrap();
        ob.blocking_put("s1", &[rec("s1", 9)]).unwrap();

        let d = ob.blocking_drain(|_| Err("hub down".to_string()));
        assert_eq!(d.sent, 0);
        assert_eq!(d.left, 3);
        assert_eq!(d.stopped.as_deref(), Some("hub down"));
        // Within the backoff nothing is tried.
        let d = ob.blocking_drain(|_| panic!("sent during the backoff"));
        assert_eq!(d.left, 3);

        std::fs::remove_file(tmp.path().join("outbox").join(BACKOFF_FILE)).unwrap();
        let mut seen = Vec::new();
        let d = ob.blocking_drain(|rs| {
            seen.extend(rs.iter().map(|r| (r.session_id.clone(), r.seq)));
            Ok(())
        });
        assert_eq!(d.sent, 4);
        assert_eq!(d.left, 0);
        assert_eq!(
            seen,
            [
                ("s1".to_string(), 9),
                ("s1".to_string(), 10),
                ("s1".to_string(), 11),
                ("s2".to_string(), 1)
            ]
        );
    }

    #[test]
    fn large_outboxes_go_in_several_requests() {
        let tmp = tempfile::tempdir().unwrap();
        let ob = Outbox::new(tmp.path());
        for i in 0..(MAX_BATCH_RECORDS as u64 + 5) {
            ob.blocking_put("s", &[rec("s", i + 1)]).unwrap();
        }
        let mut sizes = Vec::new();
        let d = ob.blocking_drain(|rs| {
            sizes.push(rs.len());
            Ok(())
        });
        assert_eq!(sizes, [MAX_BATCH_RECORDS, 5]);
        assert_eq!(d.sent, MAX_BATCH_RECORDS + 5);
    }

    #[test]
    fn a_batch_too_large_for_the_hub_is_kept_aside_and_holds_up_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let ob = Outbox::new(tmp.path());
        let mut big = rec("a", 1);
        big.message = Some("x".repeat(MAX_SENDABLE_BYTES));
        ob.blocking_put("a", &[big]).unwrap();
        ob.blocking_put("b", &[rec("b", 1)]).unwrap();
        let mut seen = Vec::new();
        let d = ob.blocking_drain(|rs| {
            seen.extend(rs.iter().map(|r| r.session_id.clone()));
            Ok(())
        });
        assert_eq!(seen, ["b"]);
        assert_eq!((d.sent, d.left, d.set_aside), (1, 0, 1));
        // Kept on disk, not lost.
        let kept: Vec<_> = std::fs::read_dir(tmp.path().join("outbox"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "oversize"))
            .collect();
        assert_eq!(kept.len(), 1);
    }
}
