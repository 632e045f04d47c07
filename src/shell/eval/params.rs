//! `${…}` on values known in the command: the pure operators (`:-`, `-`, `:+`, `+`,
//! `#`, `##`, `%`, `%%`, `/`, `//`, `/#`, `/%`, `:off:len`, `^`, `^^`, `,`, `,,`,
//! `${#v}`) with glob patterns as bash matches them. Operands must be plain text (no
//! nested expansion, quote or escape); anything else is unknown.

/// What the evaluator knows of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known<'a> {
    /// Set in this command to this value.
    Value(&'a str),
    /// Not known here (the environment, a loop, a `read`).
    Unknown,
}

/// The variable `${…}` names, for the caller to look up: `None` for indirection,
/// arrays, special parameters, and anything not a plain name.
pub fn name_of(expansion: &str) -> Option<&str> {
    let inner = expansion.strip_prefix("${")?.strip_suffix('}')?;
    let inner = inner
        .strip_prefix('#')
        .filter(|r| !r.is_empty())
        .unwrap_or(inner);
    let end = inner
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(inner.len(), |(i, _)| i);
    let name = inner.get(..end)?;
    let first = name.chars().next()?;
    (first.is_ascii_alphabetic() || first == '_').then_some(name)
}

/// The value of `${…}` (the whole expansion text) given its variable's value.
pub fn evaluate(expansion: &str, var: Known<'_>) -> Option<String> {
    let inner = expansion.strip_prefix("${")?.strip_suffix('}')?;
    let name = name_of(expansion)?;
    if let Some(rest) = inner.strip_prefix('#')
        && rest == name
    {
        let Known::Value(v) = var else { return None };
        return Some(v.chars().count().to_string());
    }
    let op = inner.strip_prefix(name)?;
    if op.contains(['$', '`', '"', '\'', '\\', '{', '}', '(']) {
        return None;
    }
    let value = match var {
        Known::Value(v) => v,
        Known::Unknown => return None,
    };
    if op.is_empty() {
        return Some(value.to_string());
    }
    // Unset is never known here (an unset variable may be set in the environment), so
    // the colon and non-colon forms agree on a set value.
    for (prefix, use_default_if_empty) in [(":-", true), ("-", false)] {
        if let Some(word) = op.strip_prefix(prefix) {
            return Some(if use_default_if_empty && value.is_empty() {
                word.to_string()
            } else {
                value.to_string()
            });
        }
    }
    for (prefix, needs_nonempty) in [(":+", true), ("+", false)] {
        if let Some(word) = op.strip_prefix(prefix) {
            return Some(if needs_nonempty && value.is_empty() {
                String::new()
            } else {
                word.to_string()
            });
        }
    }
    if op.starts_with(":=") || op.starts_with(":?") || op.starts_with('=') || op.starts_with('?') {
        // These assign or exit: only the plain case is certain.
        return (!value.is_empty()).then(|| value.to_string());
    }
    let chars: Vec<char> = value.chars().collect();
    if let Some(p) = op.strip_prefix("##") {
        return Some(strip_prefix(&chars, p, true));
    }
    if let Some(p) = op.strip_prefix('#') {
        return Some(strip_prefix(&chars, p, false));
    }
    if let Some(p) = op.strip_prefix("%%") {
        return Some(strip_suffix(&chars, p, true));
    }
    if let Some(p) = op.strip_prefix('%') {
        return Some(strip_suffix(&chars, p, false));
    }
    if let Some(rest) = op.strip_prefix('/') {
        return Some(replace(&chars, rest));
    }
    match op {
        "^^" => return Some(value.to_uppercase()),
        ",," => return Some(value.to_lowercase()),
        "^" | "," => {
            let mut cs = value.chars();
            let first = cs.next().map(|c| {
                if op == "^" {
                    c.to_uppercase().collect::<String>()
                } else {
                    c.to_lowercase().collect::<String>()
                }
            });
            return Some(first.unwrap_or_default() + cs.as_str());
        }
        _ => {}
    }
    if let Some(rest) = op.strip_prefix(':') {
        return substring(&chars, rest);
    }
    None
}

fn strip_prefix(v: &[char], pat: &str, longest: bool) -> String {
    let p: Vec<char> = pat.chars().collect();
    let mut lens: Vec<usize> = (0..=v.len()).collect();
    if longest {
        lens.reverse();
    }
    for n in lens {
        if glob_match(&p, v.get(..n).unwrap_or_default()) {
            return v.get(n..).unwrap_or_default().iter().collect();
        }
    }
    v.iter().collect()
}

fn strip_suffix(v: &[char], pat: &str, longest: bool) -> String {
    let p: Vec<char> = pat.chars().collect();
    let mut starts: Vec<usize> = (0..=v.len()).collect();
    if !longest {
        starts.reverse();
    }
    for s in starts {
        if glob_match(&p, v.get(s..).unwrap_or_default()) {
            return v.get(..s).unwrap_or_default().iter().collect();
        }
    }
    v.iter().collect()
}

/// `/pat/rep`, `//pat/rep`, `/#pat/rep`, `/%pat/rep` (the leading `/` already gone).
fn replace(v: &[char], rest: &str) -> String {
    let (all, anchor, rest) = if let Some(r) = rest.strip_prefix('/') {
        (true, None, r)
    } else if let Some(r) = rest.strip_prefix('#') {
        (false, Some('#'), r)
    } else if let Some(r) = rest.strip_prefix('%') {
        (false, Some('%'), r)
    } else {
        (false, None, rest)
    };
    let (pat, rep) = rest.split_once('/').unwrap_or((rest, ""));
    let p: Vec<char> = pat.chars().collect();
    if p.is_empty() {
        return v.iter().collect();
    }
    let mut out = String::new();
    let mut i = 0;
    let mut replaced = false;
    while i <= v.len() {
        let can = match anchor {
            Some('#') => i == 0,
            Some(_) => true,
            None => all || !replaced,
        };
        // The longest match starting here (bash matches the longest).
        let m = if can {
            (i..=v.len()).rev().find(|&e| {
                (anchor != Some('%') || e == v.len())
                    && e > i
                    && glob_match(&p, v.get(i..e).unwrap_or_default())
            })
        } else {
            None
        };
        match m {
            Some(e) => {
                out.push_str(rep);
                replaced = true;
                i = e;
            }
            None => {
                if let Some(c) = v.get(i) {
                    out.push(*c);
                }
                i += 1;
            }
        }
    }
    out
}

fn substring(v: &[char], rest: &str) -> Option<String> {
    let (off, len) = match rest.split_once(':') {
        Some((o, l)) => (o, Some(l)),
        None => (rest, None),
    };
    let num = |t: &str| t.trim().parse::<i64>().ok();
    let n = i64::try_from(v.len()).ok()?;
    let mut start = num(off)?;
    if start < 0 {
        start = (n + start).max(0);
    }
    let start = start.min(n);
    let end = match len {
        None => n,
        Some(l) => {
            let l = num(l)?;
            if l < 0 {
                (n + l).max(start)
            } else {
                (start + l).min(n)
            }
        }
    };
    if end < start {
        return None;
    }
    let (s, e) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    Some(v.get(s..e)?.iter().collect())
}

/// Bash pattern matching of a whole string: `*`, `?`, `[set]` (ranges, `!`/`^`
/// negation); everything else literal.
pub fn glob_match(p: &[char], s: &[char]) -> bool {
    // Iterative with one backtrack point per `*`, linear-ish in practice.
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => match class_match(p, pi, s.get(si).copied()) {
                Some((true, next)) => Some(next),
                Some((false, _)) => None,
                // No closing `]`: a literal `[`.
                None => (s.get(si) == Some(&'[')).then_some(pi + 1),
            },
            Some(c) => (s.get(si) == Some(c)).then_some(pi + 1),
            None => None,
        };
        match step {
            Some(next) => {
                pi = next;
                si += 1;
            }
            None => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|c| *c == '*')
}

/// Matches `c` against the bracket expression at `p[at]`; `(matched, index after)`.
fn class_match(p: &[char], at: usize, c: Option<char>) -> Option<(bool, usize)> {
    let c = c?;
    let mut i = at + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let cur = *p.get(i)?;
        if cur == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            let hi = *p.get(i + 2)?;
            if cur <= c && c <= hi {
                matched = true;
            }
            i += 3;
        } else {
            if cur == c {
                matched = true;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(e: &str, v: &str) -> Option<String> {
        evaluate(e, Known::Value(v))
    }

    #[test]
    fn operators_match_bash() {
        assert_eq!(ev("${c}", "ch").unwrap(), "ch");
        assert_eq!(ev("${c:-x}", "").unwrap(), "x");
        assert_eq!(ev("${c-x}", "").unwrap(), "");
        assert_eq!(ev("${c:+x}", "a").unwrap(), "x");
        assert_eq!(ev("${p#/usr}", "/usr/bin/rm").unwrap(), "/bin/rm");
        assert_eq!(ev("${p##*/}", "/usr/bin/rm").unwrap(), "rm");
        assert_eq!(ev("${p#*/}", "/usr/bin/rm").unwrap(), "usr/bin/rm");
        assert_eq!(ev("${p%/*}", "/usr/bin/rm").unwrap(), "/usr/bin");
        assert_eq!(ev("${p%%/*}", "a/b/c").unwrap(), "a");
        assert_eq!(ev("${p/X/m}", "rX -rf").unwrap(), "rm -rf");
        assert_eq!(ev("${p//a/b}", "aXa").unwrap(), "bXb");
        assert_eq!(ev("${p/#a/b}", "aXa").unwrap(), "bXa");
        assert_eq!(ev("${p/%a/b}", "aXa").unwrap(), "aXb");
        assert_eq!(ev("${p:1:3}", "xchmodx").unwrap(), "chm");
        assert_eq!(ev("${p: -2}", "abc").unwrap(), "bc");
        assert_eq!(ev("${p^^}", "rm").unwrap(), "RM");
        assert_eq!(ev("${p,,}", "RM").unwrap(), "rm");
        assert_eq!(ev("${#p}", "abc").unwrap(), "3");
        assert_eq!(evaluate("${p:-x}", Known::Unknown), None);
        assert_eq!(ev("${p:-$x}", ""), None);
        assert_eq!(ev("${!p}", "x"), None);
        assert_eq!(name_of("${!p}"), None);
    }

    #[test]
    fn globs_match_like_bash() {
        let g = |p: &str, s: &str| {
            glob_match(
                &p.chars().collect::<Vec<_>>(),
                &s.chars().collect::<Vec<_>>(),
            )
        };
        assert!(g("mkf?", "mkfs"));
        assert!(g("mkfs*", "mkfs.ext4"));
        assert!(g("[c]url", "curl"));
        assert!(g("[!a]url", "curl"));
        assert!(g("[a-d]url", "curl"));
        assert!(!g("[a-b]url", "curl"));
        assert!(g("*", ""));
        assert!(!g("?", ""));
        assert!(g("a*b*c", "aXbYbc"));
    }
}
