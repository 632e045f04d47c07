//! `khaelor-perm check`: decide one tool call from the command line.
//!
//! Owns the flags, reading the call (`--tool NAME --input JSON`, or `-- COMMAND` for
//! bash), and printing the decision as text (decision, requests with their rules, then
//! the panel box or the message) or as JSON (`--json`: the whole `CallDecision`).
//! Deciding is `tools::map_call` + `decide::decide`; nothing here judges anything.
//!
//! Exit statuses: 0 allow, 3 ask, 4 deny, 2 usage or input error (bad flags, bad JSON,
//! unknown tool, missing field, relative or missing root). A broken config is not an
//! input error: its problems go to stderr and the decision is capped at ask.

pub use super::error::{CliError, EXIT_USAGE, fail};
use super::print_out;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::model::vocab::AnalysisContext;
use crate::policy::config::Policy;
use crate::policy::decide::CallDecision;
use crate::policy::rules::Action;
use crate::presentation::messages::render_panel_box;
use crate::tools::{MappedCall, map_call};

/// Exit status for allow.
pub const EXIT_ALLOW: u8 = 0;
/// Exit status for ask.
pub const EXIT_ASK: u8 = 3;
/// Exit status for deny.
pub const EXIT_DENY: u8 = 4;
/// Exit status for contain: run it through `khaelor-perm exec --contain` (a caller that
/// cannot treats it as ask).
pub const EXIT_CONTAIN: u8 = 5;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 allow, 3 ask, 4 deny, 5 contain (run `containment.command` from --json), 2 usage or input error.\n\n\
Examples:\n  khaelor-perm check -- 'git status && rm -rf build'\n  \
khaelor-perm check --tool write --input '{\"path\":\"src/a.rs\",\"content\":\"x\"}' --json"
)]
pub struct Args {
    /// Project root (absolute; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Working directory of the call (absolute; default: the root).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Home directory for `~` and the user config (absolute; default: $HOME).
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
    /// Print the decision as JSON.
    #[arg(long)]
    pub json: bool,
    /// Nobody can answer a panel: every ask becomes a deny.
    #[arg(long)]
    pub non_interactive: bool,
    /// The tool name (read, glob, grep, list, write, edit, apply_patch, bash,
    /// process_start, process_stdin, webfetch).
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// The tool input as a JSON object.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// Shorthand for `--tool bash`: the command (one argument is used as is; several
    /// are shell-quoted and joined).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The analysis context from the flags: root defaults to the current directory, cwd to
/// the root, home to `$HOME`; all must be absolute, the root must exist.
pub fn context(
    root: Option<&Path>,
    cwd: Option<&Path>,
    home: Option<&Path>,
) -> Result<AnalysisContext, CliError> {
    // A path flag with a control character, or one naming a process alias
    // (which would resolve through this process, not the tool's), is refused.
    for (flag, value) in [("--root", root), ("--cwd", cwd), ("--home", home)] {
        let Some(v) = value else { continue };
        let text = v.to_string_lossy();
        if let Some(c) = crate::model::paths::control_char(&text) {
            return Err(CliError::new(
                "controlCharacter",
                format!(
                    "`{flag}` holds the control character U+{:04X}; a path may not contain one",
                    u32::from(c)
                ),
            ));
        }
        if crate::model::paths::is_process_alias(v) {
            return Err(CliError::new(
                "aliasingPath",
                format!(
                    "`{flag}` names a process's own view of the file system (/proc/self, /dev/fd), not a directory"
                ),
            ));
        }
    }
    let root = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            CliError::new("badRoot", format!("cannot read the current directory: {e}"))
        })?,
    };
    let home = match home {
        Some(h) => h.to_path_buf(),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| CliError::new("badHome", "`HOME` is not set; pass `--home DIR`"))?,
    };
    // The command would run with this process's environment: its `PATH` says which
    // file each program name is (`programs::search_path`).
    AnalysisContext::new(&root, cwd, &home)
        .map(|c| c.with_search_path(std::env::var_os("PATH").as_deref()))
        .map_err(|e| CliError::new("badContext", e.to_string()))
}

pub fn exit_for(a: Action) -> ExitCode {
    ExitCode::from(match a {
        Action::Allow => EXIT_ALLOW,
        Action::Contain => EXIT_CONTAIN,
        Action::Ask => EXIT_ASK,
        Action::Deny => EXIT_DENY,
    })
}

pub fn run(args: Args) -> ExitCode {
    match decide_from_args(&args) {
        Ok(d) => {
            print_decision(&d, args.json);
            exit_for(d.decision)
        }
        Err(e) => fail(args.json, &e),
    }
}

fn decide_from_args(args: &Args) -> Result<CallDecision, CliError> {
    let (call, ctx, policy) = prepare(args)?;
    Ok(decide(args, &call, &ctx, &policy))
}

/// The call, its context and the policy the flags name, with config problems reported
/// on stderr (they cap the decision; they are not input errors).
pub fn prepare(args: &Args) -> Result<(MappedCall, AnalysisContext, Policy), CliError> {
    let (tool, input) = match (&args.tool, args.command.is_empty()) {
        (Some(_), false) => {
            return Err(CliError::new(
                "usage",
                "give either `--tool NAME --input JSON` or `-- COMMAND`, not both",
            ));
        }
        (None, true) => {
            return Err(CliError::new(
                "usage",
                "nothing to check: give `--tool NAME --input JSON` or `-- COMMAND`",
            ));
        }
        (None, false) => {
            if args.input.is_some() {
                return Err(CliError::new(
                    "usage",
                    "`--input` goes with `--tool`, not with `-- COMMAND`",
                ));
            }
            (
                "bash".to_string(),
                serde_json::json!({ "command": crate::shell::join_command(&args.command) }),
            )
        }
        (Some(t), true) => {
            let input = match &args.input {
                Some(text) => crate::model::json::from_str(text).map_err(|e| {
                    CliError::new("badInput", format!("`--input` is not valid JSON: {e}"))
                })?,
                None => serde_json::json!({}),
            };
            (t.clone(), input)
        }
    };
    let ctx = context(
        args.root.as_deref(),
        args.cwd.as_deref(),
        args.home.as_deref(),
    )?;
    let trust = crate::cli::trust::store_from(args.state_dir.as_deref());
    let (managed, _) = crate::cli::bundle::managed_path(
        args.managed_config.as_deref(),
        &args.bundle,
        args.state_dir.as_deref(),
    )
    .map_err(|e| CliError::new("managedBundle", e))?;
    let policy = crate::policy::config::load_policy_preset(
        ctx.root(),
        ctx.home(),
        managed.as_deref(),
        trust.as_ref(),
        args.preset,
    );
    for e in policy.errors() {
        eprintln!(
            "warning: broken config, every decision is at most ask: {}",
            crate::presentation::messages::terminal_safe(&e.to_string())
        );
    }
    let call = map_call(&tool, &input, &ctx).map_err(|e| CliError::new(e.code(), e.to_string()))?;
    Ok((call, ctx, policy))
}

/// Decides a prepared call as the flags say (`--non-interactive`).
pub fn decide(
    args: &Args,
    call: &MappedCall,
    ctx: &AnalysisContext,
    policy: &Policy,
) -> CallDecision {
    // `khaelor-perm exec --contain` runs a contained answer on this machine.
    let runner = crate::contain::runner();
    crate::policy::decide::decide_with(
        policy,
        &[],
        call,
        ctx,
        !args.non_interactive,
        runner
            .as_ref()
            .map(|r| r as &dyn crate::policy::decide::Sandbox),
    )
}

fn print_decision(d: &CallDecision, json: bool) {
    if json {
        match serde_json::to_string_pretty(d) {
            Ok(s) => print_out(&format!("{s}\n")),
            // Serializing plain data cannot fail; say so rather than print nothing.
            Err(e) => eprintln!("error: cannot print the decision as JSON: {e}"),
        }
        return;
    }
    let mut out = format!("{}\n", d.decision);
    for r in &d.requests {
        let rule = r
            .rule
            .as_ref()
            .map_or_else(|| "no rule matched".to_string(), |x| x.describe());
        out.push_str(&crate::presentation::messages::terminal_safe(&format!(
            "  {:<5} {} \"{}\"\n        rule: {rule}\n",
            r.decision.as_str(),
            r.request.capability,
            r.request.subject
        )));
    }
    if let Some(p) = &d.panel {
        out.push_str(&render_panel_box(p));
    }
    if let Some(m) = &d.message {
        out.push_str(&crate::presentation::messages::terminal_safe(m));
        out.push('\n');
    }
    print_out(&out);
}
