//! Lexer engine vs AST engine vs a full `evaluate` of a `bash` call under the default
//! policy (`tools::map_call` + `decide`), over a fixed sample of the real commands in
//! `../shared/corpus/` (read at bench time; skipped with a message when absent).
//!
//! First one side-by-side pass times every sampled command with each stage in turn
//! (best of 5, to take scheduler noise out of microsecond timings) and prints medians,
//! p99 and the ratios; then criterion times each stage over the whole sample.
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
use khaelor_perm::policy::config::Policy;
use khaelor_perm::policy::decide::decide;
use khaelor_perm::tools::map_call;

mod common;

/// Commands sampled, spread evenly over both corpora.
const SAMPLE: usize = 1000;

fn evaluate(cmd: &str, policy: &Policy, ctx: &AnalysisContext) {
    let input = serde_json::json!({ "command": cmd });
    if let Ok(call) = map_call("bash", &input, ctx) {
        black_box(decide(policy, &[], &call, ctx, true));
    }
}

fn bench(c: &mut Criterion) {
    let cmds = common::corpus_sample(SAMPLE);
    if cmds.is_empty() {
        eprintln!("skipping: ../shared/corpus/ not found next to the repository");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let ctx = AnalysisContext::new(root.path(), None, Path::new("/home/bench")).unwrap();
    // Defaults only: the bench measures the engines, not a configuration.
    let policy = Policy::builder().build();
    let m = common::side_by_side(
        &cmds,
        &[
            ("lexer engine", &|c| {
                black_box(khaelor_perm::analysis::analyze_lexer(c, &ctx));
            }),
            ("AST engine", &|c| {
                black_box(khaelor_perm::analysis::analyze(c, &ctx));
            }),
            ("evaluate (bash call)", &|c| evaluate(c, &policy, &ctx)),
        ],
    );
    let r = |a: usize, b: usize| m[a] as f64 / m[b].max(1) as f64;
    eprintln!(
        "  ratios of medians: AST / lexer = {:.1}x   evaluate / AST = {:.2}x   evaluate / lexer = {:.1}x\n",
        r(1, 0),
        r(2, 1),
        r(2, 0)
    );

    let mut g = c.benchmark_group("compare");
    g.throughput(Throughput::Elements(cmds.len() as u64));
    g.sample_size(10);
    g.bench_function("lexer engine", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(khaelor_perm::analysis::analyze_lexer(cmd, &ctx));
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
    g.bench_function("evaluate bash call", |b| {
        b.iter(|| {
            for cmd in &cmds {
                evaluate(cmd, &policy, &ctx);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
