//! Reliability, "every session stays in memory forever": 10,000 sessions, each with one
//! call of a 256-byte command, recorded against the real server; its resident memory must
//! stay under `RSS_BOUND` because sessions are a bounded cache over their logs (the
//! logs stay complete on disk). And 600 sessions each holding one pending 30 KiB
//! command must grow it by less than `BIG_GROWTH_BOUND`: a session keeps its call's
//! input once, its decision stays in the log, and the cache is bounded in bytes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;

use http_support::{Dirs, Server, bash_call};

const SESSIONS: usize = 10_000;
const THREADS: usize = 4;
/// Stated bound: before the cache, 10,000 such sessions took 1.27 GB; with
/// at most `--max-sessions 1024` in memory a debug build stays far below this.
const RSS_BOUND: i64 = 150 * 1024 * 1024;

fn metric(text: &str, name: &str) -> i64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn ten_thousand_sessions_stay_under_the_rss_bound() {
    let d = Dirs::new();
    // The logs go to a tmpfs when there is one: this test measures memory, and 10,000
    // fsyncs on a shared CI disk would only measure the disk.
    let shm = tempfile::tempdir_in("/dev/shm").ok();
    let state = shm
        .as_ref()
        .map_or(d.state.path(), |t| t.path())
        .to_path_buf();
    let s = Server::start(&state, d.home.path(), &[]);
    let before = metric(
        &s.get("/metrics").text,
        "khaelor_process_resident_memory_bytes",
    );
    // 256 bytes: long enough that a session's events weigh something, short enough
    // that 10,000 analyses fit the CI budget (BENCHMARKS.md has the 1 KiB run).
    let filler = "a".repeat(251);
    let start = std::time::Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let c = s.client();
            let body = bash_call(&d, "c1", None, &format!("echo {filler}"));
            std::thread::spawn(move || {
                for i in (t..SESSIONS).step_by(THREADS) {
                    let r = c.post(&format!("/v1/sessions/m{i}/calls"), &body);
                    assert_eq!(r.status, 200, "{}", r.text);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let took = start.elapsed();
    let text = s.get("/metrics").text;
    let rss = metric(&text, "khaelor_process_resident_memory_bytes");
    let in_memory = metric(&text, "khaelor_sessions_in_memory");
    eprintln!(
        "memory: {SESSIONS} sessions in {took:?}; RSS {} MiB before, {} MiB after; {in_memory} sessions in memory",
        before / (1024 * 1024),
        rss / (1024 * 1024)
    );
    assert!(in_memory <= 1024, "{in_memory}");
    assert!(
        rss < RSS_BOUND,
        "RSS {rss} bytes over the bound {RSS_BOUND}"
    );
    // Evicted sessions are intact: read back from their logs.
    let r = s.get("/v1/sessions/m0/events");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["events"].as_array().unwrap().len(), 2);
    let logs = std::fs::read_dir(state.join("sessions")).unwrap().count();
    assert_eq!(logs, SESSIONS);
}

const BIG_SESSIONS: usize = 600;
const BIG_COMMAND: usize = 30 * 1024;
/// Stated bound: 600 sessions each holding one pending 30 KiB command (18 MiB of
/// commands) grow the server by less than this. Before the session cache was bounded in
/// bytes and an event's command stored once, they grew it by about 440 MB.
const BIG_GROWTH_BOUND: i64 = 60 * 1000 * 1000;

/// A 30 KiB command that asks (network access), its data words pseudo-random so that
/// nothing in the server can share or compress them away.
fn big_command(seed: u64) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut data = String::with_capacity(BIG_COMMAND);
    while data.len() < BIG_COMMAND - 64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let c = (b'a' + ((x >> 33) % 26) as u8) as char;
        data.push(c);
        if (x >> 40).is_multiple_of(7) {
            data.push(' ');
        }
    }
    format!("curl -d '{data}' https://example.com/upload")
}

#[test]
fn six_hundred_sessions_with_a_30_kib_command_stay_under_the_growth_bound() {
    let d = Dirs::new();
    let shm = tempfile::tempdir_in("/dev/shm").ok();
    let state = shm
        .as_ref()
        .map_or(d.state.path(), |t| t.path())
        .to_path_buf();
    let s = Server::start(&state, d.home.path(), &[]);
    // One call first, so the analysis, the policy and the allocator's arenas are warm.
    let warm = s.post(
        "/v1/sessions/warm/calls",
        &bash_call(&d, "c1", None, &big_command(u64::MAX)),
    );
    assert_eq!(warm.status, 200, "{}", warm.text);
    let before = metric(
        &s.get("/metrics").text,
        "khaelor_process_resident_memory_bytes",
    );
    let start = std::time::Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let c = s.client();
            let root = d.root_str();
            std::thread::spawn(move || {
                for i in (t..BIG_SESSIONS).step_by(THREADS) {
                    let body = serde_json::json!({
                        "callId": "c1",
                        "tool": "bash",
                        "input": {"command": big_command(i as u64)},
                        "projectRoot": root,
                    });
                    let r = c.post(&format!("/v1/sessions/b{i}/calls"), &body);
                    assert_eq!(r.status, 200, "{}", r.text);
                    assert_eq!(r.body["status"], "pending", "{}", r.text);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let took = start.elapsed();
    let text = s.get("/metrics").text;
    let rss = metric(&text, "khaelor_process_resident_memory_bytes");
    let in_memory = metric(&text, "khaelor_sessions_in_memory");
    let resident = metric(&text, "khaelor_session_resident_bytes");
    let on_disk: u64 = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let growth = rss - before;
    eprintln!(
        "memory: {BIG_SESSIONS} sessions x one {BIG_COMMAND}-byte command in {took:?}; RSS {} MiB before, {} MiB after (growth {} KiB per session, {:.1}x the command); {in_memory} sessions in memory holding {resident} bytes ({} per session); logs {on_disk} bytes ({:.1}x the command per session)",
        before / (1024 * 1024),
        rss / (1024 * 1024),
        growth / BIG_SESSIONS as i64 / 1024,
        growth as f64 / BIG_SESSIONS as f64 / BIG_COMMAND as f64,
        resident / in_memory.max(1),
        on_disk as f64 / (BIG_SESSIONS + 1) as f64 / BIG_COMMAND as f64,
    );
    assert!(
        growth < BIG_GROWTH_BOUND,
        "RSS grew by {growth} bytes, over the bound {BIG_GROWTH_BOUND}"
    );
    // The metric counts what the sessions hold: each its input once, within the
    // default `--max-session-memory` of 64 MiB.
    assert!(
        resident > (BIG_SESSIONS * BIG_COMMAND) as i64 / 2 && resident <= 64 * 1024 * 1024,
        "{resident}"
    );
    // Every pending call is intact, in memory or read back from its log.
    for i in [0, BIG_SESSIONS / 2, BIG_SESSIONS - 1] {
        let r = s.get(&format!("/v1/sessions/b{i}/pending"));
        assert_eq!(r.status, 200, "{}", r.text);
        let p = &r.body["pending"][0];
        assert_eq!(p["input"]["command"], big_command(i as u64), "b{i}");
        assert_eq!(p["decision"]["decision"], "ask", "b{i}");
    }
}
