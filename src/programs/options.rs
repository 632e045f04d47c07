//! The one option parser over unquoted words, driven by a program's declared grammar:
//! clusters (`-abc`), attached values (`-ovalue`, `--opt=value`), separate values,
//! `--`, shells' `+o`-style options, and long-option abbreviations resolved by the
//! program's own rule (none, GNU `getopt_long`'s unique prefix, git's unique prefix with
//! `--no-` forms).
//!
//! It never guesses: an option the grammar does not know is reported in
//! `Parsed::unknown`, and the caller decides what that means (for a wrapper or a shell:
//! opaque). Knows nothing of requests or bash syntax.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A flag.
    No,
    /// A value, attached (`-ofile`, `--out=file`) or the next word.
    Required,
    /// A value only when attached (`-t[file]`, `--mount[=file]`).
    Optional,
    /// Two separate values (`bwrap --bind SRC DEST`).
    Two,
}

/// What an option does beyond changing output: the reason it matters to the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    Nothing,
    /// Its value becomes the working directory of what runs.
    Chdir,
    /// Its value is a file that is read.
    Reads,
    /// Its value is a file that is read and that names further files the program reads
    /// (`wc --files0-from F`, `tar -T F`): those are known only when it runs.
    ReadsList,
    /// Its value is a file that is written.
    Writes,
    /// It makes the program run another program: one the value names and the program
    /// runs directly, without a shell (`sort --compress-program`, `tar --rsh-command`),
    /// a configured one, or its own command language; the text says how.
    Runs(&'static str),
    /// It makes the program run its value as a command (`tar -I`, `zip -TT`): the value
    /// is read as code the way `sh -c`'s string is (floor included), and the option is
    /// a request of its own, like `Runs`. What kind of command text it is, and the why.
    RunsCode(Value, &'static str),
    /// Its value is shell code run by `sh -c`.
    Code,
    /// Its value is a file whose commands run (`bash --rcfile F`): read and run.
    RunsFile(&'static str),
    /// With it the program runs no inner command (`taskset -p`, `command -v`).
    Ends,
}

/// What the value of a `Does::RunsCode` option is, as the program reads it (checked
/// against the real programs on this machine with harmless markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Shell code the program hands to `/bin/sh -c` (`tar -I`, `--to-command`, `zip
    /// -TT`, git's `--upload-pack`).
    Shell,
    /// Shell code after a fixed prefix; a value without the prefix is data
    /// (`tar --checkpoint-action=exec=CMD`, while `=dot` runs nothing).
    ShellAfter(&'static str),
    /// A command line the program splits into words itself, quotes honoured but no
    /// shell operators (`rsync -e`, man-db's `man -P`). It is read as shell code: bash's
    /// reading finds the same first command and words, and can only add commands.
    Words,
}

impl Value {
    /// The byte in `value` where the command starts, or `None` when the value is no
    /// command (a `ShellAfter` value without its prefix) or is a bare program name
    /// (`tar -I gzip`): `sh -c gzip` runs the program `gzip` and nothing else, which the
    /// option's own request already names.
    pub fn code_start(self, value: &str) -> Option<usize> {
        let start = match self {
            Value::Shell | Value::Words => 0,
            Value::ShellAfter(prefix) => value.strip_prefix(prefix).map(|_| prefix.len())?,
        };
        let code = value.get(start..)?;
        (!is_program_word(code)).then_some(start)
    }
}

/// Whether a text is one bare program name or path with no shell syntax: run by a
/// shell it runs that program with no arguments.
pub fn is_program_word(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '+' | '-' | ',' | '@')
        })
}

/// One option of a program: its short letter and/or long name (without dashes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub arg: Arg,
    pub does: Does,
}

/// A short-only option.
pub const fn s(c: char, arg: Arg, does: Does) -> Opt {
    Opt {
        short: Some(c),
        long: None,
        arg,
        does,
    }
}

/// A long-only option.
pub const fn l(name: &'static str, arg: Arg, does: Does) -> Opt {
    Opt {
        short: None,
        long: Some(name),
        arg,
        does,
    }
}

/// An option with both a short and a long spelling.
pub const fn sl(c: char, name: &'static str, arg: Arg, does: Does) -> Opt {
    Opt {
        short: Some(c),
        long: Some(name),
        arg,
        does,
    }
}

/// How a program accepts abbreviated long options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abbrev {
    /// Only full names (bash, git's global options, `diff`-family options).
    None,
    /// GNU `getopt_long`: an exact name wins, else a unique prefix (`rm --rec --for`).
    Unique,
    /// git's parse-options: as `Unique`, and `--no-NAME` negates any option.
    Git,
}

/// A program's option grammar.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    pub opts: &'static [Opt],
    pub abbrev: Abbrev,
    /// Options end at the first operand (wrappers: `getopt_long` with `+`, so the
    /// inner command's own options are not theirs). Otherwise options and operands mix.
    pub stop_at_operand: bool,
    /// Every option the program accepts is listed. When false (GNU tar, rsync), an
    /// unknown long word that is a prefix of listed options is taken as each of them:
    /// the real program either reads it so or rejects it, so assuming the effect is
    /// never wrong in the unsafe direction.
    pub complete: bool,
    /// `+x`/`+o name` are options too (shells).
    pub plus: bool,
    /// `-5` is a value of its own (`nice -5`, `head -20`).
    pub numeric: bool,
    /// Value letters in a cluster take the next words in turn (`bash -oc posix CODE`,
    /// as bash reads it; `tree -Lo 1 FILE`, as tree reads it), not the rest of the
    /// cluster.
    pub cluster_values_next: bool,
    /// With `cluster_values_next`: this letter takes the rest of its cluster when that
    /// rest is digits (`tree -L2`, tree 2.2 and later). A rest that starts with a digit
    /// but is not all digits is read differently by tree's versions: unknown.
    pub digits_attach: Option<char>,
    /// Options and operands mix (GNU `getopt_long`, clap, argparse). When false (bash
    /// builtins, `getopts` scripts), the first operand ends the options and every word
    /// after it is an operand (`type pwd -a` looks up a command named `-a`).
    pub permute: bool,
    /// A short option's attached value may start with `=`, which is dropped (clap's and
    /// Go pflag's `-f=FILE` is `-f FILE`; getopt's is the value `=FILE`).
    pub short_eq: bool,
}

impl Grammar {
    pub const fn new(opts: &'static [Opt], abbrev: Abbrev) -> Self {
        Grammar {
            opts,
            abbrev,
            stop_at_operand: false,
            complete: true,
            plus: false,
            numeric: false,
            cluster_values_next: false,
            digits_attach: None,
            permute: true,
            short_eq: false,
        }
    }

    pub const fn wrapper(opts: &'static [Opt], abbrev: Abbrev) -> Self {
        Grammar {
            opts,
            abbrev,
            stop_at_operand: true,
            complete: true,
            plus: false,
            numeric: false,
            cluster_values_next: false,
            digits_attach: None,
            permute: true,
            short_eq: false,
        }
    }

    pub const fn partial(mut self) -> Self {
        self.complete = false;
        self
    }

    /// Shells: `+x`/`+o NAME` are options, and value letters in a cluster take the next
    /// words in turn.
    pub const fn plus(mut self) -> Self {
        self.plus = true;
        self.cluster_values_next = true;
        self
    }

    pub const fn numeric(mut self) -> Self {
        self.numeric = true;
        self
    }

    /// tree's own parser: every value letter of a cluster takes the next word in turn
    /// (`-Lo 1 FILE` is `-L 1 -o FILE`), `-L` also an attached number; long options are
    /// exact, with `=VALUE` or the next word.
    pub const fn tree(mut self) -> Self {
        self.cluster_values_next = true;
        self.digits_attach = Some('L');
        self
    }

    /// Options end at the first operand; no word after it is an option.
    pub const fn no_permute(mut self) -> Self {
        self.permute = false;
        self
    }

    /// clap and Go pflag: `-f=FILE` is `-f FILE`.
    pub const fn short_eq(mut self) -> Self {
        self.short_eq = true;
        self
    }

    /// The options (one or, for a partial grammar's prefix, several) a long name means.
    fn resolve_long(&self, name: &str) -> Resolved {
        if let Some(o) = self.opts.iter().find(|o| o.long == Some(name)) {
            return Resolved::One(o);
        }
        if self.abbrev == Abbrev::Git
            && let Some(rest) = name.strip_prefix("no-")
            && !rest.is_empty()
        {
            return match self.resolve_long(rest) {
                Resolved::One(_) | Resolved::Several(_) => Resolved::Negated,
                other => other,
            };
        }
        let prefixed: Vec<&'static Opt> = self
            .opts
            .iter()
            .filter(|o| o.long.is_some_and(|n| n.starts_with(name)))
            .collect();
        if prefixed.is_empty() || name.is_empty() {
            return Resolved::Unknown;
        }
        if self.abbrev == Abbrev::None {
            // The program would reject the word; a partial table cannot know, so the
            // word is taken as every option it could have meant.
            return if self.complete {
                Resolved::Unknown
            } else {
                Resolved::Several(prefixed)
            };
        }
        match prefixed.as_slice() {
            [one] => Resolved::One(one),
            _ if self.complete => Resolved::Ambiguous,
            _ => Resolved::Several(prefixed),
        }
    }
}

enum Resolved {
    One(&'static Opt),
    Several(Vec<&'static Opt>),
    /// `--no-NAME` (git): turns an option off.
    Negated,
    Ambiguous,
    Unknown,
}

/// One option found in the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub opt: &'static Opt,
    /// Its value (the first, for `Arg::Two`), when it has one.
    pub value: Option<String>,
    /// The word that held the option.
    pub at: usize,
    /// Where the value is: word index and byte offset inside that word.
    pub value_at: Option<(usize, usize)>,
}

/// The result of parsing a program's words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub found: Vec<Found>,
    /// Indices of the operands read (all of them, or up to `end` for wrappers).
    pub operands: Vec<usize>,
    /// For `stop_at_operand` grammars: the index of the first operand (the inner
    /// command), or `words.len()`.
    pub end: usize,
    /// Option words the grammar does not know or finds ambiguous, as written.
    pub unknown: Vec<String>,
    /// A value-taking option was the last word, without its value.
    pub missing_value: bool,
}

impl Parsed {
    /// Whether an option with this long name (or short letter) was given.
    pub fn has(&self, long: &str) -> bool {
        self.found.iter().any(|f| f.opt.long == Some(long))
    }

    pub fn has_short(&self, c: char) -> bool {
        self.found.iter().any(|f| f.opt.short == Some(c))
    }

    /// The values given to options with this long name, in order.
    pub fn values(&self, long: &str) -> Vec<&str> {
        self.found
            .iter()
            .filter(|f| f.opt.long == Some(long))
            .filter_map(|f| f.value.as_deref())
            .collect()
    }
}

/// A value attached to its option (`--file=~/x`, `-f~/x`): bash expands a `~` only at
/// the start of a word (or after the `=` of an assignment), so here it is text, a name
/// below the cwd, which `./` makes the paths code read as such (not as the home) for
/// an option whose value is a place.
fn attached_value(opt: &Opt, v: &str) -> String {
    let place = matches!(
        opt.does,
        Does::Reads | Does::ReadsList | Does::Writes | Does::Chdir
    );
    if place && v.starts_with('~') {
        format!("./{v}")
    } else {
        v.to_string()
    }
}

/// Parses `words` from index `start` (the program name is before it) by `g`.
pub fn parse(g: &Grammar, words: &[&str], start: usize) -> Parsed {
    let mut p = Parsed {
        end: words.len(),
        ..Parsed::default()
    };
    let mut i = start;
    let mut only_operands = false;
    while let Some(&w) = words.get(i) {
        if only_operands {
            p.operands.push(i);
            i += 1;
            continue;
        }
        if w == "--" {
            if g.stop_at_operand {
                p.end = i + 1;
                return p;
            }
            only_operands = true;
            i += 1;
            continue;
        }
        let dash = w.starts_with('-') && w.len() > 1;
        let plus = g.plus && w.starts_with('+') && w.len() > 1;
        if g.numeric && dash && is_number_option(w) {
            i += 1;
            continue;
        }
        if !(dash || plus) {
            if g.stop_at_operand {
                p.end = i;
                return p;
            }
            p.operands.push(i);
            only_operands = !g.permute;
            i += 1;
            continue;
        }
        i = if let Some(long) = w.strip_prefix("--") {
            parse_long(g, words, i, long, &mut p)
        } else {
            parse_short(g, words, i, &mut p)
        };
    }
    p
}

fn is_number_option(w: &str) -> bool {
    let digits = w.trim_start_matches(['-', '+']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

fn parse_long(g: &Grammar, words: &[&str], i: usize, long: &str, p: &mut Parsed) -> usize {
    let (name, attached) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let opts = match g.resolve_long(name) {
        Resolved::One(o) => vec![o],
        Resolved::Several(v) => v,
        Resolved::Negated => return i + 1,
        Resolved::Ambiguous | Resolved::Unknown => {
            p.unknown
                .push(words.get(i).copied().unwrap_or_default().to_string());
            return i + 1;
        }
    };
    let mut next = i + 1;
    for opt in opts {
        let (value, value_at, used) = match (opt.arg, attached) {
            (Arg::No, Some(_)) => {
                // `--flag=x`: getopt_long rejects it; nothing we can read.
                p.unknown
                    .push(words.get(i).copied().unwrap_or_default().to_string());
                return i + 1;
            }
            (Arg::No, None) | (Arg::Optional, None) => (None, None, 0),
            (_, Some(v)) => (Some(attached_value(opt, v)), Some((i, name.len() + 3)), 0),
            (Arg::Required, None) => match words.get(i + 1) {
                Some(v) => (Some((*v).to_string()), Some((i + 1, 0)), 1),
                None => {
                    p.missing_value = true;
                    (None, None, 0)
                }
            },
            (Arg::Two, None) => match words.get(i + 1) {
                Some(v) => (Some((*v).to_string()), Some((i + 1, 0)), 2),
                None => {
                    p.missing_value = true;
                    (None, None, 0)
                }
            },
        };
        next = next.max(i + 1 + used);
        p.found.push(Found {
            opt,
            value,
            at: i,
            value_at,
        });
    }
    next
}

fn parse_short(g: &Grammar, words: &[&str], i: usize, p: &mut Parsed) -> usize {
    let w = words.get(i).copied().unwrap_or_default();
    if g.cluster_values_next {
        return parse_short_next(g, words, i, p);
    }
    for (pos, c) in w.char_indices().skip(1) {
        let Some(opt) = g.opts.iter().find(|o| o.short == Some(c)) else {
            p.unknown.push(w.to_string());
            return i + 1;
        };
        let rest_at = pos + c.len_utf8();
        let rest = w.get(rest_at..).unwrap_or_default();
        match opt.arg {
            Arg::No => p.found.push(Found {
                opt,
                value: None,
                at: i,
                value_at: None,
            }),
            Arg::Optional => {
                let value = (!rest.is_empty()).then(|| attached_value(opt, rest));
                p.found.push(Found {
                    opt,
                    value_at: value.as_ref().map(|_| (i, rest_at)),
                    value,
                    at: i,
                });
                return i + 1;
            }
            Arg::Required | Arg::Two => {
                let extra = usize::from(opt.arg == Arg::Two);
                if !rest.is_empty() {
                    let (rest, rest_at) = match rest.strip_prefix('=') {
                        Some(r) if g.short_eq => (r, rest_at + 1),
                        _ => (rest, rest_at),
                    };
                    p.found.push(Found {
                        opt,
                        value: Some(attached_value(opt, rest)),
                        at: i,
                        value_at: Some((i, rest_at)),
                    });
                    return i + 1 + extra;
                }
                match words.get(i + 1) {
                    Some(v) => {
                        p.found.push(Found {
                            opt,
                            value: Some((*v).to_string()),
                            at: i,
                            value_at: Some((i + 1, 0)),
                        });
                        return i + 2 + extra;
                    }
                    None => {
                        p.missing_value = true;
                        p.found.push(Found {
                            opt,
                            value: None,
                            at: i,
                            value_at: None,
                        });
                        return i + 1;
                    }
                }
            }
        }
    }
    i + 1
}

/// A cluster whose value letters take the following words in turn.
fn parse_short_next(g: &Grammar, words: &[&str], i: usize, p: &mut Parsed) -> usize {
    let w = words.get(i).copied().unwrap_or_default();
    let mut next = i + 1;
    for (pos, c) in w.char_indices().skip(1) {
        let Some(opt) = g.opts.iter().find(|o| o.short == Some(c)) else {
            p.unknown.push(w.to_string());
            return next;
        };
        let rest_at = pos + c.len_utf8();
        let rest = w.get(rest_at..).unwrap_or_default();
        if g.digits_attach == Some(c) && rest.starts_with(|d: char| d.is_ascii_digit()) {
            if !rest.chars().all(|d| d.is_ascii_digit()) {
                p.unknown.push(w.to_string());
                return next;
            }
            p.found.push(Found {
                opt,
                value: Some(rest.to_string()),
                at: i,
                value_at: Some((i, rest_at)),
            });
            return next;
        }
        let (value, value_at) = match opt.arg {
            Arg::No | Arg::Optional => (None, None),
            Arg::Required | Arg::Two => match words.get(next) {
                Some(v) => {
                    next += if opt.arg == Arg::Two { 2 } else { 1 };
                    (Some((*v).to_string()), Some((next - 1, 0)))
                }
                None => {
                    p.missing_value = true;
                    (None, None)
                }
            },
        };
        p.found.push(Found {
            opt,
            value,
            at: i,
            value_at,
        });
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    const RM: &[Opt] = &[
        sl('f', "force", Arg::No, Does::Nothing),
        sl('r', "recursive", Arg::No, Does::Nothing),
        s('R', Arg::No, Does::Nothing),
        l("remove-all", Arg::No, Does::Nothing),
        l("output", Arg::Required, Does::Writes),
        sl('o', "only", Arg::Required, Does::Nothing),
    ];

    fn w(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn unique_prefixes_resolve_and_ambiguous_ones_are_unknown() {
        let g = Grammar::new(RM, Abbrev::Unique);
        let p = parse(&g, &w("rm --rec --for x"), 1);
        assert!(p.has("recursive") && p.has("force"));
        assert!(p.unknown.is_empty());
        let p = parse(&g, &w("rm --re x"), 1);
        assert_eq!(p.unknown, vec!["--re"]);
        let p = parse(&g, &w("rm --nope x"), 1);
        assert_eq!(p.unknown, vec!["--nope"]);
        let none = Grammar::new(RM, Abbrev::None);
        assert_eq!(parse(&none, &w("rm --rec x"), 1).unknown, vec!["--rec"]);
    }

    #[test]
    fn clusters_and_values() {
        let g = Grammar::new(RM, Abbrev::Unique);
        let p = parse(&g, &w("rm -rfoVAL a --out=b -o c d"), 1);
        assert_eq!(p.values("only"), vec!["VAL", "c"]);
        assert_eq!(p.values("output"), vec!["b"]);
        assert_eq!(p.operands, vec![2, 6]);
    }

    #[test]
    fn an_attached_tilde_is_a_name_below_the_cwd_for_a_place() {
        let g = Grammar::new(RM, Abbrev::Unique);
        // bash leaves `~` in `--out=~/x` as it is: the program opens `./~/x`.
        let p = parse(&g, &w("rm --out=~/x -o~/y"), 1);
        assert_eq!(p.values("output"), vec!["./~/x"]);
        assert_eq!(p.values("only"), vec!["~/y"]);
        // A separate word is bash's to expand, and the paths code reads it as the home.
        let p = parse(&g, &w("rm --out ~/x"), 1);
        assert_eq!(p.values("output"), vec!["~/x"]);
    }

    #[test]
    fn partial_grammars_take_a_prefix_as_every_option_it_may_mean() {
        let g = Grammar::new(RM, Abbrev::Unique).partial();
        let p = parse(&g, &w("x --r"), 1);
        assert!(p.has("recursive") && p.has("remove-all"));
    }

    #[test]
    fn git_negations() {
        let g = Grammar::new(RM, Abbrev::Git);
        let p = parse(&g, &w("x --no-rec y"), 1);
        assert!(p.found.is_empty() && p.unknown.is_empty());
    }

    #[test]
    fn tree_clusters_take_the_next_words_in_turn() {
        const TREE: &[Opt] = &[
            s('L', Arg::Required, Does::Nothing),
            s('o', Arg::Required, Does::Writes),
            s('a', Arg::No, Does::Nothing),
        ];
        let g = Grammar::new(TREE, Abbrev::None).tree();
        let p = parse(&g, &w("tree -Lo 1 out dir"), 1);
        assert_eq!(p.found.len(), 2);
        assert_eq!(p.found.get(1).and_then(|f| f.value.as_deref()), Some("out"));
        assert_eq!(p.operands, vec![4]);
        let p = parse(&g, &w("tree -aL2 dir"), 1);
        assert_eq!(p.found.get(1).and_then(|f| f.value.as_deref()), Some("2"));
        assert_eq!(p.operands, vec![2]);
        assert_eq!(parse(&g, &w("tree -L2a dir"), 1).unknown, vec!["-L2a"]);
    }

    #[test]
    fn builtins_read_no_option_after_an_operand() {
        let g = Grammar::new(RM, Abbrev::None).no_permute();
        let p = parse(&g, &w("type pwd -f x"), 1);
        assert!(p.found.is_empty());
        assert_eq!(p.operands, vec![1, 2, 3]);
    }

    #[test]
    fn clap_drops_the_equals_of_a_short_value() {
        let g = Grammar::new(RM, Abbrev::None).short_eq();
        assert_eq!(parse(&g, &w("rg -o=x"), 1).values("only"), vec!["x"]);
        let getopt = Grammar::new(RM, Abbrev::None);
        assert_eq!(
            parse(&getopt, &w("grep -o=x"), 1).values("only"),
            vec!["=x"]
        );
    }

    #[test]
    fn wrappers_stop_at_the_first_operand() {
        let g = Grammar::wrapper(RM, Abbrev::Unique);
        let p = parse(&g, &w("w -f cmd -r"), 1);
        assert_eq!(p.end, 2);
    }
}
