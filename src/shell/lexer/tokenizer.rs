//! The tokenizer of the V1 lexer (seed §3.1): one pass over the bytes with an explicit
//! stack of nesting levels (`$(`, backticks, `<(`), never recursion on the input, so
//! 10,000 nested `$(` are an error, not a stack overflow.
//!
//! Owns quoting (single, double, ANSI-C `$'…'`, backslash), operators with fd prefixes
//! and duplication targets, comments, here-document bodies, and the source text kept in
//! the word that holds a substitution. Knows nothing of classes, requests or the floor:
//! those read its `Tokens`.

use std::mem;

use super::LexError;

/// How deep `$(`, backticks and `<(`/`>(` may nest before the lexer gives up. Real
/// commands nest two or three levels; the bound keeps the work linear in the input.
const MAX_DEPTH: usize = 32;

/// How many bytes of substitution source text the words of enclosing commands may hold
/// in all, as a multiple of the input plus a constant: nesting repeats the inner text
/// once per level, and a bound keeps the words (and the analysis over them) linear.
const COPY_FACTOR: usize = 8;
const COPY_SLACK: usize = 64 * 1024;

/// One simple command as the lexer read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexedCommand {
    pub words: Vec<String>,
    /// Where each word starts, in bytes of the text the lexer read (after bash's
    /// removal of backslash-newline), so a lowering can order and place commands.
    pub starts: Vec<usize>,
    /// The operator right before this command was an output redirection (`>`, `>>`,
    /// `&>`, `2>`, `>|`, `<>`): its first word is a write target.
    pub after_write_redirect: bool,
    /// The operator that ended the command before this one at its level (`|`, `&&`,
    /// `;`, …), if any.
    pub op_before: Option<String>,
    /// The operator that ended this command, if one did.
    pub op_after: Option<String>,
}

/// A here-document body and the command it feeds: data, unless that command is a
/// shell (`bash <<EOF`), which the floor then reads as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    /// The words of the command before `<<` (V1 ends a command at the operator).
    pub owner: Vec<String>,
    pub body: String,
}

/// The tokenizer's full output: `Lexed` plus which commands are redirect targets and
/// the here-document bodies (which are not commands, so not in `commands`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tokens {
    pub commands: Vec<LexedCommand>,
    pub operators: Vec<String>,
    pub has_substitution: bool,
    pub heredocs: Vec<Heredoc>,
}

pub fn lex(command: &str) -> Result<Tokens, LexError> {
    if let Some(at) = command.bytes().position(|b| b == 0) {
        return Err(LexError::Nul { at });
    }
    // Bash removes backslash-newline pairs before it tokenizes; so does every engine.
    let text = crate::shell::source::splice(command)?;
    Lexer::new(&text, 0).run()
}

/// What closes the current nesting level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Level {
    #[default]
    Top,
    /// `$(`, `$((`, `<(`, `>(`: closed by an unmatched `)`.
    Paren,
    /// Closed by the next backtick.
    Backtick,
}

/// The state of one nesting level; saved on a stack while a substitution is read.
#[derive(Debug, Default)]
struct Cur {
    level: Level,
    /// Byte where this level's opener starts (for the source text and errors).
    start: usize,
    opener: &'static str,
    word: Vec<u8>,
    /// A word is open (it may still be empty: `''`).
    in_word: bool,
    /// Where the open word started (the step that opened it).
    word_start: usize,
    /// The open word had quotes, escapes or expansions (so `2>` is not an fd prefix).
    quoted: bool,
    /// The index in `commands` of the command being read at this level.
    cmd: Option<usize>,
    /// Where the open double quote started, while inside one.
    dq_start: Option<usize>,
    /// The last operator at this level was an output redirection.
    pending_redirect: bool,
    /// Unmatched `(` inside a `Paren` level (subshells inside `$( )`).
    paren: u32,
    /// This level is an unquoted here-document body: read like a double-quoted word in
    /// which `"` is an ordinary character.
    heredoc_body: bool,
    /// The operator that ended the last command at this level, for the next one.
    last_op: Option<String>,
}

/// A `<<` whose delimiter word has been read and whose body starts after the next
/// newline.
#[derive(Debug)]
struct PendingHeredoc {
    owner: Vec<String>,
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    commands: Vec<LexedCommand>,
    operators: Vec<String>,
    has_substitution: bool,
    heredocs: Vec<Heredoc>,
    cur: Cur,
    stack: Vec<Cur>,
    /// Nesting already spent by the lexers this one runs inside (here-document bodies
    /// are read by a lexer of their own), so the depth bound holds across them.
    base_depth: usize,
    /// Where this lexer's text starts in the outermost text (a here-document body's
    /// offset), so word starts are positions in the text the caller gave.
    offset: usize,
    /// Bytes of substitution source text still allowed into enclosing words.
    copy_budget: usize,
    /// `<<` seen, waiting for its delimiter word: (owner words, strip tabs).
    delimiter_next: Option<(Vec<String>, bool)>,
    pending_heredocs: Vec<PendingHeredoc>,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str, base_depth: usize) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            commands: Vec::new(),
            operators: Vec::new(),
            has_substitution: false,
            heredocs: Vec::new(),
            cur: Cur::default(),
            stack: Vec::new(),
            base_depth,
            offset: 0,
            copy_budget: src
                .len()
                .saturating_mul(COPY_FACTOR)
                .saturating_add(COPY_SLACK),
            delimiter_next: None,
            pending_heredocs: Vec::new(),
        }
    }

    fn run(mut self) -> Result<Tokens, LexError> {
        let mut i = 0;
        while let Some(&b) = self.bytes.get(i) {
            if !self.cur.in_word {
                self.cur.word_start = i + self.offset;
            }
            i = if self.cur.dq_start.is_some() {
                self.step_quoted(i, b)?
            } else {
                self.step(i, b)?
            };
        }
        if self.cur.heredoc_body && self.stack.is_empty() {
            // The body itself is data: only the substitutions read inside it count.
            self.cur.word.clear();
            self.cur.in_word = false;
            self.cur.dq_start = None;
        }
        if let Some(at) = self.cur.dq_start {
            return Err(LexError::UnbalancedDoubleQuote { at });
        }
        if self.cur.level != Level::Top {
            return Err(LexError::Unterminated {
                opener: self.cur.opener,
                at: self.cur.start,
            });
        }
        self.end_command();
        Ok(Tokens {
            commands: self
                .commands
                .into_iter()
                .filter(|c| !c.words.is_empty())
                .collect(),
            operators: self.operators,
            has_substitution: self.has_substitution,
            heredocs: self.heredocs,
        })
    }

    fn peek(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    fn push(&mut self, b: u8) {
        self.cur.word.push(b);
        self.cur.in_word = true;
    }

    fn push_slice(&mut self, from: usize, to: usize) {
        if let Some(s) = self.bytes.get(from..to) {
            self.cur.word.extend_from_slice(s);
        }
        self.cur.in_word = true;
        self.cur.quoted = true;
    }

    /// Outside double quotes.
    fn step(&mut self, i: usize, b: u8) -> Result<usize, LexError> {
        match b {
            b' ' | b'\t' => {
                self.finish_word();
                Ok(i + 1)
            }
            b'\n' => {
                self.push_op("\n".to_string());
                self.heredoc_bodies(i + 1)
            }
            b'\'' => {
                let close = self
                    .find(b'\'', i + 1)
                    .ok_or(LexError::UnbalancedSingleQuote { at: i })?;
                self.push_slice(i + 1, close);
                Ok(close + 1)
            }
            b'"' => {
                self.cur.dq_start = Some(i);
                self.cur.in_word = true;
                self.cur.quoted = true;
                Ok(i + 1)
            }
            b'\\' => match self.peek(i + 1) {
                // A line continuation joins the lines.
                Some(b'\n') => Ok(i + 2),
                Some(c) => {
                    self.push(c);
                    self.cur.quoted = true;
                    Ok(i + 2)
                }
                None => Err(LexError::TrailingBackslash { at: i }),
            },
            // A comment: bash never runs it, so it is neither words nor markers.
            b'#' if !self.cur.in_word => Ok(self.find(b'\n', i).unwrap_or(self.bytes.len())),
            b'$' => self.dollar(i),
            b'`' => {
                if self.cur.level == Level::Backtick {
                    self.close(i)?;
                } else {
                    self.open(Level::Backtick, "`", i)?;
                }
                Ok(i + 1)
            }
            b'(' => {
                if self.cur.level == Level::Paren {
                    self.cur.paren += 1;
                }
                self.push_op("(".to_string());
                Ok(i + 1)
            }
            b')' => {
                if self.cur.level == Level::Paren && self.cur.paren == 0 {
                    self.close(i)?;
                } else {
                    self.cur.paren = self.cur.paren.saturating_sub(1);
                    self.push_op(")".to_string());
                }
                Ok(i + 1)
            }
            b'<' | b'>' if self.peek(i + 1) == Some(b'(') => {
                // Process substitution starts a word of its own.
                self.finish_word();
                self.open(Level::Paren, if b == b'<' { "<(" } else { ">(" }, i)?;
                Ok(i + 2)
            }
            b';' | b'&' | b'|' | b'<' | b'>' => Ok(self.operator(i, b)),
            _ => {
                self.push(b);
                Ok(i + 1)
            }
        }
    }

    /// Inside double quotes: only `\`, `$`, backtick and the closing quote are special.
    fn step_quoted(&mut self, i: usize, b: u8) -> Result<usize, LexError> {
        match b {
            b'"' if self.cur.heredoc_body => {
                self.push(b);
                Ok(i + 1)
            }
            b'"' => {
                self.cur.dq_start = None;
                Ok(i + 1)
            }
            b'\\' => match self.peek(i + 1) {
                Some(b'\n') => Ok(i + 2),
                Some(b'"') if self.cur.heredoc_body => {
                    self.push(b'\\');
                    Ok(i + 1)
                }
                Some(c @ (b'\\' | b'"' | b'$' | b'`')) => {
                    self.push(c);
                    Ok(i + 2)
                }
                Some(_) => {
                    self.push(b'\\');
                    Ok(i + 1)
                }
                None => Err(LexError::TrailingBackslash { at: i }),
            },
            b'$' => self.dollar(i),
            b'`' => {
                self.open(Level::Backtick, "`", i)?;
                Ok(i + 1)
            }
            b'<' | b'>' if self.peek(i + 1) == Some(b'(') => {
                // Literal inside double quotes for bash; the seed flags it anyway.
                self.has_substitution = true;
                self.push(b);
                Ok(i + 1)
            }
            _ => {
                self.push(b);
                Ok(i + 1)
            }
        }
    }

    fn dollar(&mut self, i: usize) -> Result<usize, LexError> {
        let in_dq = self.cur.dq_start.is_some();
        match self.peek(i + 1) {
            // `$((` arithmetic reads as a `$(` whose body starts with `(`.
            Some(b'(') => {
                self.open(Level::Paren, "$(", i)?;
                Ok(i + 2)
            }
            Some(b'{') => self.parameter(i),
            Some(b'\'') if !in_dq => self.ansi_c(i),
            Some(b'"') if !in_dq => {
                // `$"…"` (locale translation) reads as a double-quoted string.
                self.cur.dq_start = Some(i);
                self.cur.in_word = true;
                self.cur.quoted = true;
                Ok(i + 2)
            }
            _ => {
                self.push(b'$');
                self.cur.quoted = true;
                Ok(i + 1)
            }
        }
    }

    /// `${…}`: kept verbatim in the word (callers expand `${HOME}`), flagged.
    fn parameter(&mut self, i: usize) -> Result<usize, LexError> {
        let in_dq = self.cur.dq_start.is_some();
        let mut j = i + 2;
        let mut depth = 1u32;
        loop {
            let Some(c) = self.peek(j) else {
                return Err(LexError::Unterminated {
                    opener: "${",
                    at: i,
                });
            };
            match c {
                b'\\' => j += 2,
                b'{' => {
                    depth += 1;
                    j += 1;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    j += 1;
                }
                b'\'' if !in_dq => {
                    j = self
                        .find(b'\'', j + 1)
                        .ok_or(LexError::UnbalancedSingleQuote { at: j })?
                        + 1;
                }
                b'"' => {
                    j = self
                        .find_dq_end(j + 1)
                        .ok_or(LexError::UnbalancedDoubleQuote { at: j })?
                        + 1
                }
                _ => j += 1,
            }
        }
        self.has_substitution = true;
        self.push_slice(i, j + 1);
        Ok(j + 1)
    }

    /// `$'…'`: ANSI-C quoting, decoded as bash does (`$'\x2f'` is `/`).
    fn ansi_c(&mut self, i: usize) -> Result<usize, LexError> {
        let mut j = i + 2;
        // bash cuts the string at a decoded NUL byte.
        let mut cut = false;
        self.cur.in_word = true;
        self.cur.quoted = true;
        loop {
            let Some(c) = self.peek(j) else {
                return Err(LexError::UnbalancedSingleQuote { at: i + 1 });
            };
            if c == b'\'' {
                return Ok(j + 1);
            }
            if c != b'\\' {
                if !cut {
                    self.cur.word.push(c);
                }
                j += 1;
                continue;
            }
            let (decoded, used) = decode_ansi_escape(self.bytes.get(j + 1..).unwrap_or_default());
            j += 1 + used;
            match decoded {
                Decoded::Byte(0) => cut = true,
                Decoded::Byte(v) if !cut => self.cur.word.push(v),
                Decoded::Char(ch) if !cut => {
                    let mut buf = [0u8; 4];
                    self.cur
                        .word
                        .extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                Decoded::Verbatim if !cut => {
                    self.cur.word.push(b'\\');
                    if let Some(s) = self.bytes.get(j - used..j) {
                        self.cur.word.extend_from_slice(s);
                    }
                }
                Decoded::End => return Err(LexError::UnbalancedSingleQuote { at: i + 1 }),
                _ => {}
            }
        }
    }

    fn find(&self, needle: u8, from: usize) -> Option<usize> {
        self.bytes
            .get(from..)?
            .iter()
            .position(|&b| b == needle)
            .map(|p| p + from)
    }

    fn find_dq_end(&self, from: usize) -> Option<usize> {
        let mut j = from;
        loop {
            match self.peek(j)? {
                b'\\' => j += 2,
                b'"' => return Some(j),
                _ => j += 1,
            }
        }
    }

    /// An operator starting at `i` (one of `; & | < >`), longest match first, with an
    /// fd prefix (`2>`) and a duplication target (`2>&1`, `>&-`) folded in.
    fn operator(&mut self, i: usize, b: u8) -> usize {
        let rest = self.bytes.get(i..).unwrap_or_default();
        let (op, len): (&str, usize) = match b {
            b';' if rest.starts_with(b";;") => (";;", 2),
            b';' => (";", 1),
            b'&' if rest.starts_with(b"&&") => ("&&", 2),
            b'&' if rest.starts_with(b"&>>") => ("&>>", 3),
            b'&' if rest.starts_with(b"&>") => ("&>", 2),
            b'&' => ("&", 1),
            b'|' if rest.starts_with(b"||") => ("||", 2),
            b'|' if rest.starts_with(b"|&") => ("|&", 2),
            b'|' => ("|", 1),
            b'<' if rest.starts_with(b"<<<") => ("<<<", 3),
            b'<' if rest.starts_with(b"<<-") => ("<<-", 3),
            b'<' if rest.starts_with(b"<<") => ("<<", 2),
            b'<' if rest.starts_with(b"<&") => ("<&", 2),
            b'<' if rest.starts_with(b"<>") => ("<>", 2),
            b'<' => ("<", 1),
            b'>' if rest.starts_with(b">>") => (">>", 2),
            b'>' if rest.starts_with(b">&") => (">&", 2),
            b'>' if rest.starts_with(b">|") => (">|", 2),
            _ => (">", 1),
        };
        let mut text = String::new();
        let redirect = b == b'<' || b == b'>';
        if redirect
            && self.cur.in_word
            && !self.cur.quoted
            && !self.cur.word.is_empty()
            && self.cur.word.iter().all(u8::is_ascii_digit)
        {
            text.extend(self.cur.word.drain(..).map(char::from));
            self.cur.in_word = false;
        }
        text.push_str(op);
        let mut end = i + len;
        if redirect && op.ends_with('&') {
            match self.peek(end) {
                Some(b'-') => {
                    text.push('-');
                    end += 1;
                }
                _ => {
                    while let Some(d) = self.peek(end).filter(u8::is_ascii_digit) {
                        text.push(char::from(d));
                        end += 1;
                    }
                }
            }
        }
        self.push_op(text);
        end
    }

    /// After a newline: the bodies of the here-documents opened on the line just ended,
    /// in order. A quoted delimiter (`<<'EOF'`) makes the body literal; otherwise its
    /// substitutions run, so they are read (by a lexer of its own, depth-bounded).
    /// Returns where lexing resumes: after the last delimiter line.
    fn heredoc_bodies(&mut self, mut pos: usize) -> Result<usize, LexError> {
        for doc in mem::take(&mut self.pending_heredocs) {
            let start = pos;
            let mut body_end = self.bytes.len();
            while pos < self.bytes.len() {
                let line_end = self.find(b'\n', pos).unwrap_or(self.bytes.len());
                let line = self.src.get(pos..line_end).unwrap_or_default();
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                let next = (line_end + 1).min(self.bytes.len());
                if line == doc.delimiter {
                    body_end = pos;
                    pos = next;
                    break;
                }
                pos = if line_end >= self.bytes.len() {
                    self.bytes.len()
                } else {
                    next
                };
            }
            let body = self.src.get(start..body_end).unwrap_or_default();
            if !doc.quoted {
                self.read_heredoc_body(body, start)?;
            }
            self.heredocs.push(Heredoc {
                owner: doc.owner,
                body: body.to_string(),
            });
        }
        Ok(pos)
    }

    fn read_heredoc_body(&mut self, body: &str, offset: usize) -> Result<(), LexError> {
        let depth = self.base_depth + self.stack.len() + 1;
        if depth >= MAX_DEPTH {
            return Err(LexError::TooDeep {
                at: offset,
                max: MAX_DEPTH,
            });
        }
        let mut inner = Lexer::new(body, depth);
        inner.offset = self.offset + offset;
        inner.cur.dq_start = Some(0);
        inner.cur.heredoc_body = true;
        let shift = |e: LexError| match e {
            LexError::UnbalancedSingleQuote { at } => {
                LexError::UnbalancedSingleQuote { at: at + offset }
            }
            LexError::UnbalancedDoubleQuote { at } => {
                LexError::UnbalancedDoubleQuote { at: at + offset }
            }
            LexError::Unterminated { opener, at } => LexError::Unterminated {
                opener,
                at: at + offset,
            },
            LexError::TrailingBackslash { at } => LexError::TrailingBackslash { at: at + offset },
            LexError::Nul { at } => LexError::Nul { at: at + offset },
            LexError::TooDeep { at, max } => LexError::TooDeep {
                at: at + offset,
                max,
            },
            LexError::TooLarge { at } => LexError::TooLarge { at: at + offset },
            LexError::Source(e) => LexError::Source(e),
        };
        let tokens = inner.run().map_err(shift)?;
        self.has_substitution |= tokens.has_substitution;
        self.operators.extend(tokens.operators);
        self.commands.extend(tokens.commands);
        self.heredocs.extend(tokens.heredocs);
        Ok(())
    }

    fn finish_word(&mut self) {
        if !self.cur.in_word {
            return;
        }
        let bytes = mem::take(&mut self.cur.word);
        let word = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        if let Some((owner, strip_tabs)) = self.delimiter_next.take() {
            self.pending_heredocs.push(PendingHeredoc {
                owner,
                delimiter: word.clone(),
                quoted: self.cur.quoted,
                strip_tabs,
            });
        }
        let slot = self.command_slot();
        let start = self.cur.word_start;
        if let Some(c) = self.commands.get_mut(slot) {
            c.words.push(word);
            c.starts.push(start);
        }
        self.cur.in_word = false;
        self.cur.quoted = false;
    }

    /// The command being read at this level, opened on first use so commands keep
    /// source order even when a substitution ends before its outer command.
    fn command_slot(&mut self) -> usize {
        if let Some(i) = self.cur.cmd {
            return i;
        }
        self.commands.push(LexedCommand {
            words: Vec::new(),
            starts: Vec::new(),
            after_write_redirect: self.cur.pending_redirect,
            op_before: self.cur.last_op.take(),
            op_after: None,
        });
        self.cur.pending_redirect = false;
        let i = self.commands.len() - 1;
        self.cur.cmd = Some(i);
        i
    }

    fn end_command(&mut self) {
        self.finish_word();
        self.cur.cmd = None;
    }

    fn push_op(&mut self, op: String) {
        let bare = op.trim_start_matches(|c: char| c.is_ascii_digit());
        if bare == "<<" || bare == "<<-" {
            self.finish_word();
            let owner = self.cur.cmd.and_then(|c| self.commands.get(c));
            let owner = owner.map(|c| c.words.clone()).unwrap_or_default();
            self.delimiter_next = Some((owner, bare == "<<-"));
        }
        if let Some(c) = self.cur.cmd.and_then(|i| self.commands.get_mut(i)) {
            c.op_after = Some(op.clone());
        }
        self.end_command();
        self.cur.pending_redirect = is_write_redirect(&op);
        self.cur.last_op = Some(op.clone());
        self.operators.push(op);
    }

    fn open(&mut self, level: Level, opener: &'static str, at: usize) -> Result<(), LexError> {
        if self.base_depth + self.stack.len() >= MAX_DEPTH {
            return Err(LexError::TooDeep { at, max: MAX_DEPTH });
        }
        self.has_substitution = true;
        self.command_slot();
        let outer = mem::replace(
            &mut self.cur,
            Cur {
                level,
                start: at,
                opener,
                ..Cur::default()
            },
        );
        self.stack.push(outer);
        Ok(())
    }

    /// Closes the current level at byte `end` (its closing character): the outer word
    /// gets the substitution's source text.
    fn close(&mut self, end: usize) -> Result<(), LexError> {
        self.end_command();
        let Some(outer) = self.stack.pop() else {
            return Ok(());
        };
        let start = self.cur.start;
        self.cur = outer;
        let text = self.src.get(start..=end).unwrap_or_default();
        self.copy_budget = self
            .copy_budget
            .checked_sub(text.len())
            .ok_or(LexError::TooLarge { at: start })?;
        self.cur.word.extend_from_slice(text.as_bytes());
        self.cur.in_word = true;
        self.cur.quoted = true;
        Ok(())
    }
}

enum Decoded {
    Byte(u8),
    Char(char),
    /// Not an escape bash knows: the backslash stays.
    Verbatim,
    /// The input ended after the backslash.
    End,
}

/// Decodes one ANSI-C escape; `rest` starts after the backslash. Returns the value and
/// how many bytes of `rest` it used.
fn decode_ansi_escape(rest: &[u8]) -> (Decoded, usize) {
    let Some(&c) = rest.first() else {
        return (Decoded::End, 0);
    };
    let simple = match c {
        b'a' => Some(7),
        b'b' => Some(8),
        b'e' | b'E' => Some(27),
        b'f' => Some(12),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(11),
        b'\\' | b'\'' | b'"' | b'?' => Some(c),
        _ => None,
    };
    if let Some(v) = simple {
        return (Decoded::Byte(v), 1);
    }
    let digits = |radix: u32, max: usize, skip: usize| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match rest
                .get(skip + n)
                .and_then(|&d| char::from(d).to_digit(radix))
            {
                Some(d) => value = value.saturating_mul(radix).saturating_add(d),
                None => break,
            }
            n += 1;
        }
        (value, n)
    };
    match c {
        b'0'..=b'7' => {
            let (v, n) = digits(8, 3, 0);
            (Decoded::Byte((v & 0xff) as u8), n)
        }
        b'x' => match digits(16, 2, 1) {
            (_, 0) => (Decoded::Verbatim, 1),
            (v, n) => (Decoded::Byte((v & 0xff) as u8), 1 + n),
        },
        b'u' | b'U' => {
            let max = if c == b'u' { 4 } else { 8 };
            match digits(16, max, 1) {
                (_, 0) => (Decoded::Verbatim, 1),
                (v, n) => match char::from_u32(v) {
                    Some(ch) => (Decoded::Char(ch), 1 + n),
                    None => (Decoded::Verbatim, 1 + n),
                },
            }
        }
        b'c' => match rest.get(1) {
            Some(&x) => (Decoded::Byte(x & 0x1f), 2),
            None => (Decoded::End, 1),
        },
        _ => (Decoded::Verbatim, 0),
    }
}

/// Output redirections, whose target is written (the fd prefix aside).
fn is_write_redirect(op: &str) -> bool {
    let op = op.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(op, ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&")
}
