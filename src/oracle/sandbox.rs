//! The sandbox real bash runs in: bubblewrap over an empty tmpfs root holding only bash
//! (as `/bin/bash`, `/bin/sh`, `/usr/bin/bash`, `/usr/bin/sh`) and the libraries it links,
//! every namespace unshared (no network), an unprivileged uid, a fake project dir and
//! HOME at the same absolute paths the analysis context uses, all traced by strace.
//! A second layout of the same sandbox, for the strict check of the static evaluator
//! (`run_with_producers`), also holds the evaluator's pure producers (`PRODUCERS`), so
//! that bash computes what `$(cat <<'EOF' …)` or `… | base64 -d | bash` really yield.
//!
//! Owns finding the tools, setting the sandbox up (and refusing to run when it cannot:
//! a probe command must be seen), the driver script that runs a batch of commands each
//! in its own child with its own CPU limit, the wall-clock kill from this side, and the
//! per-command retry of a batch that was cut. Trace parsing is `trace`'s job.
//!
//! Why these choices: one strace+bwrap process per batch keeps the per-command cost to
//! a fork and an exec of bash; programs other than bash do not exist, so every
//! execution attempt fails and is recorded (a path through `execve`, a bare name
//! through a `command_not_found_handle` that bash imports as an exported function,
//! which unlike `BASH_ENV` also works for `sh`/posix mode and nested shells); the
//! sandbox uid is not root, so `ulimit -u` holds a fork bomb.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{Observed, RunStatus};

/// The markers the driver writes and the trace reads live with the reader.
pub use super::trace::{HARNESS_ARGV0, NOT_FOUND_PATH, SYNTAX_ARGV0};
/// The sandbox PATH, a usual Debian one, so lookups probe the usual places.
pub const SANDBOX_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// The setup script that installs the tools.
pub const SETUP_SCRIPT: &str = "tests/setup/oracle.sh";

/// The pure producers the strict check's layout holds besides bash (the host's
/// binaries, read-only, as `/usr/bin/NAME` and `/bin/NAME`, with the libraries `ldd`
/// lists): the programs whose output the static evaluator computes
/// (`shell::eval::producers`), and `head`/`tail`, which scripts use to cut such output.
/// None of them runs another program (GNU `sed`'s `e` command would, through
/// `/bin/sh`, which is bash here and traced like any other).
pub const PRODUCERS: &[&str] = &[
    "cat", "base64", "base32", "xxd", "rev", "tr", "sed", "head", "tail", "printf", "echo",
];

/// Which programs a run's sandbox holds, and what the driver does with each text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Only bash: every other execution attempt fails and is recorded (the oracle's
    /// property, `run`).
    BashOnly,
    /// Bash and `PRODUCERS` (the strict check of the evaluator, `run_with_producers`);
    /// each command is parsed by `bash -n` first.
    Producers,
    /// Only bash, which parses each text with `bash -n` and runs none
    /// (`parse_with_bash`).
    ParseOnly,
    /// The host's programs (its `/usr` read-only and a few `/etc` files, `PROGRAM_ETC`)
    /// over a hostile world built once per run (`new_programs`), each worker seeing
    /// its own read-only copy at the world's path, raw-disk stand-ins at `DISKS`; each
    /// command's output is kept, and the trace also shows reads (with the path the
    /// kernel opened), sockets and connects (`run_programs`, the program oracle).
    Programs,
    /// The programs' layout over a writable world (`run_edits`, the program oracle's
    /// edits): the project's and HOME's common parent is a tmpfs, and the driver
    /// restores the world into it from a read-only snapshot (`/.oracle/world`) before
    /// each command, outside the command's marker, so every command starts from the
    /// same world and what it writes succeeds and shows in full.
    Edits,
}

/// The system calls the programs' layouts trace: executions, opens, the cwd, process
/// creation, sockets, and every call that creates, changes or removes a name.
const PROGRAMS_TRACE: &str = "trace=execve,openat,open,creat,chdir,fchdir,newfstatat,stat,clone,clone3,fork,vfork,socket,connect,\
mkdir,mkdirat,rmdir,unlink,unlinkat,rename,renameat,renameat2,symlink,symlinkat,link,linkat,\
chmod,fchmod,fchmodat,truncate,ftruncate,utimensat";

/// The `/etc` entries the programs' layout binds (those that exist): the loader's
/// cache, the alternatives links (`/usr/bin/awk` and others), user and group names
/// (`ls -l`, `id`), the time zone, and libmagic's and MIME tables (`file`). Nothing
/// else of the host's configuration (no `/etc/gitconfig`): the programs see a plain
/// system.
pub const PROGRAM_ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/mime.types",
];

/// Raw disks in the programs' layout: each is a read-only stand-in file, so writing
/// one shows as an open for writing that fails.
pub const DISKS: &[&str] = &["/dev/sda", "/dev/nvme0n1"];

/// Where the edits' layout binds the worker's copy of the world (read-only), from which
/// the driver restores the project and HOME before each command.
pub const WORLD_SNAPSHOT: &str = "/.oracle/world";

/// Where each command's stdout and stderr go in the programs' layout (`/.oracle/out/I`).
pub const OUTPUT_DIR: &str = "/.oracle/out";

/// One command's run: the facts, the extra facts of the programs' layout (empty
/// elsewhere), and its output (stdout and stderr together, the programs' layout only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub observed: Observed,
    pub extra: super::trace::Extra,
    pub output: Vec<u8>,
}

/// Sandbox uids start here. Each (process, sandbox, worker) gets its own uid, so
/// `ulimit -u` counts only that worker's processes and the sweep after a batch
/// (`kill -KILL -1` as that uid) can reach no other run's processes.
const UID_BASE: u32 = 1_000_000;

/// Why the harness cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("`{tool}` not found on PATH; install it with `bash {SETUP_SCRIPT}`")]
    MissingTool { tool: &'static str },
    #[error(
        "producer `{tool}` not found on PATH (the strict evaluator check needs it); install it with `bash {SETUP_SCRIPT}`"
    )]
    MissingProducer { tool: &'static str },
    #[error("cannot list the libraries of `{bash}`: {message}")]
    Libraries { bash: String, message: String },
    #[error("cannot prepare `{path}`: {message}")]
    Io { path: String, message: String },
    #[error("cannot start the sandbox: {message}")]
    Spawn { message: String },
    #[error(
        "the sandbox does not work here: {message} (needs bubblewrap with unprivileged user namespaces and strace; see `{SETUP_SCRIPT}`)"
    )]
    Probe { message: String },
}

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// CPU seconds per command (`ulimit -t`).
    pub cpu_seconds: u32,
    /// Wall-clock budget of a single-command run.
    pub command_wall: Duration,
    /// Extra wall-clock budget per command of a batch, on top of `command_wall`.
    pub per_command_wall: Duration,
    /// Commands per bwrap+strace process.
    pub batch: usize,
    /// Batches run at the same time.
    pub workers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_seconds: 1,
            command_wall: Duration::from_secs(10),
            per_command_wall: Duration::from_millis(100),
            batch: 200,
            workers: 2,
        }
    }
}

/// A ready sandbox: the tools found, the scratch directory made, the probe passed.
#[derive(Debug)]
pub struct Sandbox {
    strace: PathBuf,
    setpriv: PathBuf,
    bwrap: PathBuf,
    bash: PathBuf,
    libs: Vec<PathBuf>,
    /// Each producer's host binary (canonical), for the `Producers` layout.
    producers: Vec<(&'static str, PathBuf)>,
    /// The libraries the producers link that bash does not.
    producer_libs: Vec<PathBuf>,
    /// Host scratch directory (removed on drop).
    scratch: PathBuf,
    root: PathBuf,
    home: PathBuf,
    limits: Limits,
    /// This sandbox's block of eight uids (see `UID_BASE`).
    uid_slot: u32,
    /// The programs' layout is set up (`new_programs`).
    programs: bool,
}

/// Finds an executable on the host PATH.
fn which(tool: &'static str) -> Result<PathBuf, SandboxError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(SandboxError::MissingTool { tool })
}

/// The shared libraries `bash` loads, from `ldd` (the loader included).
fn libraries(bash: &Path) -> Result<Vec<PathBuf>, SandboxError> {
    let libs = linked(bash)?;
    if libs.is_empty() {
        return Err(SandboxError::Libraries {
            bash: bash.display().to_string(),
            message: "no libraries listed".to_string(),
        });
    }
    Ok(libs)
}

/// The shared libraries a program loads, from `ldd` (none for a static binary).
fn linked(bash: &Path) -> Result<Vec<PathBuf>, SandboxError> {
    let err = |message: String| SandboxError::Libraries {
        bash: bash.display().to_string(),
        message,
    };
    let out = Command::new(which("ldd")?)
        .arg(bash)
        .output()
        .map_err(|e| err(e.to_string()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        // A static binary loads nothing; glibc's ldd says so on either stream.
        if why.contains("not a dynamic executable") || text.contains("not a dynamic executable") {
            return Ok(Vec::new());
        }
        return Err(err(why));
    }
    let mut libs = Vec::new();
    for line in text.lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` or `/lib64/ld-linux... (0x...)`.
        let candidate = line
            .split_once("=>")
            .map_or(line, |(_, r)| r)
            .split_whitespace()
            .next()
            .unwrap_or("");
        if candidate.starts_with('/') {
            libs.push(PathBuf::from(candidate));
        }
    }
    Ok(libs)
}

/// Finds every producer (canonical host path) and the libraries they need beyond
/// `bash_libs`. A missing producer is an error: without it bash would compute ""
/// where the evaluator computes the producer's output, and the strict check would
/// blame the evaluator for the sandbox.
fn producers(bash_libs: &[PathBuf]) -> Result<ProducerBinaries, SandboxError> {
    let mut bins = Vec::new();
    let mut libs: Vec<PathBuf> = Vec::new();
    for &name in PRODUCERS {
        let found = which(name).map_err(|_| SandboxError::MissingProducer { tool: name })?;
        let bin = std::fs::canonicalize(&found).map_err(io_err(&found))?;
        for lib in linked(&bin)? {
            if !bash_libs.contains(&lib) && !libs.contains(&lib) {
                libs.push(lib);
            }
        }
        bins.push((name, bin));
    }
    Ok((bins, libs))
}

/// Each producer's binary, and the extra libraries.
type ProducerBinaries = (Vec<(&'static str, PathBuf)>, Vec<PathBuf>);

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> SandboxError + '_ {
    move |e| SandboxError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The driver: reads NUL-separated commands and runs each in its own child and process
/// group, marked, limited, with stdin from /dev/null, in the project dir.
/// With `$3` = `syntax` (the producers' layout), each command is first parsed by
/// `bash -n` under its own marker (`SYNTAX_ARGV0`), whose exit status the trace shows:
/// bash runs nothing of a text it rejects, which the strict check must know. With
/// `parse`, each text is only parsed.
const DRIVER: &str = r#"# khaelor-perm oracle driver: $1 = project dir, $2 = CPU seconds per command, $3 = syntax to parse each first, parse to only parse, capture to keep each output, edit to keep it and restore the world into $4 before each command.
set -m
# The edits' layout: empty $4 (the tmpfs holding the project and HOME) and /tmp, all
# but the ancestors of $4, and copy the snapshot back. A command may have taken the
# permission to enter a directory away (`chmod 000 src`): then give it back and retry.
restore() {
  ( shopt -s dotglob nullglob
    t=()
    for f in "$1"/* /tmp/*; do
      case "$1/" in "$f"/*) ;; *) t+=("$f") ;; esac
    done
    if [ ${#t[@]} -gt 0 ]; then
      rm -rf -- "${t[@]}" || { chmod -R u+rwx -- "${t[@]}"; rm -rf -- "${t[@]}"; }
    fi
    cp -a /.oracle/world/. "$1"/ ) </dev/null >/dev/null 2>&1
}
ulimit -u 128 2>/dev/null
ulimit -f 2048 2>/dev/null
ulimit -v 1048576 2>/dev/null
i=0
while IFS= read -r -d '' cmd; do
  if [ "$3" = syntax ] || [ "$3" = parse ]; then
    ( ulimit -t "$2"; exec -a "__khaelor_syntax__:$i" /bin/bash -n -c "$cmd" bash ) </dev/null >/dev/null 2>&1
  fi
  if [ "$3" = parse ]; then i=$((i+1)); continue; fi
  out=/dev/null
  if [ "$3" = capture ] || [ "$3" = edit ]; then out="/.oracle/out/$i"; fi
  if [ "$3" = edit ]; then restore "$4"; fi
  ( ulimit -t "$2"; cd "$1" || exit 99
    exec -a "__khaelor_oracle__:$i" /bin/bash -c "$cmd" bash ) </dev/null >"$out" 2>&1 &
  pid=$!
  dog=
  if [ "$3" = capture ] || [ "$3" = edit ]; then
    # The real programs can wait forever (`tail -f`): a wall-clock limit per command.
    ( trap 'exit 0' TERM; sleep 2 & wait $!; kill -KILL -- "-$pid" ) 2>/dev/null &
    dog=$!
  fi
  wait "$pid" 2>/dev/null
  [ -n "$dog" ] && kill -TERM "$dog" 2>/dev/null
  kill -KILL -- "-$pid" 2>/dev/null
  i=$((i+1))
done </.oracle/commands
"#;

/// One probe per producer: the producer itself (named by path for `printf` and `echo`,
/// which are bash builtins otherwise) must turn its input into
/// `khaelor_oracle_probe_NAME`, which bash then runs (and the not-found handler shows).
/// The encoded forms were made with the same GNU tools (`base64`, `base32`, `xxd -p`).
const PRODUCER_PROBES: &[(&str, &str)] = &[
    ("cat", "echo khaelor_oracle_probe_cat | cat | bash"),
    (
        "base64",
        "echo a2hhZWxvcl9vcmFjbGVfcHJvYmVfYmFzZTY0Cg== | base64 -d | bash",
    ),
    (
        "base32",
        "echo NNUGCZLMN5ZF633SMFRWYZK7OBZG6YTFL5RGC43FGMZAU=== | base32 -d | bash",
    ),
    (
        "xxd",
        "echo 6b6861656c6f725f6f7261636c655f70726f62655f7878640a | xxd -r -p | bash",
    ),
    ("rev", "echo ver_eborp_elcaro_roleahk | rev | bash"),
    ("tr", "echo KHAELOR_ORACLE_PROBE_TR | tr A-Z a-z | bash"),
    (
        "sed",
        "echo khaelor_oracle_probe_XXX | sed s/XXX/sed/ | bash",
    ),
    (
        "head",
        "printf 'khaelor_oracle_probe_head\\nnever\\n' | head -n 1 | bash",
    ),
    (
        "tail",
        "printf 'never\\nkhaelor_oracle_probe_tail\\n' | tail -n 1 | bash",
    ),
    (
        "printf",
        "/usr/bin/printf 'khaelor_oracle_probe_printf\\n' | bash",
    ),
    ("echo", "/bin/echo khaelor_oracle_probe_echo | bash"),
];

static SCRATCH_COUNTER: AtomicUsize = AtomicUsize::new(0);

impl Sandbox {
    /// Finds the tools, prepares the scratch directory and runs the probe. Any failure
    /// is an error: the harness never runs commands outside a working sandbox.
    pub fn new(limits: Limits) -> Result<Sandbox, SandboxError> {
        let strace = which("strace")?;
        let setpriv = which("setpriv")?;
        let bwrap = which("bwrap")?;
        let bash = which("bash")?;
        let bash = std::fs::canonicalize(&bash).map_err(io_err(&bash))?;
        let libs = libraries(&bash)?;
        let (producers, producer_libs) = producers(&libs)?;
        let n = SCRATCH_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = std::env::temp_dir();
        let tmp = std::fs::canonicalize(&tmp).map_err(io_err(&tmp))?;
        let scratch = tmp.join(format!("khaelor-oracle-{}-{n}", std::process::id()));
        let root = scratch.join("project");
        let home = scratch.join("home");
        for d in [&root, &home] {
            std::fs::create_dir_all(d).map_err(io_err(d))?;
        }
        let driver = scratch.join("driver.sh");
        std::fs::write(&driver, DRIVER).map_err(io_err(&driver))?;
        let sb = Sandbox {
            strace,
            setpriv,
            bwrap,
            bash,
            libs,
            producers,
            producer_libs,
            scratch,
            root,
            home,
            uid_slot: (std::process::id() % 4_000_000) * 16 + u32::try_from(n % 16).unwrap_or(0),
            limits: Limits {
                batch: limits.batch.max(1),
                // One uid per worker, eight per sandbox (`uid`).
                workers: limits.workers.clamp(1, 8),
                ..limits
            },
            programs: false,
        };
        sb.probe()?;
        Ok(sb)
    }

    /// A sandbox for the program oracle (`Layout::Programs`): `build(root, home)` makes
    /// the world on the host at the project and HOME paths (the analysis reads it
    /// there); each worker gets a copy owned by its uid (git refuses a repository
    /// another user owns, and a real user owns their project), bound read-only at the
    /// same paths, so the world never changes. `probe(sandbox)` must then pass.
    pub fn new_programs(
        limits: Limits,
        build: &dyn Fn(&Path, &Path) -> Result<(), String>,
        probe: &dyn Fn(&Sandbox) -> Result<(), String>,
    ) -> Result<Sandbox, SandboxError> {
        let mut sb = Sandbox::new(limits)?;
        sb.programs = true;
        build(&sb.root, &sb.home).map_err(|message| SandboxError::Io {
            path: sb.scratch.display().to_string(),
            message,
        })?;
        let disk = sb.scratch.join("disk");
        std::fs::write(&disk, b"").map_err(io_err(&disk))?;
        for w in 0..sb.limits.workers {
            let uid = sb.uid(w);
            let dir = sb.scratch.join(format!("w{w}"));
            let world = dir.join("world");
            std::fs::create_dir_all(dir.join("out")).map_err(io_err(&dir))?;
            std::os::unix::fs::chown(dir.join("out"), Some(uid), Some(uid))
                .map_err(io_err(&dir))?;
            copy_tree(&sb.root, &world.join("project"), uid)?;
            copy_tree(&sb.home, &world.join("home"), uid)?;
        }
        probe(&sb).map_err(|message| SandboxError::Probe { message })?;
        Ok(sb)
    }

    /// The project dir (same path inside and outside the sandbox).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The HOME (same path inside and outside the sandbox).
    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The sandbox PATH entries, for recognising lookup probes.
    pub fn path_dirs() -> Vec<String> {
        SANDBOX_PATH.split(':').map(str::to_string).collect()
    }

    /// A command that cannot run must be seen as not run, and a plain one as run; in
    /// the producers' layout, each producer must compute the name bash then runs.
    fn probe(&self) -> Result<(), SandboxError> {
        let cmds = vec!["khaelor_oracle_probe arg > probe.out".to_string()];
        let (obs, cut) = self.run_batch(Layout::BashOnly, 0, &cmds, self.limits.command_wall)?;
        let seen = obs.first().is_some_and(|o| {
            o.observed
                .executed
                .iter()
                .any(|e| e.argv == ["khaelor_oracle_probe", "arg"])
                && o.observed
                    .writes
                    .iter()
                    .any(|w| w.ends_with("/project/probe.out"))
        });
        if cut || !seen {
            return Err(SandboxError::Probe {
                message: format!(
                    "a probe command was not observed (cut: {cut}, observed: {:?})",
                    obs.first()
                ),
            });
        }
        let probes: Vec<String> = PRODUCER_PROBES.iter().map(|(_, c)| c.to_string()).collect();
        let (obs, cut) = self.run_batch(Layout::Producers, 0, &probes, self.limits.command_wall)?;
        for ((name, command), o) in PRODUCER_PROBES.iter().zip(&obs) {
            let wanted = format!("khaelor_oracle_probe_{name}");
            if cut
                || !o
                    .observed
                    .executed
                    .iter()
                    .any(|e| e.argv == [wanted.as_str()])
            {
                return Err(SandboxError::Probe {
                    message: format!(
                        "producer `{name}` did not compute its output in the sandbox (`{command}`, cut: {cut}, observed: {o:?})"
                    ),
                });
            }
        }
        if obs.len() != PRODUCER_PROBES.len() {
            return Err(SandboxError::Probe {
                message: "the producer probes were not all observed".to_string(),
            });
        }
        Ok(())
    }

    fn uid(&self, worker: usize) -> u32 {
        let w = u32::try_from(worker % 8).unwrap_or(0);
        UID_BASE + self.uid_slot * 8 + w
    }

    /// Kills every process left by the worker's uid (`kill -KILL -1` run as that uid
    /// reaches exactly its processes).
    fn sweep(&self, worker: usize) {
        let uid = self.uid(worker);
        let _ = Command::new(&self.setpriv)
            .env_clear()
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(&self.bash)
            .args(["-c", "kill -KILL -1 2>/dev/null; exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// The programs' layout's system: the host's `/usr` read-only, the merged-`/usr`
    /// links, and `PROGRAM_ETC`.
    fn program_binds(&self, c: &mut Command) {
        c.args(["--ro-bind", "/usr", "/usr"]);
        for (link, target) in [
            ("/bin", "usr/bin"),
            ("/sbin", "usr/sbin"),
            ("/lib", "usr/lib"),
            ("/lib64", "usr/lib64"),
        ] {
            let host = Path::new(link);
            if host.is_symlink() {
                c.args(["--symlink", target, link]);
            } else if host.is_dir() {
                c.arg("--ro-bind").arg(host).arg(host);
            }
        }
        for etc in PROGRAM_ETC {
            if Path::new(etc).exists() {
                c.args(["--ro-bind", etc, etc]);
            }
        }
    }

    fn command(
        &self,
        layout: Layout,
        worker: usize,
        commands_file: &Path,
        trace_file: &Path,
    ) -> Command {
        let uid = self.uid(worker);
        let mut c = Command::new(&self.strace);
        c.env_clear()
            // `--seccomp-bpf`: only the traced calls stop the tracee (measured: a
            // 50-command batch in 3.0 s instead of 4.4-7.6 s).
            .args(["-f", "--seccomp-bpf", "-q", "-xx", "-s", "1000000", "-o"])
            .arg(trace_file);
        if matches!(layout, Layout::Programs | Layout::Edits) {
            // `-y`: descriptors with their paths, so a read through a symlink shows the
            // file the kernel opened, and a directory descriptor its directory.
            c.args(["-y", "-e", PROGRAMS_TRACE]);
        } else {
            c.args([
                "-e",
                "trace=execve,openat,open,creat,chdir,fchdir,newfstatat,stat,clone,clone3,fork,vfork",
            ]);
        }
        c.arg(&self.setpriv)
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(&self.bwrap)
            // Every namespace but the pid one: in a pid namespace `clone` returns pids
            // strace's lines do not carry, and `--pidns-translation` costs 4x the run
            // time. Leftover processes are swept by uid after each batch instead.
            .args([
                "--unshare-user",
                "--unshare-ipc",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--die-with-parent",
                "--new-session",
                "--cap-drop",
                "ALL",
                "--tmpfs",
                "/",
            ]);
        if matches!(layout, Layout::Programs | Layout::Edits) {
            self.program_binds(&mut c);
        } else {
            for target in ["/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/sh"] {
                c.arg("--ro-bind").arg(&self.bash).arg(target);
            }
            for lib in &self.libs {
                c.arg("--ro-bind").arg(lib).arg(lib);
            }
        }
        if layout == Layout::Producers {
            // Where a Debian PATH lookup finds them first, and where scripts name them.
            for (name, bin) in &self.producers {
                for dir in ["/usr/bin", "/bin"] {
                    c.arg("--ro-bind").arg(bin).arg(format!("{dir}/{name}"));
                }
            }
            for lib in &self.producer_libs {
                c.arg("--ro-bind").arg(lib).arg(lib);
            }
        }
        // /proc is the host's, read-only (a new proc needs a pid namespace): bash needs
        // /dev/fd for `<( )`; it shows process names, and signals reach only the
        // sandbox uid's own processes.
        c.args([
            "--ro-bind",
            "/proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
        ]);
        if layout == Layout::Programs {
            let dir = self.scratch.join(format!("w{worker}"));
            c.arg("--ro-bind")
                .arg(dir.join("world/project"))
                .arg(&self.root)
                .arg("--ro-bind")
                .arg(dir.join("world/home"))
                .arg(&self.home)
                .arg("--bind")
                .arg(dir.join("out"))
                .arg(OUTPUT_DIR);
            for disk in DISKS {
                c.arg("--ro-bind").arg(self.scratch.join("disk")).arg(disk);
            }
        } else if layout == Layout::Edits {
            // The world's parent is a tmpfs the driver fills from the snapshot before
            // each command (the project and HOME are made empty here so `--chdir`
            // finds them).
            let dir = self.scratch.join(format!("w{worker}"));
            c.arg("--tmpfs")
                .arg(&self.scratch)
                .arg("--dir")
                .arg(&self.root)
                .arg("--dir")
                .arg(&self.home)
                .arg("--ro-bind")
                .arg(dir.join("world"))
                .arg(WORLD_SNAPSHOT)
                .arg("--bind")
                .arg(dir.join("out"))
                .arg(OUTPUT_DIR);
            for disk in DISKS {
                c.arg("--ro-bind").arg(self.scratch.join("disk")).arg(disk);
            }
        } else {
            c.arg("--dir").arg(&self.root).arg("--dir").arg(&self.home);
        }
        c.arg("--ro-bind")
            .arg(self.scratch.join("driver.sh"))
            .arg("/.oracle/driver")
            .arg("--ro-bind")
            .arg(commands_file)
            .arg("/.oracle/commands")
            .arg("--chdir")
            .arg(&self.root)
            .args(["--setenv", "PATH", SANDBOX_PATH])
            .arg("--setenv")
            .arg("HOME")
            .arg(&self.home)
            .args(["--setenv", "TMPDIR", "/tmp", "--setenv", "LC_ALL", "C"])
            .args([
                "--setenv",
                "BASH_FUNC_command_not_found_handle%%",
                "() { /.oracle/nf \"$@\"; return 127; }",
            ])
            .args(["/bin/bash", "/.oracle/driver"])
            .arg(&self.root)
            .arg(self.limits.cpu_seconds.to_string())
            .arg(match layout {
                Layout::BashOnly => "",
                Layout::Producers => "syntax",
                Layout::ParseOnly => "parse",
                Layout::Programs => "capture",
                Layout::Edits => "edit",
            })
            .arg(&self.scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }

    /// Runs one batch in one sandbox; returns the facts per command and whether the
    /// wall clock cut the batch.
    fn run_batch(
        &self,
        layout: Layout,
        worker: usize,
        commands: &[String],
        wall: Duration,
    ) -> Result<(Vec<Run>, bool), SandboxError> {
        let dir = self.scratch.join(format!("w{worker}"));
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let commands_file = dir.join("commands");
        let trace_file = dir.join("trace");
        {
            let mut f = std::fs::File::create(&commands_file).map_err(io_err(&commands_file))?;
            for c in commands {
                f.write_all(c.as_bytes())
                    .and_then(|()| f.write_all(b"\0"))
                    .map_err(io_err(&commands_file))?;
            }
        }
        let mut child = self
            .command(layout, worker, &commands_file, &trace_file)
            .spawn()
            .map_err(|e| SandboxError::Spawn {
                message: e.to_string(),
            })?;
        let cut = wait_or_kill(&mut child, wall)?;
        self.sweep(worker);
        let text = std::fs::read(&trace_file).map_err(io_err(&trace_file))?;
        let text = String::from_utf8_lossy(&text);
        let full = super::trace::observe_full(&text, commands.len(), &Self::path_dirs());
        let mut runs: Vec<Run> = Vec::with_capacity(full.len());
        for (i, (observed, extra)) in full.into_iter().enumerate() {
            let output = if matches!(layout, Layout::Programs | Layout::Edits) {
                let file = dir.join("out").join(i.to_string());
                let bytes = std::fs::read(&file).unwrap_or_default();
                let _ = std::fs::remove_file(&file);
                bytes
            } else {
                Vec::new()
            };
            runs.push(Run {
                observed,
                extra,
                output,
            });
        }
        if cut {
            // The command that was running when the clock ran out, and the ones after
            // it, are not known to have finished.
            let started = super::trace::started(&text);
            let from = started.last().copied().unwrap_or(0);
            for r in runs.iter_mut().skip(from) {
                r.observed.status = RunStatus::TimedOut;
            }
        }
        Ok((runs, cut))
    }

    /// Runs every command; `progress` is called with the number done after each batch.
    /// A command with a NUL byte is `Unrunnable` (no host can pass it to `bash -c`).
    /// A batch cut by the wall clock is rerun one command at a time from the command
    /// that was running, so one runaway command costs only itself.
    pub fn run(
        &self,
        commands: &[String],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Observed>, SandboxError> {
        Ok(observed(self.run_in(
            Layout::BashOnly,
            commands,
            progress,
        )?))
    }

    /// The programs' layouts need a sandbox from `new_programs`.
    fn programs_layout(&self) -> Result<(), SandboxError> {
        if self.programs {
            return Ok(());
        }
        Err(SandboxError::Probe {
            message: "the programs' layout was not set up (`Sandbox::new_programs`)".to_string(),
        })
    }

    /// `run` in the programs' layout (a sandbox from `new_programs`): the host's
    /// programs over the hostile world; each run with its reads, sockets and output.
    pub fn run_programs(
        &self,
        commands: &[String],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Run>, SandboxError> {
        self.programs_layout()?;
        self.run_in(Layout::Programs, commands, progress)
    }

    /// `run_programs` over a writable world (`Layout::Edits`): each command starts
    /// from a fresh copy of the hostile world, and what it creates, changes or removes
    /// shows in the trace (`trace::Extra::changes`).
    pub fn run_edits(
        &self,
        commands: &[String],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Run>, SandboxError> {
        self.programs_layout()?;
        self.run_in(Layout::Edits, commands, progress)
    }

    /// `run` in the layout that also holds the evaluator's pure producers
    /// (`PRODUCERS`), for the strict check of the static evaluator: bash computes what
    /// the producers print and runs that. Everything else is as in `run`.
    pub fn run_with_producers(
        &self,
        commands: &[String],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Observed>, SandboxError> {
        Ok(observed(self.run_in(
            Layout::Producers,
            commands,
            progress,
        )?))
    }

    /// Whether bash parses each text (`bash -n -c TEXT` in the bash-only sandbox,
    /// nothing run): `Some(true)` accepted, `Some(false)` rejected, `None` not seen
    /// (a text with a NUL byte, a cut batch). The strict check asks it about the code
    /// the evaluator computed, which bash may not read at all.
    pub fn parse_with_bash(&self, texts: &[String]) -> Result<Vec<Option<bool>>, SandboxError> {
        let obs = self.run_in(Layout::ParseOnly, texts, &|_| {})?;
        Ok(obs.iter().map(|r| r.observed.parsed).collect())
    }

    fn run_in(
        &self,
        layout: Layout,
        commands: &[String],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Run>, SandboxError> {
        let runnable: Vec<usize> = (0..commands.len())
            .filter(|&i| commands.get(i).is_some_and(|c| !c.contains('\0')))
            .collect();
        let mut out: Vec<Option<Run>> = vec![None; commands.len()];
        let chunks: Vec<&[usize]> = runnable.chunks(self.limits.batch).collect();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let results = std::sync::Mutex::new(Vec::<(usize, Run)>::new());
        let first_error = std::sync::Mutex::new(None::<SandboxError>);
        std::thread::scope(|s| {
            for w in 0..self.limits.workers {
                let (chunks, next, done, results, first_error) =
                    (&chunks, &next, &done, &results, &first_error);
                s.spawn(move || {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(k) else { break };
                        match self.run_chunk(layout, w, commands, chunk) {
                            Ok(v) => {
                                if let Ok(mut r) = results.lock() {
                                    r.extend(v);
                                }
                            }
                            Err(e) => {
                                if let Ok(mut fe) = first_error.lock() {
                                    fe.get_or_insert(e);
                                }
                                break;
                            }
                        }
                        progress(done.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len());
                    }
                });
            }
        });
        if let Some(e) = first_error.into_inner().ok().flatten() {
            return Err(e);
        }
        for (i, o) in results.into_inner().unwrap_or_default() {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(o);
            }
        }
        Ok(out
            .into_iter()
            .map(|o| {
                o.unwrap_or(Run {
                    observed: Observed {
                        status: RunStatus::Unrunnable,
                        executed: Vec::new(),
                        searched: Vec::new(),
                        writes: Vec::new(),
                        syntax_error: false,
                        parsed: None,
                    },
                    extra: super::trace::Extra::default(),
                    output: Vec::new(),
                })
            })
            .collect())
    }

    fn run_chunk(
        &self,
        layout: Layout,
        worker: usize,
        commands: &[String],
        chunk: &[usize],
    ) -> Result<Vec<(usize, Run)>, SandboxError> {
        let batch: Vec<String> = chunk
            .iter()
            .filter_map(|&i| commands.get(i).cloned())
            .collect();
        let wall = self.limits.command_wall
            + self.limits.per_command_wall * u32::try_from(batch.len()).unwrap_or(u32::MAX);
        let (obs, cut) = self.run_batch(layout, worker, &batch, wall)?;
        let mut out: Vec<(usize, Run)> = chunk.iter().copied().zip(obs).collect();
        if cut {
            for (i, o) in out.iter_mut() {
                if o.observed.status != RunStatus::TimedOut {
                    continue;
                }
                let one = vec![commands.get(*i).cloned().unwrap_or_default()];
                let (mut single, _) =
                    self.run_batch(layout, worker, &one, self.limits.command_wall)?;
                if let Some(s) = single.pop() {
                    *o = s;
                }
            }
        }
        Ok(out)
    }
}

/// The facts of each run.
fn observed(runs: Vec<Run>) -> Vec<Observed> {
    runs.into_iter().map(|r| r.observed).collect()
}

/// Copies a tree (files, directories, symlinks as links), mode bits kept, every entry
/// owned by `uid`.
fn copy_tree(from: &Path, to: &Path, uid: u32) -> Result<(), SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    // INVARIANT: symlinks are copied as links and never followed, so the walk ends.
    while let Some((src, dst)) = stack.pop() {
        let meta = std::fs::symlink_metadata(&src).map_err(io_err(&src))?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&src).map_err(io_err(&src))?;
            std::os::unix::fs::symlink(&target, &dst).map_err(io_err(&dst))?;
        } else if meta.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io_err(&dst))?;
            for entry in std::fs::read_dir(&src).map_err(io_err(&src))? {
                let entry = entry.map_err(io_err(&src))?;
                stack.push((entry.path(), dst.join(entry.file_name())));
            }
        } else {
            std::fs::copy(&src, &dst).map_err(io_err(&dst))?;
        }
        if !meta.file_type().is_symlink() {
            std::fs::set_permissions(
                &dst,
                std::fs::Permissions::from_mode(meta.permissions().mode()),
            )
            .map_err(io_err(&dst))?;
        }
        std::os::unix::fs::lchown(&dst, Some(uid), Some(uid)).map_err(io_err(&dst))?;
    }
    Ok(())
}

/// Waits for the child until `wall` has passed, then kills it (strace; bwrap dies with
/// its parent, and every process of the sandbox with bwrap's pid namespace). Returns
/// whether it was cut.
fn wait_or_kill(child: &mut Child, wall: Duration) -> Result<bool, SandboxError> {
    let start = Instant::now();
    let spawn_err = |e: std::io::Error| SandboxError::Spawn {
        message: e.to_string(),
    };
    loop {
        if child.try_wait().map_err(spawn_err)?.is_some() {
            return Ok(false);
        }
        if start.elapsed() >= wall {
            let _ = child.kill();
            child.wait().map_err(spawn_err)?;
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}
