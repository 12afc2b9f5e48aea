//! A git todo list (`rebase-merge/git-rebase-todo`, `sequencer/todo`) the cage installs:
//! admitted line by line. A rebase left stopped keeps its todo list, and the owner's next
//! `git rebase --continue` carries it out uncaged; an `exec` line there is a shell command
//! of the cage's choosing. Every other command (`pick`, `fixup`, `break`, `label`,
//! `reset`, `merge`, `update-ref`, …) names commits, labels and refs, and runs nothing.

use std::fmt;

/// Why a todo list is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TodoRefusal {
    /// The line, counted from 1.
    pub line: usize,
}

impl fmt::Display for TodoRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} of the todo list is an exec line, which the owner's next \
             `git rebase --continue` would run uncaged (run the command yourself between \
             steps instead of `git rebase --exec`)",
            self.line
        )
    }
}

/// Admit `bytes` as a todo list unless a line is an `exec` (or `x`) command. git takes a
/// line's first word after leading blanks as its command, by exact name or one-letter
/// abbreviation; this refuses more: any case, any ASCII white space after the word, and
/// lines past a NUL (which git would not read).
pub fn admit(bytes: &[u8]) -> Result<(), TodoRefusal> {
    for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let word = line
            .split(|b| b.is_ascii_whitespace() || *b == 0x0b)
            .find(|w| !w.is_empty())
            .unwrap_or_default();
        if word.eq_ignore_ascii_case(b"exec") || word.eq_ignore_ascii_case(b"x") {
            return Err(TodoRefusal { line: index + 1 });
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "git_todo_tests.rs"]
mod tests;
