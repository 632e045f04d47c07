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

/// The commands agents really ran (fixtures/agent_commands.jsonl), decided in one git
/// project under each preset. No preset lets a risky command run, neither allowed nor
/// contained (no sandbox claim is made for any of them), and what runs without a prompt
/// today is held as a floor: the exact counts measured when the set was made, to be
/// raised as the analysis learns more and never lowered.
#[test]
fn agent_commands_hold_their_floors_and_no_preset_runs_a_risky_one() {
    let (rows, tallies) = friction_set::run_agent_set();
    let count = |k: &str| rows.iter().filter(|r| r.kind == k).count();
    // The floors are counts of this set: a changed set is measured again.
    assert_eq!(
        [
            count("read"),
            count("edit"),
            count("build"),
            count("other"),
            count("risky")
        ],
        [349, 166, 325, 310, 22],
        "the agent set changed: measure it again (cargo bench --bench friction) and move the floors"
    );
    for t in &tallies {
        assert!(
            t.risky_allowed.is_empty(),
            "{} allows risky commands: {:?}",
            t.name,
            t.risky_allowed
        );
        assert!(
            t.risky_contained.is_empty(),
            "{} contains risky commands, which no sandbox test covers: {:?}",
            t.name,
            t.risky_contained
        );
    }
    // (preset, kind, allowed at least, allowed or contained at least)
    let floors: &[(&str, &str, usize, usize)] = &[
        ("strict", "read", 108, 108),
        ("strict", "edit", 2, 2),
        ("strict", "build", 0, 0),
        ("recommended", "read", 269, 269),
        ("recommended", "edit", 8, 8),
        ("recommended", "build", 0, 22),
        // 320, not 322: two `find . -name '*.py' -exec grep -l X {} \;` rows are now read
        // as the walk of `.` they are (it holds `.env`; find's `-name` filter is not
        // modelled yet), which asks, where before `autonomous` contained them unread.
        ("autonomous", "read", 269, 320),
        ("autonomous", "edit", 62, 63),
        ("autonomous", "build", 17, 103),
    ];
    for (preset, kind, allowed, unprompted) in floors {
        let t = tallies.iter().find(|t| t.name == *preset).unwrap();
        let (c, total) = t.kind(kind);
        assert!(
            c[0] >= *allowed,
            "{preset} allows {} of {total} {kind} commands (floor {allowed})",
            c[0]
        );
        assert!(
            c[0] + c[1] >= *unprompted,
            "{preset} runs {} of {total} {kind} commands without a prompt (floor {unprompted})",
            c[0] + c[1]
        );
    }
}
