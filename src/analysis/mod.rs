//! The one entry point to bash analysis: pick an engine, get an `Analysis`.
//!
//! Owns the engine choice and the side-by-side form (`both`) that `analyze --engine
//! both`, `/v1/analyze` and `compare` print. The AST engine lives in `ast`; the V1
//! lexer engine is `analysis::lexer`, over the tokens of `lexer`.

pub mod arity;
pub mod ast;
pub mod containers;
pub mod lexer;

use serde::Serialize;

use crate::model::vocab::{Analysis, AnalysisContext};

/// Which engine to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// tree-sitter-bash, with the lexer as fail-closed fallback (the default).
    #[default]
    Ast,
    /// The V1 shell-word lexer alone.
    Lexer,
    /// The AST engine's analysis, with the lexer's beside it.
    Both,
}

/// Analyzes one bash command with the AST engine (falling back to the lexer).
pub fn analyze(command: &str, ctx: &AnalysisContext) -> Analysis {
    let _fs = crate::model::paths::CallScope::new(ctx.root());
    ast::analyze(command, ctx)
}

/// Analyzes one bash command with the V1 lexer only.
pub fn analyze_lexer(command: &str, ctx: &AnalysisContext) -> Analysis {
    let _fs = crate::model::paths::CallScope::new(ctx.root());
    lexer::analyze(command, ctx)
}

/// The AST analysis with the lexer's beside it, and whether they agree on class,
/// capabilities and hardline.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BothAnalysis {
    #[serde(flatten)]
    pub ast: Analysis,
    pub lexer: Analysis,
    pub agree: bool,
}

pub fn analyze_both(command: &str, ctx: &AnalysisContext) -> BothAnalysis {
    let ast = analyze(command, ctx);
    let lexer = analyze_lexer(command, ctx);
    let agree = agree(&ast, &lexer);
    BothAnalysis { ast, lexer, agree }
}

/// Two analyses agree when they give the same class, the same set of (capability,
/// subject) requests and the same hardline verdict.
pub fn agree(a: &Analysis, b: &Analysis) -> bool {
    let key = |x: &Analysis| {
        let mut v: Vec<(String, String)> = x
            .requests
            .iter()
            .map(|r| (r.capability.as_str().to_string(), r.subject.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    a.class == b.class && key(a) == key(b) && a.hardline.is_some() == b.hardline.is_some()
}
