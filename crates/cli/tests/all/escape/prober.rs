//! The prober: the attacks themselves, run inside the cage by the test binary re-executed
//! as the caged command. Each attack makes the raw syscall an escaping process would make
//! and reports what the kernel answered, as one machine-readable line on stdout.
//!
//! Inputs come from the environment (names chosen so the cage's credential scrub keeps
//! them): `JAULA_PROBE` (the attack), `JAULA_PROBE_ROOT` (the scratch tree), `JAULA_PROBE_PID`
//! (the host victim), `JAULA_PROBE_SOCK` (the host's abstract socket name),
//! `JAULA_PROBE_SUID` (the setuid-root binary), `JAULA_PROBE_HANDLE` (a file handle for a
//! sealed file, minted on the host).

use std::fs;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode};
use rustix::mount::MountFlags;
use rustix::process::{Pid, Signal};
use serde::{Deserialize, Serialize};

/// Prefix of the one line the prober prints.
pub const RESULT_PREFIX: &str = "PROBE-RESULT ";

/// What an attack achieved. `ok` means the attack reached its goal (read the secret,
/// changed the host, gained the privilege); otherwise `errno` is the refusal that stopped it
/// and `stage` the step that was refused.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Report {
    pub ok: bool,
    pub errno: i32,
    pub stage: String,
    /// What was read or observed (at most a few hundred bytes).
    pub data: String,
}

impl Report {
    fn ok(stage: &str, data: impl Into<String>) -> Report {
        Report {
            ok: true,
            errno: 0,
            stage: stage.into(),
            data: data.into(),
        }
    }

    fn refused(stage: &str, errno: i32) -> Report {
        Report {
            ok: false,
            errno,
            stage: stage.into(),
            data: String::new(),
        }
    }

    /// The call ran but achieved nothing (e.g. a setuid exec that gained no privilege).
    fn harmless(stage: &str, data: impl Into<String>) -> Report {
        Report {
            ok: false,
            errno: 0,
            stage: stage.into(),
            data: data.into(),
        }
    }
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(-1)
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("prober needs {name}"))
}

struct Ctx {
    root: PathBuf,
}

impl Ctx {
    fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }
    fn sealed_file(&self) -> PathBuf {
        self.home().join(".ssh/id_x")
    }
    fn outside(&self) -> PathBuf {
        self.root.join("outside/file.txt")
    }
    fn victim(&self) -> i32 {
        var("JAULA_PROBE_PID").parse().unwrap()
    }
}

fn clip(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.chars().take(300).collect()
}

fn read_file(stage: &str, path: &Path) -> Report {
    match fs::read(path) {
        Ok(bytes) => Report::ok(stage, clip(&bytes)),
        Err(e) => Report::refused(stage, io_errno(&e)),
    }
}

/// Runs the attack `name` and reports.
pub fn run(name: &str) -> Report {
    let cx = Ctx {
        root: PathBuf::from(var("JAULA_PROBE_ROOT")),
    };
    match name {
        "read_sealed_file" => read_file("open", &cx.sealed_file()),
        "read_sealed_dir" => match fs::read_dir(cx.home().join(".ssh")) {
            Ok(entries) => {
                let names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                if names.is_empty() {
                    Report::harmless("readdir", "")
                } else {
                    Report::ok("readdir", names.join(","))
                }
            }
            Err(e) => Report::refused("opendir", io_errno(&e)),
        },
        "read_via_symlink" => {
            let link = cx.repo().join("link");
            if let Err(e) = std::os::unix::fs::symlink(cx.sealed_file(), &link) {
                return Report::refused("symlink", io_errno(&e));
            }
            read_file("open", &link)
        }
        "read_via_hardlink" => {
            let link = cx.repo().join("hardlink");
            if let Err(e) = fs::hard_link(cx.sealed_file(), &link) {
                return Report::refused("link", io_errno(&e));
            }
            read_file("open", &link)
        }
        "read_via_proc_self_root" => {
            let p = Path::new("/proc/self/root").join(cx.sealed_file().strip_prefix("/").unwrap());
            read_file("open", &p)
        }
        "read_via_proc_pid_root" => {
            let p = PathBuf::from(format!("/proc/{}/root", cx.victim()))
                .join(cx.sealed_file().strip_prefix("/").unwrap());
            read_file("open", &p)
        }
        // The victim's working directory is the sealed ~/.ssh.
        "read_via_proc_pid_cwd" => read_file(
            "open",
            &PathBuf::from(format!("/proc/{}/cwd/id_x", cx.victim())),
        ),
        "read_proc_pid_environ" => read_file(
            "open",
            &PathBuf::from(format!("/proc/{}/environ", cx.victim())),
        ),
        "read_proc_pid_cmdline" => read_file(
            "open",
            &PathBuf::from(format!("/proc/{}/cmdline", cx.victim())),
        ),
        "read_proc_pid_mem" => {
            match fs::File::open(format!("/proc/{}/mem", cx.victim())) {
                // Opening is the attach-mode access check; a read at an unmapped offset
                // would fail for unrelated reasons, so the open is the verdict.
                Ok(_) => Report::ok("open", "opened /proc/<pid>/mem"),
                Err(e) => Report::refused("open", io_errno(&e)),
            }
        }
        "ptrace_attach" => raw_call(
            "ptrace",
            "r, e = sys_call(NR, L(0x4206), L(int(A[0])), L(0), L(0))  # PTRACE_SEIZE\n\
             done(r, e, 'ptrace', 'seized')",
            libc::SYS_ptrace,
            &[&cx.victim().to_string()],
        ),
        "signal_host" => {
            let victim = Pid::from_raw(cx.victim()).expect("the victim's pid is positive");
            match rustix::process::kill_process(victim, Signal::KILL) {
                Ok(()) => Report::ok("kill", "SIGKILL delivered"),
                Err(e) => Report::refused("kill", e.raw_os_error()),
            }
        }
        "rename_sealed_out" => match fs::rename(cx.sealed_file(), cx.repo().join("stolen")) {
            Ok(()) => read_file("open", &cx.repo().join("stolen")),
            Err(e) => Report::refused("rename", io_errno(&e)),
        },
        "create_outside" => match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(cx.root.join("outside/new"))
        {
            Ok(_) => Report::ok("open", "created"),
            Err(e) => Report::refused("open", io_errno(&e)),
        },
        "truncate_outside" => raw_call(
            "truncate",
            "try:\n    os.truncate(A[0], 0); done(0, 0, 'truncate', 'truncated')\n\
             except OSError as x:\n    done(-1, x.errno, 'truncate', '')",
            0,
            &[&cx.outside().to_string_lossy()],
        ),
        "write_via_proc_self_fd" => {
            let f = match fs::File::open(cx.outside()) {
                Ok(f) => f,
                Err(e) => return Report::refused("open-ro", io_errno(&e)),
            };
            use std::os::fd::AsRawFd;
            let p = format!("/proc/self/fd/{}", f.as_raw_fd());
            match fs::OpenOptions::new().append(true).open(&p) {
                Ok(mut w) => match w.write_all(b"ESCAPED") {
                    Ok(()) => Report::ok("write", "wrote through the magic link"),
                    Err(e) => Report::refused("write", io_errno(&e)),
                },
                Err(e) => Report::refused("reopen-rw", io_errno(&e)),
            }
        }
        "write_cage_config" => match fs::OpenOptions::new()
            .append(true)
            .open(cx.home().join(".config/jaula/config.toml"))
        {
            Ok(mut w) => match w.write_all(b"\n[cage]\nenabled = false\n") {
                Ok(()) => Report::ok("write", "cage disabled in config"),
                Err(e) => Report::refused("write", io_errno(&e)),
            },
            Err(e) => Report::refused("open", io_errno(&e)),
        },
        "tiocsti" => {
            if !std::io::stdin().is_terminal() {
                return Report::harmless("isatty", "stdin is not a terminal");
            }
            raw_call(
                "ioctl",
                "import fcntl, termios\n\
                 try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'#'); done(0, 0, 'ioctl', 'keystroke injected')\n\
                 except OSError as x:\n    done(-1, x.errno, 'ioctl', '')",
                0,
                &[],
            )
        }
        "open_by_handle_at" => open_by_handle(&cx),
        "mount_tmpfs" => {
            let target = cx.repo().join("mnt");
            match rustix::mount::mount(
                "none",
                &target,
                "tmpfs",
                MountFlags::empty(),
                None::<&std::ffi::CStr>,
            ) {
                Ok(()) => Report::ok("mount", "tmpfs mounted"),
                Err(e) => Report::refused("mount", e.raw_os_error()),
            }
        }
        "unshare_userns_remount" => unshare_remount(&cx),
        // union bpf_attr for BPF_MAP_CREATE (command 0): map_type 2 (ARRAY), key_size 4,
        // value_size 4, max_entries 1; 128 bytes in all.
        "bpf" => raw_call(
            "bpf",
            "attr = (ctypes.c_uint32 * 32)(2, 4, 4, 1)\n\
             r, e = sys_call(NR, L(0), attr, L(ctypes.sizeof(attr)))\n\
             done(r, e, 'bpf', 'map created')",
            libc::SYS_bpf,
            &[],
        ),
        // struct perf_event_attr (128 bytes): type PERF_TYPE_SOFTWARE (1) and size in the
        // first u64, config PERF_COUNT_SW_CPU_CLOCK (0), exclude_kernel and exclude_hv (bits
        // 5 and 6 of the flags at offset 40).
        "perf_event_open" => raw_call(
            "perf_event_open",
            "attr = (ctypes.c_uint64 * 16)(1 | (128 << 32), 0, 0, 0, 0, (1 << 5) | (1 << 6))\n\
             r, e = sys_call(NR, attr, L(0), L(-1), L(-1), L(0))\n\
             done(r, e, 'perf_event_open', 'event opened')",
            libc::SYS_perf_event_open,
            &[],
        ),
        // A zeroed struct io_uring_params (120 bytes) for a one-entry ring.
        "io_uring_setup" => raw_call(
            "io_uring_setup",
            "params = (ctypes.c_uint8 * 120)()\n\
             r, e = sys_call(NR, L(1), params)\n\
             done(r, e, 'io_uring_setup', 'ring created')",
            libc::SYS_io_uring_setup,
            &[],
        ),
        // UFFD_USER_MODE_ONLY (1): the form an unprivileged process may ask for.
        "userfaultfd" => raw_call(
            "userfaultfd",
            "r, e = sys_call(NR, L(os.O_CLOEXEC | 1))\n\
             done(r, e, 'userfaultfd', 'uffd created')",
            libc::SYS_userfaultfd,
            &[],
        ),
        // KEYCTL_GET_KEYRING_ID (0) of KEY_SPEC_USER_KEYRING (-4), without creating it.
        "keyctl" => raw_call(
            "keyctl",
            "r, e = sys_call(NR, L(0), L(-4), L(0))\n\
             done(r, e, 'keyctl', 'user keyring reached')",
            libc::SYS_keyctl,
            &[],
        ),
        "abstract_unix_connect" => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(var("JAULA_PROBE_SOCK"))
                .unwrap();
            match std::os::unix::net::UnixStream::connect_addr(&addr) {
                Ok(_) => Report::ok("connect", "connected to the host listener"),
                Err(e) => Report::refused("connect", io_errno(&e)),
            }
        }
        "setuid_exec" => setuid_exec(),
        // init_module with a 16-byte non-image, then finit_module on fd 0: the second
        // answer counts only when it differs (a filter may treat the two apart).
        "load_module" => raw_call(
            "init_module",
            "image = (ctypes.c_uint8 * 16)()\n\
             r, e = sys_call(NR, image, L(16), b'')\n\
             if r >= 0: done(r, e, 'init_module', 'module loaded')\n\
             r2, e2 = sys_call(int(A[0]), L(0), b'', L(0))\n\
             if r2 >= 0 or e2 != e: done(r2, e2, 'finit_module', 'module loaded')\n\
             done(r, e, 'init_module', '')",
            libc::SYS_init_module,
            &[&libc::SYS_finit_module.to_string()],
        ),
        // kexec_load with no segments.
        "kexec" => raw_call(
            "kexec_load",
            "r, e = sys_call(NR, L(0), L(0), L(0), L(0))\n\
             done(r, e, 'kexec_load', 'kexec_load accepted')",
            libc::SYS_kexec_load,
            &[],
        ),
        "mknod_device" => {
            // /dev/mem is char 1:1: a device node in a writable root reaches physical memory.
            match rustix::fs::mknodat(
                rustix::fs::CWD,
                cx.repo().join("mem"),
                FileType::CharacterDevice,
                Mode::from_raw_mode(0o666),
                rustix::fs::makedev(1, 1),
            ) {
                Ok(()) => Report::ok("mknod", "device node created"),
                Err(e) => Report::refused("mknod", e.raw_os_error()),
            }
        }
        "chroot_escape" => chroot_escape(&cx),
        // getpid through the x32 ABI: same audit arch as x86_64, only the number differs.
        "x32_syscall" => raw_call(
            "x32 getpid",
            "r, e = sys_call(NR | 0x40000000)\n\
             done(r, e, 'x32 getpid', 'x32 syscall ran')",
            libc::SYS_getpid,
            &[],
        ),
        // struct clone_args (CLONE_ARGS_SIZE_VER2, 11 u64): flags, then exit_signal at 4.
        // No stack: the child only leaves.
        "clone3_namespaces" => raw_call(
            "clone3",
            &format!(
                "args = (ctypes.c_uint64 * 11)({}, 0, 0, 0, {})\n\
                 r, e = sys_call(NR, args, L(ctypes.sizeof(args)))\n\
                 reap(r, e, 'clone3')",
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
                libc::SIGCHLD
            ),
            libc::SYS_clone3,
            &[],
        ),
        // A fork-like clone (no new stack): the child only leaves.
        "clone_namespaces" => raw_call(
            "clone",
            &format!(
                "r, e = sys_call(NR, L({}), L(0), L(0), L(0), L(0))\n\
                 reap(r, e, 'clone')",
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::SIGCHLD
            ),
            libc::SYS_clone,
            &[],
        ),
        "read_other_window_token" => {
            let broker = cx.home().join(".agents-city/.runtime/broker");
            let own = match fs::read(broker.join("w1.token")) {
                Ok(_) => "own token readable",
                Err(_) => "own token NOT readable",
            };
            let mut r = read_file("open", &broker.join("w2.token"));
            if !r.ok {
                r.data = own.into();
            }
            r
        }
        other => panic!("unknown probe {other}"),
    }
}

/// The Python that makes a raw call: `NR` is the syscall number, `A` the extra arguments,
/// `L` a C long (every argument is passed as one, so no register keeps stale upper bits),
/// `sys_call` answers `(result, errno)`, `done` prints the report and leaves, `reap` judges
/// a fork-like clone (the child leaves at once, before any other Python runs).
const RAW_CALL_PRELUDE: &str = r#"
import ctypes, json, os, sys
NR, A = int(sys.argv[1]), sys.argv[2:]
L = ctypes.c_long
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sys_call(*args):
    ctypes.set_errno(0)
    r = libc.syscall(L(args[0]), *args[1:])
    return r, (ctypes.get_errno() if r < 0 else 0)
def done(r, e, stage, what):
    ok = r >= 0
    print(json.dumps({"ok": ok, "errno": 0 if ok else e, "stage": stage, "data": what if ok else ""}))
    sys.stdout.flush()
    os._exit(0)
def reap(r, e, stage):
    if r == 0:
        os._exit(0)
    if r > 0:
        os.waitpid(r, 0)
    done(r, e, stage, "child created in new namespaces")
"#;

/// Makes an attack's raw system call in a `python3` child, through ctypes: this test crate
/// forbids `unsafe`, and these calls (bpf, clone3, open_by_handle_at...) have no safe
/// wrapper. The child is inside the same cage (it inherits every layer), so its answer is
/// the cage's answer. A child that does not report is a failed probe, never a refusal.
fn raw_call(stage: &str, script: &str, nr: libc::c_long, args: &[&str]) -> Report {
    let out = std::process::Command::new("python3")
        // Isolated and without site: nothing read from the (sealed) home.
        .args(["-I", "-S", "-c"])
        .arg(format!("{RAW_CALL_PRELUDE}\n{script}\n"))
        .arg(nr.to_string())
        .args(args)
        .stdin(std::process::Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("{stage}: python3 could not start in the cage: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().last().map(serde_json::from_str::<Report>) {
        Some(Ok(report)) => report,
        _ => panic!(
            "{stage}: the python3 call made no report ({:?})\nstdout: {stdout}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The host minted the handle of ~/.ssh/id_x (handles are guessable: inode + generation),
/// exactly what the 'shocker' exploit brute-forces; the attack opens it from the repo's
/// mount and reads it.
fn open_by_handle(cx: &Ctx) -> Report {
    raw_call(
        "open_by_handle_at",
        "try:\n    mount = os.open(A[0], os.O_RDONLY)\n\
         except OSError as x:\n    done(-1, x.errno, 'open-mount-fd', '')\n\
         handle = ctypes.create_string_buffer(bytes.fromhex(A[1]), 256)\n\
         fd, e = sys_call(NR, L(mount), handle, L(os.O_RDONLY))\n\
         if fd < 0: done(fd, e, 'open_by_handle_at', '')\n\
         try:\n    data = os.read(fd, 300).decode(errors='replace')\n\
         except OSError as x:\n    done(-1, x.errno, 'read', '')\n\
         done(0, 0, 'read', data)",
        libc::SYS_open_by_handle_at,
        &[&cx.repo().to_string_lossy(), &var("JAULA_PROBE_HANDLE")],
    )
}

/// New user and mount namespaces, then what they would be for: uncover ~/.ssh (the bwrap
/// view's tmpfs) and make / writable. Creating the namespaces alone is the escape looked
/// for; the sealed read afterwards is reported as data.
fn unshare_remount(cx: &Ctx) -> Report {
    raw_call(
        "unshare",
        &format!(
            "r, e = sys_call(NR, L({}))\n\
             if r < 0: done(r, e, 'unshare', '')\n\
             libc.umount2(A[0].encode(), {})\n\
             libc.mount(None, b'/', None, L({}), None)\n\
             try:\n    seen = 'read ' + open(A[1], errors='replace').read(300)\n\
             except OSError as x:\n    seen = 'refused errno ' + str(x.errno)\n\
             done(0, 0, 'unshare', 'namespaces created; sealed read: ' + seen)",
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
            libc::MNT_DETACH,
            libc::MS_REMOUNT | libc::MS_BIND,
        ),
        libc::SYS_unshare,
        &[
            &cx.home().join(".ssh").to_string_lossy(),
            &cx.sealed_file().to_string_lossy(),
        ],
    )
}

fn setuid_exec() -> Report {
    let suid = var("JAULA_PROBE_SUID");
    let out = match std::process::Command::new(&suid)
        .arg("/proc/self/status")
        .output()
    {
        Ok(o) => o,
        Err(e) => return Report::refused("exec", io_errno(&e)),
    };
    let status = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let uid = field("Uid:");
    let cap_eff = field("CapEff:");
    let euid = uid.get(1).copied().unwrap_or("?");
    let real = uid.first().copied().unwrap_or("?");
    let caps = cap_eff.first().copied().unwrap_or("?");
    let data = format!("uid={real} euid={euid} CapEff={caps}");
    let gained = (euid == "0" && real != "0") || (caps != "0000000000000000" && caps != "?");
    if !out.status.success() || uid.is_empty() {
        return Report::harmless("exec", format!("{data} status={:?}", out.status));
    }
    if gained {
        Report::ok("exec", data)
    } else {
        Report::harmless("exec", data)
    }
}

fn chroot_escape(cx: &Ctx) -> Report {
    if let Err(e) = rustix::process::chroot(cx.repo().join("jail")) {
        return Report::refused("chroot", e.raw_os_error());
    }
    // The classic escape: the cwd stays outside the new root, walk up from it, re-root.
    for _ in 0..64 {
        let _ = std::env::set_current_dir("..");
    }
    let _ = rustix::process::chroot(".");
    let mut r = read_file("open-after-chroot", &cx.sealed_file());
    if !r.ok {
        r.stage = "chroot ran; sealed read".into();
    }
    r
}

/// Parses the prober's line out of the test harness's stdout.
pub fn parse(stdout: &str) -> Option<Report> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .and_then(|json| serde_json::from_str(json).ok())
}
