//! Commands too plain to need the parser: one command of literal words.
//!
//! Most commands agents run are one program with literal arguments (`ls -la src`,
//! `git status`, `grep -rn 'fn main' src`). For those, tree-sitter's tree is always the
//! same shape: a `program` holding one `command`, whose `command_name` holds the first
//! word and whose arguments are `word`, `number`, `raw_string` or `string` nodes. This
//! module recognises such texts by their bytes alone, so the analysis can build that
//! tree without parsing (the parse is most of what a short command costs).
//!
//! The language accepted is deliberately small, and anything outside it is parsed as
//! before:
//! - words separated by spaces and tabs, on one line, in printable ASCII;
//! - an unquoted word is made only of letters, digits and `_ . / , : + = ~ -`, and an
//!   argument also of `* ? % @` (a glob stays a `word`; the analysis expands it from
//!   the text): no quote, escape, expansion, bracket, brace, redirect, separator or
//!   comment character. The first word holds none of `* ? % @` (after a name the
//!   grammar starts reading an expansion at `%` or `@`: `x% a` is an ERROR);
//! - a word that looks like a number is a `number` when it is `-?[0-9]+`, and any other
//!   word starting with `-?[0-9]` is left to the parser, as is an argument starting
//!   with `=` (the grammar reads `==` and `=~` as operators);
//! - the first word is unquoted, holds no `=` or `+` (the grammar reads `x=`, `x+=` and
//!   even `x+:` as the start of an assignment), does not start with a
//!   digit and is no reserved word or declaration builtin (`if`, `time`, `declare`,
//!   `export`, `local`, `unset`, …), which the grammar reads as constructs of their own;
//! - `'…'` holds no `'`, and `"…"` holds no `"`, `$`, `` ` ``, `\` or `!`; each quoted
//!   argument stands alone (a quote glued to other text is a concatenation), and
//!   `"…"` does not hold blanks alone.
//!
//! The unit tests in `syntax.rs` hold the tree built from this reading to tree-sitter's
//! own, node by node, over both corpora and generated texts.

use std::ops::Range;

/// How tree-sitter-bash reads one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    Word,
    Number,
    RawString,
    /// A double-quoted string.
    String,
}

/// One plain command: where its name is and what its arguments are.
#[derive(Debug)]
pub(crate) struct Plain {
    pub(crate) name: Range<usize>,
    pub(crate) arguments: Vec<(Piece, Range<usize>)>,
}

/// Words the grammar reads as constructs of their own in command position (and `-`,
/// after which it reads `a=b` as an assignment).
const NOT_A_NAME: &[&str] = &[
    "-", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "declare", "typeset", "export", "readonly",
    "local", "unset", "unsetenv",
];

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A byte of an unquoted word; `argument`: not the first word, where the glob
/// characters `*` and `?` and `%`, `@` are plain text to the grammar too.
fn is_word_byte(b: u8, argument: bool) -> bool {
    b.is_ascii_alphanumeric() || b"_./,:+=~-".contains(&b) || (argument && b"*?%@".contains(&b))
}

/// Whether `word` starts as a number does (`-?[0-9]`).
fn starts_numeric(word: &[u8]) -> bool {
    let digits = word.strip_prefix(b"-").unwrap_or(word);
    digits.first().is_some_and(u8::is_ascii_digit)
}

/// Reads `src` as one plain command, or `None` when it is anything else.
pub(crate) fn read(src: &str) -> Option<Plain> {
    let bytes = src.as_bytes();
    let mut at = skip_blanks(bytes, 0);
    let name = unquoted(bytes, at, false)?;
    let text = bytes.get(name.clone())?;
    if text.iter().any(|&b| b == b'=' || b == b'+')
        || starts_numeric(text)
        || NOT_A_NAME.iter().any(|k| k.as_bytes() == text)
    {
        return None;
    }
    at = name.end;
    let mut arguments = Vec::new();
    loop {
        let next = skip_blanks(bytes, at);
        if next == bytes.len() {
            return Some(Plain { name, arguments });
        }
        // Arguments are separated by at least one blank.
        if next == at {
            return None;
        }
        let (piece, range) = match bytes.get(next)? {
            b'\'' => (Piece::RawString, quoted(bytes, next, b'\'', b"'")?),
            b'"' => {
                let range = quoted(bytes, next, b'"', b"\"$`\\!")?;
                let inside = bytes.get(range.start + 1..range.end - 1)?;
                // Blanks alone between the quotes are no `string_content` to the
                // grammar, which folds them into the closing quote.
                if !inside.is_empty() && inside.iter().all(|&b| is_blank(b)) {
                    return None;
                }
                (Piece::String, range)
            }
            _ => {
                let range = unquoted(bytes, next, true)?;
                let word = bytes.get(range.clone())?;
                // `==` and `=~` are operators to the grammar even here.
                if word.first() == Some(&b'=') {
                    return None;
                }
                let numeric = starts_numeric(word);
                let number = word.strip_prefix(b"-").unwrap_or(word);
                if numeric && !number.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                (if numeric { Piece::Number } else { Piece::Word }, range)
            }
        };
        at = range.end;
        arguments.push((piece, range));
    }
}

fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_blank) {
        at += 1;
    }
    at
}

/// The unquoted word starting at `at`, which must end at a blank or the end.
fn unquoted(bytes: &[u8], at: usize, argument: bool) -> Option<Range<usize>> {
    let mut end = at;
    while let Some(&b) = bytes.get(end) {
        if is_blank(b) {
            break;
        }
        if !is_word_byte(b, argument) {
            return None;
        }
        end += 1;
    }
    (end > at).then_some(at..end)
}

/// The quoted argument starting at `at` with `quote`, quotes included; its content is
/// printable ASCII with none of `banned`, and a blank or the end follows it.
fn quoted(bytes: &[u8], at: usize, quote: u8, banned: &[u8]) -> Option<Range<usize>> {
    let mut end = at + 1;
    loop {
        let b = *bytes.get(end)?;
        if b == quote {
            break;
        }
        if !(b == b' ' || b.is_ascii_graphic()) || banned.contains(&b) {
            return None;
        }
        end += 1;
    }
    let end = end + 1;
    match bytes.get(end) {
        None => Some(at..end),
        Some(&b) if is_blank(b) => Some(at..end),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn plain_commands_are_read() {
        let p = read("  grep -rn 'fn main' \"a b\" \"\" src 10 -5\t").unwrap();
        assert_eq!(p.name, 2..6);
        let pieces: Vec<Piece> = p.arguments.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            pieces,
            [
                Piece::Word,
                Piece::RawString,
                Piece::String,
                Piece::String,
                Piece::Word,
                Piece::Number,
                Piece::Number,
            ]
        );
        assert_eq!(p.arguments[1].1, 11..20);
        // `"a b"` holds content, `""` none.
        assert_eq!((p.arguments[2].1.len(), p.arguments[3].1.len()), (5, 2));
    }

    #[test]
    fn anything_else_is_left_to_the_parser() {
        for text in [
            "",
            "   ",
            "a=b ls",
            "export A",
            "time ls",
            "if",
            "10 x",
            "ls 1.5",
            "x% a",
            "- a=b x",
            "x+: a",
            "x@ a",
            "ls -1x",
            "ls x'y'",
            "ls 'x'y",
            "ls \"$HOME\"",
            "ls == x",
            "ls =~",
            "seq -s \" \" 5",
            "ls \"a\\b\"",
            "ls 'unterminated",
            "*.sh x",
            "ls [ab]",
            "ls a;b",
            "ls a\nb",
            "ls # c",
            "ls {a,b}",
            "ls $x",
            "ls a>b",
            "ls é",
            "'ls' x",
            "ls\u{b}x",
        ] {
            assert!(read(text).is_none(), "{text:?}");
        }
    }
}
