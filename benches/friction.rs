//! Friction benchmark: the prompt rate per kind of everyday agent command
//! (fixtures/friction.jsonl) under the seed's defaults, each preset and Codex's
//! known-safe list. Run: `cargo bench --bench friction`; the table goes into
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
}
