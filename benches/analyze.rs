//! Lexer engine vs AST engine vs the bare tree-sitter parse, over the real commands in
//! `../shared/corpus/` (read at bench time; skipped with a message when absent).
//!
//! Criterion times each engine over the same sample (throughput in commands); before
//! that, one side-by-side pass measures every sampled command with each engine in turn
//! and prints per-command medians, p99 and the ratios BENCHMARKS.md quotes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use khaelor_perm::model::vocab::AnalysisContext;

mod common;

/// Commands sampled, spread evenly over both corpora.
const SAMPLE: usize = 2000;

fn bench(c: &mut Criterion) {
    let cmds = common::corpus_sample(SAMPLE);
    if cmds.is_empty() {
        eprintln!("skipping: ../shared/corpus/ not found next to the repository");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(root.path(), None, Path::new("/home/bench")).unwrap();
    let m = common::side_by_side(
        &cmds,
        &[
            ("tree-sitter parse", &|c| {
                black_box(khaelor_perm::analysis::ast::parse(c).ok());
            }),
            ("AST engine", &|c| {
                black_box(khaelor_perm::analysis::analyze(c, &ctx));
            }),
            ("lexer engine", &|c| {
                black_box(khaelor_perm::analysis::analyze_lexer(c, &ctx));
            }),
        ],
    );
    let r = |a: usize, b: usize| m[a] as f64 / m[b].max(1) as f64;
    eprintln!(
        "  ratios: AST / parse = {:.2}x   AST / lexer = {:.1}x\n",
        r(1, 0),
        r(1, 2)
    );

    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Elements(cmds.len() as u64));
    g.sample_size(10);
    g.bench_function("tree-sitter parse", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(khaelor_perm::analysis::ast::parse(cmd).ok());
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
