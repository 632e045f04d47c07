//! Word text as bash reads it: backslash escapes outside and inside double quotes,
//! `$'…'` decoding, and descriptor targets of redirects. Pure string functions, no
//! syntax tree.

/// `2>&1`, `>&-`, `<&3`: a descriptor, not a file.
pub(super) fn is_fd_target(t: &str) -> bool {
    t == "-"
        || (!t.is_empty() && t.chars().all(|c| c.is_ascii_digit()))
        || t.strip_suffix('-')
            .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
}

/// Removes backslash escapes and line continuations as bash does outside quotes.
pub(crate) fn unescape_unquoted(raw: &str, out: &mut String) {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
}

/// Inside double quotes a backslash escapes only `$`, backtick, `"`, `\` and newline.
pub(crate) fn unescape_double_quoted(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
}

/// `$'…'`: the escapes bash decodes, so `$'\x72\x6d'` reads as `rm`.
pub(crate) fn decode_ansi_c(raw: &str, out: &mut String) {
    let inner = raw
        .strip_prefix("$'")
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw);
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('e' | 'E') => out.push('\x1b'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some('x') => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('?'));
            }
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(n) => {
                            v = v * 8 + n;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('?'));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
}
