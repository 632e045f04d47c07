//! Tool mapping: one agent tool call (name + JSON input) to the capability requests it
//! carries (DESIGN.md § Tool mapping, filling the seed's missing §2).
//!
//! Owns input validation (required fields and their types, size limits), path
//! resolution for file tools (via `paths`), the write/edit diff shown in the panel, the
//! `apply_patch` parser (`tools/patch.rs`: envelope and unified formats) and the glue to
//! `analysis` for bash. It decides nothing: rules, floors and combination live in `decide`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

mod patch;

pub use patch::{PatchFile, PatchOp, parse_patch};

use crate::model::vocab::{
    Analysis, AnalysisContext, Capability, CapabilityRequest, HardlineHit, collapse_whitespace,
};

/// Every tool this mapping knows; anything else is refused (the service answers 422).
pub const KNOWN_TOOLS: &[&str] = &[
    "read",
    "glob",
    "grep",
    "list",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "process_start",
    "process_stdin",
    "webfetch",
    "mcp",
];

/// Largest bash command analysed (seed: commands are short; this bounds the parser).
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Largest patch parsed.
pub const MAX_PATCH_BYTES: usize = 4 * 1024 * 1024;
/// Files larger than this are not read for a diff.
pub const MAX_DIFF_INPUT_BYTES: u64 = 1024 * 1024;
/// Time budget for one diff (similar's deadline; a slow diff degrades, never blocks).
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// A tool call that cannot be mapped. Never an allow: the service answers 422 (400 for
/// a malformed input, 404 for a working directory that does not exist).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    #[error("the input of `{tool}` must be a JSON object")]
    NotAnObject { tool: String },
    #[error("`{tool}` requires the field `{field}`")]
    MissingField { tool: String, field: &'static str },
    #[error("the field `{field}` of `{tool}` must be {expected}")]
    WrongType {
        tool: String,
        field: &'static str,
        expected: &'static str,
    },
    #[error("the field `{field}` of `{tool}` is {len} bytes, more than the limit of {limit}")]
    TooLarge {
        tool: String,
        field: &'static str,
        len: usize,
        limit: usize,
    },
    #[error("the field `{field}` of `{tool}` is empty")]
    Empty { tool: String, field: &'static str },
    #[error("patch line {line}: {message}")]
    BadPatch { line: usize, message: String },
    #[error("working directory `{cwd}` cannot be used: {message}")]
    BadCwd { cwd: String, message: String },
    /// Well-formed, but no directory of that name exists (the service's 404).
    #[error("working directory `{cwd}` cannot be used: it is not an existing directory")]
    MissingCwd { cwd: String },
    #[error(
        "the field `{field}` of `{tool}` holds the control character U+{code:04X}; a path may not contain one"
    )]
    ControlChar {
        tool: String,
        field: &'static str,
        code: u32,
    },
    #[error("the fields `{first}` and `{second}` of `{tool}` name different working directories")]
    ConflictingCwd {
        tool: String,
        first: &'static str,
        second: &'static str,
    },
}

impl ToolError {
    /// A stable machine-readable code for API error bodies.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::UnknownTool(_) => "unknownTool",
            ToolError::NotAnObject { .. } => "inputNotObject",
            ToolError::MissingField { .. } => "missingField",
            ToolError::WrongType { .. } => "wrongType",
            ToolError::TooLarge { .. } => "tooLarge",
            ToolError::Empty { .. } => "empty",
            ToolError::BadPatch { .. } => "badPatch",
            ToolError::BadCwd { .. } | ToolError::MissingCwd { .. } => "badCwd",
            ToolError::ControlChar { .. } => "controlCharacter",
            ToolError::ConflictingCwd { .. } => "conflictingCwd",
        }
    }
}

/// What one tool call asks to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MappedCall {
    pub tool: String,
    pub requests: Vec<CapabilityRequest>,
    /// The bash analysis, for `bash` and `process_start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<Analysis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardline: Option<HardlineHit>,
    /// Where the call runs (the bash `cwd`, or the context's cwd).
    pub cwd: String,
    /// The command text for `bash` and `process_start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// The `bash` call for a command whose analysis is given: its requests, plus
/// `process.background` when `background` is set or the command ends in `&`. `compare`
/// calls this with the lexer's analysis so both engines are decided by the same code.
pub fn bash_call(
    command: &str,
    analysis: Analysis,
    ctx: &AnalysisContext,
    background: bool,
) -> MappedCall {
    let mut requests = analysis.requests.clone();
    // One background request per call: the AST engine emits it for `&` itself; the
    // flag and the lexer's reading (which has no such request) add it here, with the
    // same subject (the command without its trailing `&`).
    let already = requests
        .iter()
        .any(|r| r.capability == Capability::ProcessBackground);
    if !already && (background || ends_with_background_operator(command)) {
        let collapsed = collapse_whitespace(command);
        let subject = collapsed.trim_end_matches('&').trim_end().to_string();
        let mut req = CapabilityRequest::new(
            Capability::ProcessBackground,
            subject.clone(),
            format!("Run in the background: {subject}"),
        );
        req.always_patterns = analysis.always_patterns.clone();
        req.risk_notes
            .push("Keeps running in the background.".to_string());
        push_unique(&mut requests, req);
    }
    MappedCall {
        tool: "bash".to_string(),
        requests,
        hardline: analysis.hardline.clone(),
        cwd: ctx.cwd().display().to_string(),
        command: Some(command.to_string()),
        analysis: Some(analysis),
    }
}

/// Maps one tool call. `ctx` carries the canonical project root, the cwd relative
/// paths resolve against, and the home `~` expands to.
pub fn map_call(tool: &str, input: &Value, ctx: &AnalysisContext) -> Result<MappedCall, ToolError> {
    let obj = input.as_object().ok_or_else(|| ToolError::NotAnObject {
        tool: tool.to_string(),
    })?;
    let f = Fields { tool, obj };
    // The host-sent working directory decides where the call runs and what
    // its relative paths mean, for every tool.
    let local = call_context(&f, ctx)?;
    let ctx = &local;
    let mut call = MappedCall {
        tool: tool.to_string(),
        requests: Vec::new(),
        analysis: None,
        hardline: None,
        cwd: ctx.cwd().display().to_string(),
        command: None,
    };
    match tool {
        "read" | "glob" | "grep" | "list" => {
            call.requests.push(read_request(&f, ctx)?);
        }
        "write" => {
            let path = f.path("path")?;
            let content = f.string("content")?;
            let resolved = resolve_path(path, ctx.cwd(), ctx.home());
            let old = read_for_diff(&resolved);
            let mut req = write_request(&resolved, ctx, "Write");
            attach_diff(&mut req, &resolved, ctx, old, Some(content.to_string()));
            call.requests.push(req);
        }
        "edit" => {
            let path = f.path("path")?;
            let old_string = f.string("oldString")?;
            let new_string = f.string("newString")?;
            let replace_all = f.opt_bool("replaceAll")?.unwrap_or(false);
            let resolved = resolve_path(path, ctx.cwd(), ctx.home());
            let mut req = write_request(&resolved, ctx, "Edit");
            let old = read_for_diff(&resolved);
            let new = match &old {
                Some(text) if !old_string.is_empty() && text.contains(old_string) => {
                    Some(if replace_all {
                        text.replace(old_string, new_string)
                    } else {
                        text.replacen(old_string, new_string, 1)
                    })
                }
                Some(_) if !old_string.is_empty() => {
                    req.risk_notes
                        .push("The text to replace was not found in the file.".to_string());
                    None
                }
                // Empty oldString on a missing file is how some agents create files.
                _ => Some(new_string.to_string()),
            };
            attach_diff(&mut req, &resolved, ctx, old, new);
            call.requests.push(req);
        }
        "apply_patch" => {
            let patch = f.string("patch")?;
            if patch.len() > MAX_PATCH_BYTES {
                return Err(ToolError::TooLarge {
                    tool: tool.into(),
                    field: "patch",
                    len: patch.len(),
                    limit: MAX_PATCH_BYTES,
                });
            }
            let files = parse_patch(patch)?;
            for pf in &files {
                if let Some(c) = crate::model::paths::control_char(&pf.path) {
                    return Err(ToolError::ControlChar {
                        tool: tool.into(),
                        field: "patch",
                        code: u32::from(c),
                    });
                }
            }
            for pf in files {
                let resolved = resolve_path(&pf.path, ctx.cwd(), ctx.home());
                if pf.source {
                    // Moved, renamed or copied elsewhere: whoever reads the new name
                    // reads this file's content, so it is read here, by the read rules.
                    let subject = resolved.display().to_string();
                    call.requests.push(CapabilityRequest::new(
                        Capability::FileRead,
                        subject.clone(),
                        format!(
                            "Read {} (the patch moves or copies its content to another file)",
                            display_path(&resolved, ctx)
                        ),
                    ));
                }
                let verb = match pf.op {
                    PatchOp::Add => "Create",
                    PatchOp::Delete => "Delete",
                    PatchOp::Update | PatchOp::MoveTo => "Edit",
                };
                let mut req = write_request(&resolved, ctx, verb);
                if !pf.diff.is_empty() {
                    req.metadata.insert("diff".into(), Value::String(pf.diff));
                }
                req.metadata
                    .insert("operation".into(), Value::String(pf.op.as_str().into()));
                if !call
                    .requests
                    .iter()
                    .any(|r| r.capability == req.capability && r.subject == req.subject)
                {
                    call.requests.push(req);
                }
            }
        }
        "bash" => {
            let command = f.command("command")?;
            let background = f.opt_bool("background")?.unwrap_or(false);
            let analysis = crate::analysis::analyze(command, ctx);
            call = bash_call(command, analysis, ctx, background);
        }
        "process_start" => {
            let command = f.command("command")?;
            let analysis = crate::analysis::analyze(command, ctx);
            let subject = collapse_whitespace(command);
            let mut req = CapabilityRequest::new(
                Capability::ProcessBackground,
                subject.clone(),
                format!("Start process {subject}"),
            );
            req.always_patterns = analysis.always_patterns.clone();
            req.risk_notes
                .push("Keeps running in the background.".to_string());
            call.requests.push(req);
            for r in &analysis.requests {
                push_unique(&mut call.requests, r.clone());
            }
            call.hardline = analysis.hardline.clone();
            call.command = Some(command.to_string());
            call.analysis = Some(analysis);
        }
        "process_stdin" => {
            let id = match obj.get("processId") {
                None | Some(Value::Null) => return Err(f.missing("processId")),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(_) => return Err(f.wrong("processId", "a string")),
            };
            if id.trim().is_empty() {
                return Err(ToolError::Empty {
                    tool: tool.into(),
                    field: "processId",
                });
            }
            f.string("input")?;
            let subject = format!("stdin:{id}");
            let mut req = CapabilityRequest::new(
                Capability::ProcessBackground,
                subject.clone(),
                format!("Send input to process {id}"),
            );
            req.always_patterns.push(subject);
            call.requests.push(req);
        }
        "webfetch" => {
            let url = f.string("url")?;
            let url = url.trim();
            if url.is_empty() {
                return Err(ToolError::Empty {
                    tool: tool.into(),
                    field: "url",
                });
            }
            let mut req =
                CapabilityRequest::new(Capability::NetworkAccess, url, format!("Fetch {url}"));
            req.always_patterns.push(url.to_string());
            match origin(url) {
                Some(o) => {
                    let broad = format!("{o}/*");
                    if broad != url {
                        req.always_patterns.push(broad);
                    }
                }
                None => req
                    .risk_notes
                    .push("The URL is not a plain http or https address.".to_string()),
            }
            call.requests.push(req);
        }
        "mcp" => call.requests.push(mcp_request(&f)?),
        other => return Err(ToolError::UnknownTool(other.to_string())),
    }
    if call.hardline.is_none() {
        // The floor judges effects, not spellings: every write request whose resolved
        // subject is a raw disk, memory or the sysrq trigger is `> /dev/sd*` by another
        // name, whichever tool, program or option produced it. Unresolved subjects are
        // words, not paths (they ask anyway).
        call.hardline = call
            .requests
            .iter()
            .filter(|r| {
                matches!(
                    r.capability,
                    Capability::FileWriteProject | Capability::FileWriteOutsideProject
                ) && !r.unresolved
                    && r.subject.starts_with('/')
            })
            .find_map(|r| crate::floor::check_write_path(Path::new(&r.subject)));
    }
    Ok(call)
}

/// Longest rendering of an MCP call's arguments in the panel; the whole value stays in
/// the request's metadata.
const MCP_ARGUMENTS_SHOWN: usize = 400;

/// `mcp`: a call of an MCP server's tool, `server`, `tool`, `arguments?`.
/// Hosts name these differently (`mcp__github__list_issues`, `mcp_github_list_issues`);
/// `hosts` normalises them to this one form so rules say `github/list_*` once.
fn mcp_request(f: &Fields<'_>) -> Result<CapabilityRequest, ToolError> {
    let name = |field: &'static str| -> Result<String, ToolError> {
        let v = f.string(field)?.trim();
        if v.is_empty() {
            return Err(ToolError::Empty {
                tool: f.tool.to_string(),
                field,
            });
        }
        // `/` separates server and tool in the subject: a name holding one could make
        // `github/*` match a server called `github/x`.
        if v.contains('/') || v.chars().any(char::is_control) {
            return Err(f.wrong(field, "a name without `/` or control characters"));
        }
        Ok(v.to_string())
    };
    let server = name("server")?;
    let tool = name("tool")?;
    let arguments = f.obj.get("arguments").cloned().unwrap_or(Value::Null);
    let subject = format!("{server}/{tool}");
    let mut req = CapabilityRequest::new(
        Capability::McpCall,
        subject.clone(),
        format!("Call the MCP tool {tool} of {server}"),
    );
    req.always_patterns.push(subject);
    let shown = match &arguments {
        Value::Null => "none".to_string(),
        v => {
            let text = v.to_string();
            if text.len() > MCP_ARGUMENTS_SHOWN {
                let cut = (0..=MCP_ARGUMENTS_SHOWN)
                    .rev()
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(0);
                format!(
                    "{}… ({} bytes)",
                    text.get(..cut).unwrap_or_default(),
                    text.len()
                )
            } else {
                text
            }
        }
    };
    req.risk_notes.push(format!("Arguments: {shown}"));
    req.metadata.insert("server".into(), Value::String(server));
    req.metadata.insert("tool".into(), Value::String(tool));
    req.metadata.insert("arguments".into(), arguments);
    Ok(req)
}

struct Fields<'a> {
    tool: &'a str,
    obj: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn missing(&self, field: &'static str) -> ToolError {
        ToolError::MissingField {
            tool: self.tool.to_string(),
            field,
        }
    }

    fn wrong(&self, field: &'static str, expected: &'static str) -> ToolError {
        ToolError::WrongType {
            tool: self.tool.to_string(),
            field,
            expected,
        }
    }

    fn string(&self, field: &'static str) -> Result<&'a str, ToolError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Err(self.missing(field)),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(_) => Err(self.wrong(field, "a string")),
        }
    }

    fn opt_string(&self, field: &'static str) -> Result<Option<&'a str>, ToolError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(self.wrong(field, "a string")),
        }
    }

    fn opt_bool(&self, field: &'static str) -> Result<Option<bool>, ToolError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong(field, "a boolean")),
        }
    }

    fn path(&self, field: &'static str) -> Result<&'a str, ToolError> {
        let p = self.string(field)?;
        if p.is_empty() {
            return Err(ToolError::Empty {
                tool: self.tool.to_string(),
                field,
            });
        }
        self.no_control(field, p)?;
        Ok(p)
    }

    /// An optional path field, refused when it holds a control character.
    fn opt_path(&self, field: &'static str) -> Result<Option<&'a str>, ToolError> {
        let p = self.opt_string(field)?;
        if let Some(v) = p {
            self.no_control(field, v)?;
        }
        Ok(p)
    }

    fn no_control(&self, field: &'static str, value: &str) -> Result<(), ToolError> {
        match crate::model::paths::control_char(value) {
            Some(c) => Err(ToolError::ControlChar {
                tool: self.tool.to_string(),
                field,
                code: u32::from(c),
            }),
            None => Ok(()),
        }
    }

    fn command(&self, field: &'static str) -> Result<&'a str, ToolError> {
        let c = self.string(field)?;
        if c.len() > MAX_COMMAND_BYTES {
            return Err(ToolError::TooLarge {
                tool: self.tool.to_string(),
                field,
                len: c.len(),
                limit: MAX_COMMAND_BYTES,
            });
        }
        if c.trim().is_empty() {
            return Err(ToolError::Empty {
                tool: self.tool.to_string(),
                field,
            });
        }
        Ok(c)
    }
}

fn push_unique(v: &mut Vec<CapabilityRequest>, r: CapabilityRequest) {
    if !v
        .iter()
        .any(|x| x.capability == r.capability && x.subject == r.subject)
    {
        v.push(r);
    }
}

/// The fields in which hosts send the call's working directory: `cwd` (Claude Code,
/// this API), `workdir` (Codex, OpenCode), `dir_path` (Gemini CLI).
pub const WORKDIR_FIELDS: &[&str] = &["cwd", "workdir", "dir_path"];

/// The host-sent working directory of a call, with the field it came from. Several
/// fields must name the same directory; a control character is refused.
pub fn host_workdir<'a>(
    tool: &'a str,
    input: &'a Value,
) -> Result<Option<(&'static str, &'a str)>, ToolError> {
    let Some(obj) = input.as_object() else {
        return Ok(None);
    };
    workdir_of(&Fields { tool, obj })
}

fn workdir_of<'a>(f: &Fields<'a>) -> Result<Option<(&'static str, &'a str)>, ToolError> {
    let tool = f.tool;
    let mut found: Option<(&'static str, &'a str)> = None;
    for field in WORKDIR_FIELDS {
        let Some(v) = f.opt_path(field)? else {
            continue;
        };
        match found {
            Some((first, prev)) if prev != v => {
                return Err(ToolError::ConflictingCwd {
                    tool: tool.to_string(),
                    first,
                    second: field,
                });
            }
            Some(_) => {}
            None => found = Some((field, v)),
        }
    }
    Ok(found)
}

/// The context with the host-sent working directory: resolved against the request's
/// cwd (so `..` and links are followed as the kernel would), and, like the project
/// root, an existing directory and no process alias. Workspace confinement is the
/// service's check (`http`), which knows the workspace roots.
fn with_cwd(
    ctx: &AnalysisContext,
    tool: &str,
    field: &'static str,
    cwd: &str,
) -> Result<AnalysisContext, ToolError> {
    if cwd.is_empty() {
        return Err(ToolError::Empty {
            tool: tool.into(),
            field,
        });
    }
    let resolved = resolve_path(cwd, ctx.cwd(), ctx.home());
    let bad = |message: &str| ToolError::BadCwd {
        cwd: cwd.to_string(),
        message: message.to_string(),
    };
    if !resolved.is_absolute() {
        return Err(bad(
            "it names a process's own view of the file system (/proc/self, /dev/fd), not a directory",
        ));
    }
    if !resolved.is_dir() {
        return Err(ToolError::MissingCwd {
            cwd: cwd.to_string(),
        });
    }
    AnalysisContext::new(ctx.root(), Some(&resolved), ctx.home())
        .map(|c| c.with_search_path_of(ctx))
        .map_err(|e| ToolError::BadCwd {
            cwd: cwd.to_string(),
            message: e.to_string(),
        })
}

/// A tool's path argument to the absolute path the kernel would touch: `~` expands to
/// the home (tools do no other expansion), relative paths join the cwd, `..` and
/// symlinks resolve on the longest existing prefix.
pub fn resolve_path(word: &str, cwd: &Path, home: &Path) -> PathBuf {
    let expanded = if word == "~" {
        home.to_path_buf()
    } else if let Some(rest) = word.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(word)
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    crate::model::paths::resolve_existing_prefix(&absolute)
}

fn read_request(f: &Fields<'_>, ctx: &AnalysisContext) -> Result<CapabilityRequest, ToolError> {
    let (path, pattern) = match f.tool {
        "read" => (f.path("path")?, None),
        // glob and grep search a directory, the cwd when no path is given.
        "glob" | "grep" => (
            f.opt_path("path")?.unwrap_or("."),
            Some(f.string("pattern")?),
        ),
        _ => (f.opt_path("path")?.unwrap_or("."), None),
    };
    if f.tool == "glob"
        && let Some(p) = pattern
    {
        f.no_control("pattern", p)?;
    }
    if path.is_empty() {
        return Err(ToolError::Empty {
            tool: f.tool.to_string(),
            field: "path",
        });
    }
    let mut target = resolve_path(path, ctx.cwd(), ctx.home());
    // A pattern whose reach is only known when it runs: its text is the subject, which
    // is not an absolute path, so no location rule can allow it (decide asks).
    let mut unknown: Option<String> = None;
    if f.tool == "glob" {
        // A glob pattern can climb out of its directory (`../../etc/*`): the search
        // root is the pattern's literal leading components joined to the path (all of
        // them for a pattern without wildcards, which names one path).
        if let Some(p) = pattern {
            let comps: Vec<std::path::Component<'_>> = Path::new(p).components().collect();
            let is_wild = |c: &std::path::Component<'_>| {
                c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            };
            let first_wild = comps.iter().position(is_wild).unwrap_or(comps.len());
            let literal: PathBuf = comps.iter().take(first_wild).collect();
            if !literal.as_os_str().is_empty() {
                target = crate::model::paths::resolve_existing_prefix(&target.join(literal));
            }
            // `*/../../etc/*`: where `..` after a wildcard lands depends on the match.
            if comps
                .iter()
                .skip(first_wild)
                .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                unknown = Some(p.to_string());
            }
        }
    }
    // The names a glob can return: its pattern below the search root. A directory
    // read by glob reaches only these (`**/*.rs` never returns `.env`).
    let glob_reach = match (f.tool, pattern, &unknown) {
        ("glob", Some(p), None) => {
            let rest: PathBuf = Path::new(p)
                .components()
                .skip_while(|c| {
                    !c.as_os_str()
                        .to_string_lossy()
                        .contains(['*', '?', '[', '{'])
                })
                .collect();
            // The root is escaped: a `[` in a directory name is a name, not a class.
            (!rest.as_os_str().is_empty()).then(|| {
                let root = globset::escape(&target.display().to_string());
                format!("{}/{}", root.trim_end_matches('/'), rest.display())
            })
        }
        _ => None,
    };
    let subject = unknown.unwrap_or_else(|| target.display().to_string());
    let verb = match f.tool {
        "read" => "Read",
        "glob" => "Find files in",
        "grep" => "Search in",
        _ => "List",
    };
    let mut req = CapabilityRequest::new(
        Capability::FileRead,
        subject.clone(),
        format!("{verb} {}", display_path(&target, ctx)),
    );
    req.always_patterns.push(subject);
    if let Some(p) = pattern {
        req.metadata
            .insert("pattern".into(), Value::String(p.to_string()));
    }
    if target.is_dir() {
        // `decide` judges what a directory read reaches, not only the directory's name.
        req.directory_read = Some(crate::model::vocab::DirectoryRead {
            glob: glob_reach,
            ..Default::default()
        });
    }
    Ok(req)
}

/// At most this many entries are looked at for one directory read.
const MAX_REACH_ENTRIES: usize = 4096;

/// What a read of directory `dir` reaches, for judging it by the secret rules: every
/// entry of `dir`, and the entries of its hidden subdirectories (where
/// `~/.ssh/id_rsa`, `~/.aws/credentials` and `.secrets/` live), symlinks resolved,
/// sorted, at most `MAX_REACH_ENTRIES`. Deeper levels are not walked: the rules for
/// secrets name files at these depths, and walking a home directory would not be quick.
pub fn directory_reach(dir: &Path) -> Vec<PathBuf> {
    directory_reach_entries(dir)
        .into_iter()
        .map(|(_, resolved)| resolved)
        .collect()
}

/// As `directory_reach`, each path also as listed (before its symlink is resolved), so
/// a glob can be matched against the name it sees.
pub fn directory_reach_entries(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut hidden_dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
    let list = |d: &Path| -> Vec<std::fs::DirEntry> {
        let mut v: Vec<std::fs::DirEntry> = std::fs::read_dir(d)
            .map(|it| it.filter_map(Result::ok).take(MAX_REACH_ENTRIES).collect())
            .unwrap_or_default();
        v.sort_by_key(std::fs::DirEntry::file_name);
        v
    };
    let resolved = |e: &std::fs::DirEntry| -> PathBuf {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            crate::model::paths::resolve_existing_prefix(&p)
        } else {
            p
        }
    };
    for e in list(dir) {
        let p = resolved(&e);
        if e.file_name().to_string_lossy().starts_with('.') && p.is_dir() {
            hidden_dirs.push((e.path(), p.clone()));
        }
        out.push((e.path(), p));
    }
    for (listed, d) in hidden_dirs {
        if out.len() >= MAX_REACH_ENTRIES {
            break;
        }
        for e in list(&d) {
            out.push((listed.join(e.file_name()), resolved(&e)));
        }
    }
    out.truncate(MAX_REACH_ENTRIES);
    out
}

fn write_request(resolved: &Path, ctx: &AnalysisContext, verb: &str) -> CapabilityRequest {
    let inside = crate::model::paths::is_inside(resolved, ctx.root());
    let cap = if inside {
        Capability::FileWriteProject
    } else {
        Capability::FileWriteOutsideProject
    };
    let subject = resolved.display().to_string();
    let mut req = CapabilityRequest::new(
        cap,
        subject.clone(),
        format!("{verb} {}", display_path(resolved, ctx)),
    );
    req.always_patterns.push(subject.clone());
    if !inside {
        req.risk_notes
            .push(format!("Writes outside the project: {subject}"));
    }
    req.metadata.insert("path".into(), Value::String(subject));
    req
}

/// A path for people: relative inside the project, `~/…` under the home, else absolute.
pub fn display_path(p: &Path, ctx: &AnalysisContext) -> String {
    if let Ok(rel) = p.strip_prefix(ctx.root()) {
        if rel.as_os_str().is_empty() {
            return ".".to_string();
        }
        return rel.display().to_string();
    }
    if let Ok(rel) = p.strip_prefix(ctx.home()) {
        if rel.as_os_str().is_empty() {
            return "~".to_string();
        }
        return format!("~/{}", rel.display());
    }
    p.display().to_string()
}

/// The current text of a file for the diff; `None` when missing, too large, not a
/// regular file or not UTF-8.
fn read_for_diff(p: &Path) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    if !meta.is_file() || meta.len() > MAX_DIFF_INPUT_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(p).ok()?).ok()
}

fn attach_diff(
    req: &mut CapabilityRequest,
    resolved: &Path,
    ctx: &AnalysisContext,
    old: Option<String>,
    new: Option<String>,
) {
    let Some(new) = new else { return };
    let exists = resolved.exists();
    if exists && old.is_none() {
        req.metadata.insert(
            "diffOmitted".into(),
            Value::String("the current file is too large or not text".into()),
        );
        return;
    }
    if new.len() as u64 > MAX_DIFF_INPUT_BYTES {
        req.metadata.insert(
            "diffOmitted".into(),
            Value::String("the new content is too large".into()),
        );
        return;
    }
    let old = old.unwrap_or_default();
    let name = display_path(resolved, ctx);
    // git's a/ b/ prefixes only for project-relative names; `b//tmp/x` reads badly.
    let inside = crate::model::paths::is_inside(resolved, ctx.root());
    let (a, b) = if inside {
        (format!("a/{name}"), format!("b/{name}"))
    } else {
        (name.clone(), name)
    };
    let a = if exists { a } else { "/dev/null".to_string() };
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.as_str(), new.as_str())
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    req.metadata.insert("diff".into(), Value::String(diff));
}

/// The context a call runs in: the host-sent working directory when given (any of
/// `WORKDIR_FIELDS`), else the request's.
fn call_context(f: &Fields<'_>, ctx: &AnalysisContext) -> Result<AnalysisContext, ToolError> {
    match workdir_of(f)? {
        Some((field, c)) => with_cwd(ctx, f.tool, field, c),
        None => Ok(ctx.clone()),
    }
}

/// Whether the command ends in a lone `&` (runs in the background). Over-detection only
/// adds a request, so this stays simple.
fn ends_with_background_operator(command: &str) -> bool {
    let t = command.trim_end();
    let mut rev = t.chars().rev();
    match (rev.next(), rev.next()) {
        (Some('&'), Some(prev)) => !matches!(prev, '&' | '\\' | '>' | '<' | '|'),
        _ => false,
    }
}

/// `scheme://authority` of an http(s) URL, when it is plainly one.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() || authority.contains(['@', '\\', ' ', '*']) {
        return None;
    }
    Some(format!("{scheme}://{authority}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_operator() {
        assert!(ends_with_background_operator("npm run dev &"));
        assert!(!ends_with_background_operator("a && b"));
        assert!(!ends_with_background_operator("echo \\&"));
        assert!(!ends_with_background_operator("ls"));
    }

    /// `npm run dev &` asks for one background request, not the AST's and a second
    /// one with the `&` in its subject that a grant for the first would never match.
    #[test]
    fn one_background_request_per_call() {
        let root = tempfile::tempdir().unwrap();
        let ctx = AnalysisContext::new(root.path(), None, Path::new("/home/u")).unwrap();
        for (input, want) in [
            (
                serde_json::json!({"command": "npm run dev &"}),
                "npm run dev",
            ),
            (
                serde_json::json!({"command": "npm run dev", "background": true}),
                "npm run dev",
            ),
        ] {
            let call = map_call("bash", &input, &ctx).unwrap();
            let bg: Vec<&str> = call
                .requests
                .iter()
                .filter(|r| r.capability == Capability::ProcessBackground)
                .map(|r| r.subject.as_str())
                .collect();
            assert_eq!(bg, [want], "{input}");
        }
    }
}
