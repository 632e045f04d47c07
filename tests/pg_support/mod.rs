//! Test support: a PostgreSQL cluster of the test's own, in a temp directory, on a
//! free loopback port, stopped (and its directory removed) when dropped — no server
//! outlives the test.
//!
//! The binaries are Debian's (`/usr/lib/postgresql/*/bin`, installed by
//! `tests/setup/postgres.sh`). `initdb` and `postgres` refuse to run as root, so as
//! root (CI) they run as the `postgres` system user the package creates, through
//! `setpriv`, which execs in place: the child we hold is the postmaster itself, so
//! stopping it stops the cluster.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running cluster.
pub struct Postgres {
    child: Option<Child>,
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    /// `postgres://khaelor@127.0.0.1:PORT/postgres`
    pub url: String,
}

fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop().expect(
        "no PostgreSQL server binaries under /usr/lib/postgresql: run tests/setup/postgres.sh",
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn ids_of(user: &str) -> (u32, u32) {
    let get = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, user])
            .output()
            .expect("run id");
        assert!(
            out.status.success(),
            "no `{user}` system user: run tests/setup/postgres.sh"
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    (get("-u"), get("-g"))
}

/// `program args…`, as the `postgres` user when we are root.
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Postgres {
    /// Makes a cluster in a new temp directory and starts it.
    pub fn start() -> Postgres {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("khaelor-pg-")
            .tempdir()
            .unwrap()
            .keep();
        if is_root() {
            let (uid, gid) = ids_of("postgres");
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        }
        let out = as_owner(&bin.join("initdb"))
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-A", "trust", "-U", "khaelor", "-E", "UTF8", "--no-sync"])
            .stdin(Stdio::null())
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let mut pg = Postgres {
            child: None,
            dir,
            bin,
            port,
            url: format!("postgres://khaelor@127.0.0.1:{port}/postgres"),
        };
        pg.resume();
        pg
    }

    /// Starts the postmaster again on the same data and port (after `stop` or `kill`).
    pub fn resume(&mut self) {
        assert!(self.child.is_none(), "the cluster is already running");
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let child = as_owner(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-k")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string()])
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=300",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start postgres");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = Command::new(self.bin.join("pg_isready"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "khaelor",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "postgres exited ({status}) before it was ready: {}",
                    std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "postgres not ready in 30 s: {}",
                std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the cluster (fast shutdown: clients are disconnected), waiting for it.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    /// `psql -c SQL`, its output (unaligned, tuples only).
    pub fn psql(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.url,
                "-c",
                sql,
            ])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql `{sql}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
