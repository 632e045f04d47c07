//! The static partial evaluator over the tree: what the command computes
//! from its own text, as bash code to analyse again.
//!
//! Owns the interpretation of the tree with values: variables assigned earlier in the
//! command (sequentially; branches, loops and subshells make what they assign unknown),
//! `${…}` operators, `$(( ))`, substitutions of pure producers, brace expansion,
//! `$IFS`, aliases and functions defined in the command, code fed to a shell (pipes,
//! here-documents, `<( )`, scripts the command writes and runs), `xargs` fed by a
//! producer, command names given as globs and the shell-outs of interpreter
//! one-liners. It returns bash code only: the *residual* (the command with every word
//! whose value is known replaced by that value, quoted) and the code fed to shells.
//! The engine parses that code again like a `sh -c` string, so its commands go through
//! the same effects and the same floor and can only add requests. Pure: nothing runs,
//! no file is read; a budget hit leaves the rest unknown.

use std::collections::HashMap;
use std::ops::Range;

use super::syntax::Node;

use super::kinds::{self as k, KindName};
use super::walk::text::{decode_ansi_c, unescape_double_quoted};
use crate::shell::eval::fields::{self, Chars, DEFAULT_IFS, Quoting, push_str};
use crate::shell::eval::{Budget, arith, interp, params, producers};
use crate::shell::ir::{Cwd, Evaluation, Feed, Plan};

/// How many risk notes one evaluation adds at most.
const MAX_NOTES: usize = 6;
/// How many names a glob in command position may stand for.
const MAX_GLOB_NAMES: usize = 16;

/// Programs whose name alone makes a glob in command position worth resolving: the
/// table's names plus the floor's catastrophes that are no table entry.
const FLOOR_NAMES: &[&str] = &[
    "mkfs",
    "mkfs.ext2",
    "mkfs.ext3",
    "mkfs.ext4",
    "mkfs.xfs",
    "mkfs.btrfs",
    "mkfs.vfat",
    "mkfs.fat",
    "mkfs.ntfs",
    "mke2fs",
    "mkswap",
    "wipefs",
    "shred",
    "dd",
    "rm",
    "chmod",
    "chown",
    "chgrp",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "init",
    "telinit",
    "systemctl",
    "kill",
    "killall",
    "pkill",
    "fdisk",
    "sfdisk",
    "parted",
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "rsync",
    "git",
    "sudo",
    "su",
    "mv",
    "cp",
    "truncate",
    "crontab",
    "passwd",
    "useradd",
    "userdel",
    "iptables",
    "mount",
    "umount",
];

/// Builtins that may assign variables (or change how words expand): after one, every
/// value the evaluator knew is unknown.
const ASSIGNERS: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "let",
    "unset",
    "eval",
    "source",
    ".",
    "shift",
    "set",
    "shopt",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "enable",
    "trap",
    "cd",
    "pushd",
    "popd",
    "builtin",
    "command",
    "exec",
    "coproc",
];

/// Evaluates the plan's tree; the code to analyse again goes into `plan.evaluated`.
pub(crate) fn evaluate(
    root: Node<'_>,
    src: &str,
    cwd: &Cwd,
    plan: &mut Plan,
    positional: Option<Vec<String>>,
) {
    if !worth_evaluating(plan) {
        return;
    }
    let mut ev = Evaluator {
        src,
        env: HashMap::from([("IFS".to_string(), DEFAULT_IFS.to_string())]),
        positional,
        aliases: Vec::new(),
        expand_aliases: None,
        functions: HashMap::new(),
        files: HashMap::new(),
        budget: Budget::default(),
        depth: 0,
        replacements: Vec::new(),
        out: Evaluation::default(),
        poisoned: false,
        continuations: Vec::new(),
        plan,
    };
    ev.block(root, None);
    let replacements = std::mem::take(&mut ev.replacements);
    if let Some(code) = residual(src, root.byte_range(), replacements) {
        ev.out.code.push((code, cwd.clone(), Feed::Residual));
    }
    let out = std::mem::take(&mut ev.out);
    plan.evaluated = out;
}

/// Whether anything in the plan could be computed: a dynamic or pattern word, a shell,
/// an interpreter, `xargs`, `eval`, an alias or function, a script run by path.
pub(crate) fn worth_evaluating(plan: &Plan) -> bool {
    if !plan.obfuscated.is_empty() || !plan.functions.is_empty() {
        return true;
    }
    plan.commands.iter().any(|c| {
        // The program after bash's `time` keyword (`time -p . /dev/stdin <<< CODE`).
        let name = c
            .words
            .get(keyword_time(c.words.iter().map(|w| w.text.as_str())));
        c.words.iter().any(|w| w.dynamic || w.pattern)
            // A command name the grammar reads as a plain word but bash brace-expands
            // (`r{m,} -rf /`). Not an argument: `echo {a,b}` is allowed as read-only,
            // and a request the evaluator adds is never verified, so it would ask.
            || c.words.first().is_some_and(|w| may_brace(&w.text))
            || c.redirects
                .iter()
                .any(|r| r.target.as_ref().is_some_and(|t| t.dynamic))
            || name.is_some_and(|w| {
                let name = crate::programs::basename(&w.text);
                w.text.starts_with("./")
                    || crate::programs::is_shell(name)
                    || interp::is_interpreter(name)
                    || matches!(
                        name,
                        "xargs" | "eval" | "source" | "." | "alias" | "exec" | "coproc"
                    )
            })
    })
}

/// Whether a word's text may hold a brace expansion the walk does not flag: the
/// grammar reads `{a,b}` and `r{m,}` as plain words (only `{1..3}` is a brace node),
/// so a `{` followed by a `,` or `..` and then a `}` is worth the evaluator's look (it
/// reads the tree, where quoting shows).
fn may_brace(text: &str) -> bool {
    text.find('{').is_some_and(|open| {
        let rest = text.get(open + 1..).unwrap_or("");
        rest.find('}').is_some_and(|close| {
            let inner = rest.get(..close).unwrap_or("");
            inner.contains(',') || inner.contains("..")
        })
    })
}

/// The positional parameters after `set ARGS` (bash's `set` builtin): its first word
/// that is no option, or every word after `--` or `-`, replaces them; options alone
/// (`set -e`, `set -o posix`) leave them. Unknown when an option word is not plain.
fn positional_after_set(args: &[String], before: Option<Vec<String>>) -> Option<Vec<String>> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "--" | "-" => return Some(args.get(i + 1..).unwrap_or_default().to_vec()),
            o if o.starts_with(['-', '+']) => {
                if !o.chars().skip(1).all(|c| c.is_ascii_alphabetic()) {
                    return None;
                }
                // `-o NAME` / `+o NAME`: the next word is the option's name.
                i += if o.contains('o') { 2 } else { 1 };
            }
            _ => return Some(args.get(i..).unwrap_or_default().to_vec()),
        }
    }
    before
}

/// The positional parameters after `shift [N]`: the first N dropped; more than there
/// are leaves them (bash's `shift` then fails).
fn positional_after_shift(args: &[String], before: Option<Vec<String>>) -> Option<Vec<String>> {
    let n = match args {
        [] => 1,
        [n] => n.parse::<usize>().ok()?,
        _ => return None,
    };
    let p = before?;
    Some(if n <= p.len() {
        p.get(n..).unwrap_or_default().to_vec()
    } else {
        p
    })
}

/// The command with the replacements applied, or `None` when there are none. An
/// inner replacement inside an outer one is dropped (the outer value includes it).
fn residual(
    src: &str,
    range: Range<usize>,
    mut reps: Vec<(Range<usize>, String)>,
) -> Option<String> {
    if reps.is_empty() {
        return None;
    }
    reps.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
    let mut out = String::new();
    let mut at = range.start;
    for (r, text) in reps {
        if r.start < at || r.end > range.end {
            continue;
        }
        out.push_str(src.get(at..r.start)?);
        out.push_str(&text);
        at = r.end;
    }
    out.push_str(src.get(at..range.end)?);
    Some(out)
}

/// What redirects feed a command instead of its pipe (`Evaluator::redirect_io`):
/// `None` when none does, `Some(None)` when one does with text not known.
type RedirectedInput = Option<Option<String>>;

/// Where redirects send a command's output: `None` when nowhere else, `Some(None)`
/// somewhere not known, `Some(Some((path, append)))` a file.
type RedirectedOutput = Option<Option<(String, bool)>>;

/// A word's value once expanded.
struct Expanded {
    fields: Vec<Chars>,
    /// It held an expansion, substitution or brace that changed it.
    computed: bool,
    /// What produced it, for the risk note.
    via: &'static str,
}

struct Evaluator<'s, 'p> {
    src: &'s str,
    /// Variables known in the command (absent: unknown).
    env: HashMap<String, String>,
    /// `$1`…: empty at the top (`bash -c` has no arguments), set in function calls and
    /// by `set`/`shift`; unknown in code read inside the command unless set there.
    positional: Option<Vec<String>>,
    /// Aliases defined, with the byte from which they apply (bash expands an alias
    /// only in lines read after the one that defined it).
    aliases: Vec<(String, String, usize)>,
    /// The byte from which `shopt -s expand_aliases` applies.
    expand_aliases: Option<usize>,
    functions: HashMap<String, Node<'s>>,
    /// Files this command writes with known content (`cat > s.sh <<EOF`).
    files: HashMap<String, String>,
    budget: Budget,
    depth: usize,
    replacements: Vec<(Range<usize>, String)>,
    out: Evaluation,
    /// A `trap` or similar made every later value uncertain.
    poisoned: bool,
    /// Statements written after a here-document on its line, with whether a pipe
    /// feeds them.
    continuations: Vec<(Node<'s>, bool)>,
    plan: &'p Plan,
}

impl<'s> Evaluator<'s, '_> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn note(&mut self, n: String) {
        if self.out.notes.len() < MAX_NOTES && !self.out.notes.contains(&n) {
            self.out.notes.push(n);
        }
    }

    /// The cwd of the plan's command at `node`, for code fed there.
    fn cwd_at(&self, node: Node<'_>) -> Cwd {
        let r = node.byte_range();
        self.plan
            .commands
            .iter()
            .find(|c| c.words.first().is_some_and(|w| r.contains(&w.start)))
            .map_or(Cwd::Unknown, |c| c.cwd.clone())
    }

    fn push_code(&mut self, code: String, at: Node<'_>, feed: Feed, why: String) {
        // Only space, tab and newline are blanks to bash: a lone CR is a command name.
        if code.trim_matches([' ', '\t', '\n']).is_empty() || code.len() > self.budget.max_bytes {
            return;
        }
        self.note(why);
        let cwd = self.cwd_at(at);
        if !self.out.code.iter().any(|(c, _, _)| *c == code) {
            self.out.code.push((code, cwd, feed));
        }
    }

    /// Every variable, and the positional parameters (`set --` in a branch, an alias or
    /// a sourced file may set them), become unknown.
    fn forget_all(&mut self) {
        self.env.clear();
        self.positional = None;
    }

    fn var(&self, name: &str) -> Option<String> {
        if self.poisoned {
            return None;
        }
        if let Some(i) = name.parse::<usize>().ok().filter(|i| *i > 0) {
            return self
                .positional
                .as_ref()
                .map(|p| p.get(i - 1).cloned().unwrap_or_default());
        }
        if name == "#" {
            return self.positional.as_ref().map(|p| p.len().to_string());
        }
        self.env.get(name).cloned()
    }

    /// Runs `f` in a subshell: what it assigns does not survive.
    fn subshell<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let env = self.env.clone();
        let positional = self.positional.clone();
        let files = self.files.clone();
        let r = f(self);
        self.env = env;
        self.positional = positional;
        // Files a subshell writes do exist afterwards.
        for (k, v) in files {
            self.files.entry(k).or_insert(v);
        }
        r
    }

    /// Runs `f` where it may run any number of times (a branch, a loop, a function
    /// body): what it may assign is unknown before, inside and after.
    fn uncertain(&mut self, node: Node<'s>, f: impl FnOnce(&mut Self)) {
        self.forget_assigned(node);
        f(self);
        self.forget_assigned(node);
    }

    /// Forgets every variable `node` may assign (all of them when it runs an
    /// assigning builtin or a command whose name is not a plain word).
    fn forget_assigned(&mut self, node: Node<'_>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if !self.budget.step() {
                self.forget_all();
                return;
            }
            match n.kind_name() {
                k::VARIABLE_ASSIGNMENT => {
                    if let Some(name) = n.child_by_field_name(k::FIELD_NAME) {
                        let name = self.text(name).split('[').next().unwrap_or("").to_string();
                        self.env.remove(&name);
                    }
                }
                k::FOR_STATEMENT => {
                    if let Some(v) = n.child_by_field_name("variable") {
                        let name = self.text(v).to_string();
                        self.env.remove(&name);
                    }
                }
                k::DECLARATION_COMMAND | k::UNSET_COMMAND => self.forget_all(),
                k::COMMAND => {
                    let name = n
                        .child_by_field_name(k::FIELD_NAME)
                        .map(|c| self.text(c))
                        .unwrap_or("");
                    let plain = name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
                    if !plain || ASSIGNERS.contains(&name) || self.functions.contains_key(name) {
                        self.forget_all();
                    }
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }

    /// A sequence of statements; their joined output when every one is known.
    fn block(&mut self, node: Node<'s>, stdin: Option<&str>) -> Option<String> {
        let mut out = Some(String::new());
        let mut c = node.walk();
        let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
        for kid in kids {
            let o = self.statement(kid, stdin);
            out = match (out, o) {
                (Some(mut a), Some(b)) => {
                    a.push_str(&b);
                    Some(a)
                }
                _ => None,
            };
        }
        out
    }

    /// One statement; its standard output when known.
    fn statement(&mut self, node: Node<'s>, stdin: Option<&str>) -> Option<String> {
        if !self.budget.step() || self.depth > self.budget.max_depth {
            self.poisoned = true;
            return None;
        }
        match node.kind_name() {
            k::COMMENT | k::HEREDOC_BODY => Some(String::new()),
            k::PROGRAM | k::COMPOUND_STATEMENT => self.block(node, stdin),
            k::SUBSHELL => self.subshell(|e| e.block(node, stdin)),
            k::LIST => {
                // `a && b`, `a || b`: the right side may not run.
                let mut c = node.walk();
                let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
                let mut first = true;
                for kid in kids {
                    if first {
                        self.statement(kid, stdin);
                        first = false;
                    } else {
                        self.uncertain(kid, |e| {
                            e.statement(kid, stdin);
                        });
                    }
                }
                None
            }
            k::PIPELINE => self.subshell(|e| e.pipeline(node, stdin, None)),
            k::NEGATED_COMMAND => {
                self.block(node, stdin);
                None
            }
            k::REDIRECTED_STATEMENT => self.redirected(node, stdin),
            k::COMMAND => self.command(node, &[], stdin),
            k::VARIABLE_ASSIGNMENT | k::VARIABLE_ASSIGNMENTS => {
                self.assignments(node);
                Some(String::new())
            }
            k::DECLARATION_COMMAND => {
                self.declaration(node);
                Some(String::new())
            }
            k::FUNCTION_DEFINITION => {
                if let (Some(name), Some(body)) = (
                    node.child_by_field_name(k::FIELD_NAME),
                    node.child_by_field_name(k::FIELD_BODY),
                ) {
                    let name = self.text(name).to_string();
                    self.functions.insert(name, body);
                    // Its words are read for values known whatever the call.
                    let saved = (std::mem::take(&mut self.env), self.positional.take());
                    self.block(body, None);
                    (self.env, self.positional) = saved;
                }
                Some(String::new())
            }
            k::FOR_STATEMENT if self.unroll(node) => None,
            k::IF_STATEMENT
            | k::WHILE_STATEMENT
            | k::FOR_STATEMENT
            | k::C_STYLE_FOR_STATEMENT
            | k::CASE_STATEMENT => {
                self.uncertain(node, |e| {
                    let mut c = node.walk();
                    let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
                    for kid in kids {
                        e.nested(kid);
                    }
                });
                None
            }
            // `[[ -n $(…) ]]`, `(( $(…) ))`: the substitutions run (if the test gets
            // that far), each in a subshell. What the statement itself may assign
            // (`${x:=v}`, `(( x++ ))`) is unknown to them and after it.
            _ => {
                if self.assigns_outside_substitutions(node) {
                    self.forget_assigned(node);
                }
                self.substitutions(node);
                self.forget_assigned(node);
                None
            }
        }
    }

    /// Whether the text of `node` outside its command substitutions may assign a
    /// variable: an `=` (`${x:=v}`, `(( x = 1 ))`, an assignment) or `++`/`--`.
    fn assigns_outside_substitutions(&self, node: Node<'s>) -> bool {
        let mut text = String::new();
        let mut at = node.start_byte();
        let mut stack = vec![node];
        let mut substs: Vec<std::ops::Range<usize>> = Vec::new();
        while let Some(n) = stack.pop() {
            if n.kind_name() == k::COMMAND_SUBSTITUTION {
                substs.push(n.byte_range());
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        substs.sort_by_key(|r| r.start);
        for r in substs {
            text.push_str(self.src.get(at..r.start.max(at)).unwrap_or_default());
            at = at.max(r.end);
        }
        text.push_str(self.src.get(at..node.end_byte()).unwrap_or_default());
        text.contains('=') || text.contains("++") || text.contains("--")
    }

    /// Runs the command substitutions in `node` (a test, an arithmetic command, a
    /// `case` subject) for the code they feed a shell; their values are not needed.
    fn substitutions(&mut self, node: Node<'s>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind_name() == k::COMMAND_SUBSTITUTION {
                // Escaped backticks are read again by bash (see `chars`): not read here.
                let raw = self.text(n);
                if self.depth >= self.budget.max_depth
                    || (raw.starts_with('`') && raw.contains('\\'))
                {
                    continue;
                }
                self.depth += 1;
                self.subshell(|e| e.block(n, None));
                self.depth -= 1;
                continue;
            }
            let mut c = n.walk();
            let kids: Vec<Node<'s>> = n.named_children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
    }

    /// `for NAME in WORDS; do BODY; done` over words whose values are known (at most
    /// `MAX_ITEMS`): the body once per value, in place of the loop in the residual
    /// (`for i in /; do rm -rf "$i"; done` is `{ rm -rf /; }`), or, where an iteration
    /// may stop early, each as code of its own like a call. `false` when the list is not
    /// known: the loop is then read as any other.
    fn unroll(&mut self, node: Node<'s>) -> bool {
        const MAX_ITEMS: usize = 16;
        let (Some(var), Some(body)) = (
            node.child_by_field_name("variable"),
            node.child_by_field_name(k::FIELD_BODY),
        ) else {
            return false;
        };
        let var = self.text(var).to_string();
        let mut c = node.walk();
        let values: Vec<Node<'s>> = node
            .children_by_field_name(k::FIELD_VALUE, &mut c)
            .collect();
        // `for i; do` walks the positional parameters.
        let has_in = {
            let mut c = node.walk();
            node.children(&mut c)
                .any(|n| !n.is_named() && self.text(n) == "in")
        };
        let items: Vec<String> = if has_in {
            let mut items = Vec::new();
            for v in values {
                let Some(e) = self.expand(v, false) else {
                    return false;
                };
                for f in &e.fields {
                    // A glob or a `~` is only known once bash expands it.
                    if fields::has_active_glob(f)
                        || f.first().is_some_and(|c| *c == ('~', Quoting::Literal))
                    {
                        return false;
                    }
                    items.push(fields::text(f));
                }
            }
            items
        } else {
            match &self.positional {
                Some(p) => p.clone(),
                None => return false,
            }
        };
        if items.len() > MAX_ITEMS || self.depth >= self.budget.max_depth {
            return false;
        }
        // The statements of the body, without `do` and `done`.
        let mut c = body.walk();
        let stmts: Vec<Node<'s>> = body.named_children(&mut c).collect();
        let (Some(first), Some(last)) = (stmts.first(), stmts.last()) else {
            return false;
        };
        let range = first.start_byte()..last.end_byte();
        // Without `break`, `continue`, `return` or `exit` the iterations run one after
        // the other, each to its end: read in sequence, as bash runs them. With one,
        // an iteration may stop early, so what it assigns is unknown to the next.
        let jumps = {
            let mut stack = vec![body];
            let mut found = false;
            while let Some(n) = stack.pop() {
                if n.kind_name() == k::COMMAND
                    && n.child_by_field_name(k::FIELD_NAME).is_some_and(|w| {
                        matches!(self.text(w), "break" | "continue" | "return" | "exit")
                    })
                {
                    found = true;
                    break;
                }
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            found
        };
        self.depth += 1;
        let mut unrolled: Vec<String> = Vec::new();
        for item in &items {
            let saved = std::mem::take(&mut self.replacements);
            if jumps {
                self.forget_assigned(node);
            }
            self.env.insert(var.clone(), item.clone());
            for st in &stmts {
                self.statement(*st, None);
            }
            let reps = std::mem::replace(&mut self.replacements, saved);
            let body = residual(self.src, range.clone(), reps);
            if jumps {
                // Each iteration that may stop early is code of its own, like a call.
                if let Some(code) = body {
                    self.push_code(
                        code,
                        node,
                        Feed::Call,
                        format!(
                            "The loop runs its body with `${var}` set to `{}`: it is analysed as code.",
                            short(item)
                        ),
                    );
                }
            } else {
                unrolled.push(body.unwrap_or_else(|| {
                    self.src.get(range.clone()).unwrap_or_default().to_string()
                }));
            }
        }
        if !jumps {
            // The loop as bash runs it, in place: its bodies one after the other, in a
            // group so that redirects, pipes and `&` still apply to all of them.
            self.note(format!(
                "The loop runs its body once for each of `{}`: it is analysed unrolled.",
                short(&items.join(" "))
            ));
            let body = if unrolled.is_empty() {
                ":".to_string()
            } else {
                unrolled.join("\n")
            };
            self.replacements
                .push((node.byte_range(), format!("{{\n{body}\n}}")));
        }
        self.depth -= 1;
        self.forget_assigned(node);
        true
    }

    /// Statements inside a branch or loop body (conditions included).
    fn nested(&mut self, node: Node<'s>) {
        match node.kind_name() {
            k::DO_GROUP | k::ELSE_CLAUSE | k::ELIF_CLAUSE | k::CASE_ITEM => {
                let mut c = node.walk();
                let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
                for kid in kids {
                    self.nested(kid);
                }
            }
            kind if kind == k::COMMAND
                || kind == k::PIPELINE
                || kind == k::LIST
                || kind == k::REDIRECTED_STATEMENT
                || kind == k::SUBSHELL
                || kind == k::COMPOUND_STATEMENT
                || kind == k::NEGATED_COMMAND
                || kind == k::IF_STATEMENT
                || kind == k::FOR_STATEMENT
                || kind == k::WHILE_STATEMENT
                || kind == k::CASE_STATEMENT
                || kind == k::TEST_COMMAND =>
            {
                self.statement(node, None);
            }
            // A loop's words, a `case` subject.
            _ => self.substitutions(node),
        }
    }

    /// `last`: what a redirect on the whole pipeline feeds its last command instead
    /// of the pipe (see `redirect_io`).
    fn pipeline(
        &mut self,
        node: Node<'s>,
        stdin: Option<&str>,
        last: RedirectedInput,
    ) -> Option<String> {
        let mut c = node.walk();
        let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
        let count = kids.len();
        let mut input: Option<String> = stdin.map(str::to_string);
        let mut last = last;
        for (i, kid) in kids.into_iter().enumerate() {
            if i + 1 == count
                && let Some(replaced) = last.take()
            {
                input = replaced;
            }
            input = self.subshell(|e| e.statement(kid, input.as_deref()));
        }
        input
    }

    fn redirected(&mut self, node: Node<'s>, stdin: Option<&str>) -> Option<String> {
        let body = node.child_by_field_name(k::FIELD_BODY);
        let mut c = node.walk();
        let redirects: Vec<Node<'s>> = node
            .named_children(&mut c)
            .filter(|n| {
                matches!(
                    n.kind_name(),
                    k::FILE_REDIRECT | k::HEREDOC_REDIRECT | k::HERESTRING_REDIRECT
                )
            })
            .collect();
        match body {
            Some(b) if b.kind_name() == k::COMMAND => self.command(b, &redirects, stdin),
            // The grammar hangs `a | b <<EOF` (and `a | b < f`) on the whole pipeline;
            // bash gives the redirect to its last command, in place of the pipe.
            Some(b) if b.kind_name() == k::PIPELINE => {
                let (input, output) = self.redirect_io(&redirects);
                let out = self.subshell(|e| e.pipeline(b, stdin, input));
                self.store_output(output, out)
            }
            Some(b) => {
                let (input, output) = self.redirect_io(&redirects);
                let out = self.statement(b, input.as_ref().map_or(stdin, |i| i.as_deref()));
                self.store_output(output, out)
            }
            None => None,
        }
    }

    /// What the redirects feed the command and where its output goes. The input is
    /// `None` when no redirect replaces standard input (a pipe still feeds it),
    /// `Some(None)` when one does with text not known (`< "$f"`, `<&3`): bash reads
    /// that, never the pipe. The output is `Some(Some(path))` for a known file,
    /// `Some(None)` for anywhere else.
    fn redirect_io(&mut self, redirects: &[Node<'s>]) -> (RedirectedInput, RedirectedOutput) {
        let mut input = None;
        let mut output = None;
        for r in redirects {
            // `3<<EOF`, `3<<<x`: the text goes to another descriptor, not stdin.
            let on_stdin = matches!(super::walk::descriptor(*r, self.src), None | Some("0"));
            match r.kind_name() {
                k::HERESTRING_REDIRECT if !on_stdin => {}
                k::HEREDOC_REDIRECT if !on_stdin => self.heredoc_rest(*r),
                k::HERESTRING_REDIRECT => {
                    let mut c = r.walk();
                    let word = r
                        .named_children(&mut c)
                        .find(|n| n.kind_name() != k::FILE_DESCRIPTOR);
                    input = Some(word.and_then(|w| {
                        let e = self.expand(w, true)?;
                        self.record(w, &e);
                        let [one] = e.fields.as_slice() else {
                            return None;
                        };
                        Some(fields::text(one) + "\n")
                    }));
                }
                k::HEREDOC_REDIRECT => {
                    let mut c = r.walk();
                    let kids: Vec<Node<'s>> = r.named_children(&mut c).collect();
                    let quoted = kids.iter().any(|c| {
                        c.kind_name() == k::HEREDOC_START
                            && self.text(*c).contains(['\'', '"', '\\'])
                    });
                    let strip = self.operator(*r) == "<<-";
                    input = Some(
                        kids.iter()
                            .find(|c| c.kind_name() == k::HEREDOC_BODY)
                            .and_then(|b| {
                                let raw = self.text(*b);
                                if !quoted && raw.contains(['$', '`', '\\']) {
                                    return None;
                                }
                                Some(if strip {
                                    raw.split_inclusive('\n')
                                        .map(|l| l.trim_start_matches('\t'))
                                        .collect()
                                } else {
                                    raw.to_string()
                                })
                            }),
                    );
                    self.heredoc_rest(*r);
                }
                k::FILE_REDIRECT => {
                    let op = self.operator(*r);
                    let fd = super::walk::descriptor(*r, self.src);
                    let dest = r.child_by_field_name(k::FIELD_DESTINATION);
                    let target = dest.and_then(|d| {
                        let e = self.expand(d, false)?;
                        // `> {a,b}` is an ambiguous redirect for bash (the command
                        // does not run): the residual must keep it as written, not
                        // make `b` an argument of the command.
                        let [one] = e.fields.as_slice() else {
                            return None;
                        };
                        self.record(d, &e);
                        (!fields::has_active_glob(one)).then(|| fields::text(one))
                    });
                    let dest_text = dest.map(|d| self.text(d));
                    let number = dest_text.is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()));
                    match (op.as_str(), fd) {
                        ("<" | "<>", None | Some("0")) => {
                            input = Some(target.and_then(|t| self.files.get(&t).cloned()));
                        }
                        // `<&3`, `<&-`: stdin is another descriptor, or closed.
                        ("<&" | "<&-", None | Some("0")) => input = Some(None),
                        // `>&2`, `>&-`: the output goes elsewhere; `>&file` is `&>file`.
                        (">&" | ">&-", None | Some("1"))
                            if (number || op == ">&-" || dest_text == Some("-"))
                                && dest_text != Some("1") =>
                        {
                            output = Some(None);
                        }
                        // `>&1`: stays where it goes.
                        (">&", None | Some("1")) if dest_text == Some("1") => {}
                        // `> /dev/stdout`: the output stays where it goes.
                        (">" | ">|" | ">>", None | Some("1"))
                            if target.as_deref().is_some_and(|t| {
                                matches!(t, "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
                            }) => {}
                        (">" | ">|" | ">>" | "&>" | "&>>" | ">&", None | Some("1")) => {
                            let append = op.ends_with(">>");
                            output = Some(target.map(|t| (t, append)));
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
            // The grammar hangs the redirects written after `<<EOF` on its line inside
            // the here-document's node; bash applies them in order, after it.
            if r.kind_name() == k::HEREDOC_REDIRECT {
                let mut c = r.walk();
                let nested: Vec<Node<'s>> = r
                    .named_children(&mut c)
                    .filter(|n| matches!(n.kind_name(), k::FILE_REDIRECT | k::HERESTRING_REDIRECT))
                    .collect();
                if !nested.is_empty() {
                    let (i, o) = self.redirect_io(&nested);
                    input = i.or(input);
                    output = o.or(output);
                }
            }
        }
        (input, output)
    }

    /// Statements after `<<EOF` on its line (`cat <<EOF | sh`): fed the command's
    /// output after it ran (`self.continuations`).
    fn heredoc_rest(&mut self, r: Node<'s>) {
        let mut c = r.walk();
        let kids: Vec<Node<'s>> = r.named_children(&mut c).collect();
        let start = kids
            .iter()
            .find(|c| c.kind_name() == k::HEREDOC_START)
            .map_or(r.start_byte(), |c| c.end_byte());
        for kid in kids {
            if !matches!(
                kid.kind_name(),
                k::HEREDOC_START
                    | k::HEREDOC_BODY
                    | k::HEREDOC_END
                    | k::FILE_DESCRIPTOR
                    | k::FILE_REDIRECT
                    | k::HERESTRING_REDIRECT
            ) {
                let between = self.src.get(start..kid.start_byte()).unwrap_or("");
                // The grammar hangs `| cmd` there as a pipeline that starts with the `|`.
                let piped = between.trim() == "|"
                    || (kid.kind_name() == k::PIPELINE
                        && self.text(kid).trim_start().starts_with('|'));
                self.continuations.push((kid, piped));
            }
        }
    }

    /// Puts a command's output where its redirect sends it; what is left for a pipe.
    fn store_output(&mut self, output: RedirectedOutput, out: Option<String>) -> Option<String> {
        match output {
            None => out,
            Some(None) => Some(String::new()),
            Some(Some((path, append))) => {
                match out {
                    Some(text) => {
                        let entry = self.files.entry(path).or_default();
                        if !append {
                            entry.clear();
                        }
                        entry.push_str(&text);
                    }
                    None => {
                        self.files.remove(&path);
                    }
                }
                Some(String::new())
            }
        }
    }

    fn operator(&self, node: Node<'_>) -> String {
        let mut c = node.walk();
        node.children(&mut c)
            .find(|n| !n.is_named())
            .map(|n| self.text(n).to_string())
            .unwrap_or_default()
    }

    fn assignments(&mut self, node: Node<'s>) {
        if node.kind_name() == k::VARIABLE_ASSIGNMENTS {
            let mut c = node.walk();
            let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
            for kid in kids {
                self.assign(kid);
            }
        } else {
            self.assign(node);
        }
    }

    /// `NAME=value` (or `+=`): known when the value is.
    fn assign(&mut self, node: Node<'s>) {
        let Some(name_node) = node.child_by_field_name(k::FIELD_NAME) else {
            return;
        };
        let name = self.text(name_node).to_string();
        let append = self
            .src
            .get(name_node.end_byte()..)
            .is_some_and(|r| r.starts_with("+="));
        let value = match node.child_by_field_name(k::FIELD_VALUE) {
            None => Some(String::new()),
            Some(v) if v.kind_name() == k::ARRAY => None,
            Some(v) => self
                .expand(v, true)
                .and_then(|e| match e.fields.as_slice() {
                    [one] if !one.first().is_some_and(|c| *c == ('~', Quoting::Literal)) => {
                        Some(fields::text(one))
                    }
                    _ => None,
                }),
        };
        let base = name.split('[').next().unwrap_or("").to_string();
        match value {
            Some(v) if base == name => {
                let v = if append {
                    match self.env.get(&name) {
                        Some(old) => format!("{old}{v}"),
                        None => {
                            self.env.remove(&name);
                            return;
                        }
                    }
                } else {
                    v
                };
                self.env.insert(name, v);
            }
            _ => {
                self.env.remove(&base);
            }
        }
    }

    /// `export`/`local`/`declare`/`readonly`/`typeset` of constants.
    fn declaration(&mut self, node: Node<'s>) {
        let mut c = node.walk();
        let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
        let plain_flags = kids.iter().all(|n| {
            n.kind_name() != k::WORD || {
                let t = self.text(*n);
                matches!(t, "-x" | "-r" | "-g" | "-rx" | "-xr" | "--")
            }
        });
        for kid in kids {
            match kid.kind_name() {
                k::VARIABLE_ASSIGNMENT if plain_flags => self.assign(kid),
                k::VARIABLE_ASSIGNMENT => {
                    if let Some(n) = kid.child_by_field_name(k::FIELD_NAME) {
                        let name = self.text(n).to_string();
                        self.env.remove(&name);
                    }
                }
                k::WORD | k::VARIABLE_NAME => {}
                _ => self.forget_all(),
            }
        }
    }

    /// One simple command with the redirects of its statement; its output if known.
    fn command(
        &mut self,
        node: Node<'s>,
        outer: &[Node<'s>],
        stdin: Option<&str>,
    ) -> Option<String> {
        let mut c = node.walk();
        let kids: Vec<Node<'s>> = node.children(&mut c).collect();
        let mut redirects: Vec<Node<'s>> = outer.to_vec();
        let mut argv: Option<Vec<Chars>> = Some(Vec::new());
        let mut word_nodes: Vec<Node<'s>> = Vec::new();
        let mut has_prefix = false;
        let mut name_node = None;
        // Words bash gives the command that the grammar hangs on a redirect (`printf >
        // /dev/stdout 'rm -rf /'`, `cat <<EOF file`): the redirects of the statement
        // around it come after its own words.
        let mut words: Vec<Node<'s>> = Vec::new();
        for kid in &kids {
            match kid.kind_name() {
                k::VARIABLE_ASSIGNMENT => has_prefix = true,
                k::FILE_REDIRECT | k::HEREDOC_REDIRECT | k::HERESTRING_REDIRECT => {
                    redirects.push(*kid);
                    words.extend(redirect_words(*kid, self.src));
                }
                k::COMMENT => {}
                _ if !kid.is_named() => {}
                _ if super::walk::glued_descriptor(*kid, self.src).is_some() => {}
                _ => words.push(*kid),
            }
        }
        for r in outer {
            words.extend(redirect_words(*r, self.src));
        }
        for kid in words {
            if kid.kind_name() == k::COMMAND_NAME {
                name_node = Some(kid);
            }
            word_nodes.push(kid);
            let e = self.expand(kid, false);
            if let Some(e) = &e {
                self.record(kid, e);
            }
            argv = match (argv, e) {
                (Some(mut a), Some(e)) => {
                    a.extend(e.fields);
                    Some(a)
                }
                _ => None,
            };
        }
        let _ = has_prefix;
        let (input, output) = self.redirect_io(&redirects);
        let stdin = input.as_ref().map_or(stdin, |i| i.as_deref());
        let Some(argv) = argv else {
            self.forget_all();
            let out = self.store_output(output, None);
            return self.continue_heredoc(out);
        };
        let Some(first) = argv.first() else {
            return self.store_output(output, Some(String::new()));
        };
        if fields::has_active_glob(first) {
            self.glob_name(node, &argv);
            self.forget_all();
            return self.store_output(output, None);
        }
        let values: Option<Vec<String>> = argv
            .iter()
            .map(|f| (!fields::has_active_glob(f)).then(|| fields::text(f)))
            .collect();
        let Some(words) = values else {
            self.forget_all();
            return self.store_output(output, None);
        };
        // bash's `time` keyword (`time`, `time -p`) times what follows, run in this
        // shell: `time . /dev/stdin <<< CODE` sources CODE. Only unquoted, first, with
        // no assignment before it and not a later stage of a pipeline; there `time` is
        // the program, which runs its operands as a program of their own.
        let keyword = name_node.is_some_and(|n| self.text(n) == "time")
            && !has_prefix
            && !super::walk::after_pipe(self.src, node.start_byte());
        let timed = if keyword {
            keyword_time(words.iter().map(String::as_str))
        } else {
            0
        };
        let out = self.run(
            node,
            name_node,
            word_nodes.get(timed..).unwrap_or_default(),
            words.get(timed..).unwrap_or_default(),
            stdin,
        );
        let out = self.store_output(output, out);
        self.continue_heredoc(out)
    }

    /// Runs the statements written after a here-document's start on its line: a pipe
    /// feeds them the command's output; `&&`/`||` may not run them.
    fn continue_heredoc(&mut self, out: Option<String>) -> Option<String> {
        let pending = std::mem::take(&mut self.continuations);
        if pending.is_empty() {
            return out;
        }
        for (kid, piped) in pending {
            if piped {
                let fed = out.clone();
                self.subshell(|e| e.statement(kid, fed.as_deref()));
            } else {
                self.uncertain(kid, |e| {
                    e.statement(kid, None);
                });
            }
        }
        None
    }

    /// What a command with known words does to the evaluation; its output if known.
    fn run(
        &mut self,
        node: Node<'s>,
        name_node: Option<Node<'s>>,
        word_nodes: &[Node<'s>],
        words: &[String],
        stdin: Option<&str>,
    ) -> Option<String> {
        let (name, args) = words.split_first()?;
        let start = node.start_byte();
        // An alias applies in lines after the one defining it, where aliases are
        // expanded: certainly after `shopt -s expand_aliases`; otherwise wherever the
        // shell expands them without it (`sh -c`, posix mode, dash, zsh), which the
        // code may not show, so the value may run or the name as written.
        if let Some((_, value, _)) = self
            .aliases
            .iter()
            .rev()
            .find(|(n, _, from)| n == name && start >= *from)
            .cloned()
        {
            let code = format!("{value} {}", fields::quote_words(args));
            if self.expand_aliases.is_some_and(|from| start >= from) {
                self.push_code(
                    code.trim_end().to_string(),
                    node,
                    Feed::Call,
                    format!("`{name}` is an alias defined in this command for `{value}`."),
                );
                self.forget_all();
                return None;
            }
            self.push_code(
                code.trim_end().to_string(),
                node,
                Feed::Mode,
                format!(
                    "`{name}` is an alias defined in this command for `{value}`, which runs where the shell expands aliases (`sh`, posix mode)."
                ),
            );
            self.forget_all();
        }
        if let Some(body) = self.functions.get(name.as_str()).copied() {
            self.call(node, name, body, args, stdin);
            self.forget_all();
            return None;
        }
        let base = crate::programs::basename(name);
        match base {
            "shopt" if args.iter().any(|a| a == "expand_aliases") => {
                if args.first().is_some_and(|a| a == "-s") {
                    self.expand_aliases.get_or_insert(self.next_line(node));
                } else {
                    self.expand_aliases = None;
                }
                return Some(String::new());
            }
            "alias" => {
                let from = self.next_line(node);
                for a in args {
                    if let Some((n, v)) = a.split_once('=') {
                        self.aliases.push((n.to_string(), v.to_string(), from));
                    }
                }
                return Some(String::new());
            }
            "coproc" => {
                // `coproc [NAME] { …; }` / `coproc cmd …`: the command runs.
                let rest = match args {
                    [_, open, rest @ ..] if open == "{" || open == "(" => rest,
                    [open, rest @ ..] if open == "{" || open == "(" => rest,
                    _ => args,
                };
                if !rest.is_empty() {
                    let code = fields::quote_words(rest);
                    self.push_code(
                        code,
                        node,
                        Feed::Program,
                        format!(
                            "`coproc` runs `{}` in the background.",
                            short(&rest.join(" "))
                        ),
                    );
                }
                self.forget_all();
                return None;
            }
            "trap" => {
                self.poisoned = true;
                return None;
            }
            "printf" if args.first().is_some_and(|a| a == "-v") => {
                self.forget_all();
                return None;
            }
            _ => {}
        }
        if ASSIGNERS.contains(&base) {
            let before = self.positional.take();
            self.forget_all();
            self.positional = match base {
                "set" => positional_after_set(args, before),
                "shift" => positional_after_shift(args, before),
                // `eval`, `source` and the builtins run through another may run `set`.
                "eval" | "source" | "." | "builtin" | "command" | "exec" | "coproc" => None,
                _ => before,
            };
        }
        // Code fed to a shell or to `source`.
        // `at`/`batch` run their input later, if they exist: code for a program.
        if matches!(base, "at" | "batch") {
            if let Some(code) = stdin
                && args.iter().all(|a| !a.starts_with('-'))
            {
                self.push_code(
                    code.to_string(),
                    node,
                    Feed::Program,
                    format!("`{base}` schedules its input, which this command computes: it is analysed as code."),
                );
            }
            return None;
        }
        let shell = crate::programs::is_shell(base) && !matches!(base, "fish" | "csh" | "tcsh");
        let sources = matches!(base, "source" | ".");
        if shell || sources {
            // Options end at the first word that is none (or after `--`, `-`); then come
            // the code string with `-c`, else the script unless `-s` reads the input.
            let first = args
                .iter()
                .position(|a| !a.starts_with('-') && !a.starts_with('+') || a == "--" || a == "-")
                .unwrap_or(args.len());
            let options = args.get(..first).unwrap_or_default();
            let skip = usize::from(args.get(first).is_some_and(|a| a == "--" || a == "-"));
            let operands: Vec<(usize, &String)> =
                args.iter().enumerate().skip(first + skip).collect();
            let has = |f: char| {
                options
                    .iter()
                    .any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains(f))
            };
            let options_ok = options
                .iter()
                .all(|a| matches!(a.as_str(), "-s" | "-e" | "-x" | "-u" | "-v" | "-c"));
            // The positional parameters the code runs with, as a `set --` line before it
            // (`bash -c CODE NAME A B`, `bash -s A B`, `bash SCRIPT A B`).
            let with_args = |code: String, from: usize| -> String {
                let rest: Vec<String> = operands
                    .iter()
                    .skip(from)
                    .map(|(_, a)| (*a).clone())
                    .collect();
                if rest.is_empty() {
                    code
                } else {
                    format!("set -- {}\n{code}", fields::quote_words(&rest))
                }
            };
            if options_ok && shell && has('c') {
                // The code string itself is read as one (the program table's); here it
                // is read again with the operands after it as `$1`, `$2`, ….
                if let Some((_, code)) = operands.first()
                    && operands.len() > 2
                {
                    let code = with_args((*code).clone(), 2);
                    self.push_code(
                        code,
                        node,
                        Feed::Shell,
                        format!("`{base} -c` runs its code with the words after it as `$0`, `$1`, …: they are analysed with those values."),
                    );
                }
                return None;
            }
            match operands.first() {
                _ if options_ok && shell && (has('s') || operands.is_empty()) => {
                    if let Some(code) = stdin {
                        self.push_code(
                            with_args(code.to_string(), 0),
                            node,
                            Feed::Shell,
                            format!("`{base}` reads its commands from its input, which this command computes: they are analysed as code."),
                        );
                    }
                }
                Some((i, script)) if options_ok && !has('c') => {
                    let script_node = word_nodes.get(i + 1).copied();
                    let code = if matches!(script.as_str(), "/dev/stdin" | "/proc/self/fd/0") {
                        stdin.map(str::to_string)
                    } else if script_node.is_some_and(|n| n.kind_name() == k::PROCESS_SUBSTITUTION)
                    {
                        script_node.and_then(|n| self.subshell(|e| e.block(n, None)))
                    } else {
                        self.file(script)
                    };
                    if let Some(code) = code {
                        // `source FILE ARGS` sets them while the file runs, too.
                        self.push_code(
                            with_args(code, 1),
                            node,
                            Feed::Shell,
                            format!("`{base}` runs a script whose text this command computes: it is analysed as code."),
                        );
                    }
                }
                _ => {}
            }
            if sources {
                self.forget_all();
            }
            return None;
        }
        // A script this command wrote, run by its path.
        if name.contains('/')
            && let Some(code) = self.file(name)
        {
            self.push_code(
                code,
                node,
                Feed::Program,
                format!("`{name}` is a script this command writes: it is analysed as code."),
            );
            return None;
        }
        if base == "xargs" {
            self.xargs(node, args, stdin);
            return None;
        }
        for code in interp::shell_outs(words) {
            self.push_code(
                code,
                node,
                Feed::Program,
                format!("`{base}` runs a literal shell command from its inline program: it is analysed as code."),
            );
        }
        let _ = name_node;
        // `cat FILE | bash` of a file this command wrote.
        if base == "cat" && !args.is_empty() && args.iter().all(|a| a == "-" || !a.starts_with('-'))
        {
            let mut out = String::new();
            for a in args {
                out.push_str(&if a == "-" {
                    stdin?.to_string()
                } else {
                    self.file(a)?
                });
            }
            return (out.len() <= self.budget.max_bytes).then_some(out);
        }
        producers::produce(words, stdin, self.budget.max_bytes)
    }

    /// The content of a file the command wrote (`./s.sh`, `s.sh`, same path).
    fn file(&self, path: &str) -> Option<String> {
        let norm = |p: &str| p.strip_prefix("./").unwrap_or(p).to_string();
        self.files
            .iter()
            .find(|(k, _)| norm(k) == norm(path))
            .map(|(_, v)| v.clone())
    }

    /// The byte where the line after `node` starts (aliases apply from there).
    fn next_line(&self, node: Node<'_>) -> usize {
        let end = node.end_byte();
        self.src
            .get(end..)
            .and_then(|r| r.find('\n'))
            .map_or(usize::MAX, |i| end + i + 1)
    }

    /// A function defined in this command, called with known arguments: its body with
    /// those arguments, as code.
    /// Its input is the call's (`echo … | f`, `f <<< …`).
    fn call(
        &mut self,
        node: Node<'s>,
        name: &str,
        body: Node<'s>,
        args: &[String],
        stdin: Option<&str>,
    ) {
        if self.depth >= self.budget.max_depth {
            return;
        }
        self.depth += 1;
        let saved_reps = std::mem::take(&mut self.replacements);
        let saved_pos = self.positional.replace(args.to_vec());
        self.statement(body, stdin);
        self.positional = saved_pos;
        let reps = std::mem::replace(&mut self.replacements, saved_reps);
        self.depth -= 1;
        if let Some(code) = residual(self.src, body.byte_range(), reps) {
            self.push_code(
                code,
                node,
                Feed::Call,
                format!("`{name}` runs a function defined in this command: its body is analysed with the arguments it gets."),
            );
        }
    }

    /// `producer | xargs [options] cmd args`: the commands xargs runs with the produced
    /// items (`crate::shell::eval::xargs`, its options from the program table).
    fn xargs(&mut self, node: Node<'s>, args: &[String], stdin: Option<&str>) {
        let Some(input) = stdin else { return };
        let Some(commands) = crate::shell::eval::xargs::commands(args, input) else {
            return;
        };
        let lines: Vec<String> = commands.iter().map(|c| fields::quote_words(c)).collect();
        let code = lines.join("\n");
        self.push_code(
            code.clone(),
            node,
            Feed::Program,
            format!(
                "`xargs` gets its arguments from output this command computes: it runs `{}`.",
                short(&code)
            ),
        );
    }

    /// A command name that is a glob: every known program it may name.
    fn glob_name(&mut self, node: Node<'s>, argv: &[Chars]) {
        let Some((first, rest)) = argv.split_first() else {
            return;
        };
        let pattern = fields::text(first);
        let base: Vec<char> = pattern.rsplit('/').next().unwrap_or("").chars().collect();
        let mut names: Vec<&'static str> = FLOOR_NAMES
            .iter()
            .copied()
            .chain(crate::programs::all().flat_map(|p| p.names.iter().copied()))
            .filter(|n| params::glob_match(&base, &n.chars().collect::<Vec<_>>()))
            .collect();
        names.sort_unstable();
        names.dedup();
        let tail: Vec<String> = rest.iter().map(|f| fields::render(f)).collect();
        for n in names.into_iter().take(MAX_GLOB_NAMES) {
            let code = format!("{n} {}", tail.join(" "));
            self.push_code(
                code.trim_end().to_string(),
                node,
                Feed::Program,
                format!("The command name `{pattern}` is a pattern that may name `{n}`."),
            );
        }
    }

    /// Records the replacement of a computed word in the residual, with its note.
    fn record(&mut self, node: Node<'_>, e: &Expanded) {
        if !e.computed {
            return;
        }
        let rendered: Vec<String> = e.fields.iter().map(|f| fields::render(f)).collect();
        let text = rendered.join(" ");
        let original = self.text(node).to_string();
        let shown: Vec<String> = e.fields.iter().map(|f| fields::text(f)).collect();
        self.note(format!(
            "`{}` evaluates to `{}` ({}).",
            short(&original),
            short(&shown.join(" ")),
            e.via
        ));
        self.replacements.push((node.byte_range(), text));
    }

    /// A word's fields after brace expansion, expansions and splitting; `None` when a
    /// part is unknown. `assignment`: no brace expansion, splitting or globbing.
    fn expand(&mut self, node: Node<'s>, assignment: bool) -> Option<Expanded> {
        if let Some(e) = self.all_arguments(node, assignment) {
            return Some(e);
        }
        let mut chars = Chars::new();
        let mut via: Option<&'static str> = None;
        self.chars(node, false, &mut chars, &mut via)?;
        if chars.len() > self.budget.max_bytes {
            return None;
        }
        if assignment {
            return Some(Expanded {
                fields: vec![chars],
                computed: via.is_some(),
                via: via.unwrap_or("a literal"),
            });
        }
        let braced = fields::expand_braces(&chars, self.budget.max_words)?;
        let brace_computed = braced.len() != 1;
        let ifs = if chars.iter().any(|(_, q)| *q == Quoting::Expanded) {
            self.var("IFS")?
        } else {
            DEFAULT_IFS.to_string()
        };
        let mut out = Vec::new();
        for w in braced {
            out.extend(fields::split_fields(&w, &ifs));
            if out.len() > self.budget.max_words {
                return None;
            }
        }
        if brace_computed && via.is_none() {
            via = Some("brace expansion");
        }
        Some(Expanded {
            fields: out,
            computed: via.is_some(),
            via: via.unwrap_or("a literal"),
        })
    }

    /// A word that is the positional parameters as a whole, while they are known:
    /// `"$@"` one field each, `"$*"` one field joined by spaces, `$@`/`$*` each split
    /// on the default `$IFS` (and globbed by bash). In an assignment, one joined
    /// value. `None` for any other word (or unknown parameters).
    fn all_arguments(&mut self, node: Node<'s>, assignment: bool) -> Option<Expanded> {
        let raw = self.text(node);
        let quoted = match raw {
            "\"$@\"" | "\"${@}\"" => Some(true),
            "\"$*\"" | "\"${*}\"" => Some(false),
            "$@" | "${@}" | "$*" | "${*}" => None,
            _ => return None,
        };
        let params = self.positional.clone()?;
        if self.poisoned {
            return None;
        }
        let joined = params.join(" ");
        let field = |text: &str, q: Quoting| {
            let mut cs = Chars::new();
            push_str(&mut cs, text, q);
            cs
        };
        let fields = match quoted {
            _ if assignment => vec![field(&joined, Quoting::Quoted)],
            Some(true) => params.iter().map(|p| field(p, Quoting::Quoted)).collect(),
            Some(false) => vec![field(&joined, Quoting::Quoted)],
            None => {
                if self.var("IFS")? != DEFAULT_IFS {
                    return None;
                }
                params
                    .iter()
                    .flat_map(|p| fields::split_fields(&field(p, Quoting::Expanded), DEFAULT_IFS))
                    .collect()
            }
        };
        Some(Expanded {
            fields,
            computed: true,
            via: "an argument of the call",
        })
    }

    /// Appends the characters of a word node; `None` when a part is unknown.
    fn chars(
        &mut self,
        node: Node<'s>,
        quoted: bool,
        out: &mut Chars,
        via: &mut Option<&'static str>,
    ) -> Option<()> {
        if !self.budget.step() {
            return None;
        }
        let raw = self.text(node);
        let expanded = if quoted {
            Quoting::Quoted
        } else {
            Quoting::Expanded
        };
        match node.kind_name() {
            k::WORD | k::COMMAND_NAME | k::NUMBER | k::VARIABLE_NAME | k::BRACE_EXPRESSION
                if node.named_child_count() == 0 =>
            {
                unquoted_literal(raw, quoted, out);
            }
            k::RAW_STRING => push_str(
                out,
                raw.strip_prefix('\'')
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or(raw),
                Quoting::Quoted,
            ),
            k::ANSI_C_STRING => {
                let mut s = String::new();
                if !decode_ansi_c(raw, &mut s) {
                    return None;
                }
                push_str(out, &s, Quoting::Quoted);
            }
            k::STRING_CONTENT => {
                let mut s = String::new();
                unescape_double_quoted(raw, &mut s);
                push_str(out, &s, Quoting::Quoted);
            }
            k::STRING | k::TRANSLATED_STRING => {
                let start = node.start_byte() + if raw.starts_with('$') { 2 } else { 1 };
                let end = node.end_byte().saturating_sub(1).max(start);
                let before = out.len();
                let mut pos = start;
                let mut c = node.walk();
                let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
                for kid in kids {
                    if kid.start_byte() > pos {
                        let mut s = String::new();
                        unescape_double_quoted(self.src.get(pos..kid.start_byte())?, &mut s);
                        push_str(out, &s, Quoting::Quoted);
                    }
                    self.chars(kid, true, out, via)?;
                    pos = kid.end_byte();
                }
                if end > pos {
                    let mut s = String::new();
                    unescape_double_quoted(self.src.get(pos..end)?, &mut s);
                    push_str(out, &s, Quoting::Quoted);
                }
                if out.len() == before {
                    out.push(fields::EMPTY_QUOTED);
                }
            }
            k::CONCATENATION | k::COMMAND_NAME | k::WORD | k::NUMBER => {
                let mut pos = node.start_byte();
                let mut c = node.walk();
                let kids: Vec<Node<'s>> = node.named_children(&mut c).collect();
                for kid in kids {
                    if kid.start_byte() > pos {
                        unquoted_literal(self.src.get(pos..kid.start_byte())?, quoted, out);
                    }
                    self.chars(kid, quoted, out, via)?;
                    pos = kid.end_byte();
                }
                if node.end_byte() > pos {
                    unquoted_literal(self.src.get(pos..node.end_byte())?, quoted, out);
                }
            }
            k::SIMPLE_EXPANSION => {
                let name = raw.strip_prefix('$')?;
                let v = self.var(name)?;
                via.get_or_insert(provenance(name));
                push_str(out, &v, expanded);
            }
            k::EXPANSION => {
                let name = params::name_of(raw)?;
                let known = self.var(name);
                let known = match &known {
                    Some(v) => params::Known::Value(v),
                    None => params::Known::Unknown,
                };
                let v = params::evaluate(raw, known)?;
                via.get_or_insert(if raw == format!("${{{name}}}") {
                    provenance(name)
                } else {
                    "a parameter operator on a value set in this command"
                });
                push_str(out, &v, expanded);
            }
            k::ARITHMETIC_EXPANSION => {
                let inner = raw.strip_prefix("$((")?.strip_suffix("))")?;
                let inner = inner.replace("${", "").replace(['}', '$'], "");
                let v = arith::evaluate(&inner, &|n| self.var(n))?;
                via.get_or_insert("arithmetic on constants");
                push_str(out, &v.to_string(), expanded);
            }
            k::PROCESS_SUBSTITUTION => {
                // Bash passes a descriptor path; the residual keeps the `<( )` itself
                // (no provenance), so its commands are still read.
                push_str(out, "/dev/fd/63", Quoting::Quoted);
            }
            k::COMMAND_SUBSTITUTION => {
                if self.depth >= self.budget.max_depth {
                    return None;
                }
                // Inside backticks bash removes the backslash before `` ` ``, `$` and `\`
                // and parses the rest again, so ``echo \`id\` `` runs `id`; the grammar
                // reads the escapes as data. Unknown, never a value.
                if raw.starts_with('`') && raw.contains('\\') {
                    return None;
                }
                self.depth += 1;
                // Replacements inside stay: the residual drops those an outer known
                // word covers, and keeps them where the substitution stays unknown.
                let v = self.subshell(|e| e.block(node, None));
                self.depth -= 1;
                let v = v?;
                let inner = raw
                    .strip_prefix("$(")
                    .and_then(|r| r.strip_suffix(')'))
                    .or_else(|| raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')));
                if let Some(inner) = inner {
                    self.out.folded.push(inner.to_string());
                }
                via.get_or_insert("a command substitution of a pure producer");
                push_str(out, v.trim_end_matches('\n'), expanded);
            }
            _ => return None,
        }
        Some(())
    }
}

/// Unquoted word text: backslash-escaped characters are quoted, the rest literal
/// (inside double quotes everything is quoted).
fn unquoted_literal(raw: &str, quoted: bool, out: &mut Chars) {
    let mut cs = raw.chars();
    while let Some(c) = cs.next() {
        if quoted {
            out.push((c, Quoting::Quoted));
        } else if c == '\\' {
            match cs.next() {
                Some('\n') | None => {}
                Some(n) => out.push((n, Quoting::Quoted)),
            }
        } else {
            out.push((c, Quoting::Literal));
        }
    }
}

/// Where a variable's value came from, for the note.
fn provenance(name: &str) -> &'static str {
    if name == "IFS" {
        "bash's default `$IFS`, a word separator"
    } else if name.chars().all(|c| c.is_ascii_digit()) || name == "#" {
        "an argument of the call"
    } else {
        "a variable set earlier in this command"
    }
}

/// At most 80 characters of a value, for a note.
fn short(s: &str) -> String {
    // Control characters shown escaped; quotes as they are.
    let s: String = s
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_debug().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if s.chars().count() <= 80 {
        s
    } else {
        s.chars().take(77).collect::<String>() + "…"
    }
}

/// The words written after a redirect that bash gives the command as arguments, and
/// the grammar hangs on the redirect: a file redirect's destinations after its target
/// (`walk::extra_destinations`), a here-string's words after its text, a
/// here-document's words after its delimiter and those of the redirects written after
/// it on its line.
fn redirect_words<'s>(r: Node<'s>, src: &str) -> Vec<Node<'s>> {
    let mut c = r.walk();
    match r.kind_name() {
        k::FILE_REDIRECT => super::walk::extra_destinations(r, src),
        k::HERESTRING_REDIRECT => r
            .named_children(&mut c)
            .filter(|n| n.kind_name() != k::FILE_DESCRIPTOR)
            .skip(1)
            .collect(),
        k::HEREDOC_REDIRECT => {
            let kids: Vec<Node<'s>> = r.named_children(&mut c).collect();
            let mut out = Vec::new();
            for kid in kids {
                if super::walk::is_word_kind(kid.kind_name()) {
                    out.push(kid);
                } else if matches!(kid.kind_name(), k::FILE_REDIRECT | k::HERESTRING_REDIRECT) {
                    out.extend(redirect_words(kid, src));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// How many of `words` bash's `time` keyword takes at their start (`time`, or `time
/// -p`): 0 when they do not start with `time` or nothing follows it. Whether `time` is
/// the keyword at all (unquoted, first, no assignment before it) is the caller's.
fn keyword_time<'w>(mut words: impl Iterator<Item = &'w str>) -> usize {
    if words.next() != Some("time") {
        return 0;
    }
    match (words.next(), words.next()) {
        (Some("-p"), Some(_)) => 2,
        (Some("-p") | None, _) => 0,
        (Some(_), _) => 1,
    }
}
