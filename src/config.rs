//! Config loading and layering: JSON-with-comments files to an immutable `Policy`.
//!
//! Owns seed §4.1–§4.2 on the file side: where the files are (`$HOME/.khaelor/config.json`,
//! `<root>/.khaelor/config.json`, the optional managed file), the `permissions` forms
//! (shorthand, nested, `rules`) expanded in source key order, errors with file, line
//! and column, and what a broken file keeps. Matching and evaluation live in `rules`;
//! deciding a whole call lives in `decide`. Writing grants back is the service's job.
//!
//! Layer order (evaluation, last match wins): defaults ++ managed ++ user ++ project
//! ++ session. The managed layer's `deny`/`ask` rules are also a ceiling: whatever a
//! later layer says, a decision is at least as strict as the managed layer's own last
//! match. Its `allow` rules are a baseline later layers may tighten.
//!
//! A broken file (syntax error, unknown action, wrong type, unknown field, failing
//! example) keeps only its own well-formed `deny` rules (they can only tighten), drops
//! everything else, and puts the whole project at most at ask (`decide` applies the cap
//! and names the file in a risk note).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jsonc_parser::ast::{Array, Object, ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde::{Deserialize, Serialize};

use crate::rules::{
    Action, Evaluation, PermissionRule, RuleOrigin, RuleSet, RuleSource, capability_mask,
    default_rules, example_matches,
};
use crate::vocab::Capability;

/// Config files larger than this are refused (a config is a few kilobytes).
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// A config file that could not be (fully) used; `Display` is `file:line:column: message`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{file}:{line}:{column}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A rule that a later rule always overrides (`rules --check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shadowed {
    pub rule: PermissionRule,
    pub by: PermissionRule,
}

impl fmt::Display for Shadowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule {} is never used: the later rule {} always overrides it",
            self.rule.describe(),
            self.by.describe()
        )
    }
}

/// The rules one file contributed, and what was wrong with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedConfig {
    pub rules: Vec<PermissionRule>,
    pub errors: Vec<ConfigError>,
}

/// The effective policy: defaults and config layers, compiled once. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Policy {
    inner: Arc<PolicyInner>,
}

#[derive(Debug)]
struct PolicyInner {
    set: RuleSet,
    /// The managed layer alone: the ceiling its deny/ask rules impose.
    managed: RuleSet,
    errors: Vec<ConfigError>,
    files: Vec<PathBuf>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::builder().build()
    }
}

impl Policy {
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder::default()
    }

    /// A policy of exactly these rules (no defaults, no managed ceiling), for tests and
    /// tools that evaluate hand-made rule lists.
    pub fn from_rules(rules: Vec<PermissionRule>) -> Policy {
        Policy {
            inner: Arc::new(PolicyInner {
                set: RuleSet::new(rules),
                managed: RuleSet::default(),
                errors: Vec::new(),
                files: Vec::new(),
            }),
        }
    }

    /// The effective rules in evaluation order (defaults, managed, user, project).
    pub fn rules(&self) -> &[PermissionRule] {
        self.inner.set.rules()
    }

    /// Everything wrong with the config files; non-empty means every decision is at
    /// most ask.
    pub fn errors(&self) -> &[ConfigError] {
        &self.inner.errors
    }

    /// The config files this policy read (existing or not).
    pub fn files(&self) -> &[PathBuf] {
        &self.inner.files
    }

    pub fn rule_set(&self) -> &RuleSet {
        &self.inner.set
    }

    /// The managed layer's rules alone.
    pub fn managed(&self) -> &RuleSet {
        &self.inner.managed
    }

    /// Evaluates one capability and subject: session rules (last, so first to win),
    /// then the layered rules, then the managed ceiling.
    pub fn evaluate<'a>(
        &'a self,
        session: Option<&'a RuleSet>,
        cap: Capability,
        subject: &str,
    ) -> Evaluation<'a> {
        let base = match session.and_then(|s| s.matched(cap, subject)) {
            Some(rule) => Evaluation {
                action: rule.action,
                rule: Some(rule),
            },
            None => self.inner.set.evaluate(cap, subject),
        };
        match self.inner.managed.matched(cap, subject) {
            Some(m) if m.action > base.action => Evaluation {
                action: m.action,
                rule: Some(m),
            },
            _ => base,
        }
    }

    /// Whether `cap` is denied for every subject whatever session rules say: the layered
    /// rules deny it for `*` with nothing later to allow or ask, or the managed ceiling
    /// denies it for `*`.
    pub fn denies_everything(&self, cap: Capability) -> bool {
        self.inner.set.denies_everything(cap) || self.inner.managed.denies_everything(cap)
    }

    /// Config-file rules that a later rule always overrides. Defaults overridden by a
    /// config file are intended and not reported; a managed deny/ask is never shadowed
    /// by a non-managed rule (the ceiling keeps it alive).
    pub fn shadowed(&self) -> Vec<Shadowed> {
        let rules = self.rules();
        let eligible = |i: usize, j: usize| match (rules.get(i), rules.get(j)) {
            (Some(rule), Some(by)) => {
                rule.source.is_configured()
                    && !(rule.source == RuleSource::Managed
                        && rule.action != Action::Allow
                        && by.source != RuleSource::Managed)
            }
            _ => false,
        };
        self.inner
            .set
            .shadowed(eligible)
            .into_iter()
            .filter_map(|(i, j)| {
                Some(Shadowed {
                    rule: rules.get(i)?.clone(),
                    by: rules.get(j)?.clone(),
                })
            })
            .collect()
    }
}

/// Assembles a policy from layers. `load_policy` is the file-reading front end.
#[derive(Debug, Default)]
pub struct PolicyBuilder {
    no_defaults: bool,
    managed: Vec<PermissionRule>,
    user: Vec<PermissionRule>,
    project: Vec<PermissionRule>,
    errors: Vec<ConfigError>,
    files: Vec<PathBuf>,
}

impl PolicyBuilder {
    /// Leaves out the seed's defaults (tests of the evaluator alone).
    pub fn without_defaults(mut self) -> Self {
        self.no_defaults = true;
        self
    }

    /// Adds a parsed file as the layer `source` (`User`, `Project` or `Managed`); a
    /// broken file keeps only its deny rules.
    pub fn layer(mut self, source: RuleSource, parsed: ParsedConfig) -> Self {
        let ParsedConfig { rules, errors } = parsed;
        let keep: Vec<PermissionRule> = if errors.is_empty() {
            rules
        } else {
            rules
                .into_iter()
                .filter(|r| r.action == Action::Deny)
                .collect()
        };
        self.errors.extend(errors);
        match source {
            RuleSource::Managed => self.managed.extend(keep),
            RuleSource::Project => self.project.extend(keep),
            _ => self.user.extend(keep),
        }
        self
    }

    /// Adds a config text as layer `source`, errors naming `file`.
    pub fn text(self, source: RuleSource, file: &str, text: &str) -> Self {
        let parsed = parse_config(text, file, source);
        self.layer(source, parsed)
    }

    /// Adds a config file as layer `source`. A missing user or project file is no
    /// layer; a missing managed file is an error (the administrator asked for it).
    pub fn file(mut self, source: RuleSource, path: &Path) -> Self {
        self.files.push(path.to_path_buf());
        match read_config(path, source) {
            Some(parsed) => self.layer(source, parsed),
            None => self,
        }
    }

    pub fn build(self) -> Policy {
        let mut all = if self.no_defaults {
            Vec::new()
        } else {
            default_rules()
        };
        all.extend(self.managed.iter().cloned());
        all.extend(self.user);
        all.extend(self.project);
        Policy {
            inner: Arc::new(PolicyInner {
                set: RuleSet::new(all),
                managed: RuleSet::new(self.managed),
                errors: self.errors,
                files: self.files,
            }),
        }
    }
}

/// The files `load_policy` reads, in layer order: user, project, then managed.
pub fn config_files(root: &Path, home: &Path, managed: Option<&Path>) -> Vec<PathBuf> {
    let mut v = vec![user_config_path(home), project_config_path(root)];
    if let Some(m) = managed {
        v.push(m.to_path_buf());
    }
    v
}

/// `$HOME/.khaelor/config.json`.
pub fn user_config_path(home: &Path) -> PathBuf {
    home.join(".khaelor").join("config.json")
}

/// `<root>/.khaelor/config.json`.
pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(".khaelor").join("config.json")
}

/// Loads defaults ++ managed ++ user ++ project. Never fails: problems are in
/// `Policy::errors` and cap every decision at ask.
pub fn load_policy(root: &Path, home: &Path, managed: Option<&Path>) -> Policy {
    let mut b = Policy::builder();
    if let Some(m) = managed {
        b = b.file(RuleSource::Managed, m);
    }
    b.file(RuleSource::User, &user_config_path(home))
        .file(RuleSource::Project, &project_config_path(root))
        .build()
}

fn error_at(file: &str, line: usize, column: usize, message: impl Into<String>) -> ConfigError {
    ConfigError {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}

/// Reads one file; `None` when a user or project file does not exist.
fn read_config(path: &Path, source: RuleSource) -> Option<ParsedConfig> {
    let file = path.display().to_string();
    let fail = |msg: String| {
        Some(ParsedConfig {
            rules: Vec::new(),
            errors: vec![error_at(&file, 1, 1, msg)],
        })
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && source != RuleSource::Managed => {
            return None;
        }
        Err(e) => {
            return fail(format!(
                "cannot read config file: {}",
                lower_first(&e.to_string())
            ));
        }
    };
    if !meta.is_file() {
        return fail("config path is not a regular file".to_string());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return fail(format!(
            "config file is larger than {MAX_CONFIG_BYTES} bytes"
        ));
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return fail(format!(
                "cannot read config file: {}",
                lower_first(&e.to_string())
            ));
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Some(parse_config(&text, &file, source)),
        Err(_) => fail("config file is not valid UTF-8".to_string()),
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Byte offset -> 1-based (line, column in characters), as jsonc-parser counts them.
struct LineIndex<'a> {
    text: &'a str,
}

impl LineIndex<'_> {
    fn position(&self, offset: usize) -> (usize, usize) {
        let before = self.text.get(..offset).unwrap_or(self.text);
        let mut line = 1;
        let mut col = 1;
        let mut chars = before.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\n' || (c == '\r' && chars.peek() != Some(&'\n')) {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
        (line, col)
    }
}

struct Parser<'a> {
    file: &'a str,
    source: RuleSource,
    index: LineIndex<'a>,
    rules: Vec<PermissionRule>,
    errors: Vec<ConfigError>,
}

/// Parses one config text into the rules of layer `source`, in source key order
/// (shorthand and nested keys first, then the `rules` array).
pub fn parse_config(text: &str, file: &str, source: RuleSource) -> ParsedConfig {
    // Comments and trailing commas are the JSONC this project accepts; the looser
    // JSON5 forms are refused so a config never means something its author did not see.
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let mut p = Parser {
        file,
        source,
        index: LineIndex { text },
        rules: Vec::new(),
        errors: Vec::new(),
    };
    match jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options) {
        Err(e) => {
            p.errors.push(error_at(
                file,
                e.line_display(),
                e.column_display(),
                lower_first(&e.kind().to_string()),
            ));
        }
        Ok(parsed) => match parsed.value {
            None => {}
            Some(Value::Object(obj)) => p.top(&obj),
            Some(other) => p.error(other.start(), "config must be a JSON object"),
        },
    }
    ParsedConfig {
        rules: p.rules,
        errors: p.errors,
    }
}

fn type_name(v: &Value<'_>) -> &'static str {
    match v {
        Value::StringLit(_) => "a string",
        Value::NumberLit(_) => "a number",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::NullKeyword(_) => "null",
    }
}

fn prop_name_start(n: &ObjectPropName<'_>) -> usize {
    match n {
        ObjectPropName::String(s) => s.range.start,
        ObjectPropName::Word(w) => w.range.start,
    }
}

const RULE_FIELDS: &str = "`capability`, `pattern`, `action`, `allowAlways` or `examples`";

impl Parser<'_> {
    fn error(&mut self, offset: usize, message: impl Into<String>) {
        let (line, column) = self.index.position(offset);
        self.errors.push(error_at(self.file, line, column, message));
    }

    fn origin(&self, offset: usize) -> RuleOrigin {
        let (line, column) = self.index.position(offset);
        RuleOrigin {
            file: self.file.to_string(),
            line,
            column,
        }
    }

    /// Reports duplicate keys (a duplicated key in a security config is ambiguous).
    fn check_duplicates(&mut self, obj: &Object<'_>) {
        let mut seen = std::collections::HashSet::new();
        for prop in &obj.properties {
            let name = prop.name.as_str();
            if !seen.insert(name.to_string()) {
                self.error(
                    prop_name_start(&prop.name),
                    format!("duplicate key `{name}`"),
                );
            }
        }
    }

    fn top(&mut self, obj: &Object<'_>) {
        let mut found = false;
        for prop in &obj.properties {
            if prop.name.as_str() != "permissions" {
                // Other sections of the agent's config are not ours to judge.
                continue;
            }
            if found {
                self.error(prop_name_start(&prop.name), "duplicate key `permissions`");
                continue;
            }
            found = true;
            match &prop.value {
                Value::Object(perms) => self.permissions(perms),
                other => {
                    let msg = format!(
                        "`permissions` must be an object, found {}",
                        type_name(other)
                    );
                    self.error(other.start(), msg);
                }
            }
        }
    }

    fn check_capability(&mut self, pattern: &str, offset: usize) -> bool {
        if pattern.is_empty() {
            self.error(offset, "empty capability pattern");
            return false;
        }
        if capability_mask(pattern) == 0 {
            let msg = format!(
                "capability `{pattern}` names no capability, expected one of {} or a `*` pattern",
                Capability::ALL
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            self.error(offset, msg);
            return false;
        }
        true
    }

    fn action(&mut self, v: &Value<'_>) -> Option<Action> {
        match v {
            Value::StringLit(s) => match s.value.parse::<Action>() {
                Ok(a) => Some(a),
                Err(e) => {
                    self.error(s.range.start, e.to_string());
                    None
                }
            },
            other => {
                let msg = format!(
                    "expected an action (`allow`, `ask` or `deny`), found {}",
                    type_name(other)
                );
                self.error(other.start(), msg);
                None
            }
        }
    }

    fn push(&mut self, capability: &str, pattern: &str, action: Action, at: usize) {
        let mut r = PermissionRule::new(capability, pattern, action, self.source);
        r.origin = Some(self.origin(at));
        self.rules.push(r);
    }

    fn permissions(&mut self, perms: &Object<'_>) {
        self.check_duplicates(perms);
        let mut rules_arrays: Vec<&Value<'_>> = Vec::new();
        for prop in &perms.properties {
            let key = prop.name.as_str();
            let key_at = prop_name_start(&prop.name);
            if key == "rules" {
                rules_arrays.push(&prop.value);
                continue;
            }
            if !self.check_capability(key, key_at) {
                continue;
            }
            match &prop.value {
                Value::StringLit(_) => {
                    if let Some(a) = self.action(&prop.value) {
                        self.push(key, "*", a, key_at);
                    }
                }
                Value::Object(nested) => {
                    self.check_duplicates(nested);
                    for sub in &nested.properties {
                        let pat = sub.name.as_str();
                        let at = prop_name_start(&sub.name);
                        if pat.is_empty() {
                            self.error(at, "empty subject pattern");
                            continue;
                        }
                        if let Some(a) = self.action(&sub.value) {
                            self.push(key, pat, a, at);
                        }
                    }
                }
                other => {
                    let msg = format!(
                        "`{key}` must be an action or an object of subject pattern to action, found {}",
                        type_name(other)
                    );
                    self.error(other.start(), msg);
                }
            }
        }
        for v in rules_arrays {
            match v {
                Value::Array(arr) => self.rules_array(arr),
                other => {
                    let msg = format!(
                        "`rules` must be an array of rule objects, found {}",
                        type_name(other)
                    );
                    self.error(other.start(), msg);
                }
            }
        }
    }

    fn rules_array(&mut self, arr: &Array<'_>) {
        for el in &arr.elements {
            match el {
                Value::Object(obj) => self.rule_object(obj),
                other => {
                    let msg = format!("a rule must be an object, found {}", type_name(other));
                    self.error(other.start(), msg);
                }
            }
        }
    }

    fn string_field(&mut self, v: &Value<'_>, field: &str) -> Option<String> {
        match v {
            Value::StringLit(s) => Some(s.value.to_string()),
            other => {
                let msg = format!("`{field}` must be a string, found {}", type_name(other));
                self.error(other.start(), msg);
                None
            }
        }
    }

    fn rule_object(&mut self, obj: &Object<'_>) {
        let errors_before = self.errors.len();
        self.check_duplicates(obj);
        let mut capability: Option<(String, usize)> = None;
        let mut pattern: Option<String> = None;
        let mut action: Option<Action> = None;
        let mut allow_always = false;
        let mut examples: Vec<(bool, String, usize)> = Vec::new();
        for prop in &obj.properties {
            let at = prop_name_start(&prop.name);
            match prop.name.as_str() {
                "capability" => {
                    if let Some(c) = self.string_field(&prop.value, "capability")
                        && self.check_capability(&c, prop.value.start())
                    {
                        capability = Some((c, prop.value.start()));
                    }
                }
                "pattern" => {
                    if let Some(p) = self.string_field(&prop.value, "pattern") {
                        if p.is_empty() {
                            self.error(prop.value.start(), "empty subject pattern");
                        } else {
                            pattern = Some(p);
                        }
                    }
                }
                "action" => action = self.action(&prop.value),
                "allowAlways" => match &prop.value {
                    Value::BooleanLit(b) => allow_always = b.value,
                    other => {
                        let msg = format!(
                            "`allowAlways` must be a boolean, found {}",
                            type_name(other)
                        );
                        self.error(other.start(), msg);
                    }
                },
                "examples" => self.examples(&prop.value, &mut examples),
                other => {
                    let msg = format!("unknown field `{other}` in rule, expected {RULE_FIELDS}");
                    self.error(at, msg);
                }
            }
        }
        if capability.is_none() && obj.get("capability").is_none() {
            self.error(obj.range.start, "rule is missing the field `capability`");
        }
        if action.is_none() && obj.get("action").is_none() {
            self.error(obj.range.start, "rule is missing the field `action`");
        }
        let (Some((capability, _)), Some(action)) = (capability, action) else {
            return;
        };
        if self.errors.len() != errors_before {
            return;
        }
        let mut rule = PermissionRule::new(
            capability,
            pattern.unwrap_or_else(|| "*".to_string()),
            action,
            self.source,
        );
        rule.allow_always = allow_always;
        rule.origin = Some(self.origin(obj.range.start));
        for (should, ex, at) in examples {
            if example_matches(&rule, &ex) != should {
                let msg = if should {
                    format!(
                        "example `{ex}` should match the pattern `{}` but does not",
                        rule.pattern
                    )
                } else {
                    format!(
                        "example `{ex}` should not match the pattern `{}` but does",
                        rule.pattern
                    )
                };
                self.error(at, msg);
            }
        }
        if self.errors.len() == errors_before {
            self.rules.push(rule);
        }
    }

    fn examples(&mut self, v: &Value<'_>, out: &mut Vec<(bool, String, usize)>) {
        let Value::Object(obj) = v else {
            let msg = format!(
                "`examples` must be an object with `match` and `notMatch` lists, found {}",
                type_name(v)
            );
            self.error(v.start(), msg);
            return;
        };
        self.check_duplicates(obj);
        for prop in &obj.properties {
            let should = match prop.name.as_str() {
                "match" => true,
                "notMatch" => false,
                other => {
                    let msg = format!(
                        "unknown field `{other}` in examples, expected `match` or `notMatch`"
                    );
                    self.error(prop_name_start(&prop.name), msg);
                    continue;
                }
            };
            let Value::Array(arr) = &prop.value else {
                let msg = format!(
                    "`{}` must be an array of strings, found {}",
                    prop.name.as_str(),
                    type_name(&prop.value)
                );
                self.error(prop.value.start(), msg);
                continue;
            };
            for el in &arr.elements {
                match el {
                    Value::StringLit(s) => out.push((should, s.value.to_string(), s.range.start)),
                    other => {
                        let msg =
                            format!("an example must be a string, found {}", type_name(other));
                        self.error(other.start(), msg);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_expand_in_source_order_with_rules_last() {
        let text = r#"{
  // comment
  "permissions": {
    "rules": [ { "capability": "file.write.outsideProject", "pattern": "/n/*", "action": "allow" }, ],
    "file.read": "allow",
    "process.execute": { "git push *": "allow", "*": "ask", },
  },
}"#;
        let p = parse_config(text, "c.json", RuleSource::Project);
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let got: Vec<(&str, &str, Action)> = p
            .rules
            .iter()
            .map(|r| (r.capability.as_str(), r.pattern.as_str(), r.action))
            .collect();
        assert_eq!(
            got,
            vec![
                ("file.read", "*", Action::Allow),
                ("process.execute", "git push *", Action::Allow),
                ("process.execute", "*", Action::Ask),
                ("file.write.outsideProject", "/n/*", Action::Allow),
            ]
        );
        let o = p.rules.first().and_then(|r| r.origin.clone());
        assert_eq!(
            o,
            Some(RuleOrigin {
                file: "c.json".into(),
                line: 5,
                column: 5
            })
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let p = parse_config(
            "{\n  \"permissions\": { \"file.read\": \"alow\" }\n}",
            "c.json",
            RuleSource::User,
        );
        assert_eq!(
            p.errors.first().map(ToString::to_string).as_deref(),
            Some("c.json:2:33: unknown action `alow`, expected `allow`, `ask` or `deny`")
        );
    }
}
