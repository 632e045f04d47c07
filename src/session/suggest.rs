//! Suggestions learned from history: which "always" rules would have spared the
//! prompts a person answered "yes" again and again.
//!
//! Reads the calls of session logs (what was asked, what the person did) and proposes
//! rule sets made the way an "always" grant makes them (`decide::grant_rules` on a
//! pattern the call itself offered), so a suggestion is never wider than the panel's
//! own "always" could have been: a call the analyzer could not fully read, or whose
//! rules forbid generalizing, offers no pattern and seeds nothing. Each suggestion is
//! then measured against every past call of its project with the real rule matcher:
//! how many approved prompts it would have allowed, and whether it would have allowed
//! any call the person refused (then it is withheld, not offered). Writing one is the
//! caller's business (`grants::blocking_append_rules`).

use std::collections::BTreeMap;

use crate::model::rule::{Action, PermissionRule};
use crate::policy::decide::{self, CallDecision};
use crate::policy::rules::RuleSet;
use crate::session::{ApprovedBy, DeniedBy, Event, EventKind, GrantScope};

/// What the person did with a call we asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Approved once, in our panel or in the host's own dialog.
    Approved,
    /// Approved with "always": a rule was written then.
    ApprovedAlways,
    /// Refused, in our panel or the host's, or dropped with a refused call of its turn.
    Refused,
    /// Nothing a person did is on record (decided by the rules, still pending, failed).
    Unknown,
}

/// One asked call from a session log.
#[derive(Debug, Clone)]
pub struct PastCall {
    pub project_root: String,
    /// RFC 3339 UTC, when it was requested.
    pub requested_at: String,
    pub decision: CallDecision,
    pub outcome: Outcome,
}

/// Asked calls of one session, in log order, with what the person did. Calls the rules
/// decided (allow, contain, deny) are left out: no prompt was shown.
pub fn past_calls(events: &[Event]) -> Vec<PastCall> {
    /// What the log said so far of one call: (project root, requested at), decision,
    /// outcome.
    type Seen = (Option<(String, String)>, Option<CallDecision>, Outcome);
    let mut order: Vec<String> = Vec::new();
    let mut calls: BTreeMap<String, Seen> = BTreeMap::new();
    for ev in events {
        let id = ev.kind.call_id().to_string();
        if id.is_empty() {
            continue;
        }
        let entry = calls.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            (None, None, Outcome::Unknown)
        });
        match &ev.kind {
            EventKind::ToolRequested { project_root, .. } => {
                entry.0 = Some((project_root.clone(), ev.at.clone()));
            }
            EventKind::PermissionRequested { decision, .. } => {
                entry.1 = serde_json::from_value::<CallDecision>(decision.clone()).ok();
            }
            EventKind::PermissionGranted {
                scope: GrantScope::Always,
                ..
            } => entry.2 = Outcome::ApprovedAlways,
            EventKind::ToolApproved {
                by: ApprovedBy::User | ApprovedBy::Host,
                ..
            } if entry.2 != Outcome::ApprovedAlways => entry.2 = Outcome::Approved,
            EventKind::PermissionDenied {
                by: DeniedBy::User | DeniedBy::Turn | DeniedBy::Host,
                ..
            } => entry.2 = Outcome::Refused,
            _ => {}
        }
    }
    order
        .into_iter()
        .filter_map(|id| {
            let (requested, decision, outcome) = calls.remove(&id)?;
            let (project_root, requested_at) = requested?;
            let decision = decision.filter(|d| d.decision == Action::Ask)?;
            Some(PastCall {
                project_root,
                requested_at,
                decision,
                outcome,
            })
        })
        .collect()
}

/// Rules that would have spared past prompts.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub project_root: String,
    /// What applying it writes: project rules, action allow, as an "always" grant.
    pub rules: Vec<PermissionRule>,
    /// Prompts the person approved (once) that these rules would have allowed.
    pub saved: usize,
    /// A few of those calls, in a few words each.
    pub examples: Vec<String>,
    /// When the last of them was requested.
    pub last: String,
}

/// The suggestions, most prompts saved first, and how many rule sets were withheld
/// because they would also have allowed a call the person refused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Suggestions {
    pub offered: Vec<Suggestion>,
    pub withheld: usize,
}

/// Proposes rule sets that would have allowed at least `min_saved` prompts the person
/// approved, per project.
pub fn suggest(calls: &[PastCall], min_saved: usize) -> Suggestions {
    let mut by_root: BTreeMap<&str, Vec<&PastCall>> = BTreeMap::new();
    for c in calls {
        by_root.entry(&c.project_root).or_default().push(c);
    }
    let mut out = Suggestions::default();
    for (root, calls) in by_root {
        let mut candidates: Vec<Vec<PermissionRule>> = Vec::new();
        for c in calls.iter().filter(|c| c.outcome == Outcome::Approved) {
            for pattern in &c.decision.always_patterns {
                let Ok(mut rules) = decide::grant_rules(&c.decision, pattern) else {
                    continue;
                };
                rules.sort_by(|a, b| (&a.capability, &a.pattern).cmp(&(&b.capability, &b.pattern)));
                if !candidates.contains(&rules) {
                    candidates.push(rules);
                }
            }
        }
        let mut found: Vec<Suggestion> = Vec::new();
        for rules in candidates {
            let set = RuleSet::with_root(rules.clone(), Some(std::path::Path::new(root)));
            if calls
                .iter()
                .any(|c| c.outcome == Outcome::Refused && would_allow(&set, &c.decision, false))
            {
                out.withheld += 1;
                continue;
            }
            let spared: Vec<usize> = calls
                .iter()
                .enumerate()
                .filter(|(_, c)| c.outcome == Outcome::Approved)
                .filter(|(_, c)| would_allow(&set, &c.decision, true))
                .map(|(i, _)| i)
                .collect();
            if spared.len() < min_saved.max(1) {
                continue;
            }
            let mut examples: Vec<String> = Vec::new();
            for &i in &spared {
                if let Some(c) = calls.get(i)
                    && examples.len() < 3
                    && !examples.contains(&c.decision.summary)
                {
                    examples.push(c.decision.summary.clone());
                }
            }
            let last = spared
                .iter()
                .filter_map(|&i| calls.get(i).map(|c| c.requested_at.clone()))
                .max()
                .unwrap_or_default();
            found.push(Suggestion {
                project_root: root.to_string(),
                rules,
                saved: spared.len(),
                examples,
                last,
            });
        }
        out.offered.extend(found);
    }
    out.offered.sort_by(|a, b| {
        b.saved
            .cmp(&a.saved)
            .then_with(|| a.project_root.cmp(&b.project_root))
            .then_with(|| describe(&a.rules).cmp(&describe(&b.rules)))
    });
    out
}

/// Whether `set` would have allowed every asking request of `decision`. For a prompt
/// the person approved (`strict`), a request capped by a reason (a protected path, a
/// secret, an unread command) could not have been lifted by a rule, so it counts as not
/// allowed; for a refused call every asking request whose subject the rules match
/// counts, so that a suggestion is withheld on any doubt.
fn would_allow(set: &RuleSet, decision: &CallDecision, strict: bool) -> bool {
    let mut asking = decision
        .requests
        .iter()
        .filter(|e| e.decision == Action::Ask)
        .peekable();
    asking.peek().is_some()
        && asking.all(|e| {
            (!strict || e.reasons.is_empty())
                && set.find(e.request.capability, &e.request.subject).is_some()
        })
}

/// The rules of a suggestion in one line: `process.execute "npm test *"`.
pub fn describe(rules: &[PermissionRule]) -> String {
    rules
        .iter()
        .map(|r| format!("{} \"{}\"", r.capability, r.pattern))
        .collect::<Vec<_>>()
        .join(" + ")
}
