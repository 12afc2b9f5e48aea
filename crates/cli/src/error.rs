//! The CLI's errors, rendered once, plainly, with the exit code each one means.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage the parser could not catch (`--repo is required`): exit 2.
    #[error("{0}")]
    Usage(String),
    /// A config file value jaula cannot use (`run.backend = "fast"`): the file is not bad
    /// usage of the command line, so not exit 2.
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Policy(#[from] jaula_policy::PolicyError),
    #[error(transparent)]
    Seatbelt(#[from] jaula_sandbox::seatbelt::SeatbeltError),
    #[error(transparent)]
    Bwrap(#[from] jaula_sandbox::bwrap::BwrapError),
    /// A backend could not render its artifact or answer for a path (`jaula explain`).
    #[error(transparent)]
    Backend(#[from] jaula_sandbox::backend::BackendError),
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
    /// The inspection and launcher commands (`line`, `profile`, `check`, `explain`,
    /// `render`, the contract commands other than `run`): 2 for usage, 1 otherwise, the
    /// statuses a tmux launcher already handles (docs/compatibility.md).
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }

    /// The commands that run something (`run`, `contract run`): 2 for usage, and 126 for
    /// every refusal to cage (an unsafe repo, a bad config, a failed launch), so a caller
    /// can tell "jaula refused" from any status of the command itself.
    pub fn refusal_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            _ => crate::commands::run::REFUSED,
        }
    }
}
