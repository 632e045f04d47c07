//! khaelor-perm: decides, before an AI coding agent runs a tool, whether the call may run
//! silently, must ask the user, or is denied.
//!
//! Data flows one way, and the layers show as folders:
//! tool call -> capability mapping (`tools`) -> bash analysis (`analysis`: the AST engine
//! with the V1 lexer as fail-closed fallback, both reading the one IR in `shell` and the
//! program table in `programs`; the floor in `floor` reads that IR) -> requests (`model`)
//! -> decision (`policy`: rules, layered config, decide) -> wording (`presentation`) ->
//! events and grants (`session`) -> responses (`http`, `cli`, `hosts`, which only
//! translate). `contain` runs what the policy contains inside the OS sandbox (above
//! `policy`, below the responses). Analysis knows nothing of rules; rules know nothing of bash. `interop`
//! reads and writes other tools' rule formats; `compare` and `oracle` are the
//! verification tools (the engines against each other, the analysis against bash).
#![forbid(unsafe_code)]

pub mod analysis;
pub mod cli;
pub mod compare;
pub mod contain;
pub mod floor;
pub mod hosts;
pub mod http;
pub mod interop;
pub mod model;
pub mod oracle;
pub mod policy;
pub mod presentation;
pub mod programs;
pub mod session;
pub mod shell;
pub mod tools;
