//! The JSONC side of config loading: one config text to the rules it contributes, in
//! source key order, and every problem with its file, line and column.
//!
//! Owns the `permissions` forms (shorthand, nested, `rules`), field and type checks,
//! rule examples, and positions. Reading files and layering are the parent's job.

use jsonc_parser::ast::{Array, Object, ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use super::{ConfigError, ConfigSettings, ParsedConfig, error_at};
use crate::model::vocab::Capability;
use crate::policy::rules::{
    Action, Expiry, MatchDialect, PathGlob, PermissionRule, RuleOrigin, RuleSource,
    capability_mask, example_matches,
};

/// Byte offset -> 1-based (line, column in characters), as jsonc-parser counts them
/// (a line ends at `\n` or at a lone `\r`). Line starts are found once, so positions
/// for every rule of a large file stay cheap.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, b) in bytes.iter().enumerate() {
            let lone_cr = *b == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            if *b == b'\n' || lone_cr {
                starts.push(i + 1);
            }
        }
        LineIndex { text, starts }
    }

    fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|s| *s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |t| t.chars().count());
        (line, col + 1)
    }
}

struct Parser<'a> {
    file: &'a str,
    source: RuleSource,
    index: LineIndex<'a>,
    rules: Vec<PermissionRule>,
    errors: Vec<ConfigError>,
    always_scope: Option<super::AlwaysScope>,
    preset: Option<crate::policy::presets::Preset>,
    host_rules: Option<bool>,
    packs: Vec<(String, super::PackMode)>,
}

/// The JSONC dialect configs are read (and edited) in: comments and trailing commas,
/// what people write by hand. The looser JSON5 forms are refused so a config never
/// means something its author did not see, and a file the loader would reject is
/// never edited by the grant writer.
pub fn jsonc_options() -> ParseOptions {
    ParseOptions {
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
    }
}

/// Parses one config text into the rules of layer `source`, in source key order
/// (shorthand and nested keys first, then the `rules` array).
pub fn parse_config(text: &str, file: &str, source: RuleSource) -> ParsedConfig {
    parse_config_with_settings(text, file, source).0
}

/// As `parse_config`, also returning the file-wide settings (`alwaysScope`).
pub fn parse_config_with_settings(
    text: &str,
    file: &str,
    source: RuleSource,
) -> (ParsedConfig, ConfigSettings) {
    let options = jsonc_options();
    let mut p = Parser {
        file,
        source,
        index: LineIndex::new(text),
        rules: Vec::new(),
        errors: Vec::new(),
        always_scope: None,
        preset: None,
        host_rules: None,
        packs: Vec::new(),
    };
    match jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options) {
        Err(e) => {
            p.errors.push(error_at(
                file,
                e.line_display(),
                e.column_display(),
                crate::model::vocab::lower_first(&e.kind().to_string()),
            ));
        }
        Ok(parsed) => match parsed.value {
            None => {}
            Some(Value::Object(obj)) => p.top(&obj),
            Some(other) => p.error(other.start(), "config must be a JSON object"),
        },
    }
    (
        ParsedConfig {
            rules: p.rules,
            errors: p.errors,
        },
        ConfigSettings {
            packs: p.packs,
            always_scope: p.always_scope,
            preset: p.preset,
            host_rules: p.host_rules,
        },
    )
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

const RULE_FIELDS: &str =
    "`capability`, `pattern`, `action`, `match`, `allowAlways`, `expires` or `examples`";

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

    /// `permissions.packs`: an object of pack name to `"off"`, `"on"` or `"deny"`.
    fn packs_setting(&mut self, value: &Value<'_>) {
        let Value::Object(obj) = value else {
            let msg = format!(
                "`packs` must be an object of pack name to \"off\", \"on\" or \"deny\", found {}",
                type_name(value)
            );
            self.error(value.start(), msg);
            return;
        };
        self.check_duplicates(obj);
        for prop in &obj.properties {
            let name = prop.name.as_str();
            let at = prop_name_start(&prop.name);
            if !crate::programs::packs::names().any(|n| n == name) {
                let known: Vec<&str> = crate::programs::packs::names().collect();
                self.error(
                    at,
                    format!(
                        "unknown pack `{name}`: expected one of {}",
                        known.join(", ")
                    ),
                );
                continue;
            }
            let mode = match &prop.value {
                Value::StringLit(v) if v.value == "off" => super::PackMode::Off,
                Value::StringLit(v) if v.value == "on" => super::PackMode::On,
                Value::StringLit(v) if v.value == "deny" => super::PackMode::Deny,
                other => {
                    let found = match other {
                        Value::StringLit(v) => format!("`{}`", v.value),
                        v => type_name(v).to_string(),
                    };
                    self.error(
                        other.start(),
                        format!("pack `{name}` must be \"off\", \"on\" or \"deny\", found {found}"),
                    );
                    continue;
                }
            };
            self.packs.push((name.to_string(), mode));
        }
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
            if key == "alwaysScope" {
                // Seed 004: "always" grants remember exactly the approved subject.
                match &prop.value {
                    Value::StringLit(v) if v.value == "exact" => {
                        self.always_scope = Some(super::AlwaysScope::Exact);
                    }
                    Value::StringLit(v) if v.value == "pattern" => {
                        self.always_scope = Some(super::AlwaysScope::Pattern);
                    }
                    other => {
                        let msg = format!(
                            "`alwaysScope` must be `\"exact\"` or `\"pattern\"`, found {}",
                            match other {
                                Value::StringLit(v) => format!("`{}`", v.value),
                                v => type_name(v).to_string(),
                            }
                        );
                        self.error(other.start(), msg);
                    }
                }
                continue;
            }
            if key == "hostRules" {
                // Whether the agent hosts' own permission rules are a policy layer
                // (`crate::hosts::grants`); `false` turns the layer off.
                match &prop.value {
                    Value::BooleanLit(b) => self.host_rules = Some(b.value),
                    other => {
                        let msg =
                            format!("`hostRules` must be a boolean, found {}", type_name(other));
                        self.error(other.start(), msg);
                    }
                }
                continue;
            }
            if key == "packs" {
                // Per domain pack: `"off"`, `"on"` or `"deny"`.
                self.packs_setting(&prop.value);
                continue;
            }
            if key == "preset" {
                // `strict`, `recommended` or `autonomous`.
                match &prop.value {
                    Value::StringLit(v) => {
                        match v.value.parse::<crate::policy::presets::Preset>() {
                            Ok(p) => self.preset = Some(p),
                            Err(e) => self.error(v.range.start, e.to_string()),
                        }
                    }
                    other => {
                        let msg = format!("`preset` must be a string, found {}", type_name(other));
                        self.error(other.start(), msg);
                    }
                }
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
        let mut expires: Option<Expiry> = None;
        let mut dialect = MatchDialect::Wildcard;
        let mut dialect_at = obj.range.start;
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
                "match" => {
                    if let Some(d) = self.string_field(&prop.value, "match") {
                        match d.parse::<MatchDialect>() {
                            Ok(d) => {
                                dialect = d;
                                dialect_at = prop.value.start();
                            }
                            Err(e) => self.error(prop.value.start(), e),
                        }
                    }
                }
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
                "expires" => {
                    if let Some(e) = self.string_field(&prop.value, "expires") {
                        match e.parse::<Expiry>() {
                            Ok(e) => expires = Some(e),
                            Err(msg) => self.error(prop.value.start(), msg),
                        }
                    }
                }
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
        if dialect == MatchDialect::Glob {
            // Path globs read `/` as a separator; a command has no segments to match.
            let commands = Capability::ALL.iter().any(|c| {
                capability_mask(&capability) & (1u8 << c.index()) != 0 && c.has_command_subject()
            });
            if commands {
                let msg = format!(
                    "`match: glob` reads paths, but `{capability}` names a command capability; use the default wildcard or `prefix`"
                );
                self.error(dialect_at, msg);
                return;
            }
            if let Some(p) = &pattern
                && let Err(e) = PathGlob::new(p, None)
            {
                self.error(dialect_at, e.to_string());
                return;
            }
        }
        let mut rule = PermissionRule::new(
            capability,
            pattern.unwrap_or_else(|| "*".to_string()),
            action,
            self.source,
        )
        .with_dialect(dialect);
        rule.allow_always = allow_always;
        rule.expires = expires;
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
    fn positions_count_lines_and_characters_like_jsonc_parser() {
        let text = "ab\r\ncé\rx\n\nz";
        let idx = LineIndex::new(text);
        let at = |needle: &str| idx.position(text.find(needle).unwrap());
        assert_eq!(at("ab"), (1, 1));
        assert_eq!(at("\r\n"), (1, 3));
        assert_eq!(at("é"), (2, 2));
        assert_eq!(at("x"), (3, 1));
        assert_eq!(at("z"), (5, 1));
    }
}
