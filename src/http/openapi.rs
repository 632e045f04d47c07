//! The OpenAPI document of the service, generated from the handlers and body types
//! (utoipa), and hand-written mirror schemas for the library's shared types that carry
//! no schema derive of their own (`vocab`, `rules`, `config`, `decide`).
//!
//! Owns the spec and the route that serves it (`/openapi.yaml`); it imports the
//! handlers to list them, and nothing imports it but that route and `cli openapi`. A mirror must follow its type's serde shape field for field;
//! `tests/http_openapi.rs` checks the checked-in `openapi.yaml` against `yaml()`, and
//! the mirror tests below check real values' keys against the mirrors.

#![allow(dead_code)] // Mirror types exist for their schemas, never built.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;

use super::api;
use super::error::{ErrorBody, ErrorDetail};
use super::handlers;
use super::sessions;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "khaelor-perm",
        description = "Decides, before an AI coding agent runs a tool, whether the call may run silently (allow), must ask the user (ask), or is denied (deny).\n\nEvery error is `{\"error\": {\"code\", \"message\"}}`. When the server has a token (`--token-file`), every route but `/healthz` and `/openapi.yaml` needs `Authorization: Bearer <token>`. Without one, the server makes its panel token (`<state-dir>/panel-token`), which every route that answers a prompt or shows what waits for one needs, on loopback too (grant, deny, `/v1/trust`, pending calls, events, any route not listed next); the probes, `/metrics`, `/openapi.yaml`, `/v1/analyze`, `/v1/evaluate`, `/v1/explain`, `/v1/rules`, `/v1/tools/available`, `POST /v1/hooks/{host}` and `POST /v1/sessions/{id}/calls` stay open. Bodies must be `application/json`, at most 1 MiB; commands at most 64 KiB."
    ),
    paths(
        handlers::healthz,
        handlers::readyz,
        handlers::metrics,
        openapi_yaml,
        handlers::analyze,
        handlers::evaluate,
        handlers::explain,
        handlers::rules,
        handlers::tools_available,
        handlers::trust,
        sessions::record_call,
        sessions::pending,
        super::pending::pending,
        super::pending::stream,
        super::audit::audit,
        super::audit::receive,
        sessions::events,
        sessions::grant,
        sessions::deny,
        super::hooks::hook,
    ),
    components(schemas(
        ErrorBody, ErrorDetail,
        api::Engine, api::Health, api::AnalyzeRequest, api::EvaluateRequest, api::RulesResponse,
        api::ToolsAvailableRequest, api::ToolsAvailableResponse, api::RecordCallRequest, sessions::CallResponse,
        api::PendingCall, api::PendingResponse, api::PanelCall, api::PanelResponse, api::PanelResolved, api::GrantRequest, api::GrantResponse, api::HookAnswer, api::ReturnedGrant, api::DenyRequest,
        api::DeniedCall, api::DenyResponse, api::EventsResponse, api::TrustRequest, api::TrustResponse,
        crate::policy::trust::TrustStatus, crate::policy::config::IgnoredAllows, crate::policy::protected::ProtectedEntry,
        crate::session::Event, crate::session::EventKind, crate::session::GrantScope, crate::session::CallStatus,
        crate::session::ApprovedBy, crate::session::DeniedBy, crate::session::grants::PersistedRule,
        super::audit::AuditResponse, super::audit::AuditBatch, super::audit::ReceivedRecordSchema, crate::session::audit::Received, crate::session::audit::AuditRecord, crate::session::audit::AuditRequest, crate::session::audit::AuditEvent,
        ToolNameSchema, CapabilitySchema, CapabilityRequestSchema, CommandClassSchema, EngineKindSchema, PartSchema,
        HardlineHitSchema, FallbackReasonSchema, FallbackSchema, AnalysisSchema, BothAnalysisSchema,
        ActionSchema, RuleSourceSchema, RuleOriginSchema, PermissionRuleSchema, ConfigErrorSchema,
        EvaluatedRequestSchema, ReasonSchema, PackHitSchema, SeveritySchema, NotContainedWhySchema, SandboxProfileSchema, ContainmentSchema, VerdictSchema, DirectoryReadSchema, PanelKeySchema, PanelDetailSchema, PanelSchema, CallDecisionSchema,
        ExplanationSchema, RequestTraceSchema, RuleConsideredSchema, RuleMatchSchema, AlwaysWhySchema, AlwaysTraceSchema,
    )),
    tags(
        (name = "service", description = "Health, metrics and this document"),
        (name = "analysis", description = "Bash command analysis"),
        (name = "policy", description = "Stateless evaluation against the layered rules"),
        (name = "sessions", description = "Durable session flow: record, pending, grant, deny, events"),
    ),
    modifiers(&ToolInputs)
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

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/openapi.yaml", tag = "service",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = String, content_type = "application/yaml")))]
pub async fn openapi_yaml() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml")], yaml()).into_response()
}

/// An absolute path without control characters (a path holding one is a 400).
pub const ABSOLUTE_PATH: &str = "^/[^\\u0000-\\u001f\\u007f-\\u009f]*$";
/// A path the tool resolves against the call's cwd: non-empty, no control characters.
const TOOL_PATH: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]+$";
/// Text with something besides whitespace in it (a blank one is a 422 `empty_input`).
const NOT_BLANK: &str = "\\S";
/// An MCP server or tool name: not blank, no `/` and no control characters.
const MCP_NAME: &str = "^[^/\\u0000-\\u001f\\u007f-\\u009f]*[^/\\s\\u0000-\\u001f\\u007f-\\u009f][^/\\u0000-\\u001f\\u007f-\\u009f]*$";
/// The envelope form of a patch that touches at least one file: `*** Begin Patch`,
/// file sections, `*** End Patch` (unified diffs are accepted too; see `patch`).
const PATCH_ENVELOPE: &str = "^\\*\\*\\* Begin Patch\\n(\\*\\*\\* (Add|Update|Delete) File: [^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*\\n)+\\*\\*\\* End Patch\\n?$";
/// Characters of a command that surely fit its 64 KiB (UTF-8 bytes) limit.
const COMMAND_MAX_CHARS: usize = crate::tools::MAX_COMMAND_BYTES / 4;

/// The `input` each tool takes (what `tools::map_call` reads), as JSON Schema. Keys
/// not named are ignored by the mapping, so they stay allowed.
fn tool_input_schema(tool: &str) -> serde_json::Value {
    use serde_json::json;
    let path = |what: &str| json!({"type": "string", "pattern": TOOL_PATH, "description": what});
    let text = |what: &str| json!({"type": "string", "description": what});
    let flag = |what: &str| json!({"type": ["boolean", "null"], "description": what});
    let command = json!({"type": "string", "pattern": NOT_BLANK, "maxLength": COMMAND_MAX_CHARS,
        "description": "The bash command: not blank, at most 64 KiB of UTF-8 (a longer one is a 422 `command_too_large`)."});
    let (mut properties, required): (serde_json::Map<String, serde_json::Value>, Vec<&str>) = match tool {
        "read" => (
            [("path".into(), path("The file to read."))].into_iter().collect(),
            vec!["path"],
        ),
        "glob" => (
            [
                ("pattern".into(), json!({"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$", "description": "The glob, relative to `path`."})),
                ("path".into(), path("The directory searched; the cwd when absent.")),
            ].into_iter().collect(),
            vec!["pattern"],
        ),
        "grep" => (
            [
                ("pattern".into(), text("The regular expression searched for.")),
                ("path".into(), path("The file or directory searched; the cwd when absent.")),
            ].into_iter().collect(),
            vec!["pattern"],
        ),
        "list" => (
            [("path".into(), path("The directory listed; the cwd when absent."))].into_iter().collect(),
            vec![],
        ),
        "write" => (
            [
                ("path".into(), path("The file written.")),
                ("content".into(), text("The whole new content.")),
            ].into_iter().collect(),
            vec!["path", "content"],
        ),
        "edit" => (
            [
                ("path".into(), path("The file edited.")),
                ("oldString".into(), text("The text replaced.")),
                ("newString".into(), text("The replacement.")),
                ("replaceAll".into(), flag("Replace every occurrence, not only the first.")),
            ].into_iter().collect(),
            vec!["path", "oldString", "newString"],
        ),
        "apply_patch" => (
            [("patch".into(), json!({"type": "string", "pattern": PATCH_ENVELOPE,
                "maxLength": crate::tools::MAX_PATCH_BYTES / 4,
                "description": "The patch: the `*** Begin Patch` envelope described by the pattern. Unified diffs (`--- a/x` / `+++ b/x`) are read too; a patch that cannot be read whole is a 422 `bad_patch`."}))].into_iter().collect(),
            vec!["patch"],
        ),
        "bash" => (
            [
                ("command".into(), command.clone()),
                ("background".into(), flag("Run in the background.")),
            ].into_iter().collect(),
            vec!["command"],
        ),
        "process_start" => (
            [("command".into(), command.clone())].into_iter().collect(),
            vec!["command"],
        ),
        "process_stdin" => (
            [
                ("processId".into(), json!({"type": ["string", "number"], "pattern": NOT_BLANK, "description": "The process written to."})),
                ("input".into(), text("The text sent to its stdin.")),
            ].into_iter().collect(),
            vec!["processId", "input"],
        ),
        "webfetch" => (
            [("url".into(), json!({"type": "string", "pattern": NOT_BLANK, "description": "The URL fetched."}))].into_iter().collect(),
            vec!["url"],
        ),
        "mcp" => (
            [
                ("server".into(), json!({"type": "string", "pattern": MCP_NAME, "description": "The MCP server."})),
                ("tool".into(), json!({"type": "string", "pattern": MCP_NAME, "description": "The server's tool."})),
                ("arguments".into(), json!({"type": ["object", "array", "string", "number", "boolean", "null"], "description": "The tool's arguments, shown in the panel."})),
            ].into_iter().collect(),
            vec!["server", "tool"],
        ),
        _ => (serde_json::Map::new(), vec![]),
    };
    properties.insert(
        "cwd".into(),
        json!({"type": "string", "pattern": TOOL_PATH, "description": "Where the call runs, resolved against the request's cwd; must be an existing directory (404 `bad_cwd` otherwise). `workdir` and `dir_path` are read as the same field and must then name the same directory."}),
    );
    json!({
        "type": "object",
        "description": format!("The input of `{tool}`. Other keys are ignored."),
        "required": required,
        "properties": properties,
    })
}

/// The schema name of a tool's input, e.g. `ApplyPatchInput`.
fn input_schema_name(tool: &str) -> String {
    let mut name: String = tool
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    name.push_str("Input");
    name
}

/// Ties each tool to its input: the bodies that carry a `tool` and an `input`
/// (`EvaluateRequest`, `RecordCallRequest`) become one variant per tool, whose `tool`
/// is that name and whose `input` is that tool's schema. Other keys of the body stay as
/// derived from the struct.
struct ToolInputs;

impl utoipa::Modify for ToolInputs {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let Some(components) = doc.components.as_mut() else {
            return;
        };
        for tool in crate::tools::KNOWN_TOOLS {
            match serde_json::from_value(tool_input_schema(tool)) {
                Ok(schema) => {
                    components.schemas.insert(input_schema_name(tool), schema);
                }
                // A test checks every tool has its schema; this names the culprit.
                Err(e) => tracing::error!(tool, error = %e, "tool input schema not representable"),
            }
        }
        // `pattern` only with `always` (with `once` it is a 422 `pattern_with_once`).
        let grant = serde_json::json!({
            "description": "How long the grant lasts; `pattern` (one of the call's `alwaysPatterns`, default the first) only with `always`.",
            "oneOf": [
                {"type": "object", "title": "GrantRequest (once)", "required": ["scope"], "additionalProperties": false,
                 "properties": {"scope": {"type": "string", "enum": ["once"]}, "pattern": {"type": "null"}}},
                {"type": "object", "title": "GrantRequest (always)", "required": ["scope"], "additionalProperties": false,
                 "properties": {"scope": {"type": "string", "enum": ["always"]}, "pattern": {"type": ["string", "null"],
                    "description": "One of the call's offered `alwaysPatterns` (another is a 409 `pattern_not_offered`); defaults to the first."}}},
            ],
        });
        match serde_json::from_value(grant) {
            Ok(schema) => {
                components
                    .schemas
                    .insert("GrantRequest".to_string(), schema);
            }
            Err(e) => tracing::error!(error = %e, "grant body schema not representable"),
        }
        for body in ["EvaluateRequest", "RecordCallRequest"] {
            let Some(base) = components
                .schemas
                .get(body)
                .and_then(|s| serde_json::to_value(s).ok())
            else {
                continue;
            };
            let variants: Vec<serde_json::Value> = crate::tools::KNOWN_TOOLS
                .iter()
                .map(|tool| {
                    let mut v = base.clone();
                    if let Some(props) = v.get_mut("properties").and_then(|p| p.as_object_mut()) {
                        props.insert("tool".into(), serde_json::json!({"type": "string", "enum": [tool]}));
                        props.insert(
                            "input".into(),
                            serde_json::json!({"$ref": format!("#/components/schemas/{}", input_schema_name(tool))}),
                        );
                    }
                    if let Some(o) = v.as_object_mut() {
                        o.remove("description");
                        o.insert("title".into(), serde_json::json!(format!("{body} ({tool})")));
                    }
                    v
                })
                .collect();
            let description = base
                .get("description")
                .and_then(|d| d.as_str())
                .map(|d| format!("{d}\n\n"))
                .unwrap_or_default();
            let one_of = serde_json::json!({
                "oneOf": variants,
                "description": format!("{description}One variant per tool: `input` is that tool's input (`ToolName` lists the tools; another name is a 422)."),
            });
            match serde_json::from_value(one_of) {
                Ok(schema) => {
                    components.schemas.insert(body.to_string(), schema);
                }
                Err(e) => {
                    tracing::error!(body, error = %e, "per-tool body schema not representable")
                }
            }
        }
    }
}

// The mirror schemas live in `crate::model::schema`, which the model layers can name without
// depending on the service.
pub use crate::model::schema::*;

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

    /// Every tool has its input schema, and each body that carries a `tool` offers
    /// exactly one variant per tool, tied to that input.
    #[test]
    fn every_tool_has_its_input_schema() {
        let v = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let schemas = &v["components"]["schemas"];
        for tool in crate::tools::KNOWN_TOOLS {
            let name = input_schema_name(tool);
            assert_eq!(
                schemas[&name]["type"], "object",
                "{name}: {}",
                schemas[&name]
            );
        }
        for body in ["EvaluateRequest", "RecordCallRequest"] {
            let variants = schemas[body]["oneOf"].as_array().unwrap();
            let tools: Vec<&str> = variants
                .iter()
                .map(|v| v["properties"]["tool"]["enum"][0].as_str().unwrap())
                .collect();
            assert_eq!(tools, crate::tools::KNOWN_TOOLS, "{body}");
            for (variant, tool) in variants.iter().zip(crate::tools::KNOWN_TOOLS) {
                assert_eq!(
                    variant["properties"]["input"]["$ref"],
                    format!("#/components/schemas/{}", input_schema_name(tool))
                );
                assert_eq!(variant["additionalProperties"], false);
            }
        }
    }

    /// What the input schemas require is what the mapping requires: an input with only
    /// the required keys, filled with plain values, maps; one without any of them
    /// fails.
    #[test]
    fn input_schemas_require_what_the_mapping_requires() {
        let root = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(root.path(), None, root.path()).unwrap();
        for tool in crate::tools::KNOWN_TOOLS {
            let schema = tool_input_schema(tool);
            let required: Vec<&str> = schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            let value = |k: &str| match k {
                "patch" => json!("*** Begin Patch\n*** Add File: a.txt\n*** End Patch\n"),
                _ => json!("x"),
            };
            let full: serde_json::Map<String, Value> =
                required.iter().map(|k| (k.to_string(), value(k))).collect();
            crate::tools::map_call(tool, &Value::Object(full.clone()), &ctx)
                .unwrap_or_else(|e| panic!("{tool} with {full:?}: {e}"));
            for k in &required {
                let mut less = full.clone();
                less.remove(*k);
                assert!(
                    crate::tools::map_call(tool, &Value::Object(less), &ctx).is_err(),
                    "{tool} maps without `{k}`: the schema should not require it"
                );
            }
        }
    }
    use crate::model::vocab::{
        Analysis, AnalysisContext, Capability, CapabilityRequest, CommandClass, EngineKind,
        Fallback, FallbackReason, HardlineHit, Part,
    };
    use crate::policy::config::{ConfigError, Policy};
    use crate::policy::rules::{Action, PermissionRule, RuleOrigin, RuleSource};

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
        r.unresolved = true;
        r.verdict = Some(crate::model::vocab::Verdict::ReadOnly);
        r.directory_read = Some(crate::model::vocab::DirectoryRead {
            recursive: true,
            skips_hidden: true,
            glob: Some("*.rs".into()),
            follow: true,
            names_only: true,
            paths: vec!["/p/.env".into()],
            // Not serialized: the document never shows it.
            over_bound: false,
        });
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
        rule.expires = "2027-01-31".parse().ok();
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
        let mut decision =
            crate::policy::decide::decide(&Policy::default(), &[], &call, &ctx, true);
        assert_eq!(decision.decision, Action::Ask);
        decision.message = Some("m".into());
        decision.config_errors.push(err);
        if let Some(first) = decision.requests.first_mut() {
            first.reasons = vec![
                crate::model::vocab::Reason::Obfuscated,
                crate::model::vocab::Reason::DirectoryRead { path: "/p".into() },
                crate::model::vocab::Reason::Hardline {
                    rule: "rm -rf /".into(),
                },
            ];
        }
        let value = serde_json::to_value(&decision).unwrap();
        check("CallDecision", &value);
        check("EvaluatedRequest", &value["requests"][0]);
        check("Panel", &value["panel"]);
        check("PanelKey", &value["panel"]["keys"][0]);
        check("PanelDetail", &value["panel"]["details"][0]);

        let explained = crate::policy::explain::explain(&Policy::default(), &call, &decision);
        let value = serde_json::to_value(&explained).unwrap();
        check("Explanation", &value);
        check("RequestTrace", &value["requests"][0]);
        check("RuleConsidered", &value["requests"][0]["rules"][0]);
        check("AlwaysTrace", &value["always"]);
    }
}
