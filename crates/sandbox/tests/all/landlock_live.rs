//! Live-kernel tests of the Landlock layer.
//!
//! `restrict_self` cannot be undone, so every scenario runs in a child: this same test
//! binary re-executed with `--exact <test>` and `JAULA_LANDLOCK_CHILD` set, which builds the
//! policy, restricts itself (optionally after dropping to uid 65534), attempts each probe
//! and prints one JSON line per result. The parent compares them with `Policy::decide`;
//! every disagreement must be a named deviation below, and every named deviation must
//! really occur.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jaula_policy::{Access, Platform, Policy, PolicySpec, RealHostFs};
use jaula_sandbox::landlock::{
    plan, probe, restrict_self, AbiFloor, KernelStatus, PlanMode, Right, Rights, ScopeKind,
    DEVIATIONS,
};
use jaula_testkit::{chown_tree, rerun, skip_or_fail, this_test, NOBODY};
use serde::{Deserialize, Serialize};

const CHILD_ENV: &str = "JAULA_LANDLOCK_CHILD";
const PREFIX: &str = "JAULA_PROBE ";
const ENFORCEMENT: &str = "JAULA_ENFORCEMENT ";

// ---------------------------------------------------------------- skip policy

/// Whether this kernel has Landlock; when it lacks it, skip with a reason, or fail under CI.
fn landlock_here(test: &str) -> bool {
    let support = probe();
    if matches!(support.kernel, KernelStatus::Available { .. }) {
        return true;
    }
    skip_or_fail(&format!("{test}: Landlock {}", support.kernel));
    false
}

// ---------------------------------------------------------------- probes

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Probe {
    Read(PathBuf),
    Write(PathBuf),
    Create(PathBuf),
    Truncate(PathBuf),
    Unlink(PathBuf),
    Rename(PathBuf, PathBuf),
    Link(PathBuf, PathBuf),
    Exec(PathBuf),
    /// chmod to the mode it already has.
    Chmod(PathBuf),
    SignalSleeper,
    SignalSelf,
    SignalParent,
    ConnectAbstract(String),
    ConnectOwnAbstract,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct ProbeResult {
    id: String,
    ok: bool,
    errno: Option<i32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct ChildSpec {
    home: PathBuf,
    repo: PathBuf,
    token_file: PathBuf,
    uid: Option<u32>,
    /// Created after planning, before restricting: entries the plan never saw.
    late_files: Vec<PathBuf>,
    probes: Vec<(String, Probe)>,
}

fn errno_of(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error()
}

fn result(r: std::io::Result<()>) -> (bool, Option<i32>) {
    match r {
        Ok(()) => (true, None),
        Err(e) => (false, errno_of(&e)),
    }
}

fn run_probe(probe: &Probe, sleeper: u32) -> (bool, Option<i32>) {
    match probe {
        Probe::Read(p) => result((|| {
            if fs::symlink_metadata(p)?.is_dir() {
                fs::read_dir(p)?.next().transpose()?;
            } else {
                let mut f = fs::File::open(p)?;
                if f.metadata()?.is_file() {
                    let mut buf = [0u8; 16];
                    let _ = f.read(&mut buf)?;
                }
            }
            Ok(())
        })()),
        // Opening for writing is the checked operation; nothing is written.
        Probe::Write(p) => result(fs::OpenOptions::new().write(true).open(p).map(drop)),
        Probe::Create(p) => result(
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)
                .map(drop),
        ),
        Probe::Truncate(p) => result((|| {
            let len = fs::metadata(p)?.len();
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())?;
            let len = libc::off_t::try_from(len).map_err(std::io::Error::other)?;
            // SAFETY: `c` is a NUL-terminated path that outlives the call.
            if unsafe { libc::truncate(c.as_ptr(), len) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })()),
        Probe::Unlink(p) => result(fs::remove_file(p)),
        Probe::Rename(a, b) => result(fs::rename(a, b)),
        Probe::Link(a, b) => result(fs::hard_link(a, b)),
        Probe::Exec(p) => result((|| {
            let status = Command::new(p).status()?;
            if status.success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!("{status}")))
            }
        })()),
        Probe::Chmod(p) => result((|| {
            let mode = fs::metadata(p)?.permissions();
            fs::set_permissions(p, mode)
        })()),
        Probe::SignalSleeper => signal(sleeper as libc::pid_t),
        // SAFETY: getpid/getppid cannot fail and touch no memory.
        Probe::SignalSelf => signal(unsafe { libc::getpid() }),
        // SAFETY: as above.
        Probe::SignalParent => signal(unsafe { libc::getppid() }),
        Probe::ConnectAbstract(name) => result((|| {
            let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
            UnixStream::connect_addr(&addr).map(drop)
        })()),
        Probe::ConnectOwnAbstract => result((|| {
            let name = format!("jaula-ll-own-{}", std::process::id());
            let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
            let _listener = UnixListener::bind_addr(&addr)?;
            UnixStream::connect_addr(&addr).map(drop)
        })()),
    }
}

fn signal(pid: libc::pid_t) -> (bool, Option<i32>) {
    // SAFETY: signal 0 only checks permission; kill(2) touches no memory of ours.
    let r = unsafe { libc::kill(pid, 0) };
    if r == 0 {
        (true, None)
    } else {
        (false, std::io::Error::last_os_error().raw_os_error())
    }
}

fn spec_for(home: &Path, repo: &Path, token: &Path) -> PolicySpec {
    let mut spec =
        PolicySpec::with_defaults(Platform::Linux, home.to_path_buf(), repo.to_path_buf());
    spec.token_file = Some(token.to_path_buf());
    spec.config_file = Some(home.join(".config/jaula/config.toml"));
    spec
}

fn resolve(spec: PolicySpec) -> Policy {
    match spec.resolve() {
        Ok(p) => p,
        Err(e) => panic!("policy: {e}"),
    }
}

/// The child's whole life: drop privileges, spawn a process outside the domain to be
/// signalled, restrict, probe, print.
fn child_main(raw: &str) {
    let spec: ChildSpec = serde_json::from_str(raw).expect("child spec");
    if let Some(uid) = spec.uid {
        // SAFETY: plain syscalls with integer arguments; glibc applies set*id to every
        // thread of the process.
        unsafe {
            assert_eq!(libc::setgroups(0, std::ptr::null()), 0, "setgroups");
            assert_eq!(libc::setgid(uid), 0, "setgid");
            assert_eq!(libc::setuid(uid), 0, "setuid");
        }
    }
    // Its stdio must not hold the pipe the parent reads until EOF.
    let mut sleeper = Command::new("/bin/sleep")
        .arg("600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn sleeper");
    println!("JAULA_SLEEPER {}", sleeper.id());

    let policy = resolve(spec_for(&spec.home, &spec.repo, &spec.token_file));
    let plan = plan(&policy, PlanMode::Native, &RealHostFs).expect("plan");
    for late in &spec.late_files {
        fs::write(late, "late\n").expect("late file");
    }
    let enforcement = restrict_self(&plan, AbiFloor::Everything).expect("restrict_self");
    println!(
        "{ENFORCEMENT}{}",
        serde_json::to_string(&enforcement).expect("json")
    );
    for (id, probe) in &spec.probes {
        let (ok, errno) = run_probe(probe, sleeper.id());
        let line = ProbeResult {
            id: id.clone(),
            ok,
            errno,
        };
        println!("{PREFIX}{}", serde_json::to_string(&line).expect("json"));
    }
    // The sleeper is outside the domain: this process may no longer signal it. The parent
    // kills it by pid; this only reaps it.
    let _ = sleeper.try_wait();
}

// ---------------------------------------------------------------- scratch world

struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    outside: PathBuf,
    token: PathBuf,
}

fn write(path: &Path, content: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
}

/// Files of the home (relative to it) that the matrix probes: secrets, agent state,
/// protected configuration, caches and the repo.
const PROBED_FILES: &[&str] = &[
    ".ssh/id_ed25519",
    ".gnupg/pubring.kbx",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".netrc",
    ".claude/.credentials.json",
    ".claude/settings.json",
    ".claude/projects/p1/log.jsonl",
    ".claude/channels/seat1/.env",
    ".claude/channels/seat1/other",
    ".cargo/credentials.toml",
    ".cargo/registry/cache/x.crate",
    ".cargo/config.toml",
    ".agents-city/.runtime/broker/w1.token",
    ".agents-city/.runtime/broker/w2.token",
    ".agents-city/.runtime/cage/w1.sb",
    ".agents-city/state.json",
    ".config/jaula/config.toml",
    ".config/other/x.conf",
    ".bashrc",
    ".profile",
    ".claude.json",
    ".cache/pip/x",
    ".npm/_cacache/x",
    ".local/share/x",
    ".local/bin/tool",
    "code/repo/src/main.rs",
    "code/repo/.git/config",
];

/// Files the home also holds, as victims of the rename, link and write probes.
const UNPROBED_FILES: &[&str] = &[
    ".claude/settings-victim.json",
    "code/repo/a",
    "code/repo/victim",
];

/// A home with every kind of path the default policy distinguishes, under the cargo
/// target dir (never under /tmp, which is a writable root of every cage).
fn world() -> World {
    let (dir, base) = jaula_testkit::scratch!("landlock-");
    let home = base.join("home");
    let repo = home.join("code/repo");
    let outside = base.join("outside");
    for f in PROBED_FILES.iter().chain(UNPROBED_FILES) {
        write(&home.join(f), "secret-or-not\n");
    }
    fs::create_dir_all(home.join(".claude/channels/seat2")).expect("seat2");
    write(&repo.join("run.sh"), "#!/bin/sh\nexit 0\n");
    fs::set_permissions(repo.join("run.sh"), fs::Permissions::from_mode(0o755)).expect("chmod");
    write(&outside.join("file"), "outside\n");
    write(&outside.join("victim"), "outside\n");
    let token = home.join(".agents-city/.runtime/broker/w1.token");
    World {
        _dir: dir,
        base,
        home,
        repo,
        outside,
        token,
    }
}

// ---------------------------------------------------------------- the matrix

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    File,
    Dir,
    Absent,
}

struct Entry {
    path: PathBuf,
    shape: Shape,
}

fn matrix(w: &World, uid: Option<u32>) -> Vec<Entry> {
    let h = |rel: &str| w.home.join(rel);
    let mut out = Vec::new();
    let mut add = |path: PathBuf, shape| out.push(Entry { path, shape });
    for f in PROBED_FILES {
        add(h(f), Shape::File);
    }
    add(w.outside.join("file"), Shape::File);
    add(PathBuf::from("/etc/passwd"), Shape::File);
    add(PathBuf::from("/dev/null"), Shape::File);
    if uid.is_none() {
        // Readable by root through DAC, so only Landlock stands between it and the cage.
        add(PathBuf::from("/dev/kmsg"), Shape::File);
    }
    for d in [
        ".ssh",
        ".gnupg",
        ".kube",
        ".config/gh",
        ".agents-city/.runtime/broker",
        ".claude",
        ".claude/projects",
        ".claude/channels",
        ".cargo",
        ".config",
        ".config/jaula",
        "",
        "code/repo",
        "code/repo/src",
        ".cache",
    ] {
        add(h(d).components().collect(), Shape::Dir);
    }
    add(w.outside.clone(), Shape::Dir);
    for d in ["/etc", "/tmp", "/proc/self", "/usr/bin"] {
        add(PathBuf::from(d), Shape::Dir);
    }
    for a in [
        ".ssh/new",
        ".aws",
        ".git-credentials",
        ".pgpass",
        ".docker",
        ".config/gcloud",
        ".claude/newfile",
        ".claude/projects/newfile",
        ".claude/channels/seat2/.env",
        ".claude/channels/seat2/x",
        ".claude/channels/newseat",
        ".cargo/credentials",
        ".cargo/newfile",
        ".cargo/registry/newfile",
        ".agents-city/new",
        ".agents-city/.runtime/new",
        ".agents-city/.runtime/broker/w3.token",
        ".agents-city/.runtime/cage/new.sb",
        ".config/jaula/new",
        ".config/newdir",
        ".config/other/new",
        "newfile",
        "code/repo/new",
        "code/repo/src/new",
        ".cache/new",
        ".local/share/new",
    ] {
        add(h(a), Shape::Absent);
    }
    add(w.outside.join("new"), Shape::Absent);
    add(PathBuf::from("/etc/jaula-landlock-live-new"), Shape::Absent);
    add(tmp_probe_path(uid), Shape::Absent);
    out
}

fn late_file(w: &World) -> PathBuf {
    w.home.join("late-file")
}

fn tmp_probe_path(uid: Option<u32>) -> PathBuf {
    PathBuf::from(format!(
        "/tmp/jaula-landlock-live-{}-{}",
        std::process::id(),
        uid.unwrap_or(0)
    ))
}

/// The known, documented disagreements with `decide` on this matrix, by home-relative
/// path (or absolute path) and access. Each must occur; any other disagreement fails.
fn expected_deviation(w: &World, path: &Path, access: Access) -> Option<&'static str> {
    let rel = path
        .strip_prefix(&w.home)
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let rel = rel.as_deref();
    match (rel, access) {
        (
            Some(".ssh" | ".gnupg" | ".kube" | ".config/gh" | ".agents-city/.runtime/broker"),
            Access::Read,
        ) => Some("sealed-names-listable"),
        (
            Some(
                ".claude/newfile"
                | ".claude/channels/seat2/x"
                | ".claude/channels/newseat"
                | ".cargo/newfile"
                | ".agents-city/new"
                | ".agents-city/.runtime/new"
                | ".config/newdir",
            ),
            Access::Create,
        ) => Some("split-dir-no-new-entries"),
        (None, _) if path == Path::new("/dev/kmsg") => Some("native-dev-subset"),
        (Some("code/repo/.git/config"), Access::Write) => Some("protected-not-split"),
        _ => None,
    }
}

fn probes_for(w: &World, uid: Option<u32>, socket: &str) -> Vec<(String, Probe)> {
    let mut probes = Vec::new();
    for e in matrix(w, uid) {
        let p = e.path.clone();
        match e.shape {
            Shape::File => {
                probes.push((format!("read:{}", p.display()), Probe::Read(p.clone())));
                probes.push((format!("write:{}", p.display()), Probe::Write(p)));
            }
            Shape::Dir => probes.push((format!("read:{}", p.display()), Probe::Read(p))),
            Shape::Absent => probes.push((format!("create:{}", p.display()), Probe::Create(p))),
        }
    }
    let h = |rel: &str| w.home.join(rel);
    let r = |rel: &str| w.repo.join(rel);
    let specials = vec![
        (
            "rename-sealed-out",
            Probe::Rename(h(".claude/.credentials.json"), r("stolen")),
        ),
        (
            "link-sealed-in",
            Probe::Link(h(".claude/.credentials.json"), r("linked")),
        ),
        (
            "link-ssh-in",
            Probe::Link(h(".ssh/id_ed25519"), r("linked-ssh")),
        ),
        (
            "link-token-in",
            Probe::Link(w.token.clone(), r("linked-token")),
        ),
        ("rename-within-repo", Probe::Rename(r("a"), r("src/a"))),
        (
            "link-within-repo",
            Probe::Link(r("src/main.rs"), r("main-link")),
        ),
        ("unlink-repo", Probe::Unlink(r("victim"))),
        (
            "unlink-split-child",
            Probe::Unlink(h(".claude/settings-victim.json")),
        ),
        (
            "unlink-sealed",
            Probe::Unlink(h(".claude/.credentials.json")),
        ),
        ("unlink-outside", Probe::Unlink(w.outside.join("victim"))),
        ("truncate-repo", Probe::Truncate(r("src/main.rs"))),
        ("truncate-bashrc", Probe::Truncate(h(".bashrc"))),
        ("truncate-outside", Probe::Truncate(w.outside.join("file"))),
        (
            "truncate-sealed",
            Probe::Truncate(h(".claude/.credentials.json")),
        ),
        (
            "truncate-protected",
            Probe::Truncate(h(".config/jaula/config.toml")),
        ),
        ("chmod-bashrc", Probe::Chmod(h(".bashrc"))),
        ("read-late-in-home", Probe::Read(late_file(w))),
        ("read-late-in-cache", Probe::Read(h(".cache/late"))),
        ("exec-system", Probe::Exec(PathBuf::from("/bin/true"))),
        ("exec-repo", Probe::Exec(r("run.sh"))),
        ("signal-self", Probe::SignalSelf),
        ("signal-sleeper", Probe::SignalSleeper),
        ("signal-parent", Probe::SignalParent),
        (
            "connect-host-abstract",
            Probe::ConnectAbstract(socket.to_string()),
        ),
        ("connect-own-abstract", Probe::ConnectOwnAbstract),
    ];
    probes.extend(specials.into_iter().map(|(id, p)| (id.to_string(), p)));
    probes
}

struct ChildRun {
    results: BTreeMap<String, ProbeResult>,
    enforcement: serde_json::Value,
}

fn run_child(test: &str, w: &World, uid: Option<u32>) -> ChildRun {
    let socket = format!("jaula-ll-host-{}-{}", std::process::id(), uid.unwrap_or(0));
    let addr = SocketAddr::from_abstract_name(socket.as_bytes()).expect("abstract addr");
    let _listener = UnixListener::bind_addr(&addr).expect("bind abstract");
    let spec = ChildSpec {
        home: w.home.clone(),
        repo: w.repo.clone(),
        token_file: w.token.clone(),
        uid,
        late_files: vec![late_file(w), w.home.join(".cache/late")],
        probes: probes_for(w, uid, &socket),
    };
    let mut child = rerun::command(&this_test!(test))
        .env(CHILD_ENV, serde_json::to_string(&spec).expect("json"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("stdout");
    let mut results = BTreeMap::new();
    let mut enforcement = serde_json::Value::Null;
    let mut sleeper = None;
    let mut transcript = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("line");
        transcript.push_str(&line);
        transcript.push('\n');
        if let Some(json) = line.strip_prefix(PREFIX) {
            let r: ProbeResult = serde_json::from_str(json).expect("probe json");
            results.insert(r.id.clone(), r);
        } else if let Some(json) = line.strip_prefix(ENFORCEMENT) {
            enforcement = serde_json::from_str(json).expect("enforcement json");
        } else if let Some((_, pid)) = line.split_once("JAULA_SLEEPER ") {
            // Not a prefix: the child's first line follows libtest's own "test NAME ... ",
            // which has no newline of its own.
            sleeper = pid.trim().parse::<libc::pid_t>().ok();
        }
    }
    let status = child.wait().expect("wait");
    if let Some(pid) = sleeper {
        // SAFETY: kill(2) with a pid we were told about; the sleeper is our grandchild.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(status.success(), "child failed: {status}\n{transcript}");
    assert!(
        sleeper.is_some(),
        "the child never named its sleeper:\n{transcript}"
    );
    let _ = fs::remove_file(tmp_probe_path(uid));
    ChildRun {
        results,
        enforcement,
    }
}

fn get<'a>(run: &'a ChildRun, id: &str) -> &'a ProbeResult {
    run.results
        .get(id)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn assert_denied(run: &ChildRun, id: &str, errnos: &[i32]) {
    let r = get(run, id);
    assert!(!r.ok, "{id} should be denied");
    assert!(
        r.errno.is_some_and(|e| errnos.contains(&e)),
        "{id}: errno {:?}, expected one of {errnos:?}",
        r.errno
    );
}

fn assert_allowed(run: &ChildRun, id: &str) {
    let r = get(run, id);
    assert!(r.ok, "{id} should be allowed, got errno {:?}", r.errno);
}

fn conformance(test: &str, uid: Option<u32>) {
    if !landlock_here(test) {
        return;
    }
    let w = world();
    if let Some(uid) = uid {
        chown_tree(&w.base, uid);
        fs::set_permissions(&w.base, fs::Permissions::from_mode(0o755)).expect("chmod base");
    }
    let policy = resolve(spec_for(&w.home, &w.repo, &w.token));
    let run = run_child(test, &w, uid);

    // The enforcement report: everything this layer uses is enforced on this kernel.
    let e = &run.enforcement;
    assert_eq!(e["status"], "full", "{e}");
    assert!(e["abi"].as_u64().unwrap_or(0) >= 6, "{e}");
    assert_eq!(
        e["scopes"],
        serde_json::json!(["signal", "abstract-unix-socket"])
    );
    assert!(e["rules"].as_u64().unwrap_or(0) > 10, "{e}");
    assert_eq!(e["no_new_privs"], true);

    // The matrix against decide.
    let mut seen_deviations: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in matrix(&w, uid) {
        let accesses: &[Access] = match entry.shape {
            Shape::File => &[Access::Read, Access::Write],
            Shape::Dir => &[Access::Read],
            Shape::Absent => &[Access::Create],
        };
        for &access in accesses {
            let verb = if access == Access::Create {
                "create"
            } else {
                &access.to_string()
            };
            let id = format!("{verb}:{}", entry.path.display());
            let actual = get(&run, &id);
            let decided = policy.decide(&entry.path, access).allowed;
            let deviation = expected_deviation(&w, &entry.path, access);
            checked += 1;
            match (actual.ok == decided, deviation) {
                (true, None) => {}
                (false, Some(name)) => *seen_deviations.entry(name).or_default() += 1,
                (true, Some(name)) => failures.push(format!(
                    "{id}: listed as deviation {name} but Landlock agrees with decide ({decided})"
                )),
                (false, None) => failures.push(format!(
                    "{id}: decide says {decided}, Landlock says {} (errno {:?})",
                    actual.ok, actual.errno
                )),
            }
            // A denial must be the kernel's access refusal, never something incidental.
            if !actual.ok && decided == actual.ok {
                let errno = actual.errno.unwrap_or(0);
                if ![libc::EACCES, libc::EPERM].contains(&errno) {
                    failures.push(format!("{id}: denied with unexpected errno {errno}"));
                }
            }
        }
    }
    assert!(checked >= 100, "only {checked} checks");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for name in ["sealed-names-listable", "split-dir-no-new-entries"] {
        assert!(
            seen_deviations.contains_key(name),
            "deviation {name} not observed"
        );
        assert!(DEVIATIONS.iter().any(|d| d.name == name));
    }
    if uid.is_none() {
        assert!(seen_deviations.contains_key("native-dev-subset"));
    }

    // Escapes.
    let refused = [libc::EACCES, libc::EPERM, libc::EXDEV];
    assert_denied(&run, "rename-sealed-out", &refused);
    assert_denied(&run, "link-sealed-in", &refused);
    assert_denied(&run, "link-ssh-in", &refused);
    assert_denied(&run, "link-token-in", &refused);
    assert!(w.home.join(".claude/.credentials.json").exists());
    assert!(!w.repo.join("stolen").exists() && !w.repo.join("linked").exists());
    assert_allowed(&run, "rename-within-repo");
    assert_allowed(&run, "link-within-repo");
    assert_allowed(&run, "unlink-repo");
    // Deviation split-dir-no-new-entries: decide lets ~/.claude/* be removed.
    assert!(
        policy
            .decide(&w.home.join(".claude/settings-victim.json"), Access::Write)
            .allowed
    );
    assert_denied(&run, "unlink-split-child", &[libc::EACCES]);
    assert_denied(&run, "unlink-sealed", &[libc::EACCES]);
    assert_denied(&run, "unlink-outside", &[libc::EACCES]);
    assert_allowed(&run, "truncate-repo");
    assert_denied(&run, "truncate-bashrc", &[libc::EACCES]);
    assert_denied(&run, "truncate-outside", &[libc::EACCES]);
    assert_denied(&run, "truncate-sealed", &[libc::EACCES]);
    assert_denied(&run, "truncate-protected", &[libc::EACCES]);
    // Deviation metadata-writes: Landlock does not handle chmod/chown/utimes.
    assert!(
        !policy
            .decide(&w.home.join(".bashrc"), Access::Write)
            .allowed
    );
    assert_allowed(&run, "chmod-bashrc");
    // Deviation ancestor-snapshot: a new entry of a split directory has no rule, while
    // one beneath a directory granted whole is covered.
    assert!(policy.decide(&late_file(&w), Access::Read).allowed);
    assert_denied(&run, "read-late-in-home", &[libc::EACCES]);
    assert_allowed(&run, "read-late-in-cache");
    seen_deviations.insert("metadata-writes", 1);
    seen_deviations.insert("ancestor-snapshot", 1);
    // Every deviation the layer declares for native mode was observed here.
    for d in DEVIATIONS {
        let root_only = d.name == "native-dev-subset";
        // A declared-file seal that is a directory on disk is in the conformance matrix
        // (crates/cli/tests/conformance.rs, `~/.pgpass/inner`), not in this one.
        let elsewhere = d.name == "declared-file-seal-is-directory";
        if (uid.is_none() || !root_only) && !elsewhere {
            assert!(
                seen_deviations.contains_key(d.name),
                "{} not observed",
                d.name
            );
        }
    }
    assert_allowed(&run, "exec-system");
    assert_allowed(&run, "exec-repo");
    assert_allowed(&run, "signal-self");
    assert_denied(&run, "signal-sleeper", &[libc::EPERM]);
    assert_denied(&run, "signal-parent", &[libc::EPERM]);
    assert_denied(&run, "connect-host-abstract", &[libc::EPERM]);
    assert_allowed(&run, "connect-own-abstract");
    println!(
        "{test}: {checked} matrix checks agree with decide except {:?}",
        seen_deviations
    );
}

#[test]
fn native_conformance_as_root() {
    if let Ok(raw) = std::env::var(CHILD_ENV) {
        return child_main(&raw);
    }
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("native_conformance_as_root: skipped, not running as root");
        return;
    }
    conformance("native_conformance_as_root", None);
}

#[test]
fn native_conformance_as_nobody() {
    if let Ok(raw) = std::env::var(CHILD_ENV) {
        return child_main(&raw);
    }
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Not root: the test already runs unprivileged; act as the unprivileged run.
        let uid = None;
        return conformance("native_conformance_as_nobody", uid);
    }
    conformance("native_conformance_as_nobody", Some(NOBODY));
}

// ---------------------------------------------------------------- no restriction needed

#[test]
fn probe_reports_this_kernel() {
    if !landlock_here("probe_reports_this_kernel") {
        return;
    }
    let support = probe();
    assert!(support.floor_met);
    let abi = support.kernel.abi();
    assert!(abi >= 1);
    assert_eq!(support.fs_enforced, Rights::HANDLED.available_at(abi));
    if abi >= 6 {
        assert_eq!(support.scopes_enforced, ScopeKind::ALL.to_vec());
        assert!(support.fs_missing.is_empty());
    }
    let text = support.to_string();
    assert!(text.contains(&format!("ABI {abi}")), "{text}");
    assert!(text.contains("refer"), "{text}");
    let json = serde_json::to_value(&support).expect("json");
    assert_eq!(json["kernel"]["landlock"], "available");
}

#[test]
fn bwrap_view_plan_keeps_no_native_deviation_on_what_the_view_hides() {
    let w = world();
    let policy = resolve(spec_for(&w.home, &w.repo, &w.token));
    let plan = plan(&policy, PlanMode::BwrapView, &RealHostFs).expect("plan");
    let root = plan.rule(Path::new("/")).expect("root rule");
    assert_eq!(root.rights, Rights::READ);
    assert!(plan.split.iter().all(|s| !s.read), "{plan}");
    assert!(plan.holes.is_empty());
    // What the view hides (every existing sealed root) gets no rule and splits nothing.
    for hidden in [
        ".ssh",
        ".claude/.credentials.json",
        ".cargo/credentials.toml",
    ] {
        assert!(plan.rule(&w.home.join(hidden)).is_none(), "{hidden}");
    }
    assert!(
        plan.rule(&w.home).is_none(),
        "the home is not split in the view"
    );
    // Writable roots free of absent seals and protected paths are written whole.
    for whole in [w.repo.clone(), w.home.join(".cache"), w.home.join(".npm")] {
        let rule = plan
            .rule(&whole)
            .unwrap_or_else(|| panic!("{}", whole.display()));
        assert!(rule.rights.contains(Rights::READ | Rights::WRITE));
    }
    // The view's own /dev is granted whole, with device ioctls.
    let dev = plan.rule(Path::new("/dev")).expect("/dev");
    assert!(dev.rights.has(Right::IoctlDev));
    // An absent seal (~/.cargo/credentials) is the mount layer's documented deviation:
    // ~/.cargo is not split for it, so cargo can still create its registry.
    assert!(
        !plan.split.iter().any(|s| s.path == w.home.join(".cargo")),
        "{plan}"
    );
    // Protected configuration that does not exist yet is the one thing still split
    // around (the launcher creates it before bwrap; a bare plan may meet it absent).
    for (dir, protected) in [
        (".config", ".config/jaula"),
        (".agents-city", ".agents-city/.runtime/cage"),
    ] {
        let split = plan
            .split
            .iter()
            .any(|s| s.path == w.home.join(dir) && s.write && !s.read);
        assert_eq!(split, !w.home.join(protected).exists(), "{dir}\n{plan}");
    }
}

#[test]
fn real_home_default_policy_plan_is_small() {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return;
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let policy = resolve(PolicySpec::with_defaults(Platform::Linux, home, repo));
    let started = std::time::Instant::now();
    let native = plan(&policy, PlanMode::Native, &RealHostFs).expect("native plan");
    let bwrap = plan(&policy, PlanMode::BwrapView, &RealHostFs).expect("bwrap plan");
    println!(
        "real home: native {} rules ({} split dirs, {} holes), bwrap view {} rules, planned in {:?}",
        native.rules.len(),
        native.split.len(),
        native.holes.len(),
        bwrap.rules.len(),
        started.elapsed()
    );
    println!("{native}");
    assert!(native.rules.len() > bwrap.rules.len());
}

/// The rules go to the kernel without an `fstat` of their own (the plan knows each
/// target's kind): a planned directory that is a file by the time the rules are added must
/// still refuse the launch, by the kernel's EINVAL to directory rights on a file, and not
/// be granted anything. Nothing is restricted when it refuses, so this runs in-process.
#[test]
fn a_planned_directory_that_became_a_file_refuses_the_launch() {
    if !landlock_here("a_planned_directory_that_became_a_file_refuses_the_launch") {
        return;
    }
    let (_dir, root) = jaula_testkit::scratch!("landlock-race-");
    let home = root.join("home");
    let repo = home.join("src/repo");
    let token = home.join(".agents-city/.runtime/broker/w.token");
    fs::create_dir_all(&repo).unwrap();
    write(&token, "t");
    let cache = home.join(".cache");
    fs::create_dir_all(&cache).unwrap();
    let policy = resolve(spec_for(&home, &repo, &token));
    let planned = plan(&policy, PlanMode::Native, &RealHostFs).expect("native plan");
    let rule = planned.rule(&cache).expect("~/.cache is granted");
    assert!(rule.rights.has(Right::MakeDir), "{planned}");
    fs::remove_dir(&cache).unwrap();
    write(&cache, "now a file");
    match restrict_self(&planned, AbiFloor::FsV1) {
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains(".cache"), "{text}");
            assert!(text.contains("Invalid argument"), "{text}");
        }
        Ok(enforcement) => panic!("the launch went on: {enforcement}"),
    }
}
