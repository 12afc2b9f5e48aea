//! A model of the mount view an argv builds: which operation governs a path, and whether
//! an access there reaches the host's file. `jaula explain` prints it; the live test holds
//! it to what the kernel did.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use jaula_policy::paths::{display_with_tilde, is_within, normalize_lexically};
use jaula_policy::Access;

use jaula_policy::HostFs;

use super::BwrapError;

/// What the cage's mount view does to one access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewEffect {
    /// Read: the content comes from the host's file. Write and create: the change lands on
    /// the host. Always about the mount view only; file permissions may still refuse.
    pub reaches_host: bool,
    /// The operation that governs the path, e.g. `--tmpfs ~/.ssh, --remount-ro ~/.ssh` or
    /// `--ro-bind / /`. For a create, the one governing the parent directory.
    pub op: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    /// The host's file at the same place (a bind of a host path).
    Host,
    /// Something the cage made: a tmpfs, its `/dev`, its `/proc`, `/dev/null`, or its own
    /// `/tmp` bound by descriptor.
    Cage,
}

#[derive(Clone, Debug)]
struct Mount {
    dest: PathBuf,
    content: Content,
    writable: bool,
    op: Vec<OsString>,
}

/// The mounts of one bubblewrap prefix, in the order bubblewrap applies them.
#[derive(Clone, Debug)]
pub struct MountView {
    mounts: Vec<Mount>,
    display_home: Option<PathBuf>,
}

impl MountView {
    /// Model `argv` (program first, no command), as [`render_argv`](super::render_argv)
    /// emits it. A `-try` bind whose source `disk` says does not exist is skipped, as
    /// bubblewrap skips it.
    pub fn from_argv(argv: &[OsString], disk: &dyn HostFs) -> Result<MountView, BwrapError> {
        let mut mounts: Vec<Mount> = Vec::new();
        let mut i = 1;
        while i < argv.len() {
            let op = argv[i].to_str().unwrap_or("");
            let arity = match op {
                "--unshare-pid" | "--die-with-parent" | "--unshare-net" => 0,
                "--dev" | "--tmpfs" | "--proc" | "--remount-ro" | "--cap-drop" | "--cap-add"
                | "--perms" | "--dir" => 1,
                "--bind" | "--bind-try" | "--ro-bind" | "--ro-bind-try" | "--bind-fd" => 2,
                _ => {
                    return Err(BwrapError::UnknownArgument {
                        arg: argv[i].clone(),
                        index: i,
                    })
                }
            };
            let Some(args) = argv.get(i + 1..i + 1 + arity) else {
                return Err(BwrapError::MissingArgument {
                    option: op.to_string(),
                    index: i,
                });
            };
            let text: Vec<OsString> = argv[i..i + 1 + arity].to_vec();
            i += 1 + arity;
            match op {
                // The cage's own directory (`/tmp` from the state home), not the host's
                // file at that path; writable, like a tmpfs.
                "--bind-fd" => mounts.push(Mount {
                    dest: absolute(&args[1]),
                    content: Content::Cage,
                    writable: true,
                    op: text,
                }),
                "--dev" | "--tmpfs" | "--proc" => mounts.push(Mount {
                    dest: absolute(&args[0]),
                    content: Content::Cage,
                    writable: op != "--proc",
                    op: text,
                }),
                "--remount-ro" => {
                    let dest = absolute(&args[0]);
                    // bubblewrap remounts the topmost mount at exactly that path.
                    if let Some(m) = mounts.iter_mut().rev().find(|m| m.dest == dest) {
                        m.writable = false;
                        m.op.push(OsString::from(","));
                        m.op.extend(text);
                    }
                }
                "--bind" | "--bind-try" | "--ro-bind" | "--ro-bind-try" => {
                    let source = Path::new(&args[0]);
                    // /dev/null is not asked about: bubblewrap looks it up in the host's
                    // own /dev, and a Linux host without it cannot run a shell, let alone
                    // a cage. Modelling its absence would only let a test double open a
                    // seal that the kernel keeps shut.
                    let dev_null = source == Path::new("/dev/null");
                    if op.ends_with("-try") && !dev_null && !disk.exists(source) {
                        continue;
                    }
                    let content = if dev_null {
                        Content::Cage
                    } else {
                        Content::Host
                    };
                    mounts.push(Mount {
                        dest: absolute(&args[1]),
                        content,
                        writable: !op.starts_with("--ro-"),
                        op: text,
                    });
                }
                _ => {}
            }
        }
        Ok(MountView {
            mounts,
            display_home: None,
        })
    }

    /// Show paths inside `home` as `~/…` in [`ViewEffect::op`].
    pub fn with_display_home(mut self, home: &Path) -> MountView {
        self.display_home = Some(home.to_path_buf());
        self
    }

    /// What the view does to `access` on `path` (canonical, absolute): the last mount whose
    /// destination covers it governs; for a create, the one covering the parent directory,
    /// because a new entry is made in its parent's filesystem.
    pub fn effect(&self, path: &Path, access: Access) -> ViewEffect {
        let path = normalize_lexically(&Path::new("/").join(path));
        let target = match access {
            Access::Create => path.parent().unwrap_or(Path::new("/")).to_path_buf(),
            Access::Read | Access::Write | Access::Connect => path,
        };
        let Some(mount) = self
            .mounts
            .iter()
            .rev()
            .find(|m| is_within(&target, &m.dest))
        else {
            return ViewEffect {
                reaches_host: true,
                op: "(no mount: the host's own view)".to_string(),
            };
        };
        let reaches_host = mount.content == Content::Host
            && match access {
                // A read-only mount does not stop connect(2): a host socket bound into
                // the view is reached whatever the mount's flags.
                Access::Read | Access::Connect => true,
                Access::Write | Access::Create => mount.writable,
            };
        ViewEffect {
            reaches_host,
            op: self.describe(&mount.op),
        }
    }

    fn describe(&self, op: &[OsString]) -> String {
        let mut out = String::new();
        for (i, arg) in op.iter().enumerate() {
            if i > 0 && arg != "," {
                out.push(' ');
            }
            let shown = match (&self.display_home, Path::new(arg).is_absolute()) {
                (Some(home), true) => display_with_tilde(Path::new(arg), home),
                _ => OsStr::new(arg).to_string_lossy().into_owned(),
            };
            out.push_str(&shown);
        }
        out
    }
}

fn absolute(arg: &OsStr) -> PathBuf {
    normalize_lexically(&Path::new("/").join(arg))
}
