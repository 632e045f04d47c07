//! The parsed tree, copied once into flat arrays the analysis reads.
//!
//! tree-sitter-bash's tree holds many hidden nodes, and every step of a tree-sitter
//! cursor passes through them: a sibling step costs several hundred instructions, and
//! `Node::parent` descends again from the root. The analysis reads each node several
//! times (the checks for misread constructs, the walk, the evaluator, each command's
//! ancestors), so it reads a copy instead: one cursor walk records every visible node
//! with its kind, field, flags, byte range and its parent, children and siblings as
//! indices. `Node` here answers the same questions as `tree_sitter::Node`, by array
//! lookups, with the same answers in every tree the analysis walks (the unit tests
//! compare them node by node over the corpora). In a tree with other errors, which is
//! only searched for its first error, tree-sitter's `next_sibling` skips a zero-width
//! MISSING node and this one does not.
//!
//! A plain command (one command of literal words, see `plain`) gets the same arrays
//! without a parse: `Syntax::plain` writes the one shape tree-sitter gives such a
//! text, and the unit tests below hold it to tree-sitter's tree node by node.

use std::ops::Range;

use super::kinds::{self, KindName};
use super::plain::Piece;

/// No node (the root's parent, a last child's next sibling).
const NONE: u32 = u32::MAX;

const NAMED: u8 = 1;
const ERROR: u8 = 2;
const MISSING: u8 = 4;
const HAS_ERROR: u8 = 8;

#[derive(Debug, Clone)]
struct Entry {
    kind: &'static str,
    /// The field this node fills in its parent (`name`, `body`, …).
    field: Option<&'static str>,
    flags: u8,
    start: usize,
    end: usize,
    parent: u32,
    first_child: u32,
    last_child: u32,
    next: u32,
    prev: u32,
    child_count: u32,
    named_child_count: u32,
}

/// Read in place of a node that does not exist (never: every index handed out is one
/// of the arena's), so that no lookup can panic.
static NO_ENTRY: Entry = Entry {
    kind: "",
    field: None,
    flags: 0,
    start: 0,
    end: 0,
    parent: NONE,
    first_child: NONE,
    last_child: NONE,
    next: NONE,
    prev: NONE,
    child_count: 0,
    named_child_count: 0,
};

/// Every visible node of one tree, in pre-order (the root first).
#[derive(Debug)]
pub(crate) struct Syntax {
    nodes: Vec<Entry>,
}

impl Syntax {
    /// Copies `tree` with one walk of a cursor.
    pub(crate) fn new(tree: &tree_sitter::Tree) -> Syntax {
        let mut nodes: Vec<Entry> = Vec::with_capacity(tree.root_node().descendant_count());
        let mut cursor = tree.walk();
        let mut current = push(&mut nodes, &cursor, NONE);
        loop {
            if cursor.goto_first_child() {
                current = push(&mut nodes, &cursor, current);
                continue;
            }
            loop {
                let parent = entry(&nodes, current).parent;
                if cursor.goto_next_sibling() {
                    current = push(&mut nodes, &cursor, parent);
                    break;
                }
                if parent == NONE || !cursor.goto_parent() {
                    return Syntax { nodes };
                }
                current = parent;
            }
        }
    }

    /// The tree tree-sitter gives a plain command (see `plain`), built without parsing:
    /// `None` when `src` is not one.
    pub(crate) fn plain(src: &str) -> Option<Syntax> {
        let plain = super::plain::read(src)?;
        let mut nodes = Vec::with_capacity(4 + 4 * plain.arguments.len());
        let named = |kind, field, range| Shape {
            kind,
            field,
            flags: NAMED,
            range,
        };
        let end = plain
            .arguments
            .last()
            .map_or(plain.name.end, |(_, r)| r.end);
        let program = push_shape(
            &mut nodes,
            named(kinds::PROGRAM, None, plain.name.start..src.len()),
            NONE,
        );
        let command = push_shape(
            &mut nodes,
            named(kinds::COMMAND, None, plain.name.start..end),
            program,
        );
        let name = push_shape(
            &mut nodes,
            named(
                kinds::COMMAND_NAME,
                Some(kinds::FIELD_NAME),
                plain.name.clone(),
            ),
            command,
        );
        push_shape(&mut nodes, named(kinds::WORD, None, plain.name), name);
        for (piece, range) in plain.arguments {
            let argument = Some(kinds::FIELD_ARGUMENT);
            let kind = match piece {
                Piece::Word => kinds::WORD,
                Piece::Number => kinds::NUMBER,
                Piece::RawString => kinds::RAW_STRING,
                Piece::String => kinds::STRING,
            };
            let node = push_shape(&mut nodes, named(kind, argument, range.clone()), command);
            if piece == Piece::String {
                let quote = |at: usize| Shape {
                    kind: "\"",
                    field: None,
                    flags: 0,
                    range: at..at + 1,
                };
                push_shape(&mut nodes, quote(range.start), node);
                // Something between the quotes (never blanks alone: see `plain`).
                if range.len() > 2 {
                    let inside = range.start + 1..range.end - 1;
                    push_shape(&mut nodes, named(kinds::STRING_CONTENT, None, inside), node);
                }
                push_shape(&mut nodes, quote(range.end - 1), node);
            }
        }
        Some(Syntax { nodes })
    }

    pub(crate) fn root(&self) -> Node<'_> {
        Node {
            syntax: self,
            index: 0,
        }
    }

    fn node(&self, index: u32) -> Option<Node<'_>> {
        (index != NONE).then_some(Node {
            syntax: self,
            index,
        })
    }
}

fn entry(nodes: &[Entry], index: u32) -> &Entry {
    usize::try_from(index)
        .ok()
        .and_then(|i| nodes.get(i))
        .unwrap_or(&NO_ENTRY)
}

fn entry_mut(nodes: &mut [Entry], index: u32) -> Option<&mut Entry> {
    usize::try_from(index).ok().and_then(|i| nodes.get_mut(i))
}

/// Records the cursor's node as the last child of `parent`, and returns its index.
fn push(nodes: &mut Vec<Entry>, cursor: &tree_sitter::TreeCursor<'_>, parent: u32) -> u32 {
    let node = cursor.node();
    let mut flags = 0;
    for (set, flag) in [
        (node.is_named(), NAMED),
        (node.is_error(), ERROR),
        (node.is_missing(), MISSING),
        (node.has_error(), HAS_ERROR),
    ] {
        if set {
            flags |= flag;
        }
    }
    let shape = Shape {
        kind: node.kind_name(),
        field: cursor.field_name(),
        flags,
        range: node.byte_range(),
    };
    push_shape(nodes, shape, parent)
}

/// What one node is, apart from where it sits in the tree.
struct Shape {
    kind: &'static str,
    field: Option<&'static str>,
    flags: u8,
    range: Range<usize>,
}

/// Records a node as the last child of `parent`, and returns its index.
fn push_shape(nodes: &mut Vec<Entry>, shape: Shape, parent: u32) -> u32 {
    let index = u32::try_from(nodes.len()).unwrap_or(NONE);
    let named = shape.flags & NAMED != 0;
    let mut prev = NONE;
    if let Some(p) = entry_mut(nodes, parent) {
        prev = p.last_child;
        if p.first_child == NONE {
            p.first_child = index;
        }
        p.last_child = index;
        p.child_count += 1;
        if named {
            p.named_child_count += 1;
        }
    }
    if let Some(before) = entry_mut(nodes, prev) {
        before.next = index;
    }
    nodes.push(Entry {
        kind: shape.kind,
        field: shape.field,
        flags: shape.flags,
        start: shape.range.start,
        end: shape.range.end,
        parent,
        first_child: NONE,
        last_child: NONE,
        next: NONE,
        prev,
        child_count: 0,
        named_child_count: 0,
    });
    index
}

/// One node of a [`Syntax`]: the questions the analysis asks of `tree_sitter::Node`.
#[derive(Clone, Copy)]
pub(crate) struct Node<'t> {
    syntax: &'t Syntax,
    index: u32,
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.syntax, other.syntax) && self.index == other.index
    }
}

impl Eq for Node<'_> {}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{{Node {} {}..{}}}",
            self.kind_name(),
            self.start_byte(),
            self.end_byte()
        )
    }
}

impl KindName for Node<'_> {
    fn kind_name(&self) -> &'static str {
        self.entry().kind
    }
}

impl<'t> Node<'t> {
    fn entry(&self) -> &'t Entry {
        entry(&self.syntax.nodes, self.index)
    }

    fn flag(&self, flag: u8) -> bool {
        self.entry().flags & flag != 0
    }

    /// Unique among the nodes of one tree.
    pub(crate) fn id(&self) -> usize {
        usize::try_from(self.index).unwrap_or(usize::MAX)
    }

    pub(crate) fn start_byte(&self) -> usize {
        self.entry().start
    }

    pub(crate) fn end_byte(&self) -> usize {
        self.entry().end
    }

    pub(crate) fn byte_range(&self) -> Range<usize> {
        self.start_byte()..self.end_byte()
    }

    pub(crate) fn is_named(&self) -> bool {
        self.flag(NAMED)
    }

    pub(crate) fn is_error(&self) -> bool {
        self.flag(ERROR)
    }

    pub(crate) fn is_missing(&self) -> bool {
        self.flag(MISSING)
    }

    /// Whether this node or one below it is an ERROR or MISSING node.
    pub(crate) fn has_error(&self) -> bool {
        self.flag(HAS_ERROR)
    }

    pub(crate) fn parent(&self) -> Option<Node<'t>> {
        self.syntax.node(self.entry().parent)
    }

    pub(crate) fn next_sibling(&self) -> Option<Node<'t>> {
        self.syntax.node(self.entry().next)
    }

    pub(crate) fn prev_sibling(&self) -> Option<Node<'t>> {
        self.syntax.node(self.entry().prev)
    }

    pub(crate) fn child_count(&self) -> usize {
        usize::try_from(self.entry().child_count).unwrap_or(0)
    }

    pub(crate) fn named_child_count(&self) -> usize {
        usize::try_from(self.entry().named_child_count).unwrap_or(0)
    }

    pub(crate) fn child(&self, i: usize) -> Option<Node<'t>> {
        self.all_children().nth(i)
    }

    pub(crate) fn named_child(&self, i: usize) -> Option<Node<'t>> {
        self.all_children().filter(|c| c.is_named()).nth(i)
    }

    /// The first child in the field `name`.
    pub(crate) fn child_by_field_name(&self, name: &str) -> Option<Node<'t>> {
        self.all_children().find(|c| c.entry().field == Some(name))
    }

    /// A cursor for [`Node::children`] and its kin, as `tree_sitter::Node::walk` gives;
    /// it also walks the tree below this node.
    pub(crate) fn walk(&self) -> Cursor<'t> {
        Cursor {
            top: *self,
            at: *self,
        }
    }

    pub(crate) fn children(&self, _cursor: &mut Cursor<'t>) -> Children<'t> {
        self.all_children()
    }

    pub(crate) fn named_children(&self, _cursor: &mut Cursor<'t>) -> NamedChildren<'t> {
        NamedChildren {
            all: self.all_children(),
            left: self.named_child_count(),
        }
    }

    pub(crate) fn children_by_field_name<'n>(
        &self,
        name: &'n str,
        _cursor: &mut Cursor<'t>,
    ) -> impl Iterator<Item = Node<'t>> + use<'t, 'n> {
        self.all_children()
            .filter(move |c| c.entry().field == Some(name))
    }

    fn all_children(&self) -> Children<'t> {
        let e = self.entry();
        Children {
            syntax: self.syntax,
            next: e.first_child,
            left: usize::try_from(e.child_count).unwrap_or(0),
        }
    }
}

/// The children of a node, in order.
pub(crate) struct Children<'t> {
    syntax: &'t Syntax,
    next: u32,
    left: usize,
}

impl<'t> Iterator for Children<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        let node = self.syntax.node(self.next)?;
        self.next = node.entry().next;
        self.left = self.left.saturating_sub(1);
        Some(node)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Children<'_> {}

/// The named children of a node, in order.
pub(crate) struct NamedChildren<'t> {
    all: Children<'t>,
    left: usize,
}

impl<'t> Iterator for NamedChildren<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        let node = self.all.find(|c| c.is_named())?;
        self.left = self.left.saturating_sub(1);
        Some(node)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for NamedChildren<'_> {}

/// A pre-order walk below one node, as `tree_sitter::TreeCursor` moves.
pub(crate) struct Cursor<'t> {
    /// The node the cursor was made for: it does not move above it.
    top: Node<'t>,
    at: Node<'t>,
}

impl<'t> Cursor<'t> {
    pub(crate) fn node(&self) -> Node<'t> {
        self.at
    }

    pub(crate) fn goto_first_child(&mut self) -> bool {
        let child = self.at.syntax.node(self.at.entry().first_child);
        self.go(child)
    }

    pub(crate) fn goto_next_sibling(&mut self) -> bool {
        let next = self.at.next_sibling().filter(|_| self.at != self.top);
        self.go(next)
    }

    pub(crate) fn goto_parent(&mut self) -> bool {
        let parent = self.at.parent().filter(|_| self.at != self.top);
        self.go(parent)
    }

    fn go(&mut self, to: Option<Node<'t>>) -> bool {
        match to {
            Some(n) => {
                self.at = n;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use std::collections::HashMap;
    use std::path::Path;

    use super::*;

    /// Texts whose trees hold errors, missing nodes, fields inside hidden nodes,
    /// here-documents and every compound the walk reads.
    const EDGES: &[&str] = &[
        "exec 3<>/dev/tcp/h/80",
        "if true; then",
        "echo \"unterminated",
        "cat <<EOF\nx $(id) `a`\nEOF\necho after",
        "cat <<-'E' | grep x && ls\n\tbody\n\tE",
        "a | b | c && d; e || f & g",
        "echo $(( 1 + ))",
        "case x in a|b) echo a ;; *) ;& esac",
        "f() { :; } ; function g { f; } > out",
        "echo ${x:-y} ${#a[@]} ${a/b/c} $(ls) `id` <(cat) >(tee)",
        "[[ a =~ ^b$ && -f c ]] || [ -d d ]",
        "for i in 1 2; do echo $i; done; for ((i=0;i<3;i++)); do :; done",
        "x=1 y=(a b) cmd >out 2>&1 <in <<< here",
        "while read -r l; do echo \"$l\"; done < f",
        "! time { a; b; } | c",
        "echo é \u{1}\r x",
        "declare -A m=([k]=v) ; local x; export Y=1; unset z",
        "select w in a b; do break; done",
        "( cd /tmp && ls ) ; { pwd; }",
        "echo 'a' $'b\\n' $\"c\" d\\ e",
        ")",
        "&&",
        "",
        "# only a comment",
    ];

    fn corpus() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out: Vec<String> = EDGES.iter().map(|s| s.to_string()).collect();
        for name in ["tldr.txt", "nl2bash.txt"] {
            match std::fs::read_to_string(dir.join("../shared/corpus").join(name)) {
                Ok(text) => out.extend(text.lines().map(str::to_string)),
                Err(_) if std::env::var_os("CI").is_some() => {
                    panic!("{name}: corpus missing under CI")
                }
                Err(_) => println!("skipping {name}: not found"),
            }
        }
        for entry in std::fs::read_dir(dir.join("fixtures")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                if let Ok(serde_json::Value::Object(row)) = serde_json::from_str(line)
                    && let Some(serde_json::Value::String(c)) = row.get("command")
                {
                    out.push(c.clone());
                }
            }
        }
        out
    }

    /// Every node tree-sitter gives below `node`, pre-order.
    fn ts_nodes<'t>(node: tree_sitter::Node<'t>, out: &mut Vec<tree_sitter::Node<'t>>) {
        out.push(node);
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            ts_nodes(child, out);
        }
    }

    fn fields() -> Vec<&'static str> {
        let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
        let fields: Vec<&'static str> = (1..=language.field_count())
            .filter_map(|id| u16::try_from(id).ok())
            .filter_map(|id| language.field_name_for_id(id))
            .collect();
        assert!(fields.contains(&"body") && fields.contains(&"value"));
        fields
    }

    /// Holds `syntax` to tree-sitter's `tree` of `text`: every question the analysis
    /// asks, for every node. Returns the number of nodes compared.
    fn assert_same(
        text: &str,
        tree: &tree_sitter::Tree,
        syntax: &Syntax,
        fields: &[&str],
    ) -> usize {
        // The trees the analysis walks: those without errors, and those whose only
        // errors are the grammar's reading of `<>`.
        let walked =
            !syntax.root().has_error() || super::super::only_read_write_redirects(syntax.root());
        let mut theirs = Vec::new();
        ts_nodes(tree.root_node(), &mut theirs);
        assert_eq!(theirs.len(), syntax.nodes.len(), "{text:?}");
        assert_eq!(
            theirs.len(),
            tree.root_node().descendant_count(),
            "{text:?}"
        );
        let index: HashMap<usize, u32> = theirs
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id(), u32::try_from(i).unwrap()))
            .collect();
        let ours = |n: Option<tree_sitter::Node<'_>>| n.map(|n| index[&n.id()]);
        let mine = |n: Option<Node<'_>>| n.map(|n| n.index);
        for (i, t) in theirs.iter().enumerate() {
            let n = syntax.node(u32::try_from(i).unwrap()).unwrap();
            let at = format!("{text:?}, node {i} ({})", t.kind());
            assert_eq!(n.kind_name(), t.kind_name(), "{at}");
            assert_eq!(n.byte_range(), t.byte_range(), "{at}");
            assert_eq!(
                (n.is_named(), n.is_error(), n.is_missing(), n.has_error()),
                (t.is_named(), t.is_error(), t.is_missing(), t.has_error()),
                "{at}"
            );
            assert_eq!(mine(n.parent()), ours(t.parent()), "{at}: parent");
            // A tree with other errors is only searched for its first error and
            // for the `<>` reading, which asks an ERROR node for the one before it.
            if walked || n.is_error() {
                assert_eq!(mine(n.prev_sibling()), ours(t.prev_sibling()), "{at}");
            }
            if walked {
                assert_eq!(mine(n.next_sibling()), ours(t.next_sibling()), "{at}");
            }
            assert_eq!(n.child_count(), t.child_count(), "{at}");
            assert_eq!(n.named_child_count(), t.named_child_count(), "{at}");
            let mut tc = t.walk();
            let mut nc = n.walk();
            let kids: Vec<_> = t.children(&mut tc).map(|c| ours(Some(c))).collect();
            let mine_kids: Vec<_> = n.children(&mut nc).map(|c| Some(c.index)).collect();
            assert_eq!(mine_kids, kids, "{at}: children");
            assert_eq!(n.children(&mut nc).len(), kids.len(), "{at}");
            let named: Vec<_> = t.named_children(&mut tc).map(|c| ours(Some(c))).collect();
            let mine_named: Vec<_> = n.named_children(&mut nc).map(|c| Some(c.index)).collect();
            assert_eq!(mine_named, named, "{at}: named children");
            assert_eq!(n.named_children(&mut nc).len(), named.len(), "{at}");
            for (k, c) in kids.iter().enumerate() {
                assert_eq!(mine(n.child(k)), *c, "{at}: child {k}");
            }
            for (k, c) in named.iter().enumerate() {
                assert_eq!(mine(n.named_child(k)), *c, "{at}: named child {k}");
            }
            for field in fields.iter().filter(|_| walked) {
                assert_eq!(
                    mine(n.child_by_field_name(field)),
                    ours(t.child_by_field_name(field)),
                    "{at}: field {field}"
                );
                let all: Vec<_> = t
                    .children_by_field_name(field, &mut tc)
                    .map(|c| ours(Some(c)))
                    .collect();
                let mine_all: Vec<_> = n
                    .children_by_field_name(field, &mut nc)
                    .map(|c| Some(c.index))
                    .collect();
                assert_eq!(mine_all, all, "{at}: children in field {field}");
            }
        }
        theirs.len()
    }

    /// The copy answers every question the analysis asks as tree-sitter does, for every
    /// node of every text.
    #[test]
    fn the_copy_answers_as_tree_sitter_does() {
        let fields = fields();
        let texts = corpus();
        let mut checked = 0usize;
        for text in &texts {
            let Ok(tree) = super::super::parse(text) else {
                continue;
            };
            checked += assert_same(text, &tree, &Syntax::new(&tree), &fields);
        }
        println!("{} texts, {checked} nodes", texts.len());
        assert!(checked > 100_000 || std::env::var_os("CI").is_none());
    }

    /// The tree built for a plain command without parsing is tree-sitter's, node for
    /// node, for every text of the corpora that is one.
    #[test]
    fn plain_trees_are_tree_sitters_over_the_corpora() {
        let fields = fields();
        let mut plain = 0usize;
        let mut nodes = 0usize;
        for text in corpus() {
            let Some(syntax) = Syntax::plain(&text) else {
                continue;
            };
            let tree = super::super::parse(&text).unwrap();
            nodes += assert_same(&text, &tree, &syntax, &fields);
            plain += 1;
        }
        println!("{plain} plain commands, {nodes} nodes");
        assert!(plain > 20_000 || std::env::var_os("CI").is_none());
    }

    /// Pieces the plain reading must place right, and ones just outside it, glued or
    /// apart, in every position: keywords and declaration builtins, numbers and
    /// near-numbers, assignments, tildes, quotes and what sits around them.
    const PIECES: &[&str] = &[
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
        "do", "done", "in", "function", "time", "coproc", "declare", "typeset", "export",
        "readonly", "local", "unset", "unsetenv", "let", "eval", "exec", "test", "alias",
        "command", "builtin", "echo", "ls", "[", "]", "[[", "!", "{", "}", "a", "-a", "--x=y", "=",
        "==", "=x", "x=", "a=b", "a+=b", "~", "~/x", "a~", "~+", "~-", "%", "%1", "@", "@x", "+",
        "+x", ",", ":", "::", ".", "..", "/", "-", "--", "-0", "0", "10", "-10", "007", "1x", "x1",
        "1.5", "-1.5", "0x1f", "1e5", "9#z", "_", "__x", "''", "'a b'", "'$x'", "'\"'", "'#'",
        "\"\"", "\"a b\"", "\" \"", "\"'\"", "\"a#b\"", "\"%@~\"", "\"x=y\"", "\"-5\"", "\" \"",
        "\"\t\"", "\"  a \"", "-eq", "-f", "-z", "-n", "-o", "-nt", "=~", "==x", "x==", "!=", "a!",
        "x%", "a%b", "x@", "if%", "x+", "x,", "x:", "x~", "x.", "x/", "x-", "a:b", "a,b", "a+b",
        "a/b", "a.b", "a-b", ":x", "x+=", "-x-", "+=", "*.rs", "src/*", "a?b", "?", "**/*.rs",
        "a*=b", "%Y", "+%Y-%m", "x@y.com", "@(a)", "*(a)", "?(a)", "!(a)", "[ab]", "a[1]", "$x",
        "*", "#", ";", "\\", "\"$\"",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        #[test]
        fn plain_trees_are_tree_sitters_over_generated_texts(
            parts in proptest::collection::vec(
                (
                    proptest::sample::select(PIECES),
                    proptest::sample::select(&[" ", "  ", "\t", "", " \t"][..]),
                ),
                1..7,
            ),
            lead in proptest::sample::select(&["", " ", "\t "][..]),
        ) {
            let text: String = std::iter::once(lead.to_string())
                .chain(parts.iter().map(|(p, s)| format!("{p}{s}")))
                .collect();
            if let Some(syntax) = Syntax::plain(&text) {
                let tree = super::super::parse(&text).unwrap();
                assert_same(&text, &tree, &syntax, &fields());
            }
        }

        /// Words of random characters, each after an optional keyword.
        #[test]
        fn plain_trees_are_tree_sitters_over_random_words(
            text in concat!(
                "[ \t]{0,2}",
                "(|if|fi|for|in|do|done|time|export|local|case|esac|select|function|coproc|[-])",
                "([a-zA-Z0-9_./,:+=~%@*?-]{0,4}|'[ -~]{0,3}'|\"[ -~]{0,3}\")",
                "([ \t]{0,2}(|in|do|time|[-]|==)",
                "([a-zA-Z0-9_./,:+=~%@*?-]{1,4}|'[ -~]{0,3}'|\"[ -~]{0,3}\")){0,5}",
                "[ \t]{0,2}",
            ),
        ) {
            if let Some(syntax) = Syntax::plain(&text) {
                let tree = super::super::parse(&text).unwrap();
                assert_same(&text, &tree, &syntax, &fields());
            }
        }
    }

    /// A cursor moves below the node it was made for and never past it, as
    /// tree-sitter's does: the pipeline's sibling `;` is not reached.
    #[test]
    fn a_cursor_stays_below_its_node() {
        let tree = super::super::parse("a | b; c").unwrap();
        let syntax = Syntax::new(&tree);
        let pipeline = syntax.root().child(0).unwrap();
        assert_eq!(pipeline.kind_name(), "pipeline");
        assert_eq!(pipeline.next_sibling().unwrap().kind_name(), ";");
        let mut cursor = pipeline.walk();
        let mut kinds = Vec::new();
        assert!(cursor.goto_first_child());
        kinds.push(cursor.node().kind_name());
        while cursor.goto_next_sibling() {
            kinds.push(cursor.node().kind_name());
        }
        assert_eq!(kinds, ["command", "|", "command"]);
        assert!(cursor.goto_first_child());
        assert_eq!(cursor.node().kind_name(), "command_name");
        assert!(cursor.goto_parent() && cursor.goto_parent());
        assert_eq!(cursor.node(), pipeline);
        assert!(!cursor.goto_parent());
        assert!(!cursor.goto_next_sibling());
        assert_eq!(cursor.node(), pipeline);
    }
}
