//! Which git configuration a cage may install in a repository it made.
//!
//! Only the repositories found at launch are protected paths (see `protect.rs`). A cage
//! that makes a repository of its own (`git init sub`, a clone, `cargo new`) and writes
//! `core.fsmonitor` into its config would have the owner's next uncaged `git status` in
//! the parent run that command. The gate's supervisor therefore installs a git
//! directory's `config` only after [`admit`] has read every key in it: a key is admitted
//! when it is on [`SAFE_KEYS`] (keys that make git run nothing), or when the file being
//! replaced holds the same key with the same value (an owner's own setting in a nested
//! repository stays). Everything else, every key that may run a command among them, is
//! refused by name.
//!
//! The parser is a port of git's own (`config.c`: `parse_file`, `get_base_var`,
//! `get_extended_base_var`, `get_value`, `parse_value`), stricter where git is lenient:
//! a file that it cannot read exactly as git would is refused whole (fail closed): a NUL
//! or a control character, a lone carriage return, the deprecated `[section.sub]` form.
//! A parser of a dependency would be a second reading of the same text, no closer to
//! git's than this one, and the allowlist makes the comparison one of names only.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::paths::normalize_lexically;

/// One `key = value` of a git config file, with the names as git compares them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The section, lowercased (git compares section names case-insensitively).
    pub section: String,
    /// The subsection of `[section "sub"]`, exactly (compared case-sensitively).
    pub subsection: Option<Vec<u8>>,
    /// The key, lowercased.
    pub key: String,
    /// The value after git's unquoting; `None` for a bare `key` (boolean true).
    pub value: Option<Vec<u8>>,
}

impl ConfigEntry {
    /// The dotted name git prints (`core.fsmonitor`, `remote.origin.url`).
    pub fn name(&self) -> String {
        match &self.subsection {
            Some(sub) => format!(
                "{}.{}.{}",
                self.section,
                String::from_utf8_lossy(sub),
                self.key
            ),
            None => format!("{}.{}", self.section, self.key),
        }
    }
}

/// Why a config file is not installed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigRefusal {
    /// The file is not one this module reads exactly as git would.
    Unreadable {
        /// Its 1-based line.
        line: usize,
    },
    /// A key that is neither on the allowlist nor unchanged.
    Key {
        /// Its dotted name.
        name: String,
    },
    /// `core.worktree` naming a place the owner's checkout must not write: outside every
    /// writable root, or holding (or inside) a protected path.
    Worktree {
        /// Where it resolves.
        resolved: PathBuf,
        /// Why that place is refused.
        why: String,
    },
}

impl fmt::Display for ConfigRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigRefusal::Unreadable { line } => write!(
                f,
                "the git config is not one jaula can read exactly as git would (line {line})"
            ),
            ConfigRefusal::Key { name } => write!(
                f,
                "git key {name} is not one a cage may set in a repository (it may make \
                 the owner's git run a command)"
            ),
            ConfigRefusal::Worktree { resolved, why } => write!(
                f,
                "git key core.worktree names {}, {why} (the owner's checkout there would \
                 write what the cage committed)",
                resolved.display()
            ),
        }
    }
}

/// Keys without a subsection that make git run nothing, as `(section, key)`; `*` admits
/// every key of the section. What git 2.39/2.47, libgit2 (`cargo new`) and the ordinary
/// porcelain (`git config user.name`, `git remote add`, `git submodule add`) write.
pub const SAFE_KEYS: &[(&str, &str)] = &[
    ("core", "repositoryformatversion"),
    ("core", "filemode"),
    ("core", "bare"),
    ("core", "logallrefupdates"),
    ("core", "ignorecase"),
    ("core", "precomposeunicode"),
    ("core", "symlinks"),
    ("core", "worktree"),
    ("core", "autocrlf"),
    ("core", "eol"),
    ("core", "safecrlf"),
    ("core", "sharedrepository"),
    ("core", "quotepath"),
    ("core", "compression"),
    ("extensions", "objectformat"),
    ("extensions", "worktreeconfig"),
    ("extensions", "refstorage"),
    ("extensions", "preciousobjects"),
    ("user", "name"),
    ("user", "email"),
    ("init", "defaultbranch"),
    ("pull", "rebase"),
    ("pull", "ff"),
    ("push", "default"),
    ("fetch", "prune"),
    ("color", "ui"),
    ("gc", "auto"),
    ("index", "version"),
    ("advice", "*"),
];

/// Keys of `[section "sub"]` that make git run nothing, as `(section, key)`.
pub const SAFE_SUBSECTION_KEYS: &[(&str, &str)] = &[
    ("remote", "url"),
    ("remote", "pushurl"),
    ("remote", "fetch"),
    ("remote", "push"),
    ("remote", "mirror"),
    ("remote", "tagopt"),
    ("remote", "prune"),
    ("remote", "prunetags"),
    ("branch", "remote"),
    ("branch", "merge"),
    ("branch", "rebase"),
    ("branch", "pushremote"),
    ("branch", "description"),
    ("submodule", "url"),
    ("submodule", "active"),
    ("submodule", "branch"),
    ("submodule", "shallow"),
    ("submodule", "ignore"),
    ("submodule", "fetchrecursesubmodules"),
];

/// Whether `entry` is on the allowlist (`core.worktree` is judged by [`admit`]).
pub fn is_safe_key(entry: &ConfigEntry) -> bool {
    let list = if entry.subsection.is_some() {
        SAFE_SUBSECTION_KEYS
    } else {
        SAFE_KEYS
    };
    list.iter()
        .any(|(s, k)| *s == entry.section && (*k == "*" || *k == entry.key))
}

/// Where a `core.worktree` value leads, judged by the caller, which can look at the
/// filesystem: git resolves the value physically (through symlinks) from the git
/// directory, so only the caller can say where the owner's checkout would write.
/// It is given the git directory and the value joined to it, unresolved.
pub type WorktreeJudge<'a> = &'a dyn Fn(&Path, &Path) -> Result<(), String>;

/// Admit `new`, the config about to become the one of the git directory `git_dir`, when
/// every key is safe or unchanged from `current` (the file it replaces, if any) and a new
/// `core.worktree` (joined to `git_dir`, unresolved) passes `worktree`. `current` that
/// does not parse admits nothing by itself.
pub fn admit(
    new: &[u8],
    current: Option<&[u8]>,
    git_dir: &Path,
    worktree: WorktreeJudge<'_>,
) -> Result<(), ConfigRefusal> {
    let entries = parse(new)?;
    let kept = current.and_then(|c| parse(c).ok()).unwrap_or_default();
    for entry in &entries {
        if kept.contains(entry) {
            continue;
        }
        if !is_safe_key(entry) {
            return Err(ConfigRefusal::Key { name: entry.name() });
        }
        if entry.section == "core" && entry.key == "worktree" {
            judge_worktree(entry.value.as_deref(), git_dir, worktree)?;
        }
    }
    Ok(())
}

/// `core.worktree` as git reads it: relative to the git directory, never `~`-expanded.
/// A value only a shell would read is not what git writes: refused rather than guessed.
fn judge_worktree(
    value: Option<&[u8]>,
    git_dir: &Path,
    worktree: WorktreeJudge<'_>,
) -> Result<(), ConfigRefusal> {
    use std::os::unix::ffi::OsStrExt;
    let value = value.unwrap_or_default();
    let joined = git_dir.join(Path::new(std::ffi::OsStr::from_bytes(value)));
    if value.is_empty() || value.starts_with(b"~") || !joined.is_absolute() {
        return Err(ConfigRefusal::Worktree {
            resolved: normalize_lexically(&joined),
            why: "which git would not read as a directory".into(),
        });
    }
    worktree(git_dir, &joined).map_err(|why| ConfigRefusal::Worktree {
        resolved: normalize_lexically(&joined),
        why,
    })
}

impl crate::Policy {
    /// Whether the owner's checkout may write at `place` (a `core.worktree` a cage set,
    /// resolved physically): only inside a writable root, where the cage could have
    /// written the same files itself, and nowhere that is, holds or lies in a protected
    /// path or a sealed root, which the checkout would otherwise write for the cage.
    pub fn judge_worktree_place(&self, place: &Path) -> Result<(), String> {
        if !self.writable().iter().any(|w| place.starts_with(&w.path)) {
            return Err("outside every writable root".into());
        }
        let overlaps = |other: &Path| other.starts_with(place) || place.starts_with(other);
        if let Some(p) = self.protected().iter().find(|p| overlaps(&p.path)) {
            return Err(format!(
                "which meets the protected path {}",
                p.path.display()
            ));
        }
        if let Some(s) = self.sealed().iter().find(|s| overlaps(&s.path)) {
            return Err(format!("which meets the sealed path {}", s.path.display()));
        }
        Ok(())
    }
}

/// Every entry of a config file, in order, as git reads it.
pub fn parse(text: &[u8]) -> Result<Vec<ConfigEntry>, ConfigRefusal> {
    Parser::new(text).entries()
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

/// git's `isspace` after `get_next_char` (which turns `\r\n` into `\n`).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n')
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8]) -> Parser<'a> {
        let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        Parser {
            text,
            at: 0,
            line: 1,
            eof: false,
        }
    }

    fn fail<T>(&self) -> Result<T, ConfigRefusal> {
        Err(ConfigRefusal::Unreadable { line: self.line })
    }

    /// git's `get_next_char`: `\r\n` reads as `\n`, the end of the text as `\n` (with
    /// `eof` set). Bytes git would take but this parser will not vouch for refuse.
    fn next(&mut self) -> Result<u8, ConfigRefusal> {
        let Some(&c) = self.text.get(self.at) else {
            self.eof = true;
            return Ok(b'\n');
        };
        self.at += 1;
        let c = if c == b'\r' {
            if self.text.get(self.at) != Some(&b'\n') {
                return self.fail();
            }
            self.at += 1;
            b'\n'
        } else {
            c
        };
        if c == b'\n' {
            self.line += 1;
        } else if c < 0x20 && c != b'\t' || c == 0x7f {
            return self.fail();
        }
        Ok(c)
    }

    fn entries(mut self) -> Result<Vec<ConfigEntry>, ConfigRefusal> {
        let mut out = Vec::new();
        let mut section: Option<(String, Option<Vec<u8>>)> = None;
        let mut comment = false;
        loop {
            let c = self.next()?;
            if c == b'\n' {
                if self.eof {
                    return Ok(out);
                }
                comment = false;
                continue;
            }
            if comment || is_space(c) {
                continue;
            }
            if c == b'#' || c == b';' {
                comment = true;
                continue;
            }
            if c == b'[' {
                section = Some(self.section_header()?);
                continue;
            }
            if !c.is_ascii_alphabetic() {
                return self.fail();
            }
            let Some((name, sub)) = &section else {
                return self.fail();
            };
            let (key, value) = self.key_value(c)?;
            out.push(ConfigEntry {
                section: name.clone(),
                subsection: sub.clone(),
                key,
                value,
            });
        }
    }

    /// After `[`: `name]` or `name "sub"]` (git's `get_base_var`).
    fn section_header(&mut self) -> Result<(String, Option<Vec<u8>>), ConfigRefusal> {
        let mut name = String::new();
        loop {
            let c = self.next()?;
            if self.eof {
                return self.fail();
            }
            if c == b']' {
                if name.is_empty() {
                    return self.fail();
                }
                return Ok((name, None));
            }
            if is_space(c) {
                if name.is_empty() {
                    return self.fail();
                }
                let sub = self.subsection(c)?;
                return Ok((name, Some(sub)));
            }
            // `.` would be the deprecated `[section.sub]`, whose subsection git lowercases:
            // not written by any tool jaula admits, so not read either.
            if !is_key_char(c) || name.len() > 256 {
                return self.fail();
            }
            name.push(c.to_ascii_lowercase() as char);
        }
    }

    /// git's `get_extended_base_var`: spaces, `"sub"`, `]`; `\x` is `x`.
    fn subsection(&mut self, mut c: u8) -> Result<Vec<u8>, ConfigRefusal> {
        while is_space(c) {
            if c == b'\n' {
                return self.fail();
            }
            c = self.next()?;
        }
        if c != b'"' {
            return self.fail();
        }
        let mut sub = Vec::new();
        loop {
            let mut c = self.next()?;
            if c == b'\n' {
                return self.fail();
            }
            if c == b'"' {
                break;
            }
            if c == b'\\' {
                c = self.next()?;
                if c == b'\n' {
                    return self.fail();
                }
            }
            sub.push(c);
        }
        if self.next()? != b']' {
            return self.fail();
        }
        Ok(sub)
    }

    /// git's `get_value`: the rest of the key from its first letter `first`, then
    /// nothing (a bare boolean) or `= value`.
    fn key_value(&mut self, first: u8) -> Result<(String, Option<Vec<u8>>), ConfigRefusal> {
        let mut key = String::from(first.to_ascii_lowercase() as char);
        let mut c;
        loop {
            c = self.next()?;
            if self.eof || !is_key_char(c) {
                break;
            }
            key.push(c.to_ascii_lowercase() as char);
        }
        while c == b' ' || c == b'\t' {
            c = self.next()?;
        }
        if c == b'\n' {
            return Ok((key, None));
        }
        if c != b'=' {
            return self.fail();
        }
        Ok((key, Some(self.value()?)))
    }

    /// git's `parse_value`: quotes, the escapes `\n \t \b \\ \"`, a backslash-newline
    /// continuation, comments outside quotes, and unquoted trailing space trimmed.
    fn value(&mut self) -> Result<Vec<u8>, ConfigRefusal> {
        let mut value = Vec::new();
        let mut quote = false;
        let mut comment = false;
        let mut trim_len = 0usize;
        loop {
            let c = self.next()?;
            if c == b'\n' {
                if quote {
                    return self.fail();
                }
                if trim_len > 0 {
                    value.truncate(trim_len);
                }
                return Ok(value);
            }
            if comment {
                continue;
            }
            if is_space(c) && !quote {
                if trim_len == 0 && !value.is_empty() {
                    trim_len = value.len();
                }
                if !value.is_empty() {
                    value.push(c);
                }
                continue;
            }
            if !quote && (c == b';' || c == b'#') {
                comment = true;
                continue;
            }
            trim_len = 0;
            if c == b'\\' {
                let escaped = match self.next()? {
                    b'\n' => {
                        if self.eof {
                            return self.fail();
                        }
                        continue;
                    }
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    b'\\' => b'\\',
                    b'"' => b'"',
                    _ => return self.fail(),
                };
                value.push(escaped);
                continue;
            }
            if c == b'"' {
                quote = !quote;
                continue;
            }
            value.push(c);
        }
    }
}

#[cfg(test)]
#[path = "git_config_tests.rs"]
mod tests;
