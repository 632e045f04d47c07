//! Signed policy bundles end to end: the real binary builds, signs and verifies them,
//! and `check`, `rules`, `hook` and `serve` fetch them with `--managed-url` from a real
//! HTTP server on loopback (a small one in this file, with ETag / If-None-Match).
//!
//! Every refusal is checked both ways: the good bundle is accepted and changes the
//! decision, the bad one is refused with its error and changes nothing. The managed
//! body used: `curl *` allowed (with the network), `wget *` denied; without it `curl x`
//! and `wget x` ask (exit 3) and `ls` is allowed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_support::{BIN, Dirs, Server, bash};

const ALLOW_CURL_DENY_WGET: &str = r#"{"permissions":{"process.execute":{"curl *":"allow","wget *":"deny"},"network.access":"allow"}}"#;
const DENY_CURL: &str = r#"{"permissions":{"process.execute":{"curl *":"deny"}}}"#;

const ALLOW: i32 = 0;
const ASK: i32 = 3;
const DENY: i32 = 4;
const USAGE: i32 = 2;

/// What the bundle server serves, and what it saw.
#[derive(Default)]
struct Served {
    body: Vec<u8>,
    etag: String,
    generation: u32,
    requests: u32,
    conditional: u32,
    not_modified: u32,
    /// Hang up on every request without an answer (the server is down).
    down: bool,
}

/// A tiny HTTP/1.1 server on loopback serving one bundle with an ETag, answering 304
/// to a matching If-None-Match.
struct BundleServer {
    url: String,
    served: Arc<Mutex<Served>>,
    stop: Arc<AtomicBool>,
    addr: String,
}

impl BundleServer {
    fn start() -> BundleServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let served = Arc::new(Mutex::new(Served::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (served.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(c) = conn {
                    answer(c, &s);
                }
            }
        });
        BundleServer {
            url: format!("http://{addr}/managed.bundle"),
            served,
            stop,
            addr,
        }
    }

    fn set(&self, bytes: Vec<u8>) {
        let mut s = self.served.lock().unwrap();
        s.generation += 1;
        s.etag = format!("\"g{}\"", s.generation);
        s.body = bytes;
    }

    fn set_down(&self, down: bool) {
        self.served.lock().unwrap().down = down;
    }

    fn counts(&self) -> (u32, u32, u32) {
        let s = self.served.lock().unwrap();
        (s.requests, s.conditional, s.not_modified)
    }
}

impl Drop for BundleServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
    }
}

fn answer(mut c: TcpStream, served: &Mutex<Served>) {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head).to_lowercase();
    let inm = head
        .lines()
        .find_map(|l| l.strip_prefix("if-none-match:"))
        .map(|v| v.trim().to_string());
    let mut s = served.lock().unwrap();
    if s.down {
        return;
    }
    s.requests += 1;
    let reply = if let Some(tag) = inm {
        s.conditional += 1;
        (tag == s.etag.to_lowercase()).then(|| {
            s.not_modified += 1;
            format!(
                "HTTP/1.1 304 Not Modified\r\nETag: {}\r\nConnection: close\r\n\r\n",
                s.etag
            )
            .into_bytes()
        })
    } else {
        None
    };
    let reply = reply.unwrap_or_else(|| {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nETag: {}\r\nConnection: close\r\n\r\n",
            s.body.len(),
            s.etag
        )
        .into_bytes();
        r.extend_from_slice(&s.body);
        r
    });
    drop(s);
    let _ = c.write_all(&reply);
}

/// A URL nothing listens on.
fn unreachable_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/managed.bundle")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("KHAELOR_PERM_MANAGED_URL")
        .env_remove("KHAELOR_PERM_MANAGED_KEY")
        .env_remove("KHAELOR_PERM_MANAGED_CONFIG")
        .env_remove("KHAELOR_PERM_STATE_DIR")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A key pair made by `bundle keygen`: (secret key file, public key file).
fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let prefix = dir.join(name);
    let (code, out, err) = run(&["bundle", "keygen", "--out", prefix.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
    )
}

/// A bundle of `body` at `version`, built and signed by the binary.
fn bundle(dir: &Path, body: &str, version: u64, key: &Path) -> Vec<u8> {
    let config = dir.join(format!("config-{version}.json"));
    let draft = dir.join(format!("draft-{version}"));
    let signed = dir.join(format!("bundle-{version}"));
    std::fs::write(&config, body).unwrap();
    let v = version.to_string();
    let (code, out, err) = run(&[
        "bundle",
        "build",
        "--config",
        config.to_str().unwrap(),
        "--version",
        &v,
        "--out",
        draft.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(&[
        "bundle",
        "sign",
        draft.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "--out",
        signed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::read(signed).unwrap()
}

/// One project, home, state dir and a directory for keys and bundles.
struct World {
    dirs: Dirs,
    work: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dirs: Dirs::new(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// `check -- COMMAND` with the bundle flags: (exit status, stderr).
    fn check(&self, url: &str, keys: &[&Path], extra: &[&str], command: &str) -> (i32, String) {
        let root = self.dirs.root_str();
        let home = self.dirs.home_str();
        let state = self.dirs.state.path().display().to_string();
        let mut args = vec![
            "check",
            "--root",
            &root,
            "--home",
            &home,
            "--state-dir",
            &state,
            "--managed-url",
            url,
        ];
        for k in keys {
            args.push("--managed-key");
            args.push(k.to_str().unwrap());
        }
        args.extend_from_slice(extra);
        args.push("--");
        args.push(command);
        let (code, _, err) = run(&args);
        (code, err)
    }

    /// `rules --json` with the bundle flags.
    fn rules(&self, url: &str, keys: &[&Path], extra: &[&str]) -> serde_json::Value {
        let root = self.dirs.root_str();
        let home = self.dirs.home_str();
        let state = self.dirs.state.path().display().to_string();
        let mut args = vec![
            "rules",
            "--json",
            "--root",
            &root,
            "--home",
            &home,
            "--state-dir",
            &state,
            "--managed-url",
            url,
        ];
        for k in keys {
            args.push("--managed-key");
            args.push(k.to_str().unwrap());
        }
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert!(code == 0 || code == 1, "{out}{err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"))
    }

    fn cached_version(&self) -> Option<u64> {
        let p = self
            .dirs
            .state
            .path()
            .join("managed-bundle")
            .join("state.json");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
        v["version"].as_u64()
    }
}

/// Past the poll interval (one second in these tests), so the next command asks again.
fn next_poll() {
    std::thread::sleep(Duration::from_millis(1100));
}

const POLL: &[&str] = &["--managed-poll-secs", "1"];

#[test]
fn build_sign_verify_with_the_binary_and_refuse_a_flipped_byte() {
    let w = World::new();
    let (k1, p1) = keygen(w.work(), "k1");
    let (_, p2) = keygen(w.work(), "k2");
    let b = bundle(w.work(), DENY_CURL, 1, &k1);
    let file = w.work().join("b");
    std::fs::write(&file, &b).unwrap();
    let f = file.to_str().unwrap();
    let (code, out, _) = run(&["bundle", "verify", f, "--key", p1.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("good: version 1"), "{out}");
    // Another key: unknown.
    let (code, _, err) = run(&["bundle", "verify", f, "--key", p2.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("not among the trusted keys"), "{err}");
    // One byte of the body, then one of the signature.
    let body_at = b.windows(4).position(|w| w == b"curl").unwrap();
    let sig_at = b.len() - 10;
    for (at, what) in [(body_at, "body"), (sig_at, "signature")] {
        let mut t = b.clone();
        t[at] = if t[at] == b'0' { b'1' } else { b'0' };
        std::fs::write(&file, &t).unwrap();
        let (code, _, err) = run(&["bundle", "verify", f, "--key", p1.to_str().unwrap()]);
        assert_eq!(code, 1, "a changed {what} byte was accepted");
        assert!(err.contains("bad signature"), "{what}: {err}");
    }
    // A config that is not a valid managed config is never built.
    let bad = w.work().join("bad.json");
    std::fs::write(&bad, r#"{"permissions":{"file.read":"alow"}}"#).unwrap();
    let (code, _, err) = run(&[
        "bundle",
        "build",
        "--config",
        bad.to_str().unwrap(),
        "--version",
        "1",
        "--out",
        w.work().join("x").to_str().unwrap(),
    ]);
    assert_eq!(code, USAGE);
    assert!(err.contains("unknown action `alow`"), "{err}");
}

#[test]
fn a_good_bundle_decides_and_tampered_ones_change_nothing() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    let good = bundle(w.work(), ALLOW_CURL_DENY_WGET, 1, &k1);
    // Nothing fetched yet and the server serves a tampered bundle: fail closed.
    let mut tampered = good.clone();
    let at = tampered.windows(5).position(|w| w == b"allow").unwrap();
    tampered[at..at + 5].copy_from_slice(b"deny ");
    srv.set(tampered.clone());
    let (code, err) = w.check(&srv.url, &[&p1], POLL, "ls");
    assert_eq!(code, USAGE, "{err}");
    assert!(
        err.contains("no managed bundle") && err.contains("bad signature"),
        "{err}"
    );
    // The good bundle: its allow and its deny decide.
    srv.set(good);
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, ALLOW);
    assert_eq!(w.check(&srv.url, &[&p1], &[], "wget x").0, DENY);
    assert_eq!(w.check(&srv.url, &[&p1], &[], "ls").0, ALLOW);
    // A tampered body (a deny turned into an allow) and a tampered signature: refused,
    // the good bundle stays in force.
    let v2 = bundle(w.work(), DENY_CURL, 2, &k1);
    let mut body_flip = v2.clone();
    let at = body_flip.windows(4).position(|w| w == b"deny").unwrap();
    body_flip[at..at + 4].copy_from_slice(b"ask ");
    let mut sig_flip = v2.clone();
    let n = sig_flip.len();
    sig_flip[n - 5] = if sig_flip[n - 5] == b'a' { b'b' } else { b'a' };
    for bad in [body_flip, sig_flip] {
        srv.set(bad);
        next_poll();
        let (code, err) = w.check(&srv.url, &[&p1], POLL, "curl x");
        assert_eq!(code, ALLOW, "{err}");
        assert!(
            err.contains("bad signature") && err.contains("keeping version 1"),
            "{err}"
        );
        assert_eq!(w.check(&srv.url, &[&p1], &[], "wget x").0, DENY);
        assert_eq!(w.cached_version(), Some(1));
    }
    // The untampered v2 is accepted and its deny applies.
    srv.set(v2);
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p1], POLL, "curl x");
    assert_eq!(code, DENY, "{err}");
    assert_eq!(w.cached_version(), Some(2));
    assert_eq!(w.check(&srv.url, &[&p1], &[], "wget x").0, ASK);
}

#[test]
fn keys_rotate_and_a_removed_key_stops_its_bundles() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "old");
    let (k2, p2) = keygen(w.work(), "new");
    // A key nobody trusts: refused, nothing cached.
    srv.set(bundle(w.work(), DENY_CURL, 1, &k2));
    let (code, err) = w.check(&srv.url, &[&p1], POLL, "curl x");
    assert_eq!(code, USAGE);
    assert!(err.contains("not among the trusted keys"), "{err}");
    // The old key signs v1: accepted.
    srv.set(bundle(w.work(), DENY_CURL, 1, &k1));
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, DENY);
    // Rotation, step 1: both keys trusted; the new key signs v2: accepted.
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 2, &k2));
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1, &p2], POLL, "curl x").0, ALLOW);
    let r = w.rules(&srv.url, &[&p1, &p2], &[]);
    assert_eq!(r["managedBundle"]["version"], 2);
    let new_id = run(&[
        "bundle",
        "verify",
        w.work().join("bundle-2").to_str().unwrap(),
        "--key",
        p2.to_str().unwrap(),
    ])
    .1;
    let id = r["managedBundle"]["keyId"].as_str().unwrap().to_string();
    assert!(new_id.contains(&id), "{new_id} vs {id}");
    // Step 2: only the new key. A bundle the old key signs (v3) is refused from then on.
    srv.set(bundle(w.work(), DENY_CURL, 3, &k1));
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p2], POLL, "curl x");
    assert_eq!(code, ALLOW, "{err}");
    assert!(err.contains("not among the trusted keys"), "{err}");
    assert_eq!(w.cached_version(), Some(2));
    // A key file with both keys (one per line, comments allowed) trusts both again.
    let both = w.work().join("trusted.keys");
    std::fs::write(
        &both,
        format!(
            "# team keys\n{}{}",
            std::fs::read_to_string(&p1).unwrap(),
            std::fs::read_to_string(&p2).unwrap()
        ),
    )
    .unwrap();
    next_poll();
    assert_eq!(w.check(&srv.url, &[&both], POLL, "curl x").0, DENY);
    assert_eq!(w.cached_version(), Some(3));
    // The cached bundle is verified on every use: dropping its key stops it at once,
    // even with the server unreachable (no bundle to use: fail closed).
    let (code, err) = w.check(&unreachable_url(), &[&p2], &[], "curl x");
    assert_eq!(code, USAGE, "{err}");
    assert!(err.contains("not among the trusted keys"), "{err}");
}

#[test]
fn a_rollback_is_refused_and_the_same_version_may_only_be_re_signed() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    let (k2, p2) = keygen(w.work(), "k2");
    srv.set(bundle(w.work(), DENY_CURL, 5, &k1));
    assert_eq!(w.check(&srv.url, &[&p1, &p2], POLL, "curl x").0, DENY);
    // Version 4, validly signed: an older policy; refused.
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 4, &k1));
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p1, &p2], POLL, "curl x");
    assert_eq!(code, DENY, "{err}");
    assert!(
        err.contains("rollback refused") && err.contains("version 4"),
        "{err}"
    );
    // Version 5 again with another body: refused.
    let w2 = tempfile::tempdir().unwrap();
    srv.set(bundle(w2.path(), ALLOW_CURL_DENY_WGET, 5, &k1));
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p1, &p2], POLL, "curl x");
    assert_eq!(code, DENY, "{err}");
    assert!(
        err.contains("already accepted with a different body"),
        "{err}"
    );
    // Version 5, same body, re-signed by the second key (a rotation): accepted.
    let w3 = tempfile::tempdir().unwrap();
    srv.set(bundle(w3.path(), DENY_CURL, 5, &k2));
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p1, &p2], POLL, "curl x");
    assert_eq!(code, DENY, "{err}");
    assert!(err.is_empty(), "{err}");
    // Version 6: accepted, and it decides.
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 6, &k1));
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1, &p2], POLL, "curl x").0, ALLOW);
    assert_eq!(w.cached_version(), Some(6));
}

#[test]
fn past_the_maximum_age_allows_stop_and_denies_stay() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 1, &k1));
    let age: &[&str] = &["--managed-poll-secs", "1", "--managed-max-age", "2"];
    assert_eq!(w.check(&srv.url, &[&p1], age, "curl x").0, ALLOW);
    // The server goes down; within the maximum age the cached bundle decides as before.
    srv.set_down(true);
    let gone = srv.url.clone();
    next_poll();
    let (code, err) = w.check(&gone, &[&p1], age, "curl x");
    assert_eq!(code, ALLOW, "{err}");
    assert!(
        err.contains("cannot fetch") && err.contains("keeping version 1"),
        "{err}"
    );
    // Past it: the allow stops applying, the deny stays.
    std::thread::sleep(Duration::from_millis(2100));
    let (code, err) = w.check(&gone, &[&p1], age, "curl x");
    assert_eq!(code, ASK, "{err}");
    assert!(err.contains("past its maximum age"), "{err}");
    assert_eq!(w.check(&gone, &[&p1], age, "wget x").0, DENY);
    let r = w.rules(&gone, &[&p1], age);
    assert_eq!(r["managedBundle"]["expired"], true, "{r}");
    // The server is back: the bundle is confirmed (a 304) and its allows apply again.
    srv.set_down(false);
    next_poll();
    let (_, _, nm_before) = srv.counts();
    let (code, err) = w.check(&srv.url, &[&p1], age, "curl x");
    assert_eq!(code, ALLOW, "{err}");
    assert_eq!(srv.counts().2, nm_before + 1);
}

#[test]
fn an_oversize_bundle_is_refused_and_one_under_the_cap_is_accepted() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    // Just under 1 MiB in all: a comment pads the body.
    let pad = |n: usize| format!("// {}\n{DENY_CURL}", "x".repeat(n));
    let under = bundle(w.work(), &pad(1024 * 1024 - 400), 1, &k1);
    assert!(under.len() <= 1024 * 1024, "{}", under.len());
    srv.set(under);
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, DENY);
    // Over the cap (served as is: `bundle build` refuses to make one).
    let mut over = bundle(
        tempfile::tempdir().unwrap().path(),
        ALLOW_CURL_DENY_WGET,
        2,
        &k1,
    );
    over.resize(1024 * 1024 + 1, b'\n');
    srv.set(over);
    next_poll();
    let (code, err) = w.check(&srv.url, &[&p1], POLL, "curl x");
    assert_eq!(code, DENY, "{err}");
    assert!(err.contains("larger than the cap"), "{err}");
    assert_eq!(w.cached_version(), Some(1));
}

#[test]
fn etag_polling_answers_304_and_a_new_etag_brings_the_new_bundle() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    srv.set(bundle(w.work(), DENY_CURL, 1, &k1));
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, DENY);
    assert_eq!(srv.counts(), (1, 0, 0));
    // Within the poll interval: no request at all (the hook stays cheap).
    assert_eq!(
        w.check(&srv.url, &[&p1], &["--managed-poll-secs", "60"], "curl x")
            .0,
        DENY
    );
    assert_eq!(srv.counts().0, 1);
    // Past it: a conditional request, answered 304; the decision is unchanged.
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, DENY);
    assert_eq!(srv.counts(), (2, 1, 1));
    // A new bundle (new ETag): the conditional request gets a 200 and it applies.
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 2, &k1));
    next_poll();
    assert_eq!(w.check(&srv.url, &[&p1], POLL, "curl x").0, ALLOW);
    assert_eq!(srv.counts(), (3, 2, 1));
    let r = w.rules(&srv.url, &[&p1], &[]);
    assert_eq!(r["managedBundle"]["version"], 2);
    assert!(r["managedBundle"]["ageSecs"].as_u64().unwrap() < 60);
}

#[test]
fn unreachable_without_a_cached_bundle_fails_closed_in_check_and_hook() {
    let w = World::new();
    let (_, p1) = keygen(w.work(), "k1");
    let url = unreachable_url();
    let (code, err) = w.check(&url, &[&p1], &[], "ls");
    assert_eq!(code, USAGE, "{err}");
    assert!(
        err.contains("no managed bundle") && err.contains("cannot fetch"),
        "{err}"
    );
    // The hook answers with the host's deny form.
    let input = serde_json::json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "cwd": w.dirs.root_str(),
    });
    let mut child = Command::new(BIN)
        .args([
            "hook",
            "claude",
            "--root",
            &w.dirs.root_str(),
            "--home",
            &w.dirs.home_str(),
            "--state-dir",
            w.dirs.state.path().to_str().unwrap(),
            "--managed-url",
            &url,
            "--managed-key",
            p1.to_str().unwrap(),
        ])
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "deny",
        "{stdout}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no managed bundle"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_managed_url_and_the_managed_config_are_exclusive() {
    let w = World::new();
    let (_, p1) = keygen(w.work(), "k1");
    let (code, err) = w.check(
        "http://127.0.0.1:1/x",
        &[&p1],
        &["--managed-config", "/etc/khaelor/managed.json"],
        "ls",
    );
    assert_eq!(code, USAGE);
    assert!(err.contains("cannot be used with"), "{err}");
    let (code, err) = w.check("ftp://example.invalid/x", &[&p1], &[], "ls");
    assert_eq!(code, USAGE);
    assert!(err.contains("must be an `http://`"), "{err}");
}

#[test]
fn serve_refuses_to_start_without_a_bundle_then_polls_and_shows_it() {
    let w = World::new();
    let (k1, p1) = keygen(w.work(), "k1");
    let p1s = p1.display().to_string();
    // Nothing to fetch and nothing cached: serve does not start.
    let gone = unreachable_url();
    let out = http_support::serve_command(
        w.dirs.state.path(),
        w.dirs.home.path(),
        &["--managed-url", &gone, "--managed-key", &p1s],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to start") && err.contains("no managed bundle"),
        "{err}"
    );
    // With a bundle: it starts, decides with it, shows it, and polls for the next one.
    let srv = BundleServer::start();
    srv.set(bundle(w.work(), DENY_CURL, 1, &k1));
    let s = Server::start(
        w.dirs.state.path(),
        w.dirs.home.path(),
        &[
            "--managed-url",
            &srv.url,
            "--managed-key",
            &p1s,
            "--managed-poll-secs",
            "1",
        ],
    );
    let r = s.post("/v1/evaluate", &bash(&w.dirs, "curl x"));
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    let rules = s.get(&format!("/v1/rules?projectRoot={}", w.dirs.root_str()));
    assert_eq!(rules.body["managedBundle"]["version"], 1, "{}", rules.text);
    // A rollback served meanwhile is refused (logged), the next version is taken.
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 0, &k1));
    std::thread::sleep(Duration::from_millis(2500));
    let r = s.post("/v1/evaluate", &bash(&w.dirs, "curl x"));
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    assert!(s.stderr.lock().unwrap().contains("rollback refused"));
    srv.set(bundle(w.work(), ALLOW_CURL_DENY_WGET, 2, &k1));
    let mut decision = String::new();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(200));
        let r = s.post("/v1/evaluate", &bash(&w.dirs, "curl x"));
        decision = r.body["decision"].as_str().unwrap_or_default().to_string();
        if decision == "allow" {
            break;
        }
    }
    assert_eq!(decision, "allow");
    let rules = s.get(&format!("/v1/rules?projectRoot={}", w.dirs.root_str()));
    assert_eq!(rules.body["managedBundle"]["version"], 2, "{}", rules.text);
    let r = s.post("/v1/evaluate", &bash(&w.dirs, "wget x"));
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
}

#[test]
fn the_bundle_cache_is_a_protected_write_even_where_outside_writes_are_allowed() {
    let w = World::new();
    let srv = BundleServer::start();
    let (k1, p1) = keygen(w.work(), "k1");
    srv.set(bundle(w.work(), DENY_CURL, 1, &k1));
    // The user allows every write outside the project.
    std::fs::create_dir_all(w.dirs.home.path().join(".khaelor")).unwrap();
    std::fs::write(
        w.dirs.home.path().join(".khaelor/config.json"),
        r#"{"permissions":{"file.write.outsideProject":"allow"}}"#,
    )
    .unwrap();
    let write = |path: &Path| {
        let root = w.dirs.root_str();
        let home = w.dirs.home_str();
        let state = w.dirs.state.path().display().to_string();
        let input = serde_json::json!({"path": path, "content": "{}"}).to_string();
        run(&[
            "check",
            "--root",
            &root,
            "--home",
            &home,
            "--state-dir",
            &state,
            "--managed-url",
            &srv.url,
            "--managed-key",
            p1.to_str().unwrap(),
            "--tool",
            "write",
            "--input",
            &input,
        ])
    };
    // The look-alike: another file outside the project is written without a prompt.
    let (code, out, err) = write(&w.work().join("notes.json"));
    assert_eq!(code, ALLOW, "{out}{err}");
    // The cache (rollback floor, last confirmation) asks.
    let cache = w.dirs.state.path().join("managed-bundle");
    for f in ["state.json", "bundle", "managed.json"] {
        let (code, out, err) = write(&cache.join(f));
        assert_eq!(code, ASK, "{f}: {out}{err}");
    }
}
