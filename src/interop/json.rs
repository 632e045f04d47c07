//! Reading JSON-family sources (Claude and OpenCode settings, Kram's permissions and
//! grants, Kurahi's JSON5 config) into a small owned tree that keeps each value's byte
//! offset, so every imported rule can name its line.
//!
//! Owns parsing and shape errors only; what the values mean is each format's job.

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use super::model::{ImportError, position_of};

/// A JSON value with the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Str(String, usize),
    Num(f64, usize),
    Bool(bool, usize),
    Null(usize),
    Arr(Vec<Node>, usize),
    /// Properties in source order, each with the offset of its key.
    Obj(Vec<(String, usize, Node)>, usize),
}

impl Node {
    pub fn offset(&self) -> usize {
        match self {
            Node::Str(_, o)
            | Node::Num(_, o)
            | Node::Bool(_, o)
            | Node::Null(o)
            | Node::Arr(_, o)
            | Node::Obj(_, o) => *o,
        }
    }

    /// The first property named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Obj(props, _) => props.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s, _) => Some(s),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Node::Str(..) => "a string",
            Node::Num(..) => "a number",
            Node::Bool(..) => "a boolean",
            Node::Null(..) => "null",
            Node::Arr(..) => "an array",
            Node::Obj(..) => "an object",
        }
    }
}

fn convert(v: &Value<'_>) -> Node {
    let at = v.start();
    match v {
        Value::StringLit(s) => Node::Str(s.value.to_string(), at),
        Value::NumberLit(n) => Node::Num(n.value.parse::<f64>().unwrap_or(f64::NAN), at),
        Value::BooleanLit(b) => Node::Bool(b.value, at),
        Value::NullKeyword(_) => Node::Null(at),
        Value::Array(a) => Node::Arr(a.elements.iter().map(convert).collect(), at),
        Value::Object(o) => Node::Obj(
            o.properties
                .iter()
                .map(|p| {
                    let key_at = match &p.name {
                        ObjectPropName::String(s) => s.range.start,
                        ObjectPropName::Word(w) => w.range.start,
                    };
                    (p.name.as_str().to_string(), key_at, convert(&p.value))
                })
                .collect(),
            at,
        ),
    }
}

/// Parses JSON with comments and trailing commas; `json5` also accepts unquoted keys,
/// single quotes and the other JSON5 forms Kurahi's `kolo.json5` is written in.
pub fn parse(text: &str, file: &str, json5: bool) -> Result<Node, ImportError> {
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: json5,
        allow_missing_commas: false,
        allow_single_quoted_strings: json5,
        allow_hexadecimal_numbers: json5,
        allow_unary_plus_numbers: json5,
        allow_bare_decimal_point_numbers: json5,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: json5,
    };
    match jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options) {
        Err(e) => Err(ImportError::Syntax {
            file: file.to_string(),
            line: e.line_display(),
            column: e.column_display(),
            message: crate::presentation::messages::lower_first(&e.kind().to_string()),
        }),
        Ok(p) => match p.value {
            Some(v) => Ok(convert(&v)),
            None => Err(ImportError::Syntax {
                file: file.to_string(),
                line: 1,
                column: 1,
                message: "the file is empty".to_string(),
            }),
        },
    }
}

/// A shape error at a node.
pub fn shape(text: &str, file: &str, at: usize, message: impl Into<String>) -> ImportError {
    let (line, column) = position_of(text, at);
    ImportError::Syntax {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}
