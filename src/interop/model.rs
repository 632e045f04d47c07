//! The shared model of an import: the rules it produced (each with the source file and
//! line it came from), what it could not translate and why, and its errors. Also the
//! small helpers every format uses: reading a source file, byte offset to line, the
//! translation of a literal command prefix, and anchoring a path pattern.
//!
//! Knows no format; the format files fill these types and `render` writes them out.

use std::path::{Path, PathBuf};

use crate::policy::rules::{Action, MatchDialect, PermissionRule, RuleSource};

/// Source files larger than this are refused (permission files are a few kilobytes).
pub const MAX_SOURCE_BYTES: u64 = 4 * 1024 * 1024;

/// A place in a source file (1-based line).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourcePos {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for SourcePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Example subjects a translated rule must (not) match, checked by our own config
/// loader when the written file is read (Codex's `match` / `not_match`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Examples {
    pub matches: Vec<String>,
    pub not_matches: Vec<String>,
}

/// One rule of ours and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedRule {
    pub rule: PermissionRule,
    pub from: SourcePos,
    /// The source text the rule translates (`Bash(npm run test:*)`).
    pub original: String,
    pub examples: Examples,
    /// Why the translation is not one to one (a widened deny, a source default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A source entry that produced no rule, and why that is safe.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    pub from: SourcePos,
    pub original: String,
    pub reason: String,
}

/// What an import produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    pub rules: Vec<ImportedRule>,
    pub skipped: Vec<Skipped>,
    /// Seed 004's exact "always" grants: the output sets `alwaysScope: exact`.
    pub always_scope_exact: bool,
}

/// Why an import failed. Nothing is written when it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read `{file}`: {message}")]
    Read { file: String, message: String },
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A deny that cannot be expressed, and no stricter rule can stand in for it.
    #[error(
        "{from}: the deny `{original}` cannot be translated ({reason}); remove or rewrite it in the source, nothing was written"
    )]
    DenyLost {
        from: SourcePos,
        original: String,
        reason: String,
    },
}

/// Where an import's relative patterns are anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportContext {
    /// The project (canonical): relative paths of the source resolve here.
    pub project: PathBuf,
    /// `~` in source patterns.
    pub home: PathBuf,
}

/// The capabilities whose subject is a bash command's text.
pub const COMMAND_CAPABILITIES: [&str; 3] = ["process.execute", "git.modify", "network.access"];

/// Reads a source file, refusing huge or non-UTF-8 ones.
pub fn read_source(path: &Path) -> Result<String, ImportError> {
    let file = path.display().to_string();
    let fail = |message: String| ImportError::Read {
        file: file.clone(),
        message,
    };
    let meta = std::fs::metadata(path)
        .map_err(|e| fail(crate::presentation::messages::lower_first(&e.to_string())))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".to_string()));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(fail(format!("larger than {MAX_SOURCE_BYTES} bytes")));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| fail(crate::presentation::messages::lower_first(&e.to_string())))?;
    String::from_utf8(bytes).map_err(|_| fail("not valid UTF-8".to_string()))
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.bytes().filter(|b| *b == b'\n').count() + 1)
}

/// 1-based (line, column) of a byte offset.
pub fn position_of(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or("");
    let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Import {
    pub fn push(
        &mut self,
        capability: &str,
        pattern: &str,
        dialect: MatchDialect,
        action: Action,
        from: &SourcePos,
        original: &str,
    ) -> &mut ImportedRule {
        let rule = PermissionRule::new(capability, pattern, action, RuleSource::Project)
            .with_dialect(dialect);
        self.rules.push(ImportedRule {
            rule,
            from: from.clone(),
            original: original.to_string(),
            examples: Examples::default(),
            note: None,
        });
        let last = self.rules.len() - 1;
        // INVARIANT: an element was pushed just above.
        #[expect(clippy::indexing_slicing, reason = "the vector is non-empty")]
        &mut self.rules[last]
    }

    /// A host's shell-command rule: it decides everything the command does, so it
    /// becomes the same pattern on every capability whose subject is the command text
    /// (`process.execute`, `git.modify`, `network.access`). Returns the index of the
    /// first rule pushed.
    pub fn push_command(
        &mut self,
        pattern: &str,
        dialect: MatchDialect,
        action: Action,
        from: &SourcePos,
        original: &str,
    ) -> usize {
        let first = self.rules.len();
        for cap in COMMAND_CAPABILITIES {
            self.push(cap, pattern, dialect, action, from, original);
        }
        first
    }

    pub fn skip(&mut self, from: &SourcePos, original: &str, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            from: from.clone(),
            original: original.to_string(),
            reason: reason.into(),
        });
    }
}

/// The patterns of a literal command prefix with a word boundary, as the hosts mean
/// it: the bare command and the command followed by arguments. A prefix with a `*` of
/// its own is written in the prefix dialect so the `*` stays literal.
pub fn command_prefix(prefix: &str) -> Vec<(String, MatchDialect)> {
    let p = crate::model::vocab::collapse_whitespace(prefix);
    if p.is_empty() {
        return vec![("*".to_string(), MatchDialect::Wildcard)];
    }
    if p.contains('*') {
        let mut v = vec![(format!("{p} *"), MatchDialect::Prefix)];
        // The prefix dialect reads a trailing `*` as "prefix": the bare form is then
        // wider (a literal-star prefix), which only matters for a deny (stricter).
        v.insert(0, (p, MatchDialect::Prefix));
        v
    } else {
        vec![
            (p.clone(), MatchDialect::Wildcard),
            (format!("{p} *"), MatchDialect::Wildcard),
        ]
    }
}

/// Anchors a path pattern: `~/x` at home, absolute as is, anything else at `base`.
pub fn anchor(pattern: &str, base: &Path, home: &Path) -> String {
    if pattern == "~" {
        return home.display().to_string();
    }
    if let Some(rest) = pattern.strip_prefix("~/") {
        return format!(
            "{}/{rest}",
            home.display().to_string().trim_end_matches('/')
        );
    }
    if let Some(rest) = pattern.strip_prefix("$HOME/") {
        return format!(
            "{}/{rest}",
            home.display().to_string().trim_end_matches('/')
        );
    }
    if pattern.starts_with('/') {
        return pattern.to_string();
    }
    let rest = pattern.strip_prefix("./").unwrap_or(pattern);
    format!(
        "{}/{rest}",
        base.display().to_string().trim_end_matches('/')
    )
}
