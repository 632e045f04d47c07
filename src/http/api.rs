//! Request and response bodies of the HTTP API, camelCase on the wire.
//!
//! Owns the shapes only, with their OpenAPI schemas; bodies reject unknown fields so a
//! misspelt option (`interactve`) is a 400, not a silent default. Shared library types
//! (analysis, rules, decisions) are serialized as they are and documented by the
//! mirror schemas in `openapi`.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Which engine `/v1/analyze` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// tree-sitter-bash, with the lexer as fail-closed fallback.
    #[default]
    Ast,
    /// The V1 shell-word lexer alone.
    Lexer,
    /// The AST analysis with the lexer's beside it (`lexer`, `agree`).
    Both,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: String,
    pub version: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnalyzeRequest {
    /// The bash command, at most 64 KiB.
    pub command: String,
    /// Absolute path of the project root (must exist).
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    /// Absolute starting directory; defaults to the project root.
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub cwd: Option<String>,
    /// Absolute home that `~` and `$HOME` expand to; defaults to the server's `$HOME`.
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub home: Option<String>,
    #[serde(default)]
    pub engine: Option<Engine>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluateRequest {
    /// Tool name: read, glob, grep, list, write, edit, apply_patch, bash,
    /// process_start, process_stdin, webfetch.
    #[schema(value_type = crate::model::schema::ToolNameSchema)]
    pub tool: String,
    /// The tool's input object, as the model sent it.
    #[schema(value_type = Object)]
    pub input: serde_json::Value,
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub cwd: Option<String>,
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub home: Option<String>,
    /// Whether a user can answer an ask; when false every ask resolves as deny
    /// (seed §5.2). Defaults to true.
    #[serde(default)]
    pub interactive: Option<bool>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RulesQuery {
    /// Absolute path of the project root.
    #[param(
        rename = "projectRoot",
        pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$",
        min_length = 1
    )]
    pub project_root: String,
    /// Home whose user config is layered in; defaults to the server's `$HOME`.
    #[serde(default)]
    #[param(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub home: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsAvailableRequest {
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub home: Option<String>,
    /// The tool names the host would offer the model.
    pub tools: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ToolsAvailableResponse {
    /// The tools still offered: those whose every capability is denied for `*` are
    /// removed (seed §7.2).
    pub tools: Vec<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordCallRequest {
    /// The tool call id, `[A-Za-z0-9_-]{1,128}`.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,128}$")]
    pub call_id: String,
    /// The model turn the call belongs to; denying one call denies the turn's other
    /// pending calls.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9_-]{1,128}$")]
    pub turn_id: Option<String>,
    #[schema(value_type = crate::model::schema::ToolNameSchema)]
    pub tool: String,
    #[schema(value_type = Object)]
    pub input: serde_json::Value,
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub cwd: Option<String>,
    #[serde(default)]
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub home: Option<String>,
    #[serde(default)]
    pub interactive: Option<bool>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantRequest {
    pub scope: crate::session::GrantScope,
    /// For `always`: one of the call's offered `alwaysPatterns`; defaults to the first
    /// (most specific).
    #[serde(default)]
    pub pattern: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantResponse {
    pub call_id: String,
    pub status: crate::session::CallStatus,
    pub scope: crate::session::GrantScope,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The rules an `always` grant added.
    pub persisted_rules: Vec<crate::session::grants::PersistedRule>,
    /// The config file the rules were appended to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    /// The rules went back to the call's waiting hook (`hook --url --wait`), which
    /// writes them into the project config on the agent's machine; this replica wrote
    /// no file, and the rules hold for the session.
    pub handed_to_hook: bool,
    /// Other pending calls of the session that the grant made evaluate to allow, now
    /// approved.
    pub auto_approved: Vec<String>,
}

/// The answer to a waiting hook request with `grantBack=true` (`hook --url --wait`):
/// the host's answer, and the person's "always" grant of this very call when they
/// chose one, for the hook to write into the project config on the agent's machine.
/// The hook's failures (a refused token, a request cut short) are the host's deny
/// form as is, never this shape.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookAnswer {
    /// The host's answer, exactly the text the hook prints for its host (empty for
    /// Codex's allow without a word).
    pub hook_answer: String,
    /// The person's "always" grant of this call; absent for any other answer (once, a
    /// denial, a timeout, an approval by another call's grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<ReturnedGrant>,
}

/// An "always" grant travelling back to the waiting hook of the call it answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnedGrant {
    /// The session of the call (the host's session id).
    pub session_id: String,
    /// The call the person answered.
    pub call_id: String,
    /// Always `always`.
    pub scope: crate::session::GrantScope,
    /// The "always" pattern the person chose among those the call offered.
    pub pattern: String,
    /// The rules the grant adds: each a capability of the call, the chosen pattern
    /// (or the request's own first pattern) and `allow`.
    pub rules: Vec<crate::session::grants::PersistedRule>,
    /// Who granted: `user`, a person through the panel.
    pub granted_by: crate::session::ApprovedBy,
    /// The project root the call was decided for; the hook writes
    /// `<projectRoot>/.khaelor/config.json`.
    pub project_root: String,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DenyRequest {
    /// One line from the user; reaches the model verbatim (seed §5.4).
    #[serde(default)]
    pub feedback: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeniedCall {
    pub call_id: String,
    /// The model-facing message (seed §5.4).
    pub message: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DenyResponse {
    pub call_id: String,
    /// The model-facing message (seed §5.4).
    pub message: String,
    /// Other pending calls of the same turn, denied with it.
    pub also_denied: Vec<DeniedCall>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    pub call_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub tool: String,
    #[schema(value_type = Object)]
    pub input: serde_json::Value,
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    pub requested_at: String,
    /// The decision that asked: requests with matched rules, always patterns, panel.
    #[schema(value_type = crate::model::schema::CallDecisionSchema)]
    pub decision: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingResponse {
    pub session_id: String,
    /// Calls waiting for the user, oldest first.
    pub pending: Vec<PendingCall>,
}

/// A call waiting for a person, in any session: what the panels list and show.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PanelCall {
    pub session_id: String,
    /// The agent host whose hook sent the call (`claude`, `codex`, `gemini`,
    /// `opencode`); absent for calls recorded through the sessions API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub tool: String,
    #[schema(value_type = Object)]
    pub input: serde_json::Value,
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    pub cwd: String,
    pub requested_at: String,
    /// The decision that asked: requests with matched rules, always patterns, panel.
    #[schema(value_type = crate::model::schema::CallDecisionSchema)]
    pub decision: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PanelResponse {
    /// Every call waiting for a person, in every session, oldest first.
    pub calls: Vec<PanelCall>,
}

/// A pending call stopped waiting: approved or denied, and by whom.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PanelResolved {
    pub session_id: String,
    pub call_id: String,
    pub status: crate::session::CallStatus,
    /// `user`, `host`, `autoResolve` or `turn`.
    pub by: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsResponse {
    pub session_id: String,
    pub events: Vec<crate::session::Event>,
    /// Lines of the log that could not be read (a torn last line after a crash), each
    /// with file and line; they are skipped, never fatal.
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RulesResponse {
    /// Effective rules in evaluation order: defaults, managed, user, project (last
    /// match wins).
    #[schema(value_type = Vec<crate::model::schema::PermissionRuleSchema>)]
    pub rules: Vec<crate::policy::rules::PermissionRule>,
    /// Config problems (file, line, column); while any exists every decision is at
    /// most ask.
    #[schema(value_type = Vec<crate::model::schema::ConfigErrorSchema>)]
    pub errors: Vec<crate::policy::config::ConfigError>,
    /// The config files read, existing or not.
    pub files: Vec<String>,
    /// Project config files whose allows were ignored because they are not trusted:
    /// `khaelor-perm trust` or `POST /v1/trust` applies them.
    #[schema(value_type = Vec<crate::policy::config::IgnoredAllows>)]
    pub ignored: Vec<crate::policy::config::IgnoredAllows>,
    /// Paths whose writes always ask and never get an "always" pattern, with the
    /// reason for each.
    pub protected: Vec<crate::policy::protected::ProtectedEntry>,
    /// The signed bundle the managed layer comes from, when the service fetches it
    /// (`--managed-url`): version, signer key id, when it was fetched and its age.
    #[serde(rename = "managedBundle", skip_serializing_if = "Option::is_none")]
    pub managed_bundle: Option<crate::policy::bundle::store::BundleStatus>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustRequest {
    /// Absolute path of the project root whose `.khaelor/config.json` is trusted.
    #[schema(pattern = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$", min_length = 1)]
    pub project_root: String,
    /// Forget the trust instead of recording it.
    #[serde(default)]
    pub revoke: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustResponse {
    /// The project config file.
    pub file: String,
    /// `trusted` after a trust, `untrusted` after a revoke.
    pub status: crate::policy::trust::TrustStatus,
    /// Hex SHA-256 of the content trusted (absent after a revoke).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// For a revoke: whether the file had been trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was_trusted: Option<bool>,
}
