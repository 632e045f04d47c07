//! The `apply_patch` parser: which files a patch touches, in order, with each file's
//! section of the patch text for the panel.
//!
//! Owns the two formats coding agents send: the envelope (`*** Begin Patch` …
//! `*** End Patch`) and standard unified diffs with git headers. It finds paths only;
//! resolving them and deciding anything is the caller's job.
//!
//! A patch is read whole or refused: an applier may act on text this
//! parser skipped, so content after an envelope's `*** End Patch`, a line an envelope
//! section cannot hold (a `diff --git` or `--- a/x` header between sections), or an
//! envelope marker outside the hunks of a unified diff is a `BadPatch` error.

use serde::Serialize;

use super::ToolError;

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PatchOp {
    Add,
    Update,
    Delete,
    /// The destination of a move or rename.
    MoveTo,
}

impl PatchOp {
    pub fn as_str(self) -> &'static str {
        match self {
            PatchOp::Add => "add",
            PatchOp::Update => "update",
            PatchOp::Delete => "delete",
            PatchOp::MoveTo => "moveTo",
        }
    }
}

/// One file a patch touches, with that file's section of the patch text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchFile {
    pub path: String,
    pub op: PatchOp,
    pub diff: String,
    /// Its content goes to another path: the source of a move, rename or copy. A
    /// secret's identity is its content, so the caller judges this as a read too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub source: bool,
}

/// Every file a patch touches, in order. Accepts the coding-agent envelope
/// (`*** Begin Patch` … `*** End Patch` with `Add File:`, `Update File:`,
/// `Delete File:`, `Move to:`) and standard unified diffs (`--- a/x` / `+++ b/x`, git
/// headers, renames).
pub fn parse_patch(patch: &str) -> Result<Vec<PatchFile>, ToolError> {
    let first = patch.lines().map(str::trim).find(|l| !l.is_empty());
    let files = if first == Some("*** Begin Patch") {
        parse_envelope(patch)?
    } else {
        parse_unified(patch)?
    };
    if files.is_empty() {
        return Err(ToolError::BadPatch {
            line: 1,
            message: "the patch touches no file".into(),
        });
    }
    Ok(files)
}

fn parse_envelope(patch: &str) -> Result<Vec<PatchFile>, ToolError> {
    let mut files: Vec<PatchFile> = Vec::new();
    // Index into `files` of the section lines are appended to.
    let mut current: Option<usize> = None;
    let mut begun = false;
    let mut ended: Option<usize> = None;
    let bad = |i: usize, message: &str| ToolError::BadPatch {
        line: i + 1,
        message: message.to_string(),
    };
    for (i, raw) in patch.lines().enumerate() {
        let line = raw.trim_start();
        if let Some(end) = ended {
            if !line.trim().is_empty() {
                return Err(bad(
                    i,
                    &format!(
                        "content after `*** End Patch` (line {}); a patch is read whole or refused",
                        end + 1
                    ),
                ));
            }
            continue;
        }
        let header = [
            ("*** Add File:", PatchOp::Add),
            ("*** Update File:", PatchOp::Update),
            ("*** Delete File:", PatchOp::Delete),
            ("*** Move to:", PatchOp::MoveTo),
        ]
        .into_iter()
        .find_map(|(h, op)| line.strip_prefix(h).map(|rest| (rest.trim(), op)));
        if let Some((path, op)) = header {
            if path.is_empty() {
                return Err(bad(i, "a file header names no path"));
            }
            if op == PatchOp::MoveTo
                && let Some(from) = current.and_then(|c| files.get_mut(c))
            {
                from.source = true;
            }
            files.push(PatchFile {
                path: path.to_string(),
                op,
                diff: format!("{raw}\n"),
                source: false,
            });
            current = Some(files.len() - 1);
        } else if line == "*** Begin Patch" {
            if begun {
                return Err(bad(i, "a second `*** Begin Patch`; one envelope per patch"));
            }
            begun = true;
            current = None;
        } else if line == "*** End Patch" {
            ended = Some(i);
            current = None;
        } else if let Some(f) = current.and_then(|c| files.get_mut(c)) {
            // What a section may hold: added lines in an Add section; context, removed
            // and added lines and hunk markers in an Update section; nothing in a Delete.
            let ok = match f.op {
                PatchOp::Add => raw.starts_with('+') || raw.is_empty(),
                PatchOp::Update | PatchOp::MoveTo => {
                    raw.is_empty()
                        || raw.starts_with([' ', '-', '+'])
                        || raw.starts_with("@@")
                        || raw.trim() == "*** End of File"
                }
                PatchOp::Delete => raw.trim().is_empty(),
            };
            if !ok {
                return Err(bad(
                    i,
                    "a line an envelope section cannot hold (a unified diff mixed into an envelope?); a patch is read whole or refused",
                ));
            }
            f.diff.push_str(raw);
            f.diff.push('\n');
        } else if !line.trim().is_empty() {
            return Err(bad(
                i,
                "a line outside any file section of the envelope; a patch is read whole or refused",
            ));
        }
    }
    Ok(files)
}

fn strip_ab(path: &str) -> &str {
    path.strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path)
}

fn header_path(rest: &str) -> String {
    // `--- a/x\t2024-01-01 …`: the timestamp follows a tab.
    let p = rest.split('\t').next().unwrap_or(rest).trim_end();
    match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        // git quotes unusual paths C-style (`"b/\056\056/etc/x"` is `b/../etc/x`):
        // decode them as an applier would, or the path seen here is not the one written.
        Some(quoted) => strip_ab(&unquote_c_style(quoted)).to_string(),
        None => strip_ab(p).to_string(),
    }
}

/// git's C-style path quoting: `\a \b \t \n \v \f \r \" \\` and `\NNN` octal bytes.
fn unquote_c_style(q: &str) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(q.len());
    let mut bytes = q.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match bytes.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(n - b'0');
                            bytes.next();
                        }
                        _ => break,
                    }
                }
                out.push(u8::try_from(v).unwrap_or(b'?'));
            }
            Some(b'a') => out.push(0x07),
            Some(b'b') => out.push(0x08),
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'v') => out.push(0x0b),
            Some(b'f') => out.push(0x0c),
            Some(b'r') => out.push(b'\r'),
            Some(other) => out.push(other),
            None => out.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hunk_counts(line: &str) -> Option<(usize, usize)> {
    // `@@ -a[,b] +c[,d] @@ …`
    let body = line.strip_prefix("@@ ")?;
    let mut it = body.split_whitespace();
    let old = it.next()?.strip_prefix('-')?;
    let new = it.next()?.strip_prefix('+')?;
    let count = |s: &str| -> Option<usize> {
        match s.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => s.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(old)?, count(new)?))
}

fn parse_unified(patch: &str) -> Result<Vec<PatchFile>, ToolError> {
    let lines: Vec<&str> = patch.lines().collect();
    let mut files: Vec<PatchFile> = Vec::new();
    let mut current: Option<usize> = None;
    let mut i = 0usize;
    let add =
        |files: &mut Vec<PatchFile>, path: String, op: PatchOp, text: &str| -> Option<usize> {
            if path == "/dev/null" || path.is_empty() {
                return None;
            }
            files.push(PatchFile {
                path,
                op,
                diff: format!("{text}\n"),
                source: false,
            });
            Some(files.len() - 1)
        };
    let source = |files: &mut Vec<PatchFile>, at: Option<usize>| {
        if let Some(f) = at.and_then(|i| files.get_mut(i)) {
            f.source = true;
        }
    };
    while let Some(&line) = lines.get(i) {
        let append = |files: &mut Vec<PatchFile>, current: Option<usize>, text: &str| {
            if let Some(f) = current.and_then(|c| files.get_mut(c)) {
                f.diff.push_str(text);
                f.diff.push('\n');
            }
        };
        if let (Some(old), Some(next)) = (
            line.strip_prefix("--- "),
            lines.get(i + 1).and_then(|n| n.strip_prefix("+++ ")),
        ) {
            let old_path = header_path(old);
            let new_path = header_path(next);
            let both = format!("{line}\n{}", lines.get(i + 1).copied().unwrap_or_default());
            current = if new_path == "/dev/null" {
                add(&mut files, old_path, PatchOp::Delete, &both)
            } else {
                let op = if old_path == "/dev/null" {
                    PatchOp::Add
                } else {
                    PatchOp::Update
                };
                let c = add(&mut files, new_path.clone(), op, &both);
                if old_path != new_path && old_path != "/dev/null" {
                    let from = add(&mut files, old_path, PatchOp::Delete, &both);
                    source(&mut files, from);
                }
                c
            };
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let (mut old_n, mut new_n) = hunk_counts(line).ok_or_else(|| ToolError::BadPatch {
                line: i + 1,
                message: format!("malformed hunk header `{line}`"),
            })?;
            if current.is_none() {
                return Err(ToolError::BadPatch {
                    line: i + 1,
                    message: "a hunk comes before any file header".into(),
                });
            }
            append(&mut files, current, line);
            i += 1;
            while old_n > 0 || new_n > 0 {
                let Some(&body) = lines.get(i) else {
                    return Err(ToolError::BadPatch {
                        line: i,
                        message: "the patch ends inside a hunk".into(),
                    });
                };
                match body.chars().next() {
                    Some(' ') | None => {
                        old_n = old_n.saturating_sub(1);
                        new_n = new_n.saturating_sub(1);
                    }
                    Some('-') => old_n = old_n.saturating_sub(1),
                    Some('+') => new_n = new_n.saturating_sub(1),
                    Some('\\') => {}
                    Some(_) => {
                        return Err(ToolError::BadPatch {
                            line: i + 1,
                            message: "a hunk has fewer lines than its header says".into(),
                        });
                    }
                }
                append(&mut files, current, body);
                i += 1;
            }
            // A `\ No newline at end of file` after the last counted line.
            while let Some(&body) = lines.get(i) {
                if !body.starts_with('\\') {
                    break;
                }
                append(&mut files, current, body);
                i += 1;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // Pure renames and mode changes have no `---`/`+++` lines: record both names.
            if let Some((a, b)) = rest.split_once(" b/") {
                let a = header_path(a);
                let b = header_path(&format!("b/{b}"));
                current = add(&mut files, b.clone(), PatchOp::Update, line);
                if a != b {
                    // A rename or a copy: either way `a`'s content goes to `b`.
                    let from = add(&mut files, a, PatchOp::Delete, line);
                    source(&mut files, from);
                }
            }
            i += 1;
            continue;
        }
        if line.trim_start().starts_with("*** ") {
            // `*** Begin Patch`, `*** Add File: …` outside a hunk: an envelope applier
            // would act on it, and this reader would not.
            return Err(ToolError::BadPatch {
                line: i + 1,
                message: "an envelope marker in a unified diff; a patch is read whole or refused"
                    .into(),
            });
        }
        for (prefix, op, from) in [
            ("rename from ", PatchOp::Delete, true),
            ("rename to ", PatchOp::MoveTo, false),
            ("copy from ", PatchOp::Update, true),
            ("copy to ", PatchOp::Add, false),
        ] {
            if let Some(p) = line.strip_prefix(prefix) {
                let at = add(&mut files, header_path(p), op, line);
                if from {
                    source(&mut files, at);
                }
            }
        }
        append(&mut files, current, line);
        i += 1;
    }
    // A git header and its `---`/`+++` lines name the same file twice: keep the first.
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for f in files {
        if seen.insert(f.path.clone()) {
            out.push(f);
        } else if let Some(prev) = out.iter_mut().find(|p: &&mut PatchFile| p.path == f.path) {
            prev.diff.push_str(&f.diff);
            prev.source |= f.source;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_lists_every_file() {
        let p = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: src/b.rs\n*** Move to: src/c.rs\n@@\n-x\n+y\n*** Delete File: d\n*** End Patch\n";
        let files = parse_patch(p).unwrap();
        let got: Vec<(&str, PatchOp)> = files.iter().map(|f| (f.path.as_str(), f.op)).collect();
        assert_eq!(
            got,
            vec![
                ("a.txt", PatchOp::Add),
                ("src/b.rs", PatchOp::Update),
                ("src/c.rs", PatchOp::MoveTo),
                ("d", PatchOp::Delete)
            ]
        );
    }

    #[test]
    fn a_patch_is_read_whole_or_refused() {
        let env = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n";
        assert_eq!(parse_patch(env).unwrap().len(), 1);
        for bad in [
            // Trailing unified diff after the envelope.
            format!("{env}--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n"),
            // Trailing envelope.
            format!("{env}*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch\n"),
            // A unified header between sections.
            "*** Begin Patch\n*** Add File: a\n+x\ndiff --git a/b b/b\n*** End Patch\n".to_string(),
            // An envelope marker in a unified diff.
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n*** Add File: ../../etc/cron.d/x\n+x\n"
                .to_string(),
        ] {
            assert!(
                matches!(parse_patch(&bad), Err(ToolError::BadPatch { .. })),
                "{bad}"
            );
        }
        // Content that merely looks like a header inside an Update section is content.
        let ok = "*** Begin Patch\n*** Update File: x.sql\n@@\n--- old comment\n+-- new\n*** End Patch\n\n";
        assert_eq!(parse_patch(ok).unwrap().len(), 1);
    }

    #[test]
    fn unified_hunk_lines_that_look_like_headers_are_content() {
        let p = "--- a/x.sql\n+++ b/x.sql\n@@ -1,2 +1,1 @@\n--- old comment\n keep\n";
        let files = parse_patch(p).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "x.sql");
    }
}
