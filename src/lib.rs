//! khaelor-perm: decides, before an AI coding agent runs a tool, whether the call may run
//! silently, must ask the user, or is denied.
//!
//! Data flows one way: tool call -> capability mapping (`tools`) -> bash analysis
//! (`analysis`: `ast`, with `lexer` as fail-closed fallback) -> requests -> evaluation
//! (`rules`, layered by `config`, floored by `hardline`) -> decision -> events and
//! responses (`session`, `http`). Analysis knows nothing of rules; rules know nothing of
//! bash; handlers only translate.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod arity;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod containers;
pub mod decide;
pub mod grants;
pub mod hardline;
pub mod hosts;
pub mod http;
pub mod interop;
pub mod json;
pub mod lexer;
pub mod messages;
pub mod oracle;
pub mod paths;
pub mod presets;
pub mod programs;
pub mod protected;
pub mod reach;
pub mod rules;
pub mod schema;
pub mod session;
pub mod shell;
pub mod tools;
pub mod trust;
pub mod vocab;
