//! `khaelor-perm analyze`: one bash command in, its `Analysis` out (the same JSON body
//! `/v1/analyze` returns), or a short human summary.

use super::print_out;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::analysis::{self, EngineChoice};
use crate::model::vocab::{Analysis, AnalysisContext};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    Ast,
    Lexer,
    Both,
}

impl From<EngineArg> for EngineChoice {
    fn from(e: EngineArg) -> Self {
        match e {
            EngineArg::Ast => EngineChoice::Ast,
            EngineArg::Lexer => EngineChoice::Lexer,
            EngineArg::Both => EngineChoice::Both,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which engine analyzes the command.
    #[arg(long, value_enum, default_value = "ast")]
    pub engine: EngineArg,
    /// The project root (absolute; default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// The working directory the command starts in (absolute; default: the root).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The home directory `~` and `$HOME` expand to (default: $HOME).
    #[arg(long)]
    pub home: Option<PathBuf>,
    /// Print the analysis as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The command; several words are joined with single spaces.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Builds the analysis context the CLI subcommands share: `--root` defaults to the
/// current directory, `--cwd` to the root, `--home` to `$HOME` (or `/` when unset).
pub fn context_from_flags(
    root: Option<&PathBuf>,
    cwd: Option<&PathBuf>,
    home: Option<&PathBuf>,
) -> Result<AnalysisContext, String> {
    let root = match root {
        Some(r) => r.clone(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let home = match home {
        Some(h) => h.clone(),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/")),
    };
    AnalysisContext::new(&root, cwd.map(PathBuf::as_path), &home)
        .map(|c| c.with_search_path(std::env::var_os("PATH").as_deref()))
        .map_err(|e| e.to_string())
}

pub fn run(args: Args) -> ExitCode {
    let command = args.command.join(" ");
    if command.trim().is_empty() {
        eprintln!("error: the command is empty");
        return ExitCode::from(2);
    }
    let ctx = match context_from_flags(args.root.as_ref(), args.cwd.as_ref(), args.home.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out = match EngineChoice::from(args.engine) {
        EngineChoice::Ast => {
            let a = analysis::analyze(&command, &ctx);
            if args.json {
                serde_json::to_string_pretty(&a)
            } else {
                Ok(summary(&a))
            }
        }
        EngineChoice::Lexer => {
            let a = analysis::analyze_lexer(&command, &ctx);
            if args.json {
                serde_json::to_string_pretty(&a)
            } else {
                Ok(summary(&a))
            }
        }
        EngineChoice::Both => {
            let b = analysis::analyze_both(&command, &ctx);
            if args.json {
                serde_json::to_string_pretty(&b)
            } else {
                Ok(format!(
                    "{}\n--- lexer ---\n{}\nengines agree: {}",
                    summary(&b.ast),
                    summary(&b.lexer),
                    if b.agree { "yes" } else { "no" }
                ))
            }
        }
    };
    match out {
        Ok(s) => {
            print_out(&format!("{s}\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot serialize the analysis: {e}");
            ExitCode::from(1)
        }
    }
}

/// A short human summary of an analysis.
pub fn summary(a: &Analysis) -> String {
    let mut s = format!(
        "class: {}  (engine: {})\n",
        a.class.as_str(),
        a.engine.as_str()
    );
    if let Some(f) = &a.fallback {
        s.push_str(&format!("fallback: {} ({})\n", f.reason.as_str(), f.detail));
    }
    if let Some(h) = &a.hardline {
        s.push_str(&format!("HARDLINE: `{}` on `{}`\n", h.rule, h.rendering));
    }
    s.push_str("parts:\n");
    for (i, p) in a.parts.iter().enumerate() {
        s.push_str(&format!(
            "  {}. {}  (cwd: {})\n",
            i + 1,
            p.text,
            p.cwd.as_deref().unwrap_or("unknown")
        ));
    }
    s.push_str("requests:\n");
    for r in &a.requests {
        s.push_str(&format!("  {:<26} {}\n", r.capability.as_str(), r.subject));
    }
    if a.always_patterns.is_empty() {
        s.push_str("always: none offered\n");
    } else {
        s.push_str(&format!("always: {}\n", a.always_patterns.join(" | ")));
    }
    for n in &a.risk_notes {
        s.push_str(&format!("  ⚠ {n}\n"));
    }
    s.trim_end().to_string()
}
