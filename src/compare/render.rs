//! The human forms of a comparison `Report`: plain text for the terminal and the
//! markdown page `docs/src/measurements/ast-vs-lexer.md` is generated as. JSON is the report's serde form.
//!
//! Owns layout only: every number comes from the report; nothing is recomputed here
//! except ratios and percentages of the report's own counts.

use std::fmt::Write as _;

use super::report::{Example, Matrix, Report, Timing};

/// Lists of single commands stop after this many.
const LIST_AT_MOST: usize = 100;

/// Where and when a run happened, for the markdown header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// The run's date, e.g. `2026-09-01 14:03 UTC`.
    pub date: String,
    /// (label, value) lines: CPU, cores, memory, OS, build profile.
    pub machine: Vec<(String, String)>,
    /// The command line that regenerates the document.
    pub command: String,
}

/// `12345` -> `12,345`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "0%".to_string();
    }
    let p = part as f64 * 100.0 / whole as f64;
    if p > 0.0 && p < 0.1 {
        "<0.1%".to_string()
    } else {
        format!("{p:.1}%")
    }
}

/// Nanoseconds as `850 ns`, `12.3 µs` or `4.56 ms`.
pub fn duration(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", f / 1e3)
    } else {
        format!("{:.2} ms", f / 1e6)
    }
}

fn per_second(x: f64) -> String {
    thousands(x.round() as usize)
}

/// A table as aligned plain text: the first column left, the others right.
fn text_table(header: &[String], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width = vec![0usize; cols];
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::from(" ");
        for (i, (cell, w)) in row.iter().zip(&width).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            line.push(' ');
            if i == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad + 1));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A table as markdown, numbers right-aligned.
fn md_table(header: &[String], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    out.push_str(&format!(
        "| {} |\n",
        header
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    out.push_str(&format!(
        "|{}\n",
        (0..header.len())
            .map(|i| if i == 0 { " --- |" } else { " ---: |" })
            .collect::<String>()
    ));
    for row in rows {
        out.push_str(&format!(
            "| {} |\n",
            row.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

fn s(x: &str) -> String {
    x.to_string()
}

fn matrix_rows(m: &Matrix) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec![s("AST \\ lexer")];
    header.extend(m.labels.iter().cloned());
    header.push(s("total"));
    let mut rows = Vec::new();
    let mut col_totals = vec![0usize; m.labels.len()];
    for (label, counts) in m.labels.iter().zip(&m.counts) {
        let mut row = vec![label.clone()];
        row.extend(counts.iter().map(|n| thousands(*n)));
        row.push(thousands(counts.iter().sum()));
        for (t, n) in col_totals.iter_mut().zip(counts) {
            *t += n;
        }
        rows.push(row);
    }
    let mut total = vec![s("total")];
    total.extend(col_totals.iter().map(|n| thousands(*n)));
    total.push(thousands(col_totals.iter().sum()));
    rows.push(total);
    (header, rows)
}

fn capability_rows(r: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "capability",
        "AST",
        "lexer",
        "both",
        "only AST",
        "only lexer",
    ]
    .map(s)
    .to_vec();
    let rows = r
        .capabilities
        .iter()
        .map(|c| {
            vec![
                c.capability.clone(),
                thousands(c.ast),
                thousands(c.lexer),
                thousands(c.both),
                thousands(c.only_ast),
                thousands(c.only_lexer),
            ]
        })
        .collect();
    (header, rows)
}

fn always_rows(r: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let a = &r.always;
    let header = [
        "always patterns",
        "AST offers",
        "lexer offers",
        "both (lists differ)",
        "only AST",
        "only lexer",
    ]
    .map(s)
    .to_vec();
    let rows = vec![vec![
        s("commands"),
        thousands(a.ast),
        thousands(a.lexer),
        format!("{} ({})", thousands(a.both), thousands(a.both_differ)),
        thousands(a.only_ast),
        thousands(a.only_lexer),
    ]];
    (header, rows)
}

fn group_rows(r: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "reason",
        "commands",
        "AST more permissive",
        "AST stricter",
        "same decision",
    ]
    .map(s)
    .to_vec();
    let mut rows: Vec<Vec<String>> = r
        .groups
        .iter()
        .map(|g| {
            vec![
                g.reason.clone(),
                thousands(g.count),
                thousands(g.ast_more_permissive),
                thousands(g.ast_stricter),
                thousands(g.same_decision),
            ]
        })
        .collect();
    rows.push(vec![
        s("total"),
        thousands(r.disagreements),
        thousands(r.ast_more_permissive),
        thousands(r.ast_stricter),
        thousands(
            r.disagreements
                .saturating_sub(r.ast_more_permissive + r.ast_stricter),
        ),
    ]);
    (header, rows)
}

fn timing_rows(r: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "stage",
        "median",
        "p99",
        "mean",
        "commands/s (at the mean)",
        "median / parse median",
    ]
    .map(s)
    .to_vec();
    let rows = r
        .timings
        .iter()
        .map(|t: &Timing| {
            vec![
                t.stage.clone(),
                duration(t.median_ns),
                duration(t.p99_ns),
                duration(t.mean_ns),
                per_second(t.commands_per_second),
                format!("{:.2}x", t.median_vs_parse),
            ]
        })
        .collect();
    (header, rows)
}

fn hardline_line(r: &Report) -> String {
    let h = &r.hardline;
    format!(
        "hardline hits: AST {}, lexer {}, only AST {}, only lexer {}",
        thousands(h.ast),
        thousands(h.lexer),
        thousands(h.only_ast),
        thousands(h.only_lexer)
    )
}

fn fallback_line(r: &Report) -> String {
    if r.fallbacks.is_empty() {
        return "AST fallbacks to the lexer: none".to_string();
    }
    let total: usize = r.fallbacks.values().sum();
    format!(
        "AST fallbacks to the lexer: {} ({}): {}",
        thousands(total),
        percent(total, r.commands),
        r.fallbacks
            .iter()
            .map(|(k, v)| format!("{k} {}", thousands(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn inputs_lines(r: &Report) -> Vec<String> {
    r.sources
        .iter()
        .map(|src| {
            let mut l = format!(
                "{}: {} command{} ({} blank or comment line{} skipped",
                src.source,
                thousands(src.commands),
                if src.commands == 1 { "" } else { "s" },
                thousands(src.skipped),
                if src.skipped == 1 { "" } else { "s" }
            );
            if !src.invalid_utf8.is_empty() {
                let shown: Vec<String> = src
                    .invalid_utf8
                    .iter()
                    .take(10)
                    .map(|n| n.to_string())
                    .collect();
                l.push_str(&format!(
                    "; {} not UTF-8: line {}{}",
                    thousands(src.invalid_utf8.len()),
                    shown.join(", "),
                    if src.invalid_utf8.len() > 10 {
                        ", …"
                    } else {
                        ""
                    }
                ));
            }
            l.push(')');
            l
        })
        .collect()
}

fn wall_line(r: &Report) -> String {
    let rate = if r.wall_seconds > 0.0 {
        r.commands as f64 / r.wall_seconds
    } else {
        0.0
    };
    format!(
        "whole run: {:.2} s for {} commands ({} commands/s: parse, both engines, two decisions and the classifier per command, one thread)",
        r.wall_seconds,
        thousands(r.commands),
        per_second(rate)
    )
}

fn example_block(e: &Example) -> String {
    e.describe() + "\n"
}

/// The report as plain text.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "khaelor-perm compare: {} commands (AST engine vs V1 lexer)",
        thousands(r.commands)
    );
    let _ = writeln!(out, "  root: {}\n  home: {}", r.root, r.home);
    let _ = writeln!(out, "  policy: {}", r.policy);
    for l in inputs_lines(r) {
        let _ = writeln!(out, "  {l}");
    }
    if r.refused_too_large > 0 {
        let _ = writeln!(
            out,
            "  {} commands longer than the bash tool accepts were not compared",
            thousands(r.refused_too_large)
        );
    }

    let (h, rows) = matrix_rows(&r.classes);
    let _ = writeln!(
        out,
        "\nClasses (rows: AST, columns: lexer)\n{}",
        text_table(&h, &rows)
    );
    let (h, rows) = matrix_rows(&r.decisions);
    let _ = writeln!(
        out,
        "Decisions under the default policy (rows: AST, columns: lexer)\n{}  AST more permissive: {}   AST stricter: {}\n",
        text_table(&h, &rows),
        thousands(r.ast_more_permissive),
        thousands(r.ast_stricter)
    );
    let (h, rows) = capability_rows(r);
    let _ = writeln!(
        out,
        "Capabilities (commands where each engine found one)\n{}",
        text_table(&h, &rows)
    );
    let (h, rows) = always_rows(r);
    let _ = writeln!(out, "{}", text_table(&h, &rows));
    let _ = writeln!(out, "{}\n{}\n", hardline_line(r), fallback_line(r));

    let (h, rows) = group_rows(r);
    let _ = writeln!(
        out,
        "Disagreements: {} of {} commands ({}), by reason\n{}",
        thousands(r.disagreements),
        thousands(r.commands),
        percent(r.disagreements, r.commands),
        text_table(&h, &rows)
    );
    for g in &r.groups {
        let _ = writeln!(
            out,
            "== {} ({}: {} AST more permissive, {} AST stricter, {} same decision)\n   {}",
            g.reason,
            thousands(g.count),
            thousands(g.ast_more_permissive),
            thousands(g.ast_stricter),
            thousands(g.same_decision),
            g.description
        );
        for e in &g.examples {
            for l in example_block(e).lines() {
                let _ = writeln!(out, "   {l}");
            }
        }
        out.push('\n');
    }
    if !r.more_permissive.is_empty() {
        let _ = writeln!(
            out,
            "Every command the AST decides more permissively ({}):",
            r.more_permissive.len()
        );
        for e in r.more_permissive.iter().take(LIST_AT_MOST) {
            out.push_str(&example_block(e));
        }
        out.push('\n');
    }
    if !r.hardline_lost.is_empty() {
        let _ = writeln!(
            out,
            "Commands with a lexer hardline hit and no AST hit ({}):",
            r.hardline_lost.len()
        );
        for e in &r.hardline_lost {
            out.push_str(&example_block(e));
        }
        out.push('\n');
    }

    let (h, rows) = timing_rows(r);
    let _ = writeln!(
        out,
        "Time per command (each stage once per command, back to back on one thread)\n{}{}",
        text_table(&h, &rows),
        wall_line(r)
    );
    out
}

/// The report as the markdown page of the engines' comparison (docs/src/measurements).
pub fn markdown(r: &Report, run: &RunInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmarks: the AST engine against the V1 lexer\n");
    let _ = writeln!(
        out,
        "Generated by `khaelor-perm compare --markdown`; every number below comes from one run on {}. \
Regenerate (from the repository root, with `../shared/corpus/` next to it):\n\n```sh\n{}\n```\n",
        run.date, run.command
    );
    let _ = writeln!(out, "## Setup\n");
    for (k, v) in &run.machine {
        let _ = writeln!(out, "- {k}: {v}");
    }
    let _ = writeln!(
        out,
        "- project root: a fresh empty directory (`{}`); home: `{}`",
        r.root, r.home
    );
    let _ = writeln!(out, "- policy: {}", r.policy);
    for l in inputs_lines(r) {
        let _ = writeln!(out, "- input {l}");
    }
    let _ = writeln!(
        out,
        "- compared: {} commands{}\n",
        thousands(r.commands),
        if r.refused_too_large > 0 {
            format!(
                " ({} longer than the bash tool accepts left out)",
                thousands(r.refused_too_large)
            )
        } else {
            String::new()
        }
    );

    let _ = writeln!(out, "## Speed\n");
    let _ = writeln!(
        out,
        "Each command is parsed by tree-sitter alone, then analyzed by the lexer engine, then by \
the AST engine, back to back on one thread (one run each; the AST engine reuses the same \
thread-local parser as the bare parse). The last column is how far each stage is from the bare \
tree-sitter parse. The AST engine's time includes its own parse, the walk, the effects (with path \
resolution on the filesystem) and the lexer's tokenization (the hardline floor also reads the lexer's \
rendering). The criterion bench `cargo bench --bench compare` times the lexer, the AST engine and a \
full `evaluate` of a `bash` call over a fixed sample of 1,000 of these commands.\n"
    );
    let (h, rows) = timing_rows(r);
    let _ = writeln!(out, "{}\n{}.\n", md_table(&h, &rows), wall_line(r));

    let _ = writeln!(
        out,
        "## Classes\n\nRows: the AST engine; columns: the V1 lexer.\n"
    );
    let (h, rows) = matrix_rows(&r.classes);
    let _ = writeln!(out, "{}", md_table(&h, &rows));
    let _ = writeln!(
        out,
        "## Decisions under the default policy\n\nRows: the AST engine; columns: the V1 lexer. Each command is decided as a `bash` tool call (`tools::map_call` + `decide`), interactive, defaults only.\n"
    );
    let (h, rows) = matrix_rows(&r.decisions);
    let _ = writeln!(
        out,
        "{}\nThe AST decides more permissively on {} commands and more strictly on {}.\n",
        md_table(&h, &rows),
        thousands(r.ast_more_permissive),
        thousands(r.ast_stricter)
    );
    let _ = writeln!(
        out,
        "## Capabilities, always patterns, hardline\n\nCommands on which each engine found the capability (`process.execute` is on every command in both).\n"
    );
    let (h, rows) = capability_rows(r);
    let _ = writeln!(out, "{}", md_table(&h, &rows));
    let (h, rows) = always_rows(r);
    let _ = writeln!(out, "{}", md_table(&h, &rows));
    let _ = writeln!(out, "- {}\n- {}\n", hardline_line(r), fallback_line(r));

    let _ = writeln!(
        out,
        "## Disagreements by reason\n\n{} of {} commands ({}) differ in class, decision or set of capabilities. \
Each difference is attributed to the first reason in the classifier's documented order that accounts for it \
(`src/compare/classify.rs`); the reasons allowed to make the AST more permissive are reviewed in \
`fixtures/compare_reasons.jsonl` and enforced by `tests/compare_gate.rs`.\n",
        thousands(r.disagreements),
        thousands(r.commands),
        percent(r.disagreements, r.commands)
    );
    let (h, rows) = group_rows(r);
    let _ = writeln!(out, "{}", md_table(&h, &rows));
    for g in &r.groups {
        let _ = writeln!(
            out,
            "### `{}` — {}\n\n{}. {} AST more permissive, {} AST stricter, {} same decision. Examples:\n\n```text",
            g.reason,
            thousands(g.count),
            g.description,
            thousands(g.ast_more_permissive),
            thousands(g.ast_stricter),
            thousands(g.same_decision)
        );
        for e in &g.examples {
            out.push_str(&example_block(e));
        }
        let _ = writeln!(out, "```\n");
    }
    if !r.more_permissive.is_empty() {
        let _ = writeln!(
            out,
            "## Every command the AST decides more permissively\n\n{} commands; `tests/compare_gate.rs` fails unless every reason involved is reviewed as allowed to be more permissive in `fixtures/compare_reasons.jsonl`.\n\n```text",
            r.more_permissive.len()
        );
        for e in r.more_permissive.iter().take(LIST_AT_MOST) {
            out.push_str(&example_block(e));
        }
        let _ = writeln!(out, "```\n");
    }
    if !r.hardline_lost.is_empty() {
        let _ = writeln!(out, "## Lexer hardline hits the AST misses\n\n```text");
        for e in &r.hardline_lost {
            out.push_str(&example_block(e));
        }
        let _ = writeln!(out, "```\n");
    }
    out.trim_end().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(43184), "43,184");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(duration(850), "850 ns");
        assert_eq!(duration(12_345), "12.3 µs");
        assert_eq!(duration(4_560_000), "4.56 ms");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(1, 100_000), "<0.1%");
    }

    #[test]
    fn tables_align_and_escape() {
        let h = vec![s("a"), s("n")];
        let rows = vec![vec![s("x|y"), s("10")]];
        assert_eq!(text_table(&h, &rows), "  a     n\n  x|y  10\n");
        assert_eq!(
            md_table(&h, &rows),
            "| a | n |\n| --- | ---: |\n| x\\|y | 10 |\n"
        );
    }
}
