//! A rule pattern and a subject through rule compilation and matching: never a panic;
//! a compiled pattern matches every text made from it by filling its `*`s; and a rule
//! set built from it evaluates without panicking.
#![no_main]

use khaelor_perm::policy::rules::{Action, PermissionRule, RuleSet, RuleSource, Wildcard};
use khaelor_perm::model::vocab::Capability;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, subject) = text.split_once('\n').unwrap_or((text, text));
    let w = Wildcard::new(pattern);
    let _ = w.is_match(subject);
    for fill in ["", "x", subject] {
        let filled = pattern.replace('*', fill);
        assert!(w.is_match(&filled), "{pattern:?} vs {filled:?}");
    }
    let rule = PermissionRule::new(
        "process.execute",
        pattern,
        Action::Deny,
        RuleSource::Project,
    );
    let set = RuleSet::new(vec![rule]);
    let _ = set.evaluate(Capability::ProcessExecute, subject);
});
