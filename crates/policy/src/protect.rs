//! The protected set: jaula's own configuration, and the default planting guard (paths an
//! uncaged program runs later: git hooks and config, shell startup, session autostart,
//! editor and agent settings, jaula's own executable), less what the owner unprotects.
//!
//! Git directories are found as git finds them: a `.git` directory, or a `.git` file whose
//! `gitdir:` line names the real one (a worktree, a submodule), and that directory's
//! `commondir`, which may lie outside the repo. Every one gets the same names protected.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::defaults::{self, PlantTarget};
use crate::host_fs::{EntryKind, HostFs};
use crate::paths::{canonicalize_lenient_on, is_within};
use crate::policy::{ProtectKind, ProtectedPath, ProtectedSource, StandingDirectory, Warning};
use crate::{PolicyError, PolicySpec};

type Canon<'a> = &'a dyn Fn(&'static str, &Path) -> Result<PathBuf, PolicyError>;

/// The protected paths in order, deduplicated by path (the first declaration wins), and
/// the host whose links and git files they were found through.
struct ProtectedSet<'a> {
    paths: Vec<ProtectedPath>,
    seen: HashSet<PathBuf>,
    standing: Vec<StandingDirectory>,
    fs: &'a dyn HostFs,
}

impl<'a> ProtectedSet<'a> {
    fn new(fs: &'a dyn HostFs) -> Self {
        ProtectedSet {
            paths: Vec::new(),
            seen: HashSet::new(),
            standing: Vec::new(),
            fs,
        }
    }

    fn push(&mut self, path: PathBuf, kind: ProtectKind, source: ProtectedSource, split: bool) {
        if self.seen.insert(path.clone()) {
            self.paths.push(ProtectedPath {
                path,
                kind,
                source,
                split_natively: split,
            });
        }
    }

    /// Each target at its canonical path (what a dotfiles symlink points to), and as its
    /// owner's tools reach it ([`ProtectedSet::followed`]).
    fn targets(&mut self, base: &Path, targets: &[PlantTarget], source: ProtectedSource) {
        for t in targets {
            let lexical = base.join(t.path);
            let path = canonicalize_lenient_on(&lexical, base, self.fs);
            self.push(path, t.kind, source, t.split_natively);
            self.followed(&lexical, t.kind, source, t.split_natively);
        }
    }

    /// `path` as the owner's tools will resolve it after the cage, following every symlink
    /// there at launch: where it lands (through a dangling link too: `.claude -> cl` with
    /// no `cl` yet resolves to `cl/settings.json`, which the cage could otherwise make),
    /// and each symlink met on the way, protected as a file of its own. Removing or
    /// replacing one (`rm ~/.config/nvim; mkdir ~/.config/nvim`, `rm .claude;
    /// ln -s mine .claude`) would redirect the protected path without touching its target.
    /// Only the link named like the target itself keeps the target's native split: a link
    /// further up (`~/.claude -> dotfiles/claude`) may be a writable root of its own.
    fn followed(&mut self, path: &Path, kind: ProtectKind, source: ProtectedSource, split: bool) {
        let Resolution {
            reached,
            links,
            standing,
        } = resolve_with_links(path, self.fs);
        self.stand(standing, &reached);
        self.push(reached, kind, source, split);
        let named = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => {
                Some(canonicalize_lenient_on(parent, parent, self.fs).join(name))
            }
            _ => None,
        };
        for link in links {
            let split = split && named.as_ref() == Some(&link);
            self.push(link, ProtectKind::File, source, split);
        }
    }

    /// Record each directory a resolution left through `..` as one where only a directory
    /// may stand, for the protected path `reached` it leads to.
    fn stand(&mut self, standing: Vec<PathBuf>, reached: &Path) {
        for path in standing {
            if !self.standing.iter().any(|s| s.path == path) {
                self.standing.push(StandingDirectory {
                    path,
                    protected: reached.to_path_buf(),
                });
            }
        }
    }
}

/// What [`resolve_with_links`] found on the way to a path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resolution {
    /// The path reached.
    pub(crate) reached: PathBuf,
    /// Every symlink met, each named by its directory's resolved path.
    pub(crate) links: Vec<PathBuf>,
    /// Every directory left through `..`: the kernel takes `..` of what stands there
    /// when the path is resolved, so a symlink put in its place (`scripts/../nvim` with
    /// `scripts -> /elsewhere/x`) moves the path elsewhere.
    pub(crate) standing: Vec<PathBuf>,
}

/// The most symbolic links [`resolve_with_links`] follows, as the kernel's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Resolve absolute `path` as the kernel would, one component at a time: the path reached
/// (names that do not exist appended as they are, after following a dangling link to the
/// name it gives), every symlink met, each named by its directory's resolved path, and
/// every directory left through `..`.
pub(crate) fn resolve_with_links(path: &Path, fs: &dyn HostFs) -> Resolution {
    use std::collections::VecDeque;
    use std::path::Component;
    let mut todo: VecDeque<std::ffi::OsString> = VecDeque::new();
    let queue = |todo: &mut VecDeque<std::ffi::OsString>, p: &Path, front: bool| {
        let names: Vec<std::ffi::OsString> = p
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect();
        if front {
            for n in names.into_iter().rev() {
                todo.push_front(n);
            }
        } else {
            todo.extend(names);
        }
    };
    queue(&mut todo, path, false);
    let mut reached = PathBuf::from("/");
    let mut links = Vec::new();
    let mut standing = Vec::new();
    let mut followed = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            if reached.parent().is_some() && !standing.contains(&reached) {
                standing.push(reached.clone());
            }
            reached.pop();
            continue;
        }
        let next = reached.join(&name);
        match crate::host_fs::resolve::read_link(&next, fs) {
            Some(target) if followed < MAX_LINKS => {
                followed += 1;
                if !links.contains(&next) {
                    links.push(next);
                }
                if target.is_absolute() {
                    reached = PathBuf::from("/");
                }
                queue(&mut todo, &target, true);
            }
            _ => reached = next,
        }
    }
    Resolution {
        reached,
        links,
        standing,
    }
}

impl PolicySpec {
    pub(crate) fn protected_paths(
        &self,
        home: &Path,
        state_home: &Path,
        repo: &Path,
        canon: Canon<'_>,
        warnings: &mut Vec<Warning>,
        fs: &dyn HostFs,
    ) -> Result<(Vec<ProtectedPath>, Vec<StandingDirectory>), PolicyError> {
        let mut set = ProtectedSet::new(fs);
        let config_dir = canon("config directory", &self.config_dir)?;
        set.push(
            config_dir,
            ProtectKind::Directory,
            ProtectedSource::ConfigDirectory,
            true,
        );
        set.push(
            canonicalize_lenient_on(&state_home.join(defaults::CAGE_PROFILE_DIR), state_home, fs),
            ProtectKind::Directory,
            ProtectedSource::CageProfiles,
            true,
        );
        if let Some(file) = &self.config_file {
            let path = canon("config file", file)?;
            if !set.paths.iter().any(|p| is_within(&path, &p.path)) {
                set.push(path, ProtectKind::File, ProtectedSource::ConfigFile, true);
            }
        }

        let git = git_targets(&mut set, repo);
        hooks_path_targets(&mut set, home, repo, git.as_ref());
        set.targets(
            repo,
            defaults::REPO_PROTECTED,
            ProtectedSource::RepoToolSettings,
        );

        self.home_targets(&mut set, home);
        for runtime in self.runtime_dirs(fs) {
            set.targets(
                &runtime,
                defaults::RUNTIME_PROTECTED,
                ProtectedSource::SessionStartup,
            );
        }
        if let Some(exe) = &self.launcher_exe {
            let path = canon("jaula executable", exe)?;
            set.push(
                path,
                ProtectKind::File,
                ProtectedSource::JaulaExecutable,
                true,
            );
        }

        let mut paths = set.paths;
        let mut standing = set.standing;
        // Nothing in the repo is ever split natively, whatever its list says: a split
        // directory there gets no new entry, and the agent's work is new entries.
        for p in &mut paths {
            if is_within(&p.path, repo) {
                p.split_natively = false;
            }
        }
        self.apply_unprotect(&mut paths, canon, warnings, fs)?;
        // What the owner unprotected needs nothing to stand on its way.
        standing.retain(|s| paths.iter().any(|p| p.path == s.protected));
        Ok((paths, standing))
    }

    /// The planting guard's targets in the home: git, shell, session, multiplexer, editor,
    /// cargo and agent settings, and the PATH directories when asked for.
    fn home_targets(&self, set: &mut ProtectedSet<'_>, home: &Path) {
        let home_groups: [(&[PlantTarget], ProtectedSource); 8] = [
            (defaults::HOME_GIT_CONFIG, ProtectedSource::HomeGitConfig),
            (defaults::SHELL_STARTUP, ProtectedSource::ShellStartup),
            (defaults::SESSION_STARTUP, ProtectedSource::SessionStartup),
            (
                defaults::MULTIPLEXER_CONFIG,
                ProtectedSource::MultiplexerConfig,
            ),
            (defaults::EDITOR_INIT, ProtectedSource::EditorInit),
            (defaults::CARGO_CONFIG, ProtectedSource::CargoConfig),
            (defaults::AGENT_SETTINGS, ProtectedSource::AgentSettings),
            (
                if self.protect_path_dirs {
                    defaults::PATH_DIRS
                } else {
                    &[]
                },
                ProtectedSource::PathDirectory,
            ),
        ];
        for (targets, source) in home_groups {
            set.targets(home, targets, source);
        }
    }

    /// The runtime directories whose user manager and session bus run what they hold:
    /// `XDG_RUNTIME_DIR`, and on Linux `/run/user/UID` for the uid building the policy
    /// (whatever the variable says: unset under `sudo` or `su`, it is still the directory
    /// that uid's manager reads). Root may write every user's: for root, every
    /// `/run/user/N` present at launch (a later login mounts a fresh tmpfs there).
    fn runtime_dirs(&self, fs: &dyn HostFs) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .runtime_dir
            .iter()
            .filter(|p| p.is_absolute())
            .cloned()
            .collect();
        if self.platform == crate::Platform::Linux {
            let users = Path::new(defaults::RUNTIME_USER_DIRS);
            if let Some(uid) = self.owner_uid {
                dirs.push(users.join(uid.to_string()));
            }
            if self.owner_uid == Some(0) {
                if let Ok(names) = fs.names(users) {
                    let mut others: Vec<PathBuf> = names
                        .into_iter()
                        .filter(|name| name.to_str().is_some_and(is_uid))
                        .map(|name| users.join(name))
                        .take(defaults::SUBMODULE_LIMIT)
                        .collect();
                    others.sort();
                    dirs.extend(others);
                }
            }
        }
        let mut seen = HashSet::new();
        dirs.retain(|d| seen.insert(d.clone()));
        dirs
    }

    /// Drop every planting entry at or beneath an unprotected path. jaula's own
    /// configuration stays: a cage that could rewrite it would shape the next one.
    fn apply_unprotect(
        &self,
        paths: &mut Vec<ProtectedPath>,
        canon: Canon<'_>,
        warnings: &mut Vec<Warning>,
        fs: &dyn HostFs,
    ) -> Result<(), PolicyError> {
        for declared in &self.unprotected {
            let target = canon("unprotect path", declared)?;
            let before = paths.len();
            let mut refused = None;
            paths.retain(|p| {
                // A link on the way goes with what it leads to: `--unprotect <repo>/.claude`
                // names the link's target, and the link was only protected for it.
                let link_into = || {
                    fs.is_symlink(&p.path)
                        && is_within(&canonicalize_lenient_on(&p.path, &p.path, fs), &target)
                };
                if !is_within(&p.path, &target) && !link_into() {
                    return true;
                }
                if p.source.is_cage_configuration() {
                    refused.get_or_insert_with(|| p.path.clone());
                    return true;
                }
                false
            });
            if let Some(protected) = refused {
                warnings.push(Warning::UnprotectRefused {
                    path: target,
                    protected,
                });
            } else if paths.len() == before {
                warnings.push(Warning::UnprotectMatchedNothing { path: target });
            }
        }
        Ok(())
    }
}

/// A decimal uid, as logind names `/run/user/UID`.
fn is_uid(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

fn git_dir_targets(set: &mut ProtectedSet<'_>, git_dir: &Path) {
    for t in defaults::GIT_DIR_PROTECTED {
        let source = match t.path {
            "hooks" => ProtectedSource::GitHooks,
            "commondir" => ProtectedSource::GitPointer,
            _ => ProtectedSource::GitConfig,
        };
        set.push(git_dir.join(t.path), t.kind, source, false);
        // `.git/hooks -> ../tools/hooks`: git runs what the link reaches.
        set.followed(&git_dir.join(t.path), t.kind, source, false);
    }
}

/// The directories `core.hooksPath` names, protected like `.git/hooks`: git runs the
/// owner's hooks from there instead (husky's `.githooks`, a global `~/.config/githooks`).
/// Read from the launch repo's git directories (`config`, `config.worktree`), `~/.gitconfig`
/// and `~/.config/git/config` (`XDG_CONFIG_HOME`, the system config and `include.path`
/// are not followed). Each file's last value is protected, not only the one that wins
/// here: a global value a local one overrides still runs in the owner's other repos.
/// `~/` is the home; a relative path is taken from the repo's top, where hooks run (a
/// submodule's or another worktree's relative value is not: its top is elsewhere).
fn hooks_path_targets(
    set: &mut ProtectedSet<'_>,
    home: &Path,
    repo: &Path,
    git: Option<&FoundGit>,
) {
    let fs = set.fs;
    let mut configs: Vec<(PathBuf, bool)> = Vec::new();
    let dirs = git.map(|g| g.git_dirs.as_slice()).unwrap_or(&[]);
    // The launch repo's own: its git directory (the first) and that one's common directory;
    // the rest belong to other worktrees and submodules.
    let launch: Vec<PathBuf> = dirs
        .first()
        .map(|d| {
            let common = read_pointer(&d.join("commondir"), "", fs).unwrap_or_else(|| d.clone());
            vec![d.clone(), common]
        })
        .unwrap_or_default();
    for dir in dirs {
        let own = launch.contains(dir);
        configs.push((dir.join("config"), own));
        configs.push((dir.join("config.worktree"), own));
    }
    for global in [".gitconfig", ".config/git/config"] {
        configs.push((home.join(global), true));
    }
    for (file, relative_ok) in configs {
        let Some(value) = hooks_path_in(&file, fs) else {
            continue;
        };
        let Some(dir) = resolve_hooks_path(&value, home, repo, relative_ok) else {
            continue;
        };
        set.push(
            canonicalize_lenient_on(&dir, repo, fs),
            ProtectKind::Directory,
            ProtectedSource::GitHooks,
            false,
        );
        set.followed(
            &dir,
            ProtectKind::Directory,
            ProtectedSource::GitHooks,
            false,
        );
    }
}

/// The last `core.hooksPath` of one config file, as bytes git would use.
fn hooks_path_in(file: &Path, fs: &dyn HostFs) -> Option<Vec<u8>> {
    let text = fs.read(file).ok()?;
    let entries = crate::git_config::parse(&text).ok()?;
    entries
        .into_iter()
        .rev()
        .filter(|e| e.section == "core" && e.subsection.is_none() && e.key == "hookspath")
        .find_map(|e| e.value)
        .filter(|v| !v.is_empty())
}

/// `core.hooksPath` as git resolves it: `~` and `~/...` from the home, an absolute path as
/// it is, a relative one from the repo's top (only when `relative_ok`). `~user/` is not
/// modelled.
pub(crate) fn resolve_hooks_path(
    value: &[u8],
    home: &Path,
    repo: &Path,
    relative_ok: bool,
) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(value));
    if value == b"~" {
        return Some(home.to_path_buf());
    }
    if let Some(rest) = value.strip_prefix(b"~/") {
        return Some(home.join(std::ffi::OsStr::from_bytes(rest)));
    }
    if value.starts_with(b"~") {
        return None;
    }
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    relative_ok.then(|| repo.join(path))
}

/// The repository at the repo's top: its `.git` entry, the git directories whose
/// config and hooks git runs, and further pointer files (submodules' `.git` files).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FoundGit {
    /// `<top>/.git`, a directory or a pointer file.
    pub entry: PathBuf,
    pub pointer_file: bool,
    /// `.git` is a symbolic link (to a directory or a pointer file).
    pub symlink: bool,
    /// The git directory, its common directory, the worktrees' and submodules' ones.
    pub git_dirs: Vec<PathBuf>,
    pub pointers: Vec<PathBuf>,
}

/// The repository whose top is `repo`: its `.git` entry, followed. Nothing when there is
/// none, or when a `.git` file cannot be read (then only the file itself is protected).
/// A `.git` above the repo is not looked for: it lies outside the cage's writable root,
/// so it is read-only there already, and protecting it would only tie every cage under a
/// checkout to that checkout's git directory.
pub(crate) fn find_git_dirs(repo: &Path, fs: &dyn HostFs) -> Option<FoundGit> {
    let top = repo.to_path_buf();
    let entry = top.join(defaults::GIT_DIR_NAME);
    let symlink = match fs.kind(&entry) {
        Ok(Some(kind)) => kind == EntryKind::Symlink,
        _ => return None,
    };
    let pointer_file = fs.is_file(&entry);
    let mut found = FoundGit {
        entry: entry.clone(),
        pointer_file,
        symlink,
        git_dirs: Vec::new(),
        pointers: Vec::new(),
    };
    let git_dir = if pointer_file {
        match read_pointer(&entry, "gitdir:", fs) {
            Some(dir) => dir,
            None => return Some(found),
        }
    } else {
        canonicalize_lenient_on(&entry, &top, fs)
    };
    let common =
        read_pointer(&git_dir.join("commondir"), "", fs).unwrap_or_else(|| git_dir.clone());
    found.git_dirs.push(git_dir.clone());
    if common != git_dir {
        found.git_dirs.push(common.clone());
    }
    // Other worktrees of the same repository: each has its own config.worktree and a
    // commondir that git follows.
    let worktrees_dir = common.join("worktrees");
    if let Ok(names) = fs.names(&worktrees_dir) {
        let mut worktrees: Vec<PathBuf> = names
            .into_iter()
            .map(|name| worktrees_dir.join(name))
            .filter(|p| fs.is_dir(p))
            .take(defaults::SUBMODULE_LIMIT)
            .collect();
        worktrees.sort();
        // Each worktree's own `.git` file (named by its `gitdir` file): rewritten to name a
        // git directory of the cage's making, the owner's next `git status` there would
        // run that directory's config.
        for worktree in &worktrees {
            if let Some(pointer) = read_pointer(&worktree.join("gitdir"), "", fs) {
                if fs.is_file(&pointer) && pointer != entry {
                    found.pointers.push(pointer);
                }
            }
        }
        found.git_dirs.extend(worktrees);
    }
    let mut modules = Vec::new();
    collect_submodules(&common.join("modules"), 0, &mut modules, fs);
    found.git_dirs.extend(modules);
    for path in submodule_paths(&top, fs) {
        let pointer =
            canonicalize_lenient_on(&top.join(path).join(defaults::GIT_DIR_NAME), &top, fs);
        if fs.is_file(&pointer) {
            found.pointers.push(pointer);
        }
    }
    let mut seen = HashSet::new();
    found.git_dirs.retain(|d| seen.insert(d.clone()));
    Some(found)
}

/// The path a pointer file names (`gitdir: ../x` in a `.git` file, a bare path in
/// `commondir`), relative to the file's directory, canonical.
fn read_pointer(file: &Path, prefix: &str, fs: &dyn HostFs) -> Option<PathBuf> {
    let text = fs.read_to_string(file).ok()?;
    let line = text.lines().next()?.strip_prefix(prefix)?.trim();
    if line.is_empty() {
        return None;
    }
    let base = file.parent()?;
    Some(canonicalize_lenient_on(Path::new(line), base, fs))
}

/// Submodule git directories beneath `<common>/modules`: any directory holding `HEAD`,
/// and its own `modules` for nested submodules. Bounded in depth and count.
fn collect_submodules(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, fs: &dyn HostFs) {
    if depth >= defaults::SUBMODULE_DEPTH || out.len() >= defaults::SUBMODULE_LIMIT {
        return;
    }
    let Ok(names) = fs.names(dir) else {
        return;
    };
    let mut children: Vec<PathBuf> = names
        .into_iter()
        .map(|name| dir.join(name))
        .filter(|p| fs.is_dir(p))
        .collect();
    children.sort();
    for child in children {
        if out.len() >= defaults::SUBMODULE_LIMIT {
            return;
        }
        if fs.is_file(&child.join("HEAD")) {
            out.push(child.clone());
            collect_submodules(&child.join("modules"), depth + 1, out, fs);
        } else {
            // A submodule named `a/b` lives at `modules/a/b`.
            collect_submodules(&child, depth + 1, out, fs);
        }
    }
}

/// `path = ...` lines of `<top>/.gitmodules`, relative paths only.
fn submodule_paths(top: &Path, fs: &dyn HostFs) -> Vec<PathBuf> {
    let Ok(text) = fs.read_to_string(&top.join(".gitmodules")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| PathBuf::from(value.trim()))
        })
        .filter(|p| p.is_relative() && !p.as_os_str().is_empty())
        .take(defaults::SUBMODULE_LIMIT)
        .collect()
}

/// The repo's git entry, its git directories' config and hooks, and the pointer files
/// that name them; the repo's git layout, for the hooks path.
fn git_targets(set: &mut ProtectedSet<'_>, repo: &Path) -> Option<FoundGit> {
    let git = find_git_dirs(repo, set.fs);
    if let Some(git) = &git {
        // A symlinked `.git` is not protected as an entry: a mount backend binds what
        // the link points to, which would make the whole git directory read-only. Its
        // target's config and hooks are protected below like any git directory's.
        if !git.symlink {
            let (kind, source) = if git.pointer_file {
                (ProtectKind::File, ProtectedSource::GitPointer)
            } else {
                (ProtectKind::Entry, ProtectedSource::GitDirectory)
            };
            set.push(git.entry.clone(), kind, source, false);
        } else {
            // The link itself is a file of its own: replaced by one to a git
            // directory of the cage's making, it would hand the owner's next
            // `git status` that directory's config. (A mount backend binds no symlink.)
            let Resolution {
                reached,
                links,
                standing,
            } = resolve_with_links(&git.entry, set.fs);
            set.stand(standing, &reached);
            for link in links {
                set.push(
                    link,
                    ProtectKind::File,
                    ProtectedSource::GitDirectory,
                    false,
                );
            }
        }
        for dir in &git.git_dirs {
            git_dir_targets(set, dir);
        }
        for pointer in &git.pointers {
            set.push(
                pointer.clone(),
                ProtectKind::File,
                ProtectedSource::GitPointer,
                false,
            );
        }
    }
    git
}

#[cfg(test)]
#[path = "protect_tests.rs"]
mod tests;
