//! Pure producers: programs whose standard output follows from their words and their
//! standard input alone, so the evaluator can compute it (`echo c2h1… | base64 -d` is
//! `shutdown…`). Each is the common, documented behaviour of bash's builtins and GNU
//! coreutils; an option outside the few read here makes the output unknown.

/// The output of `argv` fed `stdin` (`None`: unknown input), or `None` when it is not a
/// pure producer, an option is not understood, or the output exceeds `max_bytes`.
pub fn produce(argv: &[String], stdin: Option<&str>, max_bytes: usize) -> Option<String> {
    let (name, args) = argv.split_first()?;
    let out = match name.as_str() {
        "echo" => echo(args)?,
        "printf" => printf(args)?,
        "cat" => match args {
            [] => stdin?.to_string(),
            [d] if d == "-" => stdin?.to_string(),
            _ => return None,
        },
        "base64" => base64(args, stdin?)?,
        "base32" => base32(args, stdin?)?,
        "xxd" => xxd(args, stdin?)?,
        "rev" if args.is_empty() => rev(stdin?),
        "tr" => tr(args, stdin?)?,
        "sed" => sed(args, stdin?)?,
        "true" | ":" if args.is_empty() => String::new(),
        _ => return None,
    };
    (out.len() <= max_bytes).then_some(out)
}

/// Whether a command word names a producer (its output may be computable).
pub fn is_producer(name: &str) -> bool {
    matches!(
        name,
        "echo" | "printf" | "cat" | "base64" | "base32" | "xxd" | "rev" | "tr" | "sed"
    )
}

/// Bash's builtin `echo` (no `xpg_echo`): `-n`, `-e`, `-E` in any combination.
fn echo(args: &[String]) -> Option<String> {
    let mut newline = true;
    let mut escapes = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let flags = first
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && f.chars().all(|c| matches!(c, 'n' | 'e' | 'E')));
        let Some(flags) = flags else { break };
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = tail;
    }
    let joined = rest.join(" ");
    let mut out: Vec<u8> = Vec::new();
    if escapes {
        if backslash_escapes(&joined, &mut out, true) {
            return text(out);
        }
    } else {
        out = joined.into_bytes();
    }
    if newline {
        out.push(b'\n');
    }
    text(out)
}

/// Output bytes as text: an escape may print any byte (`\xef` is the byte 0xEF, not
/// the character U+00EF), and bytes that are no UTF-8 text make the output unknown.
fn text(out: Vec<u8>) -> Option<String> {
    String::from_utf8(out).ok()
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// The escapes of `echo -e` and `printf %b` (`octal_zero`: `\0nnn`) or of a printf
/// format (`\nnn`), as the bytes bash prints. Returns true when `\c` stopped the
/// output.
fn backslash_escapes(s: &str, out: &mut Vec<u8>, octal_zero: bool) -> bool {
    let mut cs = s.chars().peekable();
    while let Some(c) = cs.next() {
        if c != '\\' {
            push_char(out, c);
            continue;
        }
        let Some(n) = cs.next() else {
            out.push(b'\\');
            break;
        };
        match n {
            'a' => out.push(0x07),
            'b' => out.push(0x08),
            'c' => return true,
            'e' | 'E' => out.push(0x1b),
            'f' => out.push(0x0c),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(0x0b),
            '\\' => out.push(b'\\'),
            'x' => {
                let mut v = 0u32;
                let mut any = false;
                for _ in 0..2 {
                    match cs.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            any = true;
                            cs.next();
                        }
                        None => break,
                    }
                }
                if any {
                    out.push(u8::try_from(v).unwrap_or(0xff));
                } else {
                    out.extend_from_slice(b"\\x");
                }
            }
            d @ '0'..='7' => {
                let (mut v, max) = if octal_zero && d == '0' {
                    (0, 3)
                } else if octal_zero {
                    out.push(b'\\');
                    push_char(out, d);
                    continue;
                } else {
                    (d.to_digit(8).unwrap_or(0), 2)
                };
                for _ in 0..max {
                    match cs.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            cs.next();
                        }
                        None => break,
                    }
                }
                out.push(u8::try_from(v & 0xff).unwrap_or(0xff));
            }
            '"' if !octal_zero => out.push(b'"'),
            '\'' if !octal_zero => out.push(b'\''),
            other => {
                out.push(b'\\');
                push_char(out, other);
            }
        }
    }
    false
}

/// Bash's builtin `printf`: `%s`, `%b`, `%c`, `%d`/`%i`, `%%`, widths and `-`; the
/// format is reused while arguments remain. `-v` assigns, so it is not a producer.
fn printf(args: &[String]) -> Option<String> {
    let args = match args.split_first() {
        Some((d, rest)) if d == "--" => rest,
        _ => args,
    };
    let (format, mut rest) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    let mut out: Vec<u8> = Vec::new();
    loop {
        let consumed = printf_once(format, rest, &mut out)?;
        rest = rest.get(consumed..).unwrap_or_default();
        if consumed == 0 || rest.is_empty() {
            break;
        }
    }
    text(out)
}

/// One pass of the format; how many arguments it consumed.
fn printf_once(format: &str, args: &[String], out: &mut Vec<u8>) -> Option<usize> {
    let mut used = 0;
    let mut cs = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = cs.next() {
        if c == '\\' {
            literal.push('\\');
            if let Some(n) = cs.next() {
                literal.push(n);
            }
            continue;
        }
        if c != '%' {
            literal.push(c);
            continue;
        }
        if backslash_escapes(&std::mem::take(&mut literal), out, false) {
            return Some(args.len().max(used));
        }
        let mut left = false;
        let mut width = String::new();
        while let Some(&f) = cs.peek() {
            if f == '-' {
                left = true;
                cs.next();
            } else if f.is_ascii_digit() {
                width.push(f);
                cs.next();
            } else {
                break;
            }
        }
        let conv = cs.next()?;
        let arg = args.get(used).map(String::as_str);
        let text: Vec<u8> = match conv {
            '%' => b"%".to_vec(),
            's' => {
                used += 1;
                arg.unwrap_or("").as_bytes().to_vec()
            }
            'b' => {
                used += 1;
                let mut t = Vec::new();
                if backslash_escapes(arg.unwrap_or(""), &mut t, true) {
                    out.extend_from_slice(&t);
                    return Some(args.len().max(used));
                }
                t
            }
            'c' => {
                used += 1;
                match arg.and_then(|a| a.chars().next()) {
                    // Past ASCII, one character is one byte or several depending on
                    // the locale.
                    Some(c) if !c.is_ascii() => return None,
                    Some(c) => vec![u8::try_from(c).ok()?],
                    None => Vec::new(),
                }
            }
            'd' | 'i' => {
                used += 1;
                let a = arg.unwrap_or("0").trim();
                let v: i64 = if a.is_empty() { 0 } else { a.parse().ok()? };
                v.to_string().into_bytes()
            }
            _ => return None,
        };
        let w: usize = if width.is_empty() {
            0
        } else {
            width.parse().ok()?
        };
        if w > 4096 || (w > 0 && !text.is_ascii()) {
            // A width counts bytes or characters depending on the locale.
            return None;
        }
        let pad = w.saturating_sub(text.len());
        if left {
            out.extend_from_slice(&text);
            out.extend(std::iter::repeat_n(b' ', pad));
        } else {
            out.extend(std::iter::repeat_n(b' ', pad));
            out.extend_from_slice(&text);
        }
    }
    backslash_escapes(&literal, out, false);
    Some(used)
}

fn decode_flag(args: &[String]) -> bool {
    matches!(
        args.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["-d"] | ["--decode"] | ["-di"] | ["-id"] | ["-d", "-i"] | ["-i", "-d"]
    )
}

fn base64(args: &[String], input: &str) -> Option<String> {
    if !decode_flag(args) {
        return None;
    }
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    decode_bits(input, ALPHABET, 6)
}

fn base32(args: &[String], input: &str) -> Option<String> {
    if !decode_flag(args) {
        return None;
    }
    decode_bits(input, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 5)
}

/// Decodes a base-2^`bits` text (newlines ignored, `=` padding at the end) into UTF-8.
fn decode_bits(input: &str, alphabet: &[u8], bits: u32) -> Option<String> {
    let mut acc: u32 = 0;
    let mut have = 0u32;
    let mut bytes = Vec::new();
    let mut padding = false;
    for c in input.bytes() {
        if c == b'\n' || c == b'\r' {
            continue;
        }
        if c == b'=' {
            padding = true;
            continue;
        }
        if padding {
            return None;
        }
        let v = alphabet.iter().position(|a| *a == c)?;
        acc = (acc << bits) | u32::try_from(v).ok()?;
        have += bits;
        if have >= 8 {
            have -= 8;
            bytes.push(u8::try_from((acc >> have) & 0xff).ok()?);
            acc &= (1 << have) - 1;
        }
    }
    String::from_utf8(bytes).ok()
}

fn xxd(args: &[String], input: &str) -> Option<String> {
    let flags: Vec<&str> = args.iter().map(String::as_str).collect();
    let reverse_plain = matches!(
        flags.as_slice(),
        ["-r", "-p"]
            | ["-p", "-r"]
            | ["-rp"]
            | ["-pr"]
            | ["-r", "-ps"]
            | ["-ps", "-r"]
            | ["-r", "-plain"]
            | ["-plain", "-r"]
    );
    if !reverse_plain {
        return None;
    }
    let digits: Vec<u32> = input
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_digit(16))
        .collect::<Option<Vec<_>>>()?;
    let bytes: Vec<u8> = digits
        .chunks(2)
        .filter_map(|p| match p {
            [a, b] => u8::try_from(a * 16 + b).ok(),
            _ => None,
        })
        .collect();
    String::from_utf8(bytes).ok()
}

fn rev(input: &str) -> String {
    input
        .split_inclusive('\n')
        .map(|line| {
            let (body, nl) = match line.strip_suffix('\n') {
                Some(b) => (b, "\n"),
                None => (line, ""),
            };
            body.chars().rev().collect::<String>() + nl
        })
        .collect()
}

/// A `tr` set: literal characters, `a-z` ranges, `\n`/`\t`/`\\` and the classes
/// `[:lower:]`, `[:upper:]`, `[:digit:]`.
fn tr_set(s: &str) -> Option<Vec<char>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let class = [
            ("[:lower:]", 'a'..='z'),
            ("[:upper:]", 'A'..='Z'),
            ("[:digit:]", '0'..='9'),
        ]
        .into_iter()
        .find(|(name, _)| rest.starts_with(name));
        if let Some((name, range)) = class {
            out.extend(range);
            rest = rest.get(name.len()..)?;
            continue;
        }
        let mut cs = rest.chars();
        let c = cs.next()?;
        let (c, after) = if c == '\\' {
            let e = cs.next()?;
            let v = match e {
                'n' => '\n',
                't' => '\t',
                '\\' => '\\',
                _ => return None,
            };
            (v, cs.as_str())
        } else if c == '[' {
            return None;
        } else {
            (c, cs.as_str())
        };
        if let Some(hi_rest) = after.strip_prefix('-')
            && let Some(hi) = hi_rest.chars().next()
            && hi != '\\'
        {
            if hi < c {
                return None;
            }
            out.extend(c..=hi);
            rest = hi_rest.get(hi.len_utf8()..)?;
        } else {
            out.push(c);
            rest = after;
        }
    }
    Some(out)
}

fn tr(args: &[String], input: &str) -> Option<String> {
    match args {
        [d, set] if d == "-d" => {
            let set = tr_set(set)?;
            Some(input.chars().filter(|c| !set.contains(c)).collect())
        }
        [a, b] if !a.starts_with('-') && !b.starts_with('-') => {
            let (from, to) = (tr_set(a)?, tr_set(b)?);
            let last = *to.last()?;
            Some(
                input
                    .chars()
                    .map(|c| match from.iter().rposition(|f| *f == c) {
                        Some(i) => to.get(i).copied().unwrap_or(last),
                        None => c,
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// `sed 's/lit/lit/[g]'` (also with `-e`): literal text only, no regex character.
fn sed(args: &[String], input: &str) -> Option<String> {
    let script = match args {
        [s] => s,
        [e, s] if e == "-e" => s,
        _ => return None,
    };
    let mut cs = script.chars();
    if cs.next()? != 's' {
        return None;
    }
    let delim = cs.next()?;
    if delim.is_alphanumeric() || delim == '\\' || delim == '\n' {
        return None;
    }
    let parts: Vec<&str> = cs.as_str().split(delim).collect();
    let [from, to, flags] = parts.as_slice() else {
        return None;
    };
    let regex_chars = [
        '.', '[', ']', '*', '^', '$', '\\', '+', '?', '(', ')', '{', '}', '|',
    ];
    if from.is_empty() || from.contains(regex_chars) || to.contains(['\\', '&', '\n']) {
        return None;
    }
    let global = match *flags {
        "" => false,
        "g" => true,
        _ => return None,
    };
    Some(
        input
            .split_inclusive('\n')
            .map(|line| {
                if global {
                    line.replace(from, to)
                } else {
                    line.replacen(from, to, 1)
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(argv: &[&str], stdin: Option<&str>) -> Option<String> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        produce(&argv, stdin, 1 << 16)
    }

    /// An escape prints a byte, as bash does: `\xef\xbb\xbf` is the UTF-8 of U+FEFF (the
    /// oracle's strict check found the evaluator computing U+00EF U+00BB U+00BF), and
    /// bytes that are no UTF-8 make the output unknown.
    #[test]
    fn escapes_print_bytes() {
        assert_eq!(
            p(&["printf", "^\\xef\\xbb\\xbf"], None).as_deref(),
            Some("^\u{feff}")
        );
        assert_eq!(
            p(&["echo", "-e", "\\xc3\\xa9"], None).as_deref(),
            Some("\u{e9}\n")
        );
        assert_eq!(
            p(&["printf", "%b", "\\0303\\0251"], None).as_deref(),
            Some("\u{e9}")
        );
        assert_eq!(p(&["printf", "\\351"], None), None);
        assert_eq!(p(&["printf", "\\xff"], None), None);
        // Locale-dependent: a width or `%c` past ASCII.
        assert_eq!(p(&["printf", "%5s", "\u{e9}"], None), None);
        assert_eq!(p(&["printf", "%c", "\u{e9}t\u{e9}"], None), None);
        assert_eq!(p(&["printf", "%-3s|", "ab"], None).as_deref(), Some("ab |"));
    }

    #[test]
    fn producers_compute_their_output() {
        assert_eq!(p(&["echo", "a", "b"], None).unwrap(), "a b\n");
        assert_eq!(p(&["echo", "-n", "x"], None).unwrap(), "x");
        assert_eq!(p(&["echo", "-e", "\\x72m"], None).unwrap(), "rm\n");
        assert_eq!(p(&["echo", "\\x72m"], None).unwrap(), "\\x72m\n");
        assert_eq!(p(&["echo", "-ne", "a\\cb"], None).unwrap(), "a");
        assert_eq!(p(&["printf", "%s", "shutdown"], None).unwrap(), "shutdown");
        assert_eq!(
            p(&["printf", "\\x68\\x61\\x6c\\x74"], None).unwrap(),
            "halt"
        );
        assert_eq!(p(&["printf", "\\150"], None).unwrap(), "h");
        assert_eq!(p(&["printf", "%s\\n", "a", "b"], None).unwrap(), "a\nb\n");
        assert_eq!(p(&["printf", "%b", "\\0150"], None).unwrap(), "h");
        assert_eq!(
            p(&["printf", "%3d|%-2s|", "7", "x"], None).unwrap(),
            "  7|x |"
        );
        assert_eq!(p(&["printf", "-v", "x", "y"], None), None);
        assert_eq!(
            p(&["base64", "-d"], Some("c2h1dGRvd24gLWggbm93\n")).unwrap(),
            "shutdown -h now"
        );
        assert_eq!(p(&["base64", "-d"], Some("cm0=")).unwrap(), "rm");
        assert_eq!(p(&["base64", "-d"], Some("c*")), None);
        assert_eq!(p(&["base32", "-d"], Some("OJWQ====")).unwrap(), "rm");
        assert_eq!(p(&["xxd", "-r", "-p"], Some("726d\n")).unwrap(), "rm");
        assert_eq!(p(&["rev"], Some("fr- mr\n")).unwrap(), "rm -rf\n");
        assert_eq!(p(&["tr", "a-y", "b-z"], Some("ql")).unwrap(), "rm");
        assert_eq!(p(&["tr", "-d", "X"], Some("rXm")).unwrap(), "rm");
        assert_eq!(
            p(&["tr", "[:lower:]", "[:upper:]"], Some("ab")).unwrap(),
            "AB"
        );
        assert_eq!(
            p(&["sed", "s/X/m/g"], Some("rX -rf X\n")).unwrap(),
            "rm -rf m\n"
        );
        assert_eq!(p(&["sed", "s/./m/"], Some("x")), None);
        assert_eq!(p(&["cat"], Some("x")).unwrap(), "x");
        assert_eq!(p(&["cat", "f"], Some("x")), None);
        assert_eq!(p(&["cat"], None), None);
        assert_eq!(p(&["curl", "x"], None), None);
    }
}
