//! Signed policy bundles: the managed config (exactly what `--managed-config` reads)
//! with a version, a creation time and the signer's key id, signed with ed25519.
//!
//! Owns the bundle format, the keys, signing and verifying, checking that a body is a
//! valid managed config, and what an expired bundle still imposes (`narrowed`).
//! Fetching, the cache on disk and the maximum age are `bundle::store`; the flags are
//! `crate::cli::bundle`. Nothing here reads the network.
//!
//! The format (text header, the body's bytes as they are, a signature trailer):
//!
//! ```text
//! khaelor-perm bundle 1\n
//! version 42\n
//! created 2026-12-05T19:40:00Z\n
//! key 3f1c0a9b2d4e5f60\n
//! body 1234\n
//! <exactly 1234 bytes of the managed config>
//! \nsignature <128 hex digits>\n
//! ```
//!
//! The signature covers every byte from the start of the file through the body's last
//! byte, exactly as they are in the file: nothing is re-serialised before verifying. The
//! header is strict (these five lines, this order, one space, `\n` endings, a version in
//! decimal without leading zeros, an RFC 3339 UTC time ending in `Z`, the body's
//! length), so one bundle has one spelling. A draft (`bundle build`) is the same without
//! the `key` line and the trailer; `bundle sign` adds both.

pub mod store;

use std::fmt;

use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use sha2::{Digest, Sha256};

use crate::policy::config::parse_config_with_settings;
use crate::policy::presets::Preset;
use crate::policy::rules::{Action, PermissionRule, RuleSource};

/// Largest bundle accepted, header and signature included (a managed config is a few
/// kilobytes).
pub const MAX_BUNDLE_BYTES: u64 = 1024 * 1024;

const MAGIC: &str = "khaelor-perm bundle 1\n";
const SIGNATURE_PREFIX: &str = "\nsignature ";
/// The prefix of a public key's text (`--managed-key`, `*.pub` files).
pub const PUBLIC_PREFIX: &str = "ed25519:";
/// The prefix of a secret key file's text.
pub const SECRET_PREFIX: &str = "ed25519-secret:";

/// Why a bundle or a key was refused; each message says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("bundle is larger than the cap of {MAX_BUNDLE_BYTES} bytes ({0} bytes or more)")]
    Oversize(u64),
    #[error("not a bundle: {0}")]
    Malformed(String),
    #[error("bundle is an unsigned draft: sign it with `khaelor-perm bundle sign`")]
    Unsigned,
    #[error("bundle is signed by key `{0}`, which is not among the trusted keys (--managed-key)")]
    UnknownKey(String),
    #[error("bad signature: the bundle was changed after key `{0}` signed it, or not signed by it")]
    BadSignature(String),
    #[error(
        "rollback refused: the bundle's version {got} is older than version {have}, already accepted"
    )]
    Rollback { got: u64, have: u64 },
    #[error(
        "version {0} was already accepted with a different body: publish the change as a higher version"
    )]
    VersionReused(u64),
    #[error("the bundle's body is not a valid managed config: {0}")]
    InvalidBody(String),
    #[error("bad key: {0}")]
    BadKey(String),
}

/// A trusted public key and its id.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    bytes: [u8; 32],
    id: String,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.id)
    }
}

impl PublicKey {
    pub fn from_bytes(bytes: [u8; 32]) -> PublicKey {
        PublicKey {
            id: key_id(&bytes),
            bytes,
        }
    }

    /// Reads `ed25519:<64 hex digits>` (surrounding whitespace ignored).
    pub fn parse(text: &str) -> Result<PublicKey, BundleError> {
        let hex = text.trim().strip_prefix(PUBLIC_PREFIX).ok_or_else(|| {
            BundleError::BadKey(format!(
                "a public key is `{PUBLIC_PREFIX}` and 64 hex digits (`khaelor-perm bundle keygen` writes one)"
            ))
        })?;
        let bytes: [u8; 32] = from_hex(hex)
            .and_then(|v| v.try_into().ok())
            .ok_or_else(|| {
                BundleError::BadKey("a public key is 64 hex digits after `ed25519:`".into())
            })?;
        Ok(PublicKey::from_bytes(bytes))
    }

    /// The key id: the first 16 hex digits of the SHA-256 of the key.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `ed25519:<hex>`.
    pub fn text(&self) -> String {
        format!("{PUBLIC_PREFIX}{}", to_hex(&self.bytes))
    }

    fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ED25519, &self.bytes)
            .verify(message, signature)
            .is_ok()
    }
}

/// A signing key (the 32-byte ed25519 seed).
pub struct SecretKey {
    pair: Ed25519KeyPair,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({})", self.public().id)
    }
}

impl SecretKey {
    fn from_seed(seed: &[u8; 32]) -> Result<SecretKey, BundleError> {
        Ed25519KeyPair::from_seed_unchecked(seed)
            .map(|pair| SecretKey { pair })
            .map_err(|_| BundleError::BadKey("not an ed25519 seed".into()))
    }

    /// Reads `ed25519-secret:<64 hex digits>`.
    pub fn parse(text: &str) -> Result<SecretKey, BundleError> {
        let hex = text.trim().strip_prefix(SECRET_PREFIX).ok_or_else(|| {
            BundleError::BadKey(format!(
                "a secret key is `{SECRET_PREFIX}` and 64 hex digits (`khaelor-perm bundle keygen` writes one)"
            ))
        })?;
        let seed: [u8; 32] = from_hex(hex)
            .and_then(|v| v.try_into().ok())
            .ok_or_else(|| BundleError::BadKey("a secret key is 64 hex digits".into()))?;
        SecretKey::from_seed(&seed)
    }

    /// The text of a secret key file holding `seed`.
    fn seed_text(seed: &[u8; 32]) -> String {
        format!("{SECRET_PREFIX}{}\n", to_hex(seed))
    }

    pub fn public(&self) -> PublicKey {
        let mut b = [0u8; 32];
        b.copy_from_slice(self.pair.public_key().as_ref());
        PublicKey::from_bytes(b)
    }
}

/// A fresh key pair: the secret key file's text and the public key.
pub fn generate_key_pair() -> Result<(String, PublicKey), BundleError> {
    use ring::rand::SecureRandom;
    let mut seed = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut seed)
        .map_err(|_| BundleError::BadKey("the system's random source failed".into()))?;
    let key = SecretKey::from_seed(&seed)?;
    Ok((SecretKey::seed_text(&seed), key.public()))
}

/// The id of a public key: the first 16 hex digits of its SHA-256.
fn key_id(bytes: &[u8; 32]) -> String {
    let digest = Sha256::digest(bytes);
    to_hex(digest.get(..8).unwrap_or_default())
}

/// A parsed bundle (or draft).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    pub version: u64,
    /// As written: an RFC 3339 UTC time (`2026-12-05T19:40:00Z`).
    pub created: String,
    /// The signer's key id; `None` in a draft.
    pub key_id: Option<String>,
    pub body: Vec<u8>,
    /// `None` in a draft.
    signature: Option<Vec<u8>>,
    /// The bytes the signature covers, as they are in the file.
    signed: Vec<u8>,
}

impl Bundle {
    /// A draft of `body` (checked to be a valid managed config) at `version`.
    pub fn draft(version: u64, created: &str, body: Vec<u8>) -> Result<Bundle, BundleError> {
        check_created(created)?;
        check_body(&body)?;
        let signed = render_signed(version, created, None, &body);
        Ok(Bundle {
            version,
            created: created.to_string(),
            key_id: None,
            body,
            signature: None,
            signed,
        })
    }

    /// Parses a bundle or a draft, strictly (see the module doc). Does not verify.
    pub fn parse(bytes: &[u8]) -> Result<Bundle, BundleError> {
        if bytes.len() as u64 > MAX_BUNDLE_BYTES {
            return Err(BundleError::Oversize(bytes.len() as u64));
        }
        let bad = |m: &str| BundleError::Malformed(m.to_string());
        let rest = bytes
            .strip_prefix(MAGIC.as_bytes())
            .ok_or_else(|| bad("it does not start with `khaelor-perm bundle 1`"))?;
        let (version, rest) = header_line(rest, "version")?;
        let version = parse_decimal(version).ok_or_else(|| {
            bad("`version` must be a decimal number without leading zeros or sign")
        })?;
        let (created, rest) = header_line(rest, "created")?;
        check_created(created)?;
        let (key_id, rest) = if rest.starts_with(b"key ") {
            let (k, r) = header_line(rest, "key")?;
            if k.len() != 16
                || !k
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                return Err(bad("`key` must be a key id of 16 lowercase hex digits"));
            }
            (Some(k.to_string()), r)
        } else {
            (None, rest)
        };
        let (len, rest) = header_line(rest, "body")?;
        let len = parse_decimal(len)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad("`body` must be the body's length in bytes"))?;
        let body = rest
            .get(..len)
            .ok_or_else(|| bad("the body is shorter than its `body` line says"))?;
        let trailer = rest.get(len..).unwrap_or_default();
        let signed_len = bytes.len() - trailer.len();
        let signed = bytes.get(..signed_len).unwrap_or_default().to_vec();
        let signature = match (key_id.is_some(), trailer.is_empty()) {
            (false, true) => None,
            (false, false) => return Err(bad("a draft (no `key` line) ends right after its body")),
            (true, true) => return Err(bad("the bundle has a `key` line but no signature")),
            (true, false) => {
                let hex = trailer
                    .strip_prefix(SIGNATURE_PREFIX.as_bytes())
                    .and_then(|t| t.strip_suffix(b"\n"))
                    .ok_or_else(|| {
                        bad("after the body comes a newline, `signature <128 hex digits>` and a newline, and nothing else")
                    })?;
                let hex = std::str::from_utf8(hex).map_err(|_| bad("the signature is not hex"))?;
                let sig = from_hex(hex)
                    .filter(|s| s.len() == 64)
                    .ok_or_else(|| bad("the signature must be 128 lowercase hex digits"))?;
                Some(sig)
            }
        };
        let bundle = Bundle {
            version,
            created: created.to_string(),
            key_id,
            body: body.to_vec(),
            signature,
            signed,
        };
        // INVARIANT: the strict header has one spelling, so rendering the fields gives
        // back the bytes read; a difference is a parser bug, refused rather than trusted.
        if render_signed(
            bundle.version,
            &bundle.created,
            bundle.key_id.as_deref(),
            &bundle.body,
        ) != bundle.signed
        {
            return Err(bad("the header is not in its one canonical form"));
        }
        Ok(bundle)
    }

    /// Signs (or re-signs) with `key`: the file's bytes.
    pub fn sign(&self, key: &SecretKey) -> Vec<u8> {
        let id = key.public().id;
        let mut out = render_signed(self.version, &self.created, Some(&id), &self.body);
        let sig = key.pair.sign(&out);
        out.extend_from_slice(SIGNATURE_PREFIX.as_bytes());
        out.extend_from_slice(to_hex(sig.as_ref()).as_bytes());
        out.push(b'\n');
        out
    }

    /// The draft's bytes (no key, no signature).
    pub fn draft_bytes(&self) -> Vec<u8> {
        render_signed(self.version, &self.created, None, &self.body)
    }

    /// Verifies the signature with the trusted key the bundle names and checks the body
    /// is a valid managed config. Returns the key that signed.
    pub fn verify<'k>(&self, trusted: &'k [PublicKey]) -> Result<&'k PublicKey, BundleError> {
        let (Some(id), Some(sig)) = (&self.key_id, &self.signature) else {
            return Err(BundleError::Unsigned);
        };
        let key = trusted
            .iter()
            .find(|k| &k.id == id)
            .ok_or_else(|| BundleError::UnknownKey(id.clone()))?;
        if !key.verify(&self.signed, sig) {
            return Err(BundleError::BadSignature(id.clone()));
        }
        check_body(&self.body)?;
        Ok(key)
    }

    /// The body as text (a verified body is UTF-8).
    pub fn body_text(&self) -> Result<&str, BundleError> {
        std::str::from_utf8(&self.body)
            .map_err(|_| BundleError::InvalidBody("the body is not UTF-8".into()))
    }
}

/// One `name value\n` header line.
fn header_line<'a>(bytes: &'a [u8], name: &str) -> Result<(&'a str, &'a [u8]), BundleError> {
    let bad = || BundleError::Malformed(format!("expected the header line `{name} …`"));
    let rest = bytes
        .strip_prefix(name.as_bytes())
        .and_then(|r| r.strip_prefix(b" "))
        .ok_or_else(bad)?;
    let end = rest.iter().position(|b| *b == b'\n').ok_or_else(bad)?;
    let value = rest
        .get(..end)
        .and_then(|v| std::str::from_utf8(v).ok())
        .filter(|v| !v.is_empty() && !v.contains(' ') && !v.contains('\r'))
        .ok_or_else(bad)?;
    Ok((value, rest.get(end + 1..).unwrap_or_default()))
}

fn parse_decimal(s: &str) -> Option<u64> {
    let canonical = s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

/// `created` is an RFC 3339 time in UTC, ending in `Z`.
fn check_created(created: &str) -> Result<(), BundleError> {
    let ok = created.ends_with('Z')
        && created.parse::<jiff::Timestamp>().is_ok()
        && created.is_ascii()
        && !created.contains(' ');
    if ok {
        Ok(())
    } else {
        Err(BundleError::Malformed(format!(
            "`created` must be an RFC 3339 time in UTC such as `2026-12-05T19:40:00Z`, found `{created}`"
        )))
    }
}

/// Seconds since the Unix epoch of a checked `created`.
pub fn created_unix(created: &str) -> Option<i64> {
    created
        .parse::<jiff::Timestamp>()
        .ok()
        .map(jiff::Timestamp::as_second)
}

fn render_signed(version: u64, created: &str, key: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut out = format!("{MAGIC}version {version}\ncreated {created}\n");
    if let Some(k) = key {
        out.push_str(&format!("key {k}\n"));
    }
    out.push_str(&format!("body {}\n", body.len()));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The label errors in a bundle's body carry instead of a file name.
const BODY_LABEL: &str = "bundle body";

/// A body is a valid managed config: UTF-8, within the config size cap, parsed as the
/// managed layer with no error, and a boolean or absent `trustProjectConfigs`.
pub fn check_body(body: &[u8]) -> Result<(), BundleError> {
    if body.len() as u64 > crate::policy::config::MAX_CONFIG_BYTES {
        return Err(BundleError::InvalidBody(
            "it is larger than a config may be".into(),
        ));
    }
    let text = std::str::from_utf8(body)
        .map_err(|_| BundleError::InvalidBody("it is not UTF-8".into()))?;
    let (parsed, _) = parse_config_with_settings(text, BODY_LABEL, RuleSource::Managed);
    if let Some(e) = parsed.errors.first() {
        return Err(BundleError::InvalidBody(e.to_string()));
    }
    let value: serde_json::Value = jsonc_parser::parse_to_serde_value::<serde_json::Value>(
        text,
        &crate::policy::config::jsonc_options(),
    )
    .map_err(|e| BundleError::InvalidBody(e.to_string()))?;
    if !value.is_object() {
        return Err(BundleError::InvalidBody(
            "a config must be a JSON object".into(),
        ));
    }
    match value.get("trustProjectConfigs") {
        None | Some(serde_json::Value::Bool(_)) => Ok(()),
        Some(_) => Err(BundleError::InvalidBody(
            "`trustProjectConfigs` must be a boolean".into(),
        )),
    }
}

/// What an expired bundle still imposes, as a managed config: its deny and ask rules
/// and its narrowing settings. Its allow rules are left out, its contain rules ask (a
/// contained run is a run without a prompt), its preset is capped at the default,
/// packs it turns off stay on. `header` says why, as a comment at the top.
///
/// The result is parsed back and compared with the rules it must hold; a difference
/// is an error, never a wider config.
pub fn narrowed(body: &str, header: &str) -> Result<String, BundleError> {
    let (parsed, settings) = parse_config_with_settings(body, BODY_LABEL, RuleSource::Managed);
    if let Some(e) = parsed.errors.first() {
        return Err(BundleError::InvalidBody(e.to_string()));
    }
    let keep: Vec<PermissionRule> = parsed
        .rules
        .into_iter()
        .filter(|r| r.action != Action::Allow)
        .map(|mut r| {
            if r.action == Action::Contain {
                r.action = Action::Ask;
            }
            r
        })
        .collect();
    let mut perms = serde_json::Map::new();
    if let Some(p) = settings.preset {
        perms.insert("preset".into(), p.min(Preset::default()).as_str().into());
    }
    if settings.always_scope == Some(crate::policy::config::AlwaysScope::Exact) {
        perms.insert("alwaysScope".into(), "exact".into());
    }
    if settings.host_rules == Some(false) {
        perms.insert("hostRules".into(), false.into());
    }
    let packs: serde_json::Map<String, serde_json::Value> = settings
        .packs
        .iter()
        .filter(|(_, m)| *m != crate::policy::config::PackMode::Off)
        .map(|(n, m)| {
            let mode = match m {
                crate::policy::config::PackMode::Deny => "deny",
                _ => "on",
            };
            (n.clone(), mode.into())
        })
        .collect();
    if !packs.is_empty() {
        perms.insert("packs".into(), packs.into());
    }
    let rules: Vec<serde_json::Value> = keep
        .iter()
        .map(|r| {
            let mut o = serde_json::Map::new();
            o.insert("capability".into(), r.capability.clone().into());
            o.insert("pattern".into(), r.pattern.clone().into());
            o.insert("action".into(), r.action.as_str().into());
            if r.dialect != crate::policy::rules::MatchDialect::Wildcard {
                o.insert("match".into(), r.dialect.as_str().into());
            }
            if r.allow_always {
                o.insert("allowAlways".into(), true.into());
            }
            if let Some(e) = &r.expires {
                o.insert("expires".into(), e.as_str().into());
            }
            serde_json::Value::Object(o)
        })
        .collect();
    perms.insert("rules".into(), rules.into());
    let mut top = serde_json::Map::new();
    let forbid = jsonc_parser::parse_to_serde_value::<serde_json::Value>(
        body,
        &crate::policy::config::jsonc_options(),
    )
    .ok()
    .and_then(|v| v.get("trustProjectConfigs").cloned());
    if let Some(v) = forbid {
        top.insert("trustProjectConfigs".into(), v);
    }
    top.insert("permissions".into(), perms.into());
    let json = serde_json::to_string_pretty(&serde_json::Value::Object(top))
        .map_err(|e| BundleError::InvalidBody(e.to_string()))?;
    let comment: String = header.lines().map(|l| format!("// {l}\n")).collect();
    let text = format!("{comment}{json}\n");
    // INVARIANT: the narrowed config holds exactly the rules kept.
    let (back, _) = parse_config_with_settings(&text, BODY_LABEL, RuleSource::Managed);
    let strip = |v: &[PermissionRule]| -> Vec<PermissionRule> {
        v.iter()
            .cloned()
            .map(|mut r| {
                r.origin = None;
                r
            })
            .collect()
    };
    if !back.errors.is_empty() || strip(&back.rules) != strip(&keep) {
        return Err(BundleError::InvalidBody(
            "its rules could not be narrowed faithfully".into(),
        ));
    }
    Ok(text)
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex only (one spelling per value).
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| match p {
            [h, l] => Some(digit(*h)? << 4 | digit(*l)?),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{ "permissions": { "process.execute": { "curl *": "deny", "git status": "allow", "make *": "contain" }, "preset": "autonomous", "packs": { "cloud": "off" } }, "trustProjectConfigs": false }"#;

    fn key() -> SecretKey {
        SecretKey::from_seed(&[7u8; 32]).unwrap()
    }

    fn signed() -> Vec<u8> {
        Bundle::draft(3, "2026-12-05T19:40:00Z", BODY.as_bytes().to_vec())
            .unwrap()
            .sign(&key())
    }

    #[test]
    fn sign_then_verify_round_trips_and_any_flipped_byte_is_refused() {
        let bytes = signed();
        let trusted = [key().public()];
        let b = Bundle::parse(&bytes).unwrap();
        assert_eq!(b.verify(&trusted).unwrap().id(), key().public().id());
        assert_eq!(b.body, BODY.as_bytes());
        for i in 0..bytes.len() {
            let mut t = bytes.clone();
            t[i] ^= 0x01;
            let ok = Bundle::parse(&t).and_then(|b| b.verify(&trusted).map(|_| ()));
            assert!(ok.is_err(), "flipping byte {i} was accepted");
        }
    }

    #[test]
    fn an_unknown_key_is_named() {
        let other = SecretKey::from_seed(&[9u8; 32]).unwrap().public();
        let b = Bundle::parse(&signed()).unwrap();
        assert_eq!(
            b.verify(&[other]),
            Err(BundleError::UnknownKey(key().public().id().to_string()))
        );
    }

    #[test]
    fn keys_round_trip_through_their_text() {
        let (secret, public) = generate_key_pair().unwrap();
        let s = SecretKey::parse(&secret).unwrap();
        assert_eq!(s.public(), public);
        assert_eq!(PublicKey::parse(&public.text()).unwrap(), public);
        assert!(PublicKey::parse("ed25519:ABCD").is_err());
        assert!(PublicKey::parse(&secret).is_err());
    }

    #[test]
    fn a_draft_is_refused_where_a_bundle_is_needed_and_bad_bodies_are_not_drafted() {
        let d = Bundle::draft(1, "2026-12-05T19:40:00Z", b"{}".to_vec()).unwrap();
        let back = Bundle::parse(&d.draft_bytes()).unwrap();
        assert_eq!(back.verify(&[key().public()]), Err(BundleError::Unsigned));
        assert!(matches!(
            Bundle::draft(
                1,
                "2026-12-05T19:40:00Z",
                br#"{"permissions":{"file.read":"alow"}}"#.to_vec()
            ),
            Err(BundleError::InvalidBody(_))
        ));
        assert!(Bundle::draft(1, "yesterday", b"{}".to_vec()).is_err());
        assert!(Bundle::draft(1, "2026-12-05T19:40:00+01:00", b"{}".to_vec()).is_err());
    }

    #[test]
    fn non_canonical_headers_are_refused() {
        let ok = String::from_utf8(signed()).unwrap();
        for bad in [
            ok.replacen("version 3", "version 03", 1),
            ok.replacen("version 3", "version  3", 1),
            ok.replacen("version 3\n", "version 3\r\n", 1),
            format!("{ok}x"),
        ] {
            assert!(Bundle::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn narrowing_drops_allows_turns_contain_to_ask_and_caps_the_preset() {
        let text = narrowed(BODY, "expired").unwrap();
        let (p, s) = parse_config_with_settings(&text, "n", RuleSource::Managed);
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let got: Vec<(&str, Action)> = p
            .rules
            .iter()
            .map(|r| (r.pattern.as_str(), r.action))
            .collect();
        assert_eq!(got, vec![("curl *", Action::Deny), ("make *", Action::Ask)]);
        assert_eq!(s.preset, Some(Preset::Recommended));
        assert!(s.packs.is_empty());
        assert!(text.contains("\"trustProjectConfigs\": false"));
    }

    #[test]
    fn oversize_is_refused_before_parsing() {
        let big = vec![b'x'; MAX_BUNDLE_BYTES as usize + 1];
        assert!(matches!(Bundle::parse(&big), Err(BundleError::Oversize(_))));
    }
}
