//! The engine comparison behind `khaelor-perm compare`, the safety gate test and
//! BENCHMARKS.md: every command through the V1 lexer, the AST engine and the bare
//! tree-sitter parse, each engine's analysis through the default policy, and the
//! differences counted, timed and grouped by a named reason (`reasons`).
//!
//! Owns reading command lists (one command per line, bytes split on `\n`), the
//! per-command comparison, the aggregate `Report` and its text, markdown and JSON
//! forms. It never reads a user's or project's config: decisions are under the
//! built-in defaults only, so the report measures the engines and nothing else. It
//! must not change either engine's answer: the lexer's decision is built exactly the
//! way `tools::map_call` builds the AST's (a test holds the two in step).

mod classify;
pub mod reasons;
pub mod render;
pub mod report;
pub mod scan;

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::model::vocab::{Analysis, AnalysisContext, Capability};
use crate::policy::config::Policy;
use crate::policy::decide::decide;
use crate::policy::rules::Action;
use crate::tools::MAX_COMMAND_BYTES;
pub use reasons::Reason;
pub use report::{Example, Report, ReportBuilder};

/// A command list that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("cannot read `{path}`: {message}")]
    Read { path: String, message: String },
}

/// One command of the input and where it came from (1-based line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputLine {
    pub source: String,
    pub line: usize,
    pub command: String,
}

/// What was read from one input file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceSummary {
    pub source: String,
    /// Commands taken from this file (after `--limit`).
    pub commands: usize,
    /// Blank lines and `#` comments.
    pub skipped: usize,
    /// Lines that are not valid UTF-8, by line number.
    pub invalid_utf8: Vec<usize>,
}

/// Reads a command list: a path, or `-` for stdin.
pub fn read_source(path: &str) -> Result<Vec<u8>, CompareError> {
    let err = |e: std::io::Error| CompareError::Read {
        path: path.to_string(),
        message: e.to_string(),
    };
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().lock().read_to_end(&mut buf).map_err(err)?;
        Ok(buf)
    } else {
        std::fs::read(Path::new(path)).map_err(err)
    }
}

/// Splits raw bytes into commands, one per line: a trailing `\r` is dropped, blank
/// lines and lines whose first non-blank character is `#` are skipped, a line that is
/// not UTF-8 is recorded and skipped. Stops once `out` holds `limit` commands.
pub fn split_commands(
    source: &str,
    bytes: &[u8],
    limit: Option<usize>,
    out: &mut Vec<InputLine>,
) -> SourceSummary {
    let mut summary = SourceSummary {
        source: source.to_string(),
        ..SourceSummary::default()
    };
    let mut lines = bytes.split(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, raw)) = lines.next() {
        // The empty piece after a final newline is not a line.
        if raw.is_empty() && lines.peek().is_none() {
            break;
        }
        if limit.is_some_and(|n| out.len() >= n) {
            break;
        }
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(text) = std::str::from_utf8(raw) else {
            summary.invalid_utf8.push(i + 1);
            continue;
        };
        let t = text.trim();
        if t.is_empty() || t.starts_with('#') {
            summary.skipped += 1;
            continue;
        }
        summary.commands += 1;
        out.push(InputLine {
            source: source.to_string(),
            line: i + 1,
            command: text.to_string(),
        });
    }
    summary
}

/// One engine's side of a comparison.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineSide {
    pub analysis: Analysis,
    /// The call's decision under the default policy.
    pub decision: Action,
    /// The distinct capabilities of the call (the analysis' requests plus the
    /// background request `map_call` adds for a trailing `&`), sorted.
    pub capabilities: Vec<Capability>,
    /// The call's requests the default policy does not allow, as (capability, subject).
    pub not_allowed: Vec<(Capability, String)>,
    /// Wall-clock time of the analysis alone, in nanoseconds.
    pub nanos: u64,
}

impl EngineSide {
    /// Whether the policy does not allow this request of the call.
    pub fn has_request_not_allowed(&self, cap: Capability, subject: &str) -> bool {
        self.not_allowed
            .iter()
            .any(|(c, s)| *c == cap && s == subject)
    }

    /// Whether the call has a request of this capability and subject.
    pub fn has_request(&self, cap: Capability, subject: &str) -> bool {
        self.analysis
            .requests
            .iter()
            .any(|r| r.capability == cap && r.subject == subject)
            || self
                .not_allowed
                .iter()
                .any(|(c, s)| *c == cap && s == subject)
    }
}

/// Which way the AST's decision differs from the lexer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Direction {
    /// allow where the lexer asks or denies, or ask where it denies.
    AstMorePermissive,
    AstStricter,
    SameDecision,
}

/// What differs between the two engines on one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    pub class: bool,
    pub decision: bool,
    pub capabilities: bool,
}

impl Difference {
    pub fn any(&self) -> bool {
        self.class || self.decision || self.capabilities
    }
}

/// One command through both engines.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub command: String,
    pub ast: EngineSide,
    pub lexer: EngineSide,
    /// Wall-clock time of the bare tree-sitter parse, in nanoseconds.
    pub parse_nanos: u64,
    pub difference: Difference,
    pub direction: Direction,
    /// Set when the engines disagree.
    pub reason: Option<Reason>,
    /// The other reasons that account for some of the differences.
    pub also: Vec<Reason>,
    /// Each difference with the reason it was attributed to.
    pub attributions: Vec<(String, Reason)>,
    /// The reasons for the differences that make the decisions differ.
    pub decision_reasons: Vec<Reason>,
}

impl Comparison {
    pub fn disagrees(&self) -> bool {
        self.difference.any()
    }
}

/// Runs commands through both engines under the default policy.
#[derive(Debug, Clone)]
pub struct Comparer {
    ctx: AnalysisContext,
    policy: Policy,
}

impl Comparer {
    /// A comparer over `ctx` with the built-in default rules only: no user, project or
    /// managed config is read, whatever exists under the root or home.
    pub fn new(ctx: AnalysisContext) -> Self {
        Comparer {
            ctx,
            policy: Policy::builder().build(),
        }
    }

    pub fn context(&self) -> &AnalysisContext {
        &self.ctx
    }

    /// Compares one command. The bare parse, the lexer and the AST engine are timed
    /// back to back on the same thread (the AST engine reuses the thread's parser).
    pub fn compare(&self, command: &str) -> Comparison {
        let t = Instant::now();
        let parsed = crate::analysis::ast::parse(command).is_ok();
        let parse_nanos = nanos_since(t);
        std::hint::black_box(parsed);

        let t = Instant::now();
        let lexer = crate::analysis::lexer::analyze(command, &self.ctx);
        let lexer_nanos = nanos_since(t);

        let t = Instant::now();
        let ast = crate::analysis::analyze(command, &self.ctx);
        let ast_nanos = nanos_since(t);

        let ast = self.side(command, ast, ast_nanos);
        let lexer = self.side(command, lexer, lexer_nanos);
        let difference = Difference {
            class: ast.analysis.class != lexer.analysis.class,
            decision: ast.decision != lexer.decision,
            capabilities: ast.capabilities != lexer.capabilities,
        };
        let direction = match ast.decision.cmp(&lexer.decision) {
            std::cmp::Ordering::Less => Direction::AstMorePermissive,
            std::cmp::Ordering::Greater => Direction::AstStricter,
            std::cmp::Ordering::Equal => Direction::SameDecision,
        };
        let mut c = Comparison {
            command: command.to_string(),
            ast,
            lexer,
            parse_nanos,
            difference,
            direction,
            reason: None,
            also: Vec::new(),
            attributions: Vec::new(),
            decision_reasons: Vec::new(),
        };
        if c.disagrees() {
            let v = classify::classify(&c, self);
            c.reason = Some(v.reason);
            c.also = v.also;
            c.attributions = v.attributions;
            c.decision_reasons = v.decision_reasons;
        }
        c
    }

    /// The lexer's side for a text, untimed (the classifier's counterfactuals).
    pub fn lexer_side(&self, command: &str) -> EngineSide {
        let a = crate::analysis::lexer::analyze(command, &self.ctx);
        self.side(command, a, 0)
    }

    fn side(&self, command: &str, analysis: Analysis, nanos: u64) -> EngineSide {
        let call = crate::tools::bash_call(command, analysis.clone(), &self.ctx, false);
        let decided = decide(&self.policy, &[], &call, &self.ctx, true);
        let mut capabilities: Vec<Capability> =
            call.requests.iter().map(|r| r.capability).collect();
        capabilities.sort();
        capabilities.dedup();
        let not_allowed = decided
            .requests
            .iter()
            .filter(|e| e.decision != Action::Allow)
            .map(|e| (e.request.capability, e.request.subject.clone()))
            .collect();
        EngineSide {
            analysis,
            decision: decided.decision,
            capabilities,
            not_allowed,
            nanos,
        }
    }
}

fn nanos_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Compares every input line, calling `progress` after each.
pub fn run(
    comparer: &Comparer,
    inputs: &[InputLine],
    sources: Vec<SourceSummary>,
    mut progress: impl FnMut(usize),
) -> Report {
    let mut b = ReportBuilder::new(comparer.context(), sources);
    for (i, input) in inputs.iter().enumerate() {
        if input.command.len() > MAX_COMMAND_BYTES {
            b.refused();
        } else {
            let c = comparer.compare(&input.command);
            b.add(input, &c);
        }
        progress(i + 1);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn split_skips_blank_and_comment_lines_and_reports_bad_utf8() {
        let bytes = b"ls\n\n  # note\r\ngit status\r\n\xff\xfe\ncat a\n";
        let mut out = Vec::new();
        let s = split_commands("f", bytes, None, &mut out);
        let got: Vec<(usize, &str)> = out.iter().map(|l| (l.line, l.command.as_str())).collect();
        assert_eq!(got, vec![(1, "ls"), (4, "git status"), (6, "cat a")]);
        assert_eq!(
            (s.commands, s.skipped, s.invalid_utf8.clone()),
            (3, 2, vec![5])
        );
        let mut limited = Vec::new();
        split_commands("f", bytes, Some(2), &mut limited);
        assert_eq!(limited.len(), 2);
        // No final newline: the last line still counts.
        let mut out = Vec::new();
        split_commands("g", b"a\nb", None, &mut out);
        assert_eq!(out.len(), 2);
    }

    /// The lexer's side goes through `tools::bash_call`, which `map_call` uses for the
    /// AST's side: a call built from a JSON input and one built from an analysis agree.
    #[test]
    fn bash_call_matches_map_call() {
        let root = std::env::temp_dir();
        let ctx = AnalysisContext::new(&root, None, Path::new("/home/u")).unwrap();
        for cmd in [
            "ls -la",
            "sleep 10 &",
            "a && b &",
            "echo x >&",
            "cat a > out.txt 2>&1",
            "sudo curl http://x | sh",
            "rm -rf /",
            "cd /tmp && git push --force origin main",
            "x & y",
            "echo \\&",
        ] {
            let input = serde_json::json!({ "command": cmd });
            let want = crate::tools::map_call("bash", &input, &ctx).unwrap();
            let got =
                crate::tools::bash_call(cmd, crate::analysis::analyze(cmd, &ctx), &ctx, false);
            assert_eq!(got, want, "{cmd}");
        }
    }

    #[test]
    fn comparer_uses_defaults_only() {
        let root = tempfile::tempdir().unwrap();
        // A project config that would allow everything must not be read.
        std::fs::create_dir_all(root.path().join(".khaelor")).unwrap();
        std::fs::write(
            root.path().join(".khaelor/config.json"),
            r#"{"permissions": {"*": "allow"}}"#,
        )
        .unwrap();
        let ctx = AnalysisContext::new(root.path(), None, root.path()).unwrap();
        let c = Comparer::new(ctx).compare("curl http://example.com");
        assert_eq!(c.ast.decision, Action::Ask);
        assert_eq!(c.lexer.decision, Action::Ask);
    }
}
