//! The hardening steps on Linux: the kernel calls behind each step of [`super::harden`]
//! (descriptors, capabilities and their bounding and ambient sets, securebits, core
//! dumps) and the check that they hold.

use super::*;

use rustix::io::Errno;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use rustix::thread::{self, CapabilitiesSecureBits, CapabilitySet, CapabilitySets};

const CAP_LAST_CAP_PATH: &str = "/proc/sys/kernel/cap_last_cap";
const PROC_SELF_FD: &str = "/proc/self/fd";
const CAP_SETPCAP: u32 = 8;

fn io_err(errno: Errno) -> io::Error {
    io::Error::from_raw_os_error(errno.raw_os_error())
}

fn cap_bit(cap: u32) -> CapabilitySet {
    CapabilitySet::from_bits_retain(1u64 << cap)
}

pub(super) fn validate_keep_fds(keep_fds: &[RawFd]) -> Result<Vec<u32>, HardeningError> {
    let mut valid = Vec::with_capacity(keep_fds.len());
    for &fd in keep_fds {
        let number = u32::try_from(fd).map_err(|_| HardeningError::InvalidKeepFd { fd })?;
        if fd_flags(fd).is_none() {
            return Err(HardeningError::KeepFdNotOpen { fd });
        }
        valid.push(number);
    }
    Ok(valid)
}

/// `fcntl(F_GETFD)`: `None` when the number is not an open descriptor.
fn fd_flags(fd: RawFd) -> Option<libc::c_int> {
    // SAFETY: F_GETFD takes no argument and only reads the descriptor table; on a
    // number that is not open the kernel returns EBADF without side effects.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (flags >= 0).then_some(flags)
}

fn set_fd_flags(fd: RawFd, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: F_SETFD only changes the descriptor's FD_CLOEXEC flag. It neither closes
    // nor duplicates the descriptor, so no Rust owner of it is invalidated.
    let result = unsafe { libc::fcntl(fd, libc::F_SETFD, flags) };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) fn cap_last_cap() -> (u32, CapLastCapSource) {
    match std::fs::read_to_string(CAP_LAST_CAP_PATH)
        .ok()
        .as_deref()
        .and_then(parse_cap_last_cap)
    {
        Some(cap) => (cap, CapLastCapSource::Procfs),
        None => {
            // PR_CAPBSET_READ answers EINVAL exactly for numbers above cap_last_cap
            // (kernel/sys.c via cap_valid), whether or not the bit is set.
            let exists = |cap: u32| thread::capability_is_in_bounding_set(cap_bit(cap)).is_ok();
            (
                probe_cap_last_cap(COMPILED_CAP_LAST_CAP, exists),
                CapLastCapSource::Probed,
            )
        }
    }
}

fn has_effective(cap: u32) -> Result<bool, HardeningError> {
    let sets = thread::capabilities(None)
        .map_err(|e| HardeningError::ReadCapabilities { source: io_err(e) })?;
    Ok(sets.effective.contains(cap_bit(cap)))
}

const WHY_SETPCAP_IS_NOT_NEEDED: &str =
    "(no CAP_SETPCAP to change it here); safe as it is: no_new_privs makes execve \
     intersect the new permitted set with the current one, which is empty once the \
     capabilities step has run, so no capability can come back";

pub(super) fn lock_securebits() -> Result<(Outcome, String), HardeningError> {
    let current = thread::capabilities_secure_bits()
        .map_err(|e| HardeningError::ReadSecurebits { source: io_err(e) })?
        .bits();
    if current == LOCKED_SECUREBITS {
        return Ok((
            Outcome::AlreadyInPlace,
            "NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE set, KEEP_CAPS off, all locked"
                .to_owned(),
        ));
    }
    let wanted = CapabilitiesSecureBits::from_bits_retain(LOCKED_SECUREBITS);
    match thread::set_capabilities_secure_bits(wanted) {
        Ok(()) => Ok((
            Outcome::Applied,
            "NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE set, KEEP_CAPS off, all locked"
                .to_owned(),
        )),
        Err(Errno::PERM) if !has_effective(CAP_SETPCAP)? => Ok((
            Outcome::NotPermitted,
            format!("left at {current:#x} {WHY_SETPCAP_IS_NOT_NEEDED}"),
        )),
        Err(e) => Err(HardeningError::SetSecurebits {
            current,
            wanted: LOCKED_SECUREBITS,
            source: io_err(e),
        }),
    }
}

/// The calling thread's status: capabilities are per thread, and `/proc/self` would
/// show the main thread's, which is not the one `harden` runs on when it is called
/// from another (the live tests do that).
const PROC_THREAD_SELF_STATUS: &str = "/proc/thread-self/status";

/// The bounding and ambient sets from one read of `/proc/thread-self/status` (four
/// system calls where asking `prctl` costs one per capability per set); `None` when
/// /proc is not there or does not say, and the callers ask `prctl` instead.
fn status_caps() -> Option<StatusCaps> {
    use std::io::Read;
    let mut file = std::fs::File::open(PROC_THREAD_SELF_STATUS).ok()?;
    // The whole file is about 1.5 KiB; the capability lines sit in its middle.
    let mut buf = [0u8; 8192];
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return None,
        }
    }
    parse_status_caps(std::str::from_utf8(&buf[..len]).ok()?)
}

fn bounding_set(last: u32) -> Result<Vec<u32>, HardeningError> {
    if let Some(caps) = status_caps() {
        return Ok(caps_in(caps.bounding, last));
    }
    let mut present = Vec::new();
    for cap in 0..=last {
        let held = thread::capability_is_in_bounding_set(cap_bit(cap)).map_err(|e| {
            HardeningError::ReadBoundingSet {
                cap,
                source: io_err(e),
            }
        })?;
        if held {
            present.push(cap);
        }
    }
    Ok(present)
}

pub(super) fn drop_bounding_set(last: u32) -> Result<(Outcome, String), HardeningError> {
    let present = bounding_set(last)?;
    if present.is_empty() {
        return Ok((Outcome::AlreadyInPlace, "empty".to_owned()));
    }
    let count = present.len();
    for cap in present {
        match thread::remove_capability_from_bounding_set(cap_bit(cap)) {
            Ok(()) => {}
            Err(Errno::PERM) if !has_effective(CAP_SETPCAP)? => {
                return Ok((
                    Outcome::NotPermitted,
                    format!("{count} capabilities left {WHY_SETPCAP_IS_NOT_NEEDED}"),
                ));
            }
            Err(e) => {
                return Err(HardeningError::DropBoundingSet {
                    cap,
                    source: io_err(e),
                })
            }
        }
    }
    Ok((Outcome::Applied, format!("{count} capabilities dropped")))
}

/// Ambient capabilities held, or `None` on a kernel without an ambient set.
fn ambient_set(last: u32) -> Result<Option<Vec<u32>>, HardeningError> {
    if let Some(StatusCaps {
        ambient: Some(mask),
        ..
    }) = status_caps()
    {
        return Ok(Some(caps_in(mask, last)));
    }
    // No CapAmb line (or no /proc): ask the kernel, which also tells a kernel without
    // an ambient set apart.
    let mut present = Vec::new();
    for cap in 0..=last {
        match thread::capability_is_in_ambient_set(cap_bit(cap)) {
            Ok(true) => present.push(cap),
            Ok(false) => {}
            // Before Linux 4.3 PR_CAP_AMBIENT itself is unknown.
            Err(Errno::INVAL) if cap == 0 => return Ok(None),
            Err(e) => {
                return Err(HardeningError::ReadAmbientSet {
                    cap,
                    source: io_err(e),
                })
            }
        }
    }
    Ok(Some(present))
}

pub(super) fn clear_ambient_set(last: u32) -> Result<(Outcome, String), HardeningError> {
    match ambient_set(last)? {
        None => Ok((
            Outcome::Unsupported,
            "kernel older than 4.3 has no ambient set".to_owned(),
        )),
        Some(present) if present.is_empty() => Ok((Outcome::AlreadyInPlace, "empty".to_owned())),
        Some(present) => {
            thread::clear_ambient_capability_set()
                .map_err(|e| HardeningError::ClearAmbientSet { source: io_err(e) })?;
            Ok((
                Outcome::Applied,
                format!("{} capabilities cleared", present.len()),
            ))
        }
    }
}

fn read_capabilities() -> Result<CapabilitySets, HardeningError> {
    thread::capabilities(None).map_err(|e| HardeningError::ReadCapabilities { source: io_err(e) })
}

fn all_empty(sets: &CapabilitySets) -> bool {
    sets.effective.is_empty() && sets.permitted.is_empty() && sets.inheritable.is_empty()
}

pub(super) fn clear_capabilities() -> Result<(Outcome, String), HardeningError> {
    let before = read_capabilities()?;
    if all_empty(&before) {
        return Ok((
            Outcome::AlreadyInPlace,
            "effective, permitted and inheritable empty".to_owned(),
        ));
    }
    let empty = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    thread::set_capabilities(None, empty)
        .map_err(|e| HardeningError::ClearCapabilities { source: io_err(e) })?;
    Ok((
        Outcome::Applied,
        format!(
            "effective, permitted and inheritable emptied (permitted was {:#x})",
            before.permitted.bits()
        ),
    ))
}

pub(super) fn set_no_new_privs() -> Result<(Outcome, String), HardeningError> {
    let already =
        thread::no_new_privs().map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })?;
    if already {
        return Ok((Outcome::AlreadyInPlace, "set".to_owned()));
    }
    thread::set_no_new_privs(true).map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })?;
    Ok((Outcome::Applied, "set".to_owned()))
}

const NO_CORE: Rlimit = Rlimit {
    current: Some(0),
    maximum: Some(0),
};

pub(super) fn disable_core_dumps() -> Result<(Outcome, String), HardeningError> {
    if getrlimit(Resource::Core) == NO_CORE {
        return Ok((Outcome::AlreadyInPlace, "RLIMIT_CORE 0/0".to_owned()));
    }
    setrlimit(Resource::Core, NO_CORE)
        .map_err(|e| HardeningError::CoreLimit { source: io_err(e) })?;
    Ok((Outcome::Applied, "RLIMIT_CORE 0/0".to_owned()))
}

fn close_range_cloexec(first: u32, last: u32) -> io::Result<()> {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC takes integers only and sets
    // FD_CLOEXEC on open descriptors in the range; it closes nothing now, so no Rust
    // owner of a descriptor is invalidated.
    let result = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            last,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) fn mark_inherited_fds_cloexec(
    keep_fds: &[u32],
) -> Result<(Outcome, String), HardeningError> {
    for &fd in keep_fds.iter().filter(|fd| **fd > 2) {
        // validate_keep_fds proved it fits and is open.
        let raw = fd as RawFd;
        let flags = fd_flags(raw).ok_or(HardeningError::KeepFdNotOpen { fd: raw })?;
        set_fd_flags(raw, flags & !libc::FD_CLOEXEC)
            .map_err(|source| HardeningError::KeepFdInheritable { fd: raw, source })?;
    }
    let what = describe_fds(keep_fds);
    for (first, last) in cloexec_ranges(keep_fds) {
        match close_range_cloexec(first, last) {
            Ok(()) => {}
            // ENOSYS: no close_range (before 5.9); EINVAL: no CLOSE_RANGE_CLOEXEC
            // (before 5.11). Both only happen on the first call, before any marking.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) => {
                let marked = mark_listed_fds_cloexec(keep_fds)?;
                return Ok((
                    Outcome::Applied,
                    format!("{what} marked close-on-exec ({marked} via {PROC_SELF_FD})"),
                ));
            }
            Err(source) => {
                return Err(HardeningError::CloseRange {
                    first,
                    last,
                    source,
                })
            }
        }
    }
    Ok((
        Outcome::Applied,
        format!("{what} marked close-on-exec (close_range)"),
    ))
}

/// The fallback: every descriptor /proc lists. Fails closed when /proc is missing.
pub(super) fn mark_listed_fds_cloexec(keep_fds: &[u32]) -> Result<usize, HardeningError> {
    let list_error = |source| HardeningError::ListFds {
        path: PathBuf::from(PROC_SELF_FD),
        source,
    };
    // Collect first: the directory's own descriptor is open while iterating and is
    // gone afterwards (EBADF below), and marking while listing is not needed.
    let mut fds = Vec::new();
    for entry in std::fs::read_dir(PROC_SELF_FD).map_err(list_error)? {
        let entry = entry.map_err(list_error)?;
        if let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        {
            if fd > 2 && !keep_fds.contains(&fd) {
                fds.push(fd);
            }
        }
    }
    let mut marked = 0;
    for fd in fds {
        let Ok(raw) = RawFd::try_from(fd) else {
            continue;
        };
        let Some(flags) = fd_flags(raw) else { continue };
        set_fd_flags(raw, flags | libc::FD_CLOEXEC)
            .map_err(|source| HardeningError::MarkFd { fd: raw, source })?;
        marked += 1;
    }
    Ok(marked)
}

pub(super) fn verify(report: &HardeningReport) -> Result<(), HardeningError> {
    let fail = |what: String| Err(HardeningError::Verification { what });
    let sets = read_capabilities()?;
    if !all_empty(&sets) {
        return fail(format!(
            "capabilities remain: effective {:#x}, permitted {:#x}, inheritable {:#x}",
            sets.effective.bits(),
            sets.permitted.bits(),
            sets.inheritable.bits()
        ));
    }
    if report.outcome(Step::AmbientSet) != Some(Outcome::Unsupported) {
        if let Some(present) = ambient_set(report.cap_last_cap)?.filter(|p| !p.is_empty()) {
            return fail(format!("ambient capabilities remain: {present:?}"));
        }
    }
    if matches!(
        report.outcome(Step::BoundingSet),
        Some(Outcome::Applied | Outcome::AlreadyInPlace)
    ) {
        let present = bounding_set(report.cap_last_cap)?;
        if !present.is_empty() {
            return fail(format!("bounding set still holds {present:?}"));
        }
    }
    if matches!(
        report.outcome(Step::Securebits),
        Some(Outcome::Applied | Outcome::AlreadyInPlace)
    ) {
        let bits = thread::capabilities_secure_bits()
            .map_err(|e| HardeningError::ReadSecurebits { source: io_err(e) })?
            .bits();
        if bits != LOCKED_SECUREBITS {
            return fail(format!(
                "securebits are {bits:#x}, wanted {LOCKED_SECUREBITS:#x}"
            ));
        }
    }
    if !thread::no_new_privs().map_err(|e| HardeningError::NoNewPrivs { source: io_err(e) })? {
        return fail("no_new_privs is not set".to_owned());
    }
    if getrlimit(Resource::Core) != NO_CORE {
        return fail("RLIMIT_CORE is not 0/0".to_owned());
    }
    Ok(())
}
