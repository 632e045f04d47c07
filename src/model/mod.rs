//! The model types every layer shares: the analysis vocabulary (`vocab`: capabilities,
//! requests, classes, reasons), the rule record (`rule`), what a contained call carries
//! (`contain`), their OpenAPI mirrors (`schema`), what a path in a
//! request means (`paths`: resolution against cwd, home and symlinks) and the strict
//! JSON every client input is read with (`json`).
//!
//! Owns no behaviour beyond those definitions; it imports no other layer of the crate,
//! so every layer can depend on it without a cycle.

pub mod contain;
pub mod json;
pub mod paths;
pub mod rule;
pub mod schema;
pub mod vocab;
