//! Seed 004's stance that a project's grants never apply to another project, checked
//! on every grant path of the real server: an "always" grant written to the
//! project's config, an "always" grant that could not be written and lives in the
//! session, and the auto-approval of other pending calls a grant triggers. Also
//! `alwaysScope: exact` through the grant endpoint: the persisted rule is the subject.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::path::{Path, PathBuf};

use http_support::Dirs;
use serde_json::{Value, json};

fn call(root: &Path, id: &str, command: &str) -> Value {
    json!({
        "callId": id,
        "tool": "bash",
        "input": {"command": command},
        "projectRoot": root.display().to_string(),
    })
}

fn pending(s: &http_support::Server, session: &str) -> Vec<String> {
    s.get(&format!("/v1/sessions/{session}/pending")).body["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["callId"].as_str().unwrap().to_string())
        .collect()
}

fn other_project() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().canonicalize().unwrap();
    (t, p)
}

#[test]
fn a_persisted_always_grant_stays_in_its_project() {
    let d = Dirs::new();
    let (_tb, b) = other_project();
    let a = d.root();
    let s = d.start(&[]);
    let cmd = "npm install left-pad";
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&a, "a1", cmd)).body["status"],
        "pending"
    );
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&b, "b1", cmd)).body["status"],
        "pending"
    );
    let g = s.post("/v1/sessions/s/calls/a1/grant", &json!({"scope": "always"}));
    assert_eq!(g.status, 200, "{}", g.text);
    assert_eq!(
        g.body["autoApproved"],
        json!([]),
        "b1 is another project's call: {}",
        g.text
    );
    assert_eq!(pending(&s, "s"), vec!["b1".to_string()]);
    assert!(d.config_path().is_file());
    assert!(
        !b.join(".khaelor").exists(),
        "nothing is written to the other project"
    );
    // A new call: allowed in A, still asking in B, in the same session and a new one.
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&a, "a2", cmd)).body["status"],
        "approved"
    );
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&b, "b2", cmd)).body["status"],
        "pending"
    );
    assert_eq!(
        s.post("/v1/sessions/t/calls", &call(&b, "b3", cmd)).body["status"],
        "pending"
    );
    let e = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": cmd}, "projectRoot": b.display().to_string()}),
    );
    assert_eq!(e.body["decision"], "ask", "{}", e.text);
}

#[test]
fn a_session_only_always_grant_stays_in_its_project() {
    let d = Dirs::new();
    let (_tb, b) = other_project();
    let (_outside, elsewhere) = other_project();
    let a = d.root();
    // `.khaelor` links out of the project: the grant cannot be written and lives in
    // the session only.
    std::os::unix::fs::symlink(&elsewhere, a.join(".khaelor")).unwrap();
    let s = d.start(&[]);
    let cmd = "cargo fetch";
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&a, "a1", cmd)).body["status"],
        "pending"
    );
    let g = s.post("/v1/sessions/s/calls/a1/grant", &json!({"scope": "always"}));
    g.assert_error(409, "config_write_failed");
    assert!(g.message().contains("this session only"), "{}", g.text);
    assert!(
        !elsewhere.join("config.json").exists(),
        "nothing written through the link: {}",
        g.text
    );
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&a, "a2", cmd)).body["status"],
        "approved",
        "the session grant applies in A"
    );
    assert_eq!(
        s.post("/v1/sessions/s/calls", &call(&b, "b1", cmd)).body["status"],
        "pending",
        "but never in B"
    );
}

#[test]
fn always_scope_exact_persists_the_subject() {
    let d = Dirs::new();
    d.write_config("{ \"permissions\": { \"alwaysScope\": \"exact\" } }\n");
    let a = d.root();
    let s = d.start(&[]);
    // The user's own project file: trusted, so the grants written into it apply.
    http_support::trust(&s, &d);
    let r = s.post(
        "/v1/sessions/s/calls",
        &call(&a, "a1", "git push origin feature/foo"),
    );
    assert_eq!(
        r.body["alwaysPatterns"],
        json!(["git push origin feature/foo"]),
        "{}",
        r.text
    );
    let g = s.post(
        "/v1/sessions/s/calls/a1/grant",
        &json!({"scope": "always", "pattern": "git push *"}),
    );
    assert_eq!(
        (g.status, g.body["error"]["code"].as_str()),
        (409, Some("pattern_not_offered")),
        "a wider pattern than the subject is refused: {}",
        g.text
    );
    let g = s.post("/v1/sessions/s/calls/a1/grant", &json!({"scope": "always"}));
    assert_eq!(g.status, 200, "{}", g.text);
    let config = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(
        config.contains("\"pattern\": \"git push origin feature/foo\""),
        "{config}"
    );
    assert!(!config.contains("git push *"), "{config}");
    assert_eq!(
        s.post(
            "/v1/sessions/s/calls",
            &call(&a, "a2", "git push origin feature/foo")
        )
        .body["status"],
        "approved"
    );
    assert_eq!(
        s.post(
            "/v1/sessions/s/calls",
            &call(&a, "a3", "git push origin main")
        )
        .body["status"],
        "pending"
    );
}
