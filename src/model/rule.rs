//! The rule record every layer names: what a rule decides (`Action`), where it came from
//! (`RuleSource`, `RuleOrigin`), how its pattern is read (`MatchDialect`) and the rule
//! itself (`PermissionRule`) with its one-line description.
//!
//! Data only: compiling and matching rules is `policy::rules`, reading them from files
//! is `policy::config`. It lives here, below the policy, so that wording (`presentation`)
//! can name a rule without importing the layer that evaluates it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a rule decides (seed §4.1). Ordered by strictness:
/// `Allow < Contain < Ask < Deny`, so a call's decision is its strictest request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    /// Run without a prompt inside the OS sandbox (`crate::contain`): writes only in
    /// the project, protected paths read-only, secrets masked, no network. Only a
    /// command can be contained; where the sandbox cannot run it, it asks.
    Contain,
    Ask,
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Contain => "contain",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An action name that is not `allow`, `contain`, `ask` or `deny`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action `{0}`, expected `allow`, `contain`, `ask` or `deny`")]
pub struct UnknownAction(pub String);

impl FromStr for Action {
    type Err = UnknownAction;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Action::Allow),
            "contain" => Ok(Action::Contain),
            "ask" => Ok(Action::Ask),
            "deny" => Ok(Action::Deny),
            other => Err(UnknownAction(other.to_string())),
        }
    }
}

/// An action name another tool's format does not have: those formats know `allow`,
/// `ask` and `deny` only (`contain` is this tool's own).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action `{0}`, expected `allow`, `ask` or `deny`")]
pub struct UnknownSeedAction(pub String);

impl Action {
    /// Reads one of seed 000's three actions, as the formats `interop` imports write
    /// them; `contain` there is an unknown word, not a wider meaning.
    pub fn parse_seed(s: &str) -> Result<Action, UnknownSeedAction> {
        match s.parse::<Action>() {
            Ok(Action::Contain) | Err(_) => Err(UnknownSeedAction(s.to_string())),
            Ok(a) => Ok(a),
        }
    }
}

/// Where a rule came from. Layers in evaluation order: defaults, managed (its allow
/// rules), user, project, session; `hardline` and `builtin` are the non-configurable
/// floors (`builtin`: self-protection and the broken-config cap, both at most ask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleSource {
    Hardline,
    Builtin,
    Default,
    /// The active preset's rules, right after the defaults.
    Preset,
    User,
    Project,
    Managed,
    Session,
    /// A permission rule an agent host persists itself (Claude Code's `settings.json`,
    /// Codex's rules, …), read as a policy layer beside the user or project layer
    /// (`crate::hosts::grants`); the rule's name says which host (`host:claude`).
    Host,
}

impl RuleSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSource::Hardline => "hardline",
            RuleSource::Builtin => "builtin",
            RuleSource::Default => "default",
            RuleSource::Preset => "preset",
            RuleSource::User => "user",
            RuleSource::Project => "project",
            RuleSource::Managed => "managed",
            RuleSource::Session => "session",
            RuleSource::Host => "host",
        }
    }

    /// Whether rules of this source were written by a person in a config file (as
    /// opposed to shipped or built in). Explicit asks from such rules stay asks
    /// (no "always" offered unless the rule says `allowAlways`).
    pub fn is_configured(self) -> bool {
        matches!(
            self,
            RuleSource::User | RuleSource::Project | RuleSource::Managed | RuleSource::Host
        )
    }
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a file a rule was written (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleOrigin {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn star() -> String {
    "*".to_string()
}

/// How a rule's subject pattern is read (`"match"` in a config rule). The default is
/// seed 000's; the others keep imported rules' meaning exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchDialect {
    /// Seed 000: `*` matches any run of characters, `/` included; no `*` = exact.
    #[default]
    Wildcard,
    /// Seed 003 path globs: `*` within one segment, `**` across segments (a trailing
    /// `/**` also matches the base), `?` one non-`/` character; relative patterns are
    /// anchored at the project root; targets are normalised before matching.
    Glob,
    /// Seed 004 prefix globs: `""` or `*` any subject, a `*`-suffixed pattern is a
    /// literal prefix, anything else must match exactly.
    Prefix,
}

impl MatchDialect {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchDialect::Wildcard => "wildcard",
            MatchDialect::Glob => "glob",
            MatchDialect::Prefix => "prefix",
        }
    }

    fn is_default(&self) -> bool {
        *self == MatchDialect::Wildcard
    }
}

impl FromStr for MatchDialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "wildcard" => Ok(MatchDialect::Wildcard),
            "glob" => Ok(MatchDialect::Glob),
            "prefix" => Ok(MatchDialect::Prefix),
            other => Err(format!(
                "unknown match dialect `{other}`, expected `wildcard`, `glob` or `prefix`"
            )),
        }
    }
}

/// When a rule stops applying, as a person wrote it: a date (`2027-01-31`: the rule
/// holds through that day, UTC) or an RFC 3339 time with its offset
/// (`2027-01-31T18:00:00+01:00`: the rule holds until that instant). From then on
/// the rule is skipped as if it were not written; `rules` still lists it, marked.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Expiry {
    text: String,
    /// Seconds since the Unix epoch from which the rule no longer applies.
    at: i64,
}

impl Expiry {
    /// The instant the rule stops applying, in seconds since the Unix epoch.
    pub fn at(&self) -> i64 {
        self.at
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the rule no longer applies at `now` (seconds since the Unix epoch).
    pub fn passed(&self, now: i64) -> bool {
        now >= self.at
    }
}

impl FromStr for Expiry {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wrong = || {
            format!(
                "`expires` must be a date (`2027-01-31`) or an RFC 3339 time with an offset (`2027-01-31T18:00:00Z`), found `{s}`"
            )
        };
        let at = if s.len() == 10 {
            // A date: through the end of that day, UTC.
            let date: jiff::civil::Date = s.parse().map_err(|_| wrong())?;
            let next = date.tomorrow().map_err(|_| wrong())?;
            next.to_zoned(jiff::tz::TimeZone::UTC)
                .map_err(|_| wrong())?
                .timestamp()
                .as_second()
        } else {
            let t: jiff::Timestamp = s.parse().map_err(|_| wrong())?;
            t.as_second()
        };
        Ok(Expiry {
            text: s.to_string(),
            at,
        })
    }
}

impl TryFrom<String> for Expiry {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Expiry> for String {
    fn from(e: Expiry) -> String {
        e.text
    }
}

/// Seconds since the Unix epoch, now (0 if the clock reads before it).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// One rule (seed §4.1) with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    /// Capability pattern, e.g. `file.write.*` or `*`.
    pub capability: String,
    /// Subject pattern, e.g. `git push *`; `*` when the config left it out.
    #[serde(default = "star")]
    pub pattern: String,
    pub action: Action,
    pub source: RuleSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<RuleOrigin>,
    /// An explicit `ask` from a config file offers "always" only when this is set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_always: bool,
    /// How `pattern` is read; seed 000's wildcard unless the rule says otherwise.
    #[serde(
        default,
        rename = "match",
        skip_serializing_if = "MatchDialect::is_default"
    )]
    pub dialect: MatchDialect,
    /// Matches only a `process.execute` request the analysis gave this verdict
    /// (preset rules only). Config files cannot set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<crate::model::vocab::Verdict>,
    /// A name for a shipped rule (`secret: AWS credentials`), shown by `rules`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When the rule stops applying; `None`: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<Expiry>,
}

impl PermissionRule {
    pub fn new(
        capability: impl Into<String>,
        pattern: impl Into<String>,
        action: Action,
        source: RuleSource,
    ) -> Self {
        PermissionRule {
            capability: capability.into(),
            pattern: pattern.into(),
            action,
            source,
            origin: None,
            allow_always: false,
            dialect: MatchDialect::Wildcard,
            when: None,
            name: None,
            expires: None,
        }
    }

    /// The same rule with a name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The same rule read in `dialect`.
    pub fn with_dialect(mut self, dialect: MatchDialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// `process.execute / "git push *" (project, .khaelor/config.json:4:7)`; a rule in
    /// another dialect names it: `file.read / glob "src/**" (…)`.
    pub fn describe(&self) -> String {
        let mut dialect = if self.dialect.is_default() {
            String::new()
        } else {
            format!("{} ", self.dialect.as_str())
        };
        if let Some(v) = self.when {
            dialect = format!("when {} {dialect}", v.as_str());
        }
        // A host's rule names the host (`host:claude`), which its name carries.
        let source = match (&self.source, &self.name) {
            (RuleSource::Host, Some(n)) => n.clone(),
            _ => self.source.to_string(),
        };
        match &self.origin {
            Some(o) => format!(
                "{} / {dialect}\"{}\" ({source}, {o})",
                self.capability, self.pattern
            ),
            None => format!(
                "{} / {dialect}\"{}\" ({source})",
                self.capability, self.pattern
            ),
        }
    }
}

/// Where trust stands for one project config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum TrustStatus {
    /// The file's current content is the content the user trusted.
    Trusted,
    /// The user never trusted this file (or there is no trust store).
    Untrusted,
    /// The user trusted an earlier content of this file; it has changed since.
    Changed,
    /// The managed config forbids trusting project files at all.
    Forbidden,
}

impl TrustStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TrustStatus::Trusted => "trusted",
            TrustStatus::Untrusted => "untrusted",
            TrustStatus::Changed => "changed",
            TrustStatus::Forbidden => "forbidden",
        }
    }
}
