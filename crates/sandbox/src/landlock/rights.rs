//! Landlock's filesystem rights and scopes as plain data, so a [`Plan`](super::Plan) stays
//! pure, comparable and printable; `enforce.rs` alone translates them for the kernel.

use std::fmt;

use serde::{Serialize, Serializer};

/// One filesystem access right. The names and the ABI that introduced each one follow
/// `include/uapi/linux/landlock.h`; `LANDLOCK_ACCESS_FS_RESOLVE_UNIX` (ABI 9) is not used:
/// the policy says nothing about which path sockets a cage may connect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Right {
    /// `LANDLOCK_ACCESS_FS_EXECUTE`: execute a file.
    Execute,
    /// `LANDLOCK_ACCESS_FS_WRITE_FILE`: open a file for writing.
    WriteFile,
    /// `LANDLOCK_ACCESS_FS_READ_FILE`: open a file for reading.
    ReadFile,
    /// `LANDLOCK_ACCESS_FS_READ_DIR`: open a directory or list its entries.
    ReadDir,
    /// `LANDLOCK_ACCESS_FS_REMOVE_DIR`: remove an empty directory or rename one.
    RemoveDir,
    /// `LANDLOCK_ACCESS_FS_REMOVE_FILE`: unlink or rename a file.
    RemoveFile,
    /// `LANDLOCK_ACCESS_FS_MAKE_CHAR`: create a character device.
    MakeChar,
    /// `LANDLOCK_ACCESS_FS_MAKE_DIR`: create or rename a directory.
    MakeDir,
    /// `LANDLOCK_ACCESS_FS_MAKE_REG`: create, rename or link a regular file.
    MakeReg,
    /// `LANDLOCK_ACCESS_FS_MAKE_SOCK`: create a unix socket (`bind` to a path).
    MakeSock,
    /// `LANDLOCK_ACCESS_FS_MAKE_FIFO`: create a named pipe.
    MakeFifo,
    /// `LANDLOCK_ACCESS_FS_MAKE_BLOCK`: create a block device.
    MakeBlock,
    /// `LANDLOCK_ACCESS_FS_MAKE_SYM`: create a symbolic link.
    MakeSym,
    /// `LANDLOCK_ACCESS_FS_REFER` (ABI 2): link or rename a file into another directory.
    /// Without it handled, such a move is always refused.
    Refer,
    /// `LANDLOCK_ACCESS_FS_TRUNCATE` (ABI 3): truncate a file (`truncate`, `O_TRUNC`).
    Truncate,
    /// `LANDLOCK_ACCESS_FS_IOCTL_DEV` (ABI 5): `ioctl(2)` on a character or block device.
    IoctlDev,
}

impl Right {
    /// Every right, in the kernel's bit order.
    pub(crate) const ALL: [Right; 16] = [
        Right::Execute,
        Right::WriteFile,
        Right::ReadFile,
        Right::ReadDir,
        Right::RemoveDir,
        Right::RemoveFile,
        Right::MakeChar,
        Right::MakeDir,
        Right::MakeReg,
        Right::MakeSock,
        Right::MakeFifo,
        Right::MakeBlock,
        Right::MakeSym,
        Right::Refer,
        Right::Truncate,
        Right::IoctlDev,
    ];

    const fn bit(self) -> u32 {
        1 << (self as u32)
    }

    /// The right's name as `--verbose` and `explain` print it: the kernel's, in kebab case.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Right::Execute => "execute",
            Right::WriteFile => "write-file",
            Right::ReadFile => "read-file",
            Right::ReadDir => "read-dir",
            Right::RemoveDir => "remove-dir",
            Right::RemoveFile => "remove-file",
            Right::MakeChar => "make-char",
            Right::MakeDir => "make-dir",
            Right::MakeReg => "make-reg",
            Right::MakeSock => "make-sock",
            Right::MakeFifo => "make-fifo",
            Right::MakeBlock => "make-block",
            Right::MakeSym => "make-sym",
            Right::Refer => "refer",
            Right::Truncate => "truncate",
            Right::IoctlDev => "ioctl-dev",
        }
    }

    /// The first Landlock ABI that can handle this right.
    pub(crate) fn since_abi(self) -> u32 {
        match self {
            Right::Refer => 2,
            Right::Truncate => 3,
            Right::IoctlDev => 5,
            _ => 1,
        }
    }
}

/// A set of [`Right`]s. Plain bits, so a plan compares, hashes and prints without the
/// kernel; only `enforce.rs` turns a set into the `landlock` crate's flags.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Rights(u32);

const fn set(rights: &[Right]) -> Rights {
    let mut bits = 0;
    let mut i = 0;
    while i < rights.len() {
        bits |= rights[i].bit();
        i += 1;
    }
    Rights(bits)
}

impl Rights {
    /// No right at all.
    pub(crate) const EMPTY: Rights = Rights(0);
    /// Reading, listing and executing: everything `decide` calls a read.
    pub const READ: Rights = set(&[Right::Execute, Right::ReadFile, Right::ReadDir]);
    /// Everything `decide` calls a write or a create. `REFER` is only ever granted together
    /// with the rest of these, so a file can only be linked or renamed between two places
    /// that are both writable; the kernel adds that the file may not gain rights by moving.
    pub const WRITE: Rights = set(&[
        Right::WriteFile,
        Right::RemoveDir,
        Right::RemoveFile,
        Right::MakeChar,
        Right::MakeDir,
        Right::MakeReg,
        Right::MakeSock,
        Right::MakeFifo,
        Right::MakeBlock,
        Right::MakeSym,
        Right::Refer,
        Right::Truncate,
    ]);
    /// The rights that mean something on a non-directory; the kernel refuses the others on
    /// a file rule with `EINVAL`.
    pub(crate) const FILE: Rights = set(&[
        Right::Execute,
        Right::WriteFile,
        Right::ReadFile,
        Right::Truncate,
        Right::IoctlDev,
    ]);
    /// Everything this layer asks the kernel to handle.
    pub const HANDLED: Rights = Rights(Rights::READ.0 | Rights::WRITE.0 | Right::IoctlDev.bit());
    /// The filesystem rights of ABI 1: the hard floor.
    pub(crate) const FLOOR: Rights = set(&[
        Right::Execute,
        Right::WriteFile,
        Right::ReadFile,
        Right::ReadDir,
        Right::RemoveDir,
        Right::RemoveFile,
        Right::MakeChar,
        Right::MakeDir,
        Right::MakeReg,
        Right::MakeSock,
        Right::MakeFifo,
        Right::MakeBlock,
        Right::MakeSym,
    ]);

    /// The set holding `right` alone.
    pub(crate) const fn single(right: Right) -> Rights {
        Rights(right.bit())
    }
    /// Whether every right of `other` is in this set.
    pub fn contains(self, other: Rights) -> bool {
        self.0 & other.0 == other.0
    }
    /// Whether `right` is in this set.
    pub fn has(self, right: Right) -> bool {
        self.0 & right.bit() != 0
    }
    /// Whether the set holds no right: a rule with none is never added.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The rights in the set, in the kernel's bit order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Right> {
        Right::ALL.into_iter().filter(move |r| self.has(*r))
    }
    /// The rights a kernel with Landlock ABI `abi` can handle.
    pub fn available_at(self, abi: u32) -> Rights {
        self.iter()
            .filter(|r| r.since_abi() <= abi)
            .fold(Rights::EMPTY, |acc, r| acc | Rights::single(r))
    }
}

impl std::ops::BitOr for Rights {
    type Output = Rights;
    fn bitor(self, rhs: Rights) -> Rights {
        Rights(self.0 | rhs.0)
    }
}
impl std::ops::BitOrAssign for Rights {
    fn bitor_assign(&mut self, rhs: Rights) {
        self.0 |= rhs.0;
    }
}
impl std::ops::BitAnd for Rights {
    type Output = Rights;
    fn bitand(self, rhs: Rights) -> Rights {
        Rights(self.0 & rhs.0)
    }
}
impl std::ops::Sub for Rights {
    type Output = Rights;
    fn sub(self, rhs: Rights) -> Rights {
        Rights(self.0 & !rhs.0)
    }
}

impl fmt::Display for Rights {
    /// `read` and `write` for the two usual bundles, the right names otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = *self;
        let mut parts: Vec<&str> = Vec::new();
        // On a file rule the bundles are their file-only parts.
        let file_only = (*self - Rights::FILE).is_empty();
        let scope = if file_only {
            Rights::FILE
        } else {
            Rights::HANDLED
        };
        for (bundle, name) in [
            (Rights::READ & scope, "read"),
            (Rights::WRITE & scope, "write"),
        ] {
            if rest.contains(bundle) {
                parts.push(name);
                rest = rest - bundle;
            }
        }
        parts.extend(rest.iter().map(Right::name));
        if parts.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&parts.join("+"))
    }
}

impl fmt::Debug for Rights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(Right::name))
            .finish()
    }
}

impl Serialize for Rights {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// An ABI 6 scope: IPC that may not leave the cage's Landlock domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ScopeKind {
    /// No signal to a process outside the domain (`kill`, `tgkill`, `F_SETOWN` targets).
    Signal,
    /// No `connect`/`sendto` to an abstract unix socket bound outside the domain.
    AbstractUnixSocket,
}

impl ScopeKind {
    /// Every scope this layer asks for.
    pub const ALL: [ScopeKind; 2] = [ScopeKind::Signal, ScopeKind::AbstractUnixSocket];

    /// The scope's name as `--verbose` and `jaula check` print it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ScopeKind::Signal => "signal",
            ScopeKind::AbstractUnixSocket => "abstract-unix-socket",
        }
    }

    /// The first Landlock ABI that has the scope: 6 for both.
    pub(crate) fn since_abi(self) -> u32 {
        6
    }
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
