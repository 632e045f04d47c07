//! One oracle run and its report: every input through the sandbox and the analysis,
//! judged, counted, and grouped by reason with examples; rendered as text, markdown or
//! JSON.
//!
//! Owns the aggregate and its rendering. Decisions are under the built-in default rules
//! only (no user, project or managed config is read), like `compare`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::compare::{Reason, Said, judge};
use super::inputs::Input;
use super::sandbox::{Sandbox, SandboxError};
use super::{Observed, RunStatus};
use crate::model::vocab::AnalysisContext;
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

impl Report {
    /// The done criterion: no hard violation.
    pub fn passes(&self) -> bool {
        self.hard == 0
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
        s
    }
}
