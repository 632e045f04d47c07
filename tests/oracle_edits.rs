//! The program oracle on in-project edits: the real programs run over a fresh writable
//! copy of the hostile world per command, traced, and the edit judge
//! (`judge::judge_edit`) holds what they did to the requests the analysis made.
//!
//! The judge is pinned on real traces judged against hand-made requests (so it does
//! not depend on what the analysis decides today): `cp docs/sshdir/id_rsa x` reads a
//! secret through a link, `ln -sf ~/.bashrc a && echo x > a` writes out of the project
//! through the link it just made, `mkdir -p .git/hooks/x` writes a protected place,
//! `echo x > b.txt` when only `a.txt` was requested is unpredicted; and real good edits
//! (`mkdir -p src/x`, `mv a.txt b.txt`, `sed -i 's/a/b/' a.txt`, `echo x > notes.md`,
//! `cp -r notes e`, `ln -sf a.txt l`) keep the promise. A small generated run
//! (every edit option and form once) runs end to end, with the analysis deciding.
//!
//! Needs `bwrap`, `strace`, `setpriv` and the programs: `bash tests/setup/oracle.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use khaelor_perm::oracle::programs::judge::{self, Class, Place};
use khaelor_perm::oracle::programs::{self, generate_edits};
use khaelor_perm::oracle::sandbox::{Limits, Sandbox};

fn sandbox() -> Sandbox {
    match programs::sandbox(Limits::default()) {
        Ok(s) => s,
        Err(e) => panic!("{e} (run `bash tests/setup/oracle.sh`)"),
    }
}

/// A case: the program, the command, the write requests (relative to the project)
/// the judge is told the analysis made, and the classes it must find (none: clean).
type Case = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [Class],
);

fn check(sb: &Sandbox, cases: &[Case]) {
    let commands: Vec<String> = cases.iter().map(|c| c.1.to_string()).collect();
    let runs = sb.run_edits(&commands, &|_| {}).expect("sandbox run");
    let secrets = programs::secrets(sb);
    let place = Place::new(sb.root());
    let root = sb.root().display().to_string();
    for ((program, command, requests, want), r) in cases.iter().zip(&runs) {
        let expected: Vec<String> = requests.iter().map(|p| format!("{root}/{p}")).collect();
        let v = judge::judge_edit(&programs::facts_of(program, r), &secrets, &expected, &place);
        let mut classes: Vec<Class> = v.iter().map(|x| x.class).collect();
        classes.dedup();
        assert_eq!(
            classes, *want,
            "`{command}`: judged {v:#?}\nchanges {:#?}",
            r.extra.changes
        );
    }
}

#[test]
fn the_edit_judge_catches_bad_edits_run_for_real_and_passes_good_ones() {
    let sb = sandbox();
    check(
        &sb,
        &[
            // A copy of a secret through a link into ~/.ssh is a secret read.
            (
                "cp",
                "cp docs/sshdir/id_rsa x",
                &["x"],
                &[Class::SecretRead],
            ),
            // The link just made sends the write to ~/.bashrc.
            (
                "ln",
                "ln -sf ~/.bashrc a && echo x > a",
                &["a"],
                &[Class::Write],
            ),
            // Through a link to HOME, as named inside the project.
            (
                "echo",
                "echo x > docs/sshdir/new",
                &["docs/sshdir/new"],
                &[Class::Write],
            ),
            (
                "mkdir",
                "mkdir -p .git/hooks/x",
                &[".git/hooks/x"],
                &[Class::Write],
            ),
            ("echo", "echo x > ../outside", &[], &[Class::Write]),
            (
                "echo",
                "echo x > .env.local",
                &[".env.local"],
                &[Class::Write],
            ),
            (
                "echo",
                "echo x > b.txt",
                &["a.txt"],
                &[Class::UnpredictedWrite],
            ),
            (
                "mkdir",
                "mkdir -p src/x/y",
                &["src/x/y"],
                &[Class::UnpredictedWrite],
            ),
            (
                "mv",
                "mv a.txt b.txt",
                &["b.txt"],
                &[Class::UnpredictedWrite],
            ),
            // Good edits, each with the requests the analysis makes for it.
            ("mkdir", "mkdir -p src/x", &["src/x"], &[]),
            ("mv", "mv a.txt b.txt", &["a.txt", "b.txt"], &[]),
            ("sed", "sed -i 's/a/b/' a.txt", &["a.txt"], &[]),
            ("echo", "echo x > notes.md", &["notes.md"], &[]),
            ("echo", "echo x >> notes.txt", &["notes.txt"], &[]),
            ("tee", "echo x | tee -a new.txt", &["new.txt"], &[]),
            ("touch", "touch a.txt new.txt", &["a.txt", "new.txt"], &[]),
            ("chmod", "chmod +x a.txt", &["a.txt"], &[]),
            ("rm", "rm -f a.txt", &["a.txt"], &[]),
            ("ln", "ln -sf a.txt l", &["l"], &[]),
            ("ln", "ln -s a.txt l && ln -sf b.txt l", &["l"], &[]),
            ("cp", "cp -p a.txt c.txt", &["c.txt"], &[]),
            // `notes/` holds a link into HOME: copied as a link, not read.
            ("cp", "cp -r notes e", &["e", "e/cargo.toml"], &[]),
        ],
    );
}

#[test]
fn each_edit_starts_from_the_same_world() {
    let sb = sandbox();
    let commands = vec![
        "rm -f a.txt && mkdir made && chmod 000 src".to_string(),
        "cat a.txt && ls -d made; ls src".to_string(),
    ];
    let runs = sb.run_edits(&commands, &|_| {}).expect("sandbox run");
    let out = String::from_utf8_lossy(&runs[1].output);
    assert!(out.contains("1 a"), "a.txt was not restored: {out}");
    assert!(out.contains("No such file"), "made/ survived: {out}");
    assert!(out.contains("main.rs"), "src was not restored: {out}");
}

#[test]
fn a_generated_edit_run_covers_every_option_and_judges_edits() {
    let sb = sandbox();
    let commands = generate_edits::generate(11, 0);
    let r = programs::run(&sb, 11, &commands, &|_, _| {}).expect("oracle run");
    println!("{}", r.text());
    assert_eq!(r.edit_commands, commands.len());
    assert!(r.ran > commands.len() * 9 / 10, "most commands must run");
    assert!(r.judged_edits > 0, "no edit was judged:\n{}", r.text());
    for e in generate_edits::ENTRIES {
        if let Some(c) = r.coverage.get(e.label) {
            assert!(
                c.missing.is_empty(),
                "{}: never run {:?}",
                e.label,
                c.missing
            );
        }
    }
}
