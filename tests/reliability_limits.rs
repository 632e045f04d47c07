//! Reliability, "no timeouts, no limits", against the real server over raw TCP: a client
//! trickling its headers is cut, idle connections beyond the cap get a 503 and cannot
//! starve `/healthz`, a stalled client cannot hold SIGTERM up while an in-flight
//! request still finishes, a slow body is a 408, a full concurrency cap a 503 with
//! `Retry-After`, and `/readyz` is apart from `/healthz`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use http_support::{Dirs, Server};

fn addr(s: &Server) -> String {
    s.base.trim_start_matches("http://").to_string()
}

fn connect(s: &Server) -> TcpStream {
    let c = TcpStream::connect(addr(s)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

/// Reads until the server closes (or the read timeout fires); returns what came.
fn read_all(c: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn metric(s: &Server, name: &str) -> i64 {
    let text = s.get("/metrics").text;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn clients_trickling_headers_are_disconnected() {
    let d = Dirs::new();
    let s = d.start(&["--header-timeout-secs", "1"]);
    let start = Instant::now();
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let mut c = connect(&s);
            std::thread::spawn(move || {
                // One byte every 100 ms, forever unless the server hangs up.
                for b in b"GET /healthz HTTP/1.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter().cycle() {
                    if c.write_all(&[*b]).is_err() {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    if start.elapsed() > Duration::from_secs(15) {
                        return false;
                    }
                }
                false
            })
        })
        .collect();
    for c in clients {
        assert!(
            c.join().unwrap(),
            "a trickling client was never disconnected"
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn idle_connections_beyond_the_cap_get_a_503_and_healthz_keeps_answering() {
    let d = Dirs::new();
    let s = d.start(&["--max-connections", "16", "--header-timeout-secs", "2"]);
    let mut idle: Vec<TcpStream> = (0..16).map(|_| connect(&s)).collect();
    // Let the server accept them all before the next one knocks.
    std::thread::sleep(Duration::from_millis(300));
    let mut extra = connect(&s);
    let answer = read_all(&mut extra);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    assert!(answer.contains("\"too_many_connections\""), "{answer}");
    // The idle ones are closed by the header timeout, freeing the slots.
    for c in &mut idle {
        let rest = read_all(c);
        assert!(!rest.contains("200 OK"), "{rest}");
    }
    // A slot is released just after its socket closes: on a loaded machine the first
    // knock may still find the cap full, and is told to retry.
    let mut r = s.get("/healthz");
    for _ in 0..20 {
        if r.status != 503 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        r = s.get("/healthz");
    }
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(metric(&s, "khaelor_http_connections_open") <= 16);
}

#[test]
fn a_stalled_client_cannot_hold_shutdown_but_in_flight_requests_finish() {
    let d = Dirs::new();
    let mut s = d.start(&[
        "--shutdown-timeout-secs",
        "3",
        "--header-timeout-secs",
        "60",
        "--body-timeout-secs",
        "60",
    ]);
    // Stalled mid-headers.
    let mut stalled = connect(&s);
    stalled
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    // In flight: head sent, body half sent.
    let body = format!(r#"{{"command": "ls", "projectRoot": "{}"}}"#, d.root_str());
    let mut busy = connect(&s);
    let head = format!(
        "POST /v1/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    busy.write_all(head.as_bytes()).unwrap();
    busy.write_all(&body.as_bytes()[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let start = Instant::now();
    let stopper = std::thread::spawn(move || {
        let status = s.stop();
        (status, s)
    });
    std::thread::sleep(Duration::from_millis(500));
    busy.write_all(&body.as_bytes()[10..]).unwrap();
    let answer = read_all(&mut busy);
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "in-flight request finished: {answer}"
    );
    let (status, _s) = stopper.join().unwrap();
    assert!(status.success(), "{status:?}");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(8), "shutdown took {took:?}");
    assert!(
        took >= Duration::from_millis(500),
        "the in-flight request was waited for"
    );
    assert_eq!(
        read_all(&mut stalled),
        "",
        "the stalled client got nothing and was cut"
    );
}

#[test]
fn a_slow_body_is_a_408_and_a_full_cap_a_503() {
    let d = Dirs::new();
    let s = d.start(&["--body-timeout-secs", "1", "--max-concurrent-requests", "1"]);
    let body = format!(r#"{{"command": "ls", "projectRoot": "{}"}}"#, d.root_str());
    let mut slow = connect(&s);
    let head = format!(
        "POST /v1/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    slow.write_all(head.as_bytes()).unwrap();
    slow.write_all(&body.as_bytes()[..5]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // The slow request holds the only slot: the next /v1 request is shed at once...
    let r = s.post(
        "/v1/analyze",
        &serde_json::json!({"command": "ls", "projectRoot": d.root_str()}),
    );
    r.assert_error(503, "overloaded");
    // ...while probes stay outside the cap.
    assert_eq!(s.get("/healthz").status, 200);
    assert_eq!(s.get("/readyz").status, 200);
    let answer = read_all(&mut slow);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"body_timeout\""), "{answer}");
    // The slot is free again.
    let r = s.post(
        "/v1/analyze",
        &serde_json::json!({"command": "ls", "projectRoot": d.root_str()}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn a_request_over_the_whole_request_timeout_is_a_503() {
    let d = Dirs::new();
    let s = d.start(&["--body-timeout-secs", "30", "--request-timeout-secs", "1"]);
    let body = format!(r#"{{"command": "ls", "projectRoot": "{}"}}"#, d.root_str());
    let mut slow = connect(&s);
    let head = format!(
        "POST /v1/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    slow.write_all(head.as_bytes()).unwrap();
    let answer = read_all(&mut slow);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after"),
        "{answer}"
    );
    assert!(answer.contains("\"request_timeout\""), "{answer}");
}

#[test]
fn readyz_is_apart_from_healthz() {
    let d = Dirs::new();
    let s = d.start(&[]);
    let r = s.get("/readyz");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["status"], "ready");
    // Without its session directory the server is alive but not ready.
    std::fs::remove_dir_all(d.state.path().join("sessions")).unwrap();
    s.get("/readyz").assert_error(503, "state_dir_unusable");
    assert_eq!(s.get("/healthz").status, 200);
    for name in [
        "khaelor_http_requests_in_flight",
        "khaelor_http_connections_open",
        "khaelor_sessions_in_memory",
        "khaelor_process_resident_memory_bytes",
    ] {
        assert!(metric(&s, name) >= 0, "{name}");
    }
    assert!(metric(&s, "khaelor_process_resident_memory_bytes") > 1_000_000);
}

/// Sends `request` on a fresh connection and returns the answer's status line, its
/// head and its body parsed as JSON (panics when the body is not JSON).
fn raw_json_answer(s: &Server, request: &[u8]) -> (String, String, serde_json::Value) {
    let mut c = connect(s);
    // The server may answer and close before it read everything: a failed write of
    // the tail is expected, the answer is what counts.
    let _ = c.write_all(request);
    let answer = read_all(&mut c);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {answer:?}"));
    let status = head.lines().next().unwrap_or("").to_string();
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("content-type: application/json"), "{head}");
    assert!(
        lower.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {answer:?}"));
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{v}"
    );
    (status, head.to_string(), v)
}

#[test]
fn head_limit_answers_carry_the_json_error_body() {
    let d = Dirs::new();
    let s = d.start(&[]);
    // One header too large for the 64 KiB head limit (hyper's own 431).
    let mut big = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nx-big: ".to_vec();
    big.extend(std::iter::repeat_n(b'a', 70_000));
    big.extend_from_slice(b"\r\n\r\n");
    let (status, _, v) = raw_json_answer(&s, &big);
    assert_eq!(status, "HTTP/1.1 431 Request Header Fields Too Large");
    assert_eq!(v["error"]["code"], "headers_too_large", "{v}");
    // More headers than hyper parses (also hyper's own 431).
    let mut many = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec();
    for i in 0..150 {
        many.extend_from_slice(format!("x-h{i}: a\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let (status, _, v) = raw_json_answer(&s, &many);
    assert!(status.starts_with("HTTP/1.1 431 "), "{status}");
    assert_eq!(v["error"]["code"], "headers_too_large", "{v}");
    // A head that never ends: hyper's buffer limit, still a JSON 431.
    let mut endless = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec();
    for i in 0..8_000 {
        endless.extend_from_slice(format!("x-e{i}: aaaaaaaa\r\n").as_bytes());
    }
    let (status, _, v) = raw_json_answer(&s, &endless);
    assert!(status.starts_with("HTTP/1.1 431 "), "{status}");
    assert_eq!(v["error"]["code"], "headers_too_large", "{v}");
    // A URI over the service's limit: 414 through the middleware stack.
    let mut long = b"GET /healthz?q=".to_vec();
    long.extend(std::iter::repeat_n(b'a', 20_000));
    long.extend_from_slice(b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let (status, head, v) = raw_json_answer(&s, &long);
    assert_eq!(status, "HTTP/1.1 414 URI Too Long");
    assert!(head.to_ascii_lowercase().contains("x-request-id"), "{head}");
    assert_eq!(v["error"]["code"], "uri_too_long", "{v}");
    // A URI too long even for hyper is refused by the head limit first, as JSON.
    let mut longer = b"GET /healthz?q=".to_vec();
    longer.extend(std::iter::repeat_n(b'a', 70_000));
    longer.extend_from_slice(b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let (status, _, v) = raw_json_answer(&s, &longer);
    assert!(status.starts_with("HTTP/1.1 431 "), "{status}");
    assert_eq!(v["error"]["code"], "headers_too_large", "{v}");
    // A malformed request line: hyper's own 400, JSON too.
    let (status, _, v) = raw_json_answer(&s, b"GE\x01T / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(v["error"]["code"], "malformed_request", "{v}");
    // After an earlier answer on the same connection, the 431 is still JSON and the
    // earlier answer is intact.
    let mut pipelined = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec();
    pipelined.extend_from_slice(&big);
    let mut c = connect(&s);
    let _ = c.write_all(&pipelined);
    let answer = read_all(&mut c);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains(r#"{"status":"ok""#), "{answer}");
    assert!(
        answer.contains(
            "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json"
        ),
        "{answer}"
    );
    assert!(answer.ends_with("}}"), "{answer}");
    // Nothing of the refused requests reached the service; it still answers.
    assert_eq!(s.get("/healthz").status, 200);
}
