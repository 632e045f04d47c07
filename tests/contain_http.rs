//! `contain` over the HTTP API and in the model: `/v1/evaluate` answers a project build
//! under `recommended` with `contain`, the sandbox profile and the rewritten command;
//! the rewritten command really runs the build in the sandbox; a call with a request
//! the sandbox would not hold asks; the typed reason for a call that cannot be
//! contained round-trips through JSON.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use http_support::{Dirs, bash};
use khaelor_perm::model::contain::NotContained;
use khaelor_perm::model::vocab::Reason;
use serde_json::json;

#[test]
fn evaluate_answers_contain_with_profile_and_command() {
    if let Err(e) = khaelor_perm::contain::available() {
        panic!("the sandbox cannot run here ({e}); run tests/setup/contain.sh");
    }
    let d = Dirs::new();
    std::fs::write(
        d.root().join("package.json"),
        "{\"scripts\":{\"test\":\"echo tested\"}}\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.root().join(".git/hooks")).unwrap();
    let s = d.start(&[]);
    let r = s.post("/v1/evaluate", &bash(&d, "npm test"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["decision"], "contain", "{}", r.text);
    assert_eq!(r.body["requests"][0]["decision"], "contain");
    assert_eq!(r.body["requests"][0]["rule"]["action"], "contain");
    let c = &r.body["containment"];
    assert_eq!(c["profile"]["name"], "project");
    assert_eq!(c["profile"]["network"], false);
    assert_eq!(c["profile"]["root"], d.root_str());
    assert_eq!(c["profile"]["writable"], json!([d.root_str(), "/tmp"]));
    let git = d.root().join(".git").display().to_string();
    assert!(
        c["profile"]["readOnly"]
            .as_array()
            .unwrap()
            .contains(&json!(git)),
        "{c}"
    );
    let argv: Vec<String> = serde_json::from_value(c["argv"].clone()).unwrap();
    assert_eq!(argv[1..5], ["exec", "--contain", "--profile", "project"]);
    assert_eq!(argv[argv.len() - 3..], ["bash", "-c", "npm test"]);
    assert!(
        c["command"]
            .as_str()
            .unwrap()
            .ends_with("-- bash -c 'npm test'")
    );
    // The rewritten command runs (here `npm test` is `echo tested`, the npm on PATH).
    if std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok()
    {
        let o = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(d.root())
            .env("HOME", d.home.path())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains("tested"));
    }
    // Network the analysis sees keeps its ask.
    let r = s.post(
        "/v1/evaluate",
        &bash(&d, "npm test && curl https://example.com"),
    );
    assert_eq!(r.body["decision"], "ask", "{}", r.text);
    assert!(r.body.get("containment").is_none());
    // Non-interactive: contain still runs (nobody needs to answer it).
    let mut body = bash(&d, "npm test");
    body["interactive"] = json!(false);
    let r = s.post("/v1/evaluate", &body);
    assert_eq!(r.body["decision"], "contain", "{}", r.text);
}

#[test]
fn the_reason_a_call_is_not_contained_is_typed() {
    for why in [
        NotContained::Unavailable {
            detail: "bubblewrap is not installed".to_string(),
        },
        NotContained::NoRunner,
        NotContained::NotACommand,
        NotContained::OutsideProject,
    ] {
        let r = Reason::NotContained { why };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["kind"], "notContained", "{v}");
        assert!(v["why"].is_string(), "{v}");
        let back: Reason = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
