//! The CLI's live tests' helpers: the shared kit (`jaula-testkit`) re-exported under the
//! names the tests call, plus what needs this crate's binary or build directory.
#![allow(dead_code, unused_imports)]

use std::fs;
use std::path::PathBuf;
use std::process::Command;

pub use jaula_testkit::probe::{parse_shell_prefix, run_probes, standard_probes, Op, Probe};
pub use jaula_testkit::{
    build_home, cage_or_skip, chown_tree, chown_tree_except, is_root, marker, missing_tool,
    skip_or_fail, tools_or_skip, write_marker, Backend, Home, User, CREATE_PATHS, EXTRA_DIRS,
    HOST_PATH, NOBODY, PRESENT_FILES,
};

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
    let (_keep, root) = scratch("cage-probe-");
    let (home, repo) = (root.join("home"), root.join("repo"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    chown_tree(&root, user.uid());
    let mut cmd = Command::new(jaula());
    cmd.args(["run", "--backend", backend.name(), "--repo"])
        .arg(&repo)
        .arg("--home")
        .arg(&home)
        .args(["--", "/bin/true"])
        .current_dir(&repo)
        .env_clear()
        .env("PATH", HOST_PATH)
        .env("HOME", &home);
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
