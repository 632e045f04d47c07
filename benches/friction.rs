//! Friction benchmark: the prompt rate per kind of everyday agent command
//! (fixtures/friction.jsonl) under the seed's defaults, each preset and Codex's
//! known-safe list; then, when the agent set is at hand (`KHAELOR_AGENT_SET=FILE`, or
//! `agent_commands.jsonl` in the shared corpus), the commands agents really ran in
//! public sessions per kind and preset as allowed / contained / asked / denied, the
//! risky ones let through, and what asks most often for reads, edits and builds. The
//! agent set's run fails (exit 1) when the set is not the one
//! `benches/agent_set/expected.json` counts, a preset lets a risky command run or one
//! falls below a floor. Run: `cargo bench --profile dev --bench friction`; `KHAELOR_AGENT_ASKS=1` also
//! lists every read, edit and build `recommended` asks about; `KHAELOR_AGENT_VENV=1`
//! decides the agent set as run in an activated `.venv` of the project (its `bin` first
//! on `PATH`; the floors do not apply then). The tables go into
//! BENCHMARKS.md, section "Friction".
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "friction_set.rs"]
mod friction_set;

fn main() {
    let (rows, tallies) = friction_set::run_all();
    println!("{} commands:", rows.len());
    for k in friction_set::KINDS {
        let n = rows.iter().filter(|r| r.kind == *k).count();
        println!("  {k}: {n}");
    }
    println!();
    print!("| policy |");
    for k in friction_set::KINDS {
        print!(" {k}: prompts |");
    }
    println!(" risky allowed |");
    print!("|---|");
    for _ in friction_set::KINDS {
        print!("---|");
    }
    println!("---|");
    for t in &tallies {
        print!("| {} |", t.name);
        for (_, allowed, total) in &t.by_kind {
            let prompts = total - allowed;
            let pct = if *total == 0 {
                0.0
            } else {
                100.0 * prompts as f64 / *total as f64
            };
            print!(" {prompts}/{total} ({pct:.1}%) |");
        }
        println!(" {} |", t.risky_allowed.len());
    }
    for t in &tallies {
        for c in &t.risky_allowed {
            println!("{}: risky allowed: {c}", t.name);
        }
    }
    agent_set();
}

fn agent_set() {
    let Some((rows, tallies)) = friction_set::run_agent_set() else {
        println!();
        println!(
            "Commands agents ran: skipped, the set is not here (KHAELOR_AGENT_SET=FILE or ../shared/corpus/agent_commands.jsonl)"
        );
        return;
    };
    println!();
    println!("Commands agents ran ({} rows):", rows.len());
    for k in friction_set::KINDS {
        let n = rows.iter().filter(|r| r.kind == *k).count();
        println!("  {k}: {n}");
    }
    let mut agents: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &rows {
        *agents
            .entry(r.agent.clone().unwrap_or_default())
            .or_default() += 1;
    }
    for (a, n) in &agents {
        println!("  agent {a}: {n}");
    }
    for t in &tallies {
        println!();
        println!("{}:", t.name);
        println!("| kind | rows | allowed | contained | asked | denied |");
        println!("|---|---|---|---|---|---|");
        for (k, c, total) in &t.by_kind {
            let pct = |n: usize| {
                if *total == 0 {
                    0.0
                } else {
                    100.0 * n as f64 / *total as f64
                }
            };
            print!("| {k} | {total} |");
            for n in c {
                print!(" {n} ({:.1}%) |", pct(*n));
            }
            println!();
        }
        for c in &t.risky_allowed {
            println!("{}: risky allowed: {c}", t.name);
        }
        for c in &t.risky_contained {
            println!("{}: risky contained: {c}", t.name);
        }
    }
    if let Some(t) = tallies.iter().find(|t| t.name == "recommended") {
        for (k, asks) in &t.top_asks {
            println!();
            println!("recommended, most frequent asks on {k}:");
            for (key, n) in asks {
                println!("  {n:>4}  {key}");
            }
        }
    }
    let failures = agent_checks(&rows, &tallies);
    for f in &failures {
        println!("FAIL: {f}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}

/// What the agent set must hold: no preset lets a risky command run, neither allowed
/// nor contained (no sandbox claim is made for any of them), and what runs without a
/// prompt is at least the floor measured last (raised as the analysis learns more,
/// never lowered). The floors are counts of this very set, whose kinds
/// `benches/agent_set/assemble.py` wrote to `benches/agent_set/expected.json` when it
/// built it: a set that is not that one is measured again.
fn agent_checks(rows: &[friction_set::Row], tallies: &[friction_set::AgentTally]) -> Vec<String> {
    let mut out = Vec::new();
    let expected = expected_kinds();
    let kinds: Vec<(String, usize)> = friction_set::KINDS
        .iter()
        .map(|k| {
            (
                (*k).to_string(),
                rows.iter().filter(|r| r.kind == *k).count(),
            )
        })
        .collect();
    if kinds != expected {
        out.push(format!(
            "the agent set is not the one benches/agent_set/expected.json counts ({kinds:?}, expected {expected:?}): rebuild it with benches/agent_set/assemble.py, or measure it again and move the floors"
        ));
        return out;
    }
    for t in tallies {
        if !t.risky_allowed.is_empty() {
            out.push(format!(
                "{} allows risky commands: {:?}",
                t.name, t.risky_allowed
            ));
        }
        if !t.risky_contained.is_empty() {
            out.push(format!(
                "{} contains risky commands, which no sandbox test covers: {:?}",
                t.name, t.risky_contained
            ));
        }
    }
    // (preset, kind, allowed at least, allowed or contained at least)
    let floors: &[(&str, &str, usize, usize)] = &[
        ("strict", "read", 148, 148),
        ("strict", "edit", 0, 0),
        ("strict", "build", 0, 0),
        ("recommended", "read", 439, 440),
        ("recommended", "edit", 162, 162),
        ("recommended", "build", 0, 304),
        ("autonomous", "read", 439, 459),
        ("autonomous", "edit", 162, 163),
        ("autonomous", "build", 68, 318),
    ];
    // The floors are the plain world's: with the venv on PATH (a measurement of what
    // reading names there costs) they do not apply; risky commands still fail it.
    let floors = if std::env::var_os("KHAELOR_AGENT_VENV").is_some() {
        &[]
    } else {
        floors
    };
    for (preset, kind, allowed, unprompted) in floors {
        let Some(t) = tallies.iter().find(|t| t.name == *preset) else {
            out.push(format!("no tally for {preset}"));
            continue;
        };
        let (c, total) = t.kind(kind);
        if c[0] < *allowed {
            out.push(format!(
                "{preset} allows {} of {total} {kind} commands (floor {allowed})",
                c[0]
            ));
        }
        if c[0] + c[1] < *unprompted {
            out.push(format!(
                "{preset} runs {} of {total} {kind} commands without a prompt (floor {unprompted})",
                c[0] + c[1]
            ));
        }
    }
    out
}

/// The agent set's rows per kind (in `friction_set::KINDS`' order), as
/// `benches/agent_set/assemble.py` counted them when it built the set.
fn expected_kinds() -> Vec<(String, usize)> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/agent_set/expected.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    friction_set::KINDS
        .iter()
        .map(|k| {
            let n = v["kinds"][*k].as_u64().unwrap_or(0);
            ((*k).to_string(), usize::try_from(n).unwrap())
        })
        .collect()
}
