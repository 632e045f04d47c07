//! The stateless endpoints of the real server over real HTTP: every happy path and
//! every error code (400, 403, 404, 405, 413, 415, 422), request ids, metrics.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use http_support::{Dirs, bash, trust};
use serde_json::json;

#[test]
fn healthz_and_request_ids() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.get("/healthz");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")})
    );
    assert!(
        r.request_id.as_deref().is_some_and(|id| id.len() >= 16),
        "a request id is generated"
    );
    // A client's own id is kept and echoed.
    let r = s
        .client()
        .get_with("/healthz", &[("x-request-id", "trace-me-42")]);
    assert_eq!(r.request_id.as_deref(), Some("trace-me-42"));
}

#[test]
fn analyze_each_engine() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let body = |engine: Option<&str>| {
        let mut v = json!({"command": "git push origin main && curl https://x.y", "projectRoot": d.root_str()});
        if let Some(e) = engine {
            v["engine"] = json!(e);
        }
        v
    };
    let r = s.post("/v1/analyze", &body(None));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["engine"], "ast");
    assert_eq!(r.body["class"], "compound");
    assert_eq!(r.body["parts"].as_array().unwrap().len(), 2);
    let caps: Vec<&str> = r.body["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["capability"].as_str().unwrap())
        .collect();
    assert!(
        caps.contains(&"git.modify") && caps.contains(&"network.access"),
        "{caps:?}"
    );
    assert_eq!(
        r.body["alwaysPatterns"],
        json!([]),
        "refusal rule: compound offers nothing"
    );

    let r = s.post("/v1/analyze", &body(Some("lexer")));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["engine"], "lexer");

    let r = s.post("/v1/analyze", &body(Some("both")));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["engine"], "ast");
    assert_eq!(r.body["lexer"]["engine"], "lexer");
    assert!(r.body["agree"].is_boolean());

    // cwd and home are honoured: `~/x` under the given home is outside the project.
    let r = s.post(
        "/v1/analyze",
        &json!({"command": "rm ~/notes.txt", "projectRoot": d.root_str(), "cwd": d.root_str(), "home": d.home_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let outside = r.body["requests"].as_array().unwrap().iter().any(|q| {
        q["capability"] == "file.write.outsideProject"
            && q["subject"].as_str().unwrap().starts_with(&d.home_str())
    });
    assert!(outside, "{}", r.text);

    let r = s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": d.root_str(), "engine": "regex"}),
    );
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("`engine`"), "{}", r.message());
}

#[test]
fn evaluate_allow_ask_deny() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.post("/v1/evaluate", &bash(&d, "git status"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["decision"], "allow");
    // Verified read-only: the recommended preset's rule is the last match.
    assert_eq!(r.body["requests"][0]["rule"]["source"], "preset");

    let r = s.post("/v1/evaluate", &bash(&d, "npm install"));
    assert_eq!(r.body["decision"], "ask", "{}", r.text);
    assert_eq!(r.body["alwaysPatterns"], json!(["npm install"]));
    assert!(r.body["panel"].is_object());

    // Non-interactive: an ask resolves as deny with the seed's message.
    let mut body = bash(&d, "npm install");
    body["interactive"] = json!(false);
    let r = s.post("/v1/evaluate", &body);
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("non-interactively"),
        "{}",
        r.text
    );

    let r = s.post("/v1/evaluate", &bash(&d, "rm -rf /"));
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    assert!(r.body["hardline"].is_object());
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Permission denied by policy")
    );

    // A non-bash tool, and a project rule that denies.
    d.write_config("{\n  // secrets stay secret\n  \"permissions\": { \"file.read\": { \"*secret*\": \"deny\" } }\n}\n");
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "read", "input": {"path": "secret.txt"}, "projectRoot": d.root_str()}),
    );
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    assert_eq!(r.body["requests"][0]["rule"]["source"], "project");
    assert_eq!(r.body["requests"][0]["rule"]["origin"]["line"], 3);
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "read", "input": {"path": "README.md"}, "projectRoot": d.root_str()}),
    );
    assert_eq!(r.body["decision"], "allow", "{}", r.text);
}

#[test]
fn rules_and_tools_available() {
    let d = Dirs::new();
    let s = d.start(&[]);
    d.write_config("{\n  \"permissions\": {\n    \"file.write.*\": \"deny\",\n    \"process.execute\": { \"npm test\": \"allow\" }\n  }\n}\n");
    trust(&s, &d);
    let root = d.root_str();
    let r = s.get(&format!("/v1/rules?projectRoot={}", urlencode(&root)));
    assert_eq!(r.status, 200, "{}", r.text);
    let rules = r.body["rules"].as_array().unwrap();
    assert!(rules.iter().any(|r| r["source"] == "default"));
    let npm = rules.iter().find(|r| r["pattern"] == "npm test").unwrap();
    assert_eq!(npm["source"], "project");
    assert_eq!(npm["origin"]["line"], 4);
    assert_eq!(r.body["errors"], json!([]));

    let tools = json!(["read", "write", "edit", "bash", "webfetch"]);
    let r = s.post(
        "/v1/tools/available",
        &json!({"projectRoot": root, "tools": tools}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["tools"], json!(["read", "bash", "webfetch"]));

    // A broken config is reported with its position.
    d.write_config("{\n  \"permissions\": {\n    \"file.read\": \"maybe\"\n  }\n}\n");
    let r = s.get(&format!("/v1/rules?projectRoot={}", urlencode(&root)));
    let errors = r.body["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{}", r.text);
    assert_eq!(errors[0]["line"], 3);

    let r = s.get("/v1/rules");
    r.assert_error(400, "invalid_query");
    assert!(r.message().contains("projectRoot"), "{}", r.message());
}

#[test]
fn metrics_count_routes_decisions_and_latency() {
    let d = Dirs::new();
    let s = d.start(&[]);
    s.post("/v1/evaluate", &bash(&d, "git status"));
    s.post("/v1/evaluate", &bash(&d, "npm install"));
    s.post(
        "/v1/analyze",
        &json!({"command": "echo $(", "projectRoot": d.root_str()}),
    );
    s.get("/nope");
    let r = s.get("/metrics");
    assert_eq!(r.status, 200);
    assert!(
        r.content_type.starts_with("text/plain"),
        "{}",
        r.content_type
    );
    let text = r.text;
    assert!(
        text.contains(
            "khaelor_http_requests_total{route=\"/v1/evaluate\",method=\"POST\",status=\"200\"} 2"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "khaelor_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1"
        ),
        "{text}"
    );
    assert!(
        text.contains("khaelor_decisions_total{action=\"allow\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("khaelor_decisions_total{action=\"ask\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("khaelor_analysis_fallbacks_total{reason=\"parseError\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("khaelor_analysis_duration_seconds_count 3"),
        "{text}"
    );
}

#[test]
fn openapi_is_served() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.get("/openapi.yaml");
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("application/yaml"));
    assert_eq!(
        r.text,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap()
    );
}

#[test]
fn client_errors_are_json() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let c = s.client();
    let root = d.root_str();

    // 400: malformed JSON, wrong type (field named), unknown field, bad tool input.
    c.post_raw("/v1/evaluate", Some("application/json"), b"{\"tool\": ")
        .assert_error(400, "invalid_body");
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": 7, "input": {}, "projectRoot": root}),
    );
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("`tool`"), "{}", r.message());
    let r = s.post("/v1/evaluate", &json!({"tool": "bash", "input": {"command": "ls"}, "projectRoot": root, "interactve": false}));
    r.assert_error(400, "invalid_body");
    assert!(r.message().contains("interactve"), "{}", r.message());
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": 3}, "projectRoot": root}),
    );
    r.assert_error(400, "invalid_input");
    assert!(r.message().contains("`command`"), "{}", r.message());

    // 404 and 405.
    s.get("/v2/nothing").assert_error(404, "not_found");
    let r = c.put("/v1/evaluate");
    r.assert_error(405, "method_not_allowed");

    // 413: a body over 1 MiB.
    let big = format!(
        "{{\"command\": \"{}\", \"projectRoot\": \"{root}\"}}",
        "a".repeat(1024 * 1024 + 10)
    );
    c.post_raw("/v1/analyze", Some("application/json"), big.as_bytes())
        .assert_error(413, "payload_too_large");

    // 415: not JSON.
    c.post_raw("/v1/analyze", Some("text/plain"), b"{}")
        .assert_error(415, "unsupported_media_type");
    c.post_raw("/v1/analyze", None, b"{}")
        .assert_error(415, "unsupported_media_type");

    // 422: unknown tool, relative root, command over 64 KiB (both routes); 404: a root
    // that names no directory.
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "teleport", "input": {}, "projectRoot": root}),
    );
    r.assert_error(422, "unknown_tool");
    assert!(r.message().contains("`teleport`"));
    s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "ls"}, "projectRoot": "proj"}),
    )
    .assert_error(422, "relative_path");
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": "/definitely/not/here"}),
    )
    .assert_error(404, "missing_project_root");
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": root, "cwd": "sub"}),
    )
    .assert_error(422, "relative_path");
    let long = format!("echo {}", "x".repeat(64 * 1024));
    s.post(
        "/v1/analyze",
        &json!({"command": long, "projectRoot": root}),
    )
    .assert_error(422, "command_too_large");
    s.post("/v1/evaluate", &bash(&d, &long))
        .assert_error(422, "command_too_large");
}

#[test]
fn workspace_roots_confine_projects() {
    let d = Dirs::new();
    let allowed = tempfile::tempdir().unwrap();
    let inside = allowed.path().join("proj");
    std::fs::create_dir_all(&inside).unwrap();
    let s = d.start(&["--workspace-root", allowed.path().to_str().unwrap()]);
    let ok = s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": inside}),
    );
    assert_eq!(ok.status, 200, "{}", ok.text);
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": d.root_str()}),
    )
    .assert_error(403, "outside_workspace");
    // `..` does not climb out, and a missing dir outside answers 403, not 422 (no probing).
    let sneaky = format!("{}/proj/../../", allowed.path().display());
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": sneaky}),
    )
    .assert_error(403, "outside_workspace");
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": "/no/such/dir"}),
    )
    .assert_error(403, "outside_workspace");
    let root = urlencode(&d.root_str());
    s.get(&format!("/v1/rules?projectRoot={root}"))
        .assert_error(403, "outside_workspace");
    // `..` after a symlink climbs from the link's target, as the kernel does: a link
    // inside the workspace to a directory outside it must not open a way out.
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outside.path().join("deep/p")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("deep/p"), allowed.path().join("link")).unwrap();
    std::fs::create_dir_all(allowed.path().join("p")).unwrap();
    let via_link = format!("{}/link/../p", allowed.path().display());
    s.post(
        "/v1/analyze",
        &json!({"command": "ls", "projectRoot": via_link}),
    )
    .assert_error(403, "outside_workspace");
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn managed_config_is_layered_in() {
    let d = Dirs::new();
    let managed = d.home.path().join("managed.json");
    std::fs::write(
        &managed,
        "{ \"permissions\": { \"file.read\": { \"*.key\": \"deny\" } } }\n",
    )
    .unwrap();
    let s = d.start(&["--managed-config", managed.to_str().unwrap()]);
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "read", "input": {"path": "id.key"}, "projectRoot": d.root_str()}),
    );
    assert_eq!(r.body["decision"], "deny", "{}", r.text);
    assert_eq!(r.body["requests"][0]["rule"]["source"], "managed");
}
