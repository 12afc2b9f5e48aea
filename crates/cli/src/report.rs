//! What a command finished with. Commands build it; `main` alone writes it out and exits,
//! so no command prints half an answer before it fails, and every answer leaves one way.

use crate::error::CliError;

/// A finished command: what it prints on stdout, and the status jaula exits with.
#[derive(Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Report {
    pub stdout: Vec<u8>,
    pub code: i32,
}

impl Report {
    /// Exit with `code`, printing nothing.
    pub fn status(code: i32) -> Report {
        Report {
            stdout: Vec::new(),
            code,
        }
    }

    /// Print `stdout` as it is, then exit with `code`.
    pub fn printed(stdout: impl Into<Vec<u8>>, code: i32) -> Report {
        Report {
            stdout: stdout.into(),
            code,
        }
    }

    /// Print `value` as pretty JSON on a line of its own, then exit with `code`.
    pub fn json(value: &serde_json::Value, code: i32) -> Result<Report, CliError> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| CliError::from(crate::error::NotJson::Encode(e)))?;
        text.push('\n');
        Ok(Report::printed(text, code))
    }
}

/// What every command returns: its report, or an error rendered once by `main`.
pub type Outcome = Result<Report, CliError>;
