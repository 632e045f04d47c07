//! `khaelor-perm rules`: the effective rules in evaluation order with source and file
//! position (the seed's `/permissions` view, §6.2), the config problems, and with
//! `--check` the rules a later rule always overrides.
//!
//! Owns printing only; loading and the shadow analysis live in `config` and `rules`.
//!
//! Exit statuses: 0 fine, 1 a config file is broken (or, with `--check`, a rule is
//! shadowed), 2 usage error (relative or missing root).

use super::print_out;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::cli::check::{context, fail};
use crate::policy::config::{ConfigError, Shadowed};
use crate::policy::rules::PermissionRule;
use crate::presentation::messages::terminal_safe;

/// Exit status when a config is broken or `--check` finds shadowed rules.
pub const EXIT_PROBLEMS: u8 = 1;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 fine, 1 broken config (or shadowed rules with --check), 2 usage error."
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `import` or `export`; without one, list the rules.
    #[command(subcommand)]
    pub action: Option<RulesAction>,
    /// Project root (absolute; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Home directory for the user config (absolute; default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// A managed config whose deny and ask rules no other layer can loosen.
    #[arg(long, value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// The managed layer as a signed bundle (`--managed-url`, `--managed-key`, …).
    #[command(flatten)]
    pub bundle: crate::cli::bundle::ManagedFlags,
    /// The preset (strict, recommended, autonomous); a managed config's preset caps
    /// it, an untrusted project file may still narrow it [default: recommended, or
    /// what the configs choose].
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<crate::policy::presets::Preset>,
    /// Where the trust records of `khaelor-perm trust` live [default:
    /// $XDG_STATE_HOME/khaelor-perm or $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also report rules that a later rule always overrides.
    #[arg(long)]
    pub check: bool,
}

/// The `rules` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RulesAction {
    /// Translate another system's permission rules into a commented config.
    Import(super::rules_interop::ImportArgs),
    /// Print the effective rules as a host's native config (what can be expressed).
    Export(super::rules_interop::ExportArgs),
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Listing<'a> {
    /// The active preset and where it was chosen.
    preset: crate::policy::presets::Preset,
    preset_source: &'a str,
    files: Vec<String>,
    rules: &'a [PermissionRule],
    errors: &'a [ConfigError],
    #[serde(skip_serializing_if = "Option::is_none")]
    shadowed: Option<Vec<Shadowed>>,
    /// With `--check`: rules whose `*` is glued to a command name (a warning).
    #[serde(skip_serializing_if = "Option::is_none")]
    glued_wildcards: Option<Vec<&'a PermissionRule>>,
    ignored: &'a [crate::policy::config::IgnoredAllows],
    protected: Vec<crate::policy::protected::ProtectedEntry>,
    /// The signed bundle the managed layer came from (`--managed-url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    managed_bundle: Option<crate::policy::bundle::store::BundleStatus>,
}

pub fn run(args: Args) -> ExitCode {
    match args.action {
        Some(RulesAction::Import(a)) => return super::rules_interop::run_import(a),
        Some(RulesAction::Export(a)) => return super::rules_interop::run_export(a),
        None => {}
    }
    let ctx = match context(args.root.as_deref(), None, args.home.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(args.json, &e),
    };
    let trust = crate::cli::trust::store_from(args.state_dir.as_deref());
    let (managed, bundle) = match crate::cli::bundle::managed_path(
        args.managed_config.as_deref(),
        &args.bundle,
        args.state_dir.as_deref(),
    ) {
        Ok(m) => m,
        Err(e) => {
            return fail(
                args.json,
                &crate::cli::error::CliError::new("managedBundle", e),
            );
        }
    };
    let policy = crate::policy::config::load_policy_preset(
        ctx.root(),
        ctx.home(),
        managed.as_deref(),
        trust.as_ref(),
        args.preset,
    );
    let shadowed = args.check.then(|| policy.shadowed());
    let glued = args.check.then(|| glued_wildcards(&policy));
    let problems = !policy.errors().is_empty() || shadowed.as_ref().is_some_and(|s| !s.is_empty());
    if args.json {
        let listing = Listing {
            preset: policy.preset(),
            preset_source: policy.preset_source(),
            files: policy
                .files()
                .iter()
                .map(|f| f.display().to_string())
                .collect(),
            rules: policy.rules(),
            errors: policy.errors(),
            shadowed,
            glued_wildcards: glued,
            ignored: policy.ignored(),
            protected: crate::policy::protected::table(),
            managed_bundle: bundle,
        };
        match serde_json::to_string_pretty(&listing) {
            Ok(s) => print_out(&format!("{s}\n")),
            Err(e) => eprintln!("error: cannot print the rules as JSON: {e}"),
        }
    } else {
        let mut text = render(&policy, shadowed.as_deref());
        if let Some(b) = &bundle {
            text.insert_str(0, &crate::cli::bundle::status_line(b));
        }
        for r in glued.unwrap_or_default() {
            let origin = r
                .origin
                .as_ref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default();
            text.push_str(&format!(
                "warning: pattern \"{}\"{origin} glues `*` to a command name, so it also matches other commands; write \"{}\" and \"{} *\" (a space before the `*`)\n",
                r.pattern,
                r.pattern.trim_end_matches('*').trim_end(),
                r.pattern.trim_end_matches('*').trim_end(),
            ));
        }
        text.push_str(&contain_line());
        text.push_str(&search_path_line(&ctx));
        print_out(&terminal_safe(&text));
    }
    ExitCode::from(if problems { EXIT_PROBLEMS } else { 0 })
}

/// The non-default rules whose `*` is glued to a command name.
fn glued_wildcards(policy: &crate::policy::config::Policy) -> Vec<&PermissionRule> {
    policy
        .rules()
        .iter()
        .filter(|r| r.source != crate::policy::rules::RuleSource::Default)
        .filter(|r| crate::policy::rules::glues_wildcard_to_command(r))
        .collect()
}

fn render(policy: &crate::policy::config::Policy, shadowed: Option<&[Shadowed]>) -> String {
    let mut out = format!(
        "Preset: {} (from {}); its rules have source `preset`.\n\n",
        policy.preset(),
        policy.preset_source()
    );
    out.push_str(
        "Effective rules, in evaluation order (the last matching rule wins; no match asks):\n",
    );
    let cap_w = policy
        .rules()
        .iter()
        .map(|r| r.capability.chars().count())
        .max()
        .unwrap_or(0);
    let now = crate::model::rule::now_unix();
    for (i, r) in policy.rules().iter().enumerate() {
        let origin = r
            .origin
            .as_ref()
            .map(|o| format!("  {o}"))
            .unwrap_or_default();
        let always = if r.allow_always {
            "  (allowAlways)"
        } else {
            ""
        };
        let when = r
            .when
            .map(|v| format!("  when the command is verified {}", verdict_words(v)))
            .unwrap_or_default();
        let name = r
            .name
            .as_ref()
            .map(|n| format!("  [{n}]"))
            .unwrap_or_default();
        let expires = match &r.expires {
            Some(e) if e.passed(now) => format!("  (expired {}: skipped)", e.as_str()),
            Some(e) => format!("  (expires {})", e.as_str()),
            None => String::new(),
        };
        out.push_str(&format!(
            "{:>3}  {:<5}  {:<cap_w$}  {:<30}  {}{origin}{always}{when}{name}{expires}\n",
            i + 1,
            r.action.as_str(),
            r.capability,
            format!("\"{}\"", r.pattern),
            r.source
        ));
    }
    out.push_str("Beneath every rule: the hardline floor (seed §4.2). Managed deny/ask rules are a ceiling.\n");
    if !policy.ignored().is_empty() {
        out.push_str("\nIgnored (the project config is not trusted):\n");
        for i in policy.ignored() {
            for r in &i.rules {
                out.push_str(&format!("  {r}\n"));
            }
            out.push_str(&format!(
                "  {}\n",
                crate::presentation::messages::ignored_allows_note(
                    &i.file,
                    i.rules.len(),
                    i.status
                )
            ));
        }
    }
    out.push_str(
        "\nWrites that always ask and never get an \"always\" pattern (any directory, any case):\n",
    );
    let w = crate::policy::protected::table()
        .iter()
        .map(|e| e.path.chars().count())
        .max()
        .unwrap_or(0);
    for e in crate::policy::protected::table() {
        out.push_str(&format!("  {:<w$}  {}\n", e.path, e.reason));
    }
    out.push_str("  plus every config file listed above and the trust store\n");
    if !policy.errors().is_empty() {
        out.push_str("\nBroken configuration (every decision is at most ask until fixed):\n");
        for e in policy.errors() {
            out.push_str(&format!("  {e}\n"));
        }
    }
    if let Some(s) = shadowed {
        if s.is_empty() {
            out.push_str("\nNo shadowed rules.\n");
        } else {
            out.push_str("\nShadowed rules:\n");
            for x in s {
                out.push_str(&format!("  {x}\n"));
            }
        }
    }
    out
}

/// Whether `contain` works here: the sandbox's probe, in one line.
fn contain_line() -> String {
    match crate::contain::available() {
        Ok(bwrap) => format!(
            "contain: available (bubblewrap at {}); contained commands run in the sandbox without a prompt\n",
            bwrap.display()
        ),
        Err(e) => format!("contain: unavailable ({e}); commands the rules contain ask instead\n"),
    }
}

/// The entries of this process's `PATH` that lie in the project or are relative, when
/// there are any: a program name found there is read as the project's own code.
fn search_path_line(ctx: &crate::model::vocab::AnalysisContext) -> String {
    let entries = crate::programs::search_path::project_entries(ctx);
    if entries.dirs.is_empty() && entries.relative.is_empty() {
        return String::new();
    }
    let mut places: Vec<String> = entries
        .dirs
        .iter()
        .map(|d| format!("`{}`", d.display()))
        .collect();
    if !entries.relative.is_empty() {
        places.push("relative entries (found from where each command runs)".to_string());
    }
    format!(
        "PATH: {} hold programs the project may write; a command name found there runs the project's own code: contained or asked, never verified\n",
        places.join(", ")
    )
}

/// How `rules` names a preset rule's condition.
fn verdict_words(v: crate::model::vocab::Verdict) -> &'static str {
    match v {
        crate::model::vocab::Verdict::ReadOnly => "read-only",
        crate::model::vocab::Verdict::ProjectBuild => "a project-local build or test",
        crate::model::vocab::Verdict::ProjectWrite => {
            "an in-project edit (mkdir, touch, cp, mv, ln -s, sed -i, tee, a redirect)"
        }
        crate::model::vocab::Verdict::ProjectScript => {
            "a script of the project run by its interpreter"
        }
        crate::model::vocab::Verdict::InlineCode => {
            "code on the command line run by Python or Node (in a read-only sandbox)"
        }
    }
}
