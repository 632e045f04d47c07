//! The static partial evaluator's pure parts: what bash would compute from
//! values known in the command text itself, without running anything.
//!
//! Owns the value machinery the AST engine's evaluator (`analysis::ast::evaluate`)
//! drives: words as quoted/unquoted segments with brace expansion, field splitting and
//! the rendering back to bash text (`fields`), parameter operators on known values
//! (`params`), `$(( ))` on constants (`arith`), the pure producers whose output can be
//! computed (`producers`: `echo`, `printf`, `base64 -d`, …), the shell-outs of
//! interpreter one-liners (`interp`) and the budgets that bound all of it. Nothing here
//! reads a file, runs a program or knows what a program does to the system: an unknown
//! value is `None`, and the caller keeps such a word opaque.

pub mod arith;
pub mod fields;
pub mod interp;
pub mod params;
pub mod producers;
pub mod xargs;

/// Bounds of one evaluation: a budget hit makes the value unknown (opaque, asks).
#[derive(Debug, Clone)]
pub struct Budget {
    /// Syntax nodes and producer steps left.
    pub steps: usize,
    /// Bytes any single value or produced text may hold.
    pub max_bytes: usize,
    /// Words one brace expansion may produce (a brace bomb is opaque).
    pub max_words: usize,
    /// How deep substitutions, function calls and fed code nest.
    pub max_depth: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: 20_000,
            max_bytes: 64 * 1024,
            max_words: crate::shell::braces::MAX_WORDS,
            max_depth: 8,
        }
    }
}

impl Budget {
    /// Takes one step; false once the budget is spent.
    pub fn step(&mut self) -> bool {
        match self.steps.checked_sub(1) {
            Some(left) => {
                self.steps = left;
                true
            }
            None => false,
        }
    }
}
