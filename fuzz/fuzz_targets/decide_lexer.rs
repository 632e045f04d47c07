//! A bash command through the V1 lexer engine and `decide` under
//! the default policy: never a panic, and a hardline hit is always a deny.
#![no_main]

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::{config::Policy, decide};
use khaelor_perm::{analysis, tools};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let dir = std::env::temp_dir();
    let Ok(ctx) = AnalysisContext::new(&dir, None, &dir) else {
        return;
    };
    let a = analysis::analyze_lexer(command, &ctx);
    let call = tools::bash_call(command, a, &ctx, false);
    let d = decide::decide(&Policy::default(), &[], &call, &ctx, true);
    if call.hardline.is_some() {
        assert_eq!(d.decision, khaelor_perm::policy::rules::Action::Deny, "{command:?}");
    }
});
