//! The managed bundle on this machine: fetching it (`http://`, `https://`, `file://`,
//! with ETag / If-None-Match), the last good bundle kept in the state directory, the
//! maximum age, and the managed config file the policy reads.
//!
//! Owns `<state>/managed-bundle/`: `bundle` (the last good bundle, exactly as fetched),
//! `state.json` (where it came from, its ETag, the highest version ever accepted, when
//! the server last confirmed it and when it was last tried), `managed.json` (the managed
//! config the policy loads: the body itself, or while the bundle is past its maximum
//! age what it still imposes, `bundle::narrowed`) and `lock` (writers take it).
//!
//! Whatever goes wrong with a fetch (unreachable, a refusal: bad signature, unknown
//! key, rollback, oversize, invalid body) changes nothing on disk but the error and the
//! time of the attempt: the last good bundle stays in force. The cached bundle is
//! verified again on every load against the keys trusted now, so removing a key stops
//! its bundles at once. Format, keys and narrowing are the parent's.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Bundle, BundleError, MAX_BUNDLE_BYTES, PublicKey, narrowed};

/// The directory under the state directory.
pub const DIR: &str = "managed-bundle";

/// Where bundles come from and how they are trusted.
#[derive(Debug, Clone)]
pub struct Source {
    /// `http://…`, `https://…` or `file:///…`.
    pub url: String,
    /// Every key a bundle may be signed by (several during a rotation).
    pub keys: Vec<PublicKey>,
    /// How often the server is asked again.
    pub poll: Duration,
    /// Past this since the server last confirmed the bundle, its allows stop applying.
    pub max_age: Duration,
    /// How long one fetch may take.
    pub timeout: Duration,
}

/// When `blocking_load` asks the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// When the last attempt is older than the poll interval (the one-shot commands).
    IfDue,
    /// Now (the service's poller and its start).
    Now,
}

/// What `rules` and `GET /v1/rules` show about the managed bundle in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BundleStatus {
    /// Where bundles are fetched from.
    pub url: String,
    /// The version of the bundle in force.
    pub version: u64,
    /// The id of the key that signed it.
    pub key_id: String,
    /// When it was built (as its signer wrote it).
    pub created: String,
    /// When the server last delivered or confirmed it (RFC 3339).
    pub fetched_at: String,
    /// Seconds since then.
    pub age_secs: u64,
    /// `--managed-max-age`.
    pub max_age_secs: u64,
    /// Past the maximum age: the bundle's allow rules no longer apply (its denies and
    /// asks do).
    pub expired: bool,
    /// Why the last fetch did not replace the bundle, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The managed config file the policy reads.
    pub file: String,
}

/// A bundle in force.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The managed config file to load as the managed layer.
    pub path: PathBuf,
    pub status: BundleStatus,
    /// This call's fetch failed or was refused: why (the bundle in force is the last
    /// good one).
    pub fetch_error: Option<String>,
}

/// Why there is no managed bundle to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("no managed bundle: none was fetched from `{url}` ({why}) and none is cached")]
    NoBundle { url: String, why: String },
    #[error(
        "the cached managed bundle cannot be used ({why}) and none could be fetched from `{url}` ({fetch})"
    )]
    CachedRefused {
        url: String,
        why: String,
        fetch: String,
    },
    #[error("managed bundle cache `{path}`: {message}")]
    Io { path: String, message: String },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(default)]
    url: String,
    #[serde(default)]
    etag: Option<String>,
    /// The highest version ever accepted here (the rollback floor).
    #[serde(default)]
    version: Option<u64>,
    /// When the server last delivered or confirmed the bundle (Unix seconds).
    #[serde(default)]
    fetched_at: Option<i64>,
    /// When a fetch was last tried (Unix seconds).
    #[serde(default)]
    attempted_at: Option<i64>,
    #[serde(default)]
    last_error: Option<String>,
}

enum Fetched {
    NotModified,
    Body {
        bytes: Vec<u8>,
        etag: Option<String>,
    },
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The cache directory of a state directory.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join(DIR)
}

/// The cache directory `path` is the managed config of, if it is one
/// (`<state>/managed-bundle/managed.json`): KHAELOR's own files, as protected as the
/// trust store.
pub fn cache_dir_of(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    (path.file_name()? == "managed.json" && dir.file_name()? == DIR).then(|| dir.to_path_buf())
}

/// Fetches when due (or now), keeps the result if it is good, and returns the bundle in
/// force with the managed config file written for it. `now` is Unix seconds.
pub fn blocking_load(
    src: &Source,
    state_dir: &Path,
    refresh: Refresh,
    now: i64,
) -> Result<Loaded, StoreError> {
    let dir = dir(state_dir);
    fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    let meta = read_meta(&dir);
    let due = match refresh {
        Refresh::Now => true,
        Refresh::IfDue => {
            let last = meta.attempted_at.max(meta.fetched_at).unwrap_or(i64::MIN);
            let poll = i64::try_from(src.poll.as_secs()).unwrap_or(i64::MAX);
            meta.url != src.url || now.saturating_sub(last) >= poll || !dir.join("bundle").is_file()
        }
    };
    let mut fetch_error = None;
    if due {
        let etag = meta.etag.clone().filter(|_| {
            // Only the same URL's ETag, for a bundle that still verifies, may be
            // confirmed by a 304.
            meta.url == src.url && cached(&dir, &src.keys).is_ok()
        });
        let outcome = fetch(src, etag.as_deref()).and_then(|f| accept(&dir, src, f, now));
        if let Err(msg) = outcome {
            record_failure(&dir, src, now, &msg)?;
            fetch_error = Some(msg);
        }
    }
    let meta = read_meta(&dir);
    let bundle = match cached(&dir, &src.keys) {
        Ok(b) => b,
        Err(why) => {
            return Err(match (dir.join("bundle").is_file(), fetch_error) {
                (true, fetch) => StoreError::CachedRefused {
                    url: src.url.clone(),
                    why,
                    fetch: fetch.unwrap_or_else(|| "not tried yet: it is not due".into()),
                },
                (false, fetch) => StoreError::NoBundle {
                    url: src.url.clone(),
                    why: fetch.unwrap_or(why),
                },
            });
        }
    };
    let fetched_at = meta.fetched_at.unwrap_or(0);
    let age = u64::try_from(now.saturating_sub(fetched_at)).unwrap_or(0);
    let expired = meta.fetched_at.is_none() || age > src.max_age.as_secs();
    let key_id = bundle.key_id.clone().unwrap_or_default();
    let body = bundle
        .body_text()
        .map_err(|e| io_err(&dir.join("bundle"), e))?;
    let effective = if expired {
        let why = format!(
            "Derived by khaelor-perm from managed bundle version {} (key {key_id}), fetched from\n{}\n{age} s ago, past its maximum age of {} s: its allow rules no longer\napply and its contain rules ask; its deny and ask rules stay.",
            bundle.version,
            src.url,
            src.max_age.as_secs()
        );
        narrowed(body, &why).map_err(|e| io_err(&dir.join("bundle"), e))?
    } else {
        body.to_string()
    };
    let path = dir.join("managed.json");
    if fs::read(&path).ok().as_deref() != Some(effective.as_bytes()) {
        let _lock = lock(&dir)?;
        write_atomically(&path, effective.as_bytes())?;
    }
    let fetched = jiff::Timestamp::from_second(fetched_at)
        .map(|t| t.to_string())
        .unwrap_or_default();
    Ok(Loaded {
        status: BundleStatus {
            url: src.url.clone(),
            version: bundle.version,
            key_id,
            created: bundle.created.clone(),
            fetched_at: fetched,
            age_secs: age,
            max_age_secs: src.max_age.as_secs(),
            expired,
            last_error: meta.last_error,
            file: path.display().to_string(),
        },
        path,
        fetch_error,
    })
}

/// When the bundle in force can no longer be used (its cache stopped verifying), the
/// managed config file the service already loads keeps only what narrows: its allow
/// rules go, its deny and ask rules stay (`bundle::narrowed`).
pub fn blocking_fail_closed(state_dir: &Path, why: &str) -> Result<(), StoreError> {
    let dir = dir(state_dir);
    let path = dir.join("managed.json");
    let _lock = lock(&dir)?;
    let text = fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
    let header =
        format!("Narrowed by khaelor-perm: the managed bundle can no longer be used:\n{why}");
    let narrowed = narrowed(&text, &header).map_err(|e| io_err(&path, e))?;
    write_atomically(&path, narrowed.as_bytes())
}

/// The cached bundle, verified with the keys trusted now.
fn cached(dir: &Path, keys: &[PublicKey]) -> Result<Bundle, String> {
    let path = dir.join("bundle");
    let bytes = read_capped(&path).map_err(|e| match e {
        ReadError::Missing => "nothing is cached".to_string(),
        ReadError::Other(m) => m,
    })?;
    let b = Bundle::parse(&bytes).map_err(|e| e.to_string())?;
    b.verify(keys).map_err(|e| e.to_string())?;
    Ok(b)
}

/// Checks a fetched bundle and, if it is good, makes it the bundle in force.
fn accept(dir: &Path, src: &Source, fetched: Fetched, now: i64) -> Result<(), String> {
    let _lock = lock(dir).map_err(|e| e.to_string())?;
    let mut meta = read_meta(dir);
    let (bytes, etag) = match fetched {
        Fetched::NotModified => {
            meta.fetched_at = Some(now);
            meta.attempted_at = Some(now);
            meta.last_error = None;
            meta.url = src.url.clone();
            return write_meta(dir, &meta).map_err(|e| e.to_string());
        }
        Fetched::Body { bytes, etag } => (bytes, etag),
    };
    let refuse = |e: BundleError| format!("refused the bundle from `{}`: {e}", src.url);
    let bundle = Bundle::parse(&bytes).map_err(refuse)?;
    bundle.verify(&src.keys).map_err(refuse)?;
    if let Some(have) = meta.version {
        if bundle.version < have {
            return Err(refuse(BundleError::Rollback {
                got: bundle.version,
                have,
            }));
        }
        if bundle.version == have
            && let Ok(old) = read_capped(&dir.join("bundle"))
            && let Ok(old) = Bundle::parse(&old)
            && old.body != bundle.body
        {
            return Err(refuse(BundleError::VersionReused(have)));
        }
    }
    write_atomically(&dir.join("bundle"), &bytes).map_err(|e| e.to_string())?;
    meta.version = Some(
        meta.version
            .map_or(bundle.version, |v| v.max(bundle.version)),
    );
    meta.etag = etag;
    meta.fetched_at = Some(now);
    meta.attempted_at = Some(now);
    meta.last_error = None;
    meta.url = src.url.clone();
    write_meta(dir, &meta).map_err(|e| e.to_string())
}

fn record_failure(dir: &Path, src: &Source, now: i64, msg: &str) -> Result<(), StoreError> {
    let _lock = lock(dir)?;
    let mut meta = read_meta(dir);
    if meta.url != src.url {
        // A new URL: its first answer is still owed, and an old ETag means nothing there.
        meta.etag = None;
        meta.url = src.url.clone();
    }
    meta.attempted_at = Some(now);
    meta.last_error = Some(msg.to_string());
    write_meta(dir, &meta)
}

/// One request to the source: a bundle, or "not modified" for `etag`.
fn fetch(src: &Source, etag: Option<&str>) -> Result<Fetched, String> {
    if let Some(path) = src.url.strip_prefix("file://") {
        let bytes = read_capped(Path::new(path)).map_err(|e| match e {
            ReadError::Missing => format!("cannot fetch `{}`: no such file", src.url),
            ReadError::Other(m) => format!("cannot fetch `{}`: {m}", src.url),
        })?;
        return Ok(Fetched::Body { bytes, etag: None });
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(src.timeout))
        .http_status_as_error(false)
        .max_redirects(5)
        .build()
        .into();
    let mut req = agent.get(&src.url);
    if let Some(e) = etag {
        req = req.header("if-none-match", e);
    }
    let mut resp = req
        .call()
        .map_err(|e| format!("cannot fetch `{}`: {e}", src.url))?;
    let status = resp.status().as_u16();
    if status == 304 {
        return if etag.is_some() {
            Ok(Fetched::NotModified)
        } else {
            Err(format!(
                "`{}` answered 304 to a request without an ETag",
                src.url
            ))
        };
    }
    if status != 200 {
        return Err(format!(
            "cannot fetch `{}`: the server answered {status}",
            src.url
        ));
    }
    let etag = resp
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let oversize = |n: u64| {
        format!(
            "refused the bundle from `{}`: {}",
            src.url,
            BundleError::Oversize(n)
        )
    };
    if let Some(n) = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n > MAX_BUNDLE_BYTES)
    {
        return Err(oversize(n));
    }
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(MAX_BUNDLE_BYTES)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => oversize(MAX_BUNDLE_BYTES + 1),
            e => format!("cannot fetch `{}`: {e}", src.url),
        })?;
    Ok(Fetched::Body { bytes, etag })
}

enum ReadError {
    Missing,
    Other(String),
}

/// A regular file of at most `MAX_BUNDLE_BYTES`.
fn read_capped(path: &Path) -> Result<Vec<u8>, ReadError> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Other(e.to_string())),
    };
    if !meta.is_file() {
        return Err(ReadError::Other("not a regular file".into()));
    }
    if meta.len() > MAX_BUNDLE_BYTES {
        return Err(ReadError::Other(
            BundleError::Oversize(meta.len()).to_string(),
        ));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_BUNDLE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| ReadError::Other(e.to_string()))?;
    if bytes.len() as u64 > MAX_BUNDLE_BYTES {
        return Err(ReadError::Other(
            BundleError::Oversize(bytes.len() as u64).to_string(),
        ));
    }
    Ok(bytes)
}

fn read_meta(dir: &Path) -> Meta {
    fs::read(dir.join("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_meta(dir: &Path, meta: &Meta) -> Result<(), StoreError> {
    let path = dir.join("state.json");
    let bytes = serde_json::to_vec_pretty(meta).map_err(|e| io_err(&path, e))?;
    write_atomically(&path, &bytes)
}

/// The directory's advisory lock, held while its files are replaced, so two processes
/// never interleave a read of the rollback floor with another's write.
fn lock(dir: &Path) -> Result<fs::File, StoreError> {
    let path = dir.join("lock");
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_err(&path, e))?;
    f.lock().map_err(|e| io_err(&path, e))?;
    Ok(f)
}

/// Temp file in the same directory, fsync, rename, fsync the directory.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        fs::File::open(dir).and_then(|d| d.sync_all())
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::SecretKey;
    use super::*;

    fn key(seed: u8) -> SecretKey {
        SecretKey::from_seed(&[seed; 32]).unwrap()
    }

    fn bundle(version: u64, body: &str, k: &SecretKey) -> Vec<u8> {
        Bundle::draft(version, "2026-12-05T19:40:00Z", body.as_bytes().to_vec())
            .unwrap()
            .sign(k)
    }

    fn source(file: &Path, keys: Vec<PublicKey>) -> Source {
        Source {
            url: format!("file://{}", file.display()),
            keys,
            poll: Duration::from_secs(60),
            max_age: Duration::from_secs(100),
            timeout: Duration::from_secs(2),
        }
    }

    const DENY: &str = r#"{"permissions":{"process.execute":{"curl *":"deny","ls":"allow"}}}"#;

    #[test]
    fn rollback_is_refused_and_the_last_good_bundle_stays() {
        let t = tempfile::tempdir().unwrap();
        let served = t.path().join("served");
        let src = source(&served, vec![key(1).public()]);
        fs::write(&served, bundle(5, DENY, &key(1))).unwrap();
        let a = blocking_load(&src, t.path(), Refresh::Now, 1000).unwrap();
        assert_eq!(a.status.version, 5);
        assert!(a.fetch_error.is_none());
        fs::write(&served, bundle(4, "{}", &key(1))).unwrap();
        let b = blocking_load(&src, t.path(), Refresh::Now, 1001).unwrap();
        assert_eq!(b.status.version, 5);
        assert!(b.fetch_error.unwrap().contains("rollback refused"));
        assert_eq!(fs::read_to_string(&b.path).unwrap(), DENY);
    }

    #[test]
    fn past_the_maximum_age_the_allows_go_and_the_denies_stay() {
        let t = tempfile::tempdir().unwrap();
        let served = t.path().join("served");
        let src = source(&served, vec![key(1).public()]);
        fs::write(&served, bundle(1, DENY, &key(1))).unwrap();
        blocking_load(&src, t.path(), Refresh::Now, 1000).unwrap();
        fs::remove_file(&served).unwrap();
        let l = blocking_load(&src, t.path(), Refresh::IfDue, 1000 + 101).unwrap();
        assert!(l.status.expired);
        let text = fs::read_to_string(&l.path).unwrap();
        assert!(
            text.contains("curl *") && !text.contains("\"ls\""),
            "{text}"
        );
    }

    #[test]
    fn no_bundle_and_none_cached_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        let src = source(&t.path().join("absent"), vec![key(1).public()]);
        let e = blocking_load(&src, t.path(), Refresh::IfDue, 1000).unwrap_err();
        assert!(matches!(e, StoreError::NoBundle { .. }), "{e}");
    }
}
