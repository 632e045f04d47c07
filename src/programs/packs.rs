//! Domain packs: per domain (databases, Kubernetes, containers, clouds, infrastructure
//! as code, git's local destruction), the operations that destroy, each with its
//! severity and the note a person reads before approving. The packs are data, one
//! JSON file per domain in `packs/`, embedded in the binary; a new operation is one
//! line.
//!
//! A pack file holds:
//! - `programs`: per program name, `valued` (its options that take the next word as a
//!   value, so that word is no operand) and optionally `code` (the options whose value
//!   is SQL or a script, `operand`: the index of an operand that is, and `stdin`:
//!   whether a here-document fed to it is).
//! - `operations`: `program` (names separated by `|`), `operands` (the first operands,
//!   in order; each an alternation with `|`, a trailing `*` matching a prefix, `*` alone
//!   any one operand, `**` any number), `flags` (each entry an alternation that must
//!   be present: `--hard`, `-f` also inside a cluster such as `-fdx`, `--replicas=0`
//!   also as two words, `--` for the end of options), `unless` (alternations any of
//!   which makes the command no such operation), `code` (an alternation of
//!   statement patterns: leading words, then `!WORD` for "has no WORD" and `~TEXT` for
//!   "contains TEXT"; upper-case patterns match SQL case-insensitively), `severity`,
//!   `note` (`{rest}`: the operands after the matched ones; `{code}`: the statement).
//! - `readOnly`: the same tools' subcommands that only read, which no operation may
//!   match (tests hold the packs to it).
//!
//! Owns reading words against the packs only: `analysis` attaches the hit to the
//! command's `process.execute` request, `policy::decide` acts on it. A pack only ever
//! adds scrutiny: a command it misses is decided exactly as without packs.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;

use crate::model::vocab::{PackHit, Severity};

/// The pack files, embedded at build time.
const FILES: [(&str, &str); 6] = [
    ("databases", include_str!("packs/databases.json")),
    ("kubernetes", include_str!("packs/kubernetes.json")),
    ("containers", include_str!("packs/containers.json")),
    ("cloud", include_str!("packs/cloud.json")),
    ("infrastructure", include_str!("packs/infrastructure.json")),
    ("git", include_str!("packs/git.json")),
];

/// Longest statement a note quotes.
const MAX_QUOTED: usize = 80;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pack {
    pub pack: String,
    pub title: String,
    pub programs: HashMap<String, ProgramSyntax>,
    pub operations: Vec<Operation>,
    #[serde(default)]
    pub read_only: Vec<Operation>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProgramSyntax {
    #[serde(default)]
    pub valued: Vec<String>,
    #[serde(default)]
    pub code: Option<CodeSyntax>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeSyntax {
    #[serde(default)]
    pub options: Vec<String>,
    #[serde(default)]
    pub operand: Option<usize>,
    #[serde(default)]
    pub stdin: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Operation {
    pub program: String,
    #[serde(default)]
    pub operands: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    /// Flag alternations any of which makes the command no such operation.
    #[serde(default)]
    pub unless: Vec<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default = "no_severity")]
    pub severity: Severity,
    #[serde(default)]
    pub note: String,
}

/// `readOnly` entries carry no severity; this one is never read for them.
fn no_severity() -> Severity {
    Severity::Medium
}

/// Every pack, parsed once. A pack file that does not parse is a build defect the
/// tests catch (`every_pack_parses`); at run time it is left out, never a panic.
pub static PACKS: LazyLock<Vec<Pack>> = LazyLock::new(|| {
    FILES
        .iter()
        .filter_map(|(_, text)| serde_json::from_str(text).ok())
        .collect()
});

/// The names of every pack, in file order.
pub fn names() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(n, _)| *n)
}

/// A command's words read with one program's syntax.
struct Read<'w> {
    operands: Vec<&'w str>,
    /// Option words (and `--` when present), with the word after each.
    options: Vec<(&'w str, Option<&'w str>)>,
    code: Vec<String>,
}

fn read<'w>(words: &[&'w str], syntax: &ProgramSyntax, stdin: Option<&str>) -> Read<'w> {
    let code_opts: &[String] = syntax.code.as_ref().map_or(&[], |c| &c.options);
    let mut r = Read {
        operands: Vec::new(),
        options: Vec::new(),
        code: Vec::new(),
    };
    let mut i = 1;
    let mut ended = false;
    while let Some(&w) = words.get(i) {
        i += 1;
        if ended || w == "-" || !w.starts_with('-') {
            r.operands.push(w);
            continue;
        }
        if w == "--" {
            ended = true;
            r.options.push((w, None));
            continue;
        }
        let next = words.get(i).copied();
        let name = w.split_once('=').map_or(w, |(n, _)| n);
        if code_opts.iter().any(|o| o == w) {
            r.code.extend(next.map(String::from));
            i += 1;
        } else if let Some(v) = code_opts
            .iter()
            .find_map(|o| w.strip_prefix(o.as_str()).and_then(|r| r.strip_prefix('=')))
        {
            r.code.push(v.to_string());
        } else if syntax.valued.iter().any(|o| o == w) {
            r.options.push((w, next));
            i += 1;
        } else if let Some(end) = cluster_value_at(w, &syntax.valued) {
            // A cluster of one-letter options ends at the first that takes a value,
            // as getopt reads it: `-qbfeature` is `-q -b feature`, so its `f` is no
            // `-f`. Ending the cluster there, the value is the rest of the word, or
            // the next word when nothing is left.
            let (cluster, value) = w.split_at(end);
            if value.is_empty() {
                r.options.push((cluster, next));
                i += 1;
            } else {
                r.options.push((cluster, Some(value)));
            }
        } else {
            r.options.push((w, if name == w { next } else { None }));
        }
    }
    if let Some(c) = &syntax.code {
        if let Some(text) = c.operand.and_then(|k| r.operands.get(k)) {
            r.code.push((*text).to_string());
        }
        if c.stdin
            && let Some(text) = stdin
        {
            r.code.push(text.to_string());
        }
    }
    r
}

/// In a cluster of one-letter options (`-qb…`), the byte index just after the first
/// letter that takes a value (one of `valued`), when there is one.
fn cluster_value_at(word: &str, valued: &[String]) -> Option<usize> {
    let letters = word.strip_prefix('-').filter(|l| !l.starts_with('-'))?;
    for (k, c) in letters.char_indices() {
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let mut short = [0u8; 2];
        short[0] = b'-';
        short[1] = c as u8;
        if valued.iter().any(|v| v.as_bytes() == short) {
            return Some(k + 2);
        }
    }
    None
}

/// Whether one operand alternation matches a word.
fn operand_matches(alternation: &str, word: &str) -> bool {
    alternation
        .split('|')
        .any(|alt| match alt.strip_suffix('*') {
            Some("") => true,
            Some(prefix) => word.starts_with(prefix) && word.len() > prefix.len(),
            None => alt == word,
        })
}

/// Where the operand patterns match, as the index just after the last matched operand.
fn match_operands(patterns: &[String], operands: &[&str]) -> Option<usize> {
    fn go(patterns: &[String], operands: &[&str], at: usize) -> Option<usize> {
        let Some((first, more)) = patterns.split_first() else {
            return Some(at);
        };
        if first == "**" {
            return (at..=operands.len()).find_map(|k| go(more, operands, k));
        }
        let w = operands.get(at)?;
        if operand_matches(first, w) {
            go(more, operands, at + 1)
        } else {
            None
        }
    }
    go(patterns, operands, 0)
}

/// Whether one flag alternation is present among the option words.
fn flag_present(alternation: &str, options: &[(&str, Option<&str>)]) -> bool {
    alternation.split('|').any(|alt| {
        options.iter().any(|(w, next)| {
            if let Some((name, value)) = alt.split_once('=') {
                return *w == alt || (*w == name && *next == Some(value));
            }
            if *w == alt {
                return true;
            }
            if alt.starts_with("--") {
                return w.strip_prefix(alt).is_some_and(|r| r.starts_with('='));
            }
            // A one-letter option inside a cluster (`-fdx`), for programs whose
            // single-dash words are clusters of letters.
            let letter = alt.strip_prefix('-').filter(|l| l.len() == 1);
            letter.is_some_and(|l| {
                !w.starts_with("--")
                    && w.len() > 2
                    && w[1..].chars().all(|c| c.is_ascii_alphabetic())
                    && w[1..].contains(l)
            })
        })
    })
}

/// The statements of SQL or a script, comments dropped, blanks collapsed.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in code.split(';') {
        let mut s = String::new();
        let mut rest = raw;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("--") {
                rest = after.split_once('\n').map_or("", |(_, r)| r);
            } else if let Some(after) = rest.strip_prefix("/*") {
                rest = after.split_once("*/").map_or("", |(_, r)| r);
            } else {
                let mut chars = rest.chars();
                if let Some(c) = chars.next() {
                    s.push(if c.is_whitespace() { ' ' } else { c });
                }
                rest = chars.as_str();
            }
        }
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// Whether one statement matches one code pattern (see the module doc).
fn code_matches(pattern: &str, statement: &str) -> bool {
    let sql = !pattern.chars().any(|c| c.is_ascii_lowercase());
    let text = if sql {
        statement.to_ascii_uppercase()
    } else {
        statement.to_string()
    };
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut at = 0;
    for part in pattern.split(' ') {
        if let Some(sub) = part.strip_prefix('~') {
            if !text.contains(sub) {
                return false;
            }
        } else if let Some(word) = part.strip_prefix('!') {
            if words.contains(&word) {
                return false;
            }
        } else {
            if words.get(at) != Some(&part) {
                return false;
            }
            at += 1;
        }
    }
    true
}

fn quote(words: &[&str]) -> String {
    if words.is_empty() {
        return "(none named)".to_string();
    }
    format!("`{}`", words.join(" "))
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= MAX_QUOTED {
        return format!("`{s}`");
    }
    let cut: String = s.chars().take(MAX_QUOTED).collect();
    format!("`{cut}…`")
}

/// What one operation says about a command read with its program's syntax.
fn operation_hit(op: &Operation, r: &Read<'_>) -> Option<String> {
    let end = match_operands(&op.operands, &r.operands)?;
    if !op.flags.iter().all(|f| flag_present(f, &r.options))
        || op.unless.iter().any(|f| flag_present(f, &r.options))
    {
        return None;
    }
    let mut note = op.note.clone();
    if let Some(pattern) = &op.code {
        let hit = r
            .code
            .iter()
            .flat_map(|c| statements(c))
            .find(|s| pattern.split('|').any(|p| code_matches(p, s)))?;
        note = note.replace("{code}", &shorten(&hit));
    }
    let rest = r.operands.get(end..).unwrap_or_default();
    Some(note.replace("{rest}", &quote(rest)))
}

/// The packs' hit for one command (its words after wrappers, the program first), with
/// the text a here-document or here-string feeds it: the most severe operation any
/// pack names, or `None`.
pub fn classify(words: &[&str], stdin: Option<&str>) -> Option<PackHit> {
    let program = super::basename(words.first()?);
    let mut best: Option<PackHit> = None;
    for pack in PACKS.iter() {
        let Some(syntax) = pack.programs.get(program) else {
            continue;
        };
        let r = read(words, syntax, stdin);
        for op in &pack.operations {
            if !op.program.split('|').any(|p| p == program) {
                continue;
            }
            if best.as_ref().is_some_and(|b| b.severity >= op.severity) {
                continue;
            }
            if let Some(note) = operation_hit(op, &r) {
                best = Some(PackHit {
                    pack: pack.pack.clone(),
                    severity: op.severity,
                    note,
                });
            }
        }
    }
    best
}

/// Whether a pack names the command read-only (`kubectl get`, `terraform plan`).
pub fn named_read_only(words: &[&str]) -> Option<&'static str> {
    let program = super::basename(words.first()?);
    PACKS.iter().find_map(|pack| {
        let syntax = pack.programs.get(program)?;
        let r = read(words, syntax, None);
        pack.read_only
            .iter()
            .filter(|op| op.program.split('|').any(|p| p == program))
            .any(|op| operation_hit(op, &r).is_some())
            .then_some(pack.pack.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(cmd: &str) -> Option<(String, Severity)> {
        let words: Vec<&str> = cmd.split(' ').collect();
        classify(&words, None).map(|h| (h.pack, h.severity))
    }

    #[test]
    fn every_pack_parses() {
        for (name, text) in FILES {
            let p: Pack = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("pack {name} does not parse: {e}"));
            assert_eq!(p.pack, name);
            for op in &p.operations {
                for prog in op.program.split('|') {
                    assert!(
                        p.programs.contains_key(prog),
                        "pack {name}: `{prog}` has no syntax entry"
                    );
                }
                assert!(!op.note.is_empty(), "pack {name}: an operation has no note");
            }
        }
        assert_eq!(PACKS.len(), FILES.len());
    }

    #[test]
    fn reads_options_clusters_and_code() {
        assert_eq!(hit("git clean -fdx"), Some(("git".into(), Severity::High)));
        assert_eq!(hit("git clean -n"), None);
        assert_eq!(
            hit("kubectl -n prod delete ns/prod"),
            Some(("kubernetes".into(), Severity::Critical))
        );
        assert_eq!(
            hit("kubectl scale deploy/web --replicas 0"),
            Some(("kubernetes".into(), Severity::High))
        );
        assert_eq!(hit("kubectl scale deploy/web --replicas=3"), None);
        assert_eq!(
            hit("gcloud compute instances delete vm1"),
            Some(("cloud".into(), Severity::High))
        );
        let words = ["psql", "-c", "drop  database app"];
        let h = classify(&words, None).unwrap();
        assert_eq!(h.severity, Severity::Critical);
        assert!(h.note.contains("`drop database app`"), "{}", h.note);
        let words = ["psql", "app"];
        assert_eq!(
            classify(&words, Some("-- clean up\nDELETE FROM users;\n")).map(|h| h.severity),
            Some(Severity::High)
        );
        assert_eq!(
            classify(&words, Some("DELETE FROM users WHERE id = 3;")).map(|h| h.severity),
            None
        );
    }
}
