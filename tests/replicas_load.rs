//! The team hub under load, against real servers and a PostgreSQL cluster the test
//! starts: three replicas on one database, 20 hooks from 5 machines (each its own
//! project and home), every ask answered by a person on a different replica than the
//! one its hook waits on. Every hook gets exactly the person's answer, every answer is
//! recorded once, every event is in the database once and every session is numbered
//! 1..n without a gap. `KHAELOR_HUB_CALLS` sets the calls per hook (default 25: 500
//! calls, a few seconds in a debug build); the benchmark (benches/hub.rs) runs more.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod http_support;
mod hub_support;
mod pg_support;

use hub_support::{Load, replicas, run};
use pg_support::Postgres;

#[test]
fn three_replicas_twenty_hooks_five_machines() {
    let pg = Postgres::start();
    let home = tempfile::tempdir().unwrap();
    let (_states, servers) = replicas(&pg, 3, home.path());
    let calls_per_hook = std::env::var("KHAELOR_HUB_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let load = Load {
        hooks: 20,
        machines: 5,
        calls_per_hook,
        ask_every: 5,
    };
    let r = run(&pg, &servers, load, "load");
    eprintln!("{r:?}");
    assert_eq!(r.calls, 20 * calls_per_hook);
    assert!(r.asks > 0);
}
