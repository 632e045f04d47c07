//! Command lists for the oracle: files of commands (one per line, read exactly as
//! `compare` reads them), the commands of the golden fixture tables, the snippets of
//! the grammar pins, and generated commands.
//!
//! Owns recognising which kind a file is (a `.jsonl` table, a `grammars-tests/` pin
//! file, or a plain list) and keeping where each command came from.

use std::path::Path;

use serde::Serialize;

use crate::compare::{read_source, split_commands};

/// One command and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// File name (or `generated:SEED`).
    pub source: String,
    /// 1-based line (the `===` header for a grammar snippet, the index for generated).
    pub line: usize,
    pub command: String,
}

/// A file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read `{path}`: {message}")]
    Read { path: String, message: String },
}

/// The commands of a JSONL fixture table: every line that is a JSON object with a string
/// `command` field (comment lines `//`, `#` and other lines are skipped).
pub fn fixture_commands(source: &str, text: &str, out: &mut Vec<Input>) {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if !t.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else {
            continue;
        };
        if let Some(c) = v.get("command").and_then(|c| c.as_str()) {
            out.push(Input {
                source: source.to_string(),
                line: i + 1,
                command: c.to_string(),
            });
        }
    }
}

/// The snippets of a grammar pin file: the lines between `=== name` and `---`.
pub fn grammar_snippets(source: &str, text: &str, out: &mut Vec<Input>) {
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("=== ") {
            current = Some((i + 1, Vec::new()));
        } else if line == "---" {
            if let Some((at, lines)) = current.take() {
                let command = lines.join("\n");
                if !command.trim().is_empty() {
                    out.push(Input {
                        source: source.to_string(),
                        line: at,
                        command,
                    });
                }
            }
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
}

/// Reads one file of any of the three kinds into `out`.
pub fn read_file(path: &str, out: &mut Vec<Input>) -> Result<(), InputError> {
    let bytes = read_source(path).map_err(|e| InputError::Read {
        path: path.to_string(),
        message: e.to_string(),
    })?;
    let name = if path == "-" { "<stdin>" } else { path };
    let p = Path::new(path);
    let is_grammar = p
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|d| d == "grammars-tests");
    if p.extension().is_some_and(|e| e == "jsonl") {
        fixture_commands(name, &String::from_utf8_lossy(&bytes), out);
    } else if is_grammar {
        grammar_snippets(name, &String::from_utf8_lossy(&bytes), out);
    } else {
        let mut lines = Vec::new();
        split_commands(name, &bytes, None, &mut lines);
        out.extend(lines.into_iter().map(|l| Input {
            source: l.source,
            line: l.line,
            command: l.command,
        }));
    }
    Ok(())
}

/// Every `*.jsonl` under `fixtures/` and every file under `grammars-tests/` of a
/// checkout, sorted (the "all fixture commands" input).
pub fn project_tables(repo: &Path) -> Result<Vec<String>, InputError> {
    let mut files = Vec::new();
    for (dir, want_jsonl) in [("fixtures", true), ("grammars-tests", false)] {
        let d = repo.join(dir);
        let rd = std::fs::read_dir(&d).map_err(|e| InputError::Read {
            path: d.display().to_string(),
            message: e.to_string(),
        })?;
        for entry in rd.flatten() {
            let p = entry.path();
            let jsonl = p.extension().is_some_and(|e| e == "jsonl");
            if p.is_file()
                && (!want_jsonl || jsonl)
                && (want_jsonl || p.extension().is_some_and(|e| e == "txt"))
            {
                files.push(p.display().to_string());
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fixture_commands_and_grammar_snippets() {
        let mut out = Vec::new();
        fixture_commands(
            "t.jsonl",
            "// note\n{\"command\": \"ls -la\", \"x\": 1}\n{\"tool\": \"read\"}\n",
            &mut out,
        );
        grammar_snippets(
            "g.txt",
            "# head\n=== one\ncat <<E\nx\nE\n---\n(program)\n=== two\nls\n---\n(x)\n",
            &mut out,
        );
        let got: Vec<(&str, usize)> = out.iter().map(|i| (i.command.as_str(), i.line)).collect();
        assert_eq!(got, vec![("ls -la", 2), ("cat <<E\nx\nE", 2), ("ls", 8)]);
    }
}
