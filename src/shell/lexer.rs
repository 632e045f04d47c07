//! The V1 shell-word lexer (seed §3.1): tokenization into simple commands, operators
//! and here-documents. The engine built on it (classification, requests, the floor,
//! always patterns) is `analysis::lexer`; the floor reads these tokens too, so the
//! lexer itself knows neither.
//!
//! Owns the public tokenizer API (`tokenize`; the byte-level work lives in the child
//! module `tokenizer`). It keeps V1 semantics on purpose: a redirection is an operator (so `cat a > out` is compound),
//! `cd` is not tracked and wrappers are not unwrapped (the command word is word 0). It
//! must not know rules, must not recurse on its input (nesting uses an explicit stack
//! with a depth bound) and must never panic. Dependency-free: std and crate modules.

pub(crate) mod lower;
mod tokenizer;

/// The seed's lexer output (§3.1): one words list per simple command, the operators met,
/// and whether any substitution marker was seen outside single quotes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lexed {
    pub words: Vec<Vec<String>>,
    pub operators: Vec<String>,
    pub has_substitution: bool,
}

/// Why a command could not be tokenized. Byte offsets are 0-based into the command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LexError {
    #[error("unbalanced single quote at byte {at}")]
    UnbalancedSingleQuote { at: usize },
    #[error("unbalanced double quote at byte {at}")]
    UnbalancedDoubleQuote { at: usize },
    #[error("unterminated `{opener}` at byte {at}")]
    Unterminated { opener: &'static str, at: usize },
    #[error("trailing backslash at byte {at}")]
    TrailingBackslash { at: usize },
    #[error("nul byte at byte {at}")]
    Nul { at: usize },
    #[error("substitutions nested deeper than {max} levels at byte {at}")]
    TooDeep { at: usize, max: usize },
    #[error("nested substitutions too large to read at byte {at}")]
    TooLarge { at: usize },
    #[error(transparent)]
    Source(#[from] crate::shell::source::SourceError),
}

/// Tokenizes one command (seed §3.1). Substitution bodies (`$(…)`, backticks, `<(…)`,
/// `>(…)`) are commands bash will run, so their words form their own lists; the word
/// that holds them keeps the source text of the substitution.
pub fn tokenize(command: &str) -> Result<Lexed, LexError> {
    lex(command).map(|t| Lexed {
        words: t.commands.into_iter().map(|c| c.words).collect(),
        operators: t.operators,
        has_substitution: t.has_substitution,
    })
}

pub(crate) use tokenizer::{Tokens, lex};

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Vec<String>> {
        tokenize(s).map(|l| l.words).unwrap_or_default()
    }

    #[test]
    fn substitution_body_is_its_own_command_in_source_order() {
        assert_eq!(
            words("echo $(date) x"),
            vec![vec!["echo", "$(date)", "x"], vec!["date"]]
        );
        assert_eq!(words("a `b c`"), vec![vec!["a", "`b c`"], vec!["b", "c"]]);
    }

    #[test]
    fn ansi_c_quotes_decode() {
        assert_eq!(words(r"rm -rf $'\x2f'"), vec![vec!["rm", "-rf", "/"]]);
        assert_eq!(
            words(r"echo $'a\0b' $'\u00e9'"),
            vec![vec!["echo", "a", "é"]]
        );
    }

    #[test]
    fn redirect_targets_are_marked() {
        let t = lex("echo x > /dev/sda; ls 2>&1 | wc").unwrap_or_default();
        let marked: Vec<bool> = t.commands.iter().map(|c| c.after_write_redirect).collect();
        assert_eq!(marked, vec![false, true, false, false]);
        assert_eq!(t.operators, vec![">", ";", "2>&1", "|"]);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "$(".repeat(10_000);
        assert!(matches!(tokenize(&deep), Err(LexError::TooDeep { .. })));
    }
}
