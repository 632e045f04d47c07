//! One oracle run and its report: every input through the sandbox and the analysis,
//! judged, counted, and grouped by reason with examples; rendered as text, markdown or
//! JSON.
//!
//! Owns the aggregate and its rendering. Decisions are under the built-in default rules
//! only (no user, project or managed config is read), like `compare`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::compare::{Reason, Said, StrictReason, judge, strict};
use super::inputs::Input;
use super::sandbox::{Sandbox, SandboxError};
use super::{Observed, RunStatus};
use crate::config::Policy;
use crate::tools::MAX_COMMAND_BYTES;
use crate::vocab::AnalysisContext;

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

/// One command where bash's run and the evaluator's code disagree.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrictExample {
    pub source: String,
    pub line: usize,
    pub command: String,
    pub reason: StrictReason,
    /// The evaluated commands not executed, or the executed argvs not evaluated.
    pub what: Vec<String>,
    /// Each evaluated code entry.
    pub evaluated: Vec<String>,
}

/// The strict check of the static evaluator (issue 9, `compare::strict`).
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
    pub by_reason: BTreeMap<StrictReason, usize>,
    pub examples: Vec<StrictExample>,
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

/// Runs every input and judges it.
pub fn run(
    sandbox: &Sandbox,
    inputs: &[Input],
    progress: &(dyn Fn(usize) + Sync),
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
    let observed = sandbox.run(&runnable, progress)?;
    let sandbox_time = t.elapsed();
    let t = Instant::now();
    let mut report = Report {
        commands: inputs.len(),
        ..Report::default()
    };
    for (input, obs) in inputs.iter().zip(&observed) {
        add(&mut report, input, obs, &ctx, &policy);
    }
    let analysis_time = t.elapsed();
    report.sandbox_seconds = sandbox_time.as_secs_f64();
    report.analysis_seconds = analysis_time.as_secs_f64();
    let total = (sandbox_time + analysis_time).max(Duration::from_millis(1));
    report.throughput = inputs.len() as f64 / total.as_secs_f64();
    Ok(report)
}

fn add(report: &mut Report, input: &Input, obs: &Observed, ctx: &AnalysisContext, policy: &Policy) {
    match obs.status {
        RunStatus::Unrunnable => {
            report.not_run += 1;
            return;
        }
        RunStatus::TimedOut => report.timed_out += 1,
        RunStatus::Ran => report.ran += 1,
    }
    add_strict(report, input, obs, ctx);
    let analysis = crate::analysis::analyze(&input.command, ctx);
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

/// The strict check of one command, when the evaluator computed code for it.
fn add_strict(report: &mut Report, input: &Input, obs: &Observed, ctx: &AnalysisContext) {
    let Some(codes) = crate::analysis::ast::evaluated_code(&input.command, ctx) else {
        return;
    };
    let st = &mut report.strict;
    st.evaluated += 1;
    let v = strict(&codes, obs);
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
        *st.by_reason.entry(r).or_default() += 1;
        if st.examples.len() < EXAMPLES * 2 {
            st.examples.push(StrictExample {
                source: input.source.clone(),
                line: input.line,
                command: input.command.clone(),
                reason: r,
                what: v
                    .findings
                    .iter()
                    .filter(|f| f.reason == r)
                    .map(|f| f.what.clone())
                    .collect(),
                evaluated: codes.iter().map(|c| c.code.clone()).collect(),
            });
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
                 | evaluated | agreeing | confirmed by an execution | disagreeing |\n\
                 |---:|---:|---:|---:|\n| {} | {} | {} | {} |\n",
                st.evaluated, st.agreeing, st.confirmed, st.disagreeing
            )
        } else {
            format!(
                "evaluator (strict): {} evaluated, {} agreeing ({} confirmed by an execution), {} disagreeing\n",
                st.evaluated, st.agreeing, st.confirmed, st.disagreeing
            )
        };
        for (r, n) in &st.by_reason {
            s.push_str(&format!(
                "{}{}: {n}\n",
                if markdown { "\n- " } else { "  " },
                r.as_str()
            ));
        }
        for e in st.examples.iter().take(EXAMPLES) {
            s.push_str(&if markdown {
                format!(
                    "- `{:?}` — {}: `{}`; evaluated `{:?}`\n",
                    e.command,
                    e.reason.as_str(),
                    e.what.join(" | "),
                    e.evaluated
                )
            } else {
                format!(
                    "  [{}] {}:{}  {:?}\n      {}\n      evaluated: {:?}\n",
                    e.reason.as_str(),
                    e.source,
                    e.line,
                    e.command,
                    e.what.join(" | "),
                    e.evaluated
                )
            });
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
