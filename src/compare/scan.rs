//! A small quote-aware scan of a command's raw text for what the comparison's reason
//! classifier needs to point at: the comment, the redirections with their targets and
//! byte ranges, and lone `&` operators.
//!
//! It labels differences between the engines; it decides nothing and is never used to
//! prove a command safe (the engines do that). It only reads the text, never fails,
//! and is linear in the input.

/// What a redirection does, as the reason classifier groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<>` to a file.
    Write,
    /// `<` from a file.
    Read,
    /// Duplication or closing of a descriptor (`2>&1`, `>&2`, `<&-`), or an output to a
    /// device that is not a file (`/dev/null`, `/dev/stdout`, …).
    FdOrDevice,
    /// `<<`, `<<-` (the word is the delimiter) and `<<<` (the word is the input).
    Heredoc,
}

/// One redirection: its kind, its target word with quotes removed, and the byte range
/// from the operator (with any fd number) to the end of the target word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirection {
    pub kind: RedirectKind,
    pub operator: String,
    pub target: String,
    pub start: usize,
    pub end: usize,
    /// For `<<` and `<<-`: the byte range of the body lines, delimiter line included.
    pub body: Option<(usize, usize)>,
}

/// The byte ranges the given redirections cover (operator and word, heredoc bodies),
/// sorted, for `without`.
pub fn ranges<'a>(rs: impl IntoIterator<Item = &'a Redirection>) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = Vec::new();
    for r in rs {
        v.push((r.start, r.end));
        if let Some(b) = r.body {
            v.push(b);
        }
    }
    v.sort_unstable();
    v
}

/// The scan of one command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Byte offset of an unquoted `#` that starts a word (bash's comment).
    pub comment_at: Option<usize>,
    pub redirections: Vec<Redirection>,
    /// An unquoted lone `&` (not `&&`, `&>`, `>&`, `<&`, `|&`).
    pub background: bool,
}

/// Devices an output redirection may name without writing a file.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
];

fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

/// Scans `text`. Quotes (`'…'`, `"…"`, `$'…'`), backslash escapes and `$(…)` nesting
/// are followed well enough to find top-level operators; anything odd only makes the
/// scan find less.
pub fn scan(text: &str) -> Scan {
    let b = text.as_bytes();
    let mut out = Scan::default();
    let mut i = 0;
    let mut word_start = true;
    // Heredocs whose body starts after the current line, in order.
    let mut pending: Vec<usize> = Vec::new();
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => {
                i += 2;
                word_start = false;
            }
            b'\'' => {
                i = skip_single(b, i + 1);
                word_start = false;
            }
            b'"' => {
                i = skip_double(b, i + 1);
                word_start = false;
            }
            b'`' => {
                i = skip_until(b, i + 1, b'`');
                word_start = false;
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                i = skip_parens(b, i + 2);
                word_start = false;
            }
            b'$' if b.get(i + 1) == Some(&b'\'') => {
                i = skip_single(b, i + 2);
                word_start = false;
            }
            b'#' if word_start => {
                out.comment_at = Some(i);
                break;
            }
            b'<' | b'>' => {
                let start = fd_prefix_start(b, i);
                let (kind, op_end) = operator_at(b, i);
                let op = text.get(start..op_end).unwrap_or_default().to_string();
                if kind.is_none() {
                    // `<(` / `>(`: a process substitution, not a redirection.
                    i = skip_parens(b, op_end);
                    word_start = false;
                    continue;
                }
                let (target, end) = word_after(b, op_end);
                if op.ends_with("<<") || op.ends_with("<<-") {
                    pending.push(out.redirections.len());
                }
                let kind = match kind {
                    // A device opens no file either way (`> /dev/null`, `< /dev/zero`).
                    Some(RedirectKind::Write | RedirectKind::Read)
                        if DEVICES.contains(&target.as_str()) =>
                    {
                        RedirectKind::FdOrDevice
                    }
                    Some(k) => k,
                    None => RedirectKind::FdOrDevice,
                };
                out.redirections.push(Redirection {
                    kind,
                    operator: op,
                    target,
                    start,
                    end,
                    body: None,
                });
                i = end;
                word_start = true;
            }
            b'&' => {
                let prev = i.checked_sub(1).and_then(|p| b.get(p)).copied();
                let next = b.get(i + 1).copied();
                if next == Some(b'&') {
                    i += 2;
                } else {
                    if next != Some(b'>') && !matches!(prev, Some(b'|' | b'>' | b'<')) {
                        out.background = true;
                    }
                    i += 1;
                }
                word_start = true;
            }
            b'\n' if !pending.is_empty() => {
                i += 1;
                for idx in std::mem::take(&mut pending) {
                    let Some(r) = out.redirections.get_mut(idx) else {
                        continue;
                    };
                    let body_end = heredoc_end(b, i, &r.target, r.operator.ends_with('-'));
                    r.body = Some((i, body_end));
                    i = body_end;
                }
                word_start = true;
            }
            _ => {
                word_start = is_meta(c);
                i += 1;
            }
        }
    }
    out
}

/// Where a heredoc body starting at `i` ends: after the line that is the delimiter
/// (leading tabs stripped for `<<-`), or at the end of the text.
fn heredoc_end(b: &[u8], mut i: usize, delimiter: &str, strip_tabs: bool) -> usize {
    while i < b.len() {
        let line_end = b
            .get(i..)
            .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
            .map_or(b.len(), |p| i + p);
        let mut line = b.get(i..line_end).unwrap_or_default();
        if strip_tabs {
            while let Some((b'\t', rest)) = line.split_first() {
                line = rest;
            }
        }
        i = (line_end + 1).min(b.len());
        if line == delimiter.as_bytes() {
            return i;
        }
    }
    b.len()
}

/// Where a redirection starts: the operator, or the fd number glued before it when that
/// number is a whole word (`2>`), or `&` for `&>`.
fn fd_prefix_start(b: &[u8], op: usize) -> usize {
    let mut s = op;
    while let Some(p) = s.checked_sub(1) {
        match b.get(p) {
            Some(d) if d.is_ascii_digit() => s = p,
            _ => break,
        }
    }
    let word_start = s
        .checked_sub(1)
        .and_then(|p| b.get(p))
        .is_none_or(|&c| is_meta(c));
    if s < op && !word_start {
        return op;
    }
    if s == op && op > 0 && b.get(op - 1) == Some(&b'&') && b.get(op) == Some(&b'>') {
        return op - 1;
    }
    s
}

/// The redirection operator at `i` and where it ends; `None` for `<(`/`>(`.
fn operator_at(b: &[u8], i: usize) -> (Option<RedirectKind>, usize) {
    let at = |k: usize| b.get(i + k).copied();
    match (at(0), at(1), at(2)) {
        (Some(b'<'), Some(b'<'), Some(b'<')) => (Some(RedirectKind::Heredoc), i + 3),
        (Some(b'<'), Some(b'<'), Some(b'-')) => (Some(RedirectKind::Heredoc), i + 3),
        (Some(b'<'), Some(b'<'), _) => (Some(RedirectKind::Heredoc), i + 2),
        (Some(b'<' | b'>'), Some(b'('), _) => (None, i + 2),
        (Some(b'<'), Some(b'&'), _) => (Some(RedirectKind::FdOrDevice), i + 2),
        (Some(b'>'), Some(b'&'), _) => (Some(RedirectKind::FdOrDevice), i + 2),
        (Some(b'<'), Some(b'>'), _) => (Some(RedirectKind::Write), i + 2),
        (Some(b'>'), Some(b'>' | b'|'), _) => (Some(RedirectKind::Write), i + 2),
        (Some(b'>'), _, _) => (Some(RedirectKind::Write), i + 1),
        _ => (Some(RedirectKind::Read), i + 1),
    }
}

/// The word after position `i` (blanks skipped), quotes removed, and where it ends.
fn word_after(b: &[u8], mut i: usize) -> (String, usize) {
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut word = Vec::new();
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => {
                if let Some(&n) = b.get(i + 1) {
                    word.push(n);
                }
                i += 2;
            }
            b'\'' => {
                let e = skip_single(b, i + 1);
                word.extend_from_slice(b.get(i + 1..e.saturating_sub(1)).unwrap_or_default());
                i = e;
            }
            b'"' => {
                let e = skip_double(b, i + 1);
                word.extend_from_slice(b.get(i + 1..e.saturating_sub(1)).unwrap_or_default());
                i = e;
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                let e = skip_parens(b, i + 2);
                word.extend_from_slice(b.get(i..e).unwrap_or_default());
                i = e;
            }
            c if is_meta(c) => break,
            c => {
                word.push(c);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&word).into_owned(), i.min(b.len()))
}

/// Past the closing `'` (or the end).
fn skip_single(b: &[u8], i: usize) -> usize {
    skip_until(b, i, b'\'')
}

fn skip_until(b: &[u8], mut i: usize, end: u8) -> usize {
    while let Some(&c) = b.get(i) {
        i += 1;
        if c == end {
            return i;
        }
    }
    b.len()
}

/// Past the closing `"`, with backslash escapes.
fn skip_double(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Past the `)` closing an opened `(`, counting nesting and skipping quotes.
fn skip_parens(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1usize;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'\'' => i = skip_single(b, i + 1),
            b'"' => i = skip_double(b, i + 1),
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// `text` without the byte ranges given (sorted, non-overlapping), each replaced by a
/// space so the words around them stay apart.
pub fn without(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(s, e) in ranges {
        if s < at {
            continue;
        }
        out.push_str(text.get(at..s).unwrap_or_default());
        out.push(' ');
        at = e;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(RedirectKind, String)> {
        scan(s)
            .redirections
            .into_iter()
            .map(|r| (r.kind, r.target))
            .collect()
    }

    #[test]
    fn finds_redirections_by_kind() {
        use RedirectKind::*;
        assert_eq!(
            kinds("cat a > 'out file' 2>&1 < in"),
            vec![
                (Write, "out file".into()),
                (FdOrDevice, "1".into()),
                (Read, "in".into())
            ]
        );
        assert_eq!(
            kinds("ls >/dev/null"),
            vec![(FdOrDevice, "/dev/null".into())]
        );
        assert_eq!(
            kinds("x <<< word; y <<EOF"),
            vec![(Heredoc, "word".into()), (Heredoc, "EOF".into())]
        );
        assert_eq!(kinds("diff <(a) >(b) 'x > y' \"a<b\""), vec![]);
        assert_eq!(kinds("echo $(cat < in)"), vec![]);
    }

    #[test]
    fn ranges_cover_fd_and_target() {
        let s = "cmd 2> err.txt &> all";
        let r = scan(s).redirections;
        let texts: Vec<&str> = r.iter().map(|x| &s[x.start..x.end]).collect();
        assert_eq!(texts, vec!["2> err.txt", "&> all"]);
        assert_eq!(without(s, &[(r[0].start, r[0].end)]), "cmd   &> all");
        assert_eq!(without(s, &ranges(&r)), "cmd    ");
        // A digit glued to a word is part of it, not an fd.
        let s = "echo a2>x";
        let r = scan(s).redirections;
        assert_eq!(&s[r[0].start..r[0].end], ">x");
    }

    #[test]
    fn heredoc_bodies_are_covered() {
        let s = "cat <<EOF > f\nhi $(x)\nEOF\nls <<-'E'\n\tbody\n\tE\necho done";
        let r = scan(s).redirections;
        let covered = without(s, &ranges(&r));
        assert_eq!(covered, "cat    \n ls  \n echo done");
        assert_eq!(r[0].target, "EOF");
        assert_eq!(r[2].target, "E");
    }

    #[test]
    fn comment_starts_only_a_word() {
        assert_eq!(scan("ls # note").comment_at, Some(3));
        assert_eq!(scan("echo a#b '#c' \"#d\"").comment_at, None);
        assert_eq!(scan("x;# y").comment_at, Some(2));
    }

    #[test]
    fn lone_ampersand_is_background() {
        assert!(scan("a & b").background);
        assert!(scan("a &").background);
        assert!(!scan("a && b 2>&1 &> f |& g").background);
        assert!(!scan("echo '&'").background);
    }
}
