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

/// `$'…'`: the escapes bash decodes, so `$'\x72\x6d'` reads as `rm`. Returns whether
/// the value is known: `\xHH` and `\nnn` are bytes (`$'\xc3\xa9'` is `é`, not `Ã©`),
/// and bytes that are no UTF-8 text cannot be held here, nor can `\u`/`\U`, whose value
/// depends on the locale (`\u00e9` stays as written in the C locale). An escape bash
/// does not know keeps its backslash (`$'\z'` is `\z`), as does `\x` without a digit.
pub(crate) fn decode_ansi_c(raw: &str, out: &mut String) -> bool {
    let inner = raw
        .strip_prefix("$'")
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw);
    let mut bytes: Vec<u8> = Vec::with_capacity(inner.len());
    let mut known = true;
    let push = |bytes: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            push(&mut bytes, c);
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some('a') => bytes.push(0x07),
            Some('b') => bytes.push(0x08),
            Some('e' | 'E') => bytes.push(0x1b),
            Some('f') => bytes.push(0x0c),
            Some('v') => bytes.push(0x0b),
            Some(q @ ('\\' | '\'' | '"' | '?')) => push(&mut bytes, q),
            Some('x') => {
                let mut v = 0u32;
                let mut digits = 0;
                while digits < 2
                    && let Some(d) = chars.peek().and_then(|c| c.to_digit(16))
                {
                    v = v * 16 + d;
                    digits += 1;
                    chars.next();
                }
                if digits == 0 {
                    bytes.extend_from_slice(b"\\x");
                } else {
                    bytes.push(u8::try_from(v).unwrap_or(0xff));
                }
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
                bytes.push(u8::try_from(v & 0xff).unwrap_or(0xff));
            }
            Some('c') => match chars.next() {
                // `\cX`: the control character of X.
                Some(x) if x.is_ascii() => {
                    bytes.push(u8::try_from(x.to_ascii_uppercase()).unwrap_or(0) ^ 0x40)
                }
                _ => known = false,
            },
            Some('u' | 'U') => {
                known = false;
                bytes.extend_from_slice(b"\\u");
            }
            Some(other) => {
                bytes.push(b'\\');
                push(&mut bytes, other);
            }
            None => bytes.push(b'\\'),
        }
    }
    match String::from_utf8(bytes) {
        Ok(text) => out.push_str(&text),
        Err(e) => {
            out.push_str(&String::from_utf8_lossy(e.as_bytes()));
            known = false;
        }
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ansi(raw: &str) -> (String, bool) {
        let mut s = String::new();
        let known = decode_ansi_c(raw, &mut s);
        (s, known)
    }

    /// As bash decodes `$'…'` (checked with bash 5.2): escapes are bytes, unknown
    /// escapes keep their backslash, and what the text cannot hold is unknown.
    #[test]
    fn ansi_c_strings_decode_as_bash_does() {
        assert_eq!(ansi(r"$'\x72\x6d'"), ("rm".into(), true));
        assert_eq!(ansi(r"$'\xc3\xa9'"), ("\u{e9}".into(), true));
        assert_eq!(ansi(r"$'\303\251'"), ("\u{e9}".into(), true));
        assert_eq!(ansi(r"$'\0101'"), ("\u{8}1".into(), true));
        assert_eq!(ansi(r"$'\z\x\xg'"), (r"\z\x\xg".into(), true));
        assert_eq!(ansi(r#"$'\'\"\?\\'"#), (r#"'"?\"#.into(), true));
        assert_eq!(ansi(r"$'\cA'"), ("\u{1}".into(), true));
        assert!(!ansi(r"$'\xff'").1);
        assert!(!ansi(r"$'\u00e9'").1);
    }
}
