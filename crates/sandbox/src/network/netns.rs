//! The kernel half of the network modes.
//!
//! - `enter_loopback_netns`: a new network namespace holding only `lo`, brought up. As
//!   root a bare `CLONE_NEWNET`; otherwise inside a new user namespace that maps the
//!   caller's own uid and gid, which is what lets an unprivileged process own a netns.
//! - `restrict_sockets`: where no namespace can be made (`none` only): Landlock ABI 4
//!   refuses every TCP bind and connect, and a seccomp filter refuses `socket(2)` for every
//!   family but `AF_UNIX`, which also takes UDP, raw and netlink sockets away. Unlike the
//!   namespace, this leaves the cage no loopback TCP/UDP of its own either.
//! - The hand-off for `allow`: the caged stage binds a listener on its own loopback and
//!   passes the descriptor over a unix socket to the proxy outside
//!   (`CageListeners::send`, `CageListeners::recv`). Sockets stay in the namespace
//!   they were created in (net/socket.c: `sock_create` takes `current->nsproxy->net_ns`),
//!   so the proxy accepts connections made inside the cage while dialling out from the
//!   host's namespace, and no forwarding process has to live in the cage. The same hand-off carries the
//!   steering listeners ([`CageListeners`]): ports 443 and 80 on [`STEERING_ADDRESS`].

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::process::Command;

use super::dns_stub::{self, StubAddresses};
use jaula_policy::network::STEERING_ADDRESS;

use serde::Serialize;

/// How [`enter_loopback_netns`] made the namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum NetnsKind {
    /// `CLONE_NEWNET` alone (the caller had CAP_SYS_ADMIN).
    NetOnly,
    /// `CLONE_NEWUSER | CLONE_NEWNET`, the caller's uid and gid mapped to themselves.
    WithUserNs,
}

/// Why the network layer could not be set up. The launch stops on every one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetnsError {
    /// `unshare(2)` refused: found before anything changed.
    #[error("cannot create a network namespace (unshare {flags}): {source}")]
    Unshare {
        /// The namespace flags asked for, as written in C.
        flags: &'static str,
        /// The kernel's refusal.
        source: io::Error,
    },
    /// Found before anything changed: the process is still in its old namespaces.
    #[error(
        "cannot map ids in a new user namespace: /proc/self/uid_map is not writable here: {source}"
    )]
    IdMapUnwritable {
        /// Why the map file cannot be written.
        source: io::Error,
    },
    /// Writing the new user namespace's uid map, gid map or `setgroups` failed, after the
    /// namespace was made.
    #[error("cannot write {path}: {source}")]
    IdMap {
        /// The `/proc/self` file.
        path: &'static str,
        /// The write's error.
        source: io::Error,
    },
    /// `lo` could not be brought up in the new namespace.
    #[error("cannot bring up the loopback interface in the new namespace: {source}")]
    Loopback {
        /// The `ioctl`'s error.
        source: io::Error,
    },
    /// The `none` fallback's Landlock TCP rules could not be applied.
    #[error("landlock cannot refuse TCP (needs ABI 4, Linux 6.7): {0}")]
    LandlockNet(String),
    /// The `none` fallback's socket-family filter could not be built or installed.
    #[error("cannot install the socket-family filter: {0}")]
    SocketFilter(String),
    /// Passing or taking a listener or log descriptor across the hand-off failed.
    #[error("cannot pass the proxy listener: {source}")]
    Handoff {
        /// What failed, with the descriptor when there is one.
        source: io::Error,
    },
    /// The DNS stub's sockets could not be bound, passed or taken.
    #[error("cannot set up the DNS stub: {source}")]
    DnsStub {
        /// What failed, with the descriptor when there is one.
        source: io::Error,
    },
}

impl NetnsError {
    /// The error was found before any namespace changed: the caller may carry on where
    /// it is. Any other error leaves the process half-moved, and the launch must stop.
    pub(crate) fn changed_nothing(&self) -> bool {
        matches!(
            self,
            NetnsError::Unshare { .. } | NetnsError::IdMapUnwritable { .. }
        )
    }
}

/// Move the calling process into a fresh network namespace whose only interface is `lo`.
///
/// Must be called while the process is single-threaded (unshare(2): `CLONE_NEWUSER`
/// fails with EINVAL in a multithreaded process) and before the seccomp layer, which
/// refuses namespace creation.
pub(crate) fn enter_loopback_netns() -> Result<NetnsKind, NetnsError> {
    enter(rustix::process::geteuid().is_root())
}

/// As [`enter_loopback_netns`], always inside a new user namespace of the caller's own
/// uid, whatever the caller's capabilities. Inside bubblewrap's view this is the only
/// namespace jaula's stage can own: bubblewrap maps uid 0 in an outer user namespace to
/// mount devpts (`--dev`) and runs the sandbox in a nested one, so the stage's
/// capabilities never reach bubblewrap's own network namespace, and binding ports 443 and
/// 80 for steering there fails with EACCES. In a namespace it creates itself the stage
/// holds every capability (dropped again by hardening before the command runs).
pub(crate) fn enter_loopback_netns_with_userns() -> Result<NetnsKind, NetnsError> {
    enter(false)
}

fn enter(net_only: bool) -> Result<NetnsKind, NetnsError> {
    let kind = if net_only {
        unshare(libc::CLONE_NEWNET, "CLONE_NEWNET")?;
        NetnsKind::NetOnly
    } else {
        // Where /proc is read-only (bubblewrap's view without its own /proc), the id maps
        // could not be written after unshare, leaving a namespace that maps nobody: find
        // that out before changing anything.
        rustix::fs::access("/proc/self/uid_map", rustix::fs::Access::WRITE_OK)
            .map_err(|e| NetnsError::IdMapUnwritable { source: e.into() })?;
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        unshare(
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET,
            "CLONE_NEWUSER|CLONE_NEWNET",
        )?;
        // setgroups must be denied before an unprivileged gid_map write is accepted
        // (user_namespaces(7), since Linux 3.19).
        write_proc("/proc/self/setgroups", "deny")?;
        write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
        write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
        NetnsKind::WithUserNs
    };
    loopback_up().map_err(|source| NetnsError::Loopback { source })?;
    Ok(kind)
}

fn unshare(flags: libc::c_int, name: &'static str) -> Result<(), NetnsError> {
    // SAFETY: unshare with only namespace flags changes which namespaces this process is
    // in; it touches no memory of ours (CLONE_FILES/CLONE_FS, which would, are not set).
    let rc = unsafe { libc::unshare(flags) };
    if rc != 0 {
        return Err(NetnsError::Unshare {
            flags: name,
            source: io::Error::last_os_error(),
        });
    }
    Ok(())
}

fn write_proc(path: &'static str, text: &str) -> Result<(), NetnsError> {
    std::fs::write(path, text).map_err(|source| NetnsError::IdMap { path, source })
}

/// `SIOCSIFFLAGS lo IFF_UP`: a new namespace's `lo` exists but is down, so even the
/// cage's own 127.0.0.1 would be unreachable (net/core/net_namespace.c creates it down).
fn loopback_up() -> io::Result<()> {
    let socket = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        None,
    )?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: `fd` is an open socket owned above; `req` is a valid ifreq that the kernel
    // reads the name from and writes the flags into.
    if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: ifru_flags is the member SIOCGIFFLAGS just filled in.
    unsafe {
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
    }
    // SAFETY: as above; SIOCSIFFLAGS reads the name and the flags.
    if unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What `restrict_sockets` enforced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct SocketRestriction {
    /// Whether Landlock refuses TCP bind and connect (ABI 4+).
    pub(crate) landlock_tcp: bool,
}

/// The `none` fallback where no namespace can be made: `socket(2)` refused with
/// EAFNOSUPPORT for every family but `AF_UNIX` (a second seccomp filter; filters stack
/// and the strictest answer wins), and Landlock's TCP rights handled with no port
/// granted, where the kernel has them. Needs no_new_privs (set by the hardening step).
#[cfg(target_os = "linux")]
pub(crate) fn restrict_sockets() -> Result<SocketRestriction, NetnsError> {
    use ::landlock::{
        Access, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetStatus, ABI,
    };
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessNet::from_all(ABI::V4))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self())
        .map_err(|e| NetnsError::LandlockNet(e.to_string()))?;
    let landlock_tcp = status.ruleset != RulesetStatus::NotEnforced;
    install_socket_family_filter().map_err(NetnsError::SocketFilter)?;
    Ok(SocketRestriction { landlock_tcp })
}

#[cfg(target_os = "linux")]
fn install_socket_family_filter() -> Result<(), String> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        other => return Err(format!("unsupported architecture {other}")),
    };
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(|e| e.to_string())?;
    let rule = SeccompRule::new(vec![not_unix]).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(
        [(libc::SYS_socket, vec![rule])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// The loopback port the proxy listens on inside the cage: fixed, because the namespace
/// is new and empty, so nothing else can hold it, and a fixed number keeps the proxy
/// variables the same from run to run.
const CAGE_PROXY_PORT: u16 = 3128;

// The ports steered at STEERING_ADDRESS: TLS judged on its server name, HTTP on its
// Host. Any other port there has no listener, so a connection to it is refused.
const STEERED_TLS_PORT: u16 = 443;
const STEERED_HTTP_PORT: u16 = 80;

/// Bind a listener in the cage's namespace, with a backlog large enough that a burst of
/// connections waits in the kernel rather than being refused.
fn bind_listener(address: Ipv4Addr, port: u16) -> io::Result<TcpListener> {
    let listener = TcpListener::bind(SocketAddrV4::new(address, port))?;
    rustix::net::listen(&listener, 1024)?;
    Ok(listener)
}

/// Bind the proxy's listener on the cage's own loopback.
fn bind_cage_listener() -> io::Result<TcpListener> {
    bind_listener(Ipv4Addr::LOCALHOST, CAGE_PROXY_PORT)
}

/// Every socket the caged stage binds in its namespace and hands to the proxy outside,
/// sent together in one message so the proxy never serves half of them.
#[derive(Debug)]
pub struct CageListeners {
    /// The proxy's own listener, named by the proxy variables.
    pub proxy: TcpListener,
    /// For clients that ignore the proxy variables; `None` where the stage could not
    /// bind the web ports (it said why), and such clients then reach nothing.
    pub steered: Option<SteeredListeners>,
}

/// The steering listeners, both bound on [`STEERING_ADDRESS`] in the cage's namespace.
#[derive(Debug)]
pub struct SteeredListeners {
    /// Port 443, judged on the TLS server name.
    pub tls: TcpListener,
    /// Port 80, judged on the HTTP Host.
    pub http: TcpListener,
}

impl CageListeners {
    /// The most descriptors the hand-off message carries.
    const MAX: usize = 3;

    /// Bind the proxy's listener; steering is added by `CageListeners::bind_steering`.
    pub(crate) fn bind() -> io::Result<CageListeners> {
        Ok(CageListeners {
            proxy: bind_cage_listener()?,
            steered: None,
        })
    }

    /// Bind the steering listeners. Ports below 1024 need CAP_NET_BIND_SERVICE in the
    /// user namespace that owns the network namespace: held by root natively and in
    /// every namespace the stage creates itself.
    pub(crate) fn bind_steering(&mut self) -> io::Result<()> {
        self.steered = Some(SteeredListeners {
            tls: bind_listener(STEERING_ADDRESS, STEERED_TLS_PORT)?,
            http: bind_listener(STEERING_ADDRESS, STEERED_HTTP_PORT)?,
        });
        Ok(())
    }

    /// Pass every listener over `channel` in one SCM_RIGHTS message: the proxy's, then
    /// the TLS and HTTP steering listeners when there are any.
    pub(crate) fn send(&self, channel: &impl AsFd) -> Result<(), NetnsError> {
        let mut fds = vec![self.proxy.as_fd()];
        if let Some(steered) = &self.steered {
            fds.extend([steered.tls.as_fd(), steered.http.as_fd()]);
        }
        send_fds(channel, b'L', &fds)
    }

    /// Receive them; `None` when the stage closed the channel without sending (it failed
    /// before binding, and says why on stderr).
    pub(crate) fn recv(channel: &impl AsFd) -> Result<Option<CageListeners>, NetnsError> {
        let Some(fds) = recv_fds(channel)? else {
            return Ok(None);
        };
        let count = fds.len();
        let mut fds = fds.into_iter().map(TcpListener::from);
        match (fds.next(), fds.next(), fds.next()) {
            (Some(proxy), None, None) => Ok(Some(CageListeners {
                proxy,
                steered: None,
            })),
            (Some(proxy), Some(tls), Some(http)) => Ok(Some(CageListeners {
                proxy,
                steered: Some(SteeredListeners { tls, http }),
            })),
            _ => Err(NetnsError::Handoff {
                source: io::Error::other(format!(
                    "the stage sent {count} descriptor(s), expected 1 or {}",
                    CageListeners::MAX
                )),
            }),
        }
    }
}

/// A connected pair for the hand-off: the first end stays with the proxy, the second is
/// inherited by the cage's stage (close-on-exec cleared).
pub(crate) fn handoff_pair() -> Result<(UnixStream, OwnedFd), NetnsError> {
    let (proxy, stage) = UnixStream::pair().map_err(|source| NetnsError::Handoff { source })?;
    rustix::io::fcntl_setfd(&stage, rustix::io::FdFlags::empty())
        .map_err(|e| NetnsError::Handoff { source: e.into() })?;
    Ok((proxy, stage.into()))
}

/// Take ownership of the hand-off descriptor the supervisor passed by number (in the
/// launch plan). Refused unless it is an open unix socket above 2.
pub(crate) fn take_handoff_fd(fd: RawFd) -> Result<OwnedFd, NetnsError> {
    let bad = |what: &str| NetnsError::Handoff {
        source: io::Error::other(format!("descriptor {fd} {what}")),
    };
    let owned = adopt_inherited(fd).map_err(bad)?;
    match rustix::net::sockopt::socket_domain(&owned) {
        Ok(domain) if domain == rustix::net::AddressFamily::UNIX => Ok(owned),
        _ => Err(bad("is not a unix socket")),
    }
}

/// The most descriptors one hand-off message carries: the three listeners, or the DNS
/// stub's sockets (glibc reads three nameservers, plus `::1` and slack).
const MAX_FDS: usize = 8;

/// Pass `fds` (possibly none) over `channel` in one message (SCM_RIGHTS) whose one data
/// byte is `tag`.
fn send_fds(
    channel: &impl AsFd,
    tag: u8,
    fds: &[std::os::fd::BorrowedFd<'_>],
) -> Result<(), NetnsError> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    if fds.len() > MAX_FDS
        || (!fds.is_empty() && !control.push(rustix::net::SendAncillaryMessage::ScmRights(fds)))
    {
        return Err(NetnsError::Handoff {
            source: io::Error::other(format!("{} descriptors do not fit one message", fds.len())),
        });
    }
    rustix::net::sendmsg(
        channel,
        &[IoSlice::new(&[tag])],
        &mut control,
        rustix::net::SendFlags::empty(),
    )
    .map_err(|e| NetnsError::Handoff { source: e.into() })?;
    Ok(())
}

/// Receive the descriptors sent by [`send_fds`]; `None` when the channel closed with
/// nothing sent.
fn recv_fds(channel: &impl AsFd) -> Result<Option<Vec<OwnedFd>>, NetnsError> {
    let mut byte = [0u8; 1];
    // Room for one more than expected, so an extra descriptor is seen (and closed), not
    // silently truncated away.
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS + 1))];
    let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        channel,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        rustix::net::RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|e| NetnsError::Handoff { source: e.into() })?;
    if got.bytes == 0 {
        return Ok(None);
    }
    let mut received: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let rustix::net::RecvAncillaryMessage::ScmRights(fds) = message {
            received.extend(fds);
        }
    }
    Ok(Some(received))
}

/// Take ownership of descriptor `fd`, inherited by number for one purpose: refused when it
/// is a standard stream or not open. The caller checks what it is.
fn adopt_inherited(fd: RawFd) -> Result<OwnedFd, &'static str> {
    if fd <= 2 {
        return Err("is a standard stream");
    }
    // SAFETY: F_GETFD only reads the descriptor table; EBADF for a closed number.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err("is not open");
    }
    // SAFETY: the number is open (checked above) and was inherited for this purpose
    // only: nothing else in this process owns it, so the OwnedFd closes it exactly once.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// The proxy variables for the caged process (see
/// [`jaula_policy::network::proxy_env_at`]), at the port the cage's own loopback listener
/// has.
pub(crate) fn proxy_env(proxy_localhost: bool) -> Vec<(String, String)> {
    jaula_policy::network::proxy_env_at(CAGE_PROXY_PORT, proxy_localhost)
}

/// Spawn-time set-up for a command that must start inside a fresh loopback namespace
/// (bubblewrap, which then needs no `--unshare-net`): the namespace is entered, and the
/// DNS stub bound, by the forked child before it execs, because inside bubblewrap no
/// process of jaula's keeps the capabilities that putting an address on `lo` and binding
/// port 53 need (bubblewrap's own user namespace sits below the one owning the namespace).
///
/// The stub's sockets land on descriptor numbers reserved here (open on `/dev/null`
/// until then) and stay open across exec, so the caller can name them to the stage
/// (in its launch plan) before the fork. Keep the returned [`NetnsInChild`] until the
/// command is spawned, then drop it.
pub(crate) struct NetnsInChild {
    reserved: Vec<OwnedFd>,
    stub: Option<StubAddresses>,
}

impl NetnsInChild {
    /// Reserve a descriptor number for each of `stub`'s served addresses (none without a
    /// stub).
    pub(crate) fn prepare(stub: Option<StubAddresses>) -> Result<NetnsInChild, NetnsError> {
        let wanted = stub.as_ref().map_or(0, |s| s.served.len());
        let mut reserved = Vec::with_capacity(wanted);
        for _ in 0..wanted {
            let null = std::fs::File::open("/dev/null")
                .map_err(|source| NetnsError::DnsStub { source })?;
            reserved.push(OwnedFd::from(null));
        }
        Ok(NetnsInChild { reserved, stub })
    }

    /// The descriptor numbers the stage receives the stub's sockets on, in the order of
    /// [`StubAddresses::served`].
    pub(crate) fn dns_fds(&self) -> Vec<RawFd> {
        self.reserved.iter().map(|fd| fd.as_raw_fd()).collect()
    }

    /// Make `cmd` start in the new namespace, with the stub bound. Spawn `cmd` from a
    /// single-threaded process (the set-up runs between fork and exec, and unshare(2)
    /// refuses CLONE_NEWUSER in a multithreaded one).
    pub(crate) fn install(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        let targets = self.dns_fds();
        let stub = self.stub.clone();
        let setup = move || -> io::Result<()> {
            enter_loopback_netns().map_err(io::Error::other)?;
            if let Some(addresses) = &stub {
                let sockets = dns_stub::bind_stub(addresses)?;
                for (socket, target) in sockets.iter().zip(&targets) {
                    // dup2 clears close-on-exec on the target only: the socket's own
                    // number still closes at exec, the reserved one carries it on.
                    // SAFETY: both numbers are open descriptors of this (forked) process.
                    if unsafe { libc::dup2(socket.as_raw_fd(), *target) } < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            Ok(())
        };
        // SAFETY: the closure runs in the forked child before exec, on the child's only
        // thread. It allocates: the parent is single-threaded when the launch spawns
        // (the caller's contract), and glibc's fork resets malloc's locks in the child
        // besides, so no lock it takes is held by a thread that does not exist here.
        unsafe {
            cmd.pre_exec(setup);
        }
    }
}

/// Take a stub socket a parent left on descriptor `fd` (named in the launch plan): refused
/// unless it is an open UDP socket above 2. Close-on-exec is set again, so the command
/// never inherits it.
fn take_dns_fd(fd: RawFd) -> Result<UdpSocket, NetnsError> {
    let bad = |what: &str| NetnsError::DnsStub {
        source: io::Error::other(format!("descriptor {fd} {what}")),
    };
    let owned = adopt_inherited(fd).map_err(bad)?;
    let inet = matches!(
        rustix::net::sockopt::socket_domain(&owned),
        Ok(d) if d == rustix::net::AddressFamily::INET || d == rustix::net::AddressFamily::INET6
    );
    let dgram = matches!(
        rustix::net::sockopt::socket_type(&owned),
        Ok(t) if t == rustix::net::SocketType::DGRAM
    );
    if !(inet && dgram) {
        return Err(bad("is not a UDP socket"));
    }
    rustix::io::fcntl_setfd(&owned, rustix::io::FdFlags::CLOEXEC)
        .map_err(|e| NetnsError::DnsStub { source: e.into() })?;
    Ok(UdpSocket::from(owned))
}

/// Take the `--log` file a parent opened on descriptor `fd` (named in the launch plan):
/// refused unless it is a regular file open for writing, above 2. Close-on-exec is set
/// again, so the command never inherits it.
pub fn take_log_fd(fd: RawFd) -> Result<std::fs::File, NetnsError> {
    let bad = |what: &str| NetnsError::Handoff {
        source: io::Error::other(format!("log descriptor {fd} {what}")),
    };
    let file = std::fs::File::from(adopt_inherited(fd).map_err(bad)?);
    let writable = rustix::fs::fcntl_getfl(&file)
        .is_ok_and(|flags| !(flags & rustix::fs::OFlags::RWMODE).is_empty());
    let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !regular || !writable {
        return Err(bad("is not a regular file open for writing"));
    }
    rustix::io::fcntl_setfd(&file, rustix::io::FdFlags::CLOEXEC)
        .map_err(|e| NetnsError::Handoff { source: e.into() })?;
    Ok(file)
}

/// Where the cage's DNS stub answers: the nameservers of the host's `/etc/resolv.conf`,
/// which the cage reads too (an unreadable file reads as none listed, as glibc does).
pub(crate) fn stub_addresses() -> StubAddresses {
    let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    dns_stub::stub_addresses(&text)
}

/// Bind the stub in the namespace this process just made, or take the sockets a parent
/// bound for it (`fds`, from [`NetnsInChild::dns_fds`]).
pub(crate) fn stub_sockets(
    addresses: &StubAddresses,
    fds: &[RawFd],
) -> Result<Vec<UdpSocket>, NetnsError> {
    if fds.is_empty() {
        return dns_stub::bind_stub(addresses).map_err(|source| NetnsError::DnsStub { source });
    }
    // A reserved number the parent had no socket for (an address it could not serve) was
    // left close-on-exec on `/dev/null` and is closed by now: skip it.
    fds.iter()
        .filter(|fd| is_open(**fd))
        .map(|fd| take_dns_fd(*fd))
        .collect()
}

fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only reads the descriptor table; EBADF for a closed number.
    fd > 2 && unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0
}

/// Pass the stub's sockets to the proxy over the hand-off channel, after the listener
/// (one message, `D`, carrying every socket; none is a valid count).
pub(crate) fn send_dns_sockets(
    channel: &impl AsFd,
    sockets: &[UdpSocket],
) -> Result<(), NetnsError> {
    let fds: Vec<_> = sockets.iter().map(|s| s.as_fd()).collect();
    send_fds(channel, b'D', &fds)
}

/// Receive the stub's sockets; empty when the stage closed the channel first.
pub(crate) fn recv_dns_sockets(channel: &impl AsFd) -> Result<Vec<UdpSocket>, NetnsError> {
    Ok(recv_fds(channel)?
        .unwrap_or_default()
        .into_iter()
        .map(UdpSocket::from)
        .collect())
}
