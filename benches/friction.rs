//! Friction benchmark: the prompt rate per kind of everyday agent command
//! (fixtures/friction.jsonl) under the seed's defaults, each preset and Codex's
//! known-safe list; then the commands agents really ran in public sessions
//! (fixtures/agent_commands.jsonl) per kind and preset as allowed / contained /
//! asked / denied, the risky ones let through, and what asks most often for reads,
//! edits and builds. Run: `cargo bench --bench friction`; the tables go into
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
    let (rows, tallies) = friction_set::run_agent_set();
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
}
