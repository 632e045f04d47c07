//! Reliability, "lenient JSON": trailing data after a body and duplicate keys (in the body
//! or inside a tool's `input`) are a 400 that names them, over HTTP and in the CLI. A
//! host that reads the first of two `command` keys would run a different command from
//! the one judged, so nothing with duplicates is judged at all.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use http_support::{BIN, Dirs};

#[test]
fn trailing_data_after_a_body_is_a_400() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let c = s.client();
    let body = format!(
        r#"{{"tool": "bash", "input": {{"command": "ls"}}, "projectRoot": "{}"}} junk"#,
        d.root_str()
    );
    let r = c.post_raw("/v1/evaluate", Some("application/json"), body.as_bytes());
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("trailing"), "{}", r.message());
    // Two bodies back to back are trailing data too.
    let one = format!(
        r#"{{"callId": "c1", "tool": "bash", "input": {{"command": "ls"}}, "projectRoot": "{}"}}"#,
        d.root_str()
    );
    let r = c.post_raw(
        "/v1/sessions/s1/calls",
        Some("application/json"),
        format!("{one}{one}").as_bytes(),
    );
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("trailing"), "{}", r.message());
    // Trailing whitespace is not data.
    let r = c.post_raw(
        "/v1/evaluate",
        Some("application/json"),
        format!("{} \n", &body[..body.len() - 5]).as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn duplicate_keys_in_tool_input_are_a_400_naming_the_key() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let c = s.client();
    let body = format!(
        r#"{{"tool": "bash", "input": {{"command": "rm -rf ~/x", "command": "ls"}}, "projectRoot": "{}"}}"#,
        d.root_str()
    );
    let r = c.post_raw("/v1/evaluate", Some("application/json"), body.as_bytes());
    r.assert_error(400, "invalid_body");
    assert!(
        r.message().contains("duplicate key `command`"),
        "{}",
        r.message()
    );
    assert!(r.message().contains("input"), "{}", r.message());
    // Nested, and spelt differently on the wire but equal once decoded.
    let body = format!(
        r#"{{"tool": "webfetch", "input": {{"url": "https://a.example", "meta": {{"k": 1, "\u006b": 2}}}}, "projectRoot": "{}"}}"#,
        d.root_str()
    );
    let r = c.post_raw("/v1/evaluate", Some("application/json"), body.as_bytes());
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("duplicate key `k`"), "{}", r.message());
    // In a recorded call: nothing is recorded.
    let body = format!(
        r#"{{"callId": "c1", "tool": "bash", "input": {{"command": "ls", "command": "rm -rf /tmp/x"}}, "projectRoot": "{}"}}"#,
        d.root_str()
    );
    let r = c.post_raw(
        "/v1/sessions/s1/calls",
        Some("application/json"),
        body.as_bytes(),
    );
    r.assert_error(400, "invalid_body");
    assert_eq!(s.get("/v1/sessions/s1/events").status, 404);
}

#[test]
fn duplicate_body_fields_are_a_400_naming_the_field() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let body = format!(
        r#"{{"command": "ls", "command": "rm -rf /", "projectRoot": "{}"}}"#,
        d.root_str()
    );
    let r = s
        .client()
        .post_raw("/v1/analyze", Some("application/json"), body.as_bytes());
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("command"), "{}", r.message());
}

#[test]
fn the_cli_refuses_duplicate_keys_and_trailing_data_in_input() {
    let d = Dirs::new();
    for (input, want) in [
        (
            r#"{"command": "rm -rf ~/x", "command": "ls"}"#,
            "duplicate key `command`",
        ),
        (r#"{"command": "ls"} junk"#, "trailing"),
    ] {
        let out = std::process::Command::new(BIN)
            .args([
                "check",
                "--root",
                &d.root_str(),
                "--tool",
                "bash",
                "--input",
                input,
            ])
            .env("HOME", d.home.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{input}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{input}: {err}");
    }
}
