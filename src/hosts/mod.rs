//! Agent hosts' hook protocols: what Claude Code, Codex CLI, Gemini CLI, OpenCode,
//! Qwen Code, GitHub Copilot CLI, Factory Droid and Cline CLI (through our plugin) send before a tool runs, mapped to our tool calls, and what each host
//! understands back.
//!
//! Owns, per host (one file each): reading the hook JSON, the table from the host's
//! tool names and inputs to ours (MCP tools normalised to `mcp` with `server`/`tool`,
//! tools with no local effect, unknown tools), and the host's output form. Here: the
//! shared shapes, the fail-closed rules for what cannot be mapped, the events a hook
//! call leaves in the session log, and the texts. Deciding is `tools::map_call` +
//! `decide::decide`; the I/O (stdin, the log file, the service) is `cli/hook.rs` and
//! `http/hooks.rs`.
//!
//! Fail closed: a hook input that cannot be read, a tool we do not know, an input our
//! mapping refuses, all become at most ask (deny when nobody can answer), never an
//! error a host would read as "run it".

pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod gemini;
pub mod grants;
pub mod opencode;
pub mod outcome;
pub mod qwen;
pub mod wiring;

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::model::vocab::AnalysisContext;
use crate::policy::decide::CallDecision;
use crate::policy::rules::{Action, PermissionRule};
use crate::presentation::messages;
use crate::session::flow;
use crate::session::{EventKind, valid_id};
use crate::tools::{MappedCall, map_call};

/// Largest hook input read (a `Write` of a large file arrives whole on stdin).
pub const MAX_HOOK_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// The agent hosts `khaelor-perm hook` speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Host {
    Claude,
    Codex,
    Gemini,
    Opencode,
    Qwen,
    Copilot,
    Droid,
    Cline,
}

impl Host {
    pub const ALL: [Host; 8] = [
        Host::Claude,
        Host::Codex,
        Host::Gemini,
        Host::Opencode,
        Host::Qwen,
        Host::Copilot,
        Host::Droid,
        Host::Cline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Opencode => "opencode",
            Host::Qwen => "qwen",
            Host::Copilot => "copilot",
            Host::Droid => "droid",
            Host::Cline => "cline",
        }
    }

    /// The host's name as its makers write it.
    pub fn display_name(self) -> &'static str {
        match self {
            Host::Claude => "Claude Code",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Opencode => "OpenCode",
            Host::Qwen => "Qwen Code",
            Host::Copilot => "GitHub Copilot CLI",
            Host::Droid => "Factory Droid",
            Host::Cline => "Cline CLI",
        }
    }

    pub fn from_name(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// Whether an ask may be answered as an ask when the hook is not told otherwise.
    /// Gemini's `ask` hangs a headless run, and Droid's `droid exec` hands an ask to its
    /// own autonomy level (which weighs the risk the model declared), so they ask only
    /// when told the session is interactive; the others show (Claude, OpenCode's plugin, Qwen) or delegate
    /// (Codex) an ask safely. (Qwen and Copilot turn an ask into a deny in a headless
    /// run.)
    /// Cline CLI's approval prompt, which our plugin's ask opens, was not driven here,
    /// and whether a choice remembered there lets later asks through was not checked:
    /// it asks only when installed `--interactive`.
    pub fn interactive_by_default(self) -> bool {
        !matches!(self, Host::Gemini | Host::Droid | Host::Cline)
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a host's tool call is, in our terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Mapped {
    /// One of our tools (`tools::KNOWN_TOOLS`) with its input.
    Tool { tool: &'static str, input: Value },
    /// A host tool with no local effect (a todo list, a question to the user, a
    /// sub-agent whose own calls come through the hook): allowed, see the host's table.
    NoEffect,
    /// A tool we cannot judge (unknown, or known but reaching what no capability names):
    /// asks, with the reason for the user.
    Unjudged { reason: String },
    /// The input names one of our fields twice with different values (`cmd` and
    /// `command`): the host runs one of them, and which one is the host's business, not
    /// something a hook should bet on. Denied, whoever could answer.
    Ambiguous { reason: String },
}

/// One hook call as read from the host.
#[derive(Debug, Clone, PartialEq)]
pub struct HookCall {
    pub host: Host,
    /// The host's session id, made a valid log id (`session::valid_id`).
    pub session_id: String,
    /// The host's tool call id when it is a valid id; else one is made up.
    pub call_id: String,
    pub turn_id: Option<String>,
    /// The working directory the host reports.
    pub cwd: Option<String>,
    /// The project root the host reports, when it reports one apart from the cwd.
    pub project_root: Option<String>,
    /// The host's tool name, as sent (`Bash`, `run_shell_command`, `mcp__github__x`).
    pub host_tool: String,
    /// The host's permission mode when it reports one (Claude Code's `permission_mode`:
    /// `default`, `plan`, `acceptEdits`, `auto`, `dontAsk`, `bypassPermissions`).
    pub permission_mode: Option<String>,
    /// The host's tool input, as sent.
    pub input: Value,
    pub mapped: Mapped,
}

/// A hook input that cannot be read at all. The caller answers with the host's deny.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("the hook input is {0} bytes, more than the limit of {MAX_HOOK_INPUT_BYTES}")]
    TooLarge(usize),
    #[error("the hook input is not JSON: {0}")]
    NotJson(String),
    #[error("the hook input is not a JSON object")]
    NotAnObject,
    #[error("the hook input has no `{0}` string")]
    Missing(&'static str),
}

/// What the host is told: the exact stdout (possibly empty) and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: String,
    pub exit: u8,
}

/// Reads one hook input of `host`.
pub fn parse(host: Host, raw: &[u8]) -> Result<HookCall, HookError> {
    if raw.len() > MAX_HOOK_INPUT_BYTES {
        return Err(HookError::TooLarge(raw.len()));
    }
    let v: Value = serde_json::from_slice(raw).map_err(|e| HookError::NotJson(e.to_string()))?;
    let obj = v.as_object().ok_or(HookError::NotAnObject)?;
    match host {
        Host::Claude => claude::parse(obj),
        Host::Codex => codex::parse(obj),
        Host::Gemini => gemini::parse(obj),
        Host::Opencode => opencode::parse(obj),
        Host::Qwen => qwen::parse(obj),
        Host::Copilot => copilot::parse(obj),
        Host::Droid => droid::parse(obj),
        Host::Cline => cline::parse(obj),
    }
}

/// The fields Claude Code, Codex, Gemini and Qwen share: `session_id`, `tool_name`,
/// `tool_input`, `cwd`, and (Claude, Codex, Qwen) `tool_use_id`, (Codex) `turn_id`.
pub(crate) fn parse_common(
    host: Host,
    obj: &Map<String, Value>,
    map: impl Fn(&str, &Value) -> Mapped,
) -> Result<HookCall, HookError> {
    let tool = str_field(obj, "tool_name").ok_or(HookError::Missing("tool_name"))?;
    let input = obj
        .get("tool_input")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let mapped = map(tool, &input);
    Ok(HookCall {
        host,
        session_id: session_id(host, str_field(obj, "session_id")),
        call_id: call_id(host, str_field(obj, "tool_use_id")),
        turn_id: str_field(obj, "turn_id")
            .filter(|t| valid_id(t))
            .map(str::to_string),
        cwd: str_field(obj, "cwd").map(str::to_string),
        project_root: None,
        host_tool: tool.to_string(),
        permission_mode: str_field(obj, "permission_mode").map(str::to_string),
        input,
        mapped,
    })
}

pub(crate) fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The host's session id as a log id: kept when valid; otherwise every character
/// outside `[A-Za-z0-9_-]` becomes `_` (so one host session stays one log), cut to
/// the limit. A host that sends none gets `<host>-unknown`.
pub fn session_id(host: Host, given: Option<&str>) -> String {
    match given {
        Some(s) if valid_id(s) => s.to_string(),
        Some(s) => {
            let cleaned: String = s
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(crate::session::MAX_ID_LEN)
                .collect();
            if valid_id(&cleaned) {
                cleaned
            } else {
                format!("{host}-unknown")
            }
        }
        None => format!("{host}-unknown"),
    }
}

/// The host's call id when valid; else a fresh one (time and process id), since the
/// log needs one and some hosts send none.
pub fn call_id(host: Host, given: Option<&str>) -> String {
    match given {
        Some(s) if valid_id(s) => s.to_string(),
        _ => fresh_call_id(host),
    }
}

pub fn fresh_call_id(host: Host) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{host}-{nanos}-{}", std::process::id())
}

/// `mcp` for an MCP tool called `server` / `tool` with `arguments`.
pub(crate) fn mcp(server: &str, tool: &str, arguments: &Value) -> Mapped {
    Mapped::Tool {
        tool: "mcp",
        input: serde_json::json!({ "server": server, "tool": tool, "arguments": arguments }),
    }
}

/// `mcp__<server>__<tool>` (Claude Code, Codex): the server is what comes before the
/// next `__`, the tool the rest (tool names may hold `__`; server names rarely do).
pub(crate) fn split_double_underscore(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// Picks `keys` (ours <- theirs) out of a host input, skipping absent ones; a present
/// value is copied as is, so our mapping's type checks still apply to it. Several of the
/// host's names for one field of ours are the spellings the host accepts; the first is
/// the one the host executes. When two of them are present with different values, the
/// call is `Mapped::Ambiguous`: judging one while the host runs the other is how a hook
/// is walked past (`{"cmd": "rm -rf ~", "command": "ls"}`).
pub(crate) fn pick(input: &Value, keys: &[(&str, &str)]) -> Result<Value, Mapped> {
    let mut out = Map::new();
    let mut from: Map<String, Value> = Map::new();
    if let Some(obj) = input.as_object() {
        for (ours, theirs) in keys {
            let Some(v) = obj.get(*theirs).filter(|v| !v.is_null()) else {
                continue;
            };
            match out.get(*ours) {
                None => {
                    out.insert(ours.to_string(), v.clone());
                    from.insert(ours.to_string(), Value::String(theirs.to_string()));
                }
                Some(kept) if kept == v => {}
                Some(_) => {
                    let first = from.get(*ours).and_then(Value::as_str).unwrap_or_default();
                    return Err(Mapped::Ambiguous {
                        reason: format!(
                            "the input gives `{first}` and `{theirs}` different values; the host runs only one of them, so khaelor-perm refuses to guess which"
                        ),
                    });
                }
            }
        }
    }
    Ok(Value::Object(out))
}

/// A picked input as our tool, or the refusal `pick` made.
pub(crate) fn to_tool(tool: &'static str, picked: Result<Value, Mapped>) -> Mapped {
    match picked {
        Ok(input) => Mapped::Tool { tool, input },
        Err(refused) => refused,
    }
}

/// A call whose input is ambiguous (`Mapped::Ambiguous`): denied, with the reason as
/// the model's message, interactive or not.
pub fn ambiguous_decision(call: &HookCall, reason: &str) -> CallDecision {
    let mut d = unjudged_decision(call, reason, false);
    d.message = Some(format!(
        "This call was denied: {reason}. Send the command in one field only."
    ));
    d
}

/// A call whose tool could not be mapped: asks; denies when nobody can answer.
pub fn unjudged_decision(call: &HookCall, reason: &str, interactive: bool) -> CallDecision {
    let summary = format!("{} {}", call.host_tool, compact(&call.input, 200));
    let (decision, message) = if interactive {
        (Action::Ask, None)
    } else {
        (
            Action::Deny,
            Some(messages::NON_INTERACTIVE_MESSAGE.to_string()),
        )
    };
    CallDecision {
        tool: call.host_tool.clone(),
        decision,
        requests: Vec::new(),
        always_patterns: Vec::new(),
        message,
        panel: None,
        summary,
        risk_notes: vec![reason.to_string()],
        hardline: None,
        config_errors: Vec::new(),
        containment: None,
    }
}

/// The decision for a host tool with no local effect.
pub fn no_effect_decision(call: &HookCall) -> CallDecision {
    CallDecision {
        tool: call.host_tool.clone(),
        decision: Action::Allow,
        requests: Vec::new(),
        always_patterns: Vec::new(),
        message: None,
        panel: None,
        summary: call.host_tool.clone(),
        risk_notes: vec![format!(
            "`{}` has no local effect ({} tool table)",
            call.host_tool, call.host
        )],
        hardline: None,
        config_errors: Vec::new(),
        containment: None,
    }
}

/// Decides a hook call: our mapping and the policy for a tool we know, the fail-closed
/// answers for the rest. A call the policy would contain is contained with the host's
/// sandbox runner (`runner_for`), and asks where there is none. Returns the mapped
/// call too (its requests go in the log).
pub fn decide_hook(
    call: &HookCall,
    policy: &crate::policy::config::Policy,
    session_rules: &[PermissionRule],
    ctx: &AnalysisContext,
    interactive: bool,
) -> (Option<MappedCall>, CallDecision) {
    match &call.mapped {
        Mapped::NoEffect => (None, no_effect_decision(call)),
        Mapped::Unjudged { reason } => (None, unjudged_decision(call, reason, interactive)),
        Mapped::Ambiguous { reason } => (None, ambiguous_decision(call, reason)),
        Mapped::Tool { tool, input } => match map_call(tool, input, ctx) {
            Ok(mapped) => {
                let runner = runner_for(call.host);
                let sandbox = runner
                    .as_ref()
                    .map(|r| r as &dyn crate::policy::decide::Sandbox);
                let d = crate::policy::decide::decide_with(
                    policy,
                    session_rules,
                    &mapped,
                    ctx,
                    interactive,
                    sandbox,
                );
                (Some(mapped), d)
            }
            Err(e) => {
                let reason = format!(
                    "khaelor-perm could not read this `{}` call: {e}",
                    call.host_tool
                );
                (None, unjudged_decision(call, &reason, interactive))
            }
        },
    }
}

/// The events a decided hook call leaves in the session log, as the service's
/// `POST /v1/sessions/{id}/calls` records them: `ToolRequested`, then `ToolApproved`,
/// `PermissionRequested` or `PermissionDenied` + `ToolFailed`.
pub fn events(
    call: &HookCall,
    mapped: Option<&MappedCall>,
    ctx: &AnalysisContext,
    interactive: bool,
    d: &CallDecision,
) -> Result<Vec<EventKind>, serde_json::Error> {
    let tool = match (&call.mapped, mapped) {
        (_, Some(m)) => format!("{}:{}", call.host, m.tool),
        _ => format!("{}:{}", call.host, call.host_tool),
    };
    let requests = match mapped {
        Some(m) => serde_json::to_value(&m.requests)?,
        None => Value::Array(Vec::new()),
    };
    let mut out = vec![EventKind::ToolRequested {
        call_id: call.call_id.clone(),
        turn_id: call.turn_id.clone(),
        tool,
        input: serde_json::json!({ "hostTool": call.host_tool, "hostInput": call.input }),
        project_root: ctx.root().display().to_string(),
        cwd: ctx.cwd().display().to_string(),
        home: ctx.home().display().to_string(),
        interactive,
        host: Some(call.host.as_str().to_string()),
        requests,
        grant_back: false,
        search_path: ctx.search_path_text(),
    }];
    out.extend(flow::decided(&call.call_id, d)?.0);
    Ok(out)
}

/// The model-facing text of a deny (seed §5.4 message, or the user-decline form).
pub use crate::session::flow::deny_text;

/// The text a host shows the user for an ask: what the call does, why it asks (the
/// notes), and the rule behind each request. Hosts draw their own prompt around it.
pub fn ask_text(d: &CallDecision) -> String {
    let mut out = format!("khaelor-perm asks: {}", d.summary);
    let mut notes: Vec<&String> = d.risk_notes.iter().collect();
    let mut details = String::new();
    match &d.panel {
        Some(p) => {
            notes.extend(p.risk_notes.iter());
            details = messages::render_panel_details(p);
        }
        None => {
            for r in d.requests.iter().filter(|r| r.decision == Action::Ask) {
                notes.extend(r.request.risk_notes.iter());
            }
        }
    }
    let mut seen: Vec<&String> = Vec::new();
    for n in notes {
        if !seen.contains(&n) {
            out.push_str("\n- ");
            out.push_str(n);
            seen.push(n);
        }
    }
    if !details.is_empty() {
        out.push('\n');
        out.push_str(details.trim_end());
    }
    out
}

/// A short reason for an allow: which rules let it run.
pub fn allow_text(d: &CallDecision) -> String {
    let rules: Vec<String> = d
        .requests
        .iter()
        .filter_map(|r| r.rule.as_ref().map(|x| x.describe()))
        .collect();
    if rules.is_empty() {
        format!(
            "khaelor-perm allowed {} ({})",
            d.summary,
            d.risk_notes.join("; ")
        )
    } else {
        format!("khaelor-perm allowed {} ({})", d.summary, rules.join("; "))
    }
}

/// The model-facing message when the hook itself failed: the call is blocked.
pub fn failure_message(err: &str) -> String {
    format!(
        "khaelor-perm could not check this tool call, so it was blocked: {err}. Tell the user; do not retry the same call."
    )
}

/// What `host` is told for decision `d`.
pub fn render(host: Host, d: &CallDecision) -> Rendered {
    match host {
        Host::Claude => claude::render(d),
        Host::Codex => codex::render(d),
        Host::Gemini => gemini::render(d),
        Host::Opencode => opencode::render(d),
        Host::Qwen => qwen::render(d),
        Host::Copilot => copilot::render(d),
        Host::Droid => droid::render(d),
        Host::Cline => cline::render(d),
    }
}

/// How long `host` lets a command hook run when its settings give the hook no timeout
/// of its own, as the pinned versions do: Claude Code 600 s (its `timeout` key, in
/// seconds), Codex 600 s (`timeout_sec` unset: `unwrap_or(600)` in its hook discovery),
/// Gemini CLI 60 s (`DEFAULT_HOOK_TIMEOUT = 6e4` in its bundle; its `timeout` key is in
/// milliseconds), Qwen Code 60 s (`DEFAULT_COMMAND_HOOK_TIMEOUT_SECONDS = 60` in its
/// bundle; its `timeout` key is in seconds), GitHub Copilot CLI 30 s (its documented
/// `timeoutSec` default; a hook past it lets the tool run, seen on 1.0.102). OpenCode
/// runs our plugin in process and sets no limit: `None`. Factory Droid 60 s (its hooks
/// manager shows `default (60s)`; its `timeout` key is in seconds). Cline CLI 3 s: it
/// runs our plugin in a sandbox process and gives each plugin hook 3000 ms
/// (`hookTimeoutMs` in `@cline/core` 0.0.86); past it the call fails and does not run.
pub fn default_hook_timeout(host: Host) -> Option<std::time::Duration> {
    match host {
        Host::Claude | Host::Codex => Some(std::time::Duration::from_secs(600)),
        Host::Gemini | Host::Qwen | Host::Droid => Some(std::time::Duration::from_secs(60)),
        Host::Copilot => Some(std::time::Duration::from_secs(30)),
        Host::Cline => Some(std::time::Duration::from_secs(3)),
        Host::Opencode => None,
    }
}

/// Seconds a waiting hook keeps between the end of its wait and the host's deadline:
/// the decision, the answer's trip back and the host's reading of it fit in them.
pub const WAIT_MARGIN_SECS: u64 = 5;

/// The longest `host` lets a hook wait for a person when the host gives the hook
/// `host_timeout` (its own default when `None`): that timeout less the margin. A hook
/// the host kills does not answer at all, and Gemini CLI then runs the tool.
pub fn longest_wait(host: Host, host_timeout: Option<std::time::Duration>) -> Option<u64> {
    host_timeout
        .or_else(|| default_hook_timeout(host))
        .map(|t| t.as_secs().saturating_sub(WAIT_MARGIN_SECS))
}

/// What `host` is told once a person answered, in the panel, a call its hook waited
/// for (`POST /v1/hooks/{host}?wait=SECS`): the host's explicit allow — Codex's too,
/// since an empty answer would leave the call to Codex's own approval — or its deny
/// carrying `message`, the model-facing text of the denial (the person's reason in it).
pub fn render_answered(host: Host, d: &CallDecision, approved: bool, message: &str) -> Rendered {
    if !approved {
        let denied = CallDecision {
            decision: Action::Deny,
            message: Some(message.to_string()),
            containment: None,
            ..d.clone()
        };
        return render(host, &denied);
    }
    let reason = format!(
        "khaelor-perm: the person approved {} in the panel",
        d.summary
    );
    let v = match host {
        Host::Claude | Host::Codex | Host::Qwen | Host::Droid => {
            claude::hook_specific("allow", &reason)
        }
        Host::Gemini | Host::Opencode | Host::Cline => {
            serde_json::json!({ "decision": "allow", "reason": reason })
        }
        Host::Copilot => return copilot::decision_json("allow", &reason),
    };
    Rendered {
        stdout: format!("{v}\n"),
        exit: 0,
    }
}

/// The host's deny form for a hook that failed (fail closed: never a crash or an exit
/// status the host reads as "run it").
pub fn render_failure(host: Host, err: &str) -> Rendered {
    let d = CallDecision {
        tool: String::new(),
        decision: Action::Deny,
        requests: Vec::new(),
        always_patterns: Vec::new(),
        message: Some(failure_message(err)),
        panel: None,
        summary: String::new(),
        risk_notes: Vec::new(),
        hardline: None,
        config_errors: Vec::new(),
        containment: None,
    };
    render(host, &d)
}

/// A JSON value in one line, cut to about `max` bytes.
fn compact(v: &Value, max: usize) -> String {
    let s = v.to_string();
    if s.len() <= max {
        return s;
    }
    let cut = (0..=max)
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}…", s.get(..cut).unwrap_or_default())
}

/// `{"decision": …, "reason": …}`: the shape Gemini CLI reads, and the one our OpenCode
/// plugin reads.
pub(crate) fn decision_reason_json(d: &CallDecision) -> String {
    let (decision, reason) = match d.decision {
        Action::Allow => ("allow", allow_text(d)),
        // A contained call reaches this shape only through `render_call` (OpenCode's
        // plugin); anywhere else it asks.
        Action::Contain | Action::Ask => ("ask", ask_text(d)),
        Action::Deny => ("deny", deny_text(d)),
    };
    let v = serde_json::json!({ "decision": decision, "reason": reason });
    format!("{v}\n")
}

/// The sandbox a host's hook can run contained calls with, for the pinned hosts that
/// let their pre-tool hook replace the tool's input (Claude Code's and Codex's
/// `updatedInput` with `permissionDecision: "allow"`, Gemini CLI's
/// `hookSpecificOutput.tool_input`, OpenCode's plugin replacing `args.command`).
/// Qwen Code 0.24.4's PreToolUse ignores `updatedInput`, and Copilot CLI's
/// `modifiedArgs` and Droid's `updatedInput` were not checked: none, so such a call
/// asks.
pub fn runner_for(host: Host) -> Option<crate::contain::Bubblewrap> {
    match host {
        Host::Claude | Host::Opencode | Host::Codex | Host::Gemini => crate::contain::runner(),
        Host::Qwen | Host::Copilot | Host::Droid | Host::Cline => None,
    }
}

/// A hook call decided: the mapped call (its requests go in the log), the decision,
/// and whether the host's own dialog answers it (`claude::leave_to_native_dialog`).
#[derive(Debug)]
pub struct HookDecision {
    pub mapped: Option<MappedCall>,
    pub decision: CallDecision,
    pub native: bool,
}

/// Decides a hook call of `call.host` with `policy` (built by
/// `grants::hook_policy`, so it holds the host's own rules unless they are off): the
/// one decision every path that answers a host takes, the one-shot `hook` and the
/// service's `POST /v1/hooks/{host}` alike.
pub fn decide_host_call(
    call: &HookCall,
    policy: &crate::policy::config::Policy,
    session_rules: &[PermissionRule],
    ctx: &AnalysisContext,
    interactive: bool,
) -> HookDecision {
    let (mapped, decision) = decide_hook(call, policy, session_rules, ctx, interactive);
    let native =
        call.host == Host::Claude && claude::leave_to_native_dialog(call, &decision, policy);
    HookDecision {
        mapped,
        decision,
        native,
    }
}

/// What `host` is told for a decided call whose host input was `input`.
pub fn render_decided(host: Host, input: &Value, d: &HookDecision) -> Rendered {
    if d.native {
        claude::render_native_dialog(&d.decision)
    } else {
        render_call(host, input, &d.decision)
    }
}

/// What `host` is told for decision `d` on a call with the host's tool `input`: a
/// contained call rewritten where the host takes a new input, else `render`.
pub fn render_call(host: Host, input: &Value, d: &CallDecision) -> Rendered {
    match host {
        Host::Claude => claude::render_contained(d, input),
        Host::Opencode => opencode::render_contained(d),
        Host::Codex => codex::render_contained(d, input),
        Host::Gemini => gemini::render_contained(d, input),
        Host::Qwen => qwen::render(d),
        Host::Copilot => copilot::render(d),
        Host::Droid => droid::render(d),
        Host::Cline => cline::render(d),
    }
}

/// For a contained call, the host's tool input with its `command` replaced by the
/// rewritten one and every other field kept (each host replaces the whole input with
/// it); `None` for any other decision.
pub(crate) fn contained_input(d: &CallDecision, input: &Value) -> Option<Value> {
    let (Action::Contain, Some(c), Some(obj)) = (d.decision, &d.containment, input.as_object())
    else {
        return None;
    };
    let mut updated = obj.clone();
    updated.insert("command".to_string(), Value::String(c.command.clone()));
    Some(Value::Object(updated))
}

/// The reason shown for a contained call: what runs, and in which sandbox.
pub fn contain_text(d: &CallDecision) -> String {
    match &d.containment {
        Some(c) => format!(
            "khaelor-perm runs {} in its sandbox (profile `{}`: writes only in {} and a private /tmp, {} protected paths read-only, {} secrets masked, {})",
            d.summary,
            c.profile.name.as_str(),
            c.profile.root,
            c.profile.read_only.len(),
            c.profile.masked.len(),
            if c.profile.network {
                "network on"
            } else {
                "no network"
            }
        ),
        None => ask_text(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The golden table of the newer hosts' mappings (fixtures/hosts_map.jsonl): each
    /// row is one host tool call and what it maps to.
    #[test]
    fn maps_each_hosts_tools_as_the_golden_table_says() {
        let table = include_str!("../../fixtures/hosts_map.jsonl");
        let mut rows = 0;
        for (n, line) in table.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let row: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
            let field = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or_default();
            let (name, input) = (field("name"), &row["input"]);
            let map = match field("host") {
                "copilot" => copilot::map,
                "droid" => droid::map,
                "qwen" => qwen::map,
                "cline" => cline::map,
                other => panic!("line {}: no mapping for host `{other}`", n + 1),
            };
            let got = map(name, input);
            let ok = match field("want") {
                "noEffect" => got == Mapped::NoEffect,
                "unjudged" => matches!(got, Mapped::Unjudged { .. }),
                "ambiguous" => matches!(got, Mapped::Ambiguous { .. }),
                "mcp" => got == mcp(field("server"), field("mcpTool"), input),
                "" => {
                    matches!(&got, Mapped::Tool { tool, input } if *tool == field("tool") && *input == row["mapped"])
                }
                other => panic!("line {}: unknown want `{other}`", n + 1),
            };
            assert!(
                ok,
                "line {}: {} {name} mapped to {got:?}",
                n + 1,
                field("host")
            );
            rows += 1;
        }
        assert!(rows >= 40, "the table has {rows} rows");
    }

    #[test]
    fn session_ids_become_log_ids() {
        assert_eq!(session_id(Host::Claude, Some("abc-123")), "abc-123");
        assert_eq!(session_id(Host::Claude, Some("a/../b")), "a____b");
        assert_eq!(session_id(Host::Gemini, None), "gemini-unknown");
        let long = "x".repeat(300);
        assert_eq!(session_id(Host::Codex, Some(&long)).len(), 128);
    }

    #[test]
    fn mcp_names_split_at_the_server() {
        assert_eq!(
            split_double_underscore("mcp__github__list_issues"),
            Some(("github", "list_issues"))
        );
        assert_eq!(split_double_underscore("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(split_double_underscore("mcp__github"), None);
        assert_eq!(split_double_underscore("mcp____x"), None);
        assert_eq!(split_double_underscore("Bash"), None);
    }
}
