//! The one unwrapper and the one code-string extractor: `describe` reads one program's
//! words by its table entry (inner command, code strings, script, reads, writes, options
//! that run something, opaque parts), `layers` looks through wrappers to the command that
//! really runs, and `code_text` takes a code string out of the words. The AST effects,
//! the floor, the V1 lexer and arity all use these, so they find the same inner command
//! and the same code.

pub use super::description::{CodeArg, Description, Via};
use super::{Role, basename, builtins, git, languages, lookup, shells, tools, wrappers};

/// Reads one program's words (`words[0]` is the command word) by its table entry.
/// A program the table does not know gets an empty description.
pub fn describe(words: &[&str]) -> Description {
    let mut d = Description::default();
    let Some(first) = words.first() else {
        return d;
    };
    match basename(first) {
        "eval" => {
            if words.len() > 1 {
                d.code.push(CodeArg {
                    word: 1,
                    offset: 0,
                    join_rest: true,
                });
            }
            return d;
        }
        "trap" => {
            trap_code(words, &mut d);
            return d;
        }
        name @ ("source" | ".") => {
            let f = words.get(1).copied().unwrap_or_default();
            d.opaque.push(format!(
                "`{name} {f}` runs the file's commands in this shell"
            ));
            return d;
        }
        _ => {}
    }
    let Some(p) = lookup(first) else {
        return d;
    };
    match p.role {
        Role::Shell => shells::describe(p, words, &mut d),
        Role::Wrapper { .. } | Role::CodeOperands { .. } => wrappers::describe(p, words, &mut d),
        Role::Git => git::describe(p, words, &mut d),
        Role::Tool if builtins::owns(p) => builtins::describe(p, words, &mut d),
        Role::Tool if languages::owns(p) => languages::describe(p, words, &mut d),
        Role::Tool => tools::describe(p, words, &mut d),
        Role::Opaque(why) => d.opaque.push(format!("`{}`, which {why}", basename(first))),
    }
    d
}

/// `trap [-lpP] [[ACTION] SIGNAL…]`: with two or more operands the first is code the
/// shell runs when a signal (or `EXIT`, `ERR`, `DEBUG`, `RETURN`) arrives, parsed like
/// `eval`'s. `-` or an empty action resets or ignores; one operand is a signal to
/// reset. Any other option is an error in bash, and is not read here (opaque).
fn trap_code(words: &[&str], d: &mut Description) {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match *w {
            "--" => {
                i += 1;
                break;
            }
            w if w.starts_with('-') && w.len() > 1 => {
                if !w.chars().skip(1).all(|c| matches!(c, 'l' | 'p' | 'P')) {
                    d.opaque
                        .push(format!("`trap {w}`, an option bash's trap does not take"));
                    return;
                }
                i += 1;
            }
            _ => break,
        }
    }
    let operands = words.get(i..).unwrap_or_default();
    if operands.len() >= 2
        && let Some(action) = operands.first()
        && *action != "-"
        && !action.is_empty()
    {
        d.code.push(CodeArg {
            word: i,
            offset: 0,
            join_rest: false,
        });
    }
}

/// The text of a code string.
pub fn code_text(code: &CodeArg, words: &[&str]) -> String {
    let mut out = words
        .get(code.word)
        .and_then(|w| w.get(code.offset..))
        .unwrap_or_default()
        .to_string();
    if code.join_rest {
        for w in words.get(code.word + 1..).unwrap_or_default() {
            out.push(' ');
            out.push_str(w);
        }
    }
    out
}

/// How many wrappers are looked through before giving up (`sudo sudo sudo …`).
pub const MAX_LAYERS: usize = 16;

/// One program in a chain of wrappers: where its words start and what they mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub start: usize,
    pub description: Description,
}

/// Looks through wrappers from the outermost: one layer per program, the last one the
/// command that really runs (or the wrapper itself when it runs no inner command).
/// Assignments and reserved words before the command word are the caller's concern.
pub fn layers(words: &[&str]) -> Vec<Layer> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < words.len() && out.len() < MAX_LAYERS {
        let description = describe(words.get(start..).unwrap_or_default());
        let next = description.inner.map(|i| start + i);
        out.push(Layer { start, description });
        match next {
            Some(n) if n > start => start = n,
            _ => break,
        }
    }
    out
}

/// The index of the command word that really runs, wrappers looked through: the last
/// wrapper itself when it runs no inner command (`command -v rm` -> 0).
pub fn innermost(words: &[&str]) -> usize {
    layers(words).last().map_or(0, |l| l.start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::all;

    fn join(words: &[&str], from: usize) -> String {
        words.get(from..).unwrap_or_default().join(" ")
    }

    /// Every example of every table entry, run through `describe`.
    #[test]
    fn table_examples_hold() {
        let mut failures = Vec::new();
        let mut count = 0;
        for p in all() {
            for ex in p.examples {
                count += 1;
                let words: Vec<&str> = ex.command.split_whitespace().collect();
                let d = describe(&words);
                let inner = d.inner.map(|i| join(&words, i));
                let code = d
                    .code
                    .first()
                    .map(|c| code_text(c, &words))
                    .or_else(|| d.option_code.first().cloned());
                let got = (
                    inner.as_deref(),
                    code.as_deref(),
                    !d.opaque.is_empty(),
                    !d.runs.is_empty(),
                    d.reads.iter().map(String::as_str).collect::<Vec<_>>(),
                    d.writes.iter().map(String::as_str).collect::<Vec<_>>(),
                );
                let want = (
                    ex.inner,
                    ex.code,
                    ex.opaque,
                    ex.runs,
                    ex.reads.to_vec(),
                    ex.writes.to_vec(),
                );
                if got != want {
                    failures.push(format!(
                        "`{}`: got {got:?}, want {want:?} ({d:?})",
                        ex.command
                    ));
                }
            }
        }
        assert!(count >= 60, "only {count} examples");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn layers_look_through_nested_wrappers() {
        let w: Vec<&str> = "sudo -u root env A=1 nice -n 5 timeout 10 rm -rf /"
            .split_whitespace()
            .collect();
        assert_eq!(innermost(&w), 10);
        let w: Vec<&str> = "command -v rm".split_whitespace().collect();
        assert_eq!(innermost(&w), 0);
    }
}
