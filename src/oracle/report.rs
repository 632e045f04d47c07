//! One oracle run and its report: every input through the sandbox and the analysis,
//! judged, counted, and grouped by reason with examples; rendered as text, markdown or
//! JSON.
//!
//! Owns the aggregate and its rendering. Decisions are under the built-in default rules
//! only (no user, project or managed config is read), like `compare`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::compare::{Reason, Said, StrictExclusion, StrictReason, judge, strict, unaccountable};
use super::inputs::Input;
use super::sandbox::{Sandbox, SandboxError};
use super::{Observed, RunStatus};
use crate::analysis::ast::EvaluatedCode;
use crate::model::vocab::{AnalysisContext, CommandClass, Part};
use crate::policy::config::Policy;
use crate::tools::MAX_COMMAND_BYTES;

/// Examples kept per reason and kind (hard / soft).
const EXAMPLES: usize = 8;

/// One violating command, for the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Example {
    pub source: String,
    pub line: usize,
    pub command: String,
    /// What bash did that is not reported (for this reason).
    pub did: Vec<String>,
    pub said: Said,
}

/// The violations of one reason.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonStats {
    /// Commands with a hard violation of this reason.
    pub hard: usize,
    /// Commands with a softer one (asked or denied, no always pattern, not opaque).
    pub soft: usize,
    pub hard_examples: Vec<Example>,
    pub soft_examples: Vec<Example>,
}

/// One command of the strict check's report: a disagreement, or a command the check
/// held to less than everything.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictExample {
    pub source: String,
    pub line: usize,
    pub command: String,
    /// The evaluated commands not executed or the executed argvs not evaluated (a
    /// disagreement); the unread piece or why the code is open (an exclusion).
    pub what: Vec<String>,
    /// Each piece of evaluated code.
    pub evaluated: Vec<String>,
}

/// Commands of one strict reason or exclusion, with a few examples.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictCount {
    pub commands: usize,
    pub examples: Vec<StrictExample>,
}

/// Commands opaque without the evaluator, and of those read with it, of one source.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    pub plain_opaque: usize,
    pub opened: usize,
    pub opened_obfuscated: usize,
}

/// The strict check of the static evaluator (`compare::strict`), on the runs
/// in the sandbox layout that holds the evaluator's pure producers.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictStats {
    /// Commands run for which the evaluator computed code.
    pub evaluated: usize,
    /// Of those, commands with no disagreement.
    pub agreeing: usize,
    /// Of the agreeing, commands where bash executed at least one evaluated command
    /// exactly (the others: everything checkable was fed to a program the sandbox
    /// lacks, or is a builtin, or holds unknown words).
    pub confirmed: usize,
    /// Commands with a disagreement: a failure, like a hard violation.
    pub disagreeing: usize,
    /// Disagreeing commands by reason (a command counts once per reason).
    pub by_reason: BTreeMap<StrictReason, StrictCount>,
    /// What the check did not hold commands to, by kind (a command counts once per
    /// kind); none is a disagreement.
    pub exclusions: BTreeMap<StrictExclusion, StrictCount>,
    /// Commands run that are opaque without the evaluator
    /// (`analysis::ast::without_evaluator`): the plain reading does not parse, or
    /// cannot show everything the command can run (`compare::unaccountable` of
    /// `analysis::ast::read_code`: a command name or code word only known when it
    /// runs, a shell reading input nobody computed, …).
    pub plain_opaque: usize,
    /// Of those, commands the evaluator turns from opaque into read: it computed code
    /// for them that shows everything it can run (`compare::unaccountable` is empty).
    pub opened: usize,
    /// Of `opened`, those whose plain analysis is of class obfuscated (the rest are
    /// mostly code piped into a shell, which the class does not mark).
    pub opened_obfuscated: usize,
    pub opened_examples: Vec<StrictExample>,
    /// `plain_opaque` and `opened` per input file (or generator seed).
    pub opened_by_source: BTreeMap<String, Opened>,
    /// Wall-clock seconds of the producers' layout run.
    pub sandbox_seconds: f64,
}

/// The whole run.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub commands: usize,
    pub ran: usize,
    pub timed_out: usize,
    /// Commands no host can pass to `bash -c` (a NUL byte) or larger than the
    /// service's command limit: not run, nothing to compare.
    pub not_run: usize,
    /// Commands where bash did exactly what the analysis reported.
    pub agreed: usize,
    /// Commands with unreported actions whose analysis is opaque and held (never
    /// allowed, no always pattern): fail-closed, not a violation.
    pub held_by_opacity: usize,
    /// Commands with a hard violation (allowed, or an always pattern offered).
    pub hard: usize,
    /// Commands with only softer violations.
    pub soft: usize,
    pub by_reason: BTreeMap<Reason, ReasonStats>,
    /// The static evaluator against bash.
    pub strict: StrictStats,
    /// Wall-clock seconds of the sandbox runs and of the analysis.
    pub sandbox_seconds: f64,
    pub analysis_seconds: f64,
    /// Commands per second over the whole run.
    pub throughput: f64,
}

/// One command's strict-check inputs: the evaluated code, bash's run with the
/// producers, and whether bash parses each piece.
type Strict = (Vec<EvaluatedCode>, Observed, Vec<Option<bool>>);

/// Runs every input and judges it: each runnable input in the bash-only sandbox for
/// the oracle's property, then each one the static evaluator computed code for in the
/// layout that holds the evaluator's pure producers, for the strict check.
/// `progress(done, total)` is called after each batch of either run.
pub fn run(
    sandbox: &Sandbox,
    inputs: &[Input],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report, SandboxError> {
    let ctx = AnalysisContext::new(sandbox.root(), None, sandbox.home()).map_err(|e| {
        SandboxError::Probe {
            message: e.to_string(),
        }
    })?;
    let policy = Policy::builder().build();
    let runnable: Vec<String> = inputs
        .iter()
        .map(|i| {
            if i.command.len() > MAX_COMMAND_BYTES {
                // Never run: the service refuses it, so the sandbox need not see it.
                "\0".to_string()
            } else {
                i.command.clone()
            }
        })
        .collect();
    let t = Instant::now();
    // The strict check's inputs: what the evaluator computed, per runnable command.
    let evaluated: Vec<(usize, Vec<EvaluatedCode>)> = runnable
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.contains('\0'))
        .filter_map(|(i, c)| Some((i, crate::analysis::ast::evaluated_code(c, &ctx)?)))
        .collect();
    let mut analysis_time = t.elapsed();
    let total = runnable.len() + evaluated.len();
    let t = Instant::now();
    let observed = sandbox.run(&runnable, &|done| progress(done, total))?;
    let sandbox_time = t.elapsed();
    let t = Instant::now();
    let strict_commands: Vec<String> = evaluated
        .iter()
        .filter_map(|(i, _)| runnable.get(*i).cloned())
        .collect();
    let with_producers = sandbox.run_with_producers(&strict_commands, &|done| {
        progress(runnable.len() + done, total)
    })?;
    // Whether bash parses each piece of evaluated code (`bash -n`, nothing run).
    let mut texts: Vec<String> = evaluated
        .iter()
        .flat_map(|(_, codes)| codes.iter().map(|c| c.code.clone()))
        .collect();
    texts.sort();
    texts.dedup();
    let parsed: std::collections::HashMap<String, Option<bool>> = texts
        .iter()
        .cloned()
        .zip(sandbox.parse_with_bash(&texts)?)
        .collect();
    let strict_time = t.elapsed();
    let t = Instant::now();
    let mut report = Report {
        commands: inputs.len(),
        ..Report::default()
    };
    let mut strict_of: Vec<Option<Strict>> = vec![None; inputs.len()];
    for ((i, codes), obs) in evaluated.into_iter().zip(with_producers) {
        let bash_parses: Vec<Option<bool>> = codes
            .iter()
            .map(|c| parsed.get(&c.code).copied().flatten())
            .collect();
        if let Some(slot) = strict_of.get_mut(i) {
            *slot = Some((codes, obs, bash_parses));
        }
    }
    for ((input, obs), strict) in inputs.iter().zip(&observed).zip(&strict_of) {
        add(&mut report, input, obs, strict.as_ref(), &ctx, &policy);
    }
    analysis_time += t.elapsed();
    report.sandbox_seconds = (sandbox_time + strict_time).as_secs_f64();
    report.strict.sandbox_seconds = strict_time.as_secs_f64();
    report.analysis_seconds = analysis_time.as_secs_f64();
    let total = (sandbox_time + strict_time + analysis_time).max(Duration::from_millis(1));
    report.throughput = inputs.len() as f64 / total.as_secs_f64();
    Ok(report)
}

fn add(
    report: &mut Report,
    input: &Input,
    obs: &Observed,
    strict: Option<&Strict>,
    ctx: &AnalysisContext,
    policy: &Policy,
) {
    match obs.status {
        RunStatus::Unrunnable => {
            report.not_run += 1;
            return;
        }
        RunStatus::TimedOut => report.timed_out += 1,
        RunStatus::Ran => report.ran += 1,
    }
    let analysis = crate::analysis::analyze(&input.command, ctx);
    // Opaque without the evaluator: the plain reading does not parse, or cannot show
    // everything the command can run (the strict check's own criterion).
    let plain = crate::analysis::ast::without_evaluator(|| {
        crate::analysis::ast::read_code(&input.command, ctx)
    });
    if plain.is_none_or(|p| !unaccountable(&p).is_empty()) {
        let st = &mut report.strict;
        st.plain_opaque += 1;
        let by_source = st.opened_by_source.entry(input.source.clone()).or_default();
        by_source.plain_opaque += 1;
        if let Some((codes, _, _)) = strict
            && unaccountable(codes).is_empty()
        {
            by_source.opened += 1;
            st.opened += 1;
            let obfuscated = crate::analysis::ast::without_evaluator(|| {
                crate::analysis::analyze(&input.command, ctx)
            })
            .class
                == CommandClass::Obfuscated;
            if obfuscated {
                by_source.opened_obfuscated += 1;
                st.opened_obfuscated += 1;
            }
            if st.opened_examples.len() < EXAMPLES {
                st.opened_examples.push(StrictExample {
                    source: input.source.clone(),
                    line: input.line,
                    command: input.command.clone(),
                    what: Vec::new(),
                    evaluated: codes.iter().map(|c| c.code.clone()).collect(),
                });
            }
        }
    }
    if let Some((codes, with_producers, bash_parses)) = strict {
        add_strict(
            report,
            input,
            codes,
            with_producers,
            &analysis.parts,
            bash_parses,
        );
    }
    let v = judge(&input.command, analysis, obs, ctx, policy);
    if v.findings.is_empty() {
        report.agreed += 1;
        return;
    }
    if v.covered_by_opacity {
        report.held_by_opacity += 1;
        return;
    }
    if v.hard {
        report.hard += 1;
    } else {
        report.soft += 1;
    }
    let mut reasons: Vec<Reason> = v.findings.iter().map(|f| f.reason).collect();
    reasons.sort();
    reasons.dedup();
    for r in reasons {
        let stats = report.by_reason.entry(r).or_default();
        let (count, examples) = if v.hard {
            (&mut stats.hard, &mut stats.hard_examples)
        } else {
            (&mut stats.soft, &mut stats.soft_examples)
        };
        *count += 1;
        if examples.len() < EXAMPLES {
            examples.push(Example {
                source: input.source.clone(),
                line: input.line,
                command: input.command.clone(),
                did: v
                    .findings
                    .iter()
                    .filter(|f| f.reason == r)
                    .map(|f| f.did.clone())
                    .collect(),
                said: v.said.clone(),
            });
        }
    }
}

/// The strict check of one command the evaluator computed code for, on its run in the
/// producers' layout.
fn add_strict(
    report: &mut Report,
    input: &Input,
    codes: &[EvaluatedCode],
    obs: &Observed,
    parts: &[Part],
    bash_parses: &[Option<bool>],
) {
    if obs.status == RunStatus::Unrunnable {
        return;
    }
    let st = &mut report.strict;
    st.evaluated += 1;
    let v = strict(codes, obs, parts, bash_parses);
    let example = |what: Vec<String>| StrictExample {
        source: input.source.clone(),
        line: input.line,
        command: input.command.clone(),
        what,
        evaluated: codes.iter().map(|c| c.code.clone()).collect(),
    };
    let mut kinds: Vec<StrictExclusion> = v.exclusions.iter().map(|(k, _)| *k).collect();
    kinds.sort();
    kinds.dedup();
    for k in kinds {
        let count = st.exclusions.entry(k).or_default();
        count.commands += 1;
        if count.examples.len() < EXAMPLES {
            count.examples.push(example(
                v.exclusions
                    .iter()
                    .filter(|(x, _)| *x == k)
                    .map(|(_, why)| why.clone())
                    .collect(),
            ));
        }
    }
    if v.findings.is_empty() {
        st.agreeing += 1;
        if v.confirmed > 0 {
            st.confirmed += 1;
        }
        return;
    }
    st.disagreeing += 1;
    let mut reasons: Vec<StrictReason> = v.findings.iter().map(|f| f.reason).collect();
    reasons.sort();
    reasons.dedup();
    for r in reasons {
        let count = st.by_reason.entry(r).or_default();
        count.commands += 1;
        if count.examples.len() < EXAMPLES {
            count.examples.push(example(
                v.findings
                    .iter()
                    .filter(|f| f.reason == r)
                    .map(|f| f.what.clone())
                    .collect(),
            ));
        }
    }
}

impl Report {
    /// The done criterion: no hard violation, and bash ran what the evaluator computed.
    pub fn passes(&self) -> bool {
        self.hard == 0 && self.strict.disagreeing == 0
    }

    fn strict_text(&self, markdown: bool) -> String {
        let st = &self.strict;
        let mut s = if markdown {
            format!(
                "\n### Strict check of the evaluator\n\n\
                 | evaluated | agreeing | confirmed by an execution | disagreeing | producers' run |\n\
                 |---:|---:|---:|---:|---:|\n| {} | {} | {} | {} | {:.1} s |\n",
                st.evaluated, st.agreeing, st.confirmed, st.disagreeing, st.sandbox_seconds
            )
        } else {
            format!(
                "evaluator (strict, with producers): {} evaluated, {} agreeing ({} confirmed by an execution), {} disagreeing, {:.1}s\n",
                st.evaluated, st.agreeing, st.confirmed, st.disagreeing, st.sandbox_seconds
            )
        };
        s.push_str(&if markdown {
            format!(
                "\nOpaque without the evaluator: {}; of those read with it (computed code that shows everything it can run): {} ({} of class obfuscated without it)\n",
                st.plain_opaque, st.opened, st.opened_obfuscated
            )
        } else {
            format!(
                "  opaque without the evaluator: {}, of those read with it: {} ({} of class obfuscated without it)\n",
                st.plain_opaque, st.opened, st.opened_obfuscated
            )
        });
        let groups = st
            .by_reason
            .iter()
            .map(|(r, c)| ("disagreement", r.as_str(), c))
            .chain(
                st.exclusions
                    .iter()
                    .map(|(x, c)| ("excluded", x.as_str(), c)),
            );
        for (kind, name, count) in groups {
            s.push_str(&if markdown {
                format!("\n- {kind} `{name}`: {} commands\n", count.commands)
            } else {
                format!("  {kind} {name}: {} commands\n", count.commands)
            });
            let shown = if kind == "disagreement" { EXAMPLES } else { 3 };
            for e in count.examples.iter().take(shown) {
                s.push_str(&if markdown {
                    format!(
                        "  - `{:?}`: `{}`; evaluated `{:?}`\n",
                        e.command,
                        e.what.join(" | "),
                        e.evaluated
                    )
                } else {
                    format!(
                        "    {}:{}  {:?}\n      {}\n      evaluated: {:?}\n",
                        e.source,
                        e.line,
                        e.command,
                        e.what.join(" | "),
                        e.evaluated
                    )
                });
            }
        }
        s
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "oracle: {} commands, {} ran, {} timed out, {} not run\n\
             agreed: {}  held by opacity: {}  hard violations: {}  softer disagreements: {}\n\
             time: sandbox {:.1}s, analysis {:.1}s, {:.0} commands/s\n",
            self.commands,
            self.ran,
            self.timed_out,
            self.not_run,
            self.agreed,
            self.held_by_opacity,
            self.hard,
            self.soft,
            self.sandbox_seconds,
            self.analysis_seconds,
            self.throughput
        );
        s.push_str(&self.strict_text(false));
        for (reason, st) in &self.by_reason {
            s.push_str(&format!(
                "\n{}: {} hard, {} soft\n",
                reason.as_str(),
                st.hard,
                st.soft
            ));
            for (kind, ex) in [("hard", &st.hard_examples), ("soft", &st.soft_examples)] {
                for e in ex.iter().take(3) {
                    s.push_str(&format!(
                        "  [{kind}] {}:{}  {:?}\n      bash did: {}\n      analysis: {} {}{}, parts {:?}{}\n",
                        e.source,
                        e.line,
                        e.command,
                        e.did.join(" | "),
                        e.said.decision.as_str(),
                        e.said.class.as_str(),
                        if e.said.fallback { " (fallback)" } else { "" },
                        e.said.parts,
                        if e.said.always_patterns.is_empty() {
                            String::new()
                        } else {
                            format!(", always {:?}", e.said.always_patterns)
                        }
                    ));
                }
            }
        }
        s
    }

    pub fn markdown(&self) -> String {
        let mut s = format!(
            "| commands | ran | timed out | not run | agreed | held by opacity | hard | soft | commands/s |\n\
             |---:|---:|---:|---:|---:|---:|---:|---:|---:|\n\
             | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} |\n",
            self.commands,
            self.ran,
            self.timed_out,
            self.not_run,
            self.agreed,
            self.held_by_opacity,
            self.hard,
            self.soft,
            self.throughput
        );
        for (reason, st) in &self.by_reason {
            s.push_str(&format!(
                "\n### `{}`: {} hard, {} soft\n\n",
                reason.as_str(),
                st.hard,
                st.soft
            ));
            for (kind, ex) in [("hard", &st.hard_examples), ("soft", &st.soft_examples)] {
                for e in ex.iter().take(3) {
                    s.push_str(&format!(
                        "- {kind}: `{:?}` — bash ran `{}`; analysis: {} ({}{}), parts `{:?}`\n",
                        e.command,
                        e.did.join(" | "),
                        e.said.decision.as_str(),
                        e.said.class.as_str(),
                        if e.said.fallback { ", fallback" } else { "" },
                        e.said.parts
                    ));
                }
            }
        }
        s.push_str(&self.strict_text(true));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strict disagreement fails the run like a hard violation; exclusions and soft
    /// disagreements do not.
    #[test]
    fn a_strict_disagreement_fails_the_run() {
        let mut r = Report::default();
        assert!(r.passes());
        r.soft = 3;
        r.strict.exclusions.insert(
            StrictExclusion::OpenCode,
            StrictCount {
                commands: 2,
                examples: Vec::new(),
            },
        );
        assert!(r.passes());
        r.strict.disagreeing = 1;
        assert!(!r.passes());
        r.strict.disagreeing = 0;
        r.hard = 1;
        assert!(!r.passes());
    }
}
