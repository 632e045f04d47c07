//! The friction targets on the friction set (fixtures/friction.jsonl, also run by
//! `cargo bench --bench friction`): under `recommended` at least 92% of the benign
//! read-only commands run without asking, `autonomous` also runs the project-local
//! builds and edits, and no preset allows a single risky command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "../benches/friction_set.rs"]
mod friction_set;

#[test]
fn recommended_allows_most_reads_and_no_preset_allows_a_risky_command() {
    let (rows, tallies) = friction_set::run_all();
    assert!(rows.len() >= 500, "only {} commands", rows.len());
    let get = |name: &str| tallies.iter().find(|t| t.name == name).unwrap();
    let kind = |t: &friction_set::Tally, k: &str| {
        let (_, allowed, total) = t.by_kind.iter().find(|(x, _, _)| x == k).unwrap().clone();
        (allowed, total)
    };
    for name in ["strict", "recommended", "autonomous"] {
        assert!(
            get(name).risky_allowed.is_empty(),
            "{name} allows risky commands: {:?}",
            get(name).risky_allowed
        );
    }
    let (allowed, total) = kind(get("recommended"), "read");
    assert!(
        allowed * 100 >= total * 92,
        "recommended allows {allowed} of {total} benign reads (at least 92%)"
    );
    // strict is today's behaviour: the presets only add.
    assert!(kind(get("strict"), "read").0 <= allowed);
    let (b, bt) = kind(get("autonomous"), "build");
    assert!(b * 10 >= bt * 9, "autonomous allows {b} of {bt} builds");
    assert_eq!(kind(get("recommended"), "build").0, 0);
}
