//! Whether an awk program only reads its input and prints to standard output: a reader
//! for the awk language (POSIX awk as mawk 1.3.4 and gawk 5 read it), for the subset
//! with no way out of that.
//!
//! The program is split into awk's tokens (strings, regular expression literals,
//! comments, names, numbers, operators; a `/` starts a regular expression only where
//! an operand may start, otherwise it divides), brackets are balanced, and it is
//! outside the subset — not verified — when it holds:
//!
//! - `system`, `getline` (from a command, a file or the input alike), a pipe `|` or
//!   gawk's coprocess `|&`;
//! - an output redirection: a `>` or `>>` at the top level of a `print`/`printf`
//!   statement (inside parentheses it compares; the statement ends at `;` or `}`, so a
//!   comparison after a newline in the same action is left unread too);
//! - the environment or the command line as data: `ENVIRON`, `PROCINFO`, `ARGV`,
//!   `ARGC` (a program that sets `ARGV[1]` reads a file the words do not name),
//!   `SYMTAB`, `FUNCTAB` (gawk's indirect access to all of them);
//! - a gawk directive or indirect call (`@load`, `@include`, `@f()`);
//! - anything this reader does not follow: a backslash outside a string or regular
//!   expression, a `/` where awks may read a division or a regular expression (after
//!   `$`, `++`, `--`, `in`, …), a `\`, `[`, `/` or `"` inside a bracket expression of a
//!   regular expression literal (awks disagree on where it ends), an unterminated
//!   string or expression, unbalanced brackets.
//!
//! Knows nothing of awk's options or files: `readonly::verify` reads those.

/// Most bytes of program read; longer is not verified.
const MAX_PROGRAM: usize = 16 * 1024;

/// Names a program in the subset never uses (see the module doc).
const DENIED: &[&str] = &[
    "system", "getline", "ENVIRON", "PROCINFO", "ARGV", "ARGC", "SYMTAB", "FUNCTAB",
];

/// Whether a variable may be assigned from the command line (`-v NAME=V`, an operand
/// `NAME=V`): any name but the denied ones.
pub fn assignable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !DENIED.contains(&name)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Name(String),
    /// A number, string or regular expression literal.
    Literal,
    /// An operator or punctuation, as written (`>`, `>>`, `(`, `;`, `\n`).
    Op(String),
}

/// Whether `program` is in the subset (see the module doc).
pub fn print_only(program: &str) -> bool {
    if program.len() > MAX_PROGRAM {
        return false;
    }
    let Some(tokens) = tokens(program) else {
        return false;
    };
    for t in &tokens {
        match t {
            Tok::Name(n) if DENIED.contains(&n.as_str()) => return false,
            Tok::Op(o) if matches!(o.as_str(), "|" | "|&" | "@") => return false,
            _ => {}
        }
    }
    balanced(&tokens) && no_redirect(&tokens)
}

/// Brackets pair up.
fn balanced(tokens: &[Tok]) -> bool {
    let mut stack: Vec<char> = Vec::new();
    for t in tokens {
        let Tok::Op(o) = t else { continue };
        match o.as_str() {
            "(" => stack.push(')'),
            "[" => stack.push(']'),
            "{" => stack.push('}'),
            ")" | "]" | "}" if stack.pop() != o.chars().next() => return false,
            _ => {}
        }
    }
    stack.is_empty()
}

/// No `>`, `>>` or `>=` at the top level of a `print`/`printf` statement.
fn no_redirect(tokens: &[Tok]) -> bool {
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        i += 1;
        if !matches!(t, Tok::Name(n) if n == "print" || n == "printf") {
            continue;
        }
        let mut depth = 0usize;
        while let Some(t) = tokens.get(i) {
            if let Tok::Op(o) = t {
                match o.as_str() {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" => depth = depth.saturating_sub(1),
                    "}" if depth == 0 => break,
                    "}" => depth -= 1,
                    ";" if depth == 0 => break,
                    ">" | ">>" | ">=" if depth == 0 => return false,
                    _ => {}
                }
            }
            i += 1;
        }
    }
    true
}

/// What a `/` after this token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slash {
    Divide,
    Regex,
    /// awks may read it either way: not read (a regex read as a division, or the
    /// reverse, would read a quote inside it as the start of a string).
    Unsure,
}

/// A `/` divides after an operand (a literal, a variable, `)`, `]`) and starts a
/// regular expression where an operand may start (after an operator, `(`, `,`, `{`,
/// `;`, a newline, `print`, `return`, …).
fn slash_after(t: Option<&Tok>) -> Slash {
    match t {
        None => Slash::Regex,
        Some(Tok::Literal) => Slash::Divide,
        Some(Tok::Name(n)) => match n.as_str() {
            "print" | "printf" | "return" | "case" | "do" | "else" | "exit" => Slash::Regex,
            "if" | "while" | "for" | "in" | "next" | "nextfile" | "delete" | "function"
            | "func" | "BEGIN" | "END" | "BEGINFILE" | "ENDFILE" | "getline" | "switch"
            | "default" | "break" | "continue" => Slash::Unsure,
            _ => Slash::Divide,
        },
        Some(Tok::Op(o)) => match o.as_str() {
            ")" | "]" => Slash::Divide,
            "$" | "++" | "--" => Slash::Unsure,
            _ => Slash::Regex,
        },
    }
}

/// awk's tokens, or `None` for what this reader does not follow.
fn tokens(program: &str) -> Option<Vec<Tok>> {
    let s: Vec<char> = program.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '\\' => return None,
            '#' => {
                while s.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                loop {
                    match s.get(i)? {
                        '\\' => i += 2,
                        '"' => break,
                        '\n' => return None,
                        _ => i += 1,
                    }
                }
                i += 1;
                out.push(Tok::Literal);
            }
            '/' if slash_after(out.last()) == Slash::Unsure => return None,
            '/' if slash_after(out.last()) == Slash::Regex => {
                i += 1;
                let mut bracket = false;
                loop {
                    match s.get(i)? {
                        '\n' => return None,
                        // Inside a bracket expression awks differ on escapes, classes
                        // and where a `/` ends it: none of those is read.
                        '\\' | '[' | '/' | '"' if bracket => return None,
                        '\\' => i += 2,
                        '[' => {
                            bracket = true;
                            i += 1;
                            // A leading `^` and `]` are members.
                            if s.get(i) == Some(&'^') {
                                i += 1;
                            }
                            if s.get(i) == Some(&']') {
                                i += 1;
                            }
                        }
                        ']' if bracket => {
                            bracket = false;
                            i += 1;
                        }
                        '/' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
                out.push(Tok::Literal);
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while s
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                out.push(Tok::Name(s.get(start..i)?.iter().collect()));
            }
            c if c.is_ascii_digit()
                || (c == '.' && s.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                while s
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
                {
                    i += 1;
                }
                out.push(Tok::Literal);
            }
            _ => {
                // The longest operator first.
                let three: String = s.get(i..i + 3).unwrap_or_default().iter().collect();
                let two: String = s.get(i..i + 2).unwrap_or_default().iter().collect();
                let op = if ["**="].contains(&three.as_str()) {
                    three
                } else if [
                    ">>", ">=", "<=", "==", "!=", "&&", "||", "|&", "++", "--", "+=", "-=", "*=",
                    "/=", "%=", "^=", "**", "!~",
                ]
                .contains(&two.as_str())
                {
                    two
                } else {
                    c.to_string()
                };
                if !op
                    .chars()
                    .all(|c| "<>=!&|+-*/%^~?:,;(){}[]$@\n".contains(c))
                {
                    return None;
                }
                i += op.chars().count();
                out.push(Tok::Op(op));
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::print_only;

    /// Each program run through mawk 1.3.4 here under strace: the first list only read
    /// their input and printed; the second are the ways out.
    #[test]
    fn only_the_subset_is_read() {
        for ok in [
            "{print $1}",
            "{ print $2, $NF }",
            "NR==1",
            "NR>1 {print}",
            "$3 > 100 { print $1 }",
            "{ print ($1 > $2) }",
            "{ s += $2 } END { print s / NR }",
            "/^#/ { next } { print }",
            "BEGIN { FS = \":\" } { print $1 }",
            "{ printf \"%s %d\\n\", $1, length($0) }",
            "length > 80",
            "{ a[$1]++ } END { for (k in a) print k, a[k] }",
            "$1 ~ /a|b/ { print }",
            "{ n = split($0, p, \"/\"); print p[n] }",
            "function f(x) { return x * 2 } { print f($1) }",
            "{ gsub(/a/, \"b\"); print }",
            "NR % 2 == 0",
            "{ print substr($0, 1, 10) }",
            "{ print $1 \" | \" $2 }",
            "a = 1 / 2 { print a }",
            "{ x = $1 / 2 / 3; print x }",
        ] {
            assert!(print_only(ok), "{ok:?} only prints");
        }
        for bad in [
            "BEGIN { system(\"id\") }",
            "{ print | \"sh\" }",
            "{ print > \"out.txt\" }",
            "{ print >> \"/home/u/.bashrc\" }",
            "{ printf \"%s\", $0 > \"f\" }",
            "{ printf(\"%s\", $0) > \"f\" }",
            "{ print $1, $2 > $3 }",
            "BEGIN { while ((\"cat ~/.ssh/id_rsa\" | getline l) > 0) print l }",
            "BEGIN { getline l < \"/home/u/.ssh/id_rsa\"; print l }",
            "{ getline; print }",
            "BEGIN { print ENVIRON[\"AWS_SECRET_ACCESS_KEY\"] }",
            "BEGIN { ARGV[1] = \"/home/u/.ssh/id_rsa\"; ARGC = 2 } { print }",
            "BEGIN { print PROCINFO[\"pid\"] }",
            "@load \"filefuncs\"",
            "BEGIN { f = \"system\"; @f(\"id\") }",
            "BEGIN { print \"x\" |& \"cat\" }",
            "{ print SYMTAB[\"ENVIRON\"] }",
            "{ print \\\n > \"f\" }",
            "/[/]/ { print }",
            "{ print \"unterminated }",
            "{ print $1",
            "{ print a\n b > \"f\" }",
            "$/\"/; BEGIN { system(\"id\") } \"",
            "/[[:alpha:]/\"]/; { print }",
            "{ x = $1++ /2/ 1 }",
        ] {
            assert!(!print_only(bad), "{bad:?} does more than print");
        }
    }
}
