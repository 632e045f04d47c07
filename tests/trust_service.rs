//! Process aliases, working directories and the service's notion of home, through the CLI and the real server:
//! paths that alias another process's view ask; control characters in path fields are
//! refused naming the field; a host-sent `cwd`/`workdir`/`dir_path` decides where a call
//! runs and is confined like the root; the server's own home is the user layer; `Host`
//! and `Origin` are checked against DNS rebinding. Each attack next to its legitimate use.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output};

use http_support::{Dirs, Server};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_khaelor-perm");
const ALLOW_ALL: &str = r#"{"permissions": {"*": "allow"}}"#;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

/// A project and a home whose user config allows everything: only a boundary can ask.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (base.join("proj"), base.join("home"));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::create_dir_all(home.join(".khaelor")).unwrap();
    std::fs::write(home.join(".khaelor/config.json"), ALLOW_ALL).unwrap();
    World {
        _tmp: tmp,
        root,
        home,
    }
}

impl World {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env("KHAELOR_PERM_STATE_DIR", self.root.with_file_name("state"))
            .output()
            .unwrap()
    }

    fn check(&self, tool: &str, input: &Value) -> (i32, Value, String) {
        let root = self.root.display().to_string();
        let home = self.home.display().to_string();
        let input = input.to_string();
        let o = self.run(&[
            "check", "--root", &root, "--home", &home, "--json", "--tool", tool, "--input", &input,
        ]);
        let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (
            o.status.code().unwrap(),
            v,
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    }
}

/// (tool, input, expected decision): aliases ask, their neighbours stay allowed.
fn alias_cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("read", json!({"path": "/proc/self/root/etc/passwd"}), "ask"),
        ("read", json!({"path": "/proc/1/root/etc/shadow"}), "ask"),
        ("read", json!({"path": "/dev/fd/0"}), "ask"),
        (
            "write",
            json!({"path": "/proc/self/cwd/x", "content": "x"}),
            "ask",
        ),
        (
            "write",
            json!({"path": "/dev/stdin", "content": "x"}),
            "ask",
        ),
        (
            "bash",
            json!({"command": "cat /proc/self/root/etc/passwd"}),
            "ask",
        ),
        (
            "bash",
            json!({"command": "echo x > /proc/self/cwd/notes"}),
            "ask",
        ),
        // Neighbours: a plain system file, /proc itself, and the harmless devices.
        ("read", json!({"path": "/etc/hostname"}), "allow"),
        ("read", json!({"path": "/proc/cpuinfo"}), "allow"),
        ("bash", json!({"command": "echo x > /dev/null"}), "allow"),
        ("bash", json!({"command": "echo x > /dev/stderr"}), "allow"),
    ]
}

#[test]
fn cli_aliasing_paths_ask() {
    let w = world();
    for (tool, input, want) in alias_cases() {
        let (_, v, raw) = w.check(tool, &input);
        assert_eq!(v["decision"], want, "{tool} {input}: {raw}");
    }
}

#[test]
fn http_aliasing_paths_ask() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.home.path().join(".khaelor")).unwrap();
    std::fs::write(d.home.path().join(".khaelor/config.json"), ALLOW_ALL).unwrap();
    let s = d.start(&[]);
    for (tool, input, want) in alias_cases() {
        let r = s.post(
            "/v1/evaluate",
            &json!({"tool": tool, "input": input, "projectRoot": d.root_str()}),
        );
        assert_eq!(r.body["decision"], want, "{tool} {input}: {}", r.text);
    }
    // As the request's own cwd, an alias is refused outright.
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "ls"}, "projectRoot": d.root_str(), "cwd": "/proc/self/cwd"}),
    );
    r.assert_error(422, "aliasing_path");
}

#[test]
fn cli_control_characters_are_refused_naming_the_field() {
    let w = world();
    for (tool, input, field) in [
        ("read", json!({"path": "a\u{0}b"}), "path"),
        ("write", json!({"path": "a\nb", "content": "x"}), "path"),
        ("list", json!({"path": "x\u{1b}[2J"}), "path"),
        (
            "bash",
            json!({"command": "ls", "workdir": "sub\u{7f}"}),
            "workdir",
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: a\u{7}b\n+x\n*** End Patch\n"}),
            "patch",
        ),
    ] {
        let (code, v, raw) = w.check(tool, &input);
        assert_eq!(code, 2, "{tool}: {raw}");
        assert_eq!(v["error"]["code"], "controlCharacter", "{raw}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("`{field}`")),
            "{raw}"
        );
    }
    // Flags too.
    let home = w.home.display().to_string();
    let o = w.run(&[
        "check",
        "--root",
        &format!("{}\nx", w.root.display()),
        "--home",
        &home,
        "--",
        "ls",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`--root`"));
    // The neighbour: non-ASCII names are ordinary paths.
    let (code, v, raw) = w.check("read", &json!({"path": "docs/ünïcödé näme.md"}));
    assert_eq!(code, 0, "{raw}");
    assert_eq!(v["decision"], "allow");
}

#[test]
fn http_control_characters_are_400_naming_the_field() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let root = d.root_str();
    for (body, field) in [
        (
            json!({"tool": "read", "input": {"path": "a\u{0}b"}, "projectRoot": root}),
            "path",
        ),
        (
            json!({"tool": "read", "input": {"path": "a"}, "projectRoot": format!("{root}\n")}),
            "projectRoot",
        ),
        (
            json!({"tool": "read", "input": {"path": "a"}, "projectRoot": root, "home": "/h\u{1b}"}),
            "home",
        ),
        (
            json!({"tool": "bash", "input": {"command": "ls", "cwd": "a\u{0}"}, "projectRoot": root}),
            "cwd",
        ),
    ] {
        let r = s.post("/v1/evaluate", &body);
        r.assert_error(400, "control_character");
        assert!(r.message().contains(&format!("`{field}`")), "{}", r.text);
    }
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "read", "input": {"path": "ünïcödé"}, "projectRoot": root}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

fn writes(v: &Value) -> Vec<(String, String)> {
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["capability"].as_str().unwrap().starts_with("file.write"))
        .map(|r| {
            (
                r["capability"].as_str().unwrap().to_string(),
                r["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn cli_host_workdir_decides_where_the_command_runs() {
    let w = world();
    let outside = w.root.with_file_name("outside");
    // Attack: the host says the command runs outside the project.
    let (_, v, raw) = w.check(
        "bash",
        &json!({"command": "touch x", "workdir": outside.display().to_string()}),
    );
    assert_eq!(
        writes(&v),
        [(
            "file.write.outsideProject".to_string(),
            outside.join("x").display().to_string()
        )],
        "{raw}"
    );
    // Legitimate: Gemini's dir_path naming a subdirectory.
    let (_, v, raw) = w.check("bash", &json!({"command": "touch x", "dir_path": "sub"}));
    assert_eq!(
        writes(&v),
        [(
            "file.write.project".to_string(),
            w.root.join("sub/x").display().to_string()
        )],
        "{raw}"
    );
    // File tools' relative paths follow it too.
    let (_, v, raw) = w.check(
        "write",
        &json!({"path": "x", "content": "x", "workdir": outside.display().to_string()}),
    );
    assert_eq!(
        v["requests"][0]["capability"], "file.write.outsideProject",
        "{raw}"
    );
    // Two fields that disagree, or a directory that does not exist: refused.
    let (code, v, raw) = w.check(
        "bash",
        &json!({"command": "ls", "cwd": "sub", "workdir": "/"}),
    );
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (2, Some("conflictingCwd")),
        "{raw}"
    );
    let (code, v, raw) = w.check("bash", &json!({"command": "ls", "workdir": "nope"}));
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (2, Some("badCwd")),
        "{raw}"
    );
}

#[test]
fn http_host_workdir_is_confined_to_the_workspace() {
    let d = Dirs::new();
    let ws = d.root().parent().unwrap().to_path_buf();
    let s = d.start(&["--workspace-root", ws.to_str().unwrap()]);
    let other = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "ls", "workdir": other.path().display().to_string()}, "projectRoot": d.root_str()}),
    );
    r.assert_error(403, "outside_workspace");
    assert!(r.message().contains("`workdir`"), "{}", r.text);
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "ls"}, "projectRoot": d.root_str(), "cwd": other.path().display().to_string()}),
    );
    r.assert_error(403, "outside_workspace");
    // Inside the workspace: fine.
    std::fs::create_dir_all(d.root().join("sub")).unwrap();
    let r = s.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "ls", "workdir": "sub"}, "projectRoot": d.root_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn http_home_is_the_servers_own() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(elsewhere.path().join(".khaelor")).unwrap();
    std::fs::write(elsewhere.path().join(".khaelor/config.json"), ALLOW_ALL).unwrap();
    let body = |home: &str| json!({"tool": "bash", "input": {"command": "npm test"}, "projectRoot": d.root_str(), "home": home});
    // Attack: a request names a home whose config allows everything.
    s.post("/v1/evaluate", &body(elsewhere.path().to_str().unwrap()))
        .assert_error(403, "home_not_allowed");
    // The server's own home is always fine.
    let r = s.post("/v1/evaluate", &body(&d.home_str()));
    assert_eq!(r.body["decision"], "ask", "{}", r.text);

    // --home sets the user layer; --allow-request-home lets requests choose, but never
    // a home inside a workspace root (a project file acting as the user's config).
    let d2 = Dirs::new();
    let ws = d2.root();
    let s2 = d2.start(&[
        "--home",
        elsewhere.path().to_str().unwrap(),
        "--allow-request-home",
        "--workspace-root",
        ws.to_str().unwrap(),
    ]);
    let r = s2.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "npm test"}, "projectRoot": d2.root_str()}),
    );
    assert_eq!(r.body["decision"], "allow", "--home's config: {}", r.text);
    let r = s2.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "npm test"}, "projectRoot": d2.root_str(), "home": d2.home_str()}),
    );
    assert_eq!(r.body["decision"], "ask", "{}", r.text);
    s2.post(
        "/v1/evaluate",
        &json!({"tool": "bash", "input": {"command": "npm test"}, "projectRoot": d2.root_str(), "home": d2.root_str()}),
    )
    .assert_error(403, "home_in_workspace");
}

/// One raw HTTP/1.1 GET with exactly these headers; returns the status code.
fn raw_get(s: &Server, path: &str, headers: &[(&str, &str)]) -> u16 {
    let addr = s.base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    stream.read_to_string(&mut resp).unwrap();
    resp.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn dns_rebinding_host_and_origin() {
    let d = Dirs::new();
    let s = d.start(&[
        "--allowed-host",
        "perm.internal",
        "--allowed-origin",
        "http://localhost:3000",
    ]);
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let path = format!("/v1/rules?projectRoot={}", d.root_str().replace('/', "%2F"));
    let host = |h: &str| format!("{h}:{port}");
    // Attack: a page whose name was rebound to 127.0.0.1.
    assert_eq!(raw_get(&s, &path, &[("Host", &host("evil.example"))]), 403);
    assert_eq!(
        raw_get(
            &s,
            &path,
            &[
                ("Host", &host("127.0.0.1")),
                ("Origin", "http://evil.example")
            ]
        ),
        403
    );
    assert_eq!(
        raw_get(
            &s,
            &path,
            &[("Host", &host("localhost")), ("Origin", "null")]
        ),
        403
    );
    // Legitimate: loopback names, the operator's name, the allowed origin, no Origin.
    for h in ["127.0.0.1", "localhost", "[::1]", "perm.internal"] {
        assert_eq!(raw_get(&s, &path, &[("Host", &host(h))]), 200, "{h}");
    }
    assert_eq!(
        raw_get(
            &s,
            &path,
            &[
                ("Host", &host("localhost")),
                ("Origin", "http://localhost:3000")
            ]
        ),
        200
    );
    // The refusal is the API's JSON error.
    let r = s
        .client()
        .get_with(&path, &[("Origin", "http://evil.example")]);
    r.assert_error(403, "origin_not_allowed");
}
