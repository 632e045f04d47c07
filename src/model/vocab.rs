//! The shared analysis vocabulary: capabilities, capability requests and the `Analysis`
//! both bash engines produce.
//!
//! Owns the seed's normative shapes (seed §1, §1.1) and their camelCase JSON form. It
//! knows nothing of bash syntax, rules or HTTP: the lexer and the AST engine fill these
//! types, the policy evaluates them, the service serializes them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The seven V1 capabilities (seed §1) plus `mcp.call` (a call of an MCP
/// server's tool, subject `<server>/<tool>`). Rules match these names, never tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Capability {
    #[serde(rename = "file.read")]
    FileRead,
    #[serde(rename = "file.write.project")]
    FileWriteProject,
    #[serde(rename = "file.write.outsideProject")]
    FileWriteOutsideProject,
    #[serde(rename = "process.execute")]
    ProcessExecute,
    #[serde(rename = "process.background")]
    ProcessBackground,
    #[serde(rename = "network.access")]
    NetworkAccess,
    #[serde(rename = "git.modify")]
    GitModify,
    #[serde(rename = "mcp.call")]
    McpCall,
}

impl Capability {
    pub const ALL: [Capability; 8] = [
        Capability::FileRead,
        Capability::FileWriteProject,
        Capability::FileWriteOutsideProject,
        Capability::ProcessExecute,
        Capability::ProcessBackground,
        Capability::NetworkAccess,
        Capability::GitModify,
        Capability::McpCall,
    ];

    /// The position in `ALL`; exhaustive, so a new capability cannot fall into a
    /// neighbour's slot of a per-capability table.
    pub fn index(self) -> usize {
        match self {
            Capability::FileRead => 0,
            Capability::FileWriteProject => 1,
            Capability::FileWriteOutsideProject => 2,
            Capability::ProcessExecute => 3,
            Capability::ProcessBackground => 4,
            Capability::NetworkAccess => 5,
            Capability::GitModify => 6,
            Capability::McpCall => 7,
        }
    }

    /// The seed's dotted name, e.g. `file.write.project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::FileRead => "file.read",
            Capability::FileWriteProject => "file.write.project",
            Capability::FileWriteOutsideProject => "file.write.outsideProject",
            Capability::ProcessExecute => "process.execute",
            Capability::ProcessBackground => "process.background",
            Capability::NetworkAccess => "network.access",
            Capability::GitModify => "git.modify",
            Capability::McpCall => "mcp.call",
        }
    }

    /// Whether the subject of this capability is a command text (matched with collapsed
    /// whitespace) rather than a path or URL.
    pub fn has_command_subject(self) -> bool {
        matches!(
            self,
            Capability::ProcessExecute | Capability::NetworkAccess | Capability::GitModify
        )
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown capability name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown capability `{0}`")]
pub struct UnknownCapability(pub String);

impl FromStr for Capability {
    type Err = UnknownCapability;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Capability::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCapability(s.to_string()))
    }
}

/// One thing a tool call asks to do (seed §1.1). A call maps to one or more of these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRequest {
    pub capability: Capability,
    /// What rules' patterns match against: resolved path, URL or command text.
    pub subject: String,
    /// Human-readable line for the panel, e.g. `Run npm install`.
    pub display: String,
    /// Candidate "always allow" patterns, most specific first; empty when the analyzer
    /// could not fully read the command (seed §3.3 refusal rule).
    #[serde(default)]
    pub always_patterns: Vec<String>,
    /// Analyzer-derived facts shown in the panel.
    #[serde(default)]
    pub risk_notes: Vec<String>,
    /// UI extras (diff, parts, cwd). Never model-facing.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// What makes the command run this program behind its own back: a flag (`git diff
    /// --ext-diff`), a container with host access. Such a request's subject names the
    /// route (`via …: …`), so a rule written for the bare command never covers it, and
    /// it is never offered an always pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// A path whose location is only known when the command runs (`/tmp/$X`,
    /// `/etc/sha*`): its subject is the word as written, which no rule for locations
    /// can vouch for, so it is at most asked and never offered a pattern. On
    /// `process.execute`: an operand is only known when it runs (`ls "$d"`), which no
    /// rule for the command's text can vouch for either.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unresolved: bool,
    /// What the analysis verified about this command (on `process.execute`
    /// only); the active preset's rules match on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// A `file.read` of what a directory holds: `decide` judges the paths
    /// it reaches, not only the directory's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_read: Option<DirectoryRead>,
    /// A domain pack names this command as an operation that destroys (on
    /// `process.execute` only): `decide` shows its note, narrows or withholds the
    /// "always" pattern, and keeps it from running without a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<PackHit>,
    /// The program runs code it reads from its input (`… | sh`, `sh < f`), which the
    /// command line does not show: a grant made in an agent host's dialog, which names
    /// programs, never vouches for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_program: bool,
}

/// How much a pack's operation destroys, from the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    /// Loses work or state that can usually be rebuilt (`git stash drop`,
    /// `kubectl cordon`): the rules decide, the "always" pattern is the exact command.
    Medium,
    /// Deletes data or resources (`kubectl delete pod`, `DROP TABLE`): asks unless a
    /// rule names the exact command; only the exact command is offered as "always".
    High,
    /// Deletes a whole database, namespace, stack or bucket: always asks, and no
    /// "always" pattern is offered.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// A domain pack's operation found in a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackHit {
    /// The pack's name (`kubernetes`, `databases`, …).
    pub pack: String,
    pub severity: Severity,
    /// What the operation does, for the panel: `deletes namespace `prod` and every
    /// resource in it`.
    pub note: String,
}

/// How far a directory read reaches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryRead {
    /// Every file below it, not only its entries (`grep -r`, `rg`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recursive: bool,
    /// Hidden entries are skipped (`rg` without `--hidden`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skips_hidden: bool,
    /// Only the names this glob returns (`ls *.rs`, the `glob` tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Symlinks to directories below it are entered, as the program enters them
    /// (`grep -R`, `rg -L`, `diff -r`, `find -L`, `tree -l`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follow: bool,
    /// Only names are read (`ls DIR`, `find DIR`, `tree DIR`): each directory it lists
    /// is judged as a read of that directory's contents (`~/.ssh/`), not its files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub names_only: bool,
    /// Exactly these paths (absolute), not what the directory holds now: the files a
    /// git reader reaches in the repository's history and index (`git log -p`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The analysis already walked it and met more than `MAX_WALK_ENTRIES` entries (a
    /// name-filtered `find` walk counts every entry the whole walk would): the read
    /// cannot be vouched for, and is not walked again. Internal: never read from or
    /// written to JSON, so a request from outside is walked as usual.
    #[serde(skip)]
    pub over_bound: bool,
}

impl CapabilityRequest {
    pub fn new(
        capability: Capability,
        subject: impl Into<String>,
        display: impl Into<String>,
    ) -> Self {
        CapabilityRequest {
            capability,
            subject: subject.into(),
            display: display.into(),
            always_patterns: Vec::new(),
            risk_notes: Vec::new(),
            metadata: serde_json::Map::new(),
            via: None,
            unresolved: false,
            verdict: None,
            directory_read: None,
            pack: None,
            reads_program: false,
        }
    }

    /// A path request whose location is unknown (see `unresolved`): the word as written.
    pub fn unresolved(capability: Capability, word: &str, display: impl Into<String>) -> Self {
        let mut r = CapabilityRequest::new(capability, word, display);
        r.unresolved = true;
        r
    }

    /// A program run through `via` (see the field): the subject names the route.
    pub fn via(via: impl Into<String>, text: &str, display: impl Into<String>) -> Self {
        let via = via.into();
        let mut r = CapabilityRequest::new(
            Capability::ProcessExecute,
            format!("via {via}: {text}"),
            display,
        );
        r.via = Some(via);
        r
    }
}

/// The classification of a bash command (seed §3.2, DESIGN.md § Analysis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandClass {
    Simple,
    Compound,
    Obfuscated,
}

impl CommandClass {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandClass::Simple => "simple",
            CommandClass::Compound => "compound",
            CommandClass::Obfuscated => "obfuscated",
        }
    }
}

/// Which engine produced an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Ast,
    Lexer,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Ast => "ast",
            EngineKind::Lexer => "lexer",
        }
    }
}

/// One simple command of the analysed text, as bash would run it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// The words with quotes removed (the lexer's or the tree's reading).
    pub words: Vec<String>,
    /// The command as bash sees it: assignments and words with quotes removed, joined
    /// by single spaces; redirections are requests of their own. The `process.execute`
    /// subject for it.
    pub text: String,
    /// The effective working directory when this part runs; `None` when it could not
    /// be known (after `cd "$X"` for example).
    pub cwd: Option<String>,
}

/// At most this many entries are looked at for one recursive read, whatever is
/// returned of them (a listing returns only directories, yet reads every entry); beyond,
/// the read cannot be vouched for (it asks: `Reason::WalkBound`).
pub const MAX_WALK_ENTRIES: usize = 20_000;

/// Why `decide` made a request stricter than the rule that matched it, or denied it:
/// typed, so hosts, tests and the panel read the cause without parsing risk notes
/// (`messages::reason_note` words each one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Reason {
    /// The command could not be read in full (seed §3.2): it asks unless an
    /// exact-subject rule allows it.
    Obfuscated,
    /// The AST engine could not parse the command and the lexer decided it: never
    /// allowed silently.
    Unparsed,
    /// A recursive read goes further than KHAELOR walks looking for secrets.
    WalkBound,
    /// A directory read reaches `path`, which the rules do not allow silently.
    DirectoryRead { path: String },
    /// The path is only known when the command runs.
    UnknownPath,
    /// An operand of the command is only known when it runs (a variable, a
    /// substitution): no rule for the command's text can vouch for it.
    UnknownOperand,
    /// Writes KHAELOR's own configuration, or names it in a command.
    SelfProtection,
    /// Names the service's way of answering prompts: its panel token file, or its
    /// grant, deny or trust routes (`named` is the fragment found). Only the person
    /// answers a prompt, so such a command always asks and never gets an "always".
    ApprovalChannel { named: String },
    /// Writes a file that makes code run later or changes what git or the shell does.
    ProtectedWrite { reason: String },
    /// Writes a path the read rules keep from being read silently (`.env`, `*.pem`,
    /// `~/.ssh/`): overwriting, truncating or planting a secret asks as reading it does.
    SecretWrite,
    /// Reads a file whose text holds a credential: a git configuration with a token in
    /// a remote's URL or an `Authorization` header, a shell's startup file that writes
    /// a key out (`export OPENAI_API_KEY=sk-…`). As secret as `.netrc`, whatever prints
    /// it.
    CredentialInside { path: String },
    /// A configuration file is broken: every allow is capped at ask.
    BrokenConfig,
    /// The hardline floor (seed §4.2): no rule can lift it.
    Hardline { rule: String },
    /// Nobody can answer an ask (seed §5.2), so it resolves as deny.
    NonInteractive,
    /// A domain pack names the command as an operation that destroys: it never runs
    /// contained or under a broad pattern (see `Severity`), and a config can make the
    /// pack deny it.
    Destructive {
        pack: String,
        severity: Severity,
        /// What the operation does, from the pack.
        note: String,
    },
    /// An agent host's own grant would allow a program that runs code it reads from
    /// its input; a grant that names programs cannot vouch for that code, so it asks.
    HostGrantUnread,
    /// The policy would contain the command, but it cannot be contained here, so it
    /// asks.
    NotContained {
        #[serde(flatten)]
        why: crate::model::contain::NotContained,
    },
}

/// A hit of the hardline floor (seed §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardlineHit {
    /// The floor entry that fired, as listed in seed §4.2, e.g. `rm -rf /`.
    pub rule: String,
    /// The de-obfuscated rendering it fired on.
    pub rendering: String,
}

/// Why the AST engine handed over to the lexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FallbackReason {
    /// The tree has ERROR or MISSING nodes.
    ParseError,
    /// The parse ran past its time budget.
    ParseTimeout,
    /// The nesting is deeper than the walker's bound.
    DepthLimit,
    /// The command is larger than the analyzer's byte or node budget.
    TooLarge,
    /// A node kind the walker does not know.
    UnknownNode,
    /// Any other analyzer error.
    AnalyzerError,
}

impl FallbackReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackReason::ParseError => "parseError",
            FallbackReason::ParseTimeout => "parseTimeout",
            FallbackReason::DepthLimit => "depthLimit",
            FallbackReason::TooLarge => "tooLarge",
            FallbackReason::UnknownNode => "unknownNode",
            FallbackReason::AnalyzerError => "analyzerError",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    pub reason: FallbackReason,
    /// One line saying what was found, e.g. `ERROR node at 1:5`.
    pub detail: String,
}

/// What an engine read from one bash command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// The command as given.
    pub command: String,
    pub class: CommandClass,
    pub parts: Vec<Part>,
    /// `process.execute` per part plus derived requests (network, git, writes, reads).
    pub requests: Vec<CapabilityRequest>,
    /// "Always allow" candidates for the whole command; empty unless fully read.
    pub always_patterns: Vec<String>,
    pub risk_notes: Vec<String>,
    pub hardline: Option<HardlineHit>,
    pub engine: EngineKind,
    pub fallback: Option<Fallback>,
}

/// Where a command runs: the canonical project root, the starting cwd, the home used
/// for `~` and `$HOME`, and, when the caller knows it, the `PATH` the command's shell
/// searches for program names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalysisContext {
    root: PathBuf,
    cwd: PathBuf,
    home: PathBuf,
    search_path: Option<std::sync::Arc<[PathBuf]>>,
    /// Whether an entry of `search_path` is relative or a directory of the project:
    /// without one, no name can find a file of the project.
    search_path_reaches_project: bool,
    /// What `programs::search_path` found for names on a `PATH` that does not reach
    /// the project, shared by the copies of this context (`with_cwd`).
    links: LinkMemo,
}

/// Names looked up on a `PATH` of entries outside the project, each with the file of
/// the project its link leads to, if any: one decision looks a name up several times
/// (its verdict, its own request, its helpers), and a run over many commands (the
/// oracle, `compare`) meets the same names again. Only outside state decides these
/// answers (a link outside the project, changed only by a write there), and a context
/// lives for one decision or one run. Not part of a context's identity.
#[derive(Debug, Clone, Default)]
pub struct LinkMemo(std::sync::Arc<std::sync::Mutex<LinkCache>>);

/// What `LinkMemo` holds; `programs::search_path` fills it.
#[derive(Debug, Default)]
pub struct LinkCache {
    /// Each name looked up, with the file of the project it leads to.
    pub found: std::collections::HashMap<String, Option<PathBuf>>,
    /// Names looked up one by one so far.
    pub lookups: usize,
    /// Once many names were looked up: every name of the `PATH`'s directories, with the
    /// indices of the entries that hold it (a lookup then reads no directory).
    pub index: Option<PathIndex>,
}

/// The names of the `PATH`'s directories, listed once (`LinkCache::index`).
#[derive(Debug, Default)]
pub struct PathIndex {
    /// Each name, with the indices of the entries whose listing holds it, in order.
    pub names: std::collections::HashMap<String, Vec<usize>>,
    /// Entries whose directory could not be listed whole: searched for every name.
    pub unlisted: Vec<usize>,
}

impl PathIndex {
    /// The entries to search for `name`, in `PATH` order.
    pub fn candidates(&self, name: &str) -> Vec<usize> {
        let mut out: Vec<usize> = self.names.get(name).cloned().unwrap_or_default();
        out.extend(&self.unlisted);
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl PartialEq for LinkMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LinkMemo {}

impl LinkMemo {
    /// Runs `f` on the cache (a poisoned lock is taken as it is: the cache holds only
    /// answers, each complete when stored).
    pub fn with<T>(&self, f: impl FnOnce(&mut LinkCache) -> T) -> T {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

/// A context that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("{what} `{path}` is not an absolute path")]
    Relative { what: &'static str, path: String },
    #[error("project root `{path}` does not exist or is not a directory")]
    MissingRoot { path: String },
}

impl AnalysisContext {
    /// Builds a context; the root must be an existing absolute directory and is
    /// canonicalized (so `/work/proj/../proj` and symlinked roots compare correctly).
    /// `cwd` and `home` must be absolute; `cwd` defaults to the root.
    pub fn new(root: &Path, cwd: Option<&Path>, home: &Path) -> Result<Self, ContextError> {
        fn absolute(what: &'static str, p: &Path) -> Result<(), ContextError> {
            if p.is_absolute() {
                Ok(())
            } else {
                Err(ContextError::Relative {
                    what,
                    path: p.display().to_string(),
                })
            }
        }
        absolute("project root", root)?;
        absolute("home", home)?;
        if let Some(cwd) = cwd {
            absolute("cwd", cwd)?;
        }
        let canon = std::fs::canonicalize(root)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| ContextError::MissingRoot {
                path: root.display().to_string(),
            })?;
        let cwd = match cwd {
            // No lexical clean first: `..` after a symlink is taken physically.
            Some(c) => crate::model::paths::resolve_existing_prefix(c),
            None => canon.clone(),
        };
        Ok(AnalysisContext {
            root: canon,
            cwd,
            home: crate::model::paths::clean(home),
            search_path: None,
            search_path_reaches_project: false,
            links: LinkMemo::default(),
        })
    }

    /// The same context with another working directory (already absolute and
    /// resolved, as the engines track it through `cd`).
    pub fn with_cwd(&self, cwd: PathBuf) -> Self {
        AnalysisContext {
            root: self.root.clone(),
            cwd,
            home: self.home.clone(),
            search_path: self.search_path.clone(),
            search_path_reaches_project: self.search_path_reaches_project,
            links: self.links.clone(),
        }
    }

    /// The same context with the `PATH` the command's shell will search (its value as
    /// the environment holds it: entries split on `:`, an empty entry meaning the
    /// working directory, as bash reads it). Without one, program names are taken to
    /// be the programs of the system (`programs::search_path`).
    pub fn with_search_path(mut self, path: Option<&std::ffi::OsStr>) -> Self {
        let home = &self.home;
        self.search_path = path.map(|p| {
            std::env::split_paths(p)
                .flat_map(|d| {
                    if d.as_os_str().is_empty() {
                        return vec![PathBuf::from(".")];
                    }
                    // bash expands a leading `~` of an entry when it searches (outside
                    // POSIX mode): `~/bin` is the home's. zsh and dash do not: for them it
                    // is relative, a directory `~` below the working directory, which the
                    // agent may make. Both are kept, that one first. `~user/bin` stays as
                    // written (relative for every shell but bash).
                    match d.strip_prefix("~") {
                        Ok(rest) => vec![d.clone(), home.join(rest)],
                        Err(_) => vec![d],
                    }
                })
                .collect()
        });
        let root = &self.root;
        // One `realpath` per entry that exists (a hook pays this on every call); the
        // walk that also follows a missing tail only for the rest.
        let inside = |e: &Path| {
            let resolved = std::fs::canonicalize(e)
                .unwrap_or_else(|_| crate::model::paths::resolve_existing_prefix(e));
            crate::model::paths::is_inside(&resolved, root)
        };
        self.search_path_reaches_project = self
            .search_path
            .as_deref()
            .is_some_and(|entries| entries.iter().any(|e| e.is_relative() || inside(e)));
        self.links = LinkMemo::default();
        self
    }

    /// This context with the search path of `other` (a context rebuilt for another
    /// working directory keeps what the caller's `PATH` was).
    pub fn with_search_path_of(mut self, other: &AnalysisContext) -> Self {
        self.search_path = other.search_path.clone();
        self.search_path_reaches_project = other.search_path_reaches_project;
        self.links = if self.root == other.root {
            other.links.clone()
        } else {
            LinkMemo::default()
        };
        self
    }

    /// The memo of names looked up on a `PATH` that does not reach the project.
    pub fn links(&self) -> &LinkMemo {
        &self.links
    }

    /// Whether an entry of the known `PATH` is relative or a directory of the project.
    pub fn search_path_reaches_project(&self) -> bool {
        self.search_path_reaches_project
    }

    /// The known `PATH` as the environment would hold it (entries joined with `:`),
    /// for the record of the call it was decided with.
    pub fn search_path_text(&self) -> Option<String> {
        let entries = self.search_path.as_deref()?;
        std::env::join_paths(entries)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    }

    /// The `PATH` entries, in order, when known (relative ones as written).
    pub fn search_path(&self) -> Option<&[PathBuf]> {
        self.search_path.as_deref()
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The starting working directory (absolute, normalized, symlinks resolved).
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
    /// The home directory `~` and `$HOME` expand to.
    pub fn home(&self) -> &Path {
        &self.home
    }
}

/// Collapses runs of whitespace to one space and trims the ends: the form command
/// subjects are matched in (seed §4.1). Whitespace is what bash separates words with
/// (space, tab, newline): CR, form feed and vertical tab are word characters to bash,
/// so `ls<FF>id` (a command of that name) must not read as `ls id`.
pub fn collapse_whitespace(s: &str) -> String {
    s.split(is_bash_blank)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Space, tab and newline: the characters that separate words for bash.
pub fn is_bash_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_names_round_trip() {
        for (i, c) in Capability::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i);
            let json = serde_json::to_string(&c).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(c.as_str().parse::<Capability>(), Ok(c));
        }
        assert!("file.*".parse::<Capability>().is_err());
    }

    #[test]
    fn request_serializes_camel_case() {
        let mut r =
            CapabilityRequest::new(Capability::ProcessExecute, "npm install", "Run npm install");
        r.always_patterns.push("npm install *".into());
        let v = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(v["alwaysPatterns"][0], "npm install *");
        assert!(v.get("riskNotes").is_some());
        assert!(v.get("metadata").is_none());
    }
}

/// What the analysis verified about one command, carried on its
/// `process.execute` request as `verdict`; preset rules match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Every effect is modelled: reads (requested separately), no writes, no
    /// execution, no network, no environment printed.
    ReadOnly,
    /// A project-local build or test (`cargo test`, `npm test`, `make TARGET`).
    ProjectBuild,
    /// An in-project edit (`programs::edits`, or a verified reader whose output is
    /// redirected into the project): every effect is a write of a path inside the
    /// project, or a read, each requested separately.
    ProjectWrite,
    /// A script of the project run by its interpreter (`python reproduce.py`, `node
    /// scripts/x.js`, `./run.sh`): the project's own code, which no reading can prove.
    ProjectScript,
    /// Code written on the command line, run by Python or Node in the project
    /// (`python3 -c …`, `node -e …`): contained with the project read-only
    /// (`ProfileName::ReadOnly`), since nothing has read what it does.
    InlineCode,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::ReadOnly => "readOnly",
            Verdict::ProjectBuild => "projectBuild",
            Verdict::ProjectWrite => "projectWrite",
            Verdict::ProjectScript => "projectScript",
            Verdict::InlineCode => "inlineCode",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        [
            Verdict::ReadOnly,
            Verdict::ProjectBuild,
            Verdict::ProjectWrite,
            Verdict::ProjectScript,
            Verdict::InlineCode,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// Error text in this project's style (cedar's): the first letter lowercase, so
/// library messages read as part of our one-sentence errors.
pub fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
