use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{admit_new_git_dir, install, is_git_like, plan_new, refuse_write, Made, Plan};

fn dir(path: &Path) -> OwnedFd {
    fs::File::open(path).unwrap().into()
}

/// `plan_new` for `name` in the directory at `at`, opened afresh.
fn plan(at: &Path, name: &[u8], made: Made, rename: bool) -> Result<Plan, i32> {
    plan_new(dir(at).as_fd(), at, name, made, rename)
}

/// A git directory (it has a `HEAD`) holding an empty `rebase-merge` state directory.
fn in_rebase() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let rm = tmp.path().join("rebase-merge");
    fs::create_dir(&rm).unwrap();
    (tmp, rm)
}

fn refused(plan: Result<Plan, i32>) -> bool {
    matches!(plan, Ok(Plan::Refuse(_)))
}

#[test]
fn a_directory_is_git_like_as_git_would_take_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(!is_git_like(dir(d).as_fd()));
    fs::create_dir(d.join("objects")).unwrap();
    assert!(!is_git_like(dir(d).as_fd()));
    // The call that makes the second of objects and refs is the one to admit first.
    assert_eq!(plan(d, b"refs", Made::Directory, false), Ok(Plan::Admit));
    fs::create_dir(d.join("refs")).unwrap();
    assert!(is_git_like(dir(d).as_fd()));
    assert_eq!(plan(d, b"HEAD", Made::File, false), Ok(Plan::Go));
}

#[test]
fn config_and_hooks_of_a_git_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Before the directory is a git directory, a config is just a file.
    assert_eq!(plan(d, b"config", Made::File, false), Ok(Plan::Go));
    fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let fd = dir(d);
    for name in [&b"config"[..], b"config.worktree"] {
        // libgit2's empty config before its rename; nothing else makes one.
        assert_eq!(plan(d, name, Made::File, false), Ok(Plan::CreateEmpty));
        for made in [Made::Other, Made::Directory] {
            assert!(refused(plan(d, name, made, false)));
        }
        assert_eq!(plan(d, name, Made::Other, true), Ok(Plan::Install));
    }
    assert_eq!(plan(d, b"hooks", Made::Directory, false), Ok(Plan::Go));
    assert!(refused(plan(d, b"hooks", Made::Other, false)));
    assert!(refused(plan(d, b"hooks", Made::Directory, true)));
    fs::create_dir(d.join("hooks")).unwrap();
    let hooks = d.join("hooks");
    assert_eq!(
        plan(&hooks, b"pre-commit.sample", Made::File, false),
        Ok(Plan::Go)
    );
    assert!(refused(plan(&hooks, b"pre-commit", Made::File, false)));
    fs::write(hooks.join("post-checkout"), "owner's").unwrap();
    assert!(refuse_write(dir(&hooks).as_fd(), &hooks, b"post-checkout")
        .unwrap()
        .is_some());
    assert!(refuse_write(fd.as_fd(), d, b"config").unwrap().is_some());
    assert!(refuse_write(fd.as_fd(), d, b"description")
        .unwrap()
        .is_none());
}

#[test]
fn install_admits_and_writes_a_new_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(d.join("config"), "[core]\n\tpager = less\n").unwrap();
    fs::write(
        d.join("config.lock"),
        "[core]\n\tpager = less\n\tbare = false\n",
    )
    .unwrap();
    let lock_ino = fs::metadata(d.join("config.lock")).unwrap().ino();
    let fd = dir(d);
    let roots = |_: &Path, _: &Path| Ok::<(), String>(());
    // The owner's unchanged key stays; a safe one is added.
    assert_eq!(
        install(fd.as_fd(), b"config.lock", fd.as_fd(), d, b"config", &roots),
        Ok(())
    );
    assert!(!d.join("config.lock").exists());
    assert_ne!(fs::metadata(d.join("config")).unwrap().ino(), lock_ino);
    assert!(fs::read_to_string(d.join("config"))
        .unwrap()
        .contains("bare = false"));
    // A new key that runs code is refused by name, and nothing changes.
    fs::write(d.join("config.lock"), "[core]\n\tfsmonitor = x\n").unwrap();
    let refused = install(fd.as_fd(), b"config.lock", fd.as_fd(), d, b"config", &roots);
    assert!(
        matches!(&refused, Err(Ok(why)) if why.contains("core.fsmonitor")),
        "{refused:?}"
    );
    assert!(!fs::read_to_string(d.join("config"))
        .unwrap()
        .contains("fsmonitor"));
}

#[test]
fn a_new_git_directory_is_admitted_with_what_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let roots = |_: &Path, _: &Path| Ok::<(), String>(());
    fs::write(d.join("config"), "[core]\n\tbare = false\n").unwrap();
    let ino = fs::metadata(d.join("config")).unwrap().ino();
    fs::create_dir(d.join("hooks")).unwrap();
    fs::write(d.join("hooks/pre-commit.sample"), "").unwrap();
    assert_eq!(admit_new_git_dir(dir(d).as_fd(), d, &roots), Ok(()));
    assert_ne!(
        fs::metadata(d.join("config")).unwrap().ino(),
        ino,
        "not reinstalled"
    );
    fs::write(d.join("hooks/pre-commit"), "").unwrap();
    assert!(matches!(
        admit_new_git_dir(dir(d).as_fd(), d, &roots),
        Err(Ok(_))
    ));
    fs::remove_file(d.join("hooks/pre-commit")).unwrap();
    fs::write(d.join("config.worktree"), "[alias]\n\tx = !y\n").unwrap();
    assert!(matches!(
        admit_new_git_dir(dir(d).as_fd(), d, &roots),
        Err(Ok(why)) if why.contains("alias.x")
    ));
    fs::remove_file(d.join("config.worktree")).unwrap();
    std::os::unix::fs::symlink("/etc/gitconfig", d.join("config.worktree")).unwrap();
    assert!(matches!(
        admit_new_git_dir(dir(d).as_fd(), d, &roots),
        Err(Ok(_))
    ));
}

#[test]
fn todo_lists_and_state_directories_of_a_git_directory() {
    let (tmp, rm) = in_rebase();
    let g = tmp.path();
    let todo = b"git-rebase-todo";
    assert!(refused(plan(&rm, todo, Made::File, false)));
    assert_eq!(plan(&rm, todo, Made::File, true), Ok(Plan::Install));
    fs::write(rm.join("git-rebase-todo"), "pick a\n").unwrap();
    assert!(refuse_write(dir(&rm).as_fd(), &rm, todo).unwrap().is_some());
    // Other state files are git's to write in place.
    assert_eq!(refuse_write(dir(&rm).as_fd(), &rm, b"done"), Ok(None));
    // The state directories: only mkdir.
    for (made, rename) in [
        (Made::Directory, true),
        (Made::Other, false),
        (Made::File, false),
    ] {
        assert!(
            refused(plan(g, b"sequencer", made, rename)),
            "{made:?} {rename}"
        );
    }
    assert_eq!(plan(g, b"sequencer", Made::Directory, false), Ok(Plan::Go));
    // Outside a git directory, a `rebase-merge/git-rebase-todo` is a file like any other.
    let plain = tmp.path().join("plain/rebase-merge");
    fs::create_dir_all(&plain).unwrap();
    assert_eq!(plan(&plain, todo, Made::File, false), Ok(Plan::Go));
}

#[test]
fn nothing_traversable_is_named_like_a_merge_strategy() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for made in [Made::Directory, Made::Other] {
        for rename in [false, true] {
            assert!(refused(plan(d, b"git-merge-..", made, rename)));
        }
    }
    assert_eq!(
        plan(d, b"git-merge-tool.sh", Made::File, false),
        Ok(Plan::Go)
    );
    assert_eq!(plan(d, b"merge-..", Made::Directory, false), Ok(Plan::Go));
}

#[test]
fn a_todo_list_is_installed_only_without_exec_lines() {
    let (_tmp, rm) = in_rebase();
    let no_worktree = |_: &Path, _: &Path| -> Result<(), String> { Err("no".into()) };
    let staged_onto_todo = || {
        let at = dir(&rm);
        install(
            at.as_fd(),
            b"staged",
            at.as_fd(),
            &rm,
            b"git-rebase-todo",
            &no_worktree,
        )
    };
    fs::write(rm.join("staged"), "pick a\nexec make\n").unwrap();
    let refused = staged_onto_todo();
    assert!(
        matches!(&refused, Err(Ok(why)) if why.contains("line 2")),
        "{refused:?}"
    );
    assert!(!rm.join("git-rebase-todo").exists());
    fs::write(rm.join("staged"), "pick a\nbreak\n").unwrap();
    let staged = fs::metadata(rm.join("staged")).unwrap().ino();
    staged_onto_todo().unwrap();
    assert_eq!(
        fs::read_to_string(rm.join("git-rebase-todo")).unwrap(),
        "pick a\nbreak\n"
    );
    assert!(!rm.join("staged").exists());
    // A fresh file: nothing the caller kept open on the source reaches it.
    assert_ne!(
        fs::metadata(rm.join("git-rebase-todo")).unwrap().ino(),
        staged
    );
}
