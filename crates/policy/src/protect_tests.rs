use std::fs;
use std::path::{Path, PathBuf};

use super::find_git_dirs;
use crate::{Platform, PolicySpec, ProtectKind, ProtectedSource, Warning};
use ProtectKind as K;
use ProtectedSource as S;

use crate::test_support::Scratch;

fn scratch() -> Scratch {
    Scratch::new()
}

fn git_dir(path: &Path) {
    fs::create_dir_all(path.join("hooks")).unwrap();
    fs::write(path.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(path.join("config"), "[core]\n").unwrap();
}

/// A linked worktree: its git directory `wt_git`, whose `commondir` names the main one
/// two levels up, and its checkout `wt`, whose `.git` file names `wt_git`.
fn linked_worktree(wt_git: &Path, wt: &Path) {
    fs::create_dir_all(wt_git).unwrap();
    fs::write(wt_git.join("commondir"), "../..\n").unwrap();
    fs::create_dir_all(wt).unwrap();
    fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
}

/// (path, kind, source, split natively), in the policy's order.
struct Entries(Vec<(PathBuf, ProtectKind, ProtectedSource, bool)>);

impl std::ops::Deref for Entries {
    type Target = Vec<(PathBuf, ProtectKind, ProtectedSource, bool)>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Entries {
    fn has(&self, path: &Path) -> Option<(ProtectKind, ProtectedSource)> {
        self.iter()
            .find(|(p, ..)| p == path)
            .map(|(_, k, s, _)| (*k, *s))
    }
    /// `path` is listed, protected as `kind` for `source`.
    fn expect(&self, path: &Path, kind: ProtectKind, source: ProtectedSource) {
        assert_eq!(self.has(path), Some((kind, source)), "{}", path.display());
    }
}

fn protected(spec: &PolicySpec) -> (Entries, Vec<Warning>) {
    let p = spec.resolve().unwrap();
    let list = p
        .protected()
        .iter()
        .map(|x| (x.path.clone(), x.kind, x.source, x.split_natively))
        .collect();
    (Entries(list), p.warnings().to_vec())
}

/// A scratch home and repo, the repo with a git directory.
fn git_repo() -> (Scratch, PathBuf) {
    let s = scratch();
    git_dir(&s.repo.join(".git"));
    let repo = s.repo.clone();
    (s, repo)
}

#[test]
fn a_plain_repo_protects_the_git_entry_its_config_and_hooks_never_split() {
    let (s, repo) = git_repo();
    let spec = s.spec(Platform::Linux);
    let (list, warnings) = protected(&spec);
    assert!(warnings.is_empty());
    list.expect(&repo.join(".git"), K::Entry, S::GitDirectory);
    list.expect(&repo.join(".git/config"), K::File, S::GitConfig);
    list.expect(&repo.join(".git/hooks"), K::Directory, S::GitHooks);
    // Absent names are protected too (their creation is what a cage would plant).
    list.expect(&repo.join(".git/config.worktree"), K::File, S::GitConfig);
    list.expect(&repo.join(".vscode"), K::Directory, S::RepoToolSettings);
    for (path, .., split) in list.iter() {
        if crate::paths::is_within(path, &repo) {
            assert!(
                !split,
                "{} is in the repo and must not split",
                path.display()
            );
        }
    }
}

#[test]
fn a_worktree_git_file_resolves_gitdir_and_commondir_outside_the_repo() {
    let s = scratch();
    let main = s.root.join("main");
    git_dir(&main.join(".git"));
    let wt_git = main.join(".git/worktrees/feature");
    let repo = s.root.join("feature");
    linked_worktree(&wt_git, &repo);
    fs::write(wt_git.join("HEAD"), "ref: refs/heads/feature\n").unwrap();

    let found = find_git_dirs(&repo, &crate::RealHostFs).unwrap();
    assert!(found.pointer_file);
    assert_eq!(found.git_dirs[0], wt_git);
    assert!(found.git_dirs.contains(&main.join(".git")));

    let spec = PolicySpec::with_defaults(Platform::Linux, s.home.clone(), repo.clone());
    let (list, _) = protected(&spec);
    list.expect(&repo.join(".git"), K::File, S::GitPointer);
    list.expect(&wt_git.join("commondir"), K::File, S::GitPointer);
    list.expect(&wt_git.join("config.worktree"), K::File, S::GitConfig);
    list.expect(&main.join(".git/config"), K::File, S::GitConfig);
    list.expect(&main.join(".git/hooks"), K::Directory, S::GitHooks);
}

/// A linked worktree inside the repo: its own `.git` file is a pointer like a submodule's,
/// found through `<git>/worktrees/<id>/gitdir`.
#[test]
fn a_worktree_inside_the_repo_protects_its_git_file() {
    let (s, repo) = git_repo();
    let wt_git = repo.join(".git/worktrees/feat");
    let wt = repo.join(".worktrees/feat");
    linked_worktree(&wt_git, &wt);
    fs::write(
        wt_git.join("gitdir"),
        format!("{}\n", wt.join(".git").display()),
    )
    .unwrap();

    let (list, _) = protected(&s.spec(Platform::Linux));
    for pointer in [wt.join(".git"), wt_git.join("commondir")] {
        list.expect(&pointer, K::File, S::GitPointer);
    }
}

#[test]
fn a_relative_gitdir_and_submodules_resolve() {
    let (s, repo) = git_repo();
    // A submodule `libs/a` whose git dir lives in .git/modules/libs/a, with a nested one.
    let module = repo.join(".git/modules/libs/a");
    git_dir(&module);
    git_dir(&module.join("modules/inner"));
    fs::create_dir_all(repo.join("libs/a")).unwrap();
    fs::write(
        repo.join("libs/a/.git"),
        "gitdir: ../../.git/modules/libs/a\n",
    )
    .unwrap();
    fs::write(
        repo.join(".gitmodules"),
        "[submodule \"a\"]\n\tpath = libs/a\n\turl = ../a\n",
    )
    .unwrap();
    let spec = s.spec(Platform::Linux);
    let (list, _) = protected(&spec);
    list.expect(&module.join("config"), K::File, S::GitConfig);
    list.expect(
        &module.join("modules/inner/hooks"),
        K::Directory,
        S::GitHooks,
    );
    list.expect(&repo.join("libs/a/.git"), K::File, S::GitPointer);

    // The submodule as the cage's repo: its `.git` file names the real git directory.
    let spec = PolicySpec::with_defaults(Platform::Linux, s.home.clone(), repo.join("libs/a"));
    let found = find_git_dirs(&repo.join("libs/a"), &crate::RealHostFs).unwrap();
    assert_eq!(found.git_dirs[0], module);
    let (list, _) = protected(&spec);
    list.expect(&module.join("hooks"), K::Directory, S::GitHooks);
}

#[test]
fn no_git_and_an_unreadable_pointer_are_not_errors() {
    let s = Scratch::with_repo("plain");
    let repo = s.repo.clone();
    // Only the repo's own `.git` counts, not a checkout the scratch lies in.
    assert_eq!(find_git_dirs(&repo, &crate::RealHostFs), None);
    let spec = s.spec(Platform::Linux);
    let (list, _) = protected(&spec);
    assert!(list.has(&repo.join(".git")).is_none());
    assert!(list.has(&repo.join(".envrc")).is_some());

    fs::write(repo.join(".git"), "not a pointer\n").unwrap();
    let found = find_git_dirs(&repo, &crate::RealHostFs).unwrap();
    assert!(found.pointer_file && found.git_dirs.is_empty());
    let (list, _) = protected(&spec);
    list.expect(&repo.join(".git"), K::File, S::GitPointer);
}

#[test]
fn unprotect_drops_entries_at_or_beneath_it_but_never_jaulas_own_configuration() {
    let (s, repo) = git_repo();
    let mut spec = s.spec(Platform::Linux);
    spec.unprotected = vec![
        repo.join(".git/hooks"),
        PathBuf::from("~/.config"),
        PathBuf::from("~/nothing-here"),
    ];
    let (list, warnings) = protected(&spec);
    assert!(list.has(&repo.join(".git/hooks")).is_none());
    assert!(list.has(&repo.join(".git/config")).is_some());
    assert!(list.has(&s.home.join(".config/git")).is_none());
    assert!(list.has(&s.home.join(".config/systemd")).is_none());
    list.expect(
        &s.home.join(".config/jaula"),
        K::Directory,
        S::ConfigDirectory,
    );
    assert!(warnings.contains(&Warning::UnprotectRefused {
        path: s.home.join(".config"),
        protected: s.home.join(".config/jaula"),
    }));
    assert!(warnings.contains(&Warning::UnprotectMatchedNothing {
        path: s.home.join("nothing-here"),
    }));
}

#[test]
fn path_dirs_runtime_dirs_and_the_executable_follow_the_spec() {
    let s = scratch();
    let repo = s.repo.clone();
    let mut spec = s.spec(Platform::Linux);
    let (list, _) = protected(&spec);
    assert!(list.has(&s.home.join(".local/bin")).is_none());
    spec.protect_path_dirs = true;
    spec.runtime_dir = Some(s.root.join("run/user/1000"));
    spec.launcher_exe = Some(repo.join("target/debug/jaula"));
    let (list, _) = protected(&spec);
    for dir in [".local/bin", ".cargo/bin"] {
        list.expect(&s.home.join(dir), K::Directory, S::PathDirectory);
    }
    for dir in ["systemd", "dbus-1"] {
        list.expect(
            &s.root.join("run/user/1000").join(dir),
            K::Directory,
            S::SessionStartup,
        );
    }
    // An executable inside the repo (a jaula developer's build) is protected, and never
    // split natively: cargo must still create files beside it.
    let exe = list
        .iter()
        .find(|(p, ..)| *p == repo.join("target/debug/jaula"))
        .unwrap();
    assert_eq!(exe.2, ProtectedSource::JaulaExecutable);
    assert!(!exe.3);
}

#[test]
fn a_symlinked_git_directory_protects_its_target_and_the_link_as_a_file() {
    let s = scratch();
    let real = s.root.join("elsewhere/real.git");
    git_dir(&real);
    let repo = s.repo.clone();
    std::os::unix::fs::symlink(&real, repo.join(".git")).unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    // Not as an entry (a mount backend would bind the whole git directory read-only), but
    // as a file: replaced by a link of the cage's making, it would redirect every name.
    list.expect(&repo.join(".git"), K::File, S::GitDirectory);
    list.expect(&real.join("config"), K::File, S::GitConfig);
    list.expect(&real.join("hooks"), K::Directory, S::GitHooks);
}

#[test]
fn a_dotfile_symlink_protects_both_the_target_and_the_link() {
    let s = scratch();
    let dotfiles = s.root.join("dotfiles/nvim");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::create_dir_all(s.home.join(".config")).unwrap();
    std::os::unix::fs::symlink(&dotfiles, s.home.join(".config/nvim")).unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    list.expect(&dotfiles, K::Directory, S::EditorInit);
    list.expect(&s.home.join(".config/nvim"), K::File, S::EditorInit);
}

#[test]
fn the_owners_run_user_directory_is_protected_whatever_xdg_runtime_dir_says() {
    let s = scratch();
    let mut spec = s.spec(Platform::Linux);
    spec.owner_uid = Some(4242);
    for runtime in [None, Some(s.root.join("elsewhere"))] {
        spec.runtime_dir = runtime;
        let (list, _) = protected(&spec);
        for dir in ["systemd", "dbus-1"] {
            list.expect(
                &Path::new("/run/user/4242").join(dir),
                K::Directory,
                S::SessionStartup,
            );
        }
    }
    // Not on macOS, which has no `/run/user`; and nothing without a uid.
    spec.runtime_dir = None;
    spec.platform = Platform::MacOs;
    let (list, _) = protected(&spec);
    assert!(list.has(Path::new("/run/user/4242/systemd")).is_none());
    spec.platform = Platform::Linux;
    spec.owner_uid = None;
    let (list, _) = protected(&spec);
    assert!(!list.iter().any(|(p, ..)| p.starts_with("/run/user")));
}

#[test]
fn a_link_on_the_way_is_protected_as_a_file_and_its_target_as_the_target() {
    let s = scratch();
    let repo = s.repo.clone();
    let shared = s.root.join("shared-claude");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink("../shared-claude", repo.join(".claude")).unwrap();
    let spec = s.spec(Platform::Linux);
    let (list, _) = protected(&spec);
    list.expect(&shared.join("settings.json"), K::File, S::RepoToolSettings);
    list.expect(&shared.join("hooks"), K::Directory, S::RepoToolSettings);
    // The owner's link: removed or replaced, it would redirect every name beneath it.
    let link = list
        .iter()
        .find(|(p, ..)| *p == repo.join(".claude"))
        .unwrap();
    assert_eq!(
        (link.1, link.2),
        (ProtectKind::File, ProtectedSource::RepoToolSettings)
    );
    assert!(!link.3, "a link on the way is never split natively");
    // Unprotecting `.claude` (its target) frees the link with it.
    let mut spec = spec;
    spec.unprotected.push(repo.join(".claude"));
    let (list, warnings) = protected(&spec);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(list.has(&repo.join(".claude")).is_none());
    assert!(list.has(&shared.join("settings.json")).is_none());
}

#[test]
fn a_dangling_link_protects_the_place_it_names() {
    let s = scratch();
    let repo = s.repo.clone();
    // `.claude -> cl` with no `cl` yet: the cage could `mkdir cl` and write
    // `cl/settings.json`, which the owner's tools read as `.claude/settings.json`.
    std::os::unix::fs::symlink("cl", repo.join(".claude")).unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    list.expect(&repo.join("cl/settings.json"), K::File, S::RepoToolSettings);
    list.expect(&repo.join(".claude"), K::File, S::RepoToolSettings);
}

#[test]
fn a_symlinked_hooks_directory_protects_what_git_runs() {
    let (s, repo) = git_repo();
    fs::remove_dir(repo.join(".git/hooks")).unwrap();
    fs::create_dir_all(repo.join("tools/hooks")).unwrap();
    std::os::unix::fs::symlink("../tools/hooks", repo.join(".git/hooks")).unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    list.expect(&repo.join("tools/hooks"), K::Directory, S::GitHooks);
}

#[test]
fn resolution_follows_chains_relative_absolute_and_dangling_links() {
    let s = scratch();
    let r = &s.root;
    fs::create_dir_all(r.join("real/sub")).unwrap();
    std::os::unix::fs::symlink("hop", r.join("a")).unwrap();
    std::os::unix::fs::symlink(r.join("real"), r.join("hop")).unwrap();
    std::os::unix::fs::symlink("../gone", r.join("real/sub/d")).unwrap();
    let found = super::resolve_with_links(&r.join("a/sub/d/x"), &crate::RealHostFs);
    assert_eq!(found.reached, r.join("real/gone/x"));
    assert_eq!(
        found.links,
        vec![r.join("a"), r.join("hop"), r.join("real/sub/d")]
    );
    // `real/sub/d -> ../gone` leaves `real/sub` through `..`.
    assert_eq!(found.standing, vec![r.join("real/sub")]);
    let found = super::resolve_with_links(&r.join("real/./sub/../y"), &crate::RealHostFs);
    assert_eq!(found.reached, r.join("real/y"));
    assert!(found.links.is_empty());
    assert_eq!(found.standing, vec![r.join("real/sub")]);
    // A loop ends: the kernel's limit, then the names as they are.
    std::os::unix::fs::symlink("loop", r.join("loop")).unwrap();
    let found = super::resolve_with_links(&r.join("loop/z"), &crate::RealHostFs);
    assert_eq!(found.reached, r.join("loop/z"));
}

#[test]
fn core_hooks_path_is_protected_repo_relative_home_and_absolute() {
    let (s, repo) = git_repo();
    // The local value, husky style, after an earlier one in the same file: the last wins.
    fs::write(
        repo.join(".git/config"),
        "[core]\n\thooksPath = old-hooks\n[core]\n\thooksPath = .githooks\n",
    )
    .unwrap();
    // A global value in both home files, overridden here by the local one: still
    // protected, since the owner's other repos run it.
    fs::write(
        s.home.join(".gitconfig"),
        "[core]\n\thooksPath = ~/.config/githooks\n",
    )
    .unwrap();
    fs::create_dir_all(s.home.join(".config/git")).unwrap();
    let absolute = s.root.join("shared-hooks");
    fs::write(
        s.home.join(".config/git/config"),
        format!("[Core]\n\tHooksPath = \"{}\"\n", absolute.display()),
    )
    .unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    let hooks = Some((ProtectKind::Directory, ProtectedSource::GitHooks));
    assert_eq!(list.has(&repo.join(".githooks")), hooks);
    assert_eq!(list.has(&s.home.join(".config/githooks")), hooks);
    assert_eq!(list.has(&absolute), hooks);
    assert_eq!(list.has(&repo.join("old-hooks")), None);
}

#[test]
fn a_symlinked_hooks_path_protects_its_target_and_the_link() {
    let (s, repo) = git_repo();
    fs::create_dir_all(repo.join("tools/hooks")).unwrap();
    std::os::unix::fs::symlink("tools/hooks", repo.join(".githooks")).unwrap();
    fs::write(
        repo.join(".git/config.worktree"),
        "[core]\n\thooksPath = .githooks\n",
    )
    .unwrap();
    let (list, _) = protected(&s.spec(Platform::Linux));
    list.expect(&repo.join("tools/hooks"), K::Directory, S::GitHooks);
    list.expect(&repo.join(".githooks"), K::File, S::GitHooks);
}

#[test]
fn hooks_path_resolution_follows_git() {
    use super::resolve_hooks_path as r;
    let (home, repo) = (Path::new("/h"), Path::new("/r"));
    assert_eq!(r(b"~", home, repo, true), Some(PathBuf::from("/h")));
    assert_eq!(r(b"~/x/y", home, repo, true), Some(PathBuf::from("/h/x/y")));
    assert_eq!(r(b"~other/x", home, repo, true), None);
    assert_eq!(r(b"/abs", home, repo, false), Some(PathBuf::from("/abs")));
    assert_eq!(
        r(b".husky", home, repo, true),
        Some(PathBuf::from("/r/.husky"))
    );
    assert_eq!(r(b".husky", home, repo, false), None);
}

#[test]
fn a_directory_left_through_dot_dot_must_stay_a_directory() {
    let s = scratch();
    let repo = s.repo.clone();
    fs::create_dir_all(repo.join("scripts")).unwrap();
    fs::create_dir_all(repo.join("nvim")).unwrap();
    fs::create_dir_all(s.home.join(".config")).unwrap();
    // The owner's editor config, reached through `scripts/..`: a symlink put at `scripts`
    // in place of the directory would take the kernel's `..` somewhere else.
    std::os::unix::fs::symlink(repo.join("scripts/../nvim"), s.home.join(".config/nvim")).unwrap();
    let spec = s.spec(Platform::Linux);
    let policy = spec.resolve().unwrap();
    let standing: Vec<_> = policy
        .standing_directories()
        .iter()
        .map(|d| (d.path.clone(), d.protected.clone()))
        .collect();
    assert!(
        standing.contains(&(repo.join("scripts"), repo.join("nvim"))),
        "{standing:?}"
    );
    // Unprotected, the editor config needs nothing to stand on its way.
    let mut spec = spec;
    spec.unprotected.push(s.home.join(".config/nvim"));
    let policy = spec.resolve().unwrap();
    assert!(
        !policy
            .standing_directories()
            .iter()
            .any(|d| d.path == repo.join("scripts")),
        "{:?}",
        policy.standing_directories()
    );
}

/// Every read the protected set makes (links, the `.git` pointer, a git config's
/// `core.hooksPath`, the worktree listing) goes to the host it is resolved on: none of
/// these paths exist on the real disk.
#[test]
fn the_protected_set_is_found_through_the_host_asked() {
    let fs = crate::test_support::MemFs::default()
        .dir("/fake-host/home/dotfiles")
        .link("/fake-host/home/.bashrc", "dotfiles/bashrc")
        .file("/fake-host/work/repo/.git", "gitdir: ../real.git\n")
        .file("/fake-host/work/real.git/HEAD", "ref: refs/heads/main\n")
        .file(
            "/fake-host/work/real.git/config",
            "[core]\n\thooksPath = /fake-host/hooks\n",
        )
        .dir("/fake-host/work/real.git/hooks")
        .dir("/fake-host/work/real.git/worktrees/other")
        .file(
            "/fake-host/work/real.git/worktrees/other/gitdir",
            "/fake-host/other/.git\n",
        )
        .file(
            "/fake-host/other/.git",
            "gitdir: /fake-host/work/real.git/worktrees/other\n",
        );
    let spec = PolicySpec::with_defaults(
        Platform::Linux,
        PathBuf::from("/fake-host/home"),
        PathBuf::from("/fake-host/work/repo"),
    );
    let policy = spec.resolve_on(&fs).unwrap();
    let source = |path: &str| {
        policy
            .protected()
            .iter()
            .find(|p| p.path == Path::new(path))
            .map(|p| p.source)
    };
    for (path, expected) in [
        ("/fake-host/home/.bashrc", ProtectedSource::ShellStartup),
        (
            "/fake-host/home/dotfiles/bashrc",
            ProtectedSource::ShellStartup,
        ),
        ("/fake-host/work/repo/.git", ProtectedSource::GitPointer),
        ("/fake-host/work/real.git/hooks", ProtectedSource::GitHooks),
        (
            "/fake-host/work/real.git/config",
            ProtectedSource::GitConfig,
        ),
        ("/fake-host/hooks", ProtectedSource::GitHooks),
        (
            "/fake-host/work/real.git/worktrees/other/config.worktree",
            ProtectedSource::GitConfig,
        ),
        ("/fake-host/other/.git", ProtectedSource::GitPointer),
    ] {
        assert_eq!(source(path), Some(expected), "{path}");
    }
    assert!(spec.resolve().is_err(), "the repo exists on the real disk");
}
