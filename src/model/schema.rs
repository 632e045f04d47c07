//! OpenAPI mirror schemas for the library's shared types that carry no schema derive
//! of their own (`vocab`, `rules`, `config`, `decide`): what `http::openapi` puts in
//! the document and what `session`'s event shapes point at.
//!
//! Owns these mirrors only, with no dependency on the service, so the model layers can
//! name them without importing `http`. A mirror must follow its type's serde shape field
//! for field; `http::openapi`'s tests check real values' keys against the mirrors.

use utoipa::ToSchema;

/// A tool the mapping knows (`tools::KNOWN_TOOLS`); any other name is a 422.
#[derive(ToSchema)]
#[schema(as = ToolName)]
#[serde(rename_all = "snake_case")]
pub enum ToolNameSchema {
    Read,
    Glob,
    Grep,
    List,
    Write,
    Edit,
    ApplyPatch,
    Bash,
    ProcessStart,
    ProcessStdin,
    Webfetch,
    Mcp,
}

/// One of the seven V1 capabilities (seed §1), or `mcp.call` (an MCP server's tool).
#[derive(ToSchema)]
#[schema(as = Capability)]
pub enum CapabilitySchema {
    #[schema(rename = "file.read")]
    FileRead,
    #[schema(rename = "file.write.project")]
    FileWriteProject,
    #[schema(rename = "file.write.outsideProject")]
    FileWriteOutsideProject,
    #[schema(rename = "process.execute")]
    ProcessExecute,
    #[schema(rename = "process.background")]
    ProcessBackground,
    #[schema(rename = "network.access")]
    NetworkAccess,
    #[schema(rename = "git.modify")]
    GitModify,
    #[schema(rename = "mcp.call")]
    McpCall,
}

/// One thing a tool call asks to do (seed §1.1).
#[derive(ToSchema)]
#[schema(as = CapabilityRequest)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRequestSchema {
    pub capability: CapabilitySchema,
    /// What rules' patterns match against: resolved path, URL or command text.
    pub subject: String,
    /// Human-readable line for the panel, e.g. `Run npm install`.
    pub display: String,
    /// Candidate "always allow" patterns, most specific first; empty when the analyzer
    /// could not fully read the command.
    pub always_patterns: Vec<String>,
    /// Analyzer-derived facts shown in the panel.
    pub risk_notes: Vec<String>,
    /// UI extras (diff, parts, cwd); never model-facing. Absent when empty.
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<serde_json::Value>,
    /// What makes the command run this program behind its own back (a flag such as
    /// `git diff --ext-diff`, a container with host access); absent otherwise. Never
    /// offered an always pattern.
    pub via: Option<String>,
    /// A path whose location is only known when the command runs (`/tmp/$X`,
    /// `/etc/sha*`): at most asked, never offered a pattern. Absent when false.
    pub unresolved: Option<bool>,
    /// What the analysis verified about this command (`process.execute` only); the
    /// active preset's rules match on it. Absent when nothing was verified.
    pub verdict: Option<VerdictSchema>,
    /// A `file.read` of what a directory holds: the secret rules apply to the paths it
    /// reaches. Absent for plain reads.
    pub directory_read: Option<DirectoryReadSchema>,
    /// A domain pack names this command as an operation that destroys
    /// (`process.execute` only). Absent otherwise.
    pub pack: Option<PackHitSchema>,
    /// The program runs code it reads from its input (`… | sh`), which no host grant
    /// vouches for. Absent when false.
    pub reads_program: Option<bool>,
}

/// A domain pack's operation found in a command (`vocab::PackHit`).
#[derive(ToSchema)]
#[schema(as = PackHit)]
#[serde(rename_all = "camelCase")]
pub struct PackHitSchema {
    /// The pack's name: `databases`, `kubernetes`, `containers`, `cloud`,
    /// `infrastructure`, `git`.
    pub pack: String,
    pub severity: SeveritySchema,
    /// What the operation does, for the panel.
    pub note: String,
}

/// How much a pack's operation destroys (`vocab::Severity`).
#[derive(ToSchema)]
#[schema(as = Severity)]
#[serde(rename_all = "camelCase")]
pub enum SeveritySchema {
    /// The rules decide; only the exact command is offered as "always".
    Medium,
    /// Asks unless a rule allows exactly this command; only it is offered as "always".
    High,
    /// Always asks; no "always" pattern.
    Critical,
}

/// What the analysis verified about one command (`vocab::Verdict`).
#[derive(ToSchema)]
#[schema(as = Verdict)]
#[serde(rename_all = "camelCase")]
pub enum VerdictSchema {
    /// Every effect is modelled: reads (requested separately), no writes, no execution,
    /// no network.
    ReadOnly,
    /// A project-local build or test (`cargo test`, `npm test`).
    ProjectBuild,
    /// `mkdir`/`touch`/`cp`/`mv` whose every path resolves inside the project.
    ProjectWrite,
    /// A script of the project run by its interpreter (`python reproduce.py`).
    ProjectScript,
    /// Code on the command line run by Python or Node (`python3 -c …`): contained with
    /// the project read-only.
    InlineCode,
}

/// How far a directory read reaches (`vocab::DirectoryRead`).
#[derive(ToSchema)]
#[schema(as = DirectoryRead)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryReadSchema {
    /// Every file below it, not only its entries. Absent when false.
    pub recursive: Option<bool>,
    /// Hidden entries are skipped. Absent when false.
    pub skips_hidden: Option<bool>,
    /// Only the names this glob returns.
    pub glob: Option<String>,
    /// Symlinks to directories below it are entered. Absent when false.
    pub follow: Option<bool>,
    /// Only names are read: each directory listed is judged as a read of its contents.
    /// Absent when false.
    pub names_only: Option<bool>,
    /// Exactly these paths, not what the directory holds now (the files a git reader
    /// reaches in history). Absent when empty.
    pub paths: Option<Vec<String>>,
}

#[derive(ToSchema)]
#[schema(as = CommandClass)]
#[serde(rename_all = "lowercase")]
pub enum CommandClassSchema {
    Simple,
    Compound,
    Obfuscated,
}

#[derive(ToSchema)]
#[schema(as = EngineKind)]
#[serde(rename_all = "lowercase")]
pub enum EngineKindSchema {
    Ast,
    Lexer,
}

/// One simple command of the analysed text.
#[derive(ToSchema)]
#[schema(as = Part)]
pub struct PartSchema {
    /// The words with quotes removed.
    pub words: Vec<String>,
    /// The source text, whitespace collapsed; the `process.execute` subject.
    pub text: String,
    /// The effective working directory; null when it could not be known.
    pub cwd: Option<String>,
}

/// A hit of the hardline floor (seed §4.2).
#[derive(ToSchema)]
#[schema(as = HardlineHit)]
pub struct HardlineHitSchema {
    /// The floor entry that fired, e.g. `rm -rf /`.
    pub rule: String,
    /// The de-obfuscated rendering it fired on.
    pub rendering: String,
}

#[derive(ToSchema)]
#[schema(as = FallbackReason)]
#[serde(rename_all = "camelCase")]
pub enum FallbackReasonSchema {
    ParseError,
    ParseTimeout,
    DepthLimit,
    TooLarge,
    UnknownNode,
    AnalyzerError,
}

/// Why the AST engine handed over to the lexer.
#[derive(ToSchema)]
#[schema(as = Fallback)]
pub struct FallbackSchema {
    pub reason: FallbackReasonSchema,
    /// One line saying what was found, e.g. `ERROR node at 1:5`.
    pub detail: String,
}

/// What an engine read from one bash command.
#[derive(ToSchema)]
#[schema(as = Analysis)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisSchema {
    pub command: String,
    pub class: CommandClassSchema,
    pub parts: Vec<PartSchema>,
    pub requests: Vec<CapabilityRequestSchema>,
    pub always_patterns: Vec<String>,
    pub risk_notes: Vec<String>,
    pub hardline: Option<HardlineHitSchema>,
    pub engine: EngineKindSchema,
    pub fallback: Option<FallbackSchema>,
}

/// An analysis; with `engine: both` it also carries the lexer's and whether the two
/// agree on class, requests and hardline.
#[derive(ToSchema)]
#[schema(as = BothAnalysis)]
#[serde(rename_all = "camelCase")]
pub struct BothAnalysisSchema {
    #[serde(flatten)]
    pub analysis: AnalysisSchema,
    pub lexer: Option<AnalysisSchema>,
    pub agree: Option<bool>,
}

/// What a rule or a call decides.
#[derive(ToSchema)]
#[schema(as = Action)]
#[serde(rename_all = "lowercase")]
pub enum ActionSchema {
    Allow,
    /// Run without a prompt inside the sandbox the answer's `containment` describes
    /// (`khaelor-perm exec --contain`); a client that cannot run it treats it as ask.
    Contain,
    Ask,
    Deny,
}

/// Where a rule came from: `hardline` and `builtin` are the non-configurable floors,
/// then the layers in evaluation order.
#[derive(ToSchema)]
#[schema(as = RuleSource)]
#[serde(rename_all = "lowercase")]
pub enum RuleSourceSchema {
    Hardline,
    Builtin,
    Default,
    Preset,
    User,
    Project,
    Managed,
    Session,
    /// A rule an agent host persists (its name says which: `host:claude`).
    Host,
}

/// Where in a config file a rule was written (1-based).
#[derive(ToSchema)]
#[schema(as = RuleOrigin)]
pub struct RuleOriginSchema {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One rule with its provenance (seed §4.1).
#[derive(ToSchema)]
#[schema(as = PermissionRule)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRuleSchema {
    /// Capability pattern, e.g. `file.write.*` or `*`.
    pub capability: String,
    /// Subject pattern, e.g. `git push *`.
    pub pattern: String,
    pub action: ActionSchema,
    pub source: RuleSourceSchema,
    /// Absent for built-in and session rules.
    pub origin: Option<RuleOriginSchema>,
    /// An explicit `ask` from a config file offers "always" only when set; absent when
    /// false.
    pub allow_always: Option<bool>,
    /// A preset rule matches only a `process.execute` request the analysis gave this
    /// verdict (`readOnly`, `projectBuild`, `projectWrite`).
    pub when: Option<String>,
    /// The name of a shipped rule (`secret: AWS credentials and config`).
    pub name: Option<String>,
    /// When the rule stops applying, as written (`2027-01-31`: through that day, UTC;
    /// or an RFC 3339 time); an expired rule is skipped. Absent: never.
    pub expires: Option<String>,
}

/// A config file that could not be (fully) used.
#[derive(ToSchema)]
#[schema(as = ConfigError)]
pub struct ConfigErrorSchema {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A capability request with its decision and the rule that decided it (none: no rule
/// matched, which asks).
#[derive(ToSchema)]
#[schema(as = EvaluatedRequest)]
pub struct EvaluatedRequestSchema {
    #[serde(flatten)]
    pub request: CapabilityRequestSchema,
    pub decision: ActionSchema,
    pub rule: Option<PermissionRuleSchema>,
    /// Why the decision is stricter than the rule alone would make it, in the order
    /// the caps applied; absent when the rule decided.
    pub reasons: Option<Vec<ReasonSchema>>,
}

/// Why a request was made stricter than its rule, or denied (`vocab::Reason`).
#[derive(ToSchema)]
#[schema(as = Reason)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ReasonSchema {
    /// The command could not be read in full: asks unless an exact-subject rule allows it.
    Obfuscated,
    /// The AST engine could not parse the command: never allowed silently.
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
    /// Names the service's panel token or its grant, deny or trust routes (`named`):
    /// only the person answers a prompt.
    ApprovalChannel { named: String },
    /// Writes a protected file; `reason` says which kind.
    ProtectedWrite { reason: String },
    /// Writes a path the read rules do not let be read silently (a secret).
    SecretWrite,
    /// Reads a file (`path`) whose text holds a credential (a git configuration with a
    /// token, a shell startup file writing a key out): as secret as `.netrc`.
    CredentialInside { path: String },
    /// A configuration file is broken: every allow is capped at ask.
    BrokenConfig,
    /// The hardline floor; `rule` is the floor entry.
    Hardline { rule: String },
    /// Nobody can answer an ask, so it resolves as deny.
    NonInteractive,
    /// The policy would contain the command but it cannot be contained here, so it
    /// asks; `why` says which obstacle (`unavailable` with a `detail`, `noRunner`,
    /// `notACommand`, `outsideProject`).
    NotContained {
        why: NotContainedWhySchema,
        detail: Option<String>,
    },
    /// An agent host's grant would allow a program that runs code it reads from its
    /// input: it asks.
    HostGrantUnread,
    /// A domain pack names the command as an operation that destroys: `pack`, its
    /// `severity`, and the pack's `note` on what it does.
    Destructive {
        pack: String,
        severity: SeveritySchema,
        note: String,
    },
}

/// Why a command the policy would contain asks instead (`contain::NotContained`).
#[derive(ToSchema)]
#[schema(as = NotContainedWhy)]
#[serde(rename_all = "camelCase")]
pub enum NotContainedWhySchema {
    /// This machine cannot build the sandbox (no bubblewrap, no user namespaces).
    Unavailable,
    /// The caller cannot run a rewritten command.
    NoRunner,
    /// Only a shell command can be contained.
    NotACommand,
    /// The command runs outside the project.
    OutsideProject,
}

/// The sandbox a contained command runs in (`contain::SandboxProfile`).
#[derive(ToSchema)]
#[schema(as = SandboxProfile)]
#[serde(rename_all = "camelCase")]
pub struct SandboxProfileSchema {
    /// `project` (no network) or `project-network`.
    pub name: String,
    /// The project root: readable and writable, except `readOnly`.
    pub root: String,
    /// Every path the command may write (the project, a private `/tmp`).
    pub writable: Vec<String>,
    /// Protected paths inside the project, bound read-only.
    pub read_only: Vec<String>,
    /// Secrets made unreadable (an empty directory or file over each).
    pub masked: Vec<String>,
    /// Symlinks in the project that lead to a masked path; absent when none.
    pub masked_links: Option<Vec<String>>,
    /// Whether the command has the host's network (else loopback only).
    pub network: bool,
}

/// A contained call: the profile and the command to run instead of the original.
#[derive(ToSchema)]
#[schema(as = Containment)]
#[serde(rename_all = "camelCase")]
pub struct ContainmentSchema {
    pub profile: SandboxProfileSchema,
    /// `khaelor-perm exec --contain --profile P --root R -- bash -c ORIGINAL`, as argv.
    pub argv: Vec<String>,
    /// The same, quoted for a shell.
    pub command: String,
}

/// One key the ask panel offers.
#[derive(ToSchema)]
#[schema(as = PanelKey)]
pub struct PanelKeySchema {
    /// `Enter`, `A`, `Esc`, `Tab`.
    pub key: String,
    pub label: String,
}

/// One line of the panel's details view.
#[derive(ToSchema)]
#[schema(as = PanelDetail)]
pub struct PanelDetailSchema {
    pub decision: ActionSchema,
    pub capability: CapabilitySchema,
    pub subject: String,
    pub display: String,
    pub rule: Option<PermissionRuleSchema>,
}

/// The ask panel (seed §6.1) as data.
#[derive(ToSchema)]
#[schema(as = Panel)]
#[serde(rename_all = "camelCase")]
pub struct PanelSchema {
    pub title: String,
    /// `Run`, `Write`, `Edit`, `Start process`, `Read`, `Fetch`, `Send input`.
    pub verb: String,
    /// The capability badge.
    pub badge: String,
    /// The command text or the path.
    pub subject: String,
    pub working_directory: String,
    /// The simple commands of a compound command; absent otherwise.
    pub parts: Option<Vec<String>>,
    /// Unified diff for writes and edits.
    pub diff: Option<String>,
    pub risk_notes: Vec<String>,
    /// What `A` persists; empty means no `A`.
    pub always_patterns: Vec<String>,
    pub keys: Vec<PanelKeySchema>,
    pub details: Vec<PanelDetailSchema>,
}

/// The decision for a whole tool call: deny beats ask beats allow over its requests.
#[derive(ToSchema)]
#[schema(as = CallDecision)]
#[serde(rename_all = "camelCase")]
pub struct CallDecisionSchema {
    pub tool: String,
    pub decision: ActionSchema,
    pub requests: Vec<EvaluatedRequestSchema>,
    /// What an "always" grant may persist; non-empty only for an ask the analyzer fully
    /// read and no rule forbids generalizing.
    pub always_patterns: Vec<String>,
    /// The model-facing message of a deny (seed §5.4).
    pub message: Option<String>,
    /// The ask panel (interactive asks only).
    pub panel: Option<PanelSchema>,
    /// The call in a few words.
    pub summary: String,
    pub risk_notes: Vec<String>,
    pub hardline: Option<HardlineHitSchema>,
    /// The config problems that capped this decision; absent when none.
    pub config_errors: Option<Vec<ConfigErrorSchema>>,
    /// For `contain`: the sandbox profile and the rewritten command; absent otherwise.
    pub containment: Option<ContainmentSchema>,
}

/// One decision told step by step (`policy::explain::Explanation`).
#[derive(ToSchema)]
#[schema(as = Explanation)]
#[serde(rename_all = "camelCase")]
pub struct ExplanationSchema {
    pub tool: ToolNameSchema,
    /// How the command was read: engine, fallback and why, class, parts with their
    /// working directories (bash and process_start only).
    pub reading: Option<AnalysisSchema>,
    /// The hardline floor rule the call hit (it denies whatever the rules say).
    pub floor: Option<HardlineHitSchema>,
    pub requests: Vec<RequestTraceSchema>,
    pub always: AlwaysTraceSchema,
    /// The decision, exactly as `/v1/evaluate` gives it.
    pub decision: CallDecisionSchema,
}

/// One capability request and how it was decided.
#[derive(ToSchema)]
#[schema(as = RequestTrace)]
#[serde(rename_all = "camelCase")]
pub struct RequestTraceSchema {
    pub capability: CapabilitySchema,
    pub subject: String,
    /// The analysis' verdict on a command (what the presets' `when` rules match on).
    pub verdict: Option<VerdictSchema>,
    /// Every layered rule naming this capability, in evaluation order (the last match
    /// wins), with why it did or did not match.
    pub rules: Vec<RuleConsideredSchema>,
    /// The rule that decided after every layer (the managed ceiling and the caps may
    /// replace the layered winner); absent: no rule matched, which asks.
    pub rule: Option<PermissionRuleSchema>,
    /// Why the decision is stricter than that rule alone, in the order they applied.
    pub reasons: Vec<ReasonSchema>,
    pub decision: ActionSchema,
    /// The "always" patterns the analysis offered for this request.
    pub offered_by_analysis: Vec<String>,
    /// What the decision kept of them.
    pub always_patterns: Vec<String>,
}

/// One rule considered for a request.
#[derive(ToSchema)]
#[schema(as = RuleConsidered)]
pub struct RuleConsideredSchema {
    /// The rule's position as `/v1/rules` and `khaelor-perm rules` list it (from 1).
    pub position: usize,
    pub rule: PermissionRuleSchema,
    #[serde(rename = "match")]
    pub outcome: RuleMatchSchema,
}

/// Why one rule did or did not match (`rules::RuleMatch`).
#[derive(ToSchema)]
#[schema(as = RuleMatch)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum RuleMatchSchema {
    /// It matches and, as the last match, decides.
    Decides,
    /// It matches, but the later rule at position `by` also matches and wins.
    Overridden { by: usize },
    /// Its subject pattern does not match.
    PatternDiffers,
    /// It applies only to a command the analysis gave the verdict `needs`.
    ConditionNotMet { needs: VerdictSchema },
    /// It is past its `expires`.
    Expired,
}

/// Why the call offers an "always" pattern or not.
#[derive(ToSchema)]
#[schema(as = AlwaysWhy)]
#[serde(rename_all = "camelCase")]
pub enum AlwaysWhySchema {
    /// The panel's `A` persists the first pattern.
    Offered,
    /// The call does not ask.
    NotAsking,
    /// The analysis offered no pattern for an asking request (not read fully, or compound).
    NotReadFully,
    /// The decision withheld the analysis' patterns (an explicit or managed ask, a cap,
    /// the floor, or `alwaysScope: exact` on a subject with a `*`).
    Withheld,
}

#[derive(ToSchema)]
#[schema(as = AlwaysTrace)]
pub struct AlwaysTraceSchema {
    pub why: AlwaysWhySchema,
    /// What the panel's `A` offers, first first.
    pub patterns: Vec<String>,
}
