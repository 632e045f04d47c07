//! Persistence of "always allow" grants (seed §6.2): appends rules to the project's
//! `<root>/.khaelor/config.json` under `permissions.rules`, keeping comments and key
//! order.
//!
//! Owns the file write protocol only: advisory lock on a sibling lock file, re-read and
//! dedupe under the lock, edit through jsonc-parser's CST, temp file in the same
//! directory, fsync, rename, fsync the directory. It does not decide which rules to
//! write (the policy does) nor read configs for evaluation (`config` does). Functions
//! that block on the lock or the disk are named `blocking_*`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use jsonc_parser::CollectOptions;
use jsonc_parser::common::Ranged;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde::{Deserialize, Serialize};

/// One rule as it is written to the config file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistedRule {
    pub capability: String,
    pub pattern: String,
    pub action: String,
}

impl PersistedRule {
    /// `rule` as an "always" grant writes it: capability, pattern and action only.
    pub fn of(rule: &crate::policy::rules::PermissionRule) -> PersistedRule {
        PersistedRule {
            capability: rule.capability.clone(),
            pattern: rule.pattern.clone(),
            action: rule.action.as_str().to_string(),
        }
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendOutcome {
    /// The config file written.
    pub file: PathBuf,
    /// Rules added by this call.
    pub added: Vec<PersistedRule>,
    /// Rules that were already in the file (another grant got there first).
    pub already_present: Vec<PersistedRule>,
}

/// Why a grant could not be written.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    /// The project config is not valid JSONC, or its `permissions` / `rules` have the
    /// wrong shape; the file is left untouched.
    #[error("{file}:{line}:{column}: {message}")]
    Malformed {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// `.khaelor` or the config is a link that leads out of the project (to the user
    /// config, say): writing there would widen the grant beyond this project.
    #[error("`{file}` resolves to `{target}`, outside the project; the grant is not written there")]
    Escapes { file: String, target: String },
    /// The project config could not be read (not a regular file, too large, a
    /// dangling link, not UTF-8): the same refusal the loader makes.
    #[error("{file}: {message}")]
    Unreadable { file: String, message: String },
    #[error("could not {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
}

/// Appends `rules` to `<root>/.khaelor/config.json` → `permissions.rules`, creating the
/// directory, file, object and array as needed. Rules already present (same capability,
/// pattern and action) are not written twice. Blocks on the advisory lock.
///
/// With a trust store, a file that was trusted (or absent, or blank) before the write
/// stays trusted: the hash of exactly the text written is recorded, under the lock, so a
/// hand edit racing the grant is never trusted with it. An untrusted file stays
/// untrusted (the grant does not vouch for the rest of it).
pub fn blocking_append_rules(
    root: &Path,
    rules: &[PersistedRule],
    trust: Option<&crate::policy::trust::TrustStore>,
) -> Result<AppendOutcome, GrantError> {
    let file = crate::policy::config::project_config_path(root);
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    let target = crate::model::paths::resolve_existing_prefix(&file);
    let canonical_root = crate::model::paths::resolve_existing_prefix(root);
    if !crate::model::paths::is_inside(&target, &canonical_root) {
        return Err(GrantError::Escapes {
            file: file.display().to_string(),
            target: target.display().to_string(),
        });
    }

    // INVARIANT: every writer takes this lock before reading, so the read-modify-write
    // below never loses a concurrent writer's rules. A sibling file is locked because the
    // config itself is replaced by rename.
    let lock_path = dir.join(".config.json.lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io_err("open", &lock_path, e))?;
    lock.lock().map_err(|e| io_err("lock", &lock_path, e))?;
    // Every writer holds this lock from before it creates its temp file until after
    // the rename, so a temp file seen here is left over from a writer that died
    // (kill -9, power loss) and can go.
    remove_stale_temp_files(&dir, &file);

    // The loader's own reader: what it refuses, the writer refuses.
    let text = crate::policy::config::read_config_text(&file)
        .map_err(|message| GrantError::Unreadable {
            file: file.display().to_string(),
            message,
        })?
        .unwrap_or_default();
    let (new_text, outcome) = edit_checked(&file, &text, rules)?;
    let keep_trust = trust.filter(|t| {
        text.trim().is_empty()
            || t.status(&file, text.as_bytes()) == crate::policy::trust::TrustStatus::Trusted
    });
    let trust_err = |e: crate::policy::trust::TrustError| GrantError::Io {
        action: "record trust for",
        path: file.display().to_string(),
        source: io::Error::other(e.to_string()),
    };
    if !outcome.added.is_empty() {
        // Both contents are trusted while the write is in flight, so a kill between the
        // rename and the record's update does not leave the granted file untrusted.
        if let Some(t) = keep_trust {
            t.blocking_record_pending(&file, text.as_bytes(), new_text.as_bytes())
                .map_err(trust_err)?;
        }
        if let Err(e) = blocking_write_atomic(&file, &dir, &new_text) {
            if let Some(t) = keep_trust {
                // The new text was never written: drop it from the record again.
                let _ = t.blocking_record(&file, text.as_bytes());
            }
            return Err(e);
        }
    }
    if let Some(t) = keep_trust {
        let written = if outcome.added.is_empty() {
            text.as_str()
        } else {
            new_text.as_str()
        };
        t.blocking_record(&file, written.as_bytes())
            .map_err(trust_err)?;
    }
    drop(lock);
    Ok(outcome)
}

/// The edit and its check by the loader, pure: the new text of `file` (whose current
/// text is `text`) with `rules` appended, refused unless the loader reads the result
/// without error and finds every rule in it. The fuzz target drives this.
pub fn edit_checked(
    file: &Path,
    text: &str,
    rules: &[PersistedRule],
) -> Result<(String, AppendOutcome), GrantError> {
    let (new_text, outcome) = edit(file, text, rules)?;
    check_effective(file, &new_text, rules)?;
    Ok((new_text, outcome))
}

/// Checks the text about to be written with the loader the server uses: a grant is
/// only reported as written when the loader reads the file without error (a broken
/// file keeps only its deny rules, so an allow appended to it changes nothing) and
/// finds every rule in it. Otherwise the file is left as it was.
fn check_effective(file: &Path, text: &str, rules: &[PersistedRule]) -> Result<(), GrantError> {
    let display = file.display().to_string();
    let parsed = crate::policy::config::parse_config(
        text,
        &display,
        crate::policy::rules::RuleSource::Project,
    );
    if let Some(e) = parsed.errors.first() {
        return Err(GrantError::Malformed {
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            message: e.message.clone(),
        });
    }
    for rule in rules {
        let found = parsed.rules.iter().any(|r| {
            r.capability == rule.capability
                && r.pattern == rule.pattern
                && r.action.as_str() == rule.action
        });
        if !found {
            return Err(shape_err(
                &display,
                1,
                1,
                &format!(
                    "the loader does not find the rule `{}` `{}` `{}` in the edited file",
                    rule.capability, rule.pattern, rule.action
                ),
            ));
        }
    }
    Ok(())
}

/// The edit itself, pure: the new text and what was added.
fn edit(
    file: &Path,
    text: &str,
    rules: &[PersistedRule],
) -> Result<(String, AppendOutcome), GrantError> {
    let display = file.display().to_string();
    let blank = text.trim().is_empty();
    let source = if blank { "{}\n" } else { text };
    let existing = validate_shape(&display, source)?;

    let root =
        CstRootNode::parse(source, &crate::policy::config::jsonc_options()).map_err(|e| {
            GrantError::Malformed {
                file: display.clone(),
                line: e.line_display(),
                column: e.column_display(),
                message: crate::presentation::messages::lower_first(&e.kind().to_string()),
            }
        })?;
    let top = root.object_value_or_set();
    let permissions = top
        .object_value_or_create("permissions")
        .ok_or_else(|| shape_err(&display, 1, 1, "`permissions` is not an object"))?;
    let array = permissions
        .array_value_or_create("rules")
        .ok_or_else(|| shape_err(&display, 1, 1, "`permissions.rules` is not an array"))?;

    let mut seen = existing;
    let mut added = Vec::new();
    let mut already_present = Vec::new();
    for rule in rules {
        if seen.contains(rule) {
            already_present.push(rule.clone());
            continue;
        }
        array.append(CstInputValue::Object(vec![
            (
                "capability".to_string(),
                CstInputValue::String(rule.capability.clone()),
            ),
            (
                "pattern".to_string(),
                CstInputValue::String(rule.pattern.clone()),
            ),
            (
                "action".to_string(),
                CstInputValue::String(rule.action.clone()),
            ),
        ]));
        seen.push(rule.clone());
        added.push(rule.clone());
    }
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok((
        out,
        AppendOutcome {
            file: file.to_path_buf(),
            added,
            already_present,
        },
    ))
}

/// Checks with positions that the file is an object whose `permissions` (if any) is an
/// object whose `rules` (if any) is an array, and returns the rules already there.
fn validate_shape(file: &str, text: &str) -> Result<Vec<PersistedRule>, GrantError> {
    use jsonc_parser::ast::{ObjectPropName, Value};
    let parsed = jsonc_parser::parse_to_ast(
        text,
        &CollectOptions::default(),
        &crate::policy::config::jsonc_options(),
    )
    .map_err(|e| GrantError::Malformed {
        file: file.to_string(),
        line: e.line_display(),
        column: e.column_display(),
        message: crate::presentation::messages::lower_first(&e.kind().to_string()),
    })?;
    let at = |offset: usize, message: &str| {
        let (line, column) = line_column(text, offset);
        shape_err(file, line, column, message)
    };
    let Some(value) = parsed.value else {
        return Ok(Vec::new());
    };
    let Value::Object(top) = value else {
        return Err(at(value.range().start, "the top level is not an object"));
    };
    let prop_name = |n: &ObjectPropName<'_>| match n {
        ObjectPropName::String(s) => s.value.to_string(),
        ObjectPropName::Word(w) => w.value.to_string(),
    };
    let Some(perms) = top
        .properties
        .iter()
        .rev()
        .find(|p| prop_name(&p.name) == "permissions")
    else {
        return Ok(Vec::new());
    };
    let Value::Object(perms) = &perms.value else {
        return Err(at(
            perms.value.range().start,
            "`permissions` is not an object",
        ));
    };
    let Some(rules) = perms
        .properties
        .iter()
        .rev()
        .find(|p| prop_name(&p.name) == "rules")
    else {
        return Ok(Vec::new());
    };
    let Value::Array(rules) = &rules.value else {
        return Err(at(
            rules.value.range().start,
            "`permissions.rules` is not an array",
        ));
    };
    let mut out = Vec::new();
    for el in &rules.elements {
        let Value::Object(obj) = el else { continue };
        let field = |name: &str| {
            obj.properties
                .iter()
                .rev()
                .find(|p| prop_name(&p.name) == name)
                .and_then(|p| match &p.value {
                    Value::StringLit(s) => Some(s.value.to_string()),
                    _ => None,
                })
        };
        if let (Some(capability), Some(action)) = (field("capability"), field("action")) {
            let pattern = field("pattern").unwrap_or_else(|| "*".to_string());
            out.push(PersistedRule {
                capability,
                pattern,
                action,
            });
        }
    }
    Ok(out)
}

/// Writes `text` to `file` atomically: a temp file in the same directory, fsync,
/// rename over the target, fsync the directory so the rename itself is durable.
pub fn blocking_write_atomic(file: &Path, dir: &Path, text: &str) -> Result<(), GrantError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = file
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("config.json");
    let tmp = dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| io_err("create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| io_err("write", &tmp, e))?;
        f.sync_all().map_err(|e| io_err("sync", &tmp, e))?;
        if let Ok(meta) = fs::metadata(file) {
            // Keep the mode the user gave the file (a config may be group-readable on purpose).
            let _ = fs::set_permissions(&tmp, meta.permissions());
        }
        fs::rename(&tmp, file).map_err(|e| io_err("rename", &tmp, e))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err("sync", dir, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes `.<name>.tmp.*` files of interrupted writes next to `file`. Call only under
/// the lock. Failures are logged, never fatal: a leftover temp file is untidy, not
/// wrong (the loader never reads it).
fn remove_stale_temp_files(dir: &Path, file: &Path) {
    let Some(name) = file.file_name().and_then(|s| s.to_str()) else {
        return;
    };
    let prefix = format!(".{name}.tmp.");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(&prefix));
        if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
            match fs::remove_file(entry.path()) {
                Ok(()) => {
                    tracing::info!(file = %entry.path().display(), "removed the temp file of an interrupted grant write")
                }
                Err(e) => {
                    tracing::warn!(file = %entry.path().display(), error = %e, "could not remove a stale temp file")
                }
            }
        }
    }
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> GrantError {
    GrantError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

fn shape_err(file: &str, line: usize, column: usize, message: &str) -> GrantError {
    GrantError::Malformed {
        file: file.to_string(),
        line,
        column,
        message: message.to_string(),
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(p: &str) -> PersistedRule {
        PersistedRule {
            capability: "process.execute".into(),
            pattern: p.into(),
            action: "allow".into(),
        }
    }

    /// A project whose `.khaelor` links to the user's config directory must not turn a
    /// project grant into a grant for every project.
    #[test]
    fn refuses_a_config_dir_that_links_out_of_the_project() {
        let root = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(user.path(), root.path().join(".khaelor")).unwrap();
        let err = blocking_append_rules(root.path(), &[rule("npm test")], None).unwrap_err();
        assert!(matches!(err, GrantError::Escapes { .. }), "{err}");
        assert!(!user.path().join("config.json").exists());
        // A plain project directory still works.
        let plain = tempfile::tempdir().unwrap();
        let out = blocking_append_rules(plain.path(), &[rule("npm test")], None).unwrap();
        assert_eq!(out.added.len(), 1);
    }

    /// A temp file left by a writer killed between create and rename is removed by the
    /// next grant, under the lock.
    #[test]
    fn the_next_grant_removes_temp_files_of_interrupted_writes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".khaelor");
        fs::create_dir_all(&dir).unwrap();
        let stale = dir.join(".config.json.tmp.999999.3");
        fs::write(&stale, "{\"half\": ").unwrap();
        let keep = dir.join("notes.txt");
        fs::write(&keep, "mine").unwrap();
        blocking_append_rules(root.path(), &[rule("npm test")], None).unwrap();
        assert!(!stale.exists());
        assert!(keep.exists());
    }

    #[test]
    fn creates_file_and_sections() {
        let (text, out) = edit(Path::new("c.json"), "", &[rule("npm install *")]).unwrap();
        assert_eq!(out.added.len(), 1);
        let v: serde_json::Value =
            jsonc_parser::parse_to_serde_value(&text, &crate::policy::config::jsonc_options())
                .unwrap();
        assert_eq!(v["permissions"]["rules"][0]["pattern"], "npm install *");
    }

    #[test]
    fn keeps_comments_and_order_and_dedupes() {
        let src = "{\n  // top comment\n  \"zeta\": 1,\n  \"permissions\": {\n    \"file.read\": \"allow\", // why\n    \"rules\": [\n      { \"capability\": \"process.execute\", \"pattern\": \"git push *\", \"action\": \"allow\" },\n    ]\n  },\n  \"alpha\": 2\n}\n";
        let (text, out) = edit(
            Path::new("c.json"),
            src,
            &[rule("git push *"), rule("npm test")],
        )
        .unwrap();
        assert_eq!(out.added, vec![rule("npm test")]);
        assert_eq!(out.already_present, vec![rule("git push *")]);
        assert!(text.contains("// top comment"));
        assert!(text.contains("// why"));
        let z = text.find("zeta").unwrap();
        let p = text.find("permissions").unwrap();
        let a = text.find("alpha").unwrap();
        assert!(z < p && p < a);
        let git = text.find("git push *").unwrap();
        let npm = text.find("npm test").unwrap();
        assert!(git < npm, "appended after existing rules:\n{text}");
    }

    #[test]
    fn malformed_file_reports_position() {
        let err = edit(
            Path::new("c.json"),
            "{\n  \"permissions\": {\n    \"rules\": [,\n",
            &[rule("x")],
        )
        .unwrap_err();
        let GrantError::Malformed { line, .. } = err else {
            panic!("{err}")
        };
        assert_eq!(line, 3);
        let err = edit(
            Path::new("c.json"),
            "{\n  \"permissions\": []\n}",
            &[rule("x")],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.json:2:18: `permissions` is not an object"
        );
        let err = edit(
            Path::new("c.json"),
            "{\"permissions\": {\"rules\": {}}}",
            &[rule("x")],
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`permissions.rules` is not an array"),
            "{err}"
        );
    }
}
