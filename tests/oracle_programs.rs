//! The program oracle's gate: the real programs of the verified read-only table, run
//! over a hostile world (secrets with canaries, symlinks into credential stores,
//! hostile git directories, config includes, raw-disk stand-ins), judge what the
//! default policy (`recommended`) lets through silently. A sample of generated
//! commands (the systematic pass over every table option, then random ones, seed 3,
//! about 2,500 commands; about 90 s on the loaded 2-core machine) runs in the sandbox;
//! every command the policy allows or offers an always pattern for must run nothing
//! but itself, write nothing, read no secret and open no socket. The sample must cover
//! every installed program of the table and every option of every entry, so an option
//! cannot be verified without being run.
//!
//! The judge itself is pinned on known attacks in the same world, fed as if allowed
//! (independent of what the analysis decides today): `tree -Lo 1 FILE` writes FILE,
//! `git -C hostile.git show HEAD` runs the repository's textconv, `grep -R x docs`
//! reads `~/.aws` through a symlink, `git config --file x.cfg --includes --list` reads
//! `~/.pypirc`, `sort -o /dev/sda` writes a raw disk; their harmless look-alikes are
//! clean.
//!
//! `cargo test --test oracle_programs -- --nocapture` prints the report. Needs
//! `bwrap`, `strace`, `setpriv` and the programs: `bash tests/setup/oracle.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use khaelor_perm::oracle::programs::judge::{self, Class};
use khaelor_perm::oracle::programs::{self, generate};
use khaelor_perm::oracle::sandbox::{Limits, Sandbox};

const SEED: u64 = 3;
const SAMPLE: usize = 2_500;

fn sandbox() -> Sandbox {
    match programs::sandbox(Limits::default()) {
        Ok(s) => s,
        Err(e) => panic!("{e} (run `bash tests/setup/oracle.sh`)"),
    }
}

/// Runs commands as the given programs and returns each one's violations as if the
/// policy had allowed it.
fn judged(sb: &Sandbox, cases: &[(&'static str, &str)]) -> Vec<Vec<judge::Violation>> {
    let commands: Vec<String> = cases.iter().map(|(_, c)| (*c).to_string()).collect();
    let runs = sb.run_programs(&commands, &|_| {}).expect("sandbox run");
    let secrets = programs::secrets(sb);
    cases
        .iter()
        .zip(&runs)
        .map(|((program, _), r)| judge::judge(&programs::facts_of(program, r), &secrets))
        .collect()
}

fn classes(v: &[judge::Violation]) -> Vec<Class> {
    let mut c: Vec<Class> = v.iter().map(|x| x.class).collect();
    c.sort();
    c.dedup();
    c
}

#[test]
fn the_judge_catches_the_known_attacks_and_passes_their_look_alikes() {
    let sb = sandbox();
    let cases: &[(&'static str, &str, &[Class])] = &[
        // tree reads `-Lo 1` as `-L` then `-o`'s value from the next word.
        ("tree", "tree -Lo 1 ~/.bashrc", &[Class::Write]),
        ("tree", "tree -L 1 .", &[]),
        // A bare repository's config runs its textconv when git shows a diff.
        (
            "git",
            "git -C hostile.git show HEAD",
            &[Class::Exec, Class::SecretRead],
        ),
        ("git", "git show HEAD", &[]),
        // grep -R follows the directory symlink into ~/.aws.
        ("grep", "grep -R x docs", &[Class::SecretRead]),
        ("grep", "grep -r x src", &[]),
        // `[include] path = ~/.pypirc` is read with `--includes`.
        (
            "git",
            "git config --file x.cfg --includes --list",
            &[Class::SecretRead],
        ),
        ("git", "git config --file x.cfg --list", &[]),
        ("sort", "sort -o /dev/sda a.txt", &[Class::Write]),
        ("sort", "sort a.txt", &[]),
        ("cat", "cat docs/awslink/credentials", &[Class::SecretRead]),
        ("cat", "cat README.md", &[]),
    ];
    let pairs: Vec<(&'static str, &str)> = cases.iter().map(|(p, c, _)| (*p, *c)).collect();
    let got = judged(&sb, &pairs);
    for ((_, command, want), v) in cases.iter().zip(&got) {
        let c = classes(v);
        for w in *want {
            assert!(c.contains(w), "`{command}`: expected {w:?}, judged {v:?}");
        }
        if want.is_empty() {
            assert!(v.is_empty(), "`{command}` is harmless, judged {v:?}");
        }
    }
}

#[test]
fn verified_programs_keep_their_promise_on_a_sample_covering_every_option() {
    let sb = sandbox();
    let commands = generate::generate(SEED, SAMPLE);
    let r = programs::run(&sb, SEED, &commands, &|_, _| {}).expect("oracle run");
    println!("{}", r.text());
    assert_eq!(r.commands, commands.len());
    assert!(r.ran > commands.len() * 9 / 10, "most commands must run");
    // Every installed program of the table ran.
    for e in generate::entries() {
        for name in e.names.iter().filter(|n| generate::installed(n)) {
            let program = if e.names == ["git"] { "git" } else { name };
            assert!(
                r.by_program.get(program).is_some_and(|p| p.commands > 0),
                "`{program}` ({}) never ran",
                e.label
            );
        }
    }
    // Every option of every entry was exercised.
    let uncovered = r.uncovered();
    assert!(uncovered.is_empty(), "options never run: {uncovered:?}");
    assert!(
        r.passes(),
        "verified commands broke their promise:\n{}",
        r.text()
    );
}

#[test]
fn the_sample_is_deterministic() {
    let a = generate::generate(SEED, 300);
    assert_eq!(a, generate::generate(SEED, 300));
    assert!(a.len() >= 300);
}
