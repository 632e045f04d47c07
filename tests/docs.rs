//! The book under `docs/` (mdBook) is part of the product, so it is tested like code:
//!
//! - `api_page_matches_openapi`: the HTTP API reference page, `docs/src/http/api.md`, is
//!   generated from the checked-in `openapi.yaml` (itself held to the code by
//!   `tests/http_openapi.rs`), so the page cannot drift from the service. Regenerate it
//!   with `UPDATE_DOCS=1 cargo test --test docs`.
//! - `book_builds_and_every_internal_link_resolves`: `mdbook build` succeeds, and every
//!   relative link and `#anchor` in the built HTML points at a file and an element id
//!   that exist. mdBook itself only warns about a missing page and never checks
//!   anchors, and mdbook-linkcheck (the usual backend for this) is built against mdBook
//!   0.4's renderer interface and pulls in an HTTP client stack; checking the built HTML
//!   here needs no extra tool and checks exactly what a reader clicks. Needs the pinned
//!   mdBook: `bash tests/setup/docs.sh` installs it (the test command runs it first), and
//!   a missing mdBook fails the test.
//! - `readme_links_resolve`: the README's relative links (into the book, BENCHMARKS.md,
//!   CHANGELOG.md) name files that exist.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// ---------------------------------------------------------------------------------------
// The API page, generated from openapi.yaml.

#[test]
fn api_page_matches_openapi() {
    let spec = std::fs::read_to_string(Path::new(ROOT).join("openapi.yaml")).unwrap();
    let generated = render_api(&spec);
    let page = Path::new(ROOT).join("docs/src/http/api.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&page, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/src/http/api.md is out of date with openapi.yaml: run `UPDATE_DOCS=1 cargo test --test docs`"
    );
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The markdown page for an OpenAPI 3.1 document: one section per operation (in the
/// document's order), then one per schema.
fn render_api(yaml: &str) -> String {
    let doc: Value = serde_norway::from_str(yaml).expect("openapi.yaml parses");
    let mut out = String::new();
    out.push_str("<!-- Generated from openapi.yaml by tests/docs.rs; do not edit by hand.\n");
    out.push_str("     Regenerate: UPDATE_DOCS=1 cargo test --test docs -->\n\n");
    out.push_str("# HTTP API reference\n\n");
    if let Some(d) = doc.pointer("/info/description").and_then(Value::as_str) {
        out.push_str(d.trim());
        out.push_str("\n\n");
    }
    let version = doc
        .pointer("/info/version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let _ = writeln!(
        out,
        "OpenAPI {}, API version {version}. The service serves this document at \
         `GET /openapi.yaml`; `khaelor-perm openapi` prints it.\n",
        doc["openapi"].as_str().unwrap_or("3.1")
    );

    let empty = serde_json::Map::new();
    let paths = doc["paths"].as_object().unwrap_or(&empty);
    out.push_str("## Routes\n\n| method | path | summary |\n|---|---|---|\n");
    for (path, item) in paths {
        for m in METHODS {
            if let Some(op) = item.get(m) {
                let title = format!("{} {path}", m.to_uppercase());
                let _ = writeln!(
                    out,
                    "| {} | [`{path}`](#{}) | {} |",
                    m.to_uppercase(),
                    anchor(&format!("`{title}`")),
                    cell(op["summary"].as_str().unwrap_or(""))
                );
            }
        }
    }
    out.push('\n');

    for (path, item) in paths {
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            let _ = writeln!(out, "## `{} {path}`\n", m.to_uppercase());
            for key in ["summary", "description"] {
                if let Some(t) = op.get(key).and_then(Value::as_str) {
                    out.push_str(t.trim());
                    out.push_str("\n\n");
                }
            }
            if let Some(tags) = op.get("tags").and_then(Value::as_array) {
                let tags: Vec<&str> = tags.iter().filter_map(Value::as_str).collect();
                let _ = writeln!(out, "Tags: {}.\n", tags.join(", "));
            }
            if let Some(params) = op.get("parameters").and_then(Value::as_array) {
                out.push_str("| parameter | in | type | required | description |\n");
                out.push_str("|---|---|---|---|---|\n");
                for p in params {
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} | {} | {} |",
                        p["name"].as_str().unwrap_or(""),
                        p["in"].as_str().unwrap_or(""),
                        type_of(&p["schema"]),
                        if p["required"].as_bool() == Some(true) {
                            "yes"
                        } else {
                            "no"
                        },
                        cell(p["description"].as_str().unwrap_or(""))
                    );
                }
                out.push('\n');
            }
            if let Some(body) = op.get("requestBody") {
                let content = body_types(&body["content"]);
                let _ = writeln!(
                    out,
                    "Request body{}: {content}\n",
                    if body["required"].as_bool() == Some(true) {
                        " (required)"
                    } else {
                        ""
                    }
                );
            }
            if let Some(resp) = op.get("responses").and_then(Value::as_object) {
                out.push_str("| status | meaning | body |\n|---|---|---|\n");
                for (status, r) in resp {
                    let _ = writeln!(
                        out,
                        "| {status} | {} | {} |",
                        cell(r["description"].as_str().unwrap_or("")),
                        body_types(&r["content"])
                    );
                }
                out.push('\n');
            }
        }
    }

    out.push_str("## Schemas\n\n");
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    for (name, s) in schemas.unwrap_or(&empty) {
        let _ = writeln!(out, "### {name}\n");
        if let Some(d) = s.get("description").and_then(Value::as_str) {
            out.push_str(d.trim());
            out.push_str("\n\n");
        }
        render_schema(s, &mut out);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// A schema's shape: its fields as a table; for `allOf`, each part in turn; for
/// `oneOf`/`anyOf`, each variant (a table, a link or a type) as a list item.
fn render_schema(s: &Value, out: &mut String) {
    if s.get("properties").is_some() {
        fields_table(s, out);
        return;
    }
    if let Some(parts) = s.get("allOf").and_then(Value::as_array) {
        for p in parts {
            if p.get("$ref").is_some() {
                let _ = writeln!(out, "All the fields of {}.\n", type_of(p));
            } else if p.get("properties").is_some() {
                if let Some(d) = p.get("description").and_then(Value::as_str)
                    && s.get("description").and_then(Value::as_str) != Some(d)
                {
                    let _ = writeln!(out, "{}\n", d.trim());
                }
                fields_table(p, out);
            } else {
                let _ = writeln!(out, "And: {}.\n", type_of(p));
            }
        }
        return;
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = s.get(key).and_then(Value::as_array) {
            out.push_str("One of:\n\n");
            for (i, v) in variants.iter().enumerate() {
                let desc = v.get("description").and_then(Value::as_str).map(one_line);
                if v.get("properties").is_some() {
                    // A variant tagged by a one-value field is named by it (`tool` = "read").
                    let tag = v["properties"].as_object().and_then(|props| {
                        props.iter().find_map(|(k, p)| {
                            match p.get("enum")?.as_array()?.as_slice() {
                                [only] => Some(format!("`{k}` = `{only}`")),
                                _ => None,
                            }
                        })
                    });
                    let label = tag.unwrap_or_else(|| format!("Variant {}", i + 1));
                    let _ = writeln!(
                        out,
                        "**{label}**{}\n",
                        desc.map(|d| format!(": {d}")).unwrap_or_default()
                    );
                    fields_table(v, out);
                } else {
                    let _ = writeln!(
                        out,
                        "- {}{}",
                        type_of(v),
                        desc.map(|d| format!(": {d}")).unwrap_or_default()
                    );
                    if variants
                        .get(i + 1)
                        .is_none_or(|n| n.get("properties").is_some())
                    {
                        out.push('\n');
                    }
                }
            }
            return;
        }
    }
    let _ = writeln!(out, "Type: {}.\n", type_of(s));
}

/// The `properties` of an object schema as a table, required ones marked.
fn fields_table(s: &Value, out: &mut String) {
    let empty = serde_json::Map::new();
    let props = s
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: BTreeSet<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("| field | type | required | description |\n|---|---|---|---|\n");
    for (field, p) in props {
        let desc = p
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| {
                // A nullable reference carries its description on the non-null branch.
                p.get("oneOf")?
                    .as_array()?
                    .iter()
                    .find_map(|v| v.get("description")?.as_str())
            })
            .unwrap_or("");
        let _ = writeln!(
            out,
            "| `{field}` | {} | {} | {} |",
            type_of(p),
            if required.contains(field.as_str()) {
                "yes"
            } else {
                "no"
            },
            cell(desc)
        );
    }
    out.push('\n');
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text for a table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

/// The media types of a `content` map and their schemas.
fn body_types(content: &Value) -> String {
    let Some(map) = content.as_object() else {
        return "none".into();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(mime, c)| match c.get("schema") {
            Some(s) => format!("`{mime}`, {}", type_of(s)),
            None => format!("`{mime}`"),
        })
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}

/// A JSON Schema's type in a few words, `$ref`s linked to their schema's section.
fn type_of(s: &Value) -> String {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[{name}](#{})", anchor(name));
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(v) = s.get(key).and_then(Value::as_array) {
            let sep = if key == "allOf" { " and " } else { " or " };
            let parts: Vec<String> = v.iter().map(type_of).collect();
            return parts.join(sep);
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        let vals: Vec<String> = e
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("`\"{s}\"`"),
                other => format!("`{other}`"),
            })
            .collect();
        return format!("one of {}", vals.join(", "));
    }
    if let Some(c) = s.get("const") {
        return format!("`{c}`");
    }
    let base = match s.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => vec![],
    };
    let words: Vec<String> = base
        .iter()
        .map(|t| match t.as_str() {
            "array" => format!("array of {}", s.get("items").map_or("any".into(), type_of)),
            "object" => match s.get("additionalProperties") {
                Some(v @ Value::Object(_)) => format!("map of {}", type_of(v)),
                _ => "object".into(),
            },
            other => other.to_string(),
        })
        .collect();
    if words.is_empty() {
        "any".into()
    } else {
        words.join(" or ")
    }
}

/// The id mdBook gives a heading: lower case, letters, digits, `-` and `_` kept, spaces
/// as `-`, everything else dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The built book: every internal link and anchor resolves.

fn mdbook() -> PathBuf {
    let dir = std::env::var_os("KHAELOR_MDBOOK_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/khaelor-perm/mdbook"))
        })
        .expect("HOME or KHAELOR_MDBOOK_DIR");
    let bin = dir.join("bin/mdbook");
    assert!(
        bin.is_file(),
        "mdbook is not installed at {}: run `bash tests/setup/docs.sh` (the test command `bash tests/run.sh` runs it first)",
        bin.display()
    );
    bin
}

#[test]
fn book_builds_and_every_internal_link_resolves() {
    let out = tempfile::tempdir().unwrap();
    let build = Command::new(mdbook())
        .arg("build")
        .arg(Path::new(ROOT).join("docs"))
        .arg("--dest-dir")
        .arg(out.path())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "mdbook build failed:\n{log}");
    // mdBook builds with a missing chapter file or a broken include only with a warning.
    assert!(
        !log.contains("WARN") && !log.contains("ERROR"),
        "mdbook build warned:\n{log}"
    );

    let mut pages = Vec::new();
    collect_html(out.path(), &mut pages);
    assert!(pages.len() > 20, "the book has only {} pages", pages.len());
    let mut ids: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for p in &pages {
        let html = std::fs::read_to_string(p).unwrap();
        ids.insert(p.clone(), attr_values(&html, "id").into_iter().collect());
    }

    let mut broken = Vec::new();
    let mut checked = 0usize;
    for p in &pages {
        // print.html is every page on one page, its links rewritten by mdBook; the pages
        // themselves carry the same links, checked one by one. 404.html is served for
        // any missing path, so its links resolve against the site's root (`<base
        // href="/">`), not against its own directory.
        if p.file_name()
            .is_some_and(|n| n == "print.html" || n == "404.html")
        {
            continue;
        }
        let html = std::fs::read_to_string(p).unwrap();
        for href in attr_values(&html, "href") {
            let href = decode(&href);
            if href.is_empty()
                || href.contains("://")
                || href.starts_with("mailto:")
                || href.starts_with("//")
                || href.starts_with("javascript:")
            {
                continue;
            }
            checked += 1;
            let (path_part, frag) = match href.split_once('#') {
                Some((a, f)) => (a, Some(f)),
                None => (href.as_str(), None),
            };
            let path_part = path_part.split('?').next().unwrap_or("");
            let target = if path_part.is_empty() {
                p.clone()
            } else {
                let mut t = p.parent().unwrap().join(path_part);
                if t.is_dir() {
                    t = t.join("index.html");
                }
                t
            };
            let target = normalize(&target);
            if !target.is_file() {
                broken.push(format!("{}: {href} (no such file)", rel(out.path(), p)));
                continue;
            }
            if let Some(f) = frag.filter(|f| !f.is_empty()) {
                let known = ids.get(&target).is_some_and(|s| s.contains(f));
                if !known {
                    broken.push(format!(
                        "{}: {href} (no element with id `{f}`)",
                        rel(out.path(), p)
                    ));
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} links were checked");
    assert!(
        broken.is_empty(),
        "{} broken links in the book:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

fn collect_html(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_html(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

/// Every `name="…"` attribute value in `html` (double-quoted, as mdBook writes them).
fn attr_values(html: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        if let Some(end) = rest.find('"') {
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// HTML entities and percent-escapes that mdBook may write into an href.
fn decode(href: &str) -> String {
    let s = href
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}

// ---------------------------------------------------------------------------------------
// The README's links.

#[test]
fn readme_links_resolve() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let mut checked = 0;
    let mut broken = Vec::new();
    let mut rest = readme.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let link = &rest[..end];
        rest = &rest[end..];
        if link.contains("://") || link.starts_with('#') {
            continue;
        }
        checked += 1;
        let file = link.split('#').next().unwrap_or("");
        if !Path::new(ROOT).join(file).exists() {
            broken.push(link.to_string());
        }
    }
    assert!(checked >= 10, "only {checked} README links were checked");
    assert!(
        broken.is_empty(),
        "README links to missing files: {broken:?}"
    );
}

#[test]
fn anchors_follow_mdbook() {
    assert_eq!(anchor("`POST /v1/evaluate`"), "post-v1evaluate");
    assert_eq!(
        anchor("What \"verified\" means: the real programs"),
        "what-verified-means-the-real-programs"
    );
    assert_eq!(anchor("AnalyzeRequest"), "analyzerequest");
}
