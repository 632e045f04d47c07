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
//!
//! Project trust: a project file read from disk keeps its narrowing rules
//! (deny, ask) always, and its widening ones (allow, and `allowAlways` on an ask) only
//! when the trust store says its current bytes are the ones the user trusted. The
//! managed file's top-level `"trustProjectConfigs": false` forbids that trust outright.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::vocab::Capability;
pub use crate::policy::presets::Preset;
use crate::policy::rules::{
    Action, Evaluation, PermissionRule, RuleSet, RuleSource, default_rules,
};
use crate::policy::trust::{TrustStatus, TrustStore};

mod parse;

use crate::model::vocab::lower_first;
pub use parse::{jsonc_options, parse_config, parse_config_with_settings};

/// Config files larger than this are refused (a config is a few kilobytes); the trust
/// store hashes files up to the same bound.
pub const MAX_CONFIG_BYTES: u64 = crate::policy::trust::MAX_FILE_BYTES;

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

/// What an "always" grant remembers (`permissions.alwaysScope`, seed 004).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlwaysScope {
    /// The generalised patterns the analysis offers (`git push *`), seed 000.
    #[default]
    Pattern,
    /// Exactly the approved subject, never a wildcard.
    Exact,
}

/// What a config does with one domain pack (`permissions.packs`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PackMode {
    /// The pack's hits are ignored (only from the user or managed config: a
    /// repository cannot turn a pack off).
    Off,
    /// The pack's notes, narrowed "always" patterns and asks apply.
    #[default]
    On,
    /// Every operation the pack names is denied.
    Deny,
}

/// A project file whose widening rules were left out because its content is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnoredAllows {
    /// The project config file.
    pub file: String,
    /// Why: `untrusted`, `changed` (since it was trusted) or `forbidden` (by the
    /// managed config).
    pub status: TrustStatus,
    /// The rules left out (allows) or narrowed (`allowAlways` dropped), as `rules`
    /// describes them.
    pub rules: Vec<String>,
}

/// The rules one file contributed, and what was wrong with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedConfig {
    pub rules: Vec<PermissionRule>,
    pub errors: Vec<ConfigError>,
}

/// The file-wide settings of a config besides its rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigSettings {
    /// `permissions.packs`: a mode per domain pack the file names.
    pub packs: Vec<(String, PackMode)>,
    /// `permissions.alwaysScope`, when the file sets it.
    pub always_scope: Option<AlwaysScope>,
    /// `permissions.preset`, when the file sets it.
    pub preset: Option<Preset>,
    /// `permissions.hostRules`, when the file sets it: `false` leaves the agent hosts'
    /// own rules out of the policy (`crate::hosts::grants`).
    pub host_rules: Option<bool>,
}

/// The effective policy: defaults and config layers, compiled once. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Policy {
    inner: Arc<PolicyInner>,
}

#[derive(Debug)]
struct PolicyInner {
    set: RuleSet,
    /// The layers without the hosts' rules, when there are any: what a host's allow is
    /// checked against (`host_allow_holds`).
    without_hosts: Option<RuleSet>,
    /// Every allow rule in the hosts' files, trusted or not (`Policy::host_allows`).
    hosts: RuleSet,
    /// A host file could not be read: `host_allows` cannot rule anything out.
    host_incomplete: bool,
    /// The hosts' rules were read into this policy (`PolicyBuilder::host_seen`).
    host_read: bool,
    /// The managed layer alone: the ceiling its deny/ask rules impose.
    managed: RuleSet,
    errors: Vec<ConfigError>,
    files: Vec<PathBuf>,
    always_scope: AlwaysScope,
    ignored: Vec<IgnoredAllows>,
    trust_dir: Option<PathBuf>,
    forbid_trust: bool,
    preset: Preset,
    preset_source: String,
    /// The mode of each domain pack a config names (`pack_mode`).
    packs: std::collections::BTreeMap<String, PackMode>,
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
                without_hosts: None,
                hosts: RuleSet::new(Vec::new()),
                host_incomplete: false,
                host_read: false,
                managed: RuleSet::default(),
                errors: Vec::new(),
                files: Vec::new(),
                always_scope: AlwaysScope::Pattern,
                ignored: Vec::new(),
                trust_dir: None,
                forbid_trust: false,
                preset: Preset::Strict,
                preset_source: "rules given in code".to_string(),
                packs: std::collections::BTreeMap::new(),
            }),
        }
    }

    /// The active preset.
    pub fn preset(&self) -> Preset {
        self.inner.preset
    }

    /// Where the active preset was chosen (`default`, `--preset`, a config file), for
    /// `rules`.
    pub fn preset_source(&self) -> &str {
        &self.inner.preset_source
    }

    /// What the configs do with domain pack `pack` (`On` unless one names it).
    pub fn pack_mode(&self, pack: &str) -> PackMode {
        self.inner.packs.get(pack).copied().unwrap_or_default()
    }

    /// Project files whose allows were ignored because they are not trusted.
    pub fn ignored(&self) -> &[IgnoredAllows] {
        &self.inner.ignored
    }

    /// Whether the managed config forbids trusting project configs.
    pub fn trust_forbidden(&self) -> bool {
        self.inner.forbid_trust
    }

    /// The trust store's directory, when the policy was loaded with one (writes there
    /// are self-protected like the config files).
    pub fn trust_dir(&self) -> Option<&Path> {
        self.inner.trust_dir.as_deref()
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

    /// Whether both are the same loaded policy (not just equal rules): the policy
    /// cache's tests tell a cache hit from a reload by it.
    pub fn same_as(&self, other: &Policy) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// What an "always" grant remembers: `exact` when any layer says so (the stricter
    /// setting wins, so a project cannot widen what a user or administrator narrowed).
    pub fn always_scope(&self) -> AlwaysScope {
        self.inner.always_scope
    }

    /// A digest of every rule `evaluate` consults (the layered rules, the layers
    /// without the hosts' rules, the managed ceiling) and of which of them have
    /// expired by now: two policies with the same fingerprint evaluate every request
    /// alike, and a rule that expires changes it. `None` if the rules cannot be
    /// encoded.
    pub fn fingerprint(&self) -> Option<String> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let without = self.inner.without_hosts.as_ref().map(RuleSet::rules);
        let now = crate::model::rule::now_unix();
        let expired: Vec<bool> = [
            Some(&self.inner.set),
            self.inner.without_hosts.as_ref(),
            Some(&self.inner.managed),
        ]
        .into_iter()
        .flatten()
        .flat_map(RuleSet::rules)
        .map(|r| r.expires.as_ref().is_some_and(|e| now >= e.at()))
        .collect();
        let parts = [
            serde_json::to_vec(self.inner.set.rules()).ok()?,
            serde_json::to_vec(&without).ok()?,
            serde_json::to_vec(self.inner.managed.rules()).ok()?,
            serde_json::to_vec(&expired).ok()?,
        ];
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(&p);
        }
        Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Every layered rule naming `cap`, with why it does or does not match (positions
    /// in `rules()`); see `RuleSet::trace`.
    pub fn trace(
        &self,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
    ) -> Vec<(usize, crate::policy::rules::RuleMatch)> {
        self.inner.set.trace(cap, subject, verdict)
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
        self.evaluate_verdict(session, cap, subject, None)
    }

    /// As `evaluate`, for a request the analysis gave `verdict` (preset rules match on
    /// it; every other rule, the session's and the managed ceiling ignore it).
    pub fn evaluate_verdict<'a>(
        &'a self,
        session: Option<&'a RuleSet>,
        cap: Capability,
        subject: &str,
        verdict: Option<crate::model::vocab::Verdict>,
    ) -> Evaluation<'a> {
        let base = match session.and_then(|s| s.matched(cap, subject)) {
            Some(rule) => Evaluation {
                action: rule.action,
                rule: Some(rule),
            },
            None => {
                let all = self.inner.set.evaluate_verdict(cap, subject, verdict);
                match &self.inner.without_hosts {
                    Some(without)
                        if all.action == Action::Allow
                            && all.rule.is_some_and(|r| r.source == RuleSource::Host) =>
                    {
                        let ours = without.evaluate_verdict(cap, subject, verdict);
                        if host_allow_holds(&ours) { all } else { ours }
                    }
                    _ => all,
                }
            }
        };
        match self.inner.managed.matched(cap, subject) {
            Some(m) if m.action > base.action => Evaluation {
                action: m.action,
                rule: Some(m),
            },
            _ => base,
        }
    }

    /// The hosts' allow rule that matches `cap` / `subject`, if any, whatever the other
    /// layers say and whether or not its file is trusted: whether the host itself would
    /// let this through (`crate::hosts` answers an explicit ask then, so the host's own
    /// rule cannot run what we ask).
    pub fn host_allows(&self, cap: Capability, subject: &str) -> Option<&PermissionRule> {
        self.inner.hosts.matched(cap, subject)
    }

    /// Whether a host file could not be read, so `host_allows` may miss a rule the host
    /// itself honours.
    pub fn host_rules_incomplete(&self) -> bool {
        self.inner.host_incomplete
    }

    /// Whether the hosts' own rules were read into this policy (not when the layer is
    /// off): without them, what a host's own rules would let through is not known.
    pub fn host_rules_read(&self) -> bool {
        self.inner.host_read
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

/// Whether a host's allow may stand where our own layers decided `ours` (the host
/// grants layer, `crate::hosts::grants`). A host grant is the person's "don't ask
/// again" in the host's dialog, so it may lift exactly the asks our own panel would let
/// them lift with "always": an unmatched request, a default or preset ask, a configured
/// ask that says `allowAlways`. Never a deny, a managed rule, an explicit configured
/// ask, a named rule (the credential stores) or a default read ask (the seed's secret
/// shapes: `.env`, `*.pem`, `~/.ssh`). The floor, protected writes, unreadable
/// commands and a broken config are applied after this by `decide`, to host grants too.
fn host_allow_holds(ours: &Evaluation<'_>) -> bool {
    match ours.action {
        Action::Allow => true,
        // Our rules already let it run without a prompt, inside the sandbox: a host's
        // grant answered a prompt, so it never takes the sandbox away.
        Action::Contain | Action::Deny => false,
        Action::Ask => match ours.rule {
            None => true,
            Some(r) if r.name.is_some() => false,
            Some(r) => match r.source {
                RuleSource::Default | RuleSource::Preset => r.capability != "file.read",
                RuleSource::User | RuleSource::Project => r.allow_always,
                RuleSource::Builtin
                | RuleSource::Hardline
                | RuleSource::Managed
                | RuleSource::Session
                | RuleSource::Host => false,
            },
        },
    }
}

/// Assembles a policy from layers. `load_policy` is the file-reading front end.
#[derive(Debug, Default)]
pub struct PolicyBuilder {
    no_defaults: bool,
    managed: Vec<PermissionRule>,
    user: Vec<PermissionRule>,
    project: Vec<PermissionRule>,
    /// The hosts' own rules read beside the user and the project layer.
    host_user: Vec<PermissionRule>,
    host_project: Vec<PermissionRule>,
    /// Every allow of the hosts' files, trusted or not, and whether one went unread.
    host_seen: Vec<PermissionRule>,
    host_incomplete: bool,
    host_read: bool,
    errors: Vec<ConfigError>,
    files: Vec<PathBuf>,
    root: Option<PathBuf>,
    always_scope: AlwaysScope,
    trust: Option<TrustStore>,
    forbid_trust: bool,
    host_rules_off: bool,
    packs: std::collections::BTreeMap<String, PackMode>,
    ignored: Vec<IgnoredAllows>,
    /// Preset choices: `--preset`, each layer's (with its file), and whether the
    /// project file that chose was trusted.
    preset_flag: Option<Preset>,
    preset_managed: Option<(Preset, String)>,
    preset_user: Option<(Preset, String)>,
    preset_project: Option<(Preset, String, bool)>,
}

impl PolicyBuilder {
    /// The preset chosen on the command line (`--preset`).
    pub fn preset(mut self, preset: Option<Preset>) -> Self {
        self.preset_flag = preset;
        self
    }

    /// The preset that applies and where it was chosen (see `crate::policy::presets`): the
    /// explicit choice is `--preset`, else a trusted project file's, else the user
    /// file's; a managed choice is the default and the most any other may reach; an
    /// untrusted project file's choice only narrows.
    fn effective_preset(&self) -> (Preset, String) {
        let trusted_project = self
            .preset_project
            .as_ref()
            .filter(|(_, _, trusted)| *trusted)
            .map(|(p, f, _)| (*p, format!("project config {f}")));
        let explicit = self
            .preset_flag
            .map(|p| (p, "--preset".to_string()))
            .or(trusted_project)
            .or_else(|| {
                self.preset_user
                    .as_ref()
                    .map(|(p, f)| (*p, format!("user config {f}")))
            });
        let mut chosen = match (&self.preset_managed, explicit) {
            (Some((m, f)), Some((e, why))) if e > *m => {
                (*m, format!("managed config {f} (which caps {why}'s {e})"))
            }
            (Some(_), Some(e)) => e,
            (Some((m, f)), None) => (*m, format!("managed config {f}")),
            (None, Some(e)) => e,
            (None, None) => (Preset::default(), "default".to_string()),
        };
        if let Some((p, f, false)) = &self.preset_project
            && *p < chosen.0
        {
            chosen = (
                *p,
                format!("project config {f} (untrusted: it may only narrow)"),
            );
        }
        chosen
    }
    /// The project root relative glob patterns are anchored at.
    pub fn root(mut self, root: &Path) -> Self {
        self.root = Some(root.to_path_buf());
        self
    }

    /// The trust store that decides whether a project file read by `file` may widen.
    /// Without one, every project file read from disk is untrusted.
    pub fn trust(mut self, store: Option<TrustStore>) -> Self {
        self.trust = store;
        self
    }

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

    /// Adds an agent host's own rules (`RuleSource::Host`) beside layer `level` (`User`
    /// or `Project`), read from `files`: they count as loaded files (writing them is a
    /// protected write, and a cache keyed on the files sees them change). `ignored` are
    /// the host files whose allows were left out as untrusted.
    pub fn host_layer(
        mut self,
        level: RuleSource,
        rules: Vec<PermissionRule>,
        files: &[PathBuf],
        ignored: Vec<IgnoredAllows>,
    ) -> Self {
        self.files.extend(files.iter().cloned());
        self.ignored.extend(ignored);
        match level {
            RuleSource::Project => self.host_project.extend(rules),
            _ => self.host_user.extend(rules),
        }
        self
    }

    /// Records every allow rule the hosts' files hold, trusted or not (the host itself
    /// honours them all: `Policy::host_allows`), and whether every host file could be
    /// read (`complete`; when not, `Policy::host_allows` cannot rule anything out).
    pub fn host_seen(mut self, allows: Vec<PermissionRule>, complete: bool) -> Self {
        self.host_seen.extend(allows);
        self.host_incomplete |= !complete;
        self.host_read = true;
        self
    }

    /// Adds the settings of a file of layer `source`: an `exact` always scope anywhere
    /// wins (it only narrows); of the modes files give a pack the strictest wins, and
    /// a project file cannot turn a pack off.
    pub fn settings(mut self, source: RuleSource, settings: ConfigSettings) -> Self {
        for (pack, mode) in settings.packs {
            if mode == PackMode::Off && source == RuleSource::Project {
                continue;
            }
            let was = self.packs.get(&pack).copied();
            self.packs.insert(pack, was.map_or(mode, |w| w.max(mode)));
        }
        if settings.always_scope == Some(AlwaysScope::Exact) {
            self.always_scope = AlwaysScope::Exact;
        }
        // Any file that turns the hosts' rules off wins (leaving them out only narrows).
        if settings.host_rules == Some(false) {
            self.host_rules_off = true;
        }
        self
    }

    /// Whether a config file loaded so far turns the hosts' rules off
    /// (`"hostRules": false`).
    pub fn host_rules_off(&self) -> bool {
        self.host_rules_off
    }

    /// Whether the managed config loaded so far forbids trusting project files.
    pub fn trust_forbidden(&self) -> bool {
        self.forbid_trust
    }

    /// The trust store project files are judged by, if any.
    pub fn trust_store(&self) -> Option<&TrustStore> {
        self.trust.as_ref()
    }

    /// The project root, if set.
    pub fn project_root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Records a layer's preset choice; `trusted` matters only for the project layer.
    fn layer_preset(
        &mut self,
        source: RuleSource,
        file: &str,
        preset: Option<Preset>,
        trusted: bool,
    ) {
        let Some(p) = preset else { return };
        match source {
            RuleSource::Managed => self.preset_managed = Some((p, file.to_string())),
            RuleSource::Project => self.preset_project = Some((p, file.to_string(), trusted)),
            _ => self.preset_user = Some((p, file.to_string())),
        }
    }

    /// Adds a config text as layer `source`, errors naming `file`. A project text given
    /// this way is the caller's own (tests, tools): its preset counts as trusted.
    pub fn text(mut self, source: RuleSource, file: &str, text: &str) -> Self {
        let (parsed, settings) = parse_config_with_settings(text, file, source);
        self.layer_preset(source, file, settings.preset, true);
        self.settings(source, settings).layer(source, parsed)
    }

    /// Adds a config file as layer `source`. A missing user or project file is no
    /// layer; a missing managed file is an error (the administrator asked for it). A
    /// project file keeps its widening rules only when trusted (see the module doc).
    pub fn file(mut self, source: RuleSource, path: &Path) -> Self {
        self.files.push(path.to_path_buf());
        let Some((mut parsed, settings, bytes)) = read_config(path, source) else {
            return self;
        };
        let file_preset = settings.preset;
        self = self.settings(source, settings);
        let mut preset_trusted = true;
        match source {
            RuleSource::Managed => {
                if let Some(text) = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                    match managed_forbids_trust(text) {
                        Ok(forbid) => self.forbid_trust |= forbid,
                        Err(msg) => {
                            // Fail closed: a setting we cannot read forbids.
                            self.forbid_trust = true;
                            parsed
                                .errors
                                .push(error_at(&path.display().to_string(), 1, 1, msg));
                        }
                    }
                }
            }
            RuleSource::Project => {
                let status = if self.forbid_trust {
                    TrustStatus::Forbidden
                } else {
                    match (&self.trust, &bytes) {
                        (Some(store), Some(b)) => store.status(path, b),
                        _ => TrustStatus::Untrusted,
                    }
                };
                if status != TrustStatus::Trusted {
                    preset_trusted = false;
                    let dropped = narrow_only(&mut parsed.rules);
                    if !dropped.is_empty() {
                        self.ignored.push(IgnoredAllows {
                            file: path.display().to_string(),
                            status,
                            rules: dropped,
                        });
                    }
                }
            }
            _ => {}
        }
        // A broken file's preset is not used (the file keeps only its denies).
        if parsed.errors.is_empty() {
            let file = path.display().to_string();
            self.layer_preset(source, &file, file_preset, preset_trusted);
        }
        self.layer(source, parsed)
    }

    pub fn build(self) -> Policy {
        let (preset, preset_source) = self.effective_preset();
        let mut all = if self.no_defaults {
            Vec::new()
        } else {
            let mut d = default_rules();
            d.extend(preset.rules());
            d
        };
        all.extend(self.managed.iter().cloned());
        // Layer order with the hosts' rules: ... ++ user ++ host (user files) ++ project
        // ++ host (project files); their allows are checked by `host_allow_holds`.
        let has_hosts = !self.host_user.is_empty() || !self.host_project.is_empty();
        let mut without_hosts = has_hosts.then(|| {
            let mut v = all.clone();
            v.extend(self.user.iter().cloned());
            v.extend(self.project.iter().cloned());
            v
        });
        // Every allow the hosts hold, for `Policy::host_allows`.
        let hosts = self.host_seen;
        all.extend(self.user);
        all.extend(self.host_user);
        all.extend(self.project);
        all.extend(self.host_project);
        let root = self.root.as_deref();
        Policy {
            inner: Arc::new(PolicyInner {
                set: RuleSet::with_root(all, root),
                without_hosts: without_hosts.take().map(|v| RuleSet::with_root(v, root)),
                hosts: RuleSet::with_root(hosts, root),
                host_incomplete: self.host_incomplete,
                host_read: self.host_read,
                managed: RuleSet::with_root(self.managed, self.root.as_deref()),
                errors: self.errors,
                files: self.files,
                always_scope: self.always_scope,
                ignored: self.ignored,
                trust_dir: self.trust.map(|t| t.dir().to_path_buf()),
                forbid_trust: self.forbid_trust,
                preset,
                preset_source,
                packs: self.packs,
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

/// Loads defaults ++ managed ++ user ++ project, with no trust store: the project
/// file's allows are ignored. Never fails: problems are in `Policy::errors` and cap
/// every decision at ask.
pub fn load_policy(root: &Path, home: &Path, managed: Option<&Path>) -> Policy {
    load_policy_trusted(root, home, managed, None)
}

/// As `load_policy`, with the project file's widening rules kept when `trust` says
/// its current content is trusted.
pub fn load_policy_trusted(
    root: &Path,
    home: &Path,
    managed: Option<&Path>,
    trust: Option<&TrustStore>,
) -> Policy {
    load_policy_preset(root, home, managed, trust, None)
}

/// As `load_policy_trusted`, with the preset chosen on the command line.
pub fn load_policy_preset(
    root: &Path,
    home: &Path,
    managed: Option<&Path>,
    trust: Option<&TrustStore>,
    preset: Option<Preset>,
) -> Policy {
    load_layers(root, home, managed, trust, preset).build()
}

/// The builder `load_policy_preset` builds, with every file of ours read: a caller
/// may add more layers (the hosts' rules, `crate::hosts::grants`) before building.
pub fn load_layers(
    root: &Path,
    home: &Path,
    managed: Option<&Path>,
    trust: Option<&TrustStore>,
    preset: Option<Preset>,
) -> PolicyBuilder {
    let mut b = Policy::builder()
        .root(root)
        .trust(trust.cloned())
        .preset(preset);
    if let Some(m) = managed {
        b = b.file(RuleSource::Managed, m);
    }
    b.file(RuleSource::User, &user_config_path(home))
        .file(RuleSource::Project, &project_config_path(root))
}

pub(crate) fn error_at(
    file: &str,
    line: usize,
    column: usize,
    message: impl Into<String>,
) -> ConfigError {
    ConfigError {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}

/// Whether an untrusted project file's rules lose anything: leaves the narrowing rules
/// (deny, ask without `allowAlways`) and returns what was dropped or narrowed.
pub(crate) fn narrow_only(rules: &mut Vec<PermissionRule>) -> Vec<String> {
    let mut dropped = Vec::new();
    rules.retain_mut(|r| match r.action {
        Action::Allow => {
            dropped.push(r.describe());
            false
        }
        Action::Ask if r.allow_always => {
            dropped.push(r.describe());
            r.allow_always = false;
            true
        }
        _ => true,
    });
    dropped
}

/// The managed file's `"trustProjectConfigs"` (top level): `false` forbids trusting
/// project files. Absent means allowed; any other value is an error.
fn managed_forbids_trust(text: &str) -> Result<bool, String> {
    let v: serde_json::Value = match jsonc_parser::parse_to_serde_value(text, &jsonc_options()) {
        Ok(v) => v,
        // The rule parser reports the syntax error with its position already.
        Err(_) => return Ok(true),
    };
    match v.get("trustProjectConfigs") {
        None => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(!b),
        Some(_) => Err("`trustProjectConfigs` must be a boolean".to_string()),
    }
}

/// Reads one file; `None` when a user or project file does not exist. The bytes are
/// returned with the parse so trust is judged on exactly what was parsed.
fn read_config(
    path: &Path,
    source: RuleSource,
) -> Option<(ParsedConfig, ConfigSettings, Option<Vec<u8>>)> {
    let file = path.display().to_string();
    let fail = |msg: String| {
        Some((
            ParsedConfig {
                rules: Vec::new(),
                errors: vec![error_at(&file, 1, 1, msg)],
            },
            ConfigSettings::default(),
            None,
        ))
    };
    match read_config_text(path) {
        Ok(Some(text)) => {
            let (parsed, settings) = parse_config_with_settings(&text, &file, source);
            Some((parsed, settings, Some(text.into_bytes())))
        }
        Ok(None) if source != RuleSource::Managed => None,
        Ok(None) => fail("config file does not exist".to_string()),
        Err(msg) => fail(msg),
    }
}

/// The one reader of config files, for the loader and the grant writer alike:
/// `Ok(None)` when nothing is there, `Ok(Some(text))` for a regular UTF-8 file of at
/// most `MAX_CONFIG_BYTES`, else why not (one lowercase sentence).
///
/// Everything is checked on metadata before the file is opened, so a named pipe, a
/// device (`/dev/zero`) or a 100 MB file costs one `stat`. A link whose target is gone
/// is an error, not an absent file: silently dropping a project's deny rules because
/// a link broke would widen what it allows. The open itself is non-blocking and the
/// opened file is checked again (a swap between `stat` and `open` cannot make it read a
/// pipe), and the read is bounded whatever the file grew to meanwhile.
pub fn read_config_text(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot =
        |e: std::io::Error| format!("cannot read config file: {}", lower_first(&e.to_string()));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::symlink_metadata(path) {
                Ok(link) if link.file_type().is_symlink() => {
                    let target = std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    Err(format!(
                        "config file is a dangling link to `{target}`; fix or remove the link"
                    ))
                }
                _ => Ok(None),
            };
        }
        Err(e) => return Err(cannot(e)),
    };
    check_config_meta(&meta)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    check_config_meta(&f.metadata().map_err(cannot)?)?;
    let mut bytes = Vec::new();
    f.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!(
            "config file is larger than {MAX_CONFIG_BYTES} bytes"
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "config file is not valid UTF-8".to_string())
}

fn check_config_meta(meta: &std::fs::Metadata) -> Result<(), String> {
    if !meta.is_file() {
        return Err("config path is not a regular file".to_string());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "config file is larger than {MAX_CONFIG_BYTES} bytes"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rules::RuleOrigin;

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
            Some(
                "c.json:2:33: unknown action `alow`, expected `allow`, `contain`, `ask` or `deny`"
            )
        );
    }
}
