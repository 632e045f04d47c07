//! Our effective rules → a host's native config (`rules export --to claude|gemini|
//! opencode`), for hosts that cannot take an allow from a hook.
//!
//! Nothing is exported wider than we decide. A host matches a prefix against a whole
//! command line and cannot see what our analysis sees in the arguments (a redirection,
//! `git diff --output=FILE`, a `.env` read by `cat`), so:
//! - an allow is exported only for an exact command (no `*`), made of plain characters
//!   (no quotes, globs, redirections or other shell syntax), and only when our own
//!   decision for that command, run through the real mapping and `decide`, is allow;
//! - a deny or ask (which only narrow) is exported for any `process.execute` pattern,
//!   widened where the host cannot say it exactly;
//! - everything else (path and network rules, the hardline floor, analysis-derived
//!   requests) is listed as not exported: the hook keeps enforcing it.
//!
//! Each output starts by asking for every shell command, so the host's own defaults
//! never allow what we did not export.

use crate::model::vocab::AnalysisContext;
use crate::policy::config::Policy;
use crate::policy::decide::decide;
use crate::policy::rules::{Action, MatchDialect, PermissionRule};
use crate::tools::map_call;

/// A host `rules export --to` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    Claude,
    Gemini,
    Opencode,
}

/// One of our rules as the host's text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Exported {
    pub rule: PermissionRule,
    /// `Bash(npm test)`, a TOML `[[rule]]`, or an OpenCode key.
    pub native: String,
    /// The host entry matches exactly what the rule does (`false`: wider, a deny or ask).
    pub exact: bool,
}

/// One of our rules that is not exported, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NotExported {
    pub rule: PermissionRule,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    pub text: String,
    pub exported: Vec<Exported>,
    pub not_exported: Vec<NotExported>,
}

/// Why nothing can be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error(
        "the configuration is broken ({0}); fix it before exporting, every decision is at most ask until then"
    )]
    Broken(String),
}

/// Characters a command exported as an allow may contain: the host then sees the same
/// single simple command we decided.
fn plain(command: &str) -> bool {
    !command.is_empty()
        && command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " _./:=@%+,-".contains(c))
}

/// Our own decision for a bash command, through the real mapping.
fn we_allow(policy: &Policy, ctx: &AnalysisContext, command: &str) -> bool {
    let input = serde_json::json!({ "command": command });
    match map_call("bash", &input, ctx) {
        Ok(call) => decide(policy, &[], &call, ctx, true).decision == Action::Allow,
        Err(_) => false,
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~ ".contains(c) && c != ' ' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The literal pieces of a pattern between its wildcards, in its dialect.
fn pieces(rule: &PermissionRule) -> Vec<String> {
    let p = crate::model::vocab::collapse_whitespace(&rule.pattern);
    match rule.dialect {
        MatchDialect::Prefix => match p.strip_suffix('*') {
            Some(pre) => vec![pre.to_string(), String::new()],
            None => vec![p],
        },
        _ => p.split('*').map(str::to_string).collect(),
    }
}

pub fn export(
    target: Target,
    policy: &Policy,
    ctx: &AnalysisContext,
) -> Result<Export, ExportError> {
    if let Some(e) = policy.errors().first() {
        return Err(ExportError::Broken(e.to_string()));
    }
    let mut exported = Vec::new();
    let mut not_exported = Vec::new();
    for rule in policy.rules() {
        if rule.capability != "process.execute" || rule.dialect == MatchDialect::Glob {
            not_exported.push(NotExported {
                rule: rule.clone(),
                reason: "only shell-command rules have a host counterpart; the hook keeps enforcing this one".to_string(),
            });
            continue;
        }
        if rule.action == Action::Contain {
            not_exported.push(NotExported {
                rule: rule.clone(),
                reason: "no host runs a command inside khaelor-perm's sandbox on its own; the hook keeps delivering this one".to_string(),
            });
            continue;
        }
        let parts = pieces(rule);
        let wildcard = parts.len() > 1;
        if rule.action == Action::Allow {
            let Some(command) = parts.first().filter(|_| !wildcard) else {
                not_exported.push(NotExported {
                    rule: rule.clone(),
                    reason: "a pattern allow would let the host allow arguments our analysis asks about (a redirection, a written `--output`, a secret read); only exact commands are exported as allows".to_string(),
                });
                continue;
            };
            if !plain(command) {
                not_exported.push(NotExported {
                    rule: rule.clone(),
                    reason: "the command has shell syntax the host would read differently"
                        .to_string(),
                });
                continue;
            }
            if !we_allow(policy, ctx, command) {
                not_exported.push(NotExported {
                    rule: rule.clone(),
                    reason: "our decision for this command is not allow (a later rule, the floor or the analysis asks or denies)".to_string(),
                });
                continue;
            }
            let native = match target {
                Target::Claude => format!("Bash({command})"),
                // Gemini matches `commandRegex` against the JSON arguments after
                // `"command":"`; the closing quote pins the end of the command.
                Target::Gemini => format!("{}\"", regex_escape(command)),
                Target::Opencode => command.clone(),
            };
            exported.push(Exported {
                rule: rule.clone(),
                native,
                exact: true,
            });
        } else {
            if target == Target::Gemini && rule.pattern.contains(['"', '\\']) {
                not_exported.push(NotExported {
                    rule: rule.clone(),
                    reason: "Gemini matches the JSON-escaped command, where quotes and backslashes change form".to_string(),
                });
                continue;
            }
            let native = match target {
                Target::Claude => format!("Bash({})", parts.join("*")),
                Target::Gemini => {
                    let mut re: Vec<String> = parts.iter().map(|p| regex_escape(p)).collect();
                    if !wildcard && let Some(last) = re.last_mut() {
                        last.push('"');
                    }
                    re.join(".*")
                }
                Target::Opencode => parts.join("*"),
            };
            exported.push(Exported {
                rule: rule.clone(),
                native,
                exact: false,
            });
        }
    }
    let text = match target {
        Target::Claude => claude_text(&exported),
        Target::Gemini => gemini_text(&exported),
        Target::Opencode => opencode_text(&exported),
    };
    Ok(Export {
        text,
        exported,
        not_exported,
    })
}

fn json_list(items: &[&Exported]) -> String {
    let v: Vec<&str> = items.iter().map(|e| e.native.as_str()).collect();
    serde_json::to_string(&v).unwrap_or_else(|_| "[]".to_string())
}

fn claude_text(exported: &[Exported]) -> String {
    let by = |a: Action| {
        exported
            .iter()
            .filter(|e| e.rule.action == a)
            .collect::<Vec<_>>()
    };
    let mut asks = by(Action::Ask);
    // A catch-all ask would outrank every allow (Claude checks ask before allow), so
    // the host's own default (ask for Bash) is relied on instead.
    asks.retain(|e| e.native != "Bash(*)");
    format!(
        "{{\n  \"permissions\": {{\n    \"allow\": {},\n    \"ask\": {},\n    \"deny\": {}\n  }}\n}}\n",
        json_list(&by(Action::Allow)),
        json_list(&asks),
        json_list(&by(Action::Deny))
    )
}

fn gemini_text(exported: &[Exported]) -> String {
    let mut out = String::from(
        "# Exported by `khaelor-perm rules export --to gemini`: later rules have higher\n# priority, as our last-match order. Unlisted shell commands ask.\n\n",
    );
    out.push_str(
        "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"ask_user\"\npriority = 1\n",
    );
    for (i, e) in exported.iter().enumerate() {
        let decision = match e.rule.action {
            Action::Allow => "allow",
            // Not exported (see `export`); asking is what the host does without us.
            Action::Contain | Action::Ask => "ask_user",
            Action::Deny => "deny",
        };
        out.push_str(&format!(
            "\n# {}\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = {}\ndecision = \"{decision}\"\npriority = {}\n",
            e.rule.describe().replace('\n', " "),
            toml_string(&e.native),
            i + 2
        ));
    }
    out
}

fn opencode_text(exported: &[Exported]) -> String {
    let mut bash = serde_json::Map::new();
    bash.insert(
        "*".to_string(),
        serde_json::Value::String("ask".to_string()),
    );
    for e in exported {
        // Last match wins in OpenCode as in ours: a later duplicate key moves to the end.
        bash.shift_remove(&e.native);
        bash.insert(
            e.native.clone(),
            serde_json::Value::String(e.rule.action.as_str().to_string()),
        );
    }
    let v = serde_json::json!({ "permission": { "bash": bash } });
    format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
}
