//! `khaelor-perm exec --contain [--profile P] [--root DIR] -- COMMAND…`: runs a command
//! inside the sandbox (`crate::contain`). This is what a contained call is rewritten
//! to; a person can run it too.
//!
//! Translation only: the profile is built from the project and the rules as they are
//! now (never taken from the command line beyond its name), the command's exit status,
//! stdout and stderr pass through, and the sandbox's message follows a failure it may
//! have caused. Where the sandbox cannot be built, the command does not run at all.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;

use crate::contain;
use crate::model::contain::ProfileName;

/// Exit status when the sandbox cannot run the command (nothing ran), as a shell's
/// "cannot execute".
pub const EXIT_CANNOT_CONTAIN: u8 = 126;

#[derive(Debug, ClapArgs)]
#[command(after_help = "\
Profiles:\n  \
project          the project writable (protected paths read-only), secrets masked, no network\n  \
project-network  the same with the host's network\n\n\
Examples:\n  \
khaelor-perm exec --contain -- npm test\n  \
khaelor-perm exec --contain --root ~/src/app -- bash -c 'cd web && yarn test'")]
pub struct Args {
    /// Run the command inside the sandbox (the only way `exec` runs anything).
    #[arg(long, required = true)]
    pub contain: bool,
    /// The sandbox profile.
    #[arg(long, default_value = "project", value_parser = parse_profile)]
    pub profile: ProfileName,
    /// The project root (writable inside the sandbox); default: the current directory.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// HOME, whose credential stores are masked (default: `$HOME`).
    #[arg(long, env = "HOME")]
    pub home: Option<PathBuf>,
    /// A managed config whose deny and ask rules no other layer can loosen (its read
    /// rules mask what they name, as they make `decide` ask).
    #[arg(long, env = "KHAELOR_PERM_MANAGED_CONFIG", value_name = "FILE")]
    pub managed_config: Option<PathBuf>,
    /// The managed layer as a signed bundle (`--managed-url`, `--managed-key`, …).
    #[command(flatten)]
    pub bundle: crate::cli::bundle::ManagedFlags,
    /// Where the managed bundle is cached (with `--managed-url`) [default:
    /// $XDG_STATE_HOME/khaelor-perm or $HOME/.local/state/khaelor-perm].
    #[arg(long, env = "KHAELOR_PERM_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<String>,
}

fn parse_profile(s: &str) -> Result<ProfileName, String> {
    ProfileName::parse(s)
        .ok_or_else(|| format!("unknown profile `{s}`, expected `project` or `project-network`"))
}

fn fail(msg: &str) -> ExitCode {
    eprintln!(
        "khaelor-perm: the command did not run: {}",
        crate::presentation::messages::terminal_safe(msg)
    );
    ExitCode::from(EXIT_CANNOT_CONTAIN)
}

pub fn run(args: Args) -> ExitCode {
    // No probe here (it would start a second sandbox per command): a sandbox that
    // cannot start ends before the command runs, with bubblewrap's own message.
    let Some(bwrap) = contain::run::bwrap() else {
        return fail(&contain::Unavailable::NoBubblewrap.to_string());
    };
    let cwd = match std::env::current_dir().and_then(std::fs::canonicalize) {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot read the current directory: {e}")),
    };
    let root = match args
        .root
        .clone()
        .map_or(Ok(cwd.clone()), std::fs::canonicalize)
    {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot read the project root: {e}")),
    };
    if !crate::model::paths::is_inside(&cwd, &root) {
        return fail(&format!(
            "the current directory `{}` is outside the project `{}`, which is all the sandbox lets a command write",
            cwd.display(),
            root.display()
        ));
    }
    let Some(home) = args.home.clone() else {
        return fail("`HOME` is not set; pass `--home DIR`");
    };
    // The rules the hook decided with, as far as they can mask more: the managed
    // config and every host's own rules (their read asks and denies mask too). No
    // trust store: an untrusted project's allows are ignored, which only masks more.
    let managed = match super::bundle::managed_path(
        args.managed_config.as_deref(),
        &args.bundle,
        args.state_dir.as_deref(),
    ) {
        Ok((m, _)) => m,
        Err(e) => return fail(&e),
    };
    let layers = crate::policy::config::load_layers(&root, &home, managed.as_deref(), None, None);
    let (layers, _) = crate::hosts::grants::add_to(layers, &crate::hosts::Host::ALL, &home);
    let policy = layers.build();
    let cache = contain::cache::dir(&home, &root);
    let (profile, trace) =
        match contain::cache::build(&root, &home, &policy, args.profile, cache.as_deref()) {
            Ok(p) => p,
            Err(e) => return fail(&e.to_string()),
        };
    let outcome = match contain::run::run(&bwrap, &profile, &trace, &home, &cwd, &args.command) {
        Ok(o) => o,
        Err(e) => return fail(&format!("cannot start bubblewrap: {e}")),
    };
    if let Some(msg) = contain::run::refusal_message(&profile, &outcome) {
        eprint!("{msg}");
    }
    ExitCode::from(u8::try_from(outcome.status).unwrap_or(1))
}
