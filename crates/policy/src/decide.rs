//! The reference meaning of a policy: one pure, total decision per (path, access).
//!
//! The order mirrors the Seatbelt profile, read as last-match-wins from the bottom up:
//! a [`FileRule::ReadableInSeal`] file is readable above all; then sealed roots and
//! [`FileRule::SealedPattern`] files deny read and write; then protected cage configuration
//! denies writes; then [`FileRule::WritableFile`] files and the working set allow writes;
//! otherwise reads are allowed and writes denied.

use crate::root_index::DecideIndex;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::file_rule::{FileRule, FileRuleSource};
use crate::paths::{display_with_tilde, is_within, normalize_lexically};
use crate::policy::{ProtectedSource, SealKind, SealSource, WriteSource};
use crate::sockets::SocketSource;
use crate::Policy;

/// What a confined process attempts on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Open for reading, list, execute.
    Read,
    /// Modify an existing entry: write, truncate, chmod, remove.
    Write,
    /// Make a new entry at this path (file, directory, link).
    Create,
    /// `connect(2)` (or `sendto(2)`) to a pathname unix socket at this path.
    Connect,
}

impl Access {
    /// The filesystem accesses; [`Access::Connect`] is asked of sockets on its own.
    pub const ALL: [Access; 3] = [Access::Read, Access::Write, Access::Create];

    fn is_write(self) -> bool {
        matches!(self, Access::Write | Access::Create)
    }
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Create => "create",
            Access::Connect => "connect",
        })
    }
}

/// The rule that decided. Paths are canonical and absolute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Rule {
    /// A [`FileRule::ReadableInSeal`] file, readable above every seal.
    ReadableInSeal {
        /// The file.
        path: PathBuf,
        /// What the file is.
        source: FileRuleSource,
    },
    /// Beneath (or equal to) a sealed root.
    Sealed {
        /// The sealed root that covers the path.
        root: PathBuf,
        /// Whether the root is sealed as a file or a directory.
        kind: SealKind,
        /// Why it is sealed (a default list, the owner's deny, ...).
        source: SealSource,
    },
    /// A file a [`FileRule::SealedPattern`] matches.
    SealedPattern {
        /// The matching file.
        path: PathBuf,
        /// What the pattern's files are.
        source: FileRuleSource,
    },
    /// Cage configuration: readable, never writable.
    Protected {
        /// The protected file or directory that covers the path.
        root: PathBuf,
        /// Which configuration it is.
        source: ProtectedSource,
    },
    /// Beneath a writable root.
    Writable {
        /// The writable root that covers the path.
        root: PathBuf,
        /// Why it is writable (the repo, a cache, the owner's allow, ...).
        source: WriteSource,
    },
    /// Beneath a writable root that was absent at launch and that jaula does not create:
    /// no Linux backend can grant a path that is not there.
    AbsentWritableRoot {
        /// The absent writable root.
        root: PathBuf,
        /// Why it would have been writable.
        source: WriteSource,
    },
    /// A path a [`FileRule::WritableFile`] covers.
    WritableFile {
        /// The path written.
        path: PathBuf,
        /// What the file is.
        source: FileRuleSource,
    },
    /// A host unix socket the owner allowed by path or preset.
    AllowedSocket {
        /// The allowed socket.
        path: PathBuf,
        /// The flag, config key or preset that allowed it.
        source: SocketSource,
    },
    /// Any other pathname unix socket: reachable only if a process inside this cage
    /// bound it, which the enforcer knows and a path alone does not say.
    HostSocket,
    /// Nothing matched a read: the world is readable.
    DefaultReadable,
    /// Nothing matched a write: the world is read-only.
    DefaultReadOnly,
}

impl Rule {
    /// One line for people, e.g. `sealed: ~/.ssh (credential directory)`.
    pub fn describe(&self, home: &Path) -> String {
        let t = |p: &Path| display_with_tilde(p, home);
        match self {
            Rule::ReadableInSeal { path, source } => {
                format!("exception: {} ({})", t(path), source.label())
            }
            Rule::Sealed { root, source, .. } => {
                format!("sealed: {} ({})", t(root), source.label())
            }
            Rule::SealedPattern { path, source } => {
                format!("sealed: {} ({})", t(path), source.label())
            }
            Rule::Protected { root, source } => {
                format!("protected: {} ({})", t(root), source.label())
            }
            Rule::Writable { root, source } => {
                format!("writable: {} ({})", t(root), source.label())
            }
            Rule::AbsentWritableRoot { root, source } => format!(
                "absent writable root: {} ({}) did not exist at launch and jaula does not \
                 create it (config cage.create_cache_roots, or not an agent cache beneath \
                 the home): create it before the run",
                t(root),
                source.label()
            ),
            Rule::WritableFile { path, source } => {
                format!("writable: {} ({})", t(path), source.label())
            }
            Rule::AllowedSocket { path, source } => {
                format!("allowed socket: {} ({})", t(path), source.label())
            }
            Rule::HostSocket => "host socket: refused unless this cage, or another live \
                                 cage of this owner, bound it (allow one with \
                                 --allow-unix-socket)"
                .to_string(),
            Rule::DefaultReadable => "default: readable".to_string(),
            Rule::DefaultReadOnly => "default: read-only".to_string(),
        }
    }
}

/// Allowed or denied, and the rule that said so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Whether the access is allowed.
    pub allowed: bool,
    /// The rule that decided, for `explain` and for tests that compare backends.
    pub rule: Rule,
}

impl Policy {
    /// Decide `access` on `path`. `path` should be canonical (symlinks resolved, as the
    /// kernel sees it); a relative path is decided as if beneath `/`, and `.`/`..` are
    /// applied lexically.
    pub fn decide(&self, path: &Path, access: Access) -> Decision {
        let path = normalize_lexically(&Path::new("/").join(path));
        let path = path.as_path();
        let deny = |rule| Decision {
            allowed: false,
            rule,
        };
        let allow = |rule| Decision {
            allowed: true,
            rule,
        };

        let covering = |kind: fn(&FileRule) -> bool| {
            self.file_rules
                .iter()
                .find(|r| kind(r) && r.covers(path))
                .map(|r| (path.to_path_buf(), r.source()))
        };
        if access == Access::Read {
            if let Some((path, source)) = covering(|r| matches!(r, FileRule::ReadableInSeal { .. }))
            {
                return allow(Rule::ReadableInSeal { path, source });
            }
        }
        let index = self.decide_index();
        if let Some(root) = index
            .sealed
            .first(path, |i| {
                let s = &self.sealed[i];
                seal_covers(s.kind, &s.path, path)
            })
            .map(|i| &self.sealed[i])
        {
            return deny(Rule::Sealed {
                root: root.path.clone(),
                kind: root.kind,
                source: root.source,
            });
        }
        if let Some((path, source)) = covering(|r| matches!(r, FileRule::SealedPattern { .. })) {
            return deny(Rule::SealedPattern { path, source });
        }
        if access == Access::Connect {
            return match self.unix_sockets.iter().find(|s| s.path == path) {
                Some(s) => allow(Rule::AllowedSocket {
                    path: s.path.clone(),
                    source: s.source,
                }),
                None => deny(Rule::HostSocket),
            };
        }
        if !access.is_write() {
            return allow(Rule::DefaultReadable);
        }
        if let Some(p) = index
            .protected
            .first(path, |i| {
                let p = &self.protected[i];
                p.kind.covers(&p.path, path)
            })
            .map(|i| &self.protected[i])
        {
            return deny(Rule::Protected {
                root: p.path.clone(),
                source: p.source,
            });
        }
        if let Some((path, source)) = covering(|r| matches!(r, FileRule::WritableFile { .. })) {
            return allow(Rule::WritableFile { path, source });
        }
        // A root absent at launch and not created grants nothing, but another root holding
        // the path still may (an absent extra inside an existing cache directory).
        let mut absent = None;
        for w in index
            .writable
            .holding(path)
            .into_iter()
            .map(|i| &self.writable[i])
            .filter(|w| is_within(path, &w.path))
        {
            if self.is_absent_uncreated(&w.path) {
                absent = absent.or(Some(w));
                continue;
            }
            return allow(Rule::Writable {
                root: w.path.clone(),
                source: w.source,
            });
        }
        match absent {
            Some(w) => deny(Rule::AbsentWritableRoot {
                root: w.path.clone(),
                source: w.source,
            }),
            None => deny(Rule::DefaultReadOnly),
        }
    }

    /// A writable root absent at resolution that `jaula run` does not create.
    fn is_absent_uncreated(&self, root: &Path) -> bool {
        self.absent
            .iter()
            .any(|a| a.path == root && !a.created_at_launch)
    }
}

impl Policy {
    /// The index of this policy's roots, built on the first decision.
    pub(crate) fn decide_index(&self) -> &DecideIndex {
        self.index.get_or_build(|| {
            DecideIndex::of(
                self.sealed.iter().map(|s| s.path.as_path()),
                self.protected.iter().map(|p| p.path.as_path()),
                self.writable.iter().map(|w| w.path.as_path()),
            )
        })
    }
}

/// A file seal covers exactly its path; a directory seal covers the path and all beneath.
fn seal_covers(kind: SealKind, root: &Path, path: &Path) -> bool {
    match kind {
        SealKind::File => path == root,
        SealKind::Directory => is_within(path, root),
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
