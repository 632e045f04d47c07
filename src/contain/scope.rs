//! A contained command given the network (`project-network`) shares the host's network
//! namespace, and with it the host's abstract unix sockets, which no file system mount
//! hides: the X server's `@/tmp/.X11-unix/X0` (keystrokes into the person's session),
//! containerd's shims, a session bus on older systems. Landlock's abstract-socket
//! scope (Linux 6.12, Landlock ABI 6) keeps a process and every process it starts from
//! connecting to an abstract socket made outside them. A process can only restrict
//! itself, so `exec` takes the scope before it starts the sandbox; the sandbox's own
//! processes still reach the abstract sockets they make.

use landlock::{CompatLevel, Compatible, Ruleset, RulesetAttr, Scope};

/// Whether this kernel has the scope, found by making a ruleset with it (which
/// restricts nothing until a process takes it). Probed once per process.
pub fn available() -> Result<(), String> {
    static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .scope(Scope::AbstractUnixSocket)
                .and_then(|r| r.create())
                .map(|_| ())
                .map_err(|e| unsupported(&e))
        })
        .clone()
}

/// Restricts this thread, and every process it starts from now on, from connecting to
/// abstract unix sockets made outside them. An error when this kernel cannot: then a
/// command with the network must not run.
pub fn keep_from_host_abstract_sockets() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::AbstractUnixSocket)
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self())
        .map(|_| ())
        .map_err(|e| unsupported(&e))
}

fn unsupported(e: &dyn std::fmt::Display) -> String {
    format!(
        "this kernel cannot keep a command with the network from the host's abstract unix sockets (Landlock ABI 6, Linux 6.12): {e}"
    )
}
