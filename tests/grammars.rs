//! Pins the tree-sitter-bash behaviour the AST walker relies on: each snippet in
//! `grammars-tests/*.txt` must parse to the recorded tree, and every node kind, token
//! and field name in `grammars-tests/kinds.txt` must exist in the grammar.
//!
//! Owns only these checks; it does not test our walker (`src/ast.rs`), only the grammar
//! under it, so a grammar upgrade that changes a shape fails here first, by name.
//! `UPDATE_GRAMMAR_TESTS=1 cargo test --test grammars` rewrites the expected trees;
//! read every changed tree before committing it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tree_sitter::{Language, Node, Parser};

/// Where the grammar pins live.
fn grammar_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars-tests")
}

fn language() -> Language {
    tree_sitter_bash::LANGUAGE.into()
}

/// One `=== name` block: the snippet, the expected `to_sexp()` and the expected
/// anonymous tokens (which `to_sexp()` leaves out, yet `>` vs `>>` or `;` vs `&`
/// live only there).
#[derive(Debug, Clone)]
struct Block {
    name: String,
    /// Line number of the `===` header, for messages.
    line: usize,
    snippet: String,
    sexp: String,
    /// `None` when the block has no `--- tokens` section (then tokens are not checked).
    tokens: Option<String>,
}

/// Parses a pin file. Lines before the first `===` are a free header (kept on
/// update). A block is `=== name`, the snippet lines, `---`, the tree lines, and an
/// optional `--- tokens` section with one line of JSON-quoted anonymous tokens.
/// The snippet is its lines joined by `\n`, without a trailing newline: the form in
/// which an agent sends a command.
fn parse_pin_file(text: &str, path: &Path) -> (String, Vec<Block>) {
    #[derive(PartialEq)]
    enum State {
        Header,
        Snippet,
        Sexp,
        Tokens,
    }
    let mut header = String::new();
    let mut blocks: Vec<Block> = Vec::new();
    let mut state = State::Header;
    let mut snippet: Vec<&str> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix("=== ") {
            if let Some(b) = blocks.last_mut() {
                assert!(
                    state != State::Snippet,
                    "{}:{}: block `{}` has no `---`",
                    path.display(),
                    b.line,
                    b.name
                );
            }
            blocks.push(Block {
                name: name.trim().to_string(),
                line: i + 1,
                snippet: String::new(),
                sexp: String::new(),
                tokens: None,
            });
            snippet.clear();
            state = State::Snippet;
            continue;
        }
        match state {
            State::Header => {
                header.push_str(line);
                header.push('\n');
            }
            State::Snippet if line == "---" => {
                let b = blocks.last_mut().unwrap();
                b.snippet = snippet.join("\n");
                state = State::Sexp;
            }
            State::Snippet => snippet.push(line),
            State::Sexp if line == "--- tokens" => {
                blocks.last_mut().unwrap().tokens = Some(String::new());
                state = State::Tokens;
            }
            State::Sexp => {
                let b = blocks.last_mut().unwrap();
                b.sexp.push_str(line);
                b.sexp.push('\n');
            }
            State::Tokens => {
                let t = blocks.last_mut().unwrap().tokens.get_or_insert_default();
                t.push_str(line);
                t.push('\n');
            }
        }
    }
    assert!(
        state != State::Snippet,
        "{}: last block has no `---`",
        path.display()
    );
    (header, blocks)
}

/// Whitespace-insensitive form of an s-expression: runs collapsed, none after `(`
/// or before `)`.
fn normalize(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("( ", "(").replace(" )", ")")
}

/// The anonymous tokens of the tree in document order, JSON-quoted, with MISSING
/// ones marked. ERROR nodes are named and show in the s-expression.
fn anonymous_tokens(root: Node<'_>) -> String {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if !node.is_named() {
            let quoted = serde_json::to_string(node.kind()).unwrap();
            out.push(if node.is_missing() {
                format!("MISSING:{quoted}")
            } else {
                quoted
            });
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out.join(" ")
}

/// A minimal s-expression tree, only to pretty-print `to_sexp()` output.
enum Sexp {
    Atom(String),
    List(Vec<Sexp>),
}

fn read_sexp(s: &str) -> Vec<Sexp> {
    fn tokens(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut in_quote = false;
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if in_quote {
                cur.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                } else if c == '"' {
                    in_quote = false;
                }
                continue;
            }
            match c {
                '"' => {
                    in_quote = true;
                    cur.push(c);
                }
                '(' | ')' => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    out.push(c.to_string());
                }
                c if c.is_whitespace() => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }
    fn build(toks: &[String], pos: &mut usize) -> Vec<Sexp> {
        let mut items = Vec::new();
        while let Some(t) = toks.get(*pos) {
            *pos += 1;
            match t.as_str() {
                "(" => items.push(Sexp::List(build(toks, pos))),
                ")" => return items,
                _ => items.push(Sexp::Atom(t.clone())),
            }
        }
        items
    }
    let toks = tokens(s);
    let mut pos = 0;
    build(&toks, &mut pos)
}

fn flat(items: &[Sexp]) -> String {
    let mut s = String::new();
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        match it {
            Sexp::Atom(a) => s.push_str(a),
            Sexp::List(l) => {
                s.push('(');
                s.push_str(&flat(l));
                s.push(')');
            }
        }
    }
    s
}

/// Indents a list whose one-line form is too wide: the head stays on the first line,
/// each child (with its `field:` label) goes on its own line.
fn pretty(items: &[Sexp], indent: usize, out: &mut String) {
    let one_line = format!("({})", flat(items));
    if indent + one_line.len() <= 88 {
        out.push_str(&one_line);
        return;
    }
    out.push('(');
    let mut iter = items.iter().peekable();
    if let Some(Sexp::Atom(head)) = iter.peek() {
        out.push_str(head);
        iter.next();
    }
    let pad = " ".repeat(indent + 2);
    let mut label: Option<&str> = None;
    for it in iter {
        match it {
            Sexp::Atom(a) if a.ends_with(':') => label = Some(a),
            Sexp::Atom(a) => {
                let _ = write!(out, "\n{pad}{a}");
            }
            Sexp::List(l) => {
                out.push('\n');
                out.push_str(&pad);
                let mut width = indent + 2;
                if let Some(lb) = label.take() {
                    out.push_str(lb);
                    out.push(' ');
                    width += lb.len() + 1;
                }
                pretty(l, width, out);
            }
        }
    }
    out.push(')');
}

fn pretty_sexp(s: &str) -> String {
    let mut out = String::new();
    for (i, it) in read_sexp(s).iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match it {
            Sexp::Atom(a) => out.push_str(a),
            Sexp::List(l) => pretty(l, 0, &mut out),
        }
    }
    out
}

fn parse(parser: &mut Parser, snippet: &str) -> tree_sitter::Tree {
    parser
        .parse(snippet, None)
        .expect("the parser returned no tree")
}

fn pin_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(grammar_dir())
        .expect("grammars-tests/ is missing")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "txt")
                && p.file_name().is_some_and(|n| n != "kinds.txt")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn snippets_parse_to_the_pinned_trees() {
    let update = std::env::var_os("UPDATE_GRAMMAR_TESTS").is_some_and(|v| v == "1");
    let mut parser = Parser::new();
    parser.set_language(&language()).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    let files = pin_files();
    assert!(!files.is_empty(), "no pin files in grammars-tests/");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let (header, blocks) = parse_pin_file(&text, &path);
        // errors.txt pins what the walker must reject; every other file what it must
        // accept. `has_error` is the walker's check, and it must see MISSING nodes too.
        let expect_error = path.file_name().is_some_and(|n| n == "errors.txt");
        let mut rewritten = header;
        for b in &blocks {
            count += 1;
            let tree = parse(&mut parser, &b.snippet);
            let actual = tree.root_node().to_sexp();
            let tokens = anonymous_tokens(tree.root_node());
            if tree.root_node().has_error() != expect_error {
                failures.push(format!(
                    "{}:{}: `{}`: has_error() is {}, the file says it must be {expect_error}\nsnippet:\n{}\ntree:\n{}\n",
                    path.display(),
                    b.line,
                    b.name,
                    tree.root_node().has_error(),
                    b.snippet,
                    pretty_sexp(&actual)
                ));
            }
            if update {
                let _ = write!(
                    rewritten,
                    "=== {}\n{}\n---\n{}\n--- tokens\n{}\n\n",
                    b.name,
                    b.snippet,
                    pretty_sexp(&actual),
                    tokens
                );
                continue;
            }
            let sexp_ok = normalize(&b.sexp) == normalize(&actual);
            let tokens_ok = b
                .tokens
                .as_ref()
                .is_none_or(|t| normalize(t) == normalize(&tokens));
            if !(sexp_ok && tokens_ok) {
                failures.push(format!(
                    "{}:{}: `{}`\nsnippet:\n{}\nexpected tree:\n{}\nactual tree:\n{}\nexpected tokens: {}\nactual tokens:   {}\n",
                    path.display(),
                    b.line,
                    b.name,
                    b.snippet,
                    b.sexp.trim_end(),
                    pretty_sexp(&actual),
                    b.tokens.as_deref().unwrap_or("(not pinned)").trim(),
                    tokens
                ));
            }
        }
        if update {
            std::fs::write(&path, rewritten.trim_end().to_string() + "\n").unwrap();
        }
    }
    assert!(
        count >= 45,
        "only {count} grammar pins; the walker needs at least 45"
    );
    assert!(
        failures.is_empty(),
        "{} grammar pin(s) changed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every snippet must have a name that is unique across files, so a failure is
/// unambiguous and the lead can cite it.
#[test]
fn pin_names_are_unique() {
    let mut seen = std::collections::BTreeMap::new();
    for path in pin_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for b in parse_pin_file(&text, &path).1 {
            let here = format!("{}:{}", path.display(), b.line);
            if let Some(prev) = seen.insert(b.name.clone(), here.clone()) {
                panic!("pin `{}` appears twice: {prev} and {here}", b.name);
            }
        }
    }
}

/// Every kind the walker matches on exists in the grammar: a renamed kind would make a
/// `match` arm dead without any compile error (STYLE.md §3).
#[test]
fn walker_kinds_exist_in_the_grammar() {
    let lang = language();
    let path = grammar_dir().join("kinds.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (what, name) = t.split_once(' ').unwrap_or_else(|| {
            panic!(
                "{}:{}: expected `node|token|field NAME`",
                path.display(),
                i + 1
            )
        });
        let name = name.trim();
        let ok = match what {
            "node" => lang.id_for_node_kind(name, true) != 0,
            // Tokens are written JSON-quoted so `\n` and `"` can be listed.
            "token" => {
                let tok: String = serde_json::from_str(name).unwrap_or_else(|e| {
                    panic!(
                        "{}:{}: token must be a JSON string: {e}",
                        path.display(),
                        i + 1
                    )
                });
                lang.id_for_node_kind(&tok, false) != 0
            }
            "field" => lang.field_id_for_name(name).is_some(),
            other => panic!("{}:{}: unknown entry kind `{other}`", path.display(), i + 1),
        };
        checked += 1;
        if !ok {
            missing.push(format!("{}:{}: {what} `{name}`", path.display(), i + 1));
        }
    }
    assert!(checked > 0, "kinds.txt lists nothing");
    assert!(
        missing.is_empty(),
        "not in tree-sitter-bash:\n{}",
        missing.join("\n")
    );
}

/// The check above must be able to fail: a made-up name is not a kind.
#[test]
fn unknown_kinds_are_rejected() {
    let lang = language();
    assert_eq!(lang.id_for_node_kind("no_such_statement", true), 0);
    assert!(lang.field_id_for_name("no_such_field").is_none());
    assert_ne!(lang.id_for_node_kind("command", true), 0);
}

/// The walker's own constants (`src/ast/kinds.rs`), not just the list above: every node
/// kind and field name it matches on exists in the grammar it is built against.
#[test]
fn walker_constants_exist_in_the_grammar() {
    use khaelor_perm::analysis::ast::kinds::{ALL_FIELDS, ALL_KINDS};
    let lang = language();
    let missing: Vec<String> = ALL_KINDS
        .iter()
        .filter(|k| lang.id_for_node_kind(k, true) == 0)
        .map(|k| format!("node `{k}`"))
        .chain(
            ALL_FIELDS
                .iter()
                .filter(|f| lang.field_id_for_name(f).is_none())
                .map(|f| format!("field `{f}`")),
        )
        .collect();
    assert!(missing.is_empty(), "not in tree-sitter-bash: {missing:?}");
}
