//! Bash as the oracle: runs commands in a real bash inside a sandbox where nothing but
//! bash can run, records what bash tried to execute and which files it opened for
//! writing, and checks that against the analysis and the default-policy decision. The
//! commands the static evaluator computed code for run a second time in a layout of
//! the sandbox that also holds the evaluator's pure producers (`cat`, `base64`, …), and
//! what bash executed there is held to the evaluated code (`compare::strict`).
//!
//! Owns the pieces of that harness, one file each: `sandbox` (bubblewrap + strace, the
//! driver script, batches, time limits), `trace` (strace output -> per-command facts),
//! `compare` (the property and its reasons), `generate` (the seeded grammar-aware
//! generator), `inputs` (corpora, fixture tables and grammar snippets as command lists)
//! and `report` (counts, violations by reason, text/markdown/JSON). `programs` is the
//! program oracle: the real programs of the verified table, over a hostile world, judge
//! what "verified read-only" promises. It uses only the
//! public analysis API (`analysis::analyze`, `tools::bash_call`, `decide::decide`,
//! `config::Policy`) and never changes an analysis: it observes and judges.

pub mod compare;
pub mod generate;
pub mod inputs;
pub mod programs;
pub mod report;
pub mod sandbox;
pub mod trace;

use serde::Serialize;

/// One program bash tried to run, as bash handed it over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exec {
    /// The argument vector, `argv[0]` as bash passed it (a bare name for a program
    /// found on no PATH, a path for a program named by path).
    pub argv: Vec<String>,
    /// How the harness saw it.
    pub via: ExecVia,
    /// The directory it was run in, as the process' `chdir` calls name it; `None`
    /// when the trace does not know it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// How an execution attempt was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ExecVia {
    /// An `execve` system call (a path, or bash itself as `bash`/`sh`).
    Execve,
    /// The `command_not_found_handle` bash calls for a name found on no PATH.
    NotFound,
}

/// Whether a command ran to its end inside its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// Ran and ended (any exit status).
    Ran,
    /// Cut by the wall-clock limit; the facts are what was seen until then.
    TimedOut,
    /// Cannot be passed to `bash -c` at all (a NUL byte): no host can run it.
    Unrunnable,
}

/// What bash did with one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub status: RunStatus,
    /// Every execution attempt, in order, the harness' own excluded.
    pub executed: Vec<Exec>,
    /// Names bash searched for on PATH (the `stat` probes of a PATH lookup); a name
    /// searched and never handed to the not-found handler was looked up by `exec`,
    /// `command -v`, `type` or `hash`, or by a shell whose handler was removed.
    pub searched: Vec<String>,
    /// Files opened for writing (absolute, resolved against the opener's cwd; a path
    /// relative to an unknown directory keeps a `?/` prefix).
    pub writes: Vec<String>,
    /// `bash -n` rejected the text (a syntax error somewhere in it: bash runs the
    /// commands before it and none after). Only the producers' layout parses each
    /// command first; elsewhere this is false.
    pub syntax_error: bool,
    /// What `bash -n` said of the text, where the driver parsed it first: `Some(true)`
    /// exit 0, `Some(false)` any other end, `None` not parsed (or not seen).
    pub parsed: Option<bool>,
}
