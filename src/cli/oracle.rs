//! `khaelor-perm oracle`: runs commands in real bash inside the sandbox and checks the
//! analysis against what bash did (`crate::oracle`).
//!
//! Owns the flags, the progress bar and the exit status; the harness is
//! `crate::oracle`. Exit statuses: 0 no hard violation and no evaluator disagreement,
//! 1 at least one hard violation (bash ran a program or wrote a file the analysis did
//! not report while the default policy allowed the call or offered an always pattern)
//! or strict disagreement (in the sandbox that holds the evaluator's pure producers,
//! bash did not run what the static evaluator computed, `oracle::compare::strict`),
//! 2 usage error, unreadable file, or a sandbox that cannot be set up.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::oracle::inputs::{self, Input};
use crate::oracle::sandbox::{Limits, Sandbox};
use crate::oracle::{generate, report};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 no hard violation and no evaluator disagreement, 1 hard \
violations or strict evaluator disagreements, 2 usage error, unreadable file or no working \
sandbox.\n\n\
Files: a `.jsonl` fixture table (its `command` fields), a `grammars-tests/*.txt` pin file \
(its snippets) or a list of commands, one per line.\n\n\
Example:\n  khaelor-perm oracle --generate 100000 --seed 1 ../shared/corpus/tldr.txt ../shared/corpus/nl2bash.txt"
)]
pub struct Args {
    /// Also generate this many commands (grammar-aware, deterministic by `--seed`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub generate: usize,
    /// Seed of the generator.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the report as markdown (for BENCHMARKS.md).
    #[arg(long)]
    pub markdown: bool,
    /// Run at most this many commands (files first, then generated).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Commands per sandbox process.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub batch: usize,
    /// Sandbox processes at the same time.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub workers: usize,
    /// The program oracle: run generated commands of the verified read-only programs
    /// (the real programs, over a hostile world) and hold each one the default policy
    /// allows to what "verified" promises: no program run, no write, no secret read, no
    /// socket. `--generate N` read-only commands (the systematic pass over every table
    /// option always runs whole) and N/16 in-project edits, each over a fresh writable
    /// copy of the world, held to what a verified edit promises: every name it changes
    /// inside the project, not protected, not secret-shaped, and requested; FILEs are
    /// not read.
    #[arg(long, conflicts_with = "files")]
    pub programs: bool,
    /// With `--programs`: leave the edit commands out (the read-only run alone).
    #[arg(long, requires = "programs")]
    pub no_edits: bool,
    /// Files of commands.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    if args.programs {
        return run_programs(&args);
    }
    let mut all: Vec<Input> = Vec::new();
    for f in &args.files {
        if let Err(e) = inputs::read_file(f, &mut all) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    for (i, command) in generate::generate(args.seed, args.generate)
        .into_iter()
        .enumerate()
    {
        all.push(Input {
            source: format!("generated:{}", args.seed),
            line: i + 1,
            command,
        });
    }
    if let Some(n) = args.limit {
        all.truncate(n);
    }
    if all.is_empty() {
        eprintln!("error: no commands: give files or `--generate N`");
        return ExitCode::from(2);
    }
    let limits = Limits {
        batch: args.batch,
        workers: args.workers,
        ..Limits::default()
    };
    let sandbox = match Sandbox::new(limits) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let bar = progress_bar(all.len(), "commands in bash");
    // The total grows by the commands the strict check runs again with the producers.
    let progress = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let result = report::run(&sandbox, &all, &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    match result {
        Ok(report) => print_report(
            &report,
            &args,
            || report.markdown(),
            || report.text(),
            report.passes(),
        ),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `oracle --programs`: the program oracle (`crate::oracle::programs`).
fn run_programs(args: &Args) -> ExitCode {
    use crate::oracle::programs;
    let mut commands = programs::commands(args.seed, args.generate, !args.no_edits);
    if let Some(n) = args.limit {
        commands.truncate(n);
    }
    let limits = Limits {
        batch: args.batch,
        workers: args.workers,
        ..Limits::default()
    };
    let sandbox = match programs::sandbox(limits) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let bar = progress_bar(commands.len(), "program commands");
    let progress = |done: usize, _total: usize| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    };
    let result = programs::run(&sandbox, args.seed, &commands, &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    match result {
        Ok(report) => print_report(
            &report,
            args,
            || report.markdown(),
            || report.text(),
            report.passes(),
        ),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints a report as `--json`, `--markdown` or text, and the exit status: 0 when it
/// passes, 1 when it does not, 2 when it cannot be written.
fn print_report<R: serde::Serialize>(
    report: &R,
    args: &Args,
    markdown: impl FnOnce() -> String,
    text: impl FnOnce() -> String,
    passes: bool,
) -> ExitCode {
    let out = if args.json {
        match serde_json::to_string_pretty(report) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot serialize the report: {e}");
                return ExitCode::from(2);
            }
        }
    } else if args.markdown {
        markdown()
    } else {
        text()
    };
    super::print_out(&format!("{}\n", out.trim_end()));
    if passes {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A progress bar on stderr when it is a terminal (a run takes minutes); none otherwise.
fn progress_bar(len: usize, what: &str) -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(len as u64);
        let template =
            format!("{{spinner}} running {{pos}}/{{len}} {what} [{{bar:40}}] {{eta}} left");
        if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    })
}
