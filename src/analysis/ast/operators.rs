//! Where the shell operators of a command are, for the panel to mark them (seed §6.1:
//! "bash shows the command with operator tokens visually marked"): list and pipeline
//! operators, separators, redirections and the openers of substitutions, as byte
//! ranges of the command text.
//!
//! Cosmetic only: nothing decides on these ranges. A command the parser cannot read
//! (too large, out of time) gets no marks; a tree with errors gets the marks of what
//! the grammar did recognise. The decision's own notes say when a command was not
//! fully read.

use std::ops::Range;

use super::kinds::{self, KindName};
use super::{MAX_BYTES, MAX_NODES, parse};

/// Operator tokens the grammar gives as anonymous nodes.
const OPERATORS: &[&str] = &[
    "&&", "||", "|", "|&", ";", ";;", ";&", ";;&", "&", ">", ">>", "<", "&>", "&>>", ">&", "<&",
    ">|", "<>", "<<", "<<-", "<<<", ">&-", "<&-", "$(", "`", "<(", ">(",
];

/// Parents under which those tokens are operators of the shell (elsewhere, as in
/// `[[ a < b ]]` or `$(( a > b ))`, they compare).
const PARENTS: &[&str] = &[
    kinds::PROGRAM,
    kinds::LIST,
    kinds::PIPELINE,
    kinds::REDIRECTED_STATEMENT,
    kinds::FILE_REDIRECT,
    kinds::HEREDOC_REDIRECT,
    kinds::HERESTRING_REDIRECT,
    kinds::SUBSHELL,
    kinds::COMPOUND_STATEMENT,
    kinds::DO_GROUP,
    kinds::IF_STATEMENT,
    kinds::ELIF_CLAUSE,
    kinds::ELSE_CLAUSE,
    kinds::WHILE_STATEMENT,
    kinds::FOR_STATEMENT,
    kinds::CASE_ITEM,
    kinds::COMMAND_SUBSTITUTION,
    kinds::PROCESS_SUBSTITUTION,
    kinds::FUNCTION_DEFINITION,
];

/// The byte ranges of `command`'s operators, in order, not overlapping. A redirection's
/// file descriptor is part of its operator (`2>`).
pub fn operator_spans(command: &str) -> Vec<Range<usize>> {
    if command.len() > MAX_BYTES {
        return Vec::new();
    }
    let Ok(tree) = parse(command) else {
        return Vec::new();
    };
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut cursor = tree.walk();
    let mut visited = 0usize;
    // Pre-order walk with the cursor (no recursion), bounded like the analysis walk.
    'walk: loop {
        visited += 1;
        if visited > MAX_NODES {
            break;
        }
        let node = cursor.node();
        let parent = node.parent().map(|p| p.kind_name()).unwrap_or_default();
        let operator = !node.is_named() && OPERATORS.contains(&node.kind_name());
        let descriptor = node.kind_name() == kinds::FILE_DESCRIPTOR
            && (parent == kinds::FILE_REDIRECT || parent == kinds::HEREDOC_REDIRECT);
        if (operator || descriptor) && PARENTS.contains(&parent) {
            let r = node.byte_range();
            match spans.last_mut() {
                // `2` then `>`: one mark.
                Some(last) if last.end == r.start => last.end = r.end,
                _ => spans.push(r),
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    spans.retain(|r| command.get(r.clone()).is_some());
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(command: &str) -> Vec<&str> {
        operator_spans(command)
            .into_iter()
            .filter_map(|r| command.get(r))
            .collect()
    }

    #[test]
    fn lists_pipes_separators_and_redirections_are_marked() {
        assert_eq!(
            marked("npm test && curl -s x | sh > out 2>&1; ls &"),
            vec!["&&", "|", ">", "2>&", ";", "&"]
        );
        assert_eq!(marked("cat <<EOF\nx\nEOF"), vec!["<<"]);
        assert_eq!(marked("echo $(id) `id` <(id)"), vec!["$(", "`", "`", "<("]);
    }

    #[test]
    fn quoted_and_compared_operators_are_not() {
        assert!(marked("echo 'a && b' \"c | d\"").is_empty());
        assert!(marked("[[ a < b ]]").is_empty());
        assert!(marked("echo $(( 1 > 2 ))").is_empty());
        assert!(marked("npm install").is_empty());
    }

    #[test]
    fn non_ascii_keeps_byte_offsets() {
        let c = "echo é && echo ü";
        assert_eq!(marked(c), vec!["&&"]);
    }
}
