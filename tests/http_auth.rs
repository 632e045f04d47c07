//! Start-up safety and bearer-token authentication of the real server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::time::Duration;

use http_support::{Dirs, Server, run_to_exit, serve_command_at};
use serde_json::json;

#[test]
fn token_required_when_configured() {
    let d = Dirs::new();
    let token_file = d.home.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let s = d.start(&["--token-file", token_file.to_str().unwrap()]);
    let body = json!({"tools": ["bash"], "projectRoot": d.root_str()});

    let r = s.post("/v1/tools/available", &body);
    r.assert_error(401, "unauthorized");
    assert_eq!(r.www_authenticate.as_deref(), Some("Bearer"));
    s.get("/metrics").assert_error(401, "unauthorized");
    s.get("/v1/sessions/x/events")
        .assert_error(401, "unauthorized");

    let wrong = Server::client(&s);
    let wrong = http_support::Client {
        token: Some("s3cret-tokeN".into()),
        ..wrong
    };
    wrong
        .post("/v1/tools/available", &body)
        .assert_error(401, "unauthorized");

    let s = s.with_token("s3cret-token");
    assert_eq!(s.post("/v1/tools/available", &body).status, 200);
    assert_eq!(s.get("/metrics").status, 200);

    // Health and the spec stay open for probes and tooling.
    let open = http_support::Client {
        token: None,
        ..s.client()
    };
    assert_eq!(open.get("/healthz").status, 200);
    assert_eq!(open.get("/openapi.yaml").status, 200);
}

#[test]
fn no_token_on_loopback_is_open() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.post(
        "/v1/tools/available",
        &json!({"tools": ["bash"], "projectRoot": d.root_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn non_loopback_without_token_refuses_to_start() {
    let d = Dirs::new();
    let cmd = serve_command_at("0.0.0.0:0", d.state.path(), d.home.path(), &[]);
    let (code, stderr) = run_to_exit(cmd, Duration::from_secs(20));
    assert_eq!(code, Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains("refusing to listen on `0.0.0.0:0` without a token"),
        "{stderr}"
    );
    assert!(stderr.contains("--insecure-no-auth"), "{stderr}");

    // An empty token file is no token.
    let empty = d.home.path().join("empty");
    std::fs::write(&empty, "  \n").unwrap();
    let cmd = serve_command_at(
        "0.0.0.0:0",
        d.state.path(),
        d.home.path(),
        &["--token-file", empty.to_str().unwrap()],
    );
    let (code, stderr) = run_to_exit(cmd, Duration::from_secs(20));
    assert_eq!(code, Some(2), "stderr: {stderr}");
    assert!(stderr.contains("is empty"), "{stderr}");
}

#[test]
fn missing_managed_config_refuses_to_start() {
    let d = Dirs::new();
    let cmd = http_support::serve_command(
        d.state.path(),
        d.home.path(),
        &["--managed-config", "/no/such/managed.json"],
    );
    let (code, stderr) = run_to_exit(cmd, Duration::from_secs(20));
    assert_eq!(code, Some(2), "stderr: {stderr}");
    assert!(
        stderr.contains("managed config `/no/such/managed.json` is not a readable file"),
        "{stderr}"
    );
}

#[test]
fn non_loopback_with_waiver_or_token_starts() {
    let d = Dirs::new();
    let cmd = serve_command_at(
        "0.0.0.0:0",
        d.state.path(),
        d.home.path(),
        &["--insecure-no-auth"],
    );
    let s = Server::spawn(cmd);
    assert_eq!(s.get("/healthz").status, 200);

    let token_file = d.home.path().join("token");
    std::fs::write(&token_file, "t").unwrap();
    let cmd = serve_command_at(
        "0.0.0.0:0",
        d.state.path(),
        d.home.path(),
        &["--token-file", token_file.to_str().unwrap()],
    );
    let s = Server::spawn(cmd).with_token("t");
    assert_eq!(s.get("/metrics").status, 200);
}

#[test]
fn healthcheck_subcommand() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let addr = s.base.trim_start_matches("http://").to_string();
    let status = std::process::Command::new(http_support::BIN)
        .args(["healthcheck", "--addr", &addr])
        .status()
        .unwrap();
    assert!(status.success());
    drop(s);
    let status = std::process::Command::new(http_support::BIN)
        .args(["healthcheck", "--addr", &addr, "--timeout", "1"])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "nothing listens any more");
}
