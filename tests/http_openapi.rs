//! `openapi.yaml` is generated from the code: this fails when the checked-in file
//! differs. Regenerate with `UPDATE_OPENAPI=1 cargo test --test http_openapi` (or
//! `khaelor-perm openapi > openapi.yaml`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use khaelor_perm::http::openapi;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml");

#[test]
fn checked_in_spec_matches_the_code() {
    let generated = openapi::yaml();
    assert!(!generated.is_empty());
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(PATH, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        on_disk == generated,
        "openapi.yaml is out of date: run `UPDATE_OPENAPI=1 cargo test --test http_openapi`"
    );
}

#[test]
fn every_route_and_error_is_documented() {
    let spec = openapi::yaml();
    for route in [
        "/healthz:",
        "/metrics:",
        "/openapi.yaml:",
        "/v1/analyze:",
        "/v1/evaluate:",
        "/v1/rules:",
        "/v1/tools/available:",
        "/v1/sessions/{sessionId}/calls:",
        "/v1/sessions/{sessionId}/pending:",
        "/v1/sessions/{sessionId}/events:",
        "/v1/sessions/{sessionId}/calls/{callId}/grant:",
        "/v1/sessions/{sessionId}/calls/{callId}/deny:",
    ] {
        assert!(
            spec.contains(&format!("\n  {route}\n")),
            "{route} missing from the spec"
        );
    }
    for status in [
        "'400'", "'401'", "'403'", "'404'", "'409'", "'413'", "'415'", "'422'",
    ] {
        assert!(spec.contains(status), "{status} documented nowhere");
    }
    for schema in [
        "ErrorBody:",
        "Analysis:",
        "CallDecision:",
        "PermissionRule:",
        "Event:",
        "EventKind:",
        "Panel:",
    ] {
        assert!(
            spec.contains(&format!("\n    {schema}\n")),
            "schema {schema} missing"
        );
    }
}
