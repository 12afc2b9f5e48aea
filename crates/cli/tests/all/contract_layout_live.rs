//! `jaula contract prepare` then `contract run` on a machine where nothing of jaula's exists
//! yet, as the README has the operator do: the first run and every later one write in the
//! workspace as the tenant's uid. jaula creates `jaula/` (0711), the workspace root (0711)
//! and the state directory (0700) itself, whatever the umask; it opens the 0700 parent an
//! older jaula left, and names any other closed directory with the fix.
//!
//! A scratch `var/lib/jaula` stands in for the real one in most cases (the suite must not
//! remove a machine's `/var/lib/jaula`); `the_default_layout_works_on_a_machine_without_it`
//! proves the built-in defaults themselves, on a machine that has no `/var/lib/jaula`.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const C: &str = "dddddddd-0000-4000-8000-000000000004";
const C2: &str = "dddddddd-0000-4000-8000-000000000005";
/// The issue's own work record id: any safe segment will do.
const W: &str = "wr1";
const UIDS: (u32, u32) = (232000, 232099);

/// The machine: `var/lib` as a distribution ships it, no `var/lib/jaula`, and a home for
/// the runner (its config file is not read: there is none).
struct Machine {
    _keep: tempfile::TempDir,
    base: PathBuf,
}

impl Machine {
    fn new(prefix: &str, user: User) -> Machine {
        let (keep, base) = scratch(prefix);
        std::fs::create_dir_all(base.join("var/lib")).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        user.own(&base);
        if user == User::Nobody {
            open_to_others(&base);
        }
        Machine { _keep: keep, base }
    }

    fn jaula_dir(&self) -> PathBuf {
        self.base.join("var/lib/jaula")
    }

    fn tenants(&self) -> PathBuf {
        self.jaula_dir().join("contracts")
    }

    fn state(&self) -> PathBuf {
        self.jaula_dir().join("state")
    }

    /// `jaula contract ARGS` as `user`, under umask 077 (a hardened root shell's): the
    /// modes jaula needs must not depend on it.
    fn contract(&self, user: User, args: &[&str]) -> Output {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "umask 077; exec \"$0\" \"$@\""])
            .arg(jaula())
            .arg("contract")
            .args(args)
            .current_dir(self.base.join("home"))
            .env_clear()
            .env("PATH", HOST_PATH)
            .env("HOME", self.base.join("home"))
            .env("JAULA_CONTRACT_ROOT", self.tenants())
            .env("JAULA_CONTRACT_STATE", self.state())
            .env("JAULA_CONTRACT_UIDS", format!("{}-{}", UIDS.0, UIDS.1));
        user.apply(&mut cmd);
        cmd.output().unwrap()
    }
}

fn run_args<'a>(contract: &'a str, script: &'a str) -> Vec<&'a str> {
    contract_run_args(contract, W, &["sh", "-c", script])
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn mode_and_owner(path: &Path) -> (u32, u32) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    (meta.mode() & 0o7777, meta.uid())
}

/// The layout a Contract uid can use: `jaula/` and the workspace root 0711 (pass through,
/// no listing), the state directory 0700, all the runner's; the Contract's tree 0700, its
/// own.
fn assert_reachable_layout(jaula: &Path, runner: u32, tenant: u32, contract: &str) {
    assert_eq!(
        mode_and_owner(jaula),
        (0o711, runner),
        "{}",
        jaula.display()
    );
    let tenants = jaula.join("contracts");
    assert_eq!(mode_and_owner(&tenants), (0o711, runner));
    assert_eq!(mode_and_owner(&jaula.join("state")), (0o700, runner));
    assert_eq!(mode_and_owner(&tenants.join(contract)), (0o700, tenant));
    assert_eq!(
        mode_and_owner(&tenants.join(contract).join(W)),
        (0o700, tenant)
    );
}

/// What the tenant's first run printed: its uid, which owns the file it wrote.
fn tenant_uid(out: &Output, workspace: &Path) -> u32 {
    assert!(out.status.success(), "{}", stderr(out));
    let uid: u32 = stdout(out).trim().parse().unwrap();
    assert_eq!(mode_and_owner(&workspace.join("f.txt")).1, uid);
    uid
}

/// As root the tenant runs as a uid of the range; as uid 65534 (no CAP_SETUID) it runs as
/// the runner's own uid, and the layout is the same.
fn a_fresh_layout_works_first_time_and_every_time(user: User) {
    if !require_root("contract mode as root, and running jaula as uid 65534") {
        return;
    }
    let machine = Machine::new("fresh-layout-", user);
    let workspace = machine.tenants().join(C).join(W);

    let prepare = machine.contract(user, &["prepare", C, W]);
    assert!(prepare.status.success(), "{}", stderr(&prepare));
    assert_eq!(stdout(&prepare).trim(), workspace.to_str().unwrap());

    let first = machine.contract(user, &run_args(C, "echo x > f.txt; id -u"));
    let uid = tenant_uid(&first, &workspace);
    match user {
        User::Root => assert!((UIDS.0..=UIDS.1).contains(&uid), "ran as uid {uid}"),
        User::Nobody => assert_eq!(uid, NOBODY),
    }
    assert_reachable_layout(&machine.jaula_dir(), user.uid(), uid, C);

    // Every later run, and a later prepare, on the layout the first one left.
    for _ in 0..2 {
        let again = machine.contract(user, &run_args(C, "cat f.txt; echo y >> f.txt"));
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(stdout(&again).starts_with("x\n"), "{}", stdout(&again));
    }
    let prepare = machine.contract(user, &["prepare", C, W]);
    assert!(prepare.status.success(), "{}", stderr(&prepare));

    // A second tenant, on the same layout, gets a tree of its own.
    let second = machine.contract(user, &run_args(C2, "echo x > f.txt; id -u"));
    let uid2 = tenant_uid(&second, &machine.tenants().join(C2).join(W));
    if user == User::Root {
        assert_ne!(uid2, uid);
    }
    assert_reachable_layout(&machine.jaula_dir(), user.uid(), uid2, C2);
}

jaula_testkit::as_each_user!(a_fresh_layout_works_first_time_and_every_time =>
    a_fresh_layout_works_first_time_and_every_time_as_root,
    a_fresh_layout_works_first_time_and_every_time_as_nobody);

/// What an older jaula left after its first run on a fresh machine: `jaula/` 0700 (made
/// with the state directory's mode), holding the workspace root and the state directory.
fn older_jaulas_layout(machine: &Machine) {
    for (dir, mode) in [
        (machine.jaula_dir(), 0o700),
        (machine.tenants(), 0o711),
        (machine.state(), 0o700),
    ] {
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// The 0700 `jaula/` an older jaula made is opened to 0711 (and said so on stderr) by the
/// next `prepare`, and `run` writes; nothing else changes mode.
#[test]
fn an_older_jaulas_closed_parent_is_repaired_and_said_so() {
    if !require_root("contract uid separation") {
        return;
    }
    for first in [
        ["prepare", C, W].to_vec(),
        run_args(C, "echo x > f.txt; id -u"),
    ] {
        let machine = Machine::new("older-layout-", User::Root);
        older_jaulas_layout(&machine);
        let out = machine.contract(User::Root, &first);
        assert!(out.status.success(), "{first:?}: {}", stderr(&out));
        let said = format!(
            "{} was mode 0700 (an older jaula created it so); now 0711",
            machine.jaula_dir().display()
        );
        assert!(stderr(&out).contains(&said), "{}", stderr(&out));
        let run = machine.contract(User::Root, &run_args(C, "echo x > f.txt; id -u"));
        let uid = tenant_uid(&run, &machine.tenants().join(C).join(W));
        assert!(!stderr(&run).contains("was mode 0700"), "{}", stderr(&run));
        assert_reachable_layout(&machine.jaula_dir(), 0, uid, C);
        assert_eq!(mode_and_owner(&machine.base.join("var/lib")).0, 0o755);
    }
}

/// A closed `jaula/` that holds anything besides jaula's layout is the operator's: `prepare`
/// answers non-zero and `run` 126, both naming it and the fix, and nothing is changed or
/// created; after the fix both work.
#[test]
fn a_closed_parent_that_is_not_only_jaulas_is_named_with_the_fix() {
    if !require_root("contract uid separation") {
        return;
    }
    let machine = Machine::new("closed-parent-", User::Root);
    let jaula = machine.jaula_dir();
    std::fs::create_dir(&jaula).unwrap();
    std::fs::set_permissions(&jaula, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(jaula.join("notes"), "the operator's").unwrap();
    let named = format!(
        "{} (mode 0700, owner 0, group 0) is not searchable",
        jaula.display()
    );
    let fix = format!("fix: chmod o+x {} ", jaula.display());
    for (args, code) in [
        (vec!["prepare", C, W], 1),
        (run_args(C, "echo x > f.txt"), 126),
    ] {
        let out = machine.contract(User::Root, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(&named) && err.contains(&fix), "{err}");
        assert!(!err.contains("was mode 0700"), "{err}");
        assert_eq!(mode_and_owner(&jaula).0, 0o700);
        assert!(!machine.tenants().exists(), "{args:?} created the root");
    }
    let chmod = Command::new("chmod")
        .arg("o+x")
        .arg(&jaula)
        .status()
        .unwrap();
    assert!(chmod.success());
    let prepare = machine.contract(User::Root, &["prepare", C, W]);
    assert!(prepare.status.success(), "{}", stderr(&prepare));
    let run = machine.contract(User::Root, &run_args(C, "echo x > f.txt; id -u"));
    tenant_uid(&run, &machine.tenants().join(C).join(W));
}

/// The real default, `/var/lib/jaula`, from a machine without it: no root, state or uid
/// range given, no config file. Runs only where `/var/lib/jaula` is absent (a fresh
/// machine, as CI's is); elsewhere it skips (fails under CI=true) rather than touch a
/// layout some runner may be using. Removes what it created.
#[test]
fn the_default_layout_works_on_a_machine_without_it() {
    const DEFAULT: &str = "/var/lib/jaula";
    if !require_root("contract mode's default layout under /var/lib") {
        return;
    }
    let default = Path::new(DEFAULT);
    if default.symlink_metadata().is_ok() {
        return skip_or_fail(&format!(
            "{DEFAULT} exists: this test proves the default layout only on a machine \
             without it (remove it, after `jaula contract wipe` of its Contracts, to run it)"
        ));
    }
    /// Removes `/var/lib/jaula` however the test ends: it was absent before.
    struct Created;
    impl Drop for Created {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(DEFAULT);
        }
    }
    let _created = Created;
    let (_keep, home) = scratch("default-layout-home-");
    let contract = |args: &[&str]| {
        Command::new(jaula())
            .arg("contract")
            .args(args)
            .current_dir(&home)
            .env_clear()
            .env("PATH", HOST_PATH)
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let workspace = default.join("contracts").join(C).join(W);
    let prepare = contract(&["prepare", C, W]);
    assert!(prepare.status.success(), "{}", stderr(&prepare));
    assert_eq!(stdout(&prepare).trim(), workspace.to_str().unwrap());
    let first = contract(&run_args(C, "echo x > f.txt; id -u"));
    let uid = tenant_uid(&first, &workspace);
    assert!((2_000_000..=2_099_999).contains(&uid), "ran as uid {uid}");
    let again = contract(&run_args(C, "cat f.txt"));
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), "x\n");
    assert_reachable_layout(default, 0, uid, C);
    let wipe = contract(&["wipe", C]);
    assert!(wipe.status.success(), "{}", stderr(&wipe));
}
