//! Brace expansion as bash performs it on a word: `a{b,c}d` is `abd acd`, `{1..3}` is
//! `1 2 3`, `{a..c}` is `a b c`, nested braces expand from the outside in.
//!
//! Owns only the expansion, bounded: a word list that would expand past `MAX_WORDS`
//! words is `None` (a brace bomb is not evaluated; the caller keeps the unexpanded
//! reading, which asks). `${…}` is a parameter expansion, not a brace.
//!
//! Also the count before any expansion (`count`, `over_budget`): how many words bash
//! would build for a command, the product of every brace factor, sequences with their
//! step, computed without building one. bash builds all of them in memory before the
//! command runs (`ls {0..999999999}` asks it for 10^9 words; `{a,b}` 25 times for
//! 3·10^7): past `MAX_COMMAND_WORDS` a command is a brace bomb.

/// Words one expansion may produce before it gives up.
pub const MAX_WORDS: usize = 256;

/// Most words bash may build by brace expansion for one command before the command is
/// a brace bomb (opaque: it asks, and it is never expanded). No command in the
/// corpora comes near: the largest builds 254 words (`fping 192.168.1.{1..254}`); bash
/// builds 10^5 words in well under a second and a few dozen megabytes.
pub const MAX_COMMAND_WORDS: u128 = 100_000;

/// Nesting of braces inside braces past which a word counts as a bomb.
const MAX_NESTING: usize = 64;

/// Whether the words of one command expand, all together, to more than
/// `MAX_COMMAND_WORDS` words. Quotes are gone from the words, so a quoted brace counts
/// too: that can only make a command ask.
pub fn over_budget(words: &[String]) -> bool {
    let mut total: u128 = 1;
    for w in words {
        total = total.saturating_mul(count(w));
        if total > MAX_COMMAND_WORDS {
            return true;
        }
    }
    false
}

/// How many words bash's brace expansion makes of `word` (saturating), counted the way
/// bash expands: the first brace's alternatives, each expanded, times the expansion of
/// what follows it. Builds no word.
pub fn count(word: &str) -> u128 {
    count_nested(word, 0)
}

fn count_nested(word: &str, depth: usize) -> u128 {
    if depth > MAX_NESTING {
        return u128::MAX;
    }
    // The braces of a word multiply left to right; iterative, so a long chain of
    // braces uses no stack.
    let mut total: u128 = 1;
    let mut rest = word;
    while let Some((close, factor)) = first_factor(rest, depth) {
        total = total.saturating_mul(factor);
        if total == u128::MAX {
            return total;
        }
        rest = rest.get(close + 1..).unwrap_or_default();
    }
    total
}

/// The first brace of `w` bash expands: where it closes and how many words it makes.
fn first_factor(w: &str, depth: usize) -> Option<(usize, u128)> {
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
        let Some((close, commas)) = matching(bytes, open) else {
            continue;
        };
        if !commas.is_empty() {
            let mut sum: u128 = 0;
            let mut from = open + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                let alt = w.get(from..c).unwrap_or_default();
                sum = sum.saturating_add(count_nested(alt, depth + 1));
                from = c + 1;
            }
            return Some((close, sum));
        }
        if let Some(n) = sequence_len(w.get(open + 1..close).unwrap_or_default()) {
            return Some((close, n));
        }
    }
    None
}

/// The `}` closing the brace at `open`, and the commas at its own level.
fn matching(bytes: &[u8], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// How many words `x..y[..step]` makes, as bash counts: integers bash can read
/// (`intmax_t`; a larger one is no sequence) or single letters, the step's sign
/// ignored and 0 read as 1.
fn sequence_len(inner: &str) -> Option<u128> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (a, b, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1u128),
        [a, b, s] => (
            *a,
            *b,
            u128::from(s.parse::<i64>().ok()?.unsigned_abs().max(1)),
        ),
        _ => return None,
    };
    let span = if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        u128::from(x.abs_diff(y))
    } else {
        let (x, y) = (single_letter(a)?, single_letter(b)?);
        u128::from(x.abs_diff(y))
    };
    Some(span / step + 1)
}

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
    fn counts_as_bash_expands_without_expanding() {
        let c = |w: &str| count(w);
        assert_eq!(c("plain"), 1);
        assert_eq!(c("{a,b}"), 2);
        assert_eq!(c("{a,b{1,2}}"), 3);
        assert_eq!(c("{a,b}{1,2,3}"), 6);
        assert_eq!(c("{1..10..4}"), 3);
        assert_eq!(c("{1..10..0}"), 10);
        assert_eq!(c("{c..a}"), 3);
        assert_eq!(c("${HOME}{a,b}"), 2);
        assert_eq!(c("x{a}y"), 1);
        assert_eq!(c("{0..99999999999999999999}"), 1);
        assert_eq!(c("{0..999999999}"), 1_000_000_000);
        assert_eq!(c(&"{0..9}".repeat(9)), 1_000_000_000);
        assert_eq!(c(&"{a,b}".repeat(25)), 1 << 25);
        // Every count agrees with the expansion where the expansion is small.
        for w in [
            "{a,b}{c,{d,e}}x{1..3}",
            "a{b,c}d{e..g..2}",
            "{{a,b},{c..e}}",
        ] {
            assert_eq!(c(w), expand(w).map_or(0, |v| v.len() as u128), "{w}");
        }
    }

    #[test]
    fn a_command_over_the_budget_is_a_bomb_and_costs_nothing_to_count() {
        let words = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert!(over_budget(&words(&["ls", "{0..999999999}"])));
        assert!(!over_budget(&words(&["ls", "{a,b}.txt"])));
        assert!(!over_budget(&words(&["fping", "192.168.1.{1..254}"])));
        // Across the words of one command: 1000 × 1000.
        assert!(over_budget(&words(&["echo", "{1..1000}", "{1..1000}"])));
        // A word of 100,000 chained braces, and one nested 10,000 deep, count quickly.
        let start = std::time::Instant::now();
        assert!(count(&"{a,b}".repeat(100_000)) == u128::MAX);
        let deep = format!("{}x{}", "{a,".repeat(10_000), "}".repeat(10_000));
        assert!(count(&deep) == u128::MAX);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_brace_bomb_is_not_evaluated() {
        assert!(expand(&"{a,b}".repeat(20)).is_none());
        assert!(expand("{1..100000}").is_none());
    }
}
