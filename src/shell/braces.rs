//! Brace expansion as bash performs it on a word: `a{b,c}d` is `abd acd`, `{1..3}` is
//! `1 2 3`, `{a..c}` is `a b c`, nested braces expand from the outside in.
//!
//! Owns only the expansion, bounded: a word list that would expand past `MAX_WORDS`
//! words is `None` (a brace bomb is not evaluated; the caller keeps the unexpanded
//! reading, which asks). `${…}` is a parameter expansion, not a brace.

/// Words one expansion may produce before it gives up.
pub const MAX_WORDS: usize = 256;

/// Every word expanded, in order; `None` past the budget.
pub fn expand_all(words: &[String]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        out.extend(expand(w)?);
        if out.len() > MAX_WORDS {
            return None;
        }
    }
    Some(out)
}

/// One word expanded; `None` past the budget.
pub fn expand(word: &str) -> Option<Vec<String>> {
    let mut done = Vec::new();
    let mut todo = vec![word.to_string()];
    let mut steps = 0usize;
    while let Some(w) = todo.pop() {
        steps += 1;
        if steps > MAX_WORDS * 4 {
            return None;
        }
        match first_brace(&w)? {
            None => done.push(w),
            Some((open, close, alternatives)) => {
                let prefix = w.get(..open).unwrap_or_default();
                let suffix = w.get(close + 1..).unwrap_or_default();
                // Reversed so the stack pops them in order.
                for alt in alternatives.iter().rev() {
                    todo.push(format!("{prefix}{alt}{suffix}"));
                }
            }
        }
        if done.len() + todo.len() > MAX_WORDS {
            return None;
        }
    }
    Some(done)
}

/// A brace `{open..=close}` and its alternatives.
type Brace = (usize, usize, Vec<String>);

/// The first `{…}` of `w` that bash expands: `Some(None)` when there is none, `None`
/// when a sequence is larger than the budget.
fn first_brace(w: &str) -> Option<Option<Brace>> {
    let bytes = w.as_bytes();
    let mut start = 0;
    while let Some(rel) = bytes
        .get(start..)
        .and_then(|rest| rest.iter().position(|&b| b == b'{'))
    {
        let open = start + rel;
        start = open + 1;
        if open > 0 && bytes.get(open - 1) == Some(&b'$') {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let inner = w.get(open + 1..close).unwrap_or_default();
        if !commas.is_empty() {
            let mut alts = Vec::new();
            let mut from = open + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                alts.push(w.get(from..c).unwrap_or_default().to_string());
                from = c + 1;
            }
            return Some(Some((open, close, alts)));
        }
        match sequence(inner) {
            Seq::Words(seq) => return Some(Some((open, close, seq))),
            Seq::TooLarge => return None,
            Seq::Not => {}
        }
    }
    Some(None)
}

enum Seq {
    Not,
    TooLarge,
    Words(Vec<String>),
}

/// `x..y` or `x..y..step` over integers or single ASCII letters.
fn sequence(inner: &str) -> Seq {
    let parts: Vec<&str> = inner.split("..").collect();
    let (a, b, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1i64),
        [a, b, s] => match s.parse::<i64>().ok().and_then(i64::checked_abs) {
            Some(step) => (*a, *b, step.max(1)),
            None => return Seq::Not,
        },
        _ => return Seq::Not,
    };
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let count = x.abs_diff(y) / step.unsigned_abs() + 1;
        if count > MAX_WORDS as u64 {
            return Seq::TooLarge;
        }
        let dir = if y >= x { step } else { -step };
        return Seq::Words(
            (0..count as i64)
                .map(|k| (x + k * dir).to_string())
                .collect(),
        );
    }
    let (Some(x), Some(y)) = (single_letter(a), single_letter(b)) else {
        return Seq::Not;
    };
    let dir: i64 = if y >= x { step } else { -step };
    let count = (i64::from(x) - i64::from(y)).unsigned_abs() / step.unsigned_abs() + 1;
    Seq::Words(
        (0..count as i64)
            .filter_map(|k| u8::try_from(i64::from(x) + k * dir).ok())
            .map(|c| char::from(c).to_string())
            .collect(),
    )
}

fn single_letter(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(w: &str) -> Vec<String> {
        expand(w).unwrap_or_default()
    }

    #[test]
    fn expands_as_bash_does() {
        assert_eq!(e("{master,dev}"), ["master", "dev"]);
        assert_eq!(e("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(e("{a,b{1,2}}"), ["a", "b1", "b2"]);
        assert_eq!(e("{1..3}"), ["1", "2", "3"]);
        assert_eq!(e("{c..a}"), ["c", "b", "a"]);
        assert_eq!(e("{1..10..4}"), ["1", "5", "9"]);
        assert_eq!(e("x{a}y"), ["x{a}y"]);
        assert_eq!(e("${HOME}"), ["${HOME}"]);
        assert_eq!(e("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
    }

    #[test]
    fn a_brace_bomb_is_not_evaluated() {
        assert!(expand(&"{a,b}".repeat(20)).is_none());
        assert!(expand("{1..100000}").is_none());
    }
}
