//! Interop with other permission formats: importing the rules of Claude
//! Code, OpenCode, Gemini CLI, Codex, Kurahi (seed 003) and Kram (seed 004) into our
//! config, and exporting our effective rules as a host's native config.
//!
//! One file per format fills the shared model (`model`); `render` writes an import as
//! a commented config; `export` goes the other way. Nothing here decides a call: an
//! import's result is checked by loading it with `config` and deciding with `decide`.

pub mod claude;
pub mod codex;
pub mod export;
pub mod gemini;
mod json;
pub mod kram;
pub mod kurahi;
pub mod model;
pub mod opencode;
pub mod render;

use std::path::Path;
use std::str::FromStr;

pub use model::{Import, ImportContext, ImportError, ImportedRule, Skipped, SourcePos};

/// A format `rules import --from` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Claude,
    Opencode,
    Gemini,
    Codex,
    Kurahi,
    Kram,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Opencode => "opencode",
            Format::Gemini => "gemini",
            Format::Codex => "codex",
            Format::Kurahi => "kurahi",
            Format::Kram => "kram",
        }
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "claude" => Ok(Format::Claude),
            "opencode" => Ok(Format::Opencode),
            "gemini" => Ok(Format::Gemini),
            "codex" => Ok(Format::Codex),
            "kurahi" => Ok(Format::Kurahi),
            "kram" => Ok(Format::Kram),
            other => Err(format!(
                "unknown format `{other}`, expected `claude`, `opencode`, `gemini`, `codex`, `kurahi` or `kram`"
            )),
        }
    }
}

/// Imports `files` (in the order given, which is the source's layering order).
/// `agent` selects a Kurahi agent's own list.
pub fn import(
    format: Format,
    files: &[&Path],
    ctx: &ImportContext,
    agent: Option<&str>,
) -> Result<Import, ImportError> {
    let texts = files
        .iter()
        .map(|p| model::read_source(p))
        .collect::<Result<Vec<String>, ImportError>>()?;
    let sources: Vec<(&Path, &str)> = files
        .iter()
        .copied()
        .zip(texts.iter().map(String::as_str))
        .collect();
    import_texts(format, &sources, ctx, agent)
}

/// As `import`, for sources already read (each path with its text, read with
/// `model::read_source`): a caller that also hashes the bytes (trust) translates
/// exactly what it hashed, and reads each file once.
pub fn import_texts(
    format: Format,
    files: &[(&Path, &str)],
    ctx: &ImportContext,
    agent: Option<&str>,
) -> Result<Import, ImportError> {
    match format {
        Format::Claude => claude::import(files, ctx),
        Format::Opencode => opencode::import(files, ctx),
        Format::Gemini => gemini::import(files, ctx),
        Format::Codex => codex::import(files, ctx),
        Format::Kurahi => kurahi::import(files, ctx, agent),
        Format::Kram => kram::import(files, ctx),
    }
}
