//! Host-side fixtures for the escape probes: a scratch home with secrets, a victim process,
//! an abstract socket listener, a setuid-root binary, a file handle for a sealed file and,
//! for TIOCSTI, a pty that becomes the caged process's controlling terminal.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
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

/// `name_to_handle_at` on the host: the handle the 'shocker' attack would guess, as hex.
/// Made by python3 through ctypes, since this crate forbids `unsafe` and the call has no
/// safe wrapper: a struct file_handle with room for MAX_HANDLE_SZ (128) bytes.
fn handle_of(path: &Path) -> String {
    let script = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
handle[0:4] = (128).to_bytes(4, sys.byteorder)
mount_id = ctypes.c_int(0)
if libc.name_to_handle_at(-100, os.fsencode(sys.argv[1]), handle, ctypes.byref(mount_id), 0) != 0:
    sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
size = int.from_bytes(handle[0:4], sys.byteorder)
print(handle.raw[:8 + size].hex())
"#;
    let out = Command::new("python3")
        .args(["-I", "-S", "-c", script])
        .arg(path)
        .output()
        .expect("python3 runs on the host");
    assert!(
        out.status.success(),
        "name_to_handle_at on the host: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A fresh pty: (master, slave), the slave handed to `user`.
fn open_pty(user: User) -> (OwnedFd, OwnedFd) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("posix_openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let path = PathBuf::from(OsStr::from_bytes(name.as_bytes()));
    let slave = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&path)
        .expect("open pts");
    if user == User::Nobody {
        std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).expect("chown pts");
    }
    (master, OwnedFd::from(slave))
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
            Some((_, slave)) => cmd.stdin(Stdio::from(slave.try_clone().unwrap())),
            None => cmd.stdin(Stdio::null()),
        };
    }

    /// `program args`, or with a pty, `setsid --ctty --wait program args`: a new session
    /// whose controlling terminal is the pts on stdin, as a login shell's would be.
    fn command(&self, program: &OsStr, args: &[OsString]) -> Command {
        if self.pty.is_none() {
            let mut cmd = Command::new(program);
            cmd.args(args);
            return cmd;
        }
        let mut cmd = Command::new("setsid");
        cmd.args(["--ctty", "--wait"]).arg(program).args(args);
        cmd
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
        let mut args: Vec<OsString> = vec!["run".into(), "--backend".into(), backend.name().into()];
        args.extend(flags.iter().map(OsString::from));
        args.extend(self.h.cage_args());
        args.push("--".into());
        args.extend(Self::prober_args());
        let mut cmd = self.command(jaula().as_os_str(), &args);
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
        let mut cmd = self.command(&args[0], &args[1..]);
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
