//! Step 3 of the launch sequence: become the plan's identity, a Contract's own uid and gid.
//!
//! A Contract's spawn is planned by the runner (root), which must outlive the command to
//! record it. So the stage it starts begins as root: it moves into the limits and the
//! cgroup first (both still need the runner's rights), then becomes the tenant here, before
//! anything the tenant could influence runs. Every later step (the network namespace,
//! hardening, Landlock, the socket gate, seccomp) then runs exactly as for any
//! unprivileged user.

use serde::{Deserialize, Serialize};

/// A uid and gid to run as. Supplementary groups: none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The real, effective and saved uid after the switch.
    pub uid: u32,
    /// The real, effective and saved gid after the switch.
    pub gid: u32,
}

/// Why the switch failed. Nothing of the command has run then.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// `setgroups(0, NULL)` failed (it needs CAP_SETGID).
    #[error("cannot clear the supplementary groups: {0}")]
    Groups(std::io::Error),
    /// `setresgid` failed.
    #[error("cannot switch to gid {gid}: {source}")]
    Gid {
        /// The gid asked for.
        gid: u32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// `setresuid` failed.
    #[error("cannot switch to uid {uid}: {source}")]
    Uid {
        /// The uid asked for.
        uid: u32,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// `prctl(PR_SET_DUMPABLE, 1)` failed.
    #[error("cannot make the process traceable by its own uid again: {0}")]
    Dumpable(std::io::Error),
    /// The calls returned, yet the process still holds another id: refuse rather than run
    /// the tenant's command with the runner's rights.
    #[error(
        "asked for uid {want_uid} gid {want_gid} without groups, but the process holds uids \
         {uids:?}, gids {gids:?}, groups {groups:?}"
    )]
    NotSwitched {
        /// The uid asked for.
        want_uid: u32,
        /// The gid asked for.
        want_gid: u32,
        /// Real, effective, saved uid afterwards.
        uids: [u32; 3],
        /// Real, effective, saved gid afterwards.
        gids: [u32; 3],
        /// The supplementary groups afterwards.
        groups: Vec<u32>,
    },
}

/// Become `identity`: no supplementary groups, then the gid, then the uid (in that order:
/// once the uid is not root's, the process may change neither of the others). Each call
/// goes through the C library, which applies it to every thread of the process, not only
/// to the calling one; then the result is read back and checked.
pub(crate) fn become_identity(identity: Identity) -> Result<(), IdentityError> {
    let Identity { uid, gid } = identity;
    // SAFETY: setgroups with a count of 0 does not read the (null) list pointer.
    if unsafe { libc::setgroups(0, std::ptr::null()) } != 0 {
        return Err(IdentityError::Groups(std::io::Error::last_os_error()));
    }
    // SAFETY: plain integer arguments; the C library applies the change to every thread.
    if unsafe { libc::setresgid(gid, gid, gid) } != 0 {
        return Err(IdentityError::Gid {
            gid,
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: as above.
    if unsafe { libc::setresuid(uid, uid, uid) } != 0 {
        return Err(IdentityError::Uid {
            uid,
            source: std::io::Error::last_os_error(),
        });
    }
    // Leaving root made the kernel mark the process non-dumpable, which also keeps a
    // process of the same uid from ptrace-attaching to it; the socket gate's supervisor
    // (this process after its fork) needs exactly that access to its child to take the
    // filter's listener. Restore what a process exec'd as the tenant has: the hardening
    // step decides about core dumps afterwards, as for every launch.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable)
        .map_err(|e| IdentityError::Dumpable(e.into()))?;
    let held = held_ids();
    if held.uids != [uid; 3] || held.gids != [gid; 3] || !held.groups.is_empty() {
        return Err(IdentityError::NotSwitched {
            want_uid: uid,
            want_gid: gid,
            uids: held.uids,
            gids: held.gids,
            groups: held.groups,
        });
    }
    Ok(())
}

/// The ids this process holds, as the kernel reports them.
struct HeldIds {
    uids: [u32; 3],
    gids: [u32; 3],
    groups: Vec<u32>,
}

fn held_ids() -> HeldIds {
    let (mut ruid, mut euid, mut suid) = (0, 0, 0);
    let (mut rgid, mut egid, mut sgid) = (0, 0, 0);
    // SAFETY: each pointer is to a live local of the type the call writes.
    unsafe {
        libc::getresuid(&mut ruid, &mut euid, &mut suid);
        libc::getresgid(&mut rgid, &mut egid, &mut sgid);
    }
    let groups = rustix::process::getgroups()
        .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
        // Unreadable groups count as held: the check above then refuses.
        .unwrap_or_else(|_| vec![u32::MAX]);
    HeldIds {
        uids: [ruid, euid, suid],
        gids: [rgid, egid, sgid],
        groups,
    }
}
