//! A config text through the loader's parser and the policy builder: never a panic,
//! and a broken file contributes deny rules only.
#![no_main]

use khaelor_perm::policy::config::{Policy, parse_config};
use khaelor_perm::policy::rules::{Action, RuleSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_config(text, "config.json", RuleSource::Project);
    let broken = !parsed.errors.is_empty();
    let policy = Policy::builder()
        .without_defaults()
        .layer(RuleSource::Project, parsed)
        .build();
    if broken {
        assert!(policy.rules().iter().all(|r| r.action == Action::Deny));
    }
});
