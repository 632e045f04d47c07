//! Tool mapping goldens: fixtures/policy_tools.jsonl run against real temp directories
//! (files, dirs and symlinks made for real), so path tricks flip project <-> outside.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::tools::{MAX_COMMAND_BYTES, ToolError, map_call};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Setup {
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
struct Req {
    capability: String,
    subject: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    id: String,
    tool: String,
    input: Value,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    setup: Setup,
    #[serde(default)]
    expect: Option<Vec<Req>>,
    #[serde(default)]
    expect_includes: Option<Vec<Req>>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    diff_contains: Vec<String>,
    /// A module this case needs beyond the mapping (`hardline`), for case selection.
    #[serde(default)]
    needs: Option<String>,
    /// Whether the mapped call carries a hardline hit (checked when present).
    #[serde(default)]
    hardline: Option<bool>,
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("proj");
        let outside = base.join("outside");
        let home = base.join("home");
        for d in [&root, &outside, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(root.join("src")).unwrap();
        World {
            _tmp: tmp,
            root,
            outside,
            home,
        }
    }

    fn fill(&self, s: &str) -> String {
        s.replace("{root}", &self.root.display().to_string())
            .replace("{outside}", &self.outside.display().to_string())
            .replace("{home}", &self.home.display().to_string())
    }

    fn path(&self, s: &str) -> PathBuf {
        let filled = self.fill(s);
        if Path::new(&filled).is_absolute() {
            PathBuf::from(filled)
        } else {
            self.root.join(filled)
        }
    }

    fn fill_json(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.fill(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill_json(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.fill_json(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn apply(&self, s: &Setup) {
        for d in &s.dirs {
            std::fs::create_dir_all(self.path(d)).unwrap();
        }
        for (p, content) in &s.files {
            let p = self.path(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        for (link, target) in &s.symlinks {
            let link = self.path(link);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(self.fill(target), link).unwrap();
        }
    }
}

/// Cases that need the bash engines or the hardline floor from main.
fn needs_engines(c: &Case) -> bool {
    c.needs.is_some() || (c.error.is_none() && matches!(c.tool.as_str(), "bash" | "process_start"))
}

fn run(filter: impl Fn(&Case) -> bool) {
    let table: Vec<(usize, Case)> = common::load_table("policy_tools.jsonl");
    let mut failures = Vec::new();
    let mut ran = 0;
    for (line, case) in table.iter().filter(|(_, c)| filter(c)) {
        ran += 1;
        let w = World::new();
        w.apply(&case.setup);
        let cwd = case.cwd.as_ref().map(|c| w.root.join(c));
        if let Some(c) = &cwd {
            std::fs::create_dir_all(c).unwrap();
        }
        let ctx = AnalysisContext::new(&w.root, cwd.as_deref(), &w.home).unwrap();
        let input = w.fill_json(&case.input);
        let outcome = std::panic::catch_unwind(|| map_call(&case.tool, &input, &ctx));
        let result = match outcome {
            Ok(r) => r,
            Err(_) => {
                failures.push(format!(
                    "line {line} `{}`: mapping panicked (engine not landed?)",
                    case.id
                ));
                continue;
            }
        };
        let fail = |msg: String| {
            format!(
                "line {line} `{}` ({} {}): {msg}",
                case.id, case.tool, case.input
            )
        };
        match (&case.error, result) {
            (Some(code), Err(e)) if e.code() == code => {}
            (Some(code), Err(e)) => failures.push(fail(format!(
                "expected error {code}, got {} ({e})",
                e.code()
            ))),
            (Some(code), Ok(call)) => failures.push(fail(format!(
                "expected error {code}, got {:?}",
                call.requests
            ))),
            (None, Err(e)) => failures.push(fail(format!("unexpected error {e}"))),
            (None, Ok(call)) => {
                let got: Vec<Req> = call
                    .requests
                    .iter()
                    .map(|r| Req {
                        capability: r.capability.as_str().to_string(),
                        subject: r.subject.clone(),
                    })
                    .collect();
                let fill = |v: &Vec<Req>| -> Vec<Req> {
                    v.iter()
                        .map(|r| Req {
                            capability: r.capability.clone(),
                            subject: w.fill(&r.subject),
                        })
                        .collect()
                };
                if let Some(exp) = &case.expect
                    && fill(exp) != got
                {
                    failures.push(fail(format!(
                        "expected {:?}\n     got {:?}",
                        fill(exp),
                        got
                    )));
                }
                if let Some(exp) = &case.expect_includes {
                    for r in fill(exp) {
                        if !got.contains(&r) {
                            failures.push(fail(format!("missing {r:?} in {got:?}")));
                        }
                    }
                }
                if let Some(want) = case.hardline
                    && call.hardline.is_some() != want
                {
                    failures.push(fail(format!(
                        "expected hardline {want}, got {:?}",
                        call.hardline
                    )));
                }
                let diffs: String = call
                    .requests
                    .iter()
                    .filter_map(|r| r.metadata.get("diff").and_then(|d| d.as_str()))
                    .collect();
                for want in &case.diff_contains {
                    if !diffs.lines().any(|l| l == want) {
                        failures.push(fail(format!("diff lacks line {want:?}:\n{diffs}")));
                    }
                }
            }
        }
    }
    assert!(ran > 0, "no cases selected");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn file_web_and_process_tools_map_as_the_table_says() {
    run(|c| !needs_engines(c));
}

/// Needs the bash engines (lexer/AST) and the hardline floor from main.
#[test]
fn engine_dependent_cases_map_as_the_table_says() {
    run(needs_engines);
}

#[test]
fn oversized_command_is_refused_before_analysis() {
    let w = World::new();
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let big = "a".repeat(MAX_COMMAND_BYTES + 1);
    for tool in ["bash", "process_start"] {
        let err = map_call(tool, &serde_json::json!({ "command": big }), &ctx).unwrap_err();
        assert!(
            matches!(
                err,
                ToolError::TooLarge {
                    field: "command",
                    ..
                }
            ),
            "{tool}: {err}"
        );
        assert_eq!(err.code(), "tooLarge");
    }
}

#[test]
fn errors_name_the_field() {
    let w = World::new();
    let ctx = AnalysisContext::new(&w.root, None, &w.home).unwrap();
    let err = map_call(
        "edit",
        &serde_json::json!({"path": "a", "oldString": "x"}),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "`edit` requires the field `newString`");
    let err = map_call(
        "write",
        &serde_json::json!({"path": 3, "content": "x"}),
        &ctx,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the field `path` of `write` must be a string"
    );
    let err = map_call("nope", &serde_json::json!({}), &ctx).unwrap_err();
    assert_eq!(err.to_string(), "unknown tool `nope`");
}
