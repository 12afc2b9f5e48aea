//! The CLI's errors, rendered once, plainly, with the exit code each one means.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage the parser could not catch (the seed's `--repo is required`): exit 2.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Policy(#[from] jaula_policy::PolicyError),
    #[error(transparent)]
    Seatbelt(#[from] jaula_sandbox::seatbelt::SeatbeltError),
    #[error(transparent)]
    Bwrap(#[from] jaula_sandbox::bwrap::BwrapError),
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
    #[error("{0}")]
    NotJson(String),
    #[error("{0}")]
    Launch(String),
    #[error("cannot print: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}
