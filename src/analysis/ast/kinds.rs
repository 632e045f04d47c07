//! tree-sitter-bash node kinds and field names the walker decides on, in one place.
//!
//! `tests/grammars.rs` checks that each constant below exists in the
//! grammar, so a grammar upgrade that renames one fails loudly instead of silently
//! turning a construct into "unknown".

pub const PROGRAM: &str = "program";
pub const COMMENT: &str = "comment";
pub const COMMAND: &str = "command";
pub const COMMAND_NAME: &str = "command_name";
pub const DECLARATION_COMMAND: &str = "declaration_command";
pub const UNSET_COMMAND: &str = "unset_command";
pub const TEST_COMMAND: &str = "test_command";
pub const VARIABLE_ASSIGNMENT: &str = "variable_assignment";
pub const VARIABLE_ASSIGNMENTS: &str = "variable_assignments";
pub const REDIRECTED_STATEMENT: &str = "redirected_statement";
pub const FILE_REDIRECT: &str = "file_redirect";
pub const HEREDOC_REDIRECT: &str = "heredoc_redirect";
pub const HERESTRING_REDIRECT: &str = "herestring_redirect";
pub const HEREDOC_BODY: &str = "heredoc_body";
pub const PIPELINE: &str = "pipeline";
pub const LIST: &str = "list";
pub const SUBSHELL: &str = "subshell";
pub const COMPOUND_STATEMENT: &str = "compound_statement";
pub const IF_STATEMENT: &str = "if_statement";
pub const ELIF_CLAUSE: &str = "elif_clause";
pub const ELSE_CLAUSE: &str = "else_clause";
pub const WHILE_STATEMENT: &str = "while_statement";
pub const FOR_STATEMENT: &str = "for_statement";
pub const C_STYLE_FOR_STATEMENT: &str = "c_style_for_statement";
pub const CASE_STATEMENT: &str = "case_statement";
pub const CASE_ITEM: &str = "case_item";
pub const DO_GROUP: &str = "do_group";
pub const FUNCTION_DEFINITION: &str = "function_definition";
pub const NEGATED_COMMAND: &str = "negated_command";
pub const WORD: &str = "word";
pub const NUMBER: &str = "number";
pub const STRING: &str = "string";
pub const STRING_CONTENT: &str = "string_content";
pub const RAW_STRING: &str = "raw_string";
pub const ANSI_C_STRING: &str = "ansi_c_string";
pub const TRANSLATED_STRING: &str = "translated_string";
pub const CONCATENATION: &str = "concatenation";
pub const SIMPLE_EXPANSION: &str = "simple_expansion";
pub const EXPANSION: &str = "expansion";
pub const COMMAND_SUBSTITUTION: &str = "command_substitution";
pub const PROCESS_SUBSTITUTION: &str = "process_substitution";
pub const ARITHMETIC_EXPANSION: &str = "arithmetic_expansion";
pub const BRACE_EXPRESSION: &str = "brace_expression";
pub const FILE_DESCRIPTOR: &str = "file_descriptor";
pub const HEREDOC_START: &str = "heredoc_start";

// Leaves and expression shapes: read for their text or searched for substitutions.
pub const VARIABLE_NAME: &str = "variable_name";
pub const TEST_OPERATOR: &str = "test_operator";
pub const REGEX: &str = "regex";
pub const HEREDOC_END: &str = "heredoc_end";
pub const EXTGLOB_PATTERN: &str = "extglob_pattern";
pub const UNARY_EXPRESSION: &str = "unary_expression";
pub const TERNARY_EXPRESSION: &str = "ternary_expression";
pub const SUBSCRIPT: &str = "subscript";
pub const SPECIAL_VARIABLE_NAME: &str = "special_variable_name";
pub const POSTFIX_EXPRESSION: &str = "postfix_expression";
pub const PARENTHESIZED_EXPRESSION: &str = "parenthesized_expression";
pub const HEREDOC_CONTENT: &str = "heredoc_content";
pub const BINARY_EXPRESSION: &str = "binary_expression";
pub const ARRAY: &str = "array";

pub const FIELD_NAME: &str = "name";
pub const FIELD_ARGUMENT: &str = "argument";
pub const FIELD_REDIRECT: &str = "redirect";
pub const FIELD_BODY: &str = "body";
pub const FIELD_DESTINATION: &str = "destination";
pub const FIELD_DESCRIPTOR: &str = "descriptor";
pub const FIELD_VALUE: &str = "value";

/// Every kind above, for the grammar test.
pub const ALL_KINDS: &[&str] = &[
    PROGRAM,
    COMMENT,
    COMMAND,
    COMMAND_NAME,
    DECLARATION_COMMAND,
    UNSET_COMMAND,
    TEST_COMMAND,
    VARIABLE_ASSIGNMENT,
    VARIABLE_ASSIGNMENTS,
    REDIRECTED_STATEMENT,
    FILE_REDIRECT,
    HEREDOC_REDIRECT,
    HERESTRING_REDIRECT,
    HEREDOC_BODY,
    PIPELINE,
    LIST,
    SUBSHELL,
    COMPOUND_STATEMENT,
    IF_STATEMENT,
    ELIF_CLAUSE,
    ELSE_CLAUSE,
    WHILE_STATEMENT,
    FOR_STATEMENT,
    C_STYLE_FOR_STATEMENT,
    CASE_STATEMENT,
    CASE_ITEM,
    DO_GROUP,
    FUNCTION_DEFINITION,
    NEGATED_COMMAND,
    WORD,
    NUMBER,
    STRING,
    STRING_CONTENT,
    RAW_STRING,
    ANSI_C_STRING,
    TRANSLATED_STRING,
    CONCATENATION,
    SIMPLE_EXPANSION,
    EXPANSION,
    COMMAND_SUBSTITUTION,
    PROCESS_SUBSTITUTION,
    ARITHMETIC_EXPANSION,
    BRACE_EXPRESSION,
    FILE_DESCRIPTOR,
    HEREDOC_START,
    VARIABLE_NAME,
    TEST_OPERATOR,
    REGEX,
    HEREDOC_END,
    EXTGLOB_PATTERN,
    UNARY_EXPRESSION,
    TERNARY_EXPRESSION,
    SUBSCRIPT,
    SPECIAL_VARIABLE_NAME,
    POSTFIX_EXPRESSION,
    PARENTHESIZED_EXPRESSION,
    HEREDOC_CONTENT,
    BINARY_EXPRESSION,
    ARRAY,
];

/// Every field name above, for the grammar test.
pub const ALL_FIELDS: &[&str] = &[
    FIELD_NAME,
    FIELD_ARGUMENT,
    FIELD_REDIRECT,
    FIELD_BODY,
    FIELD_DESTINATION,
    FIELD_DESCRIPTOR,
    FIELD_VALUE,
];

/// A node's kind through a table read once from the grammar. `Node::kind` measures and
/// checks the grammar's C string on every call, and the walks ask it of every node.
pub(crate) trait KindName {
    fn kind_name(&self) -> &'static str;
}

impl KindName for tree_sitter::Node<'_> {
    fn kind_name(&self) -> &'static str {
        static NAMES: std::sync::OnceLock<Box<[&'static str]>> = std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
            (0..language.node_kind_count())
                .map(|id| {
                    u16::try_from(id)
                        .ok()
                        .and_then(|id| language.node_kind_for_id(id))
                        .unwrap_or("")
                })
                .collect()
        });
        // ERROR's id lies past the table (it is the largest u16): ask the node itself.
        match names.get(usize::from(self.kind_id())) {
            Some(name) if !name.is_empty() => name,
            _ => self.kind(),
        }
    }
}
