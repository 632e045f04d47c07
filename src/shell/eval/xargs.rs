//! What `xargs` runs when its input is known (the static evaluator's `xargs` category): its options read by
//! the program table's grammar, its input split into items as GNU xargs splits it
//! (blanks and newlines with quotes and backslashes honoured by default; `-0`, `-d`;
//! one line per item with `-I`), grouped into commands (`-n`, `-L`, `-I`), and the end
//! of file string (`-E`). Checked against GNU findutils 4.9 on this machine.
//!
//! Anything it cannot settle (an option it does not follow, an unmatched quote, items
//! read from a file) is `None`: the call stays as the plain reading has it.

use crate::programs::options::parse;

/// Most commands one call is evaluated into; more is left unread.
const MAX_COMMANDS: usize = 256;

/// The commands `xargs ARGS…` runs when its input is `input`, each as its words.
pub fn commands(args: &[String], input: &str) -> Option<Vec<Vec<String>>> {
    let mut words: Vec<&str> = vec!["xargs"];
    words.extend(args.iter().map(String::as_str));
    let grammar = crate::programs::lookup("xargs")?.grammar;
    let parsed = parse(&grammar, &words, 1);
    if !parsed.unknown.is_empty() || parsed.missing_value {
        return None;
    }
    let mut o = Options::default();
    for f in &parsed.found {
        let v = f.value.as_deref();
        match (f.opt.short, f.opt.long) {
            (Some('0'), _) => o.delimiter = Some('\0'),
            (Some('d'), _) => o.delimiter = Some(delimiter(v?)?),
            (Some('E'), _) | (Some('e'), _) | (_, Some("eof")) => {
                o.eof = v.filter(|s| !s.is_empty()).map(str::to_string);
            }
            (Some('I'), _) => o.replace = Some(v?.to_string()),
            (Some('i'), _) | (_, Some("replace")) => {
                o.replace = Some(v.unwrap_or("{}").to_string())
            }
            (Some('L'), _) => o.set_group(Group::Lines(count(v?)?))?,
            (Some('l'), _) | (_, Some("max-lines")) => {
                o.set_group(Group::Lines(v.map_or(Some(1), count)?))?;
            }
            (Some('n'), _) => o.set_group(Group::Args(count(v?)?))?,
            (Some('r'), _) => o.no_run_if_empty = true,
            // Where the commands are shown or how many run at once does not change them.
            (Some('t' | 'x' | 'p' | 'P' | 'o'), _) | (_, Some("process-slot-var")) => {}
            // Items from a file, a length limit that splits commands, `--help`…
            _ => return None,
        }
    }
    // The end of file string does not apply to `-0`/`-d` input; `-I` with `-n`/`-L`
    // is whichever came last, with a warning: both are left unread.
    if (o.delimiter.is_some() && o.eof.is_some()) || (o.replace.is_some() && o.group != Group::All)
    {
        return None;
    }
    let command: Vec<String> = match words.get(parsed.end..) {
        Some(rest) if !rest.is_empty() => rest.iter().map(|w| (*w).to_string()).collect(),
        _ => vec!["echo".to_string()],
    };
    let lines = items(input, &o)?;
    let out: Vec<Vec<String>> = match (&o.replace, o.group) {
        (Some(r), _) => lines
            .iter()
            .flatten()
            .map(|item| {
                command
                    .iter()
                    .map(|w| w.replace(r.as_str(), item))
                    .collect()
            })
            .collect(),
        (None, _) if lines.is_empty() => {
            if o.no_run_if_empty {
                Vec::new()
            } else {
                vec![command.clone()]
            }
        }
        (None, Group::All) => vec![with(&command, lines.iter().flatten())],
        (None, Group::Args(n)) => lines
            .iter()
            .flatten()
            .collect::<Vec<_>>()
            .chunks(n)
            .map(|c| with(&command, c.iter().copied()))
            .collect(),
        (None, Group::Lines(n)) => lines
            .chunks(n)
            .map(|c| with(&command, c.iter().flatten()))
            .collect(),
    };
    (out.len() <= MAX_COMMANDS).then_some(out)
}

fn with<'a>(command: &[String], items: impl Iterator<Item = &'a String>) -> Vec<String> {
    command.iter().cloned().chain(items.cloned()).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Group {
    #[default]
    All,
    Args(usize),
    Lines(usize),
}

#[derive(Debug, Default)]
struct Options {
    delimiter: Option<char>,
    eof: Option<String>,
    replace: Option<String>,
    group: Group,
    no_run_if_empty: bool,
}

impl Options {
    /// `-n` and `-L` override each other in GNU xargs, with a warning: both is unread.
    fn set_group(&mut self, g: Group) -> Option<()> {
        if self.group != Group::All
            && std::mem::discriminant(&self.group) != std::mem::discriminant(&g)
        {
            return None;
        }
        self.group = g;
        Some(())
    }
}

fn count(v: &str) -> Option<usize> {
    v.parse::<usize>().ok().filter(|n| *n > 0)
}

/// `-d`'s character: one character, or `\n`, `\t`, `\0`, `\\`.
fn delimiter(v: &str) -> Option<char> {
    let mut chars = v.chars();
    let c = chars.next()?;
    let d = if c == '\\' {
        match chars.next()? {
            'n' => '\n',
            't' => '\t',
            '0' => '\0',
            '\\' => '\\',
            _ => return None,
        }
    } else {
        c
    };
    chars.next().is_none().then_some(d)
}

/// The items of the input, per logical line (for `-L`; with `-I` a line is one item).
fn items(input: &str, o: &Options) -> Option<Vec<Vec<String>>> {
    if let Some(d) = o.delimiter {
        if input.is_empty() {
            return Some(Vec::new());
        }
        // A delimiter that ends the input ends the last item; it starts no new one.
        let body = input.strip_suffix(d).unwrap_or(input);
        return Some(body.split(d).map(|s| vec![s.to_string()]).collect());
    }
    let mut r = Reader {
        eof: o.eof.as_deref(),
        ..Reader::default()
    };
    let replace = o.replace.is_some();
    let mut chars = input.chars();
    // Whether the line so far ends with a blank (then it goes on: `-L`'s rule).
    let mut trailing_blank = false;
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                if r.end_item() {
                    return Some(r.finish());
                }
                // A line ending in a blank goes on (`-L`), except for `-I`.
                if !trailing_blank || replace {
                    r.end_line();
                }
                trailing_blank = false;
            }
            // With `-I` blanks do not split; leading ones are dropped.
            ' ' | '\t' if replace => {
                if r.in_item {
                    r.item.push(c);
                }
            }
            ' ' | '\t' => {
                if r.end_item() {
                    return Some(r.finish());
                }
                trailing_blank = true;
            }
            '\'' | '"' => {
                r.in_item = true;
                trailing_blank = false;
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        // A quote cannot span lines: xargs stops with an error.
                        Some('\n') | None => return None,
                        Some(x) => r.item.push(x),
                    }
                }
            }
            c => {
                r.in_item = true;
                trailing_blank = false;
                let c = if c == '\\' { chars.next()? } else { c };
                r.item.push(c);
            }
        }
    }
    r.end_item();
    Some(r.finish())
}

/// The items read so far, by logical line.
#[derive(Default)]
struct Reader<'o> {
    eof: Option<&'o str>,
    lines: Vec<Vec<String>>,
    line: Vec<String>,
    item: String,
    in_item: bool,
}

impl Reader<'_> {
    /// Ends the item being read; true when it is the end of file string (the rest of
    /// the input is ignored).
    fn end_item(&mut self) -> bool {
        if !self.in_item {
            return false;
        }
        self.in_item = false;
        let item = std::mem::take(&mut self.item);
        if self.eof == Some(item.as_str()) {
            return true;
        }
        self.line.push(item);
        false
    }

    fn end_line(&mut self) {
        if !self.line.is_empty() {
            self.lines.push(std::mem::take(&mut self.line));
        }
    }

    fn finish(mut self) -> Vec<Vec<String>> {
        self.end_line();
        self.lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &str, input: &str) -> Option<Vec<String>> {
        let args: Vec<String> = args.split_whitespace().map(String::from).collect();
        commands(&args, input).map(|cs| cs.iter().map(|c| c.join(" ")).collect())
    }

    /// Each case was run through GNU xargs 4.9 with `printf '[%s]'` as the command.
    #[test]
    fn splits_and_groups_as_gnu_xargs_does() {
        assert_eq!(
            run("rm -rf", "a b\n\"c d\" e\\ f\n").unwrap(),
            vec!["rm -rf a b c d e f"]
        );
        assert_eq!(run("-n1 rm", "a\nb\n").unwrap(), vec!["rm a", "rm b"]);
        assert_eq!(
            run("-I{} rm x{}y {}", "  a b  \n c\n").unwrap(),
            vec!["rm xa b  y a b  ", "rm xcy c"]
        );
        assert_eq!(run("-i rm {}", "/\n").unwrap(), vec!["rm /"]);
        assert_eq!(run("-d , rm", "a,b,").unwrap(), vec!["rm a b"]);
        assert_eq!(run("-0 rm", "a b\0c\0").unwrap(), vec!["rm a b c"]);
        assert_eq!(run("-E STOP rm", "a STOP b\n").unwrap(), vec!["rm a"]);
        assert_eq!(
            run("-L 1 rm", "a b\nc \nd\ne\n").unwrap(),
            vec!["rm a b", "rm c d", "rm e"]
        );
        assert_eq!(run("rm", "").unwrap(), vec!["rm"]);
        assert!(run("-r rm", "").unwrap().is_empty());
        assert!(run("-I{} rm {}", "\n").unwrap().is_empty());
        assert_eq!(run("", "x\n").unwrap(), vec!["echo x"]);
        // Unsettled: an unmatched quote, items from a file, an option it does not know.
        assert!(run("rm", "it's\n").is_none());
        assert!(run("-a f rm", "x").is_none());
        assert!(run("-s 10 rm", "x").is_none());
        assert!(run("--nope rm", "x").is_none());
    }
}
