//! Reading bash as bash does: the layer under both engines.
//!
//! Owns what happens to the text before any engine tokenizes it (`source`: line
//! continuations spliced exactly where bash splices them). The engines lower what they
//! read into the same plan of simple commands; what commands do is `programs`' and the
//! analysis' concern, not this module's.

pub mod braces;
pub(crate) mod ir;
pub mod source;
