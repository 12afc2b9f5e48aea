//! Escape probes (issue 3, item 6): live attacks against `jaula run`, in every backend
//! (landlock, bwrap), as root and as an unprivileged user.
//!
//! The prober is this test binary: each case re-executes it as the caged command with
//! `JAULA_PROBE=<attack>`; its `prober_entry` test makes the attack's raw syscalls and prints
//! one `PROBE-RESULT {json}` line. The case asserts the specific refusal, then checks the
//! host: secrets and files unchanged, no leftovers, the victim process alive, no connection
//! on the host's abstract socket, no mount leaked. Where it is safe, the same attack is first
//! run uncaged as the same user (the control), to show the attack is real on this host.

mod common;
#[path = "escape/fixture.rs"]
mod fixture;
#[path = "escape/prober.rs"]
mod prober;

use fixture::{Backend, Fixture, User};

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

const ALL: &[&str] = &[
    "read_sealed_file",
    "read_sealed_dir",
    "read_via_symlink",
    "read_via_hardlink",
    "read_via_proc_self_root",
    "read_via_proc_pid_root",
    "read_via_proc_pid_cwd",
    "read_proc_pid_environ",
    "read_proc_pid_mem",
    "ptrace_attach",
    "signal_host",
    "rename_sealed_out",
    "create_outside",
    "truncate_outside",
    "write_via_proc_self_fd",
    "write_cage_config",
    "tiocsti",
    "open_by_handle_at",
    "mount_tmpfs",
    "unshare_userns_remount",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "userfaultfd",
    "keyctl",
    "abstract_unix_connect",
    "setuid_exec",
    "load_module",
    "kexec",
    "mknod_device",
    "chroot_escape",
    "x32_syscall",
    "clone3_namespaces",
    "clone_namespaces",
    "read_other_window_token",
];

const NO_CONTROL: &[&str] = &["mount_tmpfs", "unshare_userns_remount", "load_module", "kexec"];

#[test]
#[ignore = "discovery: prints every probe's outcome"]
fn discover() {
    for probe in ALL {
        for user in [User::Root, User::Nobody] {
            if !NO_CONTROL.contains(probe) {
                let fx = Fixture::new(user, probe);
                let (r, _) = fx.uncaged(probe);
                println!("DISC {probe} uncaged {user:?} {r:?}");
            }
            for backend in [Backend::Landlock, Backend::Bwrap] {
                let mut fx = Fixture::new(user, probe);
                let (r, out) = fx.caged(backend, probe);
                let intact = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    fx.assert_host_intact(probe)
                }))
                .is_ok();
                println!(
                    "DISC {probe} {backend:?} {user:?} {r:?} intact={intact} rc={:?} {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
    }
}
