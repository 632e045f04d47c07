//! What a contained call carries (the fourth answer, `contain`): the sandbox profile a
//! person or a host can read (what the command may write, what it cannot read, whether
//! it has a network), the command rewritten to run inside it, and why a call the
//! policy would contain asks instead.
//!
//! Data only: `crate::contain` builds the profile and runs the sandbox; `policy::decide`
//! decides when a call is contained.

use serde::{Deserialize, Serialize};

/// The sandbox a contained command runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxProfile {
    /// `project` (no network) or `project-network` (the host's network, granted by the
    /// rules for every address the command names).
    pub name: ProfileName,
    /// The project root: readable and writable, except `read_only`.
    pub root: String,
    /// Every path the command may write: the project root, and a private `/tmp` that
    /// disappears with it.
    pub writable: Vec<String>,
    /// Protected paths inside the project, bound read-only (git's state and hooks,
    /// hook managers, CI configs, KHAELOR's own configuration).
    pub read_only: Vec<String>,
    /// Secrets made unreadable: an empty directory over each credential directory,
    /// an empty file over each secret file.
    pub masked: Vec<String>,
    /// Symlinks in the project that lead to a masked path (their targets are in
    /// `masked`): named so a failed read through one is explained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masked_links: Vec<String>,
    /// Whether the command has the host's network; otherwise loopback only, in a
    /// network of its own.
    pub network: bool,
}

/// The profiles `khaelor-perm exec --contain --profile NAME` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileName {
    /// The project writable, protected paths read-only, secrets masked, no network.
    Project,
    /// `project` with the host's network.
    ProjectNetwork,
    /// `project` with the project read-only too: only the private `/tmp` is writable.
    /// For code written on the command line (`python3 -c …`), which nothing has read:
    /// it may compute and print, not change the project.
    ReadOnly,
}

impl ProfileName {
    pub const ALL: [ProfileName; 3] = [
        ProfileName::Project,
        ProfileName::ProjectNetwork,
        ProfileName::ReadOnly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProfileName::Project => "project",
            ProfileName::ProjectNetwork => "project-network",
            ProfileName::ReadOnly => "read-only",
        }
    }

    pub fn parse(s: &str) -> Option<ProfileName> {
        ProfileName::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn network(self) -> bool {
        self == ProfileName::ProjectNetwork
    }

    /// Whether the project is writable inside.
    pub fn project_writable(self) -> bool {
        self != ProfileName::ReadOnly
    }
}

/// A contained call: the profile, and the command a host runs instead of the original.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Containment {
    pub profile: SandboxProfile,
    /// The rewritten command as argv: `khaelor-perm exec --contain --profile P --root R
    /// -- bash -c ORIGINAL`.
    pub argv: Vec<String>,
    /// The same, quoted for a shell, for hosts that take a command line.
    pub command: String,
}

/// Why a call the policy would contain asks instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "camelCase")]
pub enum NotContained {
    /// This machine cannot build the sandbox (no bubblewrap, or the kernel refuses
    /// unprivileged user namespaces); `detail` says which.
    Unavailable { detail: String },
    /// Whoever asked cannot run a rewritten command (a host whose hook cannot change
    /// the tool input, a caller that did not ask for containment).
    NoRunner,
    /// Only a shell command can be contained; this request is of another kind.
    NotACommand,
    /// The command runs outside the project (its working directory), whose files the
    /// sandbox would not make writable.
    OutsideProject,
}
