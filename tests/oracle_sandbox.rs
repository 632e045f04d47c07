//! The oracle's harness proved on handcrafted commands: real bubblewrap, real strace,
//! real bash. What bash executed (argv), what it opened for writing, that nested shells
//! and wrappers are seen, that a runaway or blocking command is cut without taking its
//! batch down, and that nothing can reach the network or the host's files.
//!
//! Needs `bwrap`, `strace` and `setpriv`: `bash tests/setup/oracle.sh` installs them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use khaelor_perm::oracle::sandbox::{Limits, Sandbox};
use khaelor_perm::oracle::{ExecVia, Observed, RunStatus};

fn sandbox(limits: Limits) -> Sandbox {
    match Sandbox::new(limits) {
        Ok(s) => s,
        Err(e) => panic!("{e} (run `bash tests/setup/oracle.sh`)"),
    }
}

fn run(sb: &Sandbox, commands: &[&str]) -> Vec<Observed> {
    let cmds: Vec<String> = commands.iter().map(|c| c.to_string()).collect();
    sb.run(&cmds, &|_| {}).expect("sandbox run")
}

fn argvs(o: &Observed) -> Vec<Vec<String>> {
    o.executed.iter().map(|e| e.argv.clone()).collect()
}

fn v(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn sees_programs_arguments_and_writes() {
    let sb = sandbox(Limits::default());
    let root = sb.root().display().to_string();
    let home = sb.home().display().to_string();
    let obs = run(
        &sb,
        &[
            "ls; id",
            "echo x > f",
            "bash -c 'id -u'",
            "sh -c 'id'",
            "env X=1 id",
            "sh -O nullglob -c 'bash --norc -c \"whoami\"'",
            "echo $(hostname -f) >> ~/notes",
            "cd /tmp && : > rel.txt",
            "/usr/bin/zz -q 'a b'",
            "f() { uname -a; }; f",
            "exec foo",
            "x=1",
        ],
    );
    assert_eq!(obs.len(), 12);
    assert!(obs.iter().all(|o| o.status == RunStatus::Ran), "{obs:#?}");
    assert_eq!(argvs(&obs[0]), vec![v(&["ls"]), v(&["id"])]);
    assert_eq!(obs[0].executed[0].via, ExecVia::NotFound);
    assert!(obs[0].writes.is_empty(), "{:?}", obs[0].writes);
    assert_eq!(obs[1].writes, vec![format!("{root}/f")]);
    assert!(obs[1].executed.is_empty(), "echo is a builtin");
    assert_eq!(
        argvs(&obs[2]),
        vec![v(&["bash", "-c", "id -u"]), v(&["id", "-u"])]
    );
    assert_eq!(obs[2].executed[0].via, ExecVia::Execve);
    assert_eq!(argvs(&obs[3]), vec![v(&["sh", "-c", "id"]), v(&["id"])]);
    assert_eq!(argvs(&obs[4]), vec![v(&["env", "X=1", "id"])]);
    assert_eq!(
        argvs(&obs[5]),
        vec![
            v(&["sh", "-O", "nullglob", "-c", "bash --norc -c \"whoami\""]),
            v(&["bash", "--norc", "-c", "whoami"]),
            v(&["whoami"]),
        ]
    );
    assert_eq!(argvs(&obs[6]), vec![v(&["hostname", "-f"])]);
    assert_eq!(obs[6].writes, vec![format!("{home}/notes")]);
    assert_eq!(obs[7].writes, vec!["/tmp/rel.txt".to_string()]);
    assert_eq!(argvs(&obs[8]), vec![v(&["/usr/bin/zz", "-q", "a b"])]);
    assert_eq!(argvs(&obs[9]), vec![v(&["uname", "-a"])]);
    // `exec` of a name found nowhere never reaches execve nor the handler: the PATH
    // lookup is what shows it.
    assert!(obs[10].executed.is_empty());
    assert_eq!(obs[10].searched, vec!["foo".to_string()]);
    assert!(obs[11].executed.is_empty() && obs[11].writes.is_empty());
}

#[test]
fn a_runaway_command_is_cut_and_the_batch_goes_on() {
    let sb = sandbox(Limits {
        command_wall: Duration::from_secs(10),
        per_command_wall: Duration::from_millis(200),
        batch: 10,
        ..Limits::default()
    });
    let obs = run(
        &sb,
        &[
            "id -a",
            // CPU-bound: the per-command CPU limit ends it.
            "while :; do :; done; never",
            // Blocks without CPU (a coprocess waiting on us, we on it): only the wall
            // clock ends it; the batch is rerun one command at a time.
            "coproc { read -r; }; read -r -u \"${COPROC[0]}\"; never",
            // A fork bomb is held by the process limit.
            "b() { b | b & }; b",
            "whoami",
        ],
    );
    assert_eq!(argvs(&obs[0]), vec![v(&["id", "-a"])]);
    assert_eq!(obs[1].status, RunStatus::Ran);
    assert!(argvs(&obs[1]).is_empty(), "{:?}", obs[1]);
    assert_eq!(obs[2].status, RunStatus::TimedOut);
    assert!(argvs(&obs[2]).is_empty(), "{:?}", obs[2]);
    assert_eq!(argvs(&obs[4]), vec![v(&["whoami"])]);
    assert_eq!(obs[4].status, RunStatus::Ran);
}

#[test]
fn nothing_else_runs_and_nothing_escapes() {
    let sb = sandbox(Limits::default());
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let host_file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(host_file.path(), "original").expect("write");
    let host = host_file.path().display().to_string();
    let home = sb.home().display().to_string();
    let commands = [
        // Only bash exists: every executable file found becomes a write we can see.
        "for f in /bin/* /usr/bin/* /sbin/* /usr/sbin/* /usr/local/bin/*; do [ -x \"$f\" ] && : > \"$HOME/exe-${f##*/}\"; done".to_string(),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && : > net-reached"),
        format!("echo pwned > {host}"),
        "cat /etc/passwd > copy; [ -e /etc/passwd ] && : > etc-exists".to_string(),
    ];
    let cmds: Vec<&str> = commands.iter().map(String::as_str).collect();
    let obs = run(&sb, &cmds);
    let mut exes = obs[0].writes.clone();
    exes.sort();
    assert_eq!(
        exes,
        vec![format!("{home}/exe-bash"), format!("{home}/exe-sh"),],
        "only bash is executable in the sandbox"
    );
    assert!(
        !obs[1].writes.iter().any(|w| w.ends_with("/net-reached")),
        "{:?}",
        obs[1]
    );
    assert!(listener.accept().is_err(), "a connection reached the host");
    let mut content = String::new();
    std::fs::File::open(host_file.path())
        .and_then(|mut f| f.read_to_string(&mut content))
        .expect("read");
    assert_eq!(content, "original");
    assert!(!obs[3].writes.iter().any(|w| w.ends_with("/etc-exists")));
}

#[test]
fn a_command_with_a_nul_byte_is_not_run() {
    let sb = sandbox(Limits::default());
    let obs = run(&sb, &["id\0whoami", "id"]);
    assert_eq!(obs[0].status, RunStatus::Unrunnable);
    assert_eq!(argvs(&obs[1]), vec![v(&["id"])]);
}

/// The subcommand end to end: counts on stdout, exit 0 when nothing is unreported, 2
/// (with a message) when there is nothing to run or a file cannot be read.
#[test]
fn the_cli_reports_and_sets_its_exit_status() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = dir.path().join("commands.txt");
    std::fs::write(&list, "ls -la\n# a comment\ngit status\n").expect("write");
    let bin = env!("CARGO_BIN_EXE_khaelor-perm");
    let out = std::process::Command::new(bin)
        .args(["oracle", "--json"])
        .arg(&list)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["commands"], 2);
    assert_eq!(report["agreed"], 2);
    assert_eq!(report["hard"], 0);

    let none = std::process::Command::new(bin)
        .arg("oracle")
        .output()
        .expect("run");
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no commands"));

    let missing = std::process::Command::new(bin)
        .args(["oracle", "/nonexistent/commands.txt"])
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}

/// The strict check's layout (`run_with_producers`): the evaluator's pure producers are
/// real, so bash computes what they print and runs it, and that is recorded; the
/// producers' own executions are seen too. The main layout still holds only bash.
#[test]
fn the_producer_layout_runs_what_producers_compute() {
    let sb = sandbox(Limits::default());
    let commands: Vec<String> = [
        "echo aWQ= | base64 -d | bash",
        "x=$(cat <<'EOF'\nwhoami -u\nEOF\n); $x",
        "echo 6964 | xxd -r -p | sh",
        "echo NFSA==== | base32 -d | bash",
        "echo di | rev | bash",
        "echo ID | tr A-Z a-z | bash",
        "echo 'uname -X' | sed 's/X/a/' | bash",
        "eval \"$(printf 'hostname\\nnever\\n' | head -n 1)\"",
        "$(/bin/echo tty)",
        "for f in /bin/* /usr/bin/* /sbin/* /usr/sbin/* /usr/local/bin/*; do [ -x \"$f\" ] && : > \"$HOME/exe-${f##*/}\"; done",
        // The grammar reads this; bash does not (`;;` outside a `case`).
        "coproc { id; whoami;; }",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let with = sb
        .run_with_producers(&commands, &|_| {})
        .expect("producer run");
    let executed = |o: &Observed, argv: &[&str]| o.executed.iter().any(|e| e.argv == v(argv));
    let via = |o: &Observed, program: &str| {
        o.executed
            .iter()
            .find(|e| e.argv.first().is_some_and(|a| a == program))
            .map(|e| e.via)
    };
    assert!(executed(&with[0], &["base64", "-d"]), "{:?}", with[0]);
    assert_eq!(via(&with[0], "base64"), Some(ExecVia::Execve));
    assert!(executed(&with[0], &["id"]), "{:?}", with[0]);
    assert!(executed(&with[1], &["cat"]), "{:?}", with[1]);
    assert!(executed(&with[1], &["whoami", "-u"]), "{:?}", with[1]);
    assert!(executed(&with[2], &["id"]), "{:?}", with[2]);
    assert!(executed(&with[3], &["id"]), "{:?}", with[3]);
    assert!(executed(&with[4], &["id"]), "{:?}", with[4]);
    assert!(executed(&with[5], &["id"]), "{:?}", with[5]);
    assert!(executed(&with[6], &["uname", "-a"]), "{:?}", with[6]);
    assert!(executed(&with[7], &["hostname"]), "{:?}", with[7]);
    assert!(!executed(&with[7], &["never"]), "{:?}", with[7]);
    assert!(executed(&with[8], &["/bin/echo", "tty"]), "{:?}", with[8]);
    assert!(executed(&with[8], &["tty"]), "{:?}", with[8]);
    // Each command is parsed by `bash -n` first: only the last one is rejected.
    assert!(
        with[10].syntax_error && with[10].executed.is_empty(),
        "{:?}",
        with[10]
    );
    assert!(with.iter().take(10).all(|o| !o.syntax_error), "{with:?}");
    // Bash and the producers, nothing else.
    let home = sb.home().display().to_string();
    let mut exes = with[9].writes.clone();
    exes.sort();
    exes.dedup();
    let mut wanted: Vec<String> = ["bash", "sh"]
        .iter()
        .chain(khaelor_perm::oracle::sandbox::PRODUCERS)
        .map(|n| format!("{home}/exe-{n}"))
        .collect();
    wanted.sort();
    assert_eq!(exes, wanted);
    // The oracle's own layout is unchanged: the producers do not exist, so bash reads
    // nothing from them and runs none of what they would print.
    let without = sb.run(&commands, &|_| {}).expect("bash-only run");
    assert!(executed(&without[0], &["base64", "-d"]));
    assert_eq!(via(&without[0], "base64"), Some(ExecVia::NotFound));
    assert!(!executed(&without[0], &["id"]), "{:?}", without[0]);
    assert!(
        !executed(&without[1], &["whoami", "-u"]),
        "{:?}",
        without[1]
    );
}

/// The strict check on real runs in the producers' layout: what the evaluator computes
/// is what bash executes, and an evaluation that is deliberately made wrong (the same
/// run, against code saying `base64` printed `whoami`) is caught in both directions.
#[test]
fn the_strict_check_agrees_with_bash_and_catches_a_wrong_evaluation() {
    use khaelor_perm::analysis::ast::{Entry, Feed, evaluated_code};
    use khaelor_perm::model::vocab::AnalysisContext;
    use khaelor_perm::oracle::compare::{StrictReason, strict};

    let sb = sandbox(Limits::default());
    let ctx = AnalysisContext::new(sb.root(), None, sb.home()).expect("context");
    let commands: Vec<String> = [
        "echo aWQ= | base64 -d | bash",
        "c=ch; ${c}mod -R 777 /",
        "x=$(cat <<'EOF'\nwhoami\nEOF\n); $x -u",
        "printf 'uname -a' | bash",
        "f() { id \"$1\"; }; f root",
        "echo 'hostname -f' > s.sh; bash s.sh",
        // The substitution's output goes to a file: the residual is `echo xy`, and
        // `ls` ran all the same.
        "echo x$(ls -la > out.txt)y",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let obs = sb
        .run_with_producers(&commands, &|_| {})
        .expect("producer run");
    for (c, o) in commands.iter().zip(&obs) {
        let codes = evaluated_code(c, &ctx).unwrap_or_else(|| panic!("{c}: not evaluated"));
        let parts = khaelor_perm::analysis::analyze(c, &ctx).parts;
        let texts: Vec<String> = codes.iter().map(|p| p.code.clone()).collect();
        let parsed = sb.parse_with_bash(&texts).expect("bash -n");
        assert!(parsed.iter().all(|p| *p == Some(true)), "{c}: {parsed:?}");
        let v = strict(&codes, o, &parts, &parsed);
        assert!(v.findings.is_empty(), "{c}: {v:?}\n{codes:#?}\n{o:?}");
        assert!(v.confirmed > 0, "{c}: nothing confirmed: {v:?} {o:?}");
    }

    let c = &commands[0];
    let mut wrong = evaluated_code(c, &ctx).expect("evaluated");
    let fed = wrong
        .iter_mut()
        .find(|p| p.entry == Entry::Fed(Feed::Shell))
        .expect("code fed to bash");
    fed.commands[0].words = vec!["whoami".to_string()];
    let parts = khaelor_perm::analysis::analyze(c, &ctx).parts;
    let v = strict(&wrong, &obs[0], &parts, &[]);
    let found: Vec<(StrictReason, &str)> = v
        .findings
        .iter()
        .map(|f| (f.reason, f.what.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            (StrictReason::NotExecuted, "whoami"),
            (StrictReason::ExecutedNotEvaluated, "id"),
        ]
    );
    // Bash itself says which texts it parses: a residual it rejects would be code
    // the evaluator wrote wrong, fed text it rejects is not run at all.
    let parsed = sb
        .parse_with_bash(&[
            "id; whoami".to_string(),
            "busybox { head -5 notes.txt; }".to_string(),
            "echo x\0y".to_string(),
        ])
        .expect("bash -n");
    assert_eq!(parsed[..2], [Some(true), Some(false)]);
}
