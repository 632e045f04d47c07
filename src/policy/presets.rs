//! Presets (the idea of seed 004): named bundles of rules layered right
//! after the defaults, so every config layer can still narrow them.
//!
//! - `strict`: the defaults alone (seed §4.5 plus the credential-store reads).
//! - `recommended` (the default): `strict` plus `process.execute` allowed for commands
//!   the analysis verified read-only (`metadata.verified = readOnly`) and for proven
//!   in-project edits (`projectWrite`: `mkdir -p`, `touch`, `cp`/`mv`/`ln -s` within
//!   the project, `rm` of files (not `-r`), `chmod` with a plain mode, `sed -i` with an
//!   editing script, a verified reader's output
//!   redirected into the project), and contained (run without a prompt in the sandbox,
//!   `crate::contain`) for project-local builds and tests and for the project's own
//!   scripts. Their reads and writes are requests of their own, judged by the read
//!   and write rules, the protected paths and the secret rules, so an edit is decided
//!   as the write tool's would be and secrets still ask.
//! - `autonomous`: `recommended` plus project-local builds and tests allowed, and every other command that would ask only
//!   because no rule vouches for it contained, unless the analysis sees it write
//!   (the sandbox leaves the project writable, so it would not hold a deletion there);
//!   `decide` applies that one, since it depends on no rule having matched.
//!
//! Network, `git.modify`, writes outside the project, secrets and the hardline floor
//! are the defaults' under every preset: presets only add conditional allows and
//! contains for `process.execute`, and a call with any other request that asks still
//! asks.
//!
//! Which preset applies (decided in `config::PolicyBuilder::build`): a managed config's
//! `preset` is the most any other choice may reach; the explicit choice is `--preset`,
//! else a trusted project file's, else the user file's, else `recommended`; an
//! untrusted project file may only narrow.

use std::fmt;
use std::str::FromStr;

use crate::model::vocab::Verdict;
use crate::policy::rules::{Action, PermissionRule, RuleSource};

/// A preset, ordered from the narrowest: `Strict < Recommended < Autonomous`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    Strict,
    #[default]
    Recommended,
    Autonomous,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Strict, Preset::Recommended, Preset::Autonomous];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Strict => "strict",
            Preset::Recommended => "recommended",
            Preset::Autonomous => "autonomous",
        }
    }

    /// The rules the preset contributes after the defaults (source `preset`).
    pub fn rules(self) -> Vec<PermissionRule> {
        let when = |v: Verdict, action: Action| {
            let mut r = PermissionRule::new("process.execute", "*", action, RuleSource::Preset);
            r.when = Some(v);
            r
        };
        let rule = |v: Verdict| when(v, Action::Allow);
        let contain = |v: Verdict| when(v, Action::Contain);
        match self {
            Preset::Strict => Vec::new(),
            Preset::Recommended => vec![
                rule(Verdict::ReadOnly),
                rule(Verdict::ProjectWrite),
                contain(Verdict::ProjectBuild),
                contain(Verdict::ProjectScript),
                contain(Verdict::InlineCode),
            ],
            Preset::Autonomous => vec![
                rule(Verdict::ReadOnly),
                rule(Verdict::ProjectBuild),
                rule(Verdict::ProjectWrite),
                contain(Verdict::ProjectScript),
                contain(Verdict::InlineCode),
            ],
        }
    }

    /// The rule `autonomous` contains a command under when nothing but the defaults'
    /// catch-all ask matched it (applied by `decide`, named by the answer).
    pub fn contain_everything_rule() -> PermissionRule {
        PermissionRule::new("process.execute", "*", Action::Contain, RuleSource::Preset)
            .named("autonomous: contain what would otherwise ask")
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A preset name that is not `strict`, `recommended` or `autonomous`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown preset `{0}`, expected `strict`, `recommended` or `autonomous`")]
pub struct UnknownPreset(pub String);

impl FromStr for Preset {
    type Err = UnknownPreset;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPreset(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order() {
        for p in Preset::ALL {
            assert_eq!(p.as_str().parse::<Preset>(), Ok(p));
        }
        assert!(Preset::Strict < Preset::Recommended && Preset::Recommended < Preset::Autonomous);
        assert!("lenient".parse::<Preset>().is_err());
        assert!(Preset::Strict.rules().is_empty());
        assert_eq!(Preset::Autonomous.rules().len(), 5);
    }
}
