//! Cline CLI through our plugin (`cline-plugin.js`): its tool table, the input the
//! plugin sends, and the answer the plugin reads.
//!
//! Why a plugin and not Cline's hook files (checked on `cline` 3.0.65, its
//! `@cline/core` and `@cline/agents` 0.0.86): a `PreToolUse` hook file in
//! `~/.cline/hooks/` or `<project>/.cline/hooks/` can only answer `{"cancel": true}`,
//! which stops the whole run (the model never reads why, the person sees no reason
//! in `--json`), and stdout that is not JSON, a crash or a timeout let the tool run.
//! A plugin (`~/.cline/plugins/` or `<project>/.cline/plugins/`, an ES module whose
//! default export has `hooks.beforeTool`) can answer `{skip: true, reason}` (the tool
//! does not run and the model reads `{"error": reason}`, the run goes on) and
//! `{policy: {autoApprove: false}}` (Cline asks the person in its TUI; a headless run
//! refuses the call with `Tool "…" requires approval in a TTY session`).
//!
//! Input (the plugin's, shaped like Cline's own hook payload): `hookName`
//! (`tool_call`, or `tool_result` after a call ran), `taskId` (the conversation),
//! `cwd`, `workspaceRoots`, `tool_call` (`id`, `name`, `input`: the input as the tool
//! will read it). Output: `{"decision": "allow|ask|deny", "reason": "…"}`; the plugin
//! answers nothing for an allow (Cline's own approval is left as it is), the policy
//! for an ask, the skip for a deny, and the skip for anything it cannot read.

use serde_json::{Map, Value};

use super::{HookCall, HookError, Host, Mapped, Rendered, str_field};
use crate::policy::decide::CallDecision;

/// Cline tools with no local effect: a question to the person, and the end of a run
/// with its summary.
pub const NO_EFFECT_TOOLS: &[&str] = &["ask_question", "submit_and_exit"];

pub fn parse(obj: &Map<String, Value>) -> Result<HookCall, HookError> {
    let call = obj
        .get("tool_call")
        .and_then(Value::as_object)
        .ok_or(HookError::Missing("tool_call"))?;
    let tool = str_field(call, "name").ok_or(HookError::Missing("tool_call.name"))?;
    let input = call.get("input").cloned().unwrap_or(Value::Null);
    let root = obj
        .get("workspaceRoots")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    Ok(HookCall {
        host: Host::Cline,
        session_id: super::session_id(Host::Cline, str_field(obj, "taskId")),
        call_id: super::call_id(Host::Cline, str_field(call, "id")),
        turn_id: None,
        cwd: str_field(obj, "cwd").or(root).map(str::to_string),
        project_root: root.map(str::to_string),
        host_tool: tool.to_string(),
        permission_mode: None,
        mapped: map(tool, &input),
        input,
    })
}

/// Cline's tool name and input to ours (the tool schemas 3.0.65 sends the model, and
/// the other input shapes its tools accept).
pub fn map(name: &str, input: &Value) -> Mapped {
    if NO_EFFECT_TOOLS.contains(&name) {
        return Mapped::NoEffect;
    }
    match name {
        "run_commands" => run_commands(input),
        "read_files" => read_files(input),
        "search_codebase" => search_codebase(input),
        "editor" => editor(input),
        "apply_patch" => match input.get("input") {
            Some(Value::String(p)) => Mapped::Tool {
                tool: "apply_patch",
                input: serde_json::json!({ "patch": p }),
            },
            _ => unjudged("this `apply_patch` call gives no patch text in `input`"),
        },
        "fetch_web_content" => fetch(input),
        "web_search" => unjudged(
            "`web_search` sends a query to the model provider's web search; no rule covers it yet",
        ),
        // Whether a sub-agent's or teammate's own calls reach the plugin was not
        // checked.
        "spawn_agent" => unjudged(
            "`spawn_agent` starts a sub-agent; khaelor-perm has not checked that its calls come through the plugin",
        ),
        t if t.starts_with("team_") => unjudged(&format!(
            "`{t}` drives Cline's agent team; khaelor-perm has not checked that a teammate's calls come through the plugin"
        )),
        "skills" => {
            unjudged("`skills` runs a configured skill, whose effect khaelor-perm has not checked")
        }
        "tasks" => unjudged("`tasks` schedules a task that runs later, outside this call"),
        other => unjudged(&format!(
            "khaelor-perm does not know the Cline tool `{other}`"
        )),
    }
}

fn unjudged(reason: &str) -> Mapped {
    Mapped::Unjudged {
        reason: reason.to_string(),
    }
}

/// The commands one `run_commands` call runs, as Cline 3.0.65 reads its input (the
/// union it parses, first match wins: `{commands: […]}`, `{commands: one}`, a list, one
/// `{command, args}`, `{command}`, `{cmd}`, a string), then joins a here-document that
/// the model split over several strings back into one command. A refusal when the
/// input is none of these.
fn commands(input: &Value) -> Result<Vec<String>, Mapped> {
    let list: Vec<&Value> = match input {
        Value::String(_) => vec![input],
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => {
            let named: Vec<&str> = ["commands", "command", "cmd"]
                .into_iter()
                .filter(|k| o.get(*k).is_some_and(|v| !v.is_null()))
                .collect();
            if named.len() > 1 {
                return Err(Mapped::Ambiguous {
                    reason: format!(
                        "the input gives both `{}` and `{}`; Cline runs only one of them, so khaelor-perm refuses to guess which",
                        named.first().copied().unwrap_or_default(),
                        named.get(1).copied().unwrap_or_default()
                    ),
                });
            }
            match (o.get("commands"), o.get("command"), o.get("cmd")) {
                (Some(Value::Array(a)), _, _) => a.iter().collect(),
                (Some(c @ (Value::String(_) | Value::Object(_))), _, _) => vec![c],
                (None, Some(Value::String(_)), _) => vec![input],
                (None, None, Some(c @ Value::String(_))) => vec![c],
                _ => return Err(unjudged("this `run_commands` call names no command")),
            }
        }
        _ => return Err(unjudged("this `run_commands` call names no command")),
    };
    let mut out = Vec::new();
    let mut strings: Vec<String> = Vec::new();
    for c in list {
        match c {
            Value::String(s) => strings.push(s.clone()),
            Value::Object(o) => {
                out.extend(join_heredocs(std::mem::take(&mut strings)));
                out.push(argv_command(o)?);
            }
            _ => {
                return Err(unjudged(
                    "a command of this `run_commands` call is not text",
                ));
            }
        }
    }
    out.extend(join_heredocs(strings));
    Ok(out)
}

/// `{command, args}`: Cline runs the program with those arguments and no shell
/// (`{command}` alone is a shell command line). As a shell command: every word quoted.
fn argv_command(o: &Map<String, Value>) -> Result<String, Mapped> {
    let Some(Value::String(program)) = o.get("command") else {
        return Err(unjudged(
            "a command of this `run_commands` call names no program",
        ));
    };
    let args = match o.get("args") {
        None | Some(Value::Null) => return Ok(program.clone()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(unjudged("the `args` of a command are not a list")),
    };
    let mut words = vec![quote(program)];
    for a in args {
        let Value::String(s) = a else {
            return Err(unjudged("an argument of a command is not text"));
        };
        words.push(quote(s));
    }
    Ok(words.join(" "))
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Cline joins a string that opens a here-document (`<<EOF`, `<<-'EOF'`) with the
/// strings after it up to the one that is its delimiter, with newlines; so does this.
fn join_heredocs(strings: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(s) = strings.get(i) {
        let end = heredoc_delimiter(s).and_then(|d| {
            strings
                .iter()
                .enumerate()
                .skip(i + 1)
                .find(|(_, x)| x.trim() == d)
                .map(|(j, _)| j)
        });
        match end {
            Some(j) => {
                out.push(strings.get(i..=j).unwrap_or_default().join("\n"));
                i = j + 1;
            }
            None => {
                out.push(s.clone());
                i += 1;
            }
        }
    }
    out
}

/// The delimiter of the first `<<` in `s` (not `<<<`), as Cline's pattern reads it:
/// `"…"`, `'…'`, or a word of `[A-Za-z0-9_./-]`.
fn heredoc_delimiter(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(pos) = s.get(from..)?.find("<<") {
        let at = from + pos;
        from = at + 2;
        if at > 0 && bytes.get(at - 1) == Some(&b'<') {
            continue;
        }
        let mut rest = s.get(at + 2..)?;
        rest = rest.strip_prefix('-').unwrap_or(rest);
        rest = rest.trim_start();
        if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let inner = rest.get(1..)?;
            if let Some(end) = inner.find(q)
                && end > 0
            {
                return inner.get(..end).map(str::to_string);
            }
            continue;
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
            .collect();
        if !word.is_empty() {
            return Some(word);
        }
    }
    None
}

/// `run_commands`: every command runs at once in its own shell, in the workspace root.
/// One is judged as our `bash`; several would be judged as one script they are not
/// (a `cd` in one does not move the next), so they ask.
fn run_commands(input: &Value) -> Mapped {
    match commands(input) {
        Err(refused) => refused,
        Ok(c) if c.len() == 1 => Mapped::Tool {
            tool: "bash",
            input: serde_json::json!({ "command": c.into_iter().next().unwrap_or_default() }),
        },
        Ok(c) if c.is_empty() => unjudged("this `run_commands` call names no command"),
        Ok(c) => unjudged(&format!(
            "this `run_commands` call runs {} commands at once, each in its own shell; khaelor-perm judges one per call",
            c.len()
        )),
    }
}

/// The paths a `read_files` call reads (its shapes: `{files: […]}`, `{file_paths}`,
/// `{paths}`, a list, one `{path}` / `{file_path}` / `{filePath}`, a string). Cline
/// takes the first of its shapes that fits, so an object naming its files under two
/// of these keys is read by neither (`{"path": "~/.ssh/id_rsa", "files": ["README"]}`
/// reads the key).
fn read_paths(input: &Value) -> Option<Vec<String>> {
    const KEYS: [&str; 6] = [
        "path",
        "file_path",
        "filePath",
        "files",
        "file_paths",
        "paths",
    ];
    fn only_key(o: &Map<String, Value>) -> Option<(&'static str, &Value)> {
        let mut found = KEYS.iter().filter_map(|k| o.get(*k).map(|v| (*k, v)));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
    fn one(v: &Value) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => match only_key(o)? {
                ("path" | "file_path" | "filePath", Value::String(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }
    fn many(v: &Value) -> Option<Vec<String>> {
        match v {
            Value::Array(a) => a.iter().map(one).collect(),
            other => one(other).map(|p| vec![p]),
        }
    }
    match input {
        Value::Object(o) => match only_key(o)? {
            ("files" | "file_paths" | "paths", list) => many(list),
            _ => one(input).map(|p| vec![p]),
        },
        other => many(other),
    }
}

/// `read_files`: one file is our `read`; several would need one decision each, so
/// they ask.
fn read_files(input: &Value) -> Mapped {
    match read_paths(input) {
        Some(p) if p.len() == 1 => Mapped::Tool {
            tool: "read",
            input: serde_json::json!({ "path": p.into_iter().next().unwrap_or_default() }),
        },
        Some(p) if p.len() > 1 => unjudged(&format!(
            "this `read_files` call reads {} files at once; khaelor-perm judges one per call",
            p.len()
        )),
        _ => unjudged("khaelor-perm could not read which files this `read_files` call reads"),
    }
}

/// `search_codebase`: regular expressions searched in the workspace root; what it
/// reads is that directory, whatever the patterns.
fn search_codebase(input: &Value) -> Mapped {
    let queries: Option<Vec<&str>> = match input {
        Value::Object(o) => match o.get("queries") {
            Some(Value::Array(a)) => a.iter().map(Value::as_str).collect(),
            Some(Value::String(s)) => Some(vec![s.as_str()]),
            _ => None,
        },
        Value::Array(a) => a.iter().map(Value::as_str).collect(),
        Value::String(s) => Some(vec![s.as_str()]),
        _ => None,
    };
    match queries {
        Some(q) if !q.is_empty() => Mapped::Tool {
            tool: "grep",
            input: serde_json::json!({ "pattern": q.join("|") }),
        },
        _ => unjudged("this `search_codebase` call names no query"),
    }
}

/// `editor`: replaces `old_text` with `new_text` in `path`, or inserts `new_text` at
/// `insert_line`, or creates the file with `new_text`: an edit of `path` each time.
fn editor(input: &Value) -> Mapped {
    let (Some(Value::String(path)), Some(Value::String(new))) =
        (input.get("path"), input.get("new_text"))
    else {
        return unjudged("this `editor` call gives no `path` and `new_text`");
    };
    let old = match (input.get("old_text"), input.get("insert_line")) {
        (Some(Value::String(o)), None | Some(Value::Null)) => o.clone(),
        (None | Some(Value::Null), _) => String::new(),
        _ => return unjudged("this `editor` call gives both `old_text` and `insert_line`"),
    };
    Mapped::Tool {
        tool: "edit",
        input: serde_json::json!({ "path": path, "oldString": old, "newString": new }),
    }
}

/// `fetch_web_content`: `{requests: [{url, prompt}]}`; one URL is our `webfetch`.
fn fetch(input: &Value) -> Mapped {
    let urls: Option<Vec<&str>> = input
        .get("requests")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|r| r.get("url")?.as_str()).collect());
    match urls.as_deref() {
        Some([u]) => Mapped::Tool {
            tool: "webfetch",
            input: serde_json::json!({ "url": u }),
        },
        Some(u) if u.len() > 1 => unjudged(&format!(
            "this `fetch_web_content` call fetches {} URLs at once; khaelor-perm judges one per call",
            u.len()
        )),
        _ => unjudged("this `fetch_web_content` call names no URL"),
    }
}

/// Whether a hook input is our plugin's report that a call ran.
pub fn is_tool_result(v: &Value) -> bool {
    v.get("hookName").and_then(Value::as_str) == Some("tool_result")
}

/// The answer our plugin reads: `{"decision", "reason"}`. A contained call asks (no
/// rewritten input is sent: there is no sandbox runner for Cline, `runner_for`).
pub fn render(d: &CallDecision) -> Rendered {
    Rendered {
        stdout: super::decision_reason_json(d),
        exit: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_plugin_sends() {
        let raw = br#"{"hookName":"tool_call","taskId":"conv_1796513984112_i6lu3d5","cwd":"/p/sub","workspaceRoots":["/p"],"tool_call":{"id":"call_0","name":"run_commands","input":{"commands":["echo hi > /p/m"]}}}"#;
        let call = super::super::parse(Host::Cline, raw).unwrap();
        assert_eq!(call.session_id, "conv_1796513984112_i6lu3d5");
        assert_eq!(call.call_id, "call_0");
        assert_eq!(call.cwd.as_deref(), Some("/p/sub"));
        assert_eq!(call.project_root.as_deref(), Some("/p"));
        assert_eq!(
            call.mapped,
            Mapped::Tool {
                tool: "bash",
                input: json!({"command": "echo hi > /p/m"})
            }
        );
        assert!(matches!(
            super::super::parse(Host::Cline, br#"{"taskId":"s"}"#),
            Err(HookError::Missing("tool_call"))
        ));
        let done: Value = serde_json::from_slice(
            br#"{"hookName":"tool_result","taskId":"s","tool_call":{"id":"call_0","name":"run_commands"}}"#,
        )
        .unwrap();
        assert!(is_tool_result(&done));
    }
}
