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
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use khaelor_perm::config::Policy;
use khaelor_perm::decide::decide;
use khaelor_perm::tools::map_call;
use khaelor_perm::vocab::AnalysisContext;

/// Commands sampled, spread evenly over both corpora.
const SAMPLE: usize = 1000;

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut lines = Vec::new();
    for f in ["tldr.txt", "nl2bash.txt"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(f)) {
            lines.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
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

fn evaluate(cmd: &str, policy: &Policy, ctx: &AnalysisContext) {
    let input = serde_json::json!({ "command": cmd });
    if let Ok(call) = map_call("bash", &input, ctx) {
        black_box(decide(policy, &[], &call, ctx, true));
    }
}

fn side_by_side(cmds: &[String], policy: &Policy, ctx: &AnalysisContext) {
    let names = ["lexer engine", "AST engine", "evaluate (bash call)"];
    let mut t: [Vec<u128>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for c in cmds {
        let mut best = [u128::MAX; 3];
        for _ in 0..5 {
            let s = Instant::now();
            black_box(khaelor_perm::analysis::analyze_lexer(c, ctx));
            best[0] = best[0].min(s.elapsed().as_nanos());
            let s = Instant::now();
            black_box(khaelor_perm::analysis::analyze(c, ctx));
            best[1] = best[1].min(s.elapsed().as_nanos());
            let s = Instant::now();
            evaluate(c, policy, ctx);
            best[2] = best[2].min(s.elapsed().as_nanos());
        }
        for k in 0..3 {
            t[k].push(best[k]);
        }
    }
    let mut medians = [0u128; 3];
    eprintln!(
        "\nper-command timings over {} corpus commands (best of 5 each):",
        cmds.len()
    );
    for k in 0..3 {
        t[k].sort_unstable();
        medians[k] = percentile(&t[k], 0.5);
        eprintln!(
            "  {:<22} median {:>7} ns   p99 {:>8} ns",
            names[k],
            medians[k],
            percentile(&t[k], 0.99)
        );
    }
    let m = |k: usize| medians[k].max(1) as f64;
    eprintln!(
        "  ratios of medians: AST / lexer = {:.1}x   evaluate / AST = {:.2}x   evaluate / lexer = {:.1}x\n",
        m(1) / m(0),
        m(2) / m(1),
        m(2) / m(0)
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
    // Defaults only: the bench measures the engines, not a configuration.
    let policy = Policy::builder().build();
    side_by_side(&cmds, &policy, &ctx);

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
