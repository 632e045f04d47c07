//! `khaelor-perm trust [DIR]`: trust (or `--revoke`, or `--list`) the current content of
//! a project's `.khaelor/config.json`, so its allow rules apply.
//!
//! Owns the flags and the printing. The store is `crate::policy::trust`; whether the managed
//! config forbids trust is read through `config`. Exit statuses: 0 done, 1 the managed
//! config forbids trusting, 2 usage or input error (no config file, relative path).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::error::{CliError, fail};
use super::print_out;
use crate::policy::config::{load_policy_trusted, project_config_path};
use crate::policy::trust::{TrustError, TrustStore};
use crate::presentation::messages::terminal_safe;

/// Exit status when the managed config forbids trusting project configs.
pub const EXIT_FORBIDDEN: u8 = 1;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Review the file first: its allow rules will apply silently to every call in the project.\n\
Exit status: 0 done, 1 trusting is forbidden by the managed config, 2 usage or input error."
)]
pub struct Args {
    /// Project root whose `.khaelor/config.json` is trusted (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Where the trust records live [default: $XDG_STATE_HOME/khaelor-perm or
    /// $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A managed config; `"trustProjectConfigs": false` there forbids trusting.
    #[arg(long, env = "KHAELOR_PERM_MANAGED_CONFIG", value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// Forget the trust instead of recording it.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,
    /// List the trusted files (with whether each still has the trusted content).
    #[arg(long)]
    pub list: bool,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// Trust an agent host's project file instead (its allow rules join the policy as
    /// host rules), given relative to DIR: `.claude/settings.json`,
    /// `.claude/settings.local.json`.
    #[arg(long, value_name = "FILE", conflicts_with = "list")]
    pub host_file: Option<PathBuf>,
}

/// The trust store from a `--state-dir` flag or the default location; `None` when no
/// location can be found (then nothing is trusted).
pub fn store_from(state_dir: Option<&Path>) -> Option<TrustStore> {
    state_dir
        .map(Path::to_path_buf)
        .or_else(crate::policy::trust::default_state_dir)
        .map(|d| TrustStore::new(&d))
}

pub fn run(args: Args) -> ExitCode {
    let Some(store) = store_from(args.state_dir.as_deref()) else {
        return fail(
            args.json,
            &CliError::new(
                "noStateDir",
                "no state directory: set --state-dir, KHAELOR_PERM_STATE_DIR, XDG_STATE_HOME or HOME",
            ),
        );
    };
    if args.list {
        return list(&store, args.json);
    }
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                return fail(
                    args.json,
                    &CliError::new("badRoot", format!("cannot read the current directory: {e}")),
                );
            }
        },
    };
    if !root.is_absolute() {
        return fail(
            args.json,
            &CliError::new(
                "badRoot",
                format!("`{}` is not an absolute path", root.display()),
            ),
        );
    }
    let root = match std::fs::canonicalize(&root) {
        Ok(r) if r.is_dir() => r,
        _ => {
            return fail(
                args.json,
                &CliError::new(
                    "badRoot",
                    format!("`{}` is not an existing directory", root.display()),
                ),
            );
        }
    };
    let file = match &args.host_file {
        None => project_config_path(&root),
        Some(f) => match host_file(&root, f) {
            Ok(p) => p,
            Err(msg) => return fail(args.json, &CliError::new("badHostFile", msg)),
        },
    };
    if args.revoke {
        return match store.blocking_revoke(&file) {
            Ok(was) => {
                let v = serde_json::json!({"file": file.display().to_string(), "status": "untrusted", "wasTrusted": was});
                if args.json {
                    print_out(&format!("{v}\n"));
                } else if was {
                    print_out(&terminal_safe(&format!("revoked: {}\n", file.display())));
                } else {
                    print_out(&terminal_safe(&format!(
                        "not trusted: {}\n",
                        file.display()
                    )));
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(args.json, &CliError::new("trustStore", e.to_string())),
        };
    }
    // Loaded only for the managed setting: no home config is involved in trusting.
    let policy = load_policy_trusted(
        &root,
        Path::new("/nonexistent"),
        args.managed_config.as_deref(),
        None,
    );
    if policy.trust_forbidden() {
        let e = TrustError::Forbidden;
        if args.json {
            let v =
                serde_json::json!({"error": {"code": "trustForbidden", "message": e.to_string()}});
            print_out(&format!("{v}\n"));
        } else {
            eprintln!("error: {e}");
        }
        return ExitCode::from(EXIT_FORBIDDEN);
    }
    let widening: Vec<String> = policy
        .ignored()
        .iter()
        .filter(|_| args.host_file.is_none())
        .flat_map(|i| i.rules.iter().cloned())
        .collect();
    match store.blocking_trust(&file) {
        Ok(record) => {
            if args.json {
                let v = serde_json::json!({
                    "file": file.display().to_string(),
                    "status": "trusted",
                    "sha256": record.sha256,
                    "appliedRules": widening,
                });
                print_out(&format!("{v}\n"));
            } else {
                let mut out = format!("trusted: {} (sha256 {})\n", file.display(), record.sha256);
                if args.host_file.is_some() {
                    out.push_str("its allow rules now apply as host rules\n");
                } else if widening.is_empty() {
                    out.push_str("it has no allow rules; its deny and ask rules applied already\n");
                } else {
                    out.push_str("these rules now apply:\n");
                    for r in &widening {
                        out.push_str(&format!("  {r}\n"));
                    }
                }
                out.push_str("any change to the file makes it untrusted again\n");
                print_out(&terminal_safe(&out));
            }
            ExitCode::SUCCESS
        }
        Err(e @ (TrustError::NoConfig(_) | TrustError::NotAFile(_))) => {
            fail(args.json, &CliError::new("noProjectConfig", e.to_string()))
        }
        Err(e) => fail(args.json, &CliError::new("trustStore", e.to_string())),
    }
}

/// A host's project file named relative to the root: one of the files the host grants
/// layer reads as shipped or local (`crate::hosts::grants`), nothing else.
fn host_file(root: &Path, f: &Path) -> Result<PathBuf, String> {
    let wanted = root.join(f);
    let known: Vec<PathBuf> = crate::hosts::Host::ALL
        .iter()
        .flat_map(|h| crate::hosts::grants::files(*h, root, Path::new("/nonexistent")))
        .filter(|hf| hf.level == crate::policy::rules::RuleSource::Project)
        .map(|hf| hf.path)
        .collect();
    if known.contains(&wanted) {
        Ok(wanted)
    } else {
        let names: Vec<String> = known
            .iter()
            .filter_map(|p| p.strip_prefix(root).ok())
            .map(|p| format!("`{}`", p.display()))
            .collect();
        Err(format!(
            "`{}` is not a host file khaelor-perm reads; expected one of {}",
            f.display(),
            names.join(", ")
        ))
    }
}

fn list(store: &TrustStore, json: bool) -> ExitCode {
    let records = match store.list() {
        Ok(r) => r,
        Err(e) => return fail(json, &CliError::new("trustStore", e.to_string())),
    };
    let rows: Vec<(String, String, &'static str)> = records
        .iter()
        .map(|r| {
            let status = match std::fs::read(&r.path) {
                Ok(bytes) => store.status(Path::new(&r.path), &bytes).as_str(),
                Err(_) => "missing",
            };
            (r.path.clone(), r.sha256.clone(), status)
        })
        .collect();
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(p, h, s)| serde_json::json!({"file": p, "sha256": h, "status": s}))
            .collect();
        print_out(&format!("{}\n", serde_json::Value::Array(v)));
    } else if rows.is_empty() {
        print_out("no trusted project configs\n");
    } else {
        let mut out = String::new();
        for (p, h, s) in rows {
            out.push_str(&format!("{s:<9}  {p}  sha256 {h}\n"));
        }
        print_out(&terminal_safe(&out));
    }
    ExitCode::SUCCESS
}
