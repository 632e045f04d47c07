//! The OpenAPI document of the service, generated from the handlers and body types
//! (utoipa), and hand-written mirror schemas for the library's shared types that carry
//! no schema derive of their own (`vocab`, `rules`, `config`, `decide`).
//!
//! Owns the spec only. A mirror must follow its type's serde shape field for field;
//! `tests/http_openapi.rs` checks the checked-in `openapi.yaml` against `yaml()`, and
//! the mirror tests below check real values' keys against the mirrors.

#![allow(dead_code)] // Mirror types exist for their schemas, never built.

use std::sync::OnceLock;

use utoipa::{OpenApi, ToSchema};

use super::api;
use super::error::{ErrorBody, ErrorDetail};
use super::handlers;
use super::sessions;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "khaelor-perm",
        description = "Decides, before an AI coding agent runs a tool, whether the call may run silently (allow), must ask the user (ask), or is denied (deny).\n\nEvery error is `{\"error\": {\"code\", \"message\"}}`. When the server has a token, every route but `/healthz` and `/openapi.yaml` needs `Authorization: Bearer <token>`. Bodies must be `application/json`, at most 1 MiB; commands at most 64 KiB."
    ),
    paths(
        handlers::healthz,
        handlers::readyz,
        handlers::metrics,
        handlers::openapi_yaml,
        handlers::analyze,
        handlers::evaluate,
        handlers::rules,
        handlers::tools_available,
        handlers::trust,
        sessions::record_call,
        sessions::pending,
        sessions::events,
        sessions::grant,
        sessions::deny,
        super::hooks::hook,
    ),
    components(schemas(
        ErrorBody, ErrorDetail,
        api::Engine, api::Health, api::AnalyzeRequest, api::EvaluateRequest, api::RulesResponse,
        api::ToolsAvailableRequest, api::ToolsAvailableResponse, api::RecordCallRequest, sessions::CallResponse,
        api::PendingCall, api::PendingResponse, api::GrantRequest, api::GrantResponse, api::DenyRequest,
        api::DeniedCall, api::DenyResponse, api::EventsResponse, api::TrustRequest, api::TrustResponse,
        crate::trust::TrustStatus, crate::config::IgnoredAllows, crate::protected::ProtectedEntry,
        crate::session::Event, crate::session::EventKind, crate::session::GrantScope, crate::session::CallStatus,
        crate::session::ApprovedBy, crate::session::DeniedBy, crate::grants::PersistedRule,
        ToolNameSchema, CapabilitySchema, CapabilityRequestSchema, CommandClassSchema, EngineKindSchema, PartSchema,
        HardlineHitSchema, FallbackReasonSchema, FallbackSchema, AnalysisSchema, BothAnalysisSchema,
        ActionSchema, RuleSourceSchema, RuleOriginSchema, PermissionRuleSchema, ConfigErrorSchema,
        EvaluatedRequestSchema, PanelKeySchema, PanelDetailSchema, PanelSchema, CallDecisionSchema,
    )),
    tags(
        (name = "service", description = "Health, metrics and this document"),
        (name = "analysis", description = "Bash command analysis"),
        (name = "policy", description = "Stateless evaluation against the layered rules"),
        (name = "sessions", description = "Durable session flow: record, pending, grant, deny, events"),
    )
)]
pub struct ApiDoc;

/// The document as YAML, generated once.
pub fn yaml() -> String {
    static YAML: OnceLock<String> = OnceLock::new();
    YAML.get_or_init(|| match ApiDoc::openapi().to_yaml() {
        Ok(y) => y,
        Err(e) => {
            tracing::error!(error = %e, "could not render the OpenAPI document");
            String::new()
        }
    })
    .clone()
}

/// A tool the mapping knows (`tools::KNOWN_TOOLS`); any other name is a 422.
#[derive(ToSchema)]
#[schema(as = ToolName)]
#[serde(rename_all = "snake_case")]
pub enum ToolNameSchema {
    Read,
    Glob,
    Grep,
    List,
    Write,
    Edit,
    ApplyPatch,
    Bash,
    ProcessStart,
    ProcessStdin,
    Webfetch,
    Mcp,
}

/// One of the seven V1 capabilities (seed §1), or `mcp.call` (an MCP server's tool).
#[derive(ToSchema)]
#[schema(as = Capability)]
pub enum CapabilitySchema {
    #[schema(rename = "file.read")]
    FileRead,
    #[schema(rename = "file.write.project")]
    FileWriteProject,
    #[schema(rename = "file.write.outsideProject")]
    FileWriteOutsideProject,
    #[schema(rename = "process.execute")]
    ProcessExecute,
    #[schema(rename = "process.background")]
    ProcessBackground,
    #[schema(rename = "network.access")]
    NetworkAccess,
    #[schema(rename = "git.modify")]
    GitModify,
    #[schema(rename = "mcp.call")]
    McpCall,
}

/// One thing a tool call asks to do (seed §1.1).
#[derive(ToSchema)]
#[schema(as = CapabilityRequest)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRequestSchema {
    pub capability: CapabilitySchema,
    /// What rules' patterns match against: resolved path, URL or command text.
    pub subject: String,
    /// Human-readable line for the panel, e.g. `Run npm install`.
    pub display: String,
    /// Candidate "always allow" patterns, most specific first; empty when the analyzer
    /// could not fully read the command.
    pub always_patterns: Vec<String>,
    /// Analyzer-derived facts shown in the panel.
    pub risk_notes: Vec<String>,
    /// UI extras (diff, parts, cwd); never model-facing. Absent when empty.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<serde_json::Value>,
    /// What makes the command run this program behind its own back (a flag such as
    /// `git diff --ext-diff`, a container with host access); absent otherwise. Never
    /// offered an always pattern.
    pub via: Option<String>,
}

#[derive(ToSchema)]
#[schema(as = CommandClass)]
#[serde(rename_all = "lowercase")]
pub enum CommandClassSchema {
    Simple,
    Compound,
    Obfuscated,
}

#[derive(ToSchema)]
#[schema(as = EngineKind)]
#[serde(rename_all = "lowercase")]
pub enum EngineKindSchema {
    Ast,
    Lexer,
}

/// One simple command of the analysed text.
#[derive(ToSchema)]
#[schema(as = Part)]
pub struct PartSchema {
    /// The words with quotes removed.
    pub words: Vec<String>,
    /// The source text, whitespace collapsed; the `process.execute` subject.
    pub text: String,
    /// The effective working directory; null when it could not be known.
    pub cwd: Option<String>,
}

/// A hit of the hardline floor (seed §4.2).
#[derive(ToSchema)]
#[schema(as = HardlineHit)]
pub struct HardlineHitSchema {
    /// The floor entry that fired, e.g. `rm -rf /`.
    pub rule: String,
    /// The de-obfuscated rendering it fired on.
    pub rendering: String,
}

#[derive(ToSchema)]
#[schema(as = FallbackReason)]
#[serde(rename_all = "camelCase")]
pub enum FallbackReasonSchema {
    ParseError,
    ParseTimeout,
    DepthLimit,
    TooLarge,
    UnknownNode,
    AnalyzerError,
}

/// Why the AST engine handed over to the lexer.
#[derive(ToSchema)]
#[schema(as = Fallback)]
pub struct FallbackSchema {
    pub reason: FallbackReasonSchema,
    /// One line saying what was found, e.g. `ERROR node at 1:5`.
    pub detail: String,
}

/// What an engine read from one bash command.
#[derive(ToSchema)]
#[schema(as = Analysis)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisSchema {
    pub command: String,
    pub class: CommandClassSchema,
    pub parts: Vec<PartSchema>,
    pub requests: Vec<CapabilityRequestSchema>,
    pub always_patterns: Vec<String>,
    pub risk_notes: Vec<String>,
    pub hardline: Option<HardlineHitSchema>,
    pub engine: EngineKindSchema,
    pub fallback: Option<FallbackSchema>,
}

/// An analysis; with `engine: both` it also carries the lexer's and whether the two
/// agree on class, requests and hardline.
#[derive(ToSchema)]
#[schema(as = BothAnalysis)]
#[serde(rename_all = "camelCase")]
pub struct BothAnalysisSchema {
    #[serde(flatten)]
    pub analysis: AnalysisSchema,
    pub lexer: Option<AnalysisSchema>,
    pub agree: Option<bool>,
}

/// What a rule or a call decides.
#[derive(ToSchema)]
#[schema(as = Action)]
#[serde(rename_all = "lowercase")]
pub enum ActionSchema {
    Allow,
    Ask,
    Deny,
}

/// Where a rule came from: `hardline` and `builtin` are the non-configurable floors,
/// then the layers in evaluation order.
#[derive(ToSchema)]
#[schema(as = RuleSource)]
#[serde(rename_all = "lowercase")]
pub enum RuleSourceSchema {
    Hardline,
    Builtin,
    Default,
    Preset,
    User,
    Project,
    Managed,
    Session,
}

/// Where in a config file a rule was written (1-based).
#[derive(ToSchema)]
#[schema(as = RuleOrigin)]
pub struct RuleOriginSchema {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One rule with its provenance (seed §4.1).
#[derive(ToSchema)]
#[schema(as = PermissionRule)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRuleSchema {
    /// Capability pattern, e.g. `file.write.*` or `*`.
    pub capability: String,
    /// Subject pattern, e.g. `git push *`.
    pub pattern: String,
    pub action: ActionSchema,
    pub source: RuleSourceSchema,
    /// Absent for built-in and session rules.
    pub origin: Option<RuleOriginSchema>,
    /// An explicit `ask` from a config file offers "always" only when set; absent when
    /// false.
    pub allow_always: Option<bool>,
    /// A preset rule matches only a `process.execute` request the analysis gave this
    /// verdict (`readOnly`, `projectBuild`, `projectWrite`; issue 10).
    pub when: Option<String>,
    /// The name of a shipped rule (`secret: AWS credentials and config`).
    pub name: Option<String>,
}

/// A config file that could not be (fully) used.
#[derive(ToSchema)]
#[schema(as = ConfigError)]
pub struct ConfigErrorSchema {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A capability request with its decision and the rule that decided it (none: no rule
/// matched, which asks).
#[derive(ToSchema)]
#[schema(as = EvaluatedRequest)]
pub struct EvaluatedRequestSchema {
    #[serde(flatten)]
    pub request: CapabilityRequestSchema,
    pub decision: ActionSchema,
    pub rule: Option<PermissionRuleSchema>,
}

/// One key the ask panel offers.
#[derive(ToSchema)]
#[schema(as = PanelKey)]
pub struct PanelKeySchema {
    /// `Enter`, `A`, `Esc`, `Tab`.
    pub key: String,
    pub label: String,
}

/// One line of the panel's details view.
#[derive(ToSchema)]
#[schema(as = PanelDetail)]
pub struct PanelDetailSchema {
    pub decision: ActionSchema,
    pub capability: CapabilitySchema,
    pub subject: String,
    pub display: String,
    pub rule: Option<PermissionRuleSchema>,
}

/// The ask panel (seed §6.1) as data.
#[derive(ToSchema)]
#[schema(as = Panel)]
#[serde(rename_all = "camelCase")]
pub struct PanelSchema {
    pub title: String,
    /// `Run`, `Write`, `Edit`, `Start process`, `Read`, `Fetch`, `Send input`.
    pub verb: String,
    /// The capability badge.
    pub badge: String,
    /// The command text or the path.
    pub subject: String,
    pub working_directory: String,
    /// The simple commands of a compound command; absent otherwise.
    pub parts: Option<Vec<String>>,
    /// Unified diff for writes and edits.
    pub diff: Option<String>,
    pub risk_notes: Vec<String>,
    /// What `A` persists; empty means no `A`.
    pub always_patterns: Vec<String>,
    pub keys: Vec<PanelKeySchema>,
    pub details: Vec<PanelDetailSchema>,
}

/// The decision for a whole tool call: deny beats ask beats allow over its requests.
#[derive(ToSchema)]
#[schema(as = CallDecision)]
#[serde(rename_all = "camelCase")]
pub struct CallDecisionSchema {
    pub tool: String,
    pub decision: ActionSchema,
    pub requests: Vec<EvaluatedRequestSchema>,
    /// What an "always" grant may persist; non-empty only for an ask the analyzer fully
    /// read and no rule forbids generalizing.
    pub always_patterns: Vec<String>,
    /// The model-facing message of a deny (seed §5.4).
    pub message: Option<String>,
    /// The ask panel (interactive asks only).
    pub panel: Option<PanelSchema>,
    /// The call in a few words.
    pub summary: String,
    pub risk_notes: Vec<String>,
    pub hardline: Option<HardlineHitSchema>,
    /// The config problems that capped this decision; absent when none.
    pub config_errors: Option<Vec<ConfigErrorSchema>>,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The spec's tool enum is the mapping's list, in order: no tool is missing or
    /// invented.
    #[test]
    fn tool_names_are_the_known_tools() {
        let doc = ApiDoc::openapi();
        let v = serde_json::to_value(&doc).unwrap();
        let names: Vec<String> = v["components"]["schemas"]["ToolName"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, crate::tools::KNOWN_TOOLS);
    }
    use crate::config::{ConfigError, Policy};
    use crate::rules::{Action, PermissionRule, RuleOrigin, RuleSource};
    use crate::vocab::{
        Analysis, AnalysisContext, Capability, CapabilityRequest, CommandClass, EngineKind,
        Fallback, FallbackReason, HardlineHit, Part,
    };

    /// The properties a schema declares (following `allOf` and `$ref`), and the ones it
    /// requires.
    fn properties(schemas: &Value, name: &str) -> (Vec<String>, Vec<String>) {
        let s = &schemas[name];
        let mut props: Vec<String> = s["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        let mut required: Vec<String> = s["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        for part in s["allOf"].as_array().into_iter().flatten() {
            let (p, r) = match part["$ref"].as_str() {
                Some(r) => properties(schemas, r.trim_start_matches("#/components/schemas/")),
                None => {
                    let tmp = json!({"x": part});
                    properties(&tmp, "x")
                }
            };
            props.extend(p);
            required.extend(r);
        }
        (props, required)
    }

    /// Every key `value` has is declared by the mirror, every key the mirror requires is
    /// there: a mirror that drifts from its type's serde shape fails here.
    fn check(name: &str, value: &Value) {
        let spec = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let schemas = &spec["components"]["schemas"];
        assert!(schemas.get(name).is_some(), "no schema {name}");
        let (props, required) = properties(schemas, name);
        let obj = value.as_object().unwrap();
        for k in obj.keys() {
            assert!(
                props.contains(k),
                "{name}: field `{k}` is not in the schema {props:?}"
            );
        }
        for k in &required {
            assert!(
                obj.contains_key(k),
                "{name}: schema requires `{k}`, the real value has {:?}",
                obj.keys()
            );
        }
    }

    fn full_request() -> CapabilityRequest {
        let mut r = CapabilityRequest::new(Capability::ProcessExecute, "npm test", "Run npm test");
        r.always_patterns.push("npm test".into());
        r.risk_notes.push("note".into());
        r.metadata.insert("cwd".into(), json!("/p"));
        r.via = Some("git diff --ext-diff".into());
        r
    }

    #[test]
    fn mirrors_match_the_real_shapes() {
        let analysis = Analysis {
            command: "npm test".into(),
            class: CommandClass::Simple,
            parts: vec![Part {
                words: vec!["npm".into(), "test".into()],
                text: "npm test".into(),
                cwd: Some("/p".into()),
            }],
            requests: vec![full_request()],
            always_patterns: vec!["npm test".into()],
            risk_notes: vec!["n".into()],
            hardline: Some(HardlineHit {
                rule: "rm -rf /".into(),
                rendering: "rm -rf /".into(),
            }),
            engine: EngineKind::Ast,
            fallback: Some(Fallback {
                reason: FallbackReason::ParseError,
                detail: "ERROR node at 1:1".into(),
            }),
        };
        check("Analysis", &serde_json::to_value(&analysis).unwrap());
        check(
            "CapabilityRequest",
            &serde_json::to_value(full_request()).unwrap(),
        );
        check("Part", &serde_json::to_value(&analysis.parts[0]).unwrap());
        let both = crate::analysis::BothAnalysis {
            ast: analysis.clone(),
            lexer: analysis,
            agree: true,
        };
        check("BothAnalysis", &serde_json::to_value(&both).unwrap());

        let mut rule = PermissionRule::new("file.read", "*.env", Action::Ask, RuleSource::Project);
        rule.origin = Some(RuleOrigin {
            file: "/p/.khaelor/config.json".into(),
            line: 3,
            column: 5,
        });
        rule.allow_always = true;
        check("PermissionRule", &serde_json::to_value(&rule).unwrap());
        let err = ConfigError {
            file: "f".into(),
            line: 1,
            column: 2,
            message: "m".into(),
        };
        check("ConfigError", &serde_json::to_value(&err).unwrap());

        // A real ask decision with its panel, from a tool that needs no bash engine.
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(".env"), "A=1").unwrap();
        let ctx = AnalysisContext::new(root.path(), None, root.path()).unwrap();
        let call = crate::tools::map_call("read", &json!({"path": ".env"}), &ctx).unwrap();
        let mut decision = crate::decide::decide(&Policy::default(), &[], &call, &ctx, true);
        assert_eq!(decision.decision, Action::Ask);
        decision.message = Some("m".into());
        decision.config_errors.push(err);
        let value = serde_json::to_value(&decision).unwrap();
        check("CallDecision", &value);
        check("EvaluatedRequest", &value["requests"][0]);
        check("Panel", &value["panel"]);
        check("PanelKey", &value["panel"]["keys"][0]);
        check("PanelDetail", &value["panel"]["details"][0]);
    }
}
