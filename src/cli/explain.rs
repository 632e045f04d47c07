//! `khaelor-perm explain`: one decision as a trace a person can follow (how the command
//! was read, its parts, the floor, each request with the rules considered and why they
//! did or did not match, what capped it, why "always" was or was not offered, the
//! decision). The trace is `policy::explain`'s; this file reads the flags (as `check`)
//! and words it. `--json` prints the `Explanation` as `/v1/explain` returns it.
//!
//! Exit statuses: as `check` (0 allow, 3 ask, 4 deny, 5 contain, 2 usage or input error).

use std::process::ExitCode;

use super::check::{self, fail};
use super::print_out;
use crate::model::vocab::Analysis;
use crate::policy::explain::{AlwaysWhy, Explanation, RequestTrace, explain};
use crate::policy::rules::{Action, RuleMatch};
use crate::presentation::messages::{reason_note, terminal_safe};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: as `check`: 0 allow, 3 ask, 4 deny, 5 contain, 2 usage or input error.\n\n\
Examples:\n  khaelor-perm explain -- 'git status && rm -rf build'\n  \
khaelor-perm explain --all --tool read --input '{\"path\":\".env\"}'"
)]
#[group(id = "explain")]
pub struct Args {
    #[command(flatten)]
    pub call: check::Args,
    /// Also list the rules whose pattern or condition does not match.
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: Args) -> ExitCode {
    let (call, ctx, policy) = match check::prepare(&args.call) {
        Ok(p) => p,
        Err(e) => return fail(args.call.json, &e),
    };
    let decision = check::decide(&args.call, &call, &ctx, &policy);
    let exit = check::exit_for(decision.decision);
    let e = explain(&policy, &call, &decision);
    if args.call.json {
        match serde_json::to_string_pretty(&e) {
            Ok(s) => print_out(&format!("{s}\n")),
            Err(err) => eprintln!("error: cannot print the explanation as JSON: {err}"),
        }
    } else {
        print_out(&terminal_safe(&render(&e, args.all)));
    }
    exit
}

/// The trace in words, top to bottom.
pub fn render(e: &Explanation, all: bool) -> String {
    let mut out = format!("Tool: {}\n", e.tool);
    if let Some(a) = &e.reading {
        reading(&mut out, a);
    }
    match &e.floor {
        Some(hit) => out.push_str(&format!(
            "Floor: the hardline rule `{}` matches `{}`: denied, whatever the rules say.\n",
            hit.rule, hit.rendering
        )),
        None => out.push_str("Floor: no hardline rule matches.\n"),
    }
    for (i, r) in e.requests.iter().enumerate() {
        request(&mut out, i + 1, r, all);
    }
    out.push_str(&match e.always.why {
        AlwaysWhy::Offered => format!(
            "Always: offered {} (the panel's A persists the first).\n",
            quoted(&e.always.patterns)
        ),
        AlwaysWhy::NotAsking => "Always: not offered, the call does not ask.\n".to_string(),
        AlwaysWhy::NotReadFully => "Always: not offered, the analysis offers no pattern for an asking request (not read fully, or a compound command: each part is judged on its own).\n".to_string(),
        AlwaysWhy::Withheld => "Always: not offered, the decision withheld the analysis' patterns (an explicit or managed ask, a cap above, or the floor).\n".to_string(),
    });
    out.push_str(&format!("Decision: {}\n", e.decision.decision.as_str()));
    if let Some(m) = &e.decision.message {
        out.push_str(&format!("  message to the model: {m}\n"));
    }
    out
}

fn reading(out: &mut String, a: &Analysis) {
    match &a.fallback {
        None => out.push_str(&format!(
            "Read: parsed by tree-sitter-bash and read in full by the {} engine; class {}.\n",
            a.engine.as_str(),
            a.class.as_str()
        )),
        Some(f) => out.push_str(&format!(
            "Read: tree-sitter-bash could not read it ({}: {}), so the V1 lexer did; it is never allowed silently. Class {}.\n",
            f.reason.as_str(),
            f.detail,
            a.class.as_str()
        )),
    }
    out.push_str("Parts:\n");
    for (i, p) in a.parts.iter().enumerate() {
        out.push_str(&format!(
            "  {:>2}  {}    in {}\n",
            i + 1,
            p.text,
            p.cwd.as_deref().unwrap_or("(unknown until it runs)")
        ));
    }
    for n in &a.risk_notes {
        out.push_str(&format!("  note: {n}\n"));
    }
}

fn request(out: &mut String, n: usize, r: &RequestTrace, all: bool) {
    let verdict = r
        .verdict
        .map(|v| format!(" (verdict: {})", v.as_str()))
        .unwrap_or_default();
    out.push_str(&format!(
        "Request {n}: {} \"{}\"{verdict}\n  rules naming {}, the last match wins:\n",
        r.capability.as_str(),
        r.subject,
        r.capability.as_str()
    ));
    let mut hidden = 0;
    for c in &r.rules {
        let why = match c.outcome {
            RuleMatch::Decides => "matches: decides".to_string(),
            RuleMatch::Overridden { by } => format!("matches, overridden by #{by}"),
            RuleMatch::PatternDiffers => "pattern does not match".to_string(),
            RuleMatch::ConditionNotMet { needs } => {
                format!("applies only to a command verified {}", needs.as_str())
            }
            RuleMatch::Expired => "expired: skipped".to_string(),
        };
        let matched = matches!(c.outcome, RuleMatch::Decides | RuleMatch::Overridden { .. });
        if !all && !matched {
            hidden += 1;
            continue;
        }
        out.push_str(&format!(
            "    #{:<3} {}    {why}\n",
            c.position,
            c.rule.describe().replacen(
                &format!("{} / ", c.rule.capability),
                &format!("{} ", c.rule.action.as_str()),
                1
            )
        ));
    }
    if r.rules.is_empty() {
        out.push_str("    (no rule names it: it asks)\n");
    } else if hidden > 0 {
        out.push_str(&format!(
            "    ({hidden} more do not match; --all lists them)\n"
        ));
    }
    match &r.rule {
        Some(rule) => out.push_str(&format!(
            "  decided: {} by {}\n",
            r.decision.as_str(),
            rule.describe()
        )),
        None => out.push_str(&format!(
            "  decided: {} (no rule matched)\n",
            r.decision.as_str()
        )),
    }
    for reason in &r.reasons {
        out.push_str(&format!("  capped: {}\n", reason_note(reason, &r.subject)));
    }
    if r.decision == Action::Ask {
        if r.offered_by_analysis.is_empty() {
            out.push_str("  always: the analysis offers no pattern\n");
        } else if r.always_patterns.is_empty() {
            out.push_str(&format!(
                "  always: the analysis offers {}, withheld\n",
                quoted(&r.offered_by_analysis)
            ));
        }
    }
}

fn quoted(patterns: &[String]) -> String {
    patterns
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
