//! Project-local builds, tests and the project's own scripts: which
//! literal commands the presets may allow or contain, read the way the program table
//! reads every program (options that name a program, a config or a place elsewhere
//! make a command no build of this project).
//!
//! Owns the verdict only; `presets` owns the rules that allow on it, and the analysis
//! asks this module, so the analysis never depends on the policy layer.

use std::path::Path;

use crate::model::vocab::{AnalysisContext, Verdict};

/// A verdict of `autonomous_verdict`, with the files the command's options name for
/// writing (a test harness's `--logfile`, `go test -coverprofile`, pytest's
/// `--junitxml`): the caller judges each as a write, like any other write request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildVerdict {
    pub verdict: Verdict,
    pub writes: Vec<String>,
}

/// The presets' verdicts for one literal simple command run in `cwd`: a project-local
/// build or test, or a script of the project (in-project edits are `edits`').
/// `writes_file`: the command has a write redirect to a file (never a verdict: its
/// target is judged as a write, but the command is then more than the build).
/// `patterned`: a word was a glob the analysis expanded (no script verdict then).
pub fn autonomous_verdict(
    words: &[&str],
    cwd: Option<&Path>,
    ctx: &AnalysisContext,
    writes_file: bool,
    patterned: bool,
) -> Option<BuildVerdict> {
    let cwd = cwd?;
    if writes_file || !crate::model::paths::is_inside(cwd, ctx.root()) {
        return None;
    }
    let name = *words.first()?;
    if name == "timeout" {
        // Judged as the command it runs: `timeout` only ends it.
        let inner = timeout_inner(words)?;
        return autonomous_verdict(inner, Some(cwd), ctx, writes_file, patterned);
    }
    if inline_code(words) {
        return Some(BuildVerdict {
            verdict: Verdict::InlineCode,
            writes: Vec::new(),
        });
    }
    if !patterned && project_script(words, cwd, ctx) {
        return Some(BuildVerdict {
            verdict: Verdict::ProjectScript,
            writes: Vec::new(),
        });
    }
    if name.contains('/') {
        return None;
    }
    let rest = words.get(1..).unwrap_or_default();
    let build = |writes: Option<Vec<String>>| {
        writes.map(|writes| BuildVerdict {
            verdict: Verdict::ProjectBuild,
            writes,
        })
    };
    let plain = |ok: bool| build(ok.then(Vec::new));
    if python_name(name) {
        if let Some(v) = build(python_module(rest, cwd, ctx)) {
            return Some(v);
        }
        return module_run(rest).then(|| BuildVerdict {
            verdict: Verdict::ProjectScript,
            writes: Vec::new(),
        });
    }
    match name {
        "cargo" => build(cargo(rest, cwd, ctx)),
        "npm" | "pnpm" | "yarn" => build(js(name, rest, cwd, ctx)),
        "go" => build(go(rest, ctx, cwd)),
        "make" => plain(make(rest, cwd)),
        "pytest" => build(pytest(rest, cwd, ctx)),
        "tox" => plain(tox(rest, cwd)),
        "uv" => uv_run(rest, cwd, ctx, patterned),
        "bun" => (!patterned && bun(rest, cwd, ctx)).then(|| BuildVerdict {
            verdict: Verdict::ProjectScript,
            writes: Vec::new(),
        }),
        _ => None,
    }
}

/// `uv run [OPTS] pytest …`, `uv run python -m pytest …`, `uv run python x.py`: the
/// command after `run` read by the rules it has alone (pytest's, `python -m`'s, a
/// project script's), in a uv project of this project (`pyproject.toml` here or above,
/// inside it). uv first syncs the project's environment (creates `.venv`, writes
/// `uv.lock`, may build the project and download what the lock names) and puts
/// `.venv/bin` first on `PATH`: more than the command alone, so it is a project script
/// under every preset (contained, never allowed outright). Only options that choose
/// what is synced or forbid syncing: never `--with` (packages from an index),
/// `--python` (an interpreter anywhere: strace shows `--python /tmp/x/python` runs
/// it), `--env-file` (it reads the file into the environment), `--directory`,
/// `--project`, `--script`.
fn uv_run(
    rest: &[&str],
    cwd: &Path,
    ctx: &AnalysisContext,
    patterned: bool,
) -> Option<BuildVerdict> {
    const FLAGS: &[&str] = &[
        "--frozen",
        "--locked",
        "--offline",
        "--no-sync",
        "-q",
        "--quiet",
        "--all-extras",
        "--dev",
    ];
    let ["run", args @ ..] = rest else {
        return None;
    };
    let at = args.iter().position(|w| !FLAGS.contains(w))?;
    uv_inner(args.get(at..)?, cwd, ctx, patterned)
}

/// The command `uv run` runs, read as `uv_run` says (the options before it are the
/// caller's to check): pytest or Python by the rules they have alone, in a uv project
/// of this project.
fn uv_inner(
    inner: &[&str],
    cwd: &Path,
    ctx: &AnalysisContext,
    patterned: bool,
) -> Option<BuildVerdict> {
    if !manifest_in_project(cwd, ctx, &["pyproject.toml"]) {
        return None;
    }
    let name = *inner.first()?;
    if name != "pytest" && !python_name(name) {
        return None;
    }
    // Code on the command line or from the input (`uv run python - <<'EOF'`) is a
    // project script here, not inline code: uv syncs the environment into the project
    // first, which the read-only profile inline code runs under would refuse.
    let v = autonomous_verdict(inner, Some(cwd), ctx, false, patterned)?;
    Some(BuildVerdict {
        verdict: Verdict::ProjectScript,
        writes: v.writes,
    })
}

/// `bun test [FILTER…] [OPTS]` and `bun run NAME [ARGS…]`, in a project with a
/// `package.json` here or above inside it. `bun test` runs the test files under the
/// working directory that its filters match: each filter must name a place inside the
/// project (strace: `bun test /tmp/x.test.ts` and `bun test ../x.test.ts` run those
/// files), and only options that choose, order and report tests (never `--preload`,
/// `--config`, `--cwd`, `--env-file`, `--coverage-dir`, `--reporter-outfile`).
/// `bun run NAME` runs the script NAME of the nearest `package.json` (bun looks upward
/// as `manifest_scripts` does, and a script wins over a file or a program of that
/// name), else a file NAME; failing both, a binary of `node_modules/.bin` or of `PATH`
/// (strace: `bun run zzcmd` runs `PATH`'s `zzcmd`), so NAME must be one of the first
/// two: a script of the manifest, or a file inside the project now (or, for a path
/// with a slash, which bun never looks for elsewhere, where it would be). What follows
/// NAME is the script's arguments. Either runs the project's code, and bun installs
/// missing packages on import where no `node_modules` exists: a project script under
/// every preset (contained, never allowed outright).
fn bun(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> bool {
    const FLAGS: &[&str] = &[
        "-u",
        "--update-snapshots",
        "--todo",
        "--only",
        "--pass-with-no-tests",
        "--concurrent",
        "--randomize",
        "--coverage",
        "--bail",
        "--dots",
        "--only-failures",
    ];
    const VALUED: &[&str] = &[
        "--timeout",
        "--rerun-each",
        "--retry",
        "--seed",
        "--bail",
        "--max-concurrency",
        "-t",
        "--test-name-pattern",
    ];
    if !manifest_in_project(cwd, ctx, &["package.json"]) {
        return false;
    }
    let inside = |w: &str, must_exist: bool| {
        if w.contains(['*', '?', '[']) || w.starts_with('~') {
            return false;
        }
        let Some(p) = crate::model::paths::resolve_word(w, Some(cwd), ctx.home()) else {
            return false;
        };
        match std::fs::canonicalize(&p) {
            Ok(c) => (!must_exist || c.is_file()) && crate::model::paths::is_inside(&c, ctx.root()),
            Err(_) => {
                !must_exist
                    && std::fs::symlink_metadata(&p).is_err()
                    && crate::model::paths::is_inside(&p, ctx.root())
            }
        }
    };
    match rest {
        ["test", args @ ..] => {
            let mut i = 0;
            while let Some(w) = args.get(i) {
                let flag = w.split_once('=').map_or(*w, |(f, _)| f);
                if FLAGS.contains(w) {
                    i += 1;
                } else if VALUED.contains(&flag) {
                    i += if w.contains('=') { 1 } else { 2 };
                } else if !w.starts_with('-') && inside(w, false) {
                    i += 1;
                } else {
                    return false;
                }
            }
            true
        }
        ["run", rest @ ..] => {
            let rest = match rest {
                ["--silent", more @ ..] => more,
                _ => rest,
            };
            let Some(name) = rest.first() else {
                return false;
            };
            // A path (with a slash) is never looked for on `PATH`: one that is not
            // there yet only fails (strace: `bun run src/x` with `PATH`'s `src/x`
            // present runs nothing), so it counts where it would be created, as a
            // project script's does.
            !name.starts_with('-')
                && (manifest_scripts(cwd, ctx).contains(&(*name).to_string())
                    || (*name != "." && inside(name, !name.contains('/'))))
        }
        _ => false,
    }
}

/// The command `timeout` runs (`timeout 60 pytest`, `timeout -s KILL 5m npm test`):
/// after its options that choose the signal, the grace period, the exit status and
/// the terminal, and a duration (a number with an optional `s`/`m`/`h`/`d`). `timeout`
/// starts it and at most ends it, so the command is judged as if run alone; the
/// sandbox ends the whole tree with the call in any case.
fn timeout_inner<'a, 'w>(words: &'a [&'w str]) -> Option<&'a [&'w str]> {
    let duration = |w: &str| {
        let n = w.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(w);
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit() || c == '.')
            && n.chars().any(|c| c.is_ascii_digit())
    };
    let mut i = 1;
    loop {
        let w = *words.get(i)?;
        match w {
            "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
            "-k" | "-s" => i += 2,
            _ if w.starts_with("--kill-after=") || w.starts_with("--signal=") => i += 1,
            _ if duration(w) => break,
            _ => return None,
        }
    }
    let inner = words.get(i + 1..)?;
    (!inner.is_empty()).then_some(inner)
}

/// The verdict of the command a wrapper runs, for its own request: only `timeout`'s
/// (whose own request is judged as that command, `autonomous_verdict`), and only what
/// the wrapped command's verdict would be on its own. The wrapper's request gates it:
/// where that has no verdict, the call asks whatever this one says.
pub fn wrapped_verdict(
    wrapper: &str,
    inner: &[String],
    cwd: Option<&Path>,
    ctx: &AnalysisContext,
) -> Option<Verdict> {
    let words: Vec<&str> = inner.iter().map(String::as_str).collect();
    match wrapper {
        "timeout" => autonomous_verdict(&words, cwd, ctx, false, false).map(|b| b.verdict),
        // `uv run X`: X's request carries the verdict `uv_run` gives the whole call.
        "uv" => uv_inner(&words, cwd?, ctx, false).map(|b| b.verdict),
        _ => None,
    }
}

/// Options of a harness or tool whose value is a file it writes (`--logfile F`,
/// `--logfile=F`, and for single-dash tools `-o F`, `-o=F`).
fn output_value<'w>(args: &[&'w str], i: usize, names: &[&str]) -> Option<(&'w str, usize)> {
    let w = *args.get(i)?;
    for n in names {
        if w == *n {
            return args.get(i + 1).map(|v| (*v, 2));
        }
        if let Some(v) = w.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
            return Some((v, 1));
        }
    }
    None
}

/// The arguments a test harness or runner takes after `--`, read by its rules: name
/// filters (words without a dash), `flags`, `valued` options (`--opt V`, `--opt=V`),
/// and `outputs`, options whose value is a file it writes (returned, to be judged as
/// writes). Anything else: `None`, no build this preset vouches for (a harness could do
/// anything with it).
fn harness_args(
    args: &[&str],
    flags: &[&str],
    valued: &[&str],
    outputs: &[&str],
) -> Option<Vec<String>> {
    let mut writes = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        if let Some((v, n)) = output_value(args, i, outputs) {
            writes.push(v.to_string());
            i += n;
        } else if flags.contains(w) {
            i += 1;
        } else if valued.contains(&flag) {
            i += if w.contains('=') { 1 } else { 2 };
        } else if !w.starts_with('-') {
            i += 1;
        } else {
            return None;
        }
    }
    Some(writes)
}

/// The arguments libtest (the harness of `cargo test`'s unit and integration tests)
/// takes after `--`: test name filters, flags that choose and report tests, and
/// `--logfile F`, a write.
fn libtest_args(args: &[&str]) -> Option<Vec<String>> {
    const FLAGS: &[&str] = &[
        "--nocapture",
        "--no-capture",
        "--show-output",
        "--ignored",
        "--include-ignored",
        "--exact",
        "-q",
        "--quiet",
        "--list",
        "--test",
        "--bench",
        "--report-time",
        "--ensure-time",
        "--shuffle",
        "--force-run-in-process",
    ];
    const VALUED: &[&str] = &[
        "--test-threads",
        "--skip",
        "--color",
        "--format",
        "--shuffle-seed",
        "-Z",
    ];
    harness_args(args, FLAGS, VALUED, &["--logfile"])
}

/// Whether `file` exists in `cwd` or a directory above it inside the project (the
/// tools look upwards for their manifest; one outside the project is not project-local).
fn manifest_in_project(cwd: &Path, ctx: &AnalysisContext, files: &[&str]) -> bool {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if !crate::model::paths::is_inside(d, ctx.root()) {
            return false;
        }
        if files.iter().any(|f| d.join(f).is_file()) {
            return true;
        }
        dir = d.parent();
    }
    false
}

/// `cargo build|test|check|clippy|fmt` with options that choose what is built, never
/// ones that name programs, configuration or places (`--config`, `-Z`,
/// `--manifest-path`, `--target-dir`, `-C`); after `--`, the test harness's arguments,
/// or for clippy only lint levels (`-D x`), since rustc flags there can name a linker.
fn cargo(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Vec<String>> {
    const FLAGS: &[&str] = &[
        "--release",
        "--all-targets",
        "--all-features",
        "--no-default-features",
        "--workspace",
        "--all",
        "--lib",
        "--bins",
        "--tests",
        "--examples",
        "--benches",
        "--doc",
        "--no-run",
        "--no-fail-fast",
        "--locked",
        "--offline",
        "--frozen",
        "-q",
        "--quiet",
        "-v",
        "-vv",
        "--verbose",
        "--keep-going",
        "--timings",
        "--check",
        "--future-incompat-report",
    ];
    const VALUED: &[&str] = &[
        "--features",
        "-F",
        "-p",
        "--package",
        "--bin",
        "--test",
        "--example",
        "--bench",
        "--message-format",
        "--color",
        "-j",
        "--jobs",
        "--target",
        "--profile",
        "--exclude",
    ];
    let (sub, args) = rest.split_first()?;
    if !matches!(
        *sub,
        "build" | "b" | "test" | "t" | "check" | "c" | "clippy" | "fmt"
    ) {
        return None;
    }
    if !manifest_in_project(cwd, ctx, &["Cargo.toml"]) {
        return None;
    }
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if *w == "--" {
            let after = args.get(i + 1..).unwrap_or_default();
            return match *sub {
                "clippy" => lint_levels(after).then(Vec::new),
                "fmt" => after
                    .iter()
                    .all(|a| matches!(*a, "--check" | "--verbose" | "-v"))
                    .then(Vec::new),
                // `cargo test -- ARGS` hands ARGS to the test harness.
                "test" | "t" => libtest_args(after),
                // `cargo build -- x` is refused by cargo itself.
                _ => Some(Vec::new()),
            };
        }
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        if FLAGS.contains(w) {
            i += 1;
        } else if VALUED.contains(&flag) {
            i += if w.contains('=') { 1 } else { 2 };
        } else if !w.starts_with('-') && matches!(*sub, "test" | "t") {
            // A test name filter.
            i += 1;
        } else {
            return None;
        }
    }
    Some(Vec::new())
}

/// `-D x`, `-W x`, `-A x`, `-F x` (and the long forms) only.
fn lint_levels(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        match *w {
            "-D" | "-W" | "-A" | "-F" | "--deny" | "--warn" | "--allow" | "--forbid" => {
                match args.get(i + 1) {
                    Some(v) if !v.starts_with('-') => i += 2,
                    _ => return false,
                }
            }
            w if ["-D", "-W", "-A", "-F"].iter().any(|p| {
                w.strip_prefix(p).is_some_and(|v| {
                    !v.is_empty()
                        && v.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-'))
                })
            }) =>
            {
                i += 1
            }
            _ => return false,
        }
    }
    true
}

/// `npm test`, `npm run SCRIPT [-- args]` (and `pnpm`/`yarn`), with no package-manager
/// option (`--prefix`, `--script-shell` would run something else). The words after
/// `--` reach the script's test runner (jest, vitest, mocha…): only name filters,
/// flags that choose and report tests, and `--outputFile F` (a write) are vouched for.
fn js(name: &str, rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Vec<String>> {
    if !manifest_in_project(cwd, ctx, &["package.json"]) {
        return None;
    }
    let after_script = match rest {
        [t, more @ ..]
            if matches!(*t, "test" | "t") && (name != "npm" || *t == "test" || *t == "t") =>
        {
            more
        }
        [run, script, more @ ..]
            if matches!(*run, "run" | "run-script") && !script.starts_with('-') =>
        {
            more
        }
        // `npm start` is `npm run start`, as `npm test` is `npm run test`.
        ["start", more @ ..] => more,
        // yarn and pnpm run a script named as their command when the command is
        // none of their own: only names neither has a command of, and only when the
        // project's manifest names such a script (otherwise yarn would run a binary
        // of that name, and pnpm fail).
        [script, more @ ..]
            if name != "npm"
                && SCRIPT_NAMES.contains(script)
                && manifest_scripts(cwd, ctx).contains(&(*script).to_string()) =>
        {
            more
        }
        _ => return None,
    };
    match after_script {
        [] => Some(Vec::new()),
        ["--", args @ ..] => runner_args(args),
        _ => None,
    }
}

/// Script names `yarn NAME` and `pnpm NAME` run as `run NAME`: none is a command of
/// either tool.
const SCRIPT_NAMES: &[&str] = &[
    "dev",
    "build",
    "lint",
    "typecheck",
    "format",
    "serve",
    "preview",
];

/// The script names of the `package.json` nearest above `cwd` inside the project
/// (none when it cannot be read or parsed).
fn manifest_scripts(cwd: &Path, ctx: &AnalysisContext) -> Vec<String> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if !crate::model::paths::is_inside(d, ctx.root()) {
            return Vec::new();
        }
        let file = d.join("package.json");
        if file.is_file() {
            return std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| {
                    v.get("scripts")
                        .and_then(|s| s.as_object())
                        .map(|o| o.keys().cloned().collect())
                })
                .unwrap_or_default();
        }
        dir = d.parent();
    }
    Vec::new()
}

/// Test-runner arguments after `npm test --`: see `js`.
fn runner_args(args: &[&str]) -> Option<Vec<String>> {
    const FLAGS: &[&str] = &[
        "--silent",
        "--verbose",
        "--ci",
        "--runInBand",
        "-i",
        "--bail",
        "--passWithNoTests",
        "--run",
        "--coverage",
        "--watch=false",
        "--watchAll=false",
        "-u",
        "--updateSnapshot",
    ];
    const VALUED: &[&str] = &["-t", "--testNamePattern", "--testPathPattern", "--grep"];
    harness_args(args, FLAGS, VALUED, &["--outputFile"])
}

/// `go build|test|vet` of packages (`./...`, `.`, `./pkg`) with flags that choose what
/// is built and how it is reported, never `-exec`, `-toolexec`, `-C`, `-modfile`,
/// `-overlay`. The files `-o`, `-coverprofile` and the other profiles name (and
/// `-outputdir`, where profiles go) are writes, judged as such.
fn go(rest: &[&str], ctx: &AnalysisContext, cwd: &Path) -> Option<Vec<String>> {
    const OUTPUTS: &[&str] = &[
        "-o",
        "-coverprofile",
        "-cpuprofile",
        "-memprofile",
        "-blockprofile",
        "-mutexprofile",
        "-trace",
        "-outputdir",
    ];
    const FLAGS: &[&str] = &[
        "-v",
        "-race",
        "-cover",
        "-short",
        "-failfast",
        "-benchmem",
        "-json",
        "-trimpath",
        "-x",
        "-n",
        "-a",
    ];
    const VALUED: &[&str] = &[
        "-run",
        "-count",
        "-timeout",
        "-tags",
        "-p",
        "-bench",
        "-benchtime",
        "-cpu",
        "-parallel",
        "-covermode",
        "-coverpkg",
        "-mod",
        "-skip",
        "-shuffle",
        "-vet",
    ];
    let (sub, args) = rest.split_first()?;
    if !matches!(*sub, "build" | "test" | "vet") || !manifest_in_project(cwd, ctx, &["go.mod"]) {
        return None;
    }
    let mut writes = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        let flag_single = flag
            .strip_prefix('-')
            .map(|f| format!("-{}", f.trim_start_matches('-')));
        let flag_norm = flag_single.as_deref().unwrap_or(flag);
        if FLAGS.contains(&flag_norm) && !w.contains('=') {
            i += 1;
        } else if VALUED.contains(&flag_norm) {
            i += if w.contains('=') { 1 } else { 2 };
        } else if OUTPUTS.contains(&flag_norm) {
            let value = match w.split_once('=') {
                Some((_, v)) => v,
                None => args.get(i + 1)?,
            };
            writes.push(value.to_string());
            i += if w.contains('=') { 1 } else { 2 };
        } else if *w == "." || *w == "./..." || (w.starts_with("./") && !w.contains("..")) {
            i += 1;
        } else {
            return None;
        }
    }
    Some(writes)
}

/// `make [TARGET…]` with a Makefile here (no target: its first, as `make all` names
/// one), targets only (no `VAR=value`, `-f`, `-C`, `--eval`), `-j`/`-k`/`-s` allowed.
fn make(rest: &[&str], cwd: &Path) -> bool {
    if !["Makefile", "makefile", "GNUmakefile"]
        .iter()
        .any(|f| cwd.join(f).is_file())
    {
        return false;
    }
    for w in rest {
        let jobs = w
            .strip_prefix("-j")
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
        if jobs || matches!(*w, "-k" | "-s" | "--keep-going" | "--silent") {
            continue;
        }
        if w.starts_with('-') || w.contains('=') || w.is_empty() {
            return false;
        }
    }
    true
}

/// `pytest` with reporting and selection flags and test paths inside the project;
/// `--junitxml F` is a write. Never `-p` (loads a plugin), `-c`/`--rootdir`/
/// `--confcutdir` (another configuration), `--basetemp` (pytest removes that directory
/// first: `--basetemp .` deletes the project).
fn pytest(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Vec<String>> {
    const FLAGS: &[&str] = &[
        "-q",
        "-v",
        "-vv",
        "-x",
        "-s",
        "--lf",
        "--ff",
        "--last-failed",
        "--failed-first",
        "--no-header",
        "-ra",
        "-rA",
        "--exitfirst",
        "--quiet",
        "--verbose",
        "--sw",
        "--stepwise",
    ];
    const VALUED: &[&str] = &["-k", "-m", "--tb", "--maxfail", "--durations", "-n"];
    let mut writes = Vec::new();
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        let flag = w.split_once('=').map_or(*w, |(f, _)| f);
        if let Some((v, n)) = output_value(rest, i, &["--junitxml", "--junit-xml"]) {
            writes.push(v.to_string());
            i += n;
        } else if FLAGS.contains(w) || switch_cluster(w) {
            i += 1;
        } else if VALUED.contains(&flag) {
            i += if w.contains('=') { 1 } else { 2 };
        } else if !w.starts_with('-') {
            let path = w.split("::").next().unwrap_or(w);
            match crate::model::paths::resolve_word(path, Some(cwd), ctx.home()) {
                Some(p) if crate::model::paths::is_inside(&p, ctx.root()) => i += 1,
                _ => return None,
            }
        } else {
            return None;
        }
    }
    Some(writes)
}

/// `python -m unittest [discover] [OPTS] [TESTS…]`: the project's tests, by dotted
/// names (imported with the working directory, inside the project, first on the path)
/// or by files inside the project; `discover`'s start and top directories inside it
/// too. Options that only choose and report tests (`-v -q -f -c -b --locals -k
/// --durations`, `-p PATTERN`).
fn unittest(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> bool {
    const FLAGS: &[&str] = &[
        "-v",
        "-q",
        "-f",
        "-c",
        "-b",
        "--verbose",
        "--quiet",
        "--failfast",
        "--catch",
        "--buffer",
        "--locals",
    ];
    const DIRS: &[&str] = &["-s", "--start-directory", "-t", "--top-level-directory"];
    const VALUED: &[&str] = &["-k", "--durations", "-p", "--pattern"];
    let inside = |w: &str| {
        crate::model::paths::resolve_word(w, Some(cwd), ctx.home())
            .is_some_and(|p| crate::model::paths::is_inside(&p, ctx.root()))
    };
    let rest = rest.strip_prefix(&["discover"]).unwrap_or(rest);
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        let (flag, attached) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (*w, None),
        };
        if FLAGS.contains(w) {
            i += 1;
        } else if DIRS.contains(&flag) || VALUED.contains(&flag) {
            let value = match attached {
                Some(v) => v,
                None => rest.get(i + 1).copied().unwrap_or(""),
            };
            if value.is_empty() || (DIRS.contains(&flag) && !inside(value)) {
                return false;
            }
            i += if attached.is_some() { 1 } else { 2 };
        } else if w.starts_with('-') {
            return false;
        } else if w.ends_with(".py") || w.contains('/') {
            if !inside(w) {
                return false;
            }
            i += 1;
        } else if w
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// pytest's switches written together (`-xvs`, `-vx`, `-qq`): each letter one of the
/// switches `pytest` takes alone above (none of them takes a value).
fn switch_cluster(w: &str) -> bool {
    w.strip_prefix('-').is_some_and(|letters| {
        letters.len() > 1 && letters.chars().all(|c| matches!(c, 'q' | 'v' | 'x' | 's'))
    })
}

/// `python`, `python3` or `python3.N` by name (found on `PATH`).
fn python_name(name: &str) -> bool {
    matches!(name, "python" | "python3")
        || name
            .strip_prefix("python3.")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()))
}

/// `python -m pytest ARGS` (pytest's rules, as `pytest ARGS`) and `python -m
/// py_compile FILE…` (files inside the project: it writes their `__pycache__` beside
/// them), after the interpreter's plain switches. Any other module is code from
/// wherever `sys.path` finds it, no build this preset vouches for.
fn python_module(rest: &[&str], cwd: &Path, ctx: &AnalysisContext) -> Option<Vec<String>> {
    let (module, args) = module_words(rest)?;
    match module {
        "pytest" => pytest(args, cwd, ctx),
        "unittest" => unittest(args, cwd, ctx).then(Vec::new),
        "py_compile" => (!args.is_empty()
            && args.iter().all(|a| {
                !a.starts_with('-')
                    && !a.contains(['*', '?', '['])
                    && crate::model::paths::resolve_word(a, Some(cwd), ctx.home())
                        .is_some_and(|p| crate::model::paths::is_inside(&p, ctx.root()))
            }))
        .then(Vec::new),
        _ => None,
    }
}

/// `-m MODULE ARGS…` after Python's plain switches: the module and its arguments.
fn module_words<'a, 'w>(rest: &'a [&'w str]) -> Option<(&'w str, &'a [&'w str])> {
    let flags = INTERPRETERS.first().map(|(_, f)| *f).unwrap_or_default();
    let at = rest.iter().position(|w| !flags.contains(w))?;
    match rest.get(at..)? {
        ["-m", module, args @ ..] => Some((*module, args)),
        _ => None,
    }
}

/// Modules `python -m` runs that stay asked: they reach what the sandbox withholds
/// (an index to install from, a port the sandbox's own network hides from the agent).
const MODULES_ASKED: &[&str] = &["pip", "pip3", "ensurepip", "http.server"];

/// `python -m MODULE [ARGS…]` after the interpreter's plain switches, MODULE a dotted
/// name (`python -m mteb --help`, `python3 -m pylint src`, `python3 -m json.tool`):
/// Python looks the module up first in the working directory, inside the project,
/// then in the project's environment, so no stdlib name is safe from a file of the
/// project (`json/`). Nothing reads what the module does: a project script, contained
/// under every preset and never allowed outright, like `python x.py`. Not the modules
/// of `MODULES_ASKED`, nor those `python_module` reads option by option.
fn module_run(rest: &[&str]) -> bool {
    let Some((module, _)) = module_words(rest) else {
        return false;
    };
    // The modules `python_module` reads keep its answer: an option it refuses asks.
    !matches!(module, "pytest" | "unittest" | "py_compile")
        && !MODULES_ASKED.contains(&module)
        && module.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `tox` or `tox -e ENV` with a tox config here.
fn tox(rest: &[&str], cwd: &Path) -> bool {
    if !["tox.ini", "pyproject.toml", "setup.cfg"]
        .iter()
        .any(|f| cwd.join(f).is_file())
    {
        return false;
    }
    match rest {
        [] => true,
        ["-e", env] => !env.starts_with('-'),
        _ => false,
    }
}

/// Interpreters that run a script file named as their first operand, with the flags
/// each may carry before it (none of which takes a value or names code).
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-u", "-B", "-O", "-OO", "-q", "-s", "-E", "-I"]),
    (
        "python3",
        &["-u", "-B", "-O", "-OO", "-q", "-s", "-E", "-I"],
    ),
    (
        "node",
        &[
            "--enable-source-maps",
            "--trace-warnings",
            "--no-warnings",
            "--experimental-strip-types",
        ],
    ),
    ("bash", &["-e", "-x", "-u", "-eu", "-ex", "-eux"]),
    ("sh", &["-e", "-x", "-u", "-eu", "-ex", "-eux"]),
    ("ruby", &["-w"]),
    ("perl", &["-w"]),
    ("tsx", &[]),
    ("ts-node", &[]),
];

/// Tools `npx` runs from the project's own `node_modules/.bin` (never downloaded): the
/// script runners and test runners agents call through it.
const NPX_LOCAL: &[&str] = &["tsx", "ts-node", "jest", "vitest", "mocha"];

/// A script of the project run by its interpreter or by its path: `python
/// reproduce.py`, `node scripts/x.js`, `bash run.sh`, `./run.sh`,
/// `./node_modules/.bin/jest`, `npx tsx x.ts` (with `tsx` installed in the project),
/// or a name `PATH` finds as a link into the project (`minsky`, linked by `bun link`).
/// The script must be a file inside the project, or not there yet at a place inside
/// it (not for a shell's bare name, which it would look for on `PATH`), the
/// interpreter's flags before it plain switches (no `-c`, `-e`, `-m`: code or a module from elsewhere), and the
/// arguments after it are the script's. Its effects are whatever the project's code
/// does, which is why this verdict is contained, never allowed.
fn project_script(words: &[&str], cwd: &Path, ctx: &AnalysisContext) -> bool {
    let Some((name, rest)) = words.split_first() else {
        return false;
    };
    // A glob character makes the word a pattern to a reader of the command, never a
    // file this verdict vouches for.
    // A script that is not there yet (the agent writes it in the same command, `cat >
    // x.py <<EOF … EOF && python3 x.py`, or names it wrongly) counts where it would be
    // created: resolved as the kernel would (every existing prefix, symlinks followed),
    // inside the project and no dangling symlink. Run without it, the interpreter only
    // fails.
    let inside_file = |w: &str| {
        if w.contains(['*', '?', '[']) {
            return false;
        }
        let Some(p) = crate::model::paths::resolve_word(w, Some(cwd), ctx.home()) else {
            return false;
        };
        match std::fs::canonicalize(&p) {
            Ok(c) => c.is_file() && crate::model::paths::is_inside(&c, ctx.root()),
            Err(_) => {
                std::fs::symlink_metadata(&p).is_err()
                    && p != ctx.root()
                    && crate::model::paths::is_inside(&p, ctx.root())
            }
        }
    };
    if name.contains('/') {
        return inside_file(name);
    }
    let versioned = name
        .strip_prefix("python3.")
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()));
    let flags = if versioned {
        INTERPRETERS.first().map(|(_, f)| *f)
    } else {
        INTERPRETERS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    };
    if let Some(flags) = flags {
        let mut i = 0;
        while let Some(w) = rest.get(i) {
            if flags.contains(w) {
                i += 1;
                continue;
            }
            // A shell that finds no file of a bare name here looks for it on `PATH`
            // (`bash deploy.sh` may run `~/bin/deploy.sh`): a name without a slash is
            // the project's only when it is there now.
            let searched = matches!(*name, "bash" | "sh") && !w.contains('/');
            return !w.starts_with('-') && inside_file(w) && (!searched || cwd.join(w).is_file());
        }
        return false;
    }
    if *name == "npx" {
        let Some((tool, more)) = rest.split_first() else {
            return false;
        };
        if !NPX_LOCAL.contains(tool) || !local_bin(tool, cwd, ctx) {
            return false;
        }
        return match *tool {
            "tsx" | "ts-node" => more
                .first()
                .is_some_and(|w| !w.starts_with('-') && inside_file(w)),
            _ => true,
        };
    }
    // A command of the project linked onto `PATH` (`bun link`, `npm link`). A name
    // found in a directory of the project on `PATH` (a `.venv/bin`) is the project's
    // too, but such a directory holds installers (`pip install` would fail for want of
    // the network in the sandbox): those keep the ask, and lose any verdict they had.
    crate::programs::search_path::linked_project_program(name, Some(cwd), ctx).is_some()
}

/// Code written on the command line, run by Python, Node or Perl in the project: `python3 -c
/// 'import app; print(app.VERSION)'`, `node -e CODE`, `node -p EXPR`, `perl -lpe CODE`, after the
/// interpreter's plain switches; what follows the code is its `sys.argv` or
/// `process.argv`. A program read from standard input is the same (`python3 - <<'EOF'`,
/// `python3 <<EOF`, `… | node -`): an operand `-` or none at all, after the switches.
/// Nothing reads what the code does, and it may delete as well as
/// print, so its verdict is contained with the project read-only
/// (`ProfileName::ReadOnly`): it can compute, import the project's modules (the module
/// search starts in the working directory, inside the project) and print, and any
/// write but to the private `/tmp` fails.
fn inline_code(words: &[&str]) -> bool {
    let Some((name, rest)) = words.split_first() else {
        return false;
    };
    let (flags, code_flags): (&[&str], &[&str]) = if python_name(name) {
        (
            INTERPRETERS.first().map(|(_, f)| *f).unwrap_or_default(),
            &["-c"],
        )
    } else if *name == "node" {
        (
            INTERPRETERS
                .iter()
                .find(|(n, _)| *n == "node")
                .map(|(_, f)| *f)
                .unwrap_or_default(),
            &["-e", "--eval", "-p", "--print"],
        )
    } else if *name == "perl" {
        return perl_code(rest);
    } else {
        return false;
    };
    let Some(at) = rest.iter().position(|w| !flags.contains(w)) else {
        // No operand: the program is standard input.
        return true;
    };
    match rest.get(at..) {
        Some([flag, _code, ..]) if code_flags.contains(flag) => true,
        Some(["-", ..]) => true,
        _ => false,
    }
}

/// `perl -e CODE`, `perl -lpe CODE [FILE…]`, `perl -ne CODE`: switch clusters of
/// `l n p a w` alone or ending in `e`/`E`, whose next word is the program (perl reads
/// no script file then). What follows the code is its input.
fn perl_code(rest: &[&str]) -> bool {
    let cluster = |w: &str| {
        w.strip_prefix('-').is_some_and(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| matches!(c, 'l' | 'n' | 'p' | 'a' | 'w' | 'e' | 'E'))
        })
    };
    for (i, w) in rest.iter().enumerate() {
        if !cluster(w) {
            return false;
        }
        let letters = w.trim_start_matches('-');
        // `e`/`E` takes the rest of the word as code when more follows it in the
        // cluster (`-ep…` is code `p…`): only as the last letter is the next word code.
        if let Some(pos) = letters.find(['e', 'E']) {
            return pos + 1 == letters.len() && rest.get(i + 1).is_some();
        }
    }
    false
}

/// Whether an interpreter runs a script of the project named as its operand
/// (`python3 solution.py`, `bash ./run.sh`): its program is that file, not its input.
pub fn runs_project_script(words: &[&str], cwd: &Path, ctx: &AnalysisContext) -> bool {
    words
        .first()
        .is_some_and(|n| !n.contains('/') && *n != "npx")
        && crate::model::paths::is_inside(cwd, ctx.root())
        && project_script(words, cwd, ctx)
}

/// Whether `node_modules/.bin/TOOL` exists in `cwd` or a parent up to the project root,
/// resolving inside the project (so `npx` runs it instead of downloading one).
fn local_bin(tool: &str, cwd: &Path, ctx: &AnalysisContext) -> bool {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if !crate::model::paths::is_inside(d, ctx.root()) {
            return false;
        }
        let bin = d.join("node_modules").join(".bin").join(tool);
        if std::fs::canonicalize(&bin)
            .is_ok_and(|p| p.is_file() && crate::model::paths::is_inside(&p, ctx.root()))
        {
            return true;
        }
        dir = d.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_runs_are_dotted_names_not_installers() {
        assert!(module_run(&["-m", "mteb", "--help"]));
        assert!(module_run(&["-u", "-m", "sphinx.cmd.build", "docs", "out"]));
        assert!(module_run(&["-m", "_private.mod2"]));
        for no in [
            &["-m", "pip", "install", "x"][..],
            &["-m", "http.server"],
            &["-m", "pytest", "-p", "evil"],
            &["-m", "../x"],
            &["-m", "a..b"],
            &["-m", "2to3"],
            &["-m"],
            &["-c", "-m", "x"],
            &["x.py", "-m", "mod"],
        ] {
            assert!(!module_run(no), "{no:?}");
        }
    }

    #[test]
    fn perl_code_is_the_word_after_a_cluster_ending_in_e() {
        assert!(perl_code(&["-e", "print 1"]));
        assert!(perl_code(&["-lpe", "s/a/b/", "a.txt"]));
        assert!(perl_code(&["-n", "-E", "say"]));
        for no in [
            &["-ep", "x"][..],
            &["-i", "-pe", "s/a/b/", "a.txt"],
            &["-e"],
            &["script.pl"],
            &["-Mstrict", "-e", "1"],
            &["-l0e", "1"],
        ] {
            assert!(!perl_code(no), "{no:?}");
        }
    }

    #[test]
    fn clippy_lints_only() {
        assert!(lint_levels(&["-D", "warnings"]));
        assert!(lint_levels(&["-Dwarnings", "-W", "clippy::pedantic"]));
        assert!(!lint_levels(&["-C", "linker=/tmp/x"]));
        assert!(!lint_levels(&["-D"]));
    }
}
