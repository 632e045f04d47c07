//! Everyday work runs unchanged inside the sandbox: small real projects the test makes
//! (a crate with no dependencies under `cargo test --offline`, a node package under
//! `npm test`, a Python package under `pytest`, a shell script), each run outside and
//! then through `khaelor-perm exec --contain`, with the same exit status and the same
//! output, a failing test included.
//!
//! Needs bubblewrap and pytest (tests/setup/contain.sh) and npm (tests/setup/hosts.sh);
//! fails with the script's name, never skips. Projects live under Cargo's target tmp
//! dir: the sandbox's `/tmp` is private.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn need(tool: &str, script: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| panic!("`{tool}` is missing; run {script}"))
}

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    if let Err(e) = khaelor_perm::contain::available() {
        panic!("the sandbox cannot run here ({e}); run tests/setup/contain.sh");
    }
    let dir = tempfile::Builder::new()
        .prefix("contain-work")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("proj");
    for (rel, body) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
    }
    (dir, root)
}

fn outside(root: &Path, argv: &[&str]) -> Output {
    Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .output()
        .unwrap()
}

fn inside(root: &Path, argv: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["exec", "--contain", "--"])
        .args(argv)
        .current_dir(root)
        .output()
        .unwrap()
}

/// Runs `argv` outside and inside (outside first, so both see the same built state
/// when `fresh` is false) and compares status and output after `normalize`.
fn same(root: &Path, argv: &[&str], normalize: fn(&str) -> String) -> Output {
    let out = outside(root, argv);
    let ins = inside(root, argv);
    let text = |b: &[u8]| normalize(&String::from_utf8_lossy(b));
    assert_eq!(
        ins.status.code(),
        out.status.code(),
        "{argv:?}: exit status differs\ninside stderr:\n{}",
        String::from_utf8_lossy(&ins.stderr)
    );
    assert_eq!(
        text(&ins.stdout),
        text(&out.stdout),
        "{argv:?}: stdout differs"
    );
    assert_eq!(
        text(&ins.stderr),
        text(&out.stderr),
        "{argv:?}: stderr differs"
    );
    ins
}

fn keep(s: &str) -> String {
    s.to_string()
}

/// Timings vary from run to run: `finished in 0.01s`, `in 0.02s`, `(3ms)`.
fn no_timings(s: &str) -> String {
    s.lines()
        .map(|l| {
            let mut out = String::new();
            let mut num = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (num && c == '.') {
                    if !num {
                        out.push('#');
                    }
                    num = true;
                } else {
                    num = false;
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn cargo_test_offline_of_a_crate_without_dependencies() {
    need("cargo", "rustup (the toolchain that builds this project)");
    let (_d, root) = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 { a + b }\n#[cfg(test)]\nmod t {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n    #[test]\n    fn fails() { assert_eq!(super::add(2, 2), 5, \"on purpose\"); }\n}\n",
        ),
    ]);
    // Build once outside so both runs print the same (no `Compiling` lines).
    let build = outside(&root, &["cargo", "test", "--offline", "--no-run", "-q"]);
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let o = same(&root, &["cargo", "test", "--offline", "-q"], no_timings);
    assert_eq!(o.status.code(), Some(101));
    assert!(String::from_utf8_lossy(&o.stdout).contains("on purpose"));
    // A build from clean inside writes target/ in the project and passes.
    std::fs::remove_dir_all(root.join("target")).unwrap();
    let o = inside(&root, &["cargo", "test", "--offline", "-q", "adds"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(root.join("target").is_dir());
}

#[test]
fn npm_test_of_a_node_package() {
    need("npm", "tests/setup/hosts.sh");
    let (_d, root) = project(&[
        (
            "package.json",
            "{\"name\":\"t\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node --test\"}}\n",
        ),
        (
            "math.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\ntest('adds', () => { fs.writeFileSync('out.txt', 'x'); assert.strictEqual(1 + 1, 2); });\n",
        ),
    ]);
    let o = same(&root, &["npm", "test", "--silent"], no_timings);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pass 1"));
    assert!(root.join("out.txt").is_file());
    std::fs::write(
        root.join("fail.test.js"),
        "require('node:test')('fails', () => { throw new Error('on purpose'); });\n",
    )
    .unwrap();
    let o = same(&root, &["npm", "test", "--silent"], no_timings);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn pytest_of_a_python_package() {
    let pytest = need("pytest", "tests/setup/contain.sh");
    let pytest = pytest.to_str().unwrap();
    let (_d, root) = project(&[
        ("conftest.py", ""),
        ("pkg/__init__.py", ""),
        ("pkg/calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "from pkg.calc import add\n\ndef test_add(tmp_path):\n    (tmp_path / 'x').write_text('y')\n    assert add(2, 2) == 4\n",
        ),
    ]);
    let argv = [pytest, "-q", "-p", "no:cacheprovider", "tests"];
    let o = same(&root, &argv, no_timings);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 passed"));
    std::fs::write(
        root.join("tests/test_fail.py"),
        "def test_fails():\n    assert 1 == 2, 'on purpose'\n",
    )
    .unwrap();
    let o = same(&root, &argv, no_timings);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_project_script_with_pipes_and_files() {
    let (_d, root) = project(&[(
        "run.sh",
        "set -e\nmkdir -p build\nprintf 'b\\na\\n' | sort > build/sorted.txt\ncat build/sorted.txt\necho done >&2\n",
    )]);
    let o = same(&root, &["bash", "run.sh"], keep);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a\nb\n");
}
