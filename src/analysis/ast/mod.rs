//! The AST engine (the default): tree-sitter-bash parses, `walk` turns the tree into a
//! plan of simple commands, `effects` turns the plan into capability requests; this
//! file assembles the `Analysis` (class, always patterns, risk notes, hardline).
//!
//! Owns the parser (one per thread, reused), the budgets (bytes, parse time, nodes,
//! depth, nested code strings), and the fail-closed fallback: a tree with ERROR or
//! MISSING nodes, an exhausted budget, an unknown node kind or any analyzer error hands
//! the command to the V1 lexer, marked obfuscated with no always patterns. Lenient
//! parsing may find danger but is never used to prove a command safe.

mod effects;
mod evaluate;
pub mod kinds;
mod operators;
mod plain;
mod split;
mod syntax;
mod walk;

use std::cell::{Cell, RefCell};
use std::thread::LocalKey;
use std::time::{Duration, Instant};

use kinds::KindName;
use syntax::{Node, Syntax};
use tree_sitter::{ParseOptions, ParseState, Parser, Tree};

use crate::floor;
// How the floor reads code it meets in this engine's commands: through the lexer's
// lowering. The code loop in `analyze_ast` parses every code string with tree-sitter
// anyway and puts that plan through the floor too, so a second tree-sitter parse (and
// evaluation) inside the floor would only repeat it on every call that runs `sh -c`.
use crate::analysis::lexer::Reader;
use crate::model::vocab::{
    Analysis, AnalysisContext, Capability, CapabilityRequest, CommandClass, EngineKind, Fallback,
    FallbackReason,
};
use effects::Effects;
pub use operators::operator_spans;
use walk::{Cwd, Limits, Opacity, Plan};

/// Larger commands go to the lexer (which is linear) instead of the parser.
pub const MAX_BYTES: usize = 128 * 1024;
/// Wall-clock budget of one parse; enforced through tree-sitter's progress callback.
pub const PARSE_BUDGET: Duration = Duration::from_millis(100);
/// Nesting depth the walker follows before giving up.
pub const MAX_DEPTH: usize = 256;
/// Nodes the walker visits before giving up.
pub const MAX_NODES: usize = 200_000;
/// How deep `sh -c "sh -c '…'"` strings are parsed again.
pub const MAX_CODE_DEPTH: usize = 4;

/// The order in which the compound note names operators and constructs (others follow
/// in the order the walk found them).
const COMPOUND_ORDER: &[&str] = &[
    "&&",
    "||",
    "|",
    "|&",
    "&",
    "heredoc pipeline",
    "( )",
    "{ }",
    "if",
    "while",
    "for",
    "case",
    "function",
];

/// Why the AST engine could not produce an analysis of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AstError {
    #[error("syntax error: {0}")]
    Parse(String),
    #[error("parse took longer than {} ms", PARSE_BUDGET.as_millis())]
    Timeout,
    #[error("nesting deeper than {MAX_DEPTH} levels (reached {0})")]
    DepthLimit(usize),
    #[error("more than {MAX_NODES} syntax nodes (reached {0})")]
    TooManyNodes(usize),
    #[error("command of {0} bytes is larger than the parser's budget of {MAX_BYTES} bytes")]
    TooLarge(usize),
    #[error("unknown syntax node `{0}`")]
    UnknownNode(String),
    #[error("{0}")]
    Analyzer(String),
}

impl AstError {
    pub fn reason(&self) -> FallbackReason {
        match self {
            AstError::Parse(_) => FallbackReason::ParseError,
            AstError::Timeout => FallbackReason::ParseTimeout,
            AstError::DepthLimit(_) => FallbackReason::DepthLimit,
            AstError::TooManyNodes(_) | AstError::TooLarge(_) => FallbackReason::TooLarge,
            AstError::UnknownNode(_) => FallbackReason::UnknownNode,
            AstError::Analyzer(_) => FallbackReason::AnalyzerError,
        }
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    /// Whether `plan` may parse proven parts alone (see `split`); on by default.
    static SPLIT: Cell<bool> = const { Cell::new(true) };
    /// Whether a plain command's tree is built without the parser; on by default.
    static PLAIN: Cell<bool> = const { Cell::new(true) };
    /// Whether `plan` runs the static evaluator; on by default.
    static EVALUATE: Cell<bool> = const { Cell::new(true) };
}

/// Runs `f` with the split-before-parse off on this thread: every text is parsed
/// whole. For the differential test and benchmarks that hold the split analysis to the
/// whole-text one; the engine itself never turns it off.
pub fn with_whole_parse<R>(f: impl FnOnce() -> R) -> R {
    with_switch(&SPLIT, false, f)
}

/// Runs `f` with `switch` set to `on` on this thread, then sets it back.
fn with_switch<R>(switch: &'static LocalKey<Cell<bool>>, on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(&'static LocalKey<Cell<bool>>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|s| s.set(self.1));
        }
    }
    let _restore = Restore(switch, switch.with(|s| s.replace(on)));
    f()
}

/// Runs `f` with every text parsed by tree-sitter on this thread, plain commands
/// included. For the differential test and benchmarks that hold the trees built
/// without the parser to the parsed ones; the engine itself never turns it off.
pub fn with_parser_only<R>(f: impl FnOnce() -> R) -> R {
    with_switch(&PLAIN, false, f)
}

/// Runs `f` with the static evaluator off on this thread: commands are read as they
/// were before the evaluator existed (nothing computed, nothing fed on). For measuring what the
/// evaluator adds (`oracle::report`'s "opened" count); the engine itself never turns
/// it off.
pub fn without_evaluator<R>(f: impl FnOnce() -> R) -> R {
    with_switch(&EVALUATE, false, f)
}

/// Whether the scan proves the top-level separators of `command` (after line
/// continuations are removed), so that its parts are parsed alone.
pub fn splits(command: &str) -> bool {
    crate::shell::source::splice(command)
        .ok()
        .is_some_and(|s| split::split(&s).is_some())
}

/// Whether `command` (after line continuations are removed) is a plain command, whose
/// tree is built without the parser.
pub fn reads_plain(command: &str) -> bool {
    crate::shell::source::splice(command)
        .ok()
        .is_some_and(|s| plain::read(&s).is_some())
}

/// Parses `src` with this thread's parser under the time budget. Non-ASCII bytes are
/// parsed as `x` (see below); node ranges index the original text.
pub fn parse(src: &str) -> Result<Tree, AstError> {
    PARSER.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| AstError::Analyzer("parser re-entered".into()))?;
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|e| AstError::Analyzer(format!("cannot load the bash grammar: {e}")))?;
            *slot = Some(p);
        }
        let parser = slot
            .as_mut()
            .ok_or_else(|| AstError::Analyzer("no parser".into()))?;
        let deadline = Instant::now() + PARSE_BUDGET;
        let expired = Cell::new(false);
        let mut progress = |_: &ParseState| {
            let over = Instant::now() >= deadline;
            expired.set(over);
            over
        };
        // tree-sitter-bash 0.25.1's scanner hands non-ASCII code points to `isdigit`,
        // which reads out of bounds and can crash the process (upstream
        // tree-sitter-bash#337). Bash treats every non-ASCII byte as a word character,
        // so each one is parsed as the ASCII word character `x`: byte offsets stay
        // the same and the walker reads the original text through them.
        //
        // CR, form feed and vertical tab are word characters to bash (only space, tab
        // and newline separate words), but blanks to the grammar, which also reads
        // backslash-CR-LF as a line continuation: `ls \<CR><LF>id` would be one `ls`
        // where bash runs `id` too. They are parsed as `x` for the same reason.
        let folded: Vec<u8>;
        let bytes = if !src.bytes().any(|b| !b.is_ascii() || is_folded_control(b)) {
            src.as_bytes()
        } else {
            folded = src
                .bytes()
                .map(|b| {
                    if b.is_ascii() && !is_folded_control(b) {
                        b
                    } else {
                        b'x'
                    }
                })
                .collect();
            &folded
        };
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or(&[]),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        match tree {
            Some(t) => Ok(t),
            None => {
                parser.reset();
                Err(if expired.get() {
                    AstError::Timeout
                } else {
                    AstError::Analyzer("the parser returned no tree".into())
                })
            }
        }
    })
}

/// The tree of `src`: built directly for a plain command (one command of literal
/// words, see `plain`), parsed otherwise.
fn read_tree(src: &str) -> Result<Syntax, AstError> {
    if PLAIN.with(Cell::get)
        && let Some(syntax) = Syntax::plain(src)
    {
        return Ok(syntax);
    }
    Ok(Syntax::new(&parse(src)?))
}

/// Bytes bash reads as word characters that the grammar reads as blanks.
fn is_folded_control(b: u8) -> bool {
    matches!(b, b'\r' | 0x0b | 0x0c)
}

/// Whether every error in the tree is the grammar's reading of `<>`: tree-sitter-bash
/// 0.25.1 has no read-write redirect, so `exec 3<>/dev/tcp/h/80` parses as a `<`
/// redirect with an ERROR `>` right after the operator, inside the redirect. Bash reads
/// `N<>FILE` (open FILE read-write on N), which the walk takes as a write
/// (`walk::operator_of` sees `<>`); any other error still falls back.
fn only_read_write_redirects(root: Node<'_>) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            return false;
        }
        if node.is_error() {
            let after_lt = node.prev_sibling().is_some_and(|p| {
                !p.is_named() && p.kind_name() == "<" && p.end_byte() == node.start_byte()
            });
            let in_redirect = node
                .parent()
                .is_some_and(|p| p.kind_name() == kinds::FILE_REDIRECT);
            let just_gt = node.end_byte() == node.start_byte() + 1
                && node.child_count() == 1
                && node.child(0).is_some_and(|c| c.kind_name() == ">");
            if !(after_lt && in_redirect && just_gt) {
                return false;
            }
            continue;
        }
        if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    true
}

/// The first ERROR or MISSING node, as `kind at line:column`.
fn first_error(root: Node<'_>, src: &str) -> String {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            // Lines and columns as tree-sitter counts them: lines end at `\n`, columns
            // are bytes.
            let before = src.as_bytes().get(..node.start_byte()).unwrap_or_default();
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.len()
                - before
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1)
                + 1;
            let what = if node.is_missing() {
                format!("missing `{}`", node.kind_name())
            } else {
                "unexpected text".to_string()
            };
            return format!("{what} at {line}:{column}");
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return "error node".to_string();
            }
        }
    }
}

/// The offset of a backslash no node covers. The grammar reads `\<space>` and
/// `\<tab>` before a word as blanks (`l \<TAB>s` is the words `l`, `s`), where bash
/// reads an escaped blank that starts the word `<TAB>s` (the oracle found it): the
/// tree then does not say what bash runs.
fn skipped_backslash(root: Node<'_>, src: &str) -> Option<usize> {
    let bytes = src.as_bytes();
    // Only a backslash is ever reported: a command without one needs no walk.
    if !bytes.contains(&b'\\') {
        return None;
    }
    // Before and after the root too: a leading `\<TAB>` is outside every node.
    for (from, to) in [(0, root.start_byte()), (root.end_byte(), bytes.len())] {
        if let Some(i) = bytes
            .get(from..to)
            .and_then(|gap| gap.iter().position(|&b| b == b'\\'))
        {
            return Some(from + i);
        }
    }
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        if node.child_count() == 0 {
            continue;
        }
        // A here-document body's text between its expansions is data, not skipped.
        let body = node.kind_name() == kinds::HEREDOC_BODY;
        let mut at = node.start_byte();
        for child in node.children(&mut cursor) {
            if !body
                && let Some(gap) = bytes.get(at..child.start_byte())
                && let Some(i) = gap.iter().position(|&b| b == b'\\')
            {
                return Some(at + i);
            }
            at = at.max(child.end_byte());
            stack.push(child);
        }
        if !body
            && let Some(gap) = bytes.get(at..node.end_byte())
            && let Some(i) = gap.iter().position(|&b| b == b'\\')
        {
            return Some(at + i);
        }
    }
    None
}

/// Where the tree says something bash does not (the oracle found each): one check per
/// kind of node, each named for what bash reads there instead.
fn misread_construct(root: Node<'_>, src: &str) -> Option<String> {
    // Each node's children are listed once, for its check and then for the walk.
    let mut cursor = root.walk();
    let mut stack = vec![root];
    let mut kids: Vec<Node<'_>> = Vec::new();
    while let Some(node) = stack.pop() {
        kids.clear();
        if node.child_count() > 0 {
            kids.extend(node.children(&mut cursor));
        }
        let named = || kids.iter().copied().filter(|k| k.is_named());
        let why = match node.kind_name() {
            kinds::VARIABLE_ASSIGNMENT => bad_assignment_name(node, src),
            kinds::TEST_COMMAND => glob_read_as_test(node, src),
            kinds::COMMAND => command_words_misread(node, &kids, src),
            kinds::HEREDOC_REDIRECT => heredoc_delimiter_runs_on(named(), src),
            kinds::COMMAND_SUBSTITUTION => backticks_hold_a_backtick(node, src),
            kinds::HEREDOC_BODY => unparsed_body_expansion(node, src).map(|at| {
                format!("the expansion at byte {at} of a here-document body was not parsed")
            }),
            kinds::REDIRECTED_STATEMENT => statement_redirect_with_words(node, &kids, src),
            kinds::DECLARATION_COMMAND
            | kinds::UNSET_COMMAND
            | kinds::FOR_STATEMENT
            | kinds::ARRAY
            | kinds::FILE_REDIRECT
            | kinds::HERESTRING_REDIRECT => glued_words(named(), src),
            kinds::HEREDOC_END => heredoc_end_not_a_line(node, src),
            kinds::PIPELINE => list_in_pipeline(named()),
            _ => None,
        };
        if why.is_some() {
            return why;
        }
        stack.extend_from_slice(&kids);
    }
    None
}

/// An assignment whose name bash would not take as one (`PAG<CR>ER=id ls`, a name
/// holding a byte the grammar is fed as `x`): bash runs it as a command word.
fn bad_assignment_name(node: Node<'_>, src: &str) -> Option<String> {
    let name = node
        .child_by_field_name("name")
        .and_then(|n| src.get(n.byte_range()))
        .unwrap_or_default();
    let base = name.split('[').next().unwrap_or_default();
    let valid = base
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!valid).then(|| {
        format!(
            "`{}` is no variable name for bash (it runs it as a command)",
            name.escape_debug()
        )
    })
}

/// `[abc]` is one word for bash (a glob run as a command name); the grammar reads a
/// test `[ abc ]`, which needs a blank after `[`.
fn glob_read_as_test(node: Node<'_>, src: &str) -> Option<String> {
    let text = src.get(node.byte_range())?;
    let glob = text.starts_with('[')
        && !text.starts_with("[ ")
        && !text.starts_with("[[")
        && !text.starts_with("[\t");
    glob.then(|| format!("`{}` is one word for bash, not a test", text.escape_debug()))
}

/// The words of a command (`all`: its children) as bash reads them, where the grammar
/// split or joined them.
fn command_words_misread<'t>(node: Node<'t>, all: &[Node<'t>], src: &str) -> Option<String> {
    let bytes = src.as_bytes();
    // A lone `$` is a word for bash (`ls $ x` lists `$` and `x`); the grammar makes it
    // an anonymous token the walk does not read as one. Glued to what follows, it is
    // part of a word (`$"x"`, a translated string).
    let lone = all.iter().enumerate().find(|(i, c)| {
        !c.is_named()
            && c.kind_name() == "$"
            && all.get(i + 1).is_none_or(|n| n.start_byte() > c.end_byte())
    });
    if let Some((_, dollar)) = lone {
        return Some(format!(
            "the lone `$` at byte {} is a word for bash, which the grammar drops",
            dollar.start_byte()
        ));
    }
    if let Some(why) = skipped_between(all, bytes, || {
        // The redirects of the statement around the command come after its words (only
        // looked up for a skip: finding a node's parent walks down from the root).
        node.parent()
            .filter(|p| p.kind_name() == kinds::REDIRECTED_STATEMENT)
            .map(|p| {
                let mut c = p.walk();
                p.named_children(&mut c)
                    .filter(|r| r.start_byte() >= node.end_byte())
                    .collect()
            })
            .unwrap_or_default()
    }) {
        return Some(why);
    }
    let kids: Vec<Node<'_>> = all.iter().copied().filter(|c| c.is_named()).collect();
    // A newline between two words ends the command for bash; after a pipeline of three
    // stages the grammar's GLR can read it as a blank (`a | b | c<NL>rm x && d` as the
    // command `c rm x`), hiding a command.
    for pair in kids.windows(2) {
        if let [a, b] = pair
            && bytes
                .get(a.end_byte()..b.start_byte())
                .is_some_and(|gap| gap.contains(&b'\n'))
        {
            return Some(format!(
                "a newline at byte {} ends the command for bash, which the grammar read as a blank",
                a.end_byte()
            ));
        }
    }
    // Two arguments with nothing between them are one word for bash (`"./d/*"\)` is
    // `./d/*)`), which the grammar split; so are a here-string and the word after it
    // (`<<< 'cat x'\<CR>`).
    glued_words(kids.iter().copied(), src)
}

/// Two words of a list (a node's named children) with nothing between them are one
/// word for bash, which the grammar split where the second starts with a backslash:
/// `export a='x'\y` assigns `xy` (the grammar: `a=x` and a word `\y`), `cat <
/// '.en'\v` reads `.env` (the grammar: `.en`, then a second target read as an
/// argument), `for f in 'a'\b` loops once, `cat <<< 'a'\x` reads `ax`. A redirect
/// may follow directly (`a>b`, `<x>y`): it starts with its operator. Not a split
/// either: the grammar's ERROR for the `>` of `<>` (see `only_read_write_redirects`),
/// and `unset name[i]`, whose subscript the grammar hangs after the name.
fn glued_words<'t>(kids: impl IntoIterator<Item = Node<'t>>, src: &str) -> Option<String> {
    let mut before: Option<Node<'t>> = None;
    for kid in kids {
        if let Some(a) = before
            && a.end_byte() == kid.start_byte()
            && !a.is_error()
            && !kid.is_error()
            && !kid.kind_name().ends_with("redirect")
            && !(a.kind_name() == kinds::VARIABLE_NAME
                && src
                    .get(kid.byte_range())
                    .is_some_and(|t| t.starts_with('[')))
        {
            return Some(format!(
                "the words at byte {} are one word for bash",
                a.start_byte()
            ));
        }
        before = Some(kid);
    }
    None
}

/// Text between two children of a command or redirected statement that no node covers:
/// the grammar skipped it, so bash reads a word the walk never sees (`python3 - <<'E'
/// notes.txt` runs the here-document as the program with `notes.txt` its argument; the
/// tree has `python3 notes.txt`). Blanks and line continuations are no text. The one
/// skip read as bash reads it: a `-` (stdin) followed only by redirects, the last
/// word, given to a program that reads its standard input for it as it does without
/// it (`python3 - <<'E'`, which agents write all the time, is `python3 <<'E'`; `cd -`
/// and `su -` are not `cd` and `su`). `then` gives the nodes after these children that
/// still belong to the command (the redirects of its `redirected_statement`).
fn skipped_between<'t>(
    kids: &[Node<'t>],
    bytes: &[u8],
    then: impl FnOnce() -> Vec<Node<'t>>,
) -> Option<String> {
    let mut then = Some(then);
    kids.windows(2).enumerate().find_map(|(i, pair)| {
        let [a, b] = pair else { return None };
        let gap = bytes.get(a.end_byte()..b.start_byte())?;
        if gap.trim_ascii() == b"-" && reads_stdin_for_dash(kids, *a, bytes) {
            let after = then.take().map(|f| f()).unwrap_or_default();
            let only_redirects_after = kids
                .get(i + 1..)
                .unwrap_or_default()
                .iter()
                .chain(&after)
                .all(|k| redirect_without_words(*k));
            if only_redirects_after {
                return None;
            }
        }
        let mut at = 0;
        while let Some(&c) = gap.get(at) {
            match (c, gap.get(at + 1), gap.get(at + 2)) {
                (b'\\', Some(b'\n'), _) => at += 2,
                (b'\\', Some(b'\r'), Some(b'\n')) => at += 3,
                (c, _, _) if c.is_ascii_whitespace() => at += 1,
                _ => {
                    return Some(format!(
                        "the grammar skips `{}` at byte {}",
                        String::from_utf8_lossy(gap).trim(),
                        a.end_byte()
                    ));
                }
            }
        }
        None
    })
}

/// Programs that read their standard input for a lone `-` exactly as they do without
/// it: an interpreter or a shell its program, `cat` its input.
const DASH_READS_STDIN: &[&str] = &[
    "python", "python3", "node", "bash", "sh", "ruby", "perl", "cat",
];

/// Whether the program the `-` after `before` is given to is one of
/// `DASH_READS_STDIN`, by its literal name: the command's own (`kids` are a command's
/// children), or the body's of a redirected statement, the last stage of a pipeline
/// (`echo x | python3 - <<'E'`, where the grammar hangs the here-document on the
/// pipeline); or the word right before the `-` when the command is a runner or wrapper
/// that starts it (`uv run python - <<'E'`).
fn reads_stdin_for_dash(kids: &[Node<'_>], before: Node<'_>, bytes: &[u8]) -> bool {
    let listed = |n: Node<'_>| {
        bytes
            .get(n.byte_range())
            .map(|t| t.rsplit(|b| *b == b'/').next().unwrap_or(t))
            .is_some_and(|t| DASH_READS_STDIN.iter().any(|p| p.as_bytes() == t))
    };
    let own = kids
        .iter()
        .find(|k| k.kind_name() == kinds::COMMAND_NAME)
        .copied();
    // The command the `-` follows: `before` itself, or the last stage of a pipeline.
    let mut command = Some(before);
    while let Some(n) = command.filter(|n| n.kind_name() == kinds::PIPELINE) {
        command = n
            .named_child_count()
            .checked_sub(1)
            .and_then(|i| n.named_child(i));
    }
    let command = command.filter(|n| n.kind_name() == kinds::COMMAND);
    let name = own.or_else(|| command.and_then(|c| c.child_by_field_name("name")));
    let last = match command {
        Some(c) => c
            .named_child_count()
            .checked_sub(1)
            .and_then(|i| c.named_child(i)),
        None => Some(before),
    };
    // The word before the `-` is the program only for a command that starts the program
    // its words name (`uv run python -`, `env python -`); for any other (`X python -`)
    // it is an argument.
    let runner = |n: Node<'_>| {
        bytes
            .get(n.byte_range())
            .and_then(|t| std::str::from_utf8(t).ok())
            .is_some_and(|t| {
                crate::programs::is_runner_name(t)
                    || crate::programs::wrappers::runs_in_subcommand(crate::programs::basename(t))
            })
    };
    name.is_some_and(listed)
        || (name.is_some_and(runner)
            && last.is_some_and(|w| w.kind_name() == kinds::WORD && listed(w)))
}

/// A redirect that carries no word of the command: a here-document with none after its
/// delimiter, a file or here-string redirect with only its target (the grammar hangs
/// the words after a redirect on it). Redirects written after a here-document's
/// delimiter hang on it, and are checked too.
fn redirect_without_words(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let words = kids
        .iter()
        .filter(|c| walk::is_word_kind(c.kind_name()))
        .count();
    let nested = kids
        .iter()
        .filter(|c| c.kind_name().ends_with("redirect"))
        .all(|c| redirect_without_words(*c));
    match node.kind_name() {
        kinds::HEREDOC_REDIRECT => words == 0 && nested,
        kinds::FILE_REDIRECT | kinds::HERESTRING_REDIRECT => words <= 1 && nested,
        _ => false,
    }
}

/// A word right after the delimiter, with no blank between (`<<'EOF'<CR>`,
/// `<<"EOF"\x`), is part of the delimiter for bash, which then ends the body elsewhere
/// than the grammar; a word spanning a line break is body text. Words after a blank are
/// the command's arguments (the walk reads them).
fn heredoc_delimiter_runs_on<'t>(
    named: impl Iterator<Item = Node<'t>>,
    src: &str,
) -> Option<String> {
    let kids: Vec<Node<'_>> = named.collect();
    let start_end = kids
        .iter()
        .find(|k| k.kind_name() == kinds::HEREDOC_START)
        .map(|k| k.end_byte());
    let w = kids.iter().find(|k| {
        walk::is_word_kind(k.kind_name())
            && (Some(k.start_byte()) == start_end
                || src.get(k.byte_range()).is_some_and(|t| t.contains('\n')))
    })?;
    Some(format!(
        "the here-document delimiter runs on into `{}` at byte {} for bash",
        src.get(w.byte_range()).unwrap_or_default().escape_debug(),
        w.start_byte()
    ))
}

/// `` `a` `b` ``: the grammar can read two backtick substitutions as one whose text
/// holds an unescaped backtick (`a` `b` as one command); bash runs `a` and `b`.
fn backticks_hold_a_backtick(node: Node<'_>, src: &str) -> Option<String> {
    let t = src.get(node.byte_range())?;
    if t.len() <= 2 || !t.starts_with('`') {
        return None;
    }
    let b = t.get(1..t.len() - 1)?.as_bytes();
    let unescaped = (0..b.len()).any(|i| {
        b.get(i) == Some(&b'`')
            && b.get(..i)
                .unwrap_or_default()
                .iter()
                .rev()
                .take_while(|c| **c == b'\\')
                .count()
                % 2
                == 0
    });
    unescaped.then(|| {
        format!(
            "the backticks at byte {} hold an unescaped backtick: two substitutions for bash",
            node.start_byte()
        )
    })
}

/// `a | b > out x`: bash gives `x` to `b`, the command the redirect is written on
/// (`echo hi | cat > out /etc/shadow` reads /etc/shadow); the grammar hangs the
/// redirect, extra words and all, on the whole pipeline or list, where the walk has no
/// command to give them to.
fn statement_redirect_with_words<'t>(
    node: Node<'t>,
    all: &[Node<'t>],
    src: &str,
) -> Option<String> {
    if let Some(why) = skipped_between(all, src.as_bytes(), Vec::new) {
        return Some(why);
    }
    if node
        .child_by_field_name("body")
        .is_none_or(|b| b.kind_name() == kinds::COMMAND)
    {
        return None;
    }
    let mut inner = node.walk();
    let extra = all.iter().filter(|r| r.is_named()).find(|r| {
        matches!(
            r.kind_name(),
            kinds::FILE_REDIRECT | kinds::HERESTRING_REDIRECT
        ) && r
            .named_children(&mut inner)
            .filter(|w| w.kind_name() != kinds::FILE_DESCRIPTOR)
            .count()
            > 1
    })?;
    Some(format!(
        "the words after the redirect target at byte {} are arguments for bash, which the grammar hangs on the redirect",
        extra.start_byte()
    ))
}

/// A list as a stage of a pipeline: bash has no such thing (a list is grouped by `{ }`
/// or `( )` first), so the grammar split the text elsewhere than bash. After a
/// pipeline of three stages its GLR can read `a | b | c || d <<EOF` as `a | (b | c ||
/// d)`, with the here-document on the whole, where bash runs `(a | b | c) || d <<EOF`:
/// the reading then feeds the here-document to `b` instead of `a`'s output.
fn list_in_pipeline<'t>(mut stages: impl Iterator<Item = Node<'t>>) -> Option<String> {
    stages.find(|s| s.kind_name() == kinds::LIST).map(|list| {
        format!(
            "the `&&`/`||` list at byte {} is no stage of a pipeline for bash",
            list.start_byte()
        )
    })
}

/// A here-document end that is not a whole line (`END && grep …` does not end `<<END`
/// for bash, whose body then runs on, substitutions included).
fn heredoc_end_not_a_line(node: Node<'_>, src: &str) -> Option<String> {
    let bytes = src.as_bytes();
    // `<<-` strips leading tabs from the end line too.
    let line_start = bytes
        .get(..node.start_byte())
        .unwrap_or_default()
        .iter()
        .rposition(|&b| b != b'\t')
        .map_or(0, |i| i + 1);
    let starts_line = line_start == 0 || bytes.get(line_start - 1) == Some(&b'\n');
    let ends_line = matches!(bytes.get(node.end_byte()), None | Some(b'\n'));
    (!starts_line || !ends_line).then(|| {
        format!(
            "the here-document end at byte {} is not a line of its own",
            node.start_byte()
        )
    })
}

/// The offset of a `$(`, `${` or `$[` in an unquoted here-document body that no node
/// of the tree starts at. The grammar leaves a body unparsed when a line starts with a
/// blank (`<<-E` + `<TAB>$(id)`, or ` $(id)`): the body is one text, while bash runs
/// the substitution (the oracle found it). Backticks are found by the walk itself.
fn unparsed_body_expansion(body: Node<'_>, src: &str) -> Option<usize> {
    let redirect = body.parent()?;
    let mut cursor = redirect.walk();
    let quoted = redirect.children(&mut cursor).any(|c| {
        c.kind_name() == kinds::HEREDOC_START
            && src
                .get(c.byte_range())
                .is_some_and(|t| t.contains(['\'', '"', '\\']))
    });
    if quoted {
        return None;
    }
    // What the tree parsed: every named child but the plain text between expansions.
    let mut cursor = body.walk();
    let parsed: Vec<std::ops::Range<usize>> = body
        .named_children(&mut cursor)
        .filter(|c| c.kind_name() != kinds::HEREDOC_CONTENT)
        .map(|c| c.byte_range())
        .collect();
    let bytes = src.as_bytes();
    let mut i = body.start_byte();
    let end = body.end_byte().min(bytes.len());
    while i < end {
        if let Some(r) = parsed.iter().find(|r| r.start == i) {
            i = r.end.max(i + 1);
            continue;
        }
        match bytes.get(i) {
            // In a body a backslash quotes only `$`, a backtick, itself and a newline.
            Some(b'\\') if matches!(bytes.get(i + 1), Some(b'$' | b'`' | b'\\' | b'\n')) => {
                i += 2;
            }
            // A backtick's code is the walk's (`heredoc_backticks`): skip to its end.
            Some(b'`') => {
                i += 1;
                while i < end && bytes.get(i) != Some(&b'`') {
                    i += if bytes.get(i) == Some(&b'\\') { 2 } else { 1 };
                }
                i += 1;
            }
            Some(b'$') if matches!(bytes.get(i + 1), Some(b'(' | b'{' | b'[')) => {
                return Some(i);
            }
            _ => i += 1,
        }
    }
    None
}

/// `src` with bash's keywords that prefix a pipeline blanked out where the grammar
/// misreads what follows them, or `None` when there is none:
/// - `time` (with `-p`, `--`) before a compound command or an assignment (`time { …;
///   }`, `time if …; fi`, `time A=1 cmd`): the grammar reads a command `time` with the
///   compound's words as arguments, and `then …`, `}` as commands of their own. Bash
///   reads `time` as its keyword only at the start of a pipeline, without assignments
///   before it; elsewhere it is the program `time`, which the walk reads as a wrapper.
/// - `!` before a compound command spelled with a word (`! { …; }`, `! if …`): the
///   grammar reads a command named `{` or `if`.
///
/// Both only time or negate what follows; blanking them (offsets kept) leaves what
/// runs as bash runs it.
fn keyword_prefixes(root: Node<'_>, src: &str) -> Option<String> {
    const COMPOUND: &[&str] = &[
        "{", "(", "((", "[[", "!", "if", "while", "until", "for", "case", "select", "function",
        "coproc",
    ];
    const WORD_COMPOUND: &[&str] = &[
        "{", "if", "while", "until", "for", "case", "select", "function",
    ];
    if !src.contains("time") && !src.contains('!') {
        return None;
    }
    let text = |n: &Node<'_>| src.get(n.byte_range()).unwrap_or_default();
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
        if node.kind_name() == kinds::NEGATED_COMMAND {
            if let Some(cmd) = node.named_child(0)
                && cmd.kind_name() == kinds::COMMAND
                && cmd.named_child(0).is_some_and(|n| {
                    n.kind_name() == kinds::COMMAND_NAME && WORD_COMPOUND.contains(&text(&n))
                })
            {
                ranges.push(node.start_byte()..cmd.start_byte());
            }
            continue;
        }
        if node.kind_name() != kinds::COMMAND {
            continue;
        }
        let pipeline_start = node.parent().is_none_or(|p| {
            p.kind_name() != kinds::PIPELINE
                || p.named_child(0).is_some_and(|f| f.id() == node.id())
        });
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let Some((name, args)) = kids.split_first() else {
            continue;
        };
        if !pipeline_start || name.kind_name() != kinds::COMMAND_NAME || text(name) != "time" {
            continue;
        }
        let mut rest = args.iter().skip_while(|a| matches!(text(a), "-p" | "--"));
        if let Some(next) = rest.next()
            && (COMPOUND.contains(&text(next))
                // `time NAME=value cmd`: the keyword before a command with an assignment.
                || crate::programs::is_assignment(text(next))
                || next.kind_name() == kinds::SUBSHELL
                || next.kind_name() == kinds::COMPOUND_STATEMENT)
        {
            ranges.push(name.start_byte()..next.start_byte());
        }
    }
    if ranges.is_empty() {
        return None;
    }
    let mut bytes = src.as_bytes().to_vec();
    for r in ranges {
        for b in bytes.get_mut(r)? {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    String::from_utf8(bytes).ok()
}

/// Parses and walks one piece of code into a plan.
/// The plan of a command the host's shell runs (`top`: no positional parameters, as
/// for `bash -c CMD`) or of code read inside it (a code string, fed text: the
/// parameters it runs with are unknown unless the evaluator wrote them in).
fn plan(src: &str, ctx: &AnalysisContext, cwd: Cwd, top: bool) -> Result<Plan, AstError> {
    if src.len() > MAX_BYTES {
        return Err(AstError::TooLarge(src.len()));
    }
    if src.contains('\0') {
        return Err(AstError::Parse("NUL byte in command".into()));
    }
    // Bash removes backslash-newline pairs before it tokenizes; the walk reads the
    // text bash reads.
    let spliced = crate::shell::source::splice(src).map_err(|e| AstError::Parse(e.to_string()))?;
    let src: &str = &spliced;
    // Parts whose top-level separators the scan proves are parsed alone (the
    // grammar is superlinear in pipeline stages); anything unproven is parsed whole. A
    // plan the static evaluator has work on is parsed whole too: it reads values across
    // statements (`c=ch; ${c}mod …`), which parts parsed alone cannot carry.
    if SPLIT.with(Cell::get)
        && let Some(statements) = split::split(src)
        && let Some(plan) = split::plan_parts(&statements, src, ctx, &cwd, top)
        && !evaluate::worth_evaluating(&plan)
    {
        return Ok(plan);
    }
    let mut syntax = read_tree(src)?;
    // `time { …; }`, `! if …; fi`: keywords the grammar misreads what follows of are
    // blanked out (see `keyword_prefixes`), again on the new tree (`time ! { …; }`).
    let mut blanked: Option<String> = None;
    for _ in 0..4 {
        let Some(b) = keyword_prefixes(syntax.root(), blanked.as_deref().unwrap_or(src)) else {
            break;
        };
        syntax = Syntax::new(&parse(&b)?);
        blanked = Some(b);
    }
    let src: &str = blanked.as_deref().unwrap_or(src);
    let root = syntax.root();
    if root.has_error() && !only_read_write_redirects(root) {
        return Err(AstError::Parse(first_error(root, src)));
    }
    if let Some(at) = skipped_backslash(root, src) {
        return Err(AstError::Parse(format!(
            "the parser skipped the escape at byte {at} (an escaped blank that starts a word)"
        )));
    }
    if let Some(why) = misread_construct(root, src) {
        return Err(AstError::Parse(why));
    }
    let start = cwd.clone();
    let mut plan = walk::walk(
        root,
        src,
        ctx,
        cwd,
        Limits {
            max_depth: MAX_DEPTH,
            max_nodes: MAX_NODES,
        },
        top && walk::context_variables_hold(src),
    )?;
    // What the command computes from its own text, as code to read again.
    if EVALUATE.with(Cell::get) {
        evaluate::evaluate(root, src, &start, &mut plan, top.then(Vec::new));
    }
    Ok(plan)
}

/// Analyzes one command with the AST engine; falls back to the lexer, fail closed.
pub fn analyze(command: &str, ctx: &AnalysisContext) -> Analysis {
    match analyze_ast(command, ctx) {
        Ok(a) => a,
        Err(e) => fallback(command, ctx, &e),
    }
}

pub use crate::shell::ir::Feed;

/// One piece of the code the static evaluator computed for a command, read
/// by the same engine, for the oracle's strict check (`oracle::compare::strict`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvaluatedCode {
    pub code: String,
    /// The piece this one was computed from (`None` for the first piece).
    pub parent: Option<usize>,
    /// How it comes to run.
    pub entry: Entry,
    /// The evaluator wrote this text (a residual, a function body or alias value where
    /// it is called): bash must parse it whenever it parses the command. Code fed on
    /// from a producer's output or a code string may be anything.
    pub written: bool,
    /// Every simple command of it runs whenever it runs: no `&&`, `||`, `&`, `if`,
    /// loop, `case` or function definition in it.
    pub straight: bool,
    pub commands: Vec<EvaluatedCommand>,
    /// Functions it defines and aliases it sets: names that never reach `execve`.
    pub defines: Vec<String>,
    /// A redirect on a compound statement (`{ a; b; } > dir/f`) may fail, and then
    /// none of the statement runs.
    pub loose_redirect_may_fail: bool,
    /// Something of it runs in the background (`&`): the command may end, and the
    /// sandbox kill it, before that has run to its end.
    pub background: bool,
    /// Why the engine could not read it (it does not parse, or it is nested deeper
    /// than the analysis reads code): its commands are unknown.
    pub unread: Option<String>,
}

/// How a piece of evaluated code comes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Entry {
    /// The command as it runs: its residual (the command with every known value in
    /// place), or the command itself when the evaluator replaced no word but computed
    /// code it feeds somewhere.
    Command,
    /// Computed by the evaluator from its parent, and run as `Feed` says.
    Fed(Feed),
    /// A code string its parent passes to a program (`sh -c '…'`, `find -exec sh -c
    /// '…'`): it runs if that program does.
    CodeString,
}

/// One simple command of evaluated code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvaluatedCommand {
    /// The words after the assignments, quotes removed; an unknown word as written.
    pub words: Vec<String>,
    /// Whether each word is a literal (no unknown expansion, no glob, no brace).
    pub literal: Vec<bool>,
    /// A redirect of it may fail, and bash then does not run it: a file read, a write
    /// anywhere but a plain name in the cwd or a `/dev` stream, a target that is only
    /// known when it runs (`> {a,b}` is ambiguous), a here-document or here-string
    /// whose text expands (an expansion error skips the command).
    pub redirect_may_fail: bool,
    /// An assignment, word or redirect target holds a `${…}` or `$((…))` whose value
    /// is unknown: bash may fail on it (`${x:?}`, a bad arithmetic expression), which
    /// ends a non-interactive shell.
    pub may_abort: bool,
    /// Its input is a here-document or here-string whose text is static (a shell reads
    /// it as its script, which the analysis reads as a code string).
    pub static_input: bool,
    /// It has `NAME=value` prefixes (then `time` is no keyword but a program).
    pub prefixed: bool,
    /// It is a later stage of a pipeline (`a | time b`): `time` there is no keyword
    /// either, but the program.
    pub piped: bool,
}

/// The code the static evaluator computed for `command` and the code read from it,
/// level by level (at most `MAX_CODE_DEPTH`, as the analysis reads it), each piece
/// parsed by the same engine; `None` when the evaluator computed nothing or the command
/// does not parse. The first piece is the command as it runs (`Entry::Command`); each
/// piece's evaluated code and code strings follow as its children. A code text met a
/// second time is not a piece again (the analysis reads it once too). Pure; does not
/// change any analysis.
pub fn evaluated_code(command: &str, ctx: &AnalysisContext) -> Option<Vec<EvaluatedCode>> {
    let here = Cwd::Known(ctx.cwd().to_path_buf());
    let top = plan(command, ctx, here, true).ok()?;
    if top.evaluated.code.is_empty() {
        return None;
    }
    Some(pieces(command, ctx, top))
}

/// The code the engine reads for `command`, as the same tree of pieces as
/// `evaluated_code`, whether or not the evaluator computed anything; `None` when the
/// command does not parse. Under `without_evaluator` this is the plain reading: the
/// command and its code strings, level by level.
pub fn read_code(command: &str, ctx: &AnalysisContext) -> Option<Vec<EvaluatedCode>> {
    let here = Cwd::Known(ctx.cwd().to_path_buf());
    let top = plan(command, ctx, here, true).ok()?;
    Some(pieces(command, ctx, top))
}

/// The pieces of `command`, whose plan is `top`.
fn pieces(command: &str, ctx: &AnalysisContext, top: Plan) -> Vec<EvaluatedCode> {
    let here = Cwd::Known(ctx.cwd().to_path_buf());
    // (code, cwd, parent, entry, level)
    let mut queue: std::collections::VecDeque<(String, Cwd, Option<usize>, Entry, usize)> =
        std::collections::VecDeque::new();
    let residual = top
        .evaluated
        .code
        .iter()
        .find(|(_, _, f)| *f == Feed::Residual);
    let written_top = residual.is_some();
    match residual {
        Some((code, cwd, _)) => {
            queue.push_back((code.clone(), cwd.clone(), None, Entry::Command, 1))
        }
        None => queue.push_back((command.to_string(), here.clone(), None, Entry::Command, 1)),
    }
    for (code, cwd, feed) in &top.evaluated.code {
        if *feed != Feed::Residual {
            queue.push_back((code.clone(), cwd.clone(), Some(0), Entry::Fed(*feed), 1));
        }
    }
    // A substitution the residual holds as its output ran all the same: its commands
    // are evaluated code, held to nothing (the word may not have been expanded).
    for code in &top.evaluated.folded {
        let entry = Entry::Fed(Feed::Program);
        queue.push_back((code.clone(), here.clone(), Some(0), entry, 1));
    }
    let mut out: Vec<EvaluatedCode> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    while let Some((code, cwd, parent, entry, level)) = queue.pop_front() {
        if !seen.insert(code.clone()) {
            continue;
        }
        let written = match entry {
            Entry::Command => written_top,
            Entry::Fed(feed) => matches!(feed, Feed::Residual | Feed::Call),
            Entry::CodeString => false,
        };
        let mut piece = EvaluatedCode {
            code,
            parent,
            entry,
            written,
            straight: false,
            commands: Vec::new(),
            defines: Vec::new(),
            loose_redirect_may_fail: false,
            background: false,
            unread: None,
        };
        if level > MAX_CODE_DEPTH {
            piece.unread = Some(format!("nested more than {MAX_CODE_DEPTH} levels deep"));
            out.push(piece);
            continue;
        }
        let p = match plan(&piece.code, ctx, cwd, entry == Entry::Command) {
            Ok(p) => p,
            Err(e) => {
                piece.unread = Some(e.to_string());
                out.push(piece);
                continue;
            }
        };
        piece.straight = p
            .compound
            .iter()
            .all(|c| matches!(*c, "|" | "|&" | "heredoc pipeline" | "{ }" | "( )"));
        piece.defines = p.functions.iter().map(|f| f.name.clone()).collect();
        // A `[[ … ]]` is a compound command too: bash applies its redirects before it
        // expands its words, so a failing one skips the substitutions in it.
        piece.loose_redirect_may_fail = p.loose_redirects.iter().any(|(r, _)| may_fail(r))
            || p.commands.iter().any(|c| {
                c.words.first().is_some_and(|w| w.text == "[[") && c.redirects.iter().any(may_fail)
            });
        piece.background = p.background || p.compound.contains(&"&");
        // Word offsets are in the text as the parser read it (line continuations
        // spliced out).
        let spliced = crate::shell::source::splice(&piece.code)
            .map(|s| s.into_owned())
            .unwrap_or_default();
        piece.commands = p
            .commands
            .iter()
            .filter(|c| !c.words.is_empty())
            .map(|c| evaluated_command(c, &spliced))
            .collect();
        // The grammar can drop a word without an error (`python3 - <<'EOF'` reads as
        // `python3`); then the plan misses what bash runs, and the piece is not read.
        if let Some(skipped) = skipped_word(&spliced) {
            piece.unread = Some(skipped);
        }
        for c in &piece.commands {
            if c.words.first().is_some_and(|w| w == "alias") {
                piece.defines.extend(
                    c.words
                        .iter()
                        .skip(1)
                        .filter_map(|w| w.split_once('=').map(|(n, _)| n.to_string())),
                );
            }
        }
        let index = out.len();
        out.push(piece);
        // The code strings its commands pass on (`sh -c '…'`), found as the analysis
        // finds them, and the code the walk found in here-document bodies.
        let mut fx = Effects::default();
        for cmd in &p.commands {
            effects::command_effects(cmd, ctx, &mut fx);
        }
        for (c, cw) in fx.code.into_iter().chain(p.code) {
            queue.push_back((c, cw, Some(index), Entry::CodeString, level + 1));
        }
        for (c, cw, feed) in p.evaluated.code {
            queue.push_back((c, cw, Some(index), Entry::Fed(feed), level + 1));
        }
    }
    out
}

/// A simple command of a piece (`src`: the piece as parsed), as the strict check sees
/// it.
fn evaluated_command(c: &walk::SimpleCommand, src: &str) -> EvaluatedCommand {
    let aborts = |w: &crate::shell::ir::Word| {
        w.dynamic && (w.text.contains("${") || w.text.contains("$((") || w.text.contains("$["))
    };
    EvaluatedCommand {
        words: c.words.iter().map(|w| w.text.clone()).collect(),
        // A leading `~` is kept as written (quoted or not, the text cannot tell), so
        // its value is unknown here; so is a brace expansion the grammar reads as a
        // plain word (`{a,b}`, `r{m,}`), found in the source.
        literal: c
            .words
            .iter()
            .map(|w| {
                let unknown = w.dynamic
                    || w.pattern
                    || w.text.starts_with('~')
                    || (w.text.contains('{') && unquoted_brace(src, w.start));
                !unknown
            })
            .collect(),
        redirect_may_fail: c.redirects.iter().any(may_fail),
        may_abort: c
            .assignments
            .iter()
            .chain(&c.words)
            .chain(c.redirects.iter().filter_map(|r| r.target.as_ref()))
            .any(aborts),
        static_input: c.redirects.iter().any(|r| {
            r.kind == crate::shell::ir::RedirectKind::Inline
                && r.input.as_ref().is_some_and(|i| !i.dynamic)
        }),
        prefixed: !c.assignments.is_empty(),
        piped: c
            .words
            .first()
            .is_some_and(|w| walk::after_pipe(src, w.start)),
    }
}

/// Whether the word at byte `start` of `src` holds a brace bash expands: an unquoted
/// `{`, then an unquoted `,` or `..`, then an unquoted `}`, before the word ends (an
/// unquoted blank or operator). A word the scan cannot follow counts as one.
fn unquoted_brace(src: &str, start: usize) -> bool {
    let Some(word) = src.get(start..) else {
        return true;
    };
    let mut quote: Option<char> = None;
    let mut chars = word.chars().peekable();
    // For each unquoted `{` still open: whether a `,` or `..` followed it.
    let mut open: Vec<bool> = Vec::new();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (Some(_), '"') => quote = None,
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\\') => {
                chars.next();
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.peek() == Some(&'\'') => {
                chars.next();
                // `$'…'`: backslash escapes inside.
                let mut closed = false;
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '\'' => {
                            closed = true;
                            break;
                        }
                        _ => {}
                    }
                }
                if !closed {
                    return true;
                }
            }
            (None, '{') => open.push(false),
            (None, ',') => {
                if let Some(last) = open.last_mut() {
                    *last = true;
                }
            }
            (None, '.') if chars.peek() == Some(&'.') => {
                if let Some(last) = open.last_mut() {
                    *last = true;
                }
            }
            (None, '}') => {
                if open.pop() == Some(true) {
                    return true;
                }
            }
            // Only space, tab and newline end a word for bash (`l{s<CR>,}` expands).
            (None, ' ' | '\t' | '\n') => return false,
            (None, c) if ";|&<>()".contains(c) => return false,
            (None, _) => {}
        }
    }
    // The word ran to the end of the text inside quotes: the scan lost it.
    quote.is_some()
}

/// Text of a command or redirected statement that no node of the tree covers (the
/// grammar skipped it): the description, or `None` when every non-blank byte of every
/// command is some child's.
fn skipped_word(src: &str) -> Option<String> {
    let syntax = read_tree(src).ok()?;
    let bytes = src.as_bytes();
    let mut stack = vec![syntax.root()];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        if matches!(
            node.kind_name(),
            kinds::COMMAND | kinds::REDIRECTED_STATEMENT
        ) {
            for pair in kids.windows(2) {
                if let [a, b] = pair
                    && let Some(gap) = bytes.get(a.end_byte()..b.start_byte())
                    && gap.iter().any(|c| !c.is_ascii_whitespace())
                {
                    return Some(format!(
                        "the grammar skips `{}` at byte {}",
                        String::from_utf8_lossy(gap).trim(),
                        a.end_byte()
                    ));
                }
            }
        }
        stack.extend(kids);
    }
    None
}

/// Whether bash may fail to apply a redirect (and then skips its command).
fn may_fail(r: &crate::shell::ir::Redirect) -> bool {
    use crate::shell::ir::RedirectKind;
    let stream = |t: &str| matches!(t, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty");
    match r.kind {
        // `2>&1` and `>&-` always apply; a descriptor that may not be open, or a word
        // that is none (`2>&1x`, `<&file`: an ambiguous redirect), fails.
        RedirectKind::Duplicate => r.target.as_ref().is_some_and(|t| {
            t.dynamic || !matches!(t.text.as_str(), "0" | "1" | "2" | "-" | "0-" | "1-" | "2-")
        }),
        RedirectKind::Inline => r.input.as_ref().is_none_or(|i| i.dynamic),
        RedirectKind::Read => r
            .target
            .as_ref()
            .is_none_or(|t| t.dynamic || t.pattern || !stream(&t.text)),
        RedirectKind::Write | RedirectKind::ReadWrite => r.target.as_ref().is_none_or(|t| {
            t.dynamic
                || t.pattern
                || t.text.is_empty()
                || t.text.contains(['{', '~'])
                || (t.text.contains('/') && !stream(&t.text))
        }),
    }
}

/// The lexer's analysis, marked as a fallback: obfuscated, no always patterns.
pub fn fallback(command: &str, ctx: &AnalysisContext, e: &AstError) -> Analysis {
    let mut a = crate::analysis::lexer::analyze(command, ctx);
    a.class = CommandClass::Obfuscated;
    a.always_patterns.clear();
    for r in &mut a.requests {
        r.always_patterns.clear();
    }
    a.engine = EngineKind::Lexer;
    a.fallback = Some(Fallback {
        reason: e.reason(),
        detail: e.to_string(),
    });
    a.risk_notes.push(format!(
        "KHAELOR's bash parser could not fully read this command ({e}); it was analyzed conservatively by the V1 lexer."
    ));
    a
}

fn analyze_ast(command: &str, ctx: &AnalysisContext) -> Result<Analysis, AstError> {
    let mut top = plan(command, ctx, Cwd::Known(ctx.cwd().to_path_buf()), true)?;
    let mut fx = Effects::default();
    fx.code.append(&mut top.code);
    fx.hardline = floor::check_plan(&top, ctx, &Reader);
    // Commands of the top-level plan may be verified, unless a statement
    // assigns a variable (`PATH=/tmp/x; ls` changes what `ls` is) other than the
    // harmless ones (`CI=true npm test`, `LC_ALL=C sort f`).
    // A literal prefix of a program's command (`TOKEN_FILE=x python3 repro.py`) sets
    // the variable for that command alone: that command's verdict weighs it
    // (`effects::verdict`). Before a builtin or a function it may stay set (`sh` keeps
    // a special builtin's), so it counts as a statement there.
    fx.functions = top.functions.iter().map(|f| f.name.clone()).collect();
    fx.verifying = top.commands.iter().all(|c| {
        effects::verifiable_assignments(c, ctx) || effects::program_prefix(c, &fx.functions)
    });
    for cmd in &top.commands {
        effects::command_effects(cmd, ctx, &mut fx);
        environment_request(cmd, ctx, &mut fx);
    }
    for (r, cwd) in &top.loose_redirects {
        effects::redirect_effects(r, cwd, ctx, &mut fx);
    }
    let mut notes: Vec<String> = Vec::new();
    let mut obfuscated: Vec<Opacity> = top.obfuscated.clone();

    // Code passed as a string is parsed again, level by level, depth-bounded.
    fx.verifying = false;
    // Code strings or opaque code (`source f`) found at the top level; the loop below
    // only ever runs when this is already true.
    let code_runner = !fx.code.is_empty() || !fx.opaque.is_empty();
    // Code of options and variables (`tar -I CMD`) is read from here on, like code
    // strings, but does not make the command a code runner.
    fx.code.append(&mut fx.option_code);
    // Evaluated code only adds (read like a code string, after the class).
    take_evaluated(&mut top, &mut fx);
    read_code_strings(ctx, &mut fx, &mut obfuscated);

    for why in std::mem::take(&mut fx.unreadable) {
        let why = Opacity::Other(why);
        if !obfuscated.contains(&why) {
            obfuscated.push(why);
        }
    }
    let class = if !obfuscated.is_empty() || code_runner {
        CommandClass::Obfuscated
    } else if !top.compound.is_empty() || top.statements > 1 {
        CommandClass::Compound
    } else {
        CommandClass::Simple
    };

    // The floor also reads the lexer's rendering of the raw text: either hit denies.
    // One lex serves the floor and the second opinion below.
    let lexed = crate::shell::lexer::lex(command);
    // The lexer is a second opinion that can only take generality away: where it sees a
    // substitution marker or cannot read the text, nothing is offered beyond once.
    let lexer_doubts = lexed.as_ref().map_or(true, |t| t.has_substitution);
    if fx.hardline.is_none() && crate::analysis::lexer::floor_relevant(command, &lexed) {
        let cwd = Cwd::Known(ctx.cwd().to_path_buf());
        let lexer_plan = crate::analysis::lexer::lower(command, lexed, &cwd);
        fx.hardline = floor::check_plan(&lexer_plan, ctx, &Reader);
    }

    if top.background {
        fx_background(command, &mut fx);
    }

    notes.extend(class_notes(
        class,
        &top,
        &obfuscated,
        code_runner,
        &fx.opaque,
    ));
    if let Some(after) = &top.unknown_cwd_after {
        notes.push(format!(
            "The working directory is unknown after {after}; relative paths after it count as outside the project."
        ));
    }
    notes.extend(fx.notes.iter().cloned());

    let always = if lexer_doubts || fx.path_programs {
        Vec::new()
    } else {
        always_patterns(class, &top, &fx, ctx)
    };
    if class == CommandClass::Obfuscated || effects::plants_program(&fx.requests, ctx) {
        fx.verdicts.clear();
    }
    fx.mark_verified();
    let mut requests = std::mem::take(&mut fx.requests);
    give_always_patterns(&mut requests, &always);
    if fx.hardline.is_some() {
        notes.push(floor::HARDLINE_RISK_NOTE.to_string());
    }
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    let parts = std::mem::take(&mut fx.parts);
    Ok(Analysis {
        command: command.to_string(),
        class,
        parts,
        requests,
        always_patterns: always,
        risk_notes: notes,
        hardline: fx.hardline,
        engine: EngineKind::Ast,
        fallback: None,
    })
}

/// Reads the code passed as a string (and the code of options, variables and evaluated
/// text that joins it), level by level, at most `MAX_CODE_DEPTH` deep: each text goes
/// through the floor in the lexer's reading too, then is planned and its effects added;
/// a text that does not parse adds what the lexer reads in it and leaves the command
/// obfuscated.
fn read_code_strings(ctx: &AnalysisContext, fx: &mut Effects, obfuscated: &mut Vec<Opacity>) {
    let mut level = 0;
    let mut seen_code: std::collections::HashSet<String> = std::collections::HashSet::new();
    while !fx.code.is_empty() {
        level += 1;
        let pending: Vec<(String, Cwd)> = std::mem::take(&mut fx.code);
        for (code, cwd) in pending {
            // The same code twice (a residual re-evaluated, a fed text found again)
            // adds nothing but a level.
            if !seen_code.insert(code.clone()) {
                continue;
            }
            // Defence in depth: the lexer's reading of the code goes through the floor too,
            // where it could fire.
            let lexed = crate::shell::lexer::lex(&code);
            if crate::analysis::lexer::floor_relevant(&code, &lexed)
                && let Some(hit) = floor::check_plan(
                    &crate::analysis::lexer::lower(&code, lexed, &cwd),
                    ctx,
                    &Reader,
                )
            {
                fx.hardline.get_or_insert(hit);
            }
            if level > MAX_CODE_DEPTH {
                fx.opaque.push(format!(
                    "code nested more than {MAX_CODE_DEPTH} levels deep"
                ));
                continue;
            }
            match plan(&code, ctx, cwd, false) {
                Ok(mut inner) => {
                    fx.code.append(&mut inner.code);
                    take_evaluated(&mut inner, fx);
                    if let Some(hit) = floor::check_plan(&inner, ctx, &Reader) {
                        fx.hardline.get_or_insert(hit);
                    }
                    for o in inner.obfuscated {
                        if !obfuscated.contains(&o) {
                            obfuscated.push(o);
                        }
                    }
                    for cmd in &inner.commands {
                        effects::command_effects(cmd, ctx, fx);
                        environment_request(cmd, ctx, fx);
                    }
                    for (r, c) in &inner.loose_redirects {
                        effects::redirect_effects(r, c, ctx, fx);
                    }
                    if inner.background {
                        fx_background(&code, fx);
                    }
                }
                Err(e) => {
                    // The inner string is not bash we can read: its lexer rendering still
                    // goes through the floor, and the whole command stays obfuscated.
                    let lexed = crate::analysis::lexer::analyze(&code, ctx);
                    if let Some(hit) = lexed.hardline {
                        fx.hardline.get_or_insert(hit);
                    }
                    for r in lexed.requests {
                        if r.capability != Capability::ProcessExecute {
                            fx.push(r);
                        }
                    }
                    fx.opaque.push(format!(
                        "an inner command string KHAELOR could not parse ({e})"
                    ));
                    // Code read after the class was decided (an option's, an
                    // evaluated one) must not leave the command readable.
                    let why = Opacity::Other("holds code KHAELOR could not parse".to_string());
                    if !obfuscated.contains(&why) {
                        obfuscated.push(why);
                    }
                }
            }
        }
        fx.code.append(&mut fx.option_code);
    }
}

/// The risk notes that say what the class means: why a command is obfuscated, or how
/// many parts a compound one has and what joins them.
fn class_notes(
    class: CommandClass,
    top: &Plan,
    obfuscated: &[Opacity],
    code_runner: bool,
    opaque: &[String],
) -> Vec<String> {
    let mut notes = Vec::new();
    match class {
        CommandClass::Obfuscated => {
            if obfuscated
                .iter()
                .any(|o| matches!(o, Opacity::Substitution(_)))
            {
                notes.push(crate::analysis::lexer::SUBSTITUTION_RISK_NOTE.to_string());
            }
            let others = obfuscated.iter().filter_map(|o| match o {
                Opacity::Other(why) => Some(why),
                Opacity::Substitution(_) => None,
            });
            for why in others {
                notes.push(format!(
                    "Command {why} — KHAELOR cannot verify what it will run."
                ));
            }
            if code_runner {
                notes.push("Runs code passed as a string; KHAELOR parsed it again and counts its commands.".to_string());
            }
            for o in opaque {
                notes.push(format!(
                    "Runs {o} — KHAELOR cannot verify what it will run."
                ));
            }
        }
        CommandClass::Compound => {
            let n = top.statements.max(1);
            // In one fixed order, not the tree's: the grammar's GLR nests mixed
            // pipelines and lists in shapes that vary with the stage count, and a
            // text whose parts were parsed alone (`split`) must read the same.
            let mut joined = top.compound.clone();
            joined.sort_by_key(|c| {
                COMPOUND_ORDER
                    .iter()
                    .position(|o| o == c)
                    .unwrap_or(COMPOUND_ORDER.len())
            });
            notes.push(format!(
                "Compound command ({n} command{}, joined by {}): each part is checked on its own.",
                if n == 1 { "" } else { "s" },
                joined.join(" ")
            ));
        }
        CommandClass::Simple => {}
    }
    notes
}

/// Each request's always patterns: a command's get the command's (none when it runs
/// through another program), a resolved absolute path its own path, anything else none.
fn give_always_patterns(requests: &mut [CapabilityRequest], always: &[String]) {
    for r in requests.iter_mut() {
        r.always_patterns = if always.is_empty() {
            Vec::new()
        } else if r.capability.has_command_subject() {
            if r.via.is_some() {
                Vec::new()
            } else {
                always.to_vec()
            }
        } else if r.subject.starts_with('/') && !r.unresolved && !r.subject.contains('*') {
            // A `*` in a path is a character of its name; as a pattern it would be a
            // wildcard (the rule syntax has no escape).
            vec![r.subject.clone()]
        } else {
            Vec::new()
        };
    }
}

/// Moves what the static evaluator computed on `plan` into the code still to read and
/// the notes. Never into the plan's own code: that would change the class.
fn take_evaluated(plan: &mut Plan, fx: &mut Effects) {
    let ev = std::mem::take(&mut plan.evaluated);
    fx.code
        .extend(ev.code.into_iter().map(|(code, cwd, _)| (code, cwd)));
    for n in ev.notes {
        if !fx.notes.contains(&n) {
            fx.notes.push(n);
        }
    }
}

/// An assignment prefix that changes what runs (`PATH=/tmp/x make`, `LD_PRELOAD=… ls`),
/// or that is not known to be harmless (`TZ=~/.ssh/id_rsa ls -l` opens the key), is a
/// `process.execute` of the whole command as written: a rule for the command alone
/// (`make *`) does not cover it, and it is never offered an always pattern.
fn environment_request(cmd: &walk::SimpleCommand, ctx: &AnalysisContext, fx: &mut Effects) {
    if cmd.words.is_empty() {
        return;
    }
    // A build or project script whose prefix only adds places inside the project to
    // its module search (`effects::verifiable_assignments`) is judged by its verdict.
    let verdict = fx
        .verdicts
        .iter()
        .rev()
        .find(|(t, _)| *t == cmd.text)
        .and_then(|(_, v)| *v);
    let built = matches!(
        verdict,
        Some(
            crate::model::vocab::Verdict::ProjectBuild
                | crate::model::vocab::Verdict::ProjectScript
        )
    );
    let changed: Vec<(&str, &str)> = cmd
        .assignments
        .iter()
        .filter(|a| {
            !(built
                && crate::programs::environment::project_path_assignment(
                    &a.text,
                    cmd.cwd.path(),
                    ctx,
                ))
        })
        .filter_map(|a| {
            let name = crate::programs::environment::assigned_name(&a.text);
            crate::programs::environment::assignment_risk(&a.text).map(|why| (name, why))
        })
        .collect();
    if changed.is_empty() {
        return;
    }
    let text = walk::with_assignments(cmd);
    let mut r = CapabilityRequest::new(
        Capability::ProcessExecute,
        text.clone(),
        format!("Run {} with a changed environment", cmd.text),
    );
    for (name, why) in changed {
        let note = format!("Sets `{name}`, which {why}: it may change what this command does.");
        if !fx.notes.contains(&note) {
            fx.notes.push(note.clone());
        }
        r.risk_notes.push(note);
    }
    // A verdict only ever contained keeps any literal prefix (`effects::verdict`): the
    // variables act inside the sandbox, so the changed command is contained with it.
    if let Some(v) = verdict.filter(|v| effects::contained_only(*v)) {
        fx.verdicts.push((text, Some(v)));
    }
    fx.push(r);
}

fn fx_background(command: &str, fx: &mut Effects) {
    let collapsed = crate::model::vocab::collapse_whitespace(command);
    let text = collapsed.trim_end_matches('&').trim_end().to_string();
    if !fx
        .requests
        .iter()
        .any(|r| r.capability == Capability::ProcessBackground)
    {
        fx.requests.push(CapabilityRequest::new(
            Capability::ProcessBackground,
            text.clone(),
            format!("Run in the background: {text}"),
        ));
    }
}

/// Always patterns are offered only for a simple command read in full (seed §3.3):
/// none for wrappers, assignments, hardline hits, readers the verified table could not
/// read; exact only for inline code and for flags that make a reader write or run
/// something.
fn always_patterns(
    class: CommandClass,
    top: &Plan,
    fx: &Effects,
    ctx: &AnalysisContext,
) -> Vec<String> {
    if class != CommandClass::Simple
        || fx.hardline.is_some()
        || fx.wrapped
        || fx.stdin_program
        || fx.unread_reader
        || top.background
    {
        return Vec::new();
    }
    let [cmd] = top.commands.as_slice() else {
        return Vec::new();
    };
    if !cmd.assignments.is_empty() || cmd.words.is_empty() || cmd.words.iter().any(|w| w.dynamic) {
        return Vec::new();
    }
    if fx.requests.iter().any(|r| {
        r.unresolved || (!r.subject.starts_with('/') && !r.capability.has_command_subject())
    }) {
        // A path whose location is unknown: nothing general can be said.
        return Vec::new();
    }
    let words: Vec<String> = cmd.words.iter().map(|w| w.text.clone()).collect();
    let patterns = if fx.inline_code || fx.escalated {
        // As `arity`'s exact patterns: a word holding a blank would make the pattern
        // name other words (`python3 -c 'x'\<CR>` is the word `x<CR>`).
        if cmd
            .words
            .iter()
            .any(|w| w.text.contains(char::is_whitespace))
        {
            return Vec::new();
        }
        vec![cmd.text.clone()]
    } else {
        crate::analysis::arity::suggest(&words, cmd.cwd.path(), ctx)
    };
    // Whatever built them: no `*` of a word becomes a wildcard (`bash '*'`).
    patterns
        .into_iter()
        .filter(|p| crate::analysis::arity::no_literal_star(p, &words))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The brace scan behind `EvaluatedCommand::literal`: the grammar reads `{a,b}` as
    /// a plain word, so quoting is found in the source.
    #[test]
    fn unquoted_braces_are_found_in_the_source() {
        assert!(unquoted_brace("echo {a,b}", 5));
        assert!(unquoted_brace("r{m,} -rf /", 0));
        assert!(unquoted_brace("echo x{1..3}y", 5));
        assert!(!unquoted_brace("echo '{a,b}'", 5));
        assert!(!unquoted_brace("echo '{'a,b'}'", 5));
        assert!(!unquoted_brace("echo \"{a,b}\"", 5));
        assert!(!unquoted_brace("echo \\{a,b}", 5));
        assert!(!unquoted_brace("find . -exec rm {} ;", 14));
        assert!(!unquoted_brace("echo {a} ,b}", 5));
        assert!(!unquoted_brace("echo $'{a,b}'", 5));
        assert!(unquoted_brace("l{s\r,} -la", 0));
        assert!(!unquoted_brace("echo {a \t,b}", 5));
        // A word the scan loses (an unclosed quote) counts as a brace.
        assert!(unquoted_brace("echo '{a,b}", 5));
    }

    /// Words the grammar loses fall back (the oracle found both allowed): a lone `$`
    /// (`ls $ x` read as `ls x`; `$"x"` stays a word), and words after a redirect
    /// target on a pipeline's last command.
    #[test]
    fn words_the_grammar_loses_fall_back() {
        let dir = std::env::temp_dir();
        let ctx = AnalysisContext::new(&dir, None, &dir).unwrap_or_else(|e| panic!("{e}"));
        for c in ["ls $ x", "echo $", "ls a $ b"] {
            let a = analyze(c, &ctx);
            assert!(a.fallback.is_some(), "{c}: {a:?}");
        }
        let a = analyze("echo $\"x\" b", &ctx);
        assert!(a.fallback.is_none(), "{a:?}");
        // Words after a redirect target on a pipeline's last command are its arguments.
        for c in [
            "echo hi | cat > out /etc/shadow",
            "true && cat > out /etc/shadow",
        ] {
            let a = analyze(c, &ctx);
            assert!(a.fallback.is_some(), "{c}: {a:?}");
        }
        for c in [
            "cat > out /etc/shadow",
            "echo hi | cat > out",
            "a | b 2> err > out",
        ] {
            let a = analyze(c, &ctx);
            assert!(a.fallback.is_none(), "{c}: {a:?}");
        }
        let a = analyze("cat > out /etc/shadow", &ctx);
        assert_eq!(a.parts[0].words, ["cat", "/etc/shadow"]);
    }

    /// The pieces of evaluated code, how each comes to run, and the facts the strict
    /// check needs about their commands.
    #[test]
    fn evaluated_code_lists_pieces_with_how_they_run() {
        let dir = std::env::temp_dir();
        let ctx = AnalysisContext::new(&dir, None, &dir).unwrap_or_else(|e| panic!("{e}"));
        let pieces = |c: &str| evaluated_code(c, &ctx).unwrap_or_default();
        assert!(evaluated_code("ls -la", &ctx).is_none());
        let p = pieces("c=ch; ${c}mod -R 777 / > out");
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].entry, Entry::Command);
        assert!(p[0].written, "the residual is the evaluator's text");
        assert_eq!(p[0].commands[0].words, ["chmod", "-R", "777", "/"]);
        assert!(p[0].commands[0].literal.iter().all(|l| *l));
        assert!(
            !p[0].commands[0].redirect_may_fail,
            "a plain name in the cwd"
        );
        let p = pieces("echo aWQ= | base64 -d | bash > sub/x");
        assert_eq!(p[1].entry, Entry::Fed(Feed::Shell));
        assert!(
            !p[0].written && !p[1].written,
            "the command's and base64's text"
        );
        assert_eq!(p[1].parent, Some(0));
        assert_eq!(p[1].commands[0].words, ["id"]);
        assert!(
            p[0].commands.iter().any(|c| c.redirect_may_fail) || p[0].loose_redirect_may_fail,
            "{p:#?}"
        );
        // `> {a,b}` is ambiguous for bash: the residual keeps it, `b` is no argument.
        let p = pieces("x=1; ls $x > {a,b}");
        assert_eq!(p[0].commands[0].words, ["ls", "1"]);
        assert!(p[0].commands[0].redirect_may_fail);
        // A word the grammar drops makes the piece unread.
        let p = pieces("x=1; echo $x | python3 - <<'EOF'\nprint(1)\nEOF");
        assert!(
            p.iter()
                .any(|c| c.unread.as_deref().is_some_and(|u| u.contains("skips `-`"))),
            "{p:#?}"
        );
        // A CR is no blank for bash: code that is only one is the command `\r`.
        let p = pieces("source /dev/stdin <<< $'\\r'");
        assert!(
            p.iter().any(|c| c.entry == Entry::Fed(Feed::Shell)
                && c.commands.first().is_some_and(|c| c.words == ["\r"])),
            "{p:#?}"
        );
        // A code string is a piece of its own; an unknown `${…}` may end the shell.
        let p = pieces("x=id; sh -c \"$x\"; echo ${y:?}");
        assert!(
            p.iter()
                .any(|c| c.entry == Entry::CodeString && c.code == "id")
        );
        assert!(p[0].commands.iter().any(|c| c.may_abort));
    }
}
