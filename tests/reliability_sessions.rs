//! Reliability, "grants that lie" and "a call can get stuck", against the real server: an
//! "always" grant answers 200 only when the loader the server uses finds the rule
//! effective, else 409 and the grant then really applies to the session; a call whose
//! `PermissionRequested` was torn off by a crash is reported and can be recorded again.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use http_support::{Dirs, bash_call, trust};
use serde_json::{Value, json};

/// Grants `always` on a pending `npm run lint` under `config`, expects a 409 that leaves
/// the file alone, and checks that the session grant applies: the session's other
/// pending call of the same command is approved with it, and the next one is allowed.
fn grant_is_refused_by_the_loader_but_holds_for_the_session(config: &str) {
    let d = Dirs::new();
    let s = d.start(&[]);
    for id in ["c1", "c2"] {
        let r = s.post(
            "/v1/sessions/m/calls",
            &bash_call(&d, id, None, "npm run lint"),
        );
        assert_eq!(r.body["status"], "pending", "{}", r.text);
    }
    d.write_config(config);
    let r = s.post("/v1/sessions/m/calls/c1/grant", &json!({"scope": "always"}));
    r.assert_error(409, "config_malformed");
    assert!(r.message().contains("this session only"), "{}", r.message());
    assert_eq!(
        std::fs::read_to_string(d.config_path()).unwrap(),
        config,
        "a file the loader rejects is left alone"
    );
    let pending = s.get("/v1/sessions/m/pending").body;
    assert_eq!(
        pending["pending"],
        json!([]),
        "c2 is approved by the session grant"
    );
    let r = s.post(
        "/v1/sessions/m/calls",
        &bash_call(&d, "c3", None, "npm run lint"),
    );
    assert_eq!(r.body["status"], "approved", "{}", r.text);
    assert_eq!(r.body["requests"][0]["rule"]["source"], "session");
    // Other commands stay capped at ask while the file is broken.
    let r = s.post(
        "/v1/sessions/m/calls",
        &bash_call(&d, "c4", None, "git status"),
    );
    assert_eq!(r.body["status"], "pending", "{}", r.text);
}

#[test]
fn a_duplicate_permissions_key_makes_an_always_grant_a_409() {
    grant_is_refused_by_the_loader_but_holds_for_the_session(
        "{\n  \"permissions\": {\"file.read\": \"allow\"},\n  \"permissions\": {}\n}\n",
    );
}

#[test]
fn an_unknown_action_elsewhere_makes_an_always_grant_a_409() {
    grant_is_refused_by_the_loader_but_holds_for_the_session(
        "{\n  // keep me\n  \"permissions\": {\"file.read\": \"alow\"}\n}\n",
    );
}

#[test]
fn an_effective_grant_is_a_200_and_keeps_comments() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let config = "{\n  // keep me\n  \"permissions\": {\"file.read\": \"allow\"}\n}\n";
    d.write_config(config);
    // A reviewed file: the grant keeps it trusted, so the rule takes effect.
    trust(&s, &d);
    let r = s.post(
        "/v1/sessions/m/calls",
        &bash_call(&d, "c1", None, "npm run lint"),
    );
    assert_eq!(r.body["status"], "pending", "{}", r.text);
    let r = s.post("/v1/sessions/m/calls/c1/grant", &json!({"scope": "always"}));
    assert_eq!(r.status, 200, "{}", r.text);
    let text = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(text.contains("// keep me"), "{text}");
    let r = s.post(
        "/v1/sessions/other/calls",
        &bash_call(&d, "c1", None, "npm run lint"),
    );
    assert_eq!(r.body["status"], "approved", "{}", r.text);
    assert_eq!(r.body["requests"][0]["rule"]["source"], "project");
}

#[test]
fn a_torn_permission_requested_is_reported_and_can_be_recorded_again() {
    let d = Dirs::new();
    let mut s = d.start(&[]);
    let call = bash_call(&d, "c1", Some("t1"), "npm install");
    let r = s.post("/v1/sessions/stuck/calls", &call);
    assert_eq!(r.body["status"], "pending", "{}", r.text);
    s.stop();
    // A crash in the middle of the `PermissionRequested` line.
    let log = d.state.path().join("sessions").join("stuck.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[1].contains("PermissionRequested"));
    let torn = format!("{}\n{}", lines[0], &lines[1][..lines[1].len() / 2]);
    std::fs::write(&log, torn).unwrap();

    let s = d.start(&[]);
    let e = s.get("/v1/sessions/stuck/events");
    assert_eq!(e.status, 200, "{}", e.text);
    let warnings: Vec<String> = e.body["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`c1`") && w.contains("record it again")),
        "the stuck call is reported: {warnings:?}"
    );
    // Recording the same call again decides it; a different input under the same id
    // stays a conflict.
    let mut other = call.clone();
    other["input"]["command"] = Value::String("npm ci".into());
    s.post("/v1/sessions/stuck/calls", &other)
        .assert_error(409, "call_exists");
    let r = s.post("/v1/sessions/stuck/calls", &call);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["status"], "pending", "{}", r.text);
    let p = s.get("/v1/sessions/stuck/pending").body;
    assert_eq!(p["pending"][0]["callId"], "c1", "{p}");
    let types: Vec<String> = s.get("/v1/sessions/stuck/events").body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types,
        ["ToolRequested", "PermissionRequested"],
        "not requested twice"
    );
    // And it can be answered.
    let r = s.post(
        "/v1/sessions/stuck/calls/c1/grant",
        &json!({"scope": "once"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}
