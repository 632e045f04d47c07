//! The text both engines read: bash's own line-reading layer, applied before either
//! engine tokenizes.
//!
//! Bash removes every backslash-newline pair before it tokenizes (`shell_getc`), except
//! inside single quotes, ANSI-C quotes (`$'…'`), comments and the bodies of here-documents
//! whose delimiter is quoted. Neither tree-sitter-bash nor a word lexer does this in
//! every context: `ls "$\<newline>(id)"` runs `id`, yet both read a literal `$`. So the
//! pairs bash removes are removed here, once, for both engines, and a position this
//! scanner cannot place with certainty is an error the caller treats as unreadable
//! (fail closed), never a guess.
//!
//! Owns only continuation splicing. Bytes that bash reads as word characters but the
//! grammar reads as blanks (CR, form feed, vertical tab) are the parser's concern
//! (`shell::ast::parse`); NUL is refused by each engine.

use std::borrow::Cow;

/// Why the text could not be spliced the way bash would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A line continuation in a construct whose quoting this scanner cannot follow
    /// exactly (a `case` pattern inside `$( )`, quotes inside `"${…}"`).
    #[error("line continuation at byte {at} inside a construct KHAELOR cannot place")]
    Unplaceable { at: usize },
    /// More nested quoting than the scanner follows.
    #[error("quoting nested deeper than {max} levels at byte {at}")]
    TooDeep { at: usize, max: usize },
}

/// Nesting the scanner follows before it gives up (fail closed).
const MAX_NESTING: usize = 512;

/// The quoting context at the current byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Top level, `$( )`, `( )`, `$(( ))`: quotes, comments and heredocs are active.
    Code,
    /// Inside `"…"`: only `\`, `$( )`, `${ }` and backticks are special.
    Double,
    /// Inside a backtick substitution.
    Backtick,
    /// Inside `${…}`; `quoted` when the expansion itself sits in double quotes, where
    /// bash's quote rules for the word part differ by operator.
    Brace { quoted: bool },
}

/// A here-document whose body starts after the next newline token.
#[derive(Debug, Clone)]
struct Pending {
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
}

/// The text with every backslash-newline pair bash removes removed. Borrowed when the
/// text has no backslash-newline at all (the usual case).
pub fn splice(text: &str) -> Result<Cow<'_, str>, SourceError> {
    if !text.contains("\\\n") {
        return Ok(Cow::Borrowed(text));
    }
    Scanner::new(text).run().map(Cow::Owned)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    out: Vec<u8>,
    stack: Vec<Ctx>,
    pending: Vec<Pending>,
    /// Set when a construct was met whose quoting is not followed exactly; any later
    /// continuation is then an error.
    unsure: bool,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Scanner {
            bytes: text.as_bytes(),
            out: Vec::with_capacity(text.len()),
            stack: vec![Ctx::Code],
            pending: Vec::new(),
            unsure: false,
        }
    }

    fn ctx(&self) -> Ctx {
        self.stack.last().copied().unwrap_or(Ctx::Code)
    }

    fn push(&mut self, c: Ctx, at: usize) -> Result<(), SourceError> {
        if self.stack.len() >= MAX_NESTING {
            return Err(SourceError::TooDeep {
                at,
                max: MAX_NESTING,
            });
        }
        self.stack.push(c);
        Ok(())
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    fn copy(&mut self, from: usize, to: usize) {
        if let Some(s) = self.bytes.get(from..to) {
            self.out.extend_from_slice(s);
        }
    }

    /// A backslash at `i`: a continuation is dropped, any other pair is copied whole.
    fn backslash(&mut self, i: usize) -> Result<usize, SourceError> {
        match self.at(i + 1) {
            Some(b'\n') => {
                if self.unsure {
                    return Err(SourceError::Unplaceable { at: i });
                }
                Ok(i + 2)
            }
            Some(_) => {
                // The escaped byte may be the first of a multi-byte character: copy the
                // backslash and let the main loop copy what follows byte by byte.
                self.out.push(b'\\');
                let next = i + 1;
                self.copy(next, next + 1);
                Ok(next + 1)
            }
            None => {
                self.out.push(b'\\');
                Ok(i + 1)
            }
        }
    }

    /// Whether the byte at `i` starts a word (for `#` comments).
    fn word_start(&self) -> bool {
        self.out.last().is_none_or(|&p| {
            matches!(
                p,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            )
        })
    }

    fn run(mut self) -> Result<String, SourceError> {
        let mut i = 0;
        while let Some(c) = self.at(i) {
            i = match self.ctx() {
                Ctx::Code => self.code(c, i)?,
                Ctx::Double => self.double(c, i)?,
                Ctx::Backtick => self.backtick(c, i)?,
                Ctx::Brace { quoted } => self.brace(c, i, quoted)?,
            };
        }
        Ok(String::from_utf8(self.out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    /// `$(`, `${`, `$'`, backticks and double quotes open from code and from `"…"`.
    fn dollar(&mut self, i: usize) -> Result<Option<usize>, SourceError> {
        match self.at(i + 1) {
            Some(b'(') => {
                self.out.extend_from_slice(b"$(");
                self.push(Ctx::Code, i)?;
                Ok(Some(i + 2))
            }
            Some(b'{') => {
                self.out.extend_from_slice(b"${");
                let quoted = self.ctx() == Ctx::Double;
                self.push(Ctx::Brace { quoted }, i)?;
                Ok(Some(i + 2))
            }
            _ => Ok(None),
        }
    }

    fn code(&mut self, c: u8, i: usize) -> Result<usize, SourceError> {
        match c {
            b'\\' => self.backslash(i),
            b'\'' => {
                let end = self.find(b'\'', i + 1);
                self.copy(i, end + 1);
                Ok(end + 1)
            }
            b'"' => {
                self.out.push(b'"');
                self.push(Ctx::Double, i)?;
                Ok(i + 1)
            }
            b'`' => {
                self.out.push(b'`');
                self.push(Ctx::Backtick, i)?;
                Ok(i + 1)
            }
            b'$' if self.at(i + 1) == Some(b'\'') => {
                let end = self.ansi_c_end(i + 2);
                self.copy(i, end);
                Ok(end)
            }
            b'$' => match self.dollar(i)? {
                Some(next) => Ok(next),
                None => {
                    self.out.push(b'$');
                    Ok(i + 1)
                }
            },
            b'(' => {
                self.out.push(b'(');
                self.push(Ctx::Code, i)?;
                Ok(i + 1)
            }
            b')' => {
                self.out.push(b')');
                if self.stack.len() > 1 {
                    self.stack.pop();
                }
                Ok(i + 1)
            }
            b'#' if self.word_start() => {
                // A comment runs to the newline; a backslash there continues nothing.
                let end = self.find_or_end(b'\n', i);
                self.copy(i, end);
                Ok(end)
            }
            b'<' if self.at(i + 1) == Some(b'<') && self.at(i + 2) == Some(b'<') => {
                // A here-string, not a here-document.
                self.out.extend_from_slice(b"<<<");
                Ok(i + 3)
            }
            b'<' if self.at(i + 1) == Some(b'<') => self.heredoc_operator(i),
            b'\n' => {
                self.out.push(b'\n');
                self.bodies(i + 1)
            }
            _ => {
                if self.stack.len() > 1 && self.word_is(i, b"case") {
                    // `case x in a) …` inside `( )`: the pattern's `)` is not a closing
                    // parenthesis, which this scanner does not follow.
                    self.unsure = true;
                }
                self.out.push(c);
                Ok(i + 1)
            }
        }
    }

    fn double(&mut self, c: u8, i: usize) -> Result<usize, SourceError> {
        match c {
            b'\\' => self.backslash(i),
            b'"' => {
                self.out.push(b'"');
                self.stack.pop();
                Ok(i + 1)
            }
            b'`' => {
                self.out.push(b'`');
                self.push(Ctx::Backtick, i)?;
                Ok(i + 1)
            }
            b'$' => match self.dollar(i)? {
                Some(next) => Ok(next),
                None => {
                    self.out.push(b'$');
                    Ok(i + 1)
                }
            },
            _ => {
                self.out.push(c);
                Ok(i + 1)
            }
        }
    }

    fn backtick(&mut self, c: u8, i: usize) -> Result<usize, SourceError> {
        match c {
            b'\\' => self.backslash(i),
            b'`' => {
                self.out.push(b'`');
                self.stack.pop();
                Ok(i + 1)
            }
            b'\'' => {
                let end = self.find(b'\'', i + 1);
                self.copy(i, end + 1);
                Ok(end + 1)
            }
            b'"' => {
                self.out.push(b'"');
                self.push(Ctx::Double, i)?;
                Ok(i + 1)
            }
            b'$' => match self.dollar(i)? {
                Some(next) => Ok(next),
                None => {
                    self.out.push(b'$');
                    Ok(i + 1)
                }
            },
            _ => {
                self.out.push(c);
                Ok(i + 1)
            }
        }
    }

    fn brace(&mut self, c: u8, i: usize, quoted: bool) -> Result<usize, SourceError> {
        match c {
            b'\\' => self.backslash(i),
            b'}' => {
                self.out.push(b'}');
                self.stack.pop();
                Ok(i + 1)
            }
            b'{' => {
                // `${x:-{a}}`: bash counts nested braces; this scanner does not.
                self.unsure = true;
                self.out.push(b'{');
                Ok(i + 1)
            }
            b'\'' if quoted => {
                // `"${x:-'a'}"`: whether these quotes quote depends on the operator.
                self.unsure = true;
                self.out.push(b'\'');
                Ok(i + 1)
            }
            b'\'' => {
                let end = self.find(b'\'', i + 1);
                self.copy(i, end + 1);
                Ok(end + 1)
            }
            b'"' => {
                self.out.push(b'"');
                self.push(Ctx::Double, i)?;
                Ok(i + 1)
            }
            b'`' => {
                self.out.push(b'`');
                self.push(Ctx::Backtick, i)?;
                Ok(i + 1)
            }
            b'$' => match self.dollar(i)? {
                Some(next) => Ok(next),
                None => {
                    self.out.push(b'$');
                    Ok(i + 1)
                }
            },
            _ => {
                self.out.push(c);
                Ok(i + 1)
            }
        }
    }

    /// Whether the keyword `word` starts at `i` as a whole word.
    fn word_is(&self, i: usize, word: &[u8]) -> bool {
        let end = i + word.len();
        self.bytes.get(i..end) == Some(word)
            && self.word_start()
            && self
                .at(end)
                .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b';'))
    }

    /// The index of the next `b` at or after `from`, or the last byte when there is
    /// none (an unterminated quote runs to the end, as the engines will report).
    fn find(&self, b: u8, from: usize) -> usize {
        self.bytes
            .get(from..)
            .and_then(|rest| rest.iter().position(|&x| x == b))
            .map_or(self.bytes.len().saturating_sub(1).max(from), |p| from + p)
    }

    fn find_or_end(&self, b: u8, from: usize) -> usize {
        self.bytes
            .get(from..)
            .and_then(|rest| rest.iter().position(|&x| x == b))
            .map_or(self.bytes.len(), |p| from + p)
    }

    /// The end (exclusive) of `$'…'` whose body starts at `from`; `\'` does not end it.
    fn ansi_c_end(&self, from: usize) -> usize {
        let mut j = from;
        while let Some(b) = self.at(j) {
            match b {
                b'\\' => j += 2,
                b'\'' => return j + 1,
                _ => j += 1,
            }
        }
        self.bytes.len()
    }

    /// `<<WORD` / `<<-WORD`: copies the operator and the delimiter word (splicing
    /// continuations inside an unquoted one, as bash does) and queues the body.
    fn heredoc_operator(&mut self, i: usize) -> Result<usize, SourceError> {
        self.out.extend_from_slice(b"<<");
        let mut j = i + 2;
        let strip_tabs = self.at(j) == Some(b'-');
        if strip_tabs {
            self.out.push(b'-');
            j += 1;
        }
        while let Some(b @ (b' ' | b'\t')) = self.at(j) {
            self.out.push(b);
            j += 1;
        }
        let mut delimiter: Vec<u8> = Vec::new();
        let mut quoted = false;
        while let Some(b) = self.at(j) {
            match b {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
                b'\\' if self.at(j + 1) == Some(b'\n') => j += 2,
                b'\\' => {
                    quoted = true;
                    self.out.push(b'\\');
                    if let Some(n) = self.at(j + 1) {
                        self.out.push(n);
                        delimiter.push(n);
                    }
                    j += 2;
                }
                b'\'' | b'"' => {
                    quoted = true;
                    let end = self.find(b, j + 1);
                    self.copy(j, end + 1);
                    if let Some(inner) = self.bytes.get(j + 1..end) {
                        delimiter.extend_from_slice(inner);
                    }
                    j = end + 1;
                }
                b'$' | b'`' => {
                    // A delimiter with an expansion in it is not expanded by bash, but
                    // this scanner does not follow its quoting: fail closed.
                    self.unsure = true;
                    self.out.push(b);
                    delimiter.push(b);
                    j += 1;
                }
                _ => {
                    self.out.push(b);
                    delimiter.push(b);
                    j += 1;
                }
            }
        }
        if !delimiter.is_empty() && delimiter.iter().all(u8::is_ascii_digit) {
            // `$(( 1 << 2 ))` is a shift, not a here-document: not told apart here.
            self.unsure = true;
        }
        self.pending.push(Pending {
            delimiter: String::from_utf8_lossy(&delimiter).into_owned(),
            quoted,
            strip_tabs,
        });
        Ok(j)
    }

    /// After a newline token: the bodies of the here-documents opened on the line that
    /// ended, each up to its delimiter line. An unquoted body loses its continuations
    /// line by line (quotes inside it do not matter: bash reads the lines first).
    fn bodies(&mut self, mut pos: usize) -> Result<usize, SourceError> {
        for doc in std::mem::take(&mut self.pending) {
            loop {
                if pos >= self.bytes.len() {
                    return Ok(pos);
                }
                // One logical line: physical lines joined at continuations when unquoted.
                let mut line: Vec<u8> = Vec::new();
                let mut j = pos;
                let mut ended = false;
                while let Some(b) = self.at(j) {
                    match b {
                        b'\\' if !doc.quoted => match self.at(j + 1) {
                            Some(b'\n') => j += 2,
                            Some(n) => {
                                line.push(b'\\');
                                line.push(n);
                                j += 2;
                            }
                            None => {
                                line.push(b'\\');
                                j += 1;
                            }
                        },
                        b'\n' => {
                            j += 1;
                            ended = true;
                            break;
                        }
                        _ => {
                            line.push(b);
                            j += 1;
                        }
                    }
                }
                let content: &[u8] = if doc.strip_tabs {
                    let k = line.iter().position(|&b| b != b'\t').unwrap_or(line.len());
                    line.get(k..).unwrap_or_default()
                } else {
                    &line
                };
                let is_end = content == doc.delimiter.as_bytes();
                self.out.extend_from_slice(&line);
                if ended {
                    self.out.push(b'\n');
                }
                pos = j;
                if is_end || !ended {
                    break;
                }
            }
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        splice(text)
            .map(|c| c.into_owned())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn removes_continuations_where_bash_does() {
        assert_eq!(s("ls \"$\\\n(id)\""), "ls \"$(id)\"");
        assert_eq!(s("ec\\\nho hi"), "echo hi");
        assert_eq!(s("a \\\n  --flag"), "a   --flag");
        assert_eq!(s("echo `echo a\\\nb`"), "echo `echo ab`");
    }

    #[test]
    fn keeps_them_where_bash_does() {
        assert_eq!(s("echo 'a\\\nb'"), "echo 'a\\\nb'");
        assert_eq!(s("echo $'c\\\nd'"), "echo $'c\\\nd'");
        assert_eq!(s("# x\\\necho k"), "# x\\\necho k");
        assert_eq!(s("echo a\\\\\necho b"), "echo a\\\\\necho b");
        assert_eq!(
            s("cat <<'E'\nc\\\nd\nE\necho \\\nz"),
            "cat <<'E'\nc\\\nd\nE\necho z"
        );
    }

    #[test]
    fn unquoted_heredoc_bodies_are_spliced_line_by_line() {
        assert_eq!(s("cat <<E\na\\\nb\nE"), "cat <<E\nab\nE");
        assert_eq!(
            s("cat <<E\n$(echo 'x\\\ny')\nE"),
            "cat <<E\n$(echo 'xy')\nE"
        );
        // The delimiter word itself is spliced.
        assert_eq!(
            s("cat <<E\\\nND\nhi\nEND\necho"),
            "cat <<END\nhi\nEND\necho"
        );
    }

    #[test]
    fn unsure_constructs_fail_closed() {
        assert!(splice("x=$(case a in a) echo;; esac) \\\n; ls").is_err());
        assert!(splice("echo \"${x:-'a\\\nb'}\"").is_err());
    }

    #[test]
    fn no_continuation_borrows() {
        assert!(matches!(splice("ls -la"), Ok(Cow::Borrowed(_))));
    }
}
