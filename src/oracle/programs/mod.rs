//! The program oracle: the real programs of the verified table judge "verified". Each
//! generated command (`generate`) runs in the sandbox's programs layout — the host's
//! programs over a hostile world (`world`), every namespace unshared, traced — and is
//! decided by the analysis under the default policy (`recommended`). Each command the
//! policy allows, or offers an always pattern for, is held to the promise of a
//! verified read-only program (`judge`): it ran nothing else, wrote nothing, read no
//! secret, opened no socket. The edit commands (`generate_edits`) run over a writable
//! copy of the world, fresh for each command (`Sandbox::run_edits`); a judged command
//! whose analysis made `file.write.project` requests is held to the promise of an
//! in-project edit instead (`judge::judge_edit`): every name it changed is inside the
//! project, not protected, not secret-shaped and requested. Commands asked or denied
//! are counted, not judged.
//!
//! Owns the run, the counts (per program, per verdict, violations by class, option
//! coverage) and their rendering as text, markdown and JSON. Uses only the public
//! analysis API, like the bash oracle, and never changes an analysis.

pub mod generate;
pub mod generate_edits;
pub mod judge;
pub mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::Serialize;

use super::RunStatus;
use super::sandbox::{Limits, Run, Sandbox, SandboxError};
use crate::model::vocab::{AnalysisContext, Capability};
use crate::policy::config::Policy;
use crate::policy::decide::decide;
use crate::policy::rules::Action;
use generate::Generated;
use judge::{Class, Facts, Place, Secrets, Violation};

/// Commands run and judged at a time.
const CHUNK: usize = 2_000;

/// Examples kept per class and table entry.
const EXAMPLES: usize = 3;

/// One violating (or history-printing) command.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Example {
    pub command: String,
    pub program: String,
    pub entry: String,
    /// `allow`, or `ask` with an always pattern.
    pub decision: String,
    pub did: Vec<String>,
}

/// Counts of one program.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgramStats {
    pub commands: usize,
    pub allowed: usize,
    pub asked: usize,
    pub denied: usize,
    /// Asked with an always pattern offered (judged like an allow).
    pub always_offered: usize,
    /// Commands with a hard violation.
    pub hard: usize,
}

/// The violations of one class.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassStats {
    pub commands: usize,
    /// Commands per table entry (`git show`, `tree`).
    pub by_entry: BTreeMap<String, usize>,
    /// The first few of each entry.
    pub examples: Vec<Example>,
}

/// Which options of one entry the run exercised.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryCoverage {
    pub options: usize,
    pub exercised: usize,
    /// Options no command that ran used.
    pub missing: Vec<String>,
}

/// The whole run.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub seed: u64,
    pub commands: usize,
    /// Of `commands`, the edit commands (run over a writable world).
    pub edit_commands: usize,
    pub ran: usize,
    pub timed_out: usize,
    pub not_run: usize,
    /// Commands per decision (`allow`, `ask`, `deny`).
    pub verdicts: BTreeMap<String, usize>,
    /// Commands judged (allowed or offered an always pattern).
    pub judged: usize,
    /// Of `judged`, those held to the edit promise (their analysis made
    /// `file.write.project` requests).
    pub judged_edits: usize,
    /// Commands with at least one hard violation.
    pub hard: usize,
    pub by_class: BTreeMap<Class, ClassStats>,
    /// Allowed commands that printed the secret only the project's history holds (not a
    /// violation; reported so the choice stays visible).
    pub history: ClassStats,
    pub by_program: BTreeMap<String, ProgramStats>,
    /// Per entry of the table: options exercised.
    pub coverage: BTreeMap<String, EntryCoverage>,
    /// Programs of the table not installed here (not run; `tests/setup/oracle.sh`).
    pub missing_programs: Vec<String>,
    pub seconds: f64,
    /// Of `seconds`, the time the edit commands ran in the sandbox (their world
    /// restored before each one included).
    pub edit_seconds: f64,
    /// Commands per second, the whole run.
    pub rate: f64,
}

impl Report {
    /// No hard violation.
    pub fn passes(&self) -> bool {
        self.hard == 0
    }

    /// Entries with options never exercised.
    pub fn uncovered(&self) -> Vec<(&str, &[String])> {
        self.coverage
            .iter()
            .filter(|(_, c)| !c.missing.is_empty())
            .map(|(e, c)| (e.as_str(), c.missing.as_slice()))
            .collect()
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "program oracle (seed {}): {} commands ({} edits), {} ran, {} timed out, {} not run; {:.1} s ({:.1} s of edits), {:.1} commands/s\n",
            self.seed,
            self.commands,
            self.edit_commands,
            self.ran,
            self.timed_out,
            self.not_run,
            self.seconds,
            self.edit_seconds,
            self.rate
        ));
        let verdicts: Vec<String> = self
            .verdicts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!(
            "decisions (recommended): {}; judged {} ({} as edits); HARD violations: {}\n",
            verdicts.join(", "),
            self.judged,
            self.judged_edits,
            self.hard
        ));
        for (class, st) in &self.by_class {
            let entries: Vec<String> = st
                .by_entry
                .iter()
                .map(|(e, n)| format!("{e} {n}"))
                .collect();
            s.push_str(&format!(
                "\n{} ({} commands: {}):\n",
                class.as_str(),
                st.commands,
                entries.join(", ")
            ));
            for e in &st.examples {
                s.push_str(&format!(
                    "  [{}] {}  ->  {}\n",
                    e.decision,
                    e.command,
                    e.did.join("; ")
                ));
            }
        }
        if self.history.commands > 0 {
            s.push_str(&format!(
                "\nprinted the history secret (not a violation): {} commands, e.g. {}\n",
                self.history.commands,
                self.history
                    .examples
                    .first()
                    .map_or("", |e| e.command.as_str())
            ));
        }
        s.push_str("\nper program: commands allow/ask/deny (always offered) hard\n");
        for (p, st) in &self.by_program {
            s.push_str(&format!(
                "  {p}: {} {}/{}/{} ({}) {}\n",
                st.commands, st.allowed, st.asked, st.denied, st.always_offered, st.hard
            ));
        }
        let total: usize = self.coverage.values().map(|c| c.options).sum();
        let done: usize = self.coverage.values().map(|c| c.exercised).sum();
        s.push_str(&format!(
            "\ncoverage: {done} of {total} table options exercised in {} entries\n",
            self.coverage.len()
        ));
        for (e, missing) in self.uncovered() {
            s.push_str(&format!("  {e}: not exercised {}\n", missing.join(" ")));
        }
        if !self.missing_programs.is_empty() {
            s.push_str(&format!(
                "not installed (not run): {}\n",
                self.missing_programs.join(" ")
            ));
        }
        s
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "| seed | commands | edits | ran | judged | judged as edits | hard | commands/s |\n|---|---|---|---|---|---|---|---|\n| {} | {} | {} | {} | {} | {} | {} | {:.1} |\n\n",
            self.seed,
            self.commands,
            self.edit_commands,
            self.ran,
            self.judged,
            self.judged_edits,
            self.hard,
            self.rate
        ));
        s.push_str("| class | commands | example | did |\n|---|---|---|---|\n");
        for (class, st) in &self.by_class {
            let e = st.examples.first();
            s.push_str(&format!(
                "| {} | {} | `{}` | {} |\n",
                class.as_str(),
                st.commands,
                e.map_or("", |e| e.command.as_str()).replace('|', "\\|"),
                e.map_or(String::new(), |e| e.did.join("; "))
                    .replace('|', "\\|")
            ));
        }
        s.push_str("\n| program | commands | allow | ask | deny | always offered | hard |\n|---|---|---|---|---|---|---|\n");
        for (p, st) in &self.by_program {
            s.push_str(&format!(
                "| {p} | {} | {} | {} | {} | {} | {} |\n",
                st.commands, st.allowed, st.asked, st.denied, st.always_offered, st.hard
            ));
        }
        s
    }
}

/// The secrets of the world a sandbox holds.
pub fn secrets(sandbox: &Sandbox) -> Secrets {
    let mut files = Vec::new();
    let mut history = String::new();
    for (path, canary) in world::canaries(sandbox.root(), sandbox.home()) {
        match path {
            Some(p) => files.push((p, canary)),
            None => history = canary,
        }
    }
    Secrets { files, history }
}

/// The sandbox of the program oracle: the world built, and the probe passed (a plain
/// `cat` of a secret through a symlink must show as a secret read, its canary in the
/// output, and a write to a raw disk as a write).
pub fn sandbox(limits: Limits) -> Result<Sandbox, SandboxError> {
    Sandbox::new_programs(limits, &world::build, &|sb| {
        let probes = vec![
            "cat docs/awslink/credentials".to_string(),
            "tree -o /dev/sda .".to_string(),
        ];
        let runs = sb
            .run_programs(&probes, &|_| {})
            .map_err(|e| e.to_string())?;
        let s = secrets(sb);
        let facts = |i: usize, program: &'static str| -> Result<Vec<Violation>, String> {
            let r = runs.get(i).ok_or("a probe did not run")?;
            Ok(judge::judge(&facts_of(program, r), &s))
        };
        let cat = facts(0, "cat")?;
        let read = cat
            .iter()
            .any(|v| v.class == Class::SecretRead && v.did.starts_with("opened"));
        let printed = cat
            .iter()
            .any(|v| v.class == Class::SecretRead && v.did.starts_with("printed"));
        let tree = facts(1, "tree")?;
        let wrote = tree
            .iter()
            .any(|v| v.class == Class::Write && v.did == "/dev/sda");
        if !(read && printed && wrote) {
            return Err(format!(
                "the programs' layout did not show a secret read, its output and a raw-disk write (cat: {cat:?}, tree: {tree:?}, runs: {runs:?})"
            ));
        }
        // The edits' layout: a write succeeds and shows, a write through a link shows
        // where it landed, and the next command starts from the world as it was.
        let probes = vec![
            "mkdir -p src/probe && echo x > src/probe/f && echo y > docs/sshdir/probe".to_string(),
            "cat src/probe/f ~/.ssh/probe; ls src".to_string(),
        ];
        let runs = sb.run_edits(&probes, &|_| {}).map_err(|e| e.to_string())?;
        let root = sb.root().display().to_string();
        let home = sb.home().display().to_string();
        let first = runs.first().ok_or("an edit probe did not run")?;
        let made = first
            .extra
            .changes
            .iter()
            .any(|c| c.path == format!("{root}/src/probe"));
        let through = first.extra.changes.iter().any(|c| {
            c.path == format!("{root}/docs/sshdir/probe")
                && c.real.as_deref() == Some(format!("{home}/.ssh/probe").as_str())
        });
        let second = runs.get(1).ok_or("an edit probe did not run")?;
        // Nothing of the first command's is left: no file to open, no name to list.
        let fresh = !String::from_utf8_lossy(&second.output)
            .lines()
            .any(|l| l == "probe")
            && second.extra.reads.iter().all(|r| !r.contains("probe"));
        if made && through && fresh {
            Ok(())
        } else {
            Err(format!(
                "the edits' layout did not show a write, a write through a link, or a fresh world for the next command (runs: {runs:?})"
            ))
        }
    })
}

/// The facts of one run of `program`.
pub fn facts_of<'a>(program: &'a str, r: &'a Run) -> Facts<'a> {
    Facts {
        program,
        executed: &r.observed.executed,
        writes: &r.observed.writes,
        changes: &r.extra.changes,
        reads: &r.extra.reads,
        sockets: &r.extra.sockets,
        output: &r.output,
    }
}

fn action(a: Action) -> &'static str {
    match a {
        Action::Allow => "allow",
        Action::Contain => "contain",
        Action::Ask => "ask",
        Action::Deny => "deny",
    }
}

/// The default policy's decision of a command in `ctx`.
#[derive(Debug, Clone)]
pub struct Decided {
    pub action: Action,
    /// An always pattern is offered.
    pub always: bool,
    /// The subjects of the call's file requests (reads and writes): what the analysis
    /// reported, so the user saw it in the ask.
    pub reported: judge::Reported,
    /// The subjects of its `file.write.project` requests: what an edit may write.
    pub project_writes: Vec<String>,
    /// The analysis read a command of it as an in-project edit (verdict `projectWrite`),
    /// with or without write requests (`git add` has only reads): judged as an edit.
    pub edit: bool,
}

pub fn decision(command: &str, ctx: &AnalysisContext, policy: &Policy) -> Decided {
    let analysis = crate::analysis::analyze(command, ctx);
    let call = crate::tools::bash_call(command, analysis, ctx, false);
    let d = decide(policy, &[], &call, ctx, true);
    let mut reported = judge::Reported::default();
    let mut project_writes = Vec::new();
    let edit = call.requests.iter().any(|r| {
        r.capability == Capability::ProcessExecute
            && r.verdict == Some(crate::model::vocab::Verdict::ProjectWrite)
    });
    for r in &call.requests {
        if r.capability == Capability::FileWriteProject {
            project_writes.push(r.subject.clone());
        }
        match r.capability {
            Capability::FileRead => reported.reads.push(r.subject.clone()),
            Capability::FileWriteProject | Capability::FileWriteOutsideProject => {
                reported.writes.push(r.subject.clone());
            }
            Capability::GitModify => {
                let git = ctx.root().join(".git").display().to_string();
                if !reported.git_dirs.contains(&git) {
                    reported.git_dirs.push(git);
                }
            }
            _ => {}
        }
    }
    // The command's words as paths, as the user reads them in the ask.
    for w in command.split_whitespace() {
        let w = w.trim_matches('\'');
        let path = match w.strip_prefix("~/") {
            Some(rest) => ctx.home().join(rest),
            None => ctx.root().join(w),
        };
        reported
            .named
            .push(judge::resolved(&path.display().to_string()));
    }
    Decided {
        action: d.decision,
        always: !d.always_patterns.is_empty(),
        reported,
        project_writes,
        edit,
    }
}

/// Read-only commands per edit command of a run (`commands`): an edit costs about four
/// read-only commands (its world is restored first), so one in sixteen keeps a run
/// within a quarter of the read-only run's time.
pub const EDIT_SHARE: usize = 16;

/// The commands of a run: `n` read-only commands (`generate::generate`) and, unless
/// `edits` is false, `n / EDIT_SHARE` edit commands after them
/// (`generate_edits::generate`, whose systematic pass is never cut).
pub fn commands(seed: u64, n: usize, edits: bool) -> Vec<Generated> {
    let mut out = generate::generate(seed, n);
    if edits {
        out.extend(generate_edits::generate(seed, n / EDIT_SHARE));
    }
    out
}

/// Runs generated commands (`commands`) and judges them.
pub fn run(
    sandbox: &Sandbox,
    seed: u64,
    commands: &[Generated],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report, SandboxError> {
    let t = Instant::now();
    let ctx = AnalysisContext::new(sandbox.root(), None, sandbox.home()).map_err(|e| {
        SandboxError::Probe {
            message: e.to_string(),
        }
    })?;
    let policy = Policy::builder().build();
    let total = commands.len();
    let secrets = secrets(sandbox);
    let mut report = Report {
        seed,
        commands: commands.len(),
        ..Report::default()
    };
    let place = Place::new(sandbox.root());
    report.edit_commands = commands.iter().filter(|g| g.writable).count();
    let mut exercised: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut before = 0usize;
    // In chunks, so that the outputs and the read lists of a long run are dropped as
    // soon as they are judged. Each chunk's edits run over the writable world.
    for chunk in commands.chunks(CHUNK) {
        let (edits, reads): (Vec<&Generated>, Vec<&Generated>) =
            chunk.iter().partition(|g| g.writable);
        let texts: Vec<String> = reads.iter().map(|g| g.command.clone()).collect();
        let read_runs = sandbox.run_programs(&texts, &|done| progress(before + done, total))?;
        before += texts.len();
        let texts: Vec<String> = edits.iter().map(|g| g.command.clone()).collect();
        let started = Instant::now();
        let edit_runs = sandbox.run_edits(&texts, &|done| progress(before + done, total))?;
        report.edit_seconds += started.elapsed().as_secs_f64();
        before += texts.len();
        let pairs = reads
            .into_iter()
            .zip(&read_runs)
            .chain(edits.into_iter().zip(&edit_runs));
        for (g, r) in pairs {
            match r.observed.status {
                RunStatus::Unrunnable => {
                    report.not_run += 1;
                    continue;
                }
                RunStatus::TimedOut => report.timed_out += 1,
                RunStatus::Ran => report.ran += 1,
            }
            exercised
                .entry(g.entry.as_str())
                .or_default()
                .extend(g.options.iter().map(String::as_str));
            let decided = decision(&g.command, &ctx, &policy);
            let (act, always) = (decided.action, decided.always);
            *report.verdicts.entry(action(act).to_string()).or_default() += 1;
            // An edit counts under its entry (`edit cp`), apart from the readers.
            let key = if g.writable { &g.entry } else { &g.program };
            let st = report.by_program.entry(key.clone()).or_default();
            st.commands += 1;
            match act {
                Action::Allow => st.allowed += 1,
                // The oracle judges reading; a contained command was not proven.
                Action::Contain | Action::Ask => st.asked += 1,
                Action::Deny => st.denied += 1,
            }
            if act == Action::Ask && always {
                st.always_offered += 1;
            }
            if !(act == Action::Allow || always) {
                continue;
            }
            report.judged += 1;
            let label = if act == Action::Allow {
                "allow"
            } else {
                "ask+always"
            };
            let example = |did: Vec<String>| Example {
                command: g.command.clone(),
                program: g.program.clone(),
                entry: g.entry.clone(),
                decision: label.to_string(),
                did,
            };
            let mut found = if decided.project_writes.is_empty() && !decided.edit {
                judge::judge(&facts_of(&g.program, r), &secrets)
            } else {
                report.judged_edits += 1;
                judge::judge_edit(
                    &facts_of(&g.program, r),
                    &secrets,
                    &decided.project_writes,
                    &place,
                )
            };
            if act != Action::Allow {
                // An ask shows its requests: what it reported the user saw. A scratch
                // name renamed onto another is judged as that other name.
                found.retain(|v| {
                    !(decided.reported.covers(v, &r.extra.changes)
                        || (matches!(v.class, Class::Write | Class::UnpredictedWrite)
                            && judge::scratch(&v.path, &r.extra.changes)))
                });
            }
            if judge::prints_history(&r.output, &secrets) {
                report.history.commands += 1;
                if report.history.examples.len() < EXAMPLES * 4 {
                    report
                        .history
                        .examples
                        .push(example(vec!["printed the history secret".into()]));
                }
            }
            if found.is_empty() {
                continue;
            }
            report.hard += 1;
            if let Some(st) = report.by_program.get_mut(key) {
                st.hard += 1;
            }
            let classes: BTreeSet<Class> = found.iter().map(|v| v.class).collect();
            for class in classes {
                let cs = report.by_class.entry(class).or_default();
                cs.commands += 1;
                let n = cs.by_entry.entry(g.entry.clone()).or_default();
                *n += 1;
                if *n <= EXAMPLES {
                    cs.examples.push(example(
                        found
                            .iter()
                            .filter(|v| v.class == class)
                            .map(|v| v.did.clone())
                            .collect(),
                    ));
                }
            }
        }
    }
    for e in generate::entries() {
        report.missing_programs.extend(
            e.names
                .iter()
                .filter(|n| !generate::installed(n))
                .map(|n| (*n).to_string()),
        );
        if !e.names.iter().any(|n| generate::installed(n)) {
            continue;
        }
        let keys: Vec<String> = match e.kind {
            generate::Kind::Find | generate::Kind::Xxd => generate::own_words(e.kind)
                .iter()
                .map(|w| (*w).to_string())
                .collect(),
            _ => e.opts.iter().map(generate::key).collect(),
        };
        let seen = exercised.get(e.label.as_str());
        let missing: Vec<String> = keys
            .iter()
            .filter(|k| !seen.is_some_and(|s| s.contains(k.as_str())))
            .cloned()
            .collect();
        report.coverage.insert(
            e.label.clone(),
            EntryCoverage {
                options: keys.len(),
                exercised: keys.len() - missing.len(),
                missing,
            },
        );
    }
    if report.edit_commands > 0 {
        for e in generate_edits::ENTRIES {
            if !generate::installed(e.program) {
                report.missing_programs.push(e.program.to_string());
                continue;
            }
            let seen = exercised.get(e.label);
            let missing: Vec<String> = e
                .options
                .iter()
                .filter(|k| !seen.is_some_and(|s| s.contains(**k)))
                .map(|k| (*k).to_string())
                .collect();
            report.coverage.insert(
                e.label.to_string(),
                EntryCoverage {
                    options: e.options.len(),
                    exercised: e.options.len() - missing.len(),
                    missing,
                },
            );
        }
    }
    report.missing_programs.sort();
    report.missing_programs.dedup();
    report.seconds = t.elapsed().as_secs_f64();
    report.rate = commands.len() as f64 / report.seconds.max(0.001);
    Ok(report)
}
