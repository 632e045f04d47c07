//! placeholder: owned by a helper, replaced before landing.
use crate::vocab::{Analysis, AnalysisContext};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lexed {
    pub words: Vec<Vec<String>>,
    pub operators: Vec<String>,
    pub has_substitution: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lex error")]
pub struct LexError;

pub fn tokenize(_command: &str) -> Result<Lexed, LexError> {
    todo!()
}

pub fn analyze(_command: &str, _ctx: &AnalysisContext) -> Analysis {
    todo!()
}
