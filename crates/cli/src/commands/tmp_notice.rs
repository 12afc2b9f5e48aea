//! One stderr line when a command in the bubblewrap view fails and one of its arguments
//! names a file on the host's `/tmp`: the view's `/tmp` is the window's own, so
//! `bash /tmp/work.sh` finds nothing there (bash exits 127, dash 2, python 2, node 1), and
//! the shell's `No such file or directory` alone would send the user hunting on the host.
//! Any failing status counts, since each interpreter says "not found" its own way; a
//! success or a signal says nothing.

use std::path::PathBuf;
use std::process::ExitStatus;

/// The line for a command that left with `status`, given the arguments the view hides
/// (`jaula_sandbox::bwrap::hidden_by_private_tmp`); None unless it exited non-zero and at
/// least one was hidden.
pub fn after_exit(status: ExitStatus, hidden: &[PathBuf]) -> Option<String> {
    let code = status.code().filter(|&c| c != 0)?;
    if hidden.is_empty() {
        return None;
    }
    let paths: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
    let flags: Vec<String> = paths.iter().map(|p| format!("--allow-write {p}")).collect();
    Some(format!(
        "jaula: the command exited {code}, and {} {} on the host's /tmp, which the cage does \
         not see: it has a private /tmp of its own; copy it into the repo, or pass {} to \
         bind it into the cage (writable)",
        paths.join(", "),
        if paths.len() == 1 { "is" } else { "are" },
        flags.join(" ")
    ))
}

#[cfg(test)]
#[path = "tmp_notice_tests.rs"]
mod tests;
