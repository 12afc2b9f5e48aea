//! A cage resolved against one host: canonical paths and what each one is.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::defaults;
use crate::file_rule::{FileMatch, FileRule, FileRuleSource};
use crate::host_fs::HostFs;
use crate::paths::{canonicalize_lenient_on, expand_tilde, is_within};
pub use crate::protect_kind::ProtectKind;
use crate::{Platform, PolicyError, PolicySpec};

/// Whether a sealed root is a file or a directory. Decided by declaration first and by the
/// disk second: the backends render the two differently (an empty directory versus
/// `/dev/null`, `subpath` versus `literal`), and a credential file that does not exist yet
/// must still be sealed as a file, or the cage would put a directory where the tool will
/// later try to create it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SealKind {
    /// A single file: hidden behind `/dev/null`, or matched as a `literal`.
    File,
    /// A whole tree: an empty directory over it, or matched as a `subpath`.
    Directory,
}

/// Why a root is sealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SealSource {
    /// A default credential directory (`~/.ssh`, `~/.aws`, ...).
    CredentialDirectory,
    /// A default credential file (`~/.netrc`, `~/.git-credentials`, ...).
    CredentialFile,
    /// Cargo's registry token files inside the otherwise writable `~/.cargo`.
    CargoCredentials,
    /// The state home's broker token store: every window's token but the cage's own.
    BrokerTokens,
    /// The owner's own deny list (`CITY_CAGE_DENY`, `--deny`, `cage.deny`).
    OwnerDeny,
}

impl SealSource {
    /// A short phrase for people, as `explain` prints it.
    pub fn label(self) -> &'static str {
        match self {
            SealSource::CredentialDirectory => "credential directory",
            SealSource::CredentialFile => "credential file",
            SealSource::CargoCredentials => "cargo registry token",
            SealSource::BrokerTokens => "broker token store",
            SealSource::OwnerDeny => "owner deny",
        }
    }
}

/// A root unreadable and unwritable inside the cage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedRoot {
    /// The root, canonical and absolute.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// File or directory, as declared or found.
    pub kind: SealKind,
    /// Why it is sealed.
    pub source: SealSource,
}

/// Why a root is writable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum WriteSource {
    /// The working directory, where the agent does its work.
    Repo,
    /// The agents-city state home (`AGENTS_CITY_HOME`, `~/.agents-city`).
    StateHome,
    /// Agent state and build caches beneath the home (`~/.cargo`, `~/.npm`, ...).
    HomeCache,
    /// The temporary and device paths (`/tmp`, `/dev`, ...).
    SystemTemp,
    /// The owner's own allow list (`CITY_CAGE_ALLOW_WRITE`, `--allow-write`).
    OwnerAllow,
    /// A workspace mount handed in with `--mounts`.
    Mount,
}

impl WriteSource {
    /// A short phrase for people, as `explain` prints it.
    pub fn label(self) -> &'static str {
        match self {
            WriteSource::Repo => "repo",
            WriteSource::StateHome => "state home",
            WriteSource::HomeCache => "agent state and caches",
            WriteSource::SystemTemp => "temp and device paths",
            WriteSource::OwnerAllow => "owner allow-write",
            WriteSource::Mount => "workspace mount",
        }
    }
}

/// A root beneath which writes (and creation) are allowed, unless sealed or protected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WritableRoot {
    /// The root, canonical and absolute.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// Why it is writable.
    pub source: WriteSource,
}

/// A writable root that did not exist when the policy was resolved for Linux. Neither Linux
/// backend can grant a path that is not there: bubblewrap's `--bind-try` skips it and a
/// Landlock rule needs an open descriptor, so a tool's first `mkdir ~/.npm` would meet the
/// read-only home. jaula therefore creates the roots marked `created_at_launch` before it
/// cages (`jaula run`), and `decide` refuses writes beneath every other one, so the
/// reference and the backends agree. macOS never records one: a Seatbelt rule names a
/// path whether or not it exists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbsentRoot {
    /// The root as it would be, canonical as far as it exists.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// Why it would be writable.
    pub source: WriteSource,
    /// Created by `jaula run` before caging: an agent-state or cache root (or the state
    /// home) strictly beneath the home, neither sealed nor protected, with
    /// `cage.create_cache_roots` on.
    pub created_at_launch: bool,
}

/// Why a path is protected from writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProtectedSource {
    /// jaula's config directory: a cage that rewrote it would loosen the next cage.
    ConfigDirectory,
    /// A config file named outside that directory (`--config`, `JAULA_CONFIG`).
    ConfigFile,
    /// The state home's directory of cage profiles, which later windows are caged by.
    CageProfiles,
    /// The repo's git directory as an entry (and a worktree's common git directory).
    GitDirectory,
    /// `config`/`config.worktree` of a git directory: commands git runs.
    GitConfig,
    /// `hooks` of a git directory.
    GitHooks,
    /// A `.git` file or `commondir`: where git looks for its config and hooks.
    GitPointer,
    /// Editor and agent settings in the repo that tools execute.
    RepoToolSettings,
    /// `~/.gitconfig` and `~/.config/git`: commands git runs for the owner.
    HomeGitConfig,
    /// Shell startup files (`~/.bashrc`, `~/.profile`, ...), run by the owner's next shell.
    ShellStartup,
    /// Desktop and login session startup (autostart entries, systemd user units).
    SessionStartup,
    /// tmux and screen configuration, run by the owner's next multiplexer.
    MultiplexerConfig,
    /// Editor init files and plugins (vim, neovim, emacs, VS Code), run by the next editor.
    EditorInit,
    /// Cargo's config, whose aliases and runners the owner's next build executes.
    CargoConfig,
    /// Agent settings and hooks outside the repo (`~/.claude/settings.json`, ...).
    AgentSettings,
    /// The jaula binary that launched this cage.
    JaulaExecutable,
    /// A PATH directory, under `--protect-path-dirs`.
    PathDirectory,
}

impl ProtectedSource {
    /// A short phrase for people, naming what a write would let run.
    pub fn label(self) -> &'static str {
        match self {
            ProtectedSource::ConfigDirectory => "jaula config directory",
            ProtectedSource::ConfigFile => "jaula config file",
            ProtectedSource::CageProfiles => "cage profiles",
            ProtectedSource::GitDirectory => {
                "git directory: cannot be renamed, removed or replaced; its contents stay writable"
            }
            ProtectedSource::GitConfig => {
                "git config: fsmonitor, hooksPath, pager, aliases run as commands"
            }
            ProtectedSource::GitHooks => {
                "git hooks: run by the owner's next commit, checkout or merge"
            }
            ProtectedSource::GitPointer => {
                "git directory pointer: names the config and hooks git uses"
            }
            ProtectedSource::RepoToolSettings => {
                "editor or agent settings in the repo that tools execute"
            }
            ProtectedSource::HomeGitConfig => {
                "git config in the home: run by every git the owner runs"
            }
            ProtectedSource::ShellStartup => "shell startup file: run by the owner's next shell",
            ProtectedSource::SessionStartup => {
                "session startup: units, autostart and services the owner's session starts"
            }
            ProtectedSource::MultiplexerConfig => {
                "tmux or screen config: run at the owner's next start"
            }
            ProtectedSource::EditorInit => "editor init: run by the owner's next editor",
            ProtectedSource::CargoConfig => {
                "cargo config: rustc-wrapper and runners run by the next build"
            }
            ProtectedSource::AgentSettings => {
                "agent settings that execute commands (hooks, MCP servers)"
            }
            ProtectedSource::JaulaExecutable => "the jaula executable that launched this cage",
            ProtectedSource::PathDirectory => "PATH directory (--protect-path-dirs)",
        }
    }

    /// jaula's own configuration, which shapes every later cage: never unprotectable.
    pub fn is_cage_configuration(self) -> bool {
        matches!(
            self,
            ProtectedSource::ConfigDirectory
                | ProtectedSource::ConfigFile
                | ProtectedSource::CageProfiles
        )
    }
}

/// A path that shapes a cage or runs later outside it: readable, but never writable from
/// inside any cage, even beneath a writable root such as `~/.config` or the repo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedPath {
    /// The path, canonical and absolute.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// Whether it is protected as a file or as a directory.
    pub kind: ProtectKind,
    /// What it is and why a write would matter.
    pub source: ProtectedSource,
    /// Whether native Landlock stops this path's creation and change by splitting the
    /// writable directories above it. `false` where that split would break agent work
    /// (anything in the repo, `~/.local/share`, `~/.codex`, `/run/user/UID`): native
    /// Landlock then leaves the path writable, a named deviation, and `jaula run` reports
    /// any change after the command exits.
    pub split_natively: bool,
}

/// A directory the owner's tools leave through `..` on the way to a protected path
/// (`~/.config/nvim -> <repo>/scripts/../nvim`): the kernel takes `..` of whatever
/// stands at that name when the path is resolved, so a symlink put there in place of the
/// directory (`scripts -> /elsewhere/x`) would make the protected path resolve to
/// `/elsewhere/nvim`, which the cage may have written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingDirectory {
    /// The directory, resolved and absolute.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// The protected path it leads to.
    #[serde(with = "crate::serde_path")]
    pub protected: PathBuf,
}

/// Which built-in writable set a cage starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CageProfile {
    /// An agent window on the owner's machine: the repo, the state home, the home caches
    /// and the system temp paths (the built-in lists of `defaults`).
    #[default]
    Window,
    /// A tenant's spawn: only the repo (its workspace), the cage's own `/dev` and the
    /// extras the runner passes (harness dir, TMPDIR).
    Contract,
}

/// Something the resolver dropped or doubted, for the CLI to print on stderr.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "warning", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Warning {
    /// A write-allow extra resolved inside a sealed root: it would be dead under the seal,
    /// and honouring it silently would only mislead.
    WriteAllowInsideSealed {
        /// The ignored write-allow extra.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
        /// The sealed root it lies in.
        #[serde(with = "crate::serde_path")]
        sealed: PathBuf,
    },
    /// An allowed unix socket inside a sealed root: the seal wins (the bwrap view hides
    /// the socket, and a sealed directory is the owner's statement that nothing in it is
    /// the cage's business). Move the socket, or unseal the directory.
    SocketInsideSealed {
        /// The allowed socket that stays unreachable.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
        /// The sealed root it lies in.
        #[serde(with = "crate::serde_path")]
        sealed: PathBuf,
    },
    /// An unprotect that names no protected path: probably a typo, said so.
    UnprotectMatchedNothing {
        /// The unprotect entry as resolved.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
    },
    /// An unprotect that names jaula's own configuration, which every later cage reads.
    UnprotectRefused {
        /// The refused unprotect entry.
        #[serde(with = "crate::serde_path")]
        path: PathBuf,
        /// jaula's configuration path it would have opened.
        #[serde(with = "crate::serde_path")]
        protected: PathBuf,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::WriteAllowInsideSealed { path, sealed } => write!(
                f,
                "ignoring write-allow {}: inside the sealed root {}",
                path.display(),
                sealed.display()
            ),
            Warning::SocketInsideSealed { path, sealed } => write!(
                f,
                "ignoring allowed unix socket {}: inside the sealed root {}",
                path.display(),
                sealed.display()
            ),
            Warning::UnprotectMatchedNothing { path } => write!(
                f,
                "unprotect {}: no protected path is there or beneath it",
                path.display()
            ),
            Warning::UnprotectRefused { path, protected } => write!(
                f,
                "ignoring unprotect {}: {} is jaula's own configuration and stays protected",
                path.display(),
                protected.display()
            ),
        }
    }
}

/// A cage resolved for one host. Build it with [`PolicySpec::resolve`]; ask it with
/// [`Policy::decide`](crate::Policy::decide).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub(crate) platform: Platform,
    pub(crate) profile: CageProfile,
    #[serde(with = "crate::serde_path")]
    pub(crate) home: PathBuf,
    #[serde(with = "crate::serde_path")]
    pub(crate) state_home: PathBuf,
    #[serde(with = "crate::serde_path")]
    pub(crate) repo: PathBuf,
    pub(crate) sealed: Vec<SealedRoot>,
    pub(crate) writable: Vec<WritableRoot>,
    pub(crate) absent: Vec<AbsentRoot>,
    pub(crate) protected: Vec<ProtectedPath>,
    #[serde(default)]
    pub(crate) standing: Vec<StandingDirectory>,
    pub(crate) file_rules: Vec<FileRule>,
    pub(crate) unix_sockets: Vec<crate::AllowedSocket>,
    pub(crate) warnings: Vec<Warning>,
    /// The lists above by path, for `decide` (built on the first decision).
    #[serde(skip)]
    pub(crate) index: crate::root_index::DecideIndexCell,
}

impl Policy {
    /// The kernel this policy was resolved for.
    pub fn platform(&self) -> Platform {
        self.platform
    }
    /// The built-in writable set this cage started from.
    pub fn profile(&self) -> CageProfile {
        self.profile
    }
    /// The canonical home whose credentials are sealed.
    pub fn home(&self) -> &Path {
        &self.home
    }
    /// The canonical state home (`AGENTS_CITY_HOME` or `~/.agents-city`).
    pub fn state_home(&self) -> &Path {
        &self.state_home
    }
    /// The canonical working directory.
    pub fn repo(&self) -> &Path {
        &self.repo
    }
    /// Sealed roots in declaration order, deduplicated by canonical path.
    pub fn sealed(&self) -> &[SealedRoot] {
        &self.sealed
    }
    /// Writable roots in order: repo, state home, system paths, home caches, extras.
    pub fn writable(&self) -> &[WritableRoot] {
        &self.writable
    }
    /// Writable roots absent at resolution (Linux only), in policy order.
    pub fn absent_roots(&self) -> &[AbsentRoot] {
        &self.absent
    }
    /// The absent roots `jaula run` creates before caging, shallowest first.
    pub fn roots_to_create(&self) -> impl Iterator<Item = &AbsentRoot> {
        self.absent.iter().filter(|a| a.created_at_launch)
    }
    /// Paths that shape a cage, never writable from inside one.
    pub fn protected(&self) -> &[ProtectedPath] {
        &self.protected
    }
    /// The directories an owner's symlink leaves through `..` on the way to a protected
    /// path: only a directory may stand at each (the socket gate refuses any other name
    /// made there, and every rename of it).
    pub fn standing_directories(&self) -> &[StandingDirectory] {
        &self.standing
    }
    /// The rules about single files beside the roots, in the order the resolver made
    /// them: the built-in defaults' [`FileRule::WritableFile`] first, then this window's
    /// [`FileRule::ReadableInSeal`] token, then the [`FileRule::SealedPattern`]s.
    pub fn file_rules(&self) -> &[FileRule] {
        &self.file_rules
    }
    /// This policy with one more file rule, after the ones the resolver made: for an
    /// embedder with a file of its own to open or seal, and for tests that prove a backend
    /// renders a rule kind rather than a known path. `rule`'s paths must be canonical and
    /// absolute, as every path the resolver writes is; nothing checks them here.
    pub fn with_file_rule(mut self, rule: FileRule) -> Policy {
        self.file_rules.push(rule);
        self
    }
    /// Host unix sockets the cage may connect to, canonical, deduplicated. Every other
    /// pathname socket is reachable only if the cage, or another live cage of the same
    /// owner, bound it.
    pub fn unix_sockets(&self) -> &[crate::AllowedSocket] {
        &self.unix_sockets
    }
    /// What the resolver dropped, for the caller to print.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl PolicySpec {
    /// Resolve the declaration against this host's filesystem.
    ///
    /// Checks, in order: the working directory exists and is a directory; it is not `/`,
    /// not the home nor an ancestor of it; it neither lies inside a sealed root nor
    /// contains one. Write-allow extras inside a sealed root are dropped with a
    /// [`Warning`].
    pub fn resolve(&self) -> Result<Policy, PolicyError> {
        self.resolve_on(&crate::RealHostFs)
    }

    /// [`resolve`](Self::resolve), asking `fs` which paths exist and what they are (the
    /// writable roots still absent, the existing files of a sealed pattern, the repo's
    /// type, every symlink on the way, the repo's git pointer files).
    pub fn resolve_on(&self, fs: &dyn HostFs) -> Result<Policy, PolicyError> {
        // One resolution sees one filesystem: each directory prefix is resolved once and
        // remembered until this returns (resolve.rs).
        crate::host_fs::resolve::with_cache(|| self.resolve_once(fs))
    }

    fn resolve_once(&self, fs: &dyn HostFs) -> Result<Policy, PolicyError> {
        let cwd = &self.cwd;
        let home = absolute("home", &self.home, &self.home, cwd)?;
        let home = canonicalize_lenient_on(&home, cwd, fs);
        let canon = |what: &'static str, p: &Path| -> Result<PathBuf, PolicyError> {
            Ok(canonicalize_lenient_on(
                &absolute(what, p, &home, cwd)?,
                cwd,
                fs,
            ))
        };

        let state_home = match &self.state_home {
            Some(p) => canon("state home", p)?,
            None => canonicalize_lenient_on(&home.join(defaults::DEFAULT_STATE_HOME), cwd, fs),
        };

        let sealed = self.sealed_roots(&home, &state_home, &canon, fs)?;

        let repo = resolve_repo(&self.repo, &home, cwd, fs)?;
        check_repo(&repo, &home, &sealed)?;

        let mut warnings = Vec::new();
        let writable =
            self.writable_roots(&repo, &home, &state_home, &sealed, &canon, &mut warnings)?;

        let (protected, standing) =
            self.protected_paths(&home, &state_home, &repo, &canon, &mut warnings, fs)?;
        let file_rules = self.file_rules(&home, &canon, fs)?;

        let unix_sockets = self.allowed_sockets(&sealed, &canon, &mut warnings)?;
        let absent = self.absent_roots(&writable, &home, &sealed, &protected, fs);

        Ok(Policy {
            platform: self.platform,
            profile: self.profile,
            home,
            state_home,
            repo,
            sealed,
            writable,
            absent,
            protected,
            standing,
            file_rules,
            unix_sockets,
            warnings,
            index: Default::default(),
        })
    }

    /// The built-in files the roots cannot describe, as rule kinds:
    ///
    /// - `~/.claude.json`, which Claude rewrites on every start, writable in the read-only
    ///   home (on macOS with the backup siblings Claude writes beside it, matched by name);
    /// - this window's broker token (`--token-file`), readable inside the sealed broker
    ///   store, where every other window's token stays sealed;
    /// - the remote-road channel tokens, `~/.claude/channels/<seat>/.env`, sealed for
    ///   every seat, present or configured later, inside the writable `~/.claude`.
    fn file_rules(
        &self,
        home: &Path,
        canon: &dyn Fn(&'static str, &Path) -> Result<PathBuf, PolicyError>,
        fs: &dyn HostFs,
    ) -> Result<Vec<FileRule>, PolicyError> {
        let cwd = &self.cwd;
        let mut rules = Vec::new();
        let (path, matching) = match self.platform {
            // macOS matches the name as a pattern, so it keeps the name as written.
            Platform::MacOs => (home.join(defaults::CLAUDE_JSON), FileMatch::NamePrefix),
            Platform::Linux => (
                canonicalize_lenient_on(&home.join(defaults::CLAUDE_JSON), cwd, fs),
                FileMatch::Exact,
            ),
        };
        rules.push(FileRule::WritableFile {
            path,
            matching,
            source: FileRuleSource::ClaudeState,
        });
        if let Some(token) = &self.token_file {
            rules.push(FileRule::ReadableInSeal {
                path: canon("token file", token)?,
                source: FileRuleSource::WindowToken,
            });
        }
        let channels = canonicalize_lenient_on(&home.join(defaults::CHANNELS_DIR), cwd, fs);
        let existing = existing_matches(&channels, defaults::CHANNEL_TOKEN_FILE, fs);
        rules.push(FileRule::SealedPattern {
            dir: channels,
            name: defaults::CHANNEL_TOKEN_FILE.to_string(),
            existing,
            source: FileRuleSource::ChannelTokens,
        });
        Ok(rules)
    }

    fn allowed_sockets(
        &self,
        sealed: &[SealedRoot],
        canon: &dyn Fn(&'static str, &Path) -> Result<PathBuf, PolicyError>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<crate::AllowedSocket>, PolicyError> {
        let mut out: Vec<crate::AllowedSocket> = Vec::new();
        for (declared, source) in &self.allowed_sockets {
            let path = canon("unix socket", declared)?;
            if let Some(root) = sealed.iter().find(|s| match s.kind {
                SealKind::File => s.path == path,
                SealKind::Directory => is_within(&path, &s.path),
            }) {
                warnings.push(Warning::SocketInsideSealed {
                    path,
                    sealed: root.path.clone(),
                });
                continue;
            }
            if !out.iter().any(|s| s.path == path) {
                out.push(crate::AllowedSocket {
                    path,
                    source: *source,
                });
            }
        }
        Ok(out)
    }

    /// The writable roots that do not exist on this host, and which of them `jaula run`
    /// creates. The repo exists (checked above); the system paths are the cage's own in the
    /// bwrap view and the host's otherwise, never created by jaula.
    fn absent_roots(
        &self,
        writable: &[WritableRoot],
        home: &Path,
        sealed: &[SealedRoot],
        protected: &[ProtectedPath],
        fs: &dyn HostFs,
    ) -> Vec<AbsentRoot> {
        if self.platform != Platform::Linux {
            return Vec::new();
        }
        let creatable = |path: &Path| {
            path != home
                && is_within(path, home)
                && !sealed.iter().any(|s| seal_or_beneath(s, path))
                && !protected.iter().any(|p| p.kind.covers(&p.path, path))
        };
        let mut absent: Vec<AbsentRoot> = writable
            .iter()
            .filter(|w| !matches!(w.source, WriteSource::Repo | WriteSource::SystemTemp))
            .filter(|w| fs.is_absent(&w.path))
            .map(|w| AbsentRoot {
                path: w.path.clone(),
                source: w.source,
                created_at_launch: self.create_absent_roots
                    && matches!(w.source, WriteSource::HomeCache | WriteSource::StateHome)
                    && creatable(&w.path)
                    && (w.source != WriteSource::HomeCache
                        || self.tool_present_for(&w.path, home, fs)),
            })
            .collect();
        // Cache entries of a root Landlock splits: created with it, and only then listed;
        // left alone, they are the named deviation `split-dir-no-new-entries`.
        if self.create_absent_roots && self.profile == CageProfile::Window {
            for entry in defaults::HOME_CACHE_ENTRIES {
                let path = canonicalize_lenient_on(&home.join(entry), home, fs);
                let in_cache_root = writable
                    .iter()
                    .any(|w| w.source == WriteSource::HomeCache && is_within(&path, &w.path));
                if in_cache_root
                    && creatable(&path)
                    && fs.is_absent(&path)
                    && self.tool_present_for(&path, home, fs)
                {
                    absent.push(AbsentRoot {
                        path,
                        source: WriteSource::HomeCache,
                        created_at_launch: true,
                    });
                }
            }
        }
        absent
    }

    /// Whether the tool family whose root holds `path` (a home root of
    /// [`defaults::CACHE_ROOT_TOOLS`], or a path beneath one) has a program on
    /// [`PolicySpec::tool_path`] or is the command launched; true for a path of no family,
    /// and when no `PATH` was given. A root left uncreated stays absent and unwritable, as with
    /// `cage.create_cache_roots = false`: never a hole.
    fn tool_present_for(&self, path: &Path, home: &Path, fs: &dyn HostFs) -> bool {
        let Some(dirs) = &self.tool_path else {
            return true;
        };
        let family = defaults::CACHE_ROOT_TOOLS.iter().find(|(root, _)| {
            let root = canonicalize_lenient_on(&home.join(root), home, fs);
            is_within(path, &root)
        });
        let Some((_, programs)) = family else {
            return true;
        };
        let launched = self.launched.as_deref().and_then(Path::file_name);
        if launched.is_some_and(|name| programs.iter().any(|p| name == *p)) {
            return true;
        }
        programs
            .iter()
            .any(|program| dirs.iter().any(|dir| fs.is_file(&dir.join(program))))
    }

    fn sealed_roots(
        &self,
        home: &Path,
        state_home: &Path,
        canon: &dyn Fn(&'static str, &Path) -> Result<PathBuf, PolicyError>,
        fs: &dyn HostFs,
    ) -> Result<Vec<SealedRoot>, PolicyError> {
        let mut sealed: Vec<SealedRoot> = Vec::new();
        // Declaration first: a path already declared keeps its declared kind and source
        // when an owner deny names it again.
        let mut seen: HashSet<PathBuf> = HashSet::new();
        let mut push = |path: PathBuf, kind: SealKind, source: SealSource| {
            if seen.insert(path.clone()) {
                sealed.push(SealedRoot { path, kind, source });
            }
        };
        for dir in defaults::CREDENTIAL_DIRS {
            push(
                canon("sealed root", &home.join(dir))?,
                SealKind::Directory,
                SealSource::CredentialDirectory,
            );
        }
        for file in defaults::CREDENTIAL_FILES {
            push(
                canon("sealed root", &home.join(file))?,
                SealKind::File,
                SealSource::CredentialFile,
            );
        }
        push(
            canon("sealed root", &state_home.join(defaults::BROKER_DIR))?,
            SealKind::Directory,
            SealSource::BrokerTokens,
        );
        for file in defaults::CARGO_CREDENTIAL_FILES {
            push(
                canon("sealed root", &home.join(file))?,
                SealKind::File,
                SealSource::CargoCredentials,
            );
        }
        for extra in &self.extra_sealed {
            let path = canon("sealed path", extra)?;
            // Nothing declares an owner deny's kind: ask the disk, and treat anything that
            // is not a file as a directory, which seals more rather than less.
            let kind = if fs.is_file(&path) {
                SealKind::File
            } else {
                SealKind::Directory
            };
            push(path, kind, SealSource::OwnerDeny);
        }
        Ok(sealed)
    }

    fn writable_roots(
        &self,
        repo: &Path,
        home: &Path,
        state_home: &Path,
        sealed: &[SealedRoot],
        canon: &dyn Fn(&'static str, &Path) -> Result<PathBuf, PolicyError>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<WritableRoot>, PolicyError> {
        let mut writable: Vec<WritableRoot> = Vec::new();
        let mut seen: HashSet<PathBuf> = HashSet::new();
        let mut push = |path: PathBuf, source: WriteSource| {
            if seen.insert(path.clone()) {
                writable.push(WritableRoot { path, source });
            }
        };
        push(repo.to_path_buf(), WriteSource::Repo);
        match self.profile {
            CageProfile::Window => {
                push(state_home.to_path_buf(), WriteSource::StateHome);
                for system in defaults::system_writable_for(self.platform) {
                    push(
                        canon("system path", Path::new(system))?,
                        WriteSource::SystemTemp,
                    );
                }
                for cache in defaults::HOME_WRITABLE
                    .iter()
                    .chain(defaults::home_writable_for(self.platform))
                {
                    push(
                        canon("home cache", &home.join(cache))?,
                        WriteSource::HomeCache,
                    );
                }
            }
            // A tenant writes its workspace and the extras the runner names (its harness
            // dir and TMPDIR), never the host's shared /tmp, where other tenants could read
            // what it leaves.
            CageProfile::Contract => {
                push(
                    canon("system path", Path::new("/dev"))?,
                    WriteSource::SystemTemp,
                );
            }
        }
        // Broad writable ancestors of a seal are kept on purpose: the seal is applied after
        // them and wins. Only an extra strictly inside a seal is dropped, loudly.
        let sealed_by_path: HashMap<&Path, usize> = sealed
            .iter()
            .enumerate()
            .map(|(i, s)| (s.path.as_path(), i))
            .collect();
        let extras = self
            .extra_writable
            .iter()
            .map(|p| (p, WriteSource::OwnerAllow))
            .chain(self.mounts.iter().map(|p| (p, WriteSource::Mount)));
        for (declared, source) in extras {
            let path = canon("write-allow path", declared)?;
            // Look each ancestor up rather than comparing against every seal: an owner
            // with a thousand denies and a thousand allows stays linear.
            let root = path
                .ancestors()
                .find_map(|a| sealed_by_path.get(a))
                .map(|i| &sealed[*i]);
            if let Some(root) = root {
                warnings.push(Warning::WriteAllowInsideSealed {
                    path,
                    sealed: root.path.clone(),
                });
                continue;
            }
            push(path, source);
        }
        Ok(writable)
    }
}

/// Whether `path` is a sealed root or lies beneath one: never created by jaula.
fn seal_or_beneath(seal: &SealedRoot, path: &Path) -> bool {
    match seal.kind {
        SealKind::File => seal.path == path,
        SealKind::Directory => is_within(path, &seal.path),
    }
}

/// Make a declared path absolute: `~` against the home, relative against `cwd`.
fn absolute(
    what: &'static str,
    declared: &Path,
    home: &Path,
    cwd: &Path,
) -> Result<PathBuf, PolicyError> {
    let expanded = expand_tilde(declared, home);
    if expanded.is_absolute() {
        return Ok(expanded);
    }
    if cwd.is_absolute() {
        return Ok(cwd.join(expanded));
    }
    Err(PolicyError::NotAbsolute {
        what,
        path: declared.to_path_buf(),
    })
}

fn resolve_repo(
    declared: &Path,
    home: &Path,
    cwd: &Path,
    fs: &dyn HostFs,
) -> Result<PathBuf, PolicyError> {
    let absolute = absolute("repo", declared, home, cwd)?;
    let repo = match fs.canonicalize(&absolute) {
        Ok(repo) => repo,
        Err(_) => return Err(PolicyError::RepoMissing(absolute)),
    };
    if !fs.is_dir(&repo) {
        return Err(PolicyError::RepoNotDirectory(repo));
    }
    Ok(repo)
}

fn check_repo(repo: &Path, home: &Path, sealed: &[SealedRoot]) -> Result<(), PolicyError> {
    if repo.parent().is_none() {
        return Err(PolicyError::RepoIsRoot(repo.to_path_buf()));
    }
    if repo == home {
        return Err(PolicyError::RepoIsHome(repo.to_path_buf()));
    }
    if is_within(home, repo) {
        return Err(PolicyError::RepoContainsHome {
            repo: repo.to_path_buf(),
            home: home.to_path_buf(),
        });
    }
    for root in sealed {
        if is_within(repo, &root.path) {
            return Err(PolicyError::RepoInsideSealed {
                repo: repo.to_path_buf(),
                sealed: root.path.clone(),
            });
        }
        if is_within(&root.path, repo) {
            return Err(PolicyError::RepoContainsSealed {
                repo: repo.to_path_buf(),
                sealed: root.path.clone(),
            });
        }
    }
    Ok(())
}

/// `<dir>/<child>/<name>` files that exist now, sorted by child name.
fn existing_matches(dir: &Path, name: &str, fs: &dyn HostFs) -> Vec<PathBuf> {
    let Ok(entries) = fs.list(dir) else {
        return Vec::new();
    };
    let mut children: Vec<PathBuf> = entries
        .into_iter()
        .map(|(child, _)| dir.join(child))
        .collect();
    children.sort();
    children
        .into_iter()
        .map(|child| child.join(name))
        .filter(|file| fs.is_file(file))
        .collect()
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
