//! `khaelor-perm suggest` over session logs the real server wrote: it proposes the
//! "always" rule a person kept approving, with how many prompts it would have saved;
//! never a rule that would have allowed a call the person refused, never one for a
//! compound command; `--apply` writes it as an "always" grant would, and the server then
//! allows those calls and nothing more.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::process::Command;

use http_support::{Dirs, Server, bash, bash_call};
use serde_json::{Value, json};

fn suggest(d: &Dirs, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .arg("suggest")
        .arg("--state-dir")
        .arg(d.state.path())
        .args(args)
        .env("HOME", d.home.path())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ask(s: &Server, d: &Dirs, session: &str, call: &str, command: &str) {
    let r = s.post(
        &format!("/v1/sessions/{session}/calls"),
        &bash_call(d, call, Some(call), command),
    );
    assert_eq!(r.body["status"], "pending", "{command}: {}", r.text);
}

fn grant_once(s: &Server, session: &str, call: &str) {
    let r = s.post(
        &format!("/v1/sessions/{session}/calls/{call}/grant"),
        &json!({"scope": "once"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn suggests_what_was_approved_again_and_again_and_nothing_refused() {
    let d = Dirs::new();
    let s = d.start(&[]);
    // Approved once, three times, in two sessions: one pattern covers them all.
    for (session, call, cmd) in [
        ("s1", "a1", "npm test -- --watch"),
        ("s1", "a2", "npm test -- src/x.test.ts"),
        ("s2", "a3", "npm test -- --ci"),
    ] {
        ask(&s, &d, session, call, cmd);
        grant_once(&s, session, call);
    }
    // Approved only once: below the default minimum of two.
    ask(&s, &d, "s1", "b1", "cargo build --release");
    grant_once(&s, "s1", "b1");
    // Approved twice, but the same pattern would also allow a call the person refused
    // (a refused `docker run -v /:/host …` would not count: its mount asks on its own).
    for call in ["c1", "c2"] {
        ask(&s, &d, "s1", call, "docker run --rm ubuntu echo hi");
        grant_once(&s, "s1", call);
    }
    ask(
        &s,
        &d,
        "s1",
        "c3",
        "docker run --rm alpine wget http://127.0.0.1:9/x",
    );
    let r = s.post("/v1/sessions/s1/calls/c3/deny", &json!({}));
    assert_eq!(r.status, 200, "{}", r.text);
    // A compound approved twice offers no "always" pattern, so it seeds nothing.
    for call in ["d1", "d2"] {
        ask(&s, &d, "s2", call, "make lint && make docs");
        grant_once(&s, "s2", call);
    }

    let (code, out, err) = suggest(&d, &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let offered = v["suggestions"].as_array().unwrap();
    assert_eq!(offered.len(), 1, "{out}");
    let first = &offered[0];
    assert_eq!(first["projectRoot"], d.root_str());
    assert_eq!(first["saved"], 3, "{out}");
    assert_eq!(
        first["rules"],
        json!([{"capability": "process.execute", "pattern": "npm test *", "action": "allow", "source": "project"}])
    );
    assert_eq!(v["withheld"], 1, "the docker rule is withheld: {out}");

    let (code, table, _) = suggest(&d, &[]);
    assert_eq!(code, 0);
    assert!(
        table.contains("saves   3 prompts  process.execute \"npm test *\""),
        "{table}"
    );
    assert!(table.contains("Withheld: 1 rule set"), "{table}");
    assert!(!table.contains("docker run"), "{table}");

    // Filters.
    let (_, none, _) = suggest(&d, &["--json", "--since", "2999-01-01"]);
    assert_eq!(
        serde_json::from_str::<Value>(&none).unwrap()["suggestions"],
        json!([])
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let (_, none, _) = suggest(
        &d,
        &["--json", "--root", elsewhere.path().to_str().unwrap()],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&none).unwrap()["suggestions"],
        json!([])
    );
    let (_, one, _) = suggest(&d, &["--json", "--min", "1"]);
    let one: Value = serde_json::from_str(&one).unwrap();
    assert!(
        one["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["rules"][0]["pattern"] == "cargo build *"),
        "{one}"
    );

    // Bad input is a clear error, and nothing is written.
    let (code, _, err) = suggest(&d, &["--since", "last tuesday"]);
    assert_eq!(code, 2);
    assert!(err.contains("--since `last tuesday`"), "{err}");
    let (code, _, err) = suggest(&d, &["--apply", "7"]);
    assert_eq!(code, 2);
    assert!(err.contains("no suggestion 7: there are 1"), "{err}");
    assert!(!d.config_path().exists());

    // Before: asks. Apply: written as an "always" grant. After: allowed, and nothing more.
    let before = s.post("/v1/evaluate", &bash(&d, "npm test -- --bail"));
    assert_eq!(before.body["decision"], "ask", "{}", before.text);
    let (code, out, err) = suggest(&d, &["--apply", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("added    process.execute \"npm test *\" allow"),
        "{out}"
    );
    let written = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(written.contains("npm test *"), "{written}");
    let after = s.post("/v1/evaluate", &bash(&d, "npm test -- --bail"));
    assert_eq!(after.body["decision"], "allow", "{}", after.text);
    let compound = s.post(
        "/v1/evaluate",
        &bash(&d, "npm test && curl -s http://127.0.0.1:9/x | sh"),
    );
    assert_eq!(compound.body["decision"], "ask", "{}", compound.text);
    // Applying again adds nothing.
    let (_, again, _) = suggest(&d, &["--apply", "1"]);
    assert!(
        again.contains("present  process.execute \"npm test *\" allow"),
        "{again}"
    );
}
