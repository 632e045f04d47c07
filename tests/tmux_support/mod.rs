//! Test support for programs driven in a terminal like a person drives them: a tmux
//! server of the test's own (its own socket), `send-keys` to type, `capture-pane` to
//! read the screen. Needs tmux (`tests/setup/tui.sh`); a missing one fails the test,
//! naming the script.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the screen may take to show what a step waits for.
pub const WAIT: Duration = Duration::from_secs(60);

/// A tmux server of this test alone (its own socket), killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Runs `command` in a 220×60 pane whose working directory is `dir`.
    pub fn start(dir: &Path, command: &str) -> Tmux {
        Self::start_sized(dir, command, 220, 60)
    }

    /// As `start`, in a pane of `width` × `height`.
    pub fn start_sized(dir: &Path, command: &str, width: u16, height: u16) -> Tmux {
        static SERVERS: AtomicUsize = AtomicUsize::new(0);
        let tmux = which("tmux").unwrap_or_else(|| {
            panic!("tmux is missing: run `bash tests/setup/tui.sh` (it installs tmux)")
        });
        let socket = format!(
            "khaelor-tui-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        );
        let st = Command::new(tmux)
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args([
                "-s",
                "t",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .arg("-c")
            .arg(dir)
            .arg(command)
            .status()
            .unwrap();
        assert!(st.success(), "tmux new-session failed");
        Tmux { socket }
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    /// The visible screen and the scrollback.
    pub fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-J", "-S", "-2000", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The visible screen only, each row as drawn.
    pub fn visible(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A tmux format of the pane (`#{pane_title}`, `#{pane_dead}` …).
    pub fn display(&self, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "t", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Sends keys (tmux key names, or literal text with `literal`), after a moment for
    /// the screen to settle (a dialog redrawn as the hook's message arrives).
    pub fn keys(&self, keys: &[&str], literal: bool) {
        std::thread::sleep(Duration::from_millis(1500));
        self.keys_now(keys, literal);
    }

    /// Sends keys at once (the caller has waited for the screen it expects).
    pub fn keys_now(&self, keys: &[&str], literal: bool) {
        let mut c = self.cmd();
        c.args(["send-keys", "-t", "t"]);
        if literal {
            c.arg("-l");
        }
        c.args(keys);
        assert!(c.status().unwrap().success());
    }

    /// Waits until `pred` holds on the screen; panics with the screen after `WAIT`.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_every(what, Duration::from_millis(250), pred)
    }

    /// As `wait_for`, looking every `every`.
    pub fn wait_for_every(
        &self,
        what: &str,
        every: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(every);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}
