//! `khaelor-perm rules import` and `rules export`: the command-line side of
//! interop with other permission formats.
//!
//! Owns flags, where the imported config is written (refusing to overwrite), the
//! self-check that the written text loads back as exactly the imported rules, and the
//! printed reports. Translating is `interop`'s job.
//!
//! Exit statuses: 0 done; 1 a deny could not be translated, the target file exists,
//! the result does not load, or (export) the config is broken; 2 usage or input error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::print_out;
use crate::cli::check::{context, fail};
use crate::interop::export::{Target, export};
use crate::interop::{Format, ImportContext, ImportError, import, render};
use crate::policy::config::{parse_config, project_config_path, user_config_path};
use crate::policy::rules::RuleSource;
use crate::presentation::messages::terminal_safe;

/// `rules import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 imported, 1 a deny could not be translated / the target exists / the result does not load, 2 usage or input error."
)]
pub struct ImportArgs {
    /// The source format.
    #[arg(long = "from", value_enum, value_name = "FORMAT")]
    pub from: Format,
    /// Source files, in the source system's layering order (later files win).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The project whose `.khaelor/config.json` is written; relative source paths are
    /// anchored here (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Home directory for `~` in source patterns and for `--user` (default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Write the user file (`$HOME/.khaelor/config.json`) instead of the project's.
    #[arg(long)]
    pub user: bool,
    /// Kurahi: also import this agent's own list (`agents.list[].id`).
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Print the config instead of writing it.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON (with `--dry-run`, the config text is in it).
    #[arg(long)]
    pub json: bool,
}

/// `rules export`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 exported, 1 broken config, 2 usage error.")]
pub struct ExportArgs {
    /// The host whose native config is printed.
    #[arg(long = "to", value_enum, value_name = "HOST")]
    pub to: Target,
    /// Project root (absolute; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Home directory for the user config (absolute; default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// A managed config whose deny and ask rules no other layer can loosen.
    #[arg(long, value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// Where the trust records of `khaelor-perm trust` live: an untrusted project
    /// file's allows are not in force, so they are not exported either.
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print a JSON report (the text, what was exported, what was not and why).
    #[arg(long)]
    pub json: bool,
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

pub fn run_import(args: ImportArgs) -> ExitCode {
    let project = args.project.as_deref().map(absolute);
    let ctx = match context(project.as_deref(), None, args.home.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(args.json, &e),
    };
    // Imported patterns are absolute: a project or home path with pattern characters
    // would read as wildcards and match more than the source meant.
    for (what, p) in [("project", ctx.root()), ("home", ctx.home())] {
        if p.display()
            .to_string()
            .contains(['*', '?', '[', ']', '{', '}'])
        {
            report_error(
                args.json,
                "badPath",
                &format!(
                    "the {what} path `{}` contains pattern characters (`*?[]{{}}`); imported absolute patterns would read them as wildcards",
                    p.display()
                ),
            );
            return ExitCode::from(2);
        }
    }
    let ictx = ImportContext {
        project: ctx.root().to_path_buf(),
        home: ctx.home().to_path_buf(),
    };
    let files: Vec<PathBuf> = args.files.iter().map(|f| absolute(f)).collect();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let imported = match import(args.from, &refs, &ictx, args.agent.as_deref()) {
        Ok(i) => i,
        Err(e) => {
            let code = if matches!(e, ImportError::DenyLost { .. }) {
                1
            } else {
                2
            };
            report_error(args.json, "importFailed", &e.to_string());
            return ExitCode::from(code);
        }
    };
    let sources: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let text = render::render(&imported, args.from, &sources);
    let target = if args.user {
        user_config_path(ctx.home())
    } else {
        project_config_path(ctx.root())
    };
    // The written text must load back as exactly these rules, examples included.
    let check = parse_config(&text, &target.display().to_string(), RuleSource::Project);
    let loaded: Vec<_> = check
        .rules
        .iter()
        .map(|r| (&r.capability, &r.pattern, r.action, r.dialect))
        .collect();
    let wanted: Vec<_> = imported
        .rules
        .iter()
        .map(|r| {
            (
                &r.rule.capability,
                &r.rule.pattern,
                r.rule.action,
                r.rule.dialect,
            )
        })
        .collect();
    if !check.errors.is_empty() || loaded != wanted {
        let why = check
            .errors
            .first()
            .map_or_else(|| "the rules differ".to_string(), ToString::to_string);
        report_error(
            args.json,
            "selfCheckFailed",
            &format!("the translation does not load back as imported ({why}); nothing was written"),
        );
        return ExitCode::from(1);
    }
    if !args.dry_run {
        if target.exists() {
            report_error(
                args.json,
                "targetExists",
                &format!(
                    "`{}` already exists; merge by hand (see `--dry-run`) or move it away, nothing was written",
                    target.display()
                ),
            );
            return ExitCode::from(1);
        }
        let dir = target
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| ctx.root().to_path_buf());
        if let Err(e) = std::fs::create_dir_all(&dir) {
            report_error(
                args.json,
                "writeFailed",
                &format!("cannot create `{}`: {e}", dir.display()),
            );
            return ExitCode::from(1);
        }
        if let Err(e) = crate::session::grants::blocking_write_atomic(&target, &dir, &text) {
            report_error(args.json, "writeFailed", &e.to_string());
            return ExitCode::from(1);
        }
    }
    if args.json {
        let v = serde_json::json!({
            "file": (!args.dry_run).then(|| target.display().to_string()),
            "text": args.dry_run.then_some(&text),
            "rules": imported.rules,
            "skipped": imported.skipped,
        });
        print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ));
    } else {
        if args.dry_run {
            print_out(&text);
        }
        let mut report = if args.dry_run {
            format!(
                "{} rules translated (dry run, nothing written)\n",
                imported.rules.len()
            )
        } else {
            format!(
                "{} rules written to {}\n",
                imported.rules.len(),
                target.display()
            )
        };
        if !args.dry_run && !args.user {
            // A project file's allows apply only once the user trusts its content:
            // importing is not trusting, since the source may be a cloned
            // repository's settings.
            report.push_str(&format!(
                "Its allow rules apply once you trust it: khaelor-perm trust {}\n",
                ctx_root_for_hint(&target)
            ));
        }
        if !imported.skipped.is_empty() {
            report.push_str("Not translated:\n");
            for s in &imported.skipped {
                report.push_str(&format!("  {}  {}: {}\n", s.from, s.original, s.reason));
            }
        }
        eprint!("{}", terminal_safe(&report));
    }
    ExitCode::SUCCESS
}

/// The project directory of a `<root>/.khaelor/config.json` target, for the trust hint.
fn ctx_root_for_hint(target: &Path) -> String {
    target
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| target.display().to_string(), |p| p.display().to_string())
}

fn report_error(json: bool, code: &str, message: &str) {
    if json {
        let v = serde_json::json!({ "error": { "code": code, "message": message } });
        print_out(&format!("{v}\n"));
    } else {
        eprintln!("error: {}", terminal_safe(message));
    }
}

pub fn run_export(args: ExportArgs) -> ExitCode {
    let ctx = match context(args.root.as_deref(), None, args.home.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(args.json, &e),
    };
    let trust = super::trust::store_from(args.state_dir.as_deref());
    let policy = crate::policy::config::load_policy_trusted(
        ctx.root(),
        ctx.home(),
        args.managed_config.as_deref(),
        trust.as_ref(),
    );
    let out = match export(args.to, &policy, &ctx) {
        Ok(o) => o,
        Err(e) => {
            report_error(args.json, "brokenConfig", &e.to_string());
            return ExitCode::from(1);
        }
    };
    if args.json {
        print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&out).unwrap_or_default()
        ));
    } else {
        print_out(&out.text);
        let mut report = format!(
            "{} rules exported; not exported (the hook keeps enforcing them):\n",
            out.exported.len()
        );
        for n in &out.not_exported {
            report.push_str(&format!("  {}: {}\n", n.rule.describe(), n.reason));
        }
        eprint!("{}", terminal_safe(&report));
    }
    ExitCode::SUCCESS
}
