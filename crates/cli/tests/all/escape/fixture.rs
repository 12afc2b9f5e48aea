//! Host-side fixtures for the escape probes: a scratch home with secrets, a victim process,
//! an abstract socket listener, a setuid-root binary, a file handle for a sealed file and,
//! for TIOCSTI, a pty that becomes the caged process's controlling terminal.

use std::ffi::{CString, OsString};
use std::fs;
use std::io::ErrorKind;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{SocketAddr, UnixListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::prober::{self, Report};
use crate::common::{build_home, chown_tree_except, jaula, scratch, Home, PRESENT_FILES};
pub use crate::common::{Backend, User, NOBODY};
use jaula_testkit::{rerun, Reaped};

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub h: Home,
    pub user: User,
    pub victim: Reaped,
    pub listener: UnixListener,
    pub sock: String,
    pub suid: PathBuf,
    pub handle_hex: String,
    /// (master, slave) of the pty handed to the caged process as its terminal.
    pub pty: Option<(OwnedFd, OwnedFd)>,
    snapshot: Vec<(PathBuf, Vec<u8>)>,
}

/// Files a successful attack would leave behind on the host.
pub const ATTACK_LEFTOVERS: &[&str] = &["repo/stolen", "repo/hardlink", "repo/mem", "outside/new"];

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

/// `name_to_handle_at` on the host: the handle the 'shocker' attack would guess.
fn handle_of(path: &Path) -> String {
    let mut buf = [0u64; 17]; // struct file_handle with MAX_HANDLE_SZ (128) bytes
                              // SAFETY: buf is 8-aligned and large enough for a file_handle with 128 bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut u8, 136) };
    bytes[0..4].copy_from_slice(&128u32.to_ne_bytes());
    let mut mount_id: libc::c_int = 0;
    let p = cstr(path);
    // SAFETY: valid path, buffer and out-pointer, all live for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            p.as_ptr(),
            bytes.as_mut_ptr(),
            &mut mount_id as *mut libc::c_int,
            0,
        )
    };
    assert_eq!(
        r,
        0,
        "name_to_handle_at on the host: {}",
        std::io::Error::last_os_error()
    );
    let len = 8 + u32::from_ne_bytes(bytes[0..4].try_into().unwrap()) as usize;
    bytes[..len].iter().map(|b| format!("{b:02x}")).collect()
}

fn open_pty(user: User) -> (OwnedFd, OwnedFd) {
    // SAFETY: posix_openpt returns a new descriptor or -1.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
    assert!(
        master >= 0,
        "posix_openpt: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: master is a fresh pty master we own.
    let master_fd = unsafe { OwnedFd::from_raw_fd(master) };
    // SAFETY: valid master descriptor.
    assert_eq!(unsafe { libc::grantpt(master) }, 0);
    // SAFETY: valid master descriptor.
    assert_eq!(unsafe { libc::unlockpt(master) }, 0);
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: name is a live buffer of the length passed.
    assert_eq!(
        unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) },
        0
    );
    // SAFETY: ptsname_r wrote a NUL-terminated string into name.
    let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_owned();
    // SAFETY: valid NUL-terminated path.
    let slave = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY) };
    assert!(slave >= 0, "open pts: {}", std::io::Error::last_os_error());
    if user == User::Nobody {
        // SAFETY: valid NUL-terminated path.
        unsafe { libc::chown(path.as_ptr(), NOBODY, NOBODY) };
    }
    // SAFETY: slave is a fresh descriptor we own.
    (master_fd, unsafe { OwnedFd::from_raw_fd(slave) })
}

impl Fixture {
    pub fn new(user: User, probe: &str) -> Fixture {
        let (dir, root) = scratch(&format!("escape-{probe}-"));
        let h = build_home(&root);
        for d in ["repo/mnt", "repo/jail", "bin"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        let suid = root.join("bin/suid-cat");
        fs::copy("/bin/cat", &suid).unwrap();
        std::os::unix::fs::chown(&suid, Some(0), Some(0)).unwrap();
        fs::set_permissions(&suid, fs::Permissions::from_mode(0o4755)).unwrap();
        if user == User::Nobody {
            chown_tree_except(&root, NOBODY, Some(&suid));
        }
        let handle_hex = handle_of(&h.home.join(".ssh/id_x"));
        let mut victim = Command::new("/bin/sleep");
        victim
            .arg0(format!("jaula-victim-argv:{}", root.display()))
            .arg("600")
            .current_dir(h.home.join(".ssh"))
            .env_clear()
            .env(
                "JAULA_VICTIM_MARK",
                format!("jaula-victim-env:{}", root.display()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if user == User::Nobody {
            victim.uid(NOBODY).gid(NOBODY);
        }
        let victim = victim.spawn().unwrap();
        let sock = format!(
            "jaula-escape-{}",
            root.file_name().unwrap().to_string_lossy()
        );
        let listener =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(&sock).unwrap()).unwrap();
        listener.set_nonblocking(true).unwrap();
        let pty = (probe == "tiocsti").then(|| open_pty(user));
        let snapshot = PRESENT_FILES
            .iter()
            .map(|rel| (root.join(rel), fs::read(root.join(rel)).unwrap()))
            .collect();
        Fixture {
            _dir: dir,
            root,
            h,
            user,
            victim: Reaped(victim),
            listener,
            sock,
            suid,
            handle_hex,
            pty,
            snapshot,
        }
    }

    fn prepare(&self, cmd: &mut Command, probe: &str) {
        cmd.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.h.home)
            .env("JAULA_PROBE", probe)
            .env("JAULA_PROBE_ROOT", &self.root)
            .env("JAULA_PROBE_PID", self.victim.id().to_string())
            .env("JAULA_PROBE_SOCK", &self.sock)
            .env("JAULA_PROBE_SUID", &self.suid)
            .env("JAULA_PROBE_HANDLE", &self.handle_hex)
            .current_dir(&self.h.repo)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.user == User::Nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        match &self.pty {
            Some((_, slave)) => {
                cmd.stdin(Stdio::from(slave.try_clone().unwrap()));
                // SAFETY: setsid and ioctl are async-signal-safe; they make the pts (stdin)
                // the new session's controlling terminal, as a login shell's would be.
                unsafe {
                    cmd.pre_exec(|| {
                        if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
            }
            None => {
                cmd.stdin(Stdio::null());
            }
        }
    }

    fn prober_args() -> Vec<OsString> {
        let mut argv = rerun::argv(&super::prober_entry_name());
        argv.push("-q".into());
        argv
    }

    /// Runs the attack inside `jaula run --backend B`.
    /// None when jaula refused to build the cage (a missing kernel feature).
    pub fn caged(&self, backend: Backend, probe: &str) -> Option<(Report, Output)> {
        self.caged_with(backend, &[], probe)
    }

    /// [`Fixture::caged`] with extra `jaula run` flags.
    pub fn caged_with(
        &self,
        backend: Backend,
        flags: &[&str],
        probe: &str,
    ) -> Option<(Report, Output)> {
        let mut cmd = Command::new(jaula());
        cmd.args(["run", "--backend", backend.name()])
            .args(flags)
            .args(self.h.cage_args())
            .arg("--")
            .args(Self::prober_args());
        self.prepare(&mut cmd, probe);
        let out = cmd.output().unwrap();
        let refused = out.status.code() == Some(126)
            && String::from_utf8_lossy(&out.stderr).contains("refusing to run uncaged");
        if refused {
            return None;
        }
        Some(Self::judge(out, probe))
    }

    /// Runs the attack with no cage at all, as the same user: the control that shows the
    /// attack is real on this host.
    pub fn uncaged(&self, probe: &str) -> (Report, Output) {
        let args = Self::prober_args();
        let mut cmd = Command::new(&args[0]);
        cmd.args(&args[1..]);
        self.prepare(&mut cmd, probe);
        Self::judge(cmd.output().unwrap(), probe)
    }

    fn judge(out: Output, probe: &str) -> (Report, Output) {
        let stdout = String::from_utf8_lossy(&out.stdout);
        match prober::parse(&stdout) {
            Some(r) => (r, out),
            None => panic!(
                "probe {probe}: no result line ({:?})\nstdout:\n{stdout}\nstderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    /// After a caged attack: nothing on the host changed.
    pub fn assert_host_intact(&mut self, probe: &str) {
        for (path, before) in &self.snapshot {
            let now = fs::read(path);
            assert_eq!(
                now.as_deref().ok(),
                Some(before.as_slice()),
                "{probe}: host file {} changed or vanished",
                path.display()
            );
        }
        for rel in ATTACK_LEFTOVERS {
            assert!(
                fs::symlink_metadata(self.root.join(rel)).is_err(),
                "{probe}: the attack left {rel} on the host"
            );
        }
        assert!(
            matches!(self.victim.0.try_wait(), Ok(None)),
            "{probe}: the host victim process died"
        );
        match self.listener.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => panic!("{probe}: the host abstract socket got a connection: {other:?}"),
        }
        let dev = |rel: &str| fs::metadata(self.root.join(rel)).unwrap().dev();
        assert_eq!(
            dev("repo/mnt"),
            dev("repo"),
            "{probe}: a mount leaked onto the host"
        );
    }
}
