//! Escape probes: live attacks against `jaula run`, in every backend
//! (landlock, bwrap), as root and as an unprivileged user.
//!
//! The prober is this test binary: each case re-executes it as the caged command with
//! `JAULA_PROBE=<attack>`; its `prober_entry` test makes the attack's raw syscalls and prints
//! one `PROBE-RESULT {json}` line. The case asserts the specific refusal, then checks the
//! host: secrets and files unchanged, no leftovers, the victim process alive, no connection
//! on the host's abstract socket, no mount leaked. Where it is safe, the same attack is first
//! run uncaged as the same user (the control), to show the attack is real on this host.

use crate::common;
mod fixture;
mod prober;

use fixture::{Backend, Fixture, User};
use jaula_policy::seccomp::{decide_syscall, Verdict};
use prober::Report;

/// The prober's entry point: does nothing unless run as a probe.
#[test]
fn prober_entry() {
    if let Ok(name) = std::env::var("JAULA_PROBE") {
        let report = prober::run(&name);
        println!(
            "{}{}",
            prober::RESULT_PREFIX,
            serde_json::to_string(&report).unwrap()
        );
    }
}

/// [`prober_entry`]'s harness name, for the fixture that re-runs it in a cage.
fn prober_entry_name() -> String {
    jaula_testkit::this_test!("prober_entry")
}

const EPERM: i32 = libc::EPERM;
const ENOENT: i32 = libc::ENOENT;
const EACCES: i32 = libc::EACCES;
const EXDEV: i32 = libc::EXDEV;
const EROFS: i32 = libc::EROFS;
const ENOSYS: i32 = libc::ENOSYS;
const ESRCH: i32 = libc::ESRCH;

/// What a caged attack must end in.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// Refused with `errno` at `stage`, by `layer`.
    Refused {
        errno: i32,
        stage: &'static str,
        layer: &'static str,
    },
    /// The sealed directory lists as empty.
    NoNames { layer: &'static str },
    /// A documented limit: the sealed directory's entry names are listed (contents stay
    /// sealed, see the read probes).
    NamesVisible { limit: &'static str },
    /// A documented limit: the host victim's command line is read.
    Visible { limit: &'static str },
    /// The setuid binary ran with the caller's uid and no capabilities.
    NoPrivilege { layer: &'static str },
}

/// What the same attack does with no cage, as the same user.
#[derive(Clone, Copy, Debug)]
enum Control {
    /// The attack works: the cage is what stops it.
    Escapes,
    /// The host already refuses it without a cage (the cage's refusal is a second wall).
    Refused(i32),
    /// Too dangerous to run uncaged on the test host (mounts, kernel images).
    NotRun,
}

struct Spec {
    probe: &'static str,
    attack: &'static str,
    landlock: Outcome,
    bwrap: Outcome,
    control_root: Control,
    control_user: Control,
    /// The syscall (number, arguments) the seccomp filter must refuse with the observed errno.
    seccomp: Option<(i64, [u64; 6])>,
}

const fn refused(errno: i32, stage: &'static str, layer: &'static str) -> Outcome {
    Outcome::Refused {
        errno,
        stage,
        layer,
    }
}

const LANDLOCK: &str = "Landlock";
const VIEW_HIDDEN: &str = "bwrap view: sealed path hidden";
const VIEW_RO: &str = "bwrap view: read-only bind";
const PTRACE_SCOPE: &str = "Landlock: no ptrace access outside the domain";
const SECCOMP: &str = "seccomp";
/// The bwrap view's default PID namespace: host pids do not exist in the cage's /proc.
const PID_NS: &str = "bwrap view: own PID namespace";

const fn same(o: Outcome) -> (Outcome, Outcome) {
    (o, o)
}

const fn spec(
    probe: &'static str,
    attack: &'static str,
    (landlock, bwrap): (Outcome, Outcome),
    (control_root, control_user): (Control, Control),
    seccomp: Option<(i64, [u64; 6])>,
) -> Spec {
    Spec {
        probe,
        attack,
        landlock,
        bwrap,
        control_root,
        control_user,
        seccomp,
    }
}

const ESCAPES: (Control, Control) = (Control::Escapes, Control::Escapes);
const NOT_RUN: (Control, Control) = (Control::NotRun, Control::NotRun);
const ROOT_ONLY: (Control, Control) = (Control::Escapes, Control::Refused(EPERM));

const fn sys(nr: i64, args: [u64; 6]) -> Option<(i64, [u64; 6])> {
    Some((nr, args))
}
const NO_ARGS: [u64; 6] = [0; 6];
const NS_FLAGS: u64 = (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64;

static SPECS: &[Spec] = &[
    spec(
        "read_sealed_file",
        "open ~/.ssh/id_x",
        (
            refused(EACCES, "open", LANDLOCK),
            refused(ENOENT, "open", VIEW_HIDDEN),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_sealed_dir",
        "list ~/.ssh",
        (
            Outcome::NamesVisible {
                limit: "LIMIT: names listed, contents sealed; Landlock cannot subtract \
                        read-dir from a subdirectory of a granted one; the bwrap view hides them",
            },
            Outcome::NoNames {
                layer: "bwrap view: empty tmpfs",
            },
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_via_symlink",
        "symlink in the repo to ~/.ssh/id_x, open it",
        (
            refused(EACCES, "open", LANDLOCK),
            refused(ENOENT, "open", VIEW_HIDDEN),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_via_hardlink",
        "hard-link ~/.ssh/id_x into the repo",
        (
            refused(EXDEV, "link", "Landlock: REFER"),
            refused(ENOENT, "link", VIEW_HIDDEN),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_via_proc_self_root",
        "open /proc/self/root/<sealed file>",
        (
            refused(EACCES, "open", LANDLOCK),
            refused(ENOENT, "open", VIEW_HIDDEN),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_via_proc_pid_root",
        "open /proc/<host pid>/root/<sealed file>",
        (
            refused(EACCES, "open", PTRACE_SCOPE),
            refused(ENOENT, "open", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_via_proc_pid_cwd",
        "open /proc/<host pid>/cwd/id_x (victim's cwd is ~/.ssh)",
        (
            refused(EACCES, "open", PTRACE_SCOPE),
            refused(ENOENT, "open", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_proc_pid_environ",
        "read /proc/<host pid>/environ",
        (
            refused(EACCES, "open", PTRACE_SCOPE),
            refused(ENOENT, "open", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_proc_pid_cmdline",
        "read /proc/<host pid>/cmdline (the victim's argv carries a marker)",
        (
            Outcome::Visible {
                limit: "LIMIT: host command lines are world-readable in /proc and need no \
                        ptrace access; the bwrap backend hides them (own PID namespace and \
                        /proc, its default)",
            },
            refused(ENOENT, "open", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "read_proc_pid_mem",
        "open /proc/<host pid>/mem",
        (
            refused(EACCES, "open", PTRACE_SCOPE),
            refused(ENOENT, "open", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "ptrace_attach",
        "PTRACE_SEIZE a host process",
        same(refused(EPERM, "ptrace", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_ptrace, [libc::PTRACE_SEIZE as u64, 1, 0, 0, 0, 0]),
    ),
    spec(
        "signal_host",
        "SIGKILL a host process",
        (
            refused(EPERM, "kill", "Landlock signal scope"),
            refused(ESRCH, "kill", PID_NS),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "rename_sealed_out",
        "rename ~/.ssh/id_x into the repo",
        (
            refused(EACCES, "rename", LANDLOCK),
            refused(EXDEV, "rename", "bwrap view: ~/.ssh is its own tmpfs"),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "create_outside",
        "create a file outside the writable roots",
        (
            refused(EACCES, "open", LANDLOCK),
            refused(EROFS, "open", VIEW_RO),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "truncate_outside",
        "truncate(2) a file outside the writable roots",
        (
            refused(EACCES, "truncate", "Landlock: TRUNCATE"),
            refused(EROFS, "truncate", VIEW_RO),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "write_via_proc_self_fd",
        "reopen a read-only fd for writing via /proc/self/fd/N",
        (
            refused(EACCES, "reopen-rw", LANDLOCK),
            refused(EROFS, "reopen-rw", VIEW_RO),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "write_cage_config",
        "append to ~/.config/jaula/config.toml",
        (
            refused(EACCES, "open", "the gate: protected path; Landlock besides"),
            refused(
                EACCES,
                "open",
                "the gate: protected path; a read-only bind besides",
            ),
        ),
        ESCAPES,
        None,
    ),
    spec(
        "tiocsti",
        "ioctl(TIOCSTI) on the controlling terminal",
        same(refused(EPERM, "ioctl", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_ioctl, [0, libc::TIOCSTI, 0, 0, 0, 0]),
    ),
    spec(
        "open_by_handle_at",
        "open_by_handle_at with a host-minted handle of ~/.ssh/id_x",
        same(refused(EPERM, "open_by_handle_at", SECCOMP)),
        ROOT_ONLY,
        sys(libc::SYS_open_by_handle_at, NO_ARGS),
    ),
    spec(
        "mount_tmpfs",
        "mount a tmpfs in the repo",
        same(refused(EPERM, "mount", SECCOMP)),
        NOT_RUN,
        sys(libc::SYS_mount, NO_ARGS),
    ),
    spec(
        "unshare_userns_remount",
        "unshare(NEWUSER + NEWNS), unmount ~/.ssh, remount / rw",
        same(refused(EPERM, "unshare", SECCOMP)),
        NOT_RUN,
        sys(libc::SYS_unshare, [NS_FLAGS, 0, 0, 0, 0, 0]),
    ),
    spec(
        "bpf",
        "bpf(BPF_MAP_CREATE)",
        same(refused(EPERM, "bpf", SECCOMP)),
        ROOT_ONLY,
        sys(libc::SYS_bpf, NO_ARGS),
    ),
    spec(
        "perf_event_open",
        "perf_event_open (software clock, user only)",
        same(refused(EPERM, "perf_event_open", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_perf_event_open, NO_ARGS),
    ),
    spec(
        "io_uring_setup",
        "io_uring_setup",
        same(refused(EPERM, "io_uring_setup", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_io_uring_setup, NO_ARGS),
    ),
    spec(
        "userfaultfd",
        "userfaultfd(UFFD_USER_MODE_ONLY)",
        same(refused(EPERM, "userfaultfd", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_userfaultfd, NO_ARGS),
    ),
    spec(
        "keyctl",
        "keyctl(GET_KEYRING_ID, user keyring)",
        same(refused(EPERM, "keyctl", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_keyctl, NO_ARGS),
    ),
    spec(
        "abstract_unix_connect",
        "connect to a host process's abstract unix socket",
        same(refused(
            EPERM,
            "connect",
            "Landlock abstract-unix-socket scope",
        )),
        ESCAPES,
        None,
    ),
    spec(
        "setuid_exec",
        "exec a setuid-root binary",
        same(Outcome::NoPrivilege {
            layer: "hardening: no_new_privs, capabilities emptied",
        }),
        ESCAPES,
        None,
    ),
    spec(
        "load_module",
        "init_module / finit_module",
        same(refused(EPERM, "init_module", SECCOMP)),
        NOT_RUN,
        sys(libc::SYS_init_module, NO_ARGS),
    ),
    spec(
        "kexec",
        "kexec_load",
        same(refused(EPERM, "kexec_load", SECCOMP)),
        NOT_RUN,
        sys(libc::SYS_kexec_load, NO_ARGS),
    ),
    spec(
        "mknod_device",
        "mknod a /dev/mem twin (char 1:1) in the repo",
        same(refused(EPERM, "mknod", "hardening: no CAP_MKNOD")),
        ROOT_ONLY,
        None,
    ),
    spec(
        "chroot_escape",
        "chroot into a repo dir, walk up, re-chroot, read the sealed file",
        same(refused(EPERM, "chroot", SECCOMP)),
        ROOT_ONLY,
        sys(libc::SYS_chroot, NO_ARGS),
    ),
    spec(
        "x32_syscall",
        "getpid through the x32 ABI",
        same(refused(EPERM, "x32 getpid", SECCOMP)),
        (Control::Refused(ENOSYS), Control::Refused(ENOSYS)),
        sys(0x4000_0000 | libc::SYS_getpid, NO_ARGS),
    ),
    spec(
        "clone3_namespaces",
        "clone3 with CLONE_NEWUSER + CLONE_NEWNS",
        same(refused(ENOSYS, "clone3", SECCOMP)),
        ESCAPES,
        sys(libc::SYS_clone3, NO_ARGS),
    ),
    spec(
        "clone_namespaces",
        "clone with CLONE_NEWUSER + CLONE_NEWNS (what clone3 callers fall back to)",
        same(refused(EPERM, "clone", SECCOMP)),
        ESCAPES,
        sys(
            libc::SYS_clone,
            [NS_FLAGS | libc::SIGCHLD as u64, 0, 0, 0, 0, 0],
        ),
    ),
    spec(
        "read_other_window_token",
        "read another window's broker token (own token stays readable)",
        (
            refused(EACCES, "open", LANDLOCK),
            refused(ENOENT, "open", VIEW_HIDDEN),
        ),
        ESCAPES,
        None,
    ),
];

fn spec_of(probe: &str) -> &'static Spec {
    SPECS
        .iter()
        .find(|s| s.probe == probe)
        .unwrap_or_else(|| panic!("no spec for {probe}"))
}

fn errno_name(errno: i32) -> &'static str {
    match errno {
        EPERM => "EPERM",
        ENOENT => "ENOENT",
        EACCES => "EACCES",
        EXDEV => "EXDEV",
        EROFS => "EROFS",
        ENOSYS => "ENOSYS",
        ESRCH => "ESRCH",
        _ => "?",
    }
}

fn assert_outcome(o: Outcome, r: &Report, user: User, probe: &str) {
    assert!(
        !r.data.contains("jaula-marker") && !r.data.contains("jaula-victim-env"),
        "{probe}: a secret reached the cage: {r:?}"
    );
    match o {
        Outcome::Refused { errno, stage, .. } => {
            assert!(!r.ok, "{probe}: the attack succeeded: {r:?}");
            assert_eq!(
                (r.errno, r.stage.as_str()),
                (errno, stage),
                "{probe}: expected {} at {stage}, got {r:?}",
                errno_name(errno)
            );
        }
        Outcome::NoNames { .. } => {
            assert_eq!(
                (r.ok, r.errno, r.stage.as_str(), r.data.as_str()),
                (false, 0, "readdir", ""),
                "{probe}: {r:?}"
            );
        }
        Outcome::NamesVisible { .. } => {
            assert_eq!(
                (r.ok, r.stage.as_str(), r.data.as_str()),
                (true, "readdir", "id_x"),
                "{probe}: the documented limit changed: {r:?}"
            );
        }
        Outcome::Visible { .. } => {
            assert!(
                r.ok && r.data.contains("jaula-victim-argv:"),
                "{probe}: the documented limit changed: {r:?}"
            );
        }
        Outcome::NoPrivilege { .. } => {
            let uid = user.uid();
            assert_eq!(
                (r.ok, r.data.as_str()),
                (
                    false,
                    format!("uid={uid} euid={uid} CapEff=0000000000000000").as_str()
                ),
                "{probe}: the setuid binary gained privilege: {r:?}"
            );
        }
    }
}

fn needs_scopes(probe: &str) -> bool {
    matches!(probe, "signal_host" | "abstract_unix_connect")
}

/// One named case: the control (when safe), then the caged attack and the host checks.
fn case(backend: Backend, user: User, probe: &str) {
    if !common::is_root() {
        common::skip_or_fail(
            "escape probes need root: setuid-root fixture, victims and cages as uid 65534",
        );
        return;
    }
    // The raw calls without a safe wrapper are made through python3's ctypes (the crate
    // forbids `unsafe`), and setsid gives the TIOCSTI attack its terminal.
    if !common::tools_or_skip(&["python3", "setsid"]) {
        return;
    }
    if needs_scopes(probe) && !jaula_sandbox::landlock::probe().scopes_missing.is_empty() {
        common::skip_or_fail("Landlock scopes (ABI 6) missing on this kernel");
        return;
    }
    let spec = spec_of(probe);
    let control = match user {
        User::Root => spec.control_root,
        User::Nobody => spec.control_user,
    };
    if !matches!(control, Control::NotRun) {
        let fx = Fixture::new(user, probe);
        let r = fx.uncaged(probe).0;
        match control {
            Control::Escapes => assert!(r.ok, "{probe}: the uncaged control failed: {r:?}"),
            Control::Refused(errno) => assert_eq!(
                (r.ok, r.errno),
                (false, errno),
                "{probe}: uncaged control: {r:?}"
            ),
            Control::NotRun => unreachable!(),
        }
    }
    let mut fx = Fixture::new(user, probe);
    let Some((r, out)) = fx.caged(backend, probe) else {
        common::skip_or_fail(&format!("jaula refused to build a {} cage", backend.name()));
        return;
    };
    assert!(
        out.status.success(),
        "{probe}: the prober failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = match backend {
        Backend::Landlock => spec.landlock,
        Backend::Bwrap => spec.bwrap,
    };
    assert_outcome(expected, &r, user, probe);
    fx.assert_host_intact(probe);
    if let Some((nr, args)) = spec.seccomp {
        match decide_syscall(nr, &args) {
            Verdict::Deny { errno, .. } => assert_eq!(
                errno.raw(),
                r.errno,
                "{probe}: the refusal is not the seccomp filter's"
            ),
            v => panic!("{probe}: the seccomp reference allows {nr}: {v:?}"),
        }
    }
}

macro_rules! matrix {
    ($($probe:ident),* $(,)?) => {
        const ALL: &[&str] = &[$(stringify!($probe)),*];
        mod landlock_root {
            $(#[test] fn $probe() {
                super::case(super::Backend::Landlock, super::User::Root, stringify!($probe));
            })*
        }
        mod landlock_user {
            $(#[test] fn $probe() {
                super::case(super::Backend::Landlock, super::User::Nobody, stringify!($probe));
            })*
        }
        mod bwrap_root {
            $(#[test] fn $probe() {
                super::case(super::Backend::Bwrap, super::User::Root, stringify!($probe));
            })*
        }
        mod bwrap_user {
            $(#[test] fn $probe() {
                super::case(super::Backend::Bwrap, super::User::Nobody, stringify!($probe));
            })*
        }
    };
}

matrix!(
    read_sealed_file,
    read_sealed_dir,
    read_via_symlink,
    read_via_hardlink,
    read_via_proc_self_root,
    read_via_proc_pid_root,
    read_via_proc_pid_cwd,
    read_proc_pid_environ,
    read_proc_pid_cmdline,
    read_proc_pid_mem,
    ptrace_attach,
    signal_host,
    rename_sealed_out,
    create_outside,
    truncate_outside,
    write_via_proc_self_fd,
    write_cage_config,
    tiocsti,
    open_by_handle_at,
    mount_tmpfs,
    unshare_userns_remount,
    bpf,
    perf_event_open,
    io_uring_setup,
    userfaultfd,
    keyctl,
    abstract_unix_connect,
    setuid_exec,
    load_module,
    kexec,
    mknod_device,
    chroot_escape,
    x32_syscall,
    clone3_namespaces,
    clone_namespaces,
    read_other_window_token,
);

/// `--pid-ns` (now the default, still accepted) keeps the host's processes hidden, and
/// `--no-pid-ns`, the documented opt-out, shows them again: the namespace is what hides
/// them, so the opt-out brings back the native limit (host command lines readable).
#[test]
fn bwrap_pid_ns_flags_hide_and_share_host_processes() {
    for user in [User::Root, User::Nobody] {
        if !common::is_root() {
            common::skip_or_fail("escape probes need root");
            return;
        }
        if !common::tools_or_skip(&["python3"]) {
            return;
        }
        for probe in [
            "read_proc_pid_cmdline",
            "read_proc_pid_environ",
            "signal_host",
        ] {
            let mut fx = Fixture::new(user, probe);
            let Some((r, _)) = fx.caged_with(Backend::Bwrap, &["--pid-ns"], probe) else {
                common::skip_or_fail("jaula refused to build a bwrap cage");
                return;
            };
            let errno = if probe == "signal_host" {
                libc::ESRCH
            } else {
                ENOENT
            };
            assert_eq!((r.ok, r.errno), (false, errno), "{probe} {user:?}: {r:?}");
            fx.assert_host_intact(probe);
        }
        let mut fx = Fixture::new(user, "read_proc_pid_cmdline");
        let (r, _) = fx
            .caged_with(Backend::Bwrap, &["--no-pid-ns"], "read_proc_pid_cmdline")
            .expect("a bwrap cage was built above");
        assert!(
            r.ok && r.data.contains("jaula-victim-argv:"),
            "--no-pid-ns {user:?}: {r:?}"
        );
        fx.assert_host_intact("read_proc_pid_cmdline");
    }
}

#[test]
fn every_probe_has_one_spec_and_the_prober_knows_it() {
    assert_eq!(ALL.len(), SPECS.len());
    for (probe, spec) in ALL.iter().zip(SPECS) {
        assert_eq!(*probe, spec.probe, "matrix and SPECS out of order");
    }
}

fn cell(o: Outcome) -> String {
    match o {
        Outcome::Refused { errno, layer, .. } => format!("{} ({layer})", errno_name(errno)),
        Outcome::NoNames { layer } => format!("empty listing ({layer})"),
        Outcome::NamesVisible { limit } | Outcome::Visible { limit } => limit.to_string(),
        Outcome::NoPrivilege { layer } => format!("runs, no privilege ({layer})"),
    }
}

fn control_cell(c: Control) -> String {
    match c {
        Control::Escapes => "escapes".into(),
        Control::Refused(e) => errno_name(e).into(),
        Control::NotRun => "not run".into(),
    }
}

/// The table of docs/escape-probes.md, rendered from the outcomes the cases assert (every
/// case asserts the same outcome as root and as uid 65534; only the setuid probe's uid
/// differs, and its cell says so).
fn markdown_table() -> String {
    let mut out = String::from(
        "| probe | attack | landlock root | landlock uid 65534 | bwrap root | bwrap uid 65534 \
         | uncaged root | uncaged uid 65534 |\n|---|---|---|---|---|---|---|---|\n",
    );
    for s in SPECS {
        let (l, b) = (cell(s.landlock), cell(s.bwrap));
        out.push_str(&format!(
            "| `{}` | {} | {l} | {l} | {b} | {b} | {} | {} |\n",
            s.probe,
            s.attack,
            control_cell(s.control_root),
            control_cell(s.control_user)
        ));
    }
    out
}

#[test]
fn docs_table_matches_the_asserted_outcomes() {
    let table = markdown_table();
    for name in ["escape-probes.md", "security.md"] {
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs")
            .join(name);
        let text = std::fs::read_to_string(&doc).unwrap_or_default();
        assert!(
            text.contains(&table),
            "{} is out of date; its table must be:\n{table}",
            doc.display()
        );
    }
}
