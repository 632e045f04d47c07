//! Strings bash evaluates as arithmetic, and the code that evaluation runs.
//!
//! Bash evaluates some strings as arithmetic expressions after quote removal: the
//! operands of `[[ A -eq B ]]` and `[[ -v NAME ]]`, `let` arguments, names handed to
//! `printf -v`, `read`, `declare`, values assigned to `declare -i`/`-n` variables, array
//! subscripts. An array subscript in such a string is expanded once more, so
//! `[[ -v 'a[$(id)]' ]]` runs `id` although the grammar reads a single-quoted string
//! (checked in bash 5.2). Inside `(( ))` the whole expression is expanded first, quotes
//! or not: `(( '$(id)' ))` runs `id` too.
//!
//! Owns finding that code in such a string; where the strings are is the engines'
//! concern. The code found is read like a `sh -c` string, so it can only add requests
//! and floor hits, never hide any.

/// The text bash evaluates, quotes removed the way expansion removes them before
/// arithmetic sees it: `'…'` and `"…"` quotes dropped, a backslash dropped before the
/// character it escapes. Approximate on purpose: the result is only ever read for more
/// code, never to prove something safe.
pub(crate) fn dequote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {}
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Whether an array subscript of `text` holds a command substitution (`a[$(id)]`,
/// ``a[`id`]``): what arithmetic on the string runs.
pub(crate) fn runs_in_subscript(text: &str) -> bool {
    text.find('[').is_some_and(|i| {
        text.get(i..)
            .is_some_and(|t| t.contains("$(") || t.contains('`'))
    })
}

/// The bodies of the command substitutions (`$(…)`, backticks) in `text`, outermost
/// first, each as bash code. `$((` is arithmetic, not a substitution: its inside is
/// searched on. An unterminated substitution runs to the end of the text.
pub(crate) fn substitutions(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match (b.get(i), b.get(i + 1), b.get(i + 2)) {
            (Some(b'$'), Some(b'('), Some(b'(')) => i += 3,
            (Some(b'$'), Some(b'('), _) => {
                let start = i + 2;
                let mut depth = 1usize;
                let mut j = start;
                while j < b.len() {
                    match b.get(j) {
                        Some(b'(') => depth += 1,
                        Some(b')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                out.extend(text.get(start..j).map(str::to_string));
                i = j + 1;
            }
            (Some(b'`'), _, _) => {
                let start = i + 1;
                let end = text
                    .get(start..)
                    .and_then(|t| t.find('`'))
                    .map_or(b.len(), |n| start + n);
                out.extend(text.get(start..end).map(str::to_string));
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out.retain(|c| !c.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_arithmetic_runs() {
        assert_eq!(substitutions(&dequote("'a[$(id)]'")), vec!["id"]);
        assert_eq!(
            substitutions(&dequote("\"a[\\$(rm -rf /)]\"")),
            vec!["rm -rf /"]
        );
        assert_eq!(substitutions("a[`id -u`]"), vec!["id -u"]);
        assert_eq!(substitutions("a[$(echo $(id))]"), vec!["echo $(id)"]);
        assert_eq!(substitutions("x[$((1+$(id)))]"), vec!["id"]);
        assert_eq!(substitutions("a[$(id"), vec!["id"]);
        assert!(substitutions("a[1] + b").is_empty());
        assert!(runs_in_subscript("a[$(id)]"));
        assert!(runs_in_subscript("x[1]+a[`id`]"));
        assert!(!runs_in_subscript("$(id)"));
        assert!(!runs_in_subscript("a[1]"));
    }
}
