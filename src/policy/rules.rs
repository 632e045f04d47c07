//! Permission rules: the rule type, its pattern dialects compiled once (seed 000's `*`
//! wildcard, seed 003's path globs, seed 004's prefix globs), the compiled rule set with
//! last-match-wins evaluation, the shipped defaults as data, and the static checks
//! `rules --check` reports (shadowed rules).
//!
//! Owns seed §4.1 (rule format, wildcard semantics), §4.3 (evaluation), §4.5 (defaults).
//! The only path knowledge here is the glob dialect's: relative patterns are anchored at
//! the project root the set is compiled for, and targets are normalised lexically.
//! Knows nothing of files (that is `config`), of bash (`analysis`) or of tool calls
//! (`tools`, `decide`): it answers "which rule decides this capability and subject".

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::model::vocab::{Capability, collapse_whitespace};

pub use crate::model::rule::{
    Action, Expiry, MatchDialect, PermissionRule, RuleOrigin, RuleSource, UnknownAction,
    UnknownSeedAction,
};

/// A `*` pattern compiled to a match strategy, so most patterns never scan (ripgrep
/// globset's literal / prefix / suffix / general split).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wildcard {
    pattern: String,
    strategy: Strategy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Strategy {
    /// `*`: everything.
    Any,
    /// No `*`: exact equality.
    Literal(String),
    /// `abc*`.
    Prefix(String),
    /// `*abc`.
    Suffix(String),
    /// Anything else: a fixed prefix and suffix with pieces found leftmost in order
    /// between them (correct for `*`-only globs: leftmost placement never loses a match).
    General {
        prefix: String,
        suffix: String,
        middle: Vec<String>,
    },
}

impl Wildcard {
    pub fn new(pattern: &str) -> Self {
        let pieces: Vec<&str> = pattern.split('*').collect();
        let strategy = match pieces.as_slice() {
            [lit] => Strategy::Literal((*lit).to_string()),
            [first, rest @ .., last] => {
                let middle: Vec<String> = rest
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(|p| (*p).to_string())
                    .collect();
                match (first.is_empty(), last.is_empty(), middle.is_empty()) {
                    (true, true, true) => Strategy::Any,
                    (false, true, true) => Strategy::Prefix((*first).to_string()),
                    (true, false, true) => Strategy::Suffix((*last).to_string()),
                    _ => Strategy::General {
                        prefix: (*first).to_string(),
                        suffix: (*last).to_string(),
                        middle,
                    },
                }
            }
            // `split` always yields at least one piece.
            [] => Strategy::Literal(String::new()),
        };
        Wildcard {
            pattern: pattern.to_string(),
            strategy,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern matches every string.
    pub fn is_any(&self) -> bool {
        self.strategy == Strategy::Any
    }

    pub fn is_match(&self, s: &str) -> bool {
        match &self.strategy {
            Strategy::Any => true,
            Strategy::Literal(l) => s == l,
            Strategy::Prefix(p) => s.starts_with(p.as_str()),
            Strategy::Suffix(x) => s.ends_with(x.as_str()),
            Strategy::General {
                prefix,
                suffix,
                middle,
            } => {
                if s.len() < prefix.len() + suffix.len()
                    || !s.starts_with(prefix.as_str())
                    || !s.ends_with(suffix.as_str())
                {
                    return false;
                }
                let Some(mut rest) = s.get(prefix.len()..s.len() - suffix.len()) else {
                    return false;
                };
                for piece in middle {
                    match rest.find(piece.as_str()) {
                        Some(i) => match rest.get(i + piece.len()..) {
                            Some(r) => rest = r,
                            None => return false,
                        },
                        None => return false,
                    }
                }
                true
            }
        }
    }

    /// Whether every string `other` matches is also matched by `self` (language
    /// inclusion). For `*`-only globs this holds exactly when `self` matches `other`'s
    /// text with each of its `*` read as a symbol only `self`'s own `*` can absorb.
    pub fn covers(&self, other: &Wildcard) -> bool {
        if self.is_any() {
            return true;
        }
        let pat: Vec<Tok> = tokens(&self.pattern);
        let text: Vec<Tok> = tokens(&other.pattern);
        star_match(&pat, &text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Char(char),
    Star,
}

fn tokens(s: &str) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::with_capacity(s.len());
    for c in s.chars() {
        let t = if c == '*' { Tok::Star } else { Tok::Char(c) };
        // `**` means the same as `*`.
        if !(t == Tok::Star && out.last() == Some(&Tok::Star)) {
            out.push(t);
        }
    }
    out
}

/// Classic iterative `*` matching with one backtrack point; a pattern literal matches
/// only the same literal in `text`, a pattern `*` absorbs anything, `Star` included.
fn star_match(pat: &[Tok], text: &[Tok]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut back: Option<(usize, usize)> = None;
    while t < text.len() {
        match (pat.get(p), text.get(t)) {
            (Some(Tok::Star), _) => {
                back = Some((p, t));
                p += 1;
            }
            (Some(Tok::Char(a)), Some(Tok::Char(b))) if a == b => {
                p += 1;
                t += 1;
            }
            _ => match back {
                Some((bp, bt)) => {
                    p = bp + 1;
                    t = bt + 1;
                    back = Some((bp, bt + 1));
                }
                None => return false,
            },
        }
    }
    pat.get(p..)
        .is_some_and(|rest| rest.iter().all(|x| *x == Tok::Star))
}

/// The set of capabilities a capability pattern names, as a bit mask over
/// `Capability::ALL` (the set is closed, so this is decided once at compile time).
pub fn capability_mask(pattern: &str) -> u8 {
    // Most rules name one capability exactly: no matcher to build for those (every hook
    // process compiles the whole rule set once).
    if !pattern.contains('*') {
        return Capability::ALL
            .iter()
            .position(|c| c.as_str() == pattern)
            .map_or(0, |i| 1u8 << i);
    }
    let w = Wildcard::new(pattern);
    Capability::ALL
        .iter()
        .enumerate()
        .filter(|(_, c)| w.is_match(c.as_str()))
        .fold(0u8, |m, (i, _)| m | (1u8 << i))
}

fn cap_bit(c: Capability) -> u8 {
    // A `u8` mask holds the seven capabilities; a compile error here means it must grow.
    const _: () = assert!(Capability::ALL.len() <= 8);
    1u8 << c.index()
}

fn subject_form(cap: Capability, subject: &str) -> std::borrow::Cow<'_, str> {
    if cap.has_command_subject() {
        std::borrow::Cow::Owned(collapse_whitespace(subject))
    } else {
        std::borrow::Cow::Borrowed(subject)
    }
}

/// A seed-004 prefix glob: `""` or `*` any subject, `abc*` a literal prefix (only the
/// last `*` is special, so `rm -rf /*` is the prefix `rm -rf /`), anything else exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixPattern {
    any: bool,
    prefix: Option<String>,
    literal: String,
}

impl PrefixPattern {
    pub fn new(pattern: &str) -> Self {
        let any = pattern.is_empty() || pattern == "*";
        let prefix = pattern.strip_suffix('*').map(str::to_string);
        PrefixPattern {
            any,
            prefix,
            literal: pattern.to_string(),
        }
    }

    pub fn is_any(&self) -> bool {
        self.any
    }

    pub fn is_match(&self, s: &str) -> bool {
        if self.any {
            return true;
        }
        match &self.prefix {
            Some(p) => s.starts_with(p.as_str()),
            None => s == self.literal,
        }
    }

    /// Language inclusion between two prefix globs.
    fn covers(&self, other: &PrefixPattern) -> bool {
        if self.any {
            return true;
        }
        if other.any {
            return false;
        }
        match (&self.prefix, &other.prefix) {
            (Some(a), Some(b)) => b.starts_with(a.as_str()),
            (Some(a), None) => other.literal.starts_with(a.as_str()),
            (None, Some(_)) => false,
            (None, None) => self.literal == other.literal,
        }
    }
}

/// Why a glob pattern cannot be compiled; `Display` says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob `{pattern}`: {message}")]
pub struct GlobError {
    pub pattern: String,
    pub message: String,
}

/// A seed-003 path glob, compiled once. Built on `globset` (the ripgrep matcher made for
/// this), with the three things seed 003 says and globset does not: only `*`, `**` and
/// `?` are special (`[`, `]`, `{`, `}` and `\` are escaped to literals), a trailing
/// `/**` also matches its base, and relative patterns are anchored at the project root.
#[derive(Debug, Clone)]
pub struct PathGlob {
    /// The absolute pattern actually matched (after anchoring and `..` cleaning).
    resolved: String,
    glob: globset::GlobMatcher,
    /// For a trailing `/**`: the base itself (`/ws/**` also matches `/ws`).
    base: Option<globset::GlobMatcher>,
}

impl PathGlob {
    /// Compiles `pattern`, anchoring a relative one at `root` (at `/` when there is no
    /// root: a policy built from bare rules has no project).
    pub fn new(pattern: &str, root: Option<&Path>) -> Result<Self, GlobError> {
        let err = |message: String| GlobError {
            pattern: pattern.to_string(),
            message,
        };
        if pattern.is_empty() {
            return Err(err("the pattern is empty".to_string()));
        }
        if pattern.contains('\0') {
            return Err(err("the pattern contains a NUL character".to_string()));
        }
        let anchored = if pattern.starts_with('/') {
            pattern.to_string()
        } else {
            let base = root.map_or_else(|| "/".to_string(), |r| r.display().to_string());
            format!("{}/{pattern}", base.trim_end_matches('/'))
        };
        // `..` in a pattern is resolved lexically, as targets are: `/ws/../etc/*` is `/etc/*`.
        let resolved = crate::model::paths::clean(Path::new(&anchored))
            .display()
            .to_string();
        let resolved = if anchored.ends_with('/') && !resolved.ends_with('/') {
            format!("{resolved}/")
        } else {
            resolved
        };
        // The part of the resolved pattern that came from the project root is literal
        // even if the directory's name has a `*` or `?` in it.
        let literal_len = match root.filter(|_| !pattern.starts_with('/')) {
            Some(r) => {
                let r = crate::model::paths::clean(r).display().to_string();
                let r = r.trim_end_matches('/');
                if resolved == r || resolved.starts_with(&format!("{r}/")) {
                    r.len()
                } else {
                    0
                }
            }
            None => 0,
        };
        let compile = |text: &str| -> Result<globset::GlobMatcher, GlobError> {
            let mut escaped = String::with_capacity(text.len() + 8);
            for (i, c) in text.char_indices() {
                let literal_wildcard = i < literal_len && (c == '*' || c == '?');
                match c {
                    '[' | ']' | '{' | '}' | '\\' => {
                        escaped.push('[');
                        escaped.push(c);
                        escaped.push(']');
                    }
                    _ if literal_wildcard => {
                        escaped.push('[');
                        escaped.push(c);
                        escaped.push(']');
                    }
                    other => escaped.push(other),
                }
            }
            globset::GlobBuilder::new(&escaped)
                .literal_separator(true)
                .backslash_escape(false)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| err(crate::model::vocab::lower_first(&e.kind().to_string())))
        };
        let glob = compile(&resolved)?;
        let base = match resolved.strip_suffix("/**") {
            Some("") => Some(compile("/")?),
            Some(b) => Some(compile(b)?),
            None => None,
        };
        Ok(PathGlob {
            resolved,
            glob,
            base,
        })
    }

    /// The absolute pattern matched.
    pub fn resolved(&self) -> &str {
        &self.resolved
    }

    /// Matches an absolute target after lexical normalisation (`..` cannot escape a
    /// rule). A relative target (an unresolved path) matches nothing.
    pub fn is_match(&self, target: &str) -> bool {
        if !target.starts_with('/') {
            return false;
        }
        let clean = crate::model::paths::clean(Path::new(target));
        self.glob.is_match(&clean) || self.base.as_ref().is_some_and(|b| b.is_match(&clean))
    }
}

/// A compiled subject pattern in its dialect.
#[derive(Debug, Clone)]
enum Matcher {
    Wildcard(Wildcard),
    Prefix(PrefixPattern),
    Glob(Box<PathGlob>),
    /// A glob that does not compile (only reachable for rules built in code; the config
    /// parser reports it): fail closed, so an allow matches nothing and an ask or deny
    /// matches everything.
    Invalid {
        matches: bool,
    },
}

impl Matcher {
    fn new(dialect: MatchDialect, pattern: &str, action: Action, root: Option<&Path>) -> Self {
        match dialect {
            MatchDialect::Wildcard => Matcher::Wildcard(Wildcard::new(pattern)),
            MatchDialect::Prefix => Matcher::Prefix(PrefixPattern::new(pattern)),
            MatchDialect::Glob => match PathGlob::new(pattern, root) {
                Ok(g) => Matcher::Glob(Box::new(g)),
                Err(_) => Matcher::Invalid {
                    matches: action != Action::Allow,
                },
            },
        }
    }

    fn is_match(&self, s: &str) -> bool {
        match self {
            Matcher::Wildcard(w) => w.is_match(s),
            Matcher::Prefix(p) => p.is_match(s),
            Matcher::Glob(g) => g.is_match(s),
            Matcher::Invalid { matches } => *matches,
        }
    }

    fn is_any(&self) -> bool {
        match self {
            Matcher::Wildcard(w) => w.is_any(),
            Matcher::Prefix(p) => p.is_any(),
            Matcher::Glob(_) => false,
            Matcher::Invalid { matches } => *matches,
        }
    }

    /// Whether every subject `other` matches is matched by `self`. Exact within one
    /// dialect for wildcard and prefix; across dialects and for globs only the
    /// obvious cases (a match-all, or the same resolved glob) are claimed, so a rule is
    /// never reported shadowed when it is not.
    fn covers(&self, other: &Matcher) -> bool {
        if self.is_any() {
            return true;
        }
        match (self, other) {
            (Matcher::Wildcard(a), Matcher::Wildcard(b)) => a.covers(b),
            (Matcher::Prefix(a), Matcher::Prefix(b)) => a.covers(b),
            (Matcher::Glob(a), Matcher::Glob(b)) => a.resolved == b.resolved,
            _ => false,
        }
    }
}

/// A rule's capability mask, condition and expiry, read when the set is built; its
/// subject matchers are compiled the first time a request reaches the rule. A one-shot
/// hook decides one call against a set of about a hundred rules (the defaults and the
/// preset), and compiling every pattern of every rule up front cost it more than the
/// decision; a matcher compiled later is the same matcher, kept for the next request.
#[derive(Debug, Clone)]
struct CompiledRule {
    caps: u8,
    /// Matches only requests with this verdict.
    when: Option<crate::model::vocab::Verdict>,
    subject: OnceLock<Matcher>,
    /// The pattern with collapsed whitespace, for command subjects.
    collapsed: OnceLock<Matcher>,
    /// From this instant (Unix seconds) the rule is skipped.
    expires_at: Option<i64>,
}

impl CompiledRule {
    fn new(r: &PermissionRule) -> Self {
        CompiledRule {
            caps: capability_mask(&r.capability),
            when: r.when,
            expires_at: r.expires.as_ref().map(|e| e.at()),
            subject: OnceLock::new(),
            collapsed: OnceLock::new(),
        }
    }

    /// The matcher for requests of `cap`: `r` is the rule this was built from and
    /// `root` the project the set is compiled for.
    fn form(&self, cap: Capability, r: &PermissionRule, root: Option<&Path>) -> &Matcher {
        if cap.has_command_subject() {
            self.collapsed.get_or_init(|| {
                Matcher::new(r.dialect, &collapse_whitespace(&r.pattern), r.action, root)
            })
        } else {
            self.subject
                .get_or_init(|| Matcher::new(r.dialect, &r.pattern, r.action, root))
        }
    }
}

/// An ordered, compiled list of rules: last match wins (seed §4.3).
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<PermissionRule>,
    compiled: Vec<CompiledRule>,
    /// The project relative glob patterns are anchored at.
    root: Option<PathBuf>,
    /// Per capability (index in `Capability::ALL`), the indices of the rules whose
    /// capability pattern names it, ascending.
    by_cap: [Vec<usize>; Capability::ALL.len()],
    /// Whether any rule carries an expiry (the clock is read only then).
    expiring: bool,
}

impl RuleSet {
    /// Compiles `rules`; relative glob patterns are anchored at `/` (no project).
    pub fn new(rules: Vec<PermissionRule>) -> Self {
        RuleSet::with_root(rules, None)
    }

    /// Compiles `rules` for the project at `root`: relative glob patterns are anchored there.
    pub fn with_root(rules: Vec<PermissionRule>, root: Option<&Path>) -> Self {
        let compiled: Vec<CompiledRule> = rules.iter().map(CompiledRule::new).collect();
        let mut by_cap: [Vec<usize>; Capability::ALL.len()] = Default::default();
        for (ci, cap) in Capability::ALL.iter().enumerate() {
            let bit = cap_bit(*cap);
            if let Some(slot) = by_cap.get_mut(ci) {
                *slot = compiled
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.caps & bit != 0)
                    .map(|(i, _)| i)
                    .collect();
            }
        }
        RuleSet {
            expiring: compiled.iter().any(|r| r.expires_at.is_some()),
            rules,
            compiled,
            root: root.map(Path::to_path_buf),
            by_cap,
        }
    }

    pub fn rules(&self) -> &[PermissionRule] {
        &self.rules
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The index of the last rule matching both capability and subject.
    pub fn find(&self, cap: Capability, subject: &str) -> Option<usize> {
        self.find_verdict(cap, subject, None)
    }

    /// As `find`, for a request the analysis gave `verdict`: a rule with a `when`
    /// matches only a `process.execute` request with that very verdict.
    pub fn find_verdict(
        &self,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
    ) -> Option<usize> {
        let subject = subject_form(cap, subject);
        let now = self.now();
        let candidates = self.by_cap.get(cap.index())?;
        candidates
            .iter()
            .rev()
            .copied()
            .find(|&i| self.check(i, cap, &subject, verdict, now) == Check::Matches)
    }

    /// Every rule naming `cap`, in evaluation order, with why it does or does not match
    /// `subject` (for a request the analysis gave `verdict`): what `find_verdict`
    /// decides, told rule by rule. Indices are positions in `rules()`.
    pub fn trace(
        &self,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
    ) -> Vec<(usize, RuleMatch)> {
        let subject = subject_form(cap, subject);
        let now = self.now();
        let Some(candidates) = self.by_cap.get(cap.index()) else {
            return Vec::new();
        };
        let winner = self.find_verdict(cap, &subject, verdict);
        candidates
            .iter()
            .map(|&i| {
                let m = match self.check(i, cap, &subject, verdict, now) {
                    Check::Matches if Some(i) == winner => RuleMatch::Decides,
                    Check::Matches => RuleMatch::Overridden {
                        by: winner.unwrap_or(i),
                    },
                    Check::PatternDiffers => RuleMatch::PatternDiffers,
                    Check::NeedsVerdict(needs) => RuleMatch::ConditionNotMet { needs },
                    Check::Expired => RuleMatch::Expired,
                };
                (i, m)
            })
            .collect()
    }

    /// The clock, read only when some rule can expire.
    fn now(&self) -> i64 {
        if self.expiring {
            crate::model::rule::now_unix()
        } else {
            i64::MIN
        }
    }

    /// Whether rule `i` matches a request of `cap` with `subject` (already in its
    /// compared form) and the analysis' `verdict`, and if not, why.
    fn check(
        &self,
        i: usize,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
        now: i64,
    ) -> Check {
        let (Some(rule), Some(r)) = (self.rules.get(i), self.compiled.get(i)) else {
            return Check::PatternDiffers;
        };
        if r.expires_at.is_some_and(|at| now >= at) {
            return Check::Expired;
        }
        if let Some(w) = r.when
            && !(cap == Capability::ProcessExecute && verdict == Some(w))
        {
            return Check::NeedsVerdict(w);
        }
        if r.form(cap, rule, self.root.as_deref()).is_match(subject) {
            Check::Matches
        } else {
            Check::PatternDiffers
        }
    }

    /// The deciding rule, or `None` (which means ask).
    pub fn matched(&self, cap: Capability, subject: &str) -> Option<&PermissionRule> {
        self.find(cap, subject).and_then(|i| self.rules.get(i))
    }

    /// Seed §4.3: the last matching rule's action, ask when nothing matches.
    pub fn evaluate(&self, cap: Capability, subject: &str) -> Evaluation<'_> {
        self.evaluate_verdict(cap, subject, None)
    }

    /// As `evaluate`, for a request with the analysis' `verdict`.
    pub fn evaluate_verdict(
        &self,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
    ) -> Evaluation<'_> {
        let rule = self
            .find_verdict(cap, subject, verdict)
            .and_then(|i| self.rules.get(i));
        Evaluation {
            action: rule.map_or(Action::Ask, |r| r.action),
            rule,
        }
    }

    /// Whether capability `cap` is denied for every subject: some rule naming it with a
    /// subject pattern matching everything denies, and no later rule naming it could
    /// allow or ask.
    pub fn denies_everything(&self, cap: Capability) -> bool {
        let Some(candidates) = self.by_cap.get(cap.index()) else {
            return false;
        };
        let now = self.now();
        for &i in candidates.iter().rev() {
            let (Some(rule), Some(c)) = (self.rules.get(i), self.compiled.get(i)) else {
                return false;
            };
            if c.expires_at.is_some_and(|at| now >= at) {
                continue;
            }
            if rule.action != Action::Deny {
                return false;
            }
            if rule.when.is_some() {
                // A deny for some requests only does not deny everything.
                continue;
            }
            if c.form(cap, rule, self.root.as_deref()).is_any() {
                return true;
            }
        }
        false
    }

    /// Rules (by index) that a later rule always overrides: the later rule names every
    /// capability the earlier one does and its subject pattern covers the earlier one's
    /// for each of them. Returns `(shadowed, by)` pairs, each shadowed rule once, with
    /// the first later rule that shadows it among those `eligible(shadowed, by)` accepts.
    pub fn shadowed(&self, eligible: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let root = self.root.as_deref();
        for (i, (early, early_rule)) in self.compiled.iter().zip(&self.rules).enumerate() {
            if early.caps == 0 {
                continue;
            }
            let by = self
                .compiled
                .iter()
                .zip(&self.rules)
                .enumerate()
                .skip(i + 1)
                .find(|(j, (late, late_rule))| {
                    eligible(i, *j)
                        && late.when.is_none()
                        // A rule that will expire stops shadowing when it does.
                        && late.expires_at.is_none()
                        && (late.caps & early.caps) == early.caps
                        && Capability::ALL
                            .iter()
                            .filter(|c| early.caps & cap_bit(**c) != 0)
                            .all(|c| {
                                late.form(*c, late_rule, root)
                                    .covers(early.form(*c, early_rule, root))
                            })
                });
            if let Some((j, _)) = by {
                out.push((i, j));
            }
        }
        out
    }
}

/// Why one rule does or does not match a request (`RuleSet::trace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum RuleMatch {
    /// It matches and, as the last match, decides.
    Decides,
    /// It matches, but a later matching rule wins (the last match wins); `by` is that
    /// rule's position.
    Overridden { by: usize },
    /// Its subject pattern does not match.
    PatternDiffers,
    /// It applies only to a command the analysis gave this verdict.
    ConditionNotMet { needs: crate::model::vocab::Verdict },
    /// It is past its `expires`.
    Expired,
}

/// What `RuleSet::check` found for one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Matches,
    PatternDiffers,
    NeedsVerdict(crate::model::vocab::Verdict),
    Expired,
}

/// The result of evaluating one capability request: the action and the rule that
/// decided it (`None`: nothing matched, which asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation<'a> {
    pub action: Action,
    pub rule: Option<&'a PermissionRule>,
}

/// Whether a rule's subject pattern matches an example subject, in the form the rule
/// would compare it (collapsed whitespace when the rule names a command capability).
pub fn example_matches(rule: &PermissionRule, example: &str) -> bool {
    let caps = capability_mask(&rule.capability);
    // Glob rules are compiled without a project here, relative patterns anchored at `/`;
    // a relative example is anchored the same way.
    let anchored;
    let example = if rule.dialect == MatchDialect::Glob && !example.starts_with('/') {
        anchored = format!("/{example}");
        anchored.as_str()
    } else {
        example
    };
    let command = Capability::ALL
        .iter()
        .any(|cap| caps & cap_bit(*cap) != 0 && cap.has_command_subject());
    if command {
        let pattern = collapse_whitespace(&rule.pattern);
        Matcher::new(rule.dialect, &pattern, rule.action, None)
            .is_match(&collapse_whitespace(example))
    } else {
        Matcher::new(rule.dialect, &rule.pattern, rule.action, None).is_match(example)
    }
}

/// Whether a command pattern has a `*` glued to the end of its first word, where it
/// also matches other command names (`ls*` matches `lsblk`, `npm run test*` does not
/// glue to the command name and is fine). `rules --check` warns about these.
pub fn glues_wildcard_to_command(rule: &PermissionRule) -> bool {
    let command = Capability::ALL.iter().any(|cap| {
        cap.has_command_subject() && Wildcard::new(&rule.capability).is_match(cap.as_str())
    });
    let first = rule.pattern.split_whitespace().next().unwrap_or_default();
    command && first.len() > 1 && first.ends_with('*') && first.matches('*').count() == 1
}

/// Seed §4.5 defaults, in order, as data: (capability, pattern, action). The last two
/// `file.write.project` rules are this project's addition to the seed: writes into a
/// repository's hooks or config change what later git commands run, so they ask.
pub const DEFAULT_RULES: &[(&str, &str, Action)] = &[
    // reads: free, except secrets-shaped files
    ("file.read", "*", Action::Allow),
    ("file.read", "*.env", Action::Ask),
    ("file.read", "*.env.*", Action::Ask),
    ("file.read", "*.env.example", Action::Allow),
    ("file.read", "*.pem", Action::Ask),
    ("file.read", "*/.ssh/*", Action::Ask),
    // writes: project free, outside asks
    ("file.write.project", "*", Action::Allow),
    // addition to the seed: git hooks and repository config run code later
    ("file.write.project", "*/.git/hooks/*", Action::Ask),
    ("file.write.project", "*/.git/config", Action::Ask),
    ("file.write.outsideProject", "*", Action::Ask),
    // commands: ask by default, with a read-only allowlist
    ("process.execute", "*", Action::Ask),
    // The seed writes `git status*` and `ls*`; a `*` glued to a command name also
    // matches other commands (`lsblk`, `git status-x` aliases), so each is the bare
    // command and the command with arguments.
    ("process.execute", "git status", Action::Allow),
    ("process.execute", "git status *", Action::Allow),
    ("process.execute", "git diff", Action::Allow),
    ("process.execute", "git diff *", Action::Allow),
    ("process.execute", "git log", Action::Allow),
    ("process.execute", "git log *", Action::Allow),
    ("process.execute", "git show", Action::Allow),
    ("process.execute", "git show *", Action::Allow),
    ("process.execute", "git branch", Action::Allow),
    ("process.execute", "ls", Action::Allow),
    ("process.execute", "ls *", Action::Allow),
    ("process.execute", "pwd", Action::Allow),
    ("process.execute", "which *", Action::Allow),
    ("process.execute", "cat *", Action::Allow),
    ("process.execute", "wc *", Action::Allow),
    ("process.execute", "head *", Action::Allow),
    ("process.execute", "tail *", Action::Allow),
    // stdin to an already-approved background process: allowed
    ("process.background", "stdin:*", Action::Allow),
    ("process.background", "*", Action::Ask),
    ("network.access", "*", Action::Ask),
    ("git.modify", "*", Action::Ask),
    // An MCP server's tool can do anything its server can; the user decides
    ("mcp.call", "*", Action::Ask),
];

/// The usual credential stores, as named `file.read` ask rules after the
/// seed's secret shapes. Every preset has them (they only narrow). Patterns match the
/// resolved path anywhere (`*/.aws/*` is `~/.aws/` and any copy of it).
pub const SECRET_RULES: &[(&str, &str)] = &[
    ("secret: AWS credentials and config", "*/.aws/*"),
    ("secret: Google Cloud credentials", "*/.config/gcloud/*"),
    ("secret: Azure credentials", "*/.azure/*"),
    ("secret: Kubernetes config", "*/.kube/config"),
    ("secret: Kubernetes configs", "*/.kube/*.yaml"),
    (
        "secret: Docker registry credentials",
        "*/.docker/config.json",
    ),
    ("secret: netrc logins", "*/.netrc"),
    ("secret: netrc logins", "*/_netrc"),
    ("secret: git credential store", "*/.git-credentials"),
    ("secret: git credential store", "*/.config/git/credentials"),
    ("secret: npm tokens", "*/.npmrc"),
    ("secret: yarn tokens", "*/.yarnrc.yml"),
    ("secret: PyPI tokens", "*/.pypirc"),
    ("secret: Cargo registry tokens", "*/.cargo/credentials"),
    ("secret: Cargo registry tokens", "*/.cargo/credentials.toml"),
    ("secret: RubyGems credentials", "*/.gem/credentials"),
    ("secret: GnuPG keys", "*/.gnupg/*"),
    ("secret: pass password store", "*/.password-store/*"),
    ("secret: GitHub CLI tokens", "*/.config/gh/hosts.yml"),
    (
        "secret: Terraform credentials",
        "*/.terraform.d/credentials.tfrc.json",
    ),
    ("secret: Vault token", "*/.vault-token"),
    ("secret: PostgreSQL passwords", "*/.pgpass"),
    // The agent hosts' own logins: an agent that reads them holds the person's account.
    ("secret: Claude Code login", "*/.claude/.credentials.json"),
    ("secret: Codex CLI login and API key", "*/.codex/auth.json"),
    ("secret: Gemini CLI login", "*/.gemini/oauth_creds.json"),
    ("secret: Qwen Code login", "*/.qwen/oauth_creds.json"),
    (
        "secret: OpenCode provider keys",
        "*/.local/share/opencode/auth.json",
    ),
    (
        "secret: GitHub Copilot tokens",
        "*/.config/github-copilot/*",
    ),
    ("secret: hub's GitHub token", "*/.config/hub"),
    ("secret: Hugging Face token", "*/.cache/huggingface/token"),
    ("secret: Hugging Face token", "*/.huggingface/token"),
    ("secret: s3cmd keys", "*/.s3cfg"),
    ("secret: boto credentials", "*/.boto"),
    (
        "secret: rclone remotes' tokens",
        "*/.config/rclone/rclone.conf",
    ),
    (
        "secret: container registry logins",
        "*/.config/containers/auth.json",
    ),
    ("secret: Terraform CLI credentials", "*/.terraformrc"),
    ("secret: Composer tokens", "*/.config/composer/auth.json"),
    ("secret: Composer tokens", "*/.composer/auth.json"),
    (
        "secret: Gradle publishing and signing passwords",
        "*/.gradle/gradle.properties",
    ),
    ("secret: Maven server passwords", "*/.m2/settings.xml"),
    ("secret: Databricks tokens", "*/.databrickscfg"),
    ("secret: Stripe CLI keys", "*/.config/stripe/config.toml"),
    ("secret: Fly.io token", "*/.fly/config.yml"),
    (
        "secret: Cloudflare Wrangler login",
        "*/.wrangler/config/default.toml",
    ),
    ("secret: age private keys", "*/.config/sops/age/keys.txt"),
    ("secret: pip index credentials", "*/.config/pip/pip.conf"),
    ("secret: pip index credentials", "*/.pip/pip.conf"),
    // The service's panel token answers permission prompts; in the state directory,
    // which the sandbox masks, wherever `--state-dir` puts it.
    (
        "secret: KHAELOR panel token (answers permission prompts)",
        "*/panel-token",
    ),
    ("secret: MySQL client passwords", "*/.my.cnf"),
    ("secret: SSH private key", "*/id_rsa"),
    ("secret: SSH private key", "*/id_dsa"),
    ("secret: SSH private key", "*/id_ecdsa"),
    ("secret: SSH private key", "*/id_ed25519"),
    ("secret: SSH private key", "*/id_ecdsa_sk"),
    ("secret: SSH private key", "*/id_ed25519_sk"),
    ("secret: private key", "*.key"),
    ("secret: PKCS#12 bundle", "*.p12"),
    ("secret: PKCS#12 bundle", "*.pfx"),
    ("secret: shell history", "*/.bash_history"),
    ("secret: shell history", "*/.zsh_history"),
    ("secret: shell history", "*/fish_history"),
    // Clients that keep what was typed, passwords in `ALTER USER`, `AUTH`, `SET PASSWORD`.
    ("secret: database client history", "*/.psql_history"),
    ("secret: database client history", "*/.mysql_history"),
    ("secret: database client history", "*/.rediscli_history"),
    ("secret: system password hashes", "/etc/shadow*"),
    ("secret: system password hashes", "/etc/gshadow*"),
    ("secret: a process's environment", "/proc/*/environ"),
    // A raw disk or memory device holds every file and secret on it: `cat /dev/sda |
    // strings` reads `~/.ssh/id_rsa` past the rules above. Unresolved aliases
    // (`/dev/disk/by-uuid/…`, `/dev/block/8:0`) count as what they name.
    ("secret: raw disk (every file on it)", "/dev/sd*"),
    ("secret: raw disk (every file on it)", "/dev/hd*"),
    ("secret: raw disk (every file on it)", "/dev/vd*"),
    ("secret: raw disk (every file on it)", "/dev/xvd*"),
    ("secret: raw disk (every file on it)", "/dev/nvme*"),
    ("secret: raw disk (every file on it)", "/dev/mmcblk*"),
    ("secret: raw disk (every file on it)", "/dev/dm-*"),
    ("secret: raw disk (every file on it)", "/dev/mapper/*"),
    ("secret: raw disk (every file on it)", "/dev/md*"),
    ("secret: raw disk (every file on it)", "/dev/loop*"),
    ("secret: raw disk (every file on it)", "/dev/zram*"),
    ("secret: raw disk (every file on it)", "/dev/disk/*"),
    ("secret: raw disk (every file on it)", "/dev/block/*"),
    ("secret: raw memory (every process's secrets)", "/dev/mem"),
    ("secret: raw memory (every process's secrets)", "/dev/kmem"),
    ("secret: raw memory (every process's secrets)", "/dev/port"),
    (
        "secret: raw memory (every process's secrets)",
        "/proc/kcore",
    ),
    ("secret: a process's memory", "/proc/*/mem"),
];

/// The defaults as rules with source `default`: seed §4.5 with the credential stores
/// (`SECRET_RULES`, named) right after the seed's own secret shapes.
pub fn default_rules() -> Vec<PermissionRule> {
    let mut out = Vec::with_capacity(DEFAULT_RULES.len() + SECRET_RULES.len());
    for (c, p, a) in DEFAULT_RULES {
        out.push(PermissionRule::new(*c, *p, *a, RuleSource::Default));
        if *c == "file.read" && *p == "*/.ssh/*" {
            out.extend(SECRET_RULES.iter().map(|(name, pattern)| {
                PermissionRule::new("file.read", *pattern, Action::Ask, RuleSource::Default)
                    .named(*name)
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_match_like_the_definition() {
        let cases = [
            ("*", "anything/at all", true),
            ("git status", "git status", true),
            ("git status", "git status ", false),
            ("git push *", "git push origin main", true),
            ("git push *", "git push", false),
            ("*.env", "/p/.env", true),
            ("*.env", "/p/.env.local", false),
            ("*/.ssh/*", "/home/u/.ssh/id_rsa", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "acb", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
            ("*x*", "x", true),
            ("Git*", "git status", false),
        ];
        for (p, s, want) in cases {
            assert_eq!(Wildcard::new(p).is_match(s), want, "{p} vs {s}");
        }
    }

    #[test]
    fn coverage_is_language_inclusion() {
        let cases = [
            ("*", "git push *", true),
            ("git *", "git push *", true),
            ("git push *", "git *", false),
            ("*.env", "/a/*.env", true),
            ("/a/*.env", "*.env", false),
            ("git push *", "git push origin", true),
            ("a*c", "a*b*c", true),
            ("a*b*c", "a*c", false),
        ];
        for (a, b, want) in cases {
            assert_eq!(
                Wildcard::new(a).covers(&Wildcard::new(b)),
                want,
                "{a} covers {b}"
            );
        }
    }

    #[test]
    fn last_match_wins_and_unmatched_asks() {
        let set = RuleSet::new(default_rules());
        assert_eq!(
            set.evaluate(Capability::ProcessExecute, "git  status")
                .action,
            Action::Allow
        );
        assert_eq!(
            set.evaluate(Capability::ProcessExecute, "npm install")
                .action,
            Action::Ask
        );
        assert_eq!(
            set.evaluate(Capability::FileRead, "/p/.env.example").action,
            Action::Allow
        );
        assert_eq!(
            set.evaluate(Capability::FileRead, "/p/.env.local").action,
            Action::Ask
        );
        let empty = RuleSet::new(Vec::new());
        let e = empty.evaluate(Capability::FileRead, "/x");
        assert_eq!((e.action, e.rule), (Action::Ask, None));
    }
}
