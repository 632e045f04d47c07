//! A decision told step by step, for a person asking "why?": how the command was read,
//! its parts and where each runs, the floor, each capability request with every rule
//! that names its capability and why that rule did or did not match, what capped the
//! result, why an "always" pattern was or was not offered, and the decision.
//!
//! Nothing here decides: the decision is `decide::decide_with`'s, given in full; the
//! rule trace is `RuleSet::trace` over the same layered rules, so it cannot drift from
//! what matched. Wording it is the front end's job (`cli::explain`).

use serde::Serialize;

use crate::model::vocab::{Analysis, Capability, HardlineHit, Reason, Verdict};
use crate::policy::config::Policy;
use crate::policy::decide::CallDecision;
use crate::policy::rules::{Action, PermissionRule, RuleMatch};
use crate::tools::MappedCall;

/// The whole trace of one decision.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub tool: String,
    /// How the command was read: engine, fallback and why, class, parts with their
    /// working directories (bash and process_start only).
    pub reading: Option<Analysis>,
    /// The hardline floor rule the call hit, if any (it denies whatever the rules say).
    pub floor: Option<HardlineHit>,
    pub requests: Vec<RequestTrace>,
    pub always: AlwaysTrace,
    /// The decision, exactly as `check` and `/v1/evaluate` give it.
    pub decision: CallDecision,
}

/// One capability request and how it was decided.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestTrace {
    pub capability: Capability,
    pub subject: String,
    /// The analysis' verdict on a command (what the presets' `when` rules match on).
    pub verdict: Option<Verdict>,
    /// Every layered rule naming this capability, in evaluation order (the last match
    /// wins), with why it did or did not match.
    pub rules: Vec<RuleConsidered>,
    /// The rule that decided after every layer: the managed ceiling, a host rule held
    /// back, and the caps below may replace the layered winner.
    pub rule: Option<PermissionRule>,
    /// Why the decision is stricter than that rule alone, in the order they applied.
    pub reasons: Vec<Reason>,
    pub decision: Action,
    /// The "always" patterns the analysis offered for this request.
    pub offered_by_analysis: Vec<String>,
    /// What the decision kept of them.
    pub always_patterns: Vec<String>,
}

/// One rule considered for a request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleConsidered {
    /// The rule's position as `khaelor-perm rules` numbers it (from 1).
    pub position: usize,
    pub rule: PermissionRule,
    /// For `overridden`, `by` is also a position from 1.
    #[serde(rename = "match")]
    pub outcome: RuleMatch,
}

/// Why the call offers an "always" pattern or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AlwaysWhy {
    /// The panel's `A` persists the first pattern.
    Offered,
    /// The call does not ask, so there is nothing to grant.
    NotAsking,
    /// The analysis offered no pattern for an asking request: it could not read the
    /// command fully (a fallback, obfuscation, an unknown value) or it is compound.
    NotReadFully,
    /// The analysis offered patterns but the decision withheld them: an explicit or
    /// managed ask, a cap (protected path, secret, broken config, unknown path), the
    /// floor, or `alwaysScope: exact` on a subject with a `*`.
    Withheld,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AlwaysTrace {
    pub why: AlwaysWhy,
    pub patterns: Vec<String>,
}

/// Explains `decision`, which `decide` made for `call` under `policy`.
pub fn explain(policy: &Policy, call: &MappedCall, decision: &CallDecision) -> Explanation {
    let rules = policy.rules();
    let requests: Vec<RequestTrace> = decision
        .requests
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let verdict = (e.request.capability == Capability::ProcessExecute)
                .then_some(e.request.verdict)
                .flatten();
            let considered = policy
                .trace(e.request.capability, &e.request.subject, verdict)
                .into_iter()
                .filter_map(|(at, outcome)| {
                    let outcome = match outcome {
                        RuleMatch::Overridden { by } => RuleMatch::Overridden { by: by + 1 },
                        other => other,
                    };
                    Some(RuleConsidered {
                        position: at + 1,
                        rule: rules.get(at)?.clone(),
                        outcome,
                    })
                })
                .collect();
            RequestTrace {
                capability: e.request.capability,
                subject: e.request.subject.clone(),
                verdict,
                rules: considered,
                rule: e.rule.clone(),
                reasons: e.reasons.clone(),
                decision: e.decision,
                offered_by_analysis: call
                    .requests
                    .get(i)
                    .map(|r| r.always_patterns.clone())
                    .unwrap_or_default(),
                always_patterns: e.request.always_patterns.clone(),
            }
        })
        .collect();
    let asking: Vec<&RequestTrace> = requests
        .iter()
        .filter(|r| r.decision == Action::Ask)
        .collect();
    let why = if decision.decision != Action::Ask {
        AlwaysWhy::NotAsking
    } else if !decision.always_patterns.is_empty() {
        AlwaysWhy::Offered
    } else if asking.iter().any(|r| r.offered_by_analysis.is_empty()) {
        AlwaysWhy::NotReadFully
    } else {
        AlwaysWhy::Withheld
    };
    Explanation {
        tool: call.tool.clone(),
        reading: call.analysis.clone(),
        floor: call.hardline.clone(),
        requests,
        always: AlwaysTrace {
            why,
            patterns: decision.always_patterns.clone(),
        },
        decision: decision.clone(),
    }
}
