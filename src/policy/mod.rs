//! The policy layer: rules and their match dialects (`rules`), the layered JSONC
//! configuration (`config`), presets (`presets`), the project-config trust store
//! (`trust`), the never-quiet write table (`protected`), the bounded walk that judges
//! recursive reads (`reach`), deciding a whole call (`decide`) and telling how it was
//! decided (`explain`).
//!
//! Knows nothing of bash: it receives capability requests and returns decisions that
//! carry their reasons. Wording them is `presentation`'s job, recording them `session`'s.

pub mod bundle;
pub mod config;
pub mod decide;
pub mod explain;
pub mod presets;
pub mod protected;
pub mod reach;
pub mod rules;
pub mod trust;
