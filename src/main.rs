//! The `khaelor-perm` binary: parses the command line and dispatches to `cli`.
#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use khaelor_perm::cli;

/// See Cargo.toml: the service's many small allocations.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--version`: the package version and the commit it was built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("KHAELOR_PERM_COMMIT"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "khaelor-perm",
    version = VERSION,
    about = "Decides allow / ask / deny before an AI coding agent runs a tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze one bash command and print what it asks to do.
    Analyze(cli::analyze::Args),
    /// Decide one tool call: allow (exit 0), ask (3), deny (4) or contain (5).
    Check(cli::check::Args),
    /// Run a command inside the sandbox (`--contain`): the project writable, protected
    /// paths read-only, secrets masked, no network.
    Exec(cli::exec::Args),
    /// Decide one tool call as `check` does and print how: the reading, the rules
    /// considered and why each did or did not match, the caps, "always", the decision.
    Explain(cli::explain::Args),
    /// List the effective permission rules with source and position; `--check` lints them.
    Rules(cli::rules::Args),
    /// Run the AST engine and the V1 lexer over files of commands and report where and
    /// why they disagree, with timings.
    Compare(cli::compare::Args),
    /// Run commands in real bash inside a sandbox and check the analysis against what
    /// bash executed and wrote.
    Oracle(cli::oracle::Args),
    /// Trust the current content of a project's `.khaelor/config.json`, so its allow
    /// rules apply (`--revoke`, `--list`).
    Trust(cli::trust::Args),
    /// Answer an agent host's pre-tool hook (claude, codex, gemini, opencode, qwen) from stdin.
    Hook(cli::hook::Args),
    /// Wire the hook into an agent host's settings (claude, codex, gemini, opencode, qwen).
    Install(cli::install::InstallArgs),
    /// Take out exactly what `install` added.
    Uninstall(cli::install::UninstallArgs),
    /// Check that a host is wired to this binary and answers (exit 0 when all holds).
    Doctor(cli::install::DoctorArgs),
    /// Print a session's calls: decisions, matched rules, and what happened after.
    Log(cli::log::Args),
    /// Propose the "always" rules that would have spared the prompts approved again and
    /// again, from the session logs; `--apply N` writes one.
    Suggest(cli::suggest::Args),
    /// Build, sign and verify the signed policy bundles `--managed-url` fetches.
    Bundle(cli::bundle::Args),
    /// Run the HTTP service until SIGTERM or SIGINT.
    Serve(cli::serve::Args),
    /// The terminal panel: answer the calls a running service holds pending (allow
    /// once, always, deny with a reason), live, from the keyboard.
    Approve(cli::approve::Args),
    /// Exit 0 when the service answers /healthz with 200 (for container health checks).
    Healthcheck(cli::healthcheck::Args),
    /// Print the service's OpenAPI document (YAML).
    Openapi(cli::openapi::Args),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(cli::completions::Args),
    /// Print the man page (roff), or a subcommand's page.
    Man(cli::man::Args),
}

/// The command line of `khaelor-perm hook …` alone. A host runs the hook once per tool
/// call, as a fresh process, so its start-up is paid on every call: clap building the
/// definitions of all twenty subcommands cost more instructions than the hook's whole
/// decision. With `hook` as the first argument only its own definition is built; the
/// names, the about line and the arguments are the same as in `Cli` (the tests compare
/// the help and the errors both give).
#[derive(Parser)]
#[command(
    name = "khaelor-perm",
    version = VERSION,
    about = "Decides allow / ask / deny before an AI coding agent runs a tool"
)]
struct HookCli {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Subcommand)]
enum HookCommand {
    /// Answer an agent host's pre-tool hook (claude, codex, gemini, opencode, qwen) from stdin.
    Hook(cli::hook::Args),
}

/// The command line of `khaelor-perm exec …` alone, for the same reason as `HookCli`:
/// every contained call is a fresh `exec` process, and building the other nineteen
/// subcommands' definitions is paid before the sandbox starts. Same name, about line,
/// version and arguments as in `Cli` (the tests compare them).
#[derive(Parser)]
#[command(
    name = "khaelor-perm",
    version = VERSION,
    about = "Decides allow / ask / deny before an AI coding agent runs a tool"
)]
struct ExecCli {
    #[command(subcommand)]
    command: ExecCommand,
}

#[derive(Subcommand)]
enum ExecCommand {
    /// Run a command inside the sandbox (`--contain`): the project writable, protected
    /// paths read-only, secrets masked, no network.
    Exec(cli::exec::Args),
}

fn main() -> ExitCode {
    let first = std::env::args_os().nth(1);
    if first.as_deref() == Some(OsStr::new("hook")) {
        let HookCommand::Hook(args) = HookCli::parse().command;
        return cli::hook::run(args);
    }
    if first.as_deref() == Some(OsStr::new("exec")) {
        let ExecCommand::Exec(args) = ExecCli::parse().command;
        return cli::exec::run(args);
    }
    match Cli::parse().command {
        Command::Analyze(args) => cli::analyze::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Exec(args) => cli::exec::run(args),
        Command::Explain(args) => cli::explain::run(args),
        Command::Rules(args) => cli::rules::run(args),
        Command::Compare(args) => cli::compare::run(args),
        Command::Oracle(args) => cli::oracle::run(args),
        Command::Hook(args) => cli::hook::run(args),
        Command::Install(args) => cli::install::install(args),
        Command::Uninstall(args) => cli::install::uninstall(args),
        Command::Doctor(args) => cli::install::doctor(args),
        Command::Log(args) => cli::log::run(args),
        Command::Suggest(args) => cli::suggest::run(args),
        Command::Serve(args) => cli::serve::run(args),
        Command::Bundle(args) => cli::bundle::run(args),
        Command::Approve(args) => cli::approve::run(args),
        Command::Trust(args) => cli::trust::run(args),
        Command::Healthcheck(args) => cli::healthcheck::run(args),
        Command::Openapi(args) => cli::openapi::run(args),
        Command::Completions(args) => cli::completions::run(args, Cli::command()),
        Command::Man(args) => cli::man::run(args, Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What clap prints or reports for these arguments (help, version and errors alike).
    fn outcome<P: Parser>(args: &[&str]) -> String {
        match P::try_parse_from(args) {
            Ok(_) => "parsed".to_string(),
            Err(e) => format!("{:?}: {}", e.kind(), e.render()),
        }
    }

    /// Each command line reads the same (parsed, or the same error and text) with a
    /// subcommand's own parser `P` as with the whole CLI.
    fn reads_as_whole<P: Parser>(cases: &[&[&str]]) {
        for args in cases {
            assert_eq!(
                outcome::<P>(args),
                outcome::<Cli>(args),
                "`{}` reads differently",
                args.join(" ")
            );
        }
    }

    #[test]
    fn the_hook_command_line_reads_as_in_the_whole_cli() {
        let cases: &[&[&str]] = &[
            &["khaelor-perm", "hook", "--help"],
            &["khaelor-perm", "hook", "-h"],
            &["khaelor-perm", "hook", "--version"],
            &["khaelor-perm", "hook"],
            &["khaelor-perm", "hook", "nosuchhost"],
            &["khaelor-perm", "hook", "claude", "--nosuchflag"],
            &["khaelor-perm", "hook", "claude", "--wait", "5"],
            &[
                "khaelor-perm",
                "hook",
                "claude",
                "--wait",
                "0",
                "--url",
                "http://x",
            ],
            &[
                "khaelor-perm",
                "hook",
                "codex",
                "--interactive",
                "--non-interactive",
            ],
            &["khaelor-perm", "hook", "claude", "extra"],
            &["khaelor-perm", "hook", "claude"],
            &[
                "khaelor-perm",
                "hook",
                "gemini",
                "--preset",
                "strict",
                "--root",
                "/p",
            ],
        ];
        reads_as_whole::<HookCli>(cases);
    }

    #[test]
    fn the_exec_command_line_reads_as_in_the_whole_cli() {
        let cases: &[&[&str]] = &[
            &["khaelor-perm", "exec", "--help"],
            &["khaelor-perm", "exec", "-h"],
            &["khaelor-perm", "exec", "--version"],
            &["khaelor-perm", "exec"],
            &["khaelor-perm", "exec", "--", "true"],
            &["khaelor-perm", "exec", "--contain"],
            &["khaelor-perm", "exec", "--contain", "true"],
            &["khaelor-perm", "exec", "--contain", "--", "true"],
            &[
                "khaelor-perm",
                "exec",
                "--contain",
                "--nosuchflag",
                "--",
                "true",
            ],
            &[
                "khaelor-perm",
                "exec",
                "--contain",
                "--profile",
                "x",
                "--",
                "true",
            ],
            &[
                "khaelor-perm",
                "exec",
                "--contain",
                "--profile",
                "read-only",
                "--root",
                "/p",
                "--",
                "bash",
                "-c",
                "make test",
            ],
            &[
                "khaelor-perm",
                "exec",
                "--contain",
                "--managed-config",
                "/m.json",
                "--managed-url",
                "https://x/b",
                "--",
                "true",
            ],
        ];
        reads_as_whole::<ExecCli>(cases);
    }

    #[test]
    fn the_exec_arguments_are_the_same_as_in_the_whole_cli() {
        let args = [
            "khaelor-perm",
            "exec",
            "--contain",
            "--profile",
            "project-network",
            "--root",
            "/p",
            "--home",
            "/h",
            "--state-dir",
            "/s",
            "--",
            "npm",
            "test",
            "--",
            "-x",
        ];
        let Ok(ExecCli {
            command: ExecCommand::Exec(fast),
        }) = ExecCli::try_parse_from(args)
        else {
            panic!("exec's own parser refused {args:?}");
        };
        let Ok(Cli {
            command: Command::Exec(whole),
        }) = Cli::try_parse_from(args)
        else {
            panic!("the whole CLI refused {args:?}");
        };
        assert_eq!(format!("{fast:?}"), format!("{whole:?}"));
    }

    #[test]
    fn the_hook_arguments_are_the_same_as_in_the_whole_cli() {
        let args = [
            "khaelor-perm",
            "hook",
            "qwen",
            "--state-dir",
            "/s",
            "--home",
            "/h",
            "--no-host-rules",
            "--non-interactive",
        ];
        let Ok(HookCli {
            command: HookCommand::Hook(fast),
        }) = HookCli::try_parse_from(args)
        else {
            panic!("the hook's own parser refused {args:?}");
        };
        let Ok(Cli {
            command: Command::Hook(whole),
        }) = Cli::try_parse_from(args)
        else {
            panic!("the whole CLI refused {args:?}");
        };
        assert_eq!(format!("{fast:?}"), format!("{whole:?}"));
    }
}
