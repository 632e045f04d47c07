//! `khaelor-perm log [SESSION]`: a session's calls as a table (what was called, our
//! decision, the rules that decided, and what happened after: approved by the policy,
//! the person in our panel, or the person in the host's own dialog; denied by whom).
//!
//! Reads the session log the hooks and the service write (`crate::session`); writes
//! nothing. Without SESSION, the most recently written log. Exit statuses: 0 printed,
//! 2 no such session or no state directory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

use super::print_out;
use crate::policy::rules::PermissionRule;
use crate::presentation::messages::terminal_safe;
use crate::session::{Event, EventKind, Session};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  khaelor-perm log\n  khaelor-perm log 3f2a… --json")]
pub struct Args {
    /// The session id [default: the most recently written session].
    #[arg(value_name = "SESSION")]
    pub session: Option<String>,
    /// Where session logs live [default: as `serve`].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// One JSON object per call instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// One call as the table shows it.
#[derive(Debug, Default, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub call_id: String,
    pub tool: String,
    pub what: String,
    pub decision: String,
    pub outcome: String,
    pub rules: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    match rows(&args) {
        Ok((id, rows)) => {
            if args.json {
                let mut out = String::new();
                for r in &rows {
                    out.push_str(&serde_json::to_string(r).unwrap_or_default());
                    out.push('\n');
                }
                print_out(&out);
            } else {
                print_out(&terminal_safe(&table(&id, &rows)));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", terminal_safe(&e));
            ExitCode::from(2)
        }
    }
}

fn rows(args: &Args) -> Result<(String, Vec<Row>), String> {
    let state = super::state_dir(args.state_dir.as_deref())?;
    let dir = state.join("sessions");
    let id = match &args.session {
        Some(s) => s.clone(),
        None => latest(&dir)?,
    };
    let session = Session::blocking_open(&dir, &id).map_err(|e| e.to_string())?;
    if !session.exists() {
        return Err(format!("no session `{id}` in {}", dir.display()));
    }
    let (events, _warnings) = session.blocking_events().map_err(|e| e.to_string())?;
    Ok((id, calls(&events)))
}

/// The id of the most recently written log in `dir`.
fn latest(dir: &Path) -> Result<String, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("`{}`: {e}", dir.display()))?;
    rd.filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.extension()? == "jsonl").then_some(())?;
            Some((e.metadata().ok()?.modified().ok()?, stem))
        })
        .max()
        .map(|(_, id)| id)
        .ok_or_else(|| format!("no session logs in {}", dir.display()))
}

/// The rules named in a list of evaluated requests.
fn rules_of(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in v.as_array().into_iter().flatten() {
        let Some(rule) = r.get("rule").filter(|x| !x.is_null()) else {
            continue;
        };
        if let Ok(rule) = serde_json::from_value::<PermissionRule>(rule.clone()) {
            let d = rule.describe();
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// What a call asked for, in a few words: a command, a path, a URL, else the input.
fn what(input: &Value) -> String {
    let host = input.get("hostInput").unwrap_or(input);
    for key in ["command", "cmd", "file_path", "path", "url", "filePath"] {
        if let Some(s) = host.get(key).and_then(Value::as_str) {
            return s.to_string();
        }
    }
    let s = host.to_string();
    s.chars().take(80).collect()
}

fn by_name(v: &impl serde::Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub fn calls(events: &[Event]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for ev in events {
        match &ev.kind {
            EventKind::ToolRequested {
                call_id,
                tool,
                input,
                ..
            } => rows.push(Row {
                call_id: call_id.clone(),
                tool: tool.clone(),
                what: what(input),
                decision: "requested".to_string(),
                ..Row::default()
            }),
            EventKind::PermissionRequested { call_id, decision } => {
                if let Some(r) = rows.iter_mut().find(|r| r.call_id == *call_id) {
                    r.decision = "ask".to_string();
                    r.outcome = "pending".to_string();
                    r.rules = rules_of(decision.get("requests").unwrap_or(&Value::Null));
                }
            }
            EventKind::ToolApproved {
                call_id,
                by,
                decisions,
                ..
            } => settle(&mut rows, call_id, "allow", "approved", by, Some(decisions)),
            EventKind::PermissionDenied {
                call_id,
                by,
                decisions,
                ..
            } => settle(&mut rows, call_id, "deny", "denied", by, decisions.as_ref()),
            _ => {}
        }
    }
    rows
}

/// Records how call `call_id` ended: `decision` where the policy had not decided it yet,
/// the outcome and who settled it, and the rules of the final decisions when there are.
fn settle(
    rows: &mut [Row],
    call_id: &str,
    decision: &str,
    outcome: &str,
    by: &impl serde::Serialize,
    decisions: Option<&Value>,
) {
    let Some(r) = rows.iter_mut().find(|r| r.call_id == call_id) else {
        return;
    };
    if r.decision == "requested" {
        r.decision = decision.to_string();
    }
    r.outcome = format!("{outcome} by {}", by_name(by));
    let more = decisions.map(rules_of).unwrap_or_default();
    if !more.is_empty() {
        r.rules = more;
    }
}

fn table(id: &str, rows: &[Row]) -> String {
    let mut out = format!("session {id}: {} call(s)\n", rows.len());
    let w_what = rows
        .iter()
        .map(|r| r.what.chars().count().min(60))
        .max()
        .unwrap_or(4)
        .max(4);
    let w_tool = rows
        .iter()
        .map(|r| r.tool.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<w_tool$}  {:<w_what$}  {:<8}  {:<24}  rules\n",
        "tool", "call", "decision", "outcome"
    ));
    for r in rows {
        let mut what: String = r.what.chars().take(60).collect();
        if r.what.chars().count() > 60 {
            what.pop();
            what.push('…');
        }
        let what = what.replace('\n', " ");
        let mut rules = r.rules.iter();
        out.push_str(&format!(
            "{:<w_tool$}  {:<w_what$}  {:<8}  {:<24}  {}\n",
            r.tool,
            what,
            r.decision,
            r.outcome,
            rules.next().map(String::as_str).unwrap_or("-")
        ));
        for more in rules {
            out.push_str(&format!(
                "{:<w_tool$}  {:<w_what$}  {:<8}  {:<24}  {more}\n",
                "", "", "", ""
            ));
        }
    }
    out
}
