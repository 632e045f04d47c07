//! `$(( ))` on constants: bash's integer arithmetic (64-bit, wrapping) over numbers
//! and variables whose values are known. Assignments, `++`/`--`, arrays and anything
//! unknown make the whole expression unknown; division by zero too (bash errors).

/// Evaluates `expr` (the text between `$((` and `))`); `var` gives known variables.
pub fn evaluate(expr: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<i64> {
    let tokens = tokenize(expr)?;
    let mut p = Parser {
        tokens,
        at: 0,
        var,
        depth: 0,
    };
    let v = p.expr(0)?;
    (p.at == p.tokens.len()).then_some(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "**", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "+", "-", "*", "/", "%", "<", ">", "&", "^", "|", "!", "~", "(", ")", "=", "?", ":", ",",
];

fn tokenize(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = *b.get(i)?;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
                i += 1;
            }
            out.push(Tok::Num(number(s.get(start..i)?)?));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len()
                && b.get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            {
                i += 1;
            }
            out.push(Tok::Name(s.get(start..i)?.to_string()));
            continue;
        }
        let rest = s.get(i..)?;
        let op = OPS.iter().find(|op| rest.starts_with(**op))?;
        out.push(Tok::Op(op));
        i += op.len();
    }
    Some(out)
}

fn number(t: &str) -> Option<i64> {
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    if t.len() > 1 && t.starts_with('0') {
        return i64::from_str_radix(t.get(1..)?, 8).ok();
    }
    t.parse().ok()
}

struct Parser<'v> {
    tokens: Vec<Tok>,
    at: usize,
    var: &'v dyn Fn(&str) -> Option<String>,
    depth: usize,
}

/// Binary operators by precedence (higher binds tighter), as bash orders them.
fn binary(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn expr(&mut self, min: u8) -> Option<i64> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let mut lhs = self.unary()?;
        while let Some(Tok::Op(op)) = self.peek().cloned() {
            if op == "?" && min == 0 {
                self.at += 1;
                let a = self.expr(0)?;
                if self.peek() != Some(&Tok::Op(":")) {
                    return None;
                }
                self.at += 1;
                let b = self.expr(0)?;
                lhs = if lhs != 0 { a } else { b };
                continue;
            }
            let Some(prec) = binary(op) else { break };
            if prec <= min && !(op == "**" && prec == min) {
                break;
            }
            self.at += 1;
            // `**` is right-associative.
            let rhs = self.expr(if op == "**" { prec - 1 } else { prec })?;
            lhs = apply(op, lhs, rhs)?;
        }
        self.depth -= 1;
        Some(lhs)
    }

    fn unary(&mut self) -> Option<i64> {
        let t = self.peek()?.clone();
        self.at += 1;
        match t {
            Tok::Num(n) => Some(n),
            Tok::Name(n) => {
                let v = (self.var)(&n)?;
                let v = v.trim();
                if v.is_empty() {
                    Some(0)
                } else {
                    number(v).or_else(|| v.strip_prefix('-').and_then(number).map(|n| -n))
                }
            }
            Tok::Op("(") => {
                let v = self.expr(0)?;
                (self.peek() == Some(&Tok::Op(")"))).then(|| self.at += 1)?;
                Some(v)
            }
            Tok::Op("-") => Some(self.unary()?.wrapping_neg()),
            Tok::Op("+") => self.unary(),
            Tok::Op("!") => Some(i64::from(self.unary()? == 0)),
            Tok::Op("~") => Some(!self.unary()?),
            Tok::Op(_) => None,
        }
    }
}

fn apply(op: &str, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        "**" => a.wrapping_pow(u32::try_from(b).ok()?),
        "<<" => a.wrapping_shl(u32::try_from(b & 63).ok()?),
        ">>" => a.wrapping_shr(u32::try_from(b & 63).ok()?),
        "<" => i64::from(a < b),
        ">" => i64::from(a > b),
        "<=" => i64::from(a <= b),
        ">=" => i64::from(a >= b),
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        "&&" => i64::from(a != 0 && b != 0),
        "||" => i64::from(a != 0 || b != 0),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_on_constants() {
        let none = |_: &str| None;
        let e = |s: &str| evaluate(s, &none);
        assert_eq!(e("1+2*3"), Some(7));
        assert_eq!(e("(1+2)*3"), Some(9));
        assert_eq!(e("2**3**2"), Some(512));
        assert_eq!(e("0x10 + 010"), Some(24));
        assert_eq!(e("7/2"), Some(3));
        assert_eq!(e("-7%3"), Some(-1));
        assert_eq!(e("1 ? 4 : 5"), Some(4));
        assert_eq!(e("1/0"), None);
        assert_eq!(e("x"), None);
        assert_eq!(e("x=1"), None);
        assert_eq!(e("x++"), None);
        let known = |n: &str| (n == "a").then(|| "5".to_string());
        assert_eq!(evaluate("a*2", &known), Some(10));
    }
}
