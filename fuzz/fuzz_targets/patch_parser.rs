//! A patch text through the `apply_patch` tool mapping (the patch parser and the path
//! resolution behind it) and `decide`: never a panic.
#![no_main]

use khaelor_perm::model::vocab::AnalysisContext;
use khaelor_perm::policy::{config::Policy, decide};
use khaelor_perm::tools;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = std::str::from_utf8(data) else {
        return;
    };
    let dir = std::env::temp_dir();
    let Ok(ctx) = AnalysisContext::new(&dir, None, &dir) else {
        return;
    };
    let input = serde_json::json!({ "patch": patch });
    if let Ok(call) = tools::map_call("apply_patch", &input, &ctx) {
        let _ = decide::decide(&Policy::default(), &[], &call, &ctx, true);
    }
});
