//! placeholder: owned by a helper, replaced before landing.
use crate::vocab::{AnalysisContext, HardlineHit};

pub fn check(_words: &[String], _ctx: &AnalysisContext) -> Option<HardlineHit> {
    todo!()
}
pub fn check_redirect_target(_target: &str, _ctx: &AnalysisContext) -> Option<HardlineHit> {
    todo!()
}
pub fn check_raw(_text: &str, _ctx: &AnalysisContext) -> Option<HardlineHit> {
    todo!()
}
