//! `khaelor-perm openapi`: prints the service's OpenAPI document (YAML), the same text
//! as `GET /openapi.yaml`. Regenerate the checked-in copy with
//! `khaelor-perm openapi > openapi.yaml`.

use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> ExitCode {
    let yaml = crate::http::openapi::yaml();
    if yaml.is_empty() {
        return ExitCode::FAILURE;
    }
    match std::io::stdout().write_all(yaml.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
