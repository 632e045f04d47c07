//! The aggregate of a comparison run: the class and decision tables, capability,
//! always-pattern and hardline counts, the disagreements grouped by reason with a few
//! examples each, every command the gate looks at, and the per-command timings.
//!
//! Owns counting and the serialized (JSON) shape; it keeps no analysis beyond the
//! examples, so a run over any number of commands stays small. Rendering is `render`.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use serde::Serialize;

use super::{Comparison, Direction, EngineSide, InputLine, Reason, SourceSummary};
use crate::model::vocab::{AnalysisContext, Capability, CommandClass};
use crate::policy::rules::Action;

/// Examples kept per reason group.
pub const EXAMPLES_PER_GROUP: usize = 5;

/// The capabilities the report counts engine by engine (the derived ones; every part
/// carries `process.execute` in both engines).
pub const COUNTED_CAPABILITIES: [Capability; 4] = [
    Capability::NetworkAccess,
    Capability::GitModify,
    Capability::FileWriteOutsideProject,
    Capability::FileRead,
];

/// A 3x3 table, rows the AST's value, columns the lexer's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Matrix {
    /// Row and column labels, in order.
    pub labels: Vec<String>,
    /// `counts[ast][lexer]`.
    pub counts: Vec<Vec<usize>>,
}

impl Matrix {
    fn new(labels: &[&str]) -> Self {
        Matrix {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            counts: vec![vec![0; labels.len()]; labels.len()],
        }
    }

    fn add(&mut self, row: usize, col: usize) {
        if let Some(c) = self.counts.get_mut(row).and_then(|r| r.get_mut(col)) {
            *c += 1;
        }
    }

    /// Cells off the diagonal.
    pub fn off_diagonal(&self) -> usize {
        self.counts
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.iter().enumerate().filter(move |(j, _)| *j != i))
            .map(|(_, n)| n)
            .sum()
    }
}

fn class_index(c: CommandClass) -> usize {
    match c {
        CommandClass::Simple => 0,
        CommandClass::Compound => 1,
        CommandClass::Obfuscated => 2,
    }
}

fn action_index(a: Action) -> usize {
    match a {
        Action::Allow => 0,
        // The engines are compared on what reading alone decides; contain is a way to
        // run what reading could not prove, so it counts with ask.
        Action::Contain | Action::Ask => 1,
        Action::Deny => 2,
    }
}

/// How often each engine found one capability.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityCount {
    pub capability: String,
    pub ast: usize,
    pub lexer: usize,
    pub both: usize,
    pub only_ast: usize,
    pub only_lexer: usize,
}

/// How often each engine offers an "always" pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AlwaysCount {
    pub ast: usize,
    pub lexer: usize,
    pub both: usize,
    /// Both offer, and the lists differ.
    pub both_differ: usize,
    pub only_ast: usize,
    pub only_lexer: usize,
}

/// Per-command timings of one stage, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    pub stage: String,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub mean_ns: u64,
    pub total_ms: f64,
    /// Commands per second at the mean.
    pub commands_per_second: f64,
    /// Median over the bare parse's median.
    pub median_vs_parse: f64,
}

/// A compact form of one engine's reading, for examples and gate failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideSummary {
    pub class: String,
    pub decision: String,
    /// `capability subject`, in the analysis' order.
    pub requests: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardline: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    pub always_patterns: Vec<String>,
}

impl SideSummary {
    pub fn of(side: &EngineSide) -> Self {
        let a = &side.analysis;
        SideSummary {
            class: a.class.as_str().to_string(),
            decision: side.decision.as_str().to_string(),
            requests: a
                .requests
                .iter()
                .map(|r| format!("{} {}", r.capability.as_str(), r.subject))
                .collect(),
            hardline: a.hardline.as_ref().map(|h| h.rule.clone()),
            fallback: a
                .fallback
                .as_ref()
                .map(|f| format!("{}: {}", f.reason.as_str(), f.detail)),
            always_patterns: a.always_patterns.clone(),
        }
    }

    pub fn one_line(&self) -> String {
        let mut s = format!("{} -> {}", self.class, self.decision);
        if let Some(h) = &self.hardline {
            s.push_str(&format!(" [hardline `{h}`]"));
        }
        if let Some(f) = &self.fallback {
            s.push_str(&format!(" [fallback {f}]"));
        }
        s.push_str(&format!("; {}", self.requests.join("; ")));
        s
    }
}

/// One command of a reason group, or of a gate failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Example {
    pub source: String,
    pub line: usize,
    pub command: String,
    pub reason: String,
    /// Other reasons that account for some of the differences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// The reasons for the differences that make the decisions differ (what the gate
    /// checks against the reviewed list).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decision_reasons: Vec<String>,
    pub direction: Direction,
    /// Each difference and the reason it was attributed to.
    pub differences: Vec<String>,
    pub ast: SideSummary,
    pub lexer: SideSummary,
}

impl Example {
    pub fn of(input: &InputLine, c: &Comparison) -> Self {
        Example {
            source: input.source.clone(),
            line: input.line,
            command: c.command.clone(),
            reason: c.reason.map_or("agree", Reason::name).to_string(),
            also: c.also.iter().map(|r| r.name().to_string()).collect(),
            decision_reasons: c
                .decision_reasons
                .iter()
                .map(|r| r.name().to_string())
                .collect(),
            direction: c.direction,
            differences: c
                .attributions
                .iter()
                .map(|(e, r)| format!("{e} <- {}", r.name()))
                .collect(),
            ast: SideSummary::of(&c.ast),
            lexer: SideSummary::of(&c.lexer),
        }
    }

    /// Several lines: where, the command, the reason, both readings (class, decision,
    /// hardline, fallback, requests) and each difference with its reason.
    pub fn describe(&self) -> String {
        let mut out = format!("{}:{}: {}", self.source, self.line, self.command);
        if self.reason != "agree" {
            out.push_str(&format!("\n    reason: {}", self.reason));
            if !self.also.is_empty() {
                out.push_str(&format!(" (also {})", self.also.join(", ")));
            }
        }
        out.push_str(&format!("\n    ast:   {}", self.ast.one_line()));
        out.push_str(&format!("\n    lexer: {}", self.lexer.one_line()));
        if !self.differences.is_empty() {
            out.push_str(&format!(
                "\n    differences: {}",
                self.differences.join("; ")
            ));
        }
        out
    }
}

/// The disagreements of one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonGroup {
    pub reason: String,
    pub description: String,
    pub count: usize,
    pub ast_more_permissive: usize,
    pub ast_stricter: usize,
    pub same_decision: usize,
    pub examples: Vec<Example>,
}

/// Everything `compare` prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The canonical project root the commands were analyzed in.
    pub root: String,
    pub home: String,
    pub policy: String,
    pub sources: Vec<SourceSummary>,
    pub commands: usize,
    /// Commands longer than the bash tool accepts (`tools::MAX_COMMAND_BYTES`): the
    /// tool call is refused before analysis, so they are not compared.
    pub refused_too_large: usize,
    pub classes: Matrix,
    pub decisions: Matrix,
    pub capabilities: Vec<CapabilityCount>,
    pub always: AlwaysCount,
    pub hardline: HardlineCount,
    /// AST fallbacks to the lexer, by reason.
    pub fallbacks: BTreeMap<String, usize>,
    pub disagreements: usize,
    pub ast_more_permissive: usize,
    pub ast_stricter: usize,
    pub groups: Vec<ReasonGroup>,
    /// Every command the AST decides more permissively than the lexer (for the gate).
    pub more_permissive: Vec<Example>,
    /// Every command with a lexer hardline hit and no AST hit (for the gate).
    pub hardline_lost: Vec<Example>,
    pub timings: Vec<Timing>,
    /// Wall-clock time of the whole run (both engines, decisions, bookkeeping).
    pub wall_seconds: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HardlineCount {
    pub ast: usize,
    pub lexer: usize,
    pub only_ast: usize,
    pub only_lexer: usize,
}

/// A reason group being filled, with example candidates in three tiers: commands the
/// AST decides more permissively (what a reviewer must see), then one per distinct
/// first word (variety), then any other distinct command.
#[derive(Debug)]
struct GroupAcc {
    group: ReasonGroup,
    permissive: Vec<Example>,
    varied: Vec<Example>,
    spare: Vec<Example>,
    commands: HashSet<String>,
    first_words: HashSet<String>,
}

impl GroupAcc {
    fn new(reason: Reason) -> Self {
        GroupAcc {
            group: ReasonGroup {
                reason: reason.name().to_string(),
                description: reason.description().to_string(),
                count: 0,
                ast_more_permissive: 0,
                ast_stricter: 0,
                same_decision: 0,
                examples: Vec::new(),
            },
            permissive: Vec::new(),
            varied: Vec::new(),
            spare: Vec::new(),
            commands: HashSet::new(),
            first_words: HashSet::new(),
        }
    }

    fn offer(&mut self, input: &InputLine, c: &Comparison) {
        let n = EXAMPLES_PER_GROUP;
        if self.permissive.len() >= n && self.varied.len() >= n {
            return;
        }
        // Distinct commands only: the corpora repeat some lines.
        if self.commands.contains(&c.command) {
            return;
        }
        let first = c.command.split_whitespace().next().unwrap_or_default();
        let tier = if c.direction == Direction::AstMorePermissive && self.permissive.len() < n {
            &mut self.permissive
        } else if !self.first_words.contains(first) && self.varied.len() < n {
            self.first_words.insert(first.to_string());
            &mut self.varied
        } else if self.spare.len() < n {
            &mut self.spare
        } else {
            return;
        };
        tier.push(Example::of(input, c));
        self.commands.insert(c.command.clone());
    }

    fn finish(mut self) -> ReasonGroup {
        self.group.examples = self
            .permissive
            .into_iter()
            .chain(self.varied)
            .chain(self.spare)
            .take(EXAMPLES_PER_GROUP)
            .collect();
        self.group
    }
}

/// Accumulates comparisons into a `Report` without keeping every analysis.
#[derive(Debug)]
pub struct ReportBuilder {
    report: Report,
    groups: BTreeMap<Reason, GroupAcc>,
    times: [Vec<u64>; 3],
    started: Instant,
}

impl ReportBuilder {
    pub fn new(ctx: &AnalysisContext, sources: Vec<SourceSummary>) -> Self {
        let report = Report {
            root: ctx.root().display().to_string(),
            home: ctx.home().display().to_string(),
            policy: "built-in defaults only (no user, project or managed config is read)"
                .to_string(),
            sources,
            commands: 0,
            refused_too_large: 0,
            classes: Matrix::new(&["simple", "compound", "obfuscated"]),
            decisions: Matrix::new(&["allow", "ask", "deny"]),
            capabilities: COUNTED_CAPABILITIES
                .iter()
                .map(|c| CapabilityCount {
                    capability: c.as_str().to_string(),
                    ..CapabilityCount::default()
                })
                .collect(),
            always: AlwaysCount::default(),
            hardline: HardlineCount::default(),
            fallbacks: BTreeMap::new(),
            disagreements: 0,
            ast_more_permissive: 0,
            ast_stricter: 0,
            groups: Vec::new(),
            more_permissive: Vec::new(),
            hardline_lost: Vec::new(),
            timings: Vec::new(),
            wall_seconds: 0.0,
        };
        ReportBuilder {
            report,
            groups: BTreeMap::new(),
            times: [Vec::new(), Vec::new(), Vec::new()],
            started: Instant::now(),
        }
    }

    /// Counts a command the bash tool would refuse before analysis.
    pub fn refused(&mut self) {
        self.report.refused_too_large += 1;
    }

    pub fn add(&mut self, input: &InputLine, c: &Comparison) {
        let r = &mut self.report;
        r.commands += 1;
        let (a, l) = (&c.ast.analysis, &c.lexer.analysis);
        r.classes.add(class_index(a.class), class_index(l.class));
        r.decisions
            .add(action_index(c.ast.decision), action_index(c.lexer.decision));
        let (ac, lc) = (&c.ast.capabilities, &c.lexer.capabilities);
        for count in &mut r.capabilities {
            let Some(cap) = COUNTED_CAPABILITIES
                .iter()
                .find(|x| x.as_str() == count.capability)
            else {
                continue;
            };
            let (x, y) = (ac.contains(cap), lc.contains(cap));
            count.ast += usize::from(x);
            count.lexer += usize::from(y);
            count.both += usize::from(x && y);
            count.only_ast += usize::from(x && !y);
            count.only_lexer += usize::from(y && !x);
        }
        let (x, y) = (!a.always_patterns.is_empty(), !l.always_patterns.is_empty());
        r.always.ast += usize::from(x);
        r.always.lexer += usize::from(y);
        r.always.both += usize::from(x && y);
        r.always.both_differ += usize::from(x && y && a.always_patterns != l.always_patterns);
        r.always.only_ast += usize::from(x && !y);
        r.always.only_lexer += usize::from(y && !x);
        let (x, y) = (a.hardline.is_some(), l.hardline.is_some());
        r.hardline.ast += usize::from(x);
        r.hardline.lexer += usize::from(y);
        r.hardline.only_ast += usize::from(x && !y);
        r.hardline.only_lexer += usize::from(y && !x);
        if let Some(f) = &a.fallback {
            *r.fallbacks
                .entry(f.reason.as_str().to_string())
                .or_default() += 1;
        }
        if y && !x {
            r.hardline_lost.push(Example::of(input, c));
        }
        if c.direction == Direction::AstMorePermissive {
            r.more_permissive.push(Example::of(input, c));
        }
        if let Some(reason) = c.reason {
            r.disagreements += 1;
            match c.direction {
                Direction::AstMorePermissive => r.ast_more_permissive += 1,
                Direction::AstStricter => r.ast_stricter += 1,
                Direction::SameDecision => {}
            }
            let acc = self
                .groups
                .entry(reason)
                .or_insert_with(|| GroupAcc::new(reason));
            let g = &mut acc.group;
            g.count += 1;
            match c.direction {
                Direction::AstMorePermissive => g.ast_more_permissive += 1,
                Direction::AstStricter => g.ast_stricter += 1,
                Direction::SameDecision => g.same_decision += 1,
            }
            acc.offer(input, c);
        }
        for (v, t) in self
            .times
            .iter_mut()
            .zip([c.parse_nanos, c.ast.nanos, c.lexer.nanos])
        {
            v.push(t);
        }
    }

    pub fn finish(mut self) -> Report {
        let mut groups: Vec<ReasonGroup> =
            self.groups.into_values().map(GroupAcc::finish).collect();
        // Largest first; the documented order breaks ties.
        groups.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| Reason::order_of(&a.reason).cmp(&Reason::order_of(&b.reason)))
        });
        self.report.groups = groups;
        let names = ["tree-sitter parse", "AST engine", "lexer engine"];
        let mut medians = [0u64; 3];
        let mut timings = Vec::new();
        for (i, (times, name)) in self.times.iter_mut().zip(names).enumerate() {
            times.sort_unstable();
            let median = percentile(times, 0.5);
            if let Some(m) = medians.get_mut(i) {
                *m = median;
            }
            let total: u128 = times.iter().map(|&t| u128::from(t)).sum();
            let n = times.len().max(1) as f64;
            let mean = total as f64 / n;
            timings.push(Timing {
                stage: name.to_string(),
                median_ns: median,
                p99_ns: percentile(times, 0.99),
                mean_ns: mean.round() as u64,
                total_ms: total as f64 / 1e6,
                commands_per_second: if mean > 0.0 { 1e9 / mean } else { 0.0 },
                median_vs_parse: 0.0,
            });
        }
        let parse = medians.first().copied().unwrap_or(0).max(1) as f64;
        for t in &mut timings {
            t.median_vs_parse = t.median_ns as f64 / parse;
        }
        self.report.timings = timings;
        self.report.wall_seconds = self.started.elapsed().as_secs_f64();
        self.report
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let last = sorted.len() - 1;
    let i = ((last as f64) * p).round() as usize;
    sorted.get(i.min(last)).copied().unwrap_or(0)
}
