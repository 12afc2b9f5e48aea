//! Rules about single files that the lists of roots cannot say.
//!
//! Most of a policy is roots: sealed roots (no read, no write), writable roots, protected
//! paths. A few files sit across those lines: one file writable in a read-only home, one
//! file readable inside a sealed directory, a family of files sealed by their place in a
//! tree whether or not each exists yet. Each such shape is a [`FileRule`] kind, carried as
//! data on the resolved [`Policy`](crate::Policy). [`Policy::decide`](crate::Policy::decide)
//! answers from them and every backend renders them with one arm per kind, so a backend
//! never knows which program the file belongs to; only the resolver, from the built-in
//! defaults, does (the [`FileRuleSource`]).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Which paths a [`FileRule::WritableFile`] covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileMatch {
    /// Exactly the file.
    Exact,
    /// Every entry of the file's directory whose name starts with the file's name, and
    /// anything beneath one: the file and the backup siblings a program writes next to it
    /// (`x.json.backup`, `x.json.tmp.123`). Only a pattern-matching backend (Seatbelt) can
    /// say this, so the resolver asks for it on macOS only.
    NamePrefix,
}

/// Where a file rule comes from, for people: `explain`, `--verbose`, error messages.
/// Backends print [`label`](FileRuleSource::label) or [`noun`](FileRuleSource::noun) and
/// never branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FileRuleSource {
    /// Claude's state file, `~/.claude.json`, which it rewrites on every start.
    ClaudeState,
    /// This window's own broker token (`--token-file`), inside the sealed broker store.
    WindowToken,
    /// The remote-road channels' per-seat tokens, `~/.claude/channels/<seat>/.env`.
    ChannelTokens,
}

impl FileRuleSource {
    /// A short phrase for people, as `explain` prints it.
    pub fn label(self) -> &'static str {
        match self {
            FileRuleSource::ClaudeState => "Claude state file",
            FileRuleSource::WindowToken => "this window's token file",
            FileRuleSource::ChannelTokens => "remote-road channel token",
        }
    }

    /// The file as a noun, for an error that names it (`cannot write the token file ...`).
    pub fn noun(self) -> &'static str {
        match self {
            FileRuleSource::ClaudeState => "Claude state file",
            FileRuleSource::WindowToken => "token file",
            FileRuleSource::ChannelTokens => "channel token",
        }
    }
}

/// One rule about single files, beside the policy's roots. Paths are canonical and
/// absolute, as the resolver makes every path of a policy.
///
/// Deliberately exhaustive: every backend matches on the kind with one arm each, so a new
/// kind does not compile until each backend says how it enforces it (a renderer that
/// skipped an unknown kind would silently drop a seal).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FileRule {
    /// A file writable (and creatable) where the roots make everything read-only.
    ///
    /// - read: unchanged, decided by the roots;
    /// - write, create: allowed on the paths `matching` covers, unless a sealed root or a
    ///   protected path covers them too (a seal and a protection win, so an owner who
    ///   seals the file gets the seal).
    ///
    /// Linux backends can only grant a file that exists (a Landlock rule needs an open
    /// descriptor, a bind mount a source): an absent one is not writable there, whatever
    /// the reference says about creating it.
    WritableFile {
        /// The file.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
        /// The file alone, or its name as a prefix.
        matching: FileMatch,
        /// What the file is.
        source: FileRuleSource,
    },
    /// A file readable even inside a sealed root: the one hole in a seal.
    ///
    /// - read: allowed on exactly this path, above every seal;
    /// - write, create: unchanged, so the seal around it still refuses them.
    ///
    /// Siblings inside the same seal stay sealed.
    ReadableInSeal {
        /// The file.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
        /// What the file is.
        source: FileRuleSource,
    },
    /// Every `<dir>/<child>/<name>`, for any single `<child>` directory: sealed for read,
    /// write, create and connect whether or not each file exists, as a sealed root is.
    ///
    /// A pattern-matching backend (Seatbelt) seals the pattern itself; the Linux backends
    /// can only name what exists, so they seal `existing` and keep the cage from making a
    /// new match (Landlock splits `dir` and its children so no new entry can be created;
    /// the bwrap view covers `existing` only, a listed deviation).
    SealedPattern {
        /// The directory whose children hold the sealed files.
        #[serde(with = "crate::serde_path")]
        dir: PathBuf,
        /// The sealed file's name inside each child: one path component.
        name: String,
        /// The matches that existed as files when the policy was resolved, sorted.
        #[serde(with = "crate::serde_path::vec")]
        existing: Vec<PathBuf>,
        /// What the files are.
        source: FileRuleSource,
    },
}

impl FileRule {
    /// What the rule's files are.
    pub fn source(&self) -> FileRuleSource {
        match self {
            FileRule::WritableFile { source, .. }
            | FileRule::ReadableInSeal { source, .. }
            | FileRule::SealedPattern { source, .. } => *source,
        }
    }

    /// Whether the rule speaks of `path` (canonical, absolute). It says nothing of what
    /// it then allows: that depends on the kind and the access, as documented on each.
    pub fn covers(&self, path: &Path) -> bool {
        match self {
            FileRule::WritableFile {
                path: file,
                matching: FileMatch::Exact,
                ..
            }
            | FileRule::ReadableInSeal { path: file, .. } => path == file,
            FileRule::WritableFile {
                path: file,
                matching: FileMatch::NamePrefix,
                ..
            } => name_prefix_covers(file, path),
            FileRule::SealedPattern { dir, name, .. } => pattern_covers(dir, name, path),
        }
    }
}

/// `<dir>/<one segment>/<name>`, exactly.
fn pattern_covers(dir: &Path, name: &str, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(dir) else {
        return false;
    };
    let parts: Vec<Component> = rest.components().collect();
    matches!(
        parts.as_slice(),
        [Component::Normal(_), Component::Normal(last)] if *last == name
    )
}

/// Any entry of `file`'s directory whose name starts with `file`'s name, and anything
/// beneath one, as an anchored regex of the file's path matches.
fn name_prefix_covers(file: &Path, path: &Path) -> bool {
    let (Some(dir), Some(prefix)) = (file.parent(), file.file_name()) else {
        return false;
    };
    let Ok(rest) = path.strip_prefix(dir) else {
        return false;
    };
    match rest.components().next() {
        Some(Component::Normal(first)) => first
            .as_encoded_bytes()
            .starts_with(prefix.as_encoded_bytes()),
        _ => false,
    }
}

#[cfg(test)]
#[path = "file_rule_tests.rs"]
mod tests;
