//! An existing config text and an "always" grant through the grant writer's edit and
//! its check by the loader: never a panic, and whatever it accepts the loader reads
//! without error with the rule in it.
#![no_main]

use std::path::Path;

use khaelor_perm::policy::config::parse_config;
use khaelor_perm::session::grants::{PersistedRule, edit_checked};
use khaelor_perm::policy::rules::RuleSource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The last line, when short, is the pattern to grant; the rest the file.
    let (file, pattern) = match text.rsplit_once('\n') {
        Some((f, p)) if p.len() < 200 && !p.is_empty() => (f, p),
        _ => (text, "npm test"),
    };
    let rule = PersistedRule {
        capability: "process.execute".to_string(),
        pattern: pattern.to_string(),
        action: "allow".to_string(),
    };
    if let Ok((new_text, _)) =
        edit_checked(Path::new("config.json"), file, std::slice::from_ref(&rule))
    {
        let parsed = parse_config(&new_text, "config.json", RuleSource::Project);
        assert!(parsed.errors.is_empty(), "{new_text}");
        assert!(
            parsed.rules.iter().any(|r| r.pattern == rule.pattern),
            "{new_text}"
        );
    }
});
