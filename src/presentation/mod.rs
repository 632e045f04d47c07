//! What people and models read: the model-facing messages and the ask panel
//! (`messages`), and the terminal panel of `khaelor-perm approve` (`tui`). Never
//! changes a decision.

pub mod messages;
pub mod tui;
