//! What each backend would do with one path, for `explain`.

use std::path::Path;

use jaula_policy::{Access, Sources};

use crate::commands::explain::ExplainArgs;
use crate::error::CliError;

#[derive(Debug, serde::Serialize)]
pub struct BackendView {
    pub backend: &'static str,
    pub allowed: bool,
    pub summary: String,
}

pub fn views(
    _args: &ExplainArgs,
    _sources: &Sources,
    _path: &Path,
    _access: Access,
) -> Result<Vec<BackendView>, CliError> {
    Ok(Vec::new())
}
