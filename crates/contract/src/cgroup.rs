//! cgroup v2 limits, where the host delegates a subtree to the runner.
//!
//! rlimits are per process (`RLIMIT_DATA`) or per uid (`RLIMIT_NPROC`); a cgroup bounds
//! the whole Contract's process tree at once, including page cache and kernel memory
//! rlimits never see. It is an extra layer, applied only when the kernel and the host
//! allow it, and always reported as present or absent with a reason.

use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use jaula_policy::limits::ContractLimits;
use rustix::fs::{access, openat, Access, Mode, OFlags, CWD};
use serde::Serialize;

use crate::error::{ContractError, Result};
use crate::floor::LimitInForce;

const CONTROLLERS: [&str; 2] = ["memory", "pids"];

/// Whether a delegated cgroup v2 subtree is usable for Contract limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CgroupStatus {
    /// Children of `parent` get `memory` and `pids` limits.
    Delegated {
        /// The cgroup directory under which per-spawn cgroups are created.
        parent: PathBuf,
    },
    /// Not here, and why.
    Unavailable {
        /// The reason.
        reason: String,
    },
}

/// Detect from this process's `/proc/self/mountinfo` and `/proc/self/cgroup`.
pub fn detect() -> CgroupStatus {
    let read = |p: &str| fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"));
    match (read("/proc/self/mountinfo"), read("/proc/self/cgroup")) {
        (Ok(mountinfo), Ok(cgroup)) => detect_in(&mountinfo, &cgroup),
        (Err(reason), _) | (_, Err(reason)) => CgroupStatus::Unavailable { reason },
    }
}

/// The cgroup2 mount point named in `mountinfo` (octal escapes decoded).
pub(crate) fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (pre, post) = line.split_once(" - ")?;
        if post.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        Some(PathBuf::from(unescape(pre.split_whitespace().nth(4)?)))
    })
}

fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            out.push(
                (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0'),
            );
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn has_controllers(dir: &Path, file: &str) -> std::result::Result<(), String> {
    let path = dir.join(file);
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let present: Vec<&str> = text.split_whitespace().collect();
    for c in CONTROLLERS {
        if !present.contains(&c) {
            return Err(format!("{} does not list {c}", path.display()));
        }
    }
    Ok(())
}

/// A parent is usable when it distributes `memory` and `pids` to its children
/// (`cgroup.subtree_control`) and this process may create children in it. Enabling
/// controllers is the host's delegation step, not ours: cgroup v2's no-internal-process
/// rule forbids it in the cgroup the runner itself sits in.
fn usable_parent(dir: &Path) -> std::result::Result<(), String> {
    has_controllers(dir, "cgroup.subtree_control")?;
    access(dir, Access::WRITE_OK | Access::EXEC_OK)
        .map_err(|e| format!("{} is not writable by this process: {e}", dir.display()))
}

/// [`detect`] on given file contents: the runner's own cgroup, else its parent (the
/// usual shape of a systemd `Delegate=yes` unit whose runner moved into a leaf).
pub fn detect_in(mountinfo: &str, proc_self_cgroup: &str) -> CgroupStatus {
    let Some(mount) = cgroup2_mount(mountinfo) else {
        return CgroupStatus::Unavailable {
            reason: "no cgroup2 filesystem is mounted".into(),
        };
    };
    let Some(own) = proc_self_cgroup.lines().find_map(|l| l.strip_prefix("0::")) else {
        return CgroupStatus::Unavailable {
            reason: "this process has no cgroup v2 membership (0::) line".into(),
        };
    };
    let own_dir = mount.join(own.trim_start_matches('/'));
    if let Err(reason) = has_controllers(&own_dir, "cgroup.controllers") {
        return CgroupStatus::Unavailable {
            reason: format!("{reason} (controllers still bound to cgroup v1, or not delegated)"),
        };
    }
    let mut reasons = Vec::new();
    let candidates = [
        Some(own_dir.clone()),
        own_dir
            .parent()
            .filter(|p| p.starts_with(&mount))
            .map(Path::to_path_buf),
    ];
    for dir in candidates.into_iter().flatten() {
        match usable_parent(&dir) {
            Ok(()) => return CgroupStatus::Delegated { parent: dir },
            Err(r) => reasons.push(r),
        }
    }
    CgroupStatus::Unavailable {
        reason: reasons.join("; "),
    }
}

/// One cgroup created for a Contract's spawn, with its limits written.
#[derive(Debug)]
pub struct ContractCgroup {
    path: PathBuf,
    procs: OwnedFd,
    limits: ContractLimits,
}

fn write_file(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value).map_err(|e| ContractError::Cgroup {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

impl ContractCgroup {
    /// Create `parent/name` and write `memory.max` and `pids.max`. The directory must not
    /// exist yet: reusing one could inherit a process another spawn left in it.
    pub fn create(parent: &Path, name: &str, limits: &ContractLimits) -> Result<ContractCgroup> {
        if !crate::ids::is_safe_segment(name) {
            return Err(ContractError::Cgroup {
                path: parent.join(name),
                reason: "not a safe cgroup name".into(),
            });
        }
        let path = parent.join(name);
        fs::create_dir(&path).map_err(|e| ContractError::Cgroup {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let setup = || -> Result<OwnedFd> {
            write_file(
                &path.join("memory.max"),
                &limits.max_memory_bytes.to_string(),
            )?;
            // Swap would let a Contract exceed memory.max by paging out.
            if path.join("memory.swap.max").exists() {
                write_file(&path.join("memory.swap.max"), "0")?;
            }
            write_file(&path.join("pids.max"), &limits.max_processes.to_string())?;
            let procs = path.join("cgroup.procs");
            openat(CWD, &procs, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()).map_err(|e| {
                ContractError::Cgroup {
                    path: procs.clone(),
                    reason: std::io::Error::from(e).to_string(),
                }
            })
        };
        match setup() {
            Ok(procs) => Ok(ContractCgroup {
                path,
                procs,
                limits: *limits,
            }),
            Err(e) => {
                let _ = fs::remove_dir(&path);
                Err(e)
            }
        }
    }

    /// Move the calling process into this cgroup. Writing `0` to `cgroup.procs` names the
    /// writer; it is one `write(2)` on an fd opened before fork, so it is safe between
    /// fork and exec, and the command starts already inside its limits.
    pub fn enter(&self) -> std::io::Result<()> {
        rustix::io::write(&self.procs, b"0")?;
        Ok(())
    }

    /// The open `cgroup.procs`, for a spawn that moves itself in (the kernel checks the
    /// opener's credentials, so a descriptor opened by the runner works for the tenant).
    pub fn procs_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.procs.as_fd()
    }

    /// The cgroup directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The limits it enforces.
    pub fn limits_in_force(&self) -> Vec<LimitInForce> {
        vec![
            LimitInForce {
                name: "memory.max".into(),
                value: self.limits.max_memory_bytes,
                enforced: true,
                note: None,
            },
            LimitInForce {
                name: "pids.max".into(),
                value: self.limits.max_processes,
                enforced: true,
                note: None,
            },
        ]
    }

    /// Remove the cgroup once every process in it has exited (the kernel refuses with
    /// EBUSY otherwise).
    pub fn remove(self) -> Result<()> {
        drop(self.procs);
        fs::remove_dir(&self.path).map_err(|e| ContractError::Cgroup {
            path: self.path.clone(),
            reason: e.to_string(),
        })
    }
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
