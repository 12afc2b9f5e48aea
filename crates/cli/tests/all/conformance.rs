//! Conformance: the path matrix `Policy::decide` is judged on, run live through each Linux
//! backend of `jaula run` (landlock, bwrap), as root and as uid 65534.
//!
//! "Allowed" is what happened to the HOST: a read is allowed when the caged process got the
//! host file's unique content (for a directory: listed its marker entry), a write when the
//! host file changed, a create when the new entry exists on the host afterwards. Every
//! result must equal `decide` on the same (canonical) path, or be an entry of that
//! backend's deviation table, with the direction recorded there; a table entry that no
//! longer disagrees fails too, so the tables stay exactly the truth (docs/security.md).

use crate::common;

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use jaula_policy::{Access, Platform, Policy, PolicySpec};

use common::{cage_or_skip, chown_tree, is_root, jaula, open_to_others, NOBODY};
use jaula_testkit::probe::matrix::{
    self, absent_creatable, dev, Decided, Deviation, Kind, Outcome, Target,
};

const BROKER: &str = ".agents-city/.runtime/broker";

/// Landlock lists the names (never the contents) inside a sealed root: READ_DIR granted on
/// each of its ancestors applies beneath it.
const fn listable(label: &'static str) -> Deviation {
    dev(
        "sealed-names-listable",
        label,
        Access::Read,
        true,
        false,
        "READ_DIR on each ancestor of a sealed root applies beneath it, so names (never \
         contents) inside it list",
    )
}

/// `jaula run --backend landlock`: Landlock (native plan) + seccomp + hardening, with the
/// socket gate (the default). `split-dir-no-new-entries` is not here: the gate's supervisor
/// makes and removes the direct entries of a split directory itself (`Plan::gate_split`);
/// the split stays only under `--no-socket-gate` and for Landlock alone (landlock_live).
const LANDLOCK_DEVIATIONS: &[Deviation] = &[
    listable("~/.ssh"),
    listable("~/.ssh/sub"),
    listable("~/.aws"),
    listable("~/.config/gh"),
    listable("~/.agents-city/.runtime/broker"),
    dev(
        "sealed-names-listable",
        "~/.pgpass",
        Access::Read,
        true,
        false,
        "READ_DIR on each ancestor of a sealed root applies beneath it, so names (never contents) inside it list (here a declared-file seal that is a directory on disk)",
    ),
    dev(
        "declared-file-seal-is-directory",
        "~/.pgpass/inner",
        Access::Read,
        false,
        true,
        "declared-file seal that is a directory on disk: the planner seals what the disk holds, the whole directory; decide seals the path only (stricter)",
    ),
    dev(
        "metadata-writes",
        "~/.profile",
        Access::Write,
        true,
        false,
        "Landlock does not handle chmod/chown/utimes/setxattr; DAC alone decides outside the writable roots",
    ),
    dev(
        "metadata-writes",
        "~/.ssh/id_chmod",
        Access::Write,
        true,
        false,
        "the same inside a sealed root: the mode of a secret can change, its content stays unreadable",
    ),
    dev(
        "native-dev-subset",
        "/dev/<new>",
        Access::Create,
        false,
        true,
        "natively /dev is the host's; only bubblewrap's --dev devices are granted, never new entries",
    ),
];

/// `jaula run --backend bwrap`: bubblewrap's mount view, then Landlock (bwrap-view plan),
/// seccomp and hardening inside it.
const BWRAP_DEVIATIONS: &[Deviation] = &[
    dev(
        "private-tmp",
        "/tmp/<new>",
        Access::Create,
        false,
        true,
        "/tmp is writable in the view but is the window's own (<state home>/.runtime/tmp/<window>/tmp), so nothing lands in the host's /tmp, whose sockets stay out of reach",
    ),
    dev(
        "private-tmp",
        "/var/tmp/<new>",
        Access::Create,
        false,
        true,
        "/var/tmp is the window's own (<state home>/.runtime/tmp/<window>/var-tmp), not the host's",
    ),
    matrix::BWRAP_SEAL_ON_DIRECTORY,
    matrix::BWRAP_OWN_DEV,
    absent_creatable(
        "absent-sealed-creatable",
        "~/.cargo/credentials",
        "a mount needs an existing target, so a sealed file absent at launch inside a writable root is not covered; the inner Landlock stage grants writable roots whole (no split), as agents-city's cage did",
    ),
    absent_creatable(
        "absent-sealed-creatable",
        "~/.config/gcloud",
        "the same for a sealed directory absent at launch inside ~/.config",
    ),
    absent_creatable(
        "absent-sealed-creatable",
        "~/.claude/channels/seat2/.env",
        "channel tokens are mounted over one existing file at a time",
    ),
];

/// The Linux backends `jaula run --backend` takes, each with its probe deviations: every
/// test below loops over this list, and every probe deviation must be an instance of one
/// the backend itself lists (`jaula_sandbox::backend`).
const BACKENDS: &[(&str, &[Deviation])] = &[
    ("landlock", LANDLOCK_DEVIATIONS),
    ("bwrap", BWRAP_DEVIATIONS),
];

/// The probe deviations recorded for `backend`.
fn table(backend: &str) -> &'static [Deviation] {
    BACKENDS
        .iter()
        .find(|(name, _)| *name == backend)
        .map(|(_, table)| *table)
        .unwrap_or_else(|| panic!("{backend} is not in BACKENDS"))
}

struct Scenario {
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    token: PathBuf,
    targets: Vec<Target>,
    policy: Policy,
}

/// The matrix: secrets present and absent, declared kinds that differ from the disk, seals
/// inside writable roots, the working set, protected configuration, the read-only rest.
const MATRIX: &[(&str, Kind)] = {
    use Kind::*;
    &[
        // Secrets present.
        ("~/.ssh/id_x", File),
        ("~/.ssh", Dir),
        ("~/.ssh/sub", Dir),
        ("~/.aws/credentials", File),
        ("~/.aws", Dir),
        ("~/.git-credentials", File),
        ("~/.claude/.credentials.json", File),
        ("~/.cargo/credentials.toml", File),
        ("~/.docker/config.json", File),
        ("~/.config/gh/hosts.yml", File),
        ("~/.config/gh", Dir),
        ("~/.agents-city/.runtime/broker/window-a.token", File),
        ("~/.agents-city/.runtime/broker/window-b.token", File),
        ("~/.agents-city/.runtime/broker", Dir),
        ("~/.claude/channels/seat1/.env", File),
        // Declared kind differs from the disk.
        ("~/.pgpass/inner", File),
        ("~/.pgpass", Dir),
        ("~/.kube", File),
        // The working set.
        ("~/src/repo/README.md", File),
        ("~/src/repo/.git/config", File),
        ("~/src/repo", Dir),
        ("~/src/repo/link-to-key", LinkTo("~/.ssh/linked_key")),
        ("~/src/repo/link-to-notes", LinkTo("~/linked-notes.txt")),
        ("~/src/repo/link-to-cache", LinkTo("~/.cache/linked")),
        ("~/.cache/x/blob", File),
        ("~/.cache", Dir),
        ("~/.config/x/settings.ini", File),
        ("~/.config", Dir),
        ("~/.claude/settings.json", File),
        ("~/.claude", Dir),
        ("~/.claude/channels/seat1/notes.txt", File),
        ("~/.claude/channels/seat1", Dir),
        ("~/.claude/channels/seat2", Dir),
        ("~/.claude.json", File),
        ("~/.agents-city/state.json", File),
        ("~/.agents-city/.runtime", Dir),
        ("~/.cargo/config.toml", File),
        ("~/.cargo/registry/index.txt", File),
        ("~/.cargo", Dir),
        ("~/.local/share/app/data", File),
        ("~/.local/state/app/log", File),
        ("~/go/pkg/mod.txt", File),
        // Protected configuration and the read-only rest.
        ("~/.config/jaula/config.toml", File),
        ("~/.config/jaula", Dir),
        ("~/.agents-city/.runtime/cage/w.sb", File),
        ("~/.bashrc", File),
        ("~/.npmrc", File),
        ("~/notes.txt", File),
        ("~/docs", Dir),
        ("~", Dir),
        ("@/outside/file.txt", File),
        ("@/outside", Dir),
        // Metadata writes and removals.
        ("~/.profile", Chmod),
        ("~/.ssh/id_chmod", Chmod),
        ("~/src/repo/run.sh", Chmod),
        ("~/.cache/x/chmod", Chmod),
        ("~/.gitconfig", Remove),
        ("~/.ssh/id_remove", Remove),
        ("~/src/repo/old.txt", Remove),
        ("~/.cache/x/old", Remove),
        ("~/.cargo/stale.lock", Remove),
        ("~/.config/jaula/old.toml", Remove),
        // Creates.
        ("~/.netrc", NewFile),
        ("~/.gnupg", NewDir),
        ("~/.cargo/credentials", NewFile),
        ("~/.config/gcloud", NewDir),
        ("~/.kimi/new", NewInAbsentRoot),
        ("~/.claude/channels/seat2/.env", NewFile),
        ("~/.agents-city/.runtime/cage/new.sb", NewFile),
        ("~/.ssh/new_key", NewFile),
        ("~/.ssh/sub/new", NewFile),
        ("~/.agents-city/.runtime/broker/window-c.token", NewFile),
        ("~/.pgpass/new", NewFile),
        ("~/.config/gh/new", NewFile),
        ("~/.docker/new", NewFile),
        ("~/.cache/new-entry", NewFile),
        ("~/.cache/x/new", NewFile),
        ("~/.cargo/new-file", NewFile),
        ("~/.cargo/registry/new", NewFile),
        ("~/.claude/new-file", NewFile),
        ("~/.claude/channels/new-seat", NewDir),
        ("~/.claude/channels/seat1/new", NewFile),
        ("~/.config/newdir", NewDir),
        ("~/.config/x/new", NewFile),
        ("~/.agents-city/new", NewFile),
        ("~/.agents-city/.runtime/new", NewFile),
        ("~/.local/share/new", NewDir),
        ("~/.local/state/app/new", NewFile),
        ("~/src/repo/new.rs", NewFile),
        ("~/src/repo/.git/hooks", NewDir),
        ("~/.claude/channels/seat1/.env.bak", NewFile),
        ("~/.config/jaula/new.toml", NewFile),
        ("~/.claude.json.backup", NewFile),
        ("~/new-in-home", NewFile),
        ("~/docs/new", NewFile),
        ("@/outside/new.txt", NewFile),
        ("/tmp/x", NewFile),
        ("/var/tmp/x", NewDir),
        ("/dev/x", NewFile),
    ]
};

fn build(root: &Path) -> Scenario {
    let home = root.join("home");
    let repo = home.join("src/repo");
    let targets = matrix::targets(root, &home, "conformance", MATRIX);
    fs::create_dir_all(&repo).unwrap();
    matrix::plant(root, &targets);
    // A `kimi` on the run's PATH: jaula creates `~/.kimi` (the matrix's absent root) only
    // for a tool it finds there, and the reference (`with_defaults`, no PATH) takes every
    // tool as present.
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("kimi"), "#!/bin/sh\n").unwrap();

    let token = home.join(BROKER).join("window-a.token");
    let policy = matrix::linux_policy(&home, &repo, &token);
    Scenario {
        root: root.to_path_buf(),
        home,
        repo,
        token,
        targets,
        policy,
    }
}

fn run_jaula(sc: &Scenario, backend: &str, as_uid: Option<u32>, argv_tail: &[&Path]) -> Command {
    let mut cmd = Command::new(jaula());
    cmd.args(["run", "--backend", backend, "--repo"])
        .arg(&sc.repo)
        .arg("--home")
        .arg(&sc.home)
        .arg("--token-file")
        .arg(&sc.token)
        .arg("--")
        .args(argv_tail)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", sc.root.join("bin").display()),
        )
        .env("HOME", &sc.home)
        .env("LC_ALL", "C")
        .current_dir(&sc.repo);
    if let Some(uid) = as_uid {
        cmd.uid(uid).gid(uid);
    }
    cmd
}

/// Run one caged shell through `jaula run --backend <backend>`; return each probe's host
/// effect.
fn run(sc: &Scenario, backend: &str, as_uid: Option<u32>) -> Vec<Outcome> {
    let script_path = sc.root.join("probe.sh");
    fs::write(&script_path, matrix::script(&sc.targets)).unwrap();
    if let Some(uid) = as_uid {
        chown_tree(&sc.root, uid);
        open_to_others(&sc.root);
    }
    let cmd = run_jaula(sc, backend, as_uid, &[Path::new("/bin/sh"), &script_path]);
    let expected_uid = as_uid.unwrap_or_else(|| rustix::process::geteuid().as_raw());
    matrix::run(cmd, &sc.root, &sc.targets, expected_uid)
}

fn available(backend: &str) -> bool {
    let (_keep, root) = common::scratch("conformance-probe-");
    let sc = build(&root);
    let mut trial = run_jaula(&sc, backend, None, &[Path::new("/bin/true")]);
    cage_or_skip(backend, &trial.output().unwrap())
}

fn judge(backend: &str, as_uid: Option<u32>) {
    let table = table(backend);
    if !available(backend) {
        return;
    }
    let who = match as_uid {
        Some(uid) => format!("uid {uid}"),
        None if is_root() => "root".to_string(),
        None => "current user".to_string(),
    };
    let (_keep, root) = common::scratch(&format!("conformance-{backend}-"));
    let sc = build(&root);
    let outcomes = run(&sc, backend, as_uid);

    println!("── {backend} as {who}: {} probes", outcomes.len());
    let failures = matrix::compare(&sc.targets, &outcomes, table, |path, access| {
        let decision = sc.policy.decide(path, access);
        Decided {
            allowed: decision.allowed,
            rule: decision.rule.describe(&sc.home),
        }
    });
    // The matrix must have measured something real.
    assert!(outcomes.len() >= 120, "{} probes", outcomes.len());
    let live = |label: &str, access: Access| {
        outcomes
            .iter()
            .find(|o| sc.targets[o.target].label == label && o.access == access)
            .unwrap()
            .live
    };
    assert!(!live("~/.ssh/id_x", Access::Read));
    assert!(live("~/src/repo/README.md", Access::Write));
    assert!(live(
        "~/.agents-city/.runtime/broker/window-a.token",
        Access::Read
    ));
    assert!(
        failures.is_empty(),
        "{backend} as {who}:\n{}",
        failures.join("\n")
    );
}

#[test]
fn landlock_backend_matches_decide() {
    judge("landlock", None);
}

/// The matrix again as uid 65534; only root can switch to it (and a non-root caller's own
/// run above is already unprivileged).
fn judge_as_nobody(backend: &str) {
    if !is_root() {
        return eprintln!("skipping: not root, so the main matrix already ran unprivileged");
    }
    judge(backend, Some(NOBODY));
}

#[test]
fn landlock_backend_matches_decide_as_uid_65534() {
    judge_as_nobody("landlock");
}

#[test]
fn bwrap_backend_matches_decide() {
    judge("bwrap", None);
}

#[test]
fn bwrap_backend_matches_decide_as_uid_65534() {
    judge_as_nobody("bwrap");
}

#[test]
fn every_deviation_names_a_probe_of_the_matrix() {
    let (_keep, root) = common::scratch("conformance-names-");
    let sc = build(&root);
    for d in BACKENDS.iter().flat_map(|(_, table)| table.iter()) {
        let t = sc
            .targets
            .iter()
            .find(|t| t.label == d.label)
            .unwrap_or_else(|| panic!("{} is not in the matrix", d.label));
        let probed = match t.kind {
            Kind::File | Kind::LinkTo(_) => d.access != Access::Create,
            Kind::Chmod | Kind::Remove => d.access == Access::Write,
            Kind::Dir => d.access == Access::Read,
            Kind::NewFile | Kind::NewDir | Kind::NewInAbsentRoot => d.access == Access::Create,
        };
        assert!(probed, "{} {} is never probed", d.access, d.label);
        assert_ne!(d.live, d.decide, "{} {}", d.access, d.label);
        assert_eq!(
            sc.policy.decide(&t.decided, d.access).allowed,
            d.decide,
            "{} {}: the table records the wrong decision",
            d.access,
            d.label
        );
    }
}

#[test]
fn every_deviation_is_one_its_backend_lists() {
    for (name, table) in BACKENDS {
        let backend = jaula_sandbox::backends::named(name)
            .unwrap_or_else(|| panic!("{name} is not a backend"));
        let listed: Vec<(&str, bool)> = backend
            .deviations()
            .iter()
            .map(|d| (d.name, d.looser))
            .collect();
        let failures = matrix::unlisted(table, &listed);
        assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
    }
}

/// With `cage.create_cache_roots = false`, an absent cache root stays absent: `decide`
/// refuses a create beneath it (rule `absent-writable-root`), and so does each backend,
/// as root and as uid 65534. With the switch on (the matrix above, `~/.kimi/new`) all
/// three allow it.
fn absent_root_with_creation_off(backend: &str, as_uid: Option<u32>) {
    if !available(backend) {
        return;
    }
    let (_keep, root) = common::scratch(&format!("conformance-absent-{backend}-"));
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(&repo).unwrap();
    let config = root.join("config.toml");
    fs::write(&config, "[cage]\ncreate_cache_roots = false\n").unwrap();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home.clone(), repo.clone());
    spec.create_absent_roots = false;
    let policy = spec.resolve().unwrap();
    if let Some(uid) = as_uid {
        chown_tree(&root, uid);
        open_to_others(&root);
    }
    let targets = [home.join(".kimi/new"), home.join(".npm/_cacache")];
    let mut script = String::new();
    for t in &targets {
        script.push_str(&format!(
            "if ( : > {} ) 2>/dev/null; then echo ok; else echo err; fi\n",
            matrix::quote(t)
        ));
    }
    let mut cmd = Command::new(jaula());
    cmd.args(["run", "--backend", backend, "--config"])
        .arg(&config)
        .arg("--repo")
        .arg(&repo)
        .args(["--", "/bin/sh", "-c", &script])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .current_dir(&repo);
    if let Some(uid) = as_uid {
        cmd.uid(uid).gid(uid);
    }
    let out = cmd.output().unwrap();
    jaula_testkit::output::assert_ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), targets.len(), "{stdout}");
    for (t, live) in targets.iter().zip(&lines) {
        let d = policy.decide(t, Access::Create);
        assert!(!d.allowed, "{}: {:?}", t.display(), d.rule);
        assert!(
            matches!(d.rule, jaula_policy::Rule::AbsentWritableRoot { .. }),
            "{:?}",
            d.rule
        );
        assert_eq!(*live, "err", "{backend}: {} was created", t.display());
        assert!(!t.parent().unwrap().exists(), "{} exists", t.display());
    }
}

#[test]
fn absent_root_with_creation_off_is_refused_by_decide_and_landlock() {
    absent_root_with_creation_off("landlock", None);
    if is_root() {
        absent_root_with_creation_off("landlock", Some(NOBODY));
    }
}

#[test]
fn absent_root_with_creation_off_is_refused_by_decide_and_bwrap() {
    absent_root_with_creation_off("bwrap", None);
    if is_root() {
        absent_root_with_creation_off("bwrap", Some(NOBODY));
    }
}
