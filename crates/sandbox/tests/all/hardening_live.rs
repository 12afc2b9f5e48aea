//! Live-kernel tests of process hardening.
//!
//! `harden` changes the calling process for good, so it never runs in this test process:
//! each test re-executes this binary (`--exact <test> --nocapture --test-threads=1`) with
//! a role in the environment. The child optionally drops to uid 65534, runs `harden`,
//! prints its report and execs `/bin/sh -c <script>`; the parent asserts on what the
//! kernel reports *after* execve. Where a claim could also hold for an unrelated reason,
//! the same script first runs in an unhardened child as a control that must show the
//! opposite.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use jaula_sandbox::hardening::{harden, HardeningOptions, Outcome, Step};
use jaula_testkit::{is_root, rerun, skip_or_fail, this_test, NOBODY};
use serde_json::Value;

/// The environment variables that hand a re-run child its part, each
/// `JAULA_HARDENING_LIVE_<NAME>`.
macro_rules! child_env {
    ($($name:ident),*) => {
        $(const $name: &str = concat!("JAULA_HARDENING_LIVE_", stringify!($name));)*
    };
}
child_env!(ROLE, HARDEN, SCRIPT, KEEP_FD, PROGRAM);
const CAPSH: &str = "/usr/sbin/capsh";

/// Descriptors the parent leaks into the child: in the first close-on-exec range, the one
/// kept, and one in the range above it.
const LEAKED_LOW: RawFd = 40;
const LEAKED_KEPT: RawFd = 41;
const LEAKED_HIGH: RawFd = 1000;

const STATUS_SCRIPT: &str = "echo @sh_status; cat /proc/$$/status; \
     echo @cat_status; cat /proc/self/status; \
     echo @fds; ls /proc/$$/fd; \
     echo @core; ulimit -c; ulimit -H -c; echo @end";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Identity {
    Root,
    Nobody,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hardening {
    /// The control: exec without hardening.
    None,
    Once,
    Twice,
    /// Call `harden`, expect an error, print the state it left and exit without exec.
    ExpectError,
}

// ---------------------------------------------------------------------------------------
// Child side.

fn child_role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// Runs in the re-executed child: never returns.
fn child_main(role: &str) -> ! {
    // libtest has printed "test <name> ... " without a newline: start the child's
    // output on a line of its own.
    println!();
    if role == "nobody" {
        drop_to_nobody();
    }
    let keep_fds: Vec<RawFd> = std::env::var(KEEP_FD)
        .ok()
        .map(|fd| vec![fd.parse().expect("keep fd number")])
        .unwrap_or_default();
    let options = HardeningOptions::new();
    let options = keep_fds.iter().fold(options, |o, fd| o.keep_fd(*fd));
    let rounds = match std::env::var(HARDEN).as_deref() {
        Ok("0") => 0,
        Ok("1") => 1,
        Ok("2") => 2,
        Ok("expect-error") => {
            match harden(&options) {
                Ok(report) => println!("JAULA_UNEXPECTED_SUCCESS {report}"),
                Err(error) => println!("JAULA_HARDEN_ERROR {error}"),
            }
            // Show what the failed call left behind.
            let status = std::fs::read_to_string("/proc/self/status").expect("status");
            println!("@self_status\n{status}@end");
            std::io::stdout().flush().expect("flush");
            std::process::exit(0);
        }
        other => panic!("unknown {HARDEN} value {other:?}"),
    };
    for _ in 0..rounds {
        match harden(&options) {
            Ok(report) => {
                println!("JAULA_REPORT {}", serde_json::to_string(&report).unwrap());
                print!("{report}");
            }
            Err(error) => {
                println!("JAULA_HARDEN_ERROR {error}");
                std::io::stdout().flush().expect("flush");
                std::process::exit(3);
            }
        }
    }
    std::io::stdout().flush().expect("flush");
    let script = std::env::var(SCRIPT).expect("script");
    let error = Command::new("/bin/sh").arg("-c").arg(script).exec();
    panic!("exec /bin/sh failed: {error}");
}

fn drop_to_nobody() {
    // SAFETY: plain libc calls with valid arguments (an empty group list may be null);
    // glibc applies each to every thread of this process.
    unsafe {
        assert_eq!(libc::setgroups(0, std::ptr::null()), 0, "setgroups");
        assert_eq!(libc::setgid(NOBODY), 0, "setgid");
        assert_eq!(libc::setuid(NOBODY), 0, "setuid");
    }
}

// ---------------------------------------------------------------------------------------
// Parent side.

struct Child {
    identity: Identity,
    hardening: Hardening,
    script: String,
    keep_fd: Option<RawFd>,
    program: Option<PathBuf>,
    leak: Vec<(File, RawFd)>,
}

impl Child {
    fn new(identity: Identity, hardening: Hardening, script: &str) -> Self {
        Self {
            identity,
            hardening,
            script: script.to_owned(),
            keep_fd: None,
            program: None,
            leak: Vec::new(),
        }
    }

    fn run(self, test_name: &str) -> ChildOutput {
        let mut command = rerun::command(&this_test!(test_name));
        command
            .env(
                ROLE,
                match self.identity {
                    Identity::Root => "root",
                    Identity::Nobody => "nobody",
                },
            )
            .env(
                HARDEN,
                match self.hardening {
                    Hardening::None => "0",
                    Hardening::Once => "1",
                    Hardening::Twice => "2",
                    Hardening::ExpectError => "expect-error",
                },
            )
            .env(SCRIPT, &self.script);
        if let Some(fd) = self.keep_fd {
            command.env(KEEP_FD, fd.to_string());
        }
        if let Some(program) = &self.program {
            command.env(PROGRAM, program);
        }
        let leak: Vec<(RawFd, RawFd)> = self
            .leak
            .iter()
            .map(|(file, target)| (file.as_raw_fd(), *target))
            .collect();
        // SAFETY: dup2 is async-signal-safe and the closure allocates nothing; it runs in
        // the forked child only, where the target numbers belong to nobody else yet.
        // dup2's copy is not close-on-exec: exactly an fd a careless parent leaks.
        unsafe {
            command.pre_exec(move || {
                for (source, target) in &leak {
                    if libc::dup2(*source, *target) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let output = command.output().expect("spawn child");
        drop(self.leak);
        let output = ChildOutput::new(output);
        // Shown with --nocapture, and by libtest when the test fails.
        eprintln!(
            "--- child {:?}/{:?}:\n{}{}",
            self.identity, self.hardening, output.stdout, output.stderr
        );
        output
    }
}

struct ChildOutput {
    stdout: String,
    stderr: String,
    success: bool,
}

impl ChildOutput {
    fn new(output: Output) -> Self {
        Self {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            success: output.status.success(),
        }
    }

    fn assert_success(&self) -> &Self {
        assert!(
            self.success,
            "child failed:\n{}\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Lines between `@name` and the next `@` marker.
    fn section(&self, name: &str) -> Vec<&str> {
        let marker = format!("@{name}");
        let mut lines = self.stdout.lines().skip_while(|l| *l != marker);
        assert!(
            lines.next().is_some(),
            "no section {name} in:\n{}",
            self.stdout
        );
        lines.take_while(|l| !l.starts_with('@')).collect()
    }

    fn reports(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| after(l, "JAULA_REPORT "))
            .map(|json| serde_json::from_str(json).unwrap())
            .collect()
    }

    fn line_with(&self, prefix: &str) -> &str {
        self.stdout
            .lines()
            .find_map(|l| after(l, prefix))
            .unwrap_or_else(|| panic!("no line {prefix} in:\n{}\n{}", self.stdout, self.stderr))
    }
}

/// The rest of `line` after `marker`: libtest prints "test <name> ... " without a newline
/// before the child's first line of output.
fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.find(marker).map(|at| &line[at + marker.len()..])
}

/// A `/proc/<pid>/status` field as a number (hex for capability masks).
fn status_field(status: &[&str], field: &str) -> u64 {
    let value = status
        .iter()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {status:?}"))
        .trim();
    if field.starts_with("Cap") {
        u64::from_str_radix(value, 16).unwrap()
    } else {
        value.split_whitespace().next().unwrap().parse().unwrap()
    }
}

fn outcome(report: &Value, step: Step) -> String {
    let name = serde_json::to_value(step).unwrap();
    let entry = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {report}"));
    entry["outcome"].as_str().unwrap().to_owned()
}

fn outcome_name(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

fn scratch() -> tempfile::TempDir {
    let (dir, _) = jaula_testkit::scratch!("hardening-live-");
    // uid 65534 must reach the binaries placed here.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn leaked_files(dir: &Path) -> Vec<(File, RawFd)> {
    [LEAKED_LOW, LEAKED_KEPT, LEAKED_HIGH]
        .into_iter()
        .map(|target| {
            let path = dir.join(format!("leak-{target}"));
            (File::create(path).unwrap(), target)
        })
        .collect()
}

const ALL_CAPS: [&str; 5] = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"];

/// The shared assertions of the status script: capabilities, no_new_privs, core limit and
/// descriptors, after one and after two execs.
fn assert_hardened_status(out: &ChildOutput, identity: Identity) {
    for section in ["sh_status", "cat_status"] {
        let status = out.section(section);
        for cap in ALL_CAPS {
            let value = status_field(&status, cap);
            if cap == "CapBnd" && identity == Identity::Nobody {
                // Without CAP_SETPCAP the bounding set cannot shrink; the setuid and file
                // capability tests below prove that no_new_privs makes that harmless.
                assert_ne!(value, 0, "{section}: {cap} (expected the inherited set)");
            } else {
                assert_eq!(value, 0, "{section}: {cap} = {value:#x}");
            }
        }
        assert_eq!(status_field(&status, "NoNewPrivs"), 1, "{section}");
        let expected_uid = match identity {
            Identity::Root => 0,
            Identity::Nobody => u64::from(NOBODY),
        };
        assert_eq!(status_field(&status, "Uid"), expected_uid, "{section}");
    }
    assert_eq!(
        out.section("core"),
        vec!["0", "0"],
        "soft and hard core limit"
    );
    let fds: BTreeSet<RawFd> = out
        .section("fds")
        .iter()
        .map(|fd| fd.parse().unwrap())
        .collect();
    assert!(fds.contains(&LEAKED_KEPT), "kept fd closed: {fds:?}");
    assert!(
        !fds.contains(&LEAKED_LOW),
        "leaked fd survived exec: {fds:?}"
    );
    assert!(
        !fds.contains(&LEAKED_HIGH),
        "leaked fd survived exec: {fds:?}"
    );
    assert!(fds.is_superset(&BTreeSet::from([0, 1, 2])), "{fds:?}");
}

fn run_status(test_name: &str, identity: Identity, extra: &str) -> ChildOutput {
    let dir = scratch();
    let script = format!("{extra}{STATUS_SCRIPT}");
    let mut child = Child::new(identity, Hardening::Once, &script);
    child.keep_fd = Some(LEAKED_KEPT);
    child.leak = leaked_files(dir.path());
    let out = child.run(test_name);
    out.assert_success();
    out
}

/// Each test's first step. In a re-executed child: play the child's role (it exits). In
/// the parent: true as root, otherwise a skip (a failure under CI) naming `why`.
fn parent_as_root(why: &str) -> bool {
    if let Some(role) = child_role() {
        child_main(&role);
    }
    if is_root() {
        return true;
    }
    skip_or_fail(why);
    false
}

// ---------------------------------------------------------------------------------------
// Tests.

#[test]
fn root_exec_after_harden_has_no_capabilities_no_core_and_only_kept_fds() {
    if !parent_as_root("needs root to show that uid 0 regains nothing at execve") {
        return;
    }
    // capsh reads the securebits back after execve: they are inherited, and locked.
    let capsh = Path::new(CAPSH).exists();
    let extra = if capsh {
        "echo @securebits; /usr/sbin/capsh --print | grep Securebits; "
    } else {
        ""
    };
    let out = run_status(
        "root_exec_after_harden_has_no_capabilities_no_core_and_only_kept_fds",
        Identity::Root,
        extra,
    );
    assert_hardened_status(&out, Identity::Root);
    let report = &out.reports()[0];
    for step in [
        Step::Securebits,
        Step::BoundingSet,
        Step::Capabilities,
        Step::NoNewPrivs,
        Step::CoreDumps,
        Step::InheritedFds,
    ] {
        assert_eq!(
            outcome(report, step),
            outcome_name(Outcome::Applied),
            "{step:?}"
        );
    }
    if capsh {
        let line = out.section("securebits").join("");
        assert!(line.starts_with("Securebits: 0357/0xef/"), "{line}");
    } else {
        skip_or_fail("capsh (libcap2-bin) missing: securebits after execve not checked");
    }
}

#[test]
fn nobody_exec_after_harden_has_no_capabilities_no_core_and_only_kept_fds() {
    if !parent_as_root("needs root to switch to uid 65534") {
        return;
    }
    let out = run_status(
        "nobody_exec_after_harden_has_no_capabilities_no_core_and_only_kept_fds",
        Identity::Nobody,
        "",
    );
    assert_hardened_status(&out, Identity::Nobody);
    let report = &out.reports()[0];
    // The steps that need CAP_SETPCAP are reported, not silently skipped.
    let not_permitted = outcome_name(Outcome::NotPermitted);
    assert_eq!(outcome(report, Step::Securebits), not_permitted);
    assert_eq!(outcome(report, Step::BoundingSet), not_permitted);
    // setuid(65534) from root already emptied the sets (no KEEP_CAPS).
    assert_eq!(
        outcome(report, Step::Capabilities),
        outcome_name(Outcome::AlreadyInPlace)
    );
    assert_eq!(
        outcome(report, Step::NoNewPrivs),
        outcome_name(Outcome::Applied)
    );
    assert!(out.stdout.contains("no CAP_SETPCAP"), "{}", out.stdout);
}

#[test]
fn root_after_harden_cannot_read_environ_of_host_processes() {
    if !parent_as_root("needs root: the claim is about uid 0 without capabilities") {
        return;
    }
    let name = "root_after_harden_cannot_read_environ_of_host_processes";
    // $PPID of the shell is this test process: uid 0 with the capabilities the test
    // runner has. /proc/1 is checked too, but pid 1 may hold capabilities the runner
    // lacks (it does on the build machine), which would deny the read with or without
    // hardening; the parent is the target that the control proves readable.
    let script = "cat /proc/$PPID/environ 2>&1 >/dev/null && echo parent=readable; \
                  cat /proc/1/environ 2>&1 >/dev/null && echo pid1=readable; echo @end";
    let control = Child::new(Identity::Root, Hardening::None, script).run(name);
    control.assert_success();
    assert!(
        control.stdout.contains("parent=readable"),
        "control: an unhardened root child must read its parent's environ:\n{}",
        control.stdout
    );

    let hardened = Child::new(Identity::Root, Hardening::Once, script).run(name);
    hardened.assert_success();
    assert!(
        !hardened.stdout.contains("parent=readable"),
        "{}",
        hardened.stdout
    );
    assert!(
        !hardened.stdout.contains("pid1=readable"),
        "{}",
        hardened.stdout
    );
    let refusals = hardened
        .stdout
        .lines()
        .filter(|l| {
            l.contains("/environ: Permission denied")
                || l.contains("/environ: Operation not permitted")
        })
        .count();
    assert_eq!(
        refusals, 2,
        "both reads refused with EACCES/EPERM:\n{}",
        hardened.stdout
    );
}

/// Copies `source` into a scratch directory as a root-owned binary with `mode`.
fn root_owned_copy(dir: &Path, source: &str, name: &str, mode: u32) -> PathBuf {
    let target = dir.join(name);
    std::fs::copy(source, &target).unwrap();
    std::os::unix::fs::chown(&target, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
    target
}

#[test]
fn nobody_after_harden_gains_no_euid_from_a_setuid_root_binary() {
    if !parent_as_root("needs root to create a setuid-root binary and switch to uid 65534") {
        return;
    }
    let name = "nobody_after_harden_gains_no_euid_from_a_setuid_root_binary";
    let dir = scratch();
    let id = root_owned_copy(dir.path(), "/usr/bin/id", "id", 0o4755);
    let script = "echo euid=$(\"$JAULA_HARDENING_LIVE_PROGRAM\" -u)";

    let mut control = Child::new(Identity::Nobody, Hardening::None, script);
    control.program = Some(id.clone());
    let control = control.run(name);
    control.assert_success();
    if control.line_with("euid=") != "0" {
        // A nosuid mount under the target dir would make the hardened run prove nothing.
        return skip_or_fail(&format!(
            "setuid bit not honoured under {} (nosuid?): control euid {}",
            env!("CARGO_TARGET_TMPDIR"),
            control.line_with("euid=")
        ));
    }

    let mut hardened = Child::new(Identity::Nobody, Hardening::Once, script);
    hardened.program = Some(id);
    let hardened = hardened.run(name);
    hardened.assert_success();
    assert_eq!(hardened.line_with("euid="), NOBODY.to_string());
}

#[test]
fn nobody_after_harden_gains_no_file_capabilities_despite_the_bounding_set() {
    if !parent_as_root("needs root to set file capabilities and switch to uid 65534") {
        return;
    }
    let setcap = Path::new("/usr/sbin/setcap");
    if !setcap.exists() {
        return skip_or_fail("/usr/sbin/setcap (libcap2-bin) is not installed");
    }
    let name = "nobody_after_harden_gains_no_file_capabilities_despite_the_bounding_set";
    let dir = scratch();
    let cat = root_owned_copy(dir.path(), "/bin/cat", "capcat", 0o755);
    let status = Command::new(setcap)
        .arg("cap_dac_read_search+ep")
        .arg(&cat)
        .status()
        .unwrap();
    assert!(status.success(), "setcap failed");
    let script = "echo @status; \"$JAULA_HARDENING_LIVE_PROGRAM\" /proc/self/status; echo @end";
    const CAP_DAC_READ_SEARCH: u64 = 1 << 2;

    let mut control = Child::new(Identity::Nobody, Hardening::None, script);
    control.program = Some(cat.clone());
    let control = control.run(name);
    control.assert_success();
    assert_eq!(
        status_field(&control.section("status"), "CapPrm"),
        CAP_DAC_READ_SEARCH,
        "control: without hardening the file capability is granted through the full bounding set"
    );

    let mut hardened = Child::new(Identity::Nobody, Hardening::Once, script);
    hardened.program = Some(cat);
    let hardened = hardened.run(name);
    hardened.assert_success();
    let status = hardened.section("status");
    assert_ne!(
        status_field(&status, "CapBnd"),
        0,
        "the bounding set is still full"
    );
    for cap in ["CapPrm", "CapEff", "CapAmb", "CapInh"] {
        assert_eq!(status_field(&status, cap), 0, "{cap}");
    }
}

#[test]
fn an_unopened_keep_fd_fails_before_anything_changes() {
    if !parent_as_root("needs root to observe capabilities left intact") {
        return;
    }
    let name = "an_unopened_keep_fd_fails_before_anything_changes";
    let mut child = Child::new(Identity::Root, Hardening::ExpectError, "");
    child.keep_fd = Some(1_000_000_000);
    let out = child.run(name);
    out.assert_success();
    assert_eq!(
        out.line_with("JAULA_HARDEN_ERROR "),
        "--keep-fd 1000000000: no such open file descriptor"
    );
    let status = out.section("self_status");
    assert_eq!(status_field(&status, "NoNewPrivs"), 0);
    assert_ne!(status_field(&status, "CapEff"), 0);
    assert_ne!(status_field(&status, "CapBnd"), 0);
}

#[test]
fn hardening_twice_reports_everything_already_in_place() {
    if !parent_as_root("needs root so the first pass has something to drop") {
        return;
    }
    let name = "hardening_twice_reports_everything_already_in_place";
    let out = Child::new(Identity::Root, Hardening::Twice, STATUS_SCRIPT).run(name);
    out.assert_success();
    let reports = out.reports();
    assert_eq!(reports.len(), 2);
    let already = outcome_name(Outcome::AlreadyInPlace);
    for step in [
        Step::Securebits,
        Step::BoundingSet,
        Step::AmbientSet,
        Step::Capabilities,
        Step::NoNewPrivs,
        Step::CoreDumps,
    ] {
        assert_eq!(outcome(&reports[1], step), already, "{step:?}");
    }
    let status = out.section("cat_status");
    for cap in ALL_CAPS {
        assert_eq!(status_field(&status, cap), 0, "{cap}");
    }
}
