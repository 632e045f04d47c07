//! Reliability, "a hostile config stalls everyone": a project config that is a named pipe,
//! a link to `/dev/zero`, a 100 MB file or a dangling link, served by the real server.
//! Each must be refused before it is opened, answer quickly, cap the project at ask and
//! say why; and the other routes must keep answering meanwhile.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::time::{Duration, Instant};

use http_support::{Client, Dirs, Server, bash};

/// A client that gives up after a few seconds: a stalled server is a failure here, not
/// a hang of the test run.
fn impatient(s: &Server) -> Client {
    let mut c = s.client();
    c.agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    c
}

/// Asks the same things several times: evaluate (capped at ask, the reason named),
/// rules (the error listed), healthz (still up). Returns the error message.
fn assert_capped(d: &Dirs, s: &Server, what: &str) -> String {
    let c = impatient(s);
    let start = Instant::now();
    let mut message = String::new();
    for _ in 0..4 {
        // `git status` is allowed by the defaults: only the cap can make it ask.
        let r = c.post("/v1/evaluate", &bash(d, "git status"));
        assert_eq!(r.status, 200, "{what}: {}", r.text);
        assert_eq!(r.body["decision"], "ask", "{what}: {}", r.text);
        let errors = r.body["configErrors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{what}: {}", r.text);
        message = errors[0]["message"].as_str().unwrap().to_string();
        let r = c.get(&format!("/v1/rules?projectRoot={}", d.root_str()));
        assert_eq!(r.status, 200, "{what}: {}", r.text);
        assert_eq!(r.body["errors"].as_array().unwrap().len(), 1, "{what}");
        assert_eq!(c.get("/healthz").status, 200, "{what}");
    }
    // Generous for a loaded CI machine; the bugs cost seconds per request.
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{what}: 12 requests took {:?}",
        start.elapsed()
    );
    message
}

fn mkfifo(path: &std::path::Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo failed");
}

#[test]
fn a_named_pipe_config_is_refused_without_stalling_the_server() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.root().join(".khaelor")).unwrap();
    mkfifo(&d.config_path());
    let s = d.start(&[]);
    let m = assert_capped(&d, &s, "fifo");
    assert!(m.contains("not a regular file"), "{m}");
}

#[test]
fn a_config_linked_to_dev_zero_is_refused_before_reading() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.root().join(".khaelor")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.config_path()).unwrap();
    let s = d.start(&[]);
    let m = assert_capped(&d, &s, "/dev/zero");
    assert!(m.contains("not a regular file"), "{m}");
}

#[test]
fn a_huge_config_is_refused_by_its_length() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.root().join(".khaelor")).unwrap();
    // Sparse: 100 MB by length, nothing on disk.
    let f = std::fs::File::create(d.config_path()).unwrap();
    f.set_len(100 * 1024 * 1024).unwrap();
    drop(f);
    let s = d.start(&[]);
    let m = assert_capped(&d, &s, "100 MB");
    assert!(m.contains("larger than"), "{m}");
}

#[test]
fn a_dangling_config_link_caps_the_project_and_says_why() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.root().join(".khaelor")).unwrap();
    std::os::unix::fs::symlink(d.root().join("gone.json"), d.config_path()).unwrap();
    let s = d.start(&[]);
    let m = assert_capped(&d, &s, "dangling");
    assert!(m.contains("dangling"), "{m}");
    // Once the target exists, the project is served from it on the very next call.
    std::fs::write(
        d.root().join("gone.json"),
        r#"{"permissions": {"process.execute": {"git status": "deny"}}}"#,
    )
    .unwrap();
    let r = s.post("/v1/evaluate", &bash(&d, "git status"));
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
}

#[test]
fn an_unreadable_config_caps_the_project() {
    // Root reads every file whatever its mode, so a directory in the file's place stands
    // in for "cannot be read".
    let d = Dirs::new();
    std::fs::create_dir_all(d.config_path()).unwrap();
    let s = d.start(&[]);
    let m = assert_capped(&d, &s, "directory");
    assert!(m.contains("not a regular file"), "{m}");
}

/// A rewrite keeping the length, within the file system's timestamp granularity, still
/// takes effect on the next call: freshness comes from metadata, and metadata too close
/// to the load is not trusted.
#[test]
fn same_length_rewrites_take_effect_at_once() {
    let d = Dirs::new();
    let s = d.start(&[]);
    for (i, action) in ["deny", "ask", "deny", "ask"].iter().enumerate() {
        // `"ask" ` and `"deny"` have the same length: only the content changed.
        let text = format!(
            r#"{{"permissions": {{"process.execute": {{"git status": "{action}"{pad}}}}}}}"#,
            pad = if *action == "ask" { " " } else { "" }
        );
        d.write_config(&text);
        let r = s.post("/v1/evaluate", &bash(&d, "git status"));
        assert_eq!(r.body["decision"], *action, "round {i}: {}", r.text);
    }
}
