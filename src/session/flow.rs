//! The call flow of seed §5 as events: what a decision, a user's grant and a user's
//! denial leave in the session log, and the model-facing text of a denial.
//!
//! Owns only the shape of those event sequences, so the service (`http::sessions`),
//! the hook routes (`http::hooks`) and the per-call hook (`cli::hook`, through
//! `hosts::events`) record the same flow. It does not decide (`policy::decide` does),
//! write the log (`session` does) or persist grants (`session::grants` does); the
//! callers hold the session lock around it.

use serde_json::Value;

use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;
use crate::presentation::messages;
use crate::session::grants::PersistedRule;
use crate::session::{ApprovedBy, CallRecord, CallStatus, DeniedBy, EventKind, GrantScope};

/// The model-facing text of a deny: the seed §5.4 message the policy wrote, or the
/// user-decline form.
pub fn deny_text(d: &CallDecision) -> String {
    d.message
        .clone()
        .unwrap_or_else(|| messages::user_deny_message(&d.summary, None))
}

/// What follows `ToolRequested` once the policy decided: `ToolApproved` (allow; for
/// contain, by `contained` with the sandbox profile),
/// `PermissionRequested` (ask), or `PermissionDenied` + `ToolFailed` (deny), and the
/// call's status after them.
pub fn decided(
    call_id: &str,
    d: &CallDecision,
) -> Result<(Vec<EventKind>, CallStatus), serde_json::Error> {
    let call_id = call_id.to_string();
    Ok(match d.decision {
        Action::Contain => (
            vec![EventKind::ToolApproved {
                call_id,
                by: ApprovedBy::Contained,
                decisions: serde_json::to_value(&d.requests)?,
                resolved_by: None,
                contained: d
                    .containment
                    .as_ref()
                    .map(serde_json::to_value)
                    .transpose()?,
            }],
            CallStatus::Approved,
        ),
        Action::Allow => (
            vec![EventKind::ToolApproved {
                call_id,
                by: ApprovedBy::Policy,
                decisions: serde_json::to_value(&d.requests)?,
                resolved_by: None,
                contained: None,
            }],
            CallStatus::Approved,
        ),
        Action::Ask => (
            vec![EventKind::PermissionRequested {
                call_id,
                decision: serde_json::to_value(d)?,
            }],
            CallStatus::Pending,
        ),
        Action::Deny => (
            vec![
                EventKind::PermissionDenied {
                    call_id: call_id.clone(),
                    by: DeniedBy::Policy,
                    decisions: Some(serde_json::to_value(&d.requests)?),
                    feedback: None,
                    denied_with: None,
                },
                EventKind::ToolFailed {
                    call_id,
                    message: deny_text(d),
                },
            ],
            CallStatus::Denied,
        ),
    })
}

/// How an "always" grant was written to the project config.
#[derive(Debug, Clone)]
pub struct Persisted {
    pub pattern: String,
    pub rules: Vec<PersistedRule>,
    pub config_file: String,
    /// Why the config could not be updated (the grant then holds for this session only).
    pub error: Option<String>,
    /// The rules go back to the call's waiting hook, which writes them on the agent's
    /// machine: nothing was written here, and they hold for this session.
    pub handed_to_hook: bool,
}

/// A user's grant of a pending call: `PermissionGranted`, then `ToolApproved`. `None`
/// is a grant for this call only.
pub fn granted(
    call_id: &str,
    d: &CallDecision,
    always: Option<&Persisted>,
) -> Result<Vec<EventKind>, serde_json::Error> {
    let granted = match always {
        None => EventKind::PermissionGranted {
            call_id: call_id.to_string(),
            scope: GrantScope::Once,
            pattern: None,
            persisted_rules: Vec::new(),
            persisted: false,
            handed_to_hook: false,
            config_file: None,
            persist_error: None,
        },
        Some(p) => EventKind::PermissionGranted {
            call_id: call_id.to_string(),
            scope: GrantScope::Always,
            pattern: Some(p.pattern.clone()),
            persisted_rules: p.rules.clone(),
            persisted: p.error.is_none() && !p.handed_to_hook,
            handed_to_hook: p.handed_to_hook,
            config_file: Some(p.config_file.clone()),
            persist_error: p.error.clone(),
        },
    };
    Ok(vec![
        granted,
        EventKind::ToolApproved {
            call_id: call_id.to_string(),
            by: ApprovedBy::User,
            decisions: serde_json::to_value(&d.requests)?,
            resolved_by: None,
            contained: None,
        },
    ])
}

/// A waiting hook's call that nobody answered in time, on a host with no prompt of
/// its own: `PermissionDenied` by `timeout`, then `ToolFailed` with `message`.
pub fn timed_out(call_id: &str, message: &str) -> Vec<EventKind> {
    vec![
        EventKind::PermissionDenied {
            call_id: call_id.to_string(),
            by: DeniedBy::Timeout,
            decisions: None,
            feedback: None,
            denied_with: None,
        },
        EventKind::ToolFailed {
            call_id: call_id.to_string(),
            message: message.to_string(),
        },
    ]
}

/// Another pending call that a grant settled (seed §5.2): it now evaluates to allow.
pub fn auto_approved(
    call_id: &str,
    d: &CallDecision,
    granted: &str,
) -> Result<EventKind, serde_json::Error> {
    Ok(EventKind::ToolApproved {
        call_id: call_id.to_string(),
        by: ApprovedBy::AutoResolve,
        decisions: serde_json::to_value(&d.requests)?,
        resolved_by: Some(granted.to_string()),
        contained: None,
    })
}

/// A user's denial of a pending call, with their feedback, and of every other pending
/// call of the same turn (seed §5.2). Returns the events, the message the model reads
/// for this call, and the other calls denied with it, each with its message.
pub fn denied(
    call_id: &str,
    d: &CallDecision,
    feedback: Option<&str>,
    same_turn: &[CallRecord],
) -> (Vec<EventKind>, String, Vec<(String, String)>) {
    let message = messages::user_deny_message(&d.summary, feedback);
    let mut events = vec![
        EventKind::PermissionDenied {
            call_id: call_id.to_string(),
            by: DeniedBy::User,
            decisions: None,
            feedback: feedback.map(str::to_string),
            denied_with: None,
        },
        EventKind::ToolFailed {
            call_id: call_id.to_string(),
            message: message.clone(),
        },
    ];
    let mut also = Vec::new();
    for c in same_turn.iter().filter(|c| c.call_id != call_id) {
        let msg = match c
            .decision
            .clone()
            .and_then(|v: Value| serde_json::from_value::<CallDecision>(v).ok())
        {
            Some(d) => messages::user_deny_message(&d.summary, None),
            None => format!(
                "The user declined to allow: {}. Continue without it, or propose an alternative.",
                c.tool
            ),
        };
        events.push(EventKind::PermissionDenied {
            call_id: c.call_id.clone(),
            by: DeniedBy::Turn,
            decisions: None,
            feedback: None,
            denied_with: Some(call_id.to_string()),
        });
        events.push(EventKind::ToolFailed {
            call_id: c.call_id.clone(),
            message: msg.clone(),
        });
        also.push((c.call_id.clone(), msg));
    }
    (events, message, also)
}
