//! The golden path table (`fixtures/paths.jsonl`): on a real filesystem (directories,
//! files, symlinks in and out of the project), the AST engine must give exactly the
//! expected sets of `file.write.project`, `file.write.outsideProject` and `file.read`
//! subjects (DESIGN.md § Analysis: effective cwd, `~`/`$HOME`, `..`, symlinks on the
//! longest existing prefix, redirections as writes).
//!
//! Owns only these checks and the temp layout they run in; it must not touch the
//! engines. The table is data: add cases to the fixture, not here.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use khaelor_perm::analysis::analyze;
use khaelor_perm::model::vocab::{Analysis, AnalysisContext, Capability};
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Setup {
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    files: Vec<String>,
    /// Link path -> target, the target used as written after placeholder expansion.
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    #[serde(default)]
    setup: Setup,
    #[serde(default)]
    cwd: Option<String>,
    command: String,
    writes_project: Vec<String>,
    writes_outside: Vec<String>,
    reads: Vec<String>,
}

/// One fresh layout per case: `$PARENT/{proj, projX, out, home}`.
struct Layout {
    _tmp: tempfile::TempDir,
    parent: PathBuf,
    root: PathBuf,
    sib: PathBuf,
    out: PathBuf,
    home: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        // Canonical from the start, so expected subjects compare with resolved ones even
        // where the temp dir sits behind a symlink (macOS /var -> /private/var).
        let parent = std::fs::canonicalize(tmp.path()).unwrap();
        let root = parent.join("proj");
        let mut sib_name = root.clone().into_os_string();
        sib_name.push("X");
        let sib = PathBuf::from(sib_name);
        let out = parent.join("out");
        let home = parent.join("home");
        for d in [&root, &sib, &out, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        Layout {
            _tmp: tmp,
            parent,
            root,
            sib,
            out,
            home,
        }
    }

    fn text(p: &Path) -> String {
        p.to_str().expect("temp paths are UTF-8").to_string()
    }

    /// Placeholders of the command text: everything but `$HOME`, which the engine
    /// must expand itself. No placeholder name is a prefix of another, so the order of
    /// the replacements does not matter.
    fn in_command(&self, s: &str) -> String {
        s.replace("$SIB", &Self::text(&self.sib))
            .replace("$ROOT", &Self::text(&self.root))
            .replace("$OUT", &Self::text(&self.out))
            .replace("$PARENT", &Self::text(&self.parent))
    }

    /// Placeholders of setup entries and expectations: all five.
    fn expand(&self, s: &str) -> String {
        self.in_command(s).replace("$HOME", &Self::text(&self.home))
    }

    /// A setup path: absolute after expansion, else relative to the root.
    fn place(&self, s: &str) -> PathBuf {
        let p = PathBuf::from(self.expand(s));
        if p.is_absolute() {
            p
        } else {
            self.root.join(p)
        }
    }

    fn build(&self, setup: &Setup) {
        for d in &setup.dirs {
            std::fs::create_dir_all(self.place(d)).unwrap();
        }
        for f in &setup.files {
            let p = self.place(f);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).unwrap();
            }
            std::fs::write(&p, "x\n").unwrap();
        }
        for (link, target) in &setup.symlinks {
            let p = self.place(link);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).unwrap();
            }
            std::os::unix::fs::symlink(self.expand(target), &p).unwrap();
        }
    }
}

/// Runs an engine, turning a panic into a failure of this case so one panicking case
/// does not hide the rest of the table (the analyzer must never panic: seed §7.4).
fn guarded(f: impl FnOnce() -> Analysis + std::panic::UnwindSafe) -> Result<Analysis, String> {
    std::panic::catch_unwind(f).map_err(|e| {
        e.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic".to_string())
    })
}

fn subjects(a: &Analysis, capability: Capability) -> BTreeSet<String> {
    a.requests
        .iter()
        .filter(|r| r.capability == capability)
        .map(|r| r.subject.clone())
        .collect()
}

#[test]
fn path_table() {
    let cases = common::load_table::<Case>("paths.jsonl");
    assert!(cases.len() >= 30, "only {} path cases", cases.len());
    let mut failures = Vec::new();
    for (line, case) in &cases {
        let layout = Layout::new();
        layout.build(&case.setup);
        let cwd = case.cwd.as_deref().map(|c| layout.place(c));
        let ctx = AnalysisContext::new(&layout.root, cwd.as_deref(), &layout.home).unwrap();
        let command = layout.in_command(&case.command);
        let analysis = match guarded(|| analyze(&command, &ctx)) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!(
                    "fixtures/paths.jsonl:{line}: `{}`: the AST engine panicked: {e}\n",
                    command.escape_debug()
                ));
                continue;
            }
        };

        let want =
            |v: &[String]| -> BTreeSet<String> { v.iter().map(|s| layout.expand(s)).collect() };
        let checks = [
            (
                "file.write.project",
                Capability::FileWriteProject,
                want(&case.writes_project),
            ),
            (
                "file.write.outsideProject",
                Capability::FileWriteOutsideProject,
                want(&case.writes_outside),
            ),
            ("file.read", Capability::FileRead, want(&case.reads)),
        ];
        let mut problems = Vec::new();
        for (name, capability, expected) in &checks {
            let got = subjects(&analysis, *capability);
            if &got != expected {
                problems.push(format!("{name}: got {got:?}, want {expected:?}"));
            }
        }
        // Whatever the table says, a project write must be inside the root and a
        // resolved outside write must not be: the capability is the containment test.
        for s in subjects(&analysis, Capability::FileWriteProject) {
            if !Path::new(&s).starts_with(&layout.root) {
                problems.push(format!("project write `{s}` is not under the root"));
            }
        }
        for s in subjects(&analysis, Capability::FileWriteOutsideProject) {
            if Path::new(&s).is_absolute() && Path::new(&s).starts_with(&layout.root) {
                problems.push(format!("outside write `{s}` is under the root"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "fixtures/paths.jsonl:{line}: `{}` (cwd {:?}, root {})\n  - {}\nanalysis: {analysis:#?}\n",
                command.escape_debug(),
                ctx.cwd(),
                layout.root.display(),
                problems.join("\n  - ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} path cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The layout the table relies on: the sibling shares the root's prefix but is not
/// inside it, and symlinks in the setup are real symlinks.
#[test]
fn layout_is_what_the_table_says() {
    let layout = Layout::new();
    layout.build(&Setup {
        dirs: vec!["sub".into()],
        files: vec!["a.txt".into()],
        symlinks: BTreeMap::from([
            ("out-link".to_string(), "$OUT".to_string()),
            ("rel".to_string(), "sub".to_string()),
        ]),
    });
    assert!(Layout::text(&layout.sib).starts_with(&Layout::text(&layout.root)));
    assert!(!layout.sib.starts_with(&layout.root));
    assert_eq!(
        std::fs::read_link(layout.root.join("out-link")).unwrap(),
        layout.out
    );
    assert_eq!(
        std::fs::read_link(layout.root.join("rel")).unwrap(),
        PathBuf::from("sub")
    );
    assert!(layout.root.join("a.txt").is_file());
    assert_eq!(
        layout.in_command("touch $HOME/x $OUT/y"),
        format!("touch $HOME/x {}/y", layout.out.display())
    );
    assert_eq!(
        layout.expand("$HOME/x"),
        format!("{}/x", layout.home.display())
    );
    let ctx = AnalysisContext::new(&layout.root, None, &layout.home).unwrap();
    assert_eq!(ctx.root(), layout.root.as_path());
}
