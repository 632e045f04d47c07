//! What people and models read: the model-facing messages and the ask panel
//! (`messages`). Never changes a decision.

pub mod messages;
