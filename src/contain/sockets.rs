//! The host's unix sockets a contained command could still connect to, which the
//! sandbox covers.
//!
//! Its own network namespace cuts a contained command off from the host's network and
//! its abstract unix sockets, and `/tmp` and `/run` are private. A socket bound at any
//! other path is still there, and a read-only mount does not stop `connect`: Docker
//! Desktop's `~/.docker/desktop/docker.sock` (a way to root), LXD's
//! `/var/snap/lxd/common/lxd/unix.socket`, a database's socket under `/var/lib`, a
//! language server's in the project. Each one is covered with `/dev/null`, like a
//! secret file, so connecting is refused.
//!
//! The kernel lists the sockets bound in this network namespace in `/proc/net/unix`,
//! each with the path it was bound at. The list is read for every run, not kept with
//! the profile: a service may start between two commands.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The file systems the sandbox mounts afresh: nothing of the host's is there.
const PRIVATE: &[&str] = &["/tmp", "/run", "/var/run", "/dev", "/proc"];

/// The paths of the sockets bound on the host that a command contained under `root`
/// would see: each a socket now, canonical, outside the sandbox's private mounts (or
/// inside the project, which is bound over them where it lives there). An error when
/// the kernel's list cannot be read: then they cannot be covered, and nothing runs.
pub fn reachable(root: &Path) -> Result<Vec<String>, String> {
    let table = std::fs::read_to_string("/proc/net/unix").map_err(|e| {
        format!("cannot read /proc/net/unix, so the host's unix sockets cannot be covered: {e}")
    })?;
    let mut out: Vec<String> = bound_paths(&table)
        .into_iter()
        .filter_map(|p| {
            let real = std::fs::canonicalize(&p).ok()?;
            let socket = std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_socket());
            let private = PRIVATE.iter().any(|d| real.starts_with(d));
            (socket && (!private || real.starts_with(root))).then(|| real.display().to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// The absolute paths in a `/proc/net/unix` table: its eighth column, when there is
/// one (an unnamed socket has none, an abstract one starts with `@`). A path bound
/// relative to its process's directory cannot be placed and is left out.
fn bound_paths(table: &str) -> Vec<PathBuf> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // Seven fields, then the path, which may hold blanks.
            let mut rest = line.trim_start();
            for _ in 0..7 {
                let end = rest.find(' ')?;
                rest = rest.get(end..)?.trim_start();
            }
            rest.starts_with('/').then(|| PathBuf::from(rest))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn the_table_gives_bound_absolute_paths() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 1001 /home/u/.docker/desktop/docker.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 1002\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 1003 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 1004 rel.sock\n\
            0000000000000000: 00000002 00000000 00010000 0005 01 1005 /var/lib/my db/s.sock\n";
        assert_eq!(
            bound_paths(table),
            vec![
                PathBuf::from("/home/u/.docker/desktop/docker.sock"),
                PathBuf::from("/var/lib/my db/s.sock"),
            ]
        );
    }

    #[test]
    fn a_socket_bound_here_is_reachable_unless_private() {
        let dir = tempfile::Builder::new()
            .prefix("sockets")
            .tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target"))
            .unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let path = base.join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let found = reachable(Path::new("/nonexistent-root")).unwrap();
        assert!(found.contains(&path.display().to_string()), "{found:?}");
        // Under the private /tmp it is not the sandbox's, unless the project is there.
        let tmp = tempfile::tempdir_in("/tmp").unwrap();
        let in_tmp = std::fs::canonicalize(tmp.path()).unwrap().join("t.sock");
        let _other = std::os::unix::net::UnixListener::bind(&in_tmp).unwrap();
        let shown = in_tmp.display().to_string();
        assert!(
            !reachable(Path::new("/nonexistent-root"))
                .unwrap()
                .contains(&shown)
        );
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        assert!(reachable(&root).unwrap().contains(&shown));
    }
}
