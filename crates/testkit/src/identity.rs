//! Who runs a cage: root, and the unprivileged uid every live suite also runs as.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The unprivileged identity every live suite runs as besides root (`nobody`).
pub const NOBODY: u32 = 65534;

/// Who owns a scratch tree, and so who runs the cage and the controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum User {
    /// uid 0, which a cage must still confine (capabilities dropped).
    Root,
    /// uid 65534, an owner without privilege.
    Nobody,
}

impl User {
    /// The numeric uid.
    pub fn uid(self) -> u32 {
        match self {
            User::Root => 0,
            User::Nobody => NOBODY,
        }
    }

    /// Gives the tree at `path` to this user (a no-op for root, which the test process
    /// is, and so owns what it made).
    pub fn own(self, path: &Path) {
        if self == User::Nobody {
            chown_tree(path, NOBODY);
        }
    }

    /// Runs `cmd` as this user (a no-op for root, which the test process is).
    pub fn apply(self, cmd: &mut Command) {
        if self == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
    }
}

/// The Linux backends a live case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Native Landlock, seccomp and hardening (`--backend landlock`).
    Landlock,
    /// The bubblewrap view with the inner stage (`--backend bwrap`).
    Bwrap,
}

impl Backend {
    /// The `--backend` value.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Landlock => "landlock",
            Backend::Bwrap => "bwrap",
        }
    }
}

/// The accounts to run as: the caller (`None`), and uid 65534 when the caller is root.
pub fn accounts() -> Vec<Option<u32>> {
    if crate::is_root() {
        vec![None, Some(NOBODY)]
    } else {
        vec![None]
    }
}

/// Gives `path` and everything beneath it (symbolic links themselves, not their targets)
/// to `uid`, so a scratch tree built by root belongs to the identity under test.
pub fn chown_tree(path: &Path, uid: u32) {
    chown_tree_except(path, uid, None);
}

/// [`chown_tree`], leaving `keep` (and what is beneath it) with its owner: a fixture that
/// must stay root's inside a tree handed to the user.
pub fn chown_tree_except(path: &Path, uid: u32, keep: Option<&Path>) {
    if Some(path) == keep {
        return;
    }
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if fs::symlink_metadata(path).unwrap().is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            chown_tree_except(&entry.unwrap().path(), uid, keep);
        }
    }
}
