//! Writes an import as a commented `.khaelor/config.json`: a header naming the
//! command and the sources, then every rule in evaluation order, each preceded by a
//! comment with the source file, line and text it came from (and why it differs, when
//! it does), and at the end the entries that were not translated, with the reason.

use super::Format;
use super::model::Import;

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// A comment line's text: no line breaks or comment terminators from the source.
fn comment(s: &str) -> String {
    s.replace(['\n', '\r'], " ").replace("*/", "* /")
}

pub fn render(import: &Import, format: Format, sources: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "// Imported by `khaelor-perm rules import --from {}` from:\n",
        format.as_str()
    ));
    for s in sources {
        out.push_str(&format!("//   {}\n", comment(s)));
    }
    out.push_str("// Rules are evaluated in order and the last matching rule wins (the source's\n");
    out.push_str("// precedence is already folded into this order). Each rule names its origin.\n");
    out.push_str("{\n  \"permissions\": {\n");
    if import.always_scope_exact {
        out.push_str("    // Kram remembers exactly what was approved: so do we.\n");
        out.push_str("    \"alwaysScope\": \"exact\",\n");
    }
    out.push_str("    \"rules\": [\n");
    for r in &import.rules {
        out.push_str(&format!("      // {}  {}\n", r.from, comment(&r.original)));
        if let Some(n) = &r.note {
            out.push_str(&format!("      //   note: {}\n", comment(n)));
        }
        let mut fields = vec![
            format!("\"capability\": {}", quote(&r.rule.capability)),
            format!("\"pattern\": {}", quote(&r.rule.pattern)),
        ];
        if r.rule.dialect != crate::policy::rules::MatchDialect::Wildcard {
            fields.push(format!("\"match\": {}", quote(r.rule.dialect.as_str())));
        }
        fields.push(format!("\"action\": {}", quote(r.rule.action.as_str())));
        if !r.examples.matches.is_empty() || !r.examples.not_matches.is_empty() {
            let list = |v: &[String]| v.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ");
            fields.push(format!(
                "\"examples\": {{ \"match\": [{}], \"notMatch\": [{}] }}",
                list(&r.examples.matches),
                list(&r.examples.not_matches)
            ));
        }
        out.push_str(&format!("      {{ {} }},\n", fields.join(", ")));
    }
    out.push_str("    ],\n  },\n}\n");
    if !import.skipped.is_empty() {
        out.push_str("// Not translated:\n");
        for s in &import.skipped {
            out.push_str(&format!(
                "//   {}  {}: {}\n",
                s.from,
                comment(&s.original),
                comment(&s.reason)
            ));
        }
    }
    out
}
