//! `khaelor-perm suggest`: the "always" rules that would have spared the prompts the
//! person approved again and again, from the session logs (`crate::session::suggest`),
//! with how many past prompts each would have saved; `--apply N` writes one into its
//! project's config exactly as an "always" grant would.
//!
//! Reads every session log in the state directory (what compaction has dropped is
//! gone). Exit statuses: 0 printed or applied, 2 no state directory, a bad `--since`,
//! or a suggestion that does not exist or cannot be written.

use std::path::PathBuf;
use std::process::ExitCode;

use super::print_out;
use crate::presentation::messages::terminal_safe;
use crate::session::Session;
use crate::session::grants::{PersistedRule, blocking_append_rules};
use crate::session::suggest::{self, PastCall, Suggestions};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  khaelor-perm suggest\n  khaelor-perm suggest --root . --since 2026-11-01\n  khaelor-perm suggest --apply 1"
)]
pub struct Args {
    /// Only this project's calls (its root directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Only calls requested at or after this date (`2026-11-01`, UTC) or RFC 3339 time.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Offer a rule only when it would have saved at least this many prompts.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min: usize,
    /// Write suggestion N (as listed) into its project's `.khaelor/config.json`.
    #[arg(long, value_name = "N")]
    pub apply: Option<usize>,
    /// Where session logs and trust records live [default: as `serve`].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The suggestions as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    match go(&args) {
        Ok(text) => {
            print_out(&text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", terminal_safe(&e));
            ExitCode::from(2)
        }
    }
}

fn go(args: &Args) -> Result<String, String> {
    let state = super::state_dir(args.state_dir.as_deref())?;
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let root = match &args.root {
        Some(r) => Some(
            std::fs::canonicalize(r)
                .map_err(|e| format!("--root `{}`: {e}", r.display()))?
                .display()
                .to_string(),
        ),
        None => None,
    };
    let calls: Vec<PastCall> = read_calls(&state.join("sessions"))?
        .into_iter()
        .filter(|c| root.as_ref().is_none_or(|r| &c.project_root == r))
        .filter(|c| since.is_none_or(|s| timestamp(&c.requested_at).is_some_and(|t| t >= s)))
        .collect();
    let found = suggest::suggest(&calls, args.min);
    match args.apply {
        Some(n) => apply(&state, &found, n),
        None if args.json => Ok(json(&found)),
        None => Ok(table(&calls, &found)),
    }
}

/// The asked calls of every session log under `dir`, oldest log first.
fn read_calls(dir: &std::path::Path) -> Result<Vec<PastCall>, String> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("`{}`: {e}", dir.display())),
    };
    let mut ids: Vec<String> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "jsonl").then_some(())?;
            Some(p.file_stem()?.to_str()?.to_string())
        })
        .filter(|id| crate::session::valid_id(id))
        .collect();
    ids.sort();
    let mut out = Vec::new();
    for id in ids {
        let session = Session::blocking_open(dir, &id).map_err(|e| e.to_string())?;
        let (events, _warnings) = session.blocking_events().map_err(|e| e.to_string())?;
        out.extend(suggest::past_calls(&events));
    }
    Ok(out)
}

fn apply(state: &std::path::Path, found: &Suggestions, n: usize) -> Result<String, String> {
    let Some(s) = n.checked_sub(1).and_then(|i| found.offered.get(i)) else {
        return Err(format!(
            "no suggestion {n}: there are {} (run `khaelor-perm suggest` to list them)",
            found.offered.len()
        ));
    };
    let rules: Vec<PersistedRule> = s.rules.iter().map(PersistedRule::of).collect();
    let trust = crate::policy::trust::TrustStore::new(state);
    let done = blocking_append_rules(std::path::Path::new(&s.project_root), &rules, Some(&trust))
        .map_err(|e| e.to_string())?;
    let mut out = format!("{}:\n", done.file.display());
    for r in &done.added {
        out.push_str(&format!(
            "  added    {} \"{}\" {}\n",
            r.capability, r.pattern, r.action
        ));
    }
    for r in &done.already_present {
        out.push_str(&format!(
            "  present  {} \"{}\" {}\n",
            r.capability, r.pattern, r.action
        ));
    }
    Ok(out)
}

fn table(calls: &[PastCall], found: &Suggestions) -> String {
    let approved = calls
        .iter()
        .filter(|c| c.outcome == suggest::Outcome::Approved)
        .count();
    let mut out = format!(
        "{} asked calls in the session logs, {approved} approved once by a person.\n",
        calls.len()
    );
    if found.offered.is_empty() {
        out.push_str("No rule would have saved enough prompts to suggest.\n");
    } else {
        out.push('\n');
    }
    for (i, s) in found.offered.iter().enumerate() {
        out.push_str(&format!(
            "{:>3}  saves {:>3} prompt{}  {}\n     in {}  (last {})\n",
            i + 1,
            s.saved,
            if s.saved == 1 { " " } else { "s" },
            suggest::describe(&s.rules),
            s.project_root,
            s.last.get(..10).unwrap_or(&s.last),
        ));
        for e in &s.examples {
            out.push_str(&format!("     e.g. {e}\n"));
        }
    }
    if found.withheld > 0 {
        out.push_str(&format!(
            "\nWithheld: {} rule set{} that would also have allowed a call a person refused.\n",
            found.withheld,
            if found.withheld == 1 { "" } else { "s" }
        ));
    }
    if !found.offered.is_empty() {
        out.push_str(
            "\nWrite one into its project's .khaelor/config.json: khaelor-perm suggest --apply N\n",
        );
    }
    out
}

fn json(found: &Suggestions) -> String {
    let offered: Vec<serde_json::Value> = found
        .offered
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "n": i + 1,
                "projectRoot": s.project_root,
                "rules": s.rules,
                "saved": s.saved,
                "examples": s.examples,
                "last": s.last,
            })
        })
        .collect();
    let v = serde_json::json!({ "suggestions": offered, "withheld": found.withheld });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}

/// `--since`: a date (from its start, UTC) or an RFC 3339 time, as Unix seconds.
fn parse_since(s: &str) -> Result<i64, String> {
    if let Ok(d) = s.parse::<jiff::civil::Date>() {
        return d
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp().as_second())
            .map_err(|e| format!("--since `{s}`: {e}"));
    }
    timestamp(s).ok_or_else(|| {
        format!("--since `{s}`: expected a date (`2026-11-01`) or an RFC 3339 time (`2026-11-01T09:00:00Z`)")
    })
}

fn timestamp(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}
