//! The CLI's live tests' helpers: the shared kit (`jaula-testkit`) re-exported under the
//! names the tests call, plus what needs this crate's binary or build directory.
#![allow(dead_code, unused_imports)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use jaula_testkit::probe::{parse_shell_prefix, run_probes, standard_probes, Op, Probe};
pub use jaula_testkit::{
    build_home, cage_or_skip, chown_tree, chown_tree_except, is_root, marker, missing_tool,
    require_root, skip_or_fail, tools_or_skip, write_marker, Backend, Home, User, CREATE_PATHS,
    EXTRA_DIRS, HOST_PATH, NOBODY, PRESENT_FILES,
};

/// The users a case runs as: root, and uid 65534 when the test can become it.
pub fn users() -> Vec<User> {
    if is_root() {
        vec![User::Root, User::Nobody]
    } else {
        vec![User::Root]
    }
}

pub fn jaula() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jaula"))
}

/// A fresh scratch directory under the target dir: never under `/tmp`, which every Linux
/// cage makes writable.
pub fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    jaula_testkit::scratch!(name)
}

/// Open the directories above `path` to others, inside this build's target directory only
/// (see [`jaula_testkit::open_to_others`]).
pub fn open_to_others(path: &std::path::Path) {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    jaula_testkit::open_to_others(path, tmp.parent().unwrap());
}

/// Whether `jaula run --backend B` builds a cage here as `user`, asked once per test
/// process: `Err` holds jaula's own reason, for `skip_or_fail`.
pub fn cage_available(backend: Backend, user: User) -> Result<(), String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Answers = HashMap<(Backend, User), Result<(), String>>;
    static SEEN: Mutex<Option<Answers>> = Mutex::new(None);
    let mut guard = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let seen = guard.get_or_insert_with(HashMap::new);
    if let Some(answer) = seen.get(&(backend, user)) {
        return answer.clone();
    }
    let (_keep, root, home, repo) = bare_tree("cage-probe-");
    chown_tree(&root, user.uid());
    let mut cmd = jaula_run(backend, &home, &repo);
    cmd.args(["--", "/bin/true"]);
    user.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let answer = if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "jaula run --backend {} cannot cage here as uid {}: {}",
            backend.name(),
            user.uid(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    seen.insert((backend, user), answer.clone());
    answer
}

/// Whether `jaula run --backend B` cages here as `user`; otherwise [`skip_or_fail`] with
/// jaula's own reason, and false.
pub fn cage_here(backend: Backend, user: User) -> bool {
    match cage_available(backend, user) {
        Ok(()) => true,
        Err(reason) => {
            skip_or_fail(&reason);
            false
        }
    }
}

/// A scratch tree holding an empty `home/` and `repo/`, the least a cage needs:
/// `(keep, root, home, repo)`.
pub fn bare_tree(prefix: &str) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let (keep, root) = scratch(prefix);
    let (home, repo) = (root.join("home"), root.join("repo"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    (keep, root, home, repo)
}

/// `jaula run --backend B --repo R --home H`, started in the repo with nothing in its
/// environment but the host's PATH and the home as HOME: the shape of most live runs. The
/// caller adds its own flags and the command after `--`.
pub fn jaula_run(backend: Backend, home: &Path, repo: &Path) -> Command {
    let mut cmd = jaula_in(home, repo);
    cmd.args(["run", "--backend", backend.name(), "--repo"])
        .arg(repo)
        .arg("--home")
        .arg(home);
    cmd
}

/// jaula with no arguments yet, started in `dir` with nothing in its environment but the
/// host's PATH and `home` as HOME.
pub fn jaula_in(home: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(jaula());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", home);
    cmd
}

/// A finished `jaula run --log FILE`: its output, the decision log, and the scratch tree
/// both live in (kept until the run is dropped).
pub struct LoggedRun {
    pub out: std::process::Output,
    pub log: PathBuf,
    pub _dir: tempfile::TempDir,
}

impl LoggedRun {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    /// The decision log's records, one JSON object a line; a run that wrote no log fails.
    pub fn log(&self) -> Vec<serde_json::Value> {
        fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// A scratch directory for a test that needs root (for `what`), or `None` after
/// [`require_root`]'s skip (a failure under CI=true).
pub fn root_scratch(what: &str, prefix: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    require_root(what).then(|| scratch(prefix))
}

/// Run `case` on each Linux backend as each user (root, uid 65534) that this host cages
/// as; the others are skipped by [`cage_here`] (failed under CI).
pub fn each_cage(case: impl FnMut(Backend, User)) {
    each_cage_as(&[User::Root, User::Nobody], case)
}

/// [`each_cage`] as each of `users` only.
pub fn each_cage_as(users: &[User], mut case: impl FnMut(Backend, User)) {
    for backend in [Backend::Landlock, Backend::Bwrap] {
        for &user in users {
            if cage_here(backend, user) {
                case(backend, user);
            }
        }
    }
}

/// `jaula ARGS`, uncaged, in this process's environment: its finished output.
pub fn jaula_output(args: &[&str]) -> std::process::Output {
    Command::new(jaula()).args(args).output().unwrap()
}

/// `contract run CONTRACT --work-record WORK --runtime claude -- COMMAND…`: the arguments
/// of a contract run (after `jaula contract`).
pub fn contract_run_args<'a>(
    contract: &'a str,
    work: &'a str,
    command: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        contract,
        "--work-record",
        work,
        "--runtime",
        "claude",
        "--",
    ];
    args.extend_from_slice(command);
    args
}

/// The row of `backend` in `jaula explain --json`'s `backends`.
pub fn backend_row(explained: &serde_json::Value, backend: &str) -> serde_json::Value {
    explained["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["backend"] == backend)
        .cloned()
        .unwrap_or_else(|| panic!("no {backend} row: {explained}"))
}

/// Whether an `explain` row's summary says `said`.
pub fn summary_says(row: &serde_json::Value, said: &str) -> bool {
    row["summary"].as_str().unwrap().contains(said)
}

/// [`jaula_run`] with `--network allow` for `domain` and the loopback address (where the
/// config's resolve entries send the domain), the `config` file and a decision `log`.
pub fn jaula_run_allowing(
    backend: Backend,
    (home, repo): (&Path, &Path),
    domain: &str,
    config: &Path,
    log: &Path,
) -> Command {
    let mut cmd = jaula_run(backend, home, repo);
    cmd.args(["--network", "allow", "--allow-domain", domain])
        .args(["--allow-address", "127.0.0.1", "--config"])
        .arg(config)
        .arg("--log")
        .arg(log);
    cmd
}
