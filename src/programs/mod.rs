//! What programs do: the declarative program table.

pub mod environment;
