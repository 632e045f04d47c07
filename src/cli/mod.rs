//! The command-line front end: one file per subcommand, each with its clap `Args` and a
//! `run` that prints and returns the exit status. `main.rs` only dispatches.
//!
//! Exit statuses: 0 success (for `check`: allow), 2 bad input or usage; `check` also
//! 3 ask, 4 deny and 5 contain (and `explain` the same); `exec --contain` the command's own, or 126 when the
//! sandbox cannot run it (nothing ran); `rules` 1 for a broken config or (with `--check`) shadowed rules.
//! `compare` 0 success, 2 usage or unreadable file. `oracle` 0 no hard violation, 1 hard
//! violations, 2 usage, unreadable file or no working sandbox. `hook` exits 0 whatever
//! happens (the host reads the answer it prints; see `hook.rs`). `install`/`uninstall`
//! 0 done, 2 usage or a file they cannot edit; `doctor` 0 every check holds, 1 not.
//! `log` 0 printed, 2 no such session. `suggest` 0 printed or applied, 2 no state
//! directory, a bad `--since` or a suggestion it cannot write.

pub mod analyze;
pub mod approve;
pub mod bundle;
pub mod check;
pub mod compare;
pub mod completions;
pub mod error;
pub mod exec;
pub mod explain;
pub mod healthcheck;
pub mod hook;
pub mod install;
pub mod log;
pub mod man;
pub mod openapi;
pub mod oracle;
pub mod rules;
pub mod rules_interop;
pub mod serve;
pub mod suggest;
pub mod trust;

/// The state directory a command reads and writes: `given` (`--state-dir`), else the
/// default `serve` uses.
pub fn state_dir(given: Option<&std::path::Path>) -> Result<std::path::PathBuf, String> {
    match given {
        Some(d) => Ok(d.to_path_buf()),
        None => serve::default_state_dir().ok_or_else(|| {
            "no state directory: set --state-dir, KHAELOR_PERM_STATE_DIR, XDG_STATE_HOME or HOME"
                .to_string()
        }),
    }
}

/// Writes `text` to stdout. A closed pipe (`khaelor-perm rules | head`) is not an
/// error worth a panic: the reader has what it wanted.
pub fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
