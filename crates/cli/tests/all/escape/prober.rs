//! The prober: the attacks themselves, run inside the cage by the test binary re-executed
//! as the caged command. Each attack makes the raw syscall an escaping process would make
//! and reports what the kernel answered, as one machine-readable line on stdout.
//!
//! Inputs come from the environment (names chosen so the cage's credential scrub keeps
//! them): `JAULA_PROBE` (the attack), `JAULA_PROBE_ROOT` (the scratch tree), `JAULA_PROBE_PID`
//! (the host victim), `JAULA_PROBE_SOCK` (the host's abstract socket name),
//! `JAULA_PROBE_SUID` (the setuid-root binary), `JAULA_PROBE_HANDLE` (a file handle for a
//! sealed file, minted on the host).

use std::ffi::CString;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(-1)
}

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
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
        "ptrace_attach" => {
            // SAFETY: PTRACE_SEIZE takes no pointers; a seized tracee is released when the
            // prober exits.
            let r = unsafe {
                libc::ptrace(
                    libc::PTRACE_SEIZE,
                    cx.victim(),
                    std::ptr::null_mut::<libc::c_void>(),
                    std::ptr::null_mut::<libc::c_void>(),
                )
            };
            if r == 0 {
                Report::ok("ptrace", "seized")
            } else {
                Report::refused("ptrace", last_errno())
            }
        }
        "signal_host" => {
            // SAFETY: plain syscall on integers.
            let r = unsafe { libc::kill(cx.victim(), libc::SIGKILL) };
            if r == 0 {
                Report::ok("kill", "SIGKILL delivered")
            } else {
                Report::refused("kill", last_errno())
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
        "truncate_outside" => {
            // SAFETY: the path is a valid NUL-terminated string for the call's duration.
            let r = unsafe { libc::truncate(cstr(&cx.outside()).as_ptr(), 0) };
            if r == 0 {
                Report::ok("truncate", "truncated")
            } else {
                Report::refused("truncate", last_errno())
            }
        }
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
            // SAFETY: isatty/ioctl on fd 0 with a pointer to a live byte.
            let tty = unsafe { libc::isatty(0) } == 1;
            if !tty {
                return Report::harmless("isatty", "stdin is not a terminal");
            }
            let byte: u8 = b'#';
            // SAFETY: TIOCSTI reads one byte through the pointer, which outlives the call.
            let r = unsafe { libc::ioctl(0, libc::TIOCSTI, &byte as *const u8) };
            if r == 0 {
                Report::ok("ioctl", "keystroke injected")
            } else {
                Report::refused("ioctl", last_errno())
            }
        }
        "open_by_handle_at" => open_by_handle(&cx),
        "mount_tmpfs" => {
            let target = cstr(&cx.repo().join("mnt"));
            // SAFETY: every pointer is a valid NUL-terminated string or null.
            let r = unsafe {
                libc::mount(
                    c"none".as_ptr(),
                    target.as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if r == 0 {
                Report::ok("mount", "tmpfs mounted")
            } else {
                Report::refused("mount", last_errno())
            }
        }
        "unshare_userns_remount" => unshare_remount(&cx),
        "bpf" => {
            // union bpf_attr for BPF_MAP_CREATE: map_type, key_size, value_size, max_entries.
            let mut attr = [0u32; 32];
            attr[0] = 2; // BPF_MAP_TYPE_ARRAY
            attr[1] = 4;
            attr[2] = 4;
            attr[3] = 1;
            // SAFETY: attr is a live buffer of the size passed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_bpf,
                    0, // BPF_MAP_CREATE
                    attr.as_mut_ptr(),
                    std::mem::size_of_val(&attr),
                )
            };
            syscall_report("bpf", r, "map created")
        }
        "perf_event_open" => {
            // struct perf_event_attr: type u32, size u32, config u64, ..., flags u64 at 40.
            let mut attr = [0u64; 16];
            attr[0] = 1 | (128u64 << 32); // PERF_TYPE_SOFTWARE, size 128
            attr[1] = 0; // PERF_COUNT_SW_CPU_CLOCK
            attr[5] = (1 << 5) | (1 << 6); // exclude_kernel, exclude_hv
                                           // SAFETY: attr is a live 128-byte buffer, as its size field says.
            let r = unsafe {
                libc::syscall(libc::SYS_perf_event_open, attr.as_mut_ptr(), 0, -1, -1, 0)
            };
            syscall_report("perf_event_open", r, "event opened")
        }
        "io_uring_setup" => {
            let mut params = [0u8; 120];
            // SAFETY: params is a live, zeroed struct io_uring_params.
            let r = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1, params.as_mut_ptr()) };
            syscall_report("io_uring_setup", r, "ring created")
        }
        "userfaultfd" => {
            // UFFD_USER_MODE_ONLY (1): the unprivileged form.
            // SAFETY: integer arguments only.
            let r = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | 1) };
            syscall_report("userfaultfd", r, "uffd created")
        }
        "keyctl" => {
            // KEYCTL_GET_KEYRING_ID (0) of KEY_SPEC_USER_KEYRING (-4), create = 0.
            // SAFETY: integer arguments only.
            let r = unsafe { libc::syscall(libc::SYS_keyctl, 0, -4i32, 0) };
            syscall_report("keyctl", r, "user keyring reached")
        }
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
        "load_module" => {
            let image = [0u8; 16];
            // SAFETY: image is live for the call; params is a valid empty string.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_init_module,
                    image.as_ptr(),
                    image.len(),
                    c"".as_ptr(),
                )
            };
            let first = syscall_report("init_module", r, "module loaded");
            if first.ok {
                return first;
            }
            // SAFETY: fd 0 and an empty string; the kernel only reads them.
            let r = unsafe { libc::syscall(libc::SYS_finit_module, 0, c"".as_ptr(), 0) };
            let second = syscall_report("finit_module", r, "module loaded");
            if second.errno != first.errno {
                return second;
            }
            first
        }
        "kexec" => {
            // SAFETY: no segments, null pointer with count 0.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_kexec_load,
                    0,
                    0,
                    std::ptr::null::<libc::c_void>(),
                    0,
                )
            };
            syscall_report("kexec_load", r, "kexec_load accepted")
        }
        "mknod_device" => {
            let p = cstr(&cx.repo().join("mem"));
            // /dev/mem is char 1:1: a device node in a writable root reaches physical memory.
            // SAFETY: valid NUL-terminated path.
            let r = unsafe { libc::mknod(p.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 1)) };
            if r == 0 {
                Report::ok("mknod", "device node created")
            } else {
                Report::refused("mknod", last_errno())
            }
        }
        "chroot_escape" => chroot_escape(&cx),
        "x32_syscall" => {
            // getpid through the x32 ABI: same audit arch as x86_64, only the number differs.
            // SAFETY: getpid takes no arguments.
            let r = unsafe { libc::syscall(0x4000_0000 | libc::SYS_getpid) };
            syscall_report("x32 getpid", r, "x32 syscall ran")
        }
        "clone3_namespaces" => clone3_namespaces(),
        "clone_namespaces" => {
            // SAFETY: fork-like clone (no new stack): the child only calls _exit.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_clone,
                    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::SIGCHLD,
                    0,
                    0,
                    0,
                    0,
                )
            };
            reap_clone("clone", r)
        }
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

fn syscall_report(stage: &str, r: libc::c_long, what: &str) -> Report {
    if r >= 0 {
        Report::ok(stage, what)
    } else {
        Report::refused(stage, last_errno())
    }
}

fn reap_clone(stage: &str, r: libc::c_long) -> Report {
    if r == 0 {
        // SAFETY: in the fork-like child: leave at once without running any Rust code.
        unsafe { libc::_exit(0) };
    }
    if r < 0 {
        return Report::refused(stage, last_errno());
    }
    let mut status = 0;
    // SAFETY: waits for the child just created.
    unsafe { libc::waitpid(r as libc::pid_t, &mut status, 0) };
    Report::ok(stage, "child created in new namespaces")
}

fn clone3_namespaces() -> Report {
    // struct clone_args (11 u64 fields, CLONE_ARGS_SIZE_VER2 = 88).
    let mut args = [0u64; 11];
    args[0] = (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64;
    args[4] = libc::SIGCHLD as u64; // exit_signal
                                    // SAFETY: args is a live clone_args of the size passed; no stack: the child only
                                    // calls _exit.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            args.as_mut_ptr(),
            std::mem::size_of_val(&args),
        )
    };
    reap_clone("clone3", r)
}

fn open_by_handle(cx: &Ctx) -> Report {
    // The host minted the handle of ~/.ssh/id_x (handles are guessable: inode + generation),
    // exactly what the 'shocker' exploit brute-forces.
    let hex = var("JAULA_PROBE_HANDLE");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let mut buf = vec![0u64; 1 + bytes.len() / 8 + 1];
    // SAFETY: buf has room for bytes (u64-aligned, as struct file_handle needs).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.as_mut_ptr() as *mut u8, bytes.len())
    };
    let mount = match fs::File::open(cx.repo()) {
        Ok(f) => f,
        Err(e) => return Report::refused("open-mount-fd", io_errno(&e)),
    };
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: buf holds a struct file_handle; the mount fd is open.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_by_handle_at,
            mount.as_raw_fd(),
            buf.as_mut_ptr(),
            libc::O_RDONLY,
        )
    };
    if fd < 0 {
        return Report::refused("open_by_handle_at", last_errno());
    }
    // SAFETY: the kernel just returned this descriptor to us.
    let mut f = unsafe { fs::File::from_raw_fd(fd as i32) };
    let mut out = Vec::new();
    match f.read_to_end(&mut out) {
        Ok(_) => Report::ok("read", clip(&out)),
        Err(e) => Report::refused("read", io_errno(&e)),
    }
}

fn unshare_remount(cx: &Ctx) -> Report {
    // SAFETY: integer flags only.
    let r = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) };
    if r != 0 {
        return Report::refused("unshare", last_errno());
    }
    // In the new namespaces: uncover ~/.ssh (the bwrap view's tmpfs) and make / writable.
    let ssh = cstr(&cx.home().join(".ssh"));
    // SAFETY: valid NUL-terminated path.
    unsafe { libc::umount2(ssh.as_ptr(), libc::MNT_DETACH) };
    // SAFETY: valid NUL-terminated path, null data.
    unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND,
            std::ptr::null(),
        )
    };
    // Namespaces were created: that alone is the escape this probe looks for.
    let r = read_file("open-after-unshare", &cx.sealed_file());
    Report::ok("unshare", format!("namespaces created; sealed read: {r:?}"))
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
    let jail = cstr(&cx.repo().join("jail"));
    // SAFETY: valid NUL-terminated path.
    if unsafe { libc::chroot(jail.as_ptr()) } != 0 {
        return Report::refused("chroot", last_errno());
    }
    // The classic escape: the cwd stays outside the new root, walk up from it, re-root.
    for _ in 0..64 {
        // SAFETY: valid NUL-terminated path.
        unsafe { libc::chdir(c"..".as_ptr()) };
    }
    // SAFETY: valid NUL-terminated path.
    unsafe { libc::chroot(c".".as_ptr()) };
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
