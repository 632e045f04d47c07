//! placeholder
use crate::vocab::{Analysis, AnalysisContext};
pub fn analyze(command: &str, ctx: &AnalysisContext) -> Analysis {
    crate::lexer::analyze(command, ctx)
}
