//! The house has no circles: at every folder of `src/`, the folder's entries (a file, or a
//! sub-folder together with the file that declares it) import each other in one direction
//! only. At `src/` itself that is the layering of the top-level modules (`model` below
//! `shell` below `programs` below `analysis` …); inside a folder it is the order of its
//! files, so shared types live below the code that uses them.
//!
//! The graph is read from the sources, not from the compiler: every `use` tree and every
//! path written in code (`crate::…`, `super::…`, `self::…`, a child module's name, a
//! module brought in by `use`) is resolved to the file that defines the named item,
//! following `use` re-exports and glob imports. Comments and string literals are
//! skipped; test modules (`#[cfg(test)] mod …`) are skipped too, since the tests of a
//! file may reach anywhere without shaping the house. A failure prints each circle with
//! the line that makes every arrow.
//!
//! The folder's own file (`mod.rs`, `lib.rs`, or `x.rs` beside `x/`) is the folder's face,
//! not one of its entries: it declares them, re-exports them, and holds what they share
//! as `super::…`. Imports through a re-export count as arrows to the file that defines
//! the item.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Pound,
    Bracket(char),
    Other(char),
}

struct Lexed {
    toks: Vec<(Tok, usize)>,
}

/// Tokens of a Rust source with comments, strings, chars and lifetimes dropped.
fn lex(src: &str) -> Lexed {
    let c: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (ch == 'r' || ch == 'b')
            && (at(i + 1) == '"'
                || (at(i + 1) == '#' && ch == 'r')
                || (ch == 'b' && at(i + 1) == 'r'))
            && !(i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            // raw or byte strings: r"..", r#".."#, b"..", br#".."#
            let mut j = i + 1;
            if ch == 'b' && at(j) == 'r' {
                j += 1;
            }
            let raw = ch == 'r' || at(i + 1) == 'r';
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                // `r#ident` or plain identifier: read as identifier below
                let start = i;
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                toks.push((Tok::Ident(c[start..i].iter().collect()), line));
                continue;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '\n' {
                    line += 1;
                }
                if !raw && c[j] == '\\' {
                    j += 2;
                    continue;
                }
                if c[j] == '"' && (0..hashes).all(|k| at(j + 1 + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\n' {
                    line += 1;
                }
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if ch == '\'' {
            // char literal or lifetime
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            toks.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else {
            let t = match ch {
                ':' if at(i + 1) == ':' => {
                    i += 1;
                    Tok::Path
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                '#' => Tok::Pound,
                '[' | ']' | '(' | ')' => Tok::Bracket(ch),
                other => Tok::Other(other),
            };
            toks.push((t, line));
            i += 1;
        }
    }
    Lexed { toks }
}

/// One path a file names: where it points (absolute, or `None` when it leaves the
/// crate) and the line.
struct Named {
    path: Option<ModPath>,
    line: usize,
    text: String,
}

/// One leaf of a `use` tree, with where it was written.
struct Use {
    segs: Vec<String>,
    alias: Option<String>,
    glob: bool,
    line: usize,
    /// The module the `use` is in (the file's, or an inline module inside it).
    here: ModPath,
    /// Inside a test module.
    test: bool,
}

#[derive(Default)]
struct FileFacts {
    /// Items defined at the file's top level (functions, types, consts, macros, modules).
    defines: BTreeSet<String>,
    /// Names brought in by `use` at any scope: name -> absolute target.
    aliases: BTreeMap<String, ModPath>,
    /// Targets of glob imports.
    globs: Vec<ModPath>,
    /// Every path the file names outside its test modules.
    named: Vec<Named>,
}

fn is_ident(t: &Tok, s: &str) -> bool {
    matches!(t, Tok::Ident(x) if x == s)
}

/// Turns the first segment of a written path into an absolute module path, relative to
/// the module `here` (the file's module plus any inline module around the path).
fn anchor(
    first: &str,
    here: &[String],
    children: &BTreeSet<String>,
    aliases: &BTreeMap<String, ModPath>,
) -> Option<ModPath> {
    match first {
        "crate" => Some(vec![]),
        "self" => Some(here.to_vec()),
        "super" => {
            let mut p = here.to_vec();
            p.pop()?;
            Some(p)
        }
        name if children.contains(name) => {
            let mut p = here.to_vec();
            p.push(name.to_string());
            Some(p)
        }
        name => aliases.get(name).cloned(),
    }
}

/// Expands `super::super::x` style segments after the anchor.
fn extend(mut base: ModPath, rest: &[String]) -> ModPath {
    for s in rest {
        if s == "super" {
            base.pop();
        } else if s != "self" {
            base.push(s.clone());
        }
    }
    base
}

/// Reads one file: its definitions, imports and the paths it names.
fn facts(module: &[String], children: &BTreeSet<String>, src: &str) -> FileFacts {
    let toks = lex(src).toks;
    let mut f = FileFacts::default();
    // Inline modules: (name, brace depth at which its body opened, is a test module)
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_test = false;
    let mut i = 0;
    // First pass collects `use` aliases so that later paths resolve whatever the order.
    let mut uses: Vec<Use> = Vec::new();
    while i < toks.len() {
        let (t, line) = (&toks[i].0, toks[i].1);
        let in_test = inline.iter().any(|m| m.2);
        let here: ModPath = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|m| m.0.clone()))
            .collect();
        match t {
            Tok::Pound => {
                // #[cfg(test)]
                let window: Vec<&Tok> = toks[i..toks.len().min(i + 7)]
                    .iter()
                    .map(|x| &x.0)
                    .collect();
                if window.len() == 7
                    && is_ident(window[2], "cfg")
                    && is_ident(window[4], "test")
                    && matches!(window[5], Tok::Bracket(')'))
                {
                    pending_test = true;
                }
                i += 1;
            }
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                if inline.last().is_some_and(|l| l.1 == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Semi => {
                pending_test = false;
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Open, _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1, pending_test || in_test));
                    if depth == 0 || inline.len() == 1 {
                        f.defines.insert(name.clone());
                    }
                    pending_test = false;
                    i += 2;
                    continue;
                }
                if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                    f.defines.insert(name.clone());
                }
                pending_test = false;
                i += 1;
            }
            Tok::Ident(w) if w == "use" => {
                // parse the use tree up to `;`
                let mut j = i + 1;
                let end = toks[j..]
                    .iter()
                    .position(|x| x.0 == Tok::Semi)
                    .map(|p| p + j)
                    .unwrap_or(toks.len());
                let body: Vec<Tok> = toks[j..end].iter().map(|x| x.0.clone()).collect();
                let mut leaves = Vec::new();
                use_tree(&body, &mut 0, Vec::new(), &mut leaves);
                for (segs, alias, glob) in leaves {
                    uses.push(Use {
                        segs,
                        alias,
                        glob,
                        line,
                        here: here.clone(),
                        test: in_test || pending_test,
                    });
                }
                j = end;
                pending_test = false;
                i = j + 1;
            }
            Tok::Ident(w)
                if depth == 0 || (inline.last().is_some_and(|m| m.1 == depth) && !in_test) =>
            {
                if matches!(
                    w.as_str(),
                    "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "union"
                ) {
                    if let Some((Tok::Ident(name), _)) = toks.get(i + 1)
                        && inline.is_empty()
                    {
                        f.defines.insert(name.clone());
                    }
                } else if w == "macro_rules"
                    && let Some((Tok::Ident(name), _)) = toks.get(i + 2)
                {
                    f.defines.insert(name.clone());
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Anchor the uses (aliases may anchor on earlier aliases: two rounds suffice here).
    for _ in 0..2 {
        for Use {
            segs,
            alias,
            glob,
            here,
            ..
        } in &uses
        {
            let Some(first) = segs.first() else { continue };
            let Some(base) = anchor(first, here, children, &f.aliases) else {
                continue;
            };
            let abs = extend(base, &segs[1..]);
            if *glob {
                if !f.globs.contains(&abs) {
                    f.globs.push(abs);
                }
            } else {
                let name = alias
                    .clone()
                    .or_else(|| segs.iter().rev().find(|s| *s != "self").cloned());
                if let Some(name) = name
                    && name != "_"
                {
                    f.aliases.insert(name, abs);
                }
            }
        }
    }
    for Use {
        segs,
        line,
        here,
        test,
        ..
    } in &uses
    {
        if *test {
            continue;
        }
        let path = segs
            .first()
            .and_then(|first| anchor(first, here, children, &f.aliases))
            .map(|b| extend(b, &segs[1..]));
        f.named.push(Named {
            path,
            line: *line,
            text: format!("use {}", segs.join("::")),
        });
    }
    // Paths written in code.
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_test = false;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i].0;
        match t {
            Tok::Pound => {
                let window: Vec<&Tok> = toks[i..toks.len().min(i + 7)]
                    .iter()
                    .map(|x| &x.0)
                    .collect();
                if window.len() == 7 && is_ident(window[2], "cfg") && is_ident(window[4], "test") {
                    pending_test = true;
                }
                i += 1;
            }
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                if inline.last().is_some_and(|l| l.1 == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Semi => {
                pending_test = false;
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Open, _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    let t = pending_test || inline.iter().any(|m| m.2);
                    inline.push((name.clone(), depth + 1, t));
                    pending_test = false;
                    i += 2;
                    continue;
                }
                pending_test = false;
                i += 1;
            }
            Tok::Ident(w) if w == "use" => {
                let end = toks[i..]
                    .iter()
                    .position(|x| x.0 == Tok::Semi)
                    .map(|p| p + i)
                    .unwrap_or(toks.len());
                pending_test = false;
                i = end + 1;
            }
            Tok::Ident(first) if toks.get(i + 1).is_some_and(|x| x.0 == Tok::Path) => {
                // preceded by `::` means the middle of a path already read
                let mid = i > 0 && toks[i - 1].0 == Tok::Path;
                let mut segs = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|x| x.0 == Tok::Path) {
                    match toks.get(j + 1) {
                        Some((Tok::Ident(s), _)) => {
                            segs.push(s.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let in_test = inline.iter().any(|m| m.2);
                if !mid && !in_test {
                    let here: ModPath = module
                        .iter()
                        .cloned()
                        .chain(inline.iter().map(|m| m.0.clone()))
                        .collect();
                    if let Some(base) = anchor(first, &here, children, &f.aliases) {
                        f.named.push(Named {
                            path: Some(extend(base, &segs[1..])),
                            line: toks[i].1,
                            text: segs.join("::"),
                        });
                    }
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    f
}

/// Flattens a use tree into (segments, alias, is glob).
fn use_tree(
    body: &[Tok],
    pos: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, bool)>,
) {
    let mut segs = prefix;
    // leading `::` (extern) or `pub`-less start
    while *pos < body.len() {
        match &body[*pos] {
            Tok::Ident(s) if s == "as" => {
                let alias = match body.get(*pos + 1) {
                    Some(Tok::Ident(a)) => Some(a.clone()),
                    _ => None,
                };
                out.push((segs.clone(), alias, false));
                *pos += 2;
                return;
            }
            Tok::Ident(s) => {
                segs.push(s.clone());
                *pos += 1;
            }
            Tok::Path => *pos += 1,
            Tok::Star => {
                out.push((segs.clone(), None, true));
                *pos += 1;
                return;
            }
            Tok::Open => {
                *pos += 1;
                loop {
                    if *pos >= body.len() {
                        return;
                    }
                    match &body[*pos] {
                        Tok::Close => {
                            *pos += 1;
                            return;
                        }
                        Tok::Comma => *pos += 1,
                        _ => use_tree(body, pos, segs.clone(), out),
                    }
                }
            }
            Tok::Comma | Tok::Close => {
                out.push((segs.clone(), None, false));
                return;
            }
            _ => *pos += 1,
        }
    }
    if !segs.is_empty() {
        out.push((segs, None, false));
    }
}

struct Crate {
    files: Vec<(ModPath, PathBuf)>,
    index: HashMap<ModPath, usize>,
    facts: Vec<FileFacts>,
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

fn load(src: &Path) -> Crate {
    let mut paths = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && p != src.join("main.rs") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    let files: Vec<(ModPath, PathBuf)> = paths
        .into_iter()
        .map(|p| (module_of(p.strip_prefix(src).unwrap()), p))
        .collect();
    let index: HashMap<ModPath, usize> = files
        .iter()
        .enumerate()
        .map(|(i, (m, _))| (m.clone(), i))
        .collect();
    let facts = files
        .iter()
        .map(|(m, p)| {
            let children: BTreeSet<String> = files
                .iter()
                .filter(|(c, _)| c.len() == m.len() + 1 && c.starts_with(m))
                .map(|(c, _)| c[m.len()].clone())
                .collect();
            facts(m, &children, &std::fs::read_to_string(p).unwrap())
        })
        .collect();
    Crate {
        files,
        index,
        facts,
    }
}

impl Crate {
    /// The file that defines what `abs` names, following imports through modules.
    fn resolve(&self, abs: &[String], budget: usize) -> Option<usize> {
        let k = (0..=abs.len())
            .rev()
            .find(|k| self.index.contains_key(&abs[..*k]))?;
        let m = self.index[&abs[..k]];
        if k == abs.len() || budget == 0 {
            return Some(m);
        }
        let next = &abs[k];
        let facts = &self.facts[m];
        if facts.defines.contains(next) {
            return Some(m);
        }
        if let Some(target) = facts.aliases.get(next)
            && target.as_slice() != &abs[..=k]
        {
            let mut t = target.clone();
            t.extend(abs[k + 1..].iter().cloned());
            return self.resolve(&t, budget - 1).or(Some(m));
        }
        for g in &facts.globs {
            if let Some(&gi) = self.index.get(g)
                && (self.facts[gi].defines.contains(next)
                    || self.facts[gi].aliases.contains_key(next))
            {
                let mut t = g.clone();
                t.extend(abs[k..].iter().cloned());
                return self.resolve(&t, budget - 1).or(Some(m));
            }
        }
        Some(m)
    }

    /// (from file, to file) -> the first line that makes the arrow.
    fn edges(&self) -> BTreeMap<(usize, usize), String> {
        let mut out = BTreeMap::new();
        for (i, f) in self.facts.iter().enumerate() {
            for n in &f.named {
                let Some(p) = &n.path else { continue };
                let Some(j) = self.resolve(p, 8) else {
                    continue;
                };
                if i != j {
                    out.entry((i, j))
                        .or_insert_with(|| format!("{}:{}: {}", self.rel(i), n.line, n.text));
                }
            }
        }
        out
    }

    fn rel(&self, i: usize) -> String {
        let p = &self.files[i].1;
        let s = p.to_string_lossy();
        match s.find("/src/") {
            Some(at) => s[at + 1..].to_string(),
            None => s.to_string(),
        }
    }
}

/// The entry of folder `dir` (a module path) that file module `m` belongs to: its next
/// segment, or `""` for the folder's own file (`mod.rs`, `lib.rs`, `x.rs` for `x/`).
fn entry<'a>(dir: &[String], m: &'a [String]) -> Option<&'a str> {
    if !m.starts_with(dir) {
        return None;
    }
    Some(m.get(dir.len()).map(String::as_str).unwrap_or(""))
}

/// Every circle among the entries of every folder, each as the arrows that close it.
fn circles(krate: &Crate) -> Vec<String> {
    let edges = krate.edges();
    let mut dirs: BTreeSet<ModPath> = BTreeSet::new();
    for (m, _) in &krate.files {
        for k in 0..m.len() {
            dirs.insert(m[..k].to_vec());
        }
    }
    let mut found = Vec::new();
    for dir in &dirs {
        // entry -> entry -> evidence
        let mut g: BTreeMap<&str, BTreeMap<&str, &String>> = BTreeMap::new();
        for ((a, b), why) in &edges {
            let (Some(ea), Some(eb)) = (
                entry(dir, &krate.files[*a].0),
                entry(dir, &krate.files[*b].0),
            ) else {
                continue;
            };
            // The folder's own file (`mod.rs`, `lib.rs`, `x.rs` beside `x/`) is its face: it
            // declares the entries and holds what they share as `super::…`.
            if ea != eb && !ea.is_empty() && !eb.is_empty() {
                g.entry(ea).or_default().entry(eb).or_insert(why);
            }
        }
        for scc in sccs(&g) {
            // one shortest circle through the first node of the component
            let start = scc[0];
            let cycle = shortest_cycle(&g, start, &scc);
            let label = if dir.is_empty() {
                "src".to_string()
            } else {
                format!("src/{}", dir.join("/"))
            };
            let mut s = format!("circle in {label}: {}\n", cycle.join(" -> "));
            for w in cycle.windows(2) {
                s.push_str(&format!(
                    "    {} -> {}: {}\n",
                    name(w[0]),
                    name(w[1]),
                    g[w[0]][w[1]]
                ));
            }
            if scc.len() > cycle.len() - 1 {
                s.push_str(&format!(
                    "    (tangled with: {})\n",
                    scc.iter().map(|e| name(e)).collect::<Vec<_>>().join(", ")
                ));
            }
            found.push(s);
        }
    }
    found
}

fn name(e: &str) -> &str {
    if e.is_empty() {
        "(the folder's own file)"
    } else {
        e
    }
}

fn sccs<'a>(g: &BTreeMap<&'a str, BTreeMap<&'a str, &String>>) -> Vec<Vec<&'a str>> {
    let nodes: BTreeSet<&str> = g
        .keys()
        .copied()
        .chain(g.values().flat_map(|m| m.keys().copied()))
        .collect();
    let reach = |from: &'a str| {
        let mut seen = BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in g
                .get(n)
                .map(|m| m.keys().collect::<Vec<_>>())
                .unwrap_or_default()
            {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for &n in &nodes {
        if done.contains(n) {
            continue;
        }
        let comp: Vec<&str> = nodes
            .iter()
            .copied()
            .filter(|m| reaches[n].contains(m) && reaches[m].contains(n))
            .collect();
        done.extend(comp.iter().copied());
        if comp.len() > 1 {
            out.push(comp);
        }
    }
    out
}

fn shortest_cycle<'a>(
    g: &BTreeMap<&'a str, BTreeMap<&'a str, &String>>,
    start: &'a str,
    scc: &[&'a str],
) -> Vec<&'a str> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for &m in g
            .get(n)
            .map(|m| m.keys().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if !scc.contains(&m) {
                continue;
            }
            if m == start {
                let mut back = vec![n];
                while let Some(&p) = prev.get(back[back.len() - 1]) {
                    back.push(p);
                }
                back.reverse();
                if back.first() != Some(&start) {
                    back.insert(0, start);
                }
                back.push(start);
                return back;
            }
            if !prev.contains_key(m) {
                prev.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    vec![start, start]
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_circle_between_the_entries_of_any_folder() {
    let krate = load(&src_dir());
    let found = circles(&krate);
    assert!(
        found.is_empty(),
        "{} import circle(s):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The check itself: a crate whose two files import each other, through a `use`, a
/// written path and a re-export, is caught; one arrow alone is not.
#[test]
fn a_circle_through_a_re_export_is_found() {
    let root = std::env::temp_dir().join(format!("khaelor-layers-{}", std::process::id()));
    let src = root.join("src");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(src.join("f")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod f;\n").unwrap();
    std::fs::write(
        src.join("f/mod.rs"),
        "pub mod a;\npub mod b;\npub use b::Shared;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("f/a.rs"),
        "// use super::b::Nothing; (a comment)\nuse super::Shared;\npub fn a() {}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("f/b.rs"),
        "pub struct Shared;\nconst S: &str = \"super::a::a\";\n",
    )
    .unwrap();
    assert!(circles(&load(&src)).is_empty(), "one arrow is no circle");
    std::fs::write(
        src.join("f/b.rs"),
        "pub struct Shared;\npub fn b() { super::a::a() }\n",
    )
    .unwrap();
    let found = circles(&load(&src));
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("circle in src/f: a -> b -> a"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/f/a.rs:2: use super::Shared"),
        "{}",
        found[0]
    );
}
