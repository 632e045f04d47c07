//! `khaelor-perm compare`: both engines over files of commands, one per line, and the
//! report of where and why they disagree (text, `--json` or `--markdown`).
//!
//! Owns the flags, the progress bar, and the run facts the markdown header needs (date,
//! machine). The comparison itself is `crate::compare`. Decisions use the built-in
//! default rules only: no user, project or managed config is read, so the report
//! measures the engines and not somebody's configuration.
//!
//! Exit statuses: 0 success, 2 bad usage or an unreadable file.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::compare::render::{self, RunInfo};
use crate::compare::{self, Comparer, InputLine};

/// Inputs larger than this many commands get a progress bar (on a terminal).
const PROGRESS_ABOVE: usize = 5_000;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 success, 2 usage error or unreadable file.\n\n\
Example:\n  khaelor-perm compare --root \"$(mktemp -d)\" ../shared/corpus/tldr.txt ../shared/corpus/nl2bash.txt"
)]
pub struct Args {
    /// Project root the commands are analyzed in (absolute; default: the current
    /// directory). The report names the root used.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Home directory `~` and `$HOME` expand to (absolute; default: $HOME). No config is
    /// read from it.
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Print the report as one JSON document.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the report as the markdown page of the engines' comparison (with date and
    /// machine; the book keeps it in docs/src/measurements/ast-vs-lexer.md).
    #[arg(long)]
    pub markdown: bool,
    /// Compare at most this many commands (over all files, in order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// With `--markdown`: write the report into FILE between its
    /// `<!-- compare:begin -->` and `<!-- compare:end -->` lines (headings one level
    /// down), keeping the rest of the file, instead of printing it.
    #[arg(long, value_name = "FILE", requires = "markdown")]
    pub update: Option<PathBuf>,
    /// Files of commands, one per line (`-` for stdin); blank lines and `#` comments
    /// are skipped, lines that are not UTF-8 are counted and reported.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    let ctx = match super::analyze::context_from_flags(args.root.as_ref(), None, args.home.as_ref())
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.files.iter().filter(|f| *f == "-").count() > 1 {
        eprintln!("error: stdin (`-`) can be read only once");
        return ExitCode::from(2);
    }
    let mut inputs: Vec<InputLine> = Vec::new();
    let mut sources = Vec::new();
    for f in &args.files {
        let bytes = match compare::read_source(f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let name = if f == "-" { "<stdin>" } else { f.as_str() };
        sources.push(compare::split_commands(
            name,
            &bytes,
            args.limit,
            &mut inputs,
        ));
    }

    let comparer = Comparer::new(ctx);
    let bar = (inputs.len() > PROGRESS_ABOVE && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(inputs.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} comparing {pos}/{len} commands [{bar:40}] {eta} left",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    });
    let report = compare::run(&comparer, &inputs, sources, |done| {
        if let Some(b) = &bar
            && done % 256 == 0
        {
            b.set_position(done as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }

    let out = if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot serialize the report: {e}");
                return ExitCode::from(1);
            }
        }
    } else if args.markdown {
        let run = RunInfo {
            date: utc_now(),
            machine: machine(),
            command: regenerate_command(&args),
        };
        let doc = render::markdown(&report, &run);
        if let Some(file) = &args.update {
            return match update_between_markers(file, &doc) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            };
        }
        doc
    } else {
        render::text(&report)
    };
    // A closed pipe (`| head`) is the reader's choice, not an error.
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{}", out.trim_end()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the report: {e}");
            ExitCode::from(1)
        }
    }
}

/// The command line that regenerates a markdown report like this one.
fn regenerate_command(args: &Args) -> String {
    let home = args
        .home
        .as_ref()
        .map_or_else(|| "\"$HOME\"".to_string(), |h| h.display().to_string());
    let mut cmd =
        format!("cargo run --release -- compare --markdown --root \"$(mktemp -d)\" --home {home}");
    if let Some(n) = args.limit {
        cmd.push_str(&format!(" --limit {n}"));
    }
    for f in &args.files {
        cmd.push(' ');
        cmd.push_str(f);
    }
    cmd.push_str(" --update docs/src/measurements/ast-vs-lexer.md");
    cmd
}

const BEGIN: &str = "<!-- compare:begin -->";
const END: &str = "<!-- compare:end -->";

/// Replaces the region between the markers of `file` with `doc` (its headings one level
/// down, so the report is a section of the file), written to a temp file and renamed.
/// A file without both markers is an error: the rest of it is somebody's text.
fn update_between_markers(file: &std::path::Path, doc: &str) -> Result<(), String> {
    let shown = file.display();
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        return Err(format!(
            "`{shown}` has no `{BEGIN}` … `{END}` lines to put the report between"
        ));
    };
    if e < b {
        return Err(format!("`{shown}` has `{END}` before `{BEGIN}`"));
    }
    let demoted: Vec<String> = doc
        .trim_end()
        .lines()
        .map(|l| {
            if l.starts_with('#') {
                format!("#{l}")
            } else {
                l.to_string()
            }
        })
        .collect();
    let out = format!(
        "{}{BEGIN}\n{}\n{}",
        text.get(..b).unwrap_or_default(),
        demoted.join("\n"),
        text.get(e..).unwrap_or_default()
    );
    let tmp = file.with_extension("md.tmp");
    std::fs::write(&tmp, out).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, file).map_err(|e| format!("cannot replace `{shown}`: {e}"))
}

/// Now as `YYYY-MM-DD HH:MM UTC` (civil-from-days, no date crate needed).
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

/// CPU, cores, memory, OS and build profile, best effort (`unknown` when unreadable).
fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    let cores = std::thread::available_parallelism()
        .map_or_else(|_| "unknown".to_string(), |n| n.to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| {
            let kb: f64 = l
                .strip_prefix("MemTotal:")?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()?;
            Some(format!("{:.1} GiB", kb / (1024.0 * 1024.0)))
        })
        .unwrap_or_else(|| "unknown".to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| String::new(), |s| format!(" {}", s.trim()));
    let profile = if cfg!(debug_assertions) {
        "debug (unoptimized: timings are not representative)"
    } else {
        "release"
    };
    vec![
        ("CPU".to_string(), cpu),
        ("cores available (nproc)".to_string(), cores),
        ("memory".to_string(), memory),
        (
            "OS".to_string(),
            format!(
                "{} {}{kernel}",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
        ),
        ("build".to_string(), profile.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_rewrites_only_between_the_markers() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("B.md");
        std::fs::write(&f, format!("# Top\nkeep\n{BEGIN}\nold\n{END}\n## After\n")).unwrap();
        update_between_markers(&f, "# Report\nnew\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            format!("# Top\nkeep\n{BEGIN}\n## Report\nnew\n{END}\n## After\n")
        );
        std::fs::write(&f, "no markers\n").unwrap();
        assert!(update_between_markers(&f, "x").is_err());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "no markers\n");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
