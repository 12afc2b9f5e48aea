//! Whether the host has the programs a test drives.

use std::path::{Path, PathBuf};

/// A PATH with no directory under anyone's home: the tests' commands are the host's own.
pub const HOST_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Whether `tool` is on [`HOST_PATH`] (a name) or exists (an absolute path): what a cage
/// whose PATH is [`HOST_PATH`] can run.
pub fn have(tool: &str) -> bool {
    if tool.starts_with('/') {
        return Path::new(tool).is_file();
    }
    HOST_PATH
        .split(':')
        .any(|dir| Path::new(dir).join(tool).is_file())
}

/// The first program of `tools` that this host lacks (see [`have`]).
pub fn missing_tool<'a>(tools: &[&'a str]) -> Option<&'a str> {
    tools.iter().copied().find(|tool| !have(tool))
}

/// `name` on this test process's own PATH (which may hold the owner's toolchains, unlike
/// [`HOST_PATH`]).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// True when every program of `names` is on this process's PATH ([`find_tool`]);
/// otherwise [`skip_or_fail`](crate::skip_or_fail) naming the first missing one, and false.
pub fn tools_or_skip(names: &[&str]) -> bool {
    match names.iter().find(|name| find_tool(name).is_none()) {
        None => true,
        Some(name) => {
            crate::skip_or_fail(&format!("{name} is not installed"));
            false
        }
    }
}
