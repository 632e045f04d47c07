//! What the benches share: the corpus sample (read the way `compare` reads it) and the
//! side-by-side pass that times every sampled command with each stage in turn.
#![allow(dead_code, clippy::indexing_slicing)]

use std::path::Path;
use std::time::Instant;

use khaelor_perm::compare::{InputLine, split_commands};

/// Up to `n` commands spread evenly over `../shared/corpus/{tldr,nl2bash}.txt`; empty
/// when the corpora are absent. Blank and `#` lines are skipped, non-UTF-8 lines too.
pub fn corpus_sample(n: usize) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut lines: Vec<InputLine> = Vec::new();
    for f in ["tldr.txt", "nl2bash.txt"] {
        if let Ok(bytes) = std::fs::read(dir.join(f)) {
            split_commands(f, &bytes, None, &mut lines);
        }
    }
    let step = (lines.len() / n.max(1)).max(1);
    lines
        .into_iter()
        .step_by(step)
        .take(n)
        .map(|l| l.command)
        .collect()
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// A named stage: what it runs on one command.
pub type Stage<'a> = (&'a str, &'a dyn Fn(&str));

/// Times each stage on every command back to back (best of 5, to take scheduler noise
/// out of microsecond timings), prints medians and p99, and returns the medians in ns.
pub fn side_by_side(cmds: &[String], stages: &[Stage<'_>]) -> Vec<u128> {
    let mut t: Vec<Vec<u128>> = vec![Vec::with_capacity(cmds.len()); stages.len()];
    for c in cmds {
        let mut best = vec![u128::MAX; stages.len()];
        for _ in 0..5 {
            for (k, (_, run)) in stages.iter().enumerate() {
                let s = Instant::now();
                run(c);
                best[k] = best[k].min(s.elapsed().as_nanos());
            }
        }
        for (k, b) in best.into_iter().enumerate() {
            t[k].push(b);
        }
    }
    eprintln!(
        "\nper-command timings over {} corpus commands (best of 5 each):",
        cmds.len()
    );
    let mut medians = Vec::new();
    for (k, (name, _)) in stages.iter().enumerate() {
        t[k].sort_unstable();
        let m = percentile(&t[k], 0.5);
        eprintln!(
            "  {:<22} median {:>7} ns   p99 {:>8} ns",
            name,
            m,
            percentile(&t[k], 0.99)
        );
        medians.push(m);
    }
    medians
}
