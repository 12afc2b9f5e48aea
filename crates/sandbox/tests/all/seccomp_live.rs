//! Live-kernel tests of the seccomp layer.
//!
//! The filter cannot be removed once installed, so each run happens in a child: this test
//! binary re-executed with `--exact seccomp_child_entry` and a role in the environment. The
//! child optionally becomes `nobody` (65534), installs the filter (or not, for the
//! baseline), makes raw syscalls and prints one JSON line per result; the parent asserts.
//!
//! Every deny-list entry is probed from the data, so a new rule is tested without touching
//! this file. Probe arguments are chosen so that the unfiltered kernel fails early and
//! harmlessly (bad fd, bad pointer, invalid flag): the baseline run proves the errno seen
//! under the filter came from the filter and not from the kernel's own checks.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use jaula_policy::seccomp::{ArgMatch, DenyRule};
use jaula_sandbox::seccomp;
use jaula_testkit::{rerun, skip_or_fail, this_test, NOBODY};
use serde_json::{json, Value};

const ROLE_ENV: &str = "JAULA_SECCOMP_LIVE_ROLE";
const SCRATCH_ENV: &str = "JAULA_SECCOMP_LIVE_SCRATCH";
const MARK: &str = "@@jaula-seccomp ";
const GARBAGE_HIGH: u64 = 0xdead_beef_0000_0000;
/// -1 everywhere: an invalid fd, a kernel-space pointer, every flag bit set.
const JUNK: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// The filter answers with this errno; without it the kernel answers otherwise.
    Refused(i32),
    /// The filter lets it through: same outcome as without the filter.
    Unchanged,
    /// Lets it through, and it must succeed.
    Succeeds,
}

#[derive(Clone, Debug)]
struct Probe {
    label: String,
    nr: i64,
    args: [u64; 6],
    expect: Expect,
}

fn probe(label: String, nr: i64, args: [u64; 6], expect: Expect) -> Probe {
    Probe {
        label,
        nr,
        args,
        expect,
    }
}

/// Arguments on which the unfiltered kernel fails before doing anything, for root and for
/// nobody alike where the kernel's order of checks allows it.
fn base_args(rule: &DenyRule) -> [u64; 6] {
    let mut args = [JUNK; 6];
    match rule.syscall {
        // CLONE_THREAD without CLONE_SIGHAND is EINVAL at the top of copy_process(), before
        // any namespace is created, so no process is ever made.
        "clone" => args = [libc::CLONE_THREAD as u64, 0, 0, 0, 0, 0],
        // A flag above bit 31 is EINVAL in check_unshare_flags(), before any capability
        // check; the filter only reads the low 32 bits and must still refuse.
        "unshare" => args = [1 << 32, 0, 0, 0, 0, 0],
        _ => {}
    }
    args
}

/// The values of the conditioned argument that must be refused.
fn refused_values(cond: &ArgMatch) -> Vec<u64> {
    match *cond {
        ArgMatch::Equals { value, .. } => vec![u64::from(value)],
        ArgMatch::AnyBitOf { mask, .. } => (0..32)
            .map(|bit| 1u32 << bit)
            .filter(|bit| mask & bit != 0)
            .map(u64::from)
            .collect(),
        ArgMatch::NoneOf { allowed, .. } => [
            libc::ADDR_NO_RANDOMIZE as u32,
            libc::READ_IMPLIES_EXEC as u32,
            libc::MMAP_PAGE_ZERO as u32,
            libc::ADDR_NO_RANDOMIZE as u32 | jaula_policy::seccomp::PER_LINUX32,
            1,
        ]
        .into_iter()
        .filter(|value| !allowed.contains(value))
        .map(u64::from)
        .collect(),
        // A pointer whose low word is 0 is not NULL: the filter must read all 64 bits.
        ArgMatch::NonNull { .. } => vec![1, 1 << 32],
    }
}

/// Values of the conditioned argument that must pass: the same call with the condition
/// unmet.
fn passing_values(cond: &ArgMatch) -> Vec<u64> {
    match *cond {
        ArgMatch::Equals { value, .. } => vec![u64::from(value ^ 1)],
        ArgMatch::AnyBitOf { .. } | ArgMatch::NonNull { .. } => vec![0],
        ArgMatch::NoneOf { allowed, .. } => allowed.iter().copied().map(u64::from).collect(),
    }
}

fn rule_probes(index: usize, rule: &DenyRule) -> Vec<Probe> {
    let base = base_args(rule);
    let refused = Expect::Refused(rule.errno.raw());
    if rule.when.is_empty() {
        return vec![probe(
            format!("rule{index} {}", rule.syscall),
            rule.nr,
            base,
            refused,
        )];
    }
    let set = |args: &mut [u64; 6], arg: usize, value: u64| {
        // Keep the base's own bits (clone's CLONE_THREAD, unshare's bit 32) where it set
        // the conditioned argument deliberately.
        args[arg] = if base[arg] == JUNK {
            value
        } else {
            base[arg] | value
        };
    };
    // Every condition met with its first refused value; each probe then varies one.
    let mut all_met = base;
    for cond in rule.when {
        if let Some(&value) = refused_values(cond).first() {
            set(&mut all_met, usize::from(cond.arg()), value);
        }
    }
    let with = |arg: usize, value: u64| {
        let mut args = all_met;
        set(&mut args, arg, value);
        args
    };
    let mut out = Vec::new();
    for cond in rule.when {
        let arg = usize::from(cond.arg());
        let name = |value: u64, note: &str| {
            format!("rule{index} {} arg{arg}={value:#x}{note}", rule.syscall)
        };
        for value in refused_values(cond) {
            // The filter must compare all 64 bits: garbage above a refused value is no escape.
            for (high, note) in [(0, ""), (GARBAGE_HIGH, " with garbage in the high 32 bits")] {
                out.push(probe(
                    name(value | high, note),
                    rule.nr,
                    with(arg, value | high),
                    refused,
                ));
            }
        }
        for value in passing_values(cond) {
            let args = with(arg, value);
            // Another rule on the same syscall may still refuse these arguments: that
            // rule's own probes cover them.
            if !jaula_policy::seccomp::decide_syscall(rule.nr, &args).is_allowed() {
                continue;
            }
            out.push(probe(
                name(value, " passes"),
                rule.nr,
                args,
                Expect::Unchanged,
            ));
        }
    }
    out
}

/// The probes the issue names explicitly, beyond what the rule data generates.
fn named_probes() -> Vec<Probe> {
    let x32_getpid = 0x4000_0000 | libc::SYS_getpid;
    vec![
        probe(
            "clone(CLONE_NEWUSER|SIGCHLD)".into(),
            libc::SYS_clone,
            [(libc::CLONE_NEWUSER | libc::SIGCHLD) as u64, 0, 0, 0, 0, 0],
            Expect::Refused(libc::EPERM),
        ),
        probe(
            "clone(SIGCHLD), a plain fork".into(),
            libc::SYS_clone,
            [libc::SIGCHLD as u64, 0, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "x32 getpid".into(),
            x32_getpid,
            [0; 6],
            Expect::Refused(libc::EPERM),
        ),
        probe(
            "clone3".into(),
            libc::SYS_clone3,
            [JUNK; 6],
            Expect::Refused(libc::ENOSYS),
        ),
        probe(
            "unshare(CLONE_FS|CLONE_FILES)".into(),
            libc::SYS_unshare,
            [(libc::CLONE_FS | libc::CLONE_FILES) as u64, 0, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "personality(ADDR_NO_RANDOMIZE)".into(),
            libc::SYS_personality,
            [libc::ADDR_NO_RANDOMIZE as u64, 0, 0, 0, 0, 0],
            Expect::Refused(libc::EPERM),
        ),
        probe(
            "personality(0xffffffff) query".into(),
            libc::SYS_personality,
            [0xffff_ffff, 0, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "ioctl(TIOCSTI) with garbage in the high 32 bits".into(),
            libc::SYS_ioctl,
            [
                JUNK,
                u64::from(libc::TIOCSTI as u32) | GARBAGE_HIGH,
                0,
                0,
                0,
                0,
            ],
            Expect::Refused(libc::EPERM),
        ),
        probe(
            "socket(AF_INET, SOCK_STREAM)".into(),
            libc::SYS_socket,
            [libc::AF_INET as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "socket(AF_INET6, SOCK_DGRAM)".into(),
            libc::SYS_socket,
            [libc::AF_INET6 as u64, libc::SOCK_DGRAM as u64, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "socket(AF_UNIX, SOCK_STREAM)".into(),
            libc::SYS_socket,
            [libc::AF_UNIX as u64, libc::SOCK_STREAM as u64, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe("getpid".into(), libc::SYS_getpid, [0; 6], Expect::Succeeds),
        // Acting on itself (pid or who 0) stays open: setrlimit/ulimit, nice(1),
        // ionice(1), chrt(1) of a command. Reading another process's limits too.
        probe(
            "prlimit64(0, NOFILE, NULL, NULL): reading its own".into(),
            libc::SYS_prlimit64,
            [0, libc::RLIMIT_NOFILE as u64, 0, 0, 0, 0],
            Expect::Succeeds,
        ),
        probe(
            "prlimit64(1, NOFILE, NULL, NULL): reading another's".into(),
            libc::SYS_prlimit64,
            [1, libc::RLIMIT_NOFILE as u64, 0, 0, 0, 0],
            Expect::Unchanged,
        ),
        probe(
            "sched_setscheduler(0, SCHED_OTHER, NULL)".into(),
            libc::SYS_sched_setscheduler,
            [0, libc::SCHED_OTHER as u64, 0, 0, 0, 0],
            Expect::Unchanged,
        ),
        probe(
            "sched_setattr(0, NULL, 0)".into(),
            libc::SYS_sched_setattr,
            [0; 6],
            Expect::Unchanged,
        ),
        // IOPRIO_WHO_PROCESS, best-effort class (2 << 13) level 7: allowed to anyone.
        probe(
            "ioprio_set(IOPRIO_WHO_PROCESS, 0, BE 7)".into(),
            libc::SYS_ioprio_set,
            [1, 0, (2 << 13) | 7, 0, 0, 0],
            Expect::Succeeds,
        ),
        // Last: the child runs at nice 19 from here on (raising it is allowed to anyone).
        probe(
            "setpriority(PRIO_PROCESS, 0, 19)".into(),
            libc::SYS_setpriority,
            [libc::PRIO_PROCESS as u64, 0, 19, 0, 0, 0],
            Expect::Succeeds,
        ),
    ]
}

fn all_probes() -> Vec<Probe> {
    let mut probes: Vec<Probe> = jaula_policy::seccomp::deny_list()
        .iter()
        .enumerate()
        .flat_map(|(index, rule)| rule_probes(index, rule))
        .collect();
    probes.extend(named_probes());
    probes
}

// ---------------------------------------------------------------------------------------
// The child side.

fn emit(value: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{MARK}{value}");
    let _ = out.flush();
}

fn raw_syscall(nr: i64, a: [u64; 6]) -> (i64, i32) {
    let [a0, a1, a2, a3, a4, a5] = a.map(|x| x as libc::c_long);
    // SAFETY: every probe either passes kernel-space pointers (-1), which the kernel
    // refuses with EFAULT before touching memory, or no pointers at all; the clone probes
    // pass no stack, so a created child runs fork-like on a copy of this stack and is made
    // to _exit at once below.
    let ret = unsafe { libc::syscall(nr as libc::c_long, a0, a1, a2, a3, a4, a5) };
    let errno = if ret == -1 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    } else {
        0
    };
    (ret, errno)
}

fn run_probe(probe: &Probe) -> (i64, i32) {
    let (ret, errno) = raw_syscall(probe.nr, probe.args);
    if probe.nr == libc::SYS_clone && ret == 0 {
        // The fork-like child of a clone probe: leave without running anything else.
        // SAFETY: _exit is async-signal-safe and ends only this new process.
        unsafe { libc::_exit(0) };
    }
    if probe.nr == libc::SYS_clone && ret > 0 {
        let mut status = 0;
        // SAFETY: waits for the child this probe just created; status is a valid out-pointer.
        unsafe { libc::waitpid(ret as libc::pid_t, &mut status, 0) };
    }
    if probe.nr == libc::SYS_personality && ret >= 0 {
        // Put back the persona a successful probe changed (a query changes nothing).
        raw_syscall(libc::SYS_personality, [ret as u64, 0, 0, 0, 0, 0]);
    }
    if probe.nr == libc::SYS_socket && ret >= 0 {
        // SAFETY: closes the descriptor the probe just opened and nothing else uses.
        unsafe { libc::close(ret as libc::c_int) };
    }
    (ret, errno)
}

fn check(name: &str, result: Result<String, String>) {
    let (ok, detail) = match result {
        Ok(detail) => (true, detail),
        Err(detail) => (false, detail),
    };
    emit(json!({"kind": "check", "name": name, "ok": ok, "detail": detail}));
}

fn check_fork() -> Result<String, String> {
    // SAFETY: the child only calls the async-signal-safe _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above.
        unsafe { libc::_exit(7) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child; status is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 7 {
        Ok("child exited 7".into())
    } else {
        Err(format!("child status {status:#x}"))
    }
}

fn check_thread() -> Result<String, String> {
    // pthread_create tries clone3 first; under the filter it gets ENOSYS and falls back.
    std::thread::spawn(|| 6 * 7)
        .join()
        .map_err(|_| "thread panicked".to_string())
        .and_then(|v| {
            if v == 42 {
                Ok("joined".into())
            } else {
                Err(format!("got {v}"))
            }
        })
}

fn check_shell() -> Result<String, String> {
    let out = Command::new("/bin/sh")
        .args(["-c", "echo ok"])
        .output()
        .map_err(|err| format!("spawn: {err}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() && stdout == "ok\n" {
        Ok(stdout)
    } else {
        Err(format!("status {:?} stdout {stdout:?}", out.status))
    }
}

fn check_files(dir: &Path) -> Result<String, String> {
    let err = |what: &str, e: std::io::Error| format!("{what}: {e}");
    std::fs::create_dir(dir).map_err(|e| err("mkdir", e))?;
    let file = dir.join("note.txt");
    std::fs::write(&file, b"caged write\n").map_err(|e| err("write", e))?;
    let renamed = dir.join("renamed.txt");
    std::fs::rename(&file, &renamed).map_err(|e| err("rename", e))?;
    let back = std::fs::read(&renamed).map_err(|e| err("read", e))?;
    std::fs::remove_file(&renamed).map_err(|e| err("unlink", e))?;
    std::fs::remove_dir(dir).map_err(|e| err("rmdir", e))?;
    if back == b"caged write\n" {
        Ok("mkdir/write/rename/read/unlink/rmdir".into())
    } else {
        Err(format!("read back {back:?}"))
    }
}

fn seccomp_status() -> Result<String, String> {
    // The filter is per thread: /proc/self would show the thread-group leader instead.
    let status = std::fs::read_to_string("/proc/thread-self/status")
        .map_err(|err| format!("read status: {err}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Seccomp:"))
        .map(|mode| mode.trim().to_string())
        .ok_or_else(|| "no Seccomp line".to_string())
}

/// getpid through the i386 entry (`int 0x80`) from this 64-bit process, in a forked child
/// so that a kernel without ia32 emulation (SIGSEGV) does not take the run down.
#[cfg(target_arch = "x86_64")]
fn foreign_abi_getpid() -> Result<String, String> {
    // SAFETY: the child runs one syscall instruction and _exit, both async-signal-safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let mut rax: u64 = 20; // __NR_getpid in the i386 table
                               // SAFETY: i386 getpid reads no arguments and no memory; the kernel returns in eax
                               // and may clobber r8-r11 on this path, declared here.
        unsafe {
            std::arch::asm!(
                "int 0x80",
                inout("rax") rax,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                options(nostack)
            );
        }
        let ret = rax as u32 as i32;
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let code = if ret == me {
            0
        } else if ret == -libc::EPERM {
            1
        } else {
            2
        };
        // SAFETY: ends only this child.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child; status is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) {
        Ok(match libc::WEXITSTATUS(status) {
            0 => "ran".into(),
            1 => "refused".into(),
            _ => "other".into(),
        })
    } else {
        Ok(format!("signal {}", libc::WTERMSIG(status)))
    }
}

fn become_nobody() -> Result<(), String> {
    // SAFETY: plain credential syscalls on this process; glibc applies them to every thread.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setgid(NOBODY) != 0
            || libc::setuid(NOBODY) != 0
        {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

fn child_main(role: &str) {
    let (mode, identity) = role.split_once(':').unwrap_or((role, "root"));
    if identity == "nobody" {
        if let Err(err) = become_nobody() {
            emit(json!({"kind": "fatal", "error": format!("becoming nobody: {err}")}));
            return;
        }
    }
    // SAFETY: getuid/geteuid have no preconditions.
    let (uid, euid) = unsafe { (libc::getuid(), libc::geteuid()) };
    emit(json!({"kind": "identity", "uid": uid, "euid": euid}));
    if mode == "filtered" {
        match seccomp::install() {
            Ok(report) => emit(json!({
                "kind": "report",
                "report": serde_json::to_value(&report).unwrap_or(Value::Null),
                "display": report.to_string(),
            })),
            Err(err) => {
                emit(json!({"kind": "fatal", "error": format!("install: {err}")}));
                return;
            }
        }
    }
    for probe in all_probes() {
        let (ret, errno) = run_probe(&probe);
        emit(json!({"kind": "probe", "label": probe.label, "ret": ret, "errno": errno}));
    }
    check("fork", check_fork());
    check("thread", check_thread());
    check("shell", check_shell());
    let scratch = PathBuf::from(std::env::var_os(SCRATCH_ENV).unwrap_or_default());
    check("files", check_files(&scratch.join(role.replace(':', "-"))));
    check("seccomp_status", seccomp_status());
    #[cfg(target_arch = "x86_64")]
    check("foreign_abi_getpid", foreign_abi_getpid());
    emit(json!({"kind": "done"}));
}

/// Entry point of the re-executed child, not a test of its own: without the role variable
/// it returns at once.
#[test]
fn seccomp_child_entry() {
    if let Ok(role) = std::env::var(ROLE_ENV) {
        child_main(&role);
    }
}

// ---------------------------------------------------------------------------------------
// The parent side.

fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|status| status.lines().any(|line| line.starts_with("Seccomp:")))
        .unwrap_or(false)
}

struct ChildRun {
    probes: BTreeMap<String, (i64, i32)>,
    checks: BTreeMap<String, (bool, String)>,
    lines: Vec<Value>,
}

fn run_child(role: &str, scratch: &Path) -> ChildRun {
    let name = this_test!("seccomp_child_entry");
    let out = rerun::command(&name)
        .env(ROLE_ENV, role)
        .env(SCRATCH_ENV, scratch)
        .output();
    let out = match out {
        Ok(out) => out,
        Err(err) => panic!("re-running {name}: {err}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {role} failed: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        // libtest prints "test seccomp_child_entry ... " without a newline first.
        .filter_map(|line| line.split_once(MARK).map(|(_, json)| json))
        .map(|line| match serde_json::from_str(line) {
            Ok(value) => value,
            Err(err) => panic!("child {role} printed bad JSON {line:?}: {err}"),
        })
        .collect();
    if let Some(fatal) = lines.iter().find(|v| v["kind"] == "fatal") {
        panic!("child {role}: {}", fatal["error"]);
    }
    assert!(
        lines.iter().any(|v| v["kind"] == "done"),
        "child {role} did not finish:\n{stdout}"
    );
    let mut probes = BTreeMap::new();
    let mut checks = BTreeMap::new();
    for line in &lines {
        match line["kind"].as_str() {
            Some("probe") => {
                let label = line["label"].as_str().unwrap_or_default().to_string();
                let ret = line["ret"].as_i64().unwrap_or(i64::MIN);
                let errno = line["errno"].as_i64().unwrap_or(-1) as i32;
                assert!(
                    probes.insert(label.clone(), (ret, errno)).is_none(),
                    "probe label {label:?} is not unique"
                );
            }
            Some("check") => {
                let name = line["name"].as_str().unwrap_or_default().to_string();
                let ok = line["ok"].as_bool().unwrap_or(false);
                let detail = line["detail"].as_str().unwrap_or_default().to_string();
                checks.insert(name, (ok, detail));
            }
            _ => {}
        }
    }
    ChildRun {
        probes,
        checks,
        lines,
    }
}

fn outcome((ret, errno): (i64, i32)) -> String {
    if ret >= 0 {
        "success".into()
    } else {
        std::io::Error::from_raw_os_error(errno).to_string()
    }
}

fn scratch_dir() -> tempfile::TempDir {
    let (dir, _) = jaula_testkit::scratch!("seccomp-live-");
    // nobody must be able to create its own subdirectory here.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn run_both(identity: &str) {
    if !seccomp_available() {
        skip_or_fail("this kernel has no seccomp (no Seccomp: line in /proc/self/status)");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if identity == "nobody" && unsafe { libc::geteuid() } != 0 {
        skip_or_fail("switching to nobody needs root");
        return;
    }
    let scratch = scratch_dir();
    let baseline = run_child(&format!("baseline:{identity}"), scratch.path());
    let filtered = run_child(&format!("filtered:{identity}"), scratch.path());

    let expected_uid = if identity == "nobody" { NOBODY } else { 0 };
    for (name, run) in [("baseline", &baseline), ("filtered", &filtered)] {
        let Some(id) = run.lines.iter().find(|v| v["kind"] == "identity") else {
            panic!("{name} printed no identity");
        };
        assert_eq!(
            id["uid"].as_u64(),
            Some(u64::from(expected_uid)),
            "{name} uid"
        );
    }

    let Some(report) = filtered.lines.iter().find(|v| v["kind"] == "report") else {
        panic!("filtered child printed no report");
    };
    assert_eq!(
        report["report"]["rules"].as_u64(),
        Some(jaula_policy::seccomp::deny_list().len() as u64)
    );
    assert_eq!(report["report"]["arch"], std::env::consts::ARCH);
    println!("{identity}: {}", report["display"]);

    let mut kernel_refuses_anyway = Vec::new();
    let probes = all_probes();
    for probe in &probes {
        let Some(&got) = filtered.probes.get(&probe.label) else {
            panic!("filtered run lacks probe {:?}", probe.label);
        };
        let Some(&base) = baseline.probes.get(&probe.label) else {
            panic!("baseline run lacks probe {:?}", probe.label);
        };
        match probe.expect {
            Expect::Refused(errno) => {
                assert_eq!(
                    got,
                    (-1, errno),
                    "{identity}: {} should fail with {} under the filter, got {}",
                    probe.label,
                    std::io::Error::from_raw_os_error(errno),
                    outcome(got)
                );
                if base == (-1, errno) {
                    // As nobody, the kernel's capability checks can refuse with EPERM before
                    // looking at the bad arguments. As root every probe must tell the two apart.
                    assert!(
                        identity == "nobody" && errno == libc::EPERM,
                        "{identity}: {} fails with the same errno without the filter, so \
                         this probe cannot tell the filter from the kernel",
                        probe.label
                    );
                    kernel_refuses_anyway.push(probe.label.clone());
                }
            }
            Expect::Unchanged => assert_eq!(
                outcome(got),
                outcome(base),
                "{identity}: {} must behave as without the filter",
                probe.label
            ),
            Expect::Succeeds => {
                assert!(
                    got.0 >= 0,
                    "{identity}: {} must still work under the filter, got {}",
                    probe.label,
                    outcome(got)
                );
                assert!(
                    base.0 >= 0,
                    "{identity}: {} fails even unfiltered",
                    probe.label
                );
            }
        }
    }

    for run in [&baseline, &filtered] {
        for name in ["fork", "thread", "shell", "files"] {
            let Some((ok, detail)) = run.checks.get(name) else {
                panic!("{identity}: check {name} missing");
            };
            assert!(ok, "{identity}: {name} failed: {detail}");
        }
    }
    let status = |run: &ChildRun| run.checks.get("seccomp_status").cloned();
    assert_eq!(status(&baseline), Some((true, "0".to_string())));
    assert_eq!(status(&filtered), Some((true, "2".to_string())));

    if cfg!(target_arch = "x86_64") {
        let abi = |run: &ChildRun| {
            run.checks
                .get("foreign_abi_getpid")
                .map(|(_, detail)| detail.clone())
                .unwrap_or_default()
        };
        if abi(&baseline) == "ran" {
            assert_eq!(
                abi(&filtered),
                "refused",
                "{identity}: i386 getpid via int 0x80 must be refused with EPERM"
            );
        } else {
            skip_or_fail(&format!(
                "int 0x80 does not reach the i386 entry without the filter ({}): no ia32 \
                 emulation to test the foreign-arch refusal against",
                abi(&baseline)
            ));
        }
    }

    println!(
        "{identity}: {} probes over {} rules; kernel refuses these with EPERM even unfiltered: \
         {kernel_refuses_anyway:?}",
        probes.len(),
        jaula_policy::seccomp::deny_list().len()
    );
}

#[test]
fn every_rule_refuses_with_its_errno_as_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip_or_fail("the root run needs root");
        return;
    }
    run_both("root");
}

#[test]
fn every_rule_refuses_with_its_errno_as_nobody() {
    run_both("nobody");
}
