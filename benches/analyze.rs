//! Lexer engine vs AST engine vs the bare tree-sitter parse, over the real commands in
//! `../shared/corpus/` (read at bench time; skipped with a message when absent).
//!
//! Criterion times each engine over the same sample (throughput in commands); before
//! that, one side-by-side pass measures every sampled command with each engine in turn
//! and prints per-command medians, p99 and the ratios the README quotes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use khaelor_perm::vocab::AnalysisContext;

/// Every n-th corpus line, so the sample spans both corpora.
const SAMPLE: usize = 2000;

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut lines = Vec::new();
    for f in ["tldr.txt", "nl2bash.txt"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(f)) {
            lines.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(String::from),
            );
        }
    }
    if lines.is_empty() {
        return lines;
    }
    let step = (lines.len() / SAMPLE).max(1);
    lines.into_iter().step_by(step).take(SAMPLE).collect()
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// One pass, every command timed by each engine back to back (5 repetitions, the
/// fastest kept, to take scheduler noise out of single-microsecond timings).
fn side_by_side(cmds: &[String], ctx: &AnalysisContext) {
    let mut t = [Vec::new(), Vec::new(), Vec::new()];
    for c in cmds {
        let mut best = [u128::MAX; 3];
        for _ in 0..5 {
            let s = Instant::now();
            black_box(khaelor_perm::ast::parse(c).ok());
            best[0] = best[0].min(s.elapsed().as_nanos());
            let s = Instant::now();
            black_box(khaelor_perm::analysis::analyze(c, ctx));
            best[1] = best[1].min(s.elapsed().as_nanos());
            let s = Instant::now();
            black_box(khaelor_perm::analysis::analyze_lexer(c, ctx));
            best[2] = best[2].min(s.elapsed().as_nanos());
        }
        for k in 0..3 {
            t[k].push(best[k]);
        }
    }
    let names = ["tree-sitter parse", "AST engine", "lexer engine"];
    let mut medians = [0u128; 3];
    eprintln!(
        "\nper-command timings over {} corpus commands (best of 5 each):",
        cmds.len()
    );
    for k in 0..3 {
        t[k].sort_unstable();
        medians[k] = percentile(&t[k], 0.5);
        eprintln!(
            "  {:<18} median {:>7} ns   p99 {:>8} ns",
            names[k],
            medians[k],
            percentile(&t[k], 0.99)
        );
    }
    eprintln!(
        "  ratios: AST / parse = {:.2}x   AST / lexer = {:.1}x\n",
        medians[1] as f64 / medians[0].max(1) as f64,
        medians[1] as f64 / medians[2].max(1) as f64
    );
}

fn bench(c: &mut Criterion) {
    let cmds = corpus();
    if cmds.is_empty() {
        eprintln!("skipping: ../shared/corpus/ not found next to the repository");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(root.path(), None, Path::new("/home/bench")).unwrap();
    side_by_side(&cmds, &ctx);

    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Elements(cmds.len() as u64));
    g.sample_size(10);
    g.bench_function("tree-sitter parse", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(khaelor_perm::ast::parse(cmd).ok());
            }
        })
    });
    g.bench_function("ast engine", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(khaelor_perm::analysis::analyze(cmd, &ctx));
            }
        })
    });
    g.bench_function("lexer engine", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(khaelor_perm::analysis::analyze_lexer(cmd, &ctx));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
