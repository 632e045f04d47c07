//! Shared helpers for the table-driven tests: loading golden tables from `fixtures/`
//! and building analysis contexts over real temp directories.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// The repository's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Loads a JSON Lines golden table: one case per line; blank lines and lines starting
/// with `#` or `//` are skipped. Returns `(line number, case)` so a failure names its
/// line. A malformed line fails the test with its line number.
pub fn load_table<T: DeserializeOwned>(name: &str) -> Vec<(usize, T)> {
    let path = fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("//") {
            continue;
        }
        let case: T = serde_json::from_str(t)
            .unwrap_or_else(|e| panic!("{}:{}: bad case: {e}\n{t}", path.display(), i + 1));
        out.push((i + 1, case));
    }
    out
}
