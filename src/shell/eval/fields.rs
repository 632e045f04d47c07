//! A word as the evaluator knows it: characters tagged with how bash treats them
//! (unquoted literal, quoted, result of an unquoted expansion), and the steps bash
//! applies to such a word after the values are known: brace expansion (literal braces
//! only), field splitting (expansion results only) and the rendering back to bash
//! text in which exactly the characters bash would still glob stay unquoted.

/// How one character of a word came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    /// Written unquoted in the command: braces expand, globs and `~` are active.
    Literal,
    /// Inside quotes or escaped: taken as it is.
    Quoted,
    /// From an unquoted expansion or substitution: split on `$IFS`, globbed.
    Expanded,
}

/// A word's characters. A quoted empty string (`""`) is kept as [`EMPTY_QUOTED`] so
/// that `""$x` stays one field even when `$x` is empty.
pub type Chars = Vec<(char, Quoting)>;

/// The marker of a quoted empty string: NUL never occurs in a command bash runs.
pub const EMPTY_QUOTED: (char, Quoting) = ('\0', Quoting::Quoted);

/// `$IFS` when the command does not set it (bash does not import it).
pub const DEFAULT_IFS: &str = " \t\n";

/// Pushes `text` with one quoting.
pub fn push_str(out: &mut Chars, text: &str, q: Quoting) {
    if text.is_empty() && q == Quoting::Quoted {
        out.push(EMPTY_QUOTED);
    }
    out.extend(text.chars().map(|c| (c, q)));
}

/// The plain text of a word (markers dropped).
pub fn text(word: &[(char, Quoting)]) -> String {
    word.iter()
        .filter(|c| **c != EMPTY_QUOTED)
        .map(|(c, _)| *c)
        .collect()
}

/// Whether any character is not a plain literal (the word was computed).
pub fn has_active_glob(word: &[(char, Quoting)]) -> bool {
    word.iter()
        .any(|(c, q)| *q != Quoting::Quoted && matches!(c, '*' | '?' | '['))
}

/// Brace expansion as bash does it before any other expansion: `{a,b}`, nested, and
/// `{x..y[..step]}` sequences of integers or single letters. `None` when the words
/// would exceed `max_words` (a brace bomb).
pub fn expand_braces(word: &[(char, Quoting)], max_words: usize) -> Option<Vec<Chars>> {
    let mut out = Vec::new();
    expand_into(word, max_words, &mut out, 0)?;
    Some(out)
}

fn expand_into(
    word: &[(char, Quoting)],
    max_words: usize,
    out: &mut Vec<Chars>,
    depth: usize,
) -> Option<()> {
    if depth > 64 {
        return None;
    }
    let open = |i: usize| word.get(i) == Some(&('{', Quoting::Literal));
    for i in 0..word.len() {
        if !open(i) {
            continue;
        }
        let Some((close, commas)) = matching_close(word, i) else {
            continue;
        };
        let pre = word.get(..i).unwrap_or_default();
        let post = word.get(close + 1..).unwrap_or_default();
        let alternatives: Vec<Chars> = if commas.is_empty() {
            match sequence(word.get(i + 1..close).unwrap_or_default(), max_words)? {
                Some(seq) => seq,
                None => continue,
            }
        } else {
            let mut alts = Vec::new();
            let mut from = i + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                alts.push(word.get(from..c).unwrap_or_default().to_vec());
                from = c + 1;
            }
            alts
        };
        for alt in alternatives {
            let mut next: Chars = pre.to_vec();
            next.extend(alt);
            next.extend_from_slice(post);
            expand_into(&next, max_words, out, depth + 1)?;
            if out.len() > max_words {
                return None;
            }
        }
        return Some(());
    }
    out.push(word.to_vec());
    (out.len() <= max_words).then_some(())
}

/// The `}` closing the brace at `open`, with the top-level commas between them.
fn matching_close(word: &[(char, Quoting)], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, (c, q)) in word.iter().enumerate().skip(open + 1) {
        if *q != Quoting::Literal {
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some((i, commas)),
            '}' => depth -= 1,
            ',' if depth == 0 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// `x..y[..step]` between braces, all literal: `Some(None)` when it is no sequence,
/// `None` when it would make more than `max_words` words.
fn sequence(inner: &[(char, Quoting)], max_words: usize) -> Option<Option<Vec<Chars>>> {
    let Some(shape) = sequence_shape(inner) else {
        return Some(None);
    };
    sequence_words(shape, max_words).map(Some)
}

type Shape = (String, String, i64);

fn sequence_shape(inner: &[(char, Quoting)]) -> Option<Shape> {
    if inner.iter().any(|(_, q)| *q != Quoting::Literal) {
        return None;
    }
    let s: String = inner.iter().map(|(c, _)| *c).collect();
    let parts: Vec<&str> = s.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, c] => (*a, *b, Some(*c)),
        _ => return None,
    };
    let step: i64 = match step {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?,
        None => 1,
    };
    let ints = from.parse::<i64>().is_ok() && to.parse::<i64>().is_ok();
    let letter = |t: &str| t.len() == 1 && t.chars().all(|c| c.is_ascii_alphabetic());
    (ints || (letter(from) && letter(to))).then(|| (from.to_string(), to.to_string(), step))
}

fn sequence_words((from, to, step): Shape, max_words: usize) -> Option<Vec<Chars>> {
    let (from, to) = (from.as_str(), to.as_str());
    let step = step.max(1);
    let lit = |t: String| t.chars().map(|c| (c, Quoting::Literal)).collect::<Chars>();
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let width = |t: &str| {
            let digits = t.trim_start_matches('-');
            (digits.len() > 1 && digits.starts_with('0')).then_some(t.len())
        };
        let pad = width(from).max(width(to)).unwrap_or(0);
        let count = (a.abs_diff(b) / step.unsigned_abs()).checked_add(1)?;
        if count > max_words as u64 {
            return None;
        }
        let mut out = Vec::new();
        let mut v = a;
        loop {
            let t = if v < 0 {
                format!("-{:0>w$}", v.unsigned_abs(), w = pad.saturating_sub(1))
            } else {
                format!("{v:0>pad$}")
            };
            out.push(lit(t));
            if v == b {
                break;
            }
            let next = if a < b {
                v.checked_add(step)?
            } else {
                v.checked_sub(step)?
            };
            if (a < b && next > b) || (a > b && next < b) {
                break;
            }
            v = next;
        }
        return Some(out);
    }
    let one = |t: &str| {
        let mut cs = t.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as u32),
            _ => None,
        }
    };
    let (a, b) = (one(from)?, one(to)?);
    let mut out = Vec::new();
    let mut v = a;
    loop {
        // Between `Z` and `a` bash yields the punctuation in between, as chars.
        out.push(lit(char::from_u32(v)?.to_string()));
        if out.len() > max_words {
            return None;
        }
        if v == b {
            break;
        }
        let next = if a < b {
            v + step as u32
        } else {
            v.checked_sub(step as u32)?
        };
        if (a < b && next > b) || (a > b && next < b) {
            break;
        }
        v = next;
    }
    Some(out)
}

/// Field splitting: only characters from unquoted expansions split, on `ifs`.
/// Leading and trailing IFS whitespace never makes a field; a word made only of an
/// empty unquoted expansion makes none.
pub fn split_fields(word: &[(char, Quoting)], ifs: &str) -> Vec<Chars> {
    let is_ifs = |i: usize| {
        word.get(i)
            .is_some_and(|(c, q)| *q == Quoting::Expanded && ifs.contains(*c))
    };
    let is_ws = |i: usize| is_ifs(i) && word.get(i).is_some_and(|(c, _)| " \t\n".contains(*c));
    let mut fields = Vec::new();
    let mut cur: Chars = Vec::new();
    let mut started = false;
    let n = word.len();
    let mut i = 0;
    while i < n && is_ws(i) {
        i += 1;
    }
    while i < n {
        if is_ifs(i) {
            let mut j = i;
            while j < n && is_ws(j) {
                j += 1;
            }
            if j < n && is_ifs(j) && !is_ws(j) {
                j += 1;
                while j < n && is_ws(j) {
                    j += 1;
                }
            }
            fields.push(std::mem::take(&mut cur));
            started = false;
            i = j;
            continue;
        }
        if let Some(c) = word.get(i) {
            cur.push(*c);
        }
        started = true;
        i += 1;
    }
    if started {
        fields.push(cur);
    }
    fields
}

/// Words bash reads as syntax in command position: quoted when a value spells one.
const RESERVED: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// The field as bash text that reads back to the same field: unquoted glob
/// characters and literal `~` stay unquoted (bash still expands them), every other
/// character outside the plainly safe set is single-quoted.
pub fn render(field: &[(char, Quoting)]) -> String {
    let plain = text(field);
    let raw = |c: char, q: Quoting| {
        (q != Quoting::Quoted && matches!(c, '*' | '?' | '['))
            || (q == Quoting::Literal && c == '~')
    };
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:@%+,-".contains(c);
    if plain.is_empty() || RESERVED.contains(&plain.as_str()) {
        return if field.iter().any(|(c, q)| raw(*c, *q)) {
            plain
        } else {
            format!("'{plain}'")
        };
    }
    let mut out = String::with_capacity(plain.len() + 2);
    let mut open = false;
    for (c, q) in field.iter().copied().filter(|c| *c != EMPTY_QUOTED) {
        let as_is = raw(c, q) || safe(c);
        if as_is {
            if open {
                out.push('\'');
                open = false;
            }
            out.push(c);
        } else if c == '\'' {
            if open {
                out.push('\'');
                open = false;
            }
            out.push_str("\\'");
        } else {
            if !open {
                out.push('\'');
                open = true;
            }
            out.push(c);
        }
    }
    if open {
        out.push('\'');
    }
    out
}

/// Plain argv words as bash text (each word one field, nothing expands).
pub fn quote_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let mut cs = Chars::new();
            push_str(&mut cs, w, Quoting::Quoted);
            render(&cs)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Chars {
        let mut c = Chars::new();
        push_str(&mut c, s, Quoting::Literal);
        c
    }

    fn texts(ws: Vec<Chars>) -> Vec<String> {
        ws.iter().map(|w| text(w)).collect()
    }

    #[test]
    fn braces_expand_like_bash() {
        let e = |s: &str| expand_braces(&lit(s), 256).map(texts);
        assert_eq!(
            e("{mkfs.ext4,/dev/sdb}").unwrap(),
            ["mkfs.ext4", "/dev/sdb"]
        );
        assert_eq!(e("a{b,c{d,e}}f").unwrap(), ["abf", "acdf", "acef"]);
        assert_eq!(e("{1..3}").unwrap(), ["1", "2", "3"]);
        assert_eq!(e("{01..3}").unwrap(), ["01", "02", "03"]);
        assert_eq!(e("{a..e..2}").unwrap(), ["a", "c", "e"]);
        assert_eq!(e("{3..1}").unwrap(), ["3", "2", "1"]);
        assert_eq!(e("{a}").unwrap(), ["{a}"]);
        assert_eq!(e("{}").unwrap(), ["{}"]);
        assert_eq!(e("x{,}").unwrap(), ["x", "x"]);
        assert!(e("{1..100000}").is_none());
        assert!(e("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}").is_none());
        // A quoted brace does not expand.
        let mut q = Chars::new();
        push_str(&mut q, "{a,b}", Quoting::Quoted);
        assert_eq!(texts(expand_braces(&q, 256).unwrap()), ["{a,b}"]);
    }

    #[test]
    fn only_expansion_results_split() {
        let mut w = lit("a b");
        push_str(&mut w, " x  y ", Quoting::Expanded);
        assert_eq!(texts(split_fields(&w, DEFAULT_IFS)), ["a b", "x", "y"]);
        let mut e = Chars::new();
        push_str(&mut e, "", Quoting::Expanded);
        assert!(split_fields(&e, DEFAULT_IFS).is_empty());
        let mut c = Chars::new();
        push_str(&mut c, ":a::b:", Quoting::Expanded);
        assert_eq!(texts(split_fields(&c, ":")), ["", "a", "", "b"]);
    }

    #[test]
    fn rendering_keeps_only_active_globs_unquoted() {
        let mut w = lit("/sbin/mkf?");
        assert_eq!(render(&w), "/sbin/mkf?");
        w = Chars::new();
        push_str(&mut w, "a b*", Quoting::Quoted);
        assert_eq!(render(&w), "a' 'b'*'");
        push_str(&mut w, "*", Quoting::Expanded);
        assert_eq!(render(&w), "a' 'b'*'*");
        assert_eq!(
            quote_words(&["it's".into(), "if".into(), "".into()]),
            "it\\'s 'if' ''"
        );
    }
}
