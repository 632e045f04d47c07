//! The team hub's throughput and ask→answer latency with 1, 2 and 3 `serve` replicas
//! on one PostgreSQL database, side by side in one run (same machine, same minute):
//! 20 hooks from 5 machines, one call in five an ask that a person answers on another
//! replica than the one its hook waits on (tests/hub_support). Every run also checks
//! every answer and the events. `KHAELOR_HUB_CALLS` sets the calls per hook (default
//! 100: 2,000 calls per replica count; 500 gives the 10,000 calls of the proof).
//! Run: `cargo bench --bench hub`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "../tests/http_support/mod.rs"]
mod http_support;
#[path = "../tests/hub_support/mod.rs"]
mod hub_support;
#[path = "../tests/pg_support/mod.rs"]
mod pg_support;

use hub_support::{Load, replicas, run};

fn main() {
    let calls_per_hook = std::env::var("KHAELOR_HUB_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let load = Load {
        hooks: 20,
        machines: 5,
        calls_per_hook,
        ask_every: 5,
    };
    let pg = pg_support::Postgres::start();
    println!(
        "{:>8} {:>7} {:>5} {:>9} {:>12} {:>10} {:>10}",
        "replicas", "calls", "asks", "seconds", "decisions/s", "ask p50", "ask p95"
    );
    for n in [1, 2, 3] {
        let home = tempfile::tempdir().unwrap();
        let (_states, servers) = replicas(&pg, n, home.path());
        let r = run(&pg, &servers, load, &format!("bench{n}"));
        println!(
            "{:>8} {:>7} {:>5} {:>9.1} {:>12.0} {:>8.1}ms {:>8.1}ms",
            r.replicas,
            r.calls,
            r.asks,
            r.elapsed.as_secs_f64(),
            r.decisions_per_sec,
            r.ask_p50.as_secs_f64() * 1000.0,
            r.ask_p95.as_secs_f64() * 1000.0,
        );
    }
}
