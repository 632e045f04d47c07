//! What people and models read: the model-facing denial messages (seed §5.4, word for
//! word in shape) and the ask panel (seed §6.1) as data plus its monochrome box
//! rendering for terminals.
//!
//! Owns wording and layout only. Which requests ask or deny, and why, is decided in
//! `decide`; this module never changes a decision.

use serde::{Deserialize, Serialize};

use crate::model::rule::{Action, PermissionRule, TrustStatus};
pub use crate::model::vocab::lower_first;
use crate::model::vocab::{
    Capability, CapabilityRequest, HardlineHit, Reason, collapse_whitespace,
};

/// The hardline risk note (seed §4.2), owned by the floor; a test pins the text.
pub const HARDLINE_NOTE: &str = crate::floor::HARDLINE_RISK_NOTE;

/// A path subject that is not absolute: the analyzer could not resolve it.
pub const UNKNOWN_OPERAND_NOTE: &str = "An argument of this command is only known when it runs (a variable or a substitution): it may name any file or be any option, so it cannot be allowed silently.";

pub const UNKNOWN_PATH_NOTE: &str = "This path is only known when the command runs (a variable or an unknown working directory), so it cannot be allowed silently.";

/// Seed §5.2: every ask resolves as deny when nobody can answer.
pub const NON_INTERACTIVE_MESSAGE: &str =
    "KHAELOR is running non-interactively; interactive approval is unavailable.";

/// Risk note on writes to KHAELOR's own configuration (self-protection).
pub const SELF_PROTECTION_NOTE: &str =
    "Changes KHAELOR's own permission configuration — never allowed silently.";

/// A command naming the service's panel token or its answer routes (`named`).
pub fn approval_channel_note(named: &str) -> String {
    format!(
        "Names `{named}`, KHAELOR's way of answering permission prompts: only the person answers them, so this is never allowed silently or always."
    )
}

/// The note for a project config `file` whose `rules` allows were ignored:
/// what was ignored, why (its trust `status`), and the command that trusts it.
pub fn ignored_allows_note(file: &str, rules: usize, status: TrustStatus) -> String {
    let why = match status {
        TrustStatus::Changed => "it changed since you trusted it",
        TrustStatus::Forbidden => "the managed configuration forbids trusting project configs",
        _ => "you have not trusted it",
    };
    let n = rules;
    let (rules, were, them) = if n == 1 {
        ("rule", "was", "the rule")
    } else {
        ("rules", "were", "them")
    };
    let dir = std::path::Path::new(file)
        .parent()
        .and_then(std::path::Path::parent)
        .map_or_else(|| ".".to_string(), |d| d.display().to_string());
    let fix = if status == TrustStatus::Forbidden {
        String::new()
    } else {
        format!(" Review it, then run `khaelor-perm trust {dir}` to apply {them}.")
    };
    format!("The project config {file} has {n} allow {rules} that {were} ignored: {why}.{fix}")
}

/// Risk note on a directory read that reaches a path a stricter rule covers.
pub fn directory_read_note(path: &str) -> String {
    format!(
        "Reads what is in this directory, including `{path}`, which the rules do not allow silently."
    )
}

/// Risk note on a write the protected table covers.
pub fn protected_write_note(reason: &str) -> String {
    format!(
        "Writes a file that makes code run later or changes what git or the shell does ({reason}) — never allowed silently."
    )
}

/// Risk note for a write to a path the read rules keep from being read silently.
pub const SECRET_WRITE_NOTE: &str = "Writes a file shaped like a secret (a key, a token, an .env): overwriting or planting one asks, as reading it does.";

/// A file whose text holds a credential, which the command would print.
pub fn credential_inside_note(path: &str) -> String {
    format!(
        "Prints {path}, which holds a credential (a token in a git URL or header, a key a shell startup file writes out): it asks as reading .netrc does."
    )
}

/// Seed §3.2 risk note for obfuscated commands.
pub const OBFUSCATED_NOTE: &str =
    "Command uses substitution — KHAELOR cannot verify what it will run.";

/// Risk note when the AST engine could not parse the command and the lexer took over.
pub const UNPARSED_NOTE: &str =
    "KHAELOR could not fully parse this command — it is never allowed silently.";

/// Subjects longer than this are shortened in model-facing messages.
const MESSAGE_SUBJECT_CHARS: usize = 300;

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

fn message_subject(r: &CapabilityRequest) -> String {
    let s = if r.capability.has_command_subject() {
        collapse_whitespace(&r.subject)
    } else {
        r.subject.clone()
    };
    shorten(&s, MESSAGE_SUBJECT_CHARS)
}

/// Seed §5.4 policy deny: `Permission denied by policy: process.execute for "rm -rf
/// build" is denied in this project (rule: process.execute / "rm -rf *", source:
/// project). Do not retry …`.
pub fn policy_deny_message(r: &CapabilityRequest, rule: Option<&PermissionRule>) -> String {
    let rule = match rule {
        Some(rule) => format!(
            "rule: {} / \"{}\", source: {}",
            rule.capability, rule.pattern, rule.source
        ),
        None => "no rule matched".to_string(),
    };
    format!(
        "Permission denied by policy: {} for \"{}\" is denied in this project ({rule}). Do not retry this command or attempt an equivalent workaround. Choose a different approach, or ask the user to adjust permissions.",
        r.capability,
        message_subject(r)
    )
}

/// A hardline denial: the same shape as a policy deny, naming the floor entry, with the
/// seed §4.2 note, and without inviting a permission change that cannot exist.
pub fn hardline_deny_message(r: &CapabilityRequest, hit: &HardlineHit) -> String {
    format!(
        "Permission denied by policy: {} for \"{}\" is denied in this project (rule: hardline / \"{}\", source: hardline). {HARDLINE_NOTE} Do not retry this command or attempt an equivalent workaround. Choose a different approach.",
        r.capability,
        message_subject(r),
        hit.rule
    )
}

/// Seed §5.4 user deny of the call `summary` (`CallDecision::summary`), with the
/// optional one-line reason from the panel.
/// The model-facing text when nobody answered the panel within the wait of a hook that
/// waited `secs` seconds (its host has no prompt of its own to fall back on).
pub fn wait_timeout_message(summary: &str, secs: u64) -> String {
    let what = shorten(summary, MESSAGE_SUBJECT_CHARS);
    format!(
        "Nobody answered the permission prompt for: {what} within {secs} s, so it did not run. Tell the user what you wanted to run and why; do not retry the same call until they are there to answer."
    )
}

pub fn user_deny_message(summary: &str, feedback: Option<&str>) -> String {
    let what = shorten(summary, MESSAGE_SUBJECT_CHARS);
    let reason = feedback.map(|f| {
        f.split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    });
    match reason.filter(|r| !r.is_empty()) {
        Some(r) => format!(
            "The user declined to allow: {what} — reason: \"{r}\". Adapt your approach accordingly."
        ),
        None => format!(
            "The user declined to allow: {what}. Continue without it, or propose an alternative."
        ),
    }
}

/// One key the panel offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelKey {
    /// `Enter`, `A`, `Esc`, `Tab`.
    pub key: String,
    pub label: String,
}

/// One line of the details view: a request, its decision and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelDetail {
    pub decision: Action,
    pub capability: Capability,
    pub subject: String,
    pub display: String,
    pub rule: Option<PermissionRule>,
}

/// The ask panel (seed §6.1) as data; `render_panel_box` draws it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Panel {
    pub title: String,
    /// `Run`, `Write`, `Edit`, `Start process`, `Read`, `Fetch`, `Send input`.
    pub verb: String,
    /// The capability badge, right-aligned on the verb line.
    pub badge: String,
    /// The command text or the path.
    pub subject: String,
    pub working_directory: String,
    /// The simple commands of a compound command, in order (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
    /// Unified diff for writes and edits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    pub risk_notes: Vec<String>,
    /// What `A` persists; empty means no `A` (seed §3.3 refusal rule).
    pub always_patterns: Vec<String>,
    pub keys: Vec<PanelKey>,
    pub details: Vec<PanelDetail>,
}

/// The panel's verb for a tool.
pub fn verb_for_tool(tool: &str) -> &'static str {
    match tool {
        "bash" => "Run",
        "write" => "Write",
        "edit" | "apply_patch" => "Edit",
        "process_start" => "Start process",
        "process_stdin" => "Send input",
        "webfetch" => "Fetch",
        "mcp" => "Call",
        _ => "Read",
    }
}

/// The keys in order: `A` only when there is a pattern to persist, showing it exactly.
pub fn panel_keys(always_patterns: &[String]) -> Vec<PanelKey> {
    let mut keys = vec![PanelKey {
        key: "Enter".into(),
        label: "Allow once".into(),
    }];
    if let Some(p) = always_patterns.first() {
        keys.push(PanelKey {
            key: "A".into(),
            label: format!("Always allow \"{p}\" in this project"),
        });
    }
    keys.push(PanelKey {
        key: "Esc".into(),
        label: "Deny".into(),
    });
    keys.push(PanelKey {
        key: "Tab".into(),
        label: "Details".into(),
    });
    keys
}

/// Total width of the box, borders included (the seed's panel).
pub const BOX_WIDTH: usize = 61;
/// Text columns inside the box: two spaces of left margin, one of right margin.
const TEXT_WIDTH: usize = BOX_WIDTH - 5;
/// Diff lines shown in the box before `… N more lines`.
const BOX_DIFF_LINES: usize = 16;

/// Makes text safe to print on a terminal: control characters and the invisible
/// formatting characters that can reorder or hide text (bidi overrides, zero-width)
/// are shown as `\u{…}` escapes, tabs as a space. Newlines are kept.
pub fn terminal_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_terminal_safe(&mut out, c);
    }
    out
}

/// `terminal_safe` for one field drawn on one line: a newline is shown as `\u{a}` too.
pub fn terminal_safe_line(s: &str) -> String {
    terminal_safe(s).replace('\n', "\\u{a}")
}

/// Appends `c` as `terminal_safe` shows it (a newline is kept).
pub fn push_terminal_safe(out: &mut String, c: char) {
    match c {
        '\n' => out.push('\n'),
        '\t' => out.push(' '),
        c if c.is_control() || is_invisible_format(c) => {
            out.push_str(&format!("\\u{{{:x}}}", c as u32))
        }
        c => out.push(c),
    }
}

fn is_invisible_format(c: char) -> bool {
    matches!(c as u32, 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2069 | 0xFEFF | 0x00AD | 0x061C)
}

/// Greedy word wrap to `width` characters; words longer than a line are cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for raw in text.split('\n') {
        let mut line = String::new();
        for word in raw.split(' ') {
            let wlen = word.chars().count();
            let llen = line.chars().count();
            if llen > 0 && llen + 1 + wlen <= width {
                line.push(' ');
                line.push_str(word);
                continue;
            }
            if llen > 0 {
                lines.push(std::mem::take(&mut line));
            }
            let mut chars: Vec<char> = word.chars().collect();
            while chars.len() > width {
                let rest = chars.split_off(width);
                lines.push(chars.into_iter().collect());
                chars = rest;
            }
            line = chars.into_iter().collect();
        }
        lines.push(line);
    }
    lines
}

fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(n)));
    out
}

fn boxed(line: &str) -> String {
    format!("│  {} │\n", pad(line, TEXT_WIDTH))
}

fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Draws the panel as the seed's monochrome box (unicode box drawing, fixed width).
pub fn render_panel_box(panel: &Panel) -> String {
    let mut out = String::new();
    let title = format!("─ {} ", terminal_safe(&panel.title));
    let fill = BOX_WIDTH.saturating_sub(2 + title.chars().count());
    out.push_str(&format!("╭{title}{}╮\n", "─".repeat(fill)));
    let verb = terminal_safe(&panel.verb);
    let badge = terminal_safe(&panel.badge);
    let gap = TEXT_WIDTH
        .saturating_sub(verb.chars().count() + badge.chars().count())
        .max(1);
    out.push_str(&boxed(&cut(
        &format!("{verb}{}{badge}", " ".repeat(gap)),
        TEXT_WIDTH,
    )));
    for l in wrap(&terminal_safe(&panel.subject), TEXT_WIDTH) {
        out.push_str(&boxed(&l));
    }
    for part in &panel.parts {
        for (i, l) in wrap(&terminal_safe(part), TEXT_WIDTH - 2)
            .into_iter()
            .enumerate()
        {
            out.push_str(&boxed(&format!("{} {l}", if i == 0 { "▸" } else { " " })));
        }
    }
    if let Some(diff) = &panel.diff {
        out.push_str(&boxed(""));
        let lines: Vec<&str> = diff.lines().collect();
        for l in lines.iter().take(BOX_DIFF_LINES) {
            out.push_str(&boxed(&cut(&terminal_safe(l), TEXT_WIDTH)));
        }
        if lines.len() > BOX_DIFF_LINES {
            out.push_str(&boxed(&format!(
                "… {} more lines",
                lines.len() - BOX_DIFF_LINES
            )));
        }
    }
    out.push_str(&boxed(""));
    out.push_str(&boxed("Working directory"));
    for l in wrap(&terminal_safe(&panel.working_directory), TEXT_WIDTH) {
        out.push_str(&boxed(&l));
    }
    if !panel.risk_notes.is_empty() {
        out.push_str(&boxed(""));
        for note in &panel.risk_notes {
            for (i, l) in wrap(&terminal_safe(note), TEXT_WIDTH - 2)
                .into_iter()
                .enumerate()
            {
                out.push_str(&boxed(&format!("{} {l}", if i == 0 { "⚠" } else { " " })));
            }
        }
    }
    out.push_str(&boxed(""));
    let key_col = |k: &str| pad(&format!("[ {k} ]"), 10);
    let mut esc_tab: Vec<&PanelKey> = Vec::new();
    for k in &panel.keys {
        match k.key.as_str() {
            "Esc" | "Tab" => esc_tab.push(k),
            _ => {
                for (i, l) in wrap(&terminal_safe(&k.label), TEXT_WIDTH - 10)
                    .into_iter()
                    .enumerate()
                {
                    let head = if i == 0 {
                        key_col(&k.key)
                    } else {
                        " ".repeat(10)
                    };
                    out.push_str(&boxed(&format!("{head}{l}")));
                }
            }
        }
    }
    // The seed's last row: `[ Esc ]   Deny            [ Tab ] Details`.
    let row: Vec<String> = esc_tab
        .iter()
        .enumerate()
        .map(|(i, k)| {
            if i == 0 {
                pad(&format!("{}{}", key_col(&k.key), k.label), 26)
            } else {
                format!("[ {} ] {}", k.key, k.label)
            }
        })
        .collect();
    if !row.is_empty() {
        out.push_str(&boxed(&cut(
            &terminal_safe(row.concat().trim_end()),
            TEXT_WIDTH,
        )));
    }
    out.push_str(&format!("╰{}╯\n", "─".repeat(BOX_WIDTH - 2)));
    out
}

/// The details view (`Tab`): every request with its decision and deciding rule.
pub fn render_panel_details(panel: &Panel) -> String {
    let mut out = String::new();
    for d in &panel.details {
        let rule = match &d.rule {
            Some(r) => r.describe(),
            None => "no rule matched (ask)".to_string(),
        };
        out.push_str(&terminal_safe(&format!(
            "{:<5} {} {}\n      rule: {rule}\n",
            d.decision.as_str(),
            d.capability,
            d.subject
        )));
    }
    out
}

/// A recursive read too large to check for secrets.
/// The risk note that words a typed reason; `subject` is the request's subject.
pub fn reason_note(reason: &Reason, subject: &str) -> String {
    match reason {
        Reason::Obfuscated => OBFUSCATED_NOTE.to_string(),
        Reason::Unparsed => UNPARSED_NOTE.to_string(),
        Reason::WalkBound => walk_bound_note(subject),
        Reason::DirectoryRead { path } => directory_read_note(path),
        Reason::UnknownPath => UNKNOWN_PATH_NOTE.to_string(),
        Reason::UnknownOperand => UNKNOWN_OPERAND_NOTE.to_string(),
        Reason::SelfProtection => SELF_PROTECTION_NOTE.to_string(),
        Reason::ApprovalChannel { named } => approval_channel_note(named),
        Reason::ProtectedWrite { reason } => protected_write_note(reason),
        Reason::SecretWrite => SECRET_WRITE_NOTE.to_string(),
        Reason::CredentialInside { path } => credential_inside_note(path),
        Reason::BrokenConfig => BROKEN_CONFIG_NOTE.to_string(),
        Reason::Hardline { .. } => HARDLINE_NOTE.to_string(),
        Reason::NonInteractive => NON_INTERACTIVE_MESSAGE.to_string(),
        Reason::NotContained { why } => not_contained_note(why),
        Reason::HostGrantUnread => HOST_GRANT_UNREAD_NOTE.to_string(),
        Reason::Destructive {
            pack,
            severity,
            note,
        } => destructive_note(pack, *severity, note),
    }
}

/// A domain pack's operation: what it destroys, and what that means for the panel.
pub fn destructive_note(pack: &str, severity: crate::model::vocab::Severity, note: &str) -> String {
    use crate::model::vocab::Severity;
    let what = match severity {
        Severity::Critical => "it always asks and is never offered an \"always\" pattern",
        Severity::High => {
            "it asks unless a rule names this exact command, the only \"always\" offered"
        }
        Severity::Medium => "only this exact command is offered as \"always\"",
    };
    let mut first = note.chars();
    let note = first
        .next()
        .map(|c| c.to_uppercase().chain(first).collect::<String>())
        .unwrap_or_default();
    format!(
        "{note}. The {pack} pack rates this {}: {what}.",
        severity.as_str()
    )
}

/// Why a command the policy would run in the sandbox asks instead.
pub fn not_contained_note(why: &crate::model::contain::NotContained) -> String {
    use crate::model::contain::NotContained;
    match why {
        NotContained::Unavailable { detail } => format!(
            "The policy would run this in KHAELOR's sandbox, but this machine cannot build it ({detail}), so it asks."
        ),
        NotContained::NoRunner => "The policy would run this in KHAELOR's sandbox, but the caller cannot run a rewritten command, so it asks.".to_string(),
        NotContained::NotACommand => "Only a shell command can run in KHAELOR's sandbox, so this asks.".to_string(),
        NotContained::OutsideProject => "The command runs outside the project, where KHAELOR's sandbox would not let it write, so it asks.".to_string(),
    }
}

/// A host's grant that would allow a program running code from its input.
pub const HOST_GRANT_UNREAD_NOTE: &str = "An \"always\" grant made in the agent host allows this program, but here it runs code it reads from its input, which the grant never showed; KHAELOR asks.";

/// A request capped by a broken configuration.
pub const BROKEN_CONFIG_NOTE: &str =
    "A KHAELOR configuration file is broken, so nothing is allowed silently until it is fixed.";

pub fn walk_bound_note(dir: &str) -> String {
    format!(
        "Reads every file under {dir}, more than KHAELOR checks for secrets ({} entries); it cannot vouch for this read.",
        crate::model::vocab::MAX_WALK_ENTRIES
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_every_character() {
        let text = "a very long command with words and averyveryveryveryveryveryveryveryveryveryveryveryverylongword end";
        let lines = wrap(text, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20));
        assert_eq!(lines.join("").replace(' ', ""), text.replace(' ', ""));
    }

    #[test]
    fn escapes_make_terminal_text_inert() {
        assert_eq!(
            terminal_safe("a\u{1b}[2Kb\u{202e}c"),
            "a\\u{1b}[2Kb\\u{202e}c"
        );
    }
}
