//! Live: one real bubblewrap cage, a matrix of probes, and `Policy::decide` as the judge.
//!
//! "Allowed" is what happened to the HOST: a read is allowed when the caged process got
//! the host file's unique marker (for a directory: saw its marker entry), a write when the
//! host file changed, a create when the new entry exists on the host afterwards. Every
//! result must equal `decide`, or be a named deviation below with its reason; and the
//! `MountView` model must predict every result.
//!
//! Runs as the current user and, when that is root, again as uid/gid 65534 (bubblewrap
//! then builds an unprivileged user namespace, the way a normal owner runs it).

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use jaula_policy::sources::BwrapHint;
use jaula_policy::{Access, Platform, Policy, PolicySpec, RealHostFs};
use jaula_sandbox::bwrap::{probe, render_argv, Availability, BwrapOptions, MountView};
use jaula_testkit::probe::matrix::{
    self, absent_creatable, dev, Decided, Deviation, Kind, Outcome, Target,
};
use jaula_testkit::{chown_tree, is_root, under_ci, NOBODY};

/// Where the kernel and the reference meaning differ, each for a reason and in a recorded
/// direction (`live`, then `decide`). A disagreement missing from this table, or in the
/// other direction, fails the test; so does an entry that no longer disagrees.
const DEVIATIONS: &[Deviation] = &[
    absent_creatable(
        "absent-protected-creatable",
        "~/src/repo/.git/hooks",
        "a planting-guard path absent at launch is not mounted over (a mount point would be \
         left on the host as a placeholder), so the cage can create it; jaula run reports \
         the creation after the command exits",
    ),
    absent_creatable(
        "absent-sealed-creatable",
        "~/.cargo/credentials",
        "an absent sealed file inside a writable root is not mounted over (a seal over a \
         missing path would abort the launch or leave an empty file on the owner's disk), \
         so the cage can create it; it then holds only what the cage wrote",
    ),
    absent_creatable(
        "absent-sealed-creatable",
        "~/.config/gcloud",
        "the same for an absent sealed directory inside a writable root (~/.config)",
    ),
    dev(
        "absent-writable-root-skipped",
        "~/.kimi",
        Access::Create,
        false,
        true,
        "an absent writable root is skipped by --bind-try, and $HOME itself is read-only, \
         so the root cannot be created from inside",
    ),
    absent_creatable(
        "absent-sealed-creatable",
        "~/.claude/channels/seat2/.env",
        "channel tokens are sealed one existing file at a time (a mount needs a path, not a \
         pattern): one created after launch is not covered",
    ),
    absent_creatable(
        "absent-protected-creatable",
        "~/.agents-city/.runtime/cage",
        "a protected path absent at launch is not mounted read-only, so it can be created \
         beneath the writable state home",
    ),
    matrix::BWRAP_SEAL_ON_DIRECTORY,
    matrix::BWRAP_OWN_DEV,
];

struct Scenario {
    root: PathBuf,
    home: PathBuf,
    targets: Vec<Target>,
    policy: Policy,
}

/// The absolute bubblewrap program, or a printed skip (a failure under CI).
fn bwrap_or_skip() -> Option<PathBuf> {
    match probe(BwrapHint::Probe, &BwrapOptions::default()) {
        Availability::Available { program, .. } => {
            assert!(program.is_absolute(), "{}", program.display());
            Some(program)
        }
        other if under_ci() => panic!("bubblewrap is required under CI=true: {other}"),
        other => {
            eprintln!("skipping the bubblewrap live test: {other}");
            None
        }
    }
}

fn build(root: &Path) -> Scenario {
    let root = fs::canonicalize(root).unwrap();
    let home = root.join("home");
    let repo = home.join("src/repo");
    let broker = ".agents-city/.runtime/broker";
    let mut entries: Vec<(String, Kind)> = Vec::new();
    let mut add = |label: &str, kind: Kind| entries.push((label.to_string(), kind));
    use Kind::*;
    // Secrets present.
    add("~/.ssh/id_x", File);
    add("~/.ssh", Dir);
    add("~/.aws/credentials", File);
    add("~/.aws", Dir);
    add("~/.git-credentials", File);
    add("~/.claude/.credentials.json", File);
    add("~/.cargo/credentials.toml", File);
    add("~/.docker/config.json", File);
    add("~/.config/gh/hosts.yml", File);
    add("~/.config/gh", Dir);
    add(&format!("~/{broker}/window-a.token"), File);
    add(&format!("~/{broker}/window-b.token"), File);
    add(&format!("~/{broker}"), Dir);
    add("~/.claude/channels/seat1/.env", File);
    // Declared kind differs from the disk.
    add("~/.pgpass/inner", File);
    add("~/.pgpass", Dir);
    add("~/.kube", File);
    // The working set.
    add("~/src/repo/README.md", File);
    add("~/src/repo/.git/config", File);
    add("~/src/repo", Dir);
    add("~/.cache/x/blob", File);
    add("~/.config/x/settings.ini", File);
    add("~/.claude/settings.json", File);
    add("~/.claude", Dir);
    add("~/.claude/channels/seat1/notes.txt", File);
    add("~/.claude/channels/seat1", Dir);
    add("~/.claude/channels/seat2", Dir);
    add("~/.claude.json", File);
    add("~/.agents-city/state.json", File);
    add("~/.agents-city/.runtime", Dir);
    add("~/.cargo/registry/index.txt", File);
    add("~/.local/share/app/data", File);
    add("~/.local/state/app/log", File);
    add("~/go/pkg/mod.txt", File);
    // Protected configuration and the read-only rest.
    add("~/.config/jaula/config.toml", File);
    add("~/.config/jaula", Dir);
    add("~/.bashrc", File);
    add("~/.npmrc", File);
    add("~", Dir);
    add("@/outside/file.txt", File);
    // Creates.
    add("~/.netrc", NewFile);
    add("~/.gnupg", NewDir);
    add("~/.cargo/credentials", NewFile);
    add("~/.config/gcloud", NewDir);
    add("~/.kimi", NewDir);
    add("~/.claude/channels/seat2/.env", NewFile);
    add("~/.agents-city/.runtime/cage", NewDir);
    add("~/.ssh/new_key", NewFile);
    add(&format!("~/{broker}/window-c.token"), NewFile);
    add("~/.pgpass/new", NewFile);
    add("~/.config/gh/new", NewFile);
    add("~/.docker/new", NewFile);
    add("~/.cache/new-entry", NewFile);
    add("~/.cargo/new-file", NewFile);
    add("~/.local/share/new", NewDir);
    add("~/src/repo/new.rs", NewFile);
    add("~/src/repo/.git/hooks", NewDir);
    add("~/.claude/channels/seat1/.env.bak", NewFile);
    add("~/.config/jaula/new.toml", NewFile);
    add("~/.claude.json.backup", NewFile);
    add("~/new-in-home", NewFile);
    add("@/outside/new.txt", NewFile);
    add("/tmp/x", NewFile);
    add("/var/tmp/x", NewDir);
    add("/dev/x", NewFile);
    let entries: Vec<(&str, Kind)> = entries.iter().map(|(l, k)| (l.as_str(), *k)).collect();
    let targets = matrix::targets(&root, &home, "bwrap-live", &entries);

    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(root.join("outside")).unwrap();
    matrix::plant(&root, &targets);

    let policy = matrix::linux_policy(&home, &repo, &home.join(broker).join("window-a.token"));
    Scenario {
        root,
        home,
        targets,
        policy,
    }
}

/// Run the cage once; return each probe's host effect, and the model of the mount view
/// built from the very argv that ran, with the disk as it was at launch.
fn run(program: &Path, scenario: &Scenario, as_uid: Option<u32>) -> (Vec<Outcome>, MountView) {
    let script_path = scenario.root.join("probe.sh");
    fs::write(&script_path, matrix::script(&scenario.targets)).unwrap();
    if let Some(uid) = as_uid {
        chown_tree(&scenario.root, uid);
    }
    let mut argv = render_argv(&scenario.policy, &BwrapOptions::default(), &RealHostFs).unwrap();
    let view = MountView::from_argv(&argv, &RealHostFs)
        .unwrap()
        .with_display_home(&scenario.home);
    argv[0] = program.as_os_str().to_owned();
    argv.push(OsString::from("/bin/sh"));
    argv.push(script_path.into_os_string());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .current_dir("/");
    if let Some(uid) = as_uid {
        cmd.uid(uid).gid(uid);
    }
    let expected_uid = as_uid.unwrap_or_else(|| rustix::process::getuid().as_raw());
    let outcomes = matrix::run(cmd, &scenario.root, &scenario.targets, expected_uid);
    (outcomes, view)
}

/// [`bwrap_or_skip`] for a test that only means something as root: otherwise it is
/// skipped (not a CI failure, since the non-root case is covered) with `why`.
fn bwrap_as_root_or_skip(why: &str) -> Option<PathBuf> {
    let program = bwrap_or_skip()?;
    if !is_root() {
        eprintln!("skipping: not root, and {why}");
        return None;
    }
    Some(program)
}

fn judge(program: &Path, as_uid: Option<u32>, who: &str) {
    let (_dir, root) = jaula_testkit::scratch!("bwrap-live-");
    let scenario = build(&root);
    let (outcomes, view) = run(program, &scenario, as_uid);

    println!("── {who}: {} probes", outcomes.len());
    let mut failures = matrix::compare(&scenario.targets, &outcomes, DEVIATIONS, |path, access| {
        let decision = scenario.policy.decide(path, access);
        Decided {
            allowed: decision.allowed,
            rule: decision.rule.describe(&scenario.home),
        }
    });
    // The mount-view model must predict every live result, agreeing with decide or not.
    for o in &outcomes {
        let t = &scenario.targets[o.target];
        let effect = view.effect(&t.path, o.access);
        if effect.reaches_host != o.live {
            failures.push(format!(
                "model disagrees on {} {}: live {} but model {} ({})",
                o.access, t.label, o.live, effect.reaches_host, effect.op
            ));
        }
    }
    assert!(outcomes.len() >= 90, "{} probes", outcomes.len());
    assert!(failures.is_empty(), "{who}:\n{}", failures.join("\n"));
}

#[test]
fn every_deviation_is_one_the_backend_lists() {
    let listed: Vec<(&str, bool)> = jaula_sandbox::bwrap::DEVIATIONS
        .iter()
        .map(|d| (d.name, d.looser))
        .collect();
    let failures = matrix::unlisted(DEVIATIONS, &listed);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cage_matches_decide_on_the_probe_matrix() {
    let Some(program) = bwrap_or_skip() else {
        return;
    };
    judge(
        &program,
        None,
        if is_root() { "root" } else { "current user" },
    );
}

#[test]
fn the_cage_matches_decide_as_an_unprivileged_user() {
    // Not root: the other test already ran unprivileged.
    let Some(program) = bwrap_as_root_or_skip("the main matrix already ran unprivileged") else {
        return;
    };
    judge(&program, Some(NOBODY), "uid 65534");
}

/// The default policy's bubblewrap argv (with `program` as argv[0]) over a scratch home
/// under `root` holding `files` (relative to home, with their content).
fn default_cage(
    root: &Path,
    program: PathBuf,
    files: &[(&str, &str)],
) -> (PathBuf, Policy, Vec<OsString>) {
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(&repo).unwrap();
    for (rel, content) in files {
        fs::create_dir_all(home.join(rel).parent().unwrap()).unwrap();
        fs::write(home.join(rel), content).unwrap();
    }
    let policy = PolicySpec::with_defaults(Platform::Linux, home.clone(), repo)
        .resolve()
        .unwrap();
    let mut argv = render_argv(&policy, &BwrapOptions::default(), &RealHostFs).unwrap();
    argv[0] = program.into_os_string();
    (home, policy, argv)
}

#[test]
fn an_absent_claude_json_cannot_be_created_from_inside() {
    let Some(program) = bwrap_or_skip() else {
        return;
    };
    let (_dir, root) = jaula_testkit::scratch!("bwrap-live-");
    let (home, policy, argv) = default_cage(&root, program, &[]);
    let claude = home.join(".claude.json");
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .args(["/bin/sh", "-c", "( : > \"$1\" ) 2>/dev/null; echo $?", "sh"])
        .arg(&claude)
        .output()
        .unwrap();
    jaula_testkit::output::assert_ok(&out);
    assert_ne!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    // Deviation: decide allows it (Claude's state file), but --bind-try skips an absent
    // source and $HOME is read-only, so Claude cannot create it from inside the cage.
    assert!(!claude.exists());
    assert!(policy.decide(&claude, Access::Create).allowed);
    let view = MountView::from_argv(&argv, &RealHostFs).unwrap();
    assert!(!view.effect(&claude, Access::Create).reaches_host);
}

/// Known limit of the mount view alone, pinned so it cannot be forgotten: bubblewrap run
/// by real root builds the namespace without a user namespace and keeps every capability
/// for the command (its `--cap-drop` is opt-in), so a caged root process holds
/// CAP_SYS_ADMIN and can simply unmount a seal. The argv matches the launcher's and does not
/// drop capabilities; jaula's process-hardening layer (every capability dropped before
/// `exec`) is what closes this. When that changes, this test must be updated.
#[test]
fn as_root_the_cap_drop_in_the_base_keeps_seals_shut() {
    let Some(program) =
        bwrap_as_root_or_skip("only real root keeps capabilities inside bubblewrap")
    else {
        return;
    };
    let (_dir, root) = jaula_testkit::scratch!("bwrap-live-");
    let (home, policy, argv) = default_cage(&root, program, &[(".ssh/id_x", "secret-marker")]);
    // Unmount the seal over ~/.ssh, then read the key beneath it.
    let unseal = |argv: &[OsString], uid: Option<u32>| {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .args(["/bin/sh", "-c"])
            .arg("umount \"$1\" 2>/dev/null; cat \"$1/id_x\" 2>/dev/null; true")
            .arg("sh")
            .arg(home.join(".ssh"));
        if let Some(uid) = uid {
            cmd.uid(uid).gid(uid);
        }
        cmd.output().unwrap()
    };
    let out = unseal(&argv, None);
    jaula_testkit::output::assert_ok(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(!policy.decide(&home.join(".ssh/id_x"), Access::Read).allowed);

    // Why the flag is in the base: without it, root's cage keeps CAP_SYS_ADMIN and the
    // seal is one umount away.
    let pos = argv.iter().position(|a| a == "--cap-drop").unwrap();
    let mut weaker = argv.clone();
    weaker.drain(pos..pos + 2);
    let out = unseal(&weaker, None);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "secret-marker");

    // An unprivileged owner's cage (a user namespace, capabilities dropped by bubblewrap)
    // cannot do the same.
    chown_tree(&root, NOBODY);
    let out = unseal(&argv, Some(NOBODY));
    jaula_testkit::output::assert_ok(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}
