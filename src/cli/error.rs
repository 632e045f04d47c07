//! The usage and input errors every subcommand prints the same way: `error: …` on
//! stderr, or `{"error": {"code", "message"}}` with `--json`, and exit status 2.
//!
//! Shared by the subcommands, so it sits below them: it imports none of them.

use std::process::ExitCode;

use super::print_out;

/// Exit status for a usage or input error (clap's own usage errors use 2 as well).
pub const EXIT_USAGE: u8 = 2;

/// A usage or input problem, printed as `error: …` (or as JSON with `--json`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub code: &'static str,
    pub message: String,
}

impl CliError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        CliError {
            code,
            message: message.into(),
        }
    }
}

/// Prints a usage error in the requested form and returns exit status 2.
pub fn fail(json: bool, e: &CliError) -> ExitCode {
    if json {
        let v = serde_json::json!({ "error": { "code": e.code, "message": e.message } });
        print_out(&format!("{v}\n"));
    } else {
        // The message can quote a patch line or a config value: no control codes to a terminal.
        eprintln!(
            "error: {}",
            crate::presentation::messages::terminal_safe(&e.to_string())
        );
    }
    ExitCode::from(EXIT_USAGE)
}
