//! `khaelor-perm bundle keygen|build|sign|verify` for the security owner, and the
//! `--managed-url` flags every command that takes `--managed-config` shares.
//!
//! Owns the flags, reading and writing the files, and printing. The format, keys and
//! signatures are `crate::policy::bundle`; fetching and the cache are its `store`.
//!
//! Exit statuses: 0 done (`verify`: the bundle is good), 1 `verify` refused the
//! bundle, 2 usage or input error (a file that cannot be read or written, a bad key,
//! a config that is not a valid managed config).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use super::print_out;
use crate::policy::bundle::store::{self, BundleStatus, Refresh, Source};
use crate::policy::bundle::{Bundle, PUBLIC_PREFIX, PublicKey, SecretKey, generate_key_pair};

/// Exit status when `verify` refuses a bundle.
pub const EXIT_REFUSED: u8 = 1;

/// Default `--managed-poll-secs`.
pub const DEFAULT_POLL_SECS: u64 = 60;
/// Default `--managed-max-age`: seven days.
pub const DEFAULT_MAX_AGE_SECS: u64 = 7 * 24 * 3600;
/// How long a one-shot command (hook, check, rules, exec) waits for the bundle server.
pub const ONE_SHOT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the service waits for it.
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(10);

/// The managed layer as a signed bundle fetched from a URL (instead of
/// `--managed-config FILE`).
#[derive(Debug, Clone, clap::Args)]
pub struct ManagedFlags {
    /// Fetch the managed config as a signed bundle from URL (`http://`, `https://` or
    /// `file:///`); the last good bundle is kept in the state directory and used while
    /// the URL is unreachable. Needs `--managed-key`.
    #[arg(
        long,
        env = "KHAELOR_PERM_MANAGED_URL",
        value_name = "URL",
        conflicts_with = "managed_config",
        requires = "managed_key"
    )]
    pub managed_url: Option<String>,
    /// A key bundles may be signed by: `ed25519:<64 hex digits>`, or a file of such
    /// keys, one a line (repeatable; several keys allow a rotation).
    #[arg(
        long,
        env = "KHAELOR_PERM_MANAGED_KEY",
        value_name = "KEY|FILE",
        value_delimiter = ',',
        requires = "managed_url"
    )]
    pub managed_key: Vec<String>,
    /// Seconds between two requests to `--managed-url` (the service polls; a one-shot
    /// command asks again only when its cached copy was checked longer ago).
    #[arg(long, env = "KHAELOR_PERM_MANAGED_POLL_SECS", value_name = "SECS",
        default_value_t = DEFAULT_POLL_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub managed_poll_secs: u64,
    /// Seconds after the server last confirmed the bundle when it goes stale: its allow
    /// rules stop applying, its deny and ask rules stay [default: 7 days].
    #[arg(long, env = "KHAELOR_PERM_MANAGED_MAX_AGE", value_name = "SECS",
        default_value_t = DEFAULT_MAX_AGE_SECS, hide_default_value = true)]
    pub managed_max_age: u64,
}

impl ManagedFlags {
    /// The bundle source the flags name, if any.
    pub fn source(&self, timeout: Duration) -> Result<Option<Source>, String> {
        let Some(url) = &self.managed_url else {
            return Ok(None);
        };
        let file = url.strip_prefix("file://");
        if !(url.starts_with("http://") || url.starts_with("https://") || file.is_some()) {
            return Err(format!(
                "`--managed-url {url}` must be an `http://`, `https://` or `file:///` URL"
            ));
        }
        if file.is_some_and(|p| !p.starts_with('/')) {
            return Err(format!(
                "`--managed-url {url}` must name an absolute path (`file:///…`)"
            ));
        }
        let keys = read_keys(&self.managed_key)?;
        Ok(Some(Source {
            url: url.clone(),
            keys,
            poll: Duration::from_secs(self.managed_poll_secs),
            max_age: Duration::from_secs(self.managed_max_age),
            timeout,
        }))
    }
}

/// Every trusted key: literal keys and files of keys.
pub fn read_keys(values: &[String]) -> Result<Vec<PublicKey>, String> {
    let mut keys = Vec::new();
    for v in values {
        if v.trim().starts_with(PUBLIC_PREFIX) {
            keys.push(PublicKey::parse(v).map_err(|e| format!("`--managed-key`: {e}"))?);
            continue;
        }
        let text =
            std::fs::read_to_string(v).map_err(|e| format!("cannot read key file `{v}`: {e}"))?;
        let before = keys.len();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            keys.push(
                PublicKey::parse(line)
                    .map_err(|e| format!("key file `{v}` line {}: {e}", i + 1))?,
            );
        }
        if keys.len() == before {
            return Err(format!("key file `{v}` holds no key"));
        }
    }
    if keys.is_empty() {
        return Err("`--managed-url` needs at least one `--managed-key`".into());
    }
    Ok(keys)
}

/// The managed config file a one-shot command loads: `--managed-config` as given, or
/// the bundle of `--managed-url` (refreshed when due, the last good one otherwise).
/// A refused or failed fetch is a warning on stderr; no usable bundle at all is an
/// error (the command fails closed).
pub fn managed_path(
    managed_config: Option<&Path>,
    flags: &ManagedFlags,
    state_dir: Option<&Path>,
) -> Result<(Option<PathBuf>, Option<BundleStatus>), String> {
    let Some(src) = flags.source(ONE_SHOT_TIMEOUT)? else {
        return Ok((managed_config.map(Path::to_path_buf), None));
    };
    let state = match state_dir {
        Some(d) => d.to_path_buf(),
        None => crate::policy::trust::default_state_dir().ok_or(
            "no state directory for the managed bundle: set --state-dir, KHAELOR_PERM_STATE_DIR or HOME",
        )?,
    };
    let loaded = store::blocking_load(&src, &state, Refresh::IfDue, crate::model::rule::now_unix())
        .map_err(|e| e.to_string())?;
    if let Some(e) = &loaded.fetch_error {
        eprintln!(
            "khaelor-perm: managed bundle: {}; keeping version {}",
            crate::presentation::messages::terminal_safe(e),
            loaded.status.version
        );
    }
    if loaded.status.expired {
        eprintln!(
            "khaelor-perm: managed bundle version {} was last confirmed {} s ago, past its maximum age of {} s: its allow rules no longer apply",
            loaded.status.version, loaded.status.age_secs, loaded.status.max_age_secs
        );
    }
    Ok((Some(loaded.path), Some(loaded.status)))
}

/// One line for `rules`: the bundle in force.
pub fn status_line(s: &BundleStatus) -> String {
    let mut out = format!(
        "Managed bundle: version {} signed by key {}, created {}, from {}; fetched {} ({} s ago, maximum age {} s)",
        s.version, s.key_id, s.created, s.url, s.fetched_at, s.age_secs, s.max_age_secs
    );
    if s.expired {
        out.push_str("; EXPIRED: its allow rules no longer apply, its deny and ask rules do");
    }
    out.push('\n');
    if let Some(e) = &s.last_error {
        out.push_str(&format!("  last fetch: {e}\n"));
    }
    out
}

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Exit status: 0 done (verify: good), 1 verify refused the bundle, 2 usage or input error.\n\n\
Examples:\n  \
khaelor-perm bundle keygen --out team-2026\n  \
khaelor-perm bundle build --config managed.json --version 7 --out managed.draft\n  \
khaelor-perm bundle sign managed.draft --key team-2026.key --out managed.bundle\n  \
khaelor-perm bundle verify managed.bundle --key team-2026.pub")]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Make a signing key pair: PREFIX.key (secret, mode 0600) and PREFIX.pub.
    Keygen {
        /// Path prefix of the two files.
        #[arg(long, value_name = "PREFIX")]
        out: PathBuf,
    },
    /// Make an unsigned bundle (a draft) of a managed config file.
    Build {
        /// The managed config (what `--managed-config` reads); refused unless valid.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// The bundle's version: higher than every version published before.
        #[arg(long, value_name = "N")]
        version: u64,
        /// The creation time, RFC 3339 in UTC [default: now].
        #[arg(long, value_name = "TIME")]
        created: Option<String>,
        /// Where to write the draft.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Sign a draft (or re-sign a bundle, e.g. with a new key).
    Sign {
        /// The draft or bundle.
        input: PathBuf,
        /// The secret key file (`keygen`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Where to write the signed bundle.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Check a bundle's signature against trusted keys and its body as a managed config.
    Verify {
        /// The bundle.
        input: PathBuf,
        /// A trusted key or key file, as `--managed-key` (repeatable).
        #[arg(long, value_name = "KEY|FILE", required = true)]
        key: Vec<String>,
    },
}

pub fn run(args: Args) -> ExitCode {
    let done = match args.action {
        Action::Keygen { out } => keygen(&out),
        Action::Build {
            config,
            version,
            created,
            out,
        } => build(&config, version, created, &out),
        Action::Sign { input, key, out } => sign(&input, &key, &out),
        Action::Verify { input, key } => return verify(&input, &key),
    };
    match done {
        Ok(msg) => {
            print_out(&msg);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::presentation::messages::terminal_safe(&e)
            );
            ExitCode::from(super::error::EXIT_USAGE)
        }
    }
}

fn with_ext(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

fn keygen(prefix: &Path) -> Result<String, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let (secret, public) = generate_key_pair().map_err(|e| e.to_string())?;
    let key_path = with_ext(prefix, ".key");
    let pub_path = with_ext(prefix, ".pub");
    for p in [&key_path, &pub_path] {
        if p.exists() || p.symlink_metadata().is_ok() {
            return Err(format!(
                "`{}` exists; keygen never overwrites a key",
                p.display()
            ));
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&key_path)
        .map_err(|e| format!("cannot create `{}`: {e}", key_path.display()))?;
    f.write_all(secret.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("cannot write `{}`: {e}", key_path.display()))?;
    std::fs::write(&pub_path, format!("{}\n", public.text()))
        .map_err(|e| format!("cannot write `{}`: {e}", pub_path.display()))?;
    Ok(format!(
        "key id {}\nsecret key: {} (keep it off the machines that verify)\npublic key: {} ({})\n",
        public.id(),
        key_path.display(),
        pub_path.display(),
        public.text()
    ))
}

fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    if meta.len() > crate::policy::bundle::MAX_BUNDLE_BYTES {
        return Err(format!(
            "`{}`: {}",
            path.display(),
            crate::policy::bundle::BundleError::Oversize(meta.len())
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

fn build(
    config: &Path,
    version: u64,
    created: Option<String>,
    out: &Path,
) -> Result<String, String> {
    let body = read_file(config)?;
    let created = match created {
        Some(c) => c,
        None => jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
            .map_err(|e| e.to_string())?
            .to_string(),
    };
    let draft = Bundle::draft(version, &created, body)
        .map_err(|e| format!("`{}`: {e}", config.display()))?;
    let bytes = draft.draft_bytes();
    if bytes.len() as u64 > crate::policy::bundle::MAX_BUNDLE_BYTES {
        return Err(crate::policy::bundle::BundleError::Oversize(bytes.len() as u64).to_string());
    }
    std::fs::write(out, &bytes).map_err(|e| format!("cannot write `{}`: {e}", out.display()))?;
    Ok(format!(
        "draft version {version}, created {created}, {} body bytes: {}\n",
        draft.body.len(),
        out.display()
    ))
}

fn sign(input: &Path, key: &Path, out: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(key)
        .map_err(|e| format!("cannot read `{}`: {e}", key.display()))?;
    let key = SecretKey::parse(&text).map_err(|e| e.to_string())?;
    let bundle =
        Bundle::parse(&read_file(input)?).map_err(|e| format!("`{}`: {e}", input.display()))?;
    crate::policy::bundle::check_body(&bundle.body)
        .map_err(|e| format!("`{}`: {e}", input.display()))?;
    let bytes = bundle.sign(&key);
    if bytes.len() as u64 > crate::policy::bundle::MAX_BUNDLE_BYTES {
        return Err(crate::policy::bundle::BundleError::Oversize(bytes.len() as u64).to_string());
    }
    std::fs::write(out, &bytes).map_err(|e| format!("cannot write `{}`: {e}", out.display()))?;
    Ok(format!(
        "signed version {} with key {}: {}\n",
        bundle.version,
        key.public().id(),
        out.display()
    ))
}

fn verify(input: &Path, keys: &[String]) -> ExitCode {
    let keys = match read_keys(keys) {
        Ok(k) => k,
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::presentation::messages::terminal_safe(&e)
            );
            return ExitCode::from(super::error::EXIT_USAGE);
        }
    };
    let bytes = match read_file(input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::presentation::messages::terminal_safe(&e)
            );
            return ExitCode::from(super::error::EXIT_USAGE);
        }
    };
    match Bundle::parse(&bytes)
        .and_then(|b| b.verify(&keys).map(|k| (b.clone(), k.id().to_string())))
    {
        Ok((b, id)) => {
            print_out(&format!(
                "good: version {}, created {}, signed by key {id}, {} body bytes\n",
                b.version,
                b.created,
                b.body.len()
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "refused: {}",
                crate::presentation::messages::terminal_safe(&e.to_string())
            );
            ExitCode::from(EXIT_REFUSED)
        }
    }
}
